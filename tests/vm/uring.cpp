// SPDX-License-Identifier: GPL-2.0
// Guest test: the shared rings (NDK_U_FEATURE_RINGS, Documentation/
// uapi.md "Rings") through libndk and through raw ioctls.
//   - libndk over an rxe loopback: a poll of an empty CQ makes no system
//     call; a write costs one (the doorbell) and its result arrives in
//     the completion ring; a DEFER chain costs one for the whole chain;
//     a fast-register returns its token through the ring; an inline
//     failure is returned by the call that rang the doorbell, and the
//     requests after it are not posted.
//   - the ABI: ring sizes and offsets, mmap() refusals (size, offset,
//     PROT_EXEC, MAP_PRIVATE, a CQ without a ring), doorbell refusals
//     (flags, reserved, count, handles), a descriptor naming another QP.
//   - attacks: a ring rewritten with random bytes by one thread while
//     another rings the doorbell over it; a completion ring whose head is
//     garbage; a ring used after its handle and its file are closed.
//   - two threads post on two QPs of one ring CQ while a third reaps it:
//     every result arrives once, in order (also with the completion
//     handler's fills deferred, uring-deferred-fill).
//     The kernel log is checked by the test bed.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "loopback.hpp"
#include "t_helpers.hpp"

namespace {

using namespace ndk_t;

std::uint64_t Calls() { return ndk::IoctlCount(); }

// Busy-polls (no Arm, no system call) for n results within 10 s.
std::size_t Spin(const ndk::CompletionQueue& cq, std::span<ndk::CompletionResult> out,
                 std::size_t n) {
    std::size_t got = 0;
    auto end = std::chrono::steady_clock::now() + 10s;
    while (got < n && std::chrono::steady_clock::now() < end) {
        auto r = cq.Poll(out.subspan(got));
        if (!r) return got;
        got += *r;
    }
    return got;
}

// A source registered for local access and a destination the peer may
// write, of `pages` pages each.
struct Buffers {
    Pages src, dst;
    ndk::MemoryRegion smr, dmr;
    Buffers(Loopback& lb, std::size_t pages)
        : src(pages),
          dst(pages),
          smr(Must(ndk::MemoryRegion::Create(*lb.pd), "MR")),
          dmr(Must(ndk::MemoryRegion::Create(*lb.pd), "MR")) {
        Must(smr.Register(src.base, src.len, ndk::mr_flag::kAllowLocalWrite), "register src");
        Must(dmr.Register(dst.base, dst.len,
                          ndk::mr_flag::kAllowLocalWrite | ndk::mr_flag::kAllowRemoteWrite),
             "register dst");
    }
};

// A local token that names no registration of the file: the token of a
// registration since closed.  A live token with a bit flipped may name
// another MR (on rxe, ^ 0x100 is the neighbouring index, and its key
// byte matches one time in 256), so the test does not guess one.  The
// registration (a private anonymous page, writable) is one rxe makes
// itself, from a cyclic index pool that does not hand the index out again
// soon.  One ndk.ko maps into a pooled fast-register MR (read-only over a
// shared mapping, say) would not do: the MR comes back with its key byte
// one higher, so the same token returns after 256 reuses.
std::uint32_t DeadToken(Loopback& lb) {
    Pages p(1);
    auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "MR");
    Must(mr.Register(p.base, p.len, ndk::mr_flag::kAllowLocalWrite), "register");
    return mr.local_token();
}

