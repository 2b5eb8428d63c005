// SPDX-License-Identifier: GPL-2.0
// ndk-ubench: the user half of the benchmark suite (make bench,
// Documentation/performance.md).  Every measure runs libndk (/dev/ndk)
// and its baseline on the same rxe device and the same buffer in one
// process, interleaved: each round runs every variant, in an order that
// rotates from operation to operation.  It prints samples, never
// verdicts; scripts/bench-report.py computes the statistics.
//
//   ndk-ubench <measure> [rounds=N] [iters=N] [sizes=a,b,...] [big=a,b,...]
//              [count=N] [device=rxe0]
//
//   u1  registration latency, 4 KiB pages: MEM_REGISTER / MEM_DEREGISTER
//       (ndk) and MR_REGISTER / MR_DEREGISTER (mr, libndk
//       MemoryRegion::Register) vs ibv_reg_mr / ibv_dereg_mr (verbs), and
//       the pin-only floor for reference, ndk_bench.ko's
//       pin_user_pages_fast + unpin timed in the kernel (kpin, needs
//       ndk_bench.ko loaded); variants=uring runs io_uring buffer
//       registration instead (never interleaved with the others, see
//       Options::variants).  ndk and mr run up to the adapter's
//       max_user_registration_size; sizes above 2 MiB take fewer
//       iterations (iters x 2 MiB / size, at least 2); RLIMIT_MEMLOCK is
//       raised to what the sizes need
//   c1  ndk::RegistrationCache hit vs miss vs no cache (bypass), and a
//       munmap/mmap churn counting stale hits
//   m1  slab bytes per live registration: ndk vs verbs (/proc/slabinfo);
//       the caches that grew most in round 0 as I m1_caches_<variant>
//   s1  count= live registrations: time per registration as they grow,
//       slab bytes per registration, repeat-registration lookups
//   d1  RDMA write throughput and 8-byte read latency between two libndk
//       QPs connected on the device's address (ip=), the user path of D1
//   c1host  the registration cache's hit path natively, over a backend
//       that answers at once (runs on the build host, no device)
//
// Output lines: S <measure> <variant> <param> <round> <total> <ops>
// (total is ns, bytes for M1 and S1-mem), V <name> <value>,
// I <key> <value>, E <text>.  Exit 0 when every sample was taken.
#include <fcntl.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <infiniband/verbs.h>
#include <ndk/ndk.hpp>

namespace {

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

struct Options {
    std::string measure;
    std::string device = "rxe0";
    std::string ip = "10.99.0.1";
    // U1: io_uring is not interleaved by default: its unregistration
    // quiesces for ~14 ms and leaves the guest busy for the operations
    // that follow (they measured ~4x slower); run it on its own.
    std::string variants = "ndk,mr,verbs,kpin";
    unsigned rounds = 5;
    unsigned iters = 20;
    unsigned count = 1000;
    std::vector<std::size_t> sizes;
    std::vector<std::size_t> big;
};

std::uint64_t Now() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::steady_clock::now().time_since_epoch())
                                          .count());
}

void Sample(const char* measure, const char* variant, std::size_t param, unsigned round,
            std::uint64_t total, std::uint64_t ops) {
    std::printf("S %s %s %zu %u %llu %llu\n", measure, variant, param, round,
                static_cast<unsigned long long>(total), static_cast<unsigned long long>(ops));
}

bool Fail(const std::string& what) {
    std::printf("E %s\n", what.c_str());
    std::fflush(stdout);
    return false;
}

std::vector<std::size_t> ParseList(const std::string& v) {
    std::vector<std::size_t> out;
    std::stringstream ss(v);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(std::strtoull(item.c_str(), nullptr, 0));
    return out;
}

std::optional<Options> Parse(int argc, char** argv) {
    if (argc < 2) return std::nullopt;
    Options o;
    o.measure = argv[1];
    for (int i = 2; i < argc; i++) {
        std::string a = argv[i];
        auto eq = a.find('=');
        if (eq == std::string::npos) return std::nullopt;
        std::string k = a.substr(0, eq), v = a.substr(eq + 1);
        if (k == "rounds") {
            o.rounds = static_cast<unsigned>(std::stoul(v));
        } else if (k == "iters") {
            o.iters = static_cast<unsigned>(std::stoul(v));
        } else if (k == "count") {
            o.count = static_cast<unsigned>(std::stoul(v));
        } else if (k == "sizes") {
            o.sizes = ParseList(v);
        } else if (k == "big") {
            o.big = ParseList(v);
        } else if (k == "device") {
            o.device = v;
        } else if (k == "ip") {
            o.ip = v;
        } else if (k == "variants") {
            o.variants = v;
        } else {
            return std::nullopt;
        }
    }
    if (!o.rounds || !o.iters) return std::nullopt;
    return o;
}

