// SPDX-License-Identifier: GPL-2.0
// Lifetime attacks on /dev/ndk (Documentation/security.md, issue 15 items
// 2, 3, 4 and 12), each run by a child that drops to user nobody while
// this process (root) watches it: the child must end promptly (never in D
// state), ndk.ko's counters (debugfs ndk/user_objects, user_pinned_pages)
// and the child's VmPin must come back to their baseline, and the kernel
// log must stay free of reports.
//
//   sec-lifetimes qp-destroy    a depth-1 CQ shared by two loopback QPs,
//                               one registration, 8 binds; close(fd), then
//                               kill -9 with everything open; then
//                               `rdma link delete rxe0` (and add) works
//   sec-lifetimes notify-close  receive on QP A, CQ_ARM(ANY), HANDLE_CLOSE
//                               QP A then CQ A (the connector keeps them),
//                               send from B: no event of the closed CQ
//   sec-lifetimes bind-close    a bind (window) and a fast-register (FR-MR)
//                               posted, their handles closed, close(fd):
//                               200 rounds, no WARN, no pages left pinned;
//                               every other round registers before the
//                               QPs exist, so the release reaches the
//                               registration's handle before the QP that
//                               resolves the requests
//   sec-lifetimes cq-tasklet    CQ_ARM, one outstanding receive, close(fd):
//                               the QP's flush completion schedules rxe's
//                               CQ tasklet right before the CQ is destroyed
//   sec-lifetimes cq-fences     200 CQs, each armed with a QP and a
//                               receive, in one file: its close fences
//                               rxe's CQ tasklets once for them all
//                               (debugfs ndk/cq_fences), not 200 times
//   sec-lifetimes removal-fanout  3000 adapters with a PD each and 30000
//                               more PDs in one file: `rdma link delete
//                               rxe0` under it returns within 10 s (times
//                               NDK_VM_TIMEOUT_SCALE)
//   sec-lifetimes foreign-release the last close of a file, in a process
//                               that inherited it, while the opener holds
//                               an invalidation of its memory open
//                               (debugfs ndk/invalidate_delay_ms): the
//                               close returns within 1 s, and so does
//                               the exit of a holder that never closes
//
// Rounds scale with NDK_STRESS_SCALE (rel::Scaled()).
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "sec_common.hpp"

