// SPDX-License-Identifier: GPL-2.0
// Description: the registration cache through ndk.ko and rxe.  The
// generation page: mmap()s read-only only (PROT_WRITE, PROT_EXEC,
// MAP_PRIVATE, other offsets and sizes refused, mprotect cannot make it
// writable, only the opener maps it).  The kernel: MEM_REGISTER's slot
// and generation, reserved checked, munmap / MAP_FIXED / madvise bump the
// generation (ucache_invalidations counts), fork does not, a repeat
// MEM_REGISTER never returns a stale handle, a registration of pages
// mapped read-only (copy-on-write broken by the pin) is current, slots
// run out into NDK_U_CACHE_SLOT_NONE.  The library: hits without a
// system call (ioctl(2) is interposed and counted), contained hits, a
// remapped buffer is a miss with a new handle, 1000+ munmap/mmap/Acquire
// rounds with zero stale hits (each lease's generation is the page's,
// and the kernel's repeat-registration answer names the lease's handle),
// eviction keeps VmPin within the bound, bypass, fork (the parent's
// cache stays valid, the child gets EPERM), a deregistration the kernel
// refuses (a window bound over the cache's last reference) kept and
// given back by a later Flush(), everything released on close.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <map>
#include <vector>

#include <ndk/ndk.hpp>

#include "loopback.hpp"
#include "uobj_common.hpp"

// Every ioctl(2) of this process, libndk's included: a hit must make none.
static std::atomic<long> g_ioctls{0};

extern "C" int ioctl(int fd, unsigned long request, ...) noexcept {
    va_list ap;
    va_start(ap, request);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    g_ioctls.fetch_add(1, std::memory_order_relaxed);
    return static_cast<int>(syscall(SYS_ioctl, fd, request, arg));
}

