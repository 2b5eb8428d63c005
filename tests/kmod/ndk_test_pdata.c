// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: the private data limits of NDK_ADAPTER_INFO on the wire.
 *
 * ndk.ko refuses more than MaxCallerData / MaxCalleeData bytes itself,
 * so a scenario that only goes through NDK never sees what the transport
 * takes.  This one puts a plain rdma_cm end (no ndk.ko) against an NDK
 * end on the same device and sends exactly the advertised size, which
 * must arrive whole, and one byte more, which the transport must refuse:
 *
 *   caller: a raw rdma_connect() to an NDK listener.  IB/RoCE: the REQ
 *           has 92 bytes, rdma_cm takes 36 for its header, so 57 fails
 *           in rdma_connect().  iWARP (siw): MPA carries 256 bytes, MPA
 *           v2 takes 4, and siw adds those 4 to a u8 length, so 252
 *           leaves siw with a length of 0 and the peer drops it
 *           (siw_recv_mpa_rr(): extra data): no connect event reaches NDK.
 *   callee: an NDK connector to a raw rdma_cm listener.  IB/RoCE: a REP
 *           takes 196 bytes but a REJ 148, so MaxCalleeData is 148 and
 *           rdma_reject() with 149 fails.  iWARP: an accept with 252 goes
 *           out with a length of 0 as above (253 siw_accept() refuses),
 *           so the connect fails.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/in.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

#define T_PD_RESOLVE_MS	2000
/* The largest size any transport here could take, and one byte more. */
#define T_PD_BUF	257

/**
 * struct t_raw - a plain rdma_cm end with its own PD, CQ and QP
 * @id:     the id (active, or the listener)
 * @req:    listener: the id of the connection request received
 * @ibpd:   PD of @qp_id's QP
 * @cq:     its CQ
 * @event:  last event of @id or @req (-1: none)
 * @status: its status
 * @pdata_len: private data length of the last event
 * @wait:   woken on each event
 */
struct t_raw {
	struct rdma_cm_id *id;
	struct rdma_cm_id *req;
	struct ib_pd *ibpd;
	struct ib_cq *cq;
	int event;
	int status;
	u8 pdata_len;
	wait_queue_head_t wait;
};

static int t_raw_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct t_raw *r = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (READ_ONCE(r->req))
			return -ECONNREFUSED;
		WRITE_ONCE(r->req, id);
	}
	r->pdata_len = ev->param.conn.private_data_len;
	r->status = ev->status;
	WRITE_ONCE(r->event, ev->event);
	wake_up(&r->wait);
	return 0;
}

/* Wait for any event of @r but @not; the event, or -1 on timeout. */
static int t_raw_wait(struct t_raw *r, int not)
{
	wait_event_timeout(r->wait, READ_ONCE(r->event) != not &&
			   READ_ONCE(r->event) != -1, 15 * HZ * ndk_t_time_scale);
	return READ_ONCE(r->event);
}

/*
 * Whether the raw connector's request reached the NDK listener: its
 * ConnectEvent, or the connector's end without one (refused on the way),
 * after which nothing may come within a second.  Not a quiet period of
 * NDK_T_TIMEOUT, which time_scale stretches to a minute on the debug
 * kernel.
 */
static bool t_pd_arrived(struct t_fix *f, struct t_raw *r)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;

	while (time_before(jiffies, end)) {
		if (try_wait_for_completion(&f->got))
			return true;
		if (READ_ONCE(r->event) != RDMA_CM_EVENT_ROUTE_RESOLVED)
			break;
		usleep_range(5000, 10000);
	}
	return wait_for_completion_timeout(&f->got, HZ) != 0;
}

static int t_raw_init(struct t_raw *r)
{
	memset(r, 0, sizeof(*r));
	init_waitqueue_head(&r->wait);
	r->event = -1;
	r->id = rdma_create_id(&init_net, t_raw_handler, r, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(r->id)) {
		int ret = PTR_ERR(r->id);

		r->id = NULL;
		return ret;
	}
	return 0;
}

/* A QP for @id (bound to its device): rdma_create_qp() in a new PD. */
static int t_raw_qp(struct t_raw *r, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};

	r->ibpd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(r->ibpd)) {
		int ret = PTR_ERR(r->ibpd);

		r->ibpd = NULL;
		return ret;
	}
	r->cq = ib_alloc_cq(id->device, NULL, 4, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(r->cq)) {
		int ret = PTR_ERR(r->cq);

		r->cq = NULL;
		return ret;
	}
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = r->cq;
	attr.recv_cq = r->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.cap.max_send_wr = 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	return rdma_create_qp(id, r->ibpd, &attr);
}

