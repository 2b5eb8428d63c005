// SPDX-License-Identifier: GPL-2.0
// sec-listen-backlog (issue 15 item 8): a listener holds a bounded number
// of connection requests its owner has not answered yet.
//
// As nobody: one listener, then N connects to it (N = 10000 x
// NDK_STRESS_SCALE, at least 1000) that nobody accepts; the active side
// closes each refused connector and its QP at once, so that only the
// listener's side can grow.  At most 128
// (NDK_CM_BACKLOG, Documentation/uapi.md) reach the listener as
// CONNECT_REQUEST events; every other connect completes with
// STATUS_CONNECTION_REFUSED, rejected before ndk.ko allocated anything for
// it.  Closing the pending requests (which rejects them) makes room: a new
// connect reaches the listener again.  Before the fix all N were queued.
//
// sec-listen-backlog events (test sec-event-bound): a file's owned events
// (request completions and connection requests) are bounded too.  As
// nobody: one loopback connection, disconnected; then DISCONNECT again and
// again on the disconnected connector, which completes at once each time,
// without ever taking an event.  The first NDK_UEVENT_OWNED_MAX (16384,
// Documentation/uapi.md) succeed, the next gets ENOBUFS; taking the events
// makes room.  Before the fix every DISCONNECT queued one more event.
#include <map>

#include "sec_common.hpp"

