// SPDX-License-Identifier: BSD-2-Clause
// The NDK constants libndk callers pass and read, with the exact values of
// Windows' ndkpi.h / ndkinfo.h: taken from the ABI header (ndk/ndk_ioctl.h,
// NDK_U_*), from which the kernel's ndkpi.h takes them too.
#pragma once

#include <ndk/ndk_ioctl.h>

#include <cstdint>

namespace ndk {

// NdkRegisterMr flags (MemoryRegion::Register).  ALLOW_REMOTE_WRITE (0x5)
// contains ALLOW_LOCAL_WRITE: remote write implies local write.
namespace mr_flag {
inline constexpr std::uint32_t kAllowLocalRead = NDK_U_MR_FLAG_ALLOW_LOCAL_READ;
inline constexpr std::uint32_t kAllowLocalWrite = NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE;
inline constexpr std::uint32_t kAllowRemoteRead = NDK_U_MR_FLAG_ALLOW_REMOTE_READ;
inline constexpr std::uint32_t kAllowRemoteWrite = NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE;
inline constexpr std::uint32_t kRdmaReadSink = NDK_U_MR_FLAG_RDMA_READ_SINK;
}  // namespace mr_flag

// Work request flags (QueuePair posts).  ALLOW_REMOTE_WRITE (0x30) contains
// ALLOW_LOCAL_WRITE (0x10).  Not ND2's values: ND_OP_FLAG_ALLOW_WRITE is
// 0x10 and ND_OP_FLAG_INLINE 0x20 (Documentation/wsd-nd2-mapping.md).
namespace op_flag {
inline constexpr std::uint32_t kSilentSuccess = NDK_U_OP_FLAG_SILENT_SUCCESS;
inline constexpr std::uint32_t kReadFence = NDK_U_OP_FLAG_READ_FENCE;
inline constexpr std::uint32_t kSendAndSolicitEvent = NDK_U_OP_FLAG_SEND_AND_SOLICIT_EVENT;
inline constexpr std::uint32_t kAllowRemoteRead = NDK_U_OP_FLAG_ALLOW_REMOTE_READ;
inline constexpr std::uint32_t kAllowLocalWrite = NDK_U_OP_FLAG_ALLOW_LOCAL_WRITE;
inline constexpr std::uint32_t kAllowRemoteWrite = NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE;
inline constexpr std::uint32_t kInline = NDK_U_OP_FLAG_INLINE;
inline constexpr std::uint32_t kRdmaReadSink = NDK_U_OP_FLAG_RDMA_READ_SINK;
inline constexpr std::uint32_t kRdmaReadLocalInvalidate = NDK_U_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE;
inline constexpr std::uint32_t kDefer = NDK_U_OP_FLAG_DEFER;
}  // namespace op_flag

// NDK_OPERATION_TYPE (CompletionResult::type).  Bit-coded: test
// (type & kReceive) for both receives.
namespace operation_type {
inline constexpr std::uint32_t kReceive = NDK_U_OPERATION_RECEIVE;
inline constexpr std::uint32_t kReceiveAndInvalidate = NDK_U_OPERATION_RECEIVE_AND_INVALIDATE;
inline constexpr std::uint32_t kSend = NDK_U_OPERATION_SEND;
inline constexpr std::uint32_t kFastRegister = NDK_U_OPERATION_FAST_REGISTER;
inline constexpr std::uint32_t kBind = NDK_U_OPERATION_BIND;
inline constexpr std::uint32_t kInvalidate = NDK_U_OPERATION_INVALIDATE;
inline constexpr std::uint32_t kRead = NDK_U_OPERATION_READ;
inline constexpr std::uint32_t kWrite = NDK_U_OPERATION_WRITE;
}  // namespace operation_type

// NdkArmCq types (CompletionQueue::Arm).
namespace cq_notify {
inline constexpr std::uint32_t kErrors = NDK_U_CQ_NOTIFY_ERRORS;
inline constexpr std::uint32_t kAny = NDK_U_CQ_NOTIFY_ANY;
inline constexpr std::uint32_t kSolicited = NDK_U_CQ_NOTIFY_SOLICITED;
}  // namespace cq_notify

// NDK_ADAPTER_INFO.AdapterFlags (ndkinfo.h).
namespace adapter_flag {
inline constexpr std::uint32_t kInOrderDmaSupported = NDK_U_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED;
inline constexpr std::uint32_t kRdmaReadSinkNotRequired =
    NDK_U_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
inline constexpr std::uint32_t kCqInterruptModerationSupported =
    NDK_U_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED;
inline constexpr std::uint32_t kMultiEngineSupported = NDK_U_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED;
inline constexpr std::uint32_t kRdmaReadLocalInvalidateSupported =
    NDK_U_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED;
inline constexpr std::uint32_t kCqResizeSupported = NDK_U_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED;
inline constexpr std::uint32_t kLoopbackConnectionsSupported =
    NDK_U_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED;
}  // namespace adapter_flag

// "RECEIVE", "RECEIVE_AND_INVALIDATE", ... "UNKNOWN" for an NDK_OPERATION_TYPE.
const char* OperationTypeName(std::uint32_t type) noexcept;

}  // namespace ndk
