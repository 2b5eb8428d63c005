// SPDX-License-Identifier: GPL-2.0
// sec-memcg-listen: what a peer's connection requests make ndk.ko allocate
// for a listener is charged to the memory cgroup of the process that
// called LISTEN (Documentation/security.md, invariant 5).  The requests
// arrive in rdma_cm's worker, which belongs to no cgroup: the connector
// (about 1 KiB, a 2 KiB slab object, and its closer) and the user
// path's CONNECT_REQUEST event are allocated inside set_active_memcg() of
// the listener's cgroup (ndk_listener_charge()).  Before the fix they were
// charged to no one: up to 128 pending requests a listener, any number of
// listeners, outside the listening user's memory.max.
//
// - The listener: as nobody, in a cgroup v2 memory cgroup (memory.max
//   256M), one file with 8 listeners on distinct ports of 10.99.0.1;
//   memory.current is read (through a descriptor opened as root, into a
//   stack buffer) before any request;
// - the peer: as nobody, in the root cgroup, another file makes 100
//   connection requests to each listener (below the backlog of 128), each
//   its own QP and connector; nobody answers them;
// - once memory.current has settled, and before any event is taken (a
//   taken CONNECT_REQUEST becomes a handle of the listener's file, charged
//   in process context even before the fix), the listener's cgroup grew by
//   at least half of 2 KiB per request; then the listener takes its events
//   and counts the requests (at least 3/4 of those sent).  Before the fix
//   the growth is about 0.  The per-CPU charge stocks (up to 256 KiB per
//   CPU, precharged) may hide part of the growth: 800 requests charge
//   about 1.7 MiB, above the 800 KiB wanted plus the guest's two CPUs'
//   stocks;
// - everything goes with the files: ndk.ko's user_objects counter comes
//   back to where it was, and the cgroup is removed.
// A second run bounds the listener's cgroup: once it listens, memory.max
// is memory.current + 256 KiB (through a descriptor of memory.max opened
// as root), room for about a hundred of the 800 requests.  The requests
// beyond it must be rejected, not end in the cgroup's OOM killer (the
// peer would choose when the listener's processes die): the listener
// lives, memory.events counts no oom_kill, memory.current stays at most
// memory.max, and fewer requests than sent reach the listener.  Before
// 2026-12-02 the allocations were plain GFP_KERNEL_ACCOUNT, and the OOM
// killer took the listener.
#include <fcntl.h>

#include <initializer_list>

#include "sec_common.hpp"