namespace {

constexpr long kBacklog = 128;

// Takes every queued event of @d, calling @fn(event) for each.
template <class F>
void TakeEvents(rel::Dev& d, F fn) {
    ndk_u_event ev[NDK_U_EVENT_GET_MAX];
    for (;;) {
        ndk_u_event_get g{};
        g.count = NDK_U_EVENT_GET_MAX;
        g.events = reinterpret_cast<std::uintptr_t>(ev);
        if (d.Ioctl(NDK_IOCTL_EVENT_GET, &g) != 0 || !g.count) return;
        for (std::uint32_t i = 0; i < g.count; i++) fn(ev[i]);
    }
}
constexpr std::int32_t kRefused =
    static_cast<std::int32_t>(0xC0000236);  // STATUS_CONNECTION_REFUSED

int Flood() {
    const long n = rel::Scaled(10000, 1000);
    rel::Dev d;
    auto [adapter, pd, lis, to] = sec::OpenListening(d);
    T_CHECK(lis != 0);
    if (!lis) return kTestFail;

    std::vector<std::uint32_t> cqs, requests;
    std::map<std::uint32_t, std::uint32_t> active;  // connector -> its QP
    long refused = 0, other = 0;
    auto drain = [&] {
        TakeEvents(d, [&](const ndk_u_event& ev) {
            if (ev.type == NDK_U_EVENT_CONNECT_REQUEST && ev.handle == lis)
                requests.push_back(ev.object);
            else if (ev.type == NDK_U_EVENT_REQUEST && ev.status == kRefused &&
                     active.count(ev.handle)) {
                refused++;
                t_handle_close(d.fd(), ev.handle);
                t_handle_close(d.fd(), active[ev.handle]);
                active.erase(ev.handle);
            } else if (ev.type == NDK_U_EVENT_REQUEST)
                other++;
        });
    };

    // A QP of depth 1 on the newest CQ and a connector, connecting to the
    // listener: the connector (its QP in *qp), or 0 when a create or the
    // CONNECT failed (errno).
    auto connect = [&](std::uint32_t* qp) -> std::uint32_t {
        ndk_u_qp_create qc{};
        qc.pd_handle = pd;
        qc.receive_cq_handle = qc.initiator_cq_handle = cqs.back();
        qc.receive_queue_depth = qc.initiator_queue_depth = 1;
        qc.max_receive_request_sge = qc.max_initiator_request_sge = 1;
        *qp = d.Create(NDK_IOCTL_QP_CREATE, &qc);
        ndk_u_connector_create ccr{};
        ccr.adapter_handle = adapter;
        std::uint32_t con = *qp ? d.Create(NDK_IOCTL_CONNECTOR_CREATE, &ccr) : 0;
        ndk_u_connect cn{};
        cn.connector_handle = con;
        cn.qp_handle = *qp;
        cn.inbound_read_limit = cn.outbound_read_limit = 1;
        std::memcpy(cn.dest_address, &to, sizeof(to));
        return con && d.Ioctl(NDK_IOCTL_CONNECT, &cn) == 0 ? con : 0;
    };

    double t0 = rel::Now();
    for (long i = 0; i < n; i++) {
        if (i % 256 == 0) {
            ndk_u_cq_create cc{};
            cc.adapter_handle = adapter;
            cc.depth = 1024;
            cqs.push_back(d.Create(NDK_IOCTL_CQ_CREATE, &cc));
            T_CHECK(cqs.back() != 0);
        }
        std::uint32_t qp = 0;
        std::uint32_t con = connect(&qp);
        if (!con) {
            std::fprintf(stderr, "connect %ld: %s\n", i, strerror(errno));
            ++t_failures;
            break;
        }
        active[con] = qp;
        if (i % 32 == 31) drain();
    }
    // Every connect beyond the backlog is refused; the others wait.
    double end = rel::Now() + 120;
    while (rel::Now() < end && refused + static_cast<long>(requests.size()) + other < n) {
        usleep(20000);
        drain();
    }
    std::printf(
        "%ld connects in %.1f s: %zu reached the listener, %ld refused, %ld other; "
        "%zu active connectors left\n",
        n, rel::Now() - t0, requests.size(), refused, other, active.size());
    T_CHECK(static_cast<long>(requests.size()) == kBacklog);
    T_CHECK(refused == n - kBacklog);

    // Answering the pending requests (closing them rejects) makes room.
    for (std::uint32_t h : requests) T_CHECK(t_handle_close(d.fd(), h) == 0);
    requests.clear();
    drain();
    std::uint32_t qp = 0;
    T_CHECK(connect(&qp) != 0);
    end = rel::Now() + 20;
    while (rel::Now() < end && requests.empty()) {
        usleep(20000);
        drain();
    }
    std::printf("after the backlog was answered: %zu new request(s) reached the listener\n",
                requests.size());
    // Ours, and REQs of refused connects that the CM retransmitted and that
    // now find room (the flood outran rxe's MAD timeouts): never more than
    // the backlog.
    T_CHECK(!requests.empty() && static_cast<long>(requests.size()) <= kBacklog);
    return t_failures ? kTestFail : kTestPass;
}

constexpr long kOwnedEvents = 16384;

int Events() {
    rel::Dev d;
    auto [adapter, pd, lis, to] = sec::OpenListening(d);
    rel::Conn c;
    T_CHECK(lis != 0 && rel::Connect(d, adapter, lis, to, pd, pd, &c));
    if (t_failures) return kTestFail;
    ndk_u_connector_request dc{};
    dc.connector_handle = c.con;
    ndk_u_event ev{};
    T_CHECK(d.Ioctl(NDK_IOCTL_DISCONNECT, &dc) == 0 &&
            d.WaitEvent(NDK_U_EVENT_REQUEST, c.con, &ev) && ev.status == 0);
    usleep(200000);
    d.DropEvents(c.con);
    d.DropEvents(c.acc);

    // Nothing is taken from here on.
    long done = 0;
    int err = 0;
    double t0 = rel::Now();
    for (long i = 0; i < 2 * kOwnedEvents && !err; i++) {
        if (d.Ioctl(NDK_IOCTL_DISCONNECT, &dc) == 0)
            done++;
        else
            err = errno;
    }
    std::printf(
        "DISCONNECT of a disconnected connector, no event taken: %ld succeeded in %.1f s, "
        "then %s\n",
        done, rel::Now() - t0, err ? strerrorname_np(err) : "no refusal");
    T_CHECK(done == kOwnedEvents && err == ENOBUFS);

    // Taking the events makes room again.
    long taken = 0;
    TakeEvents(d, [&](const ndk_u_event& e) {
        taken +=
            e.type == NDK_U_EVENT_REQUEST && e.handle == c.con && e.object == NDK_U_REQ_DISCONNECT;
    });
    T_CHECK(d.Ioctl(NDK_IOCTL_DISCONNECT, &dc) == 0 &&
            d.WaitEvent(NDK_U_EVENT_REQUEST, c.con, &ev) && ev.status == 0);
    std::printf("%ld disconnect completions taken; the next DISCONNECT succeeds and completes\n",
                taken);
    T_CHECK(taken == done);
    rel::Disconnect(d, c);
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "events") {
        T_CHECK(sec::AsNobody("sec-event-bound", Events) == kTestPass);
        return t_result("sec-event-bound");
    }
    T_CHECK(sec::AsNobody("sec-listen-backlog", Flood) == kTestPass);
    return t_result("sec-listen-backlog");
}
