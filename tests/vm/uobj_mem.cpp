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
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

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
    o.max_reg = ai.max_registration_size;
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
    // Beyond MaxRegistrationSize (the range need not even be mapped).
    T_EXPECT_ERRNO(t_mem_register(o.fd, o.pd, buf, o.max_reg + 1, NDK_U_MEM_READ), EMSGSIZE);
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
    e = pd->RegisterMemory(ro, info->max_registration_size + kPage, ndk::kMemRead);
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

}  // namespace

int main() {
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
    close(o.fd);
    Release();
    T_CHECK(t_ndk_counter("user_objects") == 0);
    return t_result("uobj-mem");
}
