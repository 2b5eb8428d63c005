// SPDX-License-Identifier: BSD-2-Clause
// ndk-target: exposes one buffer to RDMA peers through NDK memory windows,
// one connection at a time, with the descriptor of the window in the
// accept's private data (Documentation/ndk-target.md).
//
//   ndk-target --listen ADDR:PORT --size BYTES --window OFFSET:LENGTH
//              --access r|w|rw [--connections N] [--adapter NAME]
//              [--device PATH]
//
// The buffer (BYTES, zero-filled) is registered once: a MemoryRegion with
// local write only.  Then, for each connection request, one after another:
//   1. a fresh QP (with its own CQ) is created in the buffer's PD;
//   2. the memory window is bound over [OFFSET, OFFSET + LENGTH) with the
//      remote rights of --access, which gives a new token;
//   3. the request is accepted with 16 bytes of private data, the layout
//      of SMB2_BUFFER_DESCRIPTOR_V1, little-endian:
//        u64 address  the buffer's user address + OFFSET (the MR's iova
//                     is the user address, and the window addresses its
//                     bytes with the same addresses)
//        u32 token    the window's remote token (the peer's rkey)
//        u32 length   LENGTH
//   4. when the peer disconnects (normally, or because a refused access
//      broke the connection), the window is invalidated and the QP closed,
//      so the next connection gets another token.
// Further connection requests wait (queued on the listener) until the
// current connection has closed.
//
// Why the window is bound on an internal QP: NdkBind is a work request,
// and a QP takes work requests only once connected (ndk.ko refuses them
// with ENOTCONN, STATUS_CONNECTION_INVALID, before).  The token must be in
// the ACCEPT's private data, i.e. known before the connection's QP is
// connected.  So ndk-target connects two QPs of the same PD to each other
// at startup (loopback, through a listener of its own on ADDR, any port)
// and posts every bind and invalidate on one of them.  A window belongs to
// the PD, not to the QP that bound it: ndk.ko emulates windows with
// fast-register MRs, whose rkey every QP of the PD honours, so the peer's
// accesses through the connection's QP use it like any window.
//
// Output: "listening ADDR:PORT" (the address listened on: PORT 0 picks a
// free port) once it accepts connections, one line per connection, and at
// exit "sha256 <64 hex digits>" of the whole buffer.  It exits 0 after N
// connections have been accepted and closed (--connections; 0: no limit)
// or on SIGINT/SIGTERM; 1 on an error, 2 on bad usage.  Every wait is a
// poll() on the adapter's /dev/ndk descriptor (and a signalfd): no busy
// loop.
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <string>

#include "ndk/ndk.hpp"
#include "sha256.h"

namespace {

using std::chrono::milliseconds;

constexpr milliseconds kTimeout{10000};
constexpr std::size_t kDescriptorSize = 16;

struct Options {
    ndk::SockAddr listen;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::uint32_t access = 0;  // op_flag::kAllowRemoteRead / kAllowRemoteWrite
    const char* access_text = "";
    std::uint64_t connections = 0;  // 0: until a signal
    std::string adapter;
    std::string device = ndk::kDefaultDevicePath;
    bool reopen = false;  // after the adapter's removal: wait, serve again
};

void Usage(FILE* out) {
    std::fprintf(out,
                 "usage: ndk-target --listen ADDR:PORT --size BYTES --window OFFSET:LENGTH\n"
                 "                  --access r|w|rw [--connections N] [--adapter NAME]\n"
                 "                  [--device PATH] [--reopen]\n"
                 "Exposes a zero-filled buffer of BYTES through a memory window over\n"
                 "[OFFSET, OFFSET+LENGTH), bound anew for each connection; the accept's\n"
                 "private data is the window's descriptor (u64 address, u32 token, u32\n"
                 "length, little-endian).  Prints the buffer's sha256 at exit.  With\n"
                 "--reopen, the adapter's removal closes what used it and the target\n"
                 "serves again, the buffer unchanged, once the adapter is back.\n");
}

bool ParseU64(const std::string& s, std::uint64_t* out) {
    if (s.empty() || s[0] == '-') return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s.c_str(), &end, 0);
    if (errno || *end) return false;
    *out = v;
    return true;
}

void PutLe(std::byte* p, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) p[i] = static_cast<std::byte>(v >> (8 * i));
}

std::string Hex(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08" PRIx32, v);
    return buf;
}

