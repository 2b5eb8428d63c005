// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/registration_cache.hpp"

#include <ndk/ndk_ioctl.h>
#include <ndk/ndk_netlink.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "sys.hpp"

namespace ndk {

static_assert(kCacheSlotNone == NDK_U_CACHE_SLOT_NONE);

namespace {

constexpr std::uint64_t kDefaultMaxCachedBytes = 64ull << 20;

// Children forked since the start: bumped by a pthread_atfork() handler,
// so a cache notices it runs in a child without a system call.
std::atomic<std::uint64_t> g_fork_epoch{0};
std::once_flag g_atfork_once;

void OnForkChild() noexcept { g_fork_epoch.fetch_add(1, std::memory_order_relaxed); }

std::uint64_t ForkEpoch() noexcept {
    std::call_once(g_atfork_once, [] { pthread_atfork(nullptr, nullptr, OnForkChild); });
    return g_fork_epoch.load(std::memory_order_relaxed);
}

std::uint64_t PageSize() noexcept {
    static const std::uint64_t size = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    return size;
}

// Bytes of the whole pages [start, end) spans: what the kernel pins.
std::uint64_t PinnedBytes(std::uint64_t start, std::uint64_t end) noexcept {
    const std::uint64_t mask = PageSize() - 1;
    return ((end + mask) & ~mask) - (start & ~mask);
}

// min(64 MiB, RLIMIT_MEMLOCK / 2); 64 MiB when the limit is infinite.
std::uint64_t DefaultMaxCachedBytes() noexcept {
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return kDefaultMaxCachedBytes;
    return std::min<std::uint64_t>(kDefaultMaxCachedBytes, rl.rlim_cur / 2);
}

class KernelCacheBackend final : public CacheBackend {
  public:
    KernelCacheBackend(detail::PdAccess pd, const std::uint64_t* gens,
                       ndk_u_cache_counters* counters) noexcept
        : pd_(std::move(pd)), gens_(gens), counters_(counters) {}
    ~KernelCacheBackend() override {
        munmap(const_cast<std::uint64_t*>(gens_), kMapBytes);
        if (counters_) munmap(counters_, kCountersBytes);
    }
    KernelCacheBackend(const KernelCacheBackend&) = delete;
    KernelCacheBackend& operator=(const KernelCacheBackend&) = delete;

    static constexpr std::size_t kMapBytes = NDK_U_CACHE_SLOTS * sizeof(std::uint64_t);
    static constexpr std::size_t kCountersBytes = 4096;

    Result<BackendRegistration> Register(std::uint64_t address, std::uint64_t length,
                                         std::uint32_t flags) noexcept override {
        ndk_u_mem_register m{};
        m.pd_handle = pd_.handle;
        m.flags = flags;
        m.address = address;
        m.length = length;
        if (auto r = detail::Ioctl(pd_.fd, NDK_IOCTL_MEM_REGISTER, &m); !r)
            return Error::ForRegisterMemory(r.error().errnum);
        BackendRegistration reg;
        reg.handle = m.handle;
        reg.local_token = m.local_token;
        reg.remote_token = m.remote_token;
        reg.base_address = m.base_address;
        reg.cache_slot = m.cache_slot;
        reg.generation = m.cache_generation;
        return reg;
    }

    Result<void> Deregister(std::uint32_t handle) noexcept override {
        ndk_u_mem_deregister m{};
        m.handle = handle;
        if (auto r = detail::Ioctl(pd_.fd, NDK_IOCTL_MEM_DEREGISTER, &m); !r)
            return Error::ForDeregisterMemory(r.error().errnum);
        return {};
    }

    std::uint64_t Generation(std::uint32_t slot) const noexcept override {
        if (slot >= NDK_U_CACHE_SLOTS) return ~0ull;
        // The page is mapped read-only: a plain 8-byte aligned load (what
        // an acquire load is on x86-64 and arm64), never a locked RMW.
        return __atomic_load_n(&gens_[slot], __ATOMIC_ACQUIRE);
    }

    void Report(bool hit) noexcept override {
        if (!counters_) return;
        // Several caches may share the file: atomic, but only relaxed.
        __atomic_fetch_add(hit ? &counters_->hits : &counters_->misses, 1, __ATOMIC_RELAXED);
    }

