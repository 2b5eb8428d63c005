// SPDX-License-Identifier: GPL-2.0
// Marshalling of every NDK_U_FEATURE_VERBS request into its ioctl struct,
// through the fake /dev/ndk of fake_ndk.hpp: the fields each class fills,
// reserved fields and flags zero, handles closed children first, the event
// queue and the synchronous helpers.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstddef>

#include "fake_ndk.hpp"

namespace {

using namespace std::chrono_literals;

ndk_u_result Result(std::uint64_t ctx) {
    ndk_u_result r{};
    r.request_context = ctx;
    return r;
}

struct Objects {
    fake::FakeNdk f;
    ndk::Adapter adapter = ndk::Adapter::Open(7, fake::kPath).value();
    ndk::ProtectionDomain pd = adapter.CreateProtectionDomain().value();
};

TEST(VerbsAdapter, OpenRefusesAModuleWithoutObjects) {
    fake::FakeNdk f;
    f.features = NDK_U_FEATURE_ADAPTER_QUERY;
    auto a = ndk::Adapter::Open(0, fake::kPath);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.error().errnum, EOPNOTSUPP);
}

TEST(VerbsCq, CreateArmPoll) {
    Objects o;
    auto cq = ndk::CompletionQueue::Create(o.adapter, 64, 0xc0ffee);
    ASSERT_TRUE(cq.ok()) << cq.error().Message();
    auto c = o.f.Last<ndk_u_cq_create>(NDK_IOCTL_CQ_CREATE);
    EXPECT_EQ(c.adapter_handle, o.adapter.handle());
    EXPECT_EQ(c.depth, 64u);
    EXPECT_EQ(c.flags, 0u);
    EXPECT_EQ(c.handle, 0u);
    EXPECT_EQ(c.context, 0xc0ffeeu);
    EXPECT_EQ(cq->context(), 0xc0ffeeu);

    ASSERT_TRUE(cq->Arm(ndk::cq_notify::kSolicited).ok());
    auto a = o.f.Last<ndk_u_cq_arm>(NDK_IOCTL_CQ_ARM);
    EXPECT_EQ(a.handle, cq->handle());
    EXPECT_EQ(a.type, 2u);

    o.f.results.push_back(ndk_u_result{11, 22, static_cast<__s32>(0xC0000120), 33,
                                       ndk::operation_type::kWrite, 5, 0});
    o.f.results.push_back(
        ndk_u_result{12, 22, 0, 64, ndk::operation_type::kReceiveAndInvalidate, 0, 0x1234});
    std::array<ndk::CompletionResult, 4> out;
    auto n = cq->Poll(out);
    ASSERT_TRUE(n.ok());
    ASSERT_EQ(*n, 2u);
    auto p = o.f.Last<ndk_u_cq_poll>(NDK_IOCTL_CQ_POLL);
    EXPECT_EQ(p.handle, cq->handle());
    EXPECT_EQ(p.count, 4u);
    EXPECT_EQ(out[0].request_context, 11u);
    EXPECT_EQ(out[0].qp_context, 22u);
    EXPECT_EQ(out[0].status, ndk::status::kCancelled);
    EXPECT_EQ(out[0].bytes_transferred, 33u);
    EXPECT_EQ(out[0].type, ndk::operation_type::kWrite);
    EXPECT_EQ(out[0].provider_error_code, 5u);
    EXPECT_EQ(out[1].type_specific, 0x1234u);
    EXPECT_EQ(*cq->Poll(out), 0u);
}

TEST(VerbsCq, PollAsksAtMostTheAbiMaximumPerCall) {
    Objects o;
    auto cq = ndk::CompletionQueue::Create(o.adapter, 1000).value();
    for (int i = 0; i < 300; ++i) o.f.results.push_back(Result(std::uint64_t(i)));
    std::vector<ndk::CompletionResult> out(1000);
    auto n = cq.Poll(out);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 300u);
    EXPECT_EQ(o.f.Last<ndk_u_cq_poll>(NDK_IOCTL_CQ_POLL, 1).count, NDK_U_CQ_POLL_MAX);
    EXPECT_EQ(out[299].request_context, 299u);
}

