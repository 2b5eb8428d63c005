// SPDX-License-Identifier: GPL-2.0
// Helpers of the reliability tests (Documentation/reliability.md): the
// stress scale, ndk.ko's debugfs counters, an RAII /dev/ndk file with its
// event queue, and loopback connections over rxe through raw ioctls.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <utility>

#include "uobj_common.hpp"

namespace rel {

// The positive number environment variable @name holds, else 1.
inline double EnvFactor(const char* name) {
    const char* s = std::getenv(name);
    double v = s ? std::strtod(s, nullptr) : 1.0;
    return v > 0 ? v : 1.0;
}

// NDK_STRESS_SCALE (default 1): the debug-kernel tier sets e.g. 0.2.
inline double Scale() { return EnvFactor("NDK_STRESS_SCALE"); }

// @n scaled, but never below @floor (the debug-kernel number).
inline long Scaled(long n, long floor) {
    long v = std::lround(static_cast<double>(n) * Scale());
    return std::max(v, std::min(floor, n));
}

// NDK_VM_TIMEOUT_SCALE (default 1): the factor of a test's time bounds,
// 6 on the debug kernel, as the kernel scenarios' time_scale.
inline double TimeScale() { return std::max(1.0, EnvFactor("NDK_VM_TIMEOUT_SCALE")); }

inline double Now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ndk.ko's debugfs counters (Documentation/uapi.md, "Object handles").
struct Counters {
    long objects = -1, pinned = -1;
    bool operator==(const Counters&) const = default;
};

inline Counters ReadCounters() {
    return {t_ndk_counter("user_objects"), t_ndk_counter("user_pinned_pages")};
}

// Waits up to @secs for the counters to read @base; true if they do.
inline bool WaitCounters(const Counters& base, double secs) {
    double end = Now() + secs;
    for (;;) {
        if (ReadCounters() == base) return true;
        if (Now() > end) return false;
        usleep(10000);
    }
}

inline void PrintCounters(const char* what, const Counters& c) {
    std::printf("%s: user_objects %ld, user_pinned_pages %ld, VmPin %ld kB\n", what, c.objects,
                c.pinned, t_vmpin_kb());
}

// An anonymous private mapping, unmapped when it goes.
class Mapping {
  public:
    explicit Mapping(std::size_t len, int prot = PROT_READ | PROT_WRITE) : len_(len) {
        void* p = mmap(nullptr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        p_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
    }
    ~Mapping() {
        if (p_) munmap(p_, len_);
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    unsigned char* get() const { return p_; }
    std::uintptr_t addr() const { return reinterpret_cast<std::uintptr_t>(p_); }
    std::size_t size() const { return len_; }
    // Forget the mapping (the caller unmapped it).
    void release() { p_ = nullptr; }

  private:
    unsigned char* p_;
    std::size_t len_;
};

// An open /dev/ndk with the events taken from it but not yet consumed.
class Dev {
  public:
    Dev() : fd_(t_open_ndk()) {}
    explicit Dev(int fd) : fd_(fd) {}
    ~Dev() { Close(); }
    Dev(const Dev&) = delete;
    Dev& operator=(const Dev&) = delete;
    int fd() const { return fd_; }
    void Close() {
        if (fd_ >= 0) close(fd_);
        fd_ = -1;
        events_.clear();
    }
    // Hand the file back without closing it.
    int Release() {
        int fd = fd_;
        fd_ = -1;
        events_.clear();
        return fd;
    }
    int Ioctl(unsigned long cmd, void* arg) const { return ioctl(fd_, cmd, arg); }

    // A create command: the new handle, or 0 with errno set.
    template <class T>
    std::uint32_t Create(unsigned long cmd, T* arg) {
        return Ioctl(cmd, arg) == 0 ? arg->handle : 0;
    }

    // The first adapter opened, or 0.
    std::uint32_t OpenAdapter() {
        long id = t_first_adapter(fd_);
        return id < 0 ? 0 : t_adapter_open(fd_, static_cast<std::uint32_t>(id));
    }

    // Waits up to @ms for an event (type, handle); others stay queued.
    bool WaitEvent(std::uint32_t type, std::uint32_t handle, ndk_u_event* out, int ms = 10000) {
        double end = Now() + ms / 1000.0;
        for (;;) {
            for (auto it = events_.begin(); it != events_.end(); ++it) {
                if (it->type == type && it->handle == handle) {
                    *out = *it;
                    events_.erase(it);
                    return true;
                }
            }
            if (Now() > end) return false;
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, 20) < 0) return false;
            ndk_u_event ev[16];
            ndk_u_event_get g{};
            g.count = 16;
            g.events = reinterpret_cast<std::uintptr_t>(ev);
            if (Ioctl(NDK_IOCTL_EVENT_GET, &g) != 0) return false;
            for (std::uint32_t i = 0; i < g.count; i++) events_.push_back(ev[i]);
        }
    }

