// SPDX-License-Identifier: BSD-2-Clause
// ndk_user: a minimal libndk program, built only against an installed
// libndk (pkg-config libndk or find_package(ndk)):
//   ndk_user [DEVICE]
// Lists the adapters, opens DEVICE (default: the first), registers a
// buffer (WSPRegisterMemory) twice and shows that the second call shares
// the first's registration (one handle, two references), as
// WSPRegisterMemory does.  Exit status: 0 ok, 1 error.
#include <cstdio>
#include <string>
#include <vector>

#include <ndk/ndk.hpp>

int main(int argc, char** argv) {
    auto dev = ndk::Device::Open();
    if (!dev) {
        std::fprintf(stderr, "ndk_user: /dev/ndk: %s\n", dev.error().Message().c_str());
        return 1;
    }
    auto list = dev->ListAdapters();
    if (!list || list->empty()) {
        std::fprintf(stderr, "ndk_user: no adapter\n");
        return 1;
    }
    for (const auto& a : *list) std::printf("adapter %u: %s\n", a.id, a.name.c_str());
    const std::string name = argc > 1 ? argv[1] : (*list)[0].name;

    auto adapter = ndk::Adapter::OpenByName(name);
    if (!adapter) {
        std::fprintf(stderr, "ndk_user: %s: %s\n", name.c_str(), adapter.error().Message().c_str());
        return 1;
    }
    auto pd = adapter->CreateProtectionDomain();
    if (!pd) {
        std::fprintf(stderr, "ndk_user: PD: %s\n", pd.error().Message().c_str());
        return 1;
    }
    std::vector<char> buffer(64 * 1024);
    auto reg = pd->RegisterMemory(buffer.data(), buffer.size(), ndk::kMemReadWrite);
    if (!reg) {
        std::fprintf(stderr, "ndk_user: register: %s\n", reg.error().Message().c_str());
        return 1;
    }
    std::printf("registered %zu bytes on %s: handle %u\n", buffer.size(), name.c_str(),
                reg->handle());

    auto again = pd->RegisterMemory(buffer.data(), buffer.size(), ndk::kMemReadWrite);
    if (!again) {
        std::fprintf(stderr, "ndk_user: register again: %s\n", again.error().Message().c_str());
        return 1;
    }
    std::printf("registered again: handle %u, references %u\n", again->handle(),
                again->references());
    if (again->handle() != reg->handle() || again->references() != 2) {
        std::fprintf(stderr, "ndk_user: the same buffer was registered twice\n");
        return 1;
    }
    return 0;
}