TEST(VerbsCq, PollUntilArmsAndWaitsForItsEvent) {
    Objects o;
    auto cq = ndk::CompletionQueue::Create(o.adapter, 16).value();
    // An event of another object comes first; it must be kept.
    o.f.events.push_back(ndk_u_event{NDK_U_EVENT_DISCONNECTED, 99, 0, 0, 5});
    o.f.events.push_back(ndk_u_event{NDK_U_EVENT_CQ, cq.handle(), 0, 0, 0});
    // A result already there is taken without arming.
    std::array<ndk::CompletionResult, 2> out;
    o.f.results.push_back(Result(1));
    auto n = cq.PollUntil(out, 1, 100ms);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 1u);
    EXPECT_EQ(o.f.Count(NDK_IOCTL_CQ_ARM), 0);  // found before arming

    // None comes: arm, take the CQ event, poll again, time out.
    auto n2 = cq.PollUntil(out, 1, 50ms);
    ASSERT_TRUE(n2.ok());
    EXPECT_EQ(*n2, 0u);
    EXPECT_GE(o.f.Count(NDK_IOCTL_CQ_ARM), 1);
    // The disconnect event is still there for the application.
    std::array<ndk::Event, 4> ev;
    auto k = o.adapter.GetEvents(ev);
    ASSERT_TRUE(k.ok());
    ASSERT_EQ(*k, 1u);
    EXPECT_EQ(ev[0].type, ndk::EventType::kDisconnected);
    EXPECT_EQ(ev[0].handle, 99u);
    EXPECT_EQ(ev[0].context, 5u);
}

TEST(VerbsCq, PollUntilTimesOutWithWhatItHas) {
    Objects o;
    auto cq = ndk::CompletionQueue::Create(o.adapter, 16).value();
    o.f.results.push_back(Result(1));
    std::array<ndk::CompletionResult, 4> out;
    auto t0 = std::chrono::steady_clock::now();
    auto n = cq.PollUntil(out, 3, 50ms);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 1u);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 50ms);
}

TEST(VerbsQp, CreateCarriesEveryParameter) {
    Objects o;
    auto rcq = ndk::CompletionQueue::Create(o.adapter, 8).value();
    auto icq = ndk::CompletionQueue::Create(o.adapter, 8).value();
    ndk::QueuePairParams p;
    p.receive_queue_depth = 3;
    p.initiator_queue_depth = 5;
    p.max_receive_request_sge = 2;
    p.max_initiator_request_sge = 4;
    p.inline_data_size = 64;
    p.context = 0x77;
    auto qp = ndk::QueuePair::Create(o.pd, rcq, icq, p);
    ASSERT_TRUE(qp.ok()) << qp.error().Message();
    auto c = o.f.Last<ndk_u_qp_create>(NDK_IOCTL_QP_CREATE);
    EXPECT_EQ(c.pd_handle, o.pd.handle());
    EXPECT_EQ(c.receive_cq_handle, rcq.handle());
    EXPECT_EQ(c.initiator_cq_handle, icq.handle());
    EXPECT_EQ(c.flags, 0u);
    EXPECT_EQ(c.receive_queue_depth, 3u);
    EXPECT_EQ(c.initiator_queue_depth, 5u);
    EXPECT_EQ(c.max_receive_request_sge, 2u);
    EXPECT_EQ(c.max_initiator_request_sge, 4u);
    EXPECT_EQ(c.inline_data_size, 64u);
    EXPECT_EQ(c.handle, 0u);
    EXPECT_EQ(c.context, 0x77u);
    EXPECT_EQ(qp->context(), 0x77u);
}