// An anonymous mapping of 4 KiB pages (MADV_NOHUGEPAGE), every page
// faulted in, unmapped on destruction.
class Buffer {
  public:
    explicit Buffer(std::size_t len) : len_(len) {
        void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        madvise(p, len, MADV_NOHUGEPAGE);
        std::memset(p, 0x5a, len);
        p_ = static_cast<char*>(p);
    }
    ~Buffer() {
        if (p_) munmap(p_, len_);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    char* get() const { return p_; }

  private:
    char* p_ = nullptr;
    std::size_t len_;
};

// ibv_context + PD on the named device, closed on destruction.
class Verbs {
  public:
    explicit Verbs(const std::string& name) {
        int n = 0;
        ibv_device** list = ibv_get_device_list(&n);
        for (int i = 0; list && i < n; i++)
            if (name == ibv_get_device_name(list[i])) ctx_ = ibv_open_device(list[i]);
        if (list) ibv_free_device_list(list);
        if (ctx_) pd_ = ibv_alloc_pd(ctx_);
    }
    ~Verbs() {
        if (pd_) ibv_dealloc_pd(pd_);
        if (ctx_) ibv_close_device(ctx_);
    }
    Verbs(const Verbs&) = delete;
    Verbs& operator=(const Verbs&) = delete;
    ibv_pd* pd() const { return pd_; }

  private:
    ibv_context* ctx_ = nullptr;
    ibv_pd* pd_ = nullptr;
};

// An io_uring instance used only to register buffers: the kernel pins
// them (pin_user_pages FOLL_LONGTERM) and builds a bio_vec per page,
// with no device object at all: the pin-only floor.
class Ring {
  public:
    Ring() {
        io_uring_params p{};
        fd_ = static_cast<int>(syscall(__NR_io_uring_setup, 4, &p));
    }
    ~Ring() {
        if (fd_ >= 0) close(fd_);
    }
    Ring(const Ring&) = delete;
    Ring& operator=(const Ring&) = delete;
    bool ok() const { return fd_ >= 0; }
    bool Register(void* p, std::size_t len) const {
        iovec iov{p, len};
        return syscall(__NR_io_uring_register, fd_, IORING_REGISTER_BUFFERS, &iov, 1) == 0;
    }
    bool Unregister() const {
        return syscall(__NR_io_uring_register, fd_, IORING_UNREGISTER_BUFFERS, nullptr, 0) == 0;
    }

  private:
    int fd_ = -1;
};

// The pin-only floor measured inside the kernel: ndk_bench.ko's "pin"
// measure pins and unpins a range of this process (pin_user_pages_fast,
// FOLL_LONGTERM) and times both, without the system call around them.
class KernelPin {
  public:
    KernelPin()
        : run_(open("/sys/kernel/debug/ndk_bench/run", O_WRONLY | O_CLOEXEC)),
          result_(open("/sys/kernel/debug/ndk_bench/result", O_RDONLY | O_CLOEXEC)) {}
    ~KernelPin() {
        if (run_ >= 0) close(run_);
        if (result_ >= 0) close(result_);
    }
    KernelPin(const KernelPin&) = delete;
    KernelPin& operator=(const KernelPin&) = delete;
    bool ok() const { return run_ >= 0 && result_ >= 0; }
    // {pin ns, unpin ns} of one pin of [p, p + len).
    std::optional<std::pair<std::uint64_t, std::uint64_t>> Pin(const void* p,
                                                               std::size_t len) const {
        char cmd[128];
        int n = std::snprintf(cmd, sizeof(cmd), "pin addr=%#llx len=%zu iters=1",
                              static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)), len);
        if (write(run_, cmd, static_cast<std::size_t>(n)) != n) return std::nullopt;
        std::string text;
        char buf[4096];
        ssize_t got;
        lseek(result_, 0, SEEK_SET);
        while ((got = read(result_, buf, sizeof(buf))) > 0)
            text.append(buf, static_cast<std::size_t>(got));
        std::istringstream in(text);
        std::string line;
        std::uint64_t pin = 0, unpin = 0;
        while (std::getline(in, line)) {
            std::istringstream ls(line);
            std::string tag, measure, variant;
            std::uint64_t param, round, ns;
            if (!(ls >> tag >> measure >> variant >> param >> round >> ns) || tag != "S") continue;
            (measure == "P1-pin" ? pin : unpin) = ns;
        }
        if (!pin || !unpin) return std::nullopt;
        return std::make_pair(pin, unpin);
    }

  private:
    int run_;
    int result_;
};

struct Ndk {
    ndk::Adapter adapter;
    ndk::ProtectionDomain pd;
    std::uint64_t max_reg;       // MaxRegistrationSize (kernel MDLs)
    std::uint64_t max_user_reg;  // user memory (MEM_REGISTER, MR_REGISTER)
};

