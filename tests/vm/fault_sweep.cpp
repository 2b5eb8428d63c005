// SPDX-License-Identifier: GPL-2.0
// Guest test (reliability plan row F1, debug kernel): a systematic fault
// sweep.  For each creation (adapter, PD, CQ, QP), registration,
// fast-register and bind path of /dev/ndk, the Nth fault site (slab or
// page allocation, N = 1, 2, ...) inside that one ioctl is made to fail
// through /proc/thread-self/fail-nth, until a call runs with no fault left
// to inject.  After every injected failure:
//   - the call failed with a documented errno (ENOMEM, ENOBUFS, EFAULT;
//     EIO is reported but counted) or succeeded (a failure absorbed);
//   - the module's user_objects and user_pinned_pages counters and VmPin
//     are where they were before the call (after undoing a success);
//   - fast-register and bind: the object's token is not usable remotely
//     (an RDMA write with it fails, on a fresh connection).
// The device-add path (`rdma link add`: rxe, ib_core and every ib_client,
// ndk.ko's adapter creation last, as the last client registered) is swept
// the same way through a netlink NEWLINK request of our own: every
// NDK_DEVADD_STRIDE-th site (default 512; the path has about 15 000, most
// of them sysfs, and their number varies by hundreds from run to run),
// from a first site drawn at random below the stride and printed, so that
// runs cover different sites (NDK_DEVADD_FIRST repeats a run's choice).
// After each injected failure either no rxe0 exists, or it exists with or
// without an NDK adapter, and once it is deleted no NDK adapter, user
// object or rxe0 is left.  With NDK_SWEEP_MODULE_LOAD=1, ndk.ko's own
// adapter creation is then swept site by site through the module's load:
// finit_module() registers its ib_client, whose add() runs for rxe0 in
// the loading task.
// The kernel log is judged by the runner as for every test (KASAN,
// lockdep, kmemleak at the end).  On a kernel without fault injection
// the test fails: it is registered in the debug tier only.
#include <fcntl.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "loopback.hpp"
#include "ndk/testing.hpp"
#include "uobj_common.hpp"

namespace {

using namespace ndk_t;

constexpr int kMaxSites = 400;

bool WriteFile(const char* path, const std::string& value) {
    int fd = open(path, O_WRONLY);
    if (fd < 0) return false;
    bool ok = write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    close(fd);
    return ok;
}

long ReadLong(const char* path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    char buf[32] = {};
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 ? std::atol(buf) : -1;
}

// The next ioctl with command `cmd` runs with fail-nth = n; afterwards
// `injected` tells whether the fault fired.
struct Injector {
    unsigned long cmd = 0;
    int n = 0;
    bool armed = false, injected = false;

