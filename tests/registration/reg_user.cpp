// SPDX-License-Identifier: GPL-2.0
// User registrations through the device driver (issue 16, item 1 and 2;
// Documentation/registration.md, "User memory").
//
//   reg-user large [MiB]  a registration of 1 GiB (default) with every
//                         right, half a page into its mapping (Large()),
//                         written and read back through its remote token
//                         at its last bytes and its first; VmPin goes
//                         up by its size and back at the deregistration;
//                         the same with a WSP registration (MEM_REGISTER)
//   reg-user lazy         windows and fast-registers over MRs the driver
//                         registered: the page list built at the first
//                         bind, traffic through it, a range remapped
//                         since the registration refused (EFAULT), one
//                         whose protection changed and back accepted
//   reg-user modes        who pins: a private mapping of more than
//                         MaxRegistrationSize registers (the driver pins);
//                         a read-only registration of a shared mapping is
//                         pinned by ndk.ko and limited to
//                         MaxRegistrationSize (EMSGSIZE above it); the
//                         adapter info's user limit; 40 such
//                         one-page registrations, deregistered, leave
//                         no device MR behind (`rdma resource show`: an
//                         MR that held user pages is freed, not pooled)
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "loopback.hpp"
#include "t_helpers.hpp"
#include "uobj_common.hpp"

using namespace ndk_t;

namespace {

// A private anonymous mapping of @len bytes, every page written (THP off,
// so the pages are the 4 KiB ones ibv_reg_mr users register).
char* MapTouched(std::size_t len) {
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw Failure{"mmap"};
    madvise(p, len, MADV_NOHUGEPAGE);
    auto* c = static_cast<char*>(p);
    for (std::size_t i = 0; i < len; i += kPage) c[i] = static_cast<char>(i / kPage);
    return c;
}

// The device MRs of rxe0 (`rdma resource show`), kernel ones included;
// -1 when the tool's line cannot be read.
long DeviceMrs() {
    FILE* f = popen("rdma resource show 2>/dev/null", "r");
    if (!f) return -1;
    char line[512];
    long n = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::strstr(line, " rxe0: ")) {
            const char* m = std::strstr(line, " mr ");
            if (m) n = std::strtol(m + 4, nullptr, 10);
        }
    pclose(f);
    return n;
}

void Unlimited() {
    rlimit r{RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_MEMLOCK, &r)) throw Failure{"setrlimit(RLIMIT_MEMLOCK)"};
}

// Writes 64 bytes of @fill at @remote through @rtoken, reads them back
// into a second buffer, and checks both the target and the copy.
void WriteRead(Loopback& lb, char* target, std::uint64_t remote, std::uint32_t rtoken,
               unsigned char fill, const char* what) {
    Pages src(1), back(1);
    auto reg = Must(lb.pd->RegisterMemory(src.base, kPage, ndk::kMemReadWrite), "register src");
    auto reg2 = Must(lb.pd->RegisterMemory(back.base, kPage, ndk::kMemReadWrite), "register back");
    std::memset(src.base, fill, 64);
    ndk::Sge s{src.base, 64, reg.local_token()};
    Must(lb.client->Write(1, {&s, 1}, remote, rtoken), "post write");
    WaitOk(*lb.cq, what);
    T_CHECK(static_cast<unsigned char>(target[0]) == fill &&
            static_cast<unsigned char>(target[63]) == fill);
    ndk::Sge b{back.base, 64, reg2.local_token()};
    Must(lb.client->Read(2, {&b, 1}, remote, rtoken), "post read");
    WaitOk(*lb.cq, what);
    T_CHECK(std::memcmp(back.base, target, 64) == 0);
    std::printf("%s: write and read at 0x%llx ok\n", what, static_cast<unsigned long long>(remote));
}