std::string StatusText(ndk::NTSTATUS s) {
    return std::string(ndk::StatusName(s)) + " (" + Hex(static_cast<std::uint32_t>(s)) + ")";
}

// A signal is pending on sfd (SIGINT, SIGTERM): says which; the target stops.
void ReportSignal(int sfd) {
    signalfd_siginfo si{};
    if (read(sfd, &si, sizeof(si)) == sizeof(si))
        std::printf("signal %s: stopping\n", strsignal(static_cast<int>(si.ssi_signo)));
}

int Fail(const char* what, const ndk::Error& e) {
    std::fprintf(stderr, "ndk-target: %s: %s\n", what, e.Message().c_str());
    return 1;
}

// One accepted (or being accepted) connection.
struct Connection {
    std::uint64_t number = 0;
    ndk::Connector connector;
    ndk::CompletionQueue cq;
    ndk::QueuePair qp;
    std::uint32_t token = 0;
    bool accepted = false;
};

class Target {
  public:
    explicit Target(Options o) : opt_(std::move(o)) {}
    ~Target() {
        if (buffer_) munmap(buffer_, opt_.size);
    }
    int Run();

  private:
    // The buffer, once; then Attach().
    int Setup();
    // Everything on the adapter: open it, PD, MR, window, internal
    // connection, listener.  quiet: no message for a failure.
    int Attach(bool quiet);
    // The adapter is gone: close what used it (no request can run any
    // more), count an accepted connection as closed.
    void Detach();
    // After Detach(): Attach() every half second until it works (true),
    // a signal comes on sfd or the options cannot fit the adapter (false).
    bool Reattach(int sfd);
    int ConnectInternal();
    // Binds the window on the internal QP; the new token, or an error.
    ndk::Result<std::uint32_t> BindWindow();
    // Invalidates the window on the internal QP and waits for it.
    bool InvalidateWindow();
    // Waits for one result of the internal CQ of the given type.
    bool InternalResult(std::uint32_t type, const char* what);
    void Start(ndk::Connector request);
    // The connection is over: invalidate, close, count it if accepted.
    void End(const char* why);
    // Handles one event; false when the target must stop with an error.
    bool Dispatch(const ndk::Event& ev);
    // The current connection at exit (a signal): disconnect it first.
    void Shutdown();

    Options opt_;
    std::byte* buffer_ = nullptr;
    std::optional<ndk::Adapter> adapter_;
    ndk::AdapterInfo info_{};
    std::optional<ndk::ProtectionDomain> pd_;
    std::optional<ndk::MemoryRegion> mr_;
    std::optional<ndk::MemoryWindow> mw_;
    // The internal loopback pair: binds and invalidates go on bind_qp_.
    std::optional<ndk::CompletionQueue> internal_cq_;
    std::optional<ndk::QueuePair> bind_qp_, peer_qp_;
    std::optional<ndk::Listener> internal_listener_;
    std::optional<ndk::Connector> bind_conn_, peer_conn_;
    // The listener peers connect to, and what waits on it.
    std::optional<ndk::Listener> listener_;
    std::deque<ndk::Connector> waiting_;
    std::optional<Connection> current_;
    std::uint64_t started_ = 0;
    std::uint64_t closed_ = 0;
    std::uint64_t request_context_ = 0x1000;
    bool error_ = false;
    bool removed_ = false;  // ADAPTER_REMOVED came: Detach() before anything
};

int Target::Setup() {
    void* p = mmap(nullptr, opt_.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::fprintf(stderr, "ndk-target: mmap %" PRIu64 " bytes: %s\n", opt_.size,
                     std::strerror(errno));
        return 1;
    }
    buffer_ = static_cast<std::byte*>(p);
    std::memset(buffer_, 0, opt_.size);  // anonymous memory is zero; touch it all once
    return Attach(false);
}