namespace {

const long kPage = sysconf(_SC_PAGESIZE);
constexpr std::size_t kGenBytes = NDK_U_CACHE_SLOTS * sizeof(std::uint64_t);

char* Map(std::size_t pages, void* at = nullptr) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0);
    void* p = mmap(at, pages * kPage, PROT_READ | PROT_WRITE, flags, -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

const std::uint64_t* MapGens(int fd) {
    void* p = mmap(nullptr, kGenBytes, PROT_READ, MAP_SHARED, fd, NDK_U_MMAP_CACHE);
    if (p == MAP_FAILED) {
        perror("mmap generations");
        return nullptr;
    }
    return static_cast<const std::uint64_t*>(p);
}

std::uint64_t Gen(const std::uint64_t* gens, std::uint32_t slot) {
    return __atomic_load_n(&gens[slot], __ATOMIC_ACQUIRE);
}

long Invalidations() { return t_ndk_counter("ucache_invalidations"); }

struct Objects {
    int fd = -1;
    std::uint32_t adapter = 0, pd = 0;
};

bool Setup(Objects& o) {
    o.fd = t_open_ndk();
    if (o.fd < 0) return false;
    long id = t_first_adapter(o.fd);
    o.adapter = id < 0 ? 0 : t_adapter_open(o.fd, id);
    o.pd = o.adapter ? t_pd_create(o.fd, o.adapter) : 0;
    return o.pd != 0;
}

void MmapRules(const Objects& o) {
    void* p;
    T_EXPECT_ERRNO(
        (p = mmap(nullptr, kGenBytes, PROT_READ | PROT_WRITE, MAP_SHARED, o.fd, 0)) == MAP_FAILED
            ? -1
            : 0,
        EPERM);
    T_EXPECT_ERRNO(
        (p = mmap(nullptr, kGenBytes, PROT_READ | PROT_EXEC, MAP_SHARED, o.fd, 0)) == MAP_FAILED
            ? -1
            : 0,
        EPERM);
    T_EXPECT_ERRNO(
        (p = mmap(nullptr, kGenBytes, PROT_READ, MAP_PRIVATE, o.fd, 0)) == MAP_FAILED ? -1 : 0,
        EINVAL);
    T_EXPECT_ERRNO(
        (p = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, o.fd, kPage)) == MAP_FAILED ? -1 : 0,
        EINVAL);
    T_EXPECT_ERRNO(
        (p = mmap(nullptr, kGenBytes + kPage, PROT_READ, MAP_SHARED, o.fd, 0)) == MAP_FAILED ? -1
                                                                                             : 0,
        EINVAL);
    // A smaller mapping is fine; the whole array too, and it stays read-only.
    p = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, o.fd, 0);
    T_CHECK(p != MAP_FAILED);
    if (p != MAP_FAILED) munmap(p, kPage);
    p = mmap(nullptr, kGenBytes, PROT_READ, MAP_SHARED, o.fd, 0);
    T_CHECK(p != MAP_FAILED);
    if (p != MAP_FAILED) {
        T_EXPECT_ERRNO(mprotect(p, kGenBytes, PROT_READ | PROT_WRITE), EACCES);
        munmap(p, kGenBytes);
    }
    // Only the opener maps it.
    pid_t pid = fork();
    if (pid == 0) {
        void* c = mmap(nullptr, kGenBytes, PROT_READ, MAP_SHARED, o.fd, 0);
        _exit(c == MAP_FAILED && errno == EPERM ? 0 : 1);
    }
    int status = 0;
    T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void KernelGenerations(const Objects& o, const std::uint64_t* gens) {
    char* buf = Map(4);
    buf[0] = 1;
    ndk_u_mem_register m{};
    m.pd_handle = o.pd;
    m.flags = NDK_U_MEM_READWRITE;
    m.address = reinterpret_cast<std::uintptr_t>(buf);
    m.length = 3 * kPage;
    m.reserved = 1;
    T_EXPECT_ERRNO(ioctl(o.fd, NDK_IOCTL_MEM_REGISTER, &m), EINVAL);
    m.reserved = 0;
    m.cache_slot = 12345;  // out fields: ignored on input
    m.cache_generation = 7;
    T_CHECK(ioctl(o.fd, NDK_IOCTL_MEM_REGISTER, &m) == 0);
    T_CHECK(m.cache_slot < NDK_U_CACHE_SLOTS && m.reserved == 0);
    if (m.cache_slot >= NDK_U_CACHE_SLOTS) return;
    T_CHECK(Gen(gens, m.cache_slot) == m.cache_generation);
    // Repeat: same handle, same slot and generation.
    ndk_u_mem_register r{};
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 3 * kPage, NDK_U_MEM_READWRITE, &r) == 0);
    T_CHECK(r.handle == m.handle && r.references == 2 && r.cache_slot == m.cache_slot &&
            r.cache_generation == m.cache_generation);
    // fork write-protects the parent's copy-on-write PTEs: no bump.
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    waitpid(pid, nullptr, 0);
    buf[5] = 2;  // and the parent still writes the pinned page in place
    T_CHECK(Gen(gens, m.cache_slot) == m.cache_generation);
    // mprotect() rewrites protections, not pages (as NUMA balancing does
    // once per scan period): no bump, and a repeat is the same.
    T_CHECK(mprotect(buf, 4 * kPage, PROT_READ) == 0);
    T_CHECK(mprotect(buf, 4 * kPage, PROT_READ | PROT_WRITE) == 0);
    buf[6] = 3;
    T_CHECK(Gen(gens, m.cache_slot) == m.cache_generation);
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 3 * kPage, NDK_U_MEM_READWRITE, &r) == 0);
    T_CHECK(r.handle == m.handle && r.references == 3);
    T_CHECK(t_mem_deregister(o.fd, r.handle) == 0);
    // madvise(DONTNEED) of the untouched fourth page: outside, no bump.
    T_CHECK(madvise(buf + 3 * kPage, kPage, MADV_DONTNEED) == 0);
    T_CHECK(Gen(gens, m.cache_slot) == m.cache_generation);
    // A new mapping over the second page: bump.
    long inv0 = Invalidations();
    T_CHECK(Map(1, buf + kPage) == buf + kPage);
    T_CHECK(Gen(gens, m.cache_slot) > m.cache_generation);
    T_CHECK(Invalidations() > inv0);
    // The same (address, length, flags) now: a new registration.
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 3 * kPage, NDK_U_MEM_READWRITE, &r) == 0);
    T_CHECK(r.handle != m.handle && r.references == 1 && r.cache_slot != m.cache_slot);
    T_CHECK(Gen(gens, r.cache_slot) == r.cache_generation);
    // madvise(DONTNEED) inside it: bump.
    T_CHECK(madvise(buf, kPage, MADV_DONTNEED) == 0);
    T_CHECK(Gen(gens, r.cache_slot) > r.cache_generation);
    // The stale handle still deregisters; the release bumps its slot too.
    std::uint64_t g = Gen(gens, m.cache_slot);
    std::uint32_t left = 9;
    T_CHECK(t_mem_deregister(o.fd, m.handle, &left) == 0 && left == 1);
    T_CHECK(t_mem_deregister(o.fd, m.handle, &left) == 0 && left == 0);
    T_CHECK(Gen(gens, m.cache_slot) == g + 1);
    T_CHECK(t_mem_deregister(o.fd, r.handle) == 0);

    // MEM_READ of pages mapped read-only (read, never written: the zero
    // page): the pin breaks copy-on-write, yet the answer is current.
    char* zero = Map(4);
    volatile char sink = 0;
    for (int i = 0; i < 4; i++) sink = sink + zero[i * kPage];
    T_CHECK(t_mem_register(o.fd, o.pd, zero, 4 * kPage, NDK_U_MEM_READ, &r) == 0);
    T_CHECK(r.cache_slot < NDK_U_CACHE_SLOTS);
    if (r.cache_slot < NDK_U_CACHE_SLOTS) T_CHECK(Gen(gens, r.cache_slot) == r.cache_generation);
    T_CHECK(t_mem_deregister(o.fd, r.handle) == 0);
    munmap(zero, 4 * kPage);
    munmap(buf, 4 * kPage);
}

