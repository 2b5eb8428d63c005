// SPDX-License-Identifier: GPL-2.0
//
// The size classes of the kernel registration pool (kmod/ndk_reg_class.h)
// against fake devices: every registration of 1 ... max_fast_reg_page_list_len
// entries maps to a class whose MRs hold it and are never longer than the
// device allows.  Before the fix the largest class was 2048 entries, so on a
// 65536-entry device (mlx5) every registration above 2048 pages was accepted
// and then failed in ib_map_mr_sg().
#include <cstdint>
#include <set>

#include <gtest/gtest.h>

using u32 = std::uint32_t;
#include "ndk_reg_class.h"

namespace {

void CheckDevice(u32 limit) {
    std::set<u32> sizes;
    for (u32 n = 1; n <= limit; n++) {
        int c = ndk_reg_class(n, limit);
        ASSERT_GE(c, 0) << n;
        ASSERT_LT(c, NDK_REG_CLASSES) << n;
        u32 e = ndk_reg_class_entries(c, limit);
        ASSERT_GE(e, n) << "limit " << limit << " entries " << n;
        ASSERT_LE(e, limit) << "limit " << limit << " entries " << n;
        // The smallest class that holds it: the one below is too short.
        if (c > 0) {
            ASSERT_LT(ndk_reg_class_entries(c - 1, limit), n) << n;
        }
        sizes.insert(e);
    }
    // The limit itself is a class size, and beyond it nothing maps.
    EXPECT_TRUE(sizes.count(limit));
    EXPECT_EQ(ndk_reg_class(0, limit), -1);
    EXPECT_EQ(ndk_reg_class(limit + 1, limit), -1);
    for (int c = 0; c < NDK_REG_CLASSES; c++) {
        EXPECT_GE(ndk_reg_class_pool(c, limit), 2u);
        EXPECT_LE(ndk_reg_class_pool(c, limit), u32{NDK_REG_POOL_PER_CLASS});
    }
}

TEST(RegClass, Mlx5Limit65536) { CheckDevice(65536); }
TEST(RegClass, RxeLimit512) { CheckDevice(512); }
TEST(RegClass, OddLimits) {
    for (u32 limit : {1u, 15u, 16u, 17u, 1000u, 2048u, 2049u, 262144u, 1u << 20})
        CheckDevice(limit);
}

TEST(RegClass, KnownClasses) {
    // rxe: 16, 32, ..., 256, then 512 for everything above.
    EXPECT_EQ(ndk_reg_class(16, 512), 0);
    EXPECT_EQ(ndk_reg_class(17, 512), 1);
    EXPECT_EQ(ndk_reg_class_entries(ndk_reg_class(511, 512), 512), 512u);
    // mlx5: the 65536-entry class exists and 2049 no longer falls off.
    EXPECT_EQ(ndk_reg_class_entries(ndk_reg_class(2049, 65536), 65536), 4096u);
    EXPECT_EQ(ndk_reg_class_entries(ndk_reg_class(65535, 65536), 65536), 65536u);
    // A device beyond the last power-of-two class: the last class is the limit.
    u32 big = 16u << NDK_REG_CLASSES;
    EXPECT_EQ(ndk_reg_class_entries(NDK_REG_CLASSES - 1, big), big);
}

}  // namespace
