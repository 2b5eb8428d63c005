/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Description: the uapi header compiles as strict C (C90 and C11) and its
 * layout is the one the kernel asserts in kmod/ndk_ioctl.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <ndk/ndk_ioctl.h>
#include <ndk/ndk_netlink.h>

#define ABI_ASSERT(name, cond) typedef char abi_assert_##name[(cond) ? 1 : -1]

ABI_ASSERT(qi_size, sizeof(struct ndk_u_query_info) == 24);
ABI_ASSERT(qi_features, offsetof(struct ndk_u_query_info, features) == 8);
ABI_ASSERT(cache_counters, sizeof(struct ndk_u_cache_counters) == 16 &&
	   offsetof(struct ndk_u_cache_counters, misses) == 8);
ABI_ASSERT(nl_obj_max, NDK_NL_OBJ_MAX == 9 && NDK_NL_OBJ_MEM == 9);
ABI_ASSERT(nl_counters_offset, NDK_U_MMAP_CACHE_COUNTERS % 4096 == 0 &&
	   NDK_U_MMAP_CACHE_COUNTERS >= NDK_U_CACHE_SLOTS * 8);
ABI_ASSERT(qi_count, offsetof(struct ndk_u_query_info, adapter_count) == 16);
ABI_ASSERT(aq_size, sizeof(struct ndk_u_adapter_query) == 88);
ABI_ASSERT(aq_guid, offsetof(struct ndk_u_adapter_query, node_guid) == 8);
ABI_ASSERT(aq_name, offsetof(struct ndk_u_adapter_query, name) == 24);
ABI_ASSERT(ao_size, sizeof(struct ndk_u_adapter_open) == 16);
ABI_ASSERT(ai_size, sizeof(struct ndk_u_adapter_info) == 8 + 0x68 + 8);
ABI_ASSERT(ai_umrs, offsetof(struct ndk_u_adapter_info, max_user_registration_size) == 8 + 0x68);
ABI_ASSERT(ai_mrs, offsetof(struct ndk_u_adapter_info, max_registration_size) == 8 + 0x10);
ABI_ASSERT(ai_frmr, offsetof(struct ndk_u_adapter_info, frmr_page_count) == 8 + 0x20);
ABI_ASSERT(ai_tech, offsetof(struct ndk_u_adapter_info, rdma_technology) == 8 + 0x60);
ABI_ASSERT(pc_size, sizeof(struct ndk_u_pd_create) == 16);
ABI_ASSERT(mr_size, sizeof(struct ndk_u_mem_register) == 64);
ABI_ASSERT(mr_slot, offsetof(struct ndk_u_mem_register, cache_slot) == 48);
ABI_ASSERT(mr_addr, offsetof(struct ndk_u_mem_register, address) == 8);
ABI_ASSERT(mr_handle, offsetof(struct ndk_u_mem_register, handle) == 24);
ABI_ASSERT(mr_base, offsetof(struct ndk_u_mem_register, base_address) == 40);
ABI_ASSERT(md_size, sizeof(struct ndk_u_mem_deregister) == 16);
ABI_ASSERT(hc_size, sizeof(struct ndk_u_handle_close) == 8);
ABI_ASSERT(cmd_qi, _IOC_NR(NDK_IOCTL_QUERY_INFO) == 0);
ABI_ASSERT(cmd_aq, _IOC_NR(NDK_IOCTL_ADAPTER_QUERY) == 1);
ABI_ASSERT(cmd_ao, _IOC_NR(NDK_IOCTL_ADAPTER_OPEN) == 2);
ABI_ASSERT(cmd_ai, _IOC_NR(NDK_IOCTL_ADAPTER_INFO) == 3);
ABI_ASSERT(cmd_pc, _IOC_NR(NDK_IOCTL_PD_CREATE) == 4);
ABI_ASSERT(cmd_mr, _IOC_NR(NDK_IOCTL_MEM_REGISTER) == 5);
ABI_ASSERT(cmd_md, _IOC_NR(NDK_IOCTL_MEM_DEREGISTER) == 6);
ABI_ASSERT(cmd_hc, _IOC_NR(NDK_IOCTL_HANDLE_CLOSE) == 7);
ABI_ASSERT(sz_cq_create, sizeof(struct ndk_u_cq_create) == 40);
ABI_ASSERT(sz_cq_arm, sizeof(struct ndk_u_cq_arm) == 8);
ABI_ASSERT(sz_result, sizeof(struct ndk_u_result) == 40);
ABI_ASSERT(sz_cq_poll, sizeof(struct ndk_u_cq_poll) == 16);
ABI_ASSERT(sz_qp_create, sizeof(struct ndk_u_qp_create) == 64);
ABI_ASSERT(sz_sge, sizeof(struct ndk_u_sge) == 16);
ABI_ASSERT(sz_qp_post, sizeof(struct ndk_u_qp_post) == 72);
ABI_ASSERT(sz_qp_flush, sizeof(struct ndk_u_qp_flush) == 8);
ABI_ASSERT(sz_mr_create, sizeof(struct ndk_u_mr_create) == 16);
ABI_ASSERT(sz_mr_register, sizeof(struct ndk_u_mr_register) == 32);
ABI_ASSERT(sz_mr_deregister, sizeof(struct ndk_u_mr_deregister) == 8);
ABI_ASSERT(sz_mr_init_fr, sizeof(struct ndk_u_mr_init_fr) == 16);
ABI_ASSERT(sz_mw_create, sizeof(struct ndk_u_mw_create) == 16);
ABI_ASSERT(sz_token_query, sizeof(struct ndk_u_token_query) == 16);
ABI_ASSERT(sz_connector_create, sizeof(struct ndk_u_connector_create) == 24);
ABI_ASSERT(sz_connect, sizeof(struct ndk_u_connect) == 104);
ABI_ASSERT(sz_connector_request, sizeof(struct ndk_u_connector_request) == 16);
ABI_ASSERT(sz_accept, sizeof(struct ndk_u_accept) == 40);
ABI_ASSERT(sz_reject, sizeof(struct ndk_u_reject) == 16);
ABI_ASSERT(sz_connector_query, sizeof(struct ndk_u_connector_query) == 96);
ABI_ASSERT(sz_listener_create, sizeof(struct ndk_u_listener_create) == 24);
ABI_ASSERT(sz_listen, sizeof(struct ndk_u_listen) == 40);
ABI_ASSERT(sz_event, sizeof(struct ndk_u_event) == 24);
ABI_ASSERT(sz_event_get, sizeof(struct ndk_u_event_get) == 16);
ABI_ASSERT(sz_qp_doorbell, sizeof(struct ndk_u_qp_doorbell) == 24);
ABI_ASSERT(sz_cq_ring, sizeof(struct ndk_u_cq_ring) == NDK_U_CQ_RING_RESULTS);
ABI_ASSERT(cq_ring_tail, offsetof(struct ndk_u_cq_ring, tail) == 64);
ABI_ASSERT(cmd_cq_create, _IOC_NR(NDK_IOCTL_CQ_CREATE) == 0x08);
ABI_ASSERT(cmd_cq_arm, _IOC_NR(NDK_IOCTL_CQ_ARM) == 0x09);
ABI_ASSERT(cmd_cq_poll, _IOC_NR(NDK_IOCTL_CQ_POLL) == 0x0a);
ABI_ASSERT(cmd_qp_create, _IOC_NR(NDK_IOCTL_QP_CREATE) == 0x0b);
ABI_ASSERT(cmd_qp_post, _IOC_NR(NDK_IOCTL_QP_POST) == 0x0c);
ABI_ASSERT(cmd_qp_flush, _IOC_NR(NDK_IOCTL_QP_FLUSH) == 0x0d);
ABI_ASSERT(cmd_mr_create, _IOC_NR(NDK_IOCTL_MR_CREATE) == 0x0e);
ABI_ASSERT(cmd_mr_register, _IOC_NR(NDK_IOCTL_MR_REGISTER) == 0x0f);
ABI_ASSERT(cmd_mr_deregister, _IOC_NR(NDK_IOCTL_MR_DEREGISTER) == 0x10);
ABI_ASSERT(cmd_mr_init_fr, _IOC_NR(NDK_IOCTL_MR_INIT_FR) == 0x11);
ABI_ASSERT(cmd_mw_create, _IOC_NR(NDK_IOCTL_MW_CREATE) == 0x12);
ABI_ASSERT(cmd_token_query, _IOC_NR(NDK_IOCTL_TOKEN_QUERY) == 0x13);
ABI_ASSERT(cmd_connector_create, _IOC_NR(NDK_IOCTL_CONNECTOR_CREATE) == 0x14);
ABI_ASSERT(cmd_connect, _IOC_NR(NDK_IOCTL_CONNECT) == 0x15);
ABI_ASSERT(cmd_complete_connect, _IOC_NR(NDK_IOCTL_COMPLETE_CONNECT) == 0x16);
ABI_ASSERT(cmd_accept, _IOC_NR(NDK_IOCTL_ACCEPT) == 0x17);
ABI_ASSERT(cmd_reject, _IOC_NR(NDK_IOCTL_REJECT) == 0x18);
ABI_ASSERT(cmd_disconnect, _IOC_NR(NDK_IOCTL_DISCONNECT) == 0x19);
ABI_ASSERT(cmd_connector_query, _IOC_NR(NDK_IOCTL_CONNECTOR_QUERY) == 0x1a);
ABI_ASSERT(cmd_listener_create, _IOC_NR(NDK_IOCTL_LISTENER_CREATE) == 0x1b);
ABI_ASSERT(cmd_listen, _IOC_NR(NDK_IOCTL_LISTEN) == 0x1c);
ABI_ASSERT(cmd_event_get, _IOC_NR(NDK_IOCTL_EVENT_GET) == 0x1d);
ABI_ASSERT(cmd_qp_doorbell, _IOC_NR(NDK_IOCTL_QP_DOORBELL) == 0x1e);
ABI_ASSERT(qp_post_addr, offsetof(struct ndk_u_qp_post, address) == 56);
ABI_ASSERT(result_type, offsetof(struct ndk_u_result, type) == 24);

int main(void)
{
	printf("uapi layout ok (C, %ld)\n", (long)sizeof(struct ndk_u_adapter_query));
	return 0;
}
