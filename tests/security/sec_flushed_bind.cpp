// SPDX-License-Identifier: GPL-2.0
// sec-flushed-bind: a bind whose completion was flushed may have run, so
// its key must die before the window lets its parent MR go.
//
// As nobody, on two loopback connections whose active QPs share PD X:
// a send on connection 1 that its peer never takes (no receive: RNR,
// retried for good) holds the completions of the requests behind it, and
// a bind of a window (remote write) over an MR of X follows it.  rxe runs
// the bind's REG_MR when its requester reaches it, ahead of the send's
// acknowledgement; the disconnect then flushes both, and the bind is
// reported CANCELLED.  Then a write through the window's token from
// connection 2 must fail and leave the MR's buffer untouched.  Before the
// fix the window was taken as free at once (its parent released: an MR
// the caller may deregister, and whose pages go back to the kernel) while
// the key went on writing into them: here the write succeeded.
//
// A fast-register of an MR of X, flushed with them, gets a new key too
// (its ib_mr is replaced); the MR must stay usable under its new local
// token: fast-registered again on connection 2, a send naming that token
// must be posted and complete.  Before the fix the user path still filed
// the MR under its old key and refused the token (EACCES).
#include "sec_common.hpp"

namespace {

constexpr std::uint32_t kLen = 4096;

int Run() {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    std::uint32_t x = ad ? t_pd_create(d.fd(), ad) : 0;
    std::uint32_t y = x ? t_pd_create(d.fd(), ad) : 0;
    sockaddr_in to{};
    std::uint32_t lis = y ? rel::Listen(d, ad, &to) : 0;
    rel::Conn c1, c2, c3;
    T_CHECK(lis && rel::Connect(d, ad, lis, to, x, y, &c1) &&
            rel::Connect(d, ad, lis, to, x, y, &c2) && rel::Connect(d, ad, lis, to, x, y, &c3));
    rel::Mapping parent_buf(kLen), src_buf(kLen);
    ndk_u_mr_register parent{}, src{};
    std::uint32_t pmr =
        rel::RegisterMr(d, x, parent_buf.addr(), kLen, NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &parent);
    std::uint32_t smr = rel::RegisterMr(d, y, src_buf.addr(), kLen, 0, &src);
    std::uint32_t mw = 0, fr = 0;
    T_CHECK(pmr && smr && sec::WindowAndFrMr(d, x, 0, &mw, &fr));
    if (t_failures) return kTestFail;
    std::memset(src_buf.get(), 0x5a, kLen);

    // A send its peer never takes, then the bind behind it.
    ndk_u_qp_post send{};
    send.qp_handle = c1.qp[0];
    send.op = NDK_U_OP_SEND;
    send.request_context = 1;
    T_CHECK(sec::PostErrno(d, &send) == 0);
    ndk_u_qp_post bind = sec::RegPost(c1.qp[0], NDK_U_OP_BIND, 2, mw, pmr, parent_buf.addr(), kLen,
                                      NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE);
    T_CHECK(d.Ioctl(NDK_IOCTL_QP_POST, &bind) == 0);
    std::uint32_t token = bind.token;
    ndk_u_qp_post fp =
        sec::RegPost(c1.qp[0], NDK_U_OP_FAST_REGISTER, 4, fr, pmr, parent_buf.addr(), kLen, 0);
    T_CHECK(sec::PostErrno(d, &fp) == 0);
    usleep(300000);  // the REG_MR runs (retries of the send come and go)
    ndk_u_connector_request dc{};
    dc.connector_handle = c1.con;
    T_CHECK(d.Ioctl(NDK_IOCTL_DISCONNECT, &dc) == 0);
    ndk_u_result r{};
    int got = 0;
    std::int32_t bind_status = 0, fr_status = 0;
    while (got < 3 && d.WaitResult(c1.cq[0], &r, 10000)) {
        got++;
        if (r.request_context == 2) bind_status = r.status;
        if (r.request_context == 4) fr_status = r.status;
    }
    std::printf("the send, the bind and the fast-register flushed: %d results, statuses %#x %#x\n",
                got, static_cast<unsigned>(bind_status), static_cast<unsigned>(fr_status));
    T_CHECK(got == 3 && bind_status == static_cast<std::int32_t>(NDK_U_STATUS_CANCELLED) &&
            fr_status == static_cast<std::int32_t>(NDK_U_STATUS_CANCELLED));
    usleep(300000);  // ndk.ko kills the key on its workqueue

    // A write through the window's token from connection 2 (its active QP
    // is in X, so the write reaches X's keys).
    T_CHECK(sec::WriteRefused(d, c2, 1, src_buf.addr(), src.local_token, parent_buf.addr(), token,
                              parent_buf.get(), "the flushed bind's token"));

    // The fast-register MR, fast-registered again on connection 3 (the
    // refused write broke connection 2), sends from the parent's buffer
    // under its new local token.
    std::memset(parent_buf.get(), 0x3c, 64);
    fp.qp_handle = c3.qp[0];
    fp.request_context = 5;
    fp.token = 0;  // out only
    int rc = sec::PostErrno(d, &fp);
    std::int32_t fstatus = -1;
    if (rc == 0 && d.WaitResult(c3.cq[0], &r, 10000)) fstatus = r.status;
    ndk_u_token_query tq{fr, 0, 0, 0};
    T_CHECK(rc == 0 && fstatus == 0 && d.Ioctl(NDK_IOCTL_TOKEN_QUERY, &tq) == 0);
    rel::Mapping sink_buf(kLen);
    ndk_u_mr_register sink{};
    std::uint32_t kmr =
        rel::RegisterMr(d, y, sink_buf.addr(), kLen, NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &sink);
    ndk_u_sge rsge{sink_buf.addr(), 64, sink.local_token};
    ndk_u_qp_post recv{};
    recv.qp_handle = c3.qp[1];
    recv.op = NDK_U_OP_RECEIVE;
    recv.nsge = 1;
    recv.sgl = reinterpret_cast<std::uintptr_t>(&rsge);
    T_CHECK(kmr && sec::PostErrno(d, &recv) == 0);
    ndk_u_sge ssge{parent_buf.addr(), 64, tq.local_token};
    ndk_u_qp_post s{};
    s.qp_handle = c3.qp[0];
    s.op = NDK_U_OP_SEND;
    s.nsge = 1;
    s.sgl = reinterpret_cast<std::uintptr_t>(&ssge);
    s.request_context = 6;
    rc = sec::PostErrno(d, &s);
    std::int32_t sstatus = -1;
    if (rc == 0 && d.WaitResult(c3.cq[0], &r, 10000)) sstatus = r.status;
    std::printf(
        "a send under the fast-register MR's new local token %#x: post %s, status %#x, "
        "data %s\n",
        tq.local_token, rc ? strerrorname_np(rc) : "ok", static_cast<unsigned>(sstatus),
        sink_buf.get()[0] == 0x3c ? "received" : "not received");
    T_CHECK(rc == 0 && sstatus == 0 && sink_buf.get()[0] == 0x3c);
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    T_CHECK(sec::AsNobody("flushed-bind", Run) == kTestPass);
    return t_result("sec-flushed-bind");
}
