// SPDX-License-Identifier: GPL-2.0
// sec-ndkblk-silent-target: ndkblk (the initiator of samples/ndkblk)
// against a target that stops answering connection requests, a local user
// (nobody) as any host of the fabric could be.
//
// A target of nobody through /dev/ndk accepts ndkblk's first connection
// and goes away.  Then nobody listens on the target's port with plain
// rdma_cm (librdmacm) and never answers the reconnection's request:
// rdma_cm sends an MRA for a request its listener holds, and ib_cm then
// waits minutes (hours with a longer MRA) before it gives the connect up.
// While ndkblk's reconnect work waits in that connect, ndk.ko's part of
// `rdma link delete rxe0` and later `rmmod ndkblk` must end within
// seconds: the removal waits for ndkblk to close its adapter and rmmod
// for the reconnect work.
// (The holder uses rdma_cm, not /dev/ndk, because ndk.ko's removal tears
// down a /dev/ndk listener, whose held request is then rejected, before
// ndkblk's turn; rdma_cm's own removal comes after ndk.ko's.)  Before the
// fix the connect was blocking (ndk_connect() without a completion) and
// both waited for ib_cm.  Now it is asynchronous, bounded by the
// connect_timeout parameter (60 s here, longer than the test waits) and
// abandoned at once at a removal or a stop.
//   sec-ndkblk-silent-target NDKBLK_KO
#include <rdma/rdma_cma.h>
#include <sys/wait.h>

#include "ndkblk_peer.hpp"

namespace {

using namespace ndkblk_wire;

constexpr const char* kListening = "/tmp/ndk-sec-silent-listening";
constexpr const char* kHolding = "/tmp/ndk-sec-silent-holding";

// The target: accepts ndkblk's first connection, then goes away.
int Target() {
    rel::Dev d;
    std::uint32_t ad = 0, pd = 0, con = AwaitInitiator(d, kListening, &ad, &pd);
    T_CHECK(con != 0);
    std::uint32_t cq = 0, qp = con ? TargetQp(d, ad, pd, &cq) : 0;
    T_CHECK(qp && AcceptInitiator(d, con, qp));
    std::printf("target: accepted the first connection; going away\n");
    return t_failures ? kTestFail : kTestPass;
}

// The holder: listens with rdma_cm and leaves every request unanswered.
int Holder() {
    rdma_event_channel* ch = rdma_create_event_channel();
    rdma_cm_id* id = nullptr;
    sockaddr_in sin = rel::LoopbackAddress(kPort);
    T_CHECK(ch && rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP) == 0);
    T_CHECK(id && rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&sin)) == 0 &&
            rdma_listen(id, 8) == 0);
    if (t_failures) return kTestFail;
    sec::WriteFile(kListening, "listening");
    rdma_cm_event* ev = nullptr;
    while (rdma_get_cm_event(ch, &ev) == 0) {
        if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            std::printf("holder: a connection request, left unanswered\n");
            sec::WriteFile(kHolding, "holding");
        }
        rdma_ack_cm_event(ev);
    }
    pause();  // killed by the test
    return kTestFail;
}

// Forks @fn as nobody and waits until it listens; -1 on error.
pid_t Start(int (*fn)()) {
    unlink(kListening);
    unlink(kHolding);
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = sec::BecomeNobody() ? fn() : kTestFail;
        std::fflush(nullptr);
        _exit(rc);
    }
    return sec::WaitForFile(kListening, 30) ? pid : -1;
}

void Stop(pid_t pid) {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

// Runs @cmd for at most @secs; its time, or -1 when it did not return.
double Timed(const std::string& cmd, double secs) {
    double t0 = rel::Now();
    pid_t hung = 0;
    int rc = sec::RunTimed(cmd, secs, &hung);
    double took = rel::Now() - t0;
    std::printf("%s: rc %d after %.1f s%s\n", cmd.c_str(), rc, took,
                hung ? " (did not return)" : "");
    if (hung) sec::WaitFor(hung, 600);
    return hung || rc ? -1 : took;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: sec-ndkblk-silent-target NDKBLK_KO\n");
        return kTestFail;
    }
    long reports = sec::KernelReports();
    long abandoned = sec::DmesgCount("ndkblk: connect to .* abandoned \\(adapter removed\\)");
    long stopped = sec::DmesgCount("ndkblk: connect to .* abandoned \\(stopping\\)");

    // 1. Connected, then the reconnection held; the adapter removed.
    pid_t target = Start(Target);
    T_CHECK(target > 0);
    const std::string insmod = std::string("insmod ") + argv[1] +
                               " target=10.99.0.1 nr_queues=1 connect_timeout=60"
                               " retry_timeout=2 io_timeout=5";
    T_CHECK(target > 0 && std::system(insmod.c_str()) == 0);
    T_CHECK(sec::WaitFor(target, 30) == kTestPass);
    pid_t holder = Start(Holder);
    T_CHECK(holder > 0 && sec::WaitForFile(kHolding, 60));
    sleep(1);  // the reconnect work waits in the connect
    // ndk.ko's part of the removal must end within seconds.  The rest
    // waits for the holder: librdmacm opened uverbs, whose removal waits
    // for every user context of a device without disassociate (rxe).
    const char* kRemoved = "ndk: adapter [0-9]+ removed";
    long removals = sec::DmesgCount(kRemoved);
    double t0 = rel::Now();
    pid_t del = sec::Spawn("rdma link delete rxe0");
    while (sec::DmesgCount(kRemoved) == removals && rel::Now() - t0 < 30) usleep(100000);
    double took = rel::Now() - t0;
    bool removed = sec::DmesgCount(kRemoved) > removals;
    std::printf("rdma link delete rxe0: ndk.ko's adapter %s after %.1f s\n",
                removed ? "removed" : "NOT removed", took);
    T_CHECK(removed && took < 10);
    Stop(holder);
    T_CHECK(sec::WaitFor(del, 120) == 0);
    T_CHECK(std::system("rdma link add rxe0 type rxe netdev v0") == 0);

    // 2. The reconnection held again (on the new rxe0); rmmod.
    holder = Start(Holder);
    T_CHECK(holder > 0 && sec::WaitForFile(kHolding, 60));
    sleep(1);
    double rm = Timed("rmmod ndkblk", 30);
    T_CHECK(rm >= 0 && rm < 10);
    Stop(holder);
    unlink(kListening);
    unlink(kHolding);

    long now_removed =
        sec::DmesgCount("ndkblk: connect to .* abandoned \\(adapter removed\\)") - abandoned;
    long now_stopped = sec::DmesgCount("ndkblk: connect to .* abandoned \\(stopping\\)") - stopped;
    std::printf("ndkblk: connects abandoned at the removal %ld, at the stop %ld\n", now_removed,
                now_stopped);
    T_CHECK(now_removed == 1 && now_stopped == 1);
    long now = sec::KernelReports();
    std::printf("kernel reports: %ld before, %ld after\n", reports, now);
    T_CHECK(now == reports);
    return t_result("sec-ndkblk-silent-target");
}
