// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: completion queue and queue pair scenarios.
 *
 * Without a connector every QP here is unconnected: receives can be
 * posted (the QP is in INIT), initiator requests fail with
 * STATUS_CONNECTION_INVALID, and completions come from flushes (real
 * IB_WC_WR_FLUSH_ERR completions of the device, or the software ones of
 * requests posted after a flush) and from closes.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "ndk_test.h"

/* How long a scenario waits for something that must happen. */
/* How long it watches for something that must not happen. */
#define NDK_T_QUIET_MS		300

/* An adapter, its info and a PD: what every scenario here starts with. */
struct ndk_t_base {
	struct ndk_adapter *adapter;
	struct ndk_adapter_info info;
	struct ndk_pd *pd;
};

/* Records notification callbacks. */
struct ndk_t_notify {
	atomic_t calls;
	s32 status;
};

/* Buffers the SGEs point at (the posts here never move data). */
static u8 ndk_t_buf[4096];

static void ndk_t_notified(void *context, s32 status)
{
	struct ndk_t_notify *n = context;

	WRITE_ONCE(n->status, status);
	atomic_inc(&n->calls);
}

static void ndk_t_notify_init(struct ndk_t_notify *n)
{
	atomic_set(&n->calls, 0);
	n->status = STATUS_PENDING;
}

/* Wait until @n has been called @calls times; false on timeout. */
static bool ndk_t_wait_notify(struct ndk_t_notify *n, int calls)
{
	unsigned long deadline = jiffies + NDK_T_TIMEOUT;

	while (atomic_read(&n->calls) < calls) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(5000, 10000);
	}
	return true;
}

static int ndk_t_open(struct ndk_test_env *env, struct ndk_t_base *b)
{
	u32 size = sizeof(b->info);

	memset(b, 0, sizeof(*b));
	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &b->adapter)) {
		ndk_test_log("cannot open %s", env->adapter_name);
		return -ENODEV;
	}
	if (ndk_query_adapter_info(b->adapter, &b->info, &size) ||
	    ndk_create_pd(b->adapter, NULL, NULL, &b->pd)) {
		ndk_test_log("cannot query %s or create a PD",
			     env->adapter_name);
		ndk_close_adapter(b->adapter);
		return -ENODEV;
	}
	return 0;
}

static void ndk_t_close_base(struct ndk_t_base *b)
{
	if (b->pd)
		ndk_close_pd(b->pd, NULL, NULL);
	ndk_close_adapter(b->adapter);
}

static struct ndk_cq *ndk_t_cq(struct ndk_test_env *env, struct ndk_t_base *b,
			       u32 depth, struct ndk_t_notify *n)
{
	struct ndk_cq *cq = NULL;

	NDK_T_STATUS(env, ndk_create_cq(b->adapter, depth,
					n ? ndk_t_notified : NULL, n, NULL,
					NULL, NULL, &cq), STATUS_SUCCESS);
	return cq;
}

static struct ndk_qp *ndk_t_qp(struct ndk_test_env *env, struct ndk_t_base *b,
			       struct ndk_cq *rcq, struct ndk_cq *scq,
			       void *qp_context, u32 depth)
{
	struct ndk_qp *qp = NULL;

	NDK_T_STATUS(env, ndk_create_qp(b->pd, rcq, scq, qp_context, depth,
					depth, 2, 2, 0, NULL, NULL, &qp),
		     STATUS_SUCCESS);
	return qp;
}

static void ndk_t_sge(struct ndk_sge *sge, u32 offset, u32 length)
{
	sge->virtual_address = ndk_t_buf + offset;
	sge->length = length;
	sge->memory_region_token = 0;
}

/*
 * Poll @cq until @want results came (or the timeout), then a little
 * longer to catch extra ones.  Returns how many @res holds (up to @max).
 */
static u32 ndk_t_collect(struct ndk_cq *cq, struct ndk_result_ex *res,
			 u32 want, u32 max)
{
	unsigned long deadline = jiffies + NDK_T_TIMEOUT;
	u32 n = 0;

	while (n < want && time_before(jiffies, deadline)) {
		n += ndk_get_cq_results_ex(cq, res + n, max - n);
		if (n < want)
			usleep_range(5000, 10000);
	}
	msleep(50);
	n += ndk_get_cq_results_ex(cq, res + n, max - n);
	return n;
}

/* Nothing may arrive on @cq, nor a notification on @n, for a while. */
static void ndk_t_quiet(struct ndk_test_env *env, struct ndk_cq *cq,
			struct ndk_t_notify *n, int calls)
{
	struct ndk_result_ex res;

	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, ndk_get_cq_results_ex(cq, &res, 1) == 0);
	if (n)
		NDK_T_CHECK(env, atomic_read(&n->calls) == calls);
}

/* Post @count receives with contexts &ctx[0..count-1]. */
static void ndk_t_receives(struct ndk_test_env *env, struct ndk_qp *qp,
			   int *ctx, int count)
{
	struct ndk_sge sge;
	int i;

	ndk_t_sge(&sge, 0, 256);
	for (i = 0; i < count; i++)
		NDK_T_STATUS(env, ndk_receive(qp, &ctx[i], &sge, 1),
			     STATUS_SUCCESS);
}

/* @n results of flushed receives, with these contexts in this order. */
static void ndk_t_check_cancelled(struct ndk_test_env *env,
				  const struct ndk_result_ex *res, u32 n,
				  void *qp_context, int *ctx)
{
	u32 i;

	for (i = 0; i < n; i++) {
		NDK_T_STATUS(env, res[i].status, STATUS_CANCELLED);
		NDK_T_CHECK(env, res[i].qp_context == qp_context);
		NDK_T_CHECK(env, res[i].request_context == &ctx[i]);
		NDK_T_CHECK(env, res[i].type == NDK_OPERATION_TYPE_RECEIVE);
		NDK_T_CHECK(env, res[i].bytes_transferred == 0);
		NDK_T_CHECK(env, res[i].type_specific_completion_output == 0);
	}
}

/* --- CQ ------------------------------------------------------------------ */

static int ndk_t_cq_sync(struct ndk_test_env *env)
{
	struct ndk_object_header *hdr;
	struct ndk_result res[2];
	struct ndk_t_notify n;
	struct ndk_t_base b;
	struct ndk_cq *cq;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_notify_init(&n);
	cq = ndk_t_cq(env, &b, 16, &n);
	if (cq) {
		hdr = (struct ndk_object_header *)cq;
		NDK_T_CHECK(env, hdr->object_type == NDK_OBJECT_TYPE_CQ);
		NDK_T_CHECK(env, hdr->version.major == 1);
		NDK_T_CHECK(env, hdr->version.minor == 2);
		NDK_T_CHECK(env, ndk_get_cq_results(cq, res, 2) == 0);
		/* Armed and empty: no notification. */
		ndk_arm_cq(cq, NDK_CQ_NOTIFY_ANY);
		ndk_arm_cq(cq, 77);	/* unknown type: ignored */
		ndk_t_quiet(env, cq, &n, 0);
		NDK_T_STATUS(env, ndk_close_cq(cq, NULL, NULL), STATUS_SUCCESS);
	}
	ndk_t_close_base(&b);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 0);
	return NDK_TEST_PASS;
}