  private:
    detail::PdAccess pd_;
    const std::uint64_t* gens_;
    ndk_u_cache_counters* counters_;  // null: a module without the page
};

}  // namespace

Result<std::unique_ptr<CacheBackend>> MakeKernelCacheBackend(const ProtectionDomain& pd) {
    detail::PdAccess access = detail::AccessPd(pd);
    if (!access.keep) return Error::FromErrno(EBADF);
    ndk_u_query_info q{};
    if (auto r = detail::Ioctl(access.fd, NDK_IOCTL_QUERY_INFO, &q); !r) return r.error();
    if (!(q.features & NDK_U_FEATURE_CACHE)) return Error::FromErrno(EOPNOTSUPP);
    void* p = mmap(nullptr, KernelCacheBackend::kMapBytes, PROT_READ, MAP_SHARED, access.fd,
                   NDK_U_MMAP_CACHE);
    if (p == MAP_FAILED) return Error::FromErrno(errno);
    // The counters are advisory: a module without the page (EINVAL) only
    // means `ndk stat` shows no hits and misses for this process.
    void* c = mmap(nullptr, KernelCacheBackend::kCountersBytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                   access.fd, NDK_U_MMAP_CACHE_COUNTERS);
    return std::unique_ptr<CacheBackend>(
        new KernelCacheBackend(std::move(access), static_cast<const std::uint64_t*>(p),
                               c == MAP_FAILED ? nullptr : static_cast<ndk_u_cache_counters*>(c)));
}

namespace detail {

// Which of CacheState's lists holds an entry's node.
enum class Where : std::uint8_t {
    kInUse,  // leased, or just made
    kLru,    // indexed and unused
    kBusy,   // unindexed and unused, its deregistration refused (EBUSY)
};

struct CacheEntry {
    std::uint64_t start = 0;  // [start, end): the registered bytes
    std::uint64_t end = 0;
    std::uint32_t flags = 0;
    BackendRegistration reg;
    std::uint64_t pinned = 0;  // PinnedBytes(start, end)
    std::uint32_t uses = 0;    // live leases
    bool indexed = false;      // findable: counted in cached_bytes
    Where where = Where::kInUse;
    std::list<CacheEntry>::iterator self;
    std::multimap<std::uint64_t, CacheEntry*>::iterator index_it;
    std::list<CacheEntry*>::iterator node;  // in the list `where` names
};

// Everything under `mu`.  Entries: owned by `all`; cached ones are in
// `index` by start address.  Each entry has one node, made with it and
// moved by splice() (never allocating: Unuse() and Release() are
// noexcept) between `in_use`, `lru` (unused cached ones, most recently
// used first) and `busy`.  An entry that is not indexed (uncached, stale
// or evicted while in use) is deregistered when its last lease goes; one
// whose deregistration the kernel refuses with EBUSY (a window still
// bound, a fast-register over it) waits in `busy`: the oldest is tried
// again on each miss (one system call at most), all of them on Flush(),
// at the cache's end and, once it has ended, at each lease's release.
struct CacheState {
    std::mutex mu;
    std::unique_ptr<CacheBackend> backend;
    std::uint64_t max_cached_bytes = 0;
    std::uint64_t fork_epoch = 0;
    std::list<CacheEntry> all;
    std::multimap<std::uint64_t, CacheEntry*> index;
    std::list<CacheEntry*> in_use, lru, busy;
    std::uint64_t max_length = 0;  // longest indexed entry ever
    bool ended = false;            // ~RegistrationCache() ran; leases may live on
    RegistrationCacheStats stats;

    std::list<CacheEntry*>& ListOf(Where w) noexcept {
        return w == Where::kLru ? lru : w == Where::kBusy ? busy : in_use;
    }

    void MoveTo(CacheEntry* e, Where w) noexcept {
        if (e->where == w) return;
        ListOf(w).splice(ListOf(w).begin(), ListOf(e->where), e->node);
        e->where = w;
    }

    // A new entry, in use; both allocations before anything else changes.
    CacheEntry* Make() {
        in_use.push_front(nullptr);
        try {
            all.emplace_front();
        } catch (...) {
            in_use.pop_front();
            throw;
        }
        CacheEntry* e = &all.front();
        e->self = all.begin();
        e->node = in_use.begin();
        *e->node = e;
        return e;
    }

    void Discard(CacheEntry* e) noexcept {
        if (e->where == Where::kBusy) --stats.busy;
        ListOf(e->where).erase(e->node);
        all.erase(e->self);
    }

    bool Valid(const CacheEntry& e) const noexcept {
        return backend->Generation(e.reg.cache_slot) == e.reg.generation;
    }

