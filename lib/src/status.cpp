// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/status.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include "ndk/result.hpp"

namespace ndk {
namespace {

struct StatusEntry {
    NTSTATUS status;
    std::string_view name;
};

constexpr StatusEntry kStatusNames[] = {
    {status::kSuccess, "STATUS_SUCCESS"},
    {status::kPending, "STATUS_PENDING"},
    {status::kUnsuccessful, "STATUS_UNSUCCESSFUL"},
    {status::kAccessViolation, "STATUS_ACCESS_VIOLATION"},
    {status::kInvalidHandle, "STATUS_INVALID_HANDLE"},
    {status::kInvalidParameter, "STATUS_INVALID_PARAMETER"},
    {status::kInvalidDeviceRequest, "STATUS_INVALID_DEVICE_REQUEST"},
    {status::kAccessDenied, "STATUS_ACCESS_DENIED"},
    {status::kBufferTooSmall, "STATUS_BUFFER_TOO_SMALL"},
    {status::kInsufficientResources, "STATUS_INSUFFICIENT_RESOURCES"},
    {status::kIoTimeout, "STATUS_IO_TIMEOUT"},
    {status::kNotSupported, "STATUS_NOT_SUPPORTED"},
    {status::kCancelled, "STATUS_CANCELLED"},
    {status::kDeviceBusy, "STATUS_DEVICE_BUSY"},
    {status::kDeviceRemoved, "STATUS_DEVICE_REMOVED"},
    {status::kBufferOverflow, "STATUS_BUFFER_OVERFLOW"},
    {status::kInvalidParameterMix, "STATUS_INVALID_PARAMETER_MIX"},
    {status::kDataOverrun, "STATUS_DATA_OVERRUN"},
    {status::kDataError, "STATUS_DATA_ERROR"},
    {status::kSharingViolation, "STATUS_SHARING_VIOLATION"},
    {status::kInternalError, "STATUS_INTERNAL_ERROR"},
    {status::kRemoteResources, "STATUS_REMOTE_RESOURCES"},
    {status::kInvalidConnection, "STATUS_INVALID_CONNECTION"},
    {status::kInvalidAddress, "STATUS_INVALID_ADDRESS"},
    {status::kInvalidDeviceState, "STATUS_INVALID_DEVICE_STATE"},
    {status::kTooManyAddresses, "STATUS_TOO_MANY_ADDRESSES"},
    {status::kAddressAlreadyExists, "STATUS_ADDRESS_ALREADY_EXISTS"},
    {status::kConnectionReset, "STATUS_CONNECTION_RESET"},
    {status::kConnectionRefused, "STATUS_CONNECTION_REFUSED"},
    {status::kConnectionInvalid, "STATUS_CONNECTION_INVALID"},
    {status::kNetworkUnreachable, "STATUS_NETWORK_UNREACHABLE"},
    {status::kHostUnreachable, "STATUS_HOST_UNREACHABLE"},
    {status::kConnectionAborted, "STATUS_CONNECTION_ABORTED"},
    {status::kImplementationLimit, "STATUS_IMPLEMENTATION_LIMIT"},
};

}  // namespace

// The one errno -> NTSTATUS table, the inverse of the kernel's
// ndk_errno_from_status() for the statuses NDK functions return inline
// (Documentation/uapi.md, "Errors and NTSTATUS").
NTSTATUS StatusFromErrno(int errnum) noexcept {
    switch (errnum) {
        case 0:
            return status::kSuccess;
        case EINVAL:
        case E2BIG:
        case EMSGSIZE:  // ND2: beyond MaxRegistrationSize is INVALID_PARAMETER
            return status::kInvalidParameter;
        case ENOMEM:
        case ENOSPC:
        case ENOBUFS:
        case EMFILE:
        case ENFILE:
            return status::kInsufficientResources;
        case EFAULT:
        case EACCES:
            return status::kAccessViolation;
        case ENOENT:
        case EBADF:
            return status::kInvalidHandle;
        case EPERM:
            return status::kAccessDenied;
        case ENOTTY:
        case EOPNOTSUPP:
        case EPROTO:
        case ENOSYS:
            return status::kNotSupported;
        case EBUSY:
        case EAGAIN:
            return status::kDeviceBusy;
        case ENODEV:
        case ENXIO:
            return status::kDeviceRemoved;
        case ETIMEDOUT:
            return status::kIoTimeout;
        case ECANCELED:
        case EINTR:
            return status::kCancelled;
        case EBADRQC:
            return status::kInvalidDeviceRequest;
        case EISCONN:
            return status::kInvalidDeviceState;
        case ENOTCONN:
            return status::kConnectionInvalid;
        case EOVERFLOW:
            return status::kBufferTooSmall;
        case ERANGE:
            return status::kImplementationLimit;
        case EADDRNOTAVAIL:
            return status::kInvalidAddress;
        case EADDRINUSE:
            return status::kAddressAlreadyExists;
        case ECONNREFUSED:
            return status::kConnectionRefused;
        case ENETUNREACH:
            return status::kNetworkUnreachable;
        case EHOSTUNREACH:
            return status::kHostUnreachable;
        default:
            return status::kUnsuccessful;
    }
}

std::string_view StatusName(NTSTATUS s) noexcept {
    for (const auto& e : kStatusNames)
        if (e.status == s) return e.name;
    return "STATUS_UNKNOWN";
}

std::string Error::Message() const {
    const char* en = strerrorname_np(errnum);
    std::string out = en ? en : ("errno " + std::to_string(errnum));
    out += " (";
    out += StatusName(status);
    out += "): ";
    out += std::strerror(errnum);
    if (wsa != wsa::kNone) {
        out += " [";
        out += WsaName(wsa);
        out += "]";
    }
    return out;
}

}  // namespace ndk