static int ndk_t_cq_async(struct ndk_test_env *env)
{
	struct ndk_cq *cq = (struct ndk_cq *)0x1;
	struct ndk_t_wait c;
	struct ndk_t_base b;
	struct ndk_t_wait r;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_wait_init(&c);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_create_cq(b.adapter, 32, NULL, NULL,
					cpu_online_mask, ndk_t_created, &r,
					&cq), STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_STATUS(env, r.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, cq == (struct ndk_cq *)0x1);
	NDK_T_CHECK(env, r.object);
	NDK_T_CHECK(env, !r.object || r.object->object_type == NDK_OBJECT_TYPE_CQ);
	if (r.object) {
		cq = ndk_to_cq(r.object);
		NDK_T_STATUS(env, ndk_close_cq(cq, ndk_t_closed, &c),
			     STATUS_PENDING);
		NDK_T_CHECK(env, ndk_t_wait(&c));
	}

	/* An inline failure never calls the completion. */
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_create_cq(b.adapter, b.info.max_cq_depth + 1,
					NULL, NULL, NULL, ndk_t_created, &r,
					&cq), STATUS_INVALID_PARAMETER);
	ndk_t_close_base(&b);
	/* The adapter close returned: every callback has run. */
	NDK_T_CHECK(env, atomic_read(&c.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&r.calls) == 0);
	return NDK_TEST_PASS;
}

