// SPDX-License-Identifier: GPL-2.0
// Description: isolation between processes and files (reliability plan
// S1, S2, S3/S4; Documentation/reliability.md).
//  S1  The owner holds 1000 objects.  Every handle 0..65535 is tried for
//      query (TOKEN_QUERY), use (MEM_REGISTER on it as PD) and destroy
//      (HANDLE_CLOSE) from another process's own file and from another
//      file of the owner: ENOENT each time; the other object commands for
//      every 64th value and for each of the owner's handles.  Through the
//      owner's file inherited by a forked child: EPERM for every value.
//      The owner then finds every handle with its tokens, moves data
//      through one of its registrations and releases all of them.
//  S2  The file is not the capability, the opener's address space is
//      (kmod/ndk_file.c: ndk_file_lock()): a receiver of the descriptor
//      through SCM_RIGHTS gets EPERM for object commands and mmap, but
//      QUERY_INFO works; the opener's own threads and a descriptor it
//      passes to itself work; a receiver left holding the last reference
//      frees everything by closing it, the charge returning to the opener.
//  S3  A foreign QP (another process, its own PD, its own loopback
//      connection) tries all 256 key bytes of the owner's window token
//      (with NDK_STRESS_SCALE < 1, as on the debug kernel, the token's
//      own key byte and every fourth other one) for RDMA write and for
//      RDMA read: every try completes in error,
//      leaves that QP in error (a following legitimate write is flushed)
//      and needs a new connection; the owner's memory is unchanged and
//      its window still works for it.
#include <sys/socket.h>
#include <sys/wait.h>

#include <map>
#include <thread>
#include <vector>

#include "rel_common.hpp"