void LibraryPath() {
    Loopback lb;
    lb.Open();
    lb.Connect();
    Buffers b(lb, 4);
    auto& [src, dst, smr, dmr] = b;
    ndk::CompletionResult res[16];

    // An empty CQ, polled 10000 times: no system call.
    std::uint64_t before = Calls();
    for (int i = 0; i < 10000; i++) T_CHECK(Must(lb.cq->Poll(res), "poll") == 0);
    T_CHECK(Calls() == before);
    std::printf("empty polls: %llu system calls for 10000\n",
                static_cast<unsigned long long>(Calls() - before));

    // One write: one system call, its result from the ring.
    std::memset(src.base, 0x5a, kPage);
    ndk::Sge sge{src.base, static_cast<std::uint32_t>(kPage), smr.local_token()};
    before = Calls();
    Must(lb.client->Write(7, std::span(&sge, 1), reinterpret_cast<std::uintptr_t>(dst.base),
                          dmr.remote_token()),
         "write");
    T_CHECK(Spin(*lb.cq, res, 1) == 1);
    T_CHECK(Calls() - before == 1);
    T_CHECK(res[0].request_context == 7 && ndk::NtSuccess(res[0].status));
    T_CHECK(static_cast<unsigned char>(dst.base[kPage - 1]) == 0x5a);

    // A chain of 8 deferred writes and one that ends it: one system call.
    before = Calls();
    for (std::uint64_t i = 0; i < 9; i++) {
        Must(lb.client->Write(100 + i, std::span(&sge, 1),
                              reinterpret_cast<std::uintptr_t>(dst.base), dmr.remote_token(),
                              i < 8 ? ndk::op_flag::kDefer : 0),
             "deferred write");
    }
    T_CHECK(Calls() - before == 1);
    T_CHECK(Spin(*lb.cq, res, 9) == 9);
    for (std::uint64_t i = 0; i < 9; i++) T_CHECK(res[i].request_context == 100 + i);

    // A fast-register through the ring: its token comes back.
    auto fr = Must(ndk::MemoryRegion::Create(*lb.pd, true), "FR MR");
    Must(fr.InitializeFastRegister(4, true), "init FR");
    auto token =
        lb.server->FastRegister(20, fr, dmr, dst.base, kPage,
                                ndk::op_flag::kAllowRemoteWrite | ndk::op_flag::kAllowLocalWrite);
    T_CHECK(token && *token != 0 && *token == fr.remote_token());
    T_CHECK(Spin(*lb.cq, res, 1) == 1 && ndk::NtSuccess(res[0].status));
    if (token) {
        std::memset(src.base, 0x33, 64);
        Must(lb.client->Write(21, std::span(&sge, 1), reinterpret_cast<std::uintptr_t>(dst.base),
                              *token),
             "write to the fast-registered MR");
        T_CHECK(Spin(*lb.cq, res, 1) == 1 && ndk::NtSuccess(res[0].status));
        T_CHECK(dst.base[0] == 0x33);
    }

    // An inline failure: a bad local token.
    ndk::Sge bad{src.base, 64, DeadToken(lb)};
    auto r = lb.client->Write(30, std::span(&bad, 1), reinterpret_cast<std::uintptr_t>(dst.base),
                              dmr.remote_token());
    T_CHECK(!r && r.error().errnum == EACCES);
    // Deferred, it fails the request that rings the doorbell, and that
    // request is not posted.
    r = lb.client->Write(31, std::span(&bad, 1), reinterpret_cast<std::uintptr_t>(dst.base),
                         dmr.remote_token(), ndk::op_flag::kDefer);
    T_CHECK(static_cast<bool>(r));
    r = lb.client->Write(32, std::span(&sge, 1), reinterpret_cast<std::uintptr_t>(dst.base),
                         dmr.remote_token());
    T_CHECK(!r && r.error().errnum == EACCES);
    // The queue still works and nothing of 30..32 completes.
    Must(lb.client->Write(33, std::span(&sge, 1), reinterpret_cast<std::uintptr_t>(dst.base),
                          dmr.remote_token()),
         "write after a failure");
    T_CHECK(Spin(*lb.cq, res, 1) == 1 && res[0].request_context == 33);
    std::this_thread::sleep_for(200ms);
    T_CHECK(Must(lb.cq->Poll(res), "poll") == 0);

    // PollUntil sleeps on the event and wakes for a ring result.
    Must(lb.client->Write(40, std::span(&sge, 1), reinterpret_cast<std::uintptr_t>(dst.base),
                          dmr.remote_token()),
         "write");
    T_CHECK(WaitOne(*lb.cq, "write 40").request_context == 40);
}

