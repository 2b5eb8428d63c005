// SPDX-License-Identifier: BSD-2-Clause
#include "sys.hpp"

#include <sys/ioctl.h>

#include <cerrno>

namespace ndk::detail {

Result<void> Ioctl(int fd, unsigned long cmd, void* arg) noexcept {
    int rc;
    do {
        rc = ::ioctl(fd, cmd, arg);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return Error::FromErrno(errno);
    return {};
}

}  // namespace ndk::detail
