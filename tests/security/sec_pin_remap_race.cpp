// SPDX-License-Identifier: GPL-2.0
// sec-pin-remap-race (Documentation/security.md, invariant 1): a writable
// registration racing a remap of its range never pins a shared mapping of
// an ext4 file.  Run as nobody by pin-remap-race.sh.
//
// ndk.ko decides the pin mode from the range's mappings, then pins (rxe:
// ib_reg_user_mr()).  A thread that swaps a writable MAP_SHARED mapping of
// an ext4 file into the range between the two (mmap(MAP_FIXED)) got the
// device a writable long-term pin of ext4 page cache, and so did a pin an
// invalidation collided with on the last of its three tries.  With the
// fix the mappings are checked again inside the MMU notifier's section
// and the last collision fails: a racing MEM_REGISTER(MEM_WRITE) or
// MR_REGISTER(local write) succeeds only over anonymous pages, else fails
// with EOPNOTSUPP, EAGAIN or EFAULT.
//
// Thread B flips one page X between a private anonymous mapping (written)
// and a read-write MAP_SHARED mapping of FILE (read), with random dwells
// from none to 5 ms.  The main thread registers X with a write right over
// and over, alternating MEM_REGISTER(MEM_WRITE) and MR_REGISTER(local
// write); after each success the device writes a marker into the
// registration (an RDMA read whose sink it is, from a loopback peer),
// then the registration is dropped.  FILE must never change: checked with
// pread every 200 ms and at the end, and by B through the file mapping
// each time it maps it (pin-remap-race.sh checks it again before and
// after dropping caches).  Every outcome is counted; each kind of
// registration must have succeeded and been refused with EOPNOTSUPP at
// least once, and the device must have written, or the race was not
// exercised.  Controls first: X anonymous registers and takes the
// marker, X mapping FILE is refused with EOPNOTSUPP.
//
//   vm-sec-pin-remap-race FILE [SECONDS]
// FILE: the caller's own 4 KiB file on ext4, bytes 0x11.  SECONDS of
// racing (default 20 x NDK_STRESS_SCALE, at least 5).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "loopback.hpp"

using namespace ndk_t;

namespace {

constexpr std::size_t kLen = 64;  // bytes the device writes
constexpr unsigned char kOld = 0x11, kMarker = 0xAB, kAnon = 0x22;

double Now() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Outcomes of one kind of registration.
struct Tally {
    long tries = 0, ok = 0, eopnotsupp = 0, eagain = 0, efault = 0, other = 0;
    long written = 0, write_failed = 0, post_refused = 0;
    std::map<int, long> others, post_errnos;  // errno -> count
    void Refused(int err) {
        (err == EOPNOTSUPP ? eopnotsupp
         : err == EAGAIN   ? eagain
         : err == EFAULT   ? efault
                           : other)++;
        if (err != EOPNOTSUPP && err != EAGAIN && err != EFAULT) others[err]++;
    }
    void Print(const char* what) const {
        std::printf(
            "%s: %ld tries: success %ld, EOPNOTSUPP %ld, EAGAIN %ld, EFAULT %ld, other %ld; "
            "device writes completed %ld, failed %ld, posts refused %ld\n",
            what, tries, ok, eopnotsupp, eagain, efault, other, written, write_failed,
            post_refused);
        for (auto [e, n] : others)
            std::printf("  %s: other errno %d (%s): %ld\n", what, e, strerrorname_np(e), n);
        for (auto [e, n] : post_errnos)
            std::printf("  %s: post refused with %s: %ld\n", what, strerrorname_np(e), n);
    }
};

// FILE through pread (not a mapping): the first byte that is not kOld,
// -1 when there is none.  Throws when it cannot be read.
long FileChangedAt(int fd) {
    unsigned char buf[kPage];
    if (pread(fd, buf, sizeof(buf), 0) != static_cast<ssize_t>(sizeof(buf)))
        throw Failure{"pread of the file: " + std::string(std::strerror(errno))};
    for (std::size_t i = 0; i < sizeof(buf); i++)
        if (buf[i] != kOld) return static_cast<long>(i);
    return -1;
}

// Thread B: X alternately anonymous (written) and FILE (read).
class Flipper {
  public:
    Flipper(char* x, int fd) : x_(x), fd_(fd) {}