// Two threads post RDMA writes on the two QPs of one ring CQ, seven of
// every eight silent, while this one reaps the completion ring without
// system calls: every signalled result arrives once, each QP's in the
// order posted.  The test bed also runs this with debugfs
// ndk/cq_fill_defer (uring-deferred-fill), where the completion handler
// leaves every fill of the ring to the CQ's work item.
void Flood() {
    Loopback lb;
    lb.Open();
    lb.Connect();
    Buffers b(lb, 1);
    std::atomic<bool> stop{false};
    std::atomic<int> refused{0};  // an errno other than a full queue's
    std::atomic<std::uint64_t> pending[2] = {0, 0};
    std::uint64_t posted[2] = {0, 0};
    auto post = [&](int q) {
        ndk::QueuePair& qp = q ? *lb.server : *lb.client;
        ndk::Sge sge{b.src.base + 64 * q, 8, b.smr.local_token()};
        for (std::uint64_t n = 0; !stop.load();) {
            bool silent = n % 8 != 7;
            if (!silent && pending[q].load() >= 16) {
                std::this_thread::yield();
                continue;
            }
            auto ctx = (static_cast<std::uint64_t>(q) << 32) | posted[q];
            auto r = qp.Write(ctx, std::span(&sge, 1),
                              reinterpret_cast<std::uintptr_t>(b.dst.base) + 64 * q,
                              b.dmr.remote_token(), silent ? ndk::op_flag::kSilentSuccess : 0);
            if (!r) {
                // A full queue or CQ (ENOMEM): what was posted completes first.
                if (r.error().errnum != ENOMEM) {
                    refused = r.error().errnum;
                    return;
                }
                std::this_thread::yield();
                continue;
            }
            n++;
            if (!silent) {
                pending[q]++;
                posted[q]++;
            }
        }
    };
    std::thread t0(post, 0), t1(post, 1);
    std::uint64_t reaped[2] = {0, 0};
    bool order = true;
    ndk::CompletionResult res[32];
    auto reap = [&] {
        auto n = Must(lb.cq->Poll(res), "poll");
        for (std::size_t i = 0; i < n; i++) {
            auto q = res[i].request_context >> 32;
            T_CHECK(q < 2 && ndk::NtSuccess(res[i].status));
            if (q >= 2) continue;
            order &= (res[i].request_context & 0xffffffffu) == reaped[q];
            reaped[q]++;
            pending[q]--;
        }
        return n;
    };
    auto before = Calls();
    auto end = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < end) reap();
    stop = true;
    t0.join();
    t1.join();
    auto calls = Calls() - before;
    end = std::chrono::steady_clock::now() + 10s;
    while ((reaped[0] < posted[0] || reaped[1] < posted[1]) &&
           std::chrono::steady_clock::now() < end)
        if (!reap()) std::this_thread::sleep_for(1ms);
    std::printf(
        "flood: %llu and %llu signalled writes (and 7 silent per one), %llu and %llu "
        "results, %llu system calls\n",
        static_cast<unsigned long long>(posted[0]), static_cast<unsigned long long>(posted[1]),
        static_cast<unsigned long long>(reaped[0]), static_cast<unsigned long long>(reaped[1]),
        static_cast<unsigned long long>(calls));
    T_CHECK(refused.load() == 0);
    T_CHECK(posted[0] > 0 && posted[1] > 0);
    T_CHECK(reaped[0] == posted[0] && reaped[1] == posted[1]);
    T_CHECK(order);
    T_CHECK(Must(lb.cq->Poll(res), "poll") == 0);
}

// NDK: a request that fails inline first hands the requests deferred
// before it over to the device, whoever refused it: the library (more
// SGEs than the ABI carries), the core (more than the QP takes) or the
// user path (a token of no registration).  Through the rings and through
// the ioctls (NDK_RINGS=0).
void RefusalPostsDeferred(bool rings) {
    setenv("NDK_RINGS", rings ? "1" : "0", 1);
    Loopback lb;
    lb.Open();
    lb.Connect();
    unsetenv("NDK_RINGS");
    Buffers b(lb, 1);
    auto& [src, dst, smr, dmr] = b;
    const auto to = reinterpret_cast<std::uintptr_t>(dst.base);
    ndk::Sge sge{src.base, 64, smr.local_token()};
    std::vector<ndk::Sge> abi(NDK_U_SGE_MAX + 1, sge), qp(2, sge);
    ndk::Sge bad{src.base, 64, DeadToken(lb)};
    struct Case {
        const char* what;
        std::span<const ndk::Sge> sgl;
        int err;
    } cases[] = {{"more SGEs than the ABI carries", abi, EINVAL},
                 {"more SGEs than the QP takes", qp, EINVAL},
                 {"a token of no registration", std::span(&bad, 1), EACCES}};
    std::uint64_t ctx = 200;
    ndk::CompletionResult res[2];
    for (const Case& c : cases) {
        Must(
            lb.client->Write(ctx, std::span(&sge, 1), to, dmr.remote_token(), ndk::op_flag::kDefer),
            "deferred write");
        auto r = lb.client->Write(ctx + 1, c.sgl, to, dmr.remote_token());
        T_CHECK(!r && r.error().errnum == c.err);
        bool done = Spin(*lb.cq, std::span(res, 1), 1) == 1 && res[0].request_context == ctx &&
                    ndk::NtSuccess(res[0].status);
        T_CHECK(done);
        std::printf("%s, %s: %s, and the deferred write before it completed: %s\n",
                    rings ? "rings" : "ioctls", c.what,
                    r ? "posted" : strerrorname_np(r.error().errnum), done ? "yes" : "no");
        ctx += 2;
    }
    // The refused requests never complete.
    std::this_thread::sleep_for(200ms);
    T_CHECK(Must(lb.cq->Poll(res), "poll") == 0);
}