int Target::Attach(bool quiet) {
    // A failure: the message (unless quiet) and the exit status.
    auto fail = [quiet](const std::string& what, const ndk::Error& e) {
        return quiet ? 1 : Fail(what.c_str(), e);
    };
    if (!opt_.adapter.empty()) {
        auto a = ndk::Adapter::OpenByName(opt_.adapter, opt_.device.c_str());
        if (!a) return fail("open adapter " + opt_.adapter, a.error());
        adapter_.emplace(std::move(*a));
    } else {
        auto dev = ndk::Device::Open(opt_.device.c_str());
        if (!dev) return fail("open " + opt_.device, dev.error());
        auto list = dev->ListAdapters();
        if (!list) return fail("list adapters", list.error());
        if (list->empty()) {
            if (!quiet) std::fprintf(stderr, "ndk-target: no NDK adapter\n");
            return 1;
        }
        auto a = ndk::Adapter::Open(list->front().id, opt_.device.c_str());
        if (!a) return fail("open adapter " + list->front().name, a.error());
        adapter_.emplace(std::move(*a));
    }
    auto info = adapter_->QueryInfo();
    if (!info) return fail("query adapter info", info.error());
    info_ = *info;
    if (opt_.length > info_.max_window_size) {
        std::fprintf(
            stderr, "ndk-target: window of %" PRIu64 " bytes: the adapter's limit is %" PRIu64 "\n",
            opt_.length, info_.max_window_size);
        return 2;
    }
    auto pd = adapter_->CreateProtectionDomain();
    if (!pd) return fail("create PD", pd.error());
    pd_.emplace(std::move(*pd));

    auto mr = ndk::MemoryRegion::Create(*pd_);
    if (!mr) return Fail("create MR", mr.error());
    mr_.emplace(std::move(*mr));
    if (auto r = mr_->Register(buffer_, opt_.size, ndk::mr_flag::kAllowLocalWrite); !r)
        return Fail("register the buffer", r.error());
    auto mw = ndk::MemoryWindow::Create(*pd_);
    if (!mw) return Fail("create MW", mw.error());
    mw_.emplace(std::move(*mw));

    if (int rc = ConnectInternal()) return rc;

    auto l = ndk::Listener::Create(*adapter_, 1);
    if (!l) return fail("create listener", l.error());
    listener_.emplace(std::move(*l));
    auto where = listener_->Listen(opt_.listen);
    if (!where) return fail("listen on " + opt_.listen.ToString(), where.error());
    std::printf("listening %s\n", where->ToString().c_str());
    std::fflush(stdout);
    return 0;
}

void Target::Detach() {
    if (current_) {
        if (current_->accepted) ++closed_;
        std::printf("connection %" PRIu64 " closed (adapter removed)\n", current_->number);
        current_.reset();
    }
    // Children before what they were created from.
    waiting_.clear();
    listener_.reset();
    bind_conn_.reset();
    peer_conn_.reset();
    internal_listener_.reset();
    bind_qp_.reset();
    peer_qp_.reset();
    internal_cq_.reset();
    mw_.reset();
    mr_.reset();
    pd_.reset();
    adapter_.reset();
    removed_ = false;
}

bool Target::Reattach(int sfd) {
    std::printf("adapter removed: waiting for it to come back\n");
    std::fflush(stdout);
    for (;;) {
        pollfd p{sfd, POLLIN, 0};
        int n = ::poll(&p, 1, 500);
        if (n < 0 && errno != EINTR) {
            std::perror("ndk-target: poll");
            return false;
        }
        if (n > 0) {
            ReportSignal(sfd);
            return false;
        }
        int rc = Attach(true);
        if (rc == 0) return true;
        Detach();       // what the try opened
        if (rc == 2) {  // the options do not fit the adapter: never will
            error_ = true;
            return false;
        }
    }
}

// Connects bind_qp_ and peer_qp_ to each other through a listener on the
// same address, any port.
int Target::ConnectInternal() {
    auto cq = ndk::CompletionQueue::Create(*adapter_, 16, 0xc0);
    if (!cq) return Fail("create internal CQ", cq.error());
    internal_cq_.emplace(std::move(*cq));
    ndk::QueuePairParams qpp;
    qpp.receive_queue_depth = 1;
    qpp.initiator_queue_depth = 4;
    qpp.context = 0xb1;
    auto a = ndk::QueuePair::Create(*pd_, *internal_cq_, *internal_cq_, qpp);
    qpp.context = 0xb2;
    auto b = ndk::QueuePair::Create(*pd_, *internal_cq_, *internal_cq_, qpp);
    if (!a || !b) return Fail("create internal QPs", (!a ? a.error() : b.error()));
    bind_qp_.emplace(std::move(*a));
    peer_qp_.emplace(std::move(*b));

    auto l = ndk::Listener::Create(*adapter_, 2);
    if (!l) return Fail("create internal listener", l.error());
    internal_listener_.emplace(std::move(*l));
    auto where = internal_listener_->Listen(opt_.listen.WithPort(0));
    if (!where) return Fail("internal listen", where.error());
    auto c = ndk::Connector::Create(*adapter_, 3);
    if (!c) return Fail("create internal connector", c.error());
    bind_conn_.emplace(std::move(*c));
    if (auto r = bind_conn_->Connect(*bind_qp_, *where); !r)
        return Fail(("internal connect to " + where->ToString()).c_str(), r.error());
    auto req = internal_listener_->GetConnectionRequest(kTimeout);
    if (!req) return Fail("internal connection request", req.error());
    peer_conn_.emplace(std::move(*req));
    if (auto r = peer_conn_->Accept(*peer_qp_); !r) return Fail("internal accept", r.error());
    if (auto e = bind_conn_->WaitFor(ndk::RequestKind::kConnect, kTimeout); !e)
        return Fail("internal connect", e.error());
    if (auto r = bind_conn_->CompleteConnect(); !r)
        return Fail("internal complete connect", r.error());
    if (auto e = bind_conn_->WaitFor(ndk::RequestKind::kCompleteConnect, kTimeout); !e)
        return Fail("internal complete connect", e.error());
    if (auto e = peer_conn_->WaitFor(ndk::RequestKind::kAccept, kTimeout); !e)
        return Fail("internal accept", e.error());
    return 0;
}

