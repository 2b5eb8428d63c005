// SPDX-License-Identifier: BSD-2-Clause
// ndk-demo: NDK memory registration end to end through libndk, in one
// process, over loopback connections on one adapter.
//
//   ndk-demo [--adapter NAME] [--addr IP] [--device PATH] [--timeout MS]
//
// A listener and two connectors on the same adapter give two connected
// QP pairs: A (client A <-> server A) and B (client B <-> server B).
//   1. register a server buffer and a client buffer (MR_REGISTER, local
//      write);
//   2. server A fast-registers a range of the server buffer with remote
//      read and write, and binds a memory window over a sub-range of it;
//   3. client A RDMA-writes a pattern into the window through the window's
//      token, then RDMA-reads it back through the fast-registered MR's
//      token; both copies are compared with the pattern;
//   4. client A writes one byte just past the window: the peer refuses it
//      and the write completes with an error (the connection is gone);
//   5. server B invalidates the window and the fast-registered MR (same
//      PD, connection still up), and client B shows that a read through
//      the invalidated MR token is refused as well.
// Each step is printed as it happens, then a summary table.  Exit status:
// 0 every step behaved as expected, 1 otherwise, 2 usage.
#include <getopt.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ndk/ndk.hpp"

namespace {

using std::chrono::milliseconds;

struct Options {
    std::string adapter = "rxe0";
    std::string addr = "10.99.0.1";
    std::string device = ndk::kDefaultDevicePath;
    milliseconds timeout{10000};
};

std::string Hex(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08" PRIx32, v);
    return buf;
}

std::string StatusText(ndk::NTSTATUS s) {
    return std::string(ndk::StatusName(s)) + " (" + Hex(static_cast<std::uint32_t>(s)) + ")";
}

// One line of the summary.
struct Step {
    std::string operation;
    std::uint64_t bytes = 0;
    std::string status;
    std::string expected;
    bool pass = false;
};

class Demo {
  public:
    explicit Demo(Options o) : opt_(std::move(o)) {}
    int Run();

  private:
    // Records a step and prints it; returns pass.
    bool Record(std::string op, std::uint64_t bytes, std::string status, std::string expected,
                bool pass, const std::string& detail = "") {
        std::printf("  [%s] %s: %s%s%s\n", pass ? "ok" : "FAIL", op.c_str(), status.c_str(),
                    detail.empty() ? "" : " - ", detail.c_str());
        steps_.push_back(Step{std::move(op), bytes, std::move(status), std::move(expected), pass});
        return pass;
    }
    // An inline failure of a library call: a failed step.
    bool Failed(const std::string& op, const ndk::Error& e) {
        return Record(op, 0, e.Message(), "success", false);
    }
    // Prints the summary of the steps so far: the demo stops here.
    int Abort() {
        Summary();
        return 1;
    }
    int Abort(const std::string& op, const ndk::Error& e) {
        Failed(op, e);
        return Abort();
    }
    // Waits for one completion on cq and records it; expected_ok tells
    // whether success or an error completion is what should happen.
    // bytes: what the request moves, shown in the summary (ndk.ko reports
    // bytes_transferred for receives only; the completion's own value is
    // printed with the step).
    bool Complete(const ndk::CompletionQueue& cq, const std::string& op, bool expected_ok,
                  std::uint64_t bytes = 0);
    bool Connect(ndk::Connector& client, std::optional<ndk::Connector>& server,
                 const ndk::QueuePair& cqp, const ndk::QueuePair& sqp, const char* name);
    void Summary() const;

