// SPDX-License-Identifier: GPL-2.0
// libndk's copies of the NDK constants against the kernel's ndkpi.h (which
// a user program cannot include): the header is read as text and every
// NDK_MR_FLAG_*, NDK_OP_FLAG_*, NDK_CQ_NOTIFY_*, NDK_ADAPTER_FLAG_*,
// NDK_OPERATION_TYPE_* and STATUS_* value is compared.
#include <gtest/gtest.h>
#include <ndk/ndk_ioctl.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "ndk/constants.hpp"
#include "ndk/status.hpp"

namespace {

// The same values under the ABI's names (uapi/ndk/ndk_ioctl.h).
static_assert(ndk::mr_flag::kAllowLocalRead == NDK_U_MR_FLAG_ALLOW_LOCAL_READ);
static_assert(ndk::mr_flag::kAllowLocalWrite == NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE);
static_assert(ndk::mr_flag::kAllowRemoteRead == NDK_U_MR_FLAG_ALLOW_REMOTE_READ);
static_assert(ndk::mr_flag::kAllowRemoteWrite == NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE);
static_assert(ndk::mr_flag::kRdmaReadSink == NDK_U_MR_FLAG_RDMA_READ_SINK);
static_assert(ndk::op_flag::kSilentSuccess == NDK_U_OP_FLAG_SILENT_SUCCESS);
static_assert(ndk::op_flag::kReadFence == NDK_U_OP_FLAG_READ_FENCE);
static_assert(ndk::op_flag::kSendAndSolicitEvent == NDK_U_OP_FLAG_SEND_AND_SOLICIT_EVENT);
static_assert(ndk::op_flag::kAllowRemoteRead == NDK_U_OP_FLAG_ALLOW_REMOTE_READ);
static_assert(ndk::op_flag::kAllowLocalWrite == NDK_U_OP_FLAG_ALLOW_LOCAL_WRITE);
static_assert(ndk::op_flag::kAllowRemoteWrite == NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE);
static_assert(ndk::op_flag::kInline == NDK_U_OP_FLAG_INLINE);
static_assert(ndk::op_flag::kRdmaReadSink == NDK_U_OP_FLAG_RDMA_READ_SINK);
static_assert(ndk::op_flag::kRdmaReadLocalInvalidate == NDK_U_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE);
static_assert(ndk::op_flag::kDefer == NDK_U_OP_FLAG_DEFER);
static_assert(ndk::cq_notify::kErrors == NDK_U_CQ_NOTIFY_ERRORS);
static_assert(ndk::cq_notify::kAny == NDK_U_CQ_NOTIFY_ANY);
static_assert(ndk::cq_notify::kSolicited == NDK_U_CQ_NOTIFY_SOLICITED);
static_assert(ndk::operation_type::kReceive == NDK_U_OPERATION_RECEIVE);
static_assert(ndk::operation_type::kReceiveAndInvalidate == NDK_U_OPERATION_RECEIVE_AND_INVALIDATE);
static_assert(ndk::operation_type::kSend == NDK_U_OPERATION_SEND);
static_assert(ndk::operation_type::kFastRegister == NDK_U_OPERATION_FAST_REGISTER);
static_assert(ndk::operation_type::kBind == NDK_U_OPERATION_BIND);
static_assert(ndk::operation_type::kInvalidate == NDK_U_OPERATION_INVALIDATE);
static_assert(ndk::operation_type::kRead == NDK_U_OPERATION_READ);
static_assert(ndk::operation_type::kWrite == NDK_U_OPERATION_WRITE);

// NAME -> value of every "#define NAME value" and "NAME = value," in ndkpi.h.
std::map<std::string, std::int64_t> NdkpiValues() {
    std::ifstream in(NDK_NDKPI_H);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    std::map<std::string, std::int64_t> out;
    std::regex def(
        R"((?:#define\s+|\s)((?:NDK|STATUS)_[A-Z0-9_]+)(?:\s+|\s*=\s*)(?:\(\(s32\))?(0x[0-9A-Fa-f]+|[0-9]+)\)?)");
    for (std::sregex_iterator it(text.begin(), text.end(), def), end; it != end; ++it)
        out[(*it)[1]] = std::stoll((*it)[2], nullptr, 0);
    return out;
}

const std::map<std::string, std::int64_t>& Values() {
    static const auto v = NdkpiValues();
    return v;
}

std::int64_t Kernel(const std::string& name) {
    auto it = Values().find(name);
    EXPECT_NE(it, Values().end()) << name << " not in ndkpi.h";
    return it == Values().end() ? -1 : it->second;
}

#define EXPECT_NDK(name, value) EXPECT_EQ(Kernel(name), static_cast<std::int64_t>(value)) << name

TEST(Constants, HeaderIsRead) { EXPECT_GT(Values().size(), 60u); }

TEST(Constants, MrFlags) {
    EXPECT_NDK("NDK_MR_FLAG_ALLOW_LOCAL_READ", ndk::mr_flag::kAllowLocalRead);
    EXPECT_NDK("NDK_MR_FLAG_ALLOW_LOCAL_WRITE", ndk::mr_flag::kAllowLocalWrite);
    EXPECT_NDK("NDK_MR_FLAG_ALLOW_REMOTE_READ", ndk::mr_flag::kAllowRemoteRead);
    EXPECT_NDK("NDK_MR_FLAG_ALLOW_REMOTE_WRITE", ndk::mr_flag::kAllowRemoteWrite);
    EXPECT_NDK("NDK_MR_FLAG_RDMA_READ_SINK", ndk::mr_flag::kRdmaReadSink);
}

TEST(Constants, OpFlags) {
    EXPECT_NDK("NDK_OP_FLAG_SILENT_SUCCESS", ndk::op_flag::kSilentSuccess);
    EXPECT_NDK("NDK_OP_FLAG_READ_FENCE", ndk::op_flag::kReadFence);
    EXPECT_NDK("NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT", ndk::op_flag::kSendAndSolicitEvent);
    EXPECT_NDK("NDK_OP_FLAG_ALLOW_REMOTE_READ", ndk::op_flag::kAllowRemoteRead);
    EXPECT_NDK("NDK_OP_FLAG_ALLOW_LOCAL_WRITE", ndk::op_flag::kAllowLocalWrite);
    EXPECT_NDK("NDK_OP_FLAG_ALLOW_REMOTE_WRITE", ndk::op_flag::kAllowRemoteWrite);
    EXPECT_NDK("NDK_OP_FLAG_INLINE", ndk::op_flag::kInline);
    EXPECT_NDK("NDK_OP_FLAG_RDMA_READ_SINK", ndk::op_flag::kRdmaReadSink);
    EXPECT_NDK("NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE", ndk::op_flag::kRdmaReadLocalInvalidate);
    EXPECT_NDK("NDK_OP_FLAG_DEFER", ndk::op_flag::kDefer);
}

TEST(Constants, OperationTypes) {
    EXPECT_NDK("NDK_OPERATION_TYPE_RECEIVE", ndk::operation_type::kReceive);
    EXPECT_NDK("NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE",
               ndk::operation_type::kReceiveAndInvalidate);
    EXPECT_NDK("NDK_OPERATION_TYPE_SEND", ndk::operation_type::kSend);
    EXPECT_NDK("NDK_OPERATION_TYPE_FAST_REGISTER", ndk::operation_type::kFastRegister);
    EXPECT_NDK("NDK_OPERATION_TYPE_BIND", ndk::operation_type::kBind);
    EXPECT_NDK("NDK_OPERATION_TYPE_INVALIDATE", ndk::operation_type::kInvalidate);
    EXPECT_NDK("NDK_OPERATION_TYPE_READ", ndk::operation_type::kRead);
    EXPECT_NDK("NDK_OPERATION_TYPE_WRITE", ndk::operation_type::kWrite);
    EXPECT_STREQ(ndk::OperationTypeName(0x8001), "RECEIVE_AND_INVALIDATE");
    EXPECT_STREQ(ndk::OperationTypeName(0x3), "UNKNOWN");
}

TEST(Constants, CqNotify) {
    EXPECT_NDK("NDK_CQ_NOTIFY_ERRORS", ndk::cq_notify::kErrors);
    EXPECT_NDK("NDK_CQ_NOTIFY_ANY", ndk::cq_notify::kAny);
    EXPECT_NDK("NDK_CQ_NOTIFY_SOLICITED", ndk::cq_notify::kSolicited);
}

TEST(Constants, AdapterFlags) {
    using namespace ndk::adapter_flag;
    EXPECT_NDK("NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED", kInOrderDmaSupported);
    EXPECT_NDK("NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED", kRdmaReadSinkNotRequired);
    EXPECT_NDK("NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED",
               kCqInterruptModerationSupported);
    EXPECT_NDK("NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED", kMultiEngineSupported);
    EXPECT_NDK("NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED",
               kRdmaReadLocalInvalidateSupported);
    EXPECT_NDK("NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED", kCqResizeSupported);
    EXPECT_NDK("NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED", kLoopbackConnectionsSupported);
}

// Every STATUS_* of ndkpi.h is known to libndk by the same name and value.
TEST(Constants, EveryKernelStatusHasItsName) {
    int n = 0;
    for (const auto& [name, value] : Values()) {
        if (name.rfind("STATUS_", 0) != 0) continue;
        ++n;
        auto s = static_cast<ndk::NTSTATUS>(static_cast<std::uint32_t>(value));
        EXPECT_EQ(ndk::StatusName(s), name) << std::hex << value;
    }
    EXPECT_GE(n, 30);
}

}  // namespace