namespace {

using rel::Dev;
using sec::KernelReports;
using sec::ProcState;

constexpr unsigned kPage = 4096;
constexpr double kPrompt = 10.0;  // seconds a close or kill may take

// A child that hangs is reported (state, kernel stack) and killed; one
// that survives SIGKILL is reported in D state.  True if it exited 0.
bool Reap(pid_t pid, double secs, const char* what) {
    double t0 = rel::Now();
    int st = sec::WaitStatus(pid, secs);
    if (st == -1) {
        std::fprintf(stderr, "%s: child still running after %.0f s\n", what, secs);
        sec::DumpTask(pid, what);
        kill(pid, SIGKILL);
        st = sec::WaitStatus(pid, kPrompt);
        if (st == -1) {
            std::fprintf(stderr, "%s: child survives SIGKILL, state %c\n", what, ProcState(pid));
            return false;
        }
        return false;
    }
    std::printf("%s: child done in %.2f s\n", what, rel::Now() - t0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

// Runs @fn as nobody in a child; its exit status is @fn's result.
pid_t Spawn(const std::function<int()>& fn) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(sec::BecomeNobody() ? fn() : 1);
    if (pid < 0) std::perror("fork");
    return pid;
}

// ---- loopback connections ----------------------------------------------------

struct Pair : sec::Listening {
    rel::Conn c;
};

// Adapter, PD and listener of @d.
bool Open(Dev& d, Pair* p) {
    static_cast<sec::Listening&>(*p) = sec::OpenListening(d);
    if (!p->lis) std::fprintf(stderr, "adapter/PD/listener: %s\n", std::strerror(errno));
    return p->lis != 0;
}

std::uint32_t CreateCq(Dev& d, std::uint32_t ad, std::uint32_t depth) {
    ndk_u_cq_create cc{};
    cc.adapter_handle = ad;
    cc.depth = depth;
    return d.Create(NDK_IOCTL_CQ_CREATE, &cc);
}

// Connects the two given QPs (qp[0] active, qp[1] passive) of @c.
bool Handshake(Dev& d, Pair* p) {
    rel::Conn& c = p->c;
    ndk_u_connector_create ccr{};
    ccr.adapter_handle = p->ad;
    c.con = d.Create(NDK_IOCTL_CONNECTOR_CREATE, &ccr);
    if (!c.con) return false;
    ndk_u_connect cn{};
    cn.connector_handle = c.con;
    cn.qp_handle = c.qp[0];
    cn.inbound_read_limit = cn.outbound_read_limit = 1;
    std::memcpy(cn.dest_address, &p->to, sizeof(p->to));
    ndk_u_event ev{};
    if (d.Ioctl(NDK_IOCTL_CONNECT, &cn) != 0 ||
        !d.WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, p->lis, &ev) || !ev.object)
        return false;
    c.acc = ev.object;
    ndk_u_accept ac{};
    ac.connector_handle = c.acc;
    ac.qp_handle = c.qp[1];
    ac.inbound_read_limit = ac.outbound_read_limit = 1;
    if (d.Ioctl(NDK_IOCTL_ACCEPT, &ac) != 0 || !d.WaitEvent(NDK_U_EVENT_REQUEST, c.con, &ev) ||
        ev.status != 0)
        return false;
    ndk_u_connector_request cr{};
    cr.connector_handle = c.con;
    return d.Ioctl(NDK_IOCTL_COMPLETE_CONNECT, &cr) == 0 &&
           d.WaitEvent(NDK_U_EVENT_REQUEST, c.con, &ev) && ev.status == 0 &&
           d.WaitEvent(NDK_U_EVENT_REQUEST, c.acc, &ev) && ev.status == 0;
}

int Post(Dev& d, ndk_u_qp_post* p) { return d.Ioctl(NDK_IOCTL_QP_POST, p); }

int PostSge(Dev& d, std::uint32_t qp, std::uint32_t op, std::uint64_t addr, std::uint32_t len,
            std::uint32_t token) {
    ndk_u_sge sge{addr, len, token};
    ndk_u_qp_post p{};
    p.qp_handle = qp;
    p.op = op;
    p.nsge = 1;
    p.sgl = reinterpret_cast<std::uintptr_t>(&sge);
    p.request_context = 0x51;
    return Post(d, &p);
}

int Bind(Dev& d, std::uint32_t qp, std::uint32_t mw, std::uint32_t mr, std::uint64_t addr,
         std::uint64_t len) {
    ndk_u_qp_post p =
        sec::RegPost(qp, NDK_U_OP_BIND, 0, mw, mr, addr, len, NDK_U_OP_FLAG_ALLOW_REMOTE_READ);
    return Post(d, &p);
}

std::uint32_t CreateMw(Dev& d, std::uint32_t pd) {
    ndk_u_mw_create m{};
    m.pd_handle = pd;
    return d.Create(NDK_IOCTL_MW_CREATE, &m);
}

// ---- item 2: QP destroy resolves every request -------------------------------

// The attack: one depth-1 CQ for both QPs, 8 binds.  Inline refusals are
// the CQ's capacity at work; the ones taken must all be resolved.
int QpDestroyChild(bool kill_me, int ready_fd) {
    Dev d;
    Pair p;
    if (d.fd() < 0 || !Open(d, &p)) return 1;
    std::uint32_t cq = CreateCq(d, p.ad, 1);
    p.c.qp[0] = cq ? rel::CreateQp(d.fd(), p.pd, cq, 0x100) : 0;
    p.c.qp[1] = cq ? rel::CreateQp(d.fd(), p.pd, cq, 0x101) : 0;
    if (!p.c.qp[0] || !p.c.qp[1] || !Handshake(d, &p)) {
        std::fprintf(stderr, "qp-destroy: loopback connection failed\n");
        return 1;
    }
    rel::Mapping buf(8 * kPage);
    ndk_u_mr_register reg{};
    std::uint32_t mr =
        rel::RegisterMr(d, p.pd, buf.addr(), buf.size(),
                        NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_U_MR_FLAG_ALLOW_REMOTE_READ, &reg);
    if (!mr) return 1;
    int taken = 0, refused = 0, other = 0;
    for (unsigned i = 0; i < 8; i++) {
        std::uint32_t mw = CreateMw(d, p.pd);
        if (!mw) return 1;
        if (Bind(d, p.c.qp[0], mw, mr, buf.addr() + i * kPage, kPage) == 0)
            taken++;
        else if (errno == ENOMEM)
            refused++;
        else
            other++;
    }
    std::printf(
        "qp-destroy: 8 binds on a depth-1 CQ: %d taken, %d refused (ENOMEM), %d other; "
        "VmPin %ld kB\n",
        taken, refused, other, t_vmpin_kb());
    // The CQ holds 1 result: the device never gets more.
    int bad = taken != 1 || refused != 7 || other;
    if (kill_me) {
        char c = bad ? 'f' : 'r';
        if (write(ready_fd, &c, 1) != 1) return 1;
        pause();
        return 1;
    }
    double t0 = rel::Now();
    d.Close();
    double dt = rel::Now() - t0;
    std::printf("qp-destroy: close(fd) took %.3f s, VmPin %ld kB\n", dt, t_vmpin_kb());
    return bad || dt > kPrompt || t_vmpin_kb() != 0;
}

int QpDestroy() {
    int fails = 0;
    rel::Counters base = rel::ReadCounters();
    long reports = KernelReports();

    pid_t pid = Spawn([] { return QpDestroyChild(false, -1); });
    if (pid < 0 || !Reap(pid, 60, "qp-destroy close")) fails++;
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("qp-destroy: counters after close(fd)", rel::ReadCounters());
        fails++;
    }

