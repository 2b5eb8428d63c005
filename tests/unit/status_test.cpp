// SPDX-License-Identifier: GPL-2.0
#include "ndk/status.hpp"

#include <gtest/gtest.h>

#include <cerrno>

#include "ndk/result.hpp"

namespace {

// The exact Windows numbers (ntstatus.h; ../shared/docs/ndkpi-reference.md §2).
TEST(StatusValues, MatchWindows) {
    EXPECT_EQ(ndk::status::kSuccess, 0);
    EXPECT_EQ(ndk::status::kPending, 0x103);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kInvalidParameter), 0xC000000Du);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kInsufficientResources), 0xC000009Au);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kBufferTooSmall), 0xC0000023u);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kAccessViolation), 0xC0000005u);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kNotSupported), 0xC00000BBu);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kCancelled), 0xC0000120u);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kDeviceBusy), 0x80000011u);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kDeviceRemoved), 0xC00002B6u);
}

// The values the five seed documents state (NdkRegisterMr, NdkBind,
// NdkInitializeFastRegisterMr, NDK_ADAPTER_INFO), pinned here against the
// ABI header that the kernel header and libndk both take them from.
TEST(SeedValues, FlagsAndStatusesAreMicrosofts) {
    EXPECT_EQ(NDK_U_MR_FLAG_ALLOW_LOCAL_READ, 0x0u);
    EXPECT_EQ(NDK_U_MR_FLAG_ALLOW_LOCAL_WRITE, 0x1u);
    EXPECT_EQ(NDK_U_MR_FLAG_ALLOW_REMOTE_READ, 0x2u);
    EXPECT_EQ(NDK_U_MR_FLAG_ALLOW_REMOTE_WRITE, 0x5u);
    EXPECT_EQ(NDK_U_MR_FLAG_RDMA_READ_SINK, 0x8u);
    EXPECT_EQ(NDK_U_OP_FLAG_SILENT_SUCCESS, 0x1u);
    EXPECT_EQ(NDK_U_OP_FLAG_READ_FENCE, 0x2u);
    EXPECT_EQ(NDK_U_OP_FLAG_ALLOW_REMOTE_READ, 0x8u);
    EXPECT_EQ(NDK_U_OP_FLAG_ALLOW_LOCAL_WRITE, 0x10u);
    EXPECT_EQ(NDK_U_OP_FLAG_ALLOW_REMOTE_WRITE, 0x30u);
    EXPECT_EQ(NDK_U_OP_FLAG_RDMA_READ_SINK, 0x80u);
    EXPECT_EQ(NDK_U_OP_FLAG_DEFER, 0x200u);
    EXPECT_EQ(NDK_U_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED, 0x1u);
    EXPECT_EQ(NDK_U_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, 0x2u);
    EXPECT_EQ(NDK_U_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED, 0x4u);
    EXPECT_EQ(NDK_U_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED, 0x8u);
    EXPECT_EQ(NDK_U_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED, 0x10u);
    EXPECT_EQ(NDK_U_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED, 0x100u);
    EXPECT_EQ(NDK_U_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED, 0x10000u);
    // The statuses the seeds name that MatchWindows does not.
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kConnectionInvalid), 0xC000023Au);
    EXPECT_EQ(static_cast<std::uint32_t>(ndk::status::kImplementationLimit), 0xC000042Bu);
}

struct Mapping {
    int errnum;
    ndk::NTSTATUS status;
};

class StatusFromErrno : public ::testing::TestWithParam<Mapping> {};

TEST_P(StatusFromErrno, MapsThroughTheOneTable) {
    EXPECT_EQ(ndk::StatusFromErrno(GetParam().errnum), GetParam().status)
        << "errno " << GetParam().errnum;
}

