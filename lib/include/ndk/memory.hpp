// SPDX-License-Identifier: BSD-2-Clause
// ndk::MemoryRegion (NDK_MR) and ndk::MemoryWindow (NDK_MW).
//
// An MR is either registered over pinned user memory with NDK flags
// (Register, NdkRegisterMr: the NDK_MR_FLAG_* remote rights included), or
// a fast-register MR (Create(pd, true), InitializeFastRegister) that a
// QueuePair::FastRegister maps over the pages of a registration on the
// same PD.  A window is bound over a sub-range of a registration with
// QueuePair::Bind and gives the peer a token of its own.
//
// Tokens: local_token()/remote_token() are cached; Register and
// QueuePair::FastRegister/Bind update them, QueryTokens() asks the kernel
// again (NDK_IOCTL_TOKEN_QUERY).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ndk/result.hpp"

namespace ndk {

class ProtectionDomain;

namespace detail {
struct MrState;
struct MwState;
}  // namespace detail

class [[nodiscard]] MemoryRegion {
  public:
    // NdkCreateMr.  fast_register: an MR for QueuePair::FastRegister
    // (initialise it with InitializeFastRegister first).
    static Result<MemoryRegion> Create(const ProtectionDomain& pd, bool fast_register = false);

    MemoryRegion(MemoryRegion&&) noexcept = default;
    MemoryRegion& operator=(MemoryRegion&&) noexcept = default;
    MemoryRegion(const MemoryRegion&) = delete;
    MemoryRegion& operator=(const MemoryRegion&) = delete;
    // Deregisters (when registered) and closes.
    ~MemoryRegion() = default;

    // NdkRegisterMr over [buffer, buffer + length) with mr_flag::k* flags;
    // pins the pages.  Errors: EINVAL (STATUS_INVALID_PARAMETER: bad flags,
    // length, a fast-register MR), EBADRQC (STATUS_INVALID_DEVICE_REQUEST:
    // registered already), EFAULT
    // (STATUS_ACCESS_VIOLATION: not valid user memory), ENOMEM
    // (RLIMIT_MEMLOCK).
    Result<void> Register(const void* buffer, std::size_t length, std::uint32_t flags);
    // NdkDeregisterMr.  EBUSY (STATUS_DEVICE_BUSY) while windows are bound
    // in it: invalidate them and poll the completions first.
    Result<void> Deregister();
    // NdkInitializeFastRegisterMr: room for page_count adapter pages
    // (1..FRMRPageCount); remote_access allows remote rights in
    // QueuePair::FastRegister.
    Result<void> InitializeFastRegister(std::uint32_t page_count, bool remote_access);
    // NDK_IOCTL_TOKEN_QUERY: refreshes local_token() and remote_token().
    Result<void> QueryTokens();

    std::uint32_t handle() const noexcept;
    bool fast_register() const noexcept;
    // NdkGetLocalTokenFromMr / NdkGetRemoteTokenFromMr, as last known.
    std::uint32_t local_token() const noexcept;
    std::uint32_t remote_token() const noexcept;

  private:
    friend class QueuePair;
    explicit MemoryRegion(std::shared_ptr<detail::MrState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::MrState> s_;
};

class [[nodiscard]] MemoryWindow {
  public:
    // NdkCreateMw: created invalidated; QueuePair::Bind binds it.
    static Result<MemoryWindow> Create(const ProtectionDomain& pd);

    MemoryWindow(MemoryWindow&&) noexcept = default;
    MemoryWindow& operator=(MemoryWindow&&) noexcept = default;
    MemoryWindow(const MemoryWindow&) = delete;
    MemoryWindow& operator=(const MemoryWindow&) = delete;
    ~MemoryWindow() = default;

    // NDK_IOCTL_TOKEN_QUERY: refreshes remote_token().
    Result<void> QueryTokens();

    std::uint32_t handle() const noexcept;
    // NdkGetRemoteTokenFromMw, as last known (set by QueuePair::Bind).
    std::uint32_t remote_token() const noexcept;

  private:
    friend class QueuePair;
    explicit MemoryWindow(std::shared_ptr<detail::MwState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::MwState> s_;
};

}  // namespace ndk
