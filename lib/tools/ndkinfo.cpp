// SPDX-License-Identifier: BSD-2-Clause
// ndkinfo: what /dev/ndk offers, like ibv_devinfo for NDK adapters.
//   ndkinfo [-d DEVICE]     ABI version, features and the adapter list
//   ndkinfo -l              adapter names only, one per line (for scripts)
// Exit status: 0 ok, 1 the device could not be opened or queried, 2 usage.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "ndk/ndk.hpp"

int main(int argc, char** argv) {
    const char* path = ndk::kDefaultDevicePath;
    bool names_only = false;
    for (int opt; (opt = getopt(argc, argv, "d:lh")) != -1;) {
        switch (opt) {
            case 'd':
                path = optarg;
                break;
            case 'l':
                names_only = true;
                break;
            default:
                std::fprintf(stderr, "usage: %s [-d device] [-l]\n", argv[0]);
                return 2;
        }
    }

    auto dev = ndk::Device::Open(path);
    if (!dev) {
        std::fprintf(stderr, "ndkinfo: %s: %s\n", path, dev.error().Message().c_str());
        return 1;
    }
    auto adapters = dev->ListAdapters();
    if (!adapters) {
        std::fprintf(stderr, "ndkinfo: adapter query: %s\n", adapters.error().Message().c_str());
        return 1;
    }
    if (names_only) {
        for (const auto& a : *adapters) std::printf("%s\n", a.name.c_str());
        return 0;
    }
    std::printf("device:      %s\n", path);
    std::printf("abi_version: %" PRIu32 "\n", dev->info().abi_version);
    std::printf("features:    0x%016" PRIx64 "\n", dev->info().features);
    std::printf("adapters:    %zu\n", adapters->size());
    for (const auto& a : *adapters) {
        std::printf("  adapter %" PRIu32 ": %-16s node_guid %016" PRIx64 " ib_index %" PRIu32
                    " ports %" PRIu32 "\n",
                    a.id, a.name.c_str(), a.node_guid, a.ib_index, a.port_count);
    }
    return 0;
}
