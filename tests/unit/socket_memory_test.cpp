// SPDX-License-Identifier: GPL-2.0
// The connector as a WSD socket, through the fake /dev/ndk (which counts
// MEM_REGISTER references by (PD, address, length, flags) as the module
// does): WSPRegisterMemory's WSAENOTCONN/WSAEINVAL/WSAEFAULT/WSAENOBUFS,
// the handle valid only on its connector, the same buffer on two
// connectors one kernel registration released with the last reference,
// and the WsaBuf checks of the transfer calls.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "fake_ndk.hpp"

namespace {

using namespace std::chrono_literals;

ndk_u_event Request(std::uint32_t handle, std::uint32_t kind, std::int32_t status = 0) {
    return ndk_u_event{NDK_U_EVENT_REQUEST, handle, status, kind, 0};
}

// Two connectors of one PD, connected (as the fake sees it) by their
// complete-connect (A, active) and accept (B, passive) completions.
struct Sockets {
    fake::FakeNdk f;
    ndk::Adapter adapter = ndk::Adapter::Open(7, fake::kPath).value();
    ndk::ProtectionDomain pd = adapter.CreateProtectionDomain().value();
    ndk::CompletionQueue cq = ndk::CompletionQueue::Create(adapter, 8).value();
    ndk::QueuePair qa = ndk::QueuePair::Create(pd, cq, cq, {}).value();
    ndk::QueuePair qb = ndk::QueuePair::Create(pd, cq, cq, {}).value();
    ndk::Connector a = ndk::Connector::Create(adapter).value();
    ndk::Connector b = ndk::Connector::Create(adapter).value();
    alignas(4096) char buf[8192] = {};

