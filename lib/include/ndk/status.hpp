// SPDX-License-Identifier: BSD-2-Clause
// NTSTATUS values NDK reports, with their exact Windows numbers, and the
// one table that maps a kernel errno to the NDK status a Windows consumer
// expects (Documentation/ndk-mapping.md lists it).
#pragma once

#include <cstdint>
#include <string_view>

namespace ndk {

using NTSTATUS = std::int32_t;

namespace status {
inline constexpr NTSTATUS kSuccess = 0x00000000;
inline constexpr NTSTATUS kPending = 0x00000103;
inline constexpr NTSTATUS kUnsuccessful = static_cast<NTSTATUS>(0xC0000001);
inline constexpr NTSTATUS kAccessViolation = static_cast<NTSTATUS>(0xC0000005);
inline constexpr NTSTATUS kInvalidHandle = static_cast<NTSTATUS>(0xC0000008);
inline constexpr NTSTATUS kInvalidParameter = static_cast<NTSTATUS>(0xC000000D);
inline constexpr NTSTATUS kInvalidDeviceRequest = static_cast<NTSTATUS>(0xC0000010);
inline constexpr NTSTATUS kAccessDenied = static_cast<NTSTATUS>(0xC0000022);
inline constexpr NTSTATUS kBufferTooSmall = static_cast<NTSTATUS>(0xC0000023);
inline constexpr NTSTATUS kInsufficientResources = static_cast<NTSTATUS>(0xC000009A);
inline constexpr NTSTATUS kIoTimeout = static_cast<NTSTATUS>(0xC00000B5);
inline constexpr NTSTATUS kNotSupported = static_cast<NTSTATUS>(0xC00000BB);
inline constexpr NTSTATUS kCancelled = static_cast<NTSTATUS>(0xC0000120);
inline constexpr NTSTATUS kDeviceBusy = static_cast<NTSTATUS>(0x80000011);
inline constexpr NTSTATUS kDeviceRemoved = static_cast<NTSTATUS>(0xC00002B6);
inline constexpr NTSTATUS kBufferOverflow = static_cast<NTSTATUS>(0x80000005);
inline constexpr NTSTATUS kInvalidParameterMix = static_cast<NTSTATUS>(0xC0000030);
inline constexpr NTSTATUS kDataOverrun = static_cast<NTSTATUS>(0xC000003C);
inline constexpr NTSTATUS kDataError = static_cast<NTSTATUS>(0xC000003E);
inline constexpr NTSTATUS kSharingViolation = static_cast<NTSTATUS>(0xC0000043);
inline constexpr NTSTATUS kInternalError = static_cast<NTSTATUS>(0xC00000E5);
inline constexpr NTSTATUS kRemoteResources = static_cast<NTSTATUS>(0xC000013D);
inline constexpr NTSTATUS kInvalidConnection = static_cast<NTSTATUS>(0xC0000140);
inline constexpr NTSTATUS kInvalidAddress = static_cast<NTSTATUS>(0xC0000141);
inline constexpr NTSTATUS kInvalidDeviceState = static_cast<NTSTATUS>(0xC0000184);
inline constexpr NTSTATUS kTooManyAddresses = static_cast<NTSTATUS>(0xC0000209);
inline constexpr NTSTATUS kAddressAlreadyExists = static_cast<NTSTATUS>(0xC000020A);
inline constexpr NTSTATUS kConnectionReset = static_cast<NTSTATUS>(0xC000020D);
inline constexpr NTSTATUS kConnectionRefused = static_cast<NTSTATUS>(0xC0000236);
inline constexpr NTSTATUS kConnectionInvalid = static_cast<NTSTATUS>(0xC000023A);
inline constexpr NTSTATUS kNetworkUnreachable = static_cast<NTSTATUS>(0xC000023C);
inline constexpr NTSTATUS kHostUnreachable = static_cast<NTSTATUS>(0xC000023D);
inline constexpr NTSTATUS kConnectionAborted = static_cast<NTSTATUS>(0xC0000241);
inline constexpr NTSTATUS kImplementationLimit = static_cast<NTSTATUS>(0xC000042B);
}  // namespace status

// The NDK status for a kernel errno (positive, as in errno).  Unknown
// errnos map to STATUS_UNSUCCESSFUL; 0 maps to STATUS_SUCCESS.
NTSTATUS StatusFromErrno(int errnum) noexcept;

// "STATUS_INVALID_PARAMETER" and so on; "STATUS_<0x...>" is not produced:
// unknown values give "STATUS_UNKNOWN".
std::string_view StatusName(NTSTATUS status) noexcept;

}  // namespace ndk