bool Target::InternalResult(std::uint32_t type, const char* what) {
    // Stale results (none expected) are reported and skipped.
    for (;;) {
        std::array<ndk::CompletionResult, 1> r;
        auto n = internal_cq_->PollUntil(r, 1, kTimeout);
        if (!n) {
            Fail(what, n.error());
            return false;
        }
        if (*n == 0) {
            std::fprintf(stderr, "ndk-target: %s: no completion\n", what);
            return false;
        }
        if (r[0].type != type) {
            std::fprintf(stderr, "ndk-target: %s: unexpected %s completion\n", what,
                         ndk::OperationTypeName(r[0].type));
            continue;
        }
        if (!ndk::NtSuccess(r[0].status)) {
            std::fprintf(stderr, "ndk-target: %s: %s\n", what, StatusText(r[0].status).c_str());
            return false;
        }
        return true;
    }
}

ndk::Result<std::uint32_t> Target::BindWindow() {
    auto token = bind_qp_->Bind(request_context_++, *mr_, *mw_, buffer_ + opt_.offset, opt_.length,
                                opt_.access);
    if (!token) return token.error();
    if (!InternalResult(ndk::operation_type::kBind, "bind")) return ndk::Error::FromErrno(EIO);
    return *token;
}

bool Target::InvalidateWindow() {
    if (auto r = bind_qp_->Invalidate(request_context_++, *mw_); !r) {
        Fail("invalidate", r.error());
        return false;
    }
    return InternalResult(ndk::operation_type::kInvalidate, "invalidate");
}

void Target::Start(ndk::Connector request) {
    std::uint64_t number = ++started_;
    auto cq = ndk::CompletionQueue::Create(*adapter_, 4, 0x100 + number);
    if (!cq) {
        Fail("create CQ", cq.error());
        error_ = true;
        return;
    }
    ndk::QueuePairParams qpp;
    qpp.receive_queue_depth = 1;
    qpp.initiator_queue_depth = 1;
    qpp.context = 0x200 + number;
    auto qp = ndk::QueuePair::Create(*pd_, *cq, *cq, qpp);
    if (!qp) {
        Fail("create QP", qp.error());
        error_ = true;
        return;
    }
    auto token = BindWindow();
    if (!token) {
        Fail("bind the window", token.error());
        error_ = true;
        return;
    }
    std::array<std::byte, kDescriptorSize> desc{};
    PutLe(&desc[0], reinterpret_cast<std::uintptr_t>(buffer_) + opt_.offset, 8);
    PutLe(&desc[8], *token, 4);
    PutLe(&desc[12], opt_.length, 4);
    ndk::AcceptParams ap;
    // The peer reads from the window: it may have that many reads in
    // flight towards us (IRD); we read nothing (ORD 0 is not allowed by
    // every provider: 1).
    ap.inbound_read_limit = std::min<std::uint32_t>(info_.max_inbound_read_limit, 16);
    ap.outbound_read_limit = std::min<std::uint32_t>(info_.max_outbound_read_limit, 1);
    ap.private_data = desc;
    ap.request_context = number;
    current_.emplace(
        Connection{number, std::move(request), std::move(*cq), std::move(*qp), *token, false});
    if (auto r = current_->connector.Accept(current_->qp, ap); !r) {
        Fail("accept", r.error());
        End("accept refused");
    }
}