    int pfd[2];
    if (pipe(pfd) != 0) return 1;
    pid = Spawn([&] {
        close(pfd[0]);
        return QpDestroyChild(true, pfd[1]);
    });
    close(pfd[1]);
    char c = 0;
    if (pid > 0 && read(pfd[0], &c, 1) == 1) {
        if (c != 'r') fails++;
        double t0 = rel::Now();
        kill(pid, SIGKILL);
        int st = sec::WaitStatus(pid, kPrompt);
        if (st == -1) {
            sec::DumpTask(pid, "qp-destroy: kill -9 did not end the child");
            fails++;
        } else {
            std::printf("qp-destroy: kill -9 took %.3f s\n", rel::Now() - t0);
        }
    } else {
        fails++;
        if (pid > 0) Reap(pid, kPrompt, "qp-destroy kill");
    }
    close(pfd[0]);
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("qp-destroy: counters after kill -9", rel::ReadCounters());
        fails++;
    }

    // Nothing is left that holds the device.
    double t0 = rel::Now();
    int rc = std::system("timeout 60 rdma link delete rxe0");
    std::printf("qp-destroy: rdma link delete rxe0: rc %d in %.2f s\n", rc, rel::Now() - t0);
    if (rc != 0) fails++;
    if (std::system("rdma link add rxe0 type rxe netdev v0") != 0) {
        std::fprintf(stderr, "qp-destroy: rdma link add rxe0 failed\n");
        fails++;
    }
    if (KernelReports() != reports) {
        std::fprintf(stderr, "qp-destroy: new kernel reports\n");
        fails++;
    }
    return fails ? 1 : 0;
}

// ---- item 3: no callback of a CQ after its close -----------------------------

// Events of @handle queued on @d within @ms (all events are taken).
int EventsOf(Dev& d, std::uint32_t handle, int ms) {
    int n = 0;
    double end = rel::Now() + ms / 1000.0;
    while (rel::Now() < end) {
        pollfd pf{d.fd(), POLLIN, 0};
        if (poll(&pf, 1, 10) <= 0) continue;
        ndk_u_event ev[16];
        ndk_u_event_get g{};
        g.count = 16;
        g.events = reinterpret_cast<std::uintptr_t>(ev);
        if (d.Ioctl(NDK_IOCTL_EVENT_GET, &g) != 0) break;
        for (std::uint32_t i = 0; i < g.count; i++) n += ev[i].handle == handle;
    }
    return n;
}

