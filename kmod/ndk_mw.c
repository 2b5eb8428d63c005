// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK memory windows (NDK_MW).
 *
 * Linux 6.1 has no memory windows for kernel consumers (ib_alloc_mw and
 * the kernel bind work request were removed in 4.5).  Each NDK window is
 * emulated with its own fast-register MR of the PD, large enough for
 * FRMRPageCount pages; a bind (ndk_fr.c) registers the parent MR's pages
 * of the window's range in it (Documentation/ndk-mapping.md lists what
 * differs from hardware windows).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/slab.h>

#include "ndk_mr.h"

static int ndk_mw_init(struct ndk_obj *obj)
{
	struct ndk_mw *mw = container_of(obj, struct ndk_mw, obj);
	u32 pages = obj->adapter->info.frmr_page_count;
	struct ib_mr *ibmr;
	int ret;

	if (!pages)
		return -EOPNOTSUPP;
	ibmr = ndk_alloc_fr_mr(mw->pd, pages);
	if (IS_ERR(ibmr))
		return PTR_ERR(ibmr);
	ret = ndk_fr_attach(&mw->fr, mw->pd, &mw->ibmr, ibmr, pages, true);
	if (ret)
		ib_dereg_mr(ibmr);
	return ret;
}

static void ndk_mw_destroy(struct ndk_obj *obj)
{
	struct ndk_mw *mw = container_of(obj, struct ndk_mw, obj);

	/* Unbinds: the key dies with the ib_mr, then the MR is let go. */
	ndk_fr_detach(&mw->fr, mw->pd, mw->ibmr);
	kfree(mw);
}

/**
 * ndk_create_mw() - NdkCreateMw
 * @pd:                the PD
 * @create_completion: NULL for a blocking create
 * @request_context:   passed to @create_completion
 * @mw:                receives the window on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INSUFFICIENT_RESOURCES,
 * STATUS_NOT_SUPPORTED (no fast registration on the device),
 * STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_mw(struct ndk_pd *pd,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_mw **mw)
{
	struct ndk_mw *w;

	w = kzalloc(sizeof(*w), ndk_gfp(create_completion));
	if (!w)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&w->obj, NDK_OBJECT_TYPE_MW, &pd->obj, ndk_mw_destroy);
	w->pd = pd;
	ndk_fr_init(&w->fr, &w->obj);
	return ndk_obj_create(&w->obj, ndk_mw_init, create_completion,
			      request_context, (void **)mw);
}
EXPORT_SYMBOL_GPL(ndk_create_mw);

/**
 * ndk_close_mw() - NdkCloseMw
 * @mw:               the window
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_mw(struct ndk_mw *mw, ndk_fn_close_completion close_completion,
		 void *request_context)
{
	return ndk_obj_close(&mw->obj, close_completion, request_context);
}
EXPORT_SYMBOL_GPL(ndk_close_mw);

/**
 * ndk_get_remote_token_from_mw() - NdkGetRemoteTokenFromMw
 * @mw: the window
 *
 * Valid as soon as ndk_bind() returns.  Read from the registration state
 * (the key the last bind published), never from the ib_mr.
 *
 * Context: any.
 * Return: the window's remote token.
 */
u32 ndk_get_remote_token_from_mw(struct ndk_mw *mw)
{
	return ndk_tokens_read(&mw->fr.tokens).rkey;
}
EXPORT_SYMBOL_GPL(ndk_get_remote_token_from_mw);
