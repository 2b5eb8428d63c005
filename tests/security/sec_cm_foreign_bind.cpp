// SPDX-License-Identifier: GPL-2.0
// sec-cm-foreign-bind (issue 15 item 7): a connector or listener whose
// address resolution or bind picked another RDMA device must not keep
// that device from going away.
//
// A second device, rxe1 on a new veth (10.99.1.1).  As nobody, on rxe0's
// adapter: round 1, LISTEN on 10.99.1.1 (rxe1's address: EADDRNOTAVAIL);
// round 2, CONNECT to 10.99.1.1 (the route leaves through rxe1: the
// connect fails with STATUS_NETWORK_UNREACHABLE); round 3, CONNECT from
// source address 10.99.1.1 to 10.99.1.2, which nobody answers (the source
// binds the id to rxe1 at once, and address resolution fails: the connect
// must fail, where before 2026-11-29 the failure was dropped as an event of
// another device's id and the request never completed).  With that file
// still open, `rdma link delete rxe1` must return within 30 s (before the
// fixes it waited for the file's close).  Round 4 closes each of 300
// connectors right after its CONNECT through rxe1, a few microseconds
// later each time: the event that finds the id on rxe1 may come while the
// connector's close has dropped its last reference, before the teardown
// destroys the id; it must not take a new reference then (before
// 2026-12-02 it did: "refcount_t: addition on 0", and a work item that
// ran on the freed connector).  No kernel report may follow.
#include "sec_common.hpp"

namespace {

enum class Round { kListen, kConnect, kConnectFrom, kCloseRace };

// As nobody: the failed listen or connect, then report on @out and hold
// the file open until @in says so.
int Attempt(Round round, int out, int in) {
    rel::Dev d;
    long id = sec::AdapterId(d.fd(), "rxe0");
    std::uint32_t adapter = id >= 0 ? t_adapter_open(d.fd(), static_cast<std::uint32_t>(id)) : 0;
    std::uint32_t pd = adapter ? t_pd_create(d.fd(), adapter) : 0;
    T_CHECK(pd != 0);
    sockaddr_in foreign = rel::LoopbackAddress(4791);
    inet_pton(AF_INET, "10.99.1.1", &foreign.sin_addr);
    if (round == Round::kListen) {
        ndk_u_listener_create lc{};
        lc.adapter_handle = adapter;
        std::uint32_t lis = d.Create(NDK_IOCTL_LISTENER_CREATE, &lc);
        ndk_u_listen ln{};
        ln.listener_handle = lis;
        foreign.sin_port = 0;
        std::memcpy(ln.address, &foreign, sizeof(foreign));
        T_CHECK(lis != 0);
        T_EXPECT_ERRNO(d.Ioctl(NDK_IOCTL_LISTEN, &ln), EADDRNOTAVAIL);
    } else if (round == Round::kCloseRace) {
        for (int i = 0; i < 300 && !t_failures; i++) {
            auto [cq, qp, con] = sec::MakeEndpoint(d, adapter, pd);
            ndk_u_connect cn{};
            cn.connector_handle = con;
            cn.qp_handle = qp;
            cn.inbound_read_limit = cn.outbound_read_limit = 1;
            std::memcpy(cn.dest_address, &foreign, sizeof(foreign));
            T_CHECK(con && d.Ioctl(NDK_IOCTL_CONNECT, &cn) == 0);
            if (i % 30) usleep(i % 30 * 10);
            for (std::uint32_t h : {con, qp, cq}) {
                T_CHECK(t_handle_close(d.fd(), h) == 0);
                d.DropEvents(h);
            }
        }
        std::printf("300 connectors closed right after their CONNECT through rxe1\n");
    } else {
        auto [cq, qp, con] = sec::MakeEndpoint(d, adapter, pd);
        ndk_u_connect cn{};
        cn.connector_handle = con;
        cn.qp_handle = qp;
        cn.inbound_read_limit = cn.outbound_read_limit = 1;
        if (round == Round::kConnectFrom) {
            sockaddr_in src = foreign;
            src.sin_port = 0;
            std::memcpy(cn.src_address, &src, sizeof(src));
            inet_pton(AF_INET, "10.99.1.2", &foreign.sin_addr);
        }
        std::memcpy(cn.dest_address, &foreign, sizeof(foreign));
        T_CHECK(con && d.Ioctl(NDK_IOCTL_CONNECT, &cn) == 0);
        ndk_u_event ev{};
        T_CHECK(d.WaitEvent(NDK_U_EVENT_REQUEST, con, &ev, 30000));
        std::printf("CONNECT %s on rxe0's adapter: status %#x\n",
                    round == Round::kConnect ? "through rxe1" : "from rxe1's address",
                    static_cast<unsigned>(ev.status));
        if (round == Round::kConnect)
            T_CHECK(ev.status == static_cast<std::int32_t>(0xC000023C));  // NETWORK_UNREACHABLE
        else
            T_CHECK(ev.status < 0);  // an error, whichever resolution gave
    }
    char c = t_failures ? 'f' : 'p';
    T_CHECK(write(out, &c, 1) == 1);
    T_CHECK(read(in, &c, 1) == 1);  // the file stays open until here
    return t_failures ? kTestFail : kTestPass;
}

bool RunRound(Round round, const char* what) {
    int up[2], down[2];
    if (pipe(up) != 0 || pipe(down) != 0) return false;
    T_CHECK(sec::RunTimed("ip link add v2 type veth peer name v3 && "
                          "ip addr add 10.99.1.1/24 dev v2 && ip link set v2 up && "
                          "ip link set v3 up && rdma link add rxe1 type rxe netdev v2",
                          60) == 0);
    std::fflush(nullptr);
    pid_t kid = fork();
    if (kid == 0) {
        close(up[0]);
        close(down[1]);
        t_failures = 0;  // the child's own verdict
        int rc = sec::BecomeNobody() ? Attempt(round, up[1], down[0]) : kTestFail;
        std::fflush(nullptr);  // _exit() flushes nothing
        _exit(rc);
    }
    close(up[1]);
    close(down[0]);
    char c = 0;
    T_CHECK(read(up[0], &c, 1) == 1 && c == 'p');
    pid_t hung = 0;
    double t0 = rel::Now();
    int rc = sec::RunTimed("rdma link delete rxe1", 30, &hung);
    std::printf("%s: rdma link delete rxe1 with the file open: %s after %.1f s\n", what,
                rc == 0 ? "returned" : "did not return", rel::Now() - t0);
    T_CHECK(rc == 0);
    c = 'x';
    T_CHECK(write(down[1], &c, 1) == 1);
    T_CHECK(sec::WaitFor(kid, 60) == kTestPass);
    if (hung) T_CHECK(sec::WaitFor(hung, 60) == 0);  // the close let it go
    close(up[0]);
    close(down[1]);
    T_CHECK(sec::RunTimed("ip link del v2", 30) == 0);
    return true;
}

}  // namespace

int main() {
    RunRound(Round::kListen, "listen on rxe1's address");
    RunRound(Round::kConnect, "connect through rxe1");
    RunRound(Round::kConnectFrom, "connect from rxe1's address");
    long reports = sec::KernelReports();
    RunRound(Round::kCloseRace, "connectors closed as they connect through rxe1");
    long after = sec::KernelReports();
    std::printf("kernel reports during round 4: %ld\n", after - reports);
    T_CHECK(reports >= 0 && after == reports);
    return t_result("sec-cm-foreign-bind");
}