static int ndk_t_cq_limits(struct ndk_test_env *env)
{
	struct ndk_cq *cq = NULL;
	struct ndk_t_base b;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_test_log("max_cq_depth=%u", b.info.max_cq_depth);
	NDK_T_CHECK(env, b.info.max_cq_depth > 0);
	NDK_T_STATUS(env, ndk_create_cq(b.adapter, 0, NULL, NULL, NULL, NULL,
					NULL, &cq), STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_cq(b.adapter, b.info.max_cq_depth + 1,
					NULL, NULL, NULL, NULL, NULL, &cq),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_cq(b.adapter, U32_MAX, NULL, NULL, NULL,
					NULL, NULL, &cq),
		     STATUS_INVALID_PARAMETER);
	NDK_T_CHECK(env, !cq);
	/* The limit itself is accepted. */
	NDK_T_STATUS(env, ndk_create_cq(b.adapter, b.info.max_cq_depth, NULL,
					NULL, NULL, NULL, NULL, &cq),
		     STATUS_SUCCESS);
	if (cq)
		ndk_close_cq(cq, NULL, NULL);
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

static int ndk_t_cq_resize(struct ndk_test_env *env)
{
	struct ndk_result_ex res[24];
	struct ndk_t_notify n;
	struct ndk_t_base b;
	struct ndk_t_wait r;
	struct ndk_cq *cq;
	struct ndk_qp *qp;
	int ctx[20];
	u32 got;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_notify_init(&n);
	cq = ndk_t_cq(env, &b, 16, &n);
	if (!cq)
		goto out_close;

	if (!(b.info.adapter_flags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) {
		NDK_T_STATUS(env, ndk_resize_cq(cq, 32, NULL, NULL),
			     STATUS_NOT_SUPPORTED);
		ndk_test_log("the device has no resize_cq: STATUS_NOT_SUPPORTED");
		goto out_close_cq;
	}
	NDK_T_STATUS(env, ndk_resize_cq(cq, 0, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_resize_cq(cq, b.info.max_cq_depth + 1, NULL,
					NULL), STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_resize_cq(cq, 64, NULL, NULL), STATUS_SUCCESS);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_resize_cq(cq, 128, ndk_t_requested, &r),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_STATUS(env, r.status, STATUS_SUCCESS);

	/* With 20 completions in it, the CQ cannot shrink to 8. */
	qp = ndk_t_qp(env, &b, cq, cq, &b, 32);
	if (!qp)
		goto out_close_cq;
	ndk_t_receives(env, qp, ctx, 20);
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ANY);
	ndk_flush(qp);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 1));
	msleep(NDK_T_QUIET_MS);	/* let the device flush all 20 */
	NDK_T_STATUS(env, ndk_resize_cq(cq, 8, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	got = ndk_t_collect(cq, res, 20, ARRAY_SIZE(res));
	NDK_T_CHECK(env, got == 20);
	ndk_t_check_cancelled(env, res, min(got, 20U), &b, ctx);
	/* Empty now: it can. */
	NDK_T_STATUS(env, ndk_resize_cq(cq, 8, NULL, NULL), STATUS_SUCCESS);
	ndk_close_qp(qp, NULL, NULL);
out_close_cq:
	ndk_close_cq(cq, NULL, NULL);
out_close:
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

/* A CQ whose resize completion closes it, blocking. */
struct ndk_t_resize_close {
	struct ndk_cq *cq;
	struct ndk_t_wait w;
};

static void ndk_t_resized_close(void *context, s32 status)
{
	struct ndk_t_resize_close *rc = context;

	/* Process context (ndk_wq): a blocking close may run here. */
	ndk_close_cq(rc->cq, NULL, NULL);
	ndk_t_requested(&rc->w, status);
}

#define NDK_T_RC_ROUNDS	16

/*
 * No completion of a CQ's asynchronous resize runs after a blocking
 * ndk_close_cq() has returned: two resizes queued right before the close
 * have both completed when it returns, in each of 16 rounds.  Before,
 * the close returned while they were still queued (their references only
 * delayed the free).  A resize's completion may itself close its CQ,
 * blocking: it does not wait for itself.
 */
static int ndk_t_cq_resize_close(struct ndk_test_env *env)
{
	struct ndk_t_resize_close rc;
	struct ndk_t_wait r[2];
	struct ndk_t_base b;
	u32 round, i, late = 0;
	struct ndk_cq *cq;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	if (!(b.info.adapter_flags & NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) {
		ndk_test_log("the device has no resize_cq: nothing to test");
		goto out_close;
	}
	for (round = 0; round < NDK_T_RC_ROUNDS && !env->failures; round++) {
		cq = ndk_t_cq(env, &b, 16, NULL);
		if (!cq)
			break;
		for (i = 0; i < 2; i++) {
			ndk_t_wait_init(&r[i]);
			NDK_T_STATUS(env, ndk_resize_cq(cq, 32 << i,
							ndk_t_requested, &r[i]),
				     STATUS_PENDING);
		}
		NDK_T_STATUS(env, ndk_close_cq(cq, NULL, NULL), STATUS_SUCCESS);
		for (i = 0; i < 2; i++) {
			late += atomic_read(&r[i].calls) != 1;
			/* @r is reused: let a late completion finish. */
			NDK_T_CHECK(env, ndk_t_wait(&r[i]));
			NDK_T_STATUS(env, r[i].status, STATUS_SUCCESS);
		}
	}
	ndk_test_log("%u rounds: %u resize completions came after the close",
		     round, late);
	NDK_T_CHECK(env, !late);

	rc.cq = ndk_t_cq(env, &b, 16, NULL);
	if (rc.cq) {
		ndk_t_wait_init(&rc.w);
		NDK_T_STATUS(env, ndk_resize_cq(rc.cq, 32, ndk_t_resized_close,
						&rc), STATUS_PENDING);
		NDK_T_CHECK(env, ndk_t_wait(&rc.w));
		NDK_T_STATUS(env, rc.w.status, STATUS_SUCCESS);
	}
out_close:
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

static int ndk_t_cq_moderation(struct ndk_test_env *env)
{
	struct ndk_t_base b;
	struct ndk_cq *cq;
	bool supported;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	supported = b.info.adapter_flags &
		    NDK_ADAPTER_FLAG_CQ_INTERRUPT_MODERATION_SUPPORTED;
	cq = ndk_t_cq(env, &b, 16, NULL);
	if (cq && supported) {
		NDK_T_STATUS(env, ndk_control_cq_interrupt_moderation(cq, 10, 4),
			     STATUS_SUCCESS);
		NDK_T_STATUS(env, ndk_control_cq_interrupt_moderation(cq, 70000, 4),
			     STATUS_INVALID_PARAMETER);
		ndk_test_log("interrupt moderation: supported");
	} else if (cq) {
		NDK_T_STATUS(env, ndk_control_cq_interrupt_moderation(cq, 10, 4),
			     STATUS_NOT_SUPPORTED);
		NDK_T_STATUS(env, ndk_control_cq_interrupt_moderation(cq, 0, 0),
			     STATUS_NOT_SUPPORTED);
		ndk_test_log("interrupt moderation: STATUS_NOT_SUPPORTED");
		ndk_test_log("(the adapter flags agree: %s has no modify_cq)",
			     env->adapter_name);
	}
	if (cq)
		ndk_close_cq(cq, NULL, NULL);
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

/*
 * Arm types and their merge, once-per-arm, satisfying an arm at once when
 * results wait, through both the device's notifications and the
 * software queue's.
 */
static int ndk_t_cq_arm(struct ndk_test_env *env)
{
	struct ndk_result_ex res[8];
	struct ndk_qp *qp1, *qp2;
	struct ndk_t_notify n;
	struct ndk_t_base b;
	struct ndk_cq *cq;
	struct ndk_sge sge;
	int ctx[8];
	u32 got;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_notify_init(&n);
	ndk_t_sge(&sge, 0, 64);
	cq = ndk_t_cq(env, &b, 64, &n);
	if (!cq)
		goto out_close;
	qp1 = ndk_t_qp(env, &b, cq, cq, &qp1, 8);
	qp2 = ndk_t_qp(env, &b, cq, cq, &qp2, 8);
	if (!qp1 || !qp2)
		goto out_close_qps;

	/* ANY: the device's completion handler notifies. */
	ndk_t_receives(env, qp1, ctx, 2);
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ANY);
	ndk_t_quiet(env, cq, &n, 0);
	ndk_flush(qp1);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 1));
	NDK_T_STATUS(env, n.status, STATUS_SUCCESS);
	got = ndk_t_collect(cq, res, 2, ARRAY_SIZE(res));
	NDK_T_CHECK(env, got == 2);
	ndk_t_check_cancelled(env, res, min(got, 2U), &qp1, ctx);
	/* Once per arm: more results, no second notification. */
	NDK_T_STATUS(env, ndk_receive(qp1, &ctx[2], &sge, 1), STATUS_SUCCESS);
	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 1);
	/* Re-armed while a result waits: satisfied at once. */
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ANY);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 2));
	NDK_T_CHECK(env, ndk_t_collect(cq, res, 1, ARRAY_SIZE(res)) == 1);
	NDK_T_CHECK(env, res[0].request_context == &ctx[2]);

	/* ERRORS: completions do not satisfy it... */
	ndk_t_receives(env, qp2, ctx, 3);
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ERRORS);
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ERRORS);
	ndk_flush(qp2);
	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 2);
	/* ...ERRORS + SOLICITED = SOLICITED, with results waiting: at once. */
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_SOLICITED);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 3));
	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 3);
	got = ndk_t_collect(cq, res, 3, ARRAY_SIZE(res));
	NDK_T_CHECK(env, got == 3);
	ndk_t_check_cancelled(env, res, min(got, 3U), &qp2, ctx);

	/* ANY + ERRORS stays ANY: a software completion notifies. */
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ANY);
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ERRORS);
	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 3);
	NDK_T_STATUS(env, ndk_receive(qp2, &ctx[4], &sge, 1), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 4));
	NDK_T_CHECK(env, ndk_t_collect(cq, res, 1, ARRAY_SIZE(res)) == 1);
	NDK_T_STATUS(env, res[0].status, STATUS_CANCELLED);
	NDK_T_CHECK(env, res[0].qp_context == &qp2);

	/* SOLICITED alone: a flushed (failed) receive matches it. */
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_SOLICITED);
	NDK_T_STATUS(env, ndk_receive(qp2, &ctx[5], &sge, 1), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 5));
	NDK_T_CHECK(env, ndk_t_collect(cq, res, 1, ARRAY_SIZE(res)) == 1);
	ndk_t_quiet(env, cq, &n, 5);
out_close_qps:
	if (qp1)
		ndk_close_qp(qp1, NULL, NULL);
	if (qp2)
		ndk_close_qp(qp2, NULL, NULL);
	ndk_close_cq(cq, NULL, NULL);
out_close:
	ndk_t_close_base(&b);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 5);
	return NDK_TEST_PASS;
}

/* A notification callback that closes its own CQ, blocking. */
struct ndk_t_self_close {
	struct ndk_cq *cq;
	struct completion done;
	s32 status;
};

static void ndk_t_close_self(void *context, s32 status)
{
	struct ndk_t_self_close *c = context;

	c->status = ndk_close_cq(c->cq, NULL, NULL);
	complete(&c->done);
}

