// SPDX-License-Identifier: GPL-2.0
// sec-inval-fence: after an invalidation, a window or fast-register MR
// over user memory gets a new ib_mr before it maps anything again, and a
// registration ndk.ko pinned itself gives its ib_mr up before its pages.
//
// rxe (6.1) checks a key once per packet and copies afterwards, reading
// the MR's page list at copy time; invalidating only marks the MR free.
// A packet checked before an invalidation can therefore land in whatever
// the ib_mr maps next, or in pages unpinned meanwhile.  Only a
// deregistration waits for it.  So ndk.ko kills such keys (a new ib_mr,
// the old one deregistered) instead of freeing them, and the user path's
// next bind waits for that (Documentation/security.md).
//
// As nobody, on one loopback connection: a window bound with remote write
// over an MR, invalidated and bound again, three times; a fast-register
// MR likewise.  Each new registration must be posted at once (no EBUSY)
// and carry a key of another ib_mr (another index, token >> 8); on the old
// module only the key's low byte turned.  The first window token must
// then be refused to the peer.  Last, a registration ndk.ko pins itself
// (a shared anonymous page, read only) registered, deregistered and
// registered again must not get its old ib_mr back from the pool.
#include <sys/mman.h>

#include "sec_common.hpp"

namespace {

constexpr std::uint32_t kLen = 4096;
constexpr int kRounds = 3;

// Post @p and wait for its result; its token, or 0.
std::uint32_t Register(rel::Dev& d, const rel::Conn& c, ndk_u_qp_post p) {
    int rc = sec::PostErrno(d, &p);
    ndk_u_result r{};
    bool ok = rc == 0 && d.WaitResult(c.cq[0], &r, 10000) && r.status == 0;
    if (!ok)
        std::printf("op %u: post %s, status %#x\n", p.op, rc ? strerrorname_np(rc) : "ok",
                    static_cast<unsigned>(r.status));
    return ok ? p.token : 0;
}

bool Invalidate(rel::Dev& d, const rel::Conn& c, std::uint32_t handle) {
    ndk_u_qp_post p{};
    p.qp_handle = c.qp[0];
    p.op = NDK_U_OP_INVALIDATE;
    p.object_handle = handle;
    p.request_context = 9;
    ndk_u_result r{};
    return sec::PostErrno(d, &p) == 0 && d.WaitResult(c.cq[0], &r, 10000) && r.status == 0;
}

// Register, invalidate, register again, kRounds times: every token of
// another ib_mr than the one before.  Returns the first token.
std::uint32_t Rotate(rel::Dev& d, const rel::Conn& c, const ndk_u_qp_post& reg, const char* what) {
    std::uint32_t first = 0, prev = 0;
    for (int i = 0; i < kRounds; i++) {
        std::uint32_t t = Register(d, c, reg);
        std::printf("%s %d: token %#x (ib_mr index %#x)\n", what, i, t, t >> 8);
        T_CHECK(t != 0);
        if (i == 0) first = t;
        if (i > 0) T_CHECK(t != 0 && (t >> 8) != (prev >> 8));
        prev = t;
        T_CHECK(Invalidate(d, c, reg.object_handle));
    }
    return first;
}

int Run() {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    std::uint32_t x = ad ? t_pd_create(d.fd(), ad) : 0;
    std::uint32_t y = x ? t_pd_create(d.fd(), ad) : 0;
    sockaddr_in to{};
    std::uint32_t lis = y ? rel::Listen(d, ad, &to) : 0;
    rel::Conn c;
    T_CHECK(lis && rel::Connect(d, ad, lis, to, x, y, &c));
    rel::Mapping buf(kLen), src_buf(kLen);
    ndk_u_mr_register mr{}, src{};
    std::uint32_t pmr =
        rel::RegisterMr(d, x, buf.addr(), kLen, NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &mr);
    std::uint32_t smr = rel::RegisterMr(d, y, src_buf.addr(), kLen, 0, &src);
    std::uint32_t mw = 0, fr = 0;
    T_CHECK(pmr && smr && sec::WindowAndFrMr(d, x, NDK_U_MR_INIT_FR_F_REMOTE_ACCESS, &mw, &fr));
    if (t_failures) return kTestFail;

    constexpr std::uint32_t kWrite = NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE;
    std::uint32_t old_token = Rotate(
        d, c, sec::RegPost(c.qp[0], NDK_U_OP_BIND, 1, mw, pmr, buf.addr(), kLen, kWrite), "window");
    Rotate(d, c,
           sec::RegPost(c.qp[0], NDK_U_OP_FAST_REGISTER, 2, fr, pmr, buf.addr(), kLen, kWrite),
           "fast-register MR");

    // The peer's write through the first window token is refused.
    std::memset(src_buf.get(), 0x5a, kLen);
    T_CHECK(sec::WriteRefused(d, c, 1, src_buf.addr(), src.local_token, buf.addr(), old_token,
                              buf.get(), "the first window token"));

    // A page ndk.ko pins itself: its pooled ib_mr is not reused.
    void* shared = mmap(nullptr, kLen, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    T_CHECK(shared != MAP_FAILED);
    if (shared == MAP_FAILED) return kTestFail;
    std::uint32_t tokens[2] = {};
    for (std::uint32_t& t : tokens) {
        ndk_u_mem_register m{};
        T_CHECK(t_mem_register(d.fd(), x, shared, kLen, NDK_U_MEM_READ, &m) == 0);
        t = m.local_token;
        T_CHECK(t_mem_deregister(d.fd(), m.handle) == 0);
    }
    std::printf("a read-only shared page registered twice: tokens %#x, %#x\n", tokens[0],
                tokens[1]);
    T_CHECK(tokens[0] && tokens[1] && (tokens[0] >> 8) != (tokens[1] >> 8));
    munmap(shared, kLen);
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

int main() {
    T_CHECK(sec::AsNobody("inval-fence", Run) == kTestPass);
    return t_result("sec-inval-fence");
}