    void Connect() {
        auto dest = ndk::SockAddr::Parse("10.99.0.1:4791").value();
        ASSERT_TRUE(a.Connect(qa, dest).ok());
        f.events.push_back(Request(a.handle(), NDK_U_REQ_CONNECT));
        ASSERT_TRUE(a.WaitFor(ndk::RequestKind::kConnect, 1s).ok());
        EXPECT_FALSE(a.connected());  // connect completed, complete-connect not yet
        ASSERT_TRUE(a.CompleteConnect().ok());
        f.events.push_back(Request(a.handle(), NDK_U_REQ_COMPLETE_CONNECT));
        ASSERT_TRUE(a.WaitFor(ndk::RequestKind::kCompleteConnect, 1s).ok());
        ASSERT_TRUE(b.Accept(qb).ok());
        EXPECT_FALSE(b.connected());
        f.events.push_back(Request(b.handle(), NDK_U_REQ_ACCEPT));
        ASSERT_TRUE(b.WaitFor(ndk::RequestKind::kAccept, 1s).ok());
        ASSERT_TRUE(a.connected());
        ASSERT_TRUE(b.connected());
    }
};

void ExpectError(const ndk::Error& e, int errnum, int wsa) {
    EXPECT_EQ(e.errnum, errnum) << e.Message();
    EXPECT_EQ(e.wsa, wsa) << e.Message();
}

TEST(SocketMemory, NotConnectedIsWsaenotconn) {
    Sockets s;
    // A connector that never connected, one that has a QP but whose
    // connect has not completed, and one whose accept failed.
    ExpectError(s.a.RegisterMemory(s.buf, 64, ndk::kMemRead).error(), ENOTCONN,
                ndk::wsa::kEnotconn);
    auto dest = ndk::SockAddr::Parse("10.99.0.1:4791").value();
    ASSERT_TRUE(s.a.Connect(s.qa, dest).ok());
    ExpectError(s.a.RegisterMemory(s.buf, 64, ndk::kMemRead).error(), ENOTCONN,
                ndk::wsa::kEnotconn);
    ASSERT_TRUE(s.b.Accept(s.qb).ok());
    s.f.events.push_back(Request(s.b.handle(), NDK_U_REQ_ACCEPT, ndk::status::kConnectionRefused));
    EXPECT_FALSE(s.b.WaitFor(ndk::RequestKind::kAccept, 1s).ok());
    ExpectError(s.b.RegisterMemory(s.buf, 64, ndk::kMemRead).error(), ENOTCONN,
                ndk::wsa::kEnotconn);
    // Bad flags on an unconnected socket: not connected comes first.
    ExpectError(s.a.RegisterMemory(s.buf, 64, 0).error(), ENOTCONN, ndk::wsa::kEnotconn);
    EXPECT_EQ(s.f.Count(NDK_IOCTL_MEM_REGISTER), 0);
}

TEST(SocketMemory, ConnectedThroughGetEventsCounts) {
    Sockets s;
    auto dest = ndk::SockAddr::Parse("10.99.0.1:4791").value();
    ASSERT_TRUE(s.a.Connect(s.qa, dest).ok());
    s.f.events.push_back(Request(s.a.handle(), NDK_U_REQ_COMPLETE_CONNECT));
    ndk::Event ev[4];
    ASSERT_EQ(s.adapter.GetEvents(ev).value(), 1u);
    EXPECT_TRUE(s.a.connected());
    EXPECT_TRUE(s.a.RegisterMemory(s.buf, 64, ndk::kMemRead).ok());
}

TEST(SocketMemory, RegisterCarriesThePdOfTheConnectorsQp) {
    Sockets s;
    s.Connect();
    auto r = s.a.RegisterMemory(s.buf + 8, 100, ndk::kMemReadWrite);
    ASSERT_TRUE(r.ok()) << r.error().Message();
    auto m = s.f.Last<ndk_u_mem_register>(NDK_IOCTL_MEM_REGISTER);
    EXPECT_EQ(m.pd_handle, s.pd.handle());
    EXPECT_EQ(m.flags, ndk::kMemReadWrite);
    EXPECT_EQ(m.address, reinterpret_cast<std::uintptr_t>(s.buf + 8));
    EXPECT_EQ(m.length, 100u);
    EXPECT_EQ(m.reserved, 0u);
    EXPECT_NE(r->handle(), 0u);
    EXPECT_EQ(r->local_token(), 0x100u);
    EXPECT_EQ(r->base_address(), m.address);
    EXPECT_EQ(r->length(), 100u);
    EXPECT_EQ(r->flags(), ndk::kMemReadWrite);
    EXPECT_EQ(r->references(), 1u);
}

TEST(SocketMemory, DisconnectEndsRegistrationButNotDeregistration) {
    Sockets s;
    s.Connect();
    auto ra = s.a.RegisterMemory(s.buf, 64, ndk::kMemRead).value();
    auto rb = s.b.RegisterMemory(s.buf, 64, ndk::kMemRead).value();
    ASSERT_TRUE(s.a.Disconnect().ok());
    EXPECT_FALSE(s.a.connected());
    ExpectError(s.a.RegisterMemory(s.buf, 64, ndk::kMemRead).error(), ENOTCONN,
                ndk::wsa::kEnotconn);
    // The peer's disconnect, seen through any wait.
    s.f.events.push_back(ndk_u_event{NDK_U_EVENT_DISCONNECTED, s.b.handle(), 0, 0, 0});
    ASSERT_TRUE(s.b.WaitForDisconnect(1s).ok());
    EXPECT_FALSE(s.b.connected());
    ExpectError(s.b.RegisterMemory(s.buf, 64, ndk::kMemRead).error(), ENOTCONN,
                ndk::wsa::kEnotconn);
    EXPECT_TRUE(s.a.DeregisterMemory(ra).ok());
    EXPECT_TRUE(s.b.DeregisterMemory(rb).ok());
    EXPECT_TRUE(s.f.mem_refs.empty());
}

TEST(SocketMemory, BadFlagsAndLengthAreWsaeinval) {
    Sockets s;
    s.Connect();
    for (std::uint32_t flags : {0u, 4u, 7u, 0x80000001u})
        ExpectError(s.a.RegisterMemory(s.buf, 64, flags).error(), EINVAL, ndk::wsa::kEinval);
    ExpectError(s.a.RegisterMemory(s.buf, 0, ndk::kMemRead).error(), EINVAL, ndk::wsa::kEinval);
    EXPECT_EQ(s.f.Count(NDK_IOCTL_MEM_REGISTER), 0);
}

TEST(SocketMemory, KernelErrorsGetTheSeedsCodes) {
    Sockets s;
    s.Connect();
    const struct {
        int errnum;
        int wsa;
    } cases[] = {{EFAULT, ndk::wsa::kEfault},   {EOPNOTSUPP, ndk::wsa::kEfault},
                 {ENOMEM, ndk::wsa::kEnobufs},  {EMSGSIZE, ndk::wsa::kEnobufs},
                 {EPERM, ndk::wsa::kEnobufs},   {EOVERFLOW, ndk::wsa::kEnobufs},
                 {ENOBUFS, ndk::wsa::kEnobufs}, {ENODEV, ndk::wsa::kEnobufs},
                 {ENOENT, ndk::wsa::kEinval}};
    for (const auto& c : cases) {
        s.f.fail[NDK_IOCTL_MEM_REGISTER] = c.errnum;
        ExpectError(s.a.RegisterMemory(s.buf, 64, ndk::kMemRead).error(), c.errnum, c.wsa);
    }
}

TEST(SocketMemory, EveryRegisterErrnoIsOneOfTheFourCodes) {
    for (int e = 1; e < 134; ++e) {
        int w = ndk::WsaForRegisterMemory(e);
        EXPECT_TRUE(w == ndk::wsa::kEnobufs || w == ndk::wsa::kEfault || w == ndk::wsa::kEinval ||
                    w == ndk::wsa::kEnotconn)
            << "errno " << e;
        EXPECT_EQ(ndk::WsaForDeregisterMemory(e), ndk::wsa::kEinval);
    }
    EXPECT_EQ(ndk::WsaForRegisterMemory(ENOTCONN), ndk::wsa::kEnotconn);
}

TEST(SocketMemory, SameBufferOnTwoConnectorsIsOneKernelRegistration) {
    Sockets s;
    s.Connect();
    auto ra = s.a.RegisterMemory(s.buf, sizeof(s.buf), ndk::kMemReadWrite).value();
    auto rb = s.b.RegisterMemory(s.buf, sizeof(s.buf), ndk::kMemReadWrite).value();
    EXPECT_EQ(ra.handle(), rb.handle());
    EXPECT_EQ(ra.references(), 1u);
    EXPECT_EQ(rb.references(), 2u);
    ASSERT_EQ(s.f.mem_refs.size(), 1u);
    EXPECT_EQ(s.f.mem_refs[ra.handle()], 2u);
    const std::uint32_t h = ra.handle();

    // Deregistering on A keeps it for B.
    ASSERT_TRUE(s.a.DeregisterMemory(ra).ok());
    EXPECT_TRUE(ra.empty());
    EXPECT_EQ(s.f.mem_refs[h], 1u);
    ndk::WsaBuf wb{s.buf, 16, h};
    EXPECT_TRUE(s.b.Write(1, std::span(&wb, 1), 0x1000, 0x77).ok());
    ExpectError(s.a.Write(2, std::span(&wb, 1), 0x1000, 0x77).error(), EINVAL, ndk::wsa::kEinval);

    // The last deregistration releases it.
    { auto gone = std::move(rb); }
    EXPECT_TRUE(s.f.mem_refs.empty());
    ExpectError(s.b.Write(3, std::span(&wb, 1), 0x1000, 0x77).error(), EINVAL, ndk::wsa::kEinval);
}

TEST(SocketMemory, HandleIsValidOnlyOnItsConnector) {
    Sockets s;
    s.Connect();
    auto ra = s.a.RegisterMemory(s.buf, 4096, ndk::kMemReadWrite).value();
    const int posts = s.f.Count(NDK_IOCTL_QP_POST);
    ndk::WsaBuf wb{s.buf, 64, ra.handle()};
    ExpectError(s.b.Write(1, std::span(&wb, 1), 0x1000, 0x77).error(), EINVAL, ndk::wsa::kEinval);
    ExpectError(s.b.Read(1, std::span(&wb, 1), 0x1000, 0x77).error(), EINVAL, ndk::wsa::kEinval);
    ExpectError(s.b.Send(1, std::span(&wb, 1)).error(), EINVAL, ndk::wsa::kEinval);
    ExpectError(s.b.Receive(1, std::span(&wb, 1)).error(), EINVAL, ndk::wsa::kEinval);
    EXPECT_EQ(s.f.Count(NDK_IOCTL_QP_POST), posts);
    // WSPDeregisterMemory(B, A's handle): refused, nothing changes.
    ExpectError(s.b.DeregisterMemory(ra).error(), EINVAL, ndk::wsa::kEinval);
    EXPECT_FALSE(ra.empty());
    EXPECT_EQ(s.f.mem_refs[ra.handle()], 1u);
    EXPECT_EQ(s.f.Count(NDK_IOCTL_MEM_DEREGISTER), 0);
    // Still good on A: the post carries the registration's local token.
    ASSERT_TRUE(s.a.Write(5, std::span(&wb, 1), 0x1000, 0x77).ok());
    auto p = s.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    EXPECT_EQ(p.qp_handle, s.qa.handle());
    EXPECT_EQ(p.op, NDK_U_OP_WRITE);
    EXPECT_EQ(p.remote_address, 0x1000u);
    EXPECT_EQ(p.remote_token, 0x77u);
    ASSERT_EQ(s.f.last_sgl.size(), 1u);
    EXPECT_EQ(s.f.last_sgl[0].address, reinterpret_cast<std::uintptr_t>(s.buf));
    EXPECT_EQ(s.f.last_sgl[0].length, 64u);
    EXPECT_EQ(s.f.last_sgl[0].token, 0x100u);
    // Unknown handles are refused as well; without a handle, B has no
    // registration of its own that holds the bytes.
    ndk::WsaBuf unknown{s.buf, 64, ra.handle() + 1000};
    ExpectError(s.a.Send(1, std::span(&unknown, 1)).error(), EINVAL, ndk::wsa::kEinval);
    ndk::WsaBuf none{s.buf, 64, 0};
    ExpectError(s.b.Send(1, std::span(&none, 1)).error(), EFAULT, ndk::wsa::kEfault);
    ndk::SocketRegistration empty;
    ExpectError(s.a.DeregisterMemory(empty).error(), EINVAL, ndk::wsa::kEinval);
}

TEST(SocketMemory, BuffersMustLieInsideWithTheRight) {
    Sockets s;
    s.Connect();
    auto ro = s.a.RegisterMemory(s.buf, 4096, ndk::kMemRead).value();
    auto wo = s.a.RegisterMemory(s.buf + 4096, 4096, ndk::kMemWrite).value();
    ASSERT_NE(ro.handle(), wo.handle());
    const int posts = s.f.Count(NDK_IOCTL_QP_POST);
    ndk::WsaBuf past{s.buf + 4000, 200, ro.handle()};
    ExpectError(s.a.Send(1, std::span(&past, 1)).error(), EFAULT, ndk::wsa::kEfault);
    ndk::WsaBuf before{s.buf + 4095, 2, wo.handle()};
    ExpectError(s.a.Receive(1, std::span(&before, 1)).error(), EFAULT, ndk::wsa::kEfault);
    // kMemRead is a source only, kMemWrite a sink only (the seed's rule).
    ndk::WsaBuf r{s.buf, 64, ro.handle()};
    ndk::WsaBuf w{s.buf + 4096, 64, wo.handle()};
    ExpectError(s.a.Receive(1, std::span(&r, 1)).error(), EACCES, ndk::wsa::kEfault);
    ExpectError(s.a.Read(1, std::span(&r, 1), 0x1000, 0x77).error(), EACCES, ndk::wsa::kEfault);
    ExpectError(s.a.Send(1, std::span(&w, 1)).error(), EACCES, ndk::wsa::kEfault);
    ExpectError(s.a.Write(1, std::span(&w, 1), 0x1000, 0x77).error(), EACCES, ndk::wsa::kEfault);
    std::vector<ndk::WsaBuf> many(NDK_U_SGE_MAX + 1, r);
    ExpectError(s.a.Send(1, many).error(), EINVAL, ndk::wsa::kEinval);
    EXPECT_EQ(s.f.Count(NDK_IOCTL_QP_POST), posts);
    // The whole registration, and both in one request.
    ndk::WsaBuf all{s.buf, 4096, ro.handle()};
    EXPECT_TRUE(s.a.Send(1, std::span(&all, 1)).ok());
    EXPECT_TRUE(s.a.Receive(2, std::span(&w, 1)).ok());
    EXPECT_TRUE(s.a.Read(3, std::span(&w, 1), 0x1000, 0x77).ok());
    EXPECT_EQ(s.f.Count(NDK_IOCTL_QP_POST), posts + 3);
}

// WSPRegisterMemory: "the switch does not pass memory handles to WSPSend
// and WSPRecv, so a SAN service provider must maintain its own mapping of
// memory buffers to handles": a WsaBuf without a handle is posted with the
// token of this connector's registration that holds its bytes, one with
// the post's right first.
TEST(SocketMemory, BufferWithoutHandleFindsItsRegistration) {
    Sockets s;
    s.Connect();
    auto ro = s.a.RegisterMemory(s.buf, 4096, ndk::kMemRead).value();
    auto wo = s.a.RegisterMemory(s.buf + 4096, 4096, ndk::kMemWrite).value();
    auto rw = s.a.RegisterMemory(s.buf + 2048, 4096, ndk::kMemReadWrite).value();
    const int posts = s.f.Count(NDK_IOCTL_QP_POST);
    auto token = [&] { return s.f.last_sgl.empty() ? 0u : s.f.last_sgl[0].token; };
    ndk::WsaBuf src{s.buf, 64, 0};
    ASSERT_TRUE(s.a.Send(1, std::span(&src, 1)).ok());
    EXPECT_EQ(token(), ro.local_token());
    ndk::WsaBuf sink{s.buf + 7000, 64, 0};
    ASSERT_TRUE(s.a.Receive(2, std::span(&sink, 1)).ok());
    EXPECT_EQ(token(), wo.local_token());
    // Held by ro and rw: a sink gets rw, the one that may be written.
    ndk::WsaBuf both{s.buf + 3000, 64, 0};
    ASSERT_TRUE(s.a.Read(3, std::span(&both, 1), 0x1000, 0x77).ok());
    EXPECT_EQ(token(), rw.local_token());
    // Held only without the right, or by no one registration.
    ndk::WsaBuf read_only{s.buf + 100, 64, 0};
    ExpectError(s.a.Receive(4, std::span(&read_only, 1)).error(), EACCES, ndk::wsa::kEfault);
    ndk::WsaBuf across{s.buf + 1000, 6000, 0};
    ExpectError(s.a.Send(5, std::span(&across, 1)).error(), EFAULT, ndk::wsa::kEfault);
    EXPECT_EQ(s.f.Count(NDK_IOCTL_QP_POST), posts + 3);
    // A deregistered buffer is no longer found.
    EXPECT_TRUE(s.a.DeregisterMemory(ro).ok());
    ndk::WsaBuf gone{s.buf, 64, 0};
    ExpectError(s.a.Send(6, std::span(&gone, 1)).error(), EFAULT, ndk::wsa::kEfault);
}

TEST(SocketMemory, BusyDeregistrationChangesNothing) {
    Sockets s;
    s.Connect();
    auto ra = s.a.RegisterMemory(s.buf, 4096, ndk::kMemReadWrite).value();
    s.f.fail[NDK_IOCTL_MEM_DEREGISTER] = EBUSY;
    ExpectError(s.a.DeregisterMemory(ra).error(), EBUSY, ndk::wsa::kEinval);
    EXPECT_FALSE(ra.empty());
    ndk::WsaBuf wb{s.buf, 64, ra.handle()};
    EXPECT_TRUE(s.a.Send(1, std::span(&wb, 1)).ok());
    s.f.fail.clear();
    EXPECT_TRUE(s.a.DeregisterMemory(ra).ok());
    EXPECT_TRUE(s.f.mem_refs.empty());
}

// The same rules for a PD's Registration (WSPRegisterMemory without a
// socket): every kernel refusal carries one of the seed's codes, and a
// refused last deregistration (EBUSY) keeps the reference for a retry.
TEST(PdRegistration, KernelErrorsGetTheSeedsCodes) {
    Sockets s;
    const struct {
        int errnum;
        int wsa;
    } cases[] = {{EOPNOTSUPP, ndk::wsa::kEfault}, {EFAULT, ndk::wsa::kEfault},
                 {EAGAIN, ndk::wsa::kEnobufs},    {EPERM, ndk::wsa::kEnobufs},
                 {ENOMEM, ndk::wsa::kEnobufs},    {EOVERFLOW, ndk::wsa::kEnobufs},
                 {ENOENT, ndk::wsa::kEinval}};
    for (const auto& c : cases) {
        s.f.fail[NDK_IOCTL_MEM_REGISTER] = c.errnum;
        ExpectError(s.pd.RegisterMemory(s.buf, 64, ndk::kMemWrite).error(), c.errnum, c.wsa);
    }
}

TEST(PdRegistration, BusyDeregistrationKeepsTheReference) {
    Sockets s;
    auto r = s.pd.RegisterMemory(s.buf, 4096, ndk::kMemRead).value();
    const std::uint32_t h = r.handle();
    s.f.fail[NDK_IOCTL_MEM_DEREGISTER] = EBUSY;
    ExpectError(r.Deregister().error(), EBUSY, ndk::wsa::kEinval);
    EXPECT_EQ(r.handle(), h);
    EXPECT_EQ(s.f.mem_refs[h], 1u);
    s.f.fail.clear();
    EXPECT_TRUE(r.Deregister().ok());
    EXPECT_EQ(r.handle(), 0u);
    EXPECT_TRUE(s.f.mem_refs.empty());
    ExpectError(r.Deregister().error(), EBADF, ndk::wsa::kEinval);
}

TEST(PdRegistration, GoneInTheKernelLeavesItEmpty) {
    Sockets s;
    auto r = s.pd.RegisterMemory(s.buf, 4096, ndk::kMemRead).value();
    s.f.fail[NDK_IOCTL_MEM_DEREGISTER] = ENOENT;
    ExpectError(r.Deregister().error(), ENOENT, ndk::wsa::kEinval);
    EXPECT_EQ(r.handle(), 0u);
    s.f.fail.clear();
}

TEST(SocketMemory, MovedRegistrationKeepsItsReference) {
    Sockets s;
    s.Connect();
    auto ra = s.a.RegisterMemory(s.buf, 4096, ndk::kMemRead).value();
    const std::uint32_t h = ra.handle();
    ndk::SocketRegistration moved = std::move(ra);
    EXPECT_TRUE(ra.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(moved.handle(), h);
    EXPECT_EQ(s.f.mem_refs[h], 1u);
    ExpectError(s.a.DeregisterMemory(ra).error(), EINVAL, ndk::wsa::kEinval);
    EXPECT_TRUE(s.a.DeregisterMemory(moved).ok());
    EXPECT_TRUE(s.f.mem_refs.empty());
}

}  // namespace
