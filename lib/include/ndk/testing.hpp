// SPDX-License-Identifier: BSD-2-Clause
// The unit-test seam of libndk: every ioctl(2) the library makes goes
// through detail::Ioctl (lib/src/sys.cpp), which calls this hook instead
// when one is set.  For tests only; not thread-safe against calls in
// flight.
#pragma once

#include <functional>

namespace ndk::testing {

// Gets (fd, cmd, arg) as ioctl(2) would; returns 0, or a negative errno.
using IoctlHook = std::function<int(int fd, unsigned long cmd, void* arg)>;

// Sets the hook (an empty function restores the real ioctl).
void SetIoctlHook(IoctlHook hook);

}  // namespace ndk::testing