    void Run() {
        // Dwells in microseconds: back-to-back flips hit the window
        // between the check and the pin, longer ones let pins complete.
        static constexpr useconds_t kDwell[] = {0, 0, 0, 10, 100, 1000, 5000};
        unsigned seed = 12345;
        auto dwell = [&] {
            seed = seed * 1103515245u + 12345u;
            useconds_t us = kDwell[(seed >> 16) % std::size(kDwell)];
            if (us) usleep(us);
        };
        while (!stop.load(std::memory_order_relaxed)) {
            if (!Map(PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1)) return;
            std::memset(x_, kAnon, kPage);
            anon_maps++;
            dwell();
            if (!Map(PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED, fd_)) return;
            // Read only: FILE keeps its bytes unless the device wrote them.
            const volatile char* file = x_;
            for (std::size_t i = 0; i < kLen; i++) {
                if (static_cast<unsigned char>(file[i]) != kOld) {
                    seen_changed.store(true);
                    break;
                }
            }
            file_maps++;
            dwell();
        }
    }

    std::atomic<bool> stop{false}, seen_changed{false};
    std::atomic<int> map_errno{0};
    std::atomic<long> anon_maps{0}, file_maps{0};

  private:
    bool Map(int prot, int flags, int fd) {
        void* p = mmap(x_, kPage, prot, flags, fd, 0);
        if (p == x_) return true;
        map_errno.store(p == MAP_FAILED ? errno : EINVAL);
        stop.store(true);
        return false;
    }

    char* x_;
    int fd_;
};

class Race {
  public:
    explicit Race(char* x) : x_(x), src_(1) {
        lb_.Open();
        src_mr_.emplace(Must(ndk::MemoryRegion::Create(*lb_.pd), "create MR"));
        std::memset(src_.base, kMarker, src_.len);
        Must(src_mr_->Register(src_.base, src_.len,
                               ndk::mr_flag::kAllowLocalWrite | ndk::mr_flag::kAllowRemoteRead),
             "register the source");
        lb_.read_limit = 4;
        lb_.Connect();
    }

    // MEM_REGISTER(MEM_WRITE) (mr false) or MR_REGISTER(local write) of
    // X; on success the device writes the marker through it.  0, or the
    // registration's errno.
    int Attempt(bool mr, Tally& t) {
        std::optional<ndk::Registration> reg;
        std::optional<ndk::MemoryRegion> region;
        std::uint32_t token = 0;
        t.tries++;
        if (mr) {
            region.emplace(Must(ndk::MemoryRegion::Create(*lb_.pd), "create MR"));
            auto r = region->Register(x_, kPage, ndk::mr_flag::kAllowLocalWrite);
            if (!r) return Refused(t, r.error().errnum);
            token = region->local_token();
        } else {
            auto r = lb_.pd->RegisterMemory(x_, kPage, ndk::kMemWrite);
            if (!r) return Refused(t, r.error().errnum);
            reg.emplace(std::move(*r));
            token = reg->local_token();
        }
        t.ok++;
        // The peer's marker into the registration's first bytes, wherever
        // X points now: the device writes the pinned pages.
        ndk::Sge sink{x_, kLen, token};
        auto posted = lb_.server->Read(1, {&sink, 1}, reinterpret_cast<std::uintptr_t>(src_.base),
                                       src_mr_->remote_token());
        if (!posted) {
            t.post_refused++;
            t.post_errnos[posted.error().errnum]++;
            return 0;
        }
        ndk::CompletionResult res = WaitOne(*lb_.cq, "the device's write");
        if (ndk::NtSuccess(res.status)) {
            t.written++;
        } else {
            t.write_failed++;
            Reconnect();
        }
        return 0;  // the registration goes with reg or region
    }

    // A failed completion leaves the QPs in error: a new connection.
    void Reconnect() {
        lb_.Disconnect();
        ndk::CompletionResult r[16];
        while (true) {
            auto n = lb_.cq->PollUntil(r, 16, 100ms);
            if (!n || *n == 0) break;
        }
        lb_.Connect();
    }

  private:
    static int Refused(Tally& t, int err) {
        t.Refused(err);
        return err;
    }

