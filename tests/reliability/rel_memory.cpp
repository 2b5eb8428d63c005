// SPDX-License-Identifier: GPL-2.0
// Description: registered memory under munmap and fork (reliability plan
// R3, R4), over an rxe loopback connection on one file.
//  R3  100 times: MR_REGISTER 4 pages with remote read and write, munmap
//      them, map fresh memory at the same address, RDMA write through
//      the token, read it back through the token, deregister.  The write
//      lands in the orphaned pinned pages (read back byte-exact), the new
//      mapping never shows it, and VmPin and user_pinned_pages return to
//      their start after each deregistration.
//  R4  50 times: register, fork; the child writes its copy and waits;
//      the parent's registration stays coherent (RDMA read sees the
//      parent's bytes and the parent's own CPU writes after the fork, an
//      RDMA write shows in the parent's memory), never the child's; no
//      leak once both are done.
// NDK_STRESS_SCALE scales the counts (floors 20 and 10).
#include <sys/wait.h>

#include <fstream>
#include <string>
#include <vector>

#include "rel_common.hpp"

namespace {

constexpr long kPage = 4096;
constexpr std::size_t kLen = 4 * kPage;

long MemAvailableKb() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    long v = -1;
    while (in >> key >> v)
        if (key == "MemAvailable:") return v;
    return -1;
}

bool AllEqual(const unsigned char* p, std::size_t n, unsigned char v) {
    for (std::size_t i = 0; i < n; i++)
        if (p[i] != v) return false;
    return true;
}

struct Rig {
    rel::Dev d;
    std::uint32_t adapter = 0, pd = 0, lis = 0, mr = 0, ltoken = 0;
    sockaddr_in addr{};
    rel::Conn c;
    rel::Mapping local{4 * kLen};

    bool Setup() {
        adapter = d.OpenAdapter();
        pd = adapter ? t_pd_create(d.fd(), adapter) : 0;
        lis = pd ? rel::Listen(d, adapter, &addr) : 0;
        if (!lis || !rel::Connect(d, adapter, lis, addr, pd, pd, &c)) return false;
        ndk_u_mem_register m{};
        if (t_mem_register(d.fd(), pd, local.get(), local.size(), NDK_U_MEM_READWRITE, &m) != 0)
            return false;
        ltoken = m.local_token;
        ndk_u_mr_create mc{};
        mc.pd_handle = pd;
        mr = d.Create(NDK_IOCTL_MR_CREATE, &mc);
        return mr != 0;
    }

    // MR_REGISTER of our MR over [p, p + kLen); the remote token or 0.
    std::uint32_t Register(const void* p) {
        ndk_u_mr_register r{};
        r.handle = mr;
        r.flags = NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE | NDK_U_MR_FLAG_ALLOW_REMOTE_READ;
        r.address = reinterpret_cast<std::uintptr_t>(p);
        r.length = kLen;
        return d.Ioctl(NDK_IOCTL_MR_REGISTER, &r) == 0 ? r.remote_token : 0;
    }

    bool Deregister() {
        ndk_u_mr_deregister md{};
        md.handle = mr;
        return d.Ioctl(NDK_IOCTL_MR_DEREGISTER, &md) == 0;
    }

    // RDMA of kLen bytes between local[slot] and the remote address.
    bool Rdma(std::uint32_t op, int slot, std::uint64_t raddr, std::uint32_t token) {
        std::int32_t st = -1;
        return rel::Rdma(d, c, op, local.addr() + slot * kLen, kLen, ltoken, raddr, token, &st) &&
               st == 0;
    }
};

