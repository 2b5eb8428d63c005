// SPDX-License-Identifier: GPL-2.0
// Description: WSPRegisterMemory-style registration (MEM_REGISTER /
// MEM_DEREGISTER).  Every error provoked with otherwise valid input:
// EFAULT for an unmapped buffer, a kernel address, a wrapping range,
// PROT_NONE and a read-only mapping with MEM_WRITE; EINVAL for length 0
// and bad flags; EMSGSIZE beyond MaxRegistrationSize; ENOMEM at the
// RLIMIT_MEMLOCK limit as an unprivileged user; each with its WSA code
// through ndk::ProtectionDomain.  Reference counting (same buffer twice:
// same handle; deregister twice frees; a third time ENOENT), overlapping
// registrations, VmPin charged and given back, and everything released
// by close() and by kill -9 (VmPin and debugfs counters back to zero).
// The boundary table (reliability plan R2): lengths 1, PAGE_SIZE +- 1 at
// offsets 0, 1, 4095, wrapping ranges, PROT_NONE and PROT_EXEC, read-only
// and file-backed MAP_SHARED mappings, each with its errno and the VmPin
// it charged; again as nobody under `ulimit -l 64` (above the limit
// ENOMEM, RLIMIT_MEMLOCK 0 EPERM).
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include <ndk/ndk.hpp>

#include "uobj_common.hpp"

namespace {

const long kPage = sysconf(_SC_PAGESIZE);

void* Map(std::size_t pages, int prot = PROT_READ | PROT_WRITE) {
    void* p = mmap(nullptr, pages * kPage, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

struct Objects {
    int fd = -1;
    std::uint32_t adapter = 0, pd = 0;
    std::uint64_t max_reg = 0;
};

bool Setup(Objects& o) {
    o.fd = t_open_ndk();
    if (o.fd < 0) return false;
    long id = t_first_adapter(o.fd);
    if (id < 0) return false;
    o.adapter = t_adapter_open(o.fd, id);
    o.pd = o.adapter ? t_pd_create(o.fd, o.adapter) : 0;
    ndk_u_adapter_info ai{};
    ai.handle = o.adapter;
    if (!o.pd || ioctl(o.fd, NDK_IOCTL_ADAPTER_INFO, &ai) != 0) return false;
    o.max_reg = ai.max_user_registration_size;
    return true;
}

void Errors(const Objects& o) {
    // Unmapped: a hole made by munmap.
    char* hole = static_cast<char*>(Map(4));
    T_CHECK(hole && munmap(hole + kPage, kPage) == 0);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, hole, 3 * kPage, NDK_U_MEM_READ), EFAULT);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, hole + kPage, 16, NDK_U_MEM_READWRITE), EFAULT);
    // The kernel half, and a range reaching into it.
    T_EXPECT_ERRNO(t_mem_register_raw(o.fd, o.pd, 0xffff888000000000ull, 4096, NDK_U_MEM_READ),
                   EFAULT);
    T_EXPECT_ERRNO(t_mem_register_raw(o.fd, o.pd, 0x00007ffffffff000ull, 8192, NDK_U_MEM_READ),
                   EFAULT);
    // Wrapping address + length.
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, hole, ~0ull - 16, NDK_U_MEM_READ), EFAULT);
    T_EXPECT_ERRNO(t_mem_register_raw(o.fd, o.pd, ~0ull - 4095, 8192, NDK_U_MEM_READ), EFAULT);
    // PROT_NONE, whatever the flags (FOLL_FORCE would pin it).
    void* none = Map(2, PROT_NONE);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, none, 2 * kPage, NDK_U_MEM_READ), EFAULT);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, none, 2 * kPage, NDK_U_MEM_READWRITE), EFAULT);
    // Read-only: MEM_WRITE refused, MEM_READ fine.
    void* ro = Map(2, PROT_READ);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, ro, 2 * kPage, NDK_U_MEM_WRITE), EFAULT);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, ro, 2 * kPage, NDK_U_MEM_READWRITE), EFAULT);
    ndk_u_mem_register m{};
    T_CHECK(t_mem_register(o.fd, o.pd, ro, 2 * kPage, NDK_U_MEM_READ, &m) == 0);
    T_CHECK(m.handle && t_mem_deregister(o.fd, m.handle) == 0);
    // A range half read-only, half writable: MEM_WRITE refused.
    char* mixed = static_cast<char*>(Map(2));
    T_CHECK(mprotect(mixed + kPage, kPage, PROT_READ) == 0);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, mixed, 2 * kPage, NDK_U_MEM_WRITE), EFAULT);
    // Length 0, bad flags.
    char* buf = static_cast<char*>(Map(4));
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, buf, 0, NDK_U_MEM_READ), EINVAL);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, buf, kPage, 0), EINVAL);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, buf, kPage, 4), EINVAL);
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, buf, kPage, 0x80000001u), EINVAL);
    // Unknown PD handle.
    T_EXPECT_ERRNO(t_mem_register(o.fd, 0x7fffffffu, buf, kPage, NDK_U_MEM_READ), ENOENT);
    // Beyond the user limit (the range need not even be mapped): every
    // adapter has one below the address space (8 TiB where the driver
    // pins, MaxRegistrationSize elsewhere).  At 4 GiB, so that the range
    // ends inside the address space (a range past it is EFAULT, first).
    T_CHECK(o.max_reg < (1ULL << 46));
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, reinterpret_cast<void*>(std::uintptr_t{1} << 32),
                                  o.max_reg + 1, NDK_U_MEM_READ),
                   EMSGSIZE);
    // Nothing of the failures stayed pinned.
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);

    munmap(hole, kPage);
    munmap(hole + 2 * kPage, 2 * kPage);
    munmap(none, 2 * kPage);
    munmap(ro, 2 * kPage);
    munmap(mixed, 2 * kPage);
    munmap(buf, 4 * kPage);
}