    void Arm(unsigned long c, int nth) {
        cmd = c;
        n = nth;
        armed = true;
        injected = false;
        ndk::testing::SetIoctlHook([this](int fd, unsigned long req, void* arg) {
            bool mine = armed && req == cmd;
            if (mine) {
                armed = false;
                WriteFile("/proc/thread-self/fail-nth", std::to_string(n));
            }
            int rc = ::ioctl(fd, req, arg);
            int err = errno;
            if (mine) {
                injected = ReadLong("/proc/thread-self/fail-nth") == 0;
                WriteFile("/proc/thread-self/fail-nth", "0");
            }
            return rc < 0 ? -err : rc;
        });
    }
    void Disarm() { ndk::testing::SetIoctlHook({}); }
};

struct Baseline {
    long objects = t_ndk_counter("user_objects");
    long pinned = t_ndk_counter("user_pinned_pages");
    long vmpin = t_vmpin_kb();
    bool operator==(const Baseline&) const = default;
};

struct Path {
    const char* name;
    unsigned long cmd;
    // Runs the call under test on `lb`; returns 0 or the errno, and undoes
    // a success so that the baseline holds again.
    std::function<int(Loopback& lb, Pages& buf)> call;
    // After an injected failure: true when no token of it works remotely.
    std::function<bool(Loopback& lb, Pages& buf)> token_dead;
};

int ErrnoOf(const ndk::Error& e) { return e.errnum; }

// What a failed fast-register or bind left: the address and token a peer
// would use.
struct Probe {
    std::uint64_t address = 0;
    std::uint32_t token = 0;
    bool set = false;
};
Probe g_probe;

// An RDMA write to `addr` with `token` from the client QP must fail.
bool WriteRefused(Loopback& lb, Pages& buf, std::uint64_t addr, std::uint32_t token) {
    auto src = Must(lb.pd->RegisterMemory(buf.base, kPage, ndk::kMemRead), "register");
    ndk::Sge sge{buf.base, 64, src.local_token()};
    if (!lb.client->Write(1, std::span(&sge, 1), addr, token)) return true;
    auto c = WaitOne(*lb.cq, "probe write");
    return !ndk::NtSuccess(c.status);
}

// The probe write puts the client QP in error: reconnect after it.
bool ProbeDead(Loopback& lb, Pages& buf) {
    if (!g_probe.set) return true;
    bool dead = WriteRefused(lb, buf, g_probe.address, g_probe.token);
    lb.Disconnect();
    lb.Connect();
    return dead;
}

std::vector<Path> Paths() {
    using ndk::MemoryRegion;
    using ndk::MemoryWindow;
    return {
        {"adapter-open", NDK_IOCTL_ADAPTER_OPEN,
         [](Loopback&, Pages&) {
             auto r = ndk::Adapter::OpenByName("rxe0");
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"pd-create", NDK_IOCTL_PD_CREATE,
         [](Loopback& lb, Pages&) {
             auto r = lb.adapter->CreateProtectionDomain();
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        // The CQ and the QP go down to rxe's own creation (its queues,
        // the QP's socket): a fault there must unwind rxe as cleanly.
        {"cq-create", NDK_IOCTL_CQ_CREATE,
         [](Loopback& lb, Pages&) {
             auto r = ndk::CompletionQueue::Create(*lb.adapter, 64);
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"qp-create", NDK_IOCTL_QP_CREATE,
         [](Loopback& lb, Pages&) {
             auto r = ndk::QueuePair::Create(*lb.pd, *lb.cq, *lb.cq, ndk::QueuePairParams{});
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"mem-register (WSPRegisterMemory)", NDK_IOCTL_MEM_REGISTER,
         [](Loopback& lb, Pages& buf) {
             auto r = lb.pd->RegisterMemory(buf.base, buf.len, ndk::kMemReadWrite);
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"mr-create", NDK_IOCTL_MR_CREATE,
         [](Loopback& lb, Pages&) {
             auto r = MemoryRegion::Create(*lb.pd);
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"mr-register (NdkRegisterMr)", NDK_IOCTL_MR_REGISTER,
         [](Loopback& lb, Pages& buf) {
             auto mr = Must(MemoryRegion::Create(*lb.pd), "create MR");
             auto r = mr.Register(buf.base, buf.len, ndk::mr_flag::kAllowLocalWrite);
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"mr-init-fast-register", NDK_IOCTL_MR_INIT_FR,
         [](Loopback& lb, Pages&) {
             auto mr = Must(MemoryRegion::Create(*lb.pd, true), "create FR MR");
             auto r = mr.InitializeFastRegister(16, true);
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"mw-create", NDK_IOCTL_MW_CREATE,
         [](Loopback& lb, Pages&) {
             auto r = MemoryWindow::Create(*lb.pd);
             return r ? 0 : ErrnoOf(r.error());
         },
         nullptr},
        {"fast-register (NdkFastRegister)", NDK_IOCTL_QP_POST,
         [](Loopback& lb, Pages& buf) {
             auto reg =
                 Must(lb.pd->RegisterMemory(buf.base, buf.len, ndk::kMemReadWrite), "register");
             auto mr = Must(MemoryRegion::Create(*lb.pd, true), "create FR MR");
             Must(mr.InitializeFastRegister(16, true), "init FR");
             g_probe = {};
             auto r = lb.server->FastRegister(2, mr, reg, buf.base, buf.len,
                                              ndk::op_flag::kAllowRemoteWrite);
             if (!r) {
                 Must(mr.QueryTokens(), "query tokens");
                 g_probe = {reinterpret_cast<std::uintptr_t>(buf.base), mr.remote_token(), true};
                 return ErrnoOf(r.error());
             }
             WaitOk(*lb.cq, "fast-register");
             Must(lb.server->Invalidate(3, mr), "invalidate");
             WaitOk(*lb.cq, "invalidate");
             return 0;
         },
         [](Loopback& lb, Pages& buf) { return ProbeDead(lb, buf); }},
        {"bind (NdkBind)", NDK_IOCTL_QP_POST,
         [](Loopback& lb, Pages& buf) {
             auto reg =
                 Must(lb.pd->RegisterMemory(buf.base, buf.len, ndk::kMemReadWrite), "register");
             auto mw = Must(MemoryWindow::Create(*lb.pd), "create MW");
             g_probe = {};
             auto r =
                 lb.server->Bind(2, reg, mw, buf.base, buf.len, ndk::op_flag::kAllowRemoteWrite);
             if (!r) {
                 Must(mw.QueryTokens(), "query tokens");
                 g_probe = {reinterpret_cast<std::uintptr_t>(buf.base), mw.remote_token(), true};
                 return ErrnoOf(r.error());
             }
             WaitOk(*lb.cq, "bind");
             Must(lb.server->Invalidate(3, mw), "invalidate");
             WaitOk(*lb.cq, "invalidate");
             return 0;
         },
         [](Loopback& lb, Pages& buf) { return ProbeDead(lb, buf); }},
    };
}

}  // namespace

namespace {

bool Allowed(int err) { return err == ENOMEM || err == ENOBUFS || err == EFAULT || err == EIO; }

// Sweeps one path; returns the number of fault sites, or -1 on a failure.
int Sweep(const Path& p, Loopback& lb, Pages& buf, Injector& inj) {
    std::map<int, int> errs;
    int absorbed = 0;
    for (int n = 1; n <= kMaxSites; ++n) {
        Baseline before;
        int err;
        try {
            inj.Arm(p.cmd, n);
            err = p.call(lb, buf);
            inj.Disarm();
        } catch (const Failure& f) {
            inj.Disarm();
            std::fprintf(stderr, "%s, fault %d: %s\n", p.name, n, f.what.c_str());
            return -1;
        }
        if (!inj.injected) {
            if (err) {
                std::fprintf(stderr, "%s: failed with %s without an injected fault\n", p.name,
                             strerrorname_np(err));
                return -1;
            }
            std::printf("%-34s %3d fault sites:", p.name, n - 1);
            for (auto [e, c] : errs) std::printf(" %s x%d", strerrorname_np(e), c);
            std::printf("%s\n", absorbed ? (" absorbed x" + std::to_string(absorbed)).c_str() : "");
            return n - 1;
        }
        if (err == 0) {
            ++absorbed;
        } else {
            ++errs[err];
            if (!Allowed(err)) {
                std::fprintf(stderr, "%s, fault %d: undocumented errno %s\n", p.name, n,
                             strerrorname_np(err));
                return -1;
            }
            if (p.token_dead && !p.token_dead(lb, buf)) {
                std::fprintf(stderr, "%s, fault %d: the token works remotely\n", p.name, n);
                return -1;
            }
        }
        Baseline after;
        if (!(after == before)) {
            std::fprintf(stderr,
                         "%s, fault %d: objects %ld -> %ld, pinned pages %ld -> %ld, VmPin %ld -> "
                         "%ld kB\n",
                         p.name, n, before.objects, after.objects, before.pinned, after.pinned,
                         before.vmpin, after.vmpin);
            return -1;
        }
    }
    std::fprintf(stderr, "%s: more than %d fault sites\n", p.name, kMaxSites);
    return -1;
}

}  // namespace

constexpr int kDevAddMaxSites = 40000;

// NEWLINK rxe0 on v0 with fail-nth = nth (0: none).  Returns 0 or the
// errno the kernel answered; *injected tells whether the fault fired.
int NewLink(int nth, bool* injected) {
    int sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
    if (sk < 0) return errno;
    struct {
        nlmsghdr h;
        char attrs[128];
    } req{};
    req.h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK);
    req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    req.h.nlmsg_seq = 1;
    std::size_t len = NLMSG_HDRLEN;
    auto put = [&](std::uint16_t type, const char* str) {
        auto* a = reinterpret_cast<nlattr*>(reinterpret_cast<char*>(&req) + len);
        a->nla_type = type;
        a->nla_len = static_cast<std::uint16_t>(NLA_HDRLEN + std::strlen(str) + 1);
        std::memcpy(reinterpret_cast<char*>(a) + NLA_HDRLEN, str, std::strlen(str) + 1);
        len += NLA_ALIGN(a->nla_len);
    };
    put(RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
    put(RDMA_NLDEV_ATTR_LINK_TYPE, "rxe");
    put(RDMA_NLDEV_ATTR_NDEV_NAME, "v0");
    req.h.nlmsg_len = static_cast<std::uint32_t>(len);
    if (nth) WriteFile("/proc/thread-self/fail-nth", std::to_string(nth));
    ssize_t sent = send(sk, &req, len, 0);
    int err = sent < 0 ? errno : 0;
    if (nth) {
        *injected = ReadLong("/proc/thread-self/fail-nth") == 0;
        WriteFile("/proc/thread-self/fail-nth", "0");
    }
    if (!err) {
        char buf[4096];
        ssize_t n = recv(sk, buf, sizeof(buf), 0);
        auto* h = reinterpret_cast<nlmsghdr*>(buf);
        if (n < static_cast<ssize_t>(NLMSG_HDRLEN)) {
            err = EIO;
        } else if (h->nlmsg_type == NLMSG_ERROR) {
            err = -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
        }
    }
    close(sk);
    return err;
}

long AdapterCount() {
    int fd = t_open_ndk();
    ndk_u_query_info q{};
    long n = fd >= 0 && ioctl(fd, NDK_IOCTL_QUERY_INFO, &q) == 0 ? q.adapter_count : -1;
    if (fd >= 0) close(fd);
    return n;
}

bool Rxe0Exists() { return access("/sys/class/infiniband/rxe0", F_OK) == 0; }

struct DevAddStats {
    int sites = 0, without_adapter = 0;
    std::map<int, int> errs;
};

// One NEWLINK with fault n.  Returns 1 when the fault fired and everything
// was cleaned up, 0 when no fault was left to inject (rxe0 is up then with
// its NDK adapter), -1 on a failure.
int DevAddOnce(int n, DevAddStats& st) {
    bool injected = false;
    int err = NewLink(n, &injected);
    bool exists = Rxe0Exists();
    if (!injected) {
        if (err || !exists || AdapterCount() != 1) {
            std::fprintf(stderr, "device add: no fault at site %d, but %s, rxe0 %s, %ld adapters\n",
                         n, err ? strerrorname_np(err) : "ok", exists ? "present" : "absent",
                         AdapterCount());
            return -1;
        }
        return 0;
    }
    ++st.sites;
    if (err) ++st.errs[err];
    if (exists) {
        if (AdapterCount() == 0) ++st.without_adapter;
        if (std::system("rdma link delete rxe0") != 0) {
            std::fprintf(stderr, "device add, fault %d: rdma link delete failed\n", n);
            return -1;
        }
    }
    if (Rxe0Exists() || AdapterCount() != 0 || t_ndk_counter("user_objects") != 0) {
        std::fprintf(stderr, "device add, fault %d: rxe0 or an NDK adapter or object left\n", n);
        return -1;
    }
    return 1;
}

// The device-add sweep; rxe0 must not exist on entry and exists on return.
bool SweepDeviceAdd() {
    const char* env = std::getenv("NDK_DEVADD_STRIDE");
    int stride = env ? std::max(1, std::atoi(env)) : 512;
    std::random_device seed;
    env = std::getenv("NDK_DEVADD_FIRST");
    int first =
        env ? std::max(1, std::atoi(env)) : std::uniform_int_distribution<int>(1, stride)(seed);
    std::printf("device add: first site %d (NDK_DEVADD_FIRST=%d repeats it)\n", first, first);
    DevAddStats st;
    for (int n = first; n <= kDevAddMaxSites; n += stride) {
        int r = DevAddOnce(n, st);
        if (r < 0) return false;
        if (r == 0) {
            std::printf("%-34s ~%d fault sites, every %dth from %d injected (%d):",
                        "device add (rdma link add)", n - 1, stride, first, st.sites);
            for (auto [e, c] : st.errs) std::printf(" %s x%d", strerrorname_np(e), c);
            std::printf("; rxe0 up without an NDK adapter x%d\n", st.without_adapter);
            return true;
        }
    }
    std::fprintf(stderr, "device add: more than %d fault sites\n", kDevAddMaxSites);
    return false;
}

// ndk.ko's own device add: loading the module registers its ib_client,
// whose add() runs for rxe0 in the loading task, so every fault site of
// the module's init and of its adapter creation is swept one by one with
// finit_module().  Every /dev/ndk file must be closed; ndk.ko is loaded
// on entry and on return.
bool SweepModuleLoad() {
    const char* ko = std::getenv("NDK_KO");
    if (!ko || syscall(SYS_delete_module, "ndk", O_NONBLOCK) != 0) {
        std::fprintf(stderr, "module load: cannot unload ndk (NDK_KO %s)\n", ko ? ko : "unset");
        return false;
    }
    DevAddStats st;
    for (int n = 1; n <= kDevAddMaxSites; ++n) {
        int fd = open(ko, O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        WriteFile("/proc/thread-self/fail-nth", std::to_string(n));
        int rc = static_cast<int>(syscall(SYS_finit_module, fd, "", 0));
        int err = errno;
        bool injected = ReadLong("/proc/thread-self/fail-nth") == 0;
        WriteFile("/proc/thread-self/fail-nth", "0");
        close(fd);
        bool loaded = access("/sys/module/ndk", F_OK) == 0;
        if (!injected) {
            if (rc != 0 || AdapterCount() != 1) {
                std::fprintf(stderr, "module load: no fault at site %d, but rc %d, %ld adapters\n",
                             n, rc, AdapterCount());
                return false;
            }
            std::printf("%-34s %3d fault sites: ", "module load + adapter add", n - 1);
            for (auto [e, c] : st.errs) std::printf(" %s x%d", strerrorname_np(e), c);
            std::printf("; loaded without an adapter x%d, absorbed x%d\n", st.without_adapter,
                        st.sites);
            return true;
        }
        if (rc != 0) {
            ++st.errs[err];
            if (loaded) {
                std::fprintf(stderr, "module load, fault %d: failed but ndk is loaded\n", n);
                return false;
            }
            continue;
        }
        // Loaded despite the fault: an adapter may be missing; it unloads.
        if (AdapterCount() == 0)
            ++st.without_adapter;
        else
            ++st.sites;
        if (syscall(SYS_delete_module, "ndk", O_NONBLOCK) != 0) {
            std::fprintf(stderr, "module load, fault %d: cannot unload: %s\n", n,
                         strerrorname_np(errno));
            return false;
        }
    }
    std::fprintf(stderr, "module load: more than %d fault sites\n", kDevAddMaxSites);
    return false;
}

int main() {
    if (access("/proc/thread-self/fail-nth", W_OK) != 0) {
        // Registered in the debug tier only: a kernel without fail-nth
        // here is a broken test bed, never a skip.
        const char* g = std::getenv("NDK_GUEST");
        std::printf("no fail-nth: this kernel (%s guest) has no fault injection\n",
                    g ? g : "stock");
        return kTestFail;
    }
    // Sleeping (GFP_KERNEL) allocations may fail too, order 0 included;
    // no stack dump per injected fault.
    for (const char* attr : {"failslab", "fail_page_alloc"}) {
        std::string dir = std::string("/sys/kernel/debug/") + attr + "/";
        T_CHECK(WriteFile((dir + "ignore-gfp-wait").c_str(), "N"));
        T_CHECK(WriteFile((dir + "verbose").c_str(), "0"));
    }
    T_CHECK(WriteFile("/sys/kernel/debug/fail_page_alloc/min-order", "0"));

    Injector inj;
    int total = 0, paths = 0;
    try {
        Loopback lb;
        lb.Open();
        lb.Connect();
        Pages buf(16);
        for (const Path& p : Paths()) {
            int sites = Sweep(p, lb, buf, inj);
            if (sites < 0) {
                ++t_failures;
                continue;
            }
            total += sites;
            ++paths;
        }
    } catch (const Failure& f) {
        std::fprintf(stderr, "setup: %s\n", f.what.c_str());
        ++t_failures;
    }
    // The device-add path: rxe0 goes, then comes back under faults.
    T_CHECK(std::system("rdma link delete rxe0") == 0);
    if (SweepDeviceAdd()) {
        ++paths;
    } else {
        ++t_failures;
        if (!Rxe0Exists()) T_CHECK(std::system("rdma link add rxe0 type rxe netdev v0") == 0);
    }
    // ndk.ko's own add() and module init, one site at a time: only on
    // request (NDK_SWEEP_MODULE_LOAD=1), because it injects into the
    // kernel's module loader too, where 6.1 WARNs by design ("Failed to
    // allocate memory: jump_label may not work properly") and lockdep
    // loses a key; see Documentation/reliability.md.
    const char* ml = std::getenv("NDK_SWEEP_MODULE_LOAD");
    if (!ml || std::string(ml) != "1") {
        std::printf("module load + adapter add: not swept (NDK_SWEEP_MODULE_LOAD=1 does)\n");
    } else if (SweepModuleLoad()) {
        ++paths;
    } else {
        ++t_failures;
        if (access("/sys/module/ndk", F_OK) != 0) {
            int fd = open(std::getenv("NDK_KO"), O_RDONLY | O_CLOEXEC);
            T_CHECK(fd >= 0 && syscall(SYS_finit_module, fd, "", 0) == 0);
            if (fd >= 0) close(fd);
        }
    }
    T_CHECK(t_vmpin_kb() == 0);
    std::printf("%d paths swept, %d injected faults, every one failed cleanly or was absorbed\n",
                paths, total);
    return t_result("fault-sweep");
}