int NotifyCloseChild() {
    long rounds = rel::Scaled(50, 10);
    int late = 0, bad = 0;
    for (long r = 0; r < rounds && !bad; r++) {
        Dev d;
        Pair p;
        if (d.fd() < 0 || !Open(d, &p)) return 1;
        rel::Conn& c = p.c;
        if (!rel::Connect(d, p.ad, p.lis, p.to, p.pd, p.pd, &c)) {
            std::fprintf(stderr, "notify-close: loopback connection failed\n");
            return 1;
        }
        rel::Mapping buf(2 * kPage);
        ndk_u_mr_register reg{};
        std::uint32_t mr =
            rel::RegisterMr(d, p.pd, buf.addr(), buf.size(), NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &reg);
        // QP A: the active one, kept by its connector.
        ndk_u_cq_arm arm{c.cq[0], NDK_U_CQ_NOTIFY_ANY};
        if (!mr || PostSge(d, c.qp[0], NDK_U_OP_RECEIVE, buf.addr(), kPage, reg.local_token) ||
            d.Ioctl(NDK_IOCTL_CQ_ARM, &arm) || t_handle_close(d.fd(), c.qp[0]) ||
            t_handle_close(d.fd(), c.cq[0])) {
            std::fprintf(stderr, "notify-close: setup: %s\n", std::strerror(errno));
            return 1;
        }
        // The send from B completes A's receive into the closed CQ.
        ndk_u_result res{};
        if (PostSge(d, c.qp[1], NDK_U_OP_SEND, buf.addr() + kPage, 64, reg.local_token) ||
            !d.WaitResult(c.cq[1], &res) || res.status != 0) {
            std::fprintf(stderr, "notify-close: send from B failed\n");
            bad++;
        }
        late += EventsOf(d, c.cq[0], 100);
        bad += late != 0;
    }
    std::printf("notify-close: %ld rounds, %d events of a closed CQ, VmPin %ld kB\n", rounds, late,
                t_vmpin_kb());
    return bad || t_vmpin_kb() != 0;
}

int NotifyClose() {
    rel::Counters base = rel::ReadCounters();
    long reports = KernelReports();
    pid_t pid = Spawn(NotifyCloseChild);
    int fails = pid < 0 || !Reap(pid, 200, "notify-close");
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("notify-close: counters", rel::ReadCounters());
        fails++;
    }
    if (KernelReports() != reports) {
        std::fprintf(stderr, "notify-close: new kernel reports\n");
        fails++;
    }
    return fails ? 1 : 0;
}

// ---- item 4: a closed window's teardown and the file's release ---------------

int BindCloseChild() {
    long rounds = rel::Scaled(200, 40);
    long pinned_after = 0;
    for (long r = 0; r < rounds; r++) {
        Dev d;
        Pair p;
        if (d.fd() < 0 || !Open(d, &p)) return 1;
        rel::Mapping buf(4 * kPage);
        ndk_u_mr_register reg{};
        auto register_mr = [&] {
            return rel::RegisterMr(
                d, p.pd, buf.addr(), buf.size(),
                NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE | NDK_U_MR_FLAG_ALLOW_REMOTE_READ, &reg);
        };
        // Odd rounds: the registration's handle is older than the QPs'.
        std::uint32_t mr = r % 2 ? register_mr() : 0;
        if (!rel::Connect(d, p.ad, p.lis, p.to, p.pd, p.pd, &p.c)) {
            std::fprintf(stderr, "bind-close: loopback connection failed\n");
            return 1;
        }
        if (r % 2 == 0) mr = register_mr();
        std::uint32_t mw = mr ? CreateMw(d, p.pd) : 0;
        ndk_u_mr_create mc{};
        mc.pd_handle = p.pd;
        mc.flags = NDK_U_MR_CREATE_F_FAST_REGISTER;
        std::uint32_t fr = mw ? d.Create(NDK_IOCTL_MR_CREATE, &mc) : 0;
        ndk_u_mr_init_fr init{fr, 4, NDK_U_MR_INIT_FR_F_REMOTE_ACCESS, 0};
        if (!fr || d.Ioctl(NDK_IOCTL_MR_INIT_FR, &init) != 0) {
            std::fprintf(stderr, "bind-close: setup: %s\n", std::strerror(errno));
            return 1;
        }
        ndk_u_qp_post fp{};
        fp.qp_handle = p.c.qp[0];
        fp.op = NDK_U_OP_FAST_REGISTER;
        fp.flags = NDK_U_OP_FLAG_ALLOW_REMOTE_READ;
        fp.object_handle = fr;
        fp.mr_handle = mr;
        fp.address = buf.addr() + 2 * kPage;
        fp.length = 2 * kPage;
        fp.remote_address = 0x10000;
        // Posted, their results left in the CQ, their handles closed.
        if (Bind(d, p.c.qp[0], mw, mr, buf.addr(), 2 * kPage) != 0 || Post(d, &fp) != 0 ||
            t_handle_close(d.fd(), mw) != 0 || t_handle_close(d.fd(), fr) != 0) {
            std::fprintf(stderr, "bind-close: round %ld: %s\n", r, std::strerror(errno));
            return 1;
        }
        d.Close();
        long pin = t_vmpin_kb();
        if (pin != 0) {
            std::fprintf(stderr, "bind-close: round %ld: VmPin %ld kB after close(fd)\n", r, pin);
            pinned_after++;
        }
    }
    std::printf("bind-close: %ld rounds, %ld of them left pages pinned\n", rounds, pinned_after);
    return pinned_after != 0;
}