namespace {

constexpr long kMax = 256L << 20;  // the listener's memory.max: generous
constexpr int kListeners = 8;
constexpr int kRequests = 100;          // a listener; below the backlog (128)
constexpr long kPerRequest = 2L << 10;  // the connector's slab object
constexpr double kSettleSecs = 3;       // memory.current unchanged this long
constexpr double kSettleMaxSecs = 60;

constexpr long kBoundedRoom = 256L << 10;  // the second run's room

std::string g_cg;
int g_current_fd = -1;   // the cgroup's memory.current, opened as root
int g_max_fd = -1;       // its memory.max, opened as root for writing
bool g_bounded = false;  // the second run

// The value of @key in the cgroup's "key value" file @file, or -1.
long CgroupField(const char* file, const char* key) {
    std::ifstream in(g_cg + "/" + file);
    std::string k;
    long v;
    while (in >> k >> v)
        if (k == key) return v;
    return -1;
}

// The cgroup's OOM kills (memory.events).
long OomKills() { return CgroupField("memory.events", "oom_kill"); }

// memory.current through the descriptor opened before the drop.
long Current() { return sec::PreadLong(g_current_fd); }

// slab_unreclaimable of the cgroup's memory.stat (exact once the stats
// were flushed, every 2 s at most), or -1; printed, not checked.
long SlabUnreclaimable() { return CgroupField("memory.stat", "slab_unreclaimable"); }

bool WriteAll(int fd, const void* buf, std::size_t len) {
    const char* p = static_cast<const char*>(buf);
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

// False at end of file (the other side died) or on an error.
bool ReadAll(int fd, void* buf, std::size_t len) {
    char* p = static_cast<char*>(buf);
    while (len) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}

// The pipes between the two sides: the listeners' addresses (listener to
// peer), "sent" (peer to listener) and "measured" (listener to peer: the
// peer keeps its connects until then).
struct Pipes {
    int addrs[2] = {-1, -1}, sent[2] = {-1, -1}, measured[2] = {-1, -1};
    void CloseAll() {
        for (int* p : {addrs, sent, measured})
            for (int i = 0; i < 2; i++)
                if (p[i] >= 0) {
                    close(p[i]);
                    p[i] = -1;
                }
    }
};
Pipes g_pipes;

// Keeps only the ends @keep (one per pipe, -1 for none) of g_pipes open.
void KeepEnds(std::initializer_list<int> keep) {
    for (int* p : {g_pipes.addrs, g_pipes.sent, g_pipes.measured})
        for (int i = 0; i < 2; i++)
            if (p[i] >= 0 && std::find(keep.begin(), keep.end(), p[i]) == keep.end()) close(p[i]);
}

// The listening side, as nobody in the cgroup.
int Listener() {
    KeepEnds({g_pipes.addrs[1], g_pipes.sent[0], g_pipes.measured[1]});
    rel::Dev d;
    std::uint32_t adapter = d.fd() >= 0 ? d.OpenAdapter() : 0;
    T_CHECK(adapter != 0);
    if (!adapter) return kTestFail;
    std::uint32_t lis[kListeners] = {};
    sockaddr_in to[kListeners] = {};
    for (int i = 0; i < kListeners; i++) {
        lis[i] = rel::Listen(d, adapter, &to[i]);
        T_CHECK(lis[i] != 0);
        if (!lis[i]) return kTestFail;
    }
    long slab0 = SlabUnreclaimable();
    long cur0 = Current();
    T_CHECK(cur0 > 0);
    long ooms0 = OomKills(), max = cur0 + kBoundedRoom;
    if (g_bounded && !sec::PwriteLong(g_max_fd, max)) return kTestFail;
    if (!WriteAll(g_pipes.addrs[1], to, sizeof(to))) return kTestFail;
    close(g_pipes.addrs[1]);

    char c;
    if (!ReadAll(g_pipes.sent[0], &c, 1)) {
        std::fprintf(stderr, "the peer died before its connects were sent\n");
        return kTestFail;
    }
    // The requests reach the listeners in rdma_cm's worker, a little
    // after the peer's CONNECTs: wait until memory.current stops growing.
    double start = rel::Now(), changed = start;
    long last = Current();
    while (rel::Now() - start < kSettleMaxSecs) {
        usleep(250000);
        long now = Current();
        if (now - last > (8L << 10) || last - now > (8L << 10)) {
            last = now;
            changed = rel::Now();
        }
        if (rel::Now() - changed >= kSettleSecs) break;
    }
    long cur1 = Current();
    // At the limit this process allocates nothing charged (a new open, a
    // read's seq_file buffer, a pipe page of its output): it could set off
    // the OOM killer itself.  Room again first.
    if (g_bounded && !sec::PwriteLong(g_max_fd, kMax)) return kTestFail;
    long slab1 = SlabUnreclaimable();
    if (g_bounded) {
        long ooms = OomKills() - ooms0;
        std::printf(
            "bounded: memory.current %ld kB of memory.max %ld kB after the requests, "
            "OOM kills %ld\n",
            cur1 / 1024, max / 1024, ooms);
        T_CHECK(ooms0 >= 0 && ooms == 0);
        T_CHECK(cur1 <= max);
    }

    // Only now take the events: each becomes a handle of this file.
    long requests[kListeners] = {}, other = 0, total = 0;
    ndk_u_event ev[NDK_U_EVENT_GET_MAX];
    for (;;) {
        ndk_u_event_get g{};
        g.count = NDK_U_EVENT_GET_MAX;
        g.events = reinterpret_cast<std::uintptr_t>(ev);
        if (d.Ioctl(NDK_IOCTL_EVENT_GET, &g) != 0) {
            std::perror("EVENT_GET");
            ++t_failures;
            break;
        }
        if (!g.count) break;
        for (std::uint32_t k = 0; k < g.count; k++) {
            int i = 0;
            while (i < kListeners && ev[k].handle != lis[i]) i++;
            if (ev[k].type == NDK_U_EVENT_CONNECT_REQUEST && i < kListeners && ev[k].object) {
                requests[i]++;
                total++;
            } else {
                other++;
            }
        }
    }
    const long grew = cur1 - cur0, want = total * kPerRequest / 2;
    std::printf("requests taken per listener:");
    for (long n : requests) std::printf(" %ld", n);
    std::printf(" (%ld of %d sent, %ld other events; last change %.1f s after the sending)\n",
                total, kListeners * kRequests, other, changed - start);
    std::printf(
        "listener's cgroup: memory.current %ld -> %ld kB (%+ld kB, %ld B a request; "
        "at least %ld kB wanted), slab_unreclaimable %+ld kB\n",
        cur0 / 1024, cur1 / 1024, grew / 1024, total ? grew / total : 0, want / 1024,
        (slab1 - slab0) / 1024);
    if (g_bounded) {
        T_CHECK(total > 0 && total < kListeners * kRequests);
    } else {
        T_CHECK(total >= kListeners * kRequests * 3 / 4);
        T_CHECK(grew >= want);
    }

    // The requests go with the file (closing them rejects the peer).
    d.Close();
    WriteAll(g_pipes.measured[1], "m", 1);
    return t_failures ? kTestFail : kTestPass;
}

// The peer, as nobody in the root cgroup: kRequests connects to each
// listener, each its own QP (depth 1) and connector, all left pending.
int Peer() {
    KeepEnds({g_pipes.addrs[0], g_pipes.sent[1], g_pipes.measured[0]});
    sockaddr_in to[kListeners];
    if (!ReadAll(g_pipes.addrs[0], to, sizeof(to))) {
        std::fprintf(stderr, "the listener died before it listened\n");
        return kTestFail;
    }
    rel::Dev d;
    std::uint32_t adapter = d.fd() >= 0 ? d.OpenAdapter() : 0;
    std::uint32_t pd = adapter ? t_pd_create(d.fd(), adapter) : 0;
    T_CHECK(pd != 0);
    if (!pd) return kTestFail;
    std::uint32_t cq = 0;
    long sent = 0;
    double t0 = rel::Now();
    for (int r = 0; r < kRequests && !t_failures; r++) {
        for (int i = 0; i < kListeners && !t_failures; i++, sent++) {
            if (sent % 256 == 0) {
                ndk_u_cq_create cc{};
                cc.adapter_handle = adapter;
                cc.depth = 1024;
                cq = d.Create(NDK_IOCTL_CQ_CREATE, &cc);
                T_CHECK(cq != 0);
                if (!cq) break;
            }
            ndk_u_qp_create qc{};
            qc.pd_handle = pd;
            qc.receive_cq_handle = qc.initiator_cq_handle = cq;
            qc.receive_queue_depth = qc.initiator_queue_depth = 1;
            qc.max_receive_request_sge = qc.max_initiator_request_sge = 1;
            std::uint32_t qp = d.Create(NDK_IOCTL_QP_CREATE, &qc);
            ndk_u_connector_create ccr{};
            ccr.adapter_handle = adapter;
            std::uint32_t con = qp ? d.Create(NDK_IOCTL_CONNECTOR_CREATE, &ccr) : 0;
            ndk_u_connect cn{};
            cn.connector_handle = con;
            cn.qp_handle = qp;
            cn.inbound_read_limit = cn.outbound_read_limit = 1;
            std::memcpy(cn.dest_address, &to[i], sizeof(to[i]));
            if (!con || d.Ioctl(NDK_IOCTL_CONNECT, &cn) != 0) {
                std::fprintf(stderr, "connect %ld: %s\n", sent, strerror(errno));
                ++t_failures;
            }
        }
    }
    std::printf("peer: %ld connects in %.1f s\n", sent, rel::Now() - t0);
    if (!WriteAll(g_pipes.sent[1], "s", 1)) return kTestFail;
    close(g_pipes.sent[1]);
    // Keep the connects until the listener measured (or died).
    char c;
    ReadAll(g_pipes.measured[0], &c, 1);
    return t_failures ? kTestFail : kTestPass;
}

// Forks @fn as nobody (@as_root first): its pid, or -1.
pid_t Start(int (*fn)(), bool (*as_root)()) {
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid != 0) return pid;
    t_failures = 0;
    if (as_root && !as_root()) _exit(kTestFail);
    if (!sec::BecomeNobody()) _exit(kTestFail);
    int rc = fn();
    std::fflush(nullptr);
    _exit(rc);
}

// Waits up to @secs for @pid (killed when it is still there): its exit
// code, kTestFail when it died or hung.
int Finish(pid_t pid, const char* what, double secs) {
    if (pid < 0) return kTestFail;
    int st = sec::WaitStatus(pid, secs);
    if (st == -1) {
        std::fprintf(stderr, "%s: still running after %.0f s\n", what, secs);
        sec::DumpTask(pid, what);
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return kTestFail;
    }
    if (WIFSIGNALED(st)) {
        std::fprintf(stderr, "%s: killed by signal %d\n", what, WTERMSIG(st));
        return kTestFail;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : kTestFail;
}

}  // namespace

int main() {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    g_cg = sec::MemcgCreate("ndk-sec-memcg-listen", kMax);
    if (g_cg.empty()) return kTestFail;
    if (pipe2(g_pipes.addrs, O_CLOEXEC) != 0 || pipe2(g_pipes.sent, O_CLOEXEC) != 0 ||
        pipe2(g_pipes.measured, O_CLOEXEC) != 0) {
        rmdir(g_cg.c_str());
        return kTestFail;
    }
    long base = t_ndk_counter("user_objects");

    for (bool bounded : {false, true}) {
        g_bounded = bounded;
        if (bounded &&
            (pipe2(g_pipes.addrs, O_CLOEXEC) != 0 || pipe2(g_pipes.sent, O_CLOEXEC) != 0 ||
             pipe2(g_pipes.measured, O_CLOEXEC) != 0)) {
            ++t_failures;
            break;
        }
        pid_t listener = Start(Listener, [] {
            // memory.current and .max are root's: nobody uses them through
            // these files.
            g_current_fd = open((g_cg + "/memory.current").c_str(), O_RDONLY | O_CLOEXEC);
            g_max_fd = open((g_cg + "/memory.max").c_str(), O_WRONLY | O_CLOEXEC);
            if (g_current_fd < 0 || g_max_fd < 0) std::perror("memory.current or .max");
            return g_current_fd >= 0 && g_max_fd >= 0 &&
                   sec::WriteFile(g_cg + "/cgroup.procs", std::to_string(getpid()));
        });
        pid_t peer = Start(Peer, nullptr);
        g_pipes.CloseAll();  // a side that dies gives the other end of file
        T_CHECK(Finish(peer, "peer", 180) == kTestPass);
        T_CHECK(Finish(listener, bounded ? "bounded listener" : "listener", 30) == kTestPass);

        // Everything both sides made went with their files.
        T_CHECK(sec::UserObjectsBack(base, 20));
    }
    T_CHECK(rmdir(g_cg.c_str()) == 0);
    return t_result("sec-memcg-listen");
}
