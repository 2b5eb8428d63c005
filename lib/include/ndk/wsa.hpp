// SPDX-License-Identifier: BSD-2-Clause
// Winsock error codes of the WSD SPI (WSPRegisterMemory and friends), and
// the one table that maps a kernel errno to the code a WSD switch expects
// (Documentation/uapi.md, "WSA codes").
#pragma once

namespace ndk {

namespace wsa {
inline constexpr int kNone = 0;          // no WSA meaning
inline constexpr int kEfault = 10014;    // WSAEFAULT
inline constexpr int kEinval = 10022;    // WSAEINVAL
inline constexpr int kEnobufs = 10055;   // WSAENOBUFS ("WSANOBUFS" in the docs)
inline constexpr int kEnotconn = 10057;  // WSAENOTCONN
}  // namespace wsa

// The WSA code for a kernel errno (positive) of a WSP-style call:
// ENOBUFS, ENOMEM (also RLIMIT_MEMLOCK reached) and EMSGSIZE (longer than
// MaxRegistrationSize) -> WSAENOBUFS; EFAULT -> WSAEFAULT; EINVAL, ENOENT
// and EBADF (bad flags, length 0, unknown handle) -> WSAEINVAL; ENOTCONN ->
// WSAENOTCONN; anything else -> wsa::kNone.
int WsaFromErrno(int errnum) noexcept;

// The code of a failed WSPRegisterMemory on a socket
// (Connector::RegisterMemory), one of the four the seed lists for every
// failure: ENOTCONN -> WSAENOTCONN; EINVAL, ENOENT, EBADF -> WSAEINVAL;
// EFAULT, EACCES and EOPNOTSUPP (memory that cannot be had with the
// access dwFlags asks: unmapped, PROT_NONE, read-only or a file's shared
// mapping with kMemWrite) -> WSAEFAULT; anything else (ENOMEM, ENOBUFS,
// EMSGSIZE, EPERM for RLIMIT_MEMLOCK 0, EOVERFLOW, ENODEV, EINTR, ...) ->
// WSAENOBUFS, "no memory resources available".
int WsaForRegisterMemory(int errnum) noexcept;

// The code of a failed WSPDeregisterMemory (Connector::DeregisterMemory):
// WSAEINVAL whatever the errno (an unknown handle, one of another socket,
// or memory busy under a bound window or fast-registered MR, EBUSY).
int WsaForDeregisterMemory(int errnum) noexcept;

// "WSAENOBUFS" and so on, "" for kNone, "WSA_UNKNOWN" otherwise.
const char* WsaName(int code) noexcept;

}  // namespace ndk