// NDK_U_CACHE_SLOTS registrations take every slot; the next has none.
void SlotsRunOut(const Objects& o) {
    std::vector<std::uint32_t> handles;
    char* buf = Map(NDK_U_CACHE_SLOTS + 1);
    bool ok = buf != nullptr;
    for (std::uint32_t i = 0; ok && i < NDK_U_CACHE_SLOTS; i++) {
        ndk_u_mem_register m{};
        ok = t_mem_register(o.fd, o.pd, buf + i * kPage, kPage, NDK_U_MEM_READWRITE, &m) == 0 &&
             m.cache_slot != NDK_U_CACHE_SLOT_NONE;
        handles.push_back(m.handle);
    }
    T_CHECK(ok);
    ndk_u_mem_register none{};
    char* last = buf + NDK_U_CACHE_SLOTS * kPage;
    T_CHECK(t_mem_register(o.fd, o.pd, last, kPage, NDK_U_MEM_READWRITE, &none) == 0);
    T_CHECK(none.cache_slot == NDK_U_CACHE_SLOT_NONE && none.cache_generation == 0);
    // Without a slot the kernel still tracks it: no stale repeat either.
    ndk_u_mem_register again{};
    T_CHECK(t_mem_register(o.fd, o.pd, last, kPage, NDK_U_MEM_READWRITE, &again) == 0);
    T_CHECK(again.handle == none.handle && again.references == 2);
    T_CHECK(Map(1, last) == last);
    T_CHECK(t_mem_register(o.fd, o.pd, last, kPage, NDK_U_MEM_READWRITE, &again) == 0);
    T_CHECK(again.handle != none.handle);
    for (std::uint32_t h : handles) t_mem_deregister(o.fd, h);
    T_CHECK(t_handle_close(o.fd, none.handle) == 0 && t_handle_close(o.fd, again.handle) == 0);
    munmap(buf, (NDK_U_CACHE_SLOTS + 1) * kPage);
}

// Through the library, on the adapter's own file.
struct Lib {
    ndk::Adapter ad;
    ndk::ProtectionDomain pd;
    ndk::RegistrationCache cache;
    const std::uint64_t* gens;
};

// The kernel's view: a repeat MEM_REGISTER of the lease's registration
// returns the lease's handle only if its pages are the ones mapped now.
bool KernelSaysCurrent(const Lib& l, const ndk::RegistrationLease& lease) {
    ndk_u_mem_register m{};
    if (t_mem_register(l.ad.fd(), l.pd.handle(), reinterpret_cast<void*>(lease.base_address()),
                       lease.length(), lease.flags(), &m) != 0)
        return false;
    t_mem_deregister(l.ad.fd(), m.handle);
    return m.handle == lease.handle();
}