void Target::End(const char* why) {
    if (!current_) return;
    if (!InvalidateWindow()) error_ = true;
    if (current_->accepted) ++closed_;
    std::printf("connection %" PRIu64 " closed (%s), window %s invalidated\n", current_->number,
                why, Hex(current_->token).c_str());
    std::fflush(stdout);
    current_.reset();
}

bool Target::Dispatch(const ndk::Event& ev) {
    switch (ev.type) {
        case ndk::EventType::kConnectRequest:
            if (listener_ && ev.handle == listener_->handle()) {
                auto c = listener_->TakeConnectionRequest(ev);
                if (!c) {
                    Fail("connection request", c.error());
                    return false;
                }
                waiting_.push_back(std::move(*c));
            }
            return true;
        case ndk::EventType::kRequest:
            if (!current_ || ev.handle != current_->connector.handle()) return true;
            if (ev.request_kind() == ndk::RequestKind::kAccept) {
                if (!ndk::NtSuccess(ev.status)) {
                    std::printf("connection %" PRIu64 ": accept failed: %s\n", current_->number,
                                StatusText(ev.status).c_str());
                    End("accept failed");
                    return true;
                }
                current_->accepted = true;
                std::string peer = "?";
                if (auto a = current_->connector.GetPeerAddress(); a) peer = a->ToString();
                std::printf("connection %" PRIu64 " from %s: window 0x%" PRIx64
                            " token %s length %" PRIu64 " access %s\n",
                            current_->number, peer.c_str(),
                            static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(buffer_) +
                                                       opt_.offset),
                            Hex(current_->token).c_str(), opt_.length, opt_.access_text);
                std::fflush(stdout);
            } else if (ev.request_kind() == ndk::RequestKind::kDisconnect) {
                End("disconnected");
            }
            return true;
        case ndk::EventType::kDisconnected:
            if (current_ && ev.handle == current_->connector.handle()) {
                End("peer disconnected");
            } else if ((bind_conn_ && ev.handle == bind_conn_->handle()) ||
                       (peer_conn_ && ev.handle == peer_conn_->handle())) {
                std::fprintf(stderr, "ndk-target: the internal connection was lost\n");
                return false;
            }
            return true;
        case ndk::EventType::kAdapterRemoved:
            std::fprintf(stderr, "ndk-target: the adapter was removed\n");
            removed_ = true;
            return opt_.reopen;
        case ndk::EventType::kCq:  // a CQ arm that a PollUntil did not need
            return true;
    }
    return true;
}

void Target::Shutdown() {
    if (current_ && current_->accepted) {
        // Our own disconnect completes with a kDisconnect request event
        // (or the peer's kDisconnected came first).
        const std::uint32_t h = current_->connector.handle();
        if (current_->connector.Disconnect(0xd15c)) {
            (void)adapter_->WaitEvent(
                [h](const ndk::Event& e) {
                    return e.handle == h && (e.type == ndk::EventType::kDisconnected ||
                                             (e.type == ndk::EventType::kRequest &&
                                              e.request_kind() == ndk::RequestKind::kDisconnect));
                },
                kTimeout);
        }
    }
    End("target stopping");
    waiting_.clear();  // closing a request's connector rejects it
    if (bind_conn_) {
        const std::uint32_t h = bind_conn_->handle();
        if (bind_conn_->Disconnect(0xd15d))
            (void)adapter_->WaitEvent(
                [h](const ndk::Event& e) {
                    return e.handle == h && e.type == ndk::EventType::kRequest &&
                           e.request_kind() == ndk::RequestKind::kDisconnect;
                },
                kTimeout);
    }
}