int BindClose() {
    rel::Counters base = rel::ReadCounters();
    long reports = KernelReports();
    pid_t pid = Spawn(BindCloseChild);
    int fails = pid < 0 || !Reap(pid, 500, "bind-close");
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("bind-close: counters", rel::ReadCounters());
        fails++;
    }
    long now = KernelReports();
    if (now != reports) {
        std::fprintf(stderr, "bind-close: %ld new kernel reports\n", now - reports);
        fails++;
    }
    return fails ? 1 : 0;
}

// ---- item 12: rxe's CQ tasklet and the CQ's destroy -------------------------

int CqTaskletChild() {
    long rounds = rel::Scaled(500, 100);
    rel::Mapping buf(kPage);
    for (long r = 0; r < rounds; r++) {
        Dev d;
        std::uint32_t ad = d.fd() >= 0 ? d.OpenAdapter() : 0;
        std::uint32_t pd = ad ? t_pd_create(d.fd(), ad) : 0;
        std::uint32_t cq = pd ? CreateCq(d, ad, 4) : 0;
        std::uint32_t qp = cq ? rel::CreateQp(d.fd(), pd, cq, 0x100) : 0;
        ndk_u_mem_register m{};
        if (!qp || t_mem_register(d.fd(), pd, buf.get(), kPage, NDK_U_MEM_WRITE, &m) != 0) {
            std::fprintf(stderr, "cq-tasklet: round %ld: setup: %s\n", r, std::strerror(errno));
            return 1;
        }
        ndk_u_cq_arm arm{cq, NDK_U_CQ_NOTIFY_ANY};
        if (PostSge(d, qp, NDK_U_OP_RECEIVE, buf.addr(), kPage, m.local_token) != 0 ||
            d.Ioctl(NDK_IOCTL_CQ_ARM, &arm) != 0) {
            std::fprintf(stderr, "cq-tasklet: round %ld: %s\n", r, std::strerror(errno));
            return 1;
        }
        // Destroy flushes the receive (a completion for the armed CQ),
        // then destroys the CQ.
        d.Close();
    }
    std::printf("cq-tasklet: %ld rounds, VmPin %ld kB\n", rounds, t_vmpin_kb());
    return t_vmpin_kb() != 0;
}

int CqTasklet() {
    rel::Counters base = rel::ReadCounters();
    long reports = KernelReports();
    pid_t pid = Spawn(CqTaskletChild);
    int fails = pid < 0 || !Reap(pid, 500, "cq-tasklet");
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("cq-tasklet: counters", rel::ReadCounters());
        fails++;
    }
    long now = KernelReports();
    if (now != reports) {
        std::fprintf(stderr, "cq-tasklet: %ld new kernel reports\n", now - reports);
        fails++;
    }
    return fails ? 1 : 0;
}

// ---- the CQs' driver fences at a file's release --------------------------