struct Raw {
    int fd = -1;
    std::uint32_t adapter = 0, pd = 0;
    Raw() {
        fd = open("/dev/ndk", O_RDWR | O_CLOEXEC);
        if (fd < 0) throw Failure{"open /dev/ndk"};
        ndk_u_adapter_open a{};
        auto dev = Must(ndk::Device::Open(), "open the device");
        for (const auto& d : Must(dev.ListAdapters(), "list adapters"))
            if (d.name == "rxe0") a.adapter_id = d.id;
        if (ioctl(fd, NDK_IOCTL_ADAPTER_OPEN, &a)) throw Failure{"ADAPTER_OPEN"};
        adapter = a.handle;
        ndk_u_pd_create p{};
        p.adapter_handle = adapter;
        if (ioctl(fd, NDK_IOCTL_PD_CREATE, &p)) throw Failure{"PD_CREATE"};
        pd = p.handle;
    }
    ~Raw() {
        if (fd >= 0) close(fd);
    }
    ndk_u_cq_create Cq(std::uint32_t depth, std::uint32_t flags) {
        ndk_u_cq_create c{};
        c.adapter_handle = adapter;
        c.depth = depth;
        c.flags = flags;
        if (ioctl(fd, NDK_IOCTL_CQ_CREATE, &c)) throw Failure{"CQ_CREATE"};
        return c;
    }
    ndk_u_qp_create Qp(std::uint32_t cq, std::uint32_t depth, std::uint32_t flags) {
        ndk_u_qp_create q{};
        q.pd_handle = pd;
        q.receive_cq_handle = q.initiator_cq_handle = cq;
        q.receive_queue_depth = q.initiator_queue_depth = depth;
        q.max_receive_request_sge = q.max_initiator_request_sge = 1;
        q.flags = flags;
        if (ioctl(fd, NDK_IOCTL_QP_CREATE, &q)) throw Failure{"QP_CREATE"};
        return q;
    }
    void* Map(std::uint64_t off, std::size_t len, int prot = PROT_READ | PROT_WRITE,
              int flags = MAP_SHARED) const {
        return mmap(nullptr, len, prot, flags, fd, static_cast<off_t>(off));
    }
};

#define T_MAP_FAILS(expr, want)                          \
    do {                                                 \
        errno = 0;                                       \
        void* t_p_ = (expr);                             \
        T_CHECK(t_p_ == MAP_FAILED && errno == (want));  \
        if (t_p_ != MAP_FAILED) munmap(t_p_, kPage * 2); \
    } while (0)