namespace {

constexpr long kPage = 4096;
constexpr std::uint32_t kHandles = 65536;
constexpr unsigned char kSecret = 0x5a;

struct Owner {
    rel::Dev d;
    std::uint32_t adapter = 0, pd = 0, lis = 0;
    sockaddr_in addr{};
    rel::Conn conn;
    std::vector<std::uint32_t> handles;
    std::map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> tokens;
    std::unique_ptr<rel::Mapping> victim, work;
    std::uint32_t victim_mr = 0, work_mem = 0, work_token = 0, mw = 0, wtoken = 0;
    std::uint64_t waddr = 0, wlen = 2 * kPage;
};

bool Tokens(int fd, std::uint32_t h, std::pair<std::uint32_t, std::uint32_t>* t) {
    ndk_u_token_query q{};
    q.handle = h;
    if (ioctl(fd, NDK_IOCTL_TOKEN_QUERY, &q) != 0) return false;
    *t = {q.local_token, q.remote_token};
    return true;
}

// The owner's 1000 objects, a loopback connection and a window.
bool SetupOwner(Owner& o, long objects) {
    int fd = o.d.fd();
    o.adapter = o.d.OpenAdapter();
    o.pd = o.adapter ? t_pd_create(fd, o.adapter) : 0;
    o.lis = o.pd ? rel::Listen(o.d, o.adapter, &o.addr) : 0;
    if (!o.lis || !rel::Connect(o.d, o.adapter, o.lis, o.addr, o.pd, o.pd, &o.conn)) return false;
    o.handles = {o.adapter,    o.pd,         o.lis,      o.conn.cq[0], o.conn.cq[1],
                 o.conn.qp[0], o.conn.qp[1], o.conn.con, o.conn.acc};
    o.victim = std::make_unique<rel::Mapping>(16 * kPage);
    o.work = std::make_unique<rel::Mapping>(16 * kPage);
    std::memset(o.victim->get(), kSecret, o.victim->size());
    std::memset(o.work->get(), 0, o.work->size());
    ndk_u_mr_register r{};
    o.victim_mr = rel::RegisterMr(o.d, o.pd, o.victim->addr(), o.victim->size(),
                                  NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, &r);
    ndk_u_mem_register m{};
    if (!o.victim_mr ||
        t_mem_register(fd, o.pd, o.work->get(), o.work->size(), NDK_U_MEM_READWRITE, &m) != 0)
        return false;
    o.work_mem = m.handle;
    o.work_token = m.local_token;
    ndk_u_mw_create wc{};
    wc.pd_handle = o.pd;
    o.mw = o.d.Create(NDK_IOCTL_MW_CREATE, &wc);
    ndk_u_qp_post b{};
    b.qp_handle = o.conn.qp[1];
    b.op = NDK_U_OP_BIND;
    b.object_handle = o.mw;
    b.mr_handle = o.victim_mr;
    o.waddr = b.address = o.victim->addr() + 4 * kPage;
    b.length = o.wlen;
    b.flags = NDK_U_OP_FLAG_ALLOW_REMOTE_READ | NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE;
    ndk_u_result res{};
    if (!o.mw || o.d.Ioctl(NDK_IOCTL_QP_POST, &b) != 0 || !o.d.WaitResult(o.conn.cq[1], &res) ||
        res.status != 0)
        return false;
    o.wtoken = b.token;
    for (std::uint32_t h : {o.victim_mr, o.work_mem, o.mw}) o.handles.push_back(h);
    // The rest: registrations of distinct ranges, CQs, MRs and windows.
    for (long i = 0; static_cast<long>(o.handles.size()) < objects; i++) {
        std::uint32_t h = 0;
        if (i % 10 == 0) {
            ndk_u_cq_create cc{};
            cc.adapter_handle = o.adapter;
            cc.depth = 4;
            h = o.d.Create(NDK_IOCTL_CQ_CREATE, &cc);
        } else if (i % 10 == 1) {
            ndk_u_mr_create mc{};
            mc.pd_handle = o.pd;
            h = o.d.Create(NDK_IOCTL_MR_CREATE, &mc);
        } else if (i % 10 == 2) {
            ndk_u_mw_create w{};
            w.pd_handle = o.pd;
            h = o.d.Create(NDK_IOCTL_MW_CREATE, &w);
        } else {
            h = t_mem_register(fd, o.pd, o.work->get() + (i % 16) * kPage, 1 + i / 16,
                               NDK_U_MEM_READ, &m) == 0
                    ? m.handle
                    : 0;
        }
        if (!h) return false;
        o.handles.push_back(h);
    }
    for (std::uint32_t h : o.handles) {
        std::pair<std::uint32_t, std::uint32_t> t;
        if (Tokens(fd, h, &t)) o.tokens[h] = t;
    }
    return true;
}

// The owner's own traffic: write through the window from its work
// registration and read it back; restores the secret afterwards.
bool OwnerTraffic(Owner& o) {
    unsigned char* w = o.work->get();
    for (std::size_t i = 0; i < o.wlen; i++) w[i] = static_cast<unsigned char>(i * 13 + 1);
    std::int32_t st = -1;
    bool ok = rel::Rdma(o.d, o.conn, NDK_U_OP_WRITE, o.work->addr(),
                        static_cast<std::uint32_t>(o.wlen), o.work_token, o.waddr, o.wtoken, &st) &&
              st == 0;
    ok = ok && std::memcmp(o.victim->get() + 4 * kPage, w, o.wlen) == 0;
    std::memset(w + 8 * kPage, 0, o.wlen);
    ok = ok &&
         rel::Rdma(o.d, o.conn, NDK_U_OP_READ, o.work->addr() + 8 * kPage,
                   static_cast<std::uint32_t>(o.wlen), o.work_token, o.waddr, o.wtoken, &st) &&
         st == 0 && std::memcmp(w + 8 * kPage, w, o.wlen) == 0;
    std::memset(o.victim->get(), kSecret, o.victim->size());
    return ok;
}

// Every handle value on @fd with the sweep commands; counts errnos.
void Sweep(int fd, const std::vector<std::uint32_t>& extra, std::map<int, long>* errs,
           long* calls) {
    char buf[64];
    auto tally = [&](int rc) {
        ++*calls;
        ++(*errs)[rc == 0 ? 0 : errno];
    };
    auto all = [&](std::uint32_t h) {
        ndk_u_adapter_info ai{};
        ai.handle = h;
        tally(ioctl(fd, NDK_IOCTL_ADAPTER_INFO, &ai));
        ndk_u_pd_create pc{};
        pc.adapter_handle = h;
        tally(ioctl(fd, NDK_IOCTL_PD_CREATE, &pc));
        tally(t_mem_deregister(fd, h));
        ndk_u_result r;
        ndk_u_cq_poll p{};
        p.handle = h;
        p.count = 1;
        p.results = reinterpret_cast<std::uintptr_t>(&r);
        tally(ioctl(fd, NDK_IOCTL_CQ_POLL, &p));
        ndk_u_qp_post q{};
        q.qp_handle = h;
        q.op = NDK_U_OP_SEND;
        tally(ioctl(fd, NDK_IOCTL_QP_POST, &q));
        ndk_u_mr_deregister md{};
        md.handle = h;
        tally(ioctl(fd, NDK_IOCTL_MR_DEREGISTER, &md));
        ndk_u_connector_request cr{};
        cr.connector_handle = h;
        tally(ioctl(fd, NDK_IOCTL_DISCONNECT, &cr));
    };
    for (std::uint32_t h = 0; h < kHandles; h++) {
        ndk_u_token_query q{};
        q.handle = h;
        tally(ioctl(fd, NDK_IOCTL_TOKEN_QUERY, &q));
        tally(t_mem_register(fd, h, buf, sizeof(buf), NDK_U_MEM_READ));
        tally(t_handle_close(fd, h));
        if (h % 64 == 0) all(h);
    }
    for (std::uint32_t h : extra) all(h);
}

void PrintErrs(const char* what, long calls, const std::map<int, long>& errs) {
    std::printf("%s: %ld calls:", what, calls);
    for (auto& [e, n] : errs) std::printf(" %s %ld", e ? strerrorname_np(e) : "success", n);
    std::printf("\n");
}

int WaitChild(pid_t pid) {
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void S1(Owner& o) {
    // Another process, its own file.
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = t_open_ndk();
        std::map<int, long> errs;
        long calls = 0;
        Sweep(fd, o.handles, &errs, &calls);
        PrintErrs("S1 another process, its own file", calls, errs);
        std::fflush(stdout);
        _exit(errs.size() == 1 && errs.count(ENOENT) ? 0 : 1);
    }
    T_CHECK(WaitChild(pid) == 0);
    // Another file of the owner.
    {
        rel::Dev other;
        std::map<int, long> errs;
        long calls = 0;
        Sweep(other.fd(), o.handles, &errs, &calls);
        PrintErrs("S1 the owner's other file", calls, errs);
        T_CHECK(errs.size() == 1 && errs.count(ENOENT));
    }
    // The owner's file, inherited by a child.
    std::fflush(stdout);
    pid = fork();
    if (pid == 0) {
        std::map<int, long> errs;
        long calls = 0;
        Sweep(o.d.fd(), o.handles, &errs, &calls);
        PrintErrs("S1 the owner's file in a forked child", calls, errs);
        std::fflush(stdout);
        _exit(errs.size() == 1 && errs.count(EPERM) ? 0 : 1);
    }
    T_CHECK(WaitChild(pid) == 0);
    // Intact: every handle with its tokens, and traffic.
    long intact = 0;
    for (auto& [h, t] : o.tokens) {
        std::pair<std::uint32_t, std::uint32_t> now;
        intact += Tokens(o.d.fd(), h, &now) && now == t;
    }
    std::printf("S1 owner: %zu objects, %ld of %zu token-bearing handles unchanged\n",
                o.handles.size(), intact, o.tokens.size());
    T_CHECK(intact == static_cast<long>(o.tokens.size()));
    T_CHECK(OwnerTraffic(o));
}

// Object commands on @fd with the owner's handles; 0 when each gives @want.
int Probe(int fd, const Owner& o, int want) {
    int bad = 0;
    auto check = [&](int rc, int bit) {
        if (want == 0 ? rc != 0 : rc == 0 || errno != want) bad |= bit;
    };
    ndk_u_adapter_info ai{};
    ai.handle = o.adapter;
    check(ioctl(fd, NDK_IOCTL_ADAPTER_INFO, &ai), 1);
    std::pair<std::uint32_t, std::uint32_t> t;
    check(Tokens(fd, o.work_mem, &t) ? 0 : -1, 2);
    ndk_u_mem_register m{};
    int rc = t_mem_register(fd, o.pd, o.work->get(), kPage, NDK_U_MEM_READ, &m);
    check(rc, 4);
    if (rc == 0) t_mem_deregister(fd, m.handle);
    ndk_u_event_get g{};
    ndk_u_event ev;
    g.count = 1;
    g.events = reinterpret_cast<std::uintptr_t>(&ev);
    check(ioctl(fd, NDK_IOCTL_EVENT_GET, &g), 8);
    ndk_u_query_info qi{};
    if (ioctl(fd, NDK_IOCTL_QUERY_INFO, &qi) != 0) bad |= 16;  // never refused
    void* gen = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, fd, NDK_U_MMAP_CACHE);
    check(gen == MAP_FAILED ? -1 : 0, 32);
    if (gen != MAP_FAILED) munmap(gen, kPage);
    return bad;
}

