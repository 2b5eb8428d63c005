// SPDX-License-Identifier: GPL-2.0
// The wire format of samples/ndkblk/ndkblk_proto.h, from the other side,
// for the tests that play a hostile initiator or target (little endian,
// as the guest).
#pragma once

#include <cstdint>

namespace ndkblk_wire {

inline constexpr std::uint32_t kMagic = 0x4b424e44;
inline constexpr std::uint16_t kPort = 7474;
inline constexpr std::uint32_t kDepth = 32;
inline constexpr std::uint16_t kOpWriteInline = 3;

struct Req {
    std::uint32_t magic;
    std::uint16_t opcode, tag;
    std::uint64_t sector;
    std::uint32_t length, token;
    std::uint64_t address;
};
struct Rsp {
    std::uint32_t magic;
    std::uint16_t tag, status;
};
struct Hello {
    std::uint32_t magic, depth, max_io, inline_max;
    std::uint64_t sectors;
    std::uint32_t queues, reserved;
};
static_assert(sizeof(Req) == 32 && sizeof(Rsp) == 8 && sizeof(Hello) == 32);

}  // namespace ndkblk_wire
