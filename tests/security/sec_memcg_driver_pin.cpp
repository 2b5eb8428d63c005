// SPDX-License-Identifier: GPL-2.0
// sec-memcg-driver-pin: a registration the driver pins (MEM_REGISTER
// through ib_reg_user_mr(), Documentation/registration.md) is charged to
// the caller's memory cgroup for what the driver allocates as well as
// for what ndk.ko does (Documentation/security.md, invariant 5).  The
// driver allocates the ib_umem, its scatter table and, on rxe, a 4 KiB
// page map with plain GFP_KERNEL; ndk.ko holds a charged stand-in of
// about that size for the registration's life (ndk_mr_user_charge()).
// Before the fix a one-page registration charged about 0.6 KiB while
// rxe allocated over 4 KiB, so with RLIMIT_MEMLOCK raised a user grew
// kernel memory past its memory.max.
//
// As nobody, in a cgroup v2 memory cgroup (oom_score_adj -1000, as in
// sec-memcg-upages), RLIMIT_MEMLOCK 64 MiB (raised as root):
//  - 16 GiB of untouched anonymous memory is refused (ENOMEM) by the
//    driver's pin before any stand-in is sized after it: memory.peak
//    stays within 8 MiB of memory.current (the stand-in would be 64 MiB);
//  - 1000 one-page READWRITE registrations of distinct pages raise
//    memory.current by at least 4 KiB each; deregistering (closing the
//    file) gives it back, and VmPin too;
//  - with memory.max 8 MiB above memory.current, up to 4000 more (16 MiB
//    of driver memory at 4 KiB each) stop with ENOMEM, memory.current
//    never exceeds memory.max (+ 512 KiB), and the registrations that fit
//    hold at most the room (+ 2 MiB) at 4 KiB each.
// Needs an adapter whose driver pins user memory (rxe): SKIP elsewhere.
#include <sys/mman.h>
#include <sys/resource.h>

#include "sec_common.hpp"