void Hits(Lib& l) {
    char* buf = Map(8);
    auto a = l.cache.Acquire(buf, 4 * kPage, ndk::kMemReadWrite);
    T_CHECK(a.ok());
    if (!a) return;
    T_CHECK(a->cached() && a->generation() == Gen(l.gens, a->cache_slot()));
    long objects = t_ndk_counter("user_objects");
    long calls = g_ioctls.load();
    auto st0 = l.cache.stats();
    {
        auto same = l.cache.Acquire(buf, 4 * kPage, ndk::kMemReadWrite);
        auto inside = l.cache.Acquire(buf + kPage + 100, kPage, ndk::kMemRead);
        auto w = l.cache.Acquire(buf + 3 * kPage, kPage, ndk::kMemWrite);
        T_CHECK(same.ok() && inside.ok() && w.ok());
        if (same && inside && w)
            T_CHECK(same->handle() == a->handle() && inside->handle() == a->handle() &&
                    w->handle() == a->handle() && inside->local_token() == a->local_token());
    }
    a->Release();
    for (int i = 0; i < 100; i++) {
        auto h = l.cache.Acquire(buf + (i % 4) * kPage, kPage, ndk::kMemRead);
        T_CHECK(h.ok());
    }
    T_CHECK(g_ioctls.load() == calls);  // not one system call
    auto st = l.cache.stats();
    T_CHECK(st.hits == st0.hits + 103 && st.misses == st0.misses);
    T_CHECK(t_ndk_counter("user_objects") == objects);

    // Not contained: a miss.
    auto over = l.cache.Acquire(buf + 3 * kPage, 2 * kPage, ndk::kMemRead);
    T_CHECK(over.ok() && l.cache.stats().misses == st.misses + 1);

    // munmap, then a new buffer at the same address: a miss, a new handle.
    std::uint32_t old_handle = 0;
    std::uint64_t old_gen = 0;
    std::uint32_t old_slot = 0;
    {
        auto b = l.cache.Acquire(buf, 4 * kPage, ndk::kMemReadWrite);
        T_CHECK(b.ok());
        if (!b) return;
        old_handle = b->handle();
        old_gen = b->generation();
        old_slot = b->cache_slot();
    }
    T_CHECK(munmap(buf, 8 * kPage) == 0);
    T_CHECK(Map(8, buf) == buf);
    T_CHECK(Gen(l.gens, old_slot) != old_gen);
    auto st1 = l.cache.stats();
    auto c = l.cache.Acquire(buf, 4 * kPage, ndk::kMemReadWrite);
    T_CHECK(c.ok());
    if (c) {
        T_CHECK(c->handle() != old_handle);
        T_CHECK(c->generation() == Gen(l.gens, c->cache_slot()));
        T_CHECK(KernelSaysCurrent(l, *c));
    }
    auto st2 = l.cache.stats();
    T_CHECK(st2.misses == st1.misses + 1 && st2.stale >= st1.stale + 1 && st2.hits == st1.hits);
    over->Release();
    c->Release();
    munmap(buf, 8 * kPage);
}

