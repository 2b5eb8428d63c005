// SPDX-License-Identifier: BSD-2-Clause
// ndk::RegistrationCache: WSPRegisterMemory registrations kept for reuse
// (the WSD switch's registration cache, WSPMemoryRegistrationCacheCallback
// done with kernel help).  Documentation/registration-cache.md has the
// semantics; Documentation/uapi.md ("Registration cache") the kernel side.
//
// Acquire(buffer, length, flags) returns a lease on a registration that
// covers the buffer with at least the requested rights.  A buffer inside
// a cached registration with flags that include the requested ones is a
// hit, answered without a system call: the registration is valid while
// the generation of its slot, read from a page the kernel maps read-only
// and bumps from an MMU notifier whenever the range is unmapped or
// remapped, still equals the one it was registered under.  Anything else
// is a miss: a new registration, and a stale one found on the way is
// dropped.  A stale registration is never handed out.
//
// Thread safety: every call may be made from any thread; one mutex
// serialises them (held across the registration system call of a miss).
// A lease may be released from any thread.  Leases and the cache may be
// destroyed in any order: the cache's state lives until its last lease.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ndk/adapter.hpp"
#include "ndk/result.hpp"

namespace ndk {

namespace detail {
struct CacheState;
struct CacheEntry;
}  // namespace detail

// ndk_u_mem_register.cache_slot of a registration without a slot.
inline constexpr std::uint32_t kCacheSlotNone = 0xffffffffu;

// What the kernel answered to one registration.
struct BackendRegistration {
    std::uint32_t handle = 0;
    std::uint32_t local_token = 0;
    std::uint32_t remote_token = 0;
    std::uint64_t base_address = 0;
    std::uint32_t cache_slot = kCacheSlotNone;
    std::uint64_t generation = 0;
};

// The kernel as the cache sees it; tests substitute a fake.
class CacheBackend {
  public:
    virtual ~CacheBackend() = default;
    // NDK_IOCTL_MEM_REGISTER.  Errors carry errno, NTSTATUS and WSA code.
    [[nodiscard]] virtual Result<BackendRegistration> Register(std::uint64_t address,
                                                               std::uint64_t length,
                                                               std::uint32_t flags) noexcept = 0;
    // NDK_IOCTL_MEM_DEREGISTER (one reference).
    [[nodiscard]] virtual Result<void> Deregister(std::uint32_t handle) noexcept = 0;
    // The slot's generation now, with acquire ordering; never a system call.
    [[nodiscard]] virtual std::uint64_t Generation(std::uint32_t slot) const noexcept = 0;
    // A lookup was a hit (true) or a miss: the kernel backend adds it to
    // the file's self-reported counters page, which ndk.ko reports through
    // netlink (`ndk stat`, Documentation/netlink.md); never a system call.
    virtual void Report(bool hit) noexcept { (void)hit; }
};

// The kernel backend of a PD: MEM_REGISTER and MEM_DEREGISTER on the PD's
// file, generations from its page mapped read-only.  Keeps the PD and its
// file open.  EOPNOTSUPP when the module lacks NDK_U_FEATURE_CACHE, EBADF
// for an empty ProtectionDomain, mmap()'s errno otherwise.
[[nodiscard]] Result<std::unique_ptr<CacheBackend>> MakeKernelCacheBackend(
    const ProtectionDomain& pd);

enum class CacheMode {
    kCached,  // look up the cache; keep the registration for reuse
    kBypass,  // register now, deregister when the lease goes; no lookup
};

struct RegistrationCacheOptions {
    // Most pinned bytes (whole pages spanned) the cached registrations may
    // hold; unused ones are evicted, least recently used first, to stay
    // below it.  0: the default, min(64 MiB, RLIMIT_MEMLOCK / 2).
    std::uint64_t max_cached_bytes = 0;
};

struct RegistrationCacheStats {
    std::uint64_t hits = 0;          // answered from the cache, no system call
    std::uint64_t misses = 0;        // registered anew (cached mode)
    std::uint64_t stale = 0;         // cached registrations found invalidated
    std::uint64_t evictions = 0;     // unused registrations dropped for the bound
    std::uint64_t uncached = 0;      // bypass, no slot, or larger than the bound
    std::uint64_t cached_bytes = 0;  // pinned bytes of cached registrations
    std::uint64_t entries = 0;       // cached registrations, in use or not
    std::uint64_t busy = 0;          // unused, deregistration refused (EBUSY: a window
                                     // still bound); tried again on misses and Flush()
};

class RegistrationCache;

// One use of a registration; releasing it (Release() or the destructor)
// makes the registration unused (cached) or deregisters it (uncached).
// Move-only; a moved-from or released lease is empty.
class [[nodiscard]] RegistrationLease {
  public:
    RegistrationLease() noexcept = default;
    RegistrationLease(RegistrationLease&& other) noexcept;
    RegistrationLease& operator=(RegistrationLease&& other) noexcept;
    RegistrationLease(const RegistrationLease&) = delete;
    RegistrationLease& operator=(const RegistrationLease&) = delete;
    ~RegistrationLease();

