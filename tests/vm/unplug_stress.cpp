// SPDX-License-Identifier: GPL-2.0
// Guest test (reliability plan row L1): `rdma link delete rxe0` with 1000
// MRs, 100 bound windows and RDMA writes in flight, repeated.  Each round
// builds everything through libndk on a loopback connection, proves the
// path with a verified write through a window (the smoke test), starts a
// writer thread, deletes rxe0 and checks that
//   - the delete returns (bounded: 120 s under TCG) and no hang follows,
//   - the writer stops with a clean error (no crash, no endless wait),
//   - ADAPTER_REMOVED arrives, every pinned page comes back (VmPin 0, the
//     module's user_pinned_pages 0) while the handles are still open,
//   - closing every handle afterwards works and leaves no user object,
// then adds rxe0 back.  A last round after the last re-add runs the smoke
// test once more.  Rounds: 20 x NDK_STRESS_SCALE (at least 2).
//   vm-unplug-stress [ROUNDS REMOVE-COMMAND ADD-COMMAND]
// The same with another way to remove the device (plan row L3: `modprobe -r
// rdma_rxe`, then `modprobe rdma_rxe && rdma link add ...` to add it).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "loopback.hpp"
#include "ndk/ndk.hpp"
#include "uobj_common.hpp"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using namespace ndk_t;

constexpr int kMrs = 1000;
constexpr int kWindows = 100;

// One round's objects, in construction order (destroyed in reverse).
struct Setup : Loopback {
    Pages mr_pages{kMrs};
    Pages win_pages{kWindows};
    std::vector<ndk::MemoryRegion> mrs;
    std::optional<ndk::MemoryRegion> win_mr;
    std::vector<ndk::MemoryWindow> windows;
    std::vector<std::uint32_t> tokens;
};

void Build(Setup& s) {
    s.Open();
    s.Connect();

    // 1000 NDK MRs of one page each (the first is the writer's source).
    s.mrs.reserve(kMrs);
    for (int i = 0; i < kMrs; ++i) {
        auto mr = Must(ndk::MemoryRegion::Create(*s.pd), "create MR");
        Must(mr.Register(s.mr_pages.base + i * kPage, kPage, ndk::mr_flag::kAllowLocalWrite),
             "register MR");
        s.mrs.push_back(std::move(mr));
    }
    // 100 windows, one page each, over one registration of 100 pages.
    s.win_mr.emplace(Must(ndk::MemoryRegion::Create(*s.pd), "create window MR"));
    Must(s.win_mr->Register(s.win_pages.base, s.win_pages.len, ndk::mr_flag::kAllowLocalWrite),
         "register window MR");
    for (int i = 0; i < kWindows; ++i) {
        auto mw = Must(ndk::MemoryWindow::Create(*s.pd), "create window");
        s.tokens.push_back(Must(s.server->Bind(i, *s.win_mr, mw, s.win_pages.base + i * kPage,
                                               kPage, ndk::op_flag::kAllowRemoteWrite),
                                "bind"));
        WaitOk(*s.cq, "bind");
        s.windows.push_back(std::move(mw));
    }
}

// The smoke test: a write through window w lands byte for byte.
void Smoke(Setup& s, int w, std::uint8_t fill) {
    std::memset(s.mr_pages.base, fill, kPage);
    ndk::Sge sge{s.mr_pages.base, kPage, s.mrs[0].local_token()};
    char* dst = s.win_pages.base + w * kPage;
    Must(s.client->Write(7, std::span(&sge, 1), reinterpret_cast<std::uintptr_t>(dst), s.tokens[w]),
         "smoke write");
    WaitOk(*s.cq, "smoke write");
    if (std::memcmp(dst, s.mr_pages.base, kPage) != 0) throw Failure{"smoke write: data differs"};
}

struct WriterResult {
    std::atomic<long> writes{0};
    std::string stop;
    std::atomic<bool> done{false};  // the writer returned
};

// Writes round-robin through the windows until something fails or stop.
// It polls in slices of 1 s so that it sees stop: the main thread reads
// the adapter's events only after joining it (libndk objects are not
// thread-safe, Documentation/library.md).
void Writer(Setup& s, const std::atomic<bool>& stop, WriterResult& out) {
    ndk::Sge sge{s.mr_pages.base, 512, s.mrs[0].local_token()};
    for (long i = 0; !stop.load(); ++i) {
        int w = static_cast<int>(i % kWindows);
        auto dst = reinterpret_cast<std::uintptr_t>(s.win_pages.base + w * kPage);
        if (auto r = s.client->Write(100 + i, std::span(&sge, 1), dst, s.tokens[w]); !r) {
            out.stop = "post: " + r.error().Message();
            return;
        }
        ndk::CompletionResult c[1];
        for (int slice = 0;; ++slice) {
            auto n = s.cq->PollUntil(c, 1, 1s);
            if (!n) {
                out.stop = "poll: " + n.error().Message();
                return;
            }
            if (*n == 1) break;
            if (stop.load() || slice == 30) {
                out.stop = stop.load() ? "stopped while waiting for a completion"
                                       : "poll: no completion in 30 s";
                return;
            }
        }
        if (!ndk::NtSuccess(c[0].status)) {
            out.stop = std::string("completion: ") + std::string(ndk::StatusName(c[0].status));
            return;
        }
        ++out.writes;
    }
    out.stop = "stopped";
}