TEST(VerbsQp, ObjectsOfAnotherAdapterAreRefused) {
    Objects o;
    auto other = ndk::Adapter::Open(8, fake::kPath).value();
    auto cq = ndk::CompletionQueue::Create(other, 8).value();
    auto qp = ndk::QueuePair::Create(o.pd, cq, cq, {});
    ASSERT_FALSE(qp.ok());
    EXPECT_EQ(qp.error().errnum, EINVAL);
    EXPECT_EQ(o.f.Count(NDK_IOCTL_QP_CREATE), 0);
}

struct QpObjects : Objects {
    ndk::CompletionQueue cq = ndk::CompletionQueue::Create(adapter, 8).value();
    ndk::QueuePair qp = ndk::QueuePair::Create(pd, cq, cq, {}).value();
    char buf[4096] = {};
};

void ExpectPost(const ndk_u_qp_post& p, std::uint32_t qp, std::uint32_t op, std::uint32_t flags,
                std::uint64_t ctx) {
    EXPECT_EQ(p.qp_handle, qp);
    EXPECT_EQ(p.op, op);
    EXPECT_EQ(p.flags, flags);
    EXPECT_EQ(p.request_context, ctx);
}

TEST(VerbsQp, SendReceiveReadWriteSgls) {
    QpObjects o;
    ndk::Sge sgl[2] = {{o.buf, 100, 0x11}, {o.buf + 200, 50, 0x22}};
    ASSERT_TRUE(o.qp.Send(1, sgl, ndk::op_flag::kSilentSuccess).ok());
    auto p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_SEND, 1, 1);
    EXPECT_EQ(p.nsge, 2u);
    EXPECT_NE(p.sgl, 0u);
    EXPECT_EQ(p.remote_address, 0u);
    EXPECT_EQ(p.remote_token | p.object_handle | p.mr_handle | p.token, 0u);
    EXPECT_EQ(p.address | p.length, 0u);
    ASSERT_EQ(o.f.last_sgl.size(), 2u);
    EXPECT_EQ(o.f.last_sgl[0].address, reinterpret_cast<std::uintptr_t>(o.buf));
    EXPECT_EQ(o.f.last_sgl[0].length, 100u);
    EXPECT_EQ(o.f.last_sgl[0].token, 0x11u);
    EXPECT_EQ(o.f.last_sgl[1].address, reinterpret_cast<std::uintptr_t>(o.buf + 200));
    EXPECT_EQ(o.f.last_sgl[1].token, 0x22u);

    ASSERT_TRUE(o.qp.SendAndInvalidate(2, sgl, 0xdead, 0).ok());
    p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_SEND_INVALIDATE, 0, 2);
    EXPECT_EQ(p.remote_token, 0xdeadu);

    ASSERT_TRUE(o.qp.Receive(3, std::span(sgl, 1)).ok());
    p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_RECEIVE, 0, 3);
    EXPECT_EQ(p.nsge, 1u);

    ASSERT_TRUE(o.qp.Read(4, sgl, 0x7000, 0xbeef, ndk::op_flag::kReadFence).ok());
    p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_READ, 2, 4);
    EXPECT_EQ(p.remote_address, 0x7000u);
    EXPECT_EQ(p.remote_token, 0xbeefu);

    ASSERT_TRUE(o.qp.Write(5, sgl, 0x8000, 0xcafe, ndk::op_flag::kInline).ok());
    p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_WRITE, 0x40, 5);
    EXPECT_EQ(p.remote_address, 0x8000u);
    EXPECT_EQ(p.remote_token, 0xcafeu);

    // No SGE: sgl 0.
    ASSERT_TRUE(o.qp.Send(6, {}).ok());
    p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    EXPECT_EQ(p.nsge, 0u);
    EXPECT_EQ(p.sgl, 0u);
}