// A file's CQs that were ever armed in the device are fenced against rxe's
// CQ tasklet at their destroy (Documentation/security.md, item 8).  Its
// release destroys every QP first, so one fence covers every CQ; one per
// CQ made a file of 10^5 armed CQs, or a device removal under it, take
// 10^5 fences in turn.
constexpr long kFenceCqs = 200;

int CqFencesChild(int ready_fd) {
    rel::Mapping buf(kPage);
    Dev d;
    std::uint32_t ad = d.fd() >= 0 ? d.OpenAdapter() : 0;
    std::uint32_t pd = ad ? t_pd_create(d.fd(), ad) : 0;
    ndk_u_mem_register m{};
    if (!pd || t_mem_register(d.fd(), pd, buf.get(), kPage, NDK_U_MEM_WRITE, &m) != 0) {
        std::fprintf(stderr, "cq-fences: setup: %s\n", std::strerror(errno));
        return 1;
    }
    for (long i = 0; i < kFenceCqs; i++) {
        std::uint32_t cq = CreateCq(d, ad, 4);
        std::uint32_t qp = cq ? rel::CreateQp(d.fd(), pd, cq, 0x100) : 0;
        ndk_u_cq_arm arm{cq, NDK_U_CQ_NOTIFY_ANY};
        if (!qp || PostSge(d, qp, NDK_U_OP_RECEIVE, buf.addr(), kPage, m.local_token) != 0 ||
            d.Ioctl(NDK_IOCTL_CQ_ARM, &arm) != 0) {
            std::fprintf(stderr, "cq-fences: CQ %ld: %s\n", i, std::strerror(errno));
            return 1;
        }
    }
    // The parent reads the fence count now; the close flushes every
    // receive into its armed CQ, then destroys the CQs.
    char c = 1;
    if (write(ready_fd, &c, 1) != 1 || read(ready_fd, &c, 1) != 1) return 1;
    double t0 = rel::Now();
    d.Close();
    std::printf("cq-fences: close of %ld armed CQs with their QPs: %.3f s\n", kFenceCqs,
                rel::Now() - t0);
    return 0;
}

int CqFences() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
    rel::Counters base = rel::ReadCounters();
    pid_t pid = Spawn([&] {
        close(sv[0]);
        return CqFencesChild(sv[1]);
    });
    close(sv[1]);
    char c = 0;
    int fails = pid < 0 || read(sv[0], &c, 1) != 1;
    long before = t_ndk_counter("cq_fences");
    if (!fails) fails += write(sv[0], &c, 1) != 1;
    fails += !Reap(pid, 300, "cq-fences");
    close(sv[0]);
    long fences = t_ndk_counter("cq_fences") - before;
    std::printf("cq-fences: %ld fences for %ld CQs (debugfs ndk/cq_fences %ld before)\n", fences,
                kFenceCqs, before);
    // At least one: the flushed receives scheduled the tasklets.
    if (before < 0 || fences < 1 || fences > 2) {
        std::fprintf(stderr, "cq-fences: %ld fences, want 1 (2 if another close overlapped)\n",
                     fences);
        fails++;
    }
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("cq-fences: counters", rel::ReadCounters());
        fails++;
    }
    return fails ? 1 : 0;
}

// ---- a device removal under a file of many adapters ---------------------------

// A device's removal calls each adapter's removal callback; the user
// path's released what was below its adapter by sweeping the file's whole
// table, so a file of A adapters and H handles cost A sweeps of A + H
// entries under the file's lock: quadratic in what nobody may open, with
// `rdma link delete` (or a driver's unload) waiting for all of it.  Now
// the first callback of the file releases what every adapter of the
// device holds, and the others find nothing below them.  The bound is
// the stock kernel's (the module before took 29.6 s there, this one about
// 0.3 s) times NDK_VM_TIMEOUT_SCALE: on the debug kernel, a fifth of the
// objects under KASAN and lockdep took 16 s on a slow CI machine.
constexpr double kFanoutBound = 10.0;  // seconds the removal may take