INSTANTIATE_TEST_SUITE_P(Table, StatusFromErrno,
                         ::testing::Values(Mapping{0, ndk::status::kSuccess},
                                           Mapping{EINVAL, ndk::status::kInvalidParameter},
                                           Mapping{E2BIG, ndk::status::kInvalidParameter},
                                           Mapping{ENOMEM, ndk::status::kInsufficientResources},
                                           Mapping{ENOBUFS, ndk::status::kInsufficientResources},
                                           Mapping{EFAULT, ndk::status::kAccessViolation},
                                           Mapping{ENOENT, ndk::status::kInvalidHandle},
                                           Mapping{EPERM, ndk::status::kAccessDenied},
                                           Mapping{ENOTTY, ndk::status::kNotSupported},
                                           Mapping{EOPNOTSUPP, ndk::status::kNotSupported},
                                           Mapping{EBUSY, ndk::status::kDeviceBusy},
                                           Mapping{ENODEV, ndk::status::kDeviceRemoved},
                                           Mapping{ETIMEDOUT, ndk::status::kIoTimeout},
                                           Mapping{ECANCELED, ndk::status::kCancelled},
                                           Mapping{EACCES, ndk::status::kAccessViolation},
                                           Mapping{EBADRQC, ndk::status::kInvalidDeviceRequest},
                                           Mapping{EISCONN, ndk::status::kInvalidDeviceState},
                                           Mapping{ECONNREFUSED, ndk::status::kConnectionRefused},
                                           Mapping{ENETUNREACH, ndk::status::kNetworkUnreachable},
                                           Mapping{EHOSTUNREACH, ndk::status::kHostUnreachable},
                                           Mapping{EADDRINUSE, ndk::status::kAddressAlreadyExists},
                                           Mapping{EADDRNOTAVAIL, ndk::status::kInvalidAddress},
                                           Mapping{ECONNRESET, ndk::status::kConnectionReset},
                                           Mapping{ECONNABORTED, ndk::status::kConnectionAborted},
                                           Mapping{ENOTCONN, ndk::status::kConnectionInvalid},
                                           Mapping{EXDEV, ndk::status::kUnsuccessful}));

// A status that arrived as a value (completion, event) gets an errno that
// maps back to the same status wherever the errno table has one.
TEST(ErrnoFromStatus, RoundTripsThroughTheTable) {
    for (ndk::NTSTATUS s : {ndk::status::kSuccess,
                            ndk::status::kInvalidParameter,
                            ndk::status::kAccessViolation,
                            ndk::status::kInsufficientResources,
                            ndk::status::kDeviceBusy,
                            ndk::status::kDeviceRemoved,
                            ndk::status::kIoTimeout,
                            ndk::status::kCancelled,
                            ndk::status::kConnectionRefused,
                            ndk::status::kNetworkUnreachable,
                            ndk::status::kHostUnreachable,
                            ndk::status::kInvalidAddress,
                            ndk::status::kConnectionReset,
                            ndk::status::kConnectionAborted,
                            ndk::status::kConnectionInvalid,
                            ndk::status::kNotSupported,
                            ndk::status::kInvalidHandle,
                            ndk::status::kAccessDenied,
                            ndk::status::kInvalidDeviceRequest,
                            ndk::status::kInvalidDeviceState})
        EXPECT_EQ(ndk::StatusFromErrno(ndk::ErrnoFromStatus(s)), s) << ndk::StatusName(s);
    EXPECT_EQ(ndk::ErrnoFromStatus(ndk::status::kRemoteResources), EREMOTEIO);
    EXPECT_EQ(ndk::ErrnoFromStatus(ndk::status::kInternalError), EIO);
}

TEST(ErrorFromStatus, KeepsTheExactStatus) {
    auto e = ndk::Error::FromStatus(ndk::status::kRemoteResources);
    EXPECT_EQ(e.status, ndk::status::kRemoteResources);
    EXPECT_EQ(e.errnum, EREMOTEIO);
    EXPECT_NE(e.Message().find("STATUS_REMOTE_RESOURCES"), std::string::npos);
    EXPECT_TRUE(ndk::NtSuccess(ndk::status::kPending));
    EXPECT_FALSE(ndk::NtSuccess(ndk::status::kCancelled));
}

TEST(StatusName, NamesKnownAndUnknown) {
    EXPECT_EQ(ndk::StatusName(ndk::status::kInvalidParameter), "STATUS_INVALID_PARAMETER");
    EXPECT_EQ(ndk::StatusName(0x12345), "STATUS_UNKNOWN");
}

TEST(ErrorMessage, NamesErrnoAndStatus) {
    auto m = ndk::Error::FromErrno(EINVAL).Message();
    EXPECT_NE(m.find("EINVAL"), std::string::npos) << m;
    EXPECT_NE(m.find("STATUS_INVALID_PARAMETER"), std::string::npos) << m;
}

}  // namespace
