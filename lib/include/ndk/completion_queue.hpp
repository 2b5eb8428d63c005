// SPDX-License-Identifier: BSD-2-Clause
// ndk::CompletionQueue (NDK_CQ): NdkCreateCq, NdkArmCq, NdkGetCqResultsEx.
// Results are read with Poll(), never blocking, from the CQ's completion
// ring with no system call (NDK_IOCTL_CQ_POLL without rings); Arm() asks
// for one EventType::kCq event on the adapter's event queue when the next
// result arrives, and PollUntil() does both to wait without spinning.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "ndk/constants.hpp"
#include "ndk/result.hpp"
#include "ndk/status.hpp"

namespace ndk {

class Adapter;

namespace detail {
struct CqState;
}

// One completion: NDK_RESULT_EX (struct ndk_u_result), field for field.
struct CompletionResult {
    // The request_context the request was posted with.
    std::uint64_t request_context = 0;
    // The QP's context (QueuePairParams::context).
    std::uint64_t qp_context = 0;
    // NTSTATUS of the request: STATUS_SUCCESS, STATUS_CANCELLED (flushed),
    // STATUS_ACCESS_VIOLATION, STATUS_REMOTE_RESOURCES, ...
    NTSTATUS status = status::kSuccess;
    std::uint32_t bytes_transferred = 0;
    // operation_type::k*.
    std::uint32_t type = 0;
    // The device's vendor error of a failed request (ib_wc.vendor_err;
    // 0 on rxe).
    std::uint32_t provider_error_code = 0;
    // kReceiveAndInvalidate: the token the peer invalidated; else 0.
    std::uint64_t type_specific = 0;
};

class [[nodiscard]] CompletionQueue {
  public:
    // NdkCreateCq: depth 1..MaxCqDepth; context comes back in its events.
    static Result<CompletionQueue> Create(const Adapter& adapter, std::uint32_t depth,
                                          std::uint64_t context = 0);

    CompletionQueue(CompletionQueue&&) noexcept = default;
    CompletionQueue& operator=(CompletionQueue&&) noexcept = default;
    CompletionQueue(const CompletionQueue&) = delete;
    CompletionQueue& operator=(const CompletionQueue&) = delete;
    ~CompletionQueue() = default;

    // NdkArmCq: cq_notify::kErrors, kAny or kSolicited.  The notification
    // is one EventType::kCq event (handle: this CQ, context: its context).
    Result<void> Arm(std::uint32_t type = cq_notify::kAny) const;

    // NdkGetCqResultsEx: takes up to out.size() results, never blocking;
    // 0 when the CQ is empty.
    Result<std::size_t> Poll(std::span<CompletionResult> out) const;

    // Synchronous helper: fills out with at least min(n, out.size())
    // results, waiting up to timeout (negative: forever) without spinning:
    // poll, arm, poll again, then wait for this CQ's event on the adapter's
    // file with poll(2); repeat.  Returns the count written, fewer than n
    // only when the timeout expired.
    Result<std::size_t> PollUntil(std::span<CompletionResult> out, std::size_t n,
                                  std::chrono::milliseconds timeout) const;

    std::uint32_t handle() const noexcept;
    std::uint64_t context() const noexcept { return context_; }

  private:
    friend class QueuePair;
    CompletionQueue(std::shared_ptr<detail::CqState> s, std::uint64_t ctx) noexcept
        : s_(std::move(s)), context_(ctx) {}
    std::shared_ptr<detail::CqState> s_;
    std::uint64_t context_ = 0;
};

}  // namespace ndk