std::optional<Ndk> OpenNdk(const std::string& device) {
    auto a = ndk::Adapter::OpenByName(device);
    if (!a) {
        Fail("libndk: open " + device + ": " + a.error().Message());
        return std::nullopt;
    }
    auto info = a->QueryInfo();
    auto pd = a->CreateProtectionDomain();
    if (!info || !pd) {
        Fail("libndk: adapter info / PD");
        return std::nullopt;
    }
    std::uint64_t user = info->max_user_registration_size ? info->max_user_registration_size
                                                          : info->max_registration_size;
    std::printf("I max_registration_size %llu\nI max_user_registration_size %llu\n",
                static_cast<unsigned long long>(info->max_registration_size),
                static_cast<unsigned long long>(user));
    return Ndk{std::move(*a), std::move(*pd), info->max_registration_size, user};
}

void Conditions(const std::string& device) {
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string mode;
    std::getline(thp, mode);
    std::printf("I device %s\nI thp %s\nI page_backing 4KiB anonymous, MADV_NOHUGEPAGE, faulted\n",
                device.c_str(), mode.c_str());
}

// --- U1 -------------------------------------------------------------------

// RLIMIT_MEMLOCK at least bytes (root may raise the hard limit too), so
// that ibv_reg_mr and ndk.ko's accounting of a 1 GiB registration pass.
bool RaiseMemlock(std::size_t bytes) {
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl)) return false;
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= bytes) return true;
    rlimit want{RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_MEMLOCK, &want)) {
        want.rlim_cur = want.rlim_max = rl.rlim_max;
        if (rl.rlim_max < bytes || setrlimit(RLIMIT_MEMLOCK, &want)) return false;
    }
    std::printf("I memlock raised\n");
    return true;
}

// Iterations at len: iters up to 2 MiB, then fewer (the work grows with
// the size), at least 2.
unsigned ItersAt(const Options& o, std::size_t len) {
    constexpr std::size_t kFull = 2u << 20;
    if (len <= kFull) return o.iters;
    return std::max<unsigned>(2, static_cast<unsigned>(o.iters * kFull / len));
}

bool RunU1(const Options& o) {
    auto n = OpenNdk(o.device);
    Verbs verbs(o.device);
    Ring ring;
    KernelPin kpin;
    if (!n) return false;
    if (!verbs.pd()) return Fail("verbs: cannot open " + o.device);
    if (!ring.ok()) return Fail("io_uring_setup failed");
    if (!kpin.ok()) return Fail("ndk_bench.ko's debugfs files are missing (load it first)");
    auto mr = ndk::MemoryRegion::Create(n->pd);
    if (!mr) return Fail("libndk: NdkCreateMr: " + mr.error().Message());
    std::vector<std::size_t> sizes = o.sizes;
    sizes.insert(sizes.end(), o.big.begin(), o.big.end());
    std::size_t max = *std::max_element(sizes.begin(), sizes.end());
    // Two registrations of the largest size may be live at once (ndk's
    // and the kernel's accounting): twice, rounded up.
    if (!RaiseMemlock(2 * max + (64u << 20))) return Fail("cannot raise RLIMIT_MEMLOCK");
    Buffer buf(max);
    if (!buf.get()) return Fail("mmap failed");
    char* p = buf.get();

    // One registration and deregistration of variant v; false on error.
    static const char* const names[] = {"ndk", "verbs", "uring", "kpin", "mr"};
    constexpr int kVariants = 5;
    auto once = [&](int v, std::size_t len, unsigned round, bool record) {
        std::uint64_t t0 = Now(), t1 = 0;
        const char* name = names[v];
        if (v == 0) {
            auto r = n->pd.RegisterMemory(p, len, ndk::kMemReadWrite);
            t1 = Now();
            if (!r) return Fail("MEM_REGISTER: " + r.error().Message());
            if (!r->Deregister()) return Fail("MEM_DEREGISTER failed");
        } else if (v == 4) {
            auto r = mr->Register(p, len, ndk::mr_flag::kAllowLocalWrite);
            t1 = Now();
            if (!r) return Fail("MR_REGISTER: " + r.error().Message());
            if (!mr->Deregister()) return Fail("MR_DEREGISTER failed");
        } else if (v == 1) {
            ibv_mr* m = ibv_reg_mr(verbs.pd(), p, len, IBV_ACCESS_LOCAL_WRITE);
            t1 = Now();
            if (!m) return Fail("ibv_reg_mr failed");
            if (ibv_dereg_mr(m)) return Fail("ibv_dereg_mr failed");
        } else if (v == 3) {
            auto ns = kpin.Pin(p, len);
            if (!ns) return Fail("ndk_bench pin failed");
            if (record) {
                Sample("U1-reg", name, len, round, ns->first, 1);
                Sample("U1-dereg", name, len, round, ns->second, 1);
            }
            return true;
        } else {
            bool ok = ring.Register(p, len);
            t1 = Now();
            if (!ok) return Fail("IORING_REGISTER_BUFFERS failed");
            if (!ring.Unregister()) return Fail("IORING_UNREGISTER_BUFFERS failed");
        }
        std::uint64_t t2 = Now();
        if (record) {
            Sample("U1-reg", name, len, round, t1 - t0, 1);
            Sample("U1-dereg", name, len, round, t2 - t1, 1);
        }
        return true;
    };

    for (std::size_t len : sizes) {
        std::vector<int> vs;  // ndk and mr only up to the user limit
        for (int v = 0; v < kVariants; v++)
            if (o.variants.find(names[v]) != std::string::npos &&
                ((v != 0 && v != 4) || len <= n->max_user_reg))
                vs.push_back(v);
        for (int v : vs)
            if (!once(v, len, 0, false)) return false;
        unsigned iters = ItersAt(o, len);
        for (unsigned r = 0; r < o.rounds; r++)
            for (unsigned i = 0; i < iters; i++)
                for (std::size_t k = 0; k < vs.size(); k++)
                    if (!once(vs[(k + r + i) % vs.size()], len, r, true)) return false;
    }
    return true;
}