    // Forget queued events of @handle (it was closed).
    void DropEvents(std::uint32_t handle) {
        std::erase_if(events_, [handle](const ndk_u_event& e) { return e.handle == handle; });
    }

    // Waits up to @ms for one result on CQ @cq.
    bool WaitResult(std::uint32_t cq, ndk_u_result* out, int ms = 10000) {
        double end = Now() + ms / 1000.0;
        for (;;) {
            ndk_u_cq_poll p{};
            p.handle = cq;
            p.count = 1;
            p.results = reinterpret_cast<std::uintptr_t>(out);
            if (Ioctl(NDK_IOCTL_CQ_POLL, &p) != 0) return false;
            if (p.count == 1) return true;
            ndk_u_cq_arm a{};
            a.handle = cq;
            a.type = NDK_U_CQ_NOTIFY_ANY;
            if (Ioctl(NDK_IOCTL_CQ_ARM, &a) != 0) return false;
            p.count = 1;
            if (Ioctl(NDK_IOCTL_CQ_POLL, &p) != 0) return false;
            if (p.count == 1) return true;
            if (Now() > end) return false;
            ndk_u_event ev;
            WaitEvent(NDK_U_EVENT_CQ, cq, &ev, 50);
        }
    }

  private:
    int fd_;
    std::deque<ndk_u_event> events_;
};

inline sockaddr_in LoopbackAddress(std::uint16_t port = 0) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    inet_pton(AF_INET, "10.99.0.1", &sin.sin_addr);
    return sin;
}

// A listener on 10.99.0.1, any port; its handle (0 on failure) and the
// address it listens on.
inline std::uint32_t Listen(Dev& d, std::uint32_t adapter, sockaddr_in* bound) {
    ndk_u_listener_create lc{};
    lc.adapter_handle = adapter;
    std::uint32_t lis = d.Create(NDK_IOCTL_LISTENER_CREATE, &lc);
    if (!lis) return 0;
    ndk_u_listen ln{};
    ln.listener_handle = lis;
    sockaddr_in sin = LoopbackAddress();
    std::memcpy(ln.address, &sin, sizeof(sin));
    if (d.Ioctl(NDK_IOCTL_LISTEN, &ln) != 0) {
        t_handle_close(d.fd(), lis);
        return 0;
    }
    std::memcpy(bound, ln.address, sizeof(*bound));
    return lis;
}

// One loopback connection on one file: the active QP (qp[0], CQ cq[0])
// in @pd_active connected through @lis to the passive QP (qp[1], cq[1])
// in @pd_passive.
struct Conn {
    std::uint32_t cq[2] = {0, 0}, qp[2] = {0, 0}, con = 0, acc = 0;
};

inline std::uint32_t CreateQp(int fd, std::uint32_t pd, std::uint32_t cq, std::uint64_t ctx) {
    ndk_u_qp_create qc{};
    qc.pd_handle = pd;
    qc.receive_cq_handle = qc.initiator_cq_handle = cq;
    qc.receive_queue_depth = qc.initiator_queue_depth = 16;
    qc.max_receive_request_sge = qc.max_initiator_request_sge = 2;
    qc.context = ctx;
    return ioctl(fd, NDK_IOCTL_QP_CREATE, &qc) == 0 ? qc.handle : 0;
}

inline void Disconnect(Dev& d, Conn& c) {
    for (std::uint32_t h : {c.acc, c.con, c.qp[0], c.qp[1], c.cq[0], c.cq[1]}) {
        if (!h) continue;
        t_handle_close(d.fd(), h);
        d.DropEvents(h);
    }
    c = {};
}