void MunmapWhileRegistered(Rig& r, long trials) {
    rel::Counters base = rel::ReadCounters();
    long pin0 = t_vmpin_kb(), mem0 = MemAvailableKb();
    long ok = 0, failed = 0, shown = 0, same_addr = 0;
    for (long i = 0; i < trials; i++) {
        void* p = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        std::memset(p, 0x11, kLen);
        std::uint32_t token = r.Register(p);
        bool good = token != 0 && t_vmpin_kb() == pin0 + static_cast<long>(kLen / 1024);
        munmap(p, kLen);
        void* q = mmap(p, kLen, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (q == MAP_FAILED) {
            q = nullptr;
            good = false;
        }
        same_addr += q == p;
        auto* l = r.local.get();
        for (std::size_t k = 0; k < kLen; k++) l[k] = static_cast<unsigned char>(k * 7 + i + 1);
        std::memset(l + kLen, 0, kLen);
        std::uint64_t raddr = reinterpret_cast<std::uintptr_t>(p);
        good = good && r.Rdma(NDK_U_OP_WRITE, 0, raddr, token);
        good = good && r.Rdma(NDK_U_OP_READ, 1, raddr, token) && !std::memcmp(l, l + kLen, kLen);
        if (q && !AllEqual(static_cast<unsigned char*>(q), kLen, 0)) {
            ++shown;
            good = false;
        }
        good = r.Deregister() && good;
        good = good && t_vmpin_kb() == pin0 && rel::ReadCounters() == base;
        if (q) munmap(q, kLen);
        good ? ++ok : ++failed;
        if (!good) std::fprintf(stderr, "R3 trial %ld failed\n", i);
    }
    std::printf(
        "R3 munmap while registered: %ld trials, %ld ok, %ld failed; remote data shown in "
        "the new mapping %ld times; same address remapped %ld times; MemAvailable %+ld "
        "kB; VmPin %ld kB\n",
        trials, ok, failed, shown, same_addr, MemAvailableKb() - mem0, t_vmpin_kb());
    T_CHECK(failed == 0 && shown == 0);
}

void ForkWithRegistrations(Rig& r, long trials) {
    rel::Counters base = rel::ReadCounters();
    long pin0 = t_vmpin_kb();
    long ok = 0, failed = 0, child_seen = 0;
    for (long i = 0; i < trials; i++) {
        auto* p = static_cast<unsigned char*>(
            mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        const unsigned char P = static_cast<unsigned char>(0x20 + i), Q = P ^ 0xff, C = 0xc0;
        std::memset(p, P, kLen);
        std::uint32_t token = r.Register(p);
        std::uint64_t raddr = reinterpret_cast<std::uintptr_t>(p);
        int wrote[2], done[2];
        bool good = token != 0 && pipe(wrote) == 0 && pipe(done) == 0;
        std::fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            std::memset(p, C, kLen);  // the child's copy
            char x = 'w';
            if (write(wrote[1], &x, 1) != 1 || read(done[0], &x, 1) != 1) _exit(1);
            _exit(AllEqual(p, kLen, C) ? 0 : 2);
        }
        char x;
        good = good && pid > 0 && read(wrote[0], &x, 1) == 1;
        auto* l = r.local.get();
        // The remote side sees the parent's bytes, not the child's.
        good = good && r.Rdma(NDK_U_OP_READ, 0, raddr, token);
        if (AllEqual(l, kLen, C)) ++child_seen;
        good = good && AllEqual(l, kLen, P);
        // The parent's own writes after the fork reach the device.
        std::memset(p, Q, kLen);
        good = good && r.Rdma(NDK_U_OP_READ, 0, raddr, token) && AllEqual(l, kLen, Q);
        // And the device's writes reach the parent.
        for (std::size_t k = 0; k < kLen; k++) l[kLen + k] = static_cast<unsigned char>(k + i);
        good = good && r.Rdma(NDK_U_OP_WRITE, 1, raddr, token) && !std::memcmp(p, l + kLen, kLen);
        good = good && write(done[1], "x", 1) == 1;
        int st = 0;
        good = good && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
        // After the child is gone: still the parent's bytes.
        good = good && r.Rdma(NDK_U_OP_READ, 2, raddr, token) &&
               !std::memcmp(l + 2 * kLen, l + kLen, kLen);
        good = r.Deregister() && good;
        munmap(p, kLen);
        good = good && t_vmpin_kb() == pin0 && rel::ReadCounters() == base;
        for (int fd : {wrote[0], wrote[1], done[0], done[1]}) close(fd);
        good ? ++ok : ++failed;
        if (!good) std::fprintf(stderr, "R4 trial %ld failed\n", i);
    }
    std::printf(
        "R4 fork with registrations: %ld trials, %ld ok, %ld failed; the child's bytes "
        "seen remotely %ld times\n",
        trials, ok, failed, child_seen);
    T_CHECK(failed == 0 && child_seen == 0);
}

}  // namespace

int main() {
    rel::Counters base = rel::ReadCounters();
    rel::PrintCounters("baseline", base);
    if (base.objects < 0) return kTestFail;
    long pin0 = t_vmpin_kb();
    {
        Rig r;
        if (!r.Setup()) {
            std::fprintf(stderr, "setup failed: %s\n", strerror(errno));
            return kTestFail;
        }
        MunmapWhileRegistered(r, rel::Scaled(100, 20));
        ForkWithRegistrations(r, rel::Scaled(50, 10));
    }
    T_CHECK(rel::WaitCounters(base, 10));
    T_CHECK(t_vmpin_kb() == pin0);
    rel::PrintCounters("after", rel::ReadCounters());
    return t_result("rel-memory");
}