    char* x_;
    Loopback lb_;
    Pages src_;
    std::optional<ndk::MemoryRegion> src_mr_;
};

double Seconds(int argc, char** argv) {
    if (argc > 2) return std::strtod(argv[2], nullptr);
    const char* s = std::getenv("NDK_STRESS_SCALE");
    double scale = s ? std::strtod(s, nullptr) : 1.0;
    return std::max(5.0, 20.0 * (scale > 0 ? scale : 1.0));
}

int Main(const char* path, double seconds) {
    int failures = 0;
    auto fail = [&](const std::string& what) {
        std::printf("FAIL %s\n", what.c_str());
        failures++;
    };
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) throw Failure{std::string("open ") + path + ": " + std::strerror(errno)};
    if (FileChangedAt(fd) >= 0) throw Failure{std::string(path) + " does not hold 0x11 bytes"};

    // X: one page of its own, anonymous to begin with.
    void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw Failure{"mmap"};
    char* x = static_cast<char*>(p);
    Race race(x);

    // Controls, nothing racing: anonymous X registers and the device
    // writes it; X mapping FILE is refused with EOPNOTSUPP.
    {
        Tally c;
        std::memset(x, kAnon, kPage);
        for (bool mr : {false, true}) {
            int err = race.Attempt(mr, c);
            bool landed = std::all_of(
                x, x + kLen, [](char b) { return static_cast<unsigned char>(b) == kMarker; });
            if (err || !landed)
                fail(std::string("control: anonymous X, ") + (mr ? "MR_REGISTER" : "MEM_REGISTER") +
                     ": " + (err ? strerrorname_np(err) : "the device's write did not land"));
            std::memset(x, kAnon, kPage);
        }
        if (mmap(x, kPage, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED, fd, 0) != x)
            throw Failure{"mmap of the file"};
        for (bool mr : {false, true}) {
            int err = race.Attempt(mr, c);
            if (err != EOPNOTSUPP)
                fail(std::string("control: X mapping the file, ") +
                     (mr ? "MR_REGISTER" : "MEM_REGISTER") + ": " +
                     (err ? strerrorname_np(err) : "registered") + ", not EOPNOTSUPP");
        }
        if (FileChangedAt(fd) >= 0) fail("control: the file changed");
        std::printf("controls: %s\n", failures ? "FAILED" : "anonymous X written, file X refused");
        if (failures) return 1;
    }

    Flipper flipper(x, fd);
    Tally mem, mr;
    long changed_at = -1;
    double start = Now(), end = start + seconds, next_check = start;
    {
        std::thread b([&] { flipper.Run(); });
        // B stops and is joined however this block is left.
        struct Joiner {
            Flipper& f;
            std::thread& t;
            ~Joiner() {
                f.stop.store(true);
                t.join();
            }
        } joiner{flipper, b};
        for (long i = 0; Now() < end && !flipper.stop.load(); i++) {
            race.Attempt(i & 1, i & 1 ? mr : mem);
            if (Now() >= next_check) {
                next_check = Now() + 0.2;
                if ((changed_at = FileChangedAt(fd)) >= 0) break;
                if (flipper.seen_changed.load()) break;
            }
        }
    }
    munmap(x, kPage);
    if (changed_at < 0) changed_at = FileChangedAt(fd);

    std::printf("%.1f s of racing; X mapped anonymous %ld times, the file %ld times\n",
                Now() - start, flipper.anon_maps.load(), flipper.file_maps.load());
    mem.Print("MEM_REGISTER(MEM_WRITE)");
    mr.Print("MR_REGISTER(local write)");
    if (int e = flipper.map_errno.load()) fail(std::string("remapping X: ") + strerrorname_np(e));
    if (changed_at >= 0)
        fail("the file changed (byte " + std::to_string(changed_at) +
             "): the device wrote ext4 page cache through a racing registration");
    if (flipper.seen_changed.load())
        fail("the file's mapping showed bytes the device wrote into its page cache");
    for (const auto& [what, t] : {std::pair{"MEM_REGISTER", &mem}, std::pair{"MR_REGISTER", &mr}}) {
        if (t->other) fail(std::string(what) + ": refused with an errno outside the expected");
        if (!t->ok || !t->eopnotsupp)
            fail(std::string(what) +
                 ": race not exercised (no success or no EOPNOTSUPP: not both mappings seen)");
    }
    if (!mem.written && !mr.written) fail("race not exercised: the device never wrote");
    std::printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        std::fprintf(stderr, "usage: %s FILE [SECONDS]\n", argv[0]);
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::printf("running as uid %d\n", static_cast<int>(getuid()));
    try {
        return Main(argv[1], Seconds(argc, argv));
    } catch (const Failure& f) {
        std::printf("FAIL %s\n", f.what.c_str());
        return 1;
    }
}