int FanoutChild(int ready_fd, long adapters, long pds) {
    Dev d;
    std::vector<std::uint32_t> ads;
    for (long i = 0; i < adapters; i++) {
        std::uint32_t ad = d.fd() >= 0 ? d.OpenAdapter() : 0;
        if (!ad || !t_pd_create(d.fd(), ad)) {
            std::fprintf(stderr, "removal-fanout: adapter %ld: %s\n", i, std::strerror(errno));
            return 1;
        }
        ads.push_back(ad);
    }
    for (long i = 0; i < pds; i++)
        if (!t_pd_create(d.fd(), ads[i % ads.size()])) {
            std::fprintf(stderr, "removal-fanout: PD %ld: %s\n", i, std::strerror(errno));
            return 1;
        }
    // Held open across the removal; closed once the parent says so.
    char c = 1;
    if (write(ready_fd, &c, 1) != 1 || read(ready_fd, &c, 1) != 1) return 1;
    ndk_u_event ev{};
    if (!d.WaitEvent(NDK_U_EVENT_ADAPTER_REMOVED, ads.back(), &ev)) {
        std::fprintf(stderr, "removal-fanout: no ADAPTER_REMOVED for the last adapter\n");
        return 1;
    }
    d.Close();
    return 0;
}

int RemovalFanout() {
    long adapters = rel::Scaled(3000, 600), pds = rel::Scaled(30000, 6000);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
    rel::Counters base = rel::ReadCounters();
    long reports = KernelReports();
    double t0 = rel::Now();
    pid_t pid = Spawn([&] {
        close(sv[0]);
        return FanoutChild(sv[1], adapters, pds);
    });
    close(sv[1]);
    char c = 0;
    int fails = pid < 0 || read(sv[0], &c, 1) != 1;
    std::printf(
        "removal-fanout: %ld adapters with a PD each and %ld more PDs in one file "
        "(nobody) in %.1f s\n",
        adapters, pds, rel::Now() - t0);
    t0 = rel::Now();
    int rc = std::system("timeout 600 rdma link delete rxe0");
    double took = rel::Now() - t0, bound = kFanoutBound * rel::TimeScale();
    std::printf("removal-fanout: rdma link delete rxe0 under it: rc %d in %.2f s (bound %.0f s)\n",
                rc, took, bound);
    if (rc != 0 || took > bound) fails++;
    if (pid > 0) fails += write(sv[0], &c, 1) != 1;
    fails += !Reap(pid, 300, "removal-fanout");
    close(sv[0]);
    if (std::system("rdma link add rxe0 type rxe netdev v0") != 0) {
        std::fprintf(stderr, "removal-fanout: rdma link add rxe0 failed\n");
        fails++;
    }
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("removal-fanout: counters", rel::ReadCounters());
        fails++;
    }
    if (KernelReports() != reports) {
        std::fprintf(stderr, "removal-fanout: new kernel reports\n");
        fails++;
    }
    return fails ? 1 : 0;
}

// ---- the last close in another process ---------------------------------------

// The release removes the registrations' MMU notifiers, and 6.1's
// mmu_interval_notifier_remove() waits, uninterruptibly, until no
// invalidation of the opener's address space runs: something the opener
// controls (threads invalidating in turn without a gap).  A file passed on
// (SCM_RIGHTS to a daemon that closes what it is sent) or inherited made
// the other process's close wait for the opener that long.  Now such a
// close leaves the teardown to a worker.  debugfs ndk/invalidate_delay_ms
// holds one invalidation open for kForeignHoldMs, as the gapless storm
// would; the foreign close must return well before it ends.
constexpr int kForeignHoldMs = 4000;
constexpr double kForeignBound = 1.0;  // seconds the foreign close may take

bool SetInvalidateDelay(int ms) {
    std::FILE* f = std::fopen("/sys/kernel/debug/ndk/invalidate_delay_ms", "w");
    if (!f) return false;
    bool ok = std::fprintf(f, "%d\n", ms) > 0;
    return (std::fclose(f) == 0) && ok;
}

