// SPDX-License-Identifier: GPL-2.0
// The lifecycle fuzzer of issue 15 (Documentation/security.md): seeded
// random sequences of /dev/ndk commands, each run by a child that drops to
// user nobody, over raw ioctls (they reach every order, parents before
// children included, which libndk's RAII objects never issue).
//
// A sequence creates adapters, PDs, CQs, QPs, MRs (plain and
// fast-register), windows, registrations (MEM_REGISTER and MR_REGISTER),
// connectors and a listener; connects loopback pairs, stopping the
// handshake at a random step; posts receives, sends, reads, writes,
// fast-registers, binds and invalidates whose completions are left
// unpolled; arms and polls CQs, flushes QPs, disconnects, closes handles
// in any order, unmaps and remaps registered memory, closes and reopens
// the file, and forks a grandchild that uses the same file until it exits
// or is killed.  The sequence ends by closing the file, by exiting with it
// open, or by the parent's kill -9 after a random number of commands.
//
// The parent (root) is the watchdog: a child that has not exited 20 s
// after its kill -9 (or a sequence that runs past its time) is a failure
// with its state, wait channel and kernel stack printed; a command or
// close(fd) that takes more than 10 s fails the child.  After each
// sequence ndk.ko's debugfs counters (user_objects, user_pinned_pages)
// must come back to their baseline; after all of them the kernel log must
// have no new report.  hung_task_timeout_secs is 20 while it runs.
//
//   sec-lifecycle-fuzz [--seed S] [--sequences N] [--replay SEQSEED]
//
// The run's seed is printed (NDK_FUZZ_SEED or --seed replays a run); a
// failing sequence prints its own seed (--replay runs that one alone).
// Sequences: 120 x NDK_STRESS_SCALE, at least 40 (every run draws a new
// seed: CI runs add up to more).
#include <sys/prctl.h>

#include <array>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sec_common.hpp"

namespace {

using rel::Dev;

constexpr unsigned kPage = 4096;
constexpr double kSlowCommand = 10.0;  // a command or close(fd) longer fails
constexpr double kExitLimit = 20.0;    // kill -9 to exit
constexpr double kSequenceLimit = 240.0;

enum Kind { kAd, kPd, kCq, kQp, kMr, kFr, kMem, kMw, kCon, kLis, kKinds };
const char* const kKindName[kKinds] = {"adapter", "pd",  "cq", "qp",        "mr",
                                       "fr-mr",   "mem", "mw", "connector", "listener"};

// What the sequence knows of one handle (the kernel may know better).
struct Obj {
    std::uint32_t h = 0;
    Kind k = kAd;
    std::uint32_t ad = 0, pd = 0;
    bool reg = false;  // MR, MEM: registered; FR-MR: initialised
    std::uint64_t addr = 0, len = 0;
    std::uint32_t ltok = 0, rtok = 0;
    bool used = false;  // QP: given to a connector
    bool up = false;    // QP: its connection completed
    sockaddr_in at{};   // listener: its address
    // CQ, QP with a ring: its mapping (never unmapped: it outlives the
    // handle, the file and a fork) and its entries.
    unsigned char* ring = nullptr;
    std::uint32_t ring_entries = 0;
};

// The commands, counted by name.
enum Op {
    kOpAdapter,
    kOpPd,
    kOpCq,
    kOpQp,
    kOpMrCreate,
    kOpMrRegister,
    kOpMrDeregister,
    kOpMem,
    kOpMemDeregister,
    kOpInitFr,
    kOpMw,
    kOpToken,
    kOpConnect,
    kOpPost,
    kOpArm,
    kOpPoll,
    kOpFlush,
    kOpClose,
    kOpDisconnect,
    kOpEvents,
    kOpRemap,
    kOpReopen,
    kOpFork,
    kOpPause,
    kOps
};
const char* const kOpName[kOps] = {
    "adapter-open",  "pd-create",    "cq-create",      "qp-create",   "mr-create", "mr-register",
    "mr-deregister", "mem-register", "mem-deregister", "mr-init-fr",  "mw-create", "token-query",
    "connect",       "post",         "cq-arm",         "cq-poll",     "qp-flush",  "handle-close",
    "disconnect",    "event-get",    "remap",          "file-reopen", "fork",      "pause"};
// Weights of the commands in a sequence.
const unsigned kWeight[kOps] = {2, 3,  4, 5, 3, 5,  2, 4, 2, 3, 3, 2,
                                4, 16, 4, 3, 3, 14, 2, 2, 1, 1, 1, 2};

struct Buffer {
    unsigned char* p = nullptr;
    std::size_t len = 0;
    int prot = 0, flags = 0;
};

// Counts shared between a sequence's processes and the parent (an
// anonymous shared page): commands issued and succeeded, by kind.
struct Tally {
    unsigned long issued[kOps + 9];
    unsigned long ok[kOps + 9];
    unsigned long err[kOps + 9][140];  // failures by errno
    unsigned long slow;
};

class Sequence {
  public:
    Sequence(std::uint64_t seed, int progress_fd, Tally* tally)
        : rng_(seed), progress_(progress_fd), tally_(tally) {}

    // Runs the sequence; the child's exit status.
    int Run() {
        if (!MakeBuffers()) return 1;
        d_.emplace(t_open_ndk());
        if (fd() < 0) return 1;
        Setup();
        unsigned n = 10 + Rand(140);
        for (unsigned i = 0; i < n && !bad_; i++) Step();
        unsigned end = Rand(3);
        if (end == 0) {
            double t0 = rel::Now();
            d_->Close();
            Slow(rel::Now() - t0, "close(fd) at the end");
        } else if (end == 1) {
            // exit with everything open: the release runs in exit_files()
        } else {
            Fork(true);
        }
        return bad_;
    }

  private:
    int fd() const { return d_->fd(); }

