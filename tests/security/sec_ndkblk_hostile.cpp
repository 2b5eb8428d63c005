// SPDX-License-Identifier: GPL-2.0
// sec-ndkblk-hostile: ndkblk_target (samples/ndkblk) against a hostile
// initiator, a local user (nobody) connecting through /dev/ndk as any peer
// on the fabric could.
//
//  1. Tags reused while their answers wait: the peer posts no receive, so
//     the target's answers stay outstanding (RNR, retried for good) and
//     its send queue fills; the steps of later requests wait in the
//     queue's pending list, and the peer sends 200 inline writes with tags
//     0..31 over and over, the last tag once more.  Before the fix a tag
//     still waiting in the list was added to it again: list corruption
//     (Debian's kernel checks lists: a BUG() in softirq, then soft
//     lockups; elsewhere nbt_kick() loops for good under the queue's
//     spinlock).  Now such a request is dropped as malformed, and the
//     target serves the next initiator.
//  2. A second peer connects and stays: `rmmod ndkblk_target` returns
//     within 20 s.  (The target no longer waits for the peer's answer to
//     its disconnect, which a peer can hold back until the CM's timeout,
//     chosen by its connection request; this peer is ndk.ko's, whose CM
//     answers at once, so the test cannot show that wait.)
//   sec-ndkblk-hostile NDKBLK_TARGET_KO
#include <sys/wait.h>

#include "ndkblk_wire.hpp"
#include "sec_common.hpp"

namespace {

using namespace ndkblk_wire;

constexpr std::uint32_t kFlood = 200;  // inline writes of phase 1
constexpr std::uint32_t kMsg = 1024;   // buffer stride per request
constexpr std::uint32_t kLen = 512;    // bytes of each inline write
constexpr const char* kMalformed = "ndkblk_target: malformed request";

// A connection to the target on 10.99.0.1:NDKBLK_PORT; 0 handles when it
// could not be made.
struct Peer {
    rel::Dev d;
    std::uint32_t ad = 0, pd = 0, cq = 0, qp = 0, con = 0, mr = 0;
    std::uint32_t token = 0;
    rel::Mapping buf{(kFlood + 1) * kMsg};
};

bool Connect(Peer* p) {
    p->ad = p->d.OpenAdapter();
    p->pd = p->ad ? t_pd_create(p->d.fd(), p->ad) : 0;
    ndk_u_cq_create cc{};
    cc.adapter_handle = p->ad;
    cc.depth = 2 * kFlood;
    p->cq = p->pd ? p->d.Create(NDK_IOCTL_CQ_CREATE, &cc) : 0;
    ndk_u_qp_create qc{};
    qc.pd_handle = p->pd;
    qc.receive_cq_handle = qc.initiator_cq_handle = p->cq;
    qc.receive_queue_depth = 1;  // never posted: the target's answers wait
    qc.initiator_queue_depth = 2 * kFlood;
    qc.max_receive_request_sge = qc.max_initiator_request_sge = 1;
    p->qp = p->cq && ioctl(p->d.fd(), NDK_IOCTL_QP_CREATE, &qc) == 0 ? qc.handle : 0;
    ndk_u_mr_register reg{};
    p->mr = p->qp ? rel::RegisterMr(p->d, p->pd, p->buf.addr(), p->buf.size(),
                                    NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &reg)
                  : 0;
    p->token = reg.local_token;
    ndk_u_connector_create ccr{};
    ccr.adapter_handle = p->ad;
    p->con = p->mr ? p->d.Create(NDK_IOCTL_CONNECTOR_CREATE, &ccr) : 0;
    if (!p->con) return false;
    ndk_u_connect cn{};
    cn.connector_handle = p->con;
    cn.qp_handle = p->qp;
    cn.inbound_read_limit = cn.outbound_read_limit = 1;
    sockaddr_in to = rel::LoopbackAddress(kPort);
    std::memcpy(cn.dest_address, &to, sizeof(to));
    ndk_u_event ev{};
    if (p->d.Ioctl(NDK_IOCTL_CONNECT, &cn) != 0 ||
        !p->d.WaitEvent(NDK_U_EVENT_REQUEST, p->con, &ev) || ev.status != 0) {
        std::printf("connect to the target: %s, status %#x\n", strerrorname_np(errno),
                    static_cast<unsigned>(ev.status));
        return false;
    }
    ndk_u_connector_request cr{};
    cr.connector_handle = p->con;
    return p->d.Ioctl(NDK_IOCTL_COMPLETE_CONNECT, &cr) == 0 &&
           p->d.WaitEvent(NDK_U_EVENT_REQUEST, p->con, &ev) && ev.status == 0;
}

// Send request @i: an inline write of kLen bytes to sector 0, tag @tag.
bool SendInlineWrite(Peer& p, std::uint32_t i, std::uint16_t tag) {
    auto* m = p.buf.get() + std::size_t{i} * kMsg;
    Req req{};
    req.magic = kMagic;
    req.opcode = kOpWriteInline;
    req.tag = tag;
    req.length = kLen;
    std::memcpy(m, &req, sizeof(req));
    std::memset(m + sizeof(req), 0x5a, kLen);
    ndk_u_sge sge{reinterpret_cast<std::uintptr_t>(m), sizeof(req) + kLen, p.token};
    ndk_u_qp_post post{};
    post.qp_handle = p.qp;
    post.op = NDK_U_OP_SEND;
    post.flags = NDK_U_OP_FLAG_SILENT_SUCCESS;
    post.nsge = 1;
    post.sgl = reinterpret_cast<std::uintptr_t>(&sge);
    post.request_context = i;
    return p.d.Ioctl(NDK_IOCTL_QP_POST, &post) == 0;
}

int Flood() {
    Peer p;
    T_CHECK(Connect(&p));
    if (t_failures) return kTestFail;
    // Tags 0..31 over and over, the last tag twice in a row at the end:
    // a list the kernel checks catches that one for certain.
    std::uint32_t sent = 0;
    for (std::uint32_t i = 0; i <= kFlood; i++)
        sent += SendInlineWrite(p, i, static_cast<std::uint16_t>(std::min(i, kFlood - 1) % kDepth));
    std::printf("flood: %u of %u inline writes posted\n", sent, kFlood + 1);
    T_CHECK(sent == kFlood + 1);
    sleep(2);  // the target takes them (the peer's sends complete silently)
    ndk_u_result r{};
    std::uint32_t failed = 0;
    while (p.d.WaitResult(p.cq, &r, 100)) failed++;
    std::printf("flood: %u send results (failures)\n", failed);
    return t_failures ? kTestFail : kTestPass;
}

// Connect and hold the connection, never answering a disconnect, until
// killed; "connected" in @path once up.
int Idle(const std::string& path) {
    Peer p;
    if (!Connect(&p)) return kTestFail;
    sec::WriteFile(path, "connected");
    for (;;) pause();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: sec-ndkblk-hostile NDKBLK_TARGET_KO\n");
        return kTestFail;
    }
    const std::string insmod = std::string("insmod ") + argv[1] + " addr=10.99.0.1 size_mb=8";
    long reports = sec::KernelReports();
    long malformed = sec::DmesgCount(kMalformed);
    T_CHECK(std::system(insmod.c_str()) == 0);
    if (t_failures) return t_result("sec-ndkblk-hostile");