// The kernel refuses a request with more SGEs than the ABI carries, and
// in doing so hands the DEFER chain over (NDK's inline failure): the
// library sends the count alone, with no SGE list to read.
TEST(VerbsQp, TooManySgesReachTheKernelAsACount) {
    QpObjects o;
    std::vector<ndk::Sge> sgl(NDK_U_SGE_MAX + 1, ndk::Sge{o.buf, 1, 1});
    int before = o.f.Count(NDK_IOCTL_QP_POST);
    auto r = o.qp.Send(1, sgl);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().errnum, EINVAL);
    ASSERT_EQ(o.f.Count(NDK_IOCTL_QP_POST), before + 1);
    auto p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    EXPECT_EQ(p.nsge, NDK_U_SGE_MAX + 1);
    EXPECT_EQ(p.sgl, 0u);
}

TEST(VerbsQp, FastRegisterBindInvalidateFlush) {
    QpObjects o;
    auto reg = o.pd.RegisterMemory(o.buf, sizeof(o.buf), ndk::kMemReadWrite).value();
    auto fr = ndk::MemoryRegion::Create(o.pd, true).value();
    EXPECT_EQ(o.f.Last<ndk_u_mr_create>(NDK_IOCTL_MR_CREATE).flags,
              NDK_U_MR_CREATE_F_FAST_REGISTER);
    ASSERT_TRUE(fr.InitializeFastRegister(2, true).ok());
    auto i = o.f.Last<ndk_u_mr_init_fr>(NDK_IOCTL_MR_INIT_FR);
    EXPECT_EQ(i.handle, fr.handle());
    EXPECT_EQ(i.adapter_page_count, 2u);
    EXPECT_EQ(i.flags, NDK_U_MR_INIT_FR_F_REMOTE_ACCESS);
    EXPECT_EQ(i.reserved, 0u);

    o.f.post_token = 0x4242;
    auto t =
        o.qp.FastRegister(9, fr, reg, o.buf + 100, 500, 0x1064, ndk::op_flag::kAllowRemoteRead);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, 0x4242u);
    EXPECT_EQ(fr.remote_token(), 0x4242u);
    EXPECT_EQ(fr.local_token(), 0x4242u);
    auto p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_FAST_REGISTER, 8, 9);
    EXPECT_EQ(p.object_handle, fr.handle());
    EXPECT_EQ(p.mr_handle, reg.handle());
    EXPECT_EQ(p.address, reinterpret_cast<std::uintptr_t>(o.buf + 100));
    EXPECT_EQ(p.length, 500u);
    EXPECT_EQ(p.remote_address, 0x1064u);
    EXPECT_EQ(p.nsge, 0u);
    EXPECT_EQ(p.sgl, 0u);
    EXPECT_EQ(p.token, 0u);

    // Default base address: the address itself.
    ASSERT_TRUE(o.qp.FastRegister(10, fr, reg, o.buf, 8, 0).ok());
    EXPECT_EQ(o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST).remote_address,
              reinterpret_cast<std::uintptr_t>(o.buf));

    // Bind over an MR_REGISTER registration.
    auto mr = ndk::MemoryRegion::Create(o.pd).value();
    ASSERT_TRUE(mr.Register(o.buf, sizeof(o.buf), ndk::mr_flag::kAllowLocalWrite).ok());
    auto mw = ndk::MemoryWindow::Create(o.pd).value();
    o.f.post_token = 0x5151;
    auto b = o.qp.Bind(11, mr, mw, o.buf + 8, 16, ndk::op_flag::kAllowRemoteWrite);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(*b, 0x5151u);
    EXPECT_EQ(mw.remote_token(), 0x5151u);
    p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_BIND, 0x30, 11);
    EXPECT_EQ(p.object_handle, mw.handle());
    EXPECT_EQ(p.mr_handle, mr.handle());
    EXPECT_EQ(p.address, reinterpret_cast<std::uintptr_t>(o.buf + 8));
    EXPECT_EQ(p.length, 16u);
    EXPECT_EQ(p.remote_address, 0u);

    ASSERT_TRUE(o.qp.Invalidate(12, mw, ndk::op_flag::kDefer).ok());
    p = o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST);
    ExpectPost(p, o.qp.handle(), NDK_U_OP_INVALIDATE, 0x200, 12);
    EXPECT_EQ(p.object_handle, mw.handle());
    EXPECT_EQ(p.mr_handle, 0u);
    ASSERT_TRUE(o.qp.Invalidate(13, fr).ok());
    EXPECT_EQ(o.f.Last<ndk_u_qp_post>(NDK_IOCTL_QP_POST).object_handle, fr.handle());

    ASSERT_TRUE(o.qp.Flush().ok());
    auto fl = o.f.Last<ndk_u_qp_flush>(NDK_IOCTL_QP_FLUSH);
    EXPECT_EQ(fl.handle, o.qp.handle());
    EXPECT_EQ(fl.flags, 0u);
}