/*
 * A blocking ndk_close_cq() from the CQ's own work-delivered callback,
 * dropping its last reference (its QP is gone): the call returns, and the
 * teardown, which waits for that callback's work, runs after it on
 * ndk_wq.  Run inline, the teardown waited for its own work for ever.
 */
static int ndk_t_cq_close_in_callback(struct ndk_test_env *env)
{
	struct ndk_t_self_close c = { .status = STATUS_PENDING };
	struct ndk_t_base b;
	struct ndk_qp *qp;
	int ctx[1];

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	init_completion(&c.done);
	NDK_T_STATUS(env, ndk_create_cq(b.adapter, 8, ndk_t_close_self, &c,
					NULL, NULL, NULL, &c.cq),
		     STATUS_SUCCESS);
	if (!c.cq)
		goto out_close;
	qp = ndk_t_qp(env, &b, c.cq, c.cq, &qp, 4);
	if (!qp) {
		ndk_close_cq(c.cq, NULL, NULL);
		goto out_close;
	}
	/* A flushed receive leaves a result; the QP's close drops its hold. */
	ndk_t_receives(env, qp, ctx, 1);
	NDK_T_STATUS(env, ndk_close_qp(qp, NULL, NULL), STATUS_SUCCESS);
	/* The result is waiting: the arm is satisfied at once. */
	ndk_arm_cq(c.cq, NDK_CQ_NOTIFY_ANY);
	NDK_T_CHECK(env, wait_for_completion_timeout(&c.done, NDK_T_TIMEOUT));
	NDK_T_STATUS(env, c.status, STATUS_SUCCESS);
out_close:
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

/*
 * A CQ smaller than its QP's queues cannot overrun: each request reserves
 * room for its result, and a post beyond the CQ's depth fails inline with
 * STATUS_INSUFFICIENT_RESOURCES.  A flush completes every request the CQ
 * took, an ERRORS arm sees no overrun, and the room comes back as the
 * results are polled.
 */
static int ndk_t_cq_overrun(struct ndk_test_env *env)
{
	struct ndk_result_ex res[32];
	struct ndk_t_notify n;
	struct ndk_t_base b;
	struct ndk_sge sge;
	struct ndk_cq *cq;
	struct ndk_qp *qp;
	int ctx[32];
	u32 got;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_notify_init(&n);
	ndk_t_sge(&sge, 0, 256);
	cq = ndk_t_cq(env, &b, 2, &n);
	if (!cq)
		goto out_close;
	qp = ndk_t_qp(env, &b, cq, cq, &b, 32);
	if (!qp)
		goto out_close_cq;
	ndk_t_receives(env, qp, ctx, 2);
	/* The QP's queue has room, its CQ has not. */
	NDK_T_STATUS(env, ndk_receive(qp, &ctx[2], &sge, 1),
		     STATUS_INSUFFICIENT_RESOURCES);
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ERRORS);
	ndk_flush(qp);
	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 0);
	got = ndk_t_collect(cq, res, 2, ARRAY_SIZE(res));
	NDK_T_CHECK(env, got == 2);
	ndk_t_check_cancelled(env, res, min(got, 2U), &b, ctx);
	/* Polled: the room is back (a flushed QP completes it in software). */
	ndk_t_receives(env, qp, ctx, 2);
	NDK_T_STATUS(env, ndk_close_qp(qp, NULL, NULL), STATUS_SUCCESS);
	got = ndk_t_collect(cq, res, 2, ARRAY_SIZE(res));
	NDK_T_CHECK(env, got == 2);
	NDK_T_CHECK(env, atomic_read(&n.calls) == 0);
out_close_cq:
	ndk_close_cq(cq, NULL, NULL);
out_close:
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

/* --- QP lifetime ----------------------------------------------------------- */

static int ndk_t_qp_sync(struct ndk_test_env *env)
{
	struct ndk_object_header *hdr;
	struct ndk_cq *rcq, *scq;
	struct ndk_t_base b;
	struct ndk_qp *qp;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	rcq = ndk_t_cq(env, &b, 16, NULL);
	scq = ndk_t_cq(env, &b, 16, NULL);
	if (!rcq || !scq)
		goto out_close_cqs;
	/* Separate CQs, then one CQ for both queues. */
	qp = ndk_t_qp(env, &b, rcq, scq, &b, 8);
	if (qp) {
		hdr = (struct ndk_object_header *)qp;
		NDK_T_CHECK(env, hdr->object_type == NDK_OBJECT_TYPE_QP);
		NDK_T_CHECK(env, hdr->version.major == 1);
		NDK_T_CHECK(env, hdr->version.minor == 2);
		NDK_T_STATUS(env, ndk_close_qp(qp, NULL, NULL), STATUS_SUCCESS);
	}
	qp = ndk_t_qp(env, &b, rcq, rcq, &b, 8);
	if (qp)
		NDK_T_STATUS(env, ndk_close_qp(qp, NULL, NULL), STATUS_SUCCESS);
out_close_cqs:
	if (rcq)
		NDK_T_STATUS(env, ndk_close_cq(rcq, NULL, NULL), STATUS_SUCCESS);
	if (scq)
		NDK_T_STATUS(env, ndk_close_cq(scq, NULL, NULL), STATUS_SUCCESS);
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

static int ndk_t_qp_async(struct ndk_test_env *env)
{
	struct ndk_qp *qp = (struct ndk_qp *)0x1;
	struct ndk_t_wait c;
	struct ndk_t_base b;
	struct ndk_t_wait r;
	struct ndk_cq *cq;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_wait_init(&c);
	cq = ndk_t_cq(env, &b, 16, NULL);
	if (!cq)
		goto out_close;
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, &b, 8, 8, 1, 1, 0,
					ndk_t_created, &r, &qp),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_STATUS(env, r.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, qp == (struct ndk_qp *)0x1);
	NDK_T_CHECK(env, r.object);
	NDK_T_CHECK(env, !r.object || r.object->object_type == NDK_OBJECT_TYPE_QP);
	NDK_T_CHECK(env, atomic_read(&r.calls) == 1);
	if (r.object) {
		qp = ndk_to_qp(r.object);
		NDK_T_STATUS(env, ndk_close_qp(qp, ndk_t_closed, &c),
			     STATUS_PENDING);
		NDK_T_CHECK(env, ndk_t_wait(&c));
	}
	ndk_close_cq(cq, NULL, NULL);
out_close:
	ndk_t_close_base(&b);
	NDK_T_CHECK(env, atomic_read(&c.calls) == 1);
	return NDK_TEST_PASS;
}