const char* g_remove = "rdma link delete rxe0";
const char* g_add = "rdma link add rxe0 type rxe netdev v0";

bool Round(int round, bool remove) {
    auto t0 = Clock::now();
    Setup s;
    try {
        Build(s);
        Smoke(s, round % kWindows, static_cast<std::uint8_t>(round + 1));
    } catch (const Failure& f) {
        std::fprintf(stderr, "round %d: %s\n", round, f.what.c_str());
        return false;
    }
    double build_s = std::chrono::duration<double>(Clock::now() - t0).count();
    long pinned = t_vmpin_kb();
    T_CHECK(pinned == static_cast<long>((kMrs + kWindows) * kPage / 1024));
    if (!remove) {
        std::printf("round %d: smoke test passed after the last re-add (%.1f s)\n", round, build_s);
        return true;
    }

    std::atomic<bool> stop{false};
    WriterResult wr;
    std::thread writer([&] {
        Writer(s, stop, wr);
        wr.done = true;
    });
    // Traffic is running: a write has completed (or the writer stopped).
    for (auto end = Clock::now() + 30s;
         wr.writes.load() == 0 && !wr.done.load() && Clock::now() < end;)
        std::this_thread::sleep_for(10ms);
    auto d0 = Clock::now();
    int rc = std::system((std::string("timeout 120 ") + g_remove).c_str());
    double del_s = std::chrono::duration<double>(Clock::now() - d0).count();
    T_CHECK(rc == 0);
    stop = true;
    writer.join();
    auto ev = s.adapter->WaitEvent(
        [](const ndk::Event& e) { return e.type == ndk::EventType::kAdapterRemoved; }, 10s);
    T_CHECK(static_cast<bool>(ev));
    T_CHECK(wr.writes > 0);
    T_CHECK(wr.stop != "poll: no completion in 30 s");
    // Pages come back while the handles are still open.
    T_CHECK(t_vmpin_kb() == 0);
    T_CHECK(t_ndk_counter("user_pinned_pages") == 0);
    // A handle of the removed adapter fails cleanly.
    auto pd2 = s.adapter->CreateProtectionDomain();
    T_CHECK(!pd2);
    std::printf(
        "round %d: %d MRs + %d windows + connection in %.1f s, %ld KiB pinned; \"%s\" "
        "returned %d after %.2f s with %ld writes done; writer ended with \"%s\"\n",
        round, kMrs, kWindows, build_s, pinned, g_remove, rc, del_s, wr.writes.load(),
        wr.stop.c_str());
    return rc == 0;
}

}  // namespace

int main(int argc, char** argv) {
    const char* env = std::getenv("NDK_STRESS_SCALE");
    double scale = env ? std::atof(env) : 1.0;
    int base = 20;
    if (argc == 4) {
        base = std::atoi(argv[1]);
        g_remove = argv[2];
        g_add = argv[3];
    } else if (argc != 1) {
        std::fprintf(stderr, "usage: vm-unplug-stress [ROUNDS REMOVE-COMMAND ADD-COMMAND]\n");
        return 2;
    }
    int rounds = std::max(2, static_cast<int>(std::lround(base * scale)));
    long objects0 = t_ndk_counter("user_objects");
    int done = 0;
    for (int r = 0; r < rounds; ++r) {
        bool ok = Round(r, true);
        // Every handle is closed now (Setup's destructors ran).
        T_CHECK(t_ndk_counter("user_objects") == objects0);
        T_CHECK(std::system(g_add) == 0);
        if (!ok) {
            ++t_failures;
            break;
        }
        ++done;
    }
    T_CHECK(Round(rounds, false));
    T_CHECK(t_ndk_counter("user_objects") == objects0);
    T_CHECK(t_vmpin_kb() == 0);
    std::printf("%d of %d rounds of \"%s\" with %d MRs, %d windows and traffic; smoke after\n",
                done, rounds, g_remove, kMrs, kWindows);
    return t_result("unplug-stress");
}
