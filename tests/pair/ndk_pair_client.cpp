// SPDX-License-Identifier: GPL-2.0
// ndk-pair-client: a libndk client of ndk-target on another host (the
// two-hosts test, tests/pair/pair-guest.sh).
//
//   ndk-pair-client [--adapter NAME] [--timeout MS] ADDR:PORT verify ROUNDS
//   ndk-pair-client [--adapter NAME] [--timeout MS] ADDR:PORT outage
//                   SIGNAL_FILE ROUNDS_BEFORE DEADLINE_S
//
// Connects to ndk-target (retrying until it listens), takes the window's
// descriptor from the accept's private data (u64 address, u32 token, u32
// length, little-endian) and runs rounds: RDMA-write a pattern of its own
// into the window, RDMA-read it back into a second buffer, compare byte
// for byte.
//
// verify: ROUNDS rounds, then a clean disconnect.
// outage: ROUNDS_BEFORE rounds, then SIGNAL_FILE is created (the host
// kills the target's guest when it appears) and rounds go on until one
// fails: it must fail with error completions within --timeout, not hang;
// then SIGNAL_FILE.seen is created (the host boots the target's guest
// again when it appears).  Then the connection is closed and connecting is retried until
// DEADLINE_S seconds after the failure; once connected again (the host
// has booted the target's guest again) ROUNDS_BEFORE rounds must pass.
// Prints the times: last good round -> error completion, error ->
// reconnected.  Exit status: 0 pass, 1 fail, 2 usage.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "ndk/ndk.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr std::uint32_t kRoundBytes = 4096;

std::string adapter_name = "rxe0";
milliseconds timeout{30000};

double Since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string StatusText(ndk::NTSTATUS s) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%#010" PRIx32, static_cast<std::uint32_t>(s));
    return std::string(ndk::StatusName(s)) + " (" + hex + ")";
}

std::uint64_t GetLe(const std::byte* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | std::to_integer<std::uint64_t>(p[i]);
    return v;
}

// The adapter, its PD and two registered local buffers: they outlive
// every connection.
struct Local {
    std::optional<ndk::Adapter> adapter;
    std::optional<ndk::ProtectionDomain> pd;
    std::optional<ndk::MemoryRegion> wmr, rmr;
    ndk::AdapterInfo info{};
    std::uint8_t* wbuf = nullptr;
    std::uint8_t* rbuf = nullptr;
};

// One connection to the target and the window it handed out.
struct Session {
    ndk::CompletionQueue cq;
    ndk::QueuePair qp;
    ndk::Connector conn;
    std::uint64_t address = 0;
    std::uint32_t token = 0;
    std::uint32_t length = 0;
};

bool Fail(const char* what, const ndk::Error& e) {
    std::printf("ndk-pair-client: %s: %s\n", what, e.Message().c_str());
    return false;
}

bool Setup(Local& l) {
    auto a = ndk::Adapter::OpenByName(adapter_name);
    if (!a) return Fail("open adapter", a.error());
    l.adapter.emplace(std::move(*a));
    auto info = l.adapter->QueryInfo();
    if (!info) return Fail("query adapter", info.error());
    l.info = *info;
    auto pd = l.adapter->CreateProtectionDomain();
    if (!pd) return Fail("create PD", pd.error());
    l.pd.emplace(std::move(*pd));
    for (auto* b : {&l.wbuf, &l.rbuf}) {
        void* p =
            mmap(nullptr, kRoundBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            std::perror("ndk-pair-client: mmap");
            return false;
        }
        *b = static_cast<std::uint8_t*>(p);
    }
    for (auto [mr, buf] : {std::pair{&l.wmr, l.wbuf}, std::pair{&l.rmr, l.rbuf}}) {
        auto m = ndk::MemoryRegion::Create(*l.pd);
        if (!m) return Fail("create MR", m.error());
        if (auto r = m->Register(buf, kRoundBytes, ndk::mr_flag::kAllowLocalWrite); !r)
            return Fail("register", r.error());
        mr->emplace(std::move(*m));
    }
    return true;
}

// Waits for the connector's event of kind; false (and why in *why) when
// it failed or did not come within wait.
bool WaitKind(const ndk::Connector& c, ndk::RequestKind kind, milliseconds wait, std::string* why) {
    auto e = c.WaitFor(kind, wait);
    if (e) return true;
    *why = e.error().Message();
    return false;
}