/*
 * CQs and the PD closed while a QP uses them: their closes are deferred
 * until the QP's close has completed, and their callbacks follow its.
 */
static int ndk_t_qp_close_order(struct ndk_test_env *env)
{
	struct ndk_t_wait cr, cs, cp, cq1, cc, cq2;
	struct ndk_cq *rcq, *scq, *cq;
	struct ndk_qp *qp1, *qp2;
	struct ndk_t_base b;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_wait_init(&cr);
	ndk_t_wait_init(&cs);
	ndk_t_wait_init(&cp);
	ndk_t_wait_init(&cq1);
	ndk_t_wait_init(&cc);
	ndk_t_wait_init(&cq2);
	rcq = ndk_t_cq(env, &b, 16, NULL);
	scq = ndk_t_cq(env, &b, 16, NULL);
	cq = ndk_t_cq(env, &b, 16, NULL);
	qp1 = rcq && scq ? ndk_t_qp(env, &b, rcq, scq, &b, 8) : NULL;
	qp2 = cq ? ndk_t_qp(env, &b, cq, cq, &b, 8) : NULL;
	if (!qp1 || !qp2) {
		ndk_test_log("setup failed");
		return NDK_TEST_FAIL;	/* leaks: the run fails anyway */
	}

	/* Antecedents first: all deferred. */
	NDK_T_STATUS(env, ndk_close_cq(rcq, ndk_t_closed, &cr), STATUS_PENDING);
	NDK_T_STATUS(env, ndk_close_cq(scq, ndk_t_closed, &cs), STATUS_PENDING);
	NDK_T_STATUS(env, ndk_close_pd(b.pd, ndk_t_closed, &cp),
		     STATUS_PENDING);
	b.pd = NULL;
	/* A blocking close of a CQ in use returns; the CQ lives on. */
	NDK_T_STATUS(env, ndk_close_cq(cq, NULL, NULL), STATUS_SUCCESS);
	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, atomic_read(&cr.calls) == 0);
	NDK_T_CHECK(env, atomic_read(&cs.calls) == 0);
	NDK_T_CHECK(env, atomic_read(&cp.calls) == 0);
	/* The QPs still work. */
	NDK_T_STATUS(env, ndk_receive(qp1, NULL, NULL, 0), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_receive(qp2, NULL, NULL, 0), STATUS_SUCCESS);

	NDK_T_STATUS(env, ndk_close_qp(qp1, ndk_t_closed, &cq1),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&cq1));
	NDK_T_CHECK(env, ndk_t_wait(&cr));
	NDK_T_CHECK(env, ndk_t_wait(&cs));
	NDK_T_CHECK(env, cq1.seq < cr.seq && cq1.seq < cs.seq);
	/* qp2 still holds the PD. */
	msleep(NDK_T_QUIET_MS);
	NDK_T_CHECK(env, atomic_read(&cp.calls) == 0);
	NDK_T_STATUS(env, ndk_close_qp(qp2, ndk_t_closed, &cq2),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&cq2));
	NDK_T_CHECK(env, ndk_t_wait(&cp));
	NDK_T_CHECK(env, cq2.seq < cp.seq);
	ndk_test_log("close order: qp1 %d, its CQs %d %d; qp2 %d, PD %d",
		     cq1.seq, cr.seq, cs.seq, cq2.seq, cp.seq);
	ndk_t_close_base(&b);
	NDK_T_CHECK(env, atomic_read(&cr.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&cs.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&cp.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&cq1.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&cq2.calls) == 1);
	return NDK_TEST_PASS;
}

static int ndk_t_qp_limits(struct ndk_test_env *env)
{
	struct ndk_qp *qp = NULL;
	struct ndk_adapter_info *i;
	struct ndk_t_base b;
	struct ndk_t_wait r;
	struct ndk_cq *cq;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	i = &b.info;
	ndk_test_log("limits: rq %u sq %u rsge %u isge %u readsge %u inline %u",
		     i->max_receive_queue_depth, i->max_initiator_queue_depth,
		     i->max_receive_request_sge, i->max_initiator_request_sge,
		     i->max_read_request_sge, i->max_inline_data_size);
	cq = ndk_t_cq(env, &b, 64, NULL);
	if (!cq)
		goto out_close;
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, NULL,
					i->max_receive_queue_depth + 1, 8,
					1, 1, 0, NULL, NULL, &qp),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, NULL, 8,
					i->max_initiator_queue_depth + 1,
					1, 1, 0, NULL, NULL, &qp),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, NULL, 8, 8,
					i->max_receive_request_sge + 1, 1, 0,
					NULL, NULL, &qp),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, NULL, 8, 8, 1,
					i->max_initiator_request_sge + 1, 0,
					NULL, NULL, &qp),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, NULL, 8, 8, 1, 1,
					i->max_inline_data_size + 1,
					NULL, NULL, &qp),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, NULL, cq, NULL, 8, 8, 1, 1, 0,
					NULL, NULL, &qp),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, NULL, NULL, 8, 8, 1, 1, 0,
					NULL, NULL, &qp),
		     STATUS_INVALID_PARAMETER);
	/* Inline even with a completion, which is never called. */
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, NULL, 8, 8, 1, 1,
					i->max_inline_data_size + 1,
					ndk_t_created, &r, &qp),
		     STATUS_INVALID_PARAMETER);
	NDK_T_CHECK(env, !qp);
	/* Every limit at once is accepted. */
	NDK_T_STATUS(env, ndk_create_qp(b.pd, cq, cq, NULL, 16, 16,
					i->max_receive_request_sge,
					i->max_initiator_request_sge,
					i->max_inline_data_size,
					NULL, NULL, &qp), STATUS_SUCCESS);
	if (qp)
		ndk_close_qp(qp, NULL, NULL);
	ndk_close_cq(cq, NULL, NULL);
out_close:
	ndk_t_close_base(&b);
	NDK_T_CHECK(env, atomic_read(&r.calls) == 0);
	return NDK_TEST_PASS;
}

/* --- Posting ------------------------------------------------------------ */

/*
 * Initiator requests on an unconnected QP fail inline with
 * STATUS_CONNECTION_INVALID and never complete: no result, no
 * notification, not even after a flush (deferred ones were not queued).
 */