    // The kernel's reference goes, and the entry with it; kept in `busy`
    // while the kernel refuses (EBUSY).  Any other error drops it too:
    // the registration is gone already (ENOENT), its file is (EBADF), or
    // this is a forked child that may not touch it (EPERM).
    // Returns whether it went.
    bool Deregister(CacheEntry* e) noexcept {
        auto r = backend->Deregister(e->reg.handle);
        if (r || r.error().errnum != EBUSY) {
            Discard(e);
            return true;
        }
        if (e->where != Where::kBusy) {
            MoveTo(e, Where::kBusy);
            ++stats.busy;
        }
        return false;
    }

    void RetryBusy() noexcept {
        for (auto it = busy.begin(); it != busy.end();) Deregister(*it++);
    }

    // The oldest refused entry tried again; still refused, it goes last.
    void RetryOldestBusy() noexcept {
        if (busy.empty()) return;
        CacheEntry* e = busy.back();
        if (!Deregister(e)) busy.splice(busy.begin(), busy, e->node);
    }

    // Not findable any more; deregistered now if unused.
    void Unindex(CacheEntry* e) noexcept {
        if (e->indexed) {
            index.erase(e->index_it);
            e->indexed = false;
            stats.cached_bytes -= e->pinned;
            --stats.entries;
        }
        if (!e->uses) Deregister(e);
    }

    // Unused entries, least recently used first, until `incoming` more
    // bytes fit below the bound.
    void EvictFor(std::uint64_t incoming) noexcept {
        while (!lru.empty() && stats.cached_bytes + incoming > max_cached_bytes) {
            ++stats.evictions;
            Unindex(lru.back());
        }
    }

    // Drops every unused entry whose range was invalidated.
    void SweepStale() noexcept {
        for (auto it = lru.begin(); it != lru.end();) {
            CacheEntry* e = *it++;
            if (!Valid(*e)) {
                ++stats.stale;
                Unindex(e);
            }
        }
    }

    // A valid indexed entry containing [start, end) with flags ⊇ `flags`;
    // stale ones met on the way are dropped.
    CacheEntry* Find(std::uint64_t start, std::uint64_t end, std::uint32_t flags) noexcept {
        std::uint64_t lowest = end - std::min(end, max_length);
        for (auto it = index.upper_bound(start); it != index.begin();) {
            --it;
            if (it->first < lowest) break;
            CacheEntry* e = it->second;
            if (e->end < end || (e->flags & flags) != flags) continue;
            if (Valid(*e)) return e;
            // Unindex() erases `it`: go on from the entry after it.
            it = std::next(it);
            ++stats.stale;
            Unindex(e);
        }
        return nullptr;
    }

    void Use(CacheEntry* e) noexcept {
        MoveTo(e, Where::kInUse);
        ++e->uses;
    }

    void Unuse(CacheEntry* e) noexcept {
        if (--e->uses) return;
        if (!e->indexed) {
            Deregister(e);
            if (ended) RetryBusy();
            return;
        }
        MoveTo(e, Where::kLru);
        EvictFor(0);
    }

    // Deregisters every unused cached entry, and tries the busy ones
    // again; with `all_of_them`, makes the ones in use uncached as well.
    void DropAll(bool all_of_them) noexcept {
        RetryBusy();
        while (!lru.empty()) Unindex(lru.back());
        if (!all_of_them) return;
        while (!index.empty()) Unindex(index.begin()->second);
    }
};

}  // namespace detail

RegistrationCache RegistrationCache::Create(std::unique_ptr<CacheBackend> backend,
                                            RegistrationCacheOptions options) {
    auto s = std::make_shared<detail::CacheState>();
    s->backend = std::move(backend);
    s->max_cached_bytes =
        options.max_cached_bytes ? options.max_cached_bytes : DefaultMaxCachedBytes();
    s->fork_epoch = ForkEpoch();
    return RegistrationCache(std::move(s));
}

Result<RegistrationCache> RegistrationCache::Create(const ProtectionDomain& pd,
                                                    RegistrationCacheOptions options) {
    auto backend = MakeKernelCacheBackend(pd);
    if (!backend) return backend.error();
    return Create(std::move(*backend), options);
}

RegistrationCache& RegistrationCache::operator=(RegistrationCache&& other) noexcept {
    if (this != &other) {
        RegistrationCache old(std::move(*this));
        s_ = std::move(other.s_);
    }
    return *this;
}

RegistrationCache::~RegistrationCache() {
    if (!s_) return;
    std::lock_guard lock(s_->mu);
    s_->DropAll(true);
    s_->ended = true;
}

void RegistrationCache::Flush() noexcept {
    if (!s_) return;
    std::lock_guard lock(s_->mu);
    s_->DropAll(false);
}

RegistrationCacheStats RegistrationCache::stats() const {
    if (!s_) return {};
    std::lock_guard lock(s_->mu);
    return s_->stats;
}

std::uint64_t RegistrationCache::max_cached_bytes() const noexcept {
    return s_ ? s_->max_cached_bytes : 0;
}

Result<RegistrationLease> RegistrationCache::Acquire(const void* buffer, std::size_t length,
                                                     std::uint32_t flags, CacheMode mode) {
    if (!s_) return Error::ForRegisterMemory(EBADF);
    if (!flags || (flags & ~kMemReadWrite) || !length) return Error::ForRegisterMemory(EINVAL);
    const auto start = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(buffer));
    std::uint64_t end = 0;
    if (__builtin_add_overflow(start, std::uint64_t{length}, &end))
        return Error::ForRegisterMemory(EFAULT);
    if (g_fork_epoch.load(std::memory_order_relaxed) != s_->fork_epoch)
        return Error::ForRegisterMemory(EPERM);