TEST(VerbsQp, FailedPostLeavesTokensAlone) {
    QpObjects o;
    auto reg = o.pd.RegisterMemory(o.buf, sizeof(o.buf), ndk::kMemReadWrite).value();
    auto fr = ndk::MemoryRegion::Create(o.pd, true).value();
    o.f.fail[NDK_IOCTL_QP_POST] = EBUSY;
    auto t = o.qp.FastRegister(1, fr, reg, o.buf, 8, 0);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().errnum, EBUSY);
    EXPECT_EQ(t.error().status, ndk::status::kDeviceBusy);
    EXPECT_EQ(fr.remote_token(), 0u);
}

TEST(VerbsMr, RegisterDeregisterTokens) {
    Objects o;
    char buf[64];
    auto mr = ndk::MemoryRegion::Create(o.pd).value();
    auto c = o.f.Last<ndk_u_mr_create>(NDK_IOCTL_MR_CREATE);
    EXPECT_EQ(c.pd_handle, o.pd.handle());
    EXPECT_EQ(c.flags, 0u);
    EXPECT_EQ(c.reserved, 0u);
    EXPECT_FALSE(mr.fast_register());
    ASSERT_TRUE(mr.Register(buf, sizeof(buf), ndk::mr_flag::kAllowRemoteWrite).ok());
    auto r = o.f.Last<ndk_u_mr_register>(NDK_IOCTL_MR_REGISTER);
    EXPECT_EQ(r.handle, mr.handle());
    EXPECT_EQ(r.flags, 5u);
    EXPECT_EQ(r.address, reinterpret_cast<std::uintptr_t>(buf));
    EXPECT_EQ(r.length, sizeof(buf));
    EXPECT_EQ(mr.local_token(), 0x300u);
    EXPECT_EQ(mr.remote_token(), 0x400u);
    ASSERT_TRUE(mr.QueryTokens().ok());
    EXPECT_EQ(o.f.Last<ndk_u_token_query>(NDK_IOCTL_TOKEN_QUERY).handle, mr.handle());
    EXPECT_EQ(mr.local_token(), 0x500u);
    EXPECT_EQ(mr.remote_token(), 0x600u);
    ASSERT_TRUE(mr.Deregister().ok());
    auto d = o.f.Last<ndk_u_mr_deregister>(NDK_IOCTL_MR_DEREGISTER);
    EXPECT_EQ(d.handle, mr.handle());
    EXPECT_EQ(d.flags, 0u);
}

TEST(VerbsMr, DestructorDeregistersThenCloses) {
    Objects o;
    char buf[64];
    std::uint32_t h;
    {
        auto mr = ndk::MemoryRegion::Create(o.pd).value();
        h = mr.handle();
        ASSERT_TRUE(mr.Register(buf, sizeof(buf), 0).ok());
        o.f.calls.clear();
    }
    ASSERT_EQ(o.f.calls.size(), 2u);
    EXPECT_EQ(o.f.calls[0].cmd, NDK_IOCTL_MR_DEREGISTER);
    EXPECT_EQ(o.f.calls[1].cmd, NDK_IOCTL_HANDLE_CLOSE);
    EXPECT_EQ(o.f.Closed(), std::vector<std::uint32_t>{h});
}