    // Something to work with on a new file: adapter, PD, CQ, two QPs.
    void Setup() {
        AdapterOpen();
        PdCreate();
        CqCreate();
        QpCreate();
        QpCreate();
    }
    unsigned Rand(unsigned n) { return n ? static_cast<unsigned>(rng_() % n) : 0; }
    bool Chance(unsigned percent) { return Rand(100) < percent; }

    bool MakeBuffers() {
        const int kinds[][2] = {{PROT_READ | PROT_WRITE, MAP_PRIVATE},
                                {PROT_READ | PROT_WRITE, MAP_PRIVATE},
                                {PROT_READ | PROT_WRITE, MAP_PRIVATE},
                                {PROT_READ | PROT_WRITE, MAP_SHARED},
                                {PROT_READ, MAP_PRIVATE}};
        for (auto& k : kinds) {
            Buffer b;
            b.len = (k[0] == PROT_READ ? 4 : 16) * kPage;
            b.prot = k[0];
            b.flags = k[1] | MAP_ANONYMOUS;
            void* p = mmap(nullptr, b.len, b.prot, b.flags, -1, 0);
            if (p == MAP_FAILED) return false;
            b.p = static_cast<unsigned char*>(p);
            bufs_.push_back(b);
        }
        return true;
    }

    void Slow(double dt, const char* what) {
        if (dt <= kSlowCommand) return;
        std::fprintf(stderr, "pid %d: %s took %.1f s\n", getpid(), what, dt);
        __atomic_add_fetch(&tally_->slow, 1, __ATOMIC_RELAXED);
        bad_ = 2;
    }

    // One command: counted, timed, reported to the parent.
    int Io(Op op, unsigned long cmd, void* arg) {
        double t0 = rel::Now();
        int rc = ioctl(fd(), cmd, arg);
        int err = errno;
        Slow(rel::Now() - t0, kOpName[op]);
        __atomic_add_fetch(&tally_->issued[op], 1, __ATOMIC_RELAXED);
        if (rc == 0)
            __atomic_add_fetch(&tally_->ok[op], 1, __ATOMIC_RELAXED);
        else if (err > 0 && err < 140)
            __atomic_add_fetch(&tally_->err[op][err], 1, __ATOMIC_RELAXED);
        if (progress_ >= 0) {
            char c = 0;
            if (write(progress_, &c, 1) < 0) { /* the parent is gone */
            }
        }
        errno = err;
        return rc;
    }

    // An extra count: kOps connections up, kOps + op posts by op.
    void Count(unsigned slot, bool ok) {
        __atomic_add_fetch(&tally_->issued[slot], 1, __ATOMIC_RELAXED);
        if (ok) __atomic_add_fetch(&tally_->ok[slot], 1, __ATOMIC_RELAXED);
    }

    // A random live object that @pred accepts (nullptr if none).
    template <class Pred>
    Obj* Where(Pred pred) {
        std::vector<Obj*> v;
        for (auto& o : objs_)
            if (pred(o)) v.push_back(&o);
        return v.empty() ? nullptr : v[Rand(v.size())];
    }
    // Mostly objects of the PD of the QP being posted on (post_pd_).
    bool SamePd(const Obj& o) { return !post_pd_ || o.pd == post_pd_; }

    // A random live object of @k (nullptr if none).
    Obj* Pick(Kind k) {
        std::vector<Obj*> v;
        for (auto& o : objs_)
            if (o.k == k) v.push_back(&o);
        return v.empty() ? nullptr : v[Rand(v.size())];
    }
    Obj* PickAny() { return objs_.empty() ? nullptr : &objs_[Rand(objs_.size())]; }
    std::uint32_t HandleOf(Kind k) {
        Obj* o = Pick(k);
        // Sometimes a handle of another kind or a stale one.
        if (!o || Chance(3)) {
            Obj* a = PickAny();
            return a ? a->h : Rand(64);
        }
        return o->h;
    }
    void Add(const Obj& o) { objs_.push_back(o); }
    void Forget(std::uint32_t h) {
        std::erase_if(objs_, [h](const Obj& o) { return o.h == h; });
    }
    Obj* Find(std::uint32_t h) {
        for (auto& o : objs_)
            if (o.h == h) return &o;
        return nullptr;
    }

    // A random range of a buffer: [addr, addr + len).
    void Range(__u64* addr, __u64* len) {
        Buffer& b = bufs_[Rand(bufs_.size())];
        std::uint64_t off = Rand(b.len / kPage) * kPage + (Chance(30) ? Rand(kPage) : 0);
        if (off >= b.len) off = 0;
        std::uint64_t max = b.len - off;
        *len = 1 + Rand(static_cast<unsigned>(std::min<std::uint64_t>(max, 6 * kPage)));
        *addr = reinterpret_cast<std::uintptr_t>(b.p) + off;
    }

    // Mostly the oldest PD: objects that can work together share it.
    std::uint32_t MainPd() {
        for (auto& o : objs_)
            if (o.k == kPd && Chance(75)) return o.h;
        return HandleOf(kPd);
    }

    std::uint32_t Adapter() {
        Obj* a = Pick(kAd);
        return a ? a->h : 0;
    }

