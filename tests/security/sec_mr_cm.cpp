// SPDX-License-Identifier: GPL-2.0
// Issue 15 item 13 (Documentation/security.md), as user nobody:
//
//   sec-mr-cm fr-reinit-race     one thread re-initialises a fast-register
//                                MR in a loop (MR_INIT_FR) while another
//                                reads its tokens (TOKEN_QUERY) and a third
//                                fast-registers and invalidates it on a
//                                loopback QP and sends through its token:
//                                every query answers, a token read is
//                                never 0, the last query gives the last
//                                initialisation's tokens, nothing hangs,
//                                leaks or reports (KASAN on the debug tier)
//   sec-mr-cm qp-two-connectors  a QP given to one connector is refused to
//                                a second one (CONNECT and ACCEPT: EISCONN,
//                                STATUS_INVALID_DEVICE_STATE) while the
//                                first holds it, and the connection of the
//                                first still works; once that connector is
//                                closed the QP may be named again
//   sec-mr-cm qp-foreign-adapter a file opens rxe0 twice (adapters 1 and
//                                2): CONNECT of adapter 2's connector with
//                                adapter 1's QP, and ACCEPT of adapter 1's
//                                connection request with adapter 2's QP,
//                                are refused (EINVAL); then every entry of
//                                adapter 1 is closed and its HANDLE_CLOSE
//                                returns at once (a connector holding its
//                                QP made it wait until that connector's
//                                close, and a device removal with it)
//   sec-mr-cm token-window       MR_REGISTER is held for 600 ms after the
//                                driver registered the range, before its
//                                check, without the file's lock (debugfs
//                                ndk/hold_registration_ms); a TOKEN_QUERY
//                                of the MR meanwhile gives 0/0, not the
//                                driver's live keys (the check may still
//                                undo the registration: a range remapped
//                                meanwhile), and after the register its
//                                tokens
//
// The kernel-consumer side of the token race (no file lock between the
// two) is ktest fr-reinit-race (tests/kmod/ndk_test_fr.c).
#include <atomic>
#include <thread>

#include "sec_common.hpp"

