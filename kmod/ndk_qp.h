/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: queue pairs and completion queues, internal interface.
 *
 * The connector (ndk_cm.c) drives a QP's state through rdma_cm with
 * rdma_init_qp_attr() + ib_modify_qp() on @ibqp, and tells the QP when it
 * is connected: initiator requests on a QP that is not connected fail with
 * STATUS_CONNECTION_INVALID and produce no completion.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_QP_H
#define NDK_QP_H

#include "ndk_core.h"

/**
 * struct ndk_qp - NDK_QP (an RC queue pair)
 * @obj:        object base (parent: the PD; also holds both CQs)
 * @ibqp:       the ib_core QP, created with ib_create_qp() on the PD
 * @qp_context: the consumer's QPContext, reported in every NDK_RESULT
 * @connected:  set by the connector once established, cleared on
 *              disconnect; read locklessly on the post path
 */
struct ndk_qp {
	struct ndk_obj obj;
	struct ib_qp *ibqp;
	void *qp_context;
	bool connected;
};

static inline void ndk_qp_set_connected(struct ndk_qp *qp, bool connected)
{
	WRITE_ONCE(qp->connected, connected);
}

#endif /* NDK_QP_H */