namespace {

constexpr long kMax = 256L << 20;    // memory.max of the measuring part
constexpr long kRoom = 8L << 20;     // room above memory.current when bounded
constexpr long kPerReg = 4L << 10;   // the driver's share of a one-page registration
constexpr long kSlack = 512L << 10;  // per-CPU charge stocks, late frees
constexpr int kMeasured = 1000, kBounded = 4000;
constexpr long kPage = 4096;

int g_current_fd = -1, g_max_fd = -1, g_peak_fd = -1;  // memory.current, .max, .peak: as root

long Current() { return sec::PreadLong(g_current_fd); }

// A file with an adapter and a PD: false (said) when not.
bool Open(int* fd, std::uint32_t* pd) {
    *fd = t_open_ndk();
    if (*fd < 0) return false;
    std::uint32_t ad = t_adapter_open(*fd, t_first_adapter(*fd));
    *pd = ad ? t_pd_create(*fd, ad) : 0;
    if (!*pd) std::perror("ADAPTER_OPEN/PD_CREATE");
    return *pd != 0;
}

// Registers page @from, @from + 1, ... of @buf until @n are registered or
// one fails: how many were, and the failure's errno in @err (0 if none).
// @peak gets the highest memory.current seen.
int RegisterPages(int fd, std::uint32_t pd, char* buf, int from, int n, int* err, long* peak) {
    *err = 0;
    for (int i = 0; i < n; i++) {
        if (t_mem_register(fd, pd, buf + (from + i) * kPage, kPage, NDK_U_MEM_READWRITE) != 0) {
            *err = errno;
            return i;
        }
        if (peak) *peak = std::max(*peak, Current());
    }
    return n;
}

int Child() {
    const long pages = kMeasured + kBounded;
    auto* buf = static_cast<char*>(
        mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    T_CHECK(buf != MAP_FAILED);
    if (buf == MAP_FAILED) return kTestFail;
    std::memset(buf, 1, pages * kPage);  // charged before any measure
    const long pin0 = t_vmpin_kb();

    int fd;
    std::uint32_t pd;
    if (!Open(&fd, &pd)) return kTestFail;
    ndk_u_adapter_info info{};
    T_CHECK(sec::AdapterInfo(fd, t_adapter_open(fd, t_first_adapter(fd)), &info));
    if (info.max_user_registration_size <= info.max_registration_size) {
        std::printf(
            "SKIP: the adapter's driver does not pin user memory (max user %llu, "
            "kernel %llu)\n",
            static_cast<unsigned long long>(info.max_user_registration_size),
            static_cast<unsigned long long>(info.max_registration_size));
        close(fd);
        return kTestSkip;
    }

    // 0. A length the caller could never pin sizes no stand-in: 16 GiB
    // of untouched anonymous memory against RLIMIT_MEMLOCK 64 MiB is
    // refused by the driver's pin, before a stand-in of 64 MiB would have
    // been allocated (memory.peak, which only ever grows, stays low).
    {
        constexpr std::size_t kHuge = 16UL << 30;
        void* huge = mmap(nullptr, kHuge, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        T_CHECK(huge != MAP_FAILED);
        const long cur = Current();
        int rc = t_mem_register(fd, pd, huge, kHuge, NDK_U_MEM_READWRITE);
        int e = errno;
        const long peak = sec::PreadLong(g_peak_fd);
        std::printf("16 GiB over RLIMIT_MEMLOCK 64 MiB: %s; memory.peak %ld kB above current\n",
                    rc == 0 ? "registered" : strerrorname_np(e), (peak - cur) / 1024);
        T_CHECK(rc != 0 && e == ENOMEM);
        T_CHECK(peak - cur < (8L << 20));
        munmap(huge, kHuge);
    }

    // 1. Charged.
    long c0 = Current(), peak = c0;
    int err;
    int n = RegisterPages(fd, pd, buf, 0, kMeasured, &err, nullptr);
    long c1 = Current();
    std::printf(
        "%d one-page registrations: memory.current +%ld kB (%ld B each; at least %ld "
        "wanted), VmPin +%ld kB, %s\n",
        n, (c1 - c0) / 1024, n ? (c1 - c0) / n : 0, kPerReg, t_vmpin_kb() - pin0,
        err ? strerrorname_np(err) : "no failure");
    T_CHECK(n == kMeasured);
    T_CHECK(c1 - c0 >= kPerReg * kMeasured);
    T_CHECK(t_vmpin_kb() - pin0 == kMeasured * kPage / 1024);
    close(fd);
    T_CHECK(sec::MemcgSettles(g_current_fd, c0, kSlack, "file closed"));
    T_CHECK(t_vmpin_kb() == pin0);

    // 2. Bounded.
    if (!Open(&fd, &pd)) return kTestFail;
    const long base = Current(), max = base + kRoom;
    if (!sec::PwriteLong(g_max_fd, max)) return kTestFail;
    peak = base;
    n = RegisterPages(fd, pd, buf, kMeasured, kBounded, &err, &peak);
    peak = std::max(peak, Current());
    close(fd);  // the memory back before anything else
    std::printf(
        "memory.max %ld kB (+%ld kB): %d registrations, then %s; memory.current "
        "peaked at %ld kB\n",
        max / 1024, kRoom / 1024, n, err ? strerrorname_np(err) : "no failure", peak / 1024);
    T_CHECK(err == ENOMEM);
    T_CHECK(peak <= max + kSlack);
    T_CHECK(n * kPerReg <= kRoom + (2L << 20));
    T_CHECK(n >= kRoom / (4 * kPerReg));  // the limit stopped it, nothing else
    T_CHECK(sec::MemcgSettles(g_current_fd, base, kSlack, "bounded file closed"));
    T_CHECK(t_vmpin_kb() == pin0);
    sec::PwriteLong(g_max_fd, kMax);
    munmap(buf, pages * kPage);
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::string cg = sec::MemcgCreate("ndk-sec-memcg-driver-pin", kMax);
    if (cg.empty()) return kTestFail;
    long base = t_ndk_counter("user_objects");
    int rc = sec::AsNobody("sec-memcg-driver-pin", Child, [&cg] {
        rlimit memlock{64L << 20, 64L << 20};
        g_current_fd = open((cg + "/memory.current").c_str(), O_RDONLY | O_CLOEXEC);
        g_max_fd = open((cg + "/memory.max").c_str(), O_WRONLY | O_CLOEXEC);
        g_peak_fd = open((cg + "/memory.peak").c_str(), O_RDONLY | O_CLOEXEC);
        if (g_current_fd < 0 || g_max_fd < 0 || g_peak_fd < 0)
            std::perror("memory.current/memory.max/memory.peak");
        return setrlimit(RLIMIT_MEMLOCK, &memlock) == 0 && g_current_fd >= 0 && g_max_fd >= 0 &&
               g_peak_fd >= 0 && sec::WriteFile("/proc/self/oom_score_adj", "-1000") &&
               sec::WriteFile(cg + "/cgroup.procs", std::to_string(getpid()));
    });
    if (rc == kTestSkip) {
        rmdir(cg.c_str());
        return kTestSkip;
    }
    T_CHECK(rc == kTestPass);
    T_CHECK(sec::UserObjectsBack(base, 10));
    T_CHECK(rmdir(cg.c_str()) == 0);
    return t_result("sec-memcg-driver-pin");
}