static int ndk_t_qp_unconnected(struct ndk_test_env *env)
{
	static const u32 flags[] = {
		0, NDK_OP_FLAG_SILENT_SUCCESS, NDK_OP_FLAG_DEFER,
		NDK_OP_FLAG_DEFER | NDK_OP_FLAG_SILENT_SUCCESS,
		NDK_OP_FLAG_READ_FENCE,
	};
	struct ndk_t_notify nr, ns;
	struct ndk_cq *rcq, *scq;
	struct ndk_sge sge[2];
	struct ndk_t_base b;
	struct ndk_qp *qp;
	int i;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_notify_init(&nr);
	ndk_t_notify_init(&ns);
	ndk_t_sge(&sge[0], 0, 128);
	ndk_t_sge(&sge[1], 128, 128);
	rcq = ndk_t_cq(env, &b, 32, &nr);
	scq = ndk_t_cq(env, &b, 32, &ns);
	qp = rcq && scq ? ndk_t_qp(env, &b, rcq, scq, &b, 16) : NULL;
	if (!qp)
		goto out_close_cqs;
	ndk_arm_cq(rcq, NDK_CQ_NOTIFY_ANY);
	ndk_arm_cq(scq, NDK_CQ_NOTIFY_ANY);

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		NDK_T_STATUS(env, ndk_send(qp, &b, sge, 2, flags[i]),
			     STATUS_CONNECTION_INVALID);
		NDK_T_STATUS(env, ndk_send_and_invalidate(qp, &b, sge, 1,
							  flags[i], 0x1234),
			     STATUS_CONNECTION_INVALID);
		NDK_T_STATUS(env, ndk_read(qp, &b, sge, 2, 0x1000, 0x99,
					   flags[i]),
			     STATUS_CONNECTION_INVALID);
		NDK_T_STATUS(env, ndk_write(qp, &b, sge, 2, 0x1000, 0x99,
					    flags[i]),
			     STATUS_CONNECTION_INVALID);
	}
	/* More than the queue depth: nothing was queued. */
	for (i = 0; i < 40; i++)
		NDK_T_STATUS(env, ndk_send(qp, &b, sge, 1, NDK_OP_FLAG_DEFER),
			     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, ndk_send(qp, &b, NULL, 0, 0),
		     STATUS_CONNECTION_INVALID);
	ndk_t_quiet(env, scq, &ns, 0);
	ndk_t_quiet(env, rcq, &nr, 0);

	ndk_flush(qp);
	ndk_t_quiet(env, scq, &ns, 0);
	ndk_t_quiet(env, rcq, &nr, 0);
	NDK_T_STATUS(env, ndk_close_qp(qp, NULL, NULL), STATUS_SUCCESS);
	ndk_t_quiet(env, scq, &ns, 0);
out_close_cqs:
	if (rcq)
		ndk_close_cq(rcq, NULL, NULL);
	if (scq)
		ndk_close_cq(scq, NULL, NULL);
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

/*
 * Parameters are checked before the connection: bad flags, SGE counts and
 * inline sizes fail STATUS_INVALID_PARAMETER, good ones reach the
 * connection check (STATUS_CONNECTION_INVALID).
 */
static int ndk_t_qp_post_params(struct ndk_test_env *env)
{
	struct ndk_result_ex res[4];
	struct ndk_adapter_info *i;
	struct ndk_sge sge[40];
	struct ndk_cq *rcq, *scq;
	u32 isge, rsge, readsge, inl, k;
	struct ndk_t_base b;
	struct ndk_qp *qp;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	i = &b.info;
	isge = min_t(u32, i->max_initiator_request_sge, 8);
	rsge = min_t(u32, i->max_receive_request_sge, 8);
	readsge = min(isge, i->max_read_request_sge);
	inl = min_t(u32, i->max_inline_data_size, 256);
	for (k = 0; k < ARRAY_SIZE(sge); k++)
		ndk_t_sge(&sge[k], k * 16, 16);
	rcq = ndk_t_cq(env, &b, 32, NULL);
	scq = ndk_t_cq(env, &b, 32, NULL);
	qp = NULL;
	if (rcq && scq)
		NDK_T_STATUS(env, ndk_create_qp(b.pd, rcq, scq, &b, 16, 16,
						rsge, isge, inl, NULL, NULL,
						&qp), STATUS_SUCCESS);
	if (!qp)
		goto out_close_cqs;
	ndk_test_log("QP: %u initiator SGEs (reads %u), %u receive SGEs, inline %u",
		     isge, readsge, rsge, inl);

	/* Flags a request does not take. */
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, 1, 0x1000),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, 1,
				   NDK_OP_FLAG_ALLOW_REMOTE_READ),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, 1,
				   NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_send_and_invalidate(qp, NULL, sge, 1,
						  NDK_OP_FLAG_RDMA_READ_SINK, 1),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_write(qp, NULL, sge, 1, 0, 0,
				    NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_read(qp, NULL, sge, 1, 0, 0, NDK_OP_FLAG_INLINE),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_read(qp, NULL, sge, 1, 0, 0,
				   NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT),
		     STATUS_INVALID_PARAMETER);
	/* Flags it takes. */
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, 1,
				   NDK_OP_FLAG_SILENT_SUCCESS |
				   NDK_OP_FLAG_READ_FENCE |
				   NDK_OP_FLAG_SEND_AND_SOLICIT_EVENT |
				   NDK_OP_FLAG_DEFER),
		     STATUS_CONNECTION_INVALID);
	/* Ignored: rxe does not advertise it. */
	NDK_T_STATUS(env, ndk_read(qp, NULL, sge, 1, 0, 0,
				   NDK_OP_FLAG_RDMA_READ_LOCAL_INVALIDATE),
		     STATUS_CONNECTION_INVALID);

	/* SGE counts. */
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, isge, 0),
		     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, isge + 1, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_write(qp, NULL, sge, isge + 1, 0, 0, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_read(qp, NULL, sge, readsge, 0, 0, 0),
		     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, ndk_read(qp, NULL, sge, readsge + 1, 0, 0, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_send(qp, NULL, NULL, 1, 0),
		     STATUS_INVALID_PARAMETER);

	/* Inline: total bytes count, not SGEs. */
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, inl / 16,
				   NDK_OP_FLAG_INLINE),
		     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, ndk_write(qp, NULL, sge, inl / 16 + 1, 0, 0,
				    NDK_OP_FLAG_INLINE),
		     STATUS_INVALID_PARAMETER);
	sge[0].length = inl + 1;
	NDK_T_STATUS(env, ndk_send(qp, NULL, sge, 1, NDK_OP_FLAG_INLINE),
		     STATUS_INVALID_PARAMETER);
	sge[0].length = 16;
	if (inl / 16 > isge)
		NDK_T_STATUS(env, ndk_send(qp, NULL, sge, inl / 16,
					   NDK_OP_FLAG_INLINE |
					   NDK_OP_FLAG_DEFER),
			     STATUS_CONNECTION_INVALID);

	/*
	 * MaxTransferLength (NDK_ADAPTER_INFO): the SGEs of one request
	 * together, refused inline beyond it.
	 */
	ndk_test_log("MaxTransferLength %#x", i->max_transfer_length);
	if (i->max_transfer_length && i->max_transfer_length < U32_MAX) {
		sge[0].length = i->max_transfer_length;
		NDK_T_STATUS(env, ndk_send(qp, NULL, sge, 1, 0),
			     STATUS_CONNECTION_INVALID);
		sge[0].length = i->max_transfer_length + 1;
		NDK_T_STATUS(env, ndk_send(qp, NULL, sge, 1, 0),
			     STATUS_INVALID_PARAMETER);
		NDK_T_STATUS(env, ndk_receive(qp, NULL, sge, 1),
			     STATUS_INVALID_PARAMETER);
		sge[0].length = i->max_transfer_length / 2 + 1;
		sge[1].length = i->max_transfer_length / 2 + 1;
		NDK_T_STATUS(env, ndk_write(qp, NULL, sge, 2, 0, 0, 0),
			     STATUS_INVALID_PARAMETER);
		if (readsge >= 2)
			NDK_T_STATUS(env, ndk_read(qp, NULL, sge, 2, 0, 0, 0),
				     STATUS_INVALID_PARAMETER);
		sge[0].length = 16;
		sge[1].length = 16;
	}

	/* Receives, before any connection. */
	NDK_T_STATUS(env, ndk_receive(qp, NULL, sge, rsge + 1),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_receive(qp, NULL, NULL, 1),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_receive(qp, &b, sge, rsge), STATUS_SUCCESS);

	/* Only that receive ever completes. */
	ndk_flush(qp);
	NDK_T_CHECK(env, ndk_t_collect(rcq, res, 1, ARRAY_SIZE(res)) == 1);
	NDK_T_STATUS(env, res[0].status, STATUS_CANCELLED);
	NDK_T_CHECK(env, res[0].request_context == &b);
	NDK_T_CHECK(env, ndk_get_cq_results_ex(scq, res, 4) == 0);
	ndk_close_qp(qp, NULL, NULL);
	NDK_T_CHECK(env, ndk_get_cq_results_ex(scq, res, 4) == 0);
	NDK_T_CHECK(env, ndk_get_cq_results_ex(rcq, res, 4) == 0);
