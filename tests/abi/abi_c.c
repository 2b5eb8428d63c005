/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Description: the uapi header compiles as strict C (C90 and C11) and its
 * layout is the one the kernel asserts in kmod/ndk_ioctl.c.
 */
#include <stddef.h>
#include <stdio.h>
#include <ndk/ndk_ioctl.h>

#define ABI_ASSERT(name, cond) typedef char abi_assert_##name[(cond) ? 1 : -1]

ABI_ASSERT(qi_size, sizeof(struct ndk_u_query_info) == 24);
ABI_ASSERT(qi_features, offsetof(struct ndk_u_query_info, features) == 8);
ABI_ASSERT(qi_count, offsetof(struct ndk_u_query_info, adapter_count) == 16);
ABI_ASSERT(aq_size, sizeof(struct ndk_u_adapter_query) == 88);
ABI_ASSERT(aq_guid, offsetof(struct ndk_u_adapter_query, node_guid) == 8);
ABI_ASSERT(aq_name, offsetof(struct ndk_u_adapter_query, name) == 24);
ABI_ASSERT(ao_size, sizeof(struct ndk_u_adapter_open) == 16);
ABI_ASSERT(ai_size, sizeof(struct ndk_u_adapter_info) == 8 + 0x68);
ABI_ASSERT(ai_mrs, offsetof(struct ndk_u_adapter_info, max_registration_size) == 8 + 0x10);
ABI_ASSERT(ai_frmr, offsetof(struct ndk_u_adapter_info, frmr_page_count) == 8 + 0x20);
ABI_ASSERT(ai_tech, offsetof(struct ndk_u_adapter_info, rdma_technology) == 8 + 0x60);
ABI_ASSERT(pc_size, sizeof(struct ndk_u_pd_create) == 16);
ABI_ASSERT(mr_size, sizeof(struct ndk_u_mem_register) == 48);
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

int main(void)
{
	printf("uapi layout ok (C, %ld)\n", (long)sizeof(struct ndk_u_adapter_query));
	return 0;
}
