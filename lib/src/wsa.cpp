// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/wsa.hpp"

#include <cerrno>

namespace ndk {

// The one errno -> WSA table (Documentation/uapi.md).
int WsaFromErrno(int errnum) noexcept {
    switch (errnum) {
        case ENOBUFS:
        case ENOMEM:
        case EMSGSIZE:
            return wsa::kEnobufs;
        case EFAULT:
            return wsa::kEfault;
        case EINVAL:
        case ENOENT:
        case EBADF:
            return wsa::kEinval;
        case ENOTCONN:
            return wsa::kEnotconn;
        default:
            return wsa::kNone;
    }
}

int WsaForRegisterMemory(int errnum) noexcept {
    switch (errnum) {
        case ENOTCONN:
            return wsa::kEnotconn;
        case EINVAL:
        case ENOENT:
        case EBADF:
            return wsa::kEinval;
        case EFAULT:
        case EACCES:
        case EOPNOTSUPP:
            return wsa::kEfault;
        default:
            return wsa::kEnobufs;
    }
}

int WsaForDeregisterMemory(int errnum) noexcept {
    (void)errnum;
    return wsa::kEinval;
}

const char* WsaName(int code) noexcept {
    switch (code) {
        case wsa::kNone:
            return "";
        case wsa::kEfault:
            return "WSAEFAULT";
        case wsa::kEinval:
            return "WSAEINVAL";
        case wsa::kEnobufs:
            return "WSAENOBUFS";
        case wsa::kEnotconn:
            return "WSAENOTCONN";
        default:
            return "WSA_UNKNOWN";
    }
}

}  // namespace ndk
