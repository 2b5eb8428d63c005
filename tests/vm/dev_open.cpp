// SPDX-License-Identifier: GPL-2.0
// Description: libndk opens /dev/ndk, the version ioctl answers with this
// ABI and its features, an rxe adapter is listed, and the move-only Device
// handle keeps exactly one owner of the file descriptor.
#include <fcntl.h>
#include <ndk/ndk_ioctl.h>

#include <cinttypes>
#include <utility>

#include "ndk/ndk.hpp"
#include "t_helpers.hpp"

int main() {
    auto opened = ndk::Device::Open();
    if (!opened) {
        std::fprintf(stderr, "open /dev/ndk: %s\n", opened.error().Message().c_str());
        return kTestFail;
    }
    ndk::Device dev = std::move(opened).value();
    std::printf("abi %" PRIu32 " features 0x%" PRIx64 " adapters %" PRIu32 "\n",
                dev.info().abi_version, dev.info().features, dev.info().adapter_count);
    T_CHECK(dev.info().abi_version == NDK_U_ABI_VERSION);
    T_CHECK(dev.info().features & NDK_U_FEATURE_ADAPTER_QUERY);
    T_CHECK(dev.info().adapter_count >= 1);
    T_CHECK(fcntl(dev.fd(), F_GETFD) & FD_CLOEXEC);

    auto adapters = dev.ListAdapters();
    T_CHECK(adapters.ok());
    bool rxe0 = false;
    if (adapters) {
        T_CHECK(adapters->size() == dev.info().adapter_count);
        for (const auto& a : *adapters) {
            std::printf("adapter %" PRIu32 " %s guid %016" PRIx64 " ports %" PRIu32 "\n", a.id,
                        a.name.c_str(), a.node_guid, a.port_count);
            if (a.name == "rxe0") {
                rxe0 = true;
                T_CHECK(a.port_count == 1);
                T_CHECK(a.node_guid != 0);
                auto again = dev.QueryAdapter(a.id);
                T_CHECK(again.ok() && again->name == "rxe0" && again->node_guid == a.node_guid);
            }
        }
    }
    T_CHECK(rxe0);

    // Move construction and assignment transfer the one fd.
    int fd = dev.fd();
    ndk::Device moved(std::move(dev));
    T_CHECK(moved.fd() == fd);
    T_CHECK(dev.fd() == -1);  // NOLINT(bugprone-use-after-move): checking the moved-from state
    auto stale = dev.QueryInfo();
    T_CHECK(!stale.ok() && stale.error().errnum == EBADF);

    auto second = ndk::Device::Open();
    T_CHECK(second.ok());
    if (second) {
        int fd2 = second->fd();
        moved = std::move(second).value();  // closes fd, takes fd2
        T_CHECK(moved.fd() == fd2);
        T_CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
    }
    T_CHECK(moved.QueryInfo().ok());
    T_CHECK(moved.Close().ok());
    T_CHECK(moved.Close().ok());  // closing twice is harmless
    T_CHECK(!moved.QueryInfo().ok());
    return t_result("dev-open");
}