namespace {

using rel::Dev;

constexpr unsigned kPage = 4096;
constexpr double kPrompt = 10.0;

// ---- fr-reinit-race -----------------------------------------------------------

int FrReinitChild() {
    Dev d;
    auto [ad, pd, lis, to] = sec::OpenListening(d);
    rel::Conn c;
    if (!lis || !rel::Connect(d, ad, lis, to, pd, pd, &c)) {
        std::fprintf(stderr, "fr-reinit-race: loopback connection failed\n");
        return 1;
    }
    rel::Mapping buf(8 * kPage);
    ndk_u_mem_register mem{};
    ndk_u_mr_create mc{};
    mc.pd_handle = pd;
    mc.flags = NDK_U_MR_CREATE_F_FAST_REGISTER;
    std::uint32_t fr = d.Create(NDK_IOCTL_MR_CREATE, &mc);
    if (!fr || t_mem_register(d.fd(), pd, buf.get(), buf.size(), NDK_U_MEM_READWRITE, &mem)) {
        std::fprintf(stderr, "fr-reinit-race: setup: %s\n", std::strerror(errno));
        return 1;
    }
    const double secs = 20.0 * rel::Scale() < 4.0 ? 4.0 : 20.0 * rel::Scale();
    std::atomic<bool> stop{false};
    std::atomic<long> inits{0}, busy{0}, queries{0}, zero{0}, qfail{0}, posts{0};
    int fd = d.fd();

    std::thread init([&] {
        unsigned n = 0;
        while (!stop) {
            ndk_u_mr_init_fr i{fr, 1 + n++ % 8, n & 1 ? NDK_U_MR_INIT_FR_F_REMOTE_ACCESS : 0U, 0};
            if (ioctl(fd, NDK_IOCTL_MR_INIT_FR, &i) == 0)
                inits++;
            else if (errno == EBUSY)
                busy++;
        }
    });
    std::thread query([&] {
        while (!stop) {
            ndk_u_token_query t{};
            t.handle = fr;
            bool initialised = inits != 0;
            if (ioctl(fd, NDK_IOCTL_TOKEN_QUERY, &t) != 0)
                qfail++;
            else if (initialised && !t.local_token)
                zero++;
            queries++;
        }
    });
    // Fast-register, send through the token, invalidate, poll: whatever
    // the initialisation in place, on the one QP.
    std::thread post([&] {
        ndk_u_result res[16];
        while (!stop) {
            ndk_u_qp_post p{};
            p.qp_handle = c.qp[0];
            p.op = NDK_U_OP_FAST_REGISTER;
            p.flags = NDK_U_OP_FLAG_ALLOW_REMOTE_READ;
            p.object_handle = fr;
            p.mr_handle = mem.handle;
            p.address = buf.addr();
            p.length = kPage;
            p.remote_address = 0x10000000;
            if (ioctl(fd, NDK_IOCTL_QP_POST, &p) == 0) {
                posts++;
                // The peer's receive, so that the send completes.
                ndk_u_sge rsge{buf.addr() + 4 * kPage, 64, mem.local_token};
                ndk_u_qp_post r{};
                r.qp_handle = c.qp[1];
                r.op = NDK_U_OP_RECEIVE;
                r.nsge = 1;
                r.sgl = reinterpret_cast<std::uintptr_t>(&rsge);
                ioctl(fd, NDK_IOCTL_QP_POST, &r);
                ndk_u_sge sge{0x10000000, 64, p.token};
                ndk_u_qp_post s{};
                s.qp_handle = c.qp[0];
                s.op = NDK_U_OP_SEND;
                s.nsge = 1;
                s.sgl = reinterpret_cast<std::uintptr_t>(&sge);
                ioctl(fd, NDK_IOCTL_QP_POST, &s);
                ndk_u_qp_post v{};
                v.qp_handle = c.qp[0];
                v.op = NDK_U_OP_INVALIDATE;
                v.object_handle = fr;
                ioctl(fd, NDK_IOCTL_QP_POST, &v);
            }
            for (std::uint32_t cq : c.cq) {
                ndk_u_cq_poll cp{};
                cp.handle = cq;
                cp.count = 16;
                cp.results = reinterpret_cast<std::uintptr_t>(res);
                ioctl(fd, NDK_IOCTL_CQ_POLL, &cp);
            }
        }
    });
    usleep(static_cast<useconds_t>(secs * 1e6));
    stop = true;
    init.join();
    query.join();
    post.join();

    // Quiet now: drain, then the last initialisation's tokens are read.
    ndk_u_result res{};
    while (d.WaitResult(c.cq[0], &res, 500)) {
    }
    ndk_u_token_query t1{}, t2{};
    t1.handle = t2.handle = fr;
    int bad = 0;
    ndk_u_mr_init_fr last{fr, 4, NDK_U_MR_INIT_FR_F_REMOTE_ACCESS, 0};
    int lrc = ioctl(fd, NDK_IOCTL_MR_INIT_FR, &last);
    if (lrc != 0) bad++;
    if (ioctl(fd, NDK_IOCTL_TOKEN_QUERY, &t1) != 0 || ioctl(fd, NDK_IOCTL_TOKEN_QUERY, &t2) != 0 ||
        !t1.local_token || t1.local_token != t2.local_token || t1.remote_token != t2.remote_token)
        bad++;
    std::printf(
        "fr-reinit-race: %.0f s: %ld initialisations (%ld refused busy), %ld token queries "
        "(%ld failed, %ld gave 0), %ld fast-registers; last init %s, tokens %#x/%#x\n",
        secs, inits.load(), busy.load(), queries.load(), qfail.load(), zero.load(), posts.load(),
        lrc ? "busy" : "done", t1.local_token, t1.remote_token);
    bad += qfail != 0 || zero != 0 || inits == 0 || queries == 0;
    double t0 = rel::Now();
    d.Close();
    if (rel::Now() - t0 > kPrompt) bad++;
    return bad ? 1 : 0;
}

// ---- token-window -------------------------------------------------------------

constexpr int kHoldMs = 600;

int TokenWindowChild() {
    Dev d;
    std::uint32_t ad = d.OpenAdapter();
    std::uint32_t pd = ad ? t_pd_create(d.fd(), ad) : 0;
    ndk_u_mr_create mc{};
    mc.pd_handle = pd;
    std::uint32_t mr = pd ? d.Create(NDK_IOCTL_MR_CREATE, &mc) : 0;
    T_CHECK(mr != 0);
    if (!mr) return 1;
    rel::Mapping buf(4 * kPage);
    std::memset(buf.get(), 1, buf.size());
    ndk_u_mr_register r{};
    r.handle = mr;
    r.flags = 0x1 | 0x2;  // local write, remote read
    r.address = reinterpret_cast<std::uintptr_t>(buf.get());
    r.length = buf.size();
    int rrc = -1;
    double t0 = rel::Now(), took = 0;
    std::thread reg([&] {
        rrc = d.Ioctl(NDK_IOCTL_MR_REGISTER, &r);
        took = rel::Now() - t0;
    });
    usleep(kHoldMs * 1000 / 4);
    ndk_u_token_query during{};
    during.handle = mr;
    int qrc = d.Ioctl(NDK_IOCTL_TOKEN_QUERY, &during);
    reg.join();
    ndk_u_token_query after{};
    after.handle = mr;
    int arc = d.Ioctl(NDK_IOCTL_TOKEN_QUERY, &after);
    std::printf(
        "token-window: MR_REGISTER %s after %.2f s (tokens %#x/%#x); TOKEN_QUERY during it: "
        "%#x/%#x, after it: %#x/%#x\n",
        rrc ? "failed" : "returned", took, r.local_token, r.remote_token, during.local_token,
        during.remote_token, after.local_token, after.remote_token);
    T_CHECK(rrc == 0 && took >= kHoldMs * 0.8 / 1000);  // the hold was met
    T_CHECK(qrc == 0 && during.local_token == 0 && during.remote_token == 0);
    T_CHECK(arc == 0 && after.local_token == r.local_token && after.remote_token == r.remote_token);
    T_CHECK(r.local_token != 0);
    return t_failures ? 1 : 0;
}

std::uint32_t CreateCq(Dev& d, std::uint32_t ad) {
    ndk_u_cq_create cc{};
    cc.adapter_handle = ad;
    cc.depth = 16;
    return d.Create(NDK_IOCTL_CQ_CREATE, &cc);
}

// CONNECT of @con with @qp to @to; 0 or errno.
int Connect(Dev& d, std::uint32_t con, std::uint32_t qp, const sockaddr_in& to) {
    ndk_u_connect cn{};
    cn.connector_handle = con;
    cn.qp_handle = qp;
    cn.inbound_read_limit = cn.outbound_read_limit = 1;
    std::memcpy(cn.dest_address, &to, sizeof(to));
    return d.Ioctl(NDK_IOCTL_CONNECT, &cn) == 0 ? 0 : errno;
}

// ---- qp-two-connectors --------------------------------------------------------

int TwoConnectorsChild() {
    Dev d;
    auto [ad, pd, lis, to] = sec::OpenListening(d);
    std::uint32_t cq = lis ? CreateCq(d, ad) : 0;
    std::uint32_t qa = cq ? rel::CreateQp(d.fd(), pd, cq, 0xa) : 0;
    std::uint32_t qb = qa ? rel::CreateQp(d.fd(), pd, cq, 0xb) : 0;
    ndk_u_connector_create cr1{}, cr2{};
    cr1.adapter_handle = cr2.adapter_handle = ad;
    std::uint32_t con1 = qb ? d.Create(NDK_IOCTL_CONNECTOR_CREATE, &cr1) : 0;
    std::uint32_t con2 = con1 ? d.Create(NDK_IOCTL_CONNECTOR_CREATE, &cr2) : 0;
    if (!con2) {
        std::fprintf(stderr, "qp-two-connectors: setup: %s\n", std::strerror(errno));
        return 1;
    }
    auto connect = [&](std::uint32_t con, std::uint32_t qp) { return Connect(d, con, qp, to); };
    int bad = 0;
    int e1 = connect(con1, qa);
    int e2 = connect(con2, qa);  // QP A is con1's
    std::printf("qp-two-connectors: CONNECT(con1, QP A): %s; CONNECT(con2, QP A): %s\n",
                std::strerror(e1), std::strerror(e2));
    bad += e1 != 0 || e2 != EISCONN;
    ndk_u_event ev{};
    if (!d.WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev) || !ev.object) {
        std::fprintf(stderr, "qp-two-connectors: no connection request\n");
        return 1;
    }
    std::uint32_t acc = ev.object;
    // The passive side: QP A is taken, QP B is free.
    auto accept = [&](std::uint32_t qp) {
        ndk_u_accept ac{};
        ac.connector_handle = acc;
        ac.qp_handle = qp;
        ac.inbound_read_limit = ac.outbound_read_limit = 1;
        return d.Ioctl(NDK_IOCTL_ACCEPT, &ac) == 0 ? 0 : errno;
    };
    int a1 = accept(qa);
    int a2 = accept(qb);
    std::printf("qp-two-connectors: ACCEPT(QP A): %s; ACCEPT(QP B): %s\n", std::strerror(a1),
                std::strerror(a2));
    bad += a1 != EISCONN || a2 != 0;
    // The first connection works.
    ndk_u_connector_request cr{};
    cr.connector_handle = con1;
    bool up = d.WaitEvent(NDK_U_EVENT_REQUEST, con1, &ev) && ev.status == 0 &&
              d.Ioctl(NDK_IOCTL_COMPLETE_CONNECT, &cr) == 0 &&
              d.WaitEvent(NDK_U_EVENT_REQUEST, con1, &ev) && ev.status == 0 &&
              d.WaitEvent(NDK_U_EVENT_REQUEST, acc, &ev) && ev.status == 0;
    rel::Mapping buf(kPage);
    ndk_u_mem_register m{};
    ndk_u_result res{};
    if (up && t_mem_register(d.fd(), pd, buf.get(), kPage, NDK_U_MEM_READWRITE, &m) == 0) {
        ndk_u_sge sge{buf.addr(), 64, m.local_token};
        ndk_u_qp_post r{};
        r.qp_handle = qb;
        r.op = NDK_U_OP_RECEIVE;
        r.nsge = 1;
        r.sgl = reinterpret_cast<std::uintptr_t>(&sge);
        ndk_u_qp_post s = r;
        s.qp_handle = qa;
        s.op = NDK_U_OP_SEND;
        up = d.Ioctl(NDK_IOCTL_QP_POST, &r) == 0 && d.Ioctl(NDK_IOCTL_QP_POST, &s) == 0;
        int ok = 0;
        for (int i = 0; up && i < 2 && d.WaitResult(cq, &res); i++) ok += res.status == 0;
        up = ok == 2;
    } else {
        up = false;
    }
    std::printf("qp-two-connectors: connection through con1: %s\n",
                up ? "send received" : "FAILED");
    bad += !up;
    // Once con1 is closed, QP A (released, now in error) may be named
    // again: the connect is taken, whatever becomes of it.
    int c1 = t_handle_close(d.fd(), con1) == 0 ? 0 : errno;
    d.DropEvents(con1);
    int e3 = connect(con2, qa);
    std::printf("qp-two-connectors: close(con1): %s; CONNECT(con2, QP A) after it: %s\n",
                std::strerror(c1), std::strerror(e3));
    bad += c1 != 0 || e3 == EISCONN;
    double t0 = rel::Now();
    d.Close();
    bad += rel::Now() - t0 > kPrompt;
    return bad ? 1 : 0;
}