    void Step() {
        unsigned total = 0;
        for (unsigned w : kWeight) total += w;
        unsigned r = Rand(total);
        unsigned op = 0;
        while (r >= kWeight[op]) r -= kWeight[op++];
        switch (static_cast<Op>(op)) {
            case kOpAdapter:
                AdapterOpen();
                break;
            case kOpPd:
                PdCreate();
                break;
            case kOpCq:
                CqCreate();
                break;
            case kOpQp:
                QpCreate();
                break;
            case kOpMrCreate:
                MrCreate(-1);
                break;
            case kOpMrRegister:
                MrRegister();
                break;
            case kOpMrDeregister:
                MrDeregister();
                break;
            case kOpMem:
                MemRegister();
                break;
            case kOpMemDeregister:
                MemDeregister();
                break;
            case kOpInitFr:
                InitFr();
                break;
            case kOpMw:
                MwCreate();
                break;
            case kOpToken:
                TokenQuery();
                break;
            case kOpConnect:
                Connect();
                break;
            case kOpPost:
                Post();
                break;
            case kOpArm:
                Arm();
                break;
            case kOpPoll:
                Poll();
                break;
            case kOpFlush:
                Flush();
                break;
            case kOpClose:
                Close();
                break;
            case kOpDisconnect:
                Disconnect();
                break;
            case kOpEvents:
                Events();
                break;
            case kOpRemap:
                Remap();
                break;
            case kOpReopen:
                Reopen();
                break;
            case kOpFork:
                Fork(false);
                break;
            case kOpPause:
                usleep(Rand(3000));
                break;
            case kOps:
                break;
        }
    }

    void AdapterOpen() {
        if (Pick(kAd) && Chance(70)) return;
        ndk_u_adapter_query q{};
        q.flags = NDK_U_ADAPTER_QUERY_F_NEXT;
        if (ioctl(fd(), NDK_IOCTL_ADAPTER_QUERY, &q) != 0) return;
        ndk_u_adapter_open a{};
        a.adapter_id = q.adapter_id;
        if (Io(kOpAdapter, NDK_IOCTL_ADAPTER_OPEN, &a) == 0) Add({a.handle, kAd});
    }

    void PdCreate() {
        ndk_u_pd_create p{};
        p.adapter_handle = HandleOf(kAd);
        if (Io(kOpPd, NDK_IOCTL_PD_CREATE, &p) == 0) Add({p.handle, kPd, p.adapter_handle});
    }

    void CqCreate() {
        static const std::uint32_t depths[] = {1, 2, 4, 16, 64};
        ndk_u_cq_create c{};
        c.adapter_handle = HandleOf(kAd);
        c.depth = depths[Rand(5)];
        c.context = rng_();
        if (Chance(50)) c.flags = NDK_U_CQ_CREATE_F_RING;
        if (Io(kOpCq, NDK_IOCTL_CQ_CREATE, &c) == 0) {
            Obj o{c.handle, kCq, c.adapter_handle};
            MapRing(o, c.ring_offset, c.ring_size, c.ring_entries);
            Add(o);
        }
    }

    // Maps a new ring, mostly (an unmapped ring is used by the kernel
    // alone); a bad size or offset now and then must be refused.
    void MapRing(Obj& o, std::uint64_t offset, std::uint32_t size, std::uint32_t entries) {
        if (!size || Chance(10)) return;
        if (Chance(5)) {
            void* bad = mmap(nullptr, size + kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd(),
                             static_cast<off_t>(offset + (Chance(50) ? kPage : 0)));
            if (bad != MAP_FAILED) {
                std::fprintf(stderr, "pid %d: a bad ring mmap succeeded\n", getpid());
                bad_ = 1;
                munmap(bad, size + kPage);
            }
        }
        void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd(),
                       static_cast<off_t>(offset));
        if (p == MAP_FAILED) return;
        o.ring = static_cast<unsigned char*>(p);
        o.ring_entries = entries;
    }

    void QpCreate() {
        ndk_u_qp_create q{};
        q.pd_handle = MainPd();
        q.receive_cq_handle = HandleOf(kCq);
        q.initiator_cq_handle = Chance(50) ? q.receive_cq_handle : HandleOf(kCq);
        // Mostly CQs of the PD's adapter.
        const Obj* pd = Find(q.pd_handle);
        if (pd && Chance(90)) {
            std::uint32_t ad = pd->ad;
            if (Obj* c = Where([ad](const Obj& o) { return o.k == kCq && o.ad == ad; }))
                q.receive_cq_handle = q.initiator_cq_handle = c->h;
            if (Obj* c = Where([ad](const Obj& o) { return o.k == kCq && o.ad == ad; });
                c && Chance(50))
                q.initiator_cq_handle = c->h;
        }
        q.receive_queue_depth = 1 + Rand(16);
        q.initiator_queue_depth = 1 + Rand(16);
        q.max_receive_request_sge = 1 + Rand(3);
        q.max_initiator_request_sge = 1 + Rand(3);
        q.inline_data_size = Chance(30) ? 64 : 0;
        q.context = rng_();
        if (Chance(50)) q.flags = NDK_U_QP_CREATE_F_RING;
        if (Io(kOpQp, NDK_IOCTL_QP_CREATE, &q) == 0) {
            Obj o{q.handle, kQp};
            o.pd = q.pd_handle;
            MapRing(o, q.ring_offset, q.ring_size, q.ring_entries);
            Add(o);
        }
    }

    void MrCreate(int want = -1) {
        ndk_u_mr_create m{};
        m.pd_handle = MainPd();
        bool fr = want < 0 ? Chance(50) : want != 0;
        m.flags = fr ? NDK_U_MR_CREATE_F_FAST_REGISTER : 0;
        if (Io(kOpMrCreate, NDK_IOCTL_MR_CREATE, &m) == 0) {
            Obj o{m.handle, fr ? kFr : kMr};
            o.pd = m.pd_handle;
            Add(o);
        }
    }

    void MrRegister() {
        static const std::uint32_t flags[] = {0x0, 0x1, 0x2, 0x3, 0x5, 0x7, 0x8, 0x9, 0xa, 0xd};
        // Mostly an idle plain MR, made if there is none.
        Obj* o = Where([](const Obj& x) { return x.k == kMr && !x.reg; });
        if (!o && Chance(80)) {
            MrCreate(0);
            o = Where([](const Obj& x) { return x.k == kMr && !x.reg; });
        }
        if (!o) o = Pick(kMr);
        ndk_u_mr_register r{};
        r.handle = o ? o->h : HandleOf(kMr);
        r.flags = flags[Rand(10)];
        Range(&r.address, &r.length);
        if (Io(kOpMrRegister, NDK_IOCTL_MR_REGISTER, &r) == 0 && (o = Find(r.handle))) {
            o->reg = true;
            o->addr = r.address;
            o->len = r.length;
            o->ltok = r.local_token;
            o->rtok = r.remote_token;
        }
    }