void LibraryErrors() {
    auto ad = ndk::Adapter::OpenByName("rxe0");
    T_CHECK(ad.ok());
    if (!ad) return;
    auto pd = ad->CreateProtectionDomain();
    T_CHECK(pd.ok());
    if (!pd) return;
    void* ro = Map(1, PROT_READ);
    auto e = pd->RegisterMemory(ro, kPage, ndk::kMemWrite);
    T_CHECK(!e.ok() && e.error().errnum == EFAULT && e.error().wsa == ndk::wsa::kEfault);
    T_CHECK(!e.ok() && e.error().status == ndk::status::kAccessViolation);
    e = pd->RegisterMemory(ro, 0, ndk::kMemRead);
    T_CHECK(!e.ok() && e.error().wsa == ndk::wsa::kEinval);
    e = pd->RegisterMemory(ro, kPage, 8);
    T_CHECK(!e.ok() && e.error().wsa == ndk::wsa::kEinval);
    auto info = ad->QueryInfo();
    // Beyond the user limit: EMSGSIZE, checked before anything is pinned
    // (8 TiB on rxe: ndk.ko's cap of a driver's pin, for siw's int page
    // count).  At 4 GiB, so that the range ends inside the address space
    // (a range past it is EFAULT, which comes first).
    T_CHECK(info->max_user_registration_size < (1ULL << 46));
    e = pd->RegisterMemory(reinterpret_cast<void*>(std::uintptr_t{1} << 32),
                           info->max_user_registration_size + kPage, ndk::kMemRead);
    T_CHECK(!e.ok() && e.error().errnum == EMSGSIZE && e.error().wsa == ndk::wsa::kEnobufs);
    // Registration through the library: same buffer twice, same handle.
    auto r1 = pd->RegisterMemory(ro, kPage, ndk::kMemRead);
    auto r2 = pd->RegisterMemory(ro, kPage, ndk::kMemRead);
    T_CHECK(r1.ok() && r2.ok());
    if (r1 && r2) {
        T_CHECK(r1->handle() == r2->handle() && r2->references() == 2);
        T_CHECK(r1->base_address() == reinterpret_cast<std::uintptr_t>(ro));
        T_CHECK(r1->Deregister().ok());
        auto again = r1->Deregister();
        T_CHECK(!again.ok() && again.error().wsa == ndk::wsa::kEinval);
    }
    // The PD and registration outlive the Adapter object.
    ndk::Adapter gone = std::move(*ad);
    { ndk::Adapter drop = std::move(gone); }
    auto r3 = pd->RegisterMemory(ro, kPage, ndk::kMemRead);
    T_CHECK(r3.ok());
    munmap(ro, kPage);
}

