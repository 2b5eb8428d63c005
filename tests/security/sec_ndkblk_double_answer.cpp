// SPDX-License-Identifier: GPL-2.0
// sec-ndkblk-double-answer: ndkblk (the initiator of samples/ndkblk)
// against a hostile target, a local user (nobody) listening on the
// target's port through /dev/ndk as any host of the fabric could.
//
// The target answers the first request twice, with one doorbell, each
// time without invalidation: the initiator then invalidates the I/O's
// registration itself.  It polls its CQ from ndk.ko's work item
// (direct_notify=0), so it finds both answers in one poll, its invalidate
// still outstanding, and the second answer must kill the connection as
// one ("second answer").  Before the fix it was taken as the I/O's
// answer: a plain one made the initiator invalidate again, refused while
// the first invalidate was outstanding ("local invalidate" killed the
// connection), and one with invalidation (send-and-invalidate of the
// token) finished the I/O at once, so the first invalidate's completion
// would later finish whatever I/O the slot held next (in fast-register
// mode before that I/O's registration was dead).  That second kind is not
// sent here: the device applies its invalidation as it arrives, before
// the initiator reads the first answer, which then fails its own
// invalidate, so the window is a race this test cannot hold open.
//   sec-ndkblk-double-answer NDKBLK_KO
#include <sys/wait.h>

#include <algorithm>

#include "ndkblk_peer.hpp"

namespace {

using namespace ndkblk_wire;

constexpr std::uint32_t kSlot = 4096 + 64;  // a receive buffer
constexpr const char* kMark = "/tmp/ndk-sec-ndkblk-listening";

bool Post(rel::Dev& d, std::uint32_t qp, std::uint32_t op, std::uint64_t ctx, const ndk_u_sge& sge,
          std::uint32_t remote_token = 0, std::uint32_t flags = 0) {
    ndk_u_qp_post p{};
    p.qp_handle = qp;
    p.op = op;
    p.flags = flags;
    p.nsge = 1;
    p.sgl = reinterpret_cast<std::uintptr_t>(&sge);
    p.request_context = ctx;
    p.remote_token = remote_token;
    return d.Ioctl(NDK_IOCTL_QP_POST, &p) == 0;
}

// The hostile target: one connection, its first request answered twice.
int Target() {
    rel::Dev d;
    std::uint32_t ad = 0, pd = 0, con = AwaitInitiator(d, kMark, &ad, &pd);
    T_CHECK(con != 0);
    std::uint32_t cq = 0, qp = con ? TargetQp(d, ad, pd, &cq) : 0;
    rel::Mapping buf((kDepth + 2) * kSlot);
    ndk_u_mr_register reg{};
    std::uint32_t mr =
        qp ? rel::RegisterMr(d, pd, buf.addr(), buf.size(), NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &reg)
           : 0;
    T_CHECK(mr != 0);
    if (t_failures) return kTestFail;
    for (std::uint32_t i = 0; i < kDepth; i++)
        T_CHECK(Post(d, qp, NDK_U_OP_RECEIVE, i,
                     ndk_u_sge{buf.addr() + std::uint64_t{i} * kSlot, kSlot, reg.local_token}));
    T_CHECK(AcceptInitiator(d, con, qp));
    if (t_failures) return kTestFail;

    // The first request (the block layer's first read, or any other).
    ndk_u_result r{};
    bool got = false;
    while (!got && d.WaitResult(cq, &r, 60000))
        got = r.status == 0 && r.request_context < kDepth && r.bytes_transferred >= sizeof(Req);
    T_CHECK(got);
    if (!got) return kTestFail;
    Req req;
    std::memcpy(&req, buf.get() + r.request_context * kSlot, sizeof(req));
    std::printf("target: request tag %u opcode %u token %#x, answered twice\n", req.tag, req.opcode,
                req.token);
    auto* rsp = buf.get() + kDepth * kSlot;
    Rsp a{kMagic, req.tag, 0};
    std::memcpy(rsp, &a, sizeof(a));
    ndk_u_sge sge{buf.addr() + kDepth * kSlot, sizeof(a), reg.local_token};
    // One doorbell for both: they reach the initiator's CQ together.
    T_CHECK(Post(d, qp, NDK_U_OP_SEND, 100, sge, 0, NDK_U_OP_FLAG_DEFER));
    T_CHECK(Post(d, qp, NDK_U_OP_SEND, 101, sge));
    sleep(5);  // the initiator reacts; then everything closes with the file
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: sec-ndkblk-double-answer NDKBLK_KO\n");
        return kTestFail;
    }
    const char* kKilled = "ndkblk: connection lost \\(second answer\\)";  // an ERE
    long reports = sec::KernelReports();
    long killed = sec::DmesgCount(kKilled);
    unlink(kMark);
    std::fflush(nullptr);
    pid_t target = fork();
    if (target == 0) {
        int rc = sec::BecomeNobody() ? Target() : kTestFail;
        std::fflush(nullptr);
        _exit(rc);
    }
    bool up = sec::WaitForFile(kMark, 30);
    T_CHECK(up);
    const std::string insmod = std::string("insmod ") + argv[1] +
                               " target=10.99.0.1 nr_queues=1 io_timeout=5 retry_timeout=2"
                               " direct_notify=0";
    T_CHECK(up && std::system(insmod.c_str()) == 0);
    // A read for the target to answer (the disk's add reads nothing).
    pid_t reader = sec::Spawn(
        "for i in $(seq 100); do [[ -b /dev/ndkblk0 ]] && break; sleep 0.1; "
        "done; timeout 60 dd if=/dev/ndkblk0 of=/dev/null bs=4096 count=1 "
        "iflag=direct");
    int rc = sec::WaitFor(target, 120);
    std::printf("hostile target: exit %d\n", rc);
    T_CHECK(rc == kTestPass);
    if (rc == -1) {
        kill(target, SIGKILL);
        waitpid(target, nullptr, 0);
    }
    std::printf("reader: exit %d (the read fails or is answered after the kill)\n",
                sec::WaitFor(reader, 90));
    long lost = sec::DmesgCount(kKilled) - killed;
    std::printf("initiator: %ld 'connection lost (second answer)' line(s)\n", lost);
    T_CHECK(lost > 0);
    pid_t hung = 0;
    T_CHECK(sec::RunTimed("rmmod ndkblk", 60, &hung) == 0);
    if (hung) sec::WaitFor(hung, 120);
    unlink(kMark);
    long now = sec::KernelReports();
    std::printf("kernel reports: %ld before, %ld after\n", reports, now);
    T_CHECK(now == reports);
    return t_result("sec-ndkblk-double-answer");
}
