// SPDX-License-Identifier: GPL-2.0
// A program built against an installed libndk only (tests/install): the
// public headers, the uapi header, and a call into the shared library.
//   ndk-consumer [DEVICE]   (default /dev/ndk)
// Prints the ABI version the headers declare and what opening DEVICE
// gives; exits 0 either way (the build machine has no /dev/ndk).
#include <ndk/ndk_ioctl.h>
#include <ndk/ndk.hpp>

#include <cstdio>

int main(int argc, char** argv) {
#ifdef NDK_CONSUMER_VERSION
    std::printf("libndk %s\n", NDK_CONSUMER_VERSION);
#endif
    std::printf("ABI version %d\n", NDK_U_ABI_VERSION);
    const char* path = argc > 1 ? argv[1] : ndk::kDefaultDevicePath;
    auto dev = ndk::Device::Open(path);
    if (!dev) {
        std::printf("%s: %s\n", path, dev.error().Message().c_str());
        return 0;
    }
    std::printf("%s: module ABI %u, %u adapters\n", path, dev->info().abi_version,
                dev->info().adapter_count);
    return 0;
}