// ---- qp-foreign-adapter -------------------------------------------------------

int ForeignAdapterChild() {
    Dev d;
    auto [ad1, pd1, lis, to] = sec::OpenListening(d);
    std::uint32_t ad2 = lis ? d.OpenAdapter() : 0;
    std::uint32_t pd2 = ad2 ? t_pd_create(d.fd(), ad2) : 0;
    std::uint32_t cq1 = pd2 ? CreateCq(d, ad1) : 0;
    std::uint32_t cq2 = cq1 ? CreateCq(d, ad2) : 0;
    std::uint32_t qp1 = cq2 ? rel::CreateQp(d.fd(), pd1, cq1, 0x1) : 0;
    std::uint32_t qp2 = qp1 ? rel::CreateQp(d.fd(), pd2, cq2, 0x2) : 0;
    ndk_u_connector_create cr1{}, cr2{};
    cr1.adapter_handle = ad1;
    cr2.adapter_handle = ad2;
    std::uint32_t con1 = qp2 ? d.Create(NDK_IOCTL_CONNECTOR_CREATE, &cr1) : 0;
    std::uint32_t con2 = con1 ? d.Create(NDK_IOCTL_CONNECTOR_CREATE, &cr2) : 0;
    if (!con2) {
        std::fprintf(stderr, "qp-foreign-adapter: setup: %s\n", std::strerror(errno));
        return 1;
    }
    auto connect = [&](std::uint32_t con, std::uint32_t qp) { return Connect(d, con, qp, to); };
    int bad = 0;
    int e2 = connect(con2, qp1);
    std::printf("qp-foreign-adapter: CONNECT(adapter 2's connector, adapter 1's QP): %s\n",
                std::strerror(e2));
    bad += e2 != EINVAL;
    // Adapter 1's connection request, offered adapter 2's QP.
    int e1 = connect(con1, qp1);
    ndk_u_event ev{};
    ndk_u_accept ac{};
    ac.qp_handle = qp2;
    ac.inbound_read_limit = ac.outbound_read_limit = 1;
    int a2 = -1;
    if (e1 == 0 && d.WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev) && ev.object) {
        ac.connector_handle = ev.object;
        a2 = d.Ioctl(NDK_IOCTL_ACCEPT, &ac) == 0 ? 0 : errno;
    }
    std::printf(
        "qp-foreign-adapter: CONNECT(adapter 1's): %s; ACCEPT(its request, adapter 2's "
        "QP): %s\n",
        std::strerror(e1), a2 < 0 ? "no request" : std::strerror(a2));
    bad += e1 != 0 || a2 != EINVAL;
    // Close everything of adapter 1, then adapter 1 itself, in a thread:
    // with a connector of adapter 2 holding adapter 1's QP, the close would
    // wait for that connector.
    if (ac.connector_handle) t_handle_close(d.fd(), ac.connector_handle);
    for (std::uint32_t h : {con1, lis, qp1, cq1, pd1}) bad += t_handle_close(d.fd(), h) != 0;
    d.DropEvents(con1);
    std::atomic<bool> closed{false};
    int ce = 0;
    std::thread t([&] {
        ce = t_handle_close(d.fd(), ad1) == 0 ? 0 : errno;
        closed = true;
    });
    double t0 = rel::Now();
    while (!closed && rel::Now() - t0 < kPrompt) usleep(10000);
    bool waited = !closed;
    if (waited) t_handle_close(d.fd(), con2);  // lets the old module's close end
    t.join();
    std::printf("qp-foreign-adapter: HANDLE_CLOSE(adapter 1): %s after %.2f s%s\n",
                std::strerror(ce), rel::Now() - t0,
                waited ? ", only once adapter 2's connector was closed" : "");
    bad += waited || ce != 0;
    d.Close();
    return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc != 2) {
        std::fprintf(stderr,
                     "usage: %s fr-reinit-race|qp-two-connectors|qp-foreign-adapter|token-window\n",
                     argv[0]);
        return kTestFail;
    }
    if (geteuid() != 0 || rel::ReadCounters().objects < 0) {
        std::fprintf(stderr, "needs root and ndk.ko's debugfs counters\n");
        return kTestFail;
    }
    sec::HungTaskTimeout hung(20);
    std::string mode = argv[1];
    if (mode == "token-window" &&
        !sec::WriteFile("/sys/kernel/debug/ndk/hold_registration_ms", std::to_string(kHoldMs))) {
        std::fprintf(stderr, "no debugfs ndk/hold_registration_ms\n");
        return kTestFail;
    }
    int rc =
        mode == "fr-reinit-race"       ? sec::RunAsNobody(FrReinitChild, "fr-reinit-race")
        : mode == "qp-two-connectors"  ? sec::RunAsNobody(TwoConnectorsChild, "qp-two-connectors")
        : mode == "token-window"       ? sec::RunAsNobody(TokenWindowChild, "token-window")
        : mode == "qp-foreign-adapter" ? sec::RunAsNobody(ForeignAdapterChild, "qp-foreign-adapter")
                                       : 1;
    if (rc) t_failures++;
    return t_result(("sec-mr-cm " + mode).c_str());
}
