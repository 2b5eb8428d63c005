// SPDX-License-Identifier: BSD-2-Clause
// ndk_user: a minimal libndk program, built only against an installed
// libndk (pkg-config libndk or find_package(ndk)):
//   ndk_user [DEVICE]
// Lists the adapters, opens DEVICE (default: the first), registers a
// buffer (WSPRegisterMemory), then asks ndk.ko over netlink what this
// process holds and prints it.  Exit status: 0 ok, 1 error.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include <ndk/ndk.hpp>
#include <ndk/netlink.hpp>

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

    auto nl = ndk::nl::Client::Open();
    if (!nl) {
        std::fprintf(stderr, "ndk_user: netlink: %s\n", nl.error().Message().c_str());
        return 1;
    }
    // One entry per open /dev/ndk file: the Device and the Adapter each
    // opened one; the registration is the adapter's file's.
    auto procs = nl->Processes(static_cast<std::uint32_t>(getpid()));
    if (!procs || procs->empty()) {
        std::fprintf(stderr, "ndk_user: netlink does not show this process\n");
        return 1;
    }
    for (const auto& p : *procs) {
        std::printf("file %u of pid %u (%s):\n", p.file_id, p.pid, p.comm.c_str());
        for (const auto& [k, v] : p.counters) std::printf("%s %" PRIu64 "\n", k.c_str(), v);
    }
    return 0;
}