// munmap / mmap(MAP_FIXED) / Acquire rounds: never a stale hit.
void Churn(Lib& l) {
    constexpr int kRounds = 1200;
    constexpr int kAreaPages = 16;
    char* area = Map(kAreaPages);
    long inv0 = Invalidations();
    auto st0 = l.cache.stats();
    int remaps = 0, bad_gen = 0, bad_kernel = 0, bad_model = 0, failures = 0;
    // The test's own model: the round each page was last remapped, the
    // round each handle was first handed out.  A lease is stale if a page
    // of its registration was remapped after that.
    std::vector<int> remapped(kAreaPages, -1);
    std::map<std::uint32_t, int> registered;
    const auto area_start = reinterpret_cast<std::uintptr_t>(area);
    unsigned seed = 12345;
    for (int i = 0; i < kRounds; i++) {
        seed = seed * 1103515245u + 12345u;
        int page = (seed >> 8) % 12;
        int pages = 1 + (seed >> 16) % 4;
        if ((seed >> 20) % 3 == 0) {
            // A new mapping over two pages of the area (MAP_FIXED replaces them).
            int at = (seed >> 4) % (kAreaPages - 1);
            if (!Map(2, area + at * kPage)) ++failures;
            remapped[at] = remapped[at + 1] = i;
            ++remaps;
        }
        char* p = area + page * kPage + ((seed >> 24) % 2) * 64;
        p[0] = static_cast<char>(i);
        auto lease = l.cache.Acquire(p, pages * kPage - 64, ndk::kMemReadWrite);
        if (!lease) {
            ++failures;
            continue;
        }
        if (lease->cached() && lease->generation() != Gen(l.gens, lease->cache_slot())) ++bad_gen;
        if (!KernelSaysCurrent(l, *lease)) ++bad_kernel;
        auto [it, first] = registered.emplace(lease->handle(), i);
        std::uint64_t first_page = (lease->base_address() - area_start) / kPage;
        std::uint64_t end_page =
            (lease->base_address() + lease->length() - area_start + kPage - 1) / kPage;
        for (std::uint64_t pg = first_page; !first && pg < end_page; pg++)
            if (remapped[pg] > it->second) ++bad_model;
    }
    auto st = l.cache.stats();
    std::printf(
        "churn: %d rounds, %d remaps, hits %llu, misses %llu, stale %llu, evictions %llu,"
        " invalidations +%ld, stale hits: generation %d kernel %d model %d\n",
        kRounds, remaps, static_cast<unsigned long long>(st.hits - st0.hits),
        static_cast<unsigned long long>(st.misses - st0.misses),
        static_cast<unsigned long long>(st.stale - st0.stale),
        static_cast<unsigned long long>(st.evictions - st0.evictions), Invalidations() - inv0,
        bad_gen, bad_kernel, bad_model);
    T_CHECK(failures == 0);
    T_CHECK(bad_gen == 0);
    T_CHECK(bad_kernel == 0);
    T_CHECK(bad_model == 0);
    T_CHECK(st.hits > st0.hits && st.stale > st0.stale);
    T_CHECK(static_cast<std::uint64_t>(Invalidations() - inv0) >= st.stale - st0.stale);
    munmap(area, kAreaPages * kPage);
}

void EvictionBound(Lib& l) {
    auto small = ndk::RegistrationCache::Create(l.pd, {16 * static_cast<std::uint64_t>(kPage)});
    T_CHECK(small.ok());
    if (!small) return;
    long pin0 = t_vmpin_kb();
    char* buf = Map(128);
    long worst = 0;
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 60; i++) {
            auto lease =
                small->Acquire(buf + i * 2 * kPage, (1 + i % 2) * kPage, ndk::kMemReadWrite);
            T_CHECK(lease.ok());
            lease->Release();
            worst = std::max(worst, t_vmpin_kb() - pin0);
            T_CHECK(small->stats().cached_bytes <= small->max_cached_bytes());
        }
    std::printf("eviction: bound %llu kB, worst VmPin growth %ld kB, evictions %llu\n",
                static_cast<unsigned long long>(small->max_cached_bytes() / 1024), worst,
                static_cast<unsigned long long>(small->stats().evictions));
    T_CHECK(worst <= 16 * kPage / 1024);
    T_CHECK(small->stats().evictions > 0);
    *small = ndk::RegistrationCache::Create(l.pd).value();  // the old one flushes
    T_CHECK(t_vmpin_kb() == pin0);
    munmap(buf, 128 * kPage);
}