out_close_cqs:
	if (rcq)
		ndk_close_cq(rcq, NULL, NULL);
	if (scq)
		ndk_close_cq(scq, NULL, NULL);
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

/*
 * Receives posted before a connection wait; a flush completes each with
 * STATUS_CANCELLED, its RequestContext and type, in order; later receives
 * complete CANCELLED too; the plain results carry the same.
 */
static int ndk_t_qp_recv_flush(struct ndk_test_env *env)
{
	struct ndk_result_ex res[12];
	struct ndk_result plain[4];
	struct ndk_t_notify nr, ns;
	struct ndk_cq *rcq, *scq;
	struct ndk_t_base b;
	struct ndk_sge sge;
	struct ndk_qp *qp;
	int ctx[10];
	u32 got;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_notify_init(&nr);
	ndk_t_notify_init(&ns);
	ndk_t_sge(&sge, 0, 512);
	rcq = ndk_t_cq(env, &b, 16, &nr);
	scq = ndk_t_cq(env, &b, 16, &ns);
	qp = rcq && scq ? ndk_t_qp(env, &b, rcq, scq, &ctx, 8) : NULL;
	if (!qp)
		goto out_close_cqs;

	ndk_t_receives(env, qp, ctx, 8);
	/* The queue holds 8. */
	NDK_T_STATUS(env, ndk_receive(qp, &ctx[8], &sge, 1),
		     STATUS_INSUFFICIENT_RESOURCES);
	ndk_arm_cq(rcq, NDK_CQ_NOTIFY_ANY);
	ndk_arm_cq(scq, NDK_CQ_NOTIFY_ANY);
	ndk_t_quiet(env, rcq, &nr, 0);

	ndk_flush(qp);
	NDK_T_CHECK(env, ndk_t_wait_notify(&nr, 1));
	NDK_T_STATUS(env, nr.status, STATUS_SUCCESS);
	got = ndk_t_collect(rcq, res, 8, ARRAY_SIZE(res));
	NDK_T_CHECK(env, got == 8);
	ndk_t_check_cancelled(env, res, min(got, 8U), &ctx, ctx);
	ndk_test_log("flushed receive: provider_error_code %#x",
		     res[0].provider_error_code);
	ndk_t_quiet(env, scq, &ns, 0);

	/* Posted after the flush: CANCELLED, through the plain results. */
	NDK_T_STATUS(env, ndk_receive(qp, &ctx[8], &sge, 1), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_receive(qp, &ctx[9], NULL, 0), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_get_cq_results(rcq, plain, 4) == 2);
	NDK_T_STATUS(env, plain[0].status, STATUS_CANCELLED);
	NDK_T_CHECK(env, plain[0].request_context == &ctx[8]);
	NDK_T_CHECK(env, plain[0].qp_context == &ctx);
	NDK_T_CHECK(env, plain[0].bytes_transferred == 0);
	NDK_T_STATUS(env, plain[1].status, STATUS_CANCELLED);
	NDK_T_CHECK(env, plain[1].request_context == &ctx[9]);

	/* A second flush has nothing left to cancel. */
	ndk_flush(qp);
	ndk_t_quiet(env, rcq, NULL, 0);
	NDK_T_STATUS(env, ndk_close_qp(qp, NULL, NULL), STATUS_SUCCESS);
	ndk_t_quiet(env, rcq, NULL, 0);
	ndk_t_quiet(env, scq, &ns, 0);
out_close_cqs:
	if (rcq)
		ndk_close_cq(rcq, NULL, NULL);
	if (scq)
		ndk_close_cq(scq, NULL, NULL);
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

/*
 * Closing a QP with receives outstanding: they complete CANCELLED and stay
 * in the CQ after the QP is gone.  Completions of another QP that were
 * waiting in the ib_cq move to the software queue with them, in order.
 */
static int ndk_t_qp_close_drain(struct ndk_test_env *env)
{
	struct ndk_result_ex res[16];
	struct ndk_qp *qpa, *qpb;
	struct ndk_t_notify n;
	struct ndk_t_wait c;
	int ctxa[4], ctxb[4];
	struct ndk_t_base b;
	struct ndk_cq *cq;
	u32 got;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	ndk_t_notify_init(&n);
	ndk_t_wait_init(&c);
	cq = ndk_t_cq(env, &b, 32, &n);
	if (!cq)
		goto out_close;
	qpa = ndk_t_qp(env, &b, cq, cq, ctxa, 8);
	qpb = ndk_t_qp(env, &b, cq, cq, ctxb, 8);
	if (!qpa || !qpb)
		goto out_close_qps;
	ndk_t_receives(env, qpa, ctxa, 4);
	ndk_t_receives(env, qpb, ctxb, 4);

	/* qpa's flushed completions wait in the ib_cq. */
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ANY);
	ndk_flush(qpa);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 1));
	msleep(NDK_T_QUIET_MS);	/* the first is there: let the rest land */
	/* qpb closes without a flush of its own. */
	NDK_T_STATUS(env, ndk_close_qp(qpb, ndk_t_closed, &c), STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&c));
	qpb = NULL;
	/* Every result is there already: no waiting for the device. */
	got = ndk_get_cq_results_ex(cq, res, ARRAY_SIZE(res));
	NDK_T_CHECK(env, got == 8);
	if (got == 8) {
		ndk_t_check_cancelled(env, res, 4, ctxa, ctxa);
		ndk_t_check_cancelled(env, res + 4, 4, ctxb, ctxb);
	}
	/* And an arm sees results in the software queue. */
	NDK_T_STATUS(env, ndk_receive(qpa, &ctxa[0], NULL, 0), STATUS_SUCCESS);
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ANY);
	NDK_T_CHECK(env, ndk_t_wait_notify(&n, 2));
	NDK_T_CHECK(env, ndk_get_cq_results_ex(cq, res, 16) == 1);
	NDK_T_CHECK(env, res[0].qp_context == ctxa);

	/* qpa closes with a receive that the device holds. */
	ndk_t_receives(env, qpa, ctxa, 1);
	ndk_close_qp(qpa, NULL, NULL);
	qpa = NULL;
	NDK_T_CHECK(env, ndk_get_cq_results_ex(cq, res, 16) == 1);
	NDK_T_STATUS(env, res[0].status, STATUS_CANCELLED);
	NDK_T_CHECK(env, res[0].request_context == &ctxa[0]);