void RefcountAndPinning(const Objects& o) {
    long pin0 = t_vmpin_kb();
    char* buf = static_cast<char*>(Map(8));
    ndk_u_mem_register a{}, b{}, c{}, d{};
    // Never written: MEM_READ must not pin the shared zero page.
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 4 * kPage, NDK_U_MEM_READ, &a) == 0);
    T_CHECK(a.handle && a.references == 1);
    T_CHECK(a.base_address == reinterpret_cast<std::uintptr_t>(buf));
    T_CHECK(a.local_token != 0);
    T_CHECK(t_vmpin_kb() == pin0 + 4 * kPage / 1024);
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 4 * kPage, NDK_U_MEM_READ, &b) == 0);
    T_CHECK(b.handle == a.handle && b.references == 2);
    T_CHECK(b.local_token == a.local_token && b.remote_token == a.remote_token);
    T_CHECK(t_vmpin_kb() == pin0 + 4 * kPage / 1024);
    // Other flags or an overlapping range: another registration.
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 4 * kPage, NDK_U_MEM_READWRITE, &c) == 0);
    T_CHECK(c.handle != a.handle && c.references == 1 && c.local_token != a.local_token);
    T_CHECK(t_mem_register(o.fd, o.pd, buf + kPage + 100, 2 * kPage, NDK_U_MEM_WRITE, &d) == 0);
    T_CHECK(d.handle != a.handle && d.handle != c.handle);
    T_CHECK(d.base_address == reinterpret_cast<std::uintptr_t>(buf + kPage + 100));
    T_CHECK(t_vmpin_kb() == pin0 + (4 + 4 + 3) * kPage / 1024);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 11);

    std::uint32_t left = 99;
    T_CHECK(t_mem_deregister(o.fd, a.handle, &left) == 0 && left == 1);
    T_CHECK(t_vmpin_kb() == pin0 + 11 * kPage / 1024);
    T_CHECK(t_mem_deregister(o.fd, a.handle, &left) == 0 && left == 0);
    T_CHECK(t_vmpin_kb() == pin0 + 7 * kPage / 1024);
    T_EXPECT_ERRNO(t_mem_deregister(o.fd, a.handle), ENOENT);
    // Registering again after the last deregistration: a new handle.
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 4 * kPage, NDK_U_MEM_READ, &b) == 0);
    T_CHECK(b.handle != a.handle && b.references == 1);
    // A PD with registrations cannot close; HANDLE_CLOSE of a registration
    // drops it whatever its count.
    T_EXPECT_ERRNO(t_handle_close(o.fd, o.pd), EBUSY);
    T_CHECK(t_mem_register(o.fd, o.pd, buf, 4 * kPage, NDK_U_MEM_READWRITE, &c) == 0);
    T_CHECK(c.references == 2);
    T_CHECK(t_handle_close(o.fd, c.handle) == 0);
    T_EXPECT_ERRNO(t_mem_deregister(o.fd, c.handle), ENOENT);
    T_CHECK(t_mem_deregister(o.fd, b.handle) == 0 && t_mem_deregister(o.fd, d.handle) == 0);
    T_CHECK(t_vmpin_kb() == pin0);
    munmap(buf, 8 * kPage);
}