// Cost of a hit against a registration (bypass: register + deregister).
// Under TCG the absolute numbers mean little; the ratio is the point.
void Timing(Lib& l) {
    using Clock = std::chrono::steady_clock;
    char* buf = Map(16);
    constexpr int kHits = 20000, kBypass = 200;
    auto warm = l.cache.Acquire(buf, 16 * kPage, ndk::kMemReadWrite);
    T_CHECK(warm.ok());
    auto t0 = Clock::now();
    for (int i = 0; i < kHits; i++) {
        auto h = l.cache.Acquire(buf + (i % 16) * kPage, kPage, ndk::kMemRead);
        if (!h) T_CHECK(h.ok());
    }
    auto t1 = Clock::now();
    for (int i = 0; i < kBypass; i++) {
        auto b =
            l.cache.Acquire(buf + (i % 16) * kPage, kPage, ndk::kMemRead, ndk::CacheMode::kBypass);
        if (!b) T_CHECK(b.ok());
    }
    auto t2 = Clock::now();
    auto ns = [](auto d) {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    };
    std::printf(
        "timing: hit (Acquire + release) %lld ns, bypass (register + deregister of one"
        " page) %lld ns\n",
        static_cast<long long>(ns(t1 - t0) / kHits), static_cast<long long>(ns(t2 - t1) / kBypass));
    warm->Release();
    munmap(buf, 16 * kPage);
}

void Bypass(Lib& l) {
    char* buf = Map(2);
    long objects = t_ndk_counter("user_objects");
    long calls = g_ioctls.load();
    auto b = l.cache.Acquire(buf, kPage, ndk::kMemRead, ndk::CacheMode::kBypass);
    T_CHECK(b.ok() && !b->cached());
    T_CHECK(g_ioctls.load() == calls + 1);
    T_CHECK(t_ndk_counter("user_objects") == objects + 1);
    b->Release();
    T_CHECK(g_ioctls.load() == calls + 2);
    T_CHECK(t_ndk_counter("user_objects") == objects);
    munmap(buf, 2 * kPage);
}

void Fork(Lib& l) {
    char* buf = Map(4);
    buf[0] = 1;
    auto live = l.cache.Acquire(buf, 2 * kPage, ndk::kMemReadWrite);
    { auto unused = l.cache.Acquire(buf + 2 * kPage, 2 * kPage, ndk::kMemReadWrite); }
    T_CHECK(live.ok());
    if (!live) return;
    std::uint32_t pd = l.pd.handle();
    int fd = l.ad.fd();
    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        auto r = l.cache.Acquire(buf, 2 * kPage, ndk::kMemReadWrite);
        if (r.ok() || r.error().errnum != EPERM) bad |= 1;
        if (t_mem_register(fd, pd, buf, kPage, NDK_U_MEM_READ) == 0 || errno != EPERM) bad |= 2;
        buf[1] = 2;  // the child's own copy
        _exit(bad);
    }
    int status = 0;
    T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    buf[2] = 3;
    buf[2 * kPage] = 4;
    auto st0 = l.cache.stats();
    long calls = g_ioctls.load();
    auto a = l.cache.Acquire(buf, 2 * kPage, ndk::kMemReadWrite);
    auto b = l.cache.Acquire(buf + 2 * kPage, kPage, ndk::kMemRead);
    T_CHECK(a.ok() && b.ok());
    T_CHECK(l.cache.stats().hits == st0.hits + 2 && g_ioctls.load() == calls);
    if (a) T_CHECK(a->handle() == live->handle() && KernelSaysCurrent(l, *a));
    if (b) T_CHECK(KernelSaysCurrent(l, *b));
    a->Release();
    b->Release();
    live->Release();
    munmap(buf, 4 * kPage);
}

}  // namespace