// The registrations start half a page into the mapping, so 1 GiB spans
// 262145 pages.  rxe 6.1's rxe_mr_copy() steps to the next entry of its
// map array after every page it copies, reading the pointer one past the
// array when that page is the last of a full map (256 pages): any access
// to the last page of an MR of a multiple of 256 pages reads 8 bytes out
// of bounds (KASAN on the debug kernel; ibv_reg_mr's MRs alike; the 6.4
// rewrite of rxe's page table to an XArray removed it).  Half a page in,
// the last page is the first of a map of its own.
int Large(std::size_t mib) {
    const std::size_t len = mib << 20, off = kPage / 2;
    Unlimited();
    Loopback lb;
    lb.read_limit = 1;
    lb.Open();
    auto info = Must(lb.adapter->QueryInfo(), "query info");
    std::printf("MaxRegistrationSize %llu, user limit %llu\n",
                static_cast<unsigned long long>(info.max_registration_size),
                static_cast<unsigned long long>(info.max_user_registration_size));
    T_CHECK(info.max_user_registration_size >= len);
    lb.Connect();
    char* map = MapTouched(len + kPage);
    char* buf = map + off;
    const long spanned_kb = static_cast<long>((len + kPage) >> 10);
    long pin0 = t_vmpin_kb();
    {
        auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
        Must(
            mr.Register(buf, len, ndk::mr_flag::kAllowRemoteWrite | ndk::mr_flag::kAllowRemoteRead),
            "register 1 GiB MR");
        long pinned = t_vmpin_kb() - pin0;
        std::printf("MR_REGISTER of %zu MiB at page offset %zu: VmPin +%ld kB\n", mib, off, pinned);
        T_CHECK(pinned == spanned_kb);
        auto base = reinterpret_cast<std::uintptr_t>(buf);
        WriteRead(lb, buf + len - 64, base + len - 64, mr.remote_token(), 0xA5, "last bytes");
        WriteRead(lb, buf, base, mr.remote_token(), 0x5A, "first bytes");
        Must(mr.Deregister(), "deregister");
        T_CHECK(t_vmpin_kb() == pin0);
    }
    {
        auto reg = Must(lb.pd->RegisterMemory(buf, len, ndk::kMemReadWrite), "MEM_REGISTER");
        long pinned = t_vmpin_kb() - pin0;
        std::printf("MEM_REGISTER of %zu MiB: VmPin +%ld kB\n", mib, pinned);
        T_CHECK(pinned == spanned_kb);
        // Its local token is a source of its last 64 bytes.
        Pages dst(1);
        auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
        Must(mr.Register(dst.base, kPage, ndk::mr_flag::kAllowRemoteWrite), "register dst");
        std::memset(buf + len - 64, 0x3C, 64);
        ndk::Sge s{buf + len - 64, 64, reg.local_token()};
        Must(lb.client->Write(3, {&s, 1}, reinterpret_cast<std::uintptr_t>(dst.base),
                              mr.remote_token()),
             "post write");
        WaitOk(*lb.cq, "MEM_REGISTER source");
        T_CHECK(static_cast<unsigned char>(dst.base[0]) == 0x3C &&
                static_cast<unsigned char>(dst.base[63]) == 0x3C);
    }
    T_CHECK(t_vmpin_kb() == pin0);
    munmap(map, len + kPage);
    return t_result("reg-user large");
}