// A child that is neither root nor CAP_IPC_LOCK, with a 16-page memlock
// limit: 16 pages register, the 17th page does not.
void MemlockLimit() {
    pid_t pid = fork();
    if (pid == 0) {
        rlimit rl{static_cast<rlim_t>(16 * kPage), static_cast<rlim_t>(16 * kPage)};
        if (setrlimit(RLIMIT_MEMLOCK, &rl) != 0 || setgroups(0, nullptr) != 0 ||
            setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(10);
        Objects o;
        if (!Setup(o)) _exit(11);
        char* buf = static_cast<char*>(Map(32));
        int bad = 0;
        if (t_mem_register(o.fd, o.pd, buf, 16 * kPage, NDK_U_MEM_READWRITE) != 0) bad |= 1;
        if (t_mem_register(o.fd, o.pd, buf + 16 * kPage, kPage, NDK_U_MEM_READWRITE) == 0 ||
            errno != ENOMEM)
            bad |= 2;
        auto ad = ndk::Adapter::OpenByName("rxe0");
        auto pd = ad ? ad->CreateProtectionDomain()
                     : ndk::Result<ndk::ProtectionDomain>(ndk::Error::FromErrno(ENODEV));
        if (!pd) {
            bad |= 4;
        } else {
            auto r = pd->RegisterMemory(buf + 20 * kPage, kPage, ndk::kMemRead);
            if (r.ok() || r.error().errnum != ENOMEM || r.error().wsa != ndk::wsa::kEnobufs)
                bad |= 8;
        }
        _exit(bad);
    }
    int status = 0;
    T_CHECK(waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFEXITED(status) && WEXITSTATUS(status))
        std::fprintf(stderr, "memlock child failed: %d\n", WEXITSTATUS(status));
}

// close() and kill -9 release everything: VmPin and the counters.
void Release() {
    long pin0 = t_vmpin_kb();
    Objects o;
    T_CHECK(Setup(o));
    char* buf = static_cast<char*>(Map(16));
    for (int i = 0; i < 4; i++)
        T_CHECK(t_mem_register(o.fd, o.pd, buf + i * 4 * kPage, 4 * kPage, NDK_U_MEM_READWRITE) ==
                0);
    T_CHECK(t_pd_create(o.fd, o.adapter) != 0);
    T_CHECK(t_vmpin_kb() == pin0 + 16 * kPage / 1024);
    T_CHECK(t_ndk_counter("user_objects") == 7);
    close(o.fd);
    T_CHECK(t_vmpin_kb() == pin0);
    T_CHECK(t_ndk_counter("user_objects") == 0);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);

    pid_t pid = fork();
    if (pid == 0) {
        Objects c;
        if (!Setup(c)) _exit(1);
        if (t_mem_register(c.fd, c.pd, buf, 16 * kPage, NDK_U_MEM_READWRITE) != 0) _exit(2);
        kill(getpid(), SIGKILL);
        _exit(3);
    }
    int status = 0;
    T_CHECK(waitpid(pid, &status, 0) == pid);
    T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    T_CHECK(t_ndk_counter("user_objects") == 0);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);
    munmap(buf, 16 * kPage);
}

const std::uint64_t kP = static_cast<std::uint64_t>(kPage);

// The registration boundary table (reliability plan R2): each row's
// errno, and VmPin charged by exactly the pages spanned on success
// (then given back by the deregistration) and unchanged on failure.
struct Row {
    std::string name;
    std::uint64_t addr, len;
    std::uint32_t flags;
    int want;
};

const char* FlagName(std::uint32_t f) {
    return f == NDK_U_MEM_READ ? "READ" : f == NDK_U_MEM_WRITE ? "WRITE" : "READWRITE";
}