// --- C1 -------------------------------------------------------------------

bool RunC1(const Options& o) {
    auto n = OpenNdk(o.device);
    if (!n) return false;
    ndk::RegistrationCacheOptions copt;
    copt.max_cached_bytes = 1ULL << 30;
    auto cache = ndk::RegistrationCache::Create(n->pd, copt);
    if (!cache) return Fail("RegistrationCache: " + cache.error().Message());
    std::size_t max = *std::max_element(o.sizes.begin(), o.sizes.end());
    Buffer buf(max);
    if (!buf.get()) return Fail("mmap failed");
    char* p = buf.get();

    // v 0: hit (primed), 1: miss (flushed first), 2: no cache (bypass).
    auto once = [&](int v, std::size_t len, unsigned round, bool record) {
        static const char* const name[] = {"hit", "miss", "nocache"};
        // A cached registration of the range would make the kernel answer
        // a repeat MEM_REGISTER with a reference more: flush it first.
        if (v != 0) cache->Flush();
        if (v == 0) {
            auto prime = cache->Acquire(p, len, ndk::kMemReadWrite);
            if (!prime) return Fail("prime: " + prime.error().Message());
        }
        auto before = cache->stats();
        std::uint64_t t0 = Now();
        {
            auto l = cache->Acquire(p, len, ndk::kMemReadWrite,
                                    v == 2 ? ndk::CacheMode::kBypass : ndk::CacheMode::kCached);
            if (!l) return Fail("Acquire: " + l.error().Message());
        }
        std::uint64_t t = Now() - t0;
        auto after = cache->stats();
        if (v == 0 && after.hits != before.hits + 1) return Fail("C1: a primed Acquire missed");
        if (v == 1 && after.misses != before.misses + 1) return Fail("C1: a flushed Acquire hit");
        if (record) Sample("C1", name[v], len, round, t, 1);
        return true;
    };
    for (std::size_t len : o.sizes) {
        if (len > n->max_reg) return Fail("C1: size above MaxRegistrationSize");
        for (int v = 0; v < 3; v++)
            if (!once(v, len, 0, false)) return false;
        for (unsigned r = 0; r < o.rounds; r++)
            for (unsigned i = 0; i < o.iters; i++)
                for (int k = 0; k < 3; k++)
                    if (!once(static_cast<int>((k + r + i) % 3), len, r, true)) return false;
    }

    // Churn: the same address unmapped and mapped again must never hit.
    const std::size_t len = 4 * kPage;
    cache->Flush();
    void* at = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) return Fail("mmap failed");
    unsigned stale = 0, hits_seen = 0, rounds = o.count;
    for (unsigned i = 0; i < rounds; i++) {
        std::memset(at, static_cast<int>(i), len);
        {
            auto l = cache->Acquire(at, len, ndk::kMemReadWrite);
            if (!l) return Fail("churn Acquire: " + l.error().Message());
        }
        auto before = cache->stats();
        {
            auto again = cache->Acquire(at, len, ndk::kMemReadWrite);
            if (!again) return Fail("churn Acquire again");
        }
        hits_seen += cache->stats().hits == before.hits + 1;
        munmap(at, len);
        void* q =
            mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (q != at) return Fail("mmap MAP_FIXED failed");
        std::memset(at, static_cast<int>(i + 1), len);
        before = cache->stats();
        {
            auto l = cache->Acquire(at, len, ndk::kMemReadWrite);
            if (!l) return Fail("churn Acquire after remap");
        }
        stale += cache->stats().hits != before.hits;
        munmap(at, len);
        if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
            at)
            return Fail("mmap MAP_FIXED failed");
    }
    munmap(at, len);
    std::printf("V C1-churn-rounds %u\nV C1-churn-hits-before-remap %u\nV C1-stale-hits %u\n",
                rounds, hits_seen, stale);
    if (hits_seen != rounds) return Fail("churn: the unchanged buffer did not hit");
    return true;
}