out_close_qps:
	if (qpa)
		ndk_close_qp(qpa, NULL, NULL);
	if (qpb)
		ndk_close_qp(qpb, NULL, NULL);
	ndk_close_cq(cq, NULL, NULL);
out_close:
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

struct ndk_t_poster {
	struct ndk_qp *qp;
	int *ctx;
	int count;
	int posted;
	int refused;
	struct completion done;
};

static int ndk_t_poster_fn(void *data)
{
	struct ndk_t_poster *p = data;
	struct ndk_sge sge;
	int i;

	ndk_t_sge(&sge, 0, 64);
	for (i = 0; i < p->count; i++) {
		if (ndk_receive(p->qp, &p->ctx[i], &sge, 1) == STATUS_SUCCESS)
			p->posted++;
		else
			p->refused++;
		usleep_range(20, 50);
	}
	complete(&p->done);
	while (!kthread_should_stop())
		usleep_range(1000, 2000);
	return 0;
}

/*
 * ndk_flush() racing receives posted from another thread: every receive
 * that was accepted completes exactly once, CANCELLED.
 */
static int ndk_t_qp_flush_race(struct ndk_test_env *env)
{
	struct ndk_result_ex *res = NULL;
	struct ndk_t_poster p = {};
	struct task_struct *task;
	struct ndk_t_base b;
	struct ndk_cq *cq;
	int *ctx = NULL;
	u32 got, k;
	bool *seen = NULL;

	if (ndk_t_open(env, &b))
		return NDK_TEST_FAIL;
	p.count = 200;
	ctx = kcalloc(p.count, sizeof(*ctx), GFP_KERNEL);
	seen = kcalloc(p.count, sizeof(*seen), GFP_KERNEL);
	res = kcalloc(p.count + 8, sizeof(*res), GFP_KERNEL);
	cq = ndk_t_cq(env, &b, 256, NULL);
	if (!ctx || !seen || !res || !cq)
		goto out_free;
	p.qp = ndk_t_qp(env, &b, cq, cq, &p, 256);
	if (!p.qp)
		goto out_close_cq;
	p.ctx = ctx;
	init_completion(&p.done);
	task = kthread_run(ndk_t_poster_fn, &p, "ndk_t_poster");
	if (IS_ERR(task)) {
		NDK_T_CHECK(env, !IS_ERR(task));
		goto out_close_qp;
	}
	usleep_range(2000, 3000);
	ndk_flush(p.qp);
	NDK_T_CHECK(env, wait_for_completion_timeout(&p.done, NDK_T_TIMEOUT));
	kthread_stop(task);
	ndk_test_log("receives posted %d, refused %d", p.posted, p.refused);
	NDK_T_CHECK(env, p.refused == 0 && p.posted == p.count);

	got = ndk_t_collect(cq, res, p.posted, p.count + 8);
	NDK_T_CHECK(env, got == p.posted);
	for (k = 0; k < got; k++) {
		int idx = (int *)res[k].request_context - ctx;

		NDK_T_STATUS(env, res[k].status, STATUS_CANCELLED);
		NDK_T_CHECK(env, idx >= 0 && idx < p.count && !seen[idx]);
		if (idx >= 0 && idx < p.count)
			seen[idx] = true;
	}
out_close_qp:
	ndk_close_qp(p.qp, NULL, NULL);
out_close_cq:
	if (cq)
		ndk_close_cq(cq, NULL, NULL);
out_free:
	kfree(res);
	kfree(seen);
	kfree(ctx);
	ndk_t_close_base(&b);
	return NDK_TEST_PASS;
}

const struct ndk_test ndk_tests_qp[] = {
	{ "cq-sync", ndk_t_cq_sync },
	{ "cq-async", ndk_t_cq_async },
	{ "cq-limits", ndk_t_cq_limits },
	{ "cq-resize", ndk_t_cq_resize },
	{ "cq-resize-close", ndk_t_cq_resize_close },
	{ "cq-moderation", ndk_t_cq_moderation },
	{ "cq-arm", ndk_t_cq_arm },
	{ "cq-overrun", ndk_t_cq_overrun },
	{ "cq-close-in-callback", ndk_t_cq_close_in_callback },
	{ "qp-sync", ndk_t_qp_sync },
	{ "qp-async", ndk_t_qp_async },
	{ "qp-close-order", ndk_t_qp_close_order },
	{ "qp-limits", ndk_t_qp_limits },
	{ "qp-unconnected", ndk_t_qp_unconnected },
	{ "qp-post-params", ndk_t_qp_post_params },
	{ "qp-recv-flush", ndk_t_qp_recv_flush },
	{ "qp-close-drain", ndk_t_qp_close_drain },
	{ "qp-flush-race", ndk_t_qp_flush_race },
	{ NULL, NULL },
};
