// SPDX-License-Identifier: GPL-2.0
// Device on the host, where no ndk.ko exists: the failure paths.
#include "ndk/device.hpp"

#include <dirent.h>
#include <gtest/gtest.h>

#include <cerrno>

namespace {

int OpenFdCount() {
    int n = 0;
    DIR* d = opendir("/proc/self/fd");
    while (readdir(d)) ++n;
    closedir(d);
    return n;
}

TEST(DeviceOpen, MissingNodeIsENOENT) {
    auto dev = ndk::Device::Open("/nonexistent/ndk");
    ASSERT_FALSE(dev.ok());
    EXPECT_EQ(dev.error().errnum, ENOENT);
}

TEST(DeviceOpen, NotAnNdkDeviceIsENOTTYAndLeaksNoFd) {
    int before = OpenFdCount();
    auto dev = ndk::Device::Open("/dev/null");
    ASSERT_FALSE(dev.ok());
    EXPECT_EQ(dev.error().errnum, ENOTTY);
    EXPECT_EQ(dev.error().status, ndk::status::kNotSupported);
    EXPECT_EQ(OpenFdCount(), before);
}

}  // namespace