int RunRows(int fd, std::uint32_t pd, const std::vector<Row>& rows, const char* who) {
    int bad = 0;
    for (const Row& r : rows) {
        long pin0 = t_vmpin_kb();
        ndk_u_mem_register m{};
        errno = 0;
        int rc = t_mem_register_raw(fd, pd, r.addr, r.len, r.flags) == 0 ? 0 : errno;
        if (rc == 0) {
            // Again with the result, for the handle (the same, counted twice).
            t_mem_register(fd, pd, reinterpret_cast<void*>(r.addr), r.len, r.flags, &m);
        }
        long charged = t_vmpin_kb() - pin0;
        std::uint64_t first = r.addr & ~static_cast<std::uint64_t>(kP - 1);
        std::uint64_t end = (r.addr + r.len + kP - 1) & ~static_cast<std::uint64_t>(kP - 1);
        long want_kb = r.want ? 0 : static_cast<long>((end - first) / 1024);
        bool ok = rc == r.want && charged == want_kb;
        if (rc == 0) {
            ok = ok && m.references == 2 && t_mem_deregister(fd, m.handle) == 0 &&
                 t_mem_deregister(fd, m.handle) == 0 && t_vmpin_kb() == pin0;
        }
        std::printf("| %-9s | %-44s | %-9s | %-6s | %-6s | %+5ld kB | %s\n", who, r.name.c_str(),
                    FlagName(r.flags), r.want ? strerrorname_np(r.want) : "0",
                    rc ? strerrorname_np(rc) : "0", charged, ok ? "ok" : "MISMATCH");
        bad += !ok;
    }
    return bad;
}

// A file of @pages pages in /tmp, opened @mode, mapped MAP_SHARED with @prot.
void* FileMap(std::size_t pages, int mode, int prot) {
    char path[] = "/tmp/uobj-mem-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return nullptr;
    bool sized = ftruncate(fd, static_cast<off_t>(pages * kP)) == 0;
    int use = mode == O_RDWR ? fd : open(path, mode);
    unlink(path);
    void* p = sized && use >= 0 ? mmap(nullptr, pages * kP, prot, MAP_SHARED, use, 0) : MAP_FAILED;
    if (use != fd && use >= 0) close(use);
    close(fd);
    return p == MAP_FAILED ? nullptr : p;
}

