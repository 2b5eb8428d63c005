// SPDX-License-Identifier: GPL-2.0
// Guest test: the NDK object commands of /dev/ndk through raw ioctls, over
// an rxe loopback connection on one file: listener, connector, accept,
// events through poll(), CQ results, a window bound and a fast-registered
// MR over registered user memory, RDMA write and read through their
// tokens, SGE ownership checks, deregister refused while memory is in
// use, an access outside the window refused, and every object gone after
// close and after kill -9 in the middle of it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <csignal>

#include <deque>
#include <vector>

#include "uobj_common.hpp"

namespace {

constexpr std::uint32_t kStatusSuccess = 0;

int g_fd = -1;
std::deque<ndk_u_event> g_events;

// Wait up to 10 s for an event matching (type, handle); others are kept.
bool wait_event(std::uint32_t type, std::uint32_t handle, ndk_u_event* out) {
    for (int round = 0; round < 100; round++) {
        for (auto it = g_events.begin(); it != g_events.end(); ++it) {
            if (it->type == type && it->handle == handle) {
                *out = *it;
                g_events.erase(it);
                return true;
            }
        }
        pollfd p{g_fd, POLLIN, 0};
        if (poll(&p, 1, 100) < 0) return false;
        ndk_u_event ev[8];
        ndk_u_event_get g{};
        g.count = 8;
        g.events = reinterpret_cast<std::uintptr_t>(ev);
        if (ioctl(g_fd, NDK_IOCTL_EVENT_GET, &g) != 0) return false;
        for (std::uint32_t i = 0; i < g.count; i++) g_events.push_back(ev[i]);
    }
    std::fprintf(stderr, "no event type %u handle %u\n", type, handle);
    return false;
}

// One result of CQ @cq, waiting with CQ_ARM and poll(); false on timeout.
bool wait_result(std::uint32_t cq, ndk_u_result* out) {
    for (int round = 0; round < 100; round++) {
        ndk_u_cq_poll p{};
        p.handle = cq;
        p.count = 1;
        p.results = reinterpret_cast<std::uintptr_t>(out);
        if (ioctl(g_fd, NDK_IOCTL_CQ_POLL, &p) != 0) {
            perror("CQ_POLL");
            return false;
        }
        if (p.count == 1) return true;
        ndk_u_cq_arm a{};
        a.handle = cq;
        a.type = NDK_U_CQ_NOTIFY_ANY;
        if (ioctl(g_fd, NDK_IOCTL_CQ_ARM, &a) != 0) {
            perror("CQ_ARM");
            return false;
        }
        p.count = 1;  // the kernel wrote 0 back
        if (ioctl(g_fd, NDK_IOCTL_CQ_POLL, &p) != 0) {
            perror("CQ_POLL");
            return false;
        }
        if (p.count == 1) return true;
        ndk_u_event ev;
        wait_event(NDK_U_EVENT_CQ, cq, &ev);
    }
    std::fprintf(stderr, "no result on CQ %u\n", cq);
    return false;
}

std::uint32_t create(unsigned long cmd, void* arg, std::uint32_t* handle) {
    return ioctl(g_fd, cmd, arg) == 0 ? *handle : 0;
}

int post(ndk_u_qp_post* p) { return ioctl(g_fd, NDK_IOCTL_QP_POST, p); }

ndk_u_qp_post rdma(std::uint32_t qp, std::uint32_t op, const ndk_u_sge* sge, std::uint64_t raddr,
                   std::uint32_t rtoken, std::uint64_t ctx) {
    ndk_u_qp_post p{};
    p.qp_handle = qp;
    p.op = op;
    p.nsge = 1;
    p.sgl = reinterpret_cast<std::uintptr_t>(sge);
    p.remote_address = raddr;
    p.remote_token = rtoken;
    p.request_context = ctx;
    return p;
}

// Post @p and expect one result with @status on @cq.
void expect_result(std::uint32_t cq, ndk_u_qp_post p, std::int32_t status, std::uint32_t type) {
    T_CHECK(post(&p) == 0);
    ndk_u_result r{};
    T_CHECK(wait_result(cq, &r));
    T_CHECK(r.request_context == p.request_context);
    T_CHECK(r.type == type);
    if (r.status != status)
        std::fprintf(stderr, "op %u: status %#x, expected %#x\n", p.op, r.status, status);
    T_CHECK(r.status == status);
}

}  // namespace