static void t_raw_free(struct t_raw *r)
{
	if (r->id)
		rdma_destroy_id(r->id);	/* no more requests after this */
	if (r->req) {
		if (r->req->qp)
			rdma_destroy_qp(r->req);
		rdma_destroy_id(r->req);
	}
	if (r->cq)
		ib_free_cq(r->cq);
	if (r->ibpd)
		ib_dealloc_pd(r->ibpd);
	memset(r, 0, sizeof(*r));
}

static void t_raw_free_active(struct t_raw *r)
{
	if (r->id && r->id->qp)
		rdma_destroy_qp(r->id);
	t_raw_free(r);
}

/*
 * Connect a raw end with @len bytes to the NDK listener of @f.  Returns
 * whether the listener got a connection request, whose data it checks
 * and which it rejects.
 */
static bool t_pd_raw_connect(struct ndk_test_env *env, struct t_fix *f,
			     const u8 *data, u32 len)
{
	struct rdma_conn_param param = {};
	struct sockaddr_in src;
	u8 got[T_PD_BUF + 8];
	u32 got_len = sizeof(got);
	struct t_raw r;
	bool arrived;
	int ret, ev;

	reinit_completion(&f->got);
	f->count = 0;
	if (t_raw_init(&r)) {
		env->failures++;
		return false;
	}
	t_addr(env, &src, 0);
	ret = rdma_resolve_addr(r.id, (struct sockaddr *)&src,
				(struct sockaddr *)&f->laddr, T_PD_RESOLVE_MS);
	if (!ret && t_raw_wait(&r, -1) == RDMA_CM_EVENT_ADDR_RESOLVED)
		ret = rdma_resolve_route(r.id, T_PD_RESOLVE_MS);
	else
		ret = ret ?: -EHOSTUNREACH;
	if (!ret && t_raw_wait(&r, RDMA_CM_EVENT_ADDR_RESOLVED) !=
	    RDMA_CM_EVENT_ROUTE_RESOLVED)
		ret = -EHOSTUNREACH;
	if (!ret)
		ret = t_raw_qp(&r, r.id);
	if (ret) {
		ndk_test_log("raw connector: setup failed: %d", ret);
		env->failures++;
		t_raw_free_active(&r);
		return false;
	}
	param.private_data = data;
	param.private_data_len = len;
	ret = rdma_connect(r.id, &param);
	ndk_test_log("raw connect with %u bytes: rdma_connect %d", len, ret);
	arrived = !ret && t_pd_arrived(f, &r);
	if (arrived) {
		memset(got, 0, sizeof(got));
		NDK_T_STATUS(env, ndk_get_connection_data(f->conn[0], NULL, NULL,
							  got, &got_len),
			     STATUS_SUCCESS);
		ndk_test_log("NDK listener got %u bytes", got_len);
		NDK_T_CHECK(env, got_len >= len && memcmp(got, data, len) == 0);
		NDK_T_STATUS(env, ndk_reject(f->conn[0], NULL, 0),
			     STATUS_SUCCESS);
	}
	if (!ret) {
		ev = t_raw_wait(&r, RDMA_CM_EVENT_ROUTE_RESOLVED);
		ndk_test_log("raw connector: %s (%d)", rdma_event_msg(ev),
			     r.status);
		NDK_T_CHECK(env, ev != RDMA_CM_EVENT_ESTABLISHED);
	}
	if (arrived)
		t_close_conn(&f->conn[0]);
	t_raw_free_active(&r);
	/* Nothing more arrived (a refused request must not either). */
	NDK_T_CHECK(env, f->count == arrived);
	return arrived;
}

/*
 * An NDK connector to a raw listener that answers with @len bytes:
 * accepts (@reject false) or rejects.  Returns the NDK connect's status.
 */
