// SPDX-License-Identifier: GPL-2.0
// sec-cm-ports (issue 15 item 6): connection-manager ids of a /dev/ndk
// file belong to its opener: its network namespace and its right to bind
// privileged ports.
//
//  - As nobody: CONNECT from source port 600 and LISTEN on port 700 fail
//    with EACCES (before the fix the connect, bound by a kernel worker,
//    reached the peer from port 600); connects without a source port reach
//    the peer from a port inside ip_local_port_range (>= 1024).
//  - As root (CAP_NET_BIND_SERVICE): the peer sees source port 600 (the
//    check, not a broken bind, refused nobody).
//  - In a new network namespace (root): 10.99.0.1 is not an address there,
//    so LISTEN on it fails with EADDRNOTAVAIL and CONNECT to it does not
//    connect (before the fix, ids lived in init_net and both worked).
//  - With `rdma system set netns exclusive`: rxe0 stays in init_net, and
//    another namespace neither counts, lists, describes nor opens it
//    (QUERY_INFO's adapter_count 0; ADAPTER_QUERY and ADAPTER_OPEN ENOENT).
#include <sched.h>

#include "sec_common.hpp"

namespace {

int g_lo = 0, g_hi = 0;

sockaddr_in Addr(std::uint16_t port) { return rel::LoopbackAddress(port); }

// LISTEN on 10.99.0.1:@port: the listener (0 and errno on failure).
std::uint32_t ListenOn(rel::Dev& d, std::uint32_t adapter, std::uint16_t port, int* err) {
    ndk_u_listener_create lc{};
    lc.adapter_handle = adapter;
    std::uint32_t lis = d.Create(NDK_IOCTL_LISTENER_CREATE, &lc);
    if (!lis) {
        *err = errno;
        return 0;
    }
    ndk_u_listen ln{};
    ln.listener_handle = lis;
    sockaddr_in sin = Addr(port);
    std::memcpy(ln.address, &sin, sizeof(sin));
    if (d.Ioctl(NDK_IOCTL_LISTEN, &ln) != 0) {
        *err = errno;
        t_handle_close(d.fd(), lis);
        return 0;
    }
    *err = 0;
    return lis;
}

// CONNECT to @lis at @to from 10.99.0.1:@src_port (-1: no source address).
// Returns the ioctl's errno (0: sent); on a request that reached the
// listener, *peer_port is the source port it saw (else -1); *status: the
// connect's completion status (1: none within 5 s).  Everything is closed
// again (the passive side rejects by closing).
int ConnectFrom(rel::Dev& d, std::uint32_t adapter, std::uint32_t pd, std::uint32_t lis,
                const sockaddr_in& to, int src_port, int* peer_port, int* status = nullptr) {
    *peer_port = -1;
    if (status) *status = 1;
    auto [cq, qp, con] = sec::MakeEndpoint(d, adapter, pd);
    int err = EIO;
    if (con) {
        ndk_u_connect cn{};
        cn.connector_handle = con;
        cn.qp_handle = qp;
        cn.inbound_read_limit = cn.outbound_read_limit = 1;
        std::memcpy(cn.dest_address, &to, sizeof(to));
        if (src_port >= 0) {
            sockaddr_in src = Addr(static_cast<std::uint16_t>(src_port));
            std::memcpy(cn.src_address, &src, sizeof(src));
        }
        err = d.Ioctl(NDK_IOCTL_CONNECT, &cn) == 0 ? 0 : errno;
    }
    ndk_u_event ev{};
    if (!err && lis && d.WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev) && ev.object) {
        unsigned char pdata[256];
        ndk_u_connector_query q{};
        q.connector_handle = ev.object;
        q.private_data_length = sizeof(pdata);
        q.private_data = reinterpret_cast<std::uintptr_t>(pdata);
        if (d.Ioctl(NDK_IOCTL_CONNECTOR_QUERY, &q) == 0) {
            sockaddr_in peer;
            std::memcpy(&peer, q.peer_address, sizeof(peer));
            *peer_port = ntohs(peer.sin_port);
        }
        t_handle_close(d.fd(), ev.object);
        d.DropEvents(ev.object);
    }
    if (!err && d.WaitEvent(NDK_U_EVENT_REQUEST, con, &ev) && status)
        *status = ev.status;  // refused or failed
    for (std::uint32_t h : {con, qp, cq})
        if (h) {
            t_handle_close(d.fd(), h);
            d.DropEvents(h);
        }
    return err;
}

bool InRange(int port) { return port >= 1024 && port >= g_lo && port <= g_hi; }

// The unprivileged caller's half.
int Nobody() {
    rel::Dev d;
    std::uint32_t adapter = d.OpenAdapter();
    std::uint32_t pd = adapter ? t_pd_create(d.fd(), adapter) : 0;
    T_CHECK(pd != 0);
    int err = 0;
    T_CHECK(!ListenOn(d, adapter, 700, &err) && err == EACCES);
    std::printf("nobody: LISTEN on port 700: %s\n", strerrorname_np(err));
    sockaddr_in to{};
    std::uint32_t lis = rel::Listen(d, adapter, &to);
    T_CHECK(lis != 0);
    if (!lis) return kTestFail;
    std::printf("nobody: listening on port %u\n", ntohs(to.sin_port));
    int port = 0;
    err = ConnectFrom(d, adapter, pd, lis, to, 600, &port);
    std::printf("nobody: CONNECT from port 600: %s, peer saw port %d\n", strerrorname_np(err),
                port);
    T_CHECK(err == EACCES && port == -1);
    err = ConnectFrom(d, adapter, pd, lis, to, 0, &port);
    std::printf("nobody: CONNECT from 10.99.0.1:0: %s, peer saw port %d\n", strerrorname_np(err),
                port);
    T_CHECK(err == 0 && InRange(port));
    err = ConnectFrom(d, adapter, pd, lis, to, -1, &port);
    std::printf("nobody: CONNECT without a source: %s, peer saw port %d\n", strerrorname_np(err),
                port);
    T_CHECK(err == 0 && InRange(port));
    return t_failures ? kTestFail : kTestPass;
}