// --- M1, S1 -----------------------------------------------------------------

// Bytes of every slab cache's active objects (/proc/slabinfo, root only).
std::optional<long long> SlabBytes() {
    std::ifstream in("/proc/slabinfo");
    std::string line;
    long long total = 0;
    bool any = false;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.rfind("slabinfo", 0) == 0) continue;
        std::istringstream ss(line);
        std::string name;
        long long active = 0, num = 0, objsize = 0;
        if (ss >> name >> active >> num >> objsize) {
            total += active * objsize;
            any = true;
        }
    }
    if (!any) return std::nullopt;
    return total;
}

// Bytes of each slab cache's active objects.
std::map<std::string, long long> SlabMap() {
    std::ifstream in("/proc/slabinfo");
    std::string line;
    std::map<std::string, long long> out;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.rfind("slabinfo", 0) == 0) continue;
        std::istringstream ss(line);
        std::string name;
        long long active = 0, num = 0, objsize = 0;
        if (ss >> name >> active >> num >> objsize) out[name] += active * objsize;
    }
    return out;
}

// The caches that grew most between a and b, bytes per registration:
// "name:bytes,..." (the largest first, at most 8).
std::string TopGrowth(const std::map<std::string, long long>& a,
                      const std::map<std::string, long long>& b, unsigned count) {
    std::vector<std::pair<long long, std::string>> d;
    for (const auto& [name, bytes] : b) {
        auto it = a.find(name);
        long long delta = bytes - (it == a.end() ? 0 : it->second);
        if (delta > 0) d.emplace_back(delta, name);
    }
    std::sort(d.rbegin(), d.rend());
    std::string out;
    for (std::size_t i = 0; i < d.size() && i < 8; i++)
        out += (i ? "," : "") + d[i].second + ":" + std::to_string(d[i].first / count);
    return out.empty() ? "-" : out;
}

bool RunM1(const Options& o) {
    auto n = OpenNdk(o.device);
    Verbs verbs(o.device);
    if (!n) return false;
    if (!verbs.pd()) return Fail("verbs: cannot open " + o.device);
    if (!SlabBytes()) return Fail("/proc/slabinfo unreadable");
    const unsigned count = o.count;
    Buffer buf(count * kPage);
    if (!buf.get()) return Fail("mmap failed");
    for (unsigned r = 0; r < o.rounds; r++) {
        for (int k = 0; k < 2; k++) {
            bool ndk_first = (r % 2) == 0;
            bool use_ndk = (k == 0) == ndk_first;
            std::vector<ndk::Registration> regs;
            std::vector<ibv_mr*> mrs;
            regs.reserve(count);
            mrs.reserve(count);
            auto map0 = r == 0 ? SlabMap() : std::map<std::string, long long>{};
            long long before = *SlabBytes();
            for (unsigned i = 0; i < count; i++) {
                char* p = buf.get() + i * kPage;
                if (use_ndk) {
                    auto reg = n->pd.RegisterMemory(p, kPage, ndk::kMemReadWrite);
                    if (!reg) return Fail("M1 MEM_REGISTER: " + reg.error().Message());
                    regs.push_back(std::move(*reg));
                } else {
                    ibv_mr* mr = ibv_reg_mr(verbs.pd(), p, kPage, IBV_ACCESS_LOCAL_WRITE);
                    if (!mr) return Fail("M1 ibv_reg_mr failed");
                    mrs.push_back(mr);
                }
            }
            long long after = *SlabBytes();
            if (r == 0)
                std::printf("I m1_caches_%s %s\n", use_ndk ? "ndk" : "verbs",
                            TopGrowth(map0, SlabMap(), count).c_str());
            Sample("M1", use_ndk ? "ndk" : "verbs", kPage, r,
                   static_cast<std::uint64_t>(std::max(0LL, after - before)), count);
            regs.clear();
            for (ibv_mr* mr : mrs)
                if (ibv_dereg_mr(mr)) return Fail("M1 ibv_dereg_mr failed");
        }
    }
    return true;
}

