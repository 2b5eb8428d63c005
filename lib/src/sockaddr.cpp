// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/sockaddr.hpp"

#include <arpa/inet.h>

#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstring>

namespace ndk {

SockAddr::SockAddr(const sockaddr_in& in) noexcept { std::memcpy(raw_.data(), &in, sizeof(in)); }

SockAddr::SockAddr(const sockaddr_in6& in6) noexcept {
    std::memcpy(raw_.data(), &in6, sizeof(in6));
}

SockAddr SockAddr::FromBytes(const std::uint8_t (&raw)[kSize]) noexcept {
    SockAddr a;
    std::memcpy(a.raw_.data(), raw, kSize);
    return a;
}

void SockAddr::CopyTo(std::uint8_t (&out)[kSize]) const noexcept {
    std::memcpy(out, raw_.data(), kSize);
}

sa_family_t SockAddr::family() const noexcept {
    sa_family_t f;
    std::memcpy(&f, raw_.data(), sizeof(f));
    return f;
}

std::uint16_t SockAddr::port() const noexcept {
    std::uint16_t p = 0;
    switch (family()) {
        case AF_INET:
            std::memcpy(&p, raw_.data() + offsetof(sockaddr_in, sin_port), sizeof(p));
            break;
        case AF_INET6:
            std::memcpy(&p, raw_.data() + offsetof(sockaddr_in6, sin6_port), sizeof(p));
            break;
        default:
            return 0;
    }
    return ntohs(p);
}

SockAddr SockAddr::WithPort(std::uint16_t port) const noexcept {
    SockAddr a = *this;
    std::uint16_t p = htons(port);
    if (family() == AF_INET)
        std::memcpy(a.raw_.data() + offsetof(sockaddr_in, sin_port), &p, sizeof(p));
    else if (family() == AF_INET6)
        std::memcpy(a.raw_.data() + offsetof(sockaddr_in6, sin6_port), &p, sizeof(p));
    return a;
}

std::string SockAddr::ToString() const {
    char buf[INET6_ADDRSTRLEN] = {};
    if (family() == AF_INET) {
        sockaddr_in in;
        std::memcpy(&in, raw_.data(), sizeof(in));
        inet_ntop(AF_INET, &in.sin_addr, buf, sizeof(buf));
        return std::string(buf) + ":" + std::to_string(port());
    }
    if (family() == AF_INET6) {
        sockaddr_in6 in6;
        std::memcpy(&in6, raw_.data(), sizeof(in6));
        inet_ntop(AF_INET6, &in6.sin6_addr, buf, sizeof(buf));
        return "[" + std::string(buf) + "]:" + std::to_string(port());
    }
    return "unspec";
}

namespace {

bool ParsePort(std::string_view s, std::uint16_t& port) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v > 65535) return false;
    port = static_cast<std::uint16_t>(v);
    return true;
}

}  // namespace

Result<SockAddr> SockAddr::Parse(std::string_view text) {
    std::string host;
    std::uint16_t port = 0;
    bool v6 = false;
    if (!text.empty() && text.front() == '[') {
        auto close = text.find(']');
        if (close == std::string_view::npos) return Error::FromErrno(EINVAL);
        host = std::string(text.substr(1, close - 1));
        auto rest = text.substr(close + 1);
        if (!rest.empty() && (rest.front() != ':' || !ParsePort(rest.substr(1), port)))
            return Error::FromErrno(EINVAL);
        v6 = true;
    } else if (text.find(':') != text.rfind(':')) {
        host = std::string(text);  // bare IPv6, no port
        v6 = true;
    } else {
        auto colon = text.find(':');
        host = std::string(text.substr(0, colon));
        if (colon != std::string_view::npos && !ParsePort(text.substr(colon + 1), port))
            return Error::FromErrno(EINVAL);
    }
    if (v6) {
        sockaddr_in6 in6{};
        in6.sin6_family = AF_INET6;
        in6.sin6_port = htons(port);
        if (inet_pton(AF_INET6, host.c_str(), &in6.sin6_addr) != 1) return Error::FromErrno(EINVAL);
        return SockAddr(in6);
    }
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    if (inet_pton(AF_INET, host.c_str(), &in.sin_addr) != 1) return Error::FromErrno(EINVAL);
    return SockAddr(in);
}

}  // namespace ndk
