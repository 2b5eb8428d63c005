// SPDX-License-Identifier: GPL-2.0
// Description: the uapi header compiles as C++20; every struct is standard
// layout, a multiple of 8 bytes, and has the offsets kmod/ndk_ioctl.c asserts.
#include <ndk/ndk_ioctl.h>

#include <cstddef>
#include <cstdio>
#include <type_traits>

template <typename T>
constexpr bool kAbiShaped = std::is_standard_layout_v<T> && std::is_trivially_copyable_v<T> &&
                            sizeof(T) % 8 == 0 && alignof(T) == 8;

static_assert(kAbiShaped<ndk_u_query_info>);
static_assert(kAbiShaped<ndk_u_adapter_query>);
static_assert(sizeof(ndk_u_query_info) == 24);
static_assert(offsetof(ndk_u_query_info, abi_version) == 4);
static_assert(offsetof(ndk_u_query_info, features) == 8);
static_assert(offsetof(ndk_u_query_info, adapter_count) == 16);
static_assert(offsetof(ndk_u_query_info, reserved) == 20);
static_assert(sizeof(ndk_u_adapter_query) == 88);
static_assert(offsetof(ndk_u_adapter_query, flags) == 4);
static_assert(offsetof(ndk_u_adapter_query, node_guid) == 8);
static_assert(offsetof(ndk_u_adapter_query, ib_index) == 16);
static_assert(offsetof(ndk_u_adapter_query, port_count) == 20);
static_assert(offsetof(ndk_u_adapter_query, name) == 24);
static_assert(_IOC_TYPE(NDK_IOCTL_QUERY_INFO) == NDK_IOCTL_MAGIC);
static_assert(_IOC_SIZE(NDK_IOCTL_ADAPTER_QUERY) == sizeof(ndk_u_adapter_query));

int main() {
    std::printf("uapi layout ok (C++%ld)\n", static_cast<long>(__cplusplus));
    return 0;
}
