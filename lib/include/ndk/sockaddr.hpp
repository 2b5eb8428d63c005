// SPDX-License-Identifier: BSD-2-Clause
// ndk::SockAddr: the 32-byte socket address field of the ABI
// (NDK_U_SOCKADDR_SIZE): a struct sockaddr_in or sockaddr_in6,
// zero-padded; all zero (AF_UNSPEC) where an address is optional.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "ndk/result.hpp"

namespace ndk {

class SockAddr {
  public:
    static constexpr std::size_t kSize = 32;

    // AF_UNSPEC: "any" / "none".
    SockAddr() = default;
    explicit SockAddr(const sockaddr_in& in) noexcept;
    explicit SockAddr(const sockaddr_in6& in6) noexcept;
    // The ABI's raw bytes (what CONNECTOR_QUERY and LISTEN write).
    static SockAddr FromBytes(const std::uint8_t (&raw)[kSize]) noexcept;

    // "10.99.0.1:4791", "10.99.0.1" (port 0), "[fe80::1]:4791", "[::1]",
    // "::1" (no port).  Numeric only, never a name lookup.  EINVAL when it
    // does not parse or the port is above 65535.
    static Result<SockAddr> Parse(std::string_view text);

    sa_family_t family() const noexcept;
    bool empty() const noexcept { return family() == AF_UNSPEC; }
    // Host byte order; 0 for AF_UNSPEC.
    std::uint16_t port() const noexcept;
    // Same address, another port.
    SockAddr WithPort(std::uint16_t port) const noexcept;
    // "10.99.0.1:4791", "[::1]:4791", "unspec".
    std::string ToString() const;

    const std::uint8_t* data() const noexcept { return raw_.data(); }
    // Copies the 32 bytes into an ABI field.
    void CopyTo(std::uint8_t (&out)[kSize]) const noexcept;

    friend bool operator==(const SockAddr&, const SockAddr&) = default;

  private:
    std::array<std::uint8_t, kSize> raw_{};
};

static_assert(sizeof(sockaddr_in) <= SockAddr::kSize);
static_assert(sizeof(sockaddr_in6) <= SockAddr::kSize);

}  // namespace ndk