// The whole scenario; with @kill_midway the process kills itself with
// SIGKILL while a connection, a bound window and a fast-registered MR are
// live.
void scenario(bool kill_midway) {
    constexpr std::size_t kLen = 16 * 4096;
    g_fd = t_open_ndk();
    long id = t_first_adapter(g_fd);
    if (g_fd < 0 || id < 0) {
        T_CHECK(!"adapter");
        return;
    }
    ndk_u_query_info qi{};
    T_CHECK(ioctl(g_fd, NDK_IOCTL_QUERY_INFO, &qi) == 0);
    T_CHECK(qi.features & NDK_U_FEATURE_VERBS);
    std::uint32_t ad = t_adapter_open(g_fd, id);
    std::uint32_t spd = t_pd_create(g_fd, ad), cpd = t_pd_create(g_fd, ad);
    T_CHECK(ad && spd && cpd);

    ndk_u_cq_create cc{};
    cc.adapter_handle = ad;
    cc.depth = 64;
    cc.context = 0xc0;
    std::uint32_t scq = create(NDK_IOCTL_CQ_CREATE, &cc, &cc.handle);
    cc.handle = 0;
    std::uint32_t ccq = create(NDK_IOCTL_CQ_CREATE, &cc, &cc.handle);
    T_CHECK(scq && ccq);
    cc.handle = 0;
    cc.depth = 0;
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_CQ_CREATE, &cc), EINVAL);

    ndk_u_qp_create qc{};
    qc.receive_queue_depth = qc.initiator_queue_depth = 16;
    qc.max_receive_request_sge = qc.max_initiator_request_sge = 2;
    qc.pd_handle = spd;
    qc.receive_cq_handle = qc.initiator_cq_handle = scq;
    qc.context = 0x5e;
    std::uint32_t sqp = create(NDK_IOCTL_QP_CREATE, &qc, &qc.handle);
    qc.handle = 0;
    qc.pd_handle = cpd;
    qc.receive_cq_handle = qc.initiator_cq_handle = ccq;
    qc.context = 0xc1;
    std::uint32_t cqp = create(NDK_IOCTL_QP_CREATE, &qc, &qc.handle);
    T_CHECK(sqp && cqp);
    // A CQ in use by a QP cannot be closed.
    T_EXPECT_ERRNO(t_handle_close(g_fd, scq), EBUSY);

    // Not connected yet: WSAENOTCONN's errno (STATUS_CONNECTION_INVALID).
    {
        ndk_u_qp_post early{};
        early.qp_handle = cqp;
        early.op = NDK_U_OP_SEND;
        T_EXPECT_ERRNO(post(&early), ENOTCONN);
    }

    // Connection: listener on 10.99.0.1, any port.
    ndk_u_listener_create lc{};
    lc.adapter_handle = ad;
    lc.context = 0x11;
    std::uint32_t lis = create(NDK_IOCTL_LISTENER_CREATE, &lc, &lc.handle);
    ndk_u_listen ln{};
    ln.listener_handle = lis;
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    inet_pton(AF_INET, "10.99.0.1", &sin.sin_addr);
    std::memcpy(ln.address, &sin, sizeof(sin));
    T_CHECK(ioctl(g_fd, NDK_IOCTL_LISTEN, &ln) == 0);
    std::memcpy(&sin, ln.address, sizeof(sin));
    T_CHECK(sin.sin_port != 0);

    ndk_u_connector_create ccr{};
    ccr.adapter_handle = ad;
    ccr.context = 0x22;
    std::uint32_t con = create(NDK_IOCTL_CONNECTOR_CREATE, &ccr, &ccr.handle);
    ndk_u_connect cn{};
    cn.connector_handle = con;
    cn.qp_handle = cqp;
    cn.inbound_read_limit = cn.outbound_read_limit = 1;
    cn.request_context = 0xa1;
    const char hello[] = "hello";
    cn.private_data = reinterpret_cast<std::uintptr_t>(hello);
    cn.private_data_length = sizeof(hello);
    std::memcpy(cn.dest_address, &sin, sizeof(sin));
    T_CHECK(ioctl(g_fd, NDK_IOCTL_CONNECT, &cn) == 0);
    // EVENT_GET into a read-only buffer fails EFAULT and takes nothing:
    // the connection request stays queued (before 2026-12-03 it became a
    // connector handle the caller never learned).
    {
        pollfd p{g_fd, POLLIN, 0};
        T_CHECK(poll(&p, 1, 10000) == 1);
        void* ro = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        T_CHECK(ro != MAP_FAILED);
        ndk_u_event_get g{};
        g.count = 1;
        g.events = reinterpret_cast<std::uintptr_t>(ro);
        T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_EVENT_GET, &g), EFAULT);
        munmap(ro, 4096);
    }
    ndk_u_event ev{};
    T_CHECK(wait_event(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev));
    T_CHECK(ev.context == 0x11);
    std::uint32_t acc = ev.object;
    T_CHECK(acc != 0);
    ndk_u_connector_query cq{};
    char pdata[64] = {};
    cq.connector_handle = acc;
    cq.private_data = reinterpret_cast<std::uintptr_t>(pdata);
    cq.private_data_length = sizeof(pdata);
    // Out-only fields must come in as zeros (uapi.md).
    cq.peer_address[31] = 1;
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_CONNECTOR_QUERY, &cq), EINVAL);
    cq.peer_address[31] = 0;
    cq.local_address[0] = 2;
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_CONNECTOR_QUERY, &cq), EINVAL);
    cq.local_address[0] = 0;
    T_CHECK(ioctl(g_fd, NDK_IOCTL_CONNECTOR_QUERY, &cq) == 0);
    T_CHECK(std::memcmp(pdata, hello, sizeof(hello)) == 0);
    ndk_u_accept ac{};
    ac.connector_handle = acc;
    ac.qp_handle = sqp;
    ac.inbound_read_limit = ac.outbound_read_limit = 1;
    ac.request_context = 0xa2;
    T_CHECK(ioctl(g_fd, NDK_IOCTL_ACCEPT, &ac) == 0);
    T_CHECK(wait_event(NDK_U_EVENT_REQUEST, con, &ev));
    T_CHECK(ev.object == NDK_U_REQ_CONNECT && ev.status == 0 && ev.context == 0xa1);
    ndk_u_connector_request cr{};
    cr.connector_handle = con;
    cr.request_context = 0xa3;
    T_CHECK(ioctl(g_fd, NDK_IOCTL_COMPLETE_CONNECT, &cr) == 0);
    T_CHECK(wait_event(NDK_U_EVENT_REQUEST, con, &ev));
    T_CHECK(ev.object == NDK_U_REQ_COMPLETE_CONNECT && ev.status == 0);
    T_CHECK(wait_event(NDK_U_EVENT_REQUEST, acc, &ev));
    T_CHECK(ev.object == NDK_U_REQ_ACCEPT && ev.status == 0 && ev.context == 0xa2);

    // Server memory: an MR with local write, a window and a fast-register MR.
    auto* sbuf = static_cast<unsigned char*>(
        mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    auto* cbuf = static_cast<unsigned char*>(
        mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    std::memset(sbuf, 0, kLen);
    ndk_u_mr_create mc{};
    mc.pd_handle = spd;
    std::uint32_t smr = create(NDK_IOCTL_MR_CREATE, &mc, &mc.handle);
    ndk_u_mr_register mr{};
    mr.handle = smr;
    mr.flags = NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE;
    mr.address = reinterpret_cast<std::uintptr_t>(sbuf);
    mr.length = kLen;
    T_CHECK(ioctl(g_fd, NDK_IOCTL_MR_REGISTER, &mr) == 0);
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_MR_REGISTER, &mr), EINVAL);  // tokens set in
    mr.local_token = mr.remote_token = 0;
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_MR_REGISTER, &mr), EBADRQC);  // registered

    ndk_u_mw_create wc{};
    wc.pd_handle = spd;
    std::uint32_t mw = create(NDK_IOCTL_MW_CREATE, &wc, &wc.handle);
    ndk_u_qp_post b{};
    b.qp_handle = sqp;
    b.op = NDK_U_OP_BIND;
    b.object_handle = mw;
    b.mr_handle = smr;
    b.address = mr.address + 4096;
    b.length = 8192;
    b.flags = NDK_U_OP_FLAG_ALLOW_REMOTE_READ | NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE;
    b.request_context = 0xb1;
    T_CHECK(post(&b) == 0);
    std::uint32_t wtoken = b.token;
    ndk_u_result r{};
    T_CHECK(wait_result(scq, &r) && r.status == 0 && r.type == NDK_U_OPERATION_BIND);
    T_CHECK(r.qp_context == 0x5e);
    // Memory in use by a window: not deregistered.
    ndk_u_mr_deregister md{};
    md.handle = smr;
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_MR_DEREGISTER, &md), EBUSY);
    T_EXPECT_ERRNO(t_handle_close(g_fd, smr), EBUSY);

    mc.handle = 0;
    mc.flags = NDK_U_MR_CREATE_F_FAST_REGISTER;
    std::uint32_t fmr = create(NDK_IOCTL_MR_CREATE, &mc, &mc.handle);
    ndk_u_mr_init_fr fi{};
    fi.handle = fmr;
    // At most FRMRPageCount pages on /dev/ndk (uapi.md), whatever the device maps.
    ndk_u_adapter_info ai{};
    ai.handle = ad;
    T_CHECK(ioctl(g_fd, NDK_IOCTL_ADAPTER_INFO, &ai) == 0 && ai.frmr_page_count >= 16);
    fi.adapter_page_count = ai.frmr_page_count + 1;
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_MR_INIT_FR, &fi), ERANGE);
    fi.adapter_page_count = 4;
    fi.flags = NDK_U_MR_INIT_FR_F_REMOTE_ACCESS;
    T_CHECK(ioctl(g_fd, NDK_IOCTL_MR_INIT_FR, &fi) == 0);
    ndk_u_qp_post f{};
    f.qp_handle = sqp;
    f.op = NDK_U_OP_FAST_REGISTER;
    f.object_handle = fmr;
    f.mr_handle = smr;
    f.address = mr.address + 8192;
    f.length = 3 * 4096;
    f.remote_address = f.address;
    f.flags = NDK_U_OP_FLAG_ALLOW_REMOTE_READ;
    f.request_context = 0xf1;
    T_CHECK(post(&f) == 0);
    std::uint32_t ftoken = f.token;
    T_CHECK(wait_result(scq, &r) && r.status == 0 && r.type == NDK_U_OPERATION_FAST_REGISTER);
    T_CHECK(ftoken != 0 && ftoken != wtoken);
    if (kill_midway) kill(getpid(), SIGKILL);

    // Client memory: a WSP registration.
    ndk_u_mem_register cm{};
    T_CHECK(t_mem_register(g_fd, cpd, cbuf, kLen, NDK_U_MEM_READWRITE, &cm) == 0);
    for (std::size_t i = 0; i < kLen; i++) cbuf[i] = static_cast<unsigned char>(i * 7 + 3);

    // RDMA write into the window, then read it back through the FR MR.
    ndk_u_sge sge{reinterpret_cast<std::uintptr_t>(cbuf), 8192, cm.local_token};
    expect_result(ccq, rdma(cqp, NDK_U_OP_WRITE, &sge, b.address, wtoken, 1), kStatusSuccess,
                  NDK_U_OPERATION_WRITE);
    T_CHECK(std::memcmp(sbuf + 4096, cbuf, 8192) == 0);
    T_CHECK(sbuf[4095] == 0 && sbuf[4096 + 8192] == 0);
    ndk_u_sge rsge{reinterpret_cast<std::uintptr_t>(cbuf + 32768), 4096, cm.local_token};
    expect_result(ccq, rdma(cqp, NDK_U_OP_READ, &rsge, f.address, ftoken, 2), kStatusSuccess,
                  NDK_U_OPERATION_READ);
    T_CHECK(std::memcmp(cbuf + 32768, sbuf + 8192, 4096) == 0);

    // WSPDeregisterMemory while a window is bound in the registration.
    {
        ndk_u_mw_create cw{};
        cw.pd_handle = cpd;
        std::uint32_t cmw = create(NDK_IOCTL_MW_CREATE, &cw, &cw.handle);
        ndk_u_qp_post cb{};
        cb.qp_handle = cqp;
        cb.op = NDK_U_OP_BIND;
        cb.object_handle = cmw;
        cb.mr_handle = cm.handle;
        cb.address = reinterpret_cast<std::uintptr_t>(cbuf);
        cb.length = 4096;
        cb.flags = NDK_U_OP_FLAG_ALLOW_REMOTE_READ;
        cb.request_context = 0xb2;
        T_CHECK(post(&cb) == 0);
        T_CHECK(wait_result(ccq, &r) && r.status == 0);
        std::uint32_t left = 99;
        T_EXPECT_ERRNO(t_mem_deregister(g_fd, cm.handle, &left), EBUSY);
        ndk_u_qp_post ci{};
        ci.qp_handle = cqp;
        ci.op = NDK_U_OP_INVALIDATE;
        ci.object_handle = cmw;
        expect_result(ccq, ci, kStatusSuccess, NDK_U_OPERATION_INVALIDATE);
        // One more reference, dropped: the registration stays usable.
        ndk_u_mem_register again{};
        T_CHECK(t_mem_register(g_fd, cpd, cbuf, kLen, NDK_U_MEM_READWRITE, &again) == 0);
        T_CHECK(again.handle == cm.handle && again.references == 2);
        T_CHECK(t_mem_deregister(g_fd, cm.handle, &left) == 0 && left == 1);
        T_CHECK(t_handle_close(g_fd, cmw) == 0);
    }

    // SGE checks: another PD's token, a token nobody has, a stale key byte,
    // bytes outside.
    ndk_u_sge bad{reinterpret_cast<std::uintptr_t>(sbuf), 64, mr.local_token};
    auto p = rdma(cqp, NDK_U_OP_WRITE, &bad, b.address, wtoken, 3);
    T_EXPECT_ERRNO(post(&p), EACCES);
    bad = {reinterpret_cast<std::uintptr_t>(cbuf), 64, 0};
    T_EXPECT_ERRNO(post(&p), EACCES);
    // The registration's key index with another key byte (a stale token).
    bad = {reinterpret_cast<std::uintptr_t>(cbuf), 64, cm.local_token ^ 1};
    T_EXPECT_ERRNO(post(&p), EACCES);
    bad = {reinterpret_cast<std::uintptr_t>(cbuf) + kLen - 8, 64, cm.local_token};
    T_EXPECT_ERRNO(post(&p), EFAULT);
    bad = {reinterpret_cast<std::uintptr_t>(cbuf) - 8, 64, cm.local_token};
    T_EXPECT_ERRNO(post(&p), EFAULT);
    // Fields the operation does not use, unknown operations, too many SGEs.
    p = rdma(cqp, NDK_U_OP_WRITE, &sge, b.address, wtoken, 3);
    p.mr_handle = smr;
    T_EXPECT_ERRNO(post(&p), EINVAL);
    p.mr_handle = 0;
    p.op = 99;
    T_EXPECT_ERRNO(post(&p), EINVAL);
    p.op = NDK_U_OP_WRITE;
    p.nsge = NDK_U_SGE_MAX + 1;
    T_EXPECT_ERRNO(post(&p), EINVAL);
    p.nsge = 1;
    p.token = 1;
    T_EXPECT_ERRNO(post(&p), EINVAL);
    // Fast-register of a registered MR: refused inline.
    f.token = 0;
    T_EXPECT_ERRNO(post(&f), EBADRQC);

    // Invalidate the FR MR and the window; then the MR can go.
    ndk_u_qp_post inv{};
    inv.qp_handle = sqp;
    inv.op = NDK_U_OP_INVALIDATE;
    inv.object_handle = fmr;
    inv.request_context = 0x1f;
    expect_result(scq, inv, kStatusSuccess, NDK_U_OPERATION_INVALIDATE);
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_MR_DEREGISTER, &md), EBUSY);  // window left
    inv.object_handle = mw;
    expect_result(scq, inv, kStatusSuccess, NDK_U_OPERATION_INVALIDATE);
    T_EXPECT_ERRNO(post(&inv), EBADRQC);  // not bound any more

    // The old window token no longer works: the connection breaks.
    expect_result(ccq, rdma(cqp, NDK_U_OP_WRITE, &sge, b.address, wtoken, 4),
                  static_cast<std::int32_t>(0xC000013D) /* REMOTE_RESOURCES: remote access error */,
                  NDK_U_OPERATION_WRITE);
    T_CHECK(ioctl(g_fd, NDK_IOCTL_MR_DEREGISTER, &md) == 0);
    T_EXPECT_ERRNO(ioctl(g_fd, NDK_IOCTL_MR_DEREGISTER, &md), EBADRQC);

    close(g_fd);
    T_CHECK(t_ndk_counter("user_objects") == 0);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);
    T_CHECK(t_vmpin_kb() == 0);
}

int main() {
    pid_t pid = fork();
    if (pid == 0) {
        scenario(true);
        _exit(kTestFail);  // not reached unless it failed before the kill
    }
    int st = 0;
    T_CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    T_CHECK(t_ndk_counter("user_objects") == 0);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);
    scenario(false);
    return t_result("uverbs");
}