    void Release() noexcept;
    bool empty() const noexcept { return !state_; }
    explicit operator bool() const noexcept { return !empty(); }

    std::uint32_t handle() const noexcept { return reg_.handle; }
    std::uint32_t local_token() const noexcept { return reg_.local_token; }
    std::uint32_t remote_token() const noexcept { return reg_.remote_token; }
    // The registration's first byte and length: they contain the buffer.
    std::uint64_t base_address() const noexcept { return reg_.base_address; }
    std::uint64_t length() const noexcept { return length_; }
    // MEM_READ / MEM_WRITE of the registration: include the requested ones.
    std::uint32_t flags() const noexcept { return flags_; }
    std::uint32_t cache_slot() const noexcept { return reg_.cache_slot; }
    // The generation the registration was made under.
    std::uint64_t generation() const noexcept { return reg_.generation; }
    // False for bypass and uncacheable registrations.
    bool cached() const noexcept { return cached_; }

  private:
    friend class RegistrationCache;
    std::shared_ptr<detail::CacheState> state_;
    detail::CacheEntry* entry_ = nullptr;
    BackendRegistration reg_{};
    std::uint64_t length_ = 0;
    std::uint32_t flags_ = 0;
    bool cached_ = false;
};

class [[nodiscard]] RegistrationCache {
  public:
    // A cache on pd's registrations (MakeKernelCacheBackend).
    static Result<RegistrationCache> Create(const ProtectionDomain& pd,
                                            RegistrationCacheOptions options = {});
    // A cache on any backend (tests).
    static RegistrationCache Create(std::unique_ptr<CacheBackend> backend,
                                    RegistrationCacheOptions options = {});

    RegistrationCache(RegistrationCache&&) noexcept = default;
    RegistrationCache& operator=(RegistrationCache&& other) noexcept;
    RegistrationCache(const RegistrationCache&) = delete;
    RegistrationCache& operator=(const RegistrationCache&) = delete;
    // Deregisters the unused registrations; those in use go with their
    // last lease.  A deregistration the kernel refuses (EBUSY: a window
    // still bound over it, a fast-register) is tried again: the oldest
    // on each miss, all of them on Flush(), here and, after this, at each
    // lease's release; one still refused when the cache and its last
    // lease are gone stays with the kernel until the PD's file closes.
    ~RegistrationCache();

    // A lease on a registration of [buffer, buffer + length) with at least
    // `flags` (kMemRead, kMemWrite, kMemReadWrite).  Errors (errno / WSA):
    // EINVAL/WSAEINVAL bad flags or length 0; EFAULT/WSAEFAULT wrapping
    // range; EPERM in a child forked after the cache was created (the
    // registrations are the parent's); what MEM_REGISTER returns on a
    // miss (ENOMEM/WSAENOBUFS at RLIMIT_MEMLOCK after evicting every
    // unused registration, ...); EBADF for a moved-from cache.
    Result<RegistrationLease> Acquire(const void* buffer, std::size_t length, std::uint32_t flags,
                                      CacheMode mode = CacheMode::kCached);

    // Deregisters every unused registration now (and tries the refused
    // ones again).
    void Flush() noexcept;

    RegistrationCacheStats stats() const;
    std::uint64_t max_cached_bytes() const noexcept;

  private:
    explicit RegistrationCache(std::shared_ptr<detail::CacheState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::CacheState> s_;
};

}  // namespace ndk