// The same growth for ibv_reg_mr over the same ranges: what the device,
// ib_core and the mm add per live registration, apart from ndk.ko.
template <typename Range>
bool RunS1Verbs(const Options& o, Range range) {
    Verbs verbs(o.device);
    if (!verbs.pd()) return Fail("verbs: cannot open " + o.device);
    constexpr unsigned kBlock = 1000;
    const unsigned count = o.count;
    std::vector<ibv_mr*> mrs;
    mrs.reserve(count);
    bool ok = true;
    for (unsigned b = 0; ok && b * kBlock < count; b++) {
        unsigned m = std::min(kBlock, count - b * kBlock);
        std::uint64_t t0 = Now();
        for (unsigned i = 0; i < m; i++) {
            auto [p, len] = range(b * kBlock + i);
            ibv_mr* mr = ibv_reg_mr(verbs.pd(), p, len, IBV_ACCESS_LOCAL_WRITE);
            if (!mr) {
                ok = Fail("S1 ibv_reg_mr failed");
                break;
            }
            mrs.push_back(mr);
        }
        if (ok) Sample("S1-reg", "verbs", count, b, Now() - t0, m);
    }
    for (ibv_mr* mr : mrs)
        if (ibv_dereg_mr(mr)) ok = Fail("S1 ibv_dereg_mr failed");
    return ok;
}

bool RunS1(const Options& o) {
    auto n = OpenNdk(o.device);
    if (!n) return false;
    constexpr unsigned kPages = 64, kBlock = 1000;
    const unsigned count = o.count;
    Buffer buf(kPages * kPage);
    if (!buf.get()) return Fail("mmap failed");
    // Registration i: its own (address, length) pair in one of kPages pages.
    auto range = [&](unsigned i) {
        return std::pair<char*, std::size_t>(buf.get() + (i % kPages) * kPage,
                                             kPage - (i / kPages) % kPage);
    };
    if (count / kPages >= kPage) return Fail("S1: count too large");
    auto slab0 = SlabBytes();
    std::vector<ndk::Registration> regs;
    regs.reserve(count);
    for (unsigned b = 0; b * kBlock < count; b++) {
        unsigned m = std::min(kBlock, count - b * kBlock);
        std::uint64_t t0 = Now();
        for (unsigned i = 0; i < m; i++) {
            auto [p, len] = range(b * kBlock + i);
            auto reg = n->pd.RegisterMemory(p, len, ndk::kMemReadWrite);
            if (!reg) return Fail("S1 MEM_REGISTER: " + reg.error().Message());
            if (reg->references() != 1) return Fail("S1: a registration was not new");
            regs.push_back(std::move(*reg));
        }
        Sample("S1-reg", "ndk", count, b, Now() - t0, m);
    }
    auto slab1 = SlabBytes();
    if (slab0 && slab1)
        Sample("S1-mem", "ndk", count, 0,
               static_cast<std::uint64_t>(std::max(0LL, *slab1 - *slab0)), count);
    // Lookups: a repeat registration of the newest and of the oldest
    // (a reference more on an existing handle), and its deregistration.
    for (unsigned r = 0; r < o.rounds; r++) {
        for (unsigned i = 0; i < o.iters; i++) {
            unsigned which = (i % 2) ? 0 : count - 1;
            auto [p, len] = range(which);
            std::uint64_t t0 = Now();
            auto reg = n->pd.RegisterMemory(p, len, ndk::kMemReadWrite);
            std::uint64_t t1 = Now();
            if (!reg || reg->handle() != regs[which].handle())
                return Fail("S1: repeat registration did not find its handle");
            if (!reg->Deregister()) return Fail("S1: deregister failed");
            std::uint64_t t2 = Now();
            Sample("S1-lookup", "ndk", count, r, t1 - t0, 1);
            Sample("S1-deref", "ndk", count, r, t2 - t1, 1);
        }
    }
    std::uint64_t t0 = Now();
    regs.clear();
    Sample("S1-dereg", "ndk", count, 0, Now() - t0, count);
    return RunS1Verbs(o, range);
}

// --- D1 (user path) ------------------------------------------------------------