// The opener: registers a page, forks the holder (which inherits the
// file), closes its own copy, and once the parent armed the delay, holds
// an invalidation of the page open while the holder closes the file, or
// with @by_exit exits holding it: 6.1 puts an exiting process's files
// after its mm is gone (until 2026-12-03 that release, with no mm to
// compare, waited for the opener).
int ForeignOpener(int ctl, bool by_exit) {
    const char* how = by_exit ? "exit" : "close";
    rel::Mapping buf(kPage);
    Dev d;
    std::uint32_t ad = d.fd() >= 0 ? d.OpenAdapter() : 0;
    std::uint32_t pd = ad ? t_pd_create(d.fd(), ad) : 0;
    ndk_u_mem_register m{};
    int go[2];
    if (!pd || t_mem_register(d.fd(), pd, buf.get(), kPage, NDK_U_MEM_WRITE, &m) != 0 ||
        pipe(go) != 0) {
        std::fprintf(stderr, "foreign-release: setup: %s\n", std::strerror(errno));
        return 1;
    }
    std::fflush(stdout);
    pid_t holder = fork();
    if (holder == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1) _exit(1);
        // The file's last reference: its close, or else the exit's.
        if (!by_exit) close(d.fd());
        _exit(0);
    }
    close(go[0]);
    d.Close();  // the holder's copy is the last
    char c = 1;
    if (holder < 0 || write(ctl, &c, 1) != 1 || read(ctl, &c, 1) != 1) return 1;
    // The parent armed the delay: hold an invalidation of the page open.
    std::thread inval([&] { madvise(buf.get(), kPage, MADV_DONTNEED); });
    usleep(kForeignHoldMs * 1000 / 8);
    // From the go to the holder's end: its close and exit, or its exit.
    double t0 = rel::Now();
    int fails = write(go[1], &c, 1) != 1;
    int st = sec::WaitStatus(holder, 60);
    double took = rel::Now() - t0;
    inval.join();
    std::printf(
        "foreign-release: the holder's %s (the file's last reference) took %.3f s (bound "
        "%.1f s, an invalidation held %d ms)\n",
        how, took, kForeignBound, kForeignHoldMs);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || took >= kForeignBound) {
        std::fprintf(stderr, "foreign-release: the holder's %s: status %#x\n", how, st);
        fails++;
    }
    return fails ? 1 : 0;
}

int ForeignRound(bool by_exit) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
    rel::Counters base = rel::ReadCounters();
    long reports = KernelReports();
    pid_t pid = Spawn([&] {
        close(sv[0]);
        return ForeignOpener(sv[1], by_exit);
    });
    close(sv[1]);
    char c = 0;
    int fails = pid < 0 || read(sv[0], &c, 1) != 1;
    if (!fails && !SetInvalidateDelay(kForeignHoldMs)) {
        std::fprintf(stderr, "foreign-release: debugfs ndk/invalidate_delay_ms: %s\n",
                     std::strerror(errno));
        fails++;
    }
    if (pid > 0) fails += write(sv[0], &c, 1) != 1;
    fails += !Reap(pid, 60, "foreign-release");
    close(sv[0]);
    if (!SetInvalidateDelay(0)) fails++;
    // The worker ends the teardown once the invalidation is over.
    if (!rel::WaitCounters(base, kPrompt)) {
        rel::PrintCounters("foreign-release: counters", rel::ReadCounters());
        fails++;
    }
    if (KernelReports() != reports) {
        std::fprintf(stderr, "foreign-release: new kernel reports\n");
        fails++;
    }
    return fails ? 1 : 0;
}

int ForeignRelease() {
    int fails = 0;
    for (bool by_exit : {false, true}) fails += ForeignRound(by_exit);
    return fails ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (argc != 2) {
        std::fprintf(stderr,
                     "usage: %s qp-destroy|notify-close|bind-close|cq-tasklet|cq-fences|"
                     "removal-fanout|foreign-release\n",
                     argv[0]);
        return kTestFail;
    }
    if (geteuid() != 0 || rel::ReadCounters().objects < 0) {
        std::fprintf(stderr, "needs root and ndk.ko's debugfs counters\n");
        return kTestFail;
    }
    std::string mode = argv[1];
    int rc = mode == "qp-destroy"        ? QpDestroy()
             : mode == "notify-close"    ? NotifyClose()
             : mode == "bind-close"      ? BindClose()
             : mode == "cq-tasklet"      ? CqTasklet()
             : mode == "cq-fences"       ? CqFences()
             : mode == "removal-fanout"  ? RemovalFanout()
             : mode == "foreign-release" ? ForeignRelease()
                                         : 1;
    if (rc) t_failures++;
    return t_result(("sec-lifetimes " + mode).c_str());
}