    // 1. Tags reused while their answers wait.
    T_CHECK(sec::AsNobody("flood", Flood) == kTestPass);
    long dropped = sec::DmesgCount(kMalformed) - malformed;
    std::printf("target: %ld 'malformed request' lines (ratelimited)\n", dropped);
    T_CHECK(dropped > 0);

    // 2. A silent peer holds a connection: the target still serves (1 left
    // it working) and unloads without waiting for the peer.
    const std::string mark = "/tmp/ndk-sec-ndkblk-idle";
    unlink(mark.c_str());
    std::fflush(nullptr);
    pid_t idle = fork();
    if (idle == 0) _exit(sec::BecomeNobody() ? Idle(mark) : kTestFail);
    bool up = sec::WaitForFile(mark, 30);
    std::printf("a second peer %s\n", up ? "connected" : "could not connect");
    T_CHECK(up);
    double start = rel::Now();
    pid_t hung = 0;
    int rc = sec::RunTimed("rmmod ndkblk_target", 20, &hung);
    std::printf("rmmod ndkblk_target with a peer connected: rc %d in %.1f s\n", rc,
                rel::Now() - start);
    T_CHECK(rc == 0);
    kill(idle, SIGKILL);
    waitpid(idle, nullptr, 0);
    if (hung) sec::WaitFor(hung, 120);  // the old module's rmmod, to clean up
    std::system("rmmod ndkblk_target 2> /dev/null");
    unlink(mark.c_str());
    long now = sec::KernelReports();
    std::printf("kernel reports: %ld before, %ld after\n", reports, now);
    T_CHECK(now == reports);
    return t_result("sec-ndkblk-hostile");
}