// RDMA writes of each size (sizes=) between two libndk QPs connected on
// the device's own address, depth/2 in flight, and 8-byte RDMA reads one
// at a time: what ib_write_bw and ib_read_lat measure for verbs.
bool RunD1(const Options& o) {
    using namespace std::chrono_literals;
    auto n = OpenNdk(o.device);
    if (!n) return false;
    const std::uint32_t depth = 64;
    auto cq = ndk::CompletionQueue::Create(n->adapter, 2 * depth + 16);
    if (!cq) return Fail("CQ: " + cq.error().Message());
    ndk::QueuePairParams qpp;
    qpp.initiator_queue_depth = depth;
    auto client = ndk::QueuePair::Create(n->pd, *cq, *cq, qpp);
    auto server = ndk::QueuePair::Create(n->pd, *cq, *cq, qpp);
    if (!client || !server) return Fail("QP");
    auto listener = ndk::Listener::Create(n->adapter);
    if (!listener) return Fail("listener: " + listener.error().Message());
    auto addr = ndk::SockAddr::Parse(o.ip);
    if (!addr) return Fail("bad address " + o.ip);
    auto bound = listener->Listen(*addr);
    auto active = ndk::Connector::Create(n->adapter);
    if (!bound || !active) return Fail("listen / connector");
    ndk::ConnectParams cp;  // RDMA reads from the client: its ORD, the server's IRD
    cp.inbound_read_limit = 4;
    cp.outbound_read_limit = 4;
    ndk::AcceptParams ap;
    ap.inbound_read_limit = 4;
    ap.outbound_read_limit = 4;
    if (!active->Connect(*client, *bound, cp)) return Fail("connect");
    auto passive = listener->GetConnectionRequest(10s);
    if (!passive || !passive->Accept(*server, ap)) return Fail("accept");
    if (!active->WaitFor(ndk::RequestKind::kConnect, 10s) || !active->CompleteConnect() ||
        !active->WaitFor(ndk::RequestKind::kCompleteConnect, 10s) ||
        !passive->WaitFor(ndk::RequestKind::kAccept, 10s))
        return Fail("connection setup");

    std::size_t max = *std::max_element(o.sizes.begin(), o.sizes.end());
    if (max > n->max_reg) return Fail("D1: size above MaxRegistrationSize");
    Buffer src(max), dst(max);
    auto smr = ndk::MemoryRegion::Create(n->pd);
    auto dmr = ndk::MemoryRegion::Create(n->pd);
    if (!src.get() || !dst.get() || !smr || !dmr) return Fail("D1 buffers");
    if (!smr->Register(src.get(), max, ndk::mr_flag::kAllowLocalWrite) ||
        !dmr->Register(dst.get(), max,
                       ndk::mr_flag::kAllowRemoteWrite | ndk::mr_flag::kAllowRemoteRead))
        return Fail("D1 register");
    const auto raddr = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(dst.get()));
    std::vector<ndk::CompletionResult> res(32);

    // ops writes of len bytes, up to inflight at once; false on error.
    auto writes = [&](std::size_t len, unsigned ops, unsigned inflight) {
        ndk::Sge sge{src.get(), static_cast<std::uint32_t>(len), smr->local_token()};
        unsigned posted = 0, done = 0;
        auto deadline = std::chrono::steady_clock::now() + 30s;
        while (done < ops) {
            while (posted < ops && posted - done < inflight) {
                if (!client->Write(posted, std::span(&sge, 1), raddr, dmr->remote_token()))
                    return Fail("D1 write post");
                posted++;
            }
            auto got = cq->Poll(res);
            if (!got) return Fail("D1 poll");
            for (std::size_t k = 0; k < *got; k++)
                if (!ndk::NtSuccess(res[k].status)) return Fail("D1 write failed");
            done += static_cast<unsigned>(*got);
            if (std::chrono::steady_clock::now() > deadline) return Fail("D1 writes: timeout");
        }
        return true;
    };
    // NDK_RINGS=0: the ioctl path, for reference beside the rings.
    const char* rings = std::getenv("NDK_RINGS");
    const char* variant = rings && std::strcmp(rings, "0") == 0 ? "ndk-u-ioctl" : "ndk-u";
    constexpr unsigned kBatches = 8;
    unsigned ops = std::max(1u, o.iters / kBatches);
    std::uint64_t calls = 0, total = 0;
    for (std::size_t len : o.sizes) {
        if (!writes(len, depth, depth / 2)) return false;
        for (unsigned r = 0; r < o.rounds; r++)
            for (unsigned b = 0; b < kBatches; b++) {
                std::uint64_t c0 = ndk::IoctlCount(), t0 = Now();
                if (!writes(len, ops, depth / 2)) return false;
                Sample("D1-write", variant, len, r, Now() - t0, ops);
                calls += ndk::IoctlCount() - c0;
                total += ops;
            }
    }
    // System calls per operation (libndk's count), beside the ratio.
    std::printf("V D1-syscalls-write-%s %.3f\n", variant,
                static_cast<double>(calls) / static_cast<double>(total));
    calls = total = 0;
    // What one system call on the file costs here (QUERY_INFO), and how
    // much of a read's latency its post call takes, for the report.
    if (auto dev = ndk::Device::Open()) {
        constexpr int kNull = 1000;
        std::uint64_t t0 = Now();
        for (int i = 0; i < kNull; i++)
            if (!dev->QueryInfo()) return Fail("QUERY_INFO");
        Sample("D1-null-ioctl", variant, 0, 0, Now() - t0, kNull);
    }
    std::vector<std::pair<unsigned, std::uint64_t>> posts;
    ndk::Sge sink{src.get(), 8, smr->local_token()};
    for (unsigned r = 0; r < o.rounds; r++)
        for (unsigned i = 0; i < o.iters; i++) {
            std::uint64_t c0 = ndk::IoctlCount();
            std::uint64_t t0 = Now();
            if (!client->Read(i, std::span(&sink, 1), raddr, dmr->remote_token()))
                return Fail("D1 read post");
            posts.push_back({r, Now() - t0});
            std::size_t got = 0;
            auto deadline = std::chrono::steady_clock::now() + 10s;
            while (!got) {
                auto g = cq->Poll(std::span(res.data(), 1));
                if (!g) return Fail("D1 poll");
                got = *g;
                if (!got && std::chrono::steady_clock::now() > deadline)
                    return Fail("D1 read: timeout");
            }
            if (!ndk::NtSuccess(res[0].status)) return Fail("D1 read failed");
            Sample("D1-read", variant, 8, r, Now() - t0, 1);
            calls += ndk::IoctlCount() - c0;
            total++;
        }
    for (auto [r, ns] : posts) Sample("D1-read-post", variant, 8, r, ns, 1);
    std::printf(
        "V D1-syscalls-read-%s %.3f\n", variant,
        static_cast<double>(calls) / static_cast<double>(std::max<std::uint64_t>(total, 1)));
    if (!active->Disconnect() || !active->WaitFor(ndk::RequestKind::kDisconnect, 10s))
        return Fail("disconnect");
    return true;
}