void Abi() {
    Raw raw;
    auto plain = raw.Cq(8, 0);
    T_CHECK(plain.ring_offset == 0 && plain.ring_size == 0 && plain.ring_entries == 0);
    auto c = raw.Cq(100, NDK_U_CQ_CREATE_F_RING);
    T_CHECK(c.ring_entries == 128);
    T_CHECK(c.ring_offset == static_cast<std::uint64_t>(c.handle) << NDK_U_MMAP_RING_SHIFT);
    T_CHECK(c.ring_size % kPage == 0 &&
            c.ring_size >= NDK_U_CQ_RING_RESULTS + 128 * sizeof(ndk_u_result));
    auto q = raw.Qp(c.handle, 5, NDK_U_QP_CREATE_F_RING);
    T_CHECK(q.ring_entries == 16 && q.ring_size == kPage * 1);
    auto qplain = raw.Qp(plain.handle, 2, 0);
    // Depths of 0 are queues of one request each: the ring holds both (it
    // was sized from the depths as given, roundup_pow_of_two(0)).
    auto q0 = raw.Qp(c.handle, 0, NDK_U_QP_CREATE_F_RING);
    T_CHECK(q0.ring_entries == 2);
    ndk_u_handle_close hc0{};
    hc0.handle = q0.handle;
    T_CHECK(ioctl(raw.fd, NDK_IOCTL_HANDLE_CLOSE, &hc0) == 0);

    // Create: unknown flags and output fields given as input.
    ndk_u_cq_create bc{};
    bc.adapter_handle = raw.adapter;
    bc.depth = 4;
    bc.flags = 2;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_CQ_CREATE, &bc), EINVAL);
    bc.flags = NDK_U_CQ_CREATE_F_RING;
    bc.ring_entries = 4;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_CQ_CREATE, &bc), EINVAL);

    // mmap refusals.
    T_MAP_FAILS(raw.Map(c.ring_offset, c.ring_size + kPage), EINVAL);
    T_MAP_FAILS(raw.Map(c.ring_offset + kPage, c.ring_size), EINVAL);
    T_MAP_FAILS(raw.Map(c.ring_offset, c.ring_size, PROT_READ | PROT_EXEC), EPERM);
    T_MAP_FAILS(raw.Map(c.ring_offset, c.ring_size, PROT_READ, MAP_PRIVATE), EINVAL);
    T_MAP_FAILS(raw.Map(static_cast<std::uint64_t>(plain.handle) << NDK_U_MMAP_RING_SHIFT, kPage),
                EINVAL);
    T_MAP_FAILS(raw.Map(static_cast<std::uint64_t>(raw.pd) << NDK_U_MMAP_RING_SHIFT, kPage),
                EINVAL);
    T_MAP_FAILS(raw.Map(0xffffULL << NDK_U_MMAP_RING_SHIFT, kPage), EINVAL);

    // Doorbell refusals.
    ndk_u_qp_doorbell d{};
    d.handle = q.handle;
    d.count = 0;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d), EINVAL);
    d.count = q.ring_entries + 1;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d), EINVAL);
    d.count = 1;
    d.flags = 1;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d), EINVAL);
    d.flags = 0;
    d.reserved = 1;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d), EINVAL);
    d.reserved = 0;
    d.error = 5;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d), EINVAL);
    d.error = 0;
    d.handle = qplain.handle;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d), ENOENT);
    d.handle = c.handle;
    T_EXPECT_ERRNO(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d), ENOENT);

    // A descriptor naming another QP, one with a token set, one with an
    // unknown op: each stops the doorbell with its error, none posted.
    auto* slots = static_cast<ndk_u_qp_post*>(raw.Map(q.ring_offset, q.ring_size));
    T_CHECK(slots != MAP_FAILED);
    if (slots == MAP_FAILED) return;
    struct Case {
        std::uint32_t qp, op, token;
    } cases[] = {
        {qplain.handle, NDK_U_OP_RECEIVE, 0}, {q.handle, NDK_U_OP_RECEIVE, 9}, {q.handle, 99, 0}};
    for (const Case& k : cases) {
        std::memset(&slots[3], 0, sizeof(slots[3]));
        slots[3].qp_handle = k.qp;
        slots[3].op = k.op;
        slots[3].token = k.token;
        d = ndk_u_qp_doorbell{};
        d.handle = q.handle;
        d.head = 3 + 16 * 1000;  // any index: taken modulo the ring
        d.count = 1;
        T_CHECK(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d) == 0);
        T_CHECK(d.count == 0 && d.error == EINVAL);
    }
    // A receive with no SGE is posted (the QP is not connected: a receive
    // may wait for the connection); the second, garbage, stops it.
    std::memset(&slots[0], 0, 2 * sizeof(slots[0]));
    slots[0].qp_handle = q.handle;
    slots[0].op = NDK_U_OP_RECEIVE;
    std::memset(&slots[1], 0xff, sizeof(slots[1]));
    d = ndk_u_qp_doorbell{};
    d.handle = q.handle;
    d.count = 2;
    T_CHECK(ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d) == 0);
    T_CHECK(d.count == 1 && d.error != 0);

    // The rings outlive their handles and the file: still mapped, still
    // readable and writable, never written by the kernel any more.
    auto* cring = static_cast<ndk_u_cq_ring*>(raw.Map(c.ring_offset, c.ring_size));
    T_CHECK(cring != MAP_FAILED);
    // They are the opener's alone: a forked child has no mapping of them
    // (it could forge the opener's results or rewrite its descriptors).
    std::fflush(nullptr);
    pid_t child = fork();
    if (child == 0) {
        unsigned char vec = 0;
        _exit(mincore(slots, 1, &vec) == -1 && errno == ENOMEM && mincore(cring, 1, &vec) == -1 &&
                      errno == ENOMEM
                  ? 0
                  : 1);
    }
    int wstatus = -1;
    T_CHECK(child > 0 && waitpid(child, &wstatus, 0) == child && WIFEXITED(wstatus) &&
            WEXITSTATUS(wstatus) == 0);
    ndk_u_handle_close hc{};
    hc.handle = q.handle;
    T_CHECK(ioctl(raw.fd, NDK_IOCTL_HANDLE_CLOSE, &hc) == 0);
    hc.handle = c.handle;
    T_CHECK(ioctl(raw.fd, NDK_IOCTL_HANDLE_CLOSE, &hc) == 0);
    close(std::exchange(raw.fd, -1));
    slots[0].op = 1234;
    if (cring != MAP_FAILED) {
        // The receive posted above, resolved by the QP's destroy.
        const auto* r = reinterpret_cast<const ndk_u_result*>(reinterpret_cast<const char*>(cring) +
                                                              NDK_U_CQ_RING_RESULTS);
        T_CHECK(cring->tail == 1);
        T_CHECK(r[0].status == static_cast<std::int32_t>(NDK_U_STATUS_CANCELLED) &&
                r[0].type == NDK_U_OPERATION_RECEIVE);
        cring->head = 77;
        munmap(cring, c.ring_size);
    }
    munmap(slots, q.ring_size);
}