static s32 t_pd_raw_answer(struct ndk_test_env *env, struct t_fix *f,
			   const u8 *data, u32 len, bool reject, int *answer)
{
	struct rdma_conn_param param = {};
	struct ndk_connector *a = NULL;
	struct sockaddr_in sin;
	u8 got[T_PD_BUF + 8];
	u32 got_len = sizeof(got);
	struct ndk_t_wait w;
	struct t_raw r;
	s32 s = STATUS_UNSUCCESSFUL;
	int ret;

	*answer = -EINVAL;
	if (t_new_qp(env, f, 0))
		return s;	/* a fresh QP for each connection */
	if (t_raw_init(&r)) {
		env->failures++;
		return s;
	}
	t_addr(env, &sin, 0);
	ret = rdma_bind_addr(r.id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(r.id, 1);
	if (ret) {
		ndk_test_log("raw listener: %d", ret);
		env->failures++;
		goto out_free;
	}
	sin.sin_port = ((struct sockaddr_in *)&r.id->route.addr.src_addr)->sin_port;

	NDK_T_STATUS(env, ndk_create_connector(f->adapter, NULL, NULL, &a),
		     STATUS_SUCCESS);
	if (!a)
		goto out_free;
	ndk_t_wait_init(&w);
	NDK_T_STATUS(env, ndk_connect(a, f->qp[0], NULL, 0,
				      (struct sockaddr *)&sin, sizeof(sin), 0,
				      0, NULL, 0, ndk_t_requested, &w),
		     STATUS_PENDING);
	wait_event_timeout(r.wait, READ_ONCE(r.req), 15 * HZ * ndk_t_time_scale);
	if (!r.req) {
		ndk_test_log("raw listener: no connection request");
		env->failures++;
		goto out_close;
	}
	param.private_data = data;
	param.private_data_len = len;
	if (reject) {
		ret = rdma_reject(r.req, data, len, IB_CM_REJ_CONSUMER_DEFINED);
	} else {
		ret = t_raw_qp(&r, r.req);
		if (!ret) {
			rdma_lock_handler(r.req);
			ret = rdma_accept(r.req, &param);
			rdma_unlock_handler(r.req);
		}
	}
	*answer = ret;
	ndk_test_log("raw %s with %u bytes: %d", reject ? "reject" : "accept",
		     len, ret);
	/*
	 * Refused before anything was sent (a REJ too long): answer with a
	 * plain reject, or the connector would wait for its REQ to time out.
	 * A refused accept has rejected by itself.
	 */
	if (ret && reject)
		rdma_reject(r.req, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	NDK_T_CHECK(env, ndk_t_wait(&w));
	s = w.status;
	ndk_test_log("NDK connect: %#x", s);
	if (!ret) {
		memset(got, 0, sizeof(got));
		if (ndk_get_connection_data(a, NULL, NULL, got, &got_len) ==
		    STATUS_SUCCESS) {
			bool whole = got_len >= len && !memcmp(got, data, len);

			ndk_test_log("NDK connector got %u bytes", got_len);
			NDK_T_CHECK(env, whole);
		} else {
			NDK_T_CHECK(env, s != STATUS_SUCCESS);
		}
	}
out_close:
	t_close_conn(&a);
out_free:
	t_raw_free(&r);
	return s;
}

static int t_cm_pdata_limits(struct ndk_test_env *env)
{
	u8 *data;
	struct t_fix f;
	u32 caller, callee;
	bool iwarp;
	int answer;
	s32 s;

	if (t_open(env, &f, 1) || t_listen(env, &f))
		return t_verdict(env, &f);
	data = kmalloc(T_PD_BUF, GFP_KERNEL);
	if (!data) {
		env->failures++;
		return t_verdict(env, &f);
	}
	t_fill(data, T_PD_BUF, 0x31);
	caller = f.info.max_caller_data;
	callee = f.info.max_callee_data;
	iwarp = f.info.rdma_technology == NDK_IWARP;
	ndk_test_log("%s: MaxCallerData %u, MaxCalleeData %u",
		     iwarp ? "iWARP" : "IB/RoCE", caller, callee);
	NDK_T_CHECK(env, caller > 0 && caller < T_PD_BUF);
	NDK_T_CHECK(env, callee > 0 && callee < T_PD_BUF);
	if (env->failures)
		goto out;

	/* Caller: exactly MaxCallerData arrives, one byte more does not. */
	NDK_T_CHECK(env, t_pd_raw_connect(env, &f, data, caller));
	NDK_T_CHECK(env, !t_pd_raw_connect(env, &f, data, caller + 1));

	/* Callee: exactly MaxCalleeData arrives in an accept. */
	s = t_pd_raw_answer(env, &f, data, callee, false, &answer);
	NDK_T_CHECK(env, answer == 0);
	NDK_T_STATUS(env, s, STATUS_SUCCESS);
	if (iwarp) {
		/* One byte more: the connect fails (file comment). */
		s = t_pd_raw_answer(env, &f, data, callee + 1, false, &answer);
		NDK_T_CHECK(env, s != STATUS_SUCCESS);
	} else {
		/* A reject carries it whole; one byte more does not fit. */
		s = t_pd_raw_answer(env, &f, data, callee, true, &answer);
		NDK_T_CHECK(env, answer == 0 && s == STATUS_CONNECTION_REFUSED);
		s = t_pd_raw_answer(env, &f, data, callee + 1, true, &answer);
		NDK_T_CHECK(env, answer != 0 && s != STATUS_SUCCESS);
	}
out:
	kfree(data);
	return t_verdict(env, &f);
}

const struct ndk_test ndk_tests_pdata[] = {
	{ "cm-pdata-limits", t_cm_pdata_limits },
	{ }
};