TEST(VerbsMw, CreateAndQuery) {
    Objects o;
    auto mw = ndk::MemoryWindow::Create(o.pd).value();
    auto c = o.f.Last<ndk_u_mw_create>(NDK_IOCTL_MW_CREATE);
    EXPECT_EQ(c.pd_handle, o.pd.handle());
    EXPECT_EQ(c.flags | c.reserved, 0u);
    ASSERT_TRUE(mw.QueryTokens().ok());
    EXPECT_EQ(mw.remote_token(), 0x600u);
}

TEST(VerbsLifetime, ChildrenCloseBeforeParentsWhateverTheOrder) {
    fake::FakeNdk f;
    std::uint32_t adapter_h, pd_h, cq_h, qp_h, conn_h;
    {
        auto adapter = ndk::Adapter::Open(0, fake::kPath).value();
        auto pd = adapter.CreateProtectionDomain().value();
        auto cq = ndk::CompletionQueue::Create(adapter, 4).value();
        auto qp = ndk::QueuePair::Create(pd, cq, cq, {}).value();
        auto conn = ndk::Connector::Create(adapter).value();
        ASSERT_TRUE(conn.Connect(qp, ndk::SockAddr::Parse("10.0.0.1:1").value()).ok());
        adapter_h = adapter.handle();
        pd_h = pd.handle();
        cq_h = cq.handle();
        qp_h = qp.handle();
        conn_h = conn.handle();
        // Parents go first in C++; the handles must not.
        { auto gone = std::move(adapter); }
        { auto gone = std::move(pd); }
        { auto gone = std::move(cq); }
        { auto gone = std::move(qp); }
        EXPECT_TRUE(f.Closed().empty());
    }
    EXPECT_EQ(f.Closed(), (std::vector<std::uint32_t>{conn_h, qp_h, cq_h, pd_h, adapter_h}));
}

TEST(VerbsLifetime, MovedFromObjectsAnswerEBADF) {
    Objects o;
    auto cq = ndk::CompletionQueue::Create(o.adapter, 4).value();
    auto moved = std::move(cq);
    EXPECT_EQ(cq.Arm().error().errnum, EBADF);  // NOLINT: use after move is the test
    EXPECT_EQ(cq.handle(), 0u);
    auto qp = ndk::QueuePair::Create(o.pd, moved, moved, {}).value();
    auto q2 = std::move(qp);
    EXPECT_EQ(qp.Flush().error().errnum, EBADF);  // NOLINT
}

