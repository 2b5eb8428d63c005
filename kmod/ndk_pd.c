// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK protection domains (NDK_PD) over ib_pd.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/slab.h>

#include "ndk_mr.h"

static int ndk_pd_init(struct ndk_obj *obj)
{
	struct ndk_pd *pd = container_of(obj, struct ndk_pd, obj);

	mutex_init(&pd->reg_lock);
	xa_init_flags(&pd->frs, XA_FLAGS_LOCK_IRQ);
	ndk_fr_kills_init(pd);
	pd->ibpd = ib_alloc_pd(ndk_ibdev(obj), 0);
	return PTR_ERR_OR_ZERO(pd->ibpd);
}

static void ndk_pd_destroy(struct ndk_obj *obj)
{
	struct ndk_pd *pd = container_of(obj, struct ndk_pd, obj);

	ndk_reg_destroy(pd);
	WARN_ON(!xa_empty(&pd->frs));
	xa_destroy(&pd->frs);
	ib_dealloc_pd(pd->ibpd);
	kfree(pd);
}

/**
 * ndk_create_pd() - NdkCreatePd
 * @adapter:           the adapter
 * @create_completion: NULL for a blocking create
 * @request_context:   passed to @create_completion
 * @pd:                receives the PD on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INSUFFICIENT_RESOURCES,
 * STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_pd(struct ndk_adapter *adapter,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_pd **pd)
{
	struct ndk_pd *p;

	p = kzalloc(sizeof(*p), ndk_gfp(create_completion));
	if (!p)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&p->obj, NDK_OBJECT_TYPE_PD, &adapter->obj, ndk_pd_destroy);
	return ndk_obj_create(&p->obj, ndk_pd_init, create_completion,
			      request_context, (void **)pd);
}
EXPORT_SYMBOL_GPL(ndk_create_pd);

/**
 * ndk_close_pd() - NdkClosePd
 * @pd:               the PD; deferred until its QPs, MRs and MWs are closed
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_pd(struct ndk_pd *pd, ndk_fn_close_completion close_completion,
		 void *request_context)
{
	return ndk_obj_close(&pd->obj, close_completion, request_context);
}
EXPORT_SYMBOL_GPL(ndk_close_pd);