// The application registered the cache's range itself (the kernel shares
// one entry), bound a window through its own Registration and dropped
// that reference: the cache's is the last, and the kernel refuses it
// while the window is bound.  The cache keeps it (stats().busy) instead
// of forgetting a pinned registration, and gives it back once the
// window is invalidated.
void RefusedDeregistration() {
    try {
        ndk_t::Loopback lb;
        lb.Open();
        lb.Connect();
        auto cache = ndk_t::Must(ndk::RegistrationCache::Create(*lb.pd), "cache");
        ndk_t::Pages buf(4);
        const long pin0 = t_vmpin_kb();
        auto lease =
            ndk_t::Must(cache.Acquire(buf.base, buf.len, ndk::kMemReadWrite), "cache acquire");
        auto reg =
            ndk_t::Must(lb.pd->RegisterMemory(buf.base, buf.len, ndk::kMemReadWrite), "register");
        T_CHECK(reg.handle() == lease.handle() && reg.references() == 2);
        auto mw = ndk_t::Must(ndk::MemoryWindow::Create(*lb.pd), "create MW");
        ndk_t::Must(lb.server->Bind(1, reg, mw, buf.base, buf.len, ndk::op_flag::kAllowRemoteWrite),
                    "bind");
        ndk_t::WaitOk(*lb.cq, "bind");
        ndk_t::Must(reg.Deregister(), "deregister the application's reference");
        lease.Release();
        cache.Flush();
        const long pinned = t_vmpin_kb() - pin0;
        std::printf("refused: Flush() with a window bound: busy %llu, %ld kB still pinned\n",
                    static_cast<unsigned long long>(cache.stats().busy), pinned);
        T_CHECK(cache.stats().busy == 1 && pinned >= 16);
        ndk_t::Must(lb.server->Invalidate(2, mw), "invalidate");
        ndk_t::WaitOk(*lb.cq, "invalidate");
        cache.Flush();
        std::printf("refused: Flush() after the invalidation: busy %llu, %ld kB pinned\n",
                    static_cast<unsigned long long>(cache.stats().busy), t_vmpin_kb() - pin0);
        T_CHECK(cache.stats().busy == 0 && t_vmpin_kb() == pin0);
    } catch (const ndk_t::Failure& f) {
        std::fprintf(stderr, "refused: %s\n", f.what.c_str());
        T_CHECK(false);
    }
}

int main() {
    Objects o;
    if (!Setup(o)) {
        std::fprintf(stderr, "setup failed: %s\n", strerror(errno));
        return kTestFail;
    }
    ndk_u_query_info q{};
    T_CHECK(ioctl(o.fd, NDK_IOCTL_QUERY_INFO, &q) == 0 && (q.features & NDK_U_FEATURE_CACHE));
    if (Invalidations() < 0) {
        std::fprintf(stderr, "no debugfs ucache_invalidations\n");
        return kTestFail;
    }
    MmapRules(o);
    const std::uint64_t* gens = MapGens(o.fd);
    T_CHECK(gens != nullptr);
    if (gens) KernelGenerations(o, gens);
    SlotsRunOut(o);
    munmap(const_cast<std::uint64_t*>(gens), kGenBytes);
    close(o.fd);
    T_CHECK(t_ndk_counter("user_objects") == 0 && t_ndk_counter("user_pinned_pages") == 0);

    long pin0 = t_vmpin_kb();
    {
        auto ad = ndk::Adapter::OpenByName("rxe0");
        T_CHECK(ad.ok());
        if (!ad) return t_result("ucache");
        auto pd = ad->CreateProtectionDomain();
        T_CHECK(pd.ok());
        if (!pd) return t_result("ucache");
        auto cache = ndk::RegistrationCache::Create(*pd);
        T_CHECK(cache.ok());
        if (!cache) {
            std::fprintf(stderr, "cache: %s\n", cache.error().Message().c_str());
            return t_result("ucache");
        }
        const std::uint64_t* lib_gens = MapGens(ad->fd());
        Lib l{std::move(*ad), std::move(*pd), std::move(*cache), lib_gens};
        T_CHECK(l.gens != nullptr);
        if (l.gens) {
            Hits(l);
            Churn(l);
            EvictionBound(l);
            Bypass(l);
            Timing(l);
            Fork(l);
            RefusedDeregistration();
            auto st = l.cache.stats();
            std::printf(
                "cache: hits %llu misses %llu stale %llu evictions %llu uncached %llu"
                " cached_bytes %llu entries %llu (bound %llu)\n",
                static_cast<unsigned long long>(st.hits),
                static_cast<unsigned long long>(st.misses),
                static_cast<unsigned long long>(st.stale),
                static_cast<unsigned long long>(st.evictions),
                static_cast<unsigned long long>(st.uncached),
                static_cast<unsigned long long>(st.cached_bytes),
                static_cast<unsigned long long>(st.entries),
                static_cast<unsigned long long>(l.cache.max_cached_bytes()));
            munmap(const_cast<std::uint64_t*>(l.gens), kGenBytes);
        }
    }
    // Cache, PD and adapter gone: the file closed, nothing left pinned.
    T_CHECK(t_vmpin_kb() == pin0);
    T_CHECK(t_ndk_counter("user_objects") == 0);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);
    return t_result("ucache");
}
