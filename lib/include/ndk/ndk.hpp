// SPDX-License-Identifier: BSD-2-Clause
// Umbrella header of libndk.
#pragma once

#include "ndk/adapter.hpp"
#include "ndk/completion_queue.hpp"
#include "ndk/connector.hpp"
#include "ndk/constants.hpp"
#include "ndk/device.hpp"
#include "ndk/event.hpp"
#include "ndk/memory.hpp"
#include "ndk/queue_pair.hpp"
#include "ndk/registration_cache.hpp"
#include "ndk/result.hpp"
#include "ndk/sockaddr.hpp"
#include "ndk/status.hpp"
#include "ndk/wsa.hpp"
