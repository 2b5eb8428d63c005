// SPDX-License-Identifier: BSD-2-Clause
#include "sys.hpp"

#include <sys/ioctl.h>

#include <cerrno>
#include <utility>

#include "ndk/testing.hpp"

namespace ndk {
namespace {

testing::IoctlHook& Hook() {
    static testing::IoctlHook hook;
    return hook;
}

}  // namespace

void testing::SetIoctlHook(IoctlHook hook) { Hook() = std::move(hook); }

namespace detail {

Result<void> Ioctl(int fd, unsigned long cmd, void* arg) noexcept {
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
