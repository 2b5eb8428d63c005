// SPDX-License-Identifier: GPL-2.0
// WSPRegisterMemory / WSPDeregisterMemory on a connector as a socket
// (ndk::Connector::RegisterMemory, issue 16 item 5) over rxe, with two
// endpoints A (active) and B (passive) connected to each other on one PD:
//   - not connected (a fresh connector; A after its Disconnect; B after
//     the peer's disconnect): WSAENOTCONN;
//   - bad flags / length 0: WSAEINVAL; unmapped, kernel-half, read-only
//     with MEM_WRITE: WSAEFAULT; over RLIMIT_MEMLOCK as nobody: WSAENOBUFS;
//   - a handle registered on A, used on B (RDMA write, receive,
//     WSPDeregisterMemory): WSAEINVAL, and it stays good on A;
//   - the same buffer on A and B: one kernel registration (same handle,
//     references 2, VmPin and ndk.ko's user_pinned_pages charged once),
//     RDMA write and read through it on each endpoint; deregistered on A
//     it still works on B; the last deregistration unpins (VmPin and
//     user_pinned_pages back to their baseline);
//   - a send and a receive whose buffers carry no handle: the provider's
//     own mapping of buffers to handles finds each endpoint's registration.
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "loopback.hpp"
#include "sec_common.hpp"