    void MrDeregister() {
        Obj* o = Pick(kMr);
        ndk_u_mr_deregister d{};
        d.handle = o ? o->h : HandleOf(kMr);
        if (Io(kOpMrDeregister, NDK_IOCTL_MR_DEREGISTER, &d) == 0 && (o = Find(d.handle)))
            o->reg = false;
    }

    void MemRegister() {
        ndk_u_mem_register m{};
        m.pd_handle = MainPd();
        m.flags = 1 + Rand(3);
        Range(&m.address, &m.length);
        if (Io(kOpMem, NDK_IOCTL_MEM_REGISTER, &m) == 0 && !Find(m.handle)) {
            Obj o{m.handle, kMem};
            o.pd = m.pd_handle;
            o.reg = true;
            o.addr = m.address;
            o.len = m.length;
            o.ltok = m.local_token;
            o.rtok = m.remote_token;
            Add(o);
        }
    }

    void MemDeregister() {
        ndk_u_mem_deregister d{};
        d.handle = HandleOf(kMem);
        if (Io(kOpMemDeregister, NDK_IOCTL_MEM_DEREGISTER, &d) == 0 && !d.references)
            Forget(d.handle);
    }

    void InitFr() {
        Obj* o = Pick(kFr);
        if (!o && Chance(80)) {
            MrCreate(1);
            o = Pick(kFr);
        }
        ndk_u_mr_init_fr i{};
        i.handle = o ? o->h : HandleOf(kFr);
        i.adapter_page_count = Chance(60) ? 8 : 1 + Rand(8);
        i.flags = Chance(70) ? NDK_U_MR_INIT_FR_F_REMOTE_ACCESS : 0;
        if (Io(kOpInitFr, NDK_IOCTL_MR_INIT_FR, &i) == 0 && (o = Find(i.handle))) {
            o->reg = true;
            TokenOf(o);
        }
    }

    void MwCreate() {
        ndk_u_mw_create m{};
        m.pd_handle = MainPd();
        if (Io(kOpMw, NDK_IOCTL_MW_CREATE, &m) == 0) {
            Obj o{m.handle, kMw};
            o.pd = m.pd_handle;
            Add(o);
            TokenOf(&objs_.back());
        }
    }

    void TokenOf(Obj* o) {
        ndk_u_token_query t{};
        t.handle = o->h;
        if (Io(kOpToken, NDK_IOCTL_TOKEN_QUERY, &t) == 0) {
            o->ltok = t.local_token;
            o->rtok = t.remote_token;
        }
    }

    void TokenQuery() {
        Obj* o = PickAny();
        if (o) TokenOf(o);
    }

    std::uint32_t Listener() {
        Obj* l = Pick(kLis);
        if (l) return l->h;
        std::uint32_t ad = Adapter();
        ndk_u_listener_create lc{};
        lc.adapter_handle = ad;
        if (!ad || Io(kOpConnect, NDK_IOCTL_LISTENER_CREATE, &lc) != 0) return 0;
        Obj o{lc.handle, kLis, ad};
        ndk_u_listen ln{};
        ln.listener_handle = lc.handle;
        sockaddr_in sin = rel::LoopbackAddress();
        std::memcpy(ln.address, &sin, sizeof(sin));
        Add(o);
        if (Io(kOpConnect, NDK_IOCTL_LISTEN, &ln) != 0) return 0;
        std::memcpy(&objs_.back().at, ln.address, sizeof(sockaddr_in));
        return lc.handle;
    }

    // A fresh QP (or, now and then, one given to a connector already).
    Obj* ConnectQp(std::uint32_t not_this) {
        std::vector<Obj*> v;
        for (auto& o : objs_)
            if (o.k == kQp && o.h != not_this && (!o.used || Chance(5))) v.push_back(&o);
        return v.empty() ? nullptr : v[Rand(v.size())];
    }

