// SPDX-License-Identifier: GPL-2.0
// A peer's RDMA write with immediate data against an NDK receive
// (Documentation/security.md, item 6), as user nobody:
//
//   sec-recv-imm <verbs-peer>
//
// An NDK QP accepts a connection from verbs-peer (plain librdmacm and
// libibverbs), handing it an MR of 8 KiB with remote write in the accept's
// private data, and posts one receive of 16 bytes.  The peer writes 4096
// bytes through the token with immediate data.  NDK has no immediate data,
// and the verbs completion's byte count is the write's, not the receive's:
// the receive must complete with an error and 0 bytes, never "4096 bytes
// received" into a 16-byte buffer (which a consumer would read past).
// The write itself is the token's right and lands.
#include <arpa/inet.h>
#include <sys/wait.h>

#include <string>

#include "sec_common.hpp"

namespace {

using rel::Dev;

constexpr unsigned kPage = 4096;
constexpr std::uint32_t kRecvLen = 16;
constexpr std::uint32_t kWriteLen = 4096;

pid_t StartPeer(const char* peer, const sockaddr_in& to) {
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &to.sin_addr, host, sizeof(host));
    std::string where = std::string(host) + ":" + std::to_string(ntohs(to.sin_port));
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        execl(peer, peer, "--timeout", "20000", where.c_str(), "writeimm", "0",
              std::to_string(kWriteLen).c_str(), "0x5a", static_cast<char*>(nullptr));
        std::perror("sec-recv-imm: exec verbs-peer");
        _exit(127);
    }
    return pid;
}

int Child(const char* peer) {
    Dev d;
    auto [ad, pd, lis, to] = sec::OpenListening(d);
    ndk_u_cq_create cc{};
    cc.adapter_handle = ad;
    cc.depth = 16;
    std::uint32_t cq = lis ? d.Create(NDK_IOCTL_CQ_CREATE, &cc) : 0;
    std::uint32_t qp = cq ? rel::CreateQp(d.fd(), pd, cq, 0x1) : 0;
    rel::Mapping target(2 * kPage), rbuf(kPage);
    ndk_u_mr_register tm{}, rm{};
    std::uint32_t tmr =
        qp ? rel::RegisterMr(d, pd, target.addr(), 2 * kPage, NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE, &tm)
           : 0;
    std::uint32_t rmr =
        tmr ? rel::RegisterMr(d, pd, rbuf.addr(), kPage, NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &rm) : 0;
    if (!rmr) {
        std::fprintf(stderr, "sec-recv-imm: setup: %s\n", std::strerror(errno));
        return 1;
    }
    std::memset(rbuf.get(), 0xee, kPage);
    pid_t pid = StartPeer(peer, to);
    ndk_u_event ev{};
    if (pid < 0 || !d.WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev, 20000) || !ev.object) {
        std::fprintf(stderr, "sec-recv-imm: no connection request from verbs-peer\n");
        if (pid > 0) kill(pid, SIGKILL), waitpid(pid, nullptr, 0);
        return 1;
    }
    std::uint32_t acc = ev.object;
    // The peer's descriptor: u64 address, u32 token, u32 length (LE).
    std::uint8_t desc[16];
    std::uint64_t a = target.addr();
    std::uint32_t tok = tm.remote_token, len = 2 * kPage;
    std::memcpy(desc, &a, 8);
    std::memcpy(desc + 8, &tok, 4);
    std::memcpy(desc + 12, &len, 4);
    ndk_u_sge sge{rbuf.addr(), kRecvLen, rm.local_token};
    ndk_u_qp_post rp{};
    rp.qp_handle = qp;
    rp.op = NDK_U_OP_RECEIVE;
    rp.nsge = 1;
    rp.sgl = reinterpret_cast<std::uintptr_t>(&sge);
    rp.request_context = 0x4ec;
    ndk_u_accept ac{};
    ac.connector_handle = acc;
    ac.qp_handle = qp;
    ac.inbound_read_limit = ac.outbound_read_limit = 1;
    ac.private_data_length = sizeof(desc);
    ac.private_data = reinterpret_cast<std::uintptr_t>(desc);
    int bad = 0;
    ndk_u_result res{};
    bool got = d.Ioctl(NDK_IOCTL_QP_POST, &rp) == 0 && d.Ioctl(NDK_IOCTL_ACCEPT, &ac) == 0 &&
               d.WaitResult(cq, &res, 20000);
    int st = -1;
    waitpid(pid, &st, 0);
    if (!got) {
        std::fprintf(stderr, "sec-recv-imm: receive, accept or its result: %s\n",
                     std::strerror(errno));
        return 1;
    }
    const auto* t = static_cast<const unsigned char*>(target.get());
    const auto* r = static_cast<const unsigned char*>(rbuf.get());
    std::printf(
        "sec-recv-imm: receive of %u bytes: status %#x, %u bytes, type %u; "
        "target[0] %#x, receive buffer[0] %#x; verbs-peer exit %d\n",
        kRecvLen, static_cast<unsigned>(res.status), res.bytes_transferred, res.type, t[0], r[0],
        WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    if (res.request_context != 0x4ec || res.status == 0 || res.bytes_transferred != 0) {
        std::fprintf(stderr, "sec-recv-imm: want a failed receive of 0 bytes\n");
        bad++;
    }
    if (t[0] != 0x5a || t[kWriteLen - 1] != 0x5a || r[0] != 0xee) {
        std::fprintf(stderr, "sec-recv-imm: the write did not land where its token says\n");
        bad++;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        std::fprintf(stderr, "sec-recv-imm: verbs-peer's write failed\n");
        bad++;
    }
    d.Close();
    return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <verbs-peer>\n", argv[0]);
        return kTestFail;
    }
    if (geteuid() != 0 || rel::ReadCounters().objects < 0) {
        std::fprintf(stderr, "needs root and ndk.ko's debugfs counters\n");
        return kTestFail;
    }
    if (sec::RunAsNobody([&] { return Child(argv[1]); }, "sec-recv-imm", 100)) t_failures++;
    return t_result("sec-recv-imm");
}