namespace {

using ndk_t::Failure;
using ndk_t::kPage;
using ndk_t::Must;

void ExpectWsa(const ndk::Result<ndk::SocketRegistration>& r, int errnum, int wsa,
               const char* what) {
    if (r.ok()) {
        std::fprintf(stderr, "%s: registered, expected %s\n", what, ndk::WsaName(wsa));
        ++t_failures;
        return;
    }
    if (r.error().errnum != errnum || r.error().wsa != wsa) {
        std::fprintf(stderr, "%s: %s, expected errno %d %s\n", what, r.error().Message().c_str(),
                     errnum, ndk::WsaName(wsa));
        ++t_failures;
    }
}

void ExpectWsa(const ndk::Result<void>& r, int errnum, int wsa, const char* what) {
    if (r.ok()) {
        std::fprintf(stderr, "%s: succeeded, expected %s\n", what, ndk::WsaName(wsa));
        ++t_failures;
        return;
    }
    if (r.error().errnum != errnum || r.error().wsa != wsa) {
        std::fprintf(stderr, "%s: %s, expected errno %d %s\n", what, r.error().Message().c_str(),
                     errnum, ndk::WsaName(wsa));
        ++t_failures;
    }
}

std::uint64_t Addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// A byte registered on one endpoint, the sink of the read that fences
// a write.  On iWARP a write completes at the initiator once TCP has its
// bytes, before the target has placed them; the target serves the stream
// in order, so a read posted behind the write completes only after the
// write's bytes are in place.  (rxe completes a write only when the
// target acknowledged it; the fence costs it one read.)
struct Fence {
    char* byte;
    std::uint32_t handle;
};

// One RDMA write of [src, +len) through `handle` on `ep` to the target
// MR at `dst`, completed, fenced and compared.
void WriteThrough(ndk_t::Loopback& lb, const ndk::Connector& ep, const Fence& fence,
                  const char* src, std::uint32_t handle, std::uint32_t len, char* dst,
                  std::uint32_t token, const char* what) {
    std::memset(dst, 0, len);
    ndk::WsaBuf b{src, len, handle};
    Must(ep.Write(1, std::span(&b, 1), Addr(dst), token), what);
    ndk_t::WaitOk(*lb.cq, what);
    ndk::WsaBuf f{fence.byte, 1, fence.handle};
    Must(ep.Read(8, std::span(&f, 1), Addr(dst + len - 1), token), what);
    ndk_t::WaitOk(*lb.cq, what);
    if (std::memcmp(src, dst, len) != 0) throw Failure{std::string(what) + ": data differs"};
}

// One RDMA read of the target MR at `src` into [dst, +len) through `handle`.
void ReadThrough(ndk_t::Loopback& lb, const ndk::Connector& ep, char* dst, std::uint32_t handle,
                 std::uint32_t len, const char* src, std::uint32_t token, const char* what) {
    std::memset(dst, 0, len);
    ndk::WsaBuf b{dst, len, handle};
    Must(ep.Read(2, std::span(&b, 1), Addr(src), token), what);
    ndk_t::WaitOk(*lb.cq, what);
    if (std::memcmp(src, dst, len) != 0) throw Failure{std::string(what) + ": data differs"};
}

void Run(const char* adapter, const char* ip) {
    ndk_t::Loopback lb;
    lb.read_limit = 4;
    lb.Open(adapter);

    // Not connected: a connector that never connected.
    {
        auto fresh = Must(ndk::Connector::Create(*lb.adapter), "create connector");
        ndk_t::Pages p(1);
        T_CHECK(!fresh.connected());
        ExpectWsa(fresh.RegisterMemory(p.base, kPage, ndk::kMemRead), ENOTCONN, ndk::wsa::kEnotconn,
                  "fresh connector");
    }

    lb.Connect(ip);
    ndk::Connector& a = *lb.active;
    ndk::Connector& b = *lb.passive;
    T_CHECK(a.connected());
    T_CHECK(b.connected());

    // The remote side of the transfers: an MR with remote rights.
    ndk_t::Pages target(16);
    auto mr = Must(ndk::MemoryRegion::Create(*lb.pd), "create MR");
    Must(mr.Register(target.base, target.len,
                     ndk::mr_flag::kAllowLocalWrite | ndk::mr_flag::kAllowRemoteRead |
                         ndk::mr_flag::kAllowRemoteWrite),
         "register target MR");
    const std::uint32_t token = mr.remote_token();

    // The seed's WSAEINVAL and WSAEFAULT.
    ndk_t::Pages buf(16);
    for (std::uint32_t flags : {0u, 4u, 8u})
        ExpectWsa(a.RegisterMemory(buf.base, kPage, flags), EINVAL, ndk::wsa::kEinval, "flags");
    ExpectWsa(a.RegisterMemory(buf.base, 0, ndk::kMemRead), EINVAL, ndk::wsa::kEinval, "length 0");
    {
        void* hole =
            mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        T_CHECK(hole != MAP_FAILED);
        munmap(hole, 4 * kPage);
        ExpectWsa(a.RegisterMemory(hole, 4 * kPage, ndk::kMemRead), EFAULT, ndk::wsa::kEfault,
                  "unmapped buffer");
        ExpectWsa(
            a.RegisterMemory(reinterpret_cast<void*>(0xffff888000000000ULL), kPage, ndk::kMemRead),
            EFAULT, ndk::wsa::kEfault, "kernel-half buffer");
        // Two pages of which only the first is mapped (the second unmapped
        // again, so no neighbouring mapping can fill it).
        char* edge = static_cast<char*>(
            mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        T_CHECK(edge != MAP_FAILED);
        munmap(edge + kPage, kPage);
        ExpectWsa(a.RegisterMemory(edge, 2 * kPage, ndk::kMemRead), EFAULT, ndk::wsa::kEfault,
                  "buffer running past its mapping");
        munmap(edge, kPage);
        void* ro = mmap(nullptr, kPage, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        T_CHECK(ro != MAP_FAILED);
        ExpectWsa(a.RegisterMemory(ro, kPage, ndk::kMemWrite), EFAULT, ndk::wsa::kEfault,
                  "read-only memory with MEM_WRITE");
        munmap(ro, kPage);
    }

    // The fences' byte, one registration on both endpoints, taken
    // before the baseline so the counts below are the transfers' own.
    ndk_t::Pages fence_page(1);
    auto rf_a = Must(a.RegisterMemory(fence_page.base, kPage, ndk::kMemReadWrite), "fence on A");
    auto rf_b = Must(b.RegisterMemory(fence_page.base, kPage, ndk::kMemReadWrite), "fence on B");
    const Fence fa{fence_page.base, rf_a.handle()}, fb{fence_page.base, rf_b.handle()};

    const long vm0 = t_vmpin_kb();
    const long pinned0 = t_ndk_counter("user_pinned_pages");
    std::printf("baseline: VmPin %ld kB, user_pinned_pages %ld\n", vm0, pinned0);

    // The same buffer on A and B: one kernel registration.
    for (std::size_t i = 0; i < buf.len; ++i) buf.base[i] = static_cast<char>(i * 7 + 1);
    auto ra = Must(a.RegisterMemory(buf.base, buf.len, ndk::kMemReadWrite), "register on A");
    const long vm1 = t_vmpin_kb();
    const long pinned1 = t_ndk_counter("user_pinned_pages");
    auto rb = Must(b.RegisterMemory(buf.base, buf.len, ndk::kMemReadWrite), "register on B");
    const long vm2 = t_vmpin_kb();
    const long pinned2 = t_ndk_counter("user_pinned_pages");
    std::printf(
        "A: handle %u refs %u, VmPin %ld kB, pinned %ld; B: handle %u refs %u, "
        "VmPin %ld kB, pinned %ld\n",
        ra.handle(), ra.references(), vm1, pinned1, rb.handle(), rb.references(), vm2, pinned2);
    T_CHECK(ra.references() == 1);
    T_CHECK(rb.handle() == ra.handle());
    T_CHECK(rb.references() == 2);
    T_CHECK(vm1 - vm0 == static_cast<long>(buf.len / 1024));
    T_CHECK(vm2 == vm1);  // charged once
    T_CHECK(pinned1 - pinned0 == 16);
    T_CHECK(pinned2 == pinned1);  // pinned once

    // A real transfer on each endpoint from the registered buffer.
    WriteThrough(lb, a, fa, buf.base, ra.handle(), 4 * kPage, target.base, token, "write on A");
    WriteThrough(lb, b, fb, buf.base + 4 * kPage, rb.handle(), 4 * kPage, target.base + 4 * kPage,
                 token, "write on B");
    for (std::size_t i = 0; i < 2 * kPage; ++i) target.base[8 * kPage + i] = static_cast<char>(i);
    ReadThrough(lb, a, buf.base + 8 * kPage, ra.handle(), kPage, target.base + 8 * kPage, token,
                "read on A");
    ReadThrough(lb, b, buf.base + 9 * kPage, rb.handle(), kPage, target.base + 9 * kPage, token,
                "read on B");

    // WSPRegisterMemory: write access makes a buffer the receiving buffer
    // of WSPRdmaRead; MEM_WRITE alone is enough.  On iWARP a read
    // response is a tagged write into the sink: siw checks the sink for
    // local write only, so this holds there too (uapi.md, "Rights").
    {
        ndk_t::Pages sink(1);
        auto rw = Must(a.RegisterMemory(sink.base, kPage, ndk::kMemWrite), "MEM_WRITE sink");
        for (std::size_t i = 0; i < kPage; ++i)
            target.base[13 * kPage + i] = static_cast<char>(i * 3 + 5);
        ReadThrough(lb, a, sink.base, rw.handle(), kPage, target.base + 13 * kPage, token,
                    "read into a MEM_WRITE registration");
        std::printf("read into a MEM_WRITE-only registration: %zu bytes arrived\n", kPage);
        Must(a.DeregisterMemory(rw), "deregister the MEM_WRITE sink");
    }

    // A send and a receive without handles (WSPSend and WSPRecv get none):
    // each endpoint finds its own registration of the bytes.
    {
        char* sink = buf.base + 10 * kPage;
        const char* src = buf.base + 11 * kPage;
        std::memset(sink, 0, 256);
        ndk::WsaBuf rbuf{sink, 256, 0}, sbuf{src, 256, 0};
        Must(b.Receive(6, std::span(&rbuf, 1)), "receive on B without a handle");
        Must(a.Send(7, std::span(&sbuf, 1)), "send on A without a handle");
        ndk_t::WaitOk(*lb.cq, "send or receive without a handle");
        ndk_t::WaitOk(*lb.cq, "send or receive without a handle");
        if (std::memcmp(src, sink, 256) != 0) throw Failure{"send without handles: data differs"};
        std::printf("send and receive without handles: 256 bytes arrived\n");
    }

    // A handle of A only is unknown on B: WSAEINVAL, and still good on A.
    ndk_t::Pages only_a(2);
    std::memset(only_a.base, 0x5a, only_a.len);
    auto r2 = Must(a.RegisterMemory(only_a.base, only_a.len, ndk::kMemReadWrite), "register on A");
    ndk::WsaBuf foreign{only_a.base, 64, r2.handle()};
    ExpectWsa(b.Write(3, std::span(&foreign, 1), Addr(target.base), token), EINVAL,
              ndk::wsa::kEinval, "A's handle in a write on B");
    ExpectWsa(b.Receive(3, std::span(&foreign, 1)), EINVAL, ndk::wsa::kEinval,
              "A's handle in a receive on B");
    ExpectWsa(b.DeregisterMemory(r2), EINVAL, ndk::wsa::kEinval, "WSPDeregisterMemory(B, A's)");
    T_CHECK(!r2.empty());
    WriteThrough(lb, a, fa, only_a.base, r2.handle(), static_cast<std::uint32_t>(only_a.len),
                 target.base + 12 * kPage, token, "A's handle on A after B refused it");
    Must(a.DeregisterMemory(r2), "deregister A's own");
    T_CHECK(r2.empty());

    // Deregistered on A, it stays for B.
    const std::uint32_t h = ra.handle();
    Must(a.DeregisterMemory(ra), "deregister on A");
    T_CHECK(t_vmpin_kb() == vm2);
    T_CHECK(t_ndk_counter("user_pinned_pages") == pinned2);
    ndk::WsaBuf gone{buf.base, 64, h};
    ExpectWsa(a.Write(4, std::span(&gone, 1), Addr(target.base), token), EINVAL, ndk::wsa::kEinval,
              "the handle on A after A deregistered it");
    WriteThrough(lb, b, fb, buf.base + kPage, rb.handle(), 2 * kPage, target.base, token,
                 "write on B after A deregistered");

    // The last deregistration releases it.
    Must(b.DeregisterMemory(rb), "deregister on B");
    const long vm3 = t_vmpin_kb();
    const long pinned3 = t_ndk_counter("user_pinned_pages");
    std::printf("after the last deregistration: VmPin %ld kB, user_pinned_pages %ld\n", vm3,
                pinned3);
    T_CHECK(vm3 == vm0);
    T_CHECK(pinned3 == pinned0);
    ExpectWsa(b.Write(5, std::span(&gone, 1), Addr(target.base), token), EINVAL, ndk::wsa::kEinval,
              "the handle on B after its last deregistration");

    Must(a.DeregisterMemory(rf_a), "deregister the fence on A");
    Must(b.DeregisterMemory(rf_b), "deregister the fence on B");

    // Not connected any more: A after its Disconnect, B after the peer's.
    Must(a.Disconnect(), "disconnect A");
    T_CHECK(!a.connected());
    ExpectWsa(a.RegisterMemory(buf.base, kPage, ndk::kMemRead), ENOTCONN, ndk::wsa::kEnotconn,
              "A after its disconnect");
    Must(b.WaitForDisconnect(std::chrono::seconds(10)), "B sees the disconnect");
    T_CHECK(!b.connected());
    ExpectWsa(b.RegisterMemory(buf.base, kPage, ndk::kMemRead), ENOTCONN, ndk::wsa::kEnotconn,
              "B after the peer's disconnect");
}

// As nobody with RLIMIT_MEMLOCK 256 KiB: 1 MiB on a connected socket is
// WSAENOBUFS, and nothing stays charged.
int OverMemlock() {
    try {
        ndk_t::Loopback lb;
        lb.Open();
        lb.Connect();
        ndk_t::Pages big(256);
        const long vm0 = t_vmpin_kb();
        auto over = lb.active->RegisterMemory(big.base, big.len, ndk::kMemReadWrite);
        std::printf("as nobody, 1 MiB over RLIMIT_MEMLOCK 256 KiB: %s\n",
                    over ? "registered" : over.error().Message().c_str());
        ExpectWsa(over, ENOMEM, ndk::wsa::kEnobufs, "1 MiB over a 256 KiB memlock limit");
        T_CHECK(t_vmpin_kb() == vm0);
        auto small = Must(lb.active->RegisterMemory(big.base, 16 * kPage, ndk::kMemReadWrite),
                          "64 KiB under the limit");
        T_CHECK(t_vmpin_kb() == vm0 + 64);
    } catch (const Failure& f) {
        std::fprintf(stderr, "as nobody: %s\n", f.what.c_str());
        return kTestFail;
    }
    return t_failures ? kTestFail : kTestPass;
}

}  // namespace

// wsp-socket [ADAPTER IP]: rxe0 at 10.99.0.1 by default; the debug tier
// runs it on siw0 (10.99.1.1) too, which users without CAP_SYS_RAWIO may
// not open (sec-siw-user), so the part as nobody runs on rxe0 only.
int main(int argc, char** argv) {
    const char* adapter = argc > 2 ? argv[1] : "rxe0";
    const char* ip = argc > 2 ? argv[2] : "10.99.0.1";
    try {
        Run(adapter, ip);
    } catch (const Failure& f) {
        std::fprintf(stderr, "FAIL: %s\n", f.what.c_str());
        return kTestFail;
    }
    if (std::strcmp(adapter, "rxe0") != 0) return t_result("wsp-socket");
    int rc = sec::AsNobody("over memlock", OverMemlock, [] {
        rlimit l{256 * 1024, 256 * 1024};
        return setrlimit(RLIMIT_MEMLOCK, &l) == 0;
    });
    if (rc != kTestPass) ++t_failures;
    return t_result("wsp-socket");
}
