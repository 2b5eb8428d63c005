// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: TEMPORARY stand-in for ndk_create_qp()/ndk_close_qp(),
 * replaced by ndk_qp.c on merge (delete this file and its Kbuild line).
 *
 * It exists only so that the connector scenarios of the cm branch can
 * create QPs: an RC ib_qp on the PD's ib_pd with one private ib_cq for
 * both queues, and nothing else.  The NDK CQs are empty objects (the
 * scenarios create them so that they run unchanged on the real ones);
 * a QP only holds references on them.  There is no data path and no
 * NDK_RESULT.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/slab.h>

#include "ndk_core.h"
#include "ndk_qp.h"

/**
 * struct ndk_cq - the stand-in NDK CQ: an object and nothing else
 * @obj: object base (parent: the adapter)
 */
struct ndk_cq {
	struct ndk_obj obj;
};

/**
 * struct ndk_qp_stub - the stand-in QP
 * @qp:     the QP as the connector sees it
 * @cq:     private CQ for both queues
 * @ndk_cq: the NDK CQs given at creation, referenced (may be NULL)
 * @rdepth: receive queue depth asked for
 * @idepth: initiator queue depth asked for
 */
struct ndk_qp_stub {
	struct ndk_qp qp;
	struct ib_cq *cq;
	struct ndk_cq *ndk_cq[2];
	u32 rdepth;
	u32 idepth;
};

static int ndk_cq_stub_init(struct ndk_obj *obj)
{
	return 0;
}

static void ndk_cq_stub_destroy(struct ndk_obj *obj)
{
	kfree(container_of(obj, struct ndk_cq, obj));
}

/**
 * ndk_create_cq() - TEMPORARY stand-in for NdkCreateCq (see file header)
 * @adapter:              the adapter
 * @cq_depth:             ignored
 * @notification:         ignored, never called
 * @notification_context: ignored
 * @affinity:             ignored
 * @create_completion:    NULL for a blocking create
 * @request_context:      passed to @create_completion
 * @cq:                   receives the CQ on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INSUFFICIENT_RESOURCES,
 * STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_cq(struct ndk_adapter *adapter, u32 cq_depth,
		  ndk_fn_cq_notification_callback notification,
		  void *notification_context, const struct cpumask *affinity,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_cq **cq)
{
	struct ndk_cq *c;

	c = kzalloc(sizeof(*c), ndk_gfp(create_completion));
	if (!c)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&c->obj, NDK_OBJECT_TYPE_CQ, &adapter->obj,
		     ndk_cq_stub_destroy);
	return ndk_obj_create(&c->obj, ndk_cq_stub_init, create_completion,
			      request_context, (void **)cq);
}
EXPORT_SYMBOL_GPL(ndk_create_cq);

/**
 * ndk_close_cq() - TEMPORARY stand-in for NdkCloseCq (see file header)
 * @cq:               the CQ; deferred while a QP holds it
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_cq(struct ndk_cq *cq, ndk_fn_close_completion close_completion,
		 void *request_context)
{
	return ndk_obj_close(&cq->obj, close_completion, request_context);
}
EXPORT_SYMBOL_GPL(ndk_close_cq);

static int ndk_qp_stub_init(struct ndk_obj *obj)
{
	struct ndk_qp_stub *s = container_of(obj, struct ndk_qp_stub, qp.obj);
	struct ndk_pd *pd = container_of(obj->parent, struct ndk_pd, obj);
	struct ib_qp_init_attr attr = {};
	int i;

	s->cq = ib_alloc_cq(ndk_ibdev(obj), NULL, s->rdepth + s->idepth, 0,
			    IB_POLL_DIRECT);
	if (IS_ERR(s->cq))
		return PTR_ERR(s->cq);
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = s->cq;
	attr.recv_cq = s->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = s->idepth;
	attr.cap.max_recv_wr = s->rdepth;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	s->qp.ibqp = ib_create_qp(pd->ibpd, &attr);
	if (IS_ERR(s->qp.ibqp)) {
		ib_free_cq(s->cq);
		return PTR_ERR(s->qp.ibqp);
	}
	for (i = 0; i < 2; i++)
		if (s->ndk_cq[i])
			ndk_obj_get(&s->ndk_cq[i]->obj);
	return 0;
}

static void ndk_qp_stub_destroy(struct ndk_obj *obj)
{
	struct ndk_qp_stub *s = container_of(obj, struct ndk_qp_stub, qp.obj);
	int i;

	ib_destroy_qp(s->qp.ibqp);
	ib_free_cq(s->cq);
	for (i = 0; i < 2; i++)
		if (s->ndk_cq[i])
			ndk_obj_put(&s->ndk_cq[i]->obj);
	kfree(s);
}

/**
 * ndk_create_qp() - TEMPORARY stand-in for NdkCreateQp (see file header)
 * @pd:                        the PD
 * @receive_cq:                referenced, otherwise unused; may be NULL
 * @initiator_cq:              referenced, otherwise unused; may be NULL
 * @qp_context:                kept in the QP
 * @receive_queue_depth:       receive queue depth (at least 1)
 * @initiator_queue_depth:     initiator queue depth (at least 1)
 * @max_receive_request_sge:   ignored (1)
 * @max_initiator_request_sge: ignored (1)
 * @inline_data_size:          ignored (0)
 * @create_completion:         NULL for a blocking create
 * @request_context:           passed to @create_completion
 * @qp:                        receives the QP on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INSUFFICIENT_RESOURCES,
 * STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_qp(struct ndk_pd *pd, struct ndk_cq *receive_cq,
		  struct ndk_cq *initiator_cq, void *qp_context,
		  u32 receive_queue_depth, u32 initiator_queue_depth,
		  u32 max_receive_request_sge, u32 max_initiator_request_sge,
		  u32 inline_data_size,
		  ndk_fn_create_completion create_completion,
		  void *request_context, struct ndk_qp **qp)
{
	struct ndk_qp_stub *s;

	s = kzalloc(sizeof(*s), ndk_gfp(create_completion));
	if (!s)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&s->qp.obj, NDK_OBJECT_TYPE_QP, &pd->obj,
		     ndk_qp_stub_destroy);
	s->qp.qp_context = qp_context;
	s->rdepth = max(receive_queue_depth, 1U);
	s->idepth = max(initiator_queue_depth, 1U);
	s->ndk_cq[0] = receive_cq;
	s->ndk_cq[1] = initiator_cq;
	return ndk_obj_create(&s->qp.obj, ndk_qp_stub_init, create_completion,
			      request_context, (void **)qp);
}
EXPORT_SYMBOL_GPL(ndk_create_qp);

/**
 * ndk_close_qp() - TEMPORARY stand-in for NdkCloseQp (see file header)
 * @qp:               the QP; deferred while a connector holds it
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_qp(struct ndk_qp *qp, ndk_fn_close_completion close_completion,
		 void *request_context)
{
	return ndk_obj_close(&qp->obj, close_completion, request_context);
}
EXPORT_SYMBOL_GPL(ndk_close_qp);
