// SPDX-License-Identifier: BSD-2-Clause
// Umbrella header of libndk.
#pragma once

#include "ndk/adapter.hpp"
#include "ndk/device.hpp"
#include "ndk/registration_cache.hpp"
#include "ndk/result.hpp"
#include "ndk/status.hpp"
#include "ndk/wsa.hpp"
