// SPDX-License-Identifier: BSD-2-Clause
// The only place that calls ioctl(2) on /dev/ndk.
#pragma once

#include "ndk/result.hpp"

namespace ndk::detail {

// ioctl(fd, cmd, arg), retried on EINTR; an Error carrying errno on failure.
Result<void> Ioctl(int fd, unsigned long cmd, void* arg) noexcept;

}  // namespace ndk::detail
