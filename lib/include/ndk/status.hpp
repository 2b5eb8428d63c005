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
}  // namespace status

// The NDK status for a kernel errno (positive, as in errno).  Unknown
// errnos map to STATUS_UNSUCCESSFUL; 0 maps to STATUS_SUCCESS.
NTSTATUS StatusFromErrno(int errnum) noexcept;

// "STATUS_INVALID_PARAMETER" and so on; "STATUS_<0x...>" is not produced:
// unknown values give "STATUS_UNKNOWN".
std::string_view StatusName(NTSTATUS status) noexcept;

}  // namespace ndk