inline bool Connect(Dev& d, std::uint32_t adapter, std::uint32_t lis, const sockaddr_in& to,
                    std::uint32_t pd_active, std::uint32_t pd_passive, Conn* c) {
    *c = {};
    for (int i = 0; i < 2; i++) {
        ndk_u_cq_create cc{};
        cc.adapter_handle = adapter;
        cc.depth = 64;
        c->cq[i] = d.Create(NDK_IOCTL_CQ_CREATE, &cc);
        c->qp[i] = c->cq[i] ? CreateQp(d.fd(), i ? pd_passive : pd_active, c->cq[i], 0x100 + i) : 0;
    }
    ndk_u_connector_create ccr{};
    ccr.adapter_handle = adapter;
    c->con = d.Create(NDK_IOCTL_CONNECTOR_CREATE, &ccr);
    if (!c->qp[0] || !c->qp[1] || !c->con) {
        Disconnect(d, *c);
        return false;
    }
    ndk_u_connect cn{};
    cn.connector_handle = c->con;
    cn.qp_handle = c->qp[0];
    cn.inbound_read_limit = cn.outbound_read_limit = 1;
    std::memcpy(cn.dest_address, &to, sizeof(to));
    ndk_u_event ev{};
    bool ok = d.Ioctl(NDK_IOCTL_CONNECT, &cn) == 0 &&
              d.WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev) && ev.object != 0;
    if (ok) {
        c->acc = ev.object;
        ndk_u_accept ac{};
        ac.connector_handle = c->acc;
        ac.qp_handle = c->qp[1];
        ac.inbound_read_limit = ac.outbound_read_limit = 1;
        ok = d.Ioctl(NDK_IOCTL_ACCEPT, &ac) == 0 && d.WaitEvent(NDK_U_EVENT_REQUEST, c->con, &ev) &&
             ev.status == 0;
    }
    if (ok) {
        ndk_u_connector_request cr{};
        cr.connector_handle = c->con;
        ok = d.Ioctl(NDK_IOCTL_COMPLETE_CONNECT, &cr) == 0 &&
             d.WaitEvent(NDK_U_EVENT_REQUEST, c->con, &ev) && ev.status == 0 &&
             d.WaitEvent(NDK_U_EVENT_REQUEST, c->acc, &ev) && ev.status == 0;
    }
    if (!ok) Disconnect(d, *c);
    return ok;
}

// An RDMA read or write of @len bytes at @local (token @ltoken) from QP
// @side of @c (0: the active one); the completion's status through
// @status.  False when the post was refused inline or no completion came.
inline bool Rdma(Dev& d, const Conn& c, std::uint32_t op, std::uint64_t local, std::uint32_t len,
                 std::uint32_t ltoken, std::uint64_t raddr, std::uint32_t rtoken,
                 std::int32_t* status, int side = 0) {
    ndk_u_sge sge{local, len, ltoken};
    ndk_u_qp_post p{};
    p.qp_handle = c.qp[side];
    p.op = op;
    p.nsge = 1;
    p.sgl = reinterpret_cast<std::uintptr_t>(&sge);
    p.remote_address = raddr;
    p.remote_token = rtoken;
    p.request_context = 0x77;
    if (d.Ioctl(NDK_IOCTL_QP_POST, &p) != 0) return false;
    ndk_u_result r{};
    if (!d.WaitResult(c.cq[side], &r)) return false;
    *status = r.status;
    return true;
}

// MR_CREATE + MR_REGISTER over [addr, addr + len) with @flags; the MR's
// handle (0 on failure) and its tokens.
inline std::uint32_t RegisterMr(Dev& d, std::uint32_t pd, std::uint64_t addr, std::uint64_t len,
                                std::uint32_t flags, ndk_u_mr_register* out) {
    ndk_u_mr_create mc{};
    mc.pd_handle = pd;
    std::uint32_t mr = d.Create(NDK_IOCTL_MR_CREATE, &mc);
    if (!mr) return 0;
    ndk_u_mr_register r{};
    r.handle = mr;
    r.flags = flags;
    r.address = addr;
    r.length = len;
    if (d.Ioctl(NDK_IOCTL_MR_REGISTER, &r) != 0) {
        t_handle_close(d.fd(), mr);
        return 0;
    }
    *out = r;
    return mr;
}

// A one-byte message with room for one descriptor (SCM_RIGHTS).
struct FdMsg {
    char byte = 'f';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    FdMsg() {
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl;
        msg.msg_controllen = sizeof(ctl);
    }
    FdMsg(const FdMsg&) = delete;
    FdMsg& operator=(const FdMsg&) = delete;
};

// Passes @fd over the AF_UNIX socket @sock; false on error.
inline bool SendFd(int sock, int fd) {
    FdMsg m;
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    return sendmsg(sock, &m.msg, 0) == 1;
}

// Takes a descriptor passed over @sock; -1 on error.
inline int RecvFd(int sock) {
    FdMsg m;
    if (recvmsg(sock, &m.msg, 0) != 1) return -1;
    cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
    if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd;
    std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    return fd;
}

}  // namespace rel