int Target::Run() {
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &sigs, nullptr) != 0) {
        std::perror("ndk-target: sigprocmask");
        return 1;
    }
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        std::perror("ndk-target: signalfd");
        return 1;
    }
    if (int rc = Setup()) {
        close(sfd);
        return rc;
    }

    bool stop = false;
    while (!stop && !error_ && (opt_.connections == 0 || closed_ < opt_.connections)) {
        if (!current_ && !waiting_.empty()) {
            ndk::Connector next = std::move(waiting_.front());
            waiting_.pop_front();
            Start(std::move(next));
            continue;
        }
        std::array<ndk::Event, 16> evs;
        auto n = adapter_->GetEvents(evs);
        if (!n) {
            Fail("get events", n.error());
            error_ = true;
            break;
        }
        for (std::size_t i = 0; i < *n && !error_ && !removed_; ++i)
            if (!Dispatch(evs[i])) error_ = true;
        if (removed_ && !error_) {
            Detach();
            if (!Reattach(sfd)) stop = true;
            continue;
        }
        if (*n) continue;  // more may be queued, or kept by a helper
        std::array<pollfd, 2> p{{{adapter_->fd(), POLLIN, 0}, {sfd, POLLIN, 0}}};
        if (::poll(p.data(), p.size(), -1) < 0 && errno != EINTR) {
            std::perror("ndk-target: poll");
            error_ = true;
            break;
        }
        if (p[1].revents & POLLIN) {
            ReportSignal(sfd);
            stop = true;
        }
        if (p[0].revents & (POLLERR | POLLNVAL)) {
            std::fprintf(stderr, "ndk-target: /dev/ndk reported an error\n");
            error_ = true;
        }
    }
    Shutdown();
    close(sfd);

    char hex[65];
    ndk_sha256_hex(buffer_, opt_.size, hex);
    std::printf("connections %" PRIu64 " closed\nsha256 %s\n", closed_, hex);
    std::fflush(stdout);
    return error_ ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    bool have_listen = false, have_size = false, have_window = false, have_access = false;
    enum { kListen = 256, kSize, kWindow, kAccess, kConnections, kAdapter, kDevice, kReopen };
    static const option longopts[] = {
        {"listen", required_argument, nullptr, kListen},
        {"size", required_argument, nullptr, kSize},
        {"window", required_argument, nullptr, kWindow},
        {"access", required_argument, nullptr, kAccess},
        {"connections", required_argument, nullptr, kConnections},
        {"adapter", required_argument, nullptr, kAdapter},
        {"device", required_argument, nullptr, kDevice},
        {"reopen", no_argument, nullptr, kReopen},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, nullptr)) != -1) {
        std::string arg = optarg ? optarg : "";
        switch (c) {
            case kListen: {
                auto a = ndk::SockAddr::Parse(arg);
                if (!a || a->empty()) {
                    std::fprintf(stderr, "ndk-target: bad --listen %s\n", arg.c_str());
                    return 2;
                }
                opt.listen = *a;
                have_listen = true;
                break;
            }
            case kSize:
                if (!ParseU64(arg, &opt.size) || opt.size == 0) {
                    std::fprintf(stderr, "ndk-target: bad --size %s\n", arg.c_str());
                    return 2;
                }
                have_size = true;
                break;
            case kWindow: {
                auto colon = arg.find(':');
                if (colon == std::string::npos || !ParseU64(arg.substr(0, colon), &opt.offset) ||
                    !ParseU64(arg.substr(colon + 1), &opt.length) || opt.length == 0 ||
                    opt.length > UINT32_MAX) {
                    std::fprintf(stderr, "ndk-target: bad --window %s (OFFSET:LENGTH)\n",
                                 arg.c_str());
                    return 2;
                }
                have_window = true;
                break;
            }
            case kAccess:
                if (arg == "r") {
                    opt.access = ndk::op_flag::kAllowRemoteRead;
                } else if (arg == "w") {
                    opt.access = ndk::op_flag::kAllowRemoteWrite;
                } else if (arg == "rw") {
                    opt.access = ndk::op_flag::kAllowRemoteRead | ndk::op_flag::kAllowRemoteWrite;
                } else {
                    std::fprintf(stderr, "ndk-target: bad --access %s (r, w or rw)\n", arg.c_str());
                    return 2;
                }
                opt.access_text = optarg;
                have_access = true;
                break;
            case kConnections:
                if (!ParseU64(arg, &opt.connections)) {
                    std::fprintf(stderr, "ndk-target: bad --connections %s\n", arg.c_str());
                    return 2;
                }
                break;
            case kAdapter:
                opt.adapter = arg;
                break;
            case kDevice:
                opt.device = arg;
                break;
            case kReopen:
                opt.reopen = true;
                break;
            case 'h':
                Usage(stdout);
                return 0;
            default:
                Usage(stderr);
                return 2;
        }
    }
    if (optind != argc || !have_listen || !have_size || !have_window || !have_access) {
        Usage(stderr);
        return 2;
    }
    if (opt.offset > opt.size || opt.length > opt.size - opt.offset) {
        std::fprintf(stderr,
                     "ndk-target: window %" PRIu64 ":%" PRIu64 " is not inside %" PRIu64 " bytes\n",
                     opt.offset, opt.length, opt.size);
        return 2;
    }
    return Target(std::move(opt)).Run();
}
