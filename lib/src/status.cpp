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

// Each name is spelled once, as the ABI header's NDK_U_STATUS_<name>.
#define NDK_STATUS_NAME(n) \
    { static_cast<NTSTATUS>(NDK_U_STATUS_##n), "STATUS_" #n }
constexpr StatusEntry kStatusNames[] = {
    NDK_STATUS_NAME(SUCCESS),
    NDK_STATUS_NAME(PENDING),
    NDK_STATUS_NAME(BUFFER_OVERFLOW),
    NDK_STATUS_NAME(DEVICE_BUSY),
    NDK_STATUS_NAME(UNSUCCESSFUL),
    NDK_STATUS_NAME(ACCESS_VIOLATION),
    NDK_STATUS_NAME(INVALID_HANDLE),
    NDK_STATUS_NAME(INVALID_PARAMETER),
    NDK_STATUS_NAME(INVALID_DEVICE_REQUEST),
    NDK_STATUS_NAME(ACCESS_DENIED),
    NDK_STATUS_NAME(BUFFER_TOO_SMALL),
    NDK_STATUS_NAME(INVALID_PARAMETER_MIX),
    NDK_STATUS_NAME(DATA_OVERRUN),
    NDK_STATUS_NAME(DATA_ERROR),
    NDK_STATUS_NAME(SHARING_VIOLATION),
    NDK_STATUS_NAME(INSUFFICIENT_RESOURCES),
    NDK_STATUS_NAME(IO_TIMEOUT),
    NDK_STATUS_NAME(NOT_SUPPORTED),
    NDK_STATUS_NAME(INTERNAL_ERROR),
    NDK_STATUS_NAME(CANCELLED),
    NDK_STATUS_NAME(REMOTE_RESOURCES),
    NDK_STATUS_NAME(INVALID_CONNECTION),
    NDK_STATUS_NAME(INVALID_ADDRESS),
    NDK_STATUS_NAME(INVALID_DEVICE_STATE),
    NDK_STATUS_NAME(TOO_MANY_ADDRESSES),
    NDK_STATUS_NAME(ADDRESS_ALREADY_EXISTS),
    NDK_STATUS_NAME(CONNECTION_RESET),
    NDK_STATUS_NAME(CONNECTION_REFUSED),
    NDK_STATUS_NAME(CONNECTION_INVALID),
    NDK_STATUS_NAME(NETWORK_UNREACHABLE),
    NDK_STATUS_NAME(HOST_UNREACHABLE),
    NDK_STATUS_NAME(CONNECTION_ABORTED),
    NDK_STATUS_NAME(DEVICE_REMOVED),
    NDK_STATUS_NAME(IMPLEMENTATION_LIMIT),
};
#undef NDK_STATUS_NAME

}  // namespace

// The one errno -> NTSTATUS table, the inverse of the kernel's
// ndk_errno_from_status() for the statuses NDK functions return inline
// (Documentation/uapi.md, "Errors and NTSTATUS"; ndk-mapping.md).
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
            return status::kAccessViolation;
        case ENOENT:
        case EBADF:
            return status::kInvalidHandle;
        case EPERM:
            return status::kAccessDenied;
        // ndk.ko's commands return EACCES for STATUS_ACCESS_VIOLATION (a
        // right the registration lacks, a token not of this PD), EBADRQC
        // for STATUS_INVALID_DEVICE_REQUEST and EISCONN for
        // STATUS_INVALID_DEVICE_STATE (kmod/ndk_file.c).
        case EACCES:
            return status::kAccessViolation;
        case EBADRQC:
            return status::kInvalidDeviceRequest;
        case EISCONN:
            return status::kInvalidDeviceState;
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
        // The connection errnos, as ndk.ko maps them (rdma_cm, CM events).
        case ECONNREFUSED:
            return status::kConnectionRefused;
        case ENETUNREACH:
            return status::kNetworkUnreachable;
        case EHOSTUNREACH:
            return status::kHostUnreachable;
        case EADDRINUSE:
            return status::kAddressAlreadyExists;
        case EOVERFLOW:
            return status::kBufferTooSmall;
        case ERANGE:
            return status::kImplementationLimit;
        case EADDRNOTAVAIL:
            return status::kInvalidAddress;
        case ECONNRESET:
            return status::kConnectionReset;
        case ECONNABORTED:
            return status::kConnectionAborted;
        case ENOTCONN:
            return status::kConnectionInvalid;
        default:
            return status::kUnsuccessful;
    }
}

int ErrnoFromStatus(NTSTATUS s) noexcept {
    switch (s) {
        case status::kSuccess:
            return 0;
        case status::kInvalidParameter:
        case status::kInvalidParameterMix:
            return EINVAL;
        case status::kInsufficientResources:
            return ENOMEM;
        case status::kAccessViolation:
            return EACCES;
        case status::kInvalidDeviceRequest:
            return EBADRQC;
        case status::kInvalidDeviceState:
            return EISCONN;
        case status::kInvalidHandle:
            return ENOENT;
        case status::kAccessDenied:
            return EPERM;
        case status::kNotSupported:
            return EOPNOTSUPP;
        case status::kDeviceBusy:
            return EBUSY;
        case status::kDeviceRemoved:
            return ENODEV;
        case status::kIoTimeout:
            return ETIMEDOUT;
        case status::kCancelled:
            return ECANCELED;
        case status::kConnectionRefused:
            return ECONNREFUSED;
        case status::kNetworkUnreachable:
            return ENETUNREACH;
        case status::kHostUnreachable:
            return EHOSTUNREACH;
        case status::kSharingViolation:
        case status::kAddressAlreadyExists:
            return EADDRINUSE;
        case status::kInvalidAddress:
            return EADDRNOTAVAIL;
        case status::kConnectionReset:
            return ECONNRESET;
        case status::kConnectionAborted:
            return ECONNABORTED;
        case status::kConnectionInvalid:
        case status::kInvalidConnection:
            return ENOTCONN;
        case status::kBufferTooSmall:
        case status::kBufferOverflow:
        case status::kDataOverrun:
            return EOVERFLOW;
        case status::kImplementationLimit:
            return ERANGE;
        case status::kRemoteResources:
            return EREMOTEIO;
        default:
            return EIO;
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
