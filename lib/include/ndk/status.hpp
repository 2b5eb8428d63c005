// SPDX-License-Identifier: BSD-2-Clause
// NTSTATUS values NDK reports, with their exact Windows numbers, and the
// one table that maps a kernel errno to the NDK status a Windows consumer
// expects (Documentation/ndk-mapping.md lists it).
#pragma once

#include <ndk/ndk_ioctl.h>

#include <cstdint>
#include <string_view>

namespace ndk {

using NTSTATUS = std::int32_t;

namespace status {
inline constexpr NTSTATUS kSuccess = static_cast<NTSTATUS>(NDK_U_STATUS_SUCCESS);
inline constexpr NTSTATUS kPending = static_cast<NTSTATUS>(NDK_U_STATUS_PENDING);
inline constexpr NTSTATUS kBufferOverflow = static_cast<NTSTATUS>(NDK_U_STATUS_BUFFER_OVERFLOW);
inline constexpr NTSTATUS kDeviceBusy = static_cast<NTSTATUS>(NDK_U_STATUS_DEVICE_BUSY);
inline constexpr NTSTATUS kUnsuccessful = static_cast<NTSTATUS>(NDK_U_STATUS_UNSUCCESSFUL);
inline constexpr NTSTATUS kAccessViolation = static_cast<NTSTATUS>(NDK_U_STATUS_ACCESS_VIOLATION);
inline constexpr NTSTATUS kInvalidHandle = static_cast<NTSTATUS>(NDK_U_STATUS_INVALID_HANDLE);
inline constexpr NTSTATUS kInvalidParameter = static_cast<NTSTATUS>(NDK_U_STATUS_INVALID_PARAMETER);
inline constexpr NTSTATUS kInvalidDeviceRequest =
    static_cast<NTSTATUS>(NDK_U_STATUS_INVALID_DEVICE_REQUEST);
inline constexpr NTSTATUS kAccessDenied = static_cast<NTSTATUS>(NDK_U_STATUS_ACCESS_DENIED);
inline constexpr NTSTATUS kBufferTooSmall = static_cast<NTSTATUS>(NDK_U_STATUS_BUFFER_TOO_SMALL);
inline constexpr NTSTATUS kInvalidParameterMix =
    static_cast<NTSTATUS>(NDK_U_STATUS_INVALID_PARAMETER_MIX);
inline constexpr NTSTATUS kDataOverrun = static_cast<NTSTATUS>(NDK_U_STATUS_DATA_OVERRUN);
inline constexpr NTSTATUS kDataError = static_cast<NTSTATUS>(NDK_U_STATUS_DATA_ERROR);
inline constexpr NTSTATUS kSharingViolation = static_cast<NTSTATUS>(NDK_U_STATUS_SHARING_VIOLATION);
inline constexpr NTSTATUS kInsufficientResources =
    static_cast<NTSTATUS>(NDK_U_STATUS_INSUFFICIENT_RESOURCES);
inline constexpr NTSTATUS kIoTimeout = static_cast<NTSTATUS>(NDK_U_STATUS_IO_TIMEOUT);
inline constexpr NTSTATUS kNotSupported = static_cast<NTSTATUS>(NDK_U_STATUS_NOT_SUPPORTED);
inline constexpr NTSTATUS kInternalError = static_cast<NTSTATUS>(NDK_U_STATUS_INTERNAL_ERROR);
inline constexpr NTSTATUS kCancelled = static_cast<NTSTATUS>(NDK_U_STATUS_CANCELLED);
inline constexpr NTSTATUS kRemoteResources = static_cast<NTSTATUS>(NDK_U_STATUS_REMOTE_RESOURCES);
inline constexpr NTSTATUS kInvalidConnection =
    static_cast<NTSTATUS>(NDK_U_STATUS_INVALID_CONNECTION);
inline constexpr NTSTATUS kInvalidAddress = static_cast<NTSTATUS>(NDK_U_STATUS_INVALID_ADDRESS);
inline constexpr NTSTATUS kInvalidDeviceState =
    static_cast<NTSTATUS>(NDK_U_STATUS_INVALID_DEVICE_STATE);
inline constexpr NTSTATUS kTooManyAddresses =
    static_cast<NTSTATUS>(NDK_U_STATUS_TOO_MANY_ADDRESSES);
inline constexpr NTSTATUS kAddressAlreadyExists =
    static_cast<NTSTATUS>(NDK_U_STATUS_ADDRESS_ALREADY_EXISTS);
inline constexpr NTSTATUS kConnectionReset = static_cast<NTSTATUS>(NDK_U_STATUS_CONNECTION_RESET);
inline constexpr NTSTATUS kConnectionRefused =
    static_cast<NTSTATUS>(NDK_U_STATUS_CONNECTION_REFUSED);
inline constexpr NTSTATUS kConnectionInvalid =
    static_cast<NTSTATUS>(NDK_U_STATUS_CONNECTION_INVALID);
inline constexpr NTSTATUS kNetworkUnreachable =
    static_cast<NTSTATUS>(NDK_U_STATUS_NETWORK_UNREACHABLE);
inline constexpr NTSTATUS kHostUnreachable = static_cast<NTSTATUS>(NDK_U_STATUS_HOST_UNREACHABLE);
inline constexpr NTSTATUS kConnectionAborted =
    static_cast<NTSTATUS>(NDK_U_STATUS_CONNECTION_ABORTED);
inline constexpr NTSTATUS kDeviceRemoved = static_cast<NTSTATUS>(NDK_U_STATUS_DEVICE_REMOVED);
inline constexpr NTSTATUS kImplementationLimit =
    static_cast<NTSTATUS>(NDK_U_STATUS_IMPLEMENTATION_LIMIT);
}  // namespace status

// NT_SUCCESS(): success and informational values are >= 0.
constexpr bool NtSuccess(NTSTATUS s) noexcept { return s >= 0; }

// The NDK status for a kernel errno (positive, as in errno).  Unknown
// errnos map to STATUS_UNSUCCESSFUL; 0 maps to STATUS_SUCCESS.
NTSTATUS StatusFromErrno(int errnum) noexcept;

// "STATUS_INVALID_PARAMETER" and so on; "STATUS_<0x...>" is not produced:
// unknown values give "STATUS_UNKNOWN".
std::string_view StatusName(NTSTATUS status) noexcept;

// The errno that stands for an NTSTATUS that arrived as a value (a
// completion or an event), the reverse of StatusFromErrno where one
// exists: STATUS_CONNECTION_REFUSED -> ECONNREFUSED, ...; EIO otherwise.
int ErrnoFromStatus(NTSTATUS status) noexcept;

}  // namespace ndk
