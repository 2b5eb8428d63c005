// SPDX-License-Identifier: BSD-2-Clause
#include "sys.hpp"

#include <sys/ioctl.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "ndk/testing.hpp"

namespace ndk {
namespace {

testing::IoctlHook& Hook() {
    static testing::IoctlHook hook;
    return hook;
}

std::atomic<std::uint64_t> ioctl_count{0};

}  // namespace

std::uint64_t IoctlCount() noexcept { return ioctl_count.load(std::memory_order_relaxed); }

void testing::SetIoctlHook(IoctlHook hook) { Hook() = std::move(hook); }

namespace detail {

Result<void> Ioctl(int fd, unsigned long cmd, void* arg) noexcept {
    ioctl_count.fetch_add(1, std::memory_order_relaxed);
    if (auto& hook = Hook()) {
        int rc = hook(fd, cmd, arg);
        if (rc < 0) return Error::FromErrno(-rc);
        return {};
    }
    int rc;
    do {
        rc = ::ioctl(fd, cmd, arg);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return Error::FromErrno(errno);
    return {};
}

}  // namespace detail
}  // namespace ndk
