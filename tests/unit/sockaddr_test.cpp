// SPDX-License-Identifier: GPL-2.0
#include "ndk/sockaddr.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

namespace {

TEST(SockAddr, ParsesIpv4WithPort) {
    auto a = ndk::SockAddr::Parse("10.99.0.1:4791");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->family(), AF_INET);
    EXPECT_EQ(a->port(), 4791);
    sockaddr_in in;
    std::memcpy(&in, a->data(), sizeof(in));
    EXPECT_EQ(in.sin_port, htons(4791));
    EXPECT_EQ(in.sin_addr.s_addr, htonl(0x0a630001));
    // Zero-padded to 32 bytes.
    for (std::size_t i = sizeof(sockaddr_in); i < ndk::SockAddr::kSize; ++i)
        EXPECT_EQ(a->data()[i], 0) << i;
    EXPECT_EQ(a->ToString(), "10.99.0.1:4791");
}

TEST(SockAddr, ParsesIpv4WithoutPort) {
    auto a = ndk::SockAddr::Parse("127.0.0.1");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->port(), 0);
    EXPECT_EQ(a->WithPort(80).ToString(), "127.0.0.1:80");
}

TEST(SockAddr, ParsesIpv6) {
    auto a = ndk::SockAddr::Parse("[fe80::1]:4791");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->family(), AF_INET6);
    EXPECT_EQ(a->port(), 4791);
    EXPECT_EQ(a->ToString(), "[fe80::1]:4791");
    auto b = ndk::SockAddr::Parse("::1");
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->port(), 0);
    EXPECT_EQ(ndk::SockAddr::Parse("[::1]")->ToString(), "[::1]:0");
}

TEST(SockAddr, RefusesWhatDoesNotParse) {
    for (const char* s : {"", "10.99.0.1:", "10.99.0.1:65536", "10.99.0.1:x", "host:80",
                          "10.99.0:1", "[::1", "[::1]x", "[::1]:99999", "1.2.3.4:5:6:7"}) {
        auto a = ndk::SockAddr::Parse(s);
        ASSERT_FALSE(a.ok()) << s;
        EXPECT_EQ(a.error().errnum, EINVAL) << s;
    }
}

TEST(SockAddr, DefaultIsUnspecAllZero) {
    ndk::SockAddr a;
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(a.port(), 0);
    EXPECT_EQ(a.ToString(), "unspec");
    std::uint8_t raw[ndk::SockAddr::kSize];
    std::memset(raw, 0xff, sizeof(raw));
    a.CopyTo(raw);
    for (auto b : raw) EXPECT_EQ(b, 0);
}

}  // namespace