TEST(VerbsConnector, ConnectCompleteAcceptRejectDisconnect) {
    QpObjects o;
    auto conn = ndk::Connector::Create(o.adapter, 0x99).value();
    auto cc = o.f.Last<ndk_u_connector_create>(NDK_IOCTL_CONNECTOR_CREATE);
    EXPECT_EQ(cc.adapter_handle, o.adapter.handle());
    EXPECT_EQ(cc.flags | cc.reserved, 0u);
    EXPECT_EQ(cc.context, 0x99u);

    const std::byte priv[3] = {std::byte{7}, std::byte{8}, std::byte{9}};
    ndk::ConnectParams cp;
    cp.inbound_read_limit = 1;
    cp.outbound_read_limit = 2;
    cp.private_data = priv;
    cp.request_context = 0x55;
    auto dest = ndk::SockAddr::Parse("10.99.0.1:4791").value();
    ASSERT_TRUE(conn.Connect(o.qp, dest, cp).ok());
    auto c = o.f.Last<ndk_u_connect>(NDK_IOCTL_CONNECT);
    EXPECT_EQ(c.connector_handle, conn.handle());
    EXPECT_EQ(c.qp_handle, o.qp.handle());
    EXPECT_EQ(c.flags, 0u);
    EXPECT_EQ(c.private_data_length, 3u);
    EXPECT_EQ(c.inbound_read_limit, 1u);
    EXPECT_EQ(c.outbound_read_limit, 2u);
    EXPECT_EQ(c.request_context, 0x55u);
    EXPECT_EQ(o.f.last_private, (std::vector<std::uint8_t>{7, 8, 9}));
    EXPECT_TRUE(fake::Zero(c.src_address, 0, sizeof(c.src_address)));  // AF_UNSPEC
    EXPECT_EQ(ndk::SockAddr::FromBytes(c.dest_address), dest);

    ASSERT_TRUE(conn.CompleteConnect(0x66).ok());
    auto r = o.f.Last<ndk_u_connector_request>(NDK_IOCTL_COMPLETE_CONNECT);
    EXPECT_EQ(r.connector_handle, conn.handle());
    EXPECT_EQ(r.flags, 0u);
    EXPECT_EQ(r.request_context, 0x66u);

    ASSERT_TRUE(conn.Disconnect(0x67).ok());
    r = o.f.Last<ndk_u_connector_request>(NDK_IOCTL_DISCONNECT);
    EXPECT_EQ(r.connector_handle, conn.handle());
    EXPECT_EQ(r.request_context, 0x67u);

    ndk::AcceptParams ap;
    ap.inbound_read_limit = 3;
    ap.outbound_read_limit = 4;
    ap.private_data = std::span(priv, 2);
    ap.request_context = 0x68;
    ASSERT_TRUE(conn.Accept(o.qp, ap).ok());
    auto a = o.f.Last<ndk_u_accept>(NDK_IOCTL_ACCEPT);
    EXPECT_EQ(a.connector_handle, conn.handle());
    EXPECT_EQ(a.qp_handle, o.qp.handle());
    EXPECT_EQ(a.inbound_read_limit, 3u);
    EXPECT_EQ(a.outbound_read_limit, 4u);
    EXPECT_EQ(a.private_data_length, 2u);
    EXPECT_EQ(a.flags, 0u);
    EXPECT_EQ(a.request_context, 0x68u);

    ASSERT_TRUE(conn.Reject().ok());
    auto j = o.f.Last<ndk_u_reject>(NDK_IOCTL_REJECT);
    EXPECT_EQ(j.connector_handle, conn.handle());
    EXPECT_EQ(j.private_data_length, 0u);
    EXPECT_EQ(j.private_data, 0u);
}

TEST(VerbsConnector, ConnectionData) {
    Objects o;
    auto conn = ndk::Connector::Create(o.adapter).value();
    auto d = conn.GetConnectionData();
    ASSERT_TRUE(d.ok()) << d.error().Message();
    auto q = o.f.Last<ndk_u_connector_query>(NDK_IOCTL_CONNECTOR_QUERY);
    EXPECT_EQ(q.connector_handle, conn.handle());
    EXPECT_EQ(q.flags | q.reserved, 0u);
    EXPECT_GE(q.private_data_length, 196u);
    EXPECT_EQ(d->inbound_read_limit, 4u);
    EXPECT_EQ(d->outbound_read_limit, 8u);
    ASSERT_EQ(d->private_data.size(), 3u);
    EXPECT_EQ(d->private_data[2], std::byte{3});
    EXPECT_EQ(d->local_address.ToString(), "10.99.0.1:4791");
    EXPECT_EQ(conn.GetPeerAddress()->ToString(), "10.99.0.1:50000");
}