void S2(Owner& o) {
    rel::Counters base = rel::ReadCounters();
    int sv[2];
    T_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    // Refused: another process receives the file.
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        int fd = rel::RecvFd(sv[1]);
        if (fd < 0) _exit(100);
        int bad = Probe(fd, o, EPERM);
        // Its own open works as usual.
        rel::Dev own;
        if (!own.OpenAdapter()) bad |= 64;
        _exit(bad);
    }
    T_CHECK(rel::SendFd(sv[0], o.d.fd()));
    int rc = WaitChild(pid);
    std::printf(
        "S2 SCM_RIGHTS to another process: object commands and mmap %s, QUERY_INFO %s "
        "(mask %#x)\n",
        rc & 0x2f ? "NOT refused" : "EPERM", rc & 16 ? "refused" : "works", rc);
    T_CHECK(rc == 0);
    // Allowed: the owner passes the file to itself, and its threads use it.
    T_CHECK(rel::SendFd(sv[0], o.d.fd()));
    int self = rel::RecvFd(sv[1]);
    T_CHECK(self >= 0 && self != o.d.fd());
    int self_bad = Probe(self, o, 0);
    close(self);
    int thread_bad = -1;
    std::thread([&] { thread_bad = Probe(o.d.fd(), o, 0); }).join();
    std::printf("S2 SCM_RIGHTS to the opener itself: %s; a thread of the opener: %s\n",
                self_bad ? "refused" : "works", thread_bad ? "refused" : "works");
    T_CHECK(self_bad == 0 && thread_bad == 0);
    // The receiver is left with the last reference: it cannot use the
    // objects, and its close() frees them; the opener's VmPin comes back.
    // (Forked before the file is opened, so it holds only what it gets.)
    long pin0 = t_vmpin_kb();
    int go[2];
    T_CHECK(pipe(go) == 0);
    std::fflush(stdout);
    pid = fork();
    if (pid == 0) {
        close(sv[0]);
        close(go[1]);
        int fd = rel::RecvFd(sv[1]);
        char c;
        if (fd < 0 || read(go[0], &c, 1) != 1) _exit(100);  // the opener closed its fd
        ndk_u_adapter_info ai{};
        ai.handle = 1;
        int bad = ioctl(fd, NDK_IOCTL_ADAPTER_INFO, &ai) != 0 && errno == EPERM ? 0 : 1;
        if (t_handle_close(fd, 2) == 0 || errno != EPERM) bad |= 2;
        rel::Counters now = rel::ReadCounters();
        if (now.objects != base.objects + 3 || now.pinned != base.pinned + 8) bad |= 4;
        close(fd);
        if (!rel::WaitCounters(base, 10)) bad |= 8;
        _exit(bad);
    }
    close(go[0]);
    int fd2 = t_open_ndk();
    rel::Mapping buf(8 * kPage);
    std::memset(buf.get(), 1, buf.size());
    std::uint32_t ad = t_adapter_open(fd2, static_cast<std::uint32_t>(t_first_adapter(fd2)));
    std::uint32_t pd = t_pd_create(fd2, ad);
    T_CHECK(ad == 1 && pd == 2);
    T_CHECK(t_mem_register(fd2, pd, buf.get(), buf.size(), NDK_U_MEM_READWRITE) == 0);
    T_CHECK(t_vmpin_kb() == pin0 + 8 * kPage / 1024);
    T_CHECK(rel::SendFd(sv[0], fd2));
    close(fd2);
    T_CHECK(write(go[1], "c", 1) == 1);
    rc = WaitChild(pid);
    close(go[1]);
    std::printf(
        "S2 last reference in another process: object commands %s, objects %s until its "
        "close, %s after it; opener's VmPin %ld -> %ld kB (mask %#x)\n",
        rc & 3 ? "NOT refused" : "EPERM", rc & 4 ? "NOT kept" : "kept",
        rc & 8 ? "NOT freed" : "freed", pin0 + 8 * kPage / 1024, t_vmpin_kb(), rc);
    T_CHECK(rc == 0);
    T_CHECK(t_vmpin_kb() == pin0);
    close(sv[0]);
    close(sv[1]);
}