    // A loopback handshake stopped at a random step.
    void Connect() {
        // Pointers into objs_ die with the next Add(): copy what is used.
        std::uint32_t lis = Listener();
        Obj* l = Find(lis);
        Obj* a = ConnectQp(0);
        if (!l || !a || !l->at.sin_port) return;
        const sockaddr_in at = l->at;
        const std::uint32_t ad = l->ad;
        unsigned stop = Chance(60) ? 6 : Rand(6);
        ndk_u_connector_create cc{};
        cc.adapter_handle = ad;
        ndk_u_connect cn{};
        cn.qp_handle = a->h;
        if (Io(kOpConnect, NDK_IOCTL_CONNECTOR_CREATE, &cc) != 0) return;
        Add({cc.handle, kCon, ad});
        std::uint32_t con = cc.handle;
        cn.connector_handle = con;
        cn.inbound_read_limit = cn.outbound_read_limit = 1;
        std::memcpy(cn.dest_address, &at, sizeof(at));
        if (Io(kOpConnect, NDK_IOCTL_CONNECT, &cn) != 0) return;
        if (Obj* q = Find(cn.qp_handle)) q->used = true;
        ndk_u_event ev{};
        if (stop == 0 || !d_->WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev, 3000) || !ev.object)
            return;
        std::uint32_t acc = ev.object;
        Add({acc, kCon, ad});
        if (stop == 1) return;
        if (Chance(10)) {
            ndk_u_reject rj{};
            rj.connector_handle = acc;
            Io(kOpConnect, NDK_IOCTL_REJECT, &rj);
            return;
        }
        Obj* b = ConnectQp(cn.qp_handle);
        if (!b) return;
        ndk_u_accept ac{};
        ac.connector_handle = acc;
        ac.qp_handle = b->h;
        ac.inbound_read_limit = ac.outbound_read_limit = 1;
        if (Io(kOpConnect, NDK_IOCTL_ACCEPT, &ac) != 0) return;
        if (Obj* q = Find(ac.qp_handle)) q->used = true;
        if (stop == 2 || !d_->WaitEvent(NDK_U_EVENT_REQUEST, con, &ev, 3000) || ev.status != 0)
            return;
        if (stop == 3) return;
        ndk_u_connector_request cr{};
        cr.connector_handle = con;
        if (Io(kOpConnect, NDK_IOCTL_COMPLETE_CONNECT, &cr) != 0 || stop == 4) return;
        if (d_->WaitEvent(NDK_U_EVENT_REQUEST, con, &ev, 3000) && ev.status == 0 &&
            d_->WaitEvent(NDK_U_EVENT_REQUEST, acc, &ev, 3000) && ev.status == 0) {
            for (std::uint32_t h : {cn.qp_handle, ac.qp_handle})
                if (Obj* q = Find(h)) q->up = true;
            Count(kOps, true);
        }
    }

    // An SGE over a registration (or a wrong one, now and then).
    ndk_u_sge Sge() {
        Obj* o = Where([this](const Obj& x) {
            // A fast-register MR's token names memory once fast-registered.
            return (x.k == kMr || x.k == kMem || (x.k == kFr && x.len)) && x.reg && x.ltok &&
                   SamePd(x);
        });
        ndk_u_sge s{};
        if (!o || Chance(5)) {
            __u64 len;
            Range(&s.address, &len);
            s.length = static_cast<std::uint32_t>(len & 0xff) + 1;
            s.token = static_cast<std::uint32_t>(rng_());
            return s;
        }
        s.token = o->ltok;
        if (o->k == kFr) {
            s.address = o->addr;
            s.length = 1 + Rand(kPage);
            return s;
        }
        std::uint64_t off = Rand(static_cast<unsigned>(o->len));
        s.address = o->addr + off;
        s.length = 1 + Rand(static_cast<unsigned>(std::min<std::uint64_t>(o->len - off, 8192)));
        return s;
    }

    // A registered object's remote token and an address inside it.
    void Remote(__u64* addr, __u32* token) {
        std::vector<Obj*> v;
        for (auto& o : objs_)
            if ((o.k == kMr || o.k == kFr || o.k == kMw) && o.rtok) v.push_back(&o);
        if (v.empty()) {
            *addr = rng_();
            *token = static_cast<std::uint32_t>(rng_());
            return;
        }
        Obj* o = v[Rand(v.size())];
        *addr = o->addr + (o->len ? Rand(static_cast<unsigned>(o->len)) : 0);
        *token = o->rtok;
    }

    Obj* Registered() {
        return Where(
            [this](const Obj& x) { return (x.k == kMr || x.k == kMem) && x.reg && SamePd(x); });
    }
    std::uint32_t OfPd(Kind k) {
        // A fast-register MR: mostly an initialised one; made if none.
        auto fit = [this, k](const Obj& x) {
            return x.k == k && SamePd(x) && (k != kFr || x.reg || Chance(10));
        };
        Obj* o = Where(fit);
        if (!o && post_pd_ && Chance(70)) {
            if (k == kMw) {
                ndk_u_mw_create m{};
                m.pd_handle = post_pd_;
                if (Io(kOpMw, NDK_IOCTL_MW_CREATE, &m) == 0) {
                    Obj w{m.handle, kMw};
                    w.pd = post_pd_;
                    Add(w);
                }
            } else if (k == kFr) {
                ndk_u_mr_create m{};
                m.pd_handle = post_pd_;
                m.flags = NDK_U_MR_CREATE_F_FAST_REGISTER;
                ndk_u_mr_init_fr i{};
                if (Io(kOpMrCreate, NDK_IOCTL_MR_CREATE, &m) == 0) {
                    Obj f{m.handle, kFr};
                    f.pd = post_pd_;
                    i.handle = m.handle;
                    i.adapter_page_count = 8;
                    i.flags = NDK_U_MR_INIT_FR_F_REMOTE_ACCESS;
                    f.reg = Io(kOpInitFr, NDK_IOCTL_MR_INIT_FR, &i) == 0;
                    Add(f);
                }
            }
            o = Where(fit);
        }
        return o && Chance(90) ? o->h : HandleOf(k);
    }

    void Post() {
        static const std::uint32_t send_flags[] = {0,
                                                   NDK_U_OP_FLAG_SILENT_SUCCESS,
                                                   NDK_U_OP_FLAG_SEND_AND_SOLICIT_EVENT,
                                                   NDK_U_OP_FLAG_INLINE,
                                                   NDK_U_OP_FLAG_DEFER,
                                                   NDK_U_OP_FLAG_READ_FENCE};
        static const std::uint32_t fr_flags[] = {
            NDK_U_OP_FLAG_ALLOW_REMOTE_READ,
            NDK_U_OP_FLAG_ALLOW_LOCAL_WRITE,
            NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE,
            NDK_U_OP_FLAG_RDMA_READ_SINK,
            NDK_U_OP_FLAG_ALLOW_REMOTE_READ | NDK_U_OP_FLAG_SILENT_SUCCESS,
            NDK_U_OP_FLAG_DEFER};
        // No connection yet: usually make one first.
        if (!Where([](const Obj& x) { return x.k == kQp && x.up; }) && Chance(50)) Connect();
        ndk_u_sge sgl[3];
        ndk_u_qp_post p{};
        p.qp_handle = HandleOf(kQp);
        // Mostly a connected QP: requests of others are refused inline.
        std::vector<std::uint32_t> up;
        for (auto& o : objs_)
            if (o.k == kQp && o.up) up.push_back(o.h);
        if (!up.empty() && Chance(85)) p.qp_handle = up[Rand(up.size())];
        const Obj* qp = Find(p.qp_handle);
        post_pd_ = qp && Chance(90) ? qp->pd : 0;
        p.op = 1 + Rand(8);
        p.request_context = rng_();
        switch (p.op) {
            case NDK_U_OP_SEND:
            case NDK_U_OP_SEND_INVALIDATE:
            case NDK_U_OP_RECEIVE:
            case NDK_U_OP_READ:
            case NDK_U_OP_WRITE:
                p.nsge = Chance(10) ? 0 : 1 + Rand(3);
                for (std::uint32_t i = 0; i < p.nsge; i++) sgl[i] = Sge();
                p.sgl = reinterpret_cast<std::uintptr_t>(sgl);
                if (p.op != NDK_U_OP_RECEIVE) p.flags = send_flags[Rand(6)];
                if (p.op == NDK_U_OP_READ && Chance(20))
                    p.flags |= NDK_U_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE;
                if (p.op == NDK_U_OP_READ || p.op == NDK_U_OP_WRITE)
                    Remote(&p.remote_address, &p.remote_token);
                if (p.op == NDK_U_OP_SEND_INVALIDATE) {
                    __u64 unused;
                    Remote(&unused, &p.remote_token);
                }
                break;
            case NDK_U_OP_FAST_REGISTER: {
                // OfPd() may add objects: pointers into objs_ after it.
                p.object_handle = OfPd(kFr);
                Obj* m = Registered();
                p.mr_handle = m ? m->h : HandleOf(kMr);
                p.flags = fr_flags[Rand(6)];
                if (m) {
                    std::uint64_t off = Rand(static_cast<unsigned>(m->len));
                    p.address = m->addr + off;
                    p.length = 1 + Rand(static_cast<unsigned>(std::min<std::uint64_t>(
                                       m->len - off, Chance(70) ? kPage : 4 * kPage)));
                }
                p.remote_address = 0x10000000ULL + (p.address & (kPage - 1));
                break;
            }
            case NDK_U_OP_BIND: {
                p.object_handle = OfPd(kMw);
                Obj* m = Registered();
                p.mr_handle = m ? m->h : HandleOf(kMr);
                p.flags =
                    Chance(50) ? NDK_U_OP_FLAG_ALLOW_REMOTE_READ : NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE;
                if (m) {
                    std::uint64_t off = Rand(static_cast<unsigned>(m->len));
                    p.address = m->addr + off;
                    p.length = 1 + Rand(static_cast<unsigned>(m->len - off));
                }
                break;
            }
            default:  // INVALIDATE
                p.object_handle = Chance(50) ? OfPd(kFr) : OfPd(kMw);
                break;
        }
        int rc;
        // The handle may name another kind of object: only a QP's ring
        // is an array of descriptors.
        if (const Obj* q = Find(p.qp_handle); q && q->k == kQp && q->ring && Chance(60))
            rc = RingPost(*q, p);
        else
            rc = Io(kOpPost, NDK_IOCTL_QP_POST, &p);
        Count(kOps + p.op, rc == 0);
        if (rc != 0 && errno > 0 && errno < 140)
            __atomic_add_fetch(&tally_->err[kOps + p.op][errno], 1, __ATOMIC_RELAXED);
        if (rc == 0 && (p.op == NDK_U_OP_FAST_REGISTER || p.op == NDK_U_OP_BIND)) {
            if (Obj* o = Find(p.object_handle)) {
                o->rtok = p.token;
                if (o->k == kFr) o->ltok = p.token;
                o->addr = p.op == NDK_U_OP_BIND ? p.address : p.remote_address;
                o->len = p.length;
            }
        }
    }

    // Posts p through the QP's submission ring: mostly as libndk does
    // (one descriptor, then the doorbell), sometimes with garbage around
    // it, a doorbell over slots never written, or an index out of range.
    int RingPost(const Obj& q, ndk_u_qp_post& p) {
        auto* slots = reinterpret_cast<ndk_u_qp_post*>(q.ring);
        std::uint32_t head = static_cast<std::uint32_t>(rng_());
        std::uint32_t idx = head & (q.ring_entries - 1);
        std::memcpy(&slots[idx], &p, sizeof(p));
        ndk_u_qp_doorbell d{};
        d.handle = q.h;
        d.head = head;
        d.count = 1;
        if (Chance(10)) {
            // Random bytes in the next slots, posted after this one.
            d.count = 1 + Rand(std::min(q.ring_entries, 4U));
            for (std::uint32_t i = 1; i < d.count; i++) {
                auto* b =
                    reinterpret_cast<unsigned char*>(&slots[(head + i) & (q.ring_entries - 1)]);
                for (std::size_t j = 0; j < sizeof(ndk_u_qp_post); j++) b[j] = rng_() & 0xff;
            }
        } else if (Chance(5)) {
            d.count = Chance(50) ? 0 : q.ring_entries + 1 + Rand(8);
        }
        int rc = Io(kOpPost, NDK_IOCTL_QP_DOORBELL, &d);
        if (rc != 0) return rc;
        if (d.error) {
            errno = static_cast<int>(d.error);
            return -1;
        }
        p.token = slots[idx].token;
        return 0;
    }

    void Arm() {
        ndk_u_cq_arm a{HandleOf(kCq), Rand(3)};
        Io(kOpArm, NDK_IOCTL_CQ_ARM, &a);
    }

    void Poll() {
        ndk_u_result res[8];
        ndk_u_cq_poll p{};
        p.handle = HandleOf(kCq);
        p.count = 1 + Rand(8);
        p.results = reinterpret_cast<std::uintptr_t>(res);
        // A ring is read as libndk does, or its head is set to garbage.
        if (const Obj* c = Find(p.handle); c && c->k == kCq && c->ring && Chance(60)) {
            auto* hdr = reinterpret_cast<ndk_u_cq_ring*>(c->ring);
            std::uint32_t tail = __atomic_load_n(&hdr->tail, __ATOMIC_ACQUIRE);
            std::uint32_t head = Chance(80) ? tail : static_cast<std::uint32_t>(rng_());
            __atomic_store_n(&hdr->head, head, __ATOMIC_RELEASE);
            return;
        }
        Io(kOpPoll, NDK_IOCTL_CQ_POLL, &p);
    }

    void Flush() {
        ndk_u_qp_flush f{HandleOf(kQp), 0};
        Io(kOpFlush, NDK_IOCTL_QP_FLUSH, &f);
    }

    void Close() {
        // Any handle, parents before children included (-EBUSY then).
        Obj* o = PickAny();
        ndk_u_handle_close c{};
        c.handle = o ? o->h : Rand(64);
        if (Io(kOpClose, NDK_IOCTL_HANDLE_CLOSE, &c) == 0) {
            d_->DropEvents(c.handle);
            Forget(c.handle);
        }
    }

    void Disconnect() {
        ndk_u_connector_request r{};
        r.connector_handle = HandleOf(kCon);
        Io(kOpDisconnect, NDK_IOCTL_DISCONNECT, &r);
    }

    // Takes the queued events (none is of type 0xffff).
    void Events() {
        ndk_u_event ev;
        d_->WaitEvent(0xffff, 0, &ev, 1);
        __atomic_add_fetch(&tally_->issued[kOpEvents], 1, __ATOMIC_RELAXED);
    }

    void Remap() {
        Buffer& b = bufs_[Rand(bufs_.size())];
        __atomic_add_fetch(&tally_->issued[kOpRemap], 1, __ATOMIC_RELAXED);
        if (munmap(b.p, b.len) != 0) return;
        void* p = mmap(b.p, b.len, b.prot, b.flags | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED) {
            std::perror("remap");
            bad_ = 1;
        }
    }

    void Reopen() {
        __atomic_add_fetch(&tally_->issued[kOpReopen], 1, __ATOMIC_RELAXED);
        double t0 = rel::Now();
        d_->Close();
        Slow(rel::Now() - t0, "close(fd)");
        objs_.clear();
        d_.emplace(t_open_ndk());
        if (fd() < 0)
            bad_ = 1;
        else
            Setup();
    }

    // A grandchild that shares the file (and a copy of the model) issues
    // commands until it exits or is killed.
    void Fork(bool last) {
        __atomic_add_fetch(&tally_->issued[kOpFork], 1, __ATOMIC_RELAXED);
        std::fflush(nullptr);
        pid_t g = fork();
        if (g < 0) return;
        if (g == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            progress_ = -1;
            rng_.seed(rng_() ^ 0x9e3779b97f4a7c15ULL);
            // The rings are the opener's alone: a child has no mapping
            // of them (VM_DONTCOPY).
            for (auto& o : objs_) {
                unsigned char vec = 0;
                if (o.ring && mincore(o.ring, 1, &vec) == 0) {
                    std::fprintf(stderr, "pid %d: a forked child still maps a ring\n", getpid());
                    bad_ = 1;
                }
                o.ring = nullptr;
            }
            // Its commands are refused (EPERM: not the opener), but
            // its exit may be the file's release.
            unsigned n = 1 + Rand(6);
            for (unsigned i = 0; i < n && !bad_; i++) Step();
            _exit(bad_);
        }
        if (last) {
            // The file's last reference goes with the grandchild.
            double t0 = rel::Now();
            d_->Close();
            Slow(rel::Now() - t0, "close(fd) with a grandchild");
        }
        if (Chance(50)) {
            usleep(Rand(20000));
            kill(g, SIGKILL);
        }
        int st = sec::WaitStatus(g, kExitLimit);
        if (st == -1) {
            sec::DumpTask(g, "grandchild does not exit");
            bad_ = 3;
            kill(g, SIGKILL);
        } else if (WIFEXITED(st) && WEXITSTATUS(st)) {
            bad_ = WEXITSTATUS(st);
        }
    }

    std::mt19937_64 rng_;
    int progress_;
    Tally* tally_;
    std::uint32_t post_pd_ = 0;
    std::optional<Dev> d_;
    std::vector<Obj> objs_;
    std::vector<Buffer> bufs_;
    int bad_ = 0;
};

