// SPDX-License-Identifier: BSD-2-Clause
// The NDK constants libndk callers pass and read, with the exact values of
// Windows' ndkpi.h / ndkinfo.h (and of kmod/include/ndk/ndkpi.h, which a
// user program cannot include).  The unit test constants_test.cpp reads
// ndkpi.h and checks every value here against it.
#pragma once

#include <cstdint>

namespace ndk {

// NdkRegisterMr flags (MemoryRegion::Register).  ALLOW_REMOTE_WRITE (0x5)
// contains ALLOW_LOCAL_WRITE: remote write implies local write.
namespace mr_flag {
inline constexpr std::uint32_t kAllowLocalRead = 0x00000000;
inline constexpr std::uint32_t kAllowLocalWrite = 0x00000001;
inline constexpr std::uint32_t kAllowRemoteRead = 0x00000002;
inline constexpr std::uint32_t kAllowRemoteWrite = 0x00000005;
inline constexpr std::uint32_t kRdmaReadSink = 0x00000008;
}  // namespace mr_flag

// Work request flags (QueuePair posts).  ALLOW_REMOTE_WRITE (0x30) contains
// ALLOW_LOCAL_WRITE (0x10).  Not ND2's values: ND_OP_FLAG_ALLOW_WRITE is
// 0x10 and ND_OP_FLAG_INLINE 0x20 (Documentation/wsd-nd2-mapping.md).
namespace op_flag {
inline constexpr std::uint32_t kSilentSuccess = 0x00000001;
inline constexpr std::uint32_t kReadFence = 0x00000002;
inline constexpr std::uint32_t kSendAndSolicitEvent = 0x00000004;
inline constexpr std::uint32_t kAllowRemoteRead = 0x00000008;
inline constexpr std::uint32_t kAllowLocalWrite = 0x00000010;
inline constexpr std::uint32_t kAllowRemoteWrite = 0x00000030;
inline constexpr std::uint32_t kInline = 0x00000040;
inline constexpr std::uint32_t kRdmaReadSink = 0x00000080;
inline constexpr std::uint32_t kRdmaReadLocalInvalidate = 0x00000100;
inline constexpr std::uint32_t kDefer = 0x00000200;
}  // namespace op_flag

// NDK_OPERATION_TYPE (CompletionResult::type).  Bit-coded: test
// (type & kReceive) for both receives.
namespace operation_type {
inline constexpr std::uint32_t kReceive = 0x0001;
inline constexpr std::uint32_t kReceiveAndInvalidate = 0x8001;
inline constexpr std::uint32_t kSend = 0x0002;
inline constexpr std::uint32_t kFastRegister = 0x0004;
inline constexpr std::uint32_t kBind = 0x0008;
inline constexpr std::uint32_t kInvalidate = 0x0010;
inline constexpr std::uint32_t kRead = 0x0020;
inline constexpr std::uint32_t kWrite = 0x0040;
}  // namespace operation_type

// NdkArmCq types (CompletionQueue::Arm).
namespace cq_notify {
inline constexpr std::uint32_t kErrors = 0;
inline constexpr std::uint32_t kAny = 1;
inline constexpr std::uint32_t kSolicited = 2;
}  // namespace cq_notify

// NDK_ADAPTER_INFO.AdapterFlags (ndkinfo.h).
namespace adapter_flag {
inline constexpr std::uint32_t kInOrderDmaSupported = 0x00000001;
inline constexpr std::uint32_t kRdmaReadSinkNotRequired = 0x00000002;
inline constexpr std::uint32_t kCqInterruptModerationSupported = 0x00000004;
inline constexpr std::uint32_t kMultiEngineSupported = 0x00000008;
inline constexpr std::uint32_t kRdmaReadLocalInvalidateSupported = 0x00000010;
inline constexpr std::uint32_t kCqResizeSupported = 0x00000100;
inline constexpr std::uint32_t kLoopbackConnectionsSupported = 0x00010000;
}  // namespace adapter_flag

// "RECEIVE", "RECEIVE_AND_INVALIDATE", ... "UNKNOWN" for an NDK_OPERATION_TYPE.
const char* OperationTypeName(std::uint32_t type) noexcept;

}  // namespace ndk