// --- C1 on the host -------------------------------------------------------------

// The cache's hit path alone, natively (no guest): the same library code
// over a backend that answers at once, so a hit's cost in ns is the
// library's own.  Registrations never change generation.
class InstantBackend final : public ndk::CacheBackend {
  public:
    ndk::Result<ndk::BackendRegistration> Register(std::uint64_t address, std::uint64_t,
                                                   std::uint32_t) noexcept override {
        ndk::BackendRegistration r;
        r.handle = ++next_;
        r.base_address = address;
        r.cache_slot = next_ % 4096;
        return r;
    }
    ndk::Result<void> Deregister(std::uint32_t) noexcept override { return {}; }
    std::uint64_t Generation(std::uint32_t) const noexcept override { return 0; }

  private:
    std::uint32_t next_ = 0;
};

bool RunC1Host(const Options& o) {
    auto cache = ndk::RegistrationCache::Create(std::make_unique<InstantBackend>());
    std::size_t max = *std::max_element(o.sizes.begin(), o.sizes.end());
    Buffer buf(max);
    if (!buf.get()) return Fail("mmap failed");
    // Other cached entries around, as in a real cache.
    std::vector<ndk::RegistrationLease> keep;
    for (std::size_t i = 1; i <= 64; i++) {
        auto l = cache.Acquire(buf.get() + (i % 8) * 64, 32 + i, ndk::kMemReadWrite);
        if (!l) return Fail("host cache prime");
    }
    constexpr unsigned kBatch = 1000;
    for (std::size_t len : o.sizes)
        for (unsigned r = 0; r < o.rounds; r++)
            for (unsigned i = 0; i < o.iters; i++) {
                std::uint64_t t0 = Now();
                for (unsigned k = 0; k < kBatch; k++) {
                    auto l = cache.Acquire(buf.get(), len, ndk::kMemReadWrite);
                    if (!l) return Fail("host Acquire");
                }
                Sample("C1-lib", "hit", len, r, Now() - t0, kBatch);
            }
    if (cache.stats().misses != 64 + o.sizes.size()) return Fail("host: unexpected misses");
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    // Fully buffered: the output file is on the results share (9p), where
    // every write is expensive; nothing is written while a sample is timed.
    std::setvbuf(stdout, nullptr, _IOFBF, 1 << 20);
    auto o = Parse(argc, argv);
    if (!o) {
        std::fprintf(stderr,
                     "usage: ndk-ubench u1|c1|m1|s1|d1|c1host [rounds=N] [iters=N] [count=N] "
                     "[sizes=a,b] [big=a,b] [device=rxe0] [ip=10.99.0.1]\n");
        return 2;
    }
    Conditions(o->device);
    std::printf("I rounds %u\nI iters %u\n", o->rounds, o->iters);
    bool ok = false;
    if (o->measure == "u1") {
        ok = !o->sizes.empty() && RunU1(*o);
    } else if (o->measure == "c1") {
        ok = !o->sizes.empty() && RunC1(*o);
    } else if (o->measure == "m1") {
        ok = RunM1(*o);
    } else if (o->measure == "s1") {
        ok = RunS1(*o);
    } else if (o->measure == "d1") {
        ok = !o->sizes.empty() && RunD1(*o);
    } else if (o->measure == "c1host") {
        ok = !o->sizes.empty() && RunC1Host(*o);
    } else {
        std::fprintf(stderr, "ndk-ubench: unknown measure %s\n", o->measure.c_str());
        return 2;
    }
    std::printf("%s %s\n", ok ? "ok" : "not ok", o->measure.c_str());
    return ok ? 0 : 1;
}