std::vector<Row> BoundaryRows() {
    std::vector<Row> rows;
    char* buf = static_cast<char*>(Map(8));
    std::memset(buf, 7, 8 * kP);
    auto a = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
    for (std::uint64_t off : {0, 1, 4095})
        for (std::uint64_t len : {1, 4095, 4096, 4097})
            rows.push_back({"offset " + std::to_string(off) + ", length " + std::to_string(len),
                            a(buf) + kP + off, len, NDK_U_MEM_READWRITE, 0});
    rows.push_back({"address 0, length 1", 0, 1, NDK_U_MEM_READ, EFAULT});
    rows.push_back({"address ~0, length 1 (wraps)", ~0ull, 1, NDK_U_MEM_READ, EFAULT});
    rows.push_back(
        {"address + length = 2^64 exactly", a(buf), 0ull - a(buf), NDK_U_MEM_READ, EFAULT});
    rows.push_back({"page-aligned end wraps (0xff..f001 + 0xffe)", 0xfffffffffffff001ull, 0xffe,
                    NDK_U_MEM_READ, EFAULT});
    void* none = Map(1, PROT_NONE);
    rows.push_back({"PROT_NONE", a(none), 16, NDK_U_MEM_READ, EFAULT});
    void* exec = Map(1, PROT_EXEC);
    rows.push_back({"PROT_EXEC only (no VM_READ)", a(exec), 16, NDK_U_MEM_READ, EFAULT});
    void* ro = Map(1, PROT_READ);
    rows.push_back({"read-only anonymous", a(ro), kP, NDK_U_MEM_WRITE, EFAULT});
    rows.push_back({"read-only anonymous", a(ro), kP, NDK_U_MEM_READ, 0});
    void* shared = FileMap(2, O_RDWR, PROT_READ | PROT_WRITE);
    if (shared) std::memset(shared, 1, 2 * kP);
    rows.push_back({"file-backed MAP_SHARED, read-write file", a(shared), 2 * kP,
                    NDK_U_MEM_READWRITE, shared ? 0 : EFAULT});
    void* rofile = FileMap(2, O_RDONLY, PROT_READ);
    rows.push_back(
        {"file-backed MAP_SHARED, O_RDONLY file", a(rofile), 2 * kP, NDK_U_MEM_WRITE, EFAULT});
    rows.push_back({"file-backed MAP_SHARED, O_RDONLY file", a(rofile), 2 * kP, NDK_U_MEM_READ,
                    rofile ? 0 : EFAULT});
    void* sanon = mmap(nullptr, kP, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    rows.push_back({"anonymous MAP_SHARED", a(sanon), kP, NDK_U_MEM_READWRITE, 0});
    return rows;  // the mappings stay for the process's life
}

// Run as nobody with `ulimit -l 64` (16 pages): the table, the limit,
// then RLIMIT_MEMLOCK 0.
int Unprivileged() {
    Objects o;
    if (getuid() == 0 || !Setup(o)) return 10;
    rlimit rl{};
    getrlimit(RLIMIT_MEMLOCK, &rl);
    if (rl.rlim_cur != 64 * 1024) return 11;
    int bad = RunRows(o.fd, o.pd, BoundaryRows(), "nobody");
    char* big = static_cast<char*>(Map(32));
    std::memset(big, 3, 32 * kP);
    auto a = reinterpret_cast<std::uintptr_t>(big);
    bad += RunRows(o.fd, o.pd,
                   {{"17 pages, above ulimit -l 64", a, 17 * kP, NDK_U_MEM_READWRITE, ENOMEM},
                    {"16 pages, at ulimit -l 64", a, 16 * kP, NDK_U_MEM_READWRITE, 0}},
                   "nobody");
    ndk_u_mem_register m{};
    bad += t_mem_register(o.fd, o.pd, big, 16 * kP, NDK_U_MEM_READ, &m) != 0;
    bad += RunRows(
        o.fd, o.pd,
        {{"1 byte more while 16 pages are pinned", a + 20 * kP, 1, NDK_U_MEM_READWRITE, ENOMEM}},
        "nobody");
    bad += t_mem_deregister(o.fd, m.handle) != 0;
    rl.rlim_cur = 0;
    bad += setrlimit(RLIMIT_MEMLOCK, &rl) != 0;
    bad += RunRows(o.fd, o.pd, {{"RLIMIT_MEMLOCK 0", a, 1, NDK_U_MEM_READ, EPERM}}, "nobody");
    close(o.fd);
    return bad ? 1 : 0;
}

void Boundaries(const Objects& o) {
    std::printf(
        "| user      | case                                         | flags     | want   | got    "
        "| VmPin    |\n");
    T_CHECK(RunRows(o.fd, o.pd, BoundaryRows(), "root") == 0);
    // The same as nobody under `ulimit -l 64` (setpriv, as a shell would).
    char self[4096] = {};
    T_CHECK(readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/bash", "bash", "-c",
              "ulimit -l 64 && exec setpriv --reuid=65534 --regid=65534 --clear-groups "
              "\"$0\" --unprivileged",
              self, static_cast<char*>(nullptr));
        _exit(127);
    }
    int st = 0;
    T_CHECK(waitpid(pid, &st, 0) == pid);
    T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        std::fprintf(stderr, "unprivileged boundary table failed: status %#x\n", st);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--unprivileged") == 0) return Unprivileged();
    Objects o;
    if (!Setup(o)) {
        std::fprintf(stderr, "setup failed: %s\n", strerror(errno));
        return kTestFail;
    }
    if (t_vmpin_kb() < 0 || t_ndk_counter("user_objects") < 0) {
        std::fprintf(stderr, "no VmPin or debugfs counters\n");
        return kTestFail;
    }
    Errors(o);
    LibraryErrors();
    RefcountAndPinning(o);
    MemlockLimit();
    Boundaries(o);
    close(o.fd);
    Release();
    T_CHECK(t_ndk_counter("user_objects") == 0);
    return t_result("uobj-mem");
}