    Options opt_;
    std::vector<Step> steps_;
    ndk::AdapterInfo info_{};
    ndk::SockAddr listen_addr_;
    ndk::Listener* listener_ = nullptr;
    ndk::Adapter* adapter_ = nullptr;
};

bool Demo::Complete(const ndk::CompletionQueue& cq, const std::string& op, bool expected_ok,
                    std::uint64_t bytes) {
    ndk::CompletionResult r[1];
    auto n = cq.PollUntil(r, 1, opt_.timeout);
    if (!n) return Failed(op + " (poll)", n.error());
    if (*n == 0)
        return Record(op, 0, "no completion", expected_ok ? "success" : "error completion", false,
                      "timed out");
    bool ok = ndk::NtSuccess(r[0].status);
    char detail[96];
    std::snprintf(
        detail, sizeof(detail), "%s completion, %" PRIu32 " bytes, provider error %" PRIu32,
        ndk::OperationTypeName(r[0].type), r[0].bytes_transferred, r[0].provider_error_code);
    return Record(op, bytes, StatusText(r[0].status),
                  expected_ok ? "STATUS_SUCCESS" : "error completion", ok == expected_ok, detail);
}

bool Demo::Connect(ndk::Connector& client, std::optional<ndk::Connector>& server,
                   const ndk::QueuePair& cqp, const ndk::QueuePair& sqp, const char* name) {
    std::uint32_t ird = std::min<std::uint32_t>(info_.max_inbound_read_limit, 4);
    std::uint32_t ord = std::min<std::uint32_t>(info_.max_outbound_read_limit, 4);
    std::string op = std::string("connect ") + name;
    ndk::ConnectParams cp;
    cp.inbound_read_limit = ird;
    cp.outbound_read_limit = ord;
    if (auto r = client.Connect(cqp, listen_addr_, cp); !r) return Failed(op, r.error());
    auto req = listener_->GetConnectionRequest(opt_.timeout);
    if (!req) return Failed(op + " (connection request)", req.error());
    server.emplace(std::move(*req));
    ndk::AcceptParams ap;
    ap.inbound_read_limit = ird;
    ap.outbound_read_limit = ord;
    if (auto r = server->Accept(sqp, ap); !r) return Failed(op + " (accept)", r.error());
    if (auto e = client.WaitFor(ndk::RequestKind::kConnect, opt_.timeout); !e)
        return Failed(op + " (connect event)", e.error());
    if (auto r = client.CompleteConnect(); !r) return Failed(op + " (complete connect)", r.error());
    if (auto e = client.WaitFor(ndk::RequestKind::kCompleteConnect, opt_.timeout); !e)
        return Failed(op + " (complete-connect event)", e.error());
    if (auto e = server->WaitFor(ndk::RequestKind::kAccept, opt_.timeout); !e)
        return Failed(op + " (accept event)", e.error());
    auto d = client.GetConnectionData();
    if (!d) return Failed(op + " (connection data)", d.error());
    return Record(op, 0, StatusText(ndk::status::kSuccess), "connected", true,
                  d->local_address.ToString() + " -> " + d->peer_address.ToString() +
                      ", peer IRD " + std::to_string(d->inbound_read_limit) + " ORD " +
                      std::to_string(d->outbound_read_limit));
}

int Demo::Run() {
    const long page = sysconf(_SC_PAGESIZE);
    std::printf("ndk-demo: adapter %s, address %s\n", opt_.adapter.c_str(), opt_.addr.c_str());

    // --- adapter, PD, CQs, QPs -------------------------------------------
    auto adapter = ndk::Adapter::OpenByName(opt_.adapter, opt_.device.c_str());
    if (!adapter) {
        std::fprintf(stderr, "ndk-demo: open adapter %s: %s\n", opt_.adapter.c_str(),
                     adapter.error().Message().c_str());
        return 1;
    }
    adapter_ = &*adapter;
    auto info = adapter->QueryInfo();
    auto pd = adapter->CreateProtectionDomain();
    if (!info || !pd) {
        std::fprintf(stderr, "ndk-demo: %s\n",
                     (!info ? info.error() : pd.error()).Message().c_str());
        return 1;
    }
    info_ = *info;
    auto where = ndk::SockAddr::Parse(opt_.addr);
    if (!where) {
        std::fprintf(stderr, "ndk-demo: bad address %s\n", opt_.addr.c_str());
        return 2;
    }

    std::printf("\n== objects and connections (events through poll() on fd %d)\n", adapter->fd());
    auto server_cq = ndk::CompletionQueue::Create(*adapter, 64, 1);
    auto client_cq = ndk::CompletionQueue::Create(*adapter, 64, 2);
    if (!server_cq || !client_cq)
        return Abort("create CQs", (!server_cq ? server_cq.error() : client_cq.error()));
    ndk::QueuePairParams qpp;
    qpp.receive_queue_depth = 4;
    qpp.initiator_queue_depth = 16;
    qpp.max_receive_request_sge = 1;
    qpp.max_initiator_request_sge = 1;
    std::vector<ndk::QueuePair> qps;
    const char* qp_names[] = {"client A", "server A", "client B", "server B"};
    for (int i = 0; i < 4; ++i) {
        qpp.context = 0x100 + i;
        auto qp = ndk::QueuePair::Create(*pd, i % 2 ? *server_cq : *client_cq,
                                         i % 2 ? *server_cq : *client_cq, qpp);
        if (!qp) return Abort(std::string("create QP ") + qp_names[i], qp.error());
        qps.push_back(std::move(*qp));
    }
    const auto& client_a = qps[0];
    const auto& server_a = qps[1];
    const auto& client_b = qps[2];
    const auto& server_b = qps[3];

    auto listener = ndk::Listener::Create(*adapter, 0x200);
    if (!listener) return Abort("create listener", listener.error());
    listener_ = &*listener;
    auto bound = listener->Listen(*where);
    if (!bound) return Abort("listen", bound.error());
    listen_addr_ = *bound;
    Record("listen", 0, StatusText(ndk::status::kSuccess), "listening", true,
           "on " + listen_addr_.ToString());

    auto conn_a = ndk::Connector::Create(*adapter, 0xa);
    auto conn_b = ndk::Connector::Create(*adapter, 0xb);
    if (!conn_a || !conn_b)
        return Abort("create connectors", (!conn_a ? conn_a.error() : conn_b.error()));
    // The passive sides: the connection requests' connectors.
    std::optional<ndk::Connector> acc_a, acc_b;
    if (!Connect(*conn_a, acc_a, client_a, server_a, "A") ||
        !Connect(*conn_b, acc_b, client_b, server_b, "B"))
        return Abort();

    // --- 1. registrations ------------------------------------------------
    const std::size_t srv_len = 16 * page, cli_len = 4 * page;
    auto* srv = static_cast<std::uint8_t*>(
        mmap(nullptr, srv_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    auto* cli = static_cast<std::uint8_t*>(
        mmap(nullptr, cli_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (srv == MAP_FAILED || cli == MAP_FAILED) {
        std::perror("ndk-demo: mmap");
        return 1;
    }
    std::memset(srv, 0xee, srv_len);
    std::memset(cli, 0, cli_len);

    std::printf("\n== 1. registration (MR_REGISTER, NDK_MR_FLAG_ALLOW_LOCAL_WRITE)\n");
    auto srv_mr = ndk::MemoryRegion::Create(*pd);
    auto cli_mr = ndk::MemoryRegion::Create(*pd);
    if (!srv_mr || !cli_mr) return Abort("create MRs", srv_mr ? cli_mr.error() : srv_mr.error());
    if (auto r = srv_mr->Register(srv, srv_len, ndk::mr_flag::kAllowLocalWrite); !r)
        return Abort("register server buffer", r.error());
    Record("register server buffer", srv_len, StatusText(ndk::status::kSuccess), "registered", true,
           "local token " + Hex(srv_mr->local_token()) + ", remote token " +
               Hex(srv_mr->remote_token()) + " (no remote rights)");
    if (auto r = cli_mr->Register(cli, cli_len, ndk::mr_flag::kAllowLocalWrite); !r)
        return Abort("register client buffer", r.error());
    Record("register client buffer", cli_len, StatusText(ndk::status::kSuccess), "registered", true,
           "local token " + Hex(cli_mr->local_token()));

    // --- 2. fast-register and bind ---------------------------------------
    // Fast-registered: [srv + page, +8 pages); window: [srv + 2 pages, +1 page).
    std::uint8_t* fr_addr = srv + page;
    const std::size_t fr_len = 8 * page;
    std::uint8_t* win_addr = srv + 2 * page;
    const std::size_t win_len = page;
    const std::uint32_t remote_rw =
        ndk::op_flag::kAllowRemoteRead | ndk::op_flag::kAllowRemoteWrite;

    std::printf("\n== 2. server A: fast-register and bind a window (remote read/write)\n");
    auto fr = ndk::MemoryRegion::Create(*pd, true);
    if (!fr) return Abort("create fast-register MR", fr.error());
    if (auto r = fr->InitializeFastRegister(16, true); !r)
        return Abort("initialize fast-register MR", r.error());
    auto fr_token = server_a.FastRegister(1, *fr, *srv_mr, fr_addr, fr_len, remote_rw);
    if (!fr_token) return Abort("fast-register", fr_token.error());
    std::printf("  fast-register [%p, +%zu) base 0x%" PRIxPTR ": token %s\n",
                static_cast<void*>(fr_addr), fr_len, reinterpret_cast<std::uintptr_t>(fr_addr),
                Hex(*fr_token).c_str());
    if (!Complete(*server_cq, "fast-register " + Hex(*fr_token), true, fr_len)) return Abort();

    auto mw = ndk::MemoryWindow::Create(*pd);
    if (!mw) return Abort("create window", mw.error());
    auto mw_token = server_a.Bind(2, *srv_mr, *mw, win_addr, win_len, remote_rw);
    if (!mw_token) return Abort("bind window", mw_token.error());
    std::printf("  bind window [%p, +%zu): token %s\n", static_cast<void*>(win_addr), win_len,
                Hex(*mw_token).c_str());
    if (!Complete(*server_cq, "bind window " + Hex(*mw_token), true, win_len)) return Abort();

    // --- 3. RDMA write through the window, read back through the MR --------
    std::printf("\n== 3. client A: RDMA write into the window, RDMA read back via the MR\n");
    std::uint8_t* src = cli;
    std::uint8_t* sink = cli + page;
    for (std::size_t i = 0; i < win_len; ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 3);
    const auto win_remote = reinterpret_cast<std::uintptr_t>(win_addr);
    ndk::Sge wsge{src, static_cast<std::uint32_t>(win_len), cli_mr->local_token()};
    if (auto r = client_a.Write(3, std::span(&wsge, 1), win_remote, *mw_token); !r)
        return Abort("RDMA write via window", r.error());
    if (!Complete(*client_cq, "RDMA write via window token", true, win_len)) return Abort();
    bool landed = std::memcmp(win_addr, src, win_len) == 0 && win_addr[-1] == 0xee &&
                  win_addr[win_len] == 0xee;
    Record("server bytes == pattern", win_len, landed ? "equal" : "differ", "equal", landed,
           "window written, bytes around it untouched");

    ndk::Sge rsge{sink, static_cast<std::uint32_t>(win_len), cli_mr->local_token()};
    if (auto r = client_a.Read(4, std::span(&rsge, 1), win_remote, *fr_token); !r)
        return Abort("RDMA read via fast-registered MR", r.error());
    if (!Complete(*client_cq, "RDMA read via MR token", true, win_len)) return Abort();
    bool same = std::memcmp(sink, src, win_len) == 0;
    Record("read bytes == pattern", win_len, same ? "equal" : "differ", "equal", same);

    // --- 4. one byte past the window -------------------------------------
    std::printf("\n== 4. client A: write one byte just past the window\n");
    ndk::Sge one{src, 1, cli_mr->local_token()};
    if (auto r = client_a.Write(5, std::span(&one, 1), win_remote + win_len, *mw_token); !r) {
        // Refused before it reached the wire: also a refusal.
        Record("write 1 byte past window", 1, r.error().Message(), "refused", true,
               "refused inline");
    } else {
        Complete(*client_cq, "write 1 byte past window", false, 1);
        steps_.back().expected = "refused (error completion)";
    }
    bool untouched = win_addr[win_len] == 0xee;
    Record("byte past window untouched", 1, untouched ? "untouched" : "WRITTEN", "untouched",
           untouched);

    // --- 5. invalidate on server B, then show the MR token dead -----------
    std::printf("\n== 5. server B: invalidate window and MR; client B: read via the old token\n");
    if (auto r = server_b.Invalidate(6, *mw); !r) return Abort("invalidate window", r.error());
    if (!Complete(*server_cq, "invalidate window " + Hex(*mw_token), true)) return Abort();
    if (auto r = server_b.Invalidate(7, *fr); !r) return Abort("invalidate MR", r.error());
    if (!Complete(*server_cq, "invalidate MR " + Hex(*fr_token), true)) return Abort();
    ndk::Sge dead{sink, 16, cli_mr->local_token()};
    if (auto r = client_b.Read(8, std::span(&dead, 1), win_remote, *fr_token); !r) {
        Record("read via invalidated MR token", 16, r.error().Message(), "refused", true,
               "refused inline");
    } else {
        Complete(*client_cq, "read via invalidated MR token", false, 16);
        steps_.back().expected = "refused (error completion)";
    }

    // --- teardown --------------------------------------------------------
    std::printf("\n== teardown\n");
    (void)conn_a->Disconnect();
    if (auto r = conn_b->Disconnect(); r) {
        auto e = conn_b->WaitFor(ndk::RequestKind::kDisconnect, opt_.timeout);
        std::printf("  disconnect B: %s\n",
                    e ? StatusText(e->status).c_str() : e.error().Message().c_str());
    }
    if (auto r = srv_mr->Deregister(); !r)
        std::printf("  deregister server buffer: %s\n", r.error().Message().c_str());
    Summary();
    for (const auto& s : steps_)
        if (!s.pass) return 1;
    return 0;
}

void Demo::Summary() const {
    std::printf("\n%-36s %8s  %-44s %-28s %s\n", "operation", "bytes", "status", "expected",
                "result");
    std::printf("%s\n", std::string(126, '-').c_str());
    int failed = 0;
    for (const auto& s : steps_) {
        std::printf("%-36s %8" PRIu64 "  %-44s %-28s %s\n", s.operation.c_str(), s.bytes,
                    s.status.c_str(), s.expected.c_str(), s.pass ? "PASS" : "FAIL");
        failed += !s.pass;
    }
    std::printf("%s\n", std::string(126, '-').c_str());
    std::printf("ndk-demo: %zu steps, %d failed: %s\n", steps_.size(), failed,
                failed ? "FAIL" : "PASS");
}

void Usage(FILE* f) {
    std::fprintf(f,
                 "usage: ndk-demo [--adapter NAME] [--addr IP] [--device PATH] [--timeout MS]\n"
                 "  --adapter NAME  NDK adapter (ib_device name), default rxe0\n"
                 "  --addr IP       the adapter's IP address to listen on, default 10.99.0.1\n"
                 "  --device PATH   default /dev/ndk\n"
                 "  --timeout MS    wait for each completion or event, default 10000\n");
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    static const option kLong[] = {
        {"adapter", required_argument, nullptr, 'a'}, {"addr", required_argument, nullptr, 'A'},
        {"device", required_argument, nullptr, 'd'},  {"timeout", required_argument, nullptr, 't'},
        {"help", no_argument, nullptr, 'h'},          {nullptr, 0, nullptr, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "a:A:d:t:h", kLong, nullptr)) != -1) {
        switch (c) {
            case 'a':
                o.adapter = optarg;
                break;
            case 'A':
                o.addr = optarg;
                break;
            case 'd':
                o.device = optarg;
                break;
            case 't':
                o.timeout = milliseconds(std::atol(optarg));
                break;
            case 'h':
                Usage(stdout);
                return 0;
            default:
                Usage(stderr);
                return 2;
        }
    }
    if (optind != argc) {
        Usage(stderr);
        return 2;
    }
    return Demo(o).Run();
}