// One thread rewrites a connected QP's submission ring with random bytes
// while another rings the doorbell over all of it, and the completion
// ring's head is set to garbage meanwhile.
void Attacks() {
    Raw raw;
    auto c = raw.Cq(64, NDK_U_CQ_CREATE_F_RING);
    auto q = raw.Qp(c.handle, 16, NDK_U_QP_CREATE_F_RING);
    auto* slots = static_cast<unsigned char*>(raw.Map(q.ring_offset, q.ring_size));
    auto* cring = static_cast<ndk_u_cq_ring*>(raw.Map(c.ring_offset, c.ring_size));
    T_CHECK(slots != MAP_FAILED && cring != MAP_FAILED);
    if (slots == MAP_FAILED || cring == MAP_FAILED) return;
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        std::mt19937_64 rng(42);
        while (!stop.load()) {
            for (std::uint32_t i = 0; i < q.ring_entries; i++) {
                auto* b = slots + i * sizeof(ndk_u_qp_post);
                std::uint64_t mode = rng() % 3;
                for (std::size_t j = 0; j < sizeof(ndk_u_qp_post); j += 8) {
                    std::uint64_t v = mode ? 0 : rng();
                    std::memcpy(b + j, &v, 8);
                }
                // Plausible: this QP, a receive or any op, nothing else.
                if (mode) {
                    ndk_u_qp_post p{};
                    p.qp_handle = q.handle;
                    p.op = mode == 1 ? NDK_U_OP_RECEIVE : static_cast<std::uint32_t>(rng() % 9);
                    p.request_context = rng();
                    std::memcpy(b, &p, sizeof(p));
                }
            }
            cring->head = static_cast<std::uint32_t>(rng());
        }
    });
    unsigned long calls = 0, posted = 0, errors[140] = {};
    auto end = std::chrono::steady_clock::now() + 3s;
    std::mt19937 rng(7);
    while (std::chrono::steady_clock::now() < end) {
        ndk_u_qp_doorbell d{};
        d.handle = q.handle;
        d.head = rng();
        d.count = 1 + rng() % q.ring_entries;
        if (ioctl(raw.fd, NDK_IOCTL_QP_DOORBELL, &d) != 0) {
            T_CHECK(false);
            break;
        }
        calls++;
        posted += d.count;
        if (d.error < 140) errors[d.error]++;
    }
    stop = true;
    writer.join();
    std::printf("attack: %lu doorbells, %lu descriptors posted; errors:", calls, posted);
    for (int e = 0; e < 140; e++)
        if (errors[e]) std::printf(" %s %lu", e ? strerrorname_np(e) : "none", errors[e]);
    std::printf("\n");
    T_CHECK(calls > 0);
    munmap(slots, q.ring_size);
    munmap(cring, c.ring_size);
}

}  // namespace

int main() {
    try {
        LibraryPath();
        RefusalPostsDeferred(true);
        RefusalPostsDeferred(false);
        Abi();
        Attacks();
        Flood();
    } catch (const Failure& f) {
        std::fprintf(stderr, "uring: %s\n", f.what.c_str());
        return kTestFail;
    }
    return t_result("uring");
}
