// SPDX-License-Identifier: GPL-2.0
// Description: the uapi header compiles as C++20; every struct is standard
// layout, a multiple of 8 bytes, and has the offsets kmod/ndk_ioctl.c asserts.
#include <ndk/ndk_ioctl.h>
#include <ndk/ndk_netlink.h>

#include <cstddef>
#include <cstdio>
#include <type_traits>

template <typename T>
constexpr bool kAbiShaped = std::is_standard_layout_v<T>&& std::is_trivially_copyable_v<T> &&
                            sizeof(T) % 8 == 0 && alignof(T) == 8;

// Structs of __u32 fields only are 4-aligned; their size is still a
// multiple of 8 so that arrays of them look the same on every ABI.
template <typename T>
constexpr bool kAbiShaped32 = std::is_standard_layout_v<T>&& std::is_trivially_copyable_v<T> &&
                              sizeof(T) % 8 == 0 && alignof(T) == 4;

static_assert(kAbiShaped<ndk_u_adapter_info>);
static_assert(kAbiShaped<ndk_u_cache_counters>);
static_assert(kAbiShaped<ndk_u_mem_register>);
static_assert(kAbiShaped32<ndk_u_adapter_open>);
static_assert(kAbiShaped32<ndk_u_pd_create>);
static_assert(kAbiShaped32<ndk_u_mem_deregister>);
static_assert(kAbiShaped32<ndk_u_handle_close>);
static_assert(kAbiShaped<ndk_u_cq_create>);
static_assert(kAbiShaped<ndk_u_result>);
static_assert(kAbiShaped<ndk_u_cq_poll>);
static_assert(kAbiShaped<ndk_u_qp_create>);
static_assert(kAbiShaped<ndk_u_sge>);
static_assert(kAbiShaped<ndk_u_qp_post>);
static_assert(kAbiShaped<ndk_u_mr_register>);
static_assert(kAbiShaped<ndk_u_connector_create>);
static_assert(kAbiShaped<ndk_u_connect>);
static_assert(kAbiShaped<ndk_u_connector_request>);
static_assert(kAbiShaped<ndk_u_accept>);
static_assert(kAbiShaped<ndk_u_reject>);
static_assert(kAbiShaped<ndk_u_connector_query>);
static_assert(kAbiShaped<ndk_u_listener_create>);
static_assert(kAbiShaped<ndk_u_event>);
static_assert(kAbiShaped<ndk_u_event_get>);
static_assert(kAbiShaped32<ndk_u_qp_doorbell>);
static_assert(kAbiShaped32<ndk_u_cq_ring>);
static_assert(kAbiShaped32<ndk_u_cq_arm>);
static_assert(kAbiShaped32<ndk_u_qp_flush>);
static_assert(kAbiShaped32<ndk_u_mr_create>);
static_assert(kAbiShaped32<ndk_u_mr_deregister>);
static_assert(kAbiShaped32<ndk_u_mr_init_fr>);
static_assert(kAbiShaped32<ndk_u_mw_create>);
static_assert(kAbiShaped32<ndk_u_token_query>);
static_assert(kAbiShaped32<ndk_u_listen>);
static_assert(sizeof(ndk_u_adapter_info) == 8 + 0x68 + 8);
static_assert(offsetof(ndk_u_adapter_info, max_user_registration_size) == 8 + 0x68);
static_assert(offsetof(ndk_u_adapter_info, vendor_id) == 8 + 0x04);
static_assert(offsetof(ndk_u_adapter_info, max_registration_size) == 8 + 0x10);
static_assert(offsetof(ndk_u_adapter_info, max_window_size) == 8 + 0x18);
static_assert(offsetof(ndk_u_adapter_info, frmr_page_count) == 8 + 0x20);
static_assert(offsetof(ndk_u_adapter_info, max_cq_depth) == 8 + 0x4c);
static_assert(offsetof(ndk_u_adapter_info, adapter_flags) == 8 + 0x5c);
static_assert(offsetof(ndk_u_adapter_info, rdma_technology) == 8 + 0x60);
static_assert(sizeof(ndk_u_mem_register) == 64);
static_assert(offsetof(ndk_u_mem_register, cache_generation) == 56);
static_assert(offsetof(ndk_u_mem_register, address) == 8);
static_assert(offsetof(ndk_u_mem_register, length) == 16);
static_assert(offsetof(ndk_u_mem_register, handle) == 24);
static_assert(offsetof(ndk_u_mem_register, references) == 36);
static_assert(offsetof(ndk_u_mem_register, base_address) == 40);
static_assert(sizeof(ndk_u_adapter_open) == 16 && sizeof(ndk_u_pd_create) == 16);
static_assert(sizeof(ndk_u_mem_deregister) == 16 && sizeof(ndk_u_handle_close) == 8);
static_assert(_IOC_NR(NDK_IOCTL_HANDLE_CLOSE) == 7);
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
