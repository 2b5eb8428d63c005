// SPDX-License-Identifier: GPL-2.0
// sec-rdma-cgroup: what a process holds through /dev/ndk is charged to its
// rdma cgroup as uverbs charges its objects (Documentation/security.md):
// an adapter handle as an HCA handle (a uverbs context), every other
// handle as an HCA object, so that an administrator's rdma.max bounds
// /dev/ndk as it bounds uverbs.  As nobody, in a cgroup v2 rdma cgroup
// with rdma.max "rxe0 hca_handle=2 hca_object=4":
//  1. two ADAPTER_OPENs succeed, the third fails with EAGAIN;
//  2. three PDs and a MEM_REGISTER succeed; a fourth PD and a second
//     MEM_REGISTER (another range) fail with EAGAIN, and the refused
//     registration's pages are not left pinned (VmPin);
//  3. rdma.current reads "rxe0 hca_handle=2 hca_object=4";
//  4. a closed PD's charge lets the next PD in;
//  5. closing the file gives every charge back (rdma.current 0 and 0);
//  6. with objects held, the device is removed (rdma link delete): the
//     charges go before the device does (the delete returns, rdma.current
//     no longer lists rxe0, no "Invalid device" of the rdma controller in
//     the kernel log), and the file's close after it charges nothing back.
// rxe0 is added again at the end.  The cgroup's rdma.max goes back to
// "max" before the cgroup is removed: 6.1's rdma controller keeps a
// cgroup's pool of a device whose limit was set and frees it only at an
// uncharge or a write of rdma.max, so removing the cgroup with nothing
// charged frees the cgroup under its pool, and the device's next
// unregistration corrupts a list (a kernel BUG in lib/list_debug.c, seen
// while writing this test).  Before the fix nothing was charged:
// the third adapter and the fifth object were created, and rdma.current
// stayed at 0.
#include <sys/mman.h>

#include <array>

#include "sec_common.hpp"

