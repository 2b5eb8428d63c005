// SPDX-License-Identifier: GPL-2.0
// Description: the one errno -> WSA table of the WSP-style calls, and the
// WSA code an Error carries.
#include "ndk/wsa.hpp"

#include <gtest/gtest.h>

#include <cerrno>

#include "ndk/result.hpp"

namespace {

// The exact Winsock numbers (winerror.h; ndkpi-reference.md §10).
TEST(WsaValues, MatchWinsock) {
    EXPECT_EQ(ndk::wsa::kEfault, 10014);
    EXPECT_EQ(ndk::wsa::kEinval, 10022);
    EXPECT_EQ(ndk::wsa::kEnobufs, 10055);
    EXPECT_EQ(ndk::wsa::kEnotconn, 10057);
}

struct WsaMapping {
    int errnum;
    int wsa;
};

class WsaFromErrno : public ::testing::TestWithParam<WsaMapping> {};

TEST_P(WsaFromErrno, MapsThroughTheOneTable) {
    EXPECT_EQ(ndk::WsaFromErrno(GetParam().errnum), GetParam().wsa)
        << "errno " << GetParam().errnum;
}

INSTANTIATE_TEST_SUITE_P(
    Table, WsaFromErrno,
    ::testing::Values(
        // No resources, the memlock limit, beyond MaxRegistrationSize.
        WsaMapping{ENOBUFS, ndk::wsa::kEnobufs}, WsaMapping{ENOMEM, ndk::wsa::kEnobufs},
        WsaMapping{EMSGSIZE, ndk::wsa::kEnobufs},
        // Buffer not wholly inside valid user memory.
        WsaMapping{EFAULT, ndk::wsa::kEfault},
        // Bad flags, length 0, unknown handle (WSPDeregisterMemory).
        WsaMapping{EINVAL, ndk::wsa::kEinval}, WsaMapping{ENOENT, ndk::wsa::kEinval},
        WsaMapping{EBADF, ndk::wsa::kEinval}, WsaMapping{ENOTCONN, ndk::wsa::kEnotconn},
        // No WSA meaning.
        WsaMapping{0, ndk::wsa::kNone}, WsaMapping{EPERM, ndk::wsa::kNone},
        WsaMapping{EBUSY, ndk::wsa::kNone}, WsaMapping{ENODEV, ndk::wsa::kNone},
        WsaMapping{EIO, ndk::wsa::kNone}, WsaMapping{-1, ndk::wsa::kNone}));

TEST(WsaNames, Known) {
    EXPECT_STREQ(ndk::WsaName(ndk::wsa::kEnobufs), "WSAENOBUFS");
    EXPECT_STREQ(ndk::WsaName(ndk::wsa::kEfault), "WSAEFAULT");
    EXPECT_STREQ(ndk::WsaName(ndk::wsa::kEinval), "WSAEINVAL");
    EXPECT_STREQ(ndk::WsaName(ndk::wsa::kEnotconn), "WSAENOTCONN");
    EXPECT_STREQ(ndk::WsaName(ndk::wsa::kNone), "");
    EXPECT_STREQ(ndk::WsaName(1), "WSA_UNKNOWN");
}

TEST(ErrorWsa, OnlyTheWspFormCarriesIt) {
    EXPECT_EQ(ndk::Error::FromErrno(ENOMEM).wsa, ndk::wsa::kNone);
    auto e = ndk::Error::FromErrnoWsa(ENOMEM);
    EXPECT_EQ(e.errnum, ENOMEM);
    EXPECT_EQ(e.status, ndk::status::kInsufficientResources);
    EXPECT_EQ(e.wsa, ndk::wsa::kEnobufs);
    EXPECT_NE(e.Message().find("[WSAENOBUFS]"), std::string::npos) << e.Message();
    EXPECT_EQ(ndk::Error::FromErrno(EFAULT).Message().find("WSA"), std::string::npos);
}

TEST(ErrorWsa, TooLargeIsInvalidParameterForNdk) {
    auto e = ndk::Error::FromErrnoWsa(EMSGSIZE);
    EXPECT_EQ(e.status, ndk::status::kInvalidParameter);
    EXPECT_EQ(e.wsa, ndk::wsa::kEnobufs);
}

}  // namespace
