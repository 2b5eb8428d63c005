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
ABI_ASSERT(cmd_qi, _IOC_NR(NDK_IOCTL_QUERY_INFO) == 0);
ABI_ASSERT(cmd_aq, _IOC_NR(NDK_IOCTL_ADAPTER_QUERY) == 1);

int main(void)
{
	printf("uapi layout ok (C, %ld)\n", (long)sizeof(struct ndk_u_adapter_query));
	return 0;
}