int Lazy() {
    Loopback lb;
    lb.read_limit = 1;
    lb.Open();
    lb.Connect();
    char* buf = MapTouched(16 * kPage);
    auto base = reinterpret_cast<std::uintptr_t>(buf);
    auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
    Must(mr.Register(buf, 16 * kPage, ndk::mr_flag::kAllowLocalWrite), "register");

    // A window over pages 3..5: the page list is built now.
    auto mw = Must(ndk::MemoryWindow::Create(*lb.pd), "create MW");
    auto tok =
        Must(lb.server->Bind(1, mr, mw, buf + 3 * kPage + 100, 2 * kPage,
                             ndk::op_flag::kAllowRemoteWrite | ndk::op_flag::kAllowRemoteRead),
             "bind");
    WaitOk(*lb.cq, "bind");
    WriteRead(lb, buf + 3 * kPage + 100, base + 3 * kPage + 100, tok, 0x77, "window");
    Must(lb.server->Invalidate(2, mw), "invalidate");
    WaitOk(*lb.cq, "invalidate");

    // A fast-register over pages 10..11 of the same MR.
    auto fr = Must(ndk::MemoryRegion::Create(*lb.pd, true), "create FR MR");
    Must(fr.InitializeFastRegister(4, true), "init FR");
    auto ftok = Must(
        lb.server->FastRegister(3, fr, mr, buf + 10 * kPage, 2 * kPage,
                                ndk::op_flag::kAllowRemoteWrite | ndk::op_flag::kAllowRemoteRead),
        "fast-register");
    WaitOk(*lb.cq, "fast-register");
    WriteRead(lb, buf + 10 * kPage, base + 10 * kPage, ftok, 0x66, "fast-register");
    Must(lb.server->Invalidate(4, fr), "invalidate FR");
    WaitOk(*lb.cq, "invalidate FR");

    // Another MR whose range is remapped before its first window: the
    // addresses no longer mean the registered pages.
    char* other = MapTouched(4 * kPage);
    auto mr2 = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
    Must(mr2.Register(other, 4 * kPage, ndk::mr_flag::kAllowLocalWrite), "register other");
    void* again = mmap(other, 4 * kPage, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    T_CHECK(again == other);
    std::memset(other, 1, 4 * kPage);
    auto mw2 = Must(ndk::MemoryWindow::Create(*lb.pd), "create MW");
    auto r = lb.server->Bind(5, mr2, mw2, other, kPage, ndk::op_flag::kAllowRemoteWrite);
    T_CHECK(!r && r.error().errnum == EFAULT);
    std::printf("bind over a remapped range: %s\n", r ? "accepted" : r.error().Message().c_str());

    // An MR whose range's protection changed and changed back before its
    // first window (as NUMA balancing's scans change it, once per scan
    // period): the pages are the registered ones, and the window works.
    char* prot = MapTouched(4 * kPage);
    auto pbase = reinterpret_cast<std::uintptr_t>(prot);
    auto mr3 = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
    Must(mr3.Register(prot, 4 * kPage, ndk::mr_flag::kAllowLocalWrite), "register prot");
    T_CHECK(mprotect(prot, 4 * kPage, PROT_READ) == 0);
    T_CHECK(mprotect(prot, 4 * kPage, PROT_READ | PROT_WRITE) == 0);
    auto mw3 = Must(ndk::MemoryWindow::Create(*lb.pd), "create MW");
    auto ptok = lb.server->Bind(6, mr3, mw3, prot + kPage, kPage,
                                ndk::op_flag::kAllowRemoteWrite | ndk::op_flag::kAllowRemoteRead);
    std::printf("bind after mprotect and back: %s\n",
                ptok ? "accepted" : ptok.error().Message().c_str());
    T_CHECK(ptok.ok());
    if (ptok) {
        WaitOk(*lb.cq, "bind after mprotect");
        WriteRead(lb, prot + kPage, pbase + kPage, *ptok, 0x55, "window after mprotect");
        Must(lb.server->Invalidate(7, mw3), "invalidate");
        WaitOk(*lb.cq, "invalidate");
    }
    Must(mr3.Deregister(), "deregister prot");
    munmap(prot, 4 * kPage);
    Must(mr2.Deregister(), "deregister other");
    Must(mr.Deregister(), "deregister");
    munmap(other, 4 * kPage);
    munmap(buf, 16 * kPage);
    return t_result("reg-user lazy");
}

int Modes() {
    Unlimited();
    Loopback lb;
    lb.Open();
    auto info = Must(lb.adapter->QueryInfo(), "query info");
    const std::size_t kmax = info.max_registration_size;
    std::printf("MaxRegistrationSize %zu, user limit %llu\n", kmax,
                static_cast<unsigned long long>(info.max_user_registration_size));
    T_CHECK(info.max_user_registration_size > kmax);
    const std::size_t len = (kmax + (1 << 20)) & ~(kPage - 1);
    char* priv = MapTouched(len);
    {
        auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
        T_CHECK(mr.Register(priv, len, ndk::mr_flag::kAllowLocalRead));
        auto reg = lb.pd->RegisterMemory(priv, len, ndk::kMemRead);
        T_CHECK(static_cast<bool>(reg));
    }
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    T_CHECK(p != MAP_FAILED);
    auto* shared = static_cast<char*>(p);
    std::memset(shared, 2, len);
    {
        // Read-only over a shared mapping: ndk.ko pins, kernel limit.
        auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
        auto r = mr.Register(shared, len, ndk::mr_flag::kAllowRemoteRead);
        T_CHECK(!r && r.error().errnum == EMSGSIZE);
        T_CHECK(mr.Register(shared, kmax, ndk::mr_flag::kAllowRemoteRead));
        // Writable over the same shared mapping: the driver pins.
        auto mr2 = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
        T_CHECK(mr2.Register(shared, len, ndk::mr_flag::kAllowLocalWrite));
    }
    // Each registration ndk.ko pins is a handle the rdma cgroup counts;
    // once deregistered, no idle device MR of the PD's may stay behind
    // (the PD's pool, which nothing counts, takes only kernel MDLs').
    const long mrs0 = DeviceMrs();
    {
        std::vector<ndk::MemoryRegion> mrs;
        for (int i = 0; i < 40; i++) {
            mrs.push_back(Must(ndk::MemoryRegion::Create(*lb.pd), "create MR"));
            Must(mrs.back().Register(shared + i * kPage, kPage, ndk::mr_flag::kAllowRemoteRead),
                 "register a shared page read-only");
        }
        std::printf("40 read-only registrations of shared pages: device MRs %ld -> %ld\n", mrs0,
                    DeviceMrs());
        for (auto& mr : mrs) Must(mr.Deregister(), "deregister");
    }
    const long mrs1 = DeviceMrs();
    std::printf("after their deregistration: device MRs %ld (PD open)\n", mrs1);
    T_CHECK(mrs0 >= 0 && mrs1 == mrs0);
    // Beyond the user limit, 8 TiB where the driver pins (ndk.ko's cap,
    // for siw's int page count): EMSGSIZE before anything is pinned.  At
    // 4 GiB, so that the range ends inside the address space.
    T_CHECK(info.max_user_registration_size < (1ULL << 46));
    {
        auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
        auto r = mr.Register(reinterpret_cast<void*>(std::uintptr_t{1} << 32),
                             info.max_user_registration_size + 1, ndk::mr_flag::kAllowLocalWrite);
        T_CHECK(!r && r.error().errnum == EMSGSIZE);
    }
    munmap(shared, len);
    munmap(priv, len);
    return t_result("reg-user modes");
}

}  // namespace

int main(int argc, char** argv) {
    std::string what = argc > 1 ? argv[1] : "";
    try {
        if (what == "large") return Large(argc > 2 ? std::strtoul(argv[2], nullptr, 0) : 1024);
        if (what == "lazy") return Lazy();
        if (what == "modes") return Modes();
    } catch (const Failure& f) {
        std::fprintf(stderr, "reg-user %s: %s\n", what.c_str(), f.what.c_str());
        return kTestFail;
    }
    std::fprintf(stderr, "usage: reg-user large [MiB] | lazy | modes\n");
    return kTestFail;
}
