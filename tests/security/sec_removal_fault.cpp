// SPDX-License-Identifier: GPL-2.0
// sec-removal-fault (issue 15 item 10): device removal while a command of
// a /dev/ndk file is stalled in a user-memory fault.  The removal callback
// needs the file's lock, which QP_POST held while copying its SGE list
// from user memory: a fault the caller never resolves (userfaultfd here,
// a FUSE mapping alike) held `rdma link delete` forever.
//
// As nobody (vm.unprivileged_userfaultfd 1 for the test): a QP_POST whose
// SGE list lies in a userfaultfd-registered page, stalled in the fault;
// `rdma link delete rxe0` must return within 30 s meanwhile.  Then the
// fault is resolved, the post returns, and rxe0 is added back.
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <thread>

#include "sec_common.hpp"

namespace {

int Stall(int out, int in) {
    rel::Dev d;
    long id = sec::AdapterId(d.fd(), "rxe0");
    std::uint32_t adapter = id >= 0 ? t_adapter_open(d.fd(), static_cast<std::uint32_t>(id)) : 0;
    std::uint32_t pd = adapter ? t_pd_create(d.fd(), adapter) : 0;
    ndk_u_cq_create cc{};
    cc.adapter_handle = adapter;
    cc.depth = 8;
    std::uint32_t cq = pd ? d.Create(NDK_IOCTL_CQ_CREATE, &cc) : 0;
    std::uint32_t qp = cq ? rel::CreateQp(d.fd(), pd, cq, 1) : 0;
    T_CHECK(qp != 0);

    int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    if (uffd < 0) std::perror("userfaultfd");
    uffdio_api api{};
    api.api = UFFD_API;
    T_CHECK(uffd >= 0 && ioctl(uffd, UFFDIO_API, &api) == 0);
    const long pg = sysconf(_SC_PAGESIZE);
    void* page = mmap(nullptr, static_cast<std::size_t>(pg), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uffdio_register reg{};
    reg.range.start = reinterpret_cast<std::uintptr_t>(page);
    reg.range.len = static_cast<std::uint64_t>(pg);
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    T_CHECK(page != MAP_FAILED && ioctl(uffd, UFFDIO_REGISTER, &reg) == 0);
    if (t_failures) return kTestFail;

    int post_rc = 0, post_errno = 0;
    std::thread poster([&] {
        ndk_u_qp_post p{};
        p.qp_handle = qp;
        p.op = NDK_U_OP_RECEIVE;
        p.nsge = 1;
        p.sgl = reinterpret_cast<std::uintptr_t>(page);  // faults in copy_from_user
        post_rc = d.Ioctl(NDK_IOCTL_QP_POST, &p);
        post_errno = errno;
    });
    pollfd pfd{uffd, POLLIN, 0};
    T_CHECK(poll(&pfd, 1, 10000) == 1);
    uffd_msg msg{};
    T_CHECK(read(uffd, &msg, sizeof(msg)) == sizeof(msg) && msg.event == UFFD_EVENT_PAGEFAULT);
    std::printf("QP_POST stalled in a fault at %#llx\n",
                static_cast<unsigned long long>(msg.arg.pagefault.address));
    char c = t_failures ? 'f' : 'p';
    T_CHECK(write(out, &c, 1) == 1);
    T_CHECK(read(in, &c, 1) == 1);  // removal tried
    // Resolve: a zero page, i.e. one SGE {0, 0, 0}.
    uffdio_zeropage z{};
    z.range = reg.range;
    T_CHECK(ioctl(uffd, UFFDIO_ZEROPAGE, &z) == 0);
    poster.join();
    std::printf("the post returned %d (%s)\n", post_rc,
                post_rc ? strerrorname_np(post_errno) : "0");
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    std::string old = std::to_string(sec::ReadLong("/proc/sys/vm/unprivileged_userfaultfd"));
    T_CHECK(sec::WriteFile("/proc/sys/vm/unprivileged_userfaultfd", "1"));
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) return kTestFail;
    std::fflush(nullptr);
    pid_t kid = fork();
    if (kid == 0) {
        close(up[0]);
        close(down[1]);
        _exit(sec::BecomeNobody() ? Stall(up[1], down[0]) : kTestFail);
    }
    close(up[1]);
    close(down[0]);
    char c = 0;
    T_CHECK(read(up[0], &c, 1) == 1 && c == 'p');
    pid_t hung = 0;
    double t0 = rel::Now();
    int rc = sec::RunTimed("rdma link delete rxe0", 30, &hung);
    std::printf("rdma link delete rxe0 with a post stalled in a fault: %s after %.1f s\n",
                rc == 0 ? "returned" : "did not return", rel::Now() - t0);
    T_CHECK(rc == 0);
    c = 'x';
    T_CHECK(write(down[1], &c, 1) == 1);
    T_CHECK(sec::WaitFor(kid, 60) == kTestPass);
    if (hung) T_CHECK(sec::WaitFor(hung, 60) == 0);
    T_CHECK(sec::RunTimed("rdma link add rxe0 type rxe netdev v0", 60) == 0);
    sec::WriteFile("/proc/sys/vm/unprivileged_userfaultfd", old);
    return t_result("sec-removal-fault");
}