// One connection attempt; nullopt and *why when it did not connect.
std::optional<Session> Connect(Local& l, const ndk::SockAddr& target, milliseconds wait,
                               std::string* why) {
    auto cq = ndk::CompletionQueue::Create(*l.adapter, 8, 1);
    if (!cq) return *why = "create CQ: " + cq.error().Message(), std::nullopt;
    ndk::QueuePairParams qpp;
    qpp.receive_queue_depth = 1;
    qpp.initiator_queue_depth = 4;
    qpp.context = 0xa;
    auto qp = ndk::QueuePair::Create(*l.pd, *cq, *cq, qpp);
    if (!qp) return *why = "create QP: " + qp.error().Message(), std::nullopt;
    auto conn = ndk::Connector::Create(*l.adapter, 0xc);
    if (!conn) return *why = "create connector: " + conn.error().Message(), std::nullopt;
    ndk::ConnectParams cp;
    cp.inbound_read_limit = 0;
    cp.outbound_read_limit = std::min<std::uint32_t>(l.info.max_outbound_read_limit, 4);
    if (auto r = conn->Connect(*qp, target, cp); !r)
        return *why = "connect: " + r.error().Message(), std::nullopt;
    if (!WaitKind(*conn, ndk::RequestKind::kConnect, wait, why)) return std::nullopt;
    if (auto r = conn->CompleteConnect(); !r)
        return *why = "complete connect: " + r.error().Message(), std::nullopt;
    if (!WaitKind(*conn, ndk::RequestKind::kCompleteConnect, wait, why)) return std::nullopt;
    auto d = conn->GetConnectionData();
    if (!d) return *why = "connection data: " + d.error().Message(), std::nullopt;
    if (d->private_data.size() < 16) {
        *why = "private data of " + std::to_string(d->private_data.size()) + " bytes, not 16";
        return std::nullopt;
    }
    Session s{std::move(*cq), std::move(*qp), std::move(*conn)};
    s.address = GetLe(&d->private_data[0], 8);
    s.token = static_cast<std::uint32_t>(GetLe(&d->private_data[8], 4));
    s.length = static_cast<std::uint32_t>(GetLe(&d->private_data[12], 4));
    if (s.length < kRoundBytes) {
        *why =
            "window of " + std::to_string(s.length) + " bytes, need " + std::to_string(kRoundBytes);
        return std::nullopt;
    }
    std::printf("connected to %s: window 0x%" PRIx64 " token %#010" PRIx32 " length %" PRIu32 "\n",
                target.ToString().c_str(), s.address, s.token, s.length);
    return s;
}

// Retries Connect until it succeeds or deadline passes.
std::optional<Session> ConnectRetry(Local& l, const ndk::SockAddr& target,
                                    Clock::time_point deadline, int* attempts) {
    std::string why;
    for (;;) {
        ++*attempts;
        auto s = Connect(l, target, milliseconds(15000), &why);
        if (s) return s;
        if (Clock::now() >= deadline) {
            std::printf("ndk-pair-client: no connection after %d attempts; last: %s\n", *attempts,
                        why.c_str());
            return std::nullopt;
        }
        if (*attempts % 10 == 1)
            std::printf("connect attempt %d failed: %s; retrying\n", *attempts, why.c_str());
        std::this_thread::sleep_for(milliseconds(1000));
    }
}

enum class Round { kOk, kError, kFail };

// One round: write a pattern of seed into the window, read it back,
// compare.  kError: an error completion (described in *why); kFail:
// anything else wrong (a hang, wrong bytes, an inline failure).
Round DoRound(Local& l, Session& s, std::uint32_t seed, std::string* why) {
    const std::uint32_t off = (seed * 1024) % (s.length - kRoundBytes + 1);
    for (std::uint32_t i = 0; i < kRoundBytes; i++)
        l.wbuf[i] = static_cast<std::uint8_t>(seed * 131 + i * 7 + (i >> 8));
    std::memset(l.rbuf, 0, kRoundBytes);
    ndk::Sge w{l.wbuf, kRoundBytes, l.wmr->local_token()};
    ndk::Sge r{l.rbuf, kRoundBytes, l.rmr->local_token()};
    if (auto x = s.qp.Write(1, std::span(&w, 1), s.address + off, s.token); !x)
        return *why = "post write: " + x.error().Message(), Round::kError;
    if (auto x = s.qp.Read(2, std::span(&r, 1), s.address + off, s.token); !x)
        return *why = "post read: " + x.error().Message(), Round::kError;
    ndk::CompletionResult res[2];
    auto n = s.cq.PollUntil(res, 2, timeout);
    if (!n) return *why = "poll: " + n.error().Message(), Round::kFail;
    if (*n < 2) {
        *why = std::to_string(*n) + " of 2 completions within " + std::to_string(timeout.count()) +
               " ms: the client hangs";
        return Round::kFail;
    }
    bool err = false;
    *why = "";
    for (auto& c : res) {
        if (ndk::NtSuccess(c.status)) continue;
        err = true;
        *why += std::string(*why == "" ? "" : ", ") + ndk::OperationTypeName(c.type) + " " +
                StatusText(c.status) + " provider error " + std::to_string(c.provider_error_code);
    }
    if (err) return Round::kError;
    if (std::memcmp(l.rbuf, l.wbuf, kRoundBytes) != 0) {
        std::uint32_t i = 0;
        while (l.rbuf[i] == l.wbuf[i]) i++;
        *why = "byte " + std::to_string(i) + " read back differs";
        return Round::kFail;
    }
    return Round::kOk;
}

// Runs rounds first..first+count-1; false on any failure.
bool Rounds(Local& l, Session& s, std::uint32_t first, std::uint32_t count) {
    std::string why;
    for (std::uint32_t i = first; i < first + count; i++) {
        if (DoRound(l, s, i, &why) != Round::kOk) {
            std::printf("ndk-pair-client: round %" PRIu32 ": %s\n", i, why.c_str());
            return false;
        }
    }
    std::printf("%" PRIu32 " rounds of %" PRIu32 " bytes written, read back and compared\n", count,
                kRoundBytes);
    return true;
}

