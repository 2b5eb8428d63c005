// SPDX-License-Identifier: GPL-2.0
#include "ndk/result.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

namespace {

ndk::Result<int> Half(int x) {
    if (x % 2) return ndk::Error::FromErrno(EINVAL);
    return x / 2;
}

TEST(ResultValue, HoldsValue) {
    auto r = Half(8);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(static_cast<bool>(r));
    EXPECT_EQ(*r, 4);
    EXPECT_EQ(r.value(), 4);
}

TEST(ResultValue, HoldsErrorWithErrnoAndStatus) {
    auto r = Half(7);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().errnum, EINVAL);
    EXPECT_EQ(r.error().status, ndk::status::kInvalidParameter);
}

TEST(ResultValue, CarriesMoveOnlyTypes) {
    ndk::Result<std::unique_ptr<int>> r(std::make_unique<int>(5));
    ASSERT_TRUE(r.ok());
    std::unique_ptr<int> p = std::move(r).value();
    EXPECT_EQ(*p, 5);
}

TEST(ResultVoid, DefaultIsSuccess) {
    ndk::Result<void> r;
    EXPECT_TRUE(r.ok());
    ndk::Result<void> e(ndk::Error::FromErrno(ENOMEM));
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().status, ndk::status::kInsufficientResources);
}

TEST(ResultDeathTest, ReadingTheWrongAlternativeAborts) {
    EXPECT_DEATH((void)Half(7).value(), "value\\(\\) on an error Result");
    EXPECT_DEATH((void)Half(8).error(), "error\\(\\) on an ok Result");
    EXPECT_DEATH((void)ndk::Result<void>().error(), "error\\(\\) on an ok Result");
}

}  // namespace
