// SPDX-License-Identifier: GPL-2.0
// sec-kill-isolation: one caller's key kills do not hold up another's.
//
// A window over user memory is fenced: each invalidation kills its key (a
// new ib_mr, the old one deregistered) on a work item, and the window's
// next bind waits for that kill (ndk_fr_settle(), with its file's lock
// held).  The kills were one queue for the whole module, so a caller who
// invalidated many windows at once made every other caller's next bind
// wait behind all of them (Documentation/security.md).  Each PD has its
// own queue now.
//
// Run with debugfs ndk/kill_delay_ms at 20 (each kill 20 ms).  As nobody:
// file H binds kWindows windows and invalidates them all, which queues
// kWindows kills (2 s of work); file V, with a PD of its own, then
// invalidates its one window and binds it again, timed; last, H binds its
// last window again, which waits for the end of its own queue.  V's bind
// must take under a quarter of H's.  The module before: V's bind waited
// for H's whole queue.
#include <algorithm>
#include <vector>

#include "sec_common.hpp"

namespace {

constexpr std::uint32_t kLen = 4096;
constexpr int kWindows = 100;
constexpr int kBatch = 16;  // rel::CreateQp's initiator depth

struct Side {
    rel::Dev d;
    rel::Conn c;
    rel::Mapping buf{kLen};
    std::uint32_t mr = 0;
    std::vector<std::uint32_t> mws;

    bool Open(int windows) {
        std::uint32_t ad = d.OpenAdapter();
        std::uint32_t x = ad ? t_pd_create(d.fd(), ad) : 0;
        std::uint32_t y = x ? t_pd_create(d.fd(), ad) : 0;
        sockaddr_in to{};
        std::uint32_t lis = y ? rel::Listen(d, ad, &to) : 0;
        ndk_u_mr_register reg{};
        if (!lis || !rel::Connect(d, ad, lis, to, x, y, &c)) return false;
        mr = rel::RegisterMr(d, x, buf.addr(), kLen, NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &reg);
        for (int i = 0; mr && i < windows; i++) {
            ndk_u_mw_create mc{};
            mc.pd_handle = x;
            std::uint32_t mw = d.Create(NDK_IOCTL_MW_CREATE, &mc);
            if (!mw) return false;
            mws.push_back(mw);
        }
        return mr != 0;
    }

    // A bind of window @j over the whole buffer, or its invalidation.
    ndk_u_qp_post Request(std::uint32_t op, std::size_t j) const {
        if (op == NDK_U_OP_BIND)
            return sec::RegPost(c.qp[0], op, j + 1, mws[j], mr, buf.addr(), kLen,
                                NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE);
        ndk_u_qp_post p{};
        p.qp_handle = c.qp[0];
        p.op = op;
        p.object_handle = mws[j];
        p.request_context = j + 1;
        return p;
    }

    // Post @op on windows [first, first + n) and wait for every result.
    bool Run(std::uint32_t op, std::size_t first, std::size_t n) {
        for (std::size_t i = first; i < first + n; i += kBatch) {
            std::size_t k = std::min<std::size_t>(kBatch, first + n - i);
            for (std::size_t j = i; j < i + k; j++) {
                ndk_u_qp_post p = Request(op, j);
                int rc = sec::PostErrno(d, &p);
                if (rc) {
                    std::printf("op %u on window %zu: %s\n", op, j, strerrorname_np(rc));
                    return false;
                }
            }
            for (std::size_t j = 0; j < k; j++) {
                ndk_u_result r{};
                if (!d.WaitResult(c.cq[0], &r, 20000) || r.status) {
                    std::printf("op %u: no result or status %#x\n", op,
                                static_cast<unsigned>(r.status));
                    return false;
                }
            }
        }
        return true;
    }
};

int Run() {
    Side h, v;
    T_CHECK(h.Open(kWindows) && v.Open(1));
    T_CHECK(h.Run(NDK_U_OP_BIND, 0, kWindows) && v.Run(NDK_U_OP_BIND, 0, 1));
    if (t_failures) return kTestFail;

    // H's kills are queued as their invalidations' results are polled.
    double t0 = rel::Now();
    T_CHECK(h.Run(NDK_U_OP_INVALIDATE, 0, kWindows));
    double queued = rel::Now();
    T_CHECK(v.Run(NDK_U_OP_INVALIDATE, 0, 1));
    T_CHECK(v.Run(NDK_U_OP_BIND, 0, 1));
    double v_done = rel::Now();
    T_CHECK(h.Run(NDK_U_OP_BIND, kWindows - 1, 1));
    double h_done = rel::Now();

    double v_ms = (v_done - queued) * 1000, h_ms = (h_done - t0) * 1000;
    std::printf(
        "%d kills queued in %.0f ms; the other file's invalidate and bind %.0f ms, "
        "the first file's last bind done after %.0f ms\n",
        kWindows, (queued - t0) * 1000, v_ms, h_ms);
    // 100 kills of 20 ms: H's queue takes 2 s.
    T_CHECK(h_ms >= 1000);
    T_CHECK(v_ms < h_ms / 4);
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    T_CHECK(sec::AsNobody("kill-isolation", Run) == kTestPass);
    return t_result("sec-kill-isolation");
}