std::uint64_t SplitMix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Processes of user nobody in D state: state, wait channel, stack.
void DumpNobody() {
    FILE* f = popen("ps -u nobody -o pid= 2>/dev/null", "r");
    if (!f) return;
    int pid;
    while (std::fscanf(f, "%d", &pid) == 1) sec::DumpTask(pid, "nobody's process");
    pclose(f);
}

struct Outcome {
    bool ok = true;
    bool killed = false;
    bool fatal = false;  // a process cannot be got rid of: stop the run
};

// One sequence in a child dropped to nobody; the parent may kill -9 it
// after a random number of commands.
Outcome RunSequence(std::uint64_t seed, Tally* tally, const rel::Counters& base) {
    Outcome out;
    int pfd[2];
    if (pipe(pfd) != 0) return {false, false, true};
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        // After the credentials change, which clears it.
        if (!sec::BecomeNobody()) _exit(1);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        Sequence s(seed, pfd[1], tally);
        _exit(s.Run());
    }
    close(pfd[1]);
    if (pid < 0) {
        close(pfd[0]);
        return {false, false, true};
    }
    std::mt19937_64 rng(seed ^ 0x5bd1e995);
    // Kill after this many commands (about 40% of the sequences).
    long kill_at = rng() % 100 < 40 ? static_cast<long>(rng() % 150) : -1;
    long seen = 0;
    double t0 = rel::Now();
    int st = -1;
    for (;;) {
        pollfd p{pfd[0], POLLIN, 0};
        if (poll(&p, 1, 20) > 0) {
            char buf[256];
            ssize_t n = read(pfd[0], buf, sizeof(buf));
            if (n > 0) seen += n;
        }
        if (kill_at >= 0 && seen >= kill_at) {
            kill(pid, SIGKILL);
            out.killed = true;
            st = sec::WaitStatus(pid, kExitLimit);
            if (st == -1) {
                sec::DumpTask(pid, "no exit 20 s after kill -9");
                out = {false, true, true};
            }
            break;
        }
        int s = 0;
        if (waitpid(pid, &s, WNOHANG) == pid) {
            st = s;
            break;
        }
        if (rel::Now() - t0 > kSequenceLimit) {
            sec::DumpTask(pid, "sequence runs too long");
            kill(pid, SIGKILL);
            if (sec::WaitStatus(pid, kExitLimit) == -1) sec::DumpTask(pid, "no exit after kill -9");
            out = {false, false, true};
            break;
        }
    }
    close(pfd[0]);
    if (!out.killed && st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        std::fprintf(stderr, "sequence %#llx: child status %#x\n",
                     static_cast<unsigned long long>(seed), st);
        out.ok = false;
    }
    if (!rel::WaitCounters(base, kExitLimit)) {
        rel::PrintCounters("counters not back to baseline", rel::ReadCounters());
        DumpNobody();
        out.ok = false;
        out.fatal = true;
    }
    return out;
}