namespace {

const std::string kDev = "rxe0";
std::string g_cg;

// rdma.current's line for kDev ("" when the device is not listed).
std::string CurrentLine() {
    std::ifstream in(g_cg + "/rdma.current");
    for (std::string line; std::getline(in, line);) {
        while (!line.empty() && line.back() == ' ') line.pop_back();
        if (line.rfind(kDev + " ", 0) == 0) return line;
    }
    return "";
}

// Removes the test's cgroup, its limits lifted first (file comment).
void RemoveCgroup() {
    if (access(g_cg.c_str(), F_OK) != 0) return;
    sec::WriteFile(g_cg + "/rdma.max", kDev + " hca_handle=max hca_object=max");
    rmdir(g_cg.c_str());
}

bool CurrentIs(int handles, int objects, const char* when) {
    std::string want =
        kDev + " hca_handle=" + std::to_string(handles) + " hca_object=" + std::to_string(objects);
    std::string got = CurrentLine();
    std::printf("%s: rdma.current \"%s\"\n", when, got.c_str());
    if (got != want) std::printf("  expected \"%s\"\n", want.c_str());
    return got == want;
}

// Moves the calling process into the test's cgroup (as root, before the drop).
bool JoinCgroup() { return sec::WriteFile(g_cg + "/cgroup.procs", std::to_string(getpid())); }

// Steps 1-5, as nobody in the cgroup.
int Limits() {
    int fd = t_open_ndk();
    T_CHECK(fd >= 0);
    if (fd < 0) return kTestFail;
    long id = t_first_adapter(fd);
    std::uint32_t ad1 = t_adapter_open(fd, id), ad2 = t_adapter_open(fd, id);
    T_CHECK(ad1 && ad2);
    std::uint32_t ad3 = t_adapter_open(fd, id);
    int e = errno;
    std::printf("1. third ADAPTER_OPEN: %s\n", ad3 ? "opened" : strerrorname_np(e));
    T_CHECK(!ad3 && e == EAGAIN);

    const long pin0 = t_vmpin_kb();
    auto* buf = static_cast<char*>(
        mmap(nullptr, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    T_CHECK(buf != MAP_FAILED);
    if (buf == MAP_FAILED) return kTestFail;
    std::memset(buf, 1, 2 * 4096);
    std::array<std::uint32_t, 3> pd{};
    for (auto& p : pd) p = t_pd_create(fd, ad1);
    T_CHECK(pd[0] && pd[1] && pd[2]);
    ndk_u_mem_register m{};
    T_CHECK(t_mem_register(fd, pd[0], buf, 4096, NDK_U_MEM_READWRITE, &m) == 0);
    std::uint32_t pd4 = t_pd_create(fd, ad2);
    e = errno;
    std::printf("2. fifth object (a PD): %s\n", pd4 ? "created" : strerrorname_np(e));
    T_CHECK(!pd4 && e == EAGAIN);
    int rc = t_mem_register(fd, pd[1], buf + 4096, 4096, NDK_U_MEM_READWRITE);
    e = errno;
    std::printf("   a registration of another page: %s; VmPin %+ld kB\n",
                rc == 0 ? "registered" : strerrorname_np(e), t_vmpin_kb() - pin0);
    T_CHECK(rc != 0 && e == EAGAIN);
    T_CHECK(t_vmpin_kb() - pin0 == 4);

    T_CHECK(CurrentIs(2, 4, "3. at the limit"));
    T_CHECK(t_handle_close(fd, pd[2]) == 0);
    pd4 = t_pd_create(fd, ad2);
    std::printf("4. a PD after one was closed: %s\n", pd4 ? "created" : strerrorname_np(errno));
    T_CHECK(pd4 != 0);
    close(fd);
    T_CHECK(CurrentIs(0, 0, "5. file closed"));
    T_CHECK(t_vmpin_kb() == pin0);
    munmap(buf, 2 * 4096);
    return t_failures ? kTestFail : kTestPass;
}

// Step 6: the child holds objects while the parent removes the device.
int Removal() {
    int ready[2], go[2];
    if (pipe(ready) || pipe(go)) return kTestFail;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        if (!JoinCgroup() || !sec::BecomeNobody()) _exit(kTestFail);
        int fd = t_open_ndk();
        std::uint32_t ad = t_adapter_open(fd, t_first_adapter(fd));
        bool ok = ad && t_pd_create(fd, ad) && t_pd_create(fd, ad);
        char c = ok ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1) _exit(kTestFail);
        close(fd);  // after the removal: nothing left to give back
        _exit(ok ? kTestPass : kTestFail);
    }
    char c = 'n';
    T_CHECK(read(ready[0], &c, 1) == 1 && c == 'y');
    T_CHECK(CurrentIs(1, 2, "6. held"));
    long warns = sec::DmesgCount("Invalid device .* or rdma cgroup");
    int rc = sec::RunTimed("rdma link delete " + kDev, 60);
    std::printf("   rdma link delete %s with the objects held: rc %d; rdma.current \"%s\"\n",
                kDev.c_str(), rc, CurrentLine().c_str());
    T_CHECK(rc == 0);
    T_CHECK(CurrentLine().empty());
    T_CHECK(write(go[1], "g", 1) == 1);
    T_CHECK(sec::WaitFor(pid, 30) == kTestPass);
    T_CHECK(sec::DmesgCount("Invalid device .* or rdma cgroup") == warns);
    T_CHECK(std::system(("rdma link add " + kDev + " type rxe netdev v0").c_str()) == 0);
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    std::string root = sec::Cgroup2Root();
    if (root.empty() || !sec::WriteFile(root + "/cgroup.subtree_control", "+rdma")) {
        std::printf("no cgroup v2 rdma controller\n");
        return kTestFail;
    }
    g_cg = root + "/ndk-rdma";
    RemoveCgroup();
    T_CHECK(mkdir(g_cg.c_str(), 0755) == 0);
    T_CHECK(sec::WriteFile(g_cg + "/rdma.max", kDev + " hca_handle=2 hca_object=4"));
    if (t_failures) return kTestFail;
    int rc = sec::AsNobody("limits", Limits, JoinCgroup);
    T_CHECK(rc == kTestPass);
    if (rc == kTestPass) T_CHECK(Removal() == kTestPass);
    RemoveCgroup();
    return t_failures ? kTestFail : kTestPass;
}