    detail::CacheState& s = *s_;
    std::lock_guard lock(s.mu);
    detail::CacheEntry* e = nullptr;
    const bool cached = mode == CacheMode::kCached;
    if (cached) {
        e = s.Find(start, end, flags);
        if (e) ++s.stats.hits;
        s.backend->Report(e != nullptr);
    }
    if (!e) {
        const std::uint64_t pinned = PinnedBytes(start, end);
        const bool fits = cached && pinned <= s.max_cached_bytes;
        s.RetryOldestBusy();
        if (cached) {
            ++s.stats.misses;
            s.SweepStale();
            if (fits) s.EvictFor(pinned);
        }
        // The entry before the registration: a failed allocation (thrown)
        // leaves no kernel reference behind.
        e = s.Make();
        auto reg = s.backend->Register(start, length, flags);
        if (!reg && reg.error().errnum == ENOMEM && !s.lru.empty()) {
            // RLIMIT_MEMLOCK: give back what nobody uses and try again.
            s.stats.evictions += s.lru.size();
            s.DropAll(false);
            reg = s.backend->Register(start, length, flags);
        }
        if (!reg) {
            s.Discard(e);
            return reg.error();
        }
        e->start = start;
        e->end = end;
        e->flags = flags;
        e->reg = *reg;
        e->pinned = pinned;
        if (fits && reg->cache_slot != kCacheSlotNone) {
            try {
                e->index_it = s.index.emplace(start, e);
            } catch (const std::bad_alloc&) {
                s.Deregister(e);
                return Error::ForRegisterMemory(ENOMEM);
            }
            e->indexed = true;
            s.max_length = std::max(s.max_length, end - start);
            s.stats.cached_bytes += pinned;
            ++s.stats.entries;
        } else {
            ++s.stats.uncached;
        }
    }
    s.Use(e);

    RegistrationLease lease;
    lease.state_ = s_;
    lease.entry_ = e;
    lease.reg_ = e->reg;
    lease.length_ = e->end - e->start;
    lease.flags_ = e->flags;
    lease.cached_ = e->indexed;
    return lease;
}

RegistrationLease::RegistrationLease(RegistrationLease&& other) noexcept
    : state_(std::move(other.state_)),
      entry_(std::exchange(other.entry_, nullptr)),
      reg_(std::exchange(other.reg_, {})),
      length_(other.length_),
      flags_(other.flags_),
      cached_(other.cached_) {}

RegistrationLease& RegistrationLease::operator=(RegistrationLease&& other) noexcept {
    if (this != &other) {
        Release();
        state_ = std::move(other.state_);
        entry_ = std::exchange(other.entry_, nullptr);
        reg_ = std::exchange(other.reg_, {});
        length_ = other.length_;
        flags_ = other.flags_;
        cached_ = other.cached_;
    }
    return *this;
}

RegistrationLease::~RegistrationLease() { Release(); }

void RegistrationLease::Release() noexcept {
    auto state = std::move(state_);
    detail::CacheEntry* e = std::exchange(entry_, nullptr);
    reg_ = {};
    if (!state || !e) return;
    std::lock_guard lock(state->mu);
    state->Unuse(e);
}

}  // namespace ndk