int Fuzz(std::uint64_t seed, long sequences, bool replay) {
    sec::HungTaskTimeout hung(20);
    auto* tally = static_cast<Tally*>(
        mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (tally == MAP_FAILED) return 1;
    std::memset(tally, 0, sizeof(*tally));
    rel::Counters base = rel::ReadCounters();
    long reports = sec::KernelReports();
    double t0 = rel::Now();
    long run = 0, killed = 0, failed = 0;
    for (long i = 0; i < sequences; i++) {
        std::uint64_t s = replay ? seed : SplitMix(seed + static_cast<std::uint64_t>(i));
        Outcome o = RunSequence(s, tally, base);
        run++;
        killed += o.killed;
        if (!o.ok) {
            failed++;
            std::fprintf(stderr,
                         "sequence %ld failed: replay with sec-lifecycle-fuzz --replay %#llx\n", i,
                         static_cast<unsigned long long>(s));
        }
        if (o.fatal) break;
    }
    double dt = rel::Now() - t0;
    unsigned long issued = 0, ok = 0;
    std::string by;
    for (int k = 0; k < kOps; k++) {
        issued += tally->issued[k];
        ok += tally->ok[k];
        by += std::string(" ") + kOpName[k] + " " + std::to_string(tally->ok[k]) + "/" +
              std::to_string(tally->issued[k]);
    }
    long now = sec::KernelReports();
    std::printf(
        "sec-lifecycle-fuzz: seed %#llx: %ld sequences (%ld killed by kill -9), "
        "%lu operations (%lu succeeded) in %.1f s; %ld failed, %lu slow, "
        "%ld new kernel reports\n",
        static_cast<unsigned long long>(seed), run, killed, issued, ok, dt, failed, tally->slow,
        now - reports);
    std::printf("operations (succeeded/issued):%s\n", by.c_str());
    static const char* const posts[] = {"send",  "send-invalidate", "receive", "read",
                                        "write", "fast-register",   "bind",    "invalidate"};
    std::string pby;
    for (int k = 0; k < 8; k++)
        pby += std::string(" ") + posts[k] + " " + std::to_string(tally->ok[kOps + 1 + k]) + "/" +
               std::to_string(tally->issued[kOps + 1 + k]);
    std::printf("connections completed: %lu of %lu handshakes to the end; posts:%s\n",
                tally->ok[kOps], tally->issued[kOps], pby.c_str());
    for (int k = 0; k < kOps + 9; k++) {
        std::string e;
        for (int n = 1; n < 140; n++)
            if (tally->err[k][n])
                e += std::string(" ") + strerrorname_np(n) + " " + std::to_string(tally->err[k][n]);
        if (!e.empty())
            std::printf("  %s refused:%s\n", k < kOps ? kOpName[k] : posts[k - kOps - 1],
                        e.c_str());
    }
    rel::PrintCounters("counters at the end", rel::ReadCounters());
    if (now != reports) {
        std::system("dmesg | tail -n 60");
        failed++;
    }
    return failed != 0 || run != sequences;
}

}  // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::uint64_t seed = 0;
    bool have_seed = false, replay = false;
    long sequences = rel::Scaled(120, 40);
    if (const char* e = std::getenv("NDK_FUZZ_SEED")) {
        seed = std::strtoull(e, nullptr, 0);
        have_seed = true;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--seed") {
            seed = std::strtoull(argv[i + 1], nullptr, 0);
            have_seed = true;
        } else if (a == "--replay") {
            seed = std::strtoull(argv[i + 1], nullptr, 0);
            have_seed = replay = true;
            sequences = 1;
        } else if (a == "--sequences") {
            sequences = std::strtol(argv[i + 1], nullptr, 0);
        } else {
            std::fprintf(stderr, "usage: %s [--seed S] [--sequences N] [--replay SEQSEED]\n",
                         argv[0]);
            return kTestFail;
        }
    }
    if (!have_seed) seed = std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32);
    if (geteuid() != 0 || rel::ReadCounters().objects < 0) {
        std::fprintf(stderr, "needs root and ndk.ko's debugfs counters\n");
        return kTestFail;
    }
    std::printf("sec-lifecycle-fuzz: seed %#llx (NDK_FUZZ_SEED=%#llx replays it), %ld %s\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
                sequences, replay ? "sequence (replay)" : "sequences");
    if (Fuzz(seed, sequences, replay)) t_failures++;
    return t_result("sec-lifecycle-fuzz");
}