// S3, in the attacker: its own file, PD, loopback connection; @tries
// key bytes of @token for write and read at @raddr.
[[noreturn]] void Attacker(std::uint64_t raddr, std::uint32_t token, std::uint32_t len) {
    rel::Dev d;
    std::uint32_t ad = d.OpenAdapter();
    std::uint32_t pd = ad ? t_pd_create(d.fd(), ad) : 0;
    sockaddr_in addr{};
    std::uint32_t lis = pd ? rel::Listen(d, ad, &addr) : 0;
    rel::Mapping src(4 * kPage), sink(4 * kPage), own(kPage);
    std::memset(src.get(), 0xa5, src.size());
    std::memset(sink.get(), 0xee, sink.size());
    ndk_u_mem_register m{};
    ndk_u_mr_register om{};
    if (!lis || t_mem_register(d.fd(), pd, src.get(), src.size(), NDK_U_MEM_READWRITE, &m) != 0)
        _exit(100);
    ndk_u_mem_register ms{};
    if (t_mem_register(d.fd(), pd, sink.get(), sink.size(), NDK_U_MEM_READWRITE, &ms) != 0 ||
        !rel::RegisterMr(d, pd, own.addr(), own.size(), NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE, &om))
        _exit(101);
    long tries = 0, got_in = 0, errored = 0, qp_dead = 0, reconnects = 0, leaked = 0;
    std::map<std::int32_t, long> statuses;
    // Every key byte, or the token's own and every fourth.
    const std::uint32_t stride = rel::Scale() < 1 ? 4 : 1;
    long keys = 0;
    for (int op : {NDK_U_OP_WRITE, NDK_U_OP_READ}) {
        for (std::uint32_t k = 0; k < 256; k++) {
            if (k % stride && k != (token & 0xffu)) continue;
            keys += op == NDK_U_OP_WRITE;
            rel::Conn c;
            if (!rel::Connect(d, ad, lis, addr, pd, pd, &c)) _exit(102);
            ++reconnects;
            // A healthy connection first: a write to our own MR works.
            std::int32_t st = -1;
            if (!rel::Rdma(d, c, NDK_U_OP_WRITE, src.addr(), 64, m.local_token, own.addr(),
                           om.remote_token, &st) ||
                st != 0)
                _exit(103);
            std::uint32_t guess = (token & ~0xffu) | k;
            bool done =
                op == NDK_U_OP_WRITE
                    ? rel::Rdma(d, c, op, src.addr(), len, m.local_token, raddr, guess, &st)
                    : rel::Rdma(d, c, op, sink.addr(), len, ms.local_token, raddr, guess, &st);
            ++tries;
            if (done && st == 0) ++got_in;
            if (!done || st != 0) {
                ++errored;
                ++statuses[done ? st : -1];
            }
            for (std::size_t i = 0; i < sink.size(); i++) leaked += sink.get()[i] != 0xee;
            // The QP is in error now: our own write does not go through.
            if (!rel::Rdma(d, c, NDK_U_OP_WRITE, src.addr(), 64, m.local_token, own.addr(),
                           om.remote_token, &st) ||
                st != 0)
                ++qp_dead;
            rel::Disconnect(d, c);
        }
    }
    std::printf(
        "S3 foreign QP (own process, PD, connection): %ld tries (%ld key bytes of 256, the "
        "token's own among them, x write, read), %ld got in, %ld completed in error, QP in "
        "error after %ld, %ld connections, %ld sink bytes changed; statuses:",
        tries, keys, got_in, errored, qp_dead, reconnects, leaked);
    for (auto& [s, n] : statuses) std::printf(" %#x:%ld", static_cast<unsigned>(s), n);
    std::printf("\n");
    std::fflush(stdout);
    _exit(got_in == 0 && errored == tries && qp_dead == tries && leaked == 0 ? 0 : 1);
}