TEST(VerbsConnector, WaitForMatchesKindAndHandleAndMapsTheStatus) {
    Objects o;
    auto conn = ndk::Connector::Create(o.adapter).value();
    auto h = conn.handle();
    o.f.events.push_back(ndk_u_event{NDK_U_EVENT_REQUEST, h + 1, 0, NDK_U_REQ_CONNECT, 1});
    o.f.events.push_back(ndk_u_event{NDK_U_EVENT_REQUEST, h, 0, NDK_U_REQ_ACCEPT, 2});
    o.f.events.push_back(ndk_u_event{NDK_U_EVENT_REQUEST, h, 0, NDK_U_REQ_CONNECT, 3});
    auto e = conn.WaitFor(ndk::RequestKind::kConnect, 100ms);
    ASSERT_TRUE(e.ok()) << e.error().Message();
    EXPECT_EQ(e->context, 3u);
    // The two others are kept, in order.
    auto e1 = o.adapter.WaitEvent(0ms);
    ASSERT_TRUE(e1.ok());
    EXPECT_EQ(e1->context, 1u);
    auto e2 = o.adapter.WaitEvent(0ms);
    ASSERT_TRUE(e2.ok());
    EXPECT_EQ(e2->request_kind(), ndk::RequestKind::kAccept);
    auto none = o.adapter.WaitEvent(20ms);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().errnum, ETIMEDOUT);
    EXPECT_EQ(none.error().status, ndk::status::kIoTimeout);

    o.f.events.push_back(ndk_u_event{NDK_U_EVENT_REQUEST, h,
                                     static_cast<__s32>(ndk::status::kConnectionRefused),
                                     NDK_U_REQ_CONNECT, 4});
    auto refused = conn.WaitFor(ndk::RequestKind::kConnect, 100ms);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().errnum, ECONNREFUSED);
    EXPECT_EQ(refused.error().status, ndk::status::kConnectionRefused);
}

TEST(VerbsListener, ListenAndConnectionRequests) {
    Objects o;
    auto l = ndk::Listener::Create(o.adapter, 0x42).value();
    auto lc = o.f.Last<ndk_u_listener_create>(NDK_IOCTL_LISTENER_CREATE);
    EXPECT_EQ(lc.adapter_handle, o.adapter.handle());
    EXPECT_EQ(lc.flags | lc.reserved, 0u);
    EXPECT_EQ(lc.context, 0x42u);
    auto bound = l.Listen(ndk::SockAddr::Parse("10.99.0.1").value());
    ASSERT_TRUE(bound.ok());
    auto ls = o.f.Last<ndk_u_listen>(NDK_IOCTL_LISTEN);
    EXPECT_EQ(ls.listener_handle, l.handle());
    EXPECT_EQ(ls.flags, 0u);
    EXPECT_EQ(bound->ToString(), "10.99.0.1:40000");

    std::uint32_t newconn = 1000;
    o.f.events.push_back(ndk_u_event{NDK_U_EVENT_CONNECT_REQUEST, l.handle(), 0, newconn, 0x42});
    {
        auto c = l.GetConnectionRequest(100ms);
        ASSERT_TRUE(c.ok()) << c.error().Message();
        EXPECT_EQ(c->handle(), newconn);
        o.f.calls.clear();
    }
    EXPECT_EQ(o.f.Closed(), std::vector<std::uint32_t>{newconn});

    ndk::Event other{ndk::EventType::kCq, l.handle(), 0, 5, 0};
    auto bad = l.TakeConnectionRequest(other);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().errnum, EINVAL);
}

TEST(VerbsEvents, GetEventsDrainsKeptThenKernelInChunks) {
    Objects o;
    for (std::uint32_t i = 0; i < 100; ++i)
        o.f.events.push_back(ndk_u_event{NDK_U_EVENT_CQ, i + 1, 0, 0, i});
    std::vector<ndk::Event> out(200);
    auto n = o.adapter.GetEvents(out);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 100u);
    EXPECT_EQ(o.f.Last<ndk_u_event_get>(NDK_IOCTL_EVENT_GET, 1).count, NDK_U_EVENT_GET_MAX);
    EXPECT_EQ(o.f.Last<ndk_u_event_get>(NDK_IOCTL_EVENT_GET).flags, 0u);
    EXPECT_EQ(out[99].context, 99u);
    EXPECT_EQ(out[99].type, ndk::EventType::kCq);
    EXPECT_EQ(*o.adapter.GetEvents(out), 0u);
}

TEST(VerbsEvents, ErrorsCarryTheStatus) {
    Objects o;
    o.f.fail[NDK_IOCTL_EVENT_GET] = ENODEV;
    std::array<ndk::Event, 1> out;
    auto n = o.adapter.GetEvents(out);
    ASSERT_FALSE(n.ok());
    EXPECT_EQ(n.error().status, ndk::status::kDeviceRemoved);
}

}  // namespace