// In a new network namespace: 10.99.0.1 is not ours.
int OtherNetns() {
    rel::Dev d;
    std::uint32_t adapter = d.OpenAdapter();
    std::uint32_t pd = adapter ? t_pd_create(d.fd(), adapter) : 0;
    T_CHECK(pd != 0);
    int err = 0;
    std::uint32_t lis = ListenOn(d, adapter, 0, &err);
    std::printf("netns: LISTEN on 10.99.0.1: %s\n", strerrorname_np(err));
    T_CHECK(!lis && err == EADDRNOTAVAIL);
    // Connect to a listener of init_net's 10.99.0.1 (the parent's).
    sockaddr_in to = Addr(static_cast<std::uint16_t>(sec::ReadLong("/tmp/ndk-sec-cm-port")));
    int port = 0, status = 0;
    err = ConnectFrom(d, adapter, pd, 0, to, -1, &port, &status);
    std::printf("netns: CONNECT to 10.99.0.1: %s, completion status %#x\n", strerrorname_np(err),
                static_cast<unsigned>(status));
    // Refused inline, or failed fast (unreachable): never sent to init_net.
    T_CHECK(err != 0 || (status != 0 && status != 1));
    return t_failures ? kTestFail : kTestPass;
}

int RunInNetns(const char* what, int (*fn)()) {
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        t_failures = 0;  // the child's own verdict
        if (unshare(CLONE_NEWNET) != 0) {
            std::perror("unshare(CLONE_NEWNET)");
            _exit(kTestFail);
        }
        int rc = fn();
        std::fflush(nullptr);
        _exit(rc);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st)) std::fprintf(stderr, "%s: child died\n", what);
    return WIFEXITED(st) ? WEXITSTATUS(st) : kTestFail;
}

// rxe0's adapter id, found in init_net.
long g_rxe0 = -1;

// A device of init_net is unknown here: not counted, not listed, not
// described by its id, not opened (before the fix only the open failed,
// and QUERY_INFO and ADAPTER_QUERY gave away the host's devices).
int ExclusiveOpen() {
    rel::Dev d;
    ndk_u_query_info qi{};
    T_CHECK(ioctl(d.fd(), NDK_IOCTL_QUERY_INFO, &qi) == 0);
    std::printf("exclusive netns: QUERY_INFO adapter_count %u\n", qi.adapter_count);
    T_CHECK(qi.adapter_count == 0);
    errno = 0;
    long first = t_first_adapter(d.fd());
    std::printf("exclusive netns: first adapter: %ld (%s)\n", first, strerrorname_np(errno));
    T_CHECK(first == -1 && errno == ENOENT);
    ndk_u_adapter_query q{};
    q.adapter_id = static_cast<std::uint32_t>(g_rxe0);
    errno = 0;
    T_CHECK(ioctl(d.fd(), NDK_IOCTL_ADAPTER_QUERY, &q) == -1 && errno == ENOENT);
    std::printf("exclusive netns: ADAPTER_QUERY of rxe0: %s\n", strerrorname_np(errno));
    errno = 0;
    std::uint32_t a = t_adapter_open(d.fd(), static_cast<std::uint32_t>(g_rxe0));
    std::printf("exclusive netns: ADAPTER_OPEN of rxe0: %s\n",
                a ? "opened" : strerrorname_np(errno));
    T_CHECK(!a && errno == ENOENT);
    return t_failures ? kTestFail : kTestPass;
}

bool NetnsMode(const char* mode) {
    std::string cmd = std::string("rdma system set netns ") + mode;
    for (int i = 0; i < 100; i++) {  // a dead namespace goes asynchronously
        if (std::system(cmd.c_str()) == 0) return true;
        usleep(100000);
    }
    return false;
}

}  // namespace

int main() {
    std::ifstream r("/proc/sys/net/ipv4/ip_local_port_range");
    r >> g_lo >> g_hi;
    std::printf("ip_local_port_range: %d %d\n", g_lo, g_hi);
    T_CHECK(g_lo > 0 && g_hi >= g_lo);

    T_CHECK(sec::AsNobody("sec-cm-ports", Nobody) == kTestPass);

    // Root: the privileged source port is allowed, and the peer sees it.
    rel::Dev d;
    auto [adapter, pd, lis, to] = sec::OpenListening(d);
    T_CHECK(lis != 0);
    int port = 0;
    int err = ConnectFrom(d, adapter, pd, lis, to, 600, &port);
    std::printf("root: CONNECT from port 600: %s, peer saw port %d\n", strerrorname_np(err), port);
    T_CHECK(err == 0 && port == 600);

    // The caller's network namespace.
    sec::WriteFile("/tmp/ndk-sec-cm-port", std::to_string(ntohs(to.sin_port)));
    T_CHECK(RunInNetns("netns", OtherNetns) == kTestPass);
    g_rxe0 = t_first_adapter(d.fd());
    T_CHECK(g_rxe0 >= 0);
    if (NetnsMode("exclusive")) {
        T_CHECK(RunInNetns("exclusive", ExclusiveOpen) == kTestPass);
        T_CHECK(NetnsMode("shared"));
    } else {
        std::fprintf(stderr, "rdma system set netns exclusive failed\n");
        ++t_failures;
    }
    unlink("/tmp/ndk-sec-cm-port");
    return t_result("sec-cm-ports");
}
