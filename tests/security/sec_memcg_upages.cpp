// SPDX-License-Identifier: GPL-2.0
// sec-memcg-upages: the pages a /dev/ndk file shares with its opener, the
// registration cache's generation array (mmap at NDK_U_MMAP_CACHE, 32 KiB)
// and the cache counters page (NDK_U_MMAP_CACHE_COUNTERS, 4 KiB), are
// charged to the opener's memory cgroup and bounded by its memory.max
// (Documentation/security.md, invariant 5).  They are allocated at a
// file's first mmap() of each and kept until its close, so a process that
// maps and unmaps them on many files keeps 36 KiB a file.  Before the fix
// they came from vmalloc_user(), charged to no cgroup.
//
// As nobody, in a cgroup v2 memory cgroup (its own oom_score_adj -1000,
// set as root: a slab charge of open() or mmap() that meets the limit
// calls the cgroup's OOM killer, which then finds no victim, logs "Out of
// memory and no killable processes" (no report the vm tier counts) and
// fails the charge with ENOMEM, instead of killing the test):
//  - 1024 files opened, then both areas of each mapped and unmapped:
//    memory.current grows by at least 80% of 36 KiB a file from the
//    mmaps alone (the opens measured apart);
//  - closing them gives the charge back;
//  - with memory.max 8 MiB above memory.current, up to 2000 files opened
//    and mapped (72 MiB uncharged): an open or mmap fails with ENOMEM
//    first, memory.current never exceeds memory.max (+ 512 KiB), and the
//    files that fit hold at most the room (+ 2 MiB: charge stocks, pages
//    the cgroup reclaimed) at 36 KiB a file;
//  - closing them gives the charge back again.
#include <fcntl.h>
#include <ndk/ndk_netlink.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <vector>

#include "sec_common.hpp"

namespace {

constexpr long kMax = 256L << 20;     // memory.max of the measuring part
constexpr long kRoom = 8L << 20;      // room above memory.current when bounded
constexpr long kPerFile = 36L << 10;  // generation array + counters page
constexpr long kSlack = 512L << 10;   // per-CPU charge stocks, late frees
constexpr int kMeasured = 1024, kBounded = 2000;
constexpr std::size_t kGensBytes = NDK_U_CACHE_SLOTS * 8;

std::string g_cg;
int g_current_fd = -1, g_max_fd = -1;  // memory.current, memory.max: opened as root

// memory.current through the descriptor opened before the drop: no new
// page in user space (at the limit a page fault of this process could
// only be retried, the OOM killer finding no victim).
long Current() { return sec::PreadLong(g_current_fd); }

// Maps and unmaps both areas of @fd: 0, or the errno of the mmap that
// failed.
int MapBoth(int fd) {
    void* g = mmap(nullptr, kGensBytes, PROT_READ, MAP_SHARED, fd, NDK_U_MMAP_CACHE);
    if (g == MAP_FAILED) return errno;
    munmap(g, kGensBytes);
    void* c =
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, NDK_U_MMAP_CACHE_COUNTERS);
    if (c == MAP_FAILED) return errno;
    munmap(c, 4096);
    return 0;
}

const char* Name(int e) { return e ? strerrorname_np(e) : "none"; }

void CloseAll(std::vector<int>& fds) {
    for (int& fd : fds) {
        if (fd >= 0) close(fd);
        fd = -1;
    }
}

int Child() {
    // Every page this process touches below is touched here first.
    std::vector<int> fds(kBounded, -1);
    T_CHECK(Current() > 0);
    if (t_failures) return kTestFail;

    // 1. Charged: the opens, then the mmaps, measured apart.
    long c0 = Current();
    int open_errno = 0, map_errno = 0;
    for (int i = 0; i < kMeasured && !open_errno; i++) {
        fds[i] = open("/dev/ndk", O_RDWR | O_CLOEXEC);
        if (fds[i] < 0) open_errno = errno;
    }
    long c1 = Current();
    for (int i = 0; i < kMeasured && !open_errno && !map_errno; i++) map_errno = MapBoth(fds[i]);
    long c2 = Current();
    T_CHECK(open_errno == 0 && map_errno == 0);
    if (open_errno || map_errno)
        std::printf("open: %s, mmap: %s\n", Name(open_errno), Name(map_errno));
    const long want = kPerFile * kMeasured * 8 / 10;
    std::printf(
        "%d files: opens +%ld kB (%ld B a file), mmaps of both areas +%ld kB (%ld B a file; "
        "36 KiB shared a file, at least %ld kB wanted)\n",
        kMeasured, (c1 - c0) / 1024, (c1 - c0) / kMeasured, (c2 - c1) / 1024, (c2 - c1) / kMeasured,
        want / 1024);
    T_CHECK(c2 - c1 >= want);
    CloseAll(fds);
    T_CHECK(sec::MemcgSettles(g_current_fd, c0, kSlack, "1024 files closed"));

    // 2. Bounded: memory.max a little above memory.current.
    const long base = Current(), max = base + kRoom;
    if (!sec::PwriteLong(g_max_fd, max)) return kTestFail;
    int files = 0, failed_errno = 0;
    const char* failed_at = "nothing";
    long peak = base;
    for (; files < kBounded; files++) {
        int fd = open("/dev/ndk", O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            failed_errno = errno;
            failed_at = "open";
            break;
        }
        fds[files] = fd;
        if (int e = MapBoth(fd)) {
            failed_errno = e;
            failed_at = "mmap";
            break;
        }
        peak = std::max(peak, Current());
    }
    peak = std::max(peak, Current());
    // Give the memory back before anything else (printing included).
    CloseAll(fds);
    std::printf(
        "memory.max %ld kB (+%ld kB): %d files mapped, then %s failed with %s; "
        "memory.current peaked at %ld kB\n",
        max / 1024, kRoom / 1024, files, failed_at, Name(failed_errno), peak / 1024);
    T_CHECK(failed_errno == ENOMEM);
    T_CHECK(peak <= max + kSlack);
    // What fit is what the room holds: nothing uncharged came on top.
    T_CHECK(files * kPerFile <= kRoom + (2L << 20));
    // And the room was real: the limit, not some other failure.
    T_CHECK(files >= kRoom / (2 * kPerFile));
    T_CHECK(sec::MemcgSettles(g_current_fd, base, kSlack, "bounded files closed"));
    sec::PwriteLong(g_max_fd, kMax);
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    g_cg = sec::MemcgCreate("ndk-sec-memcg-upages", kMax);
    if (g_cg.empty()) return kTestFail;
    long base = t_ndk_counter("user_objects");
    int rc = sec::AsNobody("sec-memcg-upages", Child, [] {
        // Room for every file; the cgroup's files are root's, written
        // and read through these descriptors after the drop.
        rlimit nofile{4096, 4096};
        g_current_fd = open((g_cg + "/memory.current").c_str(), O_RDONLY | O_CLOEXEC);
        g_max_fd = open((g_cg + "/memory.max").c_str(), O_WRONLY | O_CLOEXEC);
        if (g_current_fd < 0 || g_max_fd < 0) std::perror("memory.current/memory.max");
        return setrlimit(RLIMIT_NOFILE, &nofile) == 0 && g_current_fd >= 0 && g_max_fd >= 0 &&
               sec::WriteFile("/proc/self/oom_score_adj", "-1000") &&
               sec::WriteFile(g_cg + "/cgroup.procs", std::to_string(getpid()));
    });
    T_CHECK(rc == kTestPass);
    T_CHECK(sec::UserObjectsBack(base, 10));
    T_CHECK(rmdir(g_cg.c_str()) == 0);
    return t_result("sec-memcg-upages");
}