// A clean disconnect: our request's completion (or the peer's) in time.
bool Disconnect(Session& s) {
    if (auto r = s.conn.Disconnect(0xd15c); !r) return Fail("disconnect", r.error());
    std::string why;
    if (!WaitKind(s.conn, ndk::RequestKind::kDisconnect, timeout, &why)) {
        std::printf("ndk-pair-client: disconnect: %s\n", why.c_str());
        return false;
    }
    return true;
}

int Outage(Local& l, const ndk::SockAddr& target, const char* signal, std::uint32_t before,
           int deadline_s) {
    int attempts = 0;
    auto s = ConnectRetry(l, target, Clock::now() + std::chrono::seconds(120), &attempts);
    if (!s) return 1;
    if (!Rounds(l, *s, 0, before)) return 1;

    int fd = open(signal, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || close(fd) != 0) {
        std::perror("ndk-pair-client: signal file");
        return 1;
    }
    std::printf("signalled %s after %" PRIu32 " rounds; traffic goes on\n", signal, before);
    std::fflush(stdout);

    const auto signalled = Clock::now();
    auto last_ok = signalled;
    std::uint32_t round = before;
    std::string why;
    for (;;) {
        Round r = DoRound(l, *s, round, &why);
        if (r == Round::kFail) {
            std::printf("ndk-pair-client: round %" PRIu32 ": %s\n", round, why.c_str());
            return 1;
        }
        if (r == Round::kError) break;
        last_ok = Clock::now();
        round++;
        if (Since(signalled) > 180) {
            std::printf(
                "ndk-pair-client: traffic still works 180 s after the signal: the "
                "target was not stopped\n");
            return 1;
        }
    }
    const auto failed = Clock::now();
    std::printf("round %" PRIu32 " failed cleanly: %s\n", round, why.c_str());
    // SIGNAL_FILE.seen: the host may boot the target again.
    std::string seen = std::string(signal) + ".seen";
    if (int sfd = open(seen.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644); sfd >= 0) close(sfd);
    std::printf("outage: %" PRIu32
                " rounds after the signal; error %.1f s after the last good "
                "round\n",
                round - before, std::chrono::duration<double>(failed - last_ok).count());

    // The QP is in error: anything posted now completes with an error too.
    if (DoRound(l, *s, round, &why) != Round::kError) {
        std::printf("ndk-pair-client: a round on the broken connection: %s\n",
                    why.empty() ? "succeeded" : why.c_str());
        return 1;
    }
    auto t = Clock::now();
    (void)s->conn.Disconnect(0xd15c);
    (void)s->conn.WaitFor(ndk::RequestKind::kDisconnect, milliseconds(5000));
    s.reset();
    std::printf("broken connection closed in %.1f s\n", Since(t));
    std::fflush(stdout);

    attempts = 0;
    s = ConnectRetry(l, target, failed + std::chrono::seconds(deadline_s), &attempts);
    if (!s) return 1;
    std::printf("reconnect: %.1f s after the error, %d attempts\n", Since(failed), attempts);
    if (!Rounds(l, *s, round + 1, before)) return 1;
    if (!Disconnect(*s)) return 1;
    std::printf("outage: pass\n");
    return 0;
}

void Usage() {
    std::fprintf(stderr,
                 "usage: ndk-pair-client [--adapter NAME] [--timeout MS] ADDR:PORT verify ROUNDS\n"
                 "       ndk-pair-client [--adapter NAME] [--timeout MS] ADDR:PORT outage "
                 "SIGNAL_FILE ROUNDS_BEFORE DEADLINE_S\n");
}

}  // namespace

int main(int argc, char** argv) {
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (!std::strcmp(argv[i], "--adapter"))
            adapter_name = argv[i + 1];
        else if (!std::strcmp(argv[i], "--timeout"))
            timeout = milliseconds(std::atol(argv[i + 1]));
        else
            return Usage(), 2;
    }
    if (argc - i < 3) return Usage(), 2;
    auto target = ndk::SockAddr::Parse(argv[i]);
    if (!target) return Usage(), 2;
    std::string mode = argv[i + 1];
    setvbuf(stdout, nullptr, _IOLBF, 0);

    Local l;
    if (!Setup(l)) return 1;
    if (mode == "verify" && argc - i == 3) {
        int attempts = 0;
        auto s = ConnectRetry(l, *target, Clock::now() + std::chrono::seconds(120), &attempts);
        if (!s) return 1;
        auto n = static_cast<std::uint32_t>(std::atol(argv[i + 2]));
        if (!Rounds(l, *s, 0, n) || !Disconnect(*s)) return 1;
        std::printf("verify: pass\n");
        return 0;
    }
    if (mode == "outage" && argc - i == 5)
        return Outage(l, *target, argv[i + 2], static_cast<std::uint32_t>(std::atol(argv[i + 3])),
                      std::atoi(argv[i + 4]));
    Usage();
    return 2;
}
