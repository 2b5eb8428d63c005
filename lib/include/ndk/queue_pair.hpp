// SPDX-License-Identifier: BSD-2-Clause
// ndk::QueuePair (NDK_QP): NdkCreateQp and the work requests.  Requests
// go through the QP's submission ring: one NDK_IOCTL_QP_DOORBELL system
// call per request, except data requests with op_flag::kDefer, which wait
// for the next request that is not deferred (without rings, one
// NDK_IOCTL_QP_POST each).  A post's Result is the posting status (an
// inline failure: no completion follows; a deferred request's inline
// failure is returned by the call that rings the doorbell, and the
// requests after it are not posted); success means one CompletionResult
// later on the QP's CQ (none for a successful request with
// op_flag::kSilentSuccess).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "ndk/result.hpp"

namespace ndk {

class ProtectionDomain;
class CompletionQueue;
class Registration;
class MemoryRegion;
class MemoryWindow;
class Connector;

namespace detail {
struct QpState;
}

// NDK_SGE / ND2_SGE: a buffer inside a registration of the QP's PD, and
// that registration's local token (Registration::local_token(),
// MemoryRegion::local_token()).
struct Sge {
    const void* buffer = nullptr;
    std::uint32_t length = 0;
    std::uint32_t token = 0;
};

// The registration whose pages FastRegister and Bind map: a
// Registration (WSPRegisterMemory) or a registered MemoryRegion.
class MemorySource {
  public:
    MemorySource(const Registration& r) noexcept;   // NOLINT: implicit by design
    MemorySource(const MemoryRegion& mr) noexcept;  // NOLINT: implicit by design
    std::uint32_t handle() const noexcept { return handle_; }

  private:
    std::uint32_t handle_ = 0;
};

struct QueuePairParams {
    std::uint32_t receive_queue_depth = 16;
    std::uint32_t initiator_queue_depth = 16;
    std::uint32_t max_receive_request_sge = 1;
    std::uint32_t max_initiator_request_sge = 1;
    std::uint32_t inline_data_size = 0;
    // Comes back as CompletionResult::qp_context.
    std::uint64_t context = 0;
};

class [[nodiscard]] QueuePair {
  public:
    // NdkCreateQp.  The CQs may be the same; both must be of pd's adapter.
    static Result<QueuePair> Create(const ProtectionDomain& pd, const CompletionQueue& receive_cq,
                                    const CompletionQueue& initiator_cq,
                                    const QueuePairParams& params);

    QueuePair(QueuePair&&) noexcept = default;
    QueuePair& operator=(QueuePair&&) noexcept = default;
    QueuePair(const QueuePair&) = delete;
    QueuePair& operator=(const QueuePair&) = delete;
    ~QueuePair() = default;

    // Every request takes the request_context that comes back in its
    // CompletionResult, and op_flag::k* flags where NDK takes them.

    // NdkSend.
    Result<void> Send(std::uint64_t request_context, std::span<const Sge> sgl,
                      std::uint32_t flags = 0) const;
    // NdkSendAndInvalidate: the peer invalidates remote_token (one of its
    // own MR or window tokens) before reporting the receive.
    Result<void> SendAndInvalidate(std::uint64_t request_context, std::span<const Sge> sgl,
                                   std::uint32_t remote_token, std::uint32_t flags = 0) const;
    // NdkReceive.
    Result<void> Receive(std::uint64_t request_context, std::span<const Sge> sgl) const;
    // NdkRead: the peer's [remote_address, +length of sgl) into sgl.
    Result<void> Read(std::uint64_t request_context, std::span<const Sge> sgl,
                      std::uint64_t remote_address, std::uint32_t remote_token,
                      std::uint32_t flags = 0) const;
    // NdkWrite: sgl to the peer's remote_address.
    Result<void> Write(std::uint64_t request_context, std::span<const Sge> sgl,
                       std::uint64_t remote_address, std::uint32_t remote_token,
                       std::uint32_t flags = 0) const;
    // NdkFastRegister: maps [address, +length), inside the registration
    // source, into the fast-register MR mr, with op_flag rights
    // (kAllowLocalWrite, kAllowRemoteRead, kAllowRemoteWrite,
    // kRdmaReadSink).  base_virtual_address is the address the peer will
    // use; its offset in a page must equal address's.  Returns mr's new
    // remote token (also mr.remote_token(); the local token is the same).
    Result<std::uint32_t> FastRegister(std::uint64_t request_context, MemoryRegion& mr,
                                       MemorySource source, const void* address, std::size_t length,
                                       std::uint64_t base_virtual_address,
                                       std::uint32_t flags) const;
    // The same with base_virtual_address = address.
    Result<std::uint32_t> FastRegister(std::uint64_t request_context, MemoryRegion& mr,
                                       MemorySource source, const void* address, std::size_t length,
                                       std::uint32_t flags) const;
    // NdkBind: binds mw over [address, +length) inside source with
    // op_flag::kAllowRemoteRead and/or kAllowRemoteWrite.  The peer
    // addresses the window with address itself.  Returns mw's new remote
    // token (also mw.remote_token()).
    Result<std::uint32_t> Bind(std::uint64_t request_context, MemorySource source, MemoryWindow& mw,
                               const void* address, std::size_t length, std::uint32_t flags) const;
    // NdkInvalidate of a fast-registered MR or a bound window.
    Result<void> Invalidate(std::uint64_t request_context, const MemoryRegion& mr,
                            std::uint32_t flags = 0) const;
    Result<void> Invalidate(std::uint64_t request_context, const MemoryWindow& mw,
                            std::uint32_t flags = 0) const;
    // NdkFlush: everything pending completes with STATUS_CANCELLED.
    Result<void> Flush() const;

    std::uint32_t handle() const noexcept;
    std::uint64_t context() const noexcept { return context_; }

  private:
    friend class Connector;
    QueuePair(std::shared_ptr<detail::QpState> s, std::uint64_t ctx) noexcept
        : s_(std::move(s)), context_(ctx) {}
    std::shared_ptr<detail::QpState> s_;
    std::uint64_t context_ = 0;
};

}  // namespace ndk