void S3(Owner& o) {
    std::vector<unsigned char> before(o.victim->get(), o.victim->get() + o.victim->size());
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) Attacker(o.waddr, o.wtoken, static_cast<std::uint32_t>(o.wlen));
    T_CHECK(WaitChild(pid) == 0);
    bool same = std::memcmp(before.data(), o.victim->get(), before.size()) == 0;
    std::printf("S3 owner: window memory and canaries %s; the window still works for the owner\n",
                same ? "unchanged" : "CHANGED");
    T_CHECK(same);
    T_CHECK(OwnerTraffic(o));
}

}  // namespace

int main() {
    rel::Counters base = rel::ReadCounters();
    rel::PrintCounters("baseline", base);
    if (base.objects < 0) return kTestFail;
    long pin0 = t_vmpin_kb();
    {
        Owner o;
        if (!SetupOwner(o, 1000)) {
            std::fprintf(stderr, "owner setup failed: %s\n", strerror(errno));
            return kTestFail;
        }
        T_CHECK(OwnerTraffic(o));
        double t0 = rel::Now();
        S1(o);
        double t1 = rel::Now();
        S2(o);
        double t2 = rel::Now();
        S3(o);
        std::printf("times: S1 %.1f s, S2 %.1f s, S3 %.1f s\n", t1 - t0, t2 - t1, rel::Now() - t2);
    }
    T_CHECK(rel::WaitCounters(base, 10));
    T_CHECK(t_vmpin_kb() == pin0);
    rel::PrintCounters("after", rel::ReadCounters());
    return t_result("rel-isolation");
}
