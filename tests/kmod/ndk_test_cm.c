// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: connector and listener scenarios.
 *
 * Every connection is a loopback on one device: the listener binds the
 * adapter's own IPv4 address (module parameter peer_ip) and the connector
 * connects to it, which rdma_cm and rxe carry inside the device.  Waits
 * time out after 10 s and fail the scenario.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/page_counter.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

static bool t_unreachable(s32 s)
{
	return s == STATUS_HOST_UNREACHABLE || s == STATUS_NETWORK_UNREACHABLE;
}

static bool t_cancelled_or_unreachable(s32 s)
{
	return s == STATUS_CANCELLED || t_unreachable(s);
}

/* The private data the peer sent: @sent bytes of @want, then zeros. */
static void t_check_data(struct ndk_test_env *env, struct ndk_connector *c,
			 const u8 *want, u32 sent, u32 field, u32 in, u32 out)
{
	u8 buf[T_CALLEE_MAX + 8];
	u32 got_in = ~0U, got_out = ~0U, len = 10, i;

	memset(buf, 0xee, sizeof(buf));
	NDK_T_STATUS(env, ndk_get_connection_data(c, NULL, NULL, buf, &len),
		     STATUS_BUFFER_TOO_SMALL);
	NDK_T_CHECK(env, len == field);
	NDK_T_CHECK(env, buf[0] == 0xee);
	len = sizeof(buf);
	NDK_T_STATUS(env, ndk_get_connection_data(c, &got_in, &got_out, buf,
						  &len), STATUS_SUCCESS);
	NDK_T_CHECK(env, len == field);
	NDK_T_CHECK(env, memcmp(buf, want, sent) == 0);
	for (i = sent; i < field; i++)
		if (buf[i]) {
			ndk_test_log("private data byte %u is %#x", i, buf[i]);
			env->failures++;
			break;
		}
	NDK_T_CHECK(env, buf[field] == 0xee);
	NDK_T_CHECK(env, got_in == in);
	NDK_T_CHECK(env, got_out == out);
	if (got_in != in || got_out != out)
		ndk_test_log("read limits %u/%u, expected %u/%u", got_in,
			     got_out, in, out);
}

/* Local and peer addresses of both ends of a connection. */
static void t_check_addresses(struct ndk_test_env *env, struct t_fix *f)
{
	struct sockaddr_in la, pa, lp, pp;
	u32 len;

	len = 4;
	NDK_T_STATUS(env, ndk_get_local_address(f->a, (struct sockaddr *)&la,
						&len), STATUS_BUFFER_TOO_SMALL);
	NDK_T_CHECK(env, len == sizeof(la));
	len = sizeof(la);
	NDK_T_STATUS(env, ndk_get_local_address(f->a, (struct sockaddr *)&la,
						&len), STATUS_SUCCESS);
	len = sizeof(pa);
	NDK_T_STATUS(env, ndk_get_peer_address(f->a, (struct sockaddr *)&pa,
					       &len), STATUS_SUCCESS);
	len = sizeof(lp);
	NDK_T_STATUS(env, ndk_get_local_address(f->p, (struct sockaddr *)&lp,
						&len), STATUS_SUCCESS);
	len = 4;
	NDK_T_STATUS(env, ndk_get_peer_address(f->p, (struct sockaddr *)&pp,
					       &len), STATUS_BUFFER_TOO_SMALL);
	NDK_T_CHECK(env, len == sizeof(pp));
	NDK_T_STATUS(env, ndk_get_peer_address(f->p, (struct sockaddr *)&pp,
					       &len), STATUS_SUCCESS);
	NDK_T_CHECK(env, la.sin_family == AF_INET && pa.sin_family == AF_INET);
	NDK_T_CHECK(env, lp.sin_family == AF_INET && pp.sin_family == AF_INET);
	/* Loopback: every address is the adapter's own. */
	NDK_T_CHECK(env, la.sin_addr.s_addr == f->laddr.sin_addr.s_addr);
	NDK_T_CHECK(env, pa.sin_addr.s_addr == f->laddr.sin_addr.s_addr);
	NDK_T_CHECK(env, lp.sin_addr.s_addr == f->laddr.sin_addr.s_addr);
	NDK_T_CHECK(env, pp.sin_addr.s_addr == f->laddr.sin_addr.s_addr);
	NDK_T_CHECK(env, pa.sin_port == f->laddr.sin_port);
	NDK_T_CHECK(env, lp.sin_port == f->laddr.sin_port);
	NDK_T_CHECK(env, la.sin_port != 0 && la.sin_port != f->laddr.sin_port);
	NDK_T_CHECK(env, pp.sin_port == la.sin_port);
	ndk_test_log("connection %pI4:%u -> %pI4:%u", &la.sin_addr,
		     ntohs(la.sin_port), &pa.sin_addr, ntohs(pa.sin_port));
}

/* --- Scenarios ----------------------------------------------------------- */

/*
 * Listener create, listen, address, errors; blocking then asynchronous.
 */
static int t_cm_listener(struct ndk_test_env *env)
{
	struct ndk_listener *l2 = (struct ndk_listener *)0x1;
	struct sockaddr_in sin, got;
	struct ndk_t_wait cr;
	struct ndk_t_wait r;
	struct t_fix f;
	u32 len;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);

	NDK_T_STATUS(env, ndk_create_listener(f.adapter, NULL, NULL, NULL,
					      NULL, &l2),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_create_listener(f.adapter, t_connect_event, &f,
					      NULL, NULL, &f.listener),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_CHECK(env, ((struct ndk_object_header *)f.listener)->object_type
			 == NDK_OBJECT_TYPE_LISTENER);
	len = sizeof(got);
	NDK_T_STATUS(env, t_laddr(f.listener, &got, &len),
		     STATUS_INVALID_DEVICE_STATE);
	/* Bad arguments fail inline. */
	NDK_T_STATUS(env, ndk_listen(f.listener, NULL, 0, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	t_addr(env, &sin, 0);
	NDK_T_STATUS(env, ndk_listen(f.listener, (struct sockaddr *)&sin, 8,
				     NULL, NULL), STATUS_INVALID_PARAMETER);
	sin.sin_family = AF_UNIX;
	NDK_T_STATUS(env, ndk_listen(f.listener, (struct sockaddr *)&sin,
				     sizeof(sin), NULL, NULL),
		     STATUS_INVALID_ADDRESS);

	t_addr(env, &sin, 0);
	NDK_T_STATUS(env, ndk_listen(f.listener, (struct sockaddr *)&sin,
				     sizeof(sin), NULL, NULL), STATUS_SUCCESS);
	len = 2;
	NDK_T_STATUS(env, t_laddr(f.listener, &got, &len), STATUS_BUFFER_TOO_SMALL);
	NDK_T_CHECK(env, len == sizeof(got));
	NDK_T_STATUS(env, t_laddr(f.listener, &got, &len), STATUS_SUCCESS);
	NDK_T_CHECK(env, got.sin_family == AF_INET);
	NDK_T_CHECK(env, got.sin_addr.s_addr == sin.sin_addr.s_addr);
	NDK_T_CHECK(env, got.sin_port != 0);
	ndk_test_log("listening on %pI4:%u", &got.sin_addr, ntohs(got.sin_port));
	NDK_T_STATUS(env, ndk_listen(f.listener, (struct sockaddr *)&sin,
				     sizeof(sin), NULL, NULL),
		     STATUS_INVALID_DEVICE_STATE);

	/* A second listener on the same port; then on a foreign address. */
	NDK_T_STATUS(env, ndk_create_listener(f.adapter, t_connect_event, &f,
					      NULL, NULL, &l2), STATUS_SUCCESS);
	if (l2 && l2 != (struct ndk_listener *)0x1) {
		NDK_T_STATUS(env, ndk_listen(l2, (struct sockaddr *)&got,
					     sizeof(got), NULL, NULL),
			     STATUS_SHARING_VIOLATION);
		NDK_T_STATUS(env, ndk_close_listener(l2, NULL, NULL),
			     STATUS_SUCCESS);
	}
	NDK_T_STATUS(env, ndk_create_listener(f.adapter, t_connect_event, &f,
					      NULL, NULL, &l2), STATUS_SUCCESS);
	if (l2 && l2 != (struct ndk_listener *)0x1) {
		sin.sin_addr.s_addr = htonl(0xc0000201);	/* 192.0.2.1 */
		NDK_T_STATUS(env, ndk_listen(l2, (struct sockaddr *)&sin,
					     sizeof(sin), NULL, NULL),
			     STATUS_INVALID_ADDRESS);
		NDK_T_STATUS(env, ndk_close_listener(l2, NULL, NULL),
			     STATUS_SUCCESS);
	}
	NDK_T_STATUS(env, ndk_close_listener(f.listener, NULL, NULL),
		     STATUS_SUCCESS);
	f.listener = NULL;

	/* Asynchronous create, listen (same port: it is free again), close. */
	ndk_t_wait_init(&cr);
	l2 = (struct ndk_listener *)0x1;
	NDK_T_STATUS(env, ndk_create_listener(f.adapter, t_connect_event, &f,
					      ndk_t_created, &cr, &l2),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&cr));
	NDK_T_STATUS(env, cr.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, l2 == (struct ndk_listener *)0x1);
	if (!cr.object)
		return t_verdict(env, &f);
	f.listener = ndk_to_listener(cr.object);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_listen(f.listener, (struct sockaddr *)&got,
				     sizeof(got), ndk_t_requested, &r),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_STATUS(env, r.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, atomic_read(&r.calls) == 1);
	len = sizeof(sin);
	NDK_T_STATUS(env, t_laddr(f.listener, &sin, &len), STATUS_SUCCESS);
	NDK_T_CHECK(env, sin.sin_port == got.sin_port);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_close_listener(f.listener, ndk_t_closed, &r),
		     STATUS_PENDING);
	f.listener = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_CHECK(env, atomic_read(&r.calls) == 1);
	return t_verdict(env, &f);
}

/*
 * Blocking variants on a loopback connection with the largest private
 * data both ways: blocking connect and complete-connect (the listener
 * accepts asynchronously from its ConnectEvent); then a blocking accept
 * (the connect completion completes the connect).  Disconnect from the
 * active side: the passive side's disconnect callback fires once.
 */
static int t_cm_loopback(struct ndk_test_env *env)
{
	u32 len = 16;
	u8 buf[16];
	struct t_fix f;
	s32 s;

	if (t_open(env, &f, 2) || t_listen(env, &f))
		return t_verdict(env, &f);
	NDK_T_CHECK(env, f.info.adapter_flags &
			 NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED);
	NDK_T_CHECK(env, f.info.max_caller_data == T_CALLER_MAX);
	NDK_T_CHECK(env, f.info.max_callee_data == T_CALLEE_MAX);
	f.clen = T_CALLER_MAX;
	f.slen = T_CALLEE_MAX;
	t_fill(f.cdata, f.clen, 0x11);
	t_fill(f.sdata, f.slen, 0x80);
	f.auto_accept = true;

	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_CHECK(env, ((struct ndk_object_header *)f.a)->object_type ==
			 NDK_OBJECT_TYPE_CONNECTOR);
	/* Nothing to report before a connection. */
	NDK_T_STATUS(env, ndk_get_connection_data(f.a, NULL, NULL, buf, &len),
		     STATUS_INVALID_DEVICE_STATE);
	NDK_T_STATUS(env, ndk_get_local_address(f.a, (struct sockaddr *)buf,
						&len),
		     STATUS_INVALID_DEVICE_STATE);
	NDK_T_STATUS(env, ndk_complete_connect(f.a, NULL, NULL, NULL, NULL),
		     STATUS_INVALID_DEVICE_STATE);
	NDK_T_STATUS(env, ndk_disconnect(f.a, NULL, NULL),
		     STATUS_CONNECTION_INVALID);

	s = ndk_connect(f.a, f.qp[0], NULL, 0, (struct sockaddr *)&f.laddr,
			sizeof(f.laddr), f.in_a, f.out_a, f.cdata, f.clen,
			NULL, NULL);
	NDK_T_STATUS(env, s, STATUS_SUCCESS);
	if (s)
		return t_verdict(env, &f);
	NDK_T_CHECK(env, f.count == 1 && f.p);
	if (!f.p)
		return t_verdict(env, &f);
	f.conn[0] = NULL;	/* f.p owns it */
	/* A second connect on a used connector. */
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 0, 0, NULL, 0, NULL,
				      NULL), STATUS_INVALID_DEVICE_STATE);
	/* The caller's data at the listener, the callee's at the connector. */
	t_check_data(env, f.p, f.cdata, f.clen, T_CALLER_MAX, f.in_a, f.out_a);
	t_check_data(env, f.a, f.sdata, f.slen, T_CALLEE_MAX,
		     min(f.in_p, f.out_a), min(f.out_p, f.in_a));
	NDK_T_STATUS(env, ndk_complete_connect(f.a, t_disc_cb, &f.disc_a, NULL,
					       NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.accept_req));
	NDK_T_STATUS(env, f.accept_req.status, STATUS_SUCCESS);
	t_check_addresses(env, &f);

	/* Active disconnects: the peer is told once, this side not at all. */
	NDK_T_STATUS(env, ndk_disconnect(f.a, NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_p));
	NDK_T_STATUS(env, ndk_disconnect(f.p, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_disconnect(f.a, NULL, NULL), STATUS_SUCCESS);
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&f.disc_p.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f.disc_a.calls) == 0);
	NDK_T_CHECK(env, atomic_read(&f.accept_req.calls) == 1);
	t_close_conn(&f.a);
	t_close_conn(&f.p);
	NDK_T_CHECK(env, atomic_read(&f.disc_p.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f.disc_a.calls) == 0);
	if (env->failures)
		return t_verdict(env, &f);

	/* Blocking accept: the connect completion completes the connect. */
	if (t_new_qp(env, &f, 0) || t_new_qp(env, &f, 1))
		return t_verdict(env, &f);
	f.auto_accept = false;
	reinit_completion(&f.got);
	f.count = 0;
	ndk_t_wait_init(&f.connect_req);
	ndk_t_wait_init(&f.complete_req);
	ndk_t_wait_init(&f.disc_a);
	ndk_t_wait_init(&f.disc_p);
	f.clen = 1;
	f.slen = 2;
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 0, 0, f.cdata, f.clen,
				      t_connect_done_auto, &f),
		     STATUS_PENDING);
	f.auto_complete = true;
	NDK_T_CHECK(env, t_got_event(&f));
	if (env->failures)
		return t_verdict(env, &f);
	f.p = f.conn[0];
	f.conn[0] = NULL;
	t_check_data(env, f.p, f.cdata, f.clen, T_CALLER_MAX, 0, 0);
	NDK_T_STATUS(env, ndk_accept(f.p, f.qp[1], 0, 0, f.sdata, f.slen,
				     t_disc_cb, &f.disc_p, NULL, NULL),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.complete_req));
	NDK_T_STATUS(env, f.complete_req.status, STATUS_SUCCESS);
	NDK_T_STATUS(env, f.connect_req.status, STATUS_SUCCESS);
	/* This time the passive side disconnects. */
	NDK_T_STATUS(env, ndk_disconnect(f.p, NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_a));
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&f.disc_a.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f.disc_p.calls) == 0);
	return t_verdict(env, &f);
}

/*
 * Everything asynchronous: connector create, connect, accept, complete,
 * disconnect from the passive side, closes with completions.
 */
static int t_cm_async(struct ndk_test_env *env)
{
	struct ndk_t_wait da, ca, cp;
	struct ndk_t_wait cr;
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f))
		return t_verdict(env, &f);
	f.clen = 20;
	f.slen = 100;
	t_fill(f.cdata, f.clen, 0x21);
	t_fill(f.sdata, f.slen, 0x42);

	ndk_t_wait_init(&cr);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, ndk_t_created, &cr,
					       &f.a), STATUS_PENDING);
	NDK_T_CHECK(env, !f.a);
	NDK_T_CHECK(env, ndk_t_wait(&cr));
	NDK_T_STATUS(env, cr.status, STATUS_SUCCESS);
	if (!cr.object)
		return t_verdict(env, &f);
	NDK_T_CHECK(env, cr.object->object_type == NDK_OBJECT_TYPE_CONNECTOR);
	NDK_T_STATUS(env, ndk_close_connector(ndk_to_connector(cr.object),
					      NULL, NULL), STATUS_SUCCESS);

	if (t_connect_async(env, &f))
		return t_verdict(env, &f);
	t_check_data(env, f.p, f.cdata, f.clen, T_CALLER_MAX, f.in_a, f.out_a);
	t_check_data(env, f.a, f.sdata, f.slen, T_CALLEE_MAX,
		     min(f.in_p, f.out_a), min(f.out_p, f.in_a));
	t_check_addresses(env, &f);

	ndk_t_wait_init(&da);
	NDK_T_STATUS(env, ndk_disconnect(f.p, ndk_t_requested, &da), STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&da));
	NDK_T_STATUS(env, da.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_a));
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&da.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f.disc_a.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f.disc_p.calls) == 0);
	/* After the peer's disconnect, the local one is immediate. */
	NDK_T_STATUS(env, ndk_disconnect(f.a, ndk_t_requested, &da), STATUS_SUCCESS);

	ndk_t_wait_init(&ca);
	ndk_t_wait_init(&cp);
	NDK_T_STATUS(env, ndk_close_connector(f.a, ndk_t_closed, &ca),
		     STATUS_PENDING);
	NDK_T_STATUS(env, ndk_close_connector(f.p, ndk_t_closed, &cp),
		     STATUS_PENDING);
	f.a = NULL;
	f.p = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&ca));
	NDK_T_CHECK(env, ndk_t_wait(&cp));
	NDK_T_CHECK(env, atomic_read(&da.calls) == 1);
	return t_verdict(env, &f);
}

/*
 * Private data and read limits over the adapter's: refused inline with
 * STATUS_INVALID_PARAMETER and no completion; the limits themselves pass.
 */
static int t_cm_limits(struct ndk_test_env *env)
{
	struct ndk_t_wait r;
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f))
		return t_verdict(env, &f);
	t_fill(f.cdata, sizeof(f.cdata), 0x31);
	t_fill(f.sdata, sizeof(f.sdata), 0x71);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 0, 0, f.cdata,
				      T_CALLER_MAX + 1, ndk_t_requested, &r),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr),
				      f.info.max_inbound_read_limit + 1, 0,
				      NULL, 0, ndk_t_requested, &r),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 0,
				      f.info.max_outbound_read_limit + 1,
				      NULL, 0, ndk_t_requested, &r),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_connect(f.a, NULL, NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 0, 0, NULL, 0,
				      ndk_t_requested, &r),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr, 4, 0, 0,
				      NULL, 0, ndk_t_requested, &r),
		     STATUS_INVALID_PARAMETER);
	/* The connector is still unused: the maxima go through. */
	f.in_a = f.info.max_inbound_read_limit;
	f.out_a = f.info.max_outbound_read_limit;
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), f.in_a, f.out_a,
				      f.cdata, T_CALLER_MAX, ndk_t_requested,
				      &f.connect_req), STATUS_PENDING);
	NDK_T_CHECK(env, t_got_event(&f));
	if (env->failures)
		return t_verdict(env, &f);
	f.p = f.conn[0];
	f.conn[0] = NULL;
	t_check_data(env, f.p, f.cdata, T_CALLER_MAX, T_CALLER_MAX, f.in_a,
		     f.out_a);
	NDK_T_STATUS(env, ndk_accept(f.p, f.qp[1], 0, 0, f.sdata,
				     T_CALLEE_MAX + 1, NULL, NULL, ndk_t_requested,
				     &r), STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_accept(f.p, f.qp[1],
				     f.info.max_inbound_read_limit + 1, 0,
				     NULL, 0, NULL, NULL, ndk_t_requested, &r),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_reject(f.p, f.sdata, T_CALLEE_MAX + 1),
		     STATUS_INVALID_PARAMETER);
	f.in_p = f.info.max_inbound_read_limit;
	f.out_p = f.info.max_outbound_read_limit;
	NDK_T_STATUS(env, ndk_accept(f.p, f.qp[1], f.in_p, f.out_p, f.sdata,
				     T_CALLEE_MAX, t_disc_cb, &f.disc_p,
				     ndk_t_requested, &f.accept_req),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	NDK_T_STATUS(env, f.connect_req.status, STATUS_SUCCESS);
	t_check_data(env, f.a, f.sdata, T_CALLEE_MAX, T_CALLEE_MAX,
		     min(f.in_p, f.out_a), min(f.out_p, f.in_a));
	NDK_T_STATUS(env, ndk_complete_connect(f.a, t_disc_cb, &f.disc_a,
					       NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.accept_req));
	NDK_T_STATUS(env, f.accept_req.status, STATUS_SUCCESS);
	/* None of the refused calls completed later. */
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&r.calls) == 0);
	return t_verdict(env, &f);
}

/* The listener rejects with private data: STATUS_CONNECTION_REFUSED. */
static int t_cm_reject(struct ndk_test_env *env)
{
	struct t_fix f;

	if (t_open(env, &f, 1) || t_listen(env, &f))
		return t_verdict(env, &f);
	f.clen = 7;
	f.slen = 20;
	t_fill(f.cdata, f.clen, 0x5);
	t_fill(f.sdata, f.slen, 0x99);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 1, 1, f.cdata, f.clen,
				      ndk_t_requested, &f.connect_req),
		     STATUS_PENDING);
	NDK_T_CHECK(env, t_got_event(&f));
	if (env->failures)
		return t_verdict(env, &f);
	f.p = f.conn[0];
	f.conn[0] = NULL;
	t_check_data(env, f.p, f.cdata, f.clen, T_CALLER_MAX, 1, 1);
	NDK_T_STATUS(env, ndk_reject(f.p, f.sdata, f.slen), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_reject(f.p, NULL, 0),
		     STATUS_INVALID_DEVICE_STATE);
	NDK_T_STATUS(env, ndk_accept(f.p, NULL, 0, 0, NULL, 0, NULL, NULL,
				     NULL, NULL), STATUS_INVALID_PARAMETER);
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	NDK_T_STATUS(env, f.connect_req.status, STATUS_CONNECTION_REFUSED);
	/* The reject's private data reaches the connector. */
	t_check_data(env, f.a, f.sdata, f.slen, T_CALLEE_MAX, 0, 0);
	NDK_T_STATUS(env, ndk_complete_connect(f.a, NULL, NULL, NULL, NULL),
		     STATUS_CONNECTION_ABORTED);
	msleep(100);
	NDK_T_CHECK(env, atomic_read(&f.connect_req.calls) == 1);
	return t_verdict(env, &f);
}

/* IB/RoCE scenarios: true (the fixture closed, said) on an iWARP adapter. */
static bool t_skip_iwarp(struct ndk_test_env *env, struct t_fix *f)
{
	if (f->info.rdma_technology != NDK_IWARP)
		return false;
	ndk_test_log("SKIP: %s is iWARP", env->adapter_name);
	t_close_all(f);
	return true;
}

#define T_WITHHOLD_RTU	"/sys/module/ndk/parameters/cm_withhold_rtu"

/*
 * A REJ on a connection that is up ends it as a disconnect would.  ib_cm
 * takes a REJ in REP_RCVD/MRA_REP_SENT, ESTABLISHED and DREQ_SENT (6.1
 * cm_rej_handler()), which a peer whose ib_cm still waits for the RTU
 * sends when its connector goes (cm_destroy_id() from REP_SENT).  That
 * window is the RTU's flight; ndk.ko's module parameter cm_withhold_rtu
 * (root only) keeps the RTU back, so the passive side waits for it and
 * its close rejects a connection the active side has up (its ib_cm in
 * MRA_REP_SENT: rdma_cm and ndk.ko see the same REJECTED as in
 * ESTABLISHED; the DREQ_SENT arm has no test).  The active side's disconnect event fires once, its
 * receive is flushed, and DISCONNECT succeeds.  Before the fix the REJ
 * failed the connector as a refused connect: no disconnect event, and
 * DISCONNECT gave STATUS_CONNECTION_INVALID.  IB/RoCE only (iWARP has no
 * REJ after MPA).
 */
static int t_cm_rej_established(struct ndk_test_env *env)
{
	struct ndk_result res;
	struct t_fix f;

	if (t_open(env, &f, 2))
		return t_verdict(env, &f);
	if (t_skip_iwarp(env, &f))
		return NDK_TEST_SKIP;
	if (t_listen(env, &f))
		return t_verdict(env, &f);
	NDK_T_CHECK(env, t_hook_write(T_WITHHOLD_RTU, "1\n"));
	if (t_request(env, &f))
		goto out;
	NDK_T_STATUS(env, ndk_accept(f.p, f.qp[1], 1, 1, NULL, 0, t_disc_cb,
				     &f.disc_p, ndk_t_requested, &f.accept_req),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	NDK_T_STATUS(env, f.connect_req.status, STATUS_SUCCESS);
	if (env->failures)
		goto out;
	NDK_T_STATUS(env, ndk_complete_connect(f.a, t_disc_cb, &f.disc_a,
					       NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_hook_read(T_WITHHOLD_RTU) == 0);
	NDK_T_STATUS(env, ndk_receive(f.qp[0], (void *)61, NULL, 0),
		     STATUS_SUCCESS);
	/* No RTU: the passive side is still accepting. */
	msleep(100);
	NDK_T_CHECK(env, atomic_read(&f.accept_req.calls) == 0);
	if (env->failures)
		goto out;
	/* Its close sends the REJ. */
	t_close_conn(&f.p);
	NDK_T_CHECK(env, ndk_t_wait(&f.accept_req));
	NDK_T_STATUS(env, f.accept_req.status, STATUS_CANCELLED);
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_a));
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_CANCELLED, &f.qp[0], (void *)61);
	NDK_T_STATUS(env, ndk_disconnect(f.a, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)62, NULL, 0, 0),
		     STATUS_CONNECTION_INVALID);
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&f.disc_a.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f.disc_p.calls) == 0);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_hook_write(T_WITHHOLD_RTU, "0\n");
	return t_verdict(env, &f);
}

#define T_HOLD_REQUEST	"/sys/module/ndk/parameters/cm_hold_request_ms"
#define T_HOLD_MS	"5000\n"

/**
 * struct t_ace - cm-accept-closed-early
 * @f:        the fixture
 * @work:     runs ndk_accept(), which the hook holds
 * @accept:   the accept's completion
 * @closed:   the close its completion starts
 * @returned: ndk_accept() returned
 * @status:   what it returned
 */
struct t_ace {
	struct t_fix *f;
	struct work_struct work;
	struct ndk_t_wait accept, closed;
	bool returned;
	s32 status;
};

/* The accept's completion closes the connector, as NDK allows. */
static void t_ace_done(void *context, s32 status)
{
	struct t_ace *a = context;

	ndk_close_connector(a->f->p, ndk_t_closed, &a->closed);
	ndk_t_requested(&a->accept, status);
}

static void t_ace_accept(struct work_struct *work)
{
	struct t_ace *a = container_of(work, struct t_ace, work);

	a->status = ndk_accept(a->f->p, a->f->qp[1], 1, 1, NULL, 0, NULL,
			       NULL, t_ace_done, a);
	WRITE_ONCE(a->returned, true);
}

/*
 * An asynchronous accept whose request the peer ends before ndk_accept()
 * has queued its work: the module parameter cm_hold_request_ms (root
 * only) holds the accept between publishing its completion and queueing
 * the work, the active side's close sends a REJ (ib_cm rejects from
 * REQ_SENT), the REJ completes the accept, and that completion closes the
 * passive connector.  The close must wait for the accept: before the fix
 * (the work's reference taken only at the queueing) the connector was
 * freed while ndk_accept() still wrote to it, and its QP reference was
 * never dropped (the QP's close hung).  IB/RoCE only: an iWARP peer's
 * close before the accept is a TCP reset, with no event before the MPA
 * reply.
 */
static int t_cm_accept_closed_early(struct ndk_test_env *env)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	struct ndk_t_wait cq;
	struct t_ace a = {};
	struct t_fix f;

	if (t_open(env, &f, 2))
		return t_verdict(env, &f);
	if (t_skip_iwarp(env, &f))
		return NDK_TEST_SKIP;
	if (t_listen(env, &f))
		return t_verdict(env, &f);
	if (t_request(env, &f))
		return t_verdict(env, &f);

	a.f = &f;
	ndk_t_wait_init(&a.accept);
	ndk_t_wait_init(&a.closed);
	INIT_WORK_ONSTACK(&a.work, t_ace_accept);
	NDK_T_CHECK(env, t_hook_write(T_HOLD_REQUEST, T_HOLD_MS));
	queue_work(system_unbound_wq, &a.work);
	/* The hook disarms as the hold starts. */
	while (t_hook_read(T_HOLD_REQUEST) > 0 && time_before(jiffies, end))
		usleep_range(1000, 2000);
	t_close_conn(&f.a);
	NDK_T_CHECK(env, ndk_t_wait(&a.accept));
	ndk_test_log("accept ended by the REJ: %#x, ndk_accept() %s",
		     a.accept.status,
		     READ_ONCE(a.returned) ? "had returned" : "still held");
	NDK_T_CHECK(env, !READ_ONCE(a.returned));
	NDK_T_CHECK(env, a.accept.status == STATUS_IO_TIMEOUT ||
		    a.accept.status == STATUS_CONNECTION_REFUSED);
	/* The close waits for the held request. */
	msleep(300);
	NDK_T_CHECK(env, atomic_read(&a.closed.calls) == 0);
	NDK_T_CHECK(env, !READ_ONCE(a.returned));
	flush_work(&a.work);
	destroy_work_on_stack(&a.work);
	f.p = NULL;
	NDK_T_STATUS(env, a.status, STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&a.closed));
	NDK_T_CHECK(env, atomic_read(&a.accept.calls) == 1);
	/* The connector's close released the QP. */
	ndk_t_wait_init(&cq);
	NDK_T_STATUS(env, ndk_close_qp(f.qp[1], ndk_t_closed, &cq),
		     STATUS_PENDING);
	f.qp[1] = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&cq));
	t_hook_write(T_HOLD_REQUEST, "0\n");
	return t_verdict(env, &f);
}

/* --- A kernel listener's memory cgroup ---------------------------------- */

#define T_KC_LISTENERS	4
#define T_KC_PER	120	/* below the backlog of 128 */
#define T_KC_REQS	(T_KC_LISTENERS * T_KC_PER)

/**
 * struct t_kc - cm-listen-kernel-charge
 * @adapter:  the adapter
 * @pd:       the PD of the active QPs
 * @cq:       their CQ
 * @l:        the listeners, made by the scenario's process
 * @laddr:    their addresses
 * @qp:       the active QPs, made by t_kc_maker()
 * @a:        the active connectors, made by t_kc_maker()
 * @lock:     protects @p and @got
 * @p:        the passive connectors the ConnectEvents handed over
 * @got:      ConnectEvents so far
 * @all:      completed at the T_KC_REQS-th ConnectEvent
 * @made:     completed by t_kc_maker() once its requests are made
 * @failed:   creates or connects t_kc_maker() saw fail
 */
struct t_kc {
	struct ndk_adapter *adapter;
	struct ndk_pd *pd;
	struct ndk_cq *cq;
	struct ndk_listener *l[T_KC_LISTENERS];
	struct sockaddr_in laddr[T_KC_LISTENERS];
	struct ndk_qp *qp[T_KC_REQS];
	struct ndk_connector *a[T_KC_REQS];
	spinlock_t lock;	/* protects p and got */
	struct ndk_connector *p[T_KC_REQS];
	int got;
	struct completion all;
	struct completion made;
	int failed;
};

static void t_kc_event(void *context, struct ndk_connector *c)
{
	struct t_kc *k = context;
	bool keep, last;

	spin_lock(&k->lock);
	keep = k->got < T_KC_REQS;
	if (keep)
		k->p[k->got] = c;
	last = ++k->got == T_KC_REQS;
	spin_unlock(&k->lock);
	if (!keep)
		ndk_close_connector(c, ndk_t_closed, NULL);
	if (last)
		complete(&k->all);
}

static void t_kc_done(void *context, s32 status)
{
}

static void t_kc_cq_notify(void *context, s32 status)
{
}

/*
 * The active ends, from a kernel thread: no memory cgroup is charged for
 * what it allocates.  Returns when stopped, all made (a thread stopped
 * before it first ran would never run this at all).
 */
static int t_kc_maker(void *data)
{
	struct t_kc *k = data;
	int i;

	for (i = 0; i < T_KC_REQS; i++) {
		if (ndk_create_qp(k->pd, k->cq, k->cq, k, 1, 1, 1, 1, 0, NULL,
				  NULL, &k->qp[i]) ||
		    ndk_create_connector(k->adapter, NULL, NULL, &k->a[i]) ||
		    ndk_connect(k->a[i], k->qp[i], NULL, 0,
				(struct sockaddr *)&k->laddr[i % T_KC_LISTENERS],
				sizeof(k->laddr[0]), 0, 0, NULL, 0, t_kc_done,
				NULL) != STATUS_PENDING)
			k->failed++;
	}
	complete(&k->made);
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

/* The cgroup's memory.current, in bytes. */
static u64 t_kc_usage(struct mem_cgroup *memcg)
{
	return (u64)page_counter_read(&memcg->memory) * PAGE_SIZE;
}

/*
 * A kernel consumer's listener charges no memory cgroup for its peers'
 * requests.  Run inside a memory cgroup (tests/vm/memcg-run.sh), the
 * scenario listens on four listeners from its process, then a kernel
 * thread makes 480 connection requests, which the listeners hand over
 * and which stay pending.  memory.current must not grow by their
 * connectors (1 to 2 KiB each): before the fix ndk_listen() took the
 * caller's cgroup for every listener, and rdma_cm's worker charged each
 * request's connector to it, ndkblk's target's to modprobe's cgroup.  The
 * charge moves in per-CPU batches of 64 pages, so the bound is 96 KiB,
 * below 480 connectors less one batch.
 */
static int t_cm_listen_kernel_charge(struct ndk_test_env *env)
{
	struct mem_cgroup *memcg = NULL;
	struct task_struct *task;
	struct sockaddr_in sin;
	u64 before, after;
	struct t_kc *k;
	int i, got;
	u32 len;

	if (current->mm)
		memcg = get_mem_cgroup_from_mm(current->mm);
	if (!memcg || !memcg->css.parent) {
		ndk_test_log("SKIP: not in a memory cgroup (tests/vm/memcg-run.sh)");
		mem_cgroup_put(memcg);
		return NDK_TEST_SKIP;
	}
	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k) {
		mem_cgroup_put(memcg);
		return NDK_TEST_FAIL;
	}
	spin_lock_init(&k->lock);
	init_completion(&k->all);
	init_completion(&k->made);
	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &k->adapter)) {
		ndk_test_log("cannot open %s", env->adapter_name);
		env->failures++;
		goto out;
	}
	NDK_T_STATUS(env, ndk_create_pd(k->adapter, NULL, NULL, &k->pd),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_cq(k->adapter, 2 * T_KC_REQS,
					t_kc_cq_notify, NULL, NULL, NULL, NULL,
					&k->cq), STATUS_SUCCESS);
	if (env->failures)
		goto out;
	t_addr(env, &sin, 0);
	for (i = 0; i < T_KC_LISTENERS; i++) {
		len = sizeof(k->laddr[i]);
		NDK_T_STATUS(env, ndk_create_listener(k->adapter, t_kc_event, k,
						      NULL, NULL, &k->l[i]),
			     STATUS_SUCCESS);
		if (!k->l[i])
			goto out;
		NDK_T_STATUS(env, ndk_listen(k->l[i], (struct sockaddr *)&sin,
					     sizeof(sin), NULL, NULL),
			     STATUS_SUCCESS);
		NDK_T_STATUS(env, t_laddr(k->l[i], &k->laddr[i], &len),
			     STATUS_SUCCESS);
	}
	if (env->failures)
		goto out;
	before = t_kc_usage(memcg);
	task = kthread_run(t_kc_maker, k, "ndk_t_kc");
	if (IS_ERR(task)) {
		ndk_test_log("kthread_run: %ld", PTR_ERR(task));
		env->failures++;
		goto out;
	}
	NDK_T_CHECK(env, wait_for_completion_timeout(&k->made,
						     3 * NDK_T_TIMEOUT));
	kthread_stop(task);
	NDK_T_CHECK(env, !k->failed);
	NDK_T_CHECK(env, wait_for_completion_timeout(&k->all,
						     3 * NDK_T_TIMEOUT));
	after = t_kc_usage(memcg);
	spin_lock(&k->lock);
	got = k->got;
	spin_unlock(&k->lock);
	ndk_test_log("%d requests pending: memory.current %llu -> %llu", got,
		     before, after);
	NDK_T_CHECK(env, after < before + SZ_64K + SZ_32K);
out:
	/* Closing a passive connector rejects its request. */
	for (i = 0; i < T_KC_REQS; i++)
		t_close_conn(&k->p[i]);
	for (i = 0; i < T_KC_REQS; i++)
		t_close_conn(&k->a[i]);
	for (i = 0; i < T_KC_LISTENERS; i++)
		if (k->l[i])
			ndk_close_listener(k->l[i], NULL, NULL);
	for (i = 0; i < T_KC_REQS; i++)
		if (k->qp[i])
			ndk_close_qp(k->qp[i], NULL, NULL);
	if (k->cq)
		ndk_close_cq(k->cq, NULL, NULL);
	if (k->pd)
		ndk_close_pd(k->pd, NULL, NULL);
	if (k->adapter)
		ndk_close_adapter(k->adapter);
	kfree(k);
	mem_cgroup_put(memcg);
	return env->failures ? NDK_TEST_FAIL : NDK_TEST_PASS;
}

/*
 * Nobody listens on the port (a listener had it and closed): refused.
 * Blocking and asynchronous.
 */
static int t_cm_no_listener(struct ndk_test_env *env)
{
	struct t_fix f;
	s32 s;

	if (t_open(env, &f, 2) || t_listen(env, &f))
		return t_verdict(env, &f);
	ndk_close_listener(f.listener, NULL, NULL);
	f.listener = NULL;
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	s = ndk_connect(f.a, f.qp[0], NULL, 0, (struct sockaddr *)&f.laddr,
			sizeof(f.laddr), 0, 0, NULL, 0, NULL, NULL);
	ndk_test_log("blocking connect to a closed port: %#x", s);
	NDK_T_STATUS(env, s, STATUS_CONNECTION_REFUSED);
	t_close_conn(&f.a);

	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[1], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 0, 0, NULL, 0,
				      ndk_t_requested, &f.connect_req),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	NDK_T_STATUS(env, f.connect_req.status, STATUS_CONNECTION_REFUSED);
	msleep(100);
	NDK_T_CHECK(env, atomic_read(&f.connect_req.calls) == 1);
	return t_verdict(env, &f);
}

/*
 * Destinations that cannot be reached: an address of the adapter's subnet
 * nobody answers ARP for, and one without a route.  A source address that
 * is not local: STATUS_INVALID_ADDRESS.
 */
static int t_cm_unreachable(struct ndk_test_env *env)
{
	struct sockaddr_in dst, src;
	struct t_fix f;
	s32 s;

	if (t_open(env, &f, 1))
		return t_verdict(env, &f);
	t_addr(env, &dst, 4791);
	dst.sin_addr.s_addr = htonl(ntohl(dst.sin_addr.s_addr) + 1);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&dst, sizeof(dst),
				      0, 0, NULL, 0, ndk_t_requested,
				      &f.connect_req), STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	ndk_test_log("connect to %pI4 (no such host): %#x", &dst.sin_addr,
		     f.connect_req.status);
	NDK_T_CHECK(env, t_unreachable(f.connect_req.status));
	t_close_conn(&f.a);

	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	dst.sin_addr.s_addr = htonl(0xc0000201);	/* 192.0.2.1 */
	s = ndk_connect(f.a, f.qp[0], NULL, 0, (struct sockaddr *)&dst,
			sizeof(dst), 0, 0, NULL, 0, NULL, NULL);
	ndk_test_log("connect to %pI4 (no route): %#x", &dst.sin_addr, s);
	NDK_T_CHECK(env, t_unreachable(s));
	t_close_conn(&f.a);

	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	t_addr(env, &dst, 4791);
	src = dst;
	src.sin_port = 0;
	src.sin_addr.s_addr = htonl(0xc0000201);
	s = ndk_connect(f.a, f.qp[0], (struct sockaddr *)&src, sizeof(src),
			(struct sockaddr *)&dst, sizeof(dst), 0, 0, NULL, 0,
			NULL, NULL);
	ndk_test_log("connect from %pI4 (not local): %#x", &src.sin_addr, s);
	NDK_T_STATUS(env, s, STATUS_INVALID_ADDRESS);
	return t_verdict(env, &f);
}

/*
 * ndk_control_connect_events(): paused, a request waits without a
 * ConnectEvent; resumed, it arrives and is accepted.  Then a request left
 * queued when the listener closes is refused.
 */
static int t_cm_pause(struct ndk_test_env *env)
{
	struct t_fix f;

	if (t_open(env, &f, 1) || t_listen(env, &f))
		return t_verdict(env, &f);
	if (t_new_qp(env, &f, 1))
		return t_verdict(env, &f);
	f.auto_accept = true;
	f.clen = 3;
	f.slen = 3;
	NDK_T_STATUS(env, ndk_control_connect_events(f.listener, true),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 1, 1, f.cdata, f.clen,
				      ndk_t_requested, &f.connect_req),
		     STATUS_PENDING);
	/* Paused: no ConnectEvent, the connect stays pending. */
	NDK_T_CHECK(env, !wait_for_completion_timeout(&f.got, HZ));
	NDK_T_CHECK(env, f.count == 0);
	NDK_T_CHECK(env, atomic_read(&f.connect_req.calls) == 0);
	NDK_T_STATUS(env, ndk_control_connect_events(f.listener, false),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_got_event(&f));
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	NDK_T_STATUS(env, f.connect_req.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, f.connect_req.seq > f.event_seq);
	if (env->failures)
		return t_verdict(env, &f);
	f.conn[0] = NULL;	/* f.p owns it */
	NDK_T_STATUS(env, ndk_complete_connect(f.a, NULL, NULL, NULL, NULL),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.accept_req));
	NDK_T_STATUS(env, f.accept_req.status, STATUS_SUCCESS);
	t_close_conn(&f.a);
	t_close_conn(&f.p);

	/* Paused again; the listener closes with the request queued. */
	if (t_new_qp(env, &f, 0))
		return t_verdict(env, &f);
	ndk_t_wait_init(&f.connect_req);
	NDK_T_STATUS(env, ndk_control_connect_events(f.listener, true),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&f.laddr,
				      sizeof(f.laddr), 1, 1, NULL, 0,
				      ndk_t_requested, &f.connect_req),
		     STATUS_PENDING);
	msleep(500);
	NDK_T_CHECK(env, f.count == 1);
	NDK_T_STATUS(env, ndk_close_listener(f.listener, NULL, NULL),
		     STATUS_SUCCESS);
	f.listener = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	NDK_T_STATUS(env, f.connect_req.status, STATUS_CONNECTION_REFUSED);
	NDK_T_CHECK(env, f.count == 1);
	return t_verdict(env, &f);
}

/*
 * Closing in the orders the lifetime rules allow:
 *  - the active connector closes while connected: the peer is told;
 *  - a QP closed before its connector: its close completes after the
 *    connector's;
 *  - the listener closed before the connector it handed over: its close
 *    completes after that connector's;
 *  - a connector closed with a connect pending: the connect completes
 *    (STATUS_CANCELLED, or its real outcome if that came first) before
 *    the close completion.
 */
static int t_cm_close_order(struct ndk_test_env *env)
{
	struct ndk_t_wait cq, cl, cc, cp;
	struct sockaddr_in dst;
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f))
		return t_verdict(env, &f);
	if (t_connect_async(env, &f))
		return t_verdict(env, &f);

	/* The QP's and the listener's closes wait for the connectors. */
	ndk_t_wait_init(&cq);
	ndk_t_wait_init(&cl);
	NDK_T_STATUS(env, ndk_close_qp(f.qp[1], ndk_t_closed, &cq),
		     STATUS_PENDING);
	f.qp[1] = NULL;
	NDK_T_STATUS(env, ndk_close_listener(f.listener, ndk_t_closed, &cl),
		     STATUS_PENDING);
	f.listener = NULL;
	msleep(300);
	NDK_T_CHECK(env, atomic_read(&cq.calls) == 0);
	NDK_T_CHECK(env, atomic_read(&cl.calls) == 0);

	/* Active closes without disconnecting: the peer is told. */
	ndk_t_wait_init(&cc);
	NDK_T_STATUS(env, ndk_close_connector(f.a, ndk_t_closed, &cc),
		     STATUS_PENDING);
	f.a = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&cc));
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_p));
	NDK_T_CHECK(env, atomic_read(&f.disc_a.calls) == 0);

	ndk_t_wait_init(&cp);
	NDK_T_STATUS(env, ndk_close_connector(f.p, ndk_t_closed, &cp),
		     STATUS_PENDING);
	f.p = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&cp));
	NDK_T_CHECK(env, ndk_t_wait(&cq));
	NDK_T_CHECK(env, ndk_t_wait(&cl));
	NDK_T_CHECK(env, cq.seq > cp.seq);
	NDK_T_CHECK(env, cl.seq > cp.seq);
	NDK_T_CHECK(env, atomic_read(&f.disc_p.calls) == 1);

	/* A pending connect (to a host that never answers ARP) and a close. */
	ndk_t_wait_init(&f.connect_req);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &f.a),
		     STATUS_SUCCESS);
	if (env->failures)
		return t_verdict(env, &f);
	t_addr(env, &dst, 4791);
	dst.sin_addr.s_addr = htonl(ntohl(dst.sin_addr.s_addr) + 1);
	NDK_T_STATUS(env, ndk_connect(f.a, f.qp[0], NULL, 0,
				      (struct sockaddr *)&dst, sizeof(dst),
				      0, 0, NULL, 0, ndk_t_requested,
				      &f.connect_req), STATUS_PENDING);
	ndk_t_wait_init(&cc);
	NDK_T_STATUS(env, ndk_close_connector(f.a, ndk_t_closed, &cc),
		     STATUS_PENDING);
	f.a = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&cc));
	NDK_T_CHECK(env, atomic_read(&f.connect_req.calls) == 1);
	NDK_T_CHECK(env, f.connect_req.seq < cc.seq);
	ndk_test_log("connect pending at close: %#x", f.connect_req.status);
	NDK_T_CHECK(env, t_cancelled_or_unreachable(f.connect_req.status));
	return t_verdict(env, &f);
}

/*
 * Data-path scenarios over a connection made by the connector.  They move
 * zero-length messages: a zero-length send, receive, RDMA write or RDMA
 * read needs no MR token, yet each is a real packet exchange that
 * completes only on a connected RC QP.  Byte-carrying traffic with
 * registered memory follows further down.
 */

/*
 * Initiator posts fail with STATUS_CONNECTION_INVALID, and produce no
 * result, until ndk_complete_connect() has succeeded; then they work.
 */
static int t_cm_dp_not_connected(struct ndk_test_env *env)
{
	struct ndk_result res[2];
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f))
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)1, NULL, 0, 0),
		     STATUS_CONNECTION_INVALID);
	if (t_request(env, &f))
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_accept(f.p, f.qp[1], 1, 1, NULL, 0, t_disc_cb,
				     &f.disc_p, ndk_t_requested, &f.accept_req),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&f.connect_req));
	NDK_T_STATUS(env, f.connect_req.status, STATUS_SUCCESS);
	/* Accepted by the peer, not completed here: still not connected. */
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)2, NULL, 0, 0),
		     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)3, NULL, 0, 0, 0, 0),
		     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, ndk_complete_connect(f.a, t_disc_cb, &f.disc_a,
					       NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.accept_req));
	NDK_T_STATUS(env, f.accept_req.status, STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)4, NULL, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)5, NULL, 0, 0),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], res, 1) == 1);
	t_check_result(env, &res[0], STATUS_SUCCESS, &f.qp[0], (void *)5);
	NDK_T_CHECK(env, t_poll(f.cq[1], res, 1) == 1);
	t_check_result(env, &res[0], STATUS_SUCCESS, &f.qp[1], (void *)4);
	/* The refused posts left nothing behind. */
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
	return t_verdict(env, &f);
}

/* Zero-length sends both ways; a silent send completes only remotely. */
static int t_cm_dp_send_recv(struct ndk_test_env *env)
{
	struct ndk_result res[2];
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)11, NULL, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)12, NULL, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_receive(f.qp[0], (void *)13, NULL, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)21, NULL, 0, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)22, NULL, 0,
				   NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_send(f.qp[1], (void *)23, NULL, 0, 0),
		     STATUS_SUCCESS);
	/* Active: its send (not the silent one) and the passive's message. */
	NDK_T_CHECK(env, t_poll(f.cq[0], res, 2) == 2);
	if (res[0].request_context == (void *)13)
		swap(res[0], res[1]);
	t_check_result(env, &res[0], STATUS_SUCCESS, &f.qp[0], (void *)21);
	t_check_result(env, &res[1], STATUS_SUCCESS, &f.qp[0], (void *)13);
	/* Passive: both receives in order, and its own send. */
	NDK_T_CHECK(env, t_poll(f.cq[1], res, 2) == 2);
	if (res[0].request_context == (void *)23)
		swap(res[0], res[1]);
	t_check_result(env, &res[0], STATUS_SUCCESS, &f.qp[1], (void *)11);
	NDK_T_CHECK(env, t_poll(f.cq[1], res + 1, 1) == 1);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
	NDK_T_CHECK(env, t_cq_quiet(f.cq[1]));
	return t_verdict(env, &f);
}

/* Zero-length RDMA write and read: initiator results only. */
static int t_cm_dp_read_write(struct ndk_test_env *env)
{
	struct ndk_result res[2];
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)31, NULL, 0, 0, 0, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_read(f.qp[0], (void *)32, NULL, 0, 0, 0, 0),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], res, 2) == 2);
	t_check_result(env, &res[0], STATUS_SUCCESS, &f.qp[0], (void *)31);
	t_check_result(env, &res[1], STATUS_SUCCESS, &f.qp[0], (void *)32);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[1]));
	return t_verdict(env, &f);
}

/*
 * The peer disconnects: receives posted here are flushed with
 * STATUS_CANCELLED, initiator posts fail with STATUS_CONNECTION_INVALID.
 */
static int t_cm_dp_disconnect_flush(struct ndk_test_env *env)
{
	struct ndk_result res[2];
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)41, NULL, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)42, NULL, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_disconnect(f.a, NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_p));
	NDK_T_CHECK(env, t_poll(f.cq[1], res, 2) == 2);
	t_check_result(env, &res[0], STATUS_CANCELLED, &f.qp[1], (void *)41);
	t_check_result(env, &res[1], STATUS_CANCELLED, &f.qp[1], (void *)42);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)43, NULL, 0, 0),
		     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, ndk_send(f.qp[1], (void *)44, NULL, 0, 0),
		     STATUS_CONNECTION_INVALID);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
	return t_verdict(env, &f);
}

/* --- Byte-carrying traffic with registered memory ------------------------ */

/* Send/receive: the bytes arrive exactly, nothing else is touched. */
static int t_cm_dp_bytes_send_recv(struct ndk_test_env *env)
{
	struct t_buf src = {}, dst = {};
	struct ndk_result res;
	struct ndk_sge sge;
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_buf_reg(env, &f, &src, 4096, NDK_MR_FLAG_ALLOW_LOCAL_READ) ||
	    t_buf_reg(env, &f, &dst, 4096, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		goto out;
	get_random_bytes(src.data, src.len);

	sge = t_sge(&dst, 0, 1500);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)31, &sge, 1),
		     STATUS_SUCCESS);
	sge = t_sge(&src, 7, 1000);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)32, &sge, 1, 0),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)32);
	NDK_T_CHECK(env, t_poll(f.cq[1], &res, 1) == 1);
	NDK_T_STATUS(env, res.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, res.request_context == (void *)31);
	NDK_T_CHECK(env, res.bytes_transferred == 1000);
	NDK_T_CHECK(env, memcmp(dst.data, src.data + 7, 1000) == 0);
	NDK_T_CHECK(env, t_all(dst.data + 1000, 0, dst.len - 1000));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &dst);
	return t_verdict(env, &f);
}

/* RDMA write and read through the peer's remote token, byte-exact. */
static int t_cm_dp_bytes_write_read(struct ndk_test_env *env)
{
	struct t_buf src = {}, sink = {}, remote = {};
	struct ndk_result res;
	struct ndk_sge sge;
	struct t_fix f;
	u32 rtok;

	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_buf_reg(env, &f, &src, 8192, NDK_MR_FLAG_ALLOW_LOCAL_READ) ||
	    t_buf_reg(env, &f, &sink, 8192, NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
					    NDK_MR_FLAG_RDMA_READ_SINK) ||
	    t_buf_reg(env, &f, &remote, 8192, NDK_MR_FLAG_ALLOW_REMOTE_READ |
					      NDK_MR_FLAG_ALLOW_REMOTE_WRITE))
		goto out;
	get_random_bytes(src.data, src.len);
	rtok = ndk_get_remote_token_from_mr(remote.mr);

	sge = t_sge(&src, 3, 5000);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)41, &sge, 1,
				    t_raddr(&remote, 500), rtok, 0),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)41);
	NDK_T_CHECK(env, memcmp(remote.data + 500, src.data + 3, 5000) == 0);
	NDK_T_CHECK(env, t_all(remote.data, 0, 500));
	NDK_T_CHECK(env, t_all(remote.data + 5500, 0, remote.len - 5500));

	sge = t_sge(&sink, 100, 5000);
	NDK_T_STATUS(env, ndk_read(f.qp[0], (void *)42, &sge, 1,
				   t_raddr(&remote, 500), rtok, 0),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)42);
	NDK_T_CHECK(env, memcmp(sink.data + 100, src.data + 3, 5000) == 0);
	NDK_T_CHECK(env, t_all(sink.data, 0, 100));
	NDK_T_CHECK(env, t_all(sink.data + 5100, 0, sink.len - 5100));

	/* One byte past the end of the remote region: a remote error. */
	sge = t_sge(&src, 0, 2);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)43, &sge, 1,
				    t_raddr(&remote, remote.len - 1), rtok, 0),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	NDK_T_STATUS(env, res.status, STATUS_REMOTE_RESOURCES);
	NDK_T_CHECK(env, remote.data[remote.len - 1] == 0);
out:
	t_buf_free(env, &src);
	t_buf_free(env, &sink);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/*
 * Register a page to write from and a page of the peer to write to, and
 * take @remote's remote token.  Return: 0, or what t_buf_reg() failed with.
 */
static int t_src_remote(struct ndk_test_env *env, struct t_fix *f,
			struct t_buf *src, struct t_buf *remote, u32 *rtok)
{
	int ret;

	ret = t_buf_reg(env, f, src, 4096, NDK_MR_FLAG_ALLOW_LOCAL_READ);
	if (!ret)
		ret = t_buf_reg(env, f, remote, 4096,
				NDK_MR_FLAG_ALLOW_REMOTE_WRITE);
	if (!ret)
		*rtok = ndk_get_remote_token_from_mr(remote->mr);
	return ret;
}

/*
 * Whether the first @len bytes of @src arrived in @remote within
 * NDK_T_TIMEOUT: silent writes that succeeded give no result to wait for.
 */
static bool t_arrived(const struct t_buf *remote, const struct t_buf *src,
		      u32 len)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;

	while (memcmp(remote->data, src->data, len) &&
	       time_before(jiffies, end))
		msleep(20);
	return !memcmp(remote->data, src->data, len);
}

/*
 * @n silent 8-byte writes through QP @q, from @src to @remote at @off on,
 * request contexts @ctx on; each must be accepted.
 */
static void t_silent_writes(struct ndk_test_env *env, struct t_fix *f, int q,
			    struct t_buf *src, struct t_buf *remote, u32 rtok,
			    u32 off, u32 n, u32 ctx)
{
	struct ndk_sge sge;
	u32 i, at;

	for (i = 0; i < n; i++) {
		at = off + i * 8;
		sge = t_sge(src, at, 8);
		NDK_T_STATUS(env, ndk_write(f->qp[q], (void *)(uintptr_t)(ctx + i),
					    &sge, 1, t_raddr(remote, at), rtok,
					    NDK_OP_FLAG_SILENT_SUCCESS),
			     STATUS_SUCCESS);
	}
}

/* SILENT_SUCCESS: no result on success, one on failure. */
static int t_cm_dp_silent(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	struct ndk_result res;
	struct ndk_sge sge;
	struct t_fix f;
	u32 rtok;

	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	memset(src.data, 0x5c, src.len);

	sge = t_sge(&src, 0, 100);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)51, &sge, 1,
				    t_raddr(&remote, 0), rtok,
				    NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));

	/* The source MR has no remote rights: its token is refused. */
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)52, &sge, 1,
				    t_raddr(&src, 0),
				    ndk_get_remote_token_from_mr(src.mr),
				    NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	NDK_T_STATUS(env, res.status, STATUS_REMOTE_RESOURCES);
	NDK_T_CHECK(env, res.request_context == (void *)52);
	/* Write 51 ran, before 52 failed (RC keeps the order). */
	NDK_T_CHECK(env, t_all(remote.data, 0x5c, 100));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/*
 * Silent requests reach the device unsignaled (one in every half queue is
 * signaled): 64 silent writes through 8 slots never leave the queue full
 * for good and give no result, their data arrives, and a failure among
 * unsignaled requests still gives its own result, while the successful
 * ones before it give none.
 */
static int t_cm_dp_unsignaled(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	struct ndk_result res;
	unsigned long end;
	struct ndk_sge sge;
	u32 rtok, i = 0, full = 0;
	struct t_fix f;
	s32 st;

	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	t_fill(src.data, 512, 7);

	/* i == 64: a signaled barrier, whose result is the only one. */
	end = jiffies + NDK_T_TIMEOUT;
	while (i <= 64 && time_before(jiffies, end)) {
		sge = t_sge(&src, i * 8, 8);
		if (i < 64)
			st = ndk_write(f.qp[0], (void *)(uintptr_t)(100 + i),
				       &sge, 1, t_raddr(&remote, i * 8), rtok,
				       NDK_OP_FLAG_SILENT_SUCCESS);
		else
			st = ndk_write(f.qp[0], (void *)99, NULL, 0, 0, 0, 0);
		if (st == STATUS_INSUFFICIENT_RESOURCES) {
			/* Polling retires; silent successes give nothing. */
			NDK_T_CHECK(env, !ndk_get_cq_results(f.cq[0], &res, 1));
			full++;
			usleep_range(100, 200);
			continue;
		}
		NDK_T_STATUS(env, st, STATUS_SUCCESS);
		if (st)
			goto out;
		i++;
	}
	NDK_T_CHECK(env, i == 65);
	ndk_test_log("64 silent writes through 8 slots: queue full %u times",
		     full);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)99);
	NDK_T_CHECK(env, !memcmp(remote.data, src.data, 512));

	/* Two silent writes that succeed, then a silent one refused. */
	for (i = 0; i < 2; i++) {
		sge = t_sge(&src, 0, 8);
		NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)(uintptr_t)(60 + i),
					    &sge, 1, t_raddr(&remote, 0), rtok,
					    NDK_OP_FLAG_SILENT_SUCCESS),
			     STATUS_SUCCESS);
	}
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)62, &sge, 1,
				    t_raddr(&src, 0),
				    ndk_get_remote_token_from_mr(src.mr),
				    NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	NDK_T_STATUS(env, res.status, STATUS_REMOTE_RESOURCES);
	NDK_T_CHECK(env, res.request_context == (void *)62);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/* Fresh connections of cm-dp-silent-read-fail; each failed read ends one. */
#define T_SRF_ROUNDS	3

/*
 * One round of t_cm_dp_silent_read_fail(): a silent read the peer
 * refuses, then a signaled write.
 */
static void t_silent_read_round(struct ndk_test_env *env)
{
	struct t_buf sink = {}, src = {}, remote = {};
	struct ndk_result res[2];
	bool read = false, write = false;
	struct ndk_sge sge;
	struct t_fix f;
	u32 rtok = 0, i, n;

	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		goto out_fix;
	if (t_buf_reg(env, &f, &sink, 4096, NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
					    NDK_MR_FLAG_RDMA_READ_SINK) ||
	    t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	/*
	 * Past the end of @src, which has no remote rights either: the peer
	 * refuses the read (siw checks no rights on remote reads, but the
	 * range: security.md, "Known limits").
	 */
	sge = t_sge(&sink, 0, 64);
	NDK_T_STATUS(env, ndk_read(f.qp[0], (void *)81, &sge, 1,
				   t_raddr(&src, src.len),
				   ndk_get_remote_token_from_mr(src.mr),
				   NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
	sge = t_sge(&src, 0, 64);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)82, &sge, 1,
				    t_raddr(&remote, 0), rtok, 0),
		     STATUS_SUCCESS);
	n = t_poll(f.cq[0], res, 2);
	for (i = 0; i < n; i++) {
		ndk_test_log("result %p: status %#x", res[i].request_context,
			     res[i].status);
		if (res[i].request_context == (void *)81) {
			NDK_T_CHECK(env, !read);
			NDK_T_CHECK(env, res[i].status != STATUS_SUCCESS);
			read = true;
		} else {
			/* Sent before the failure (siw), or behind it. */
			NDK_T_CHECK(env, res[i].request_context == (void *)82);
			NDK_T_CHECK(env, !write);
			write = true;
		}
	}
	NDK_T_CHECK(env, read && write);
	/* No second result of either. */
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_buf_free(env, &sink);
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
out_fix:
	t_verdict(env, &f);
}

/*
 * A silent read that fails gives its failure result although a signaled
 * write behind it completed first.  siw completes a READ only when its
 * response arrives but a WRITE as soon as it is sent, so the write's
 * completion may come first; while silent reads were posted unsignaled,
 * its translation retired the read as successful, and the read's failure
 * was lost (a late ib_wc in an ib_cq entry nothing reserved any more).
 * Reads are now posted signaled (ndk_qp.c, "Unsignaled requests").  On
 * rxe, which completes in order, the write is cancelled behind the
 * failure; the scenario is for siw, as siw-cm-dp-silent-read-fail.
 */
static int t_cm_dp_silent_read_fail(struct ndk_test_env *env)
{
	u32 round;

	for (round = 0; round < T_SRF_ROUNDS && !env->failures; round++)
		t_silent_read_round(env);
	return env->failures ? NDK_TEST_FAIL : NDK_TEST_PASS;
}

/* QP 0's initiator depth in cm-dp-refused-run: not a power of two. */
#define T_RR_DEPTH	6
#define T_RR_ROUNDS	20
/*
 * The RequestContext ndk.ko's debugfs fail_qp_post refuses: the vm test
 * arms it with this value (run-ktest.sh --fail-qp-post).
 */
#define T_RR_REFUSED	((void *)0x7265667573656421ULL)

/*
 * Post one initiator request of cm-dp-refused-run until it is not refused
 * for a full queue, polling the CQ meanwhile (polling retires unsignaled
 * requests; nothing of this scenario gives a result then).  Return: its
 * status, or STATUS_INSUFFICIENT_RESOURCES when the queue stayed full
 * for NDK_T_TIMEOUT.
 */
static s32 t_rr_post(struct ndk_test_env *env, struct t_fix *f, bool refused)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	struct ndk_result res;
	s32 st;

	for (;;) {
		if (refused)
			st = ndk_write(f->qp[0], T_RR_REFUSED, NULL, 0, 0, 0, 0);
		else
			st = ndk_write(f->qp[0], (void *)72, NULL, 0, 0, 0,
				       NDK_OP_FLAG_SILENT_SUCCESS);
		if (st != STATUS_INSUFFICIENT_RESOURCES ||
		    time_after(jiffies, end))
			return st;
		NDK_T_CHECK(env, !ndk_get_cq_results(f->cq[0], &res, 1));
		usleep_range(100, 200);
	}
}

/*
 * Silent zero-length writes, then a signaled request the device refuses
 * at ib_post_send(), again and again: the queue never jams.  ndk.ko
 * counted the refused request in the run of unsignaled requests (a
 * signaled one reset it) without giving it back, so with a depth of 6
 * (2 unsignaled in a row at most) the third round found 6 unsignaled
 * requests claimed that nothing would retire, and every post failed
 * with STATUS_INSUFFICIENT_RESOURCES for good.  The refusal: ndk.ko's
 * fault-injection hook (debugfs fail_qp_post, armed with T_RR_REFUSED)
 * refuses the post as a device does, with -EINVAL, after ndk.ko's own
 * checks passed it.  Before that, the depth of 6 (slot rings are powers
 * of two) holds: a seventh request is refused while six are outstanding.
 */
static int t_cm_dp_refused_run(struct ndk_test_env *env)
{
	struct ndk_result res[T_RR_DEPTH];
	struct t_fix f;
	u32 q, i, round;
	s32 st;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	for (q = 0; q < 2; q++)
		NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[q], f.cq[q], &f.qp[q],
						8, T_RR_DEPTH, 1, 0, 0, NULL,
						NULL, &f.qp[q]),
			     STATUS_SUCCESS);
	if (!f.qp[0] || !f.qp[1] || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);

	/* The depth asked for, not the slot ring's 8. */
	for (i = 0; i < T_RR_DEPTH; i++)
		NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)(uintptr_t)(i + 1),
					    NULL, 0, 0, 0, 0), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)7, NULL, 0, 0, 0, 0),
		     STATUS_INSUFFICIENT_RESOURCES);
	NDK_T_CHECK(env, t_poll(f.cq[0], res, T_RR_DEPTH) == T_RR_DEPTH);
	for (i = 0; i < T_RR_DEPTH; i++)
		t_check_result(env, &res[i], STATUS_SUCCESS, &f.qp[0],
			       (void *)(uintptr_t)(i + 1));
	if (env->failures)
		return t_verdict(env, &f);

	for (round = 0; round < T_RR_ROUNDS && !env->failures; round++) {
		for (i = 0; i < 2; i++)
			NDK_T_STATUS(env, t_rr_post(env, &f, false),
				     STATUS_SUCCESS);
		st = t_rr_post(env, &f, true);
		if (st == STATUS_SUCCESS) {
			ndk_test_log("context %p was posted: is debugfs ndk/fail_qp_post armed?",
				     T_RR_REFUSED);
			env->failures++;
		}
		NDK_T_STATUS(env, st, STATUS_INVALID_PARAMETER);
	}
	ndk_test_log("%u rounds of 2 silent writes and a refused write", round);
	/* A signaled barrier: its result is the only one. */
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)99, NULL, 0, 0, 0, 0),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], res, 1) == 1);
	t_check_result(env, &res[0], STATUS_SUCCESS, &f.qp[0], (void *)99);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
	return t_verdict(env, &f);
}

/*
 * INLINE may exceed MaxInitiatorRequestSge (ndkpi-reference, 4.2): on QPs
 * created with no initiator SGE at all, an inline send of three SGEs from
 * unregistered memory arrives whole, while a send of one registered SGE
 * is refused.  ndk.ko posts the gathered data as one SGE, but created the
 * ib_qp with max_send_sge 0, and the devices refused the inline send too
 * (-EINVAL at ib_post_send(), STATUS_INVALID_PARAMETER): siw by its SGE
 * limit, rxe when the inline size is under 16 bytes (its SGE limit is
 * the larger of the SGEs' and the inline data's room, in 16-byte SGEs).
 */
static int t_cm_dp_inline_sges(struct ndk_test_env *env)
{
	/* Under 16 bytes: rxe's SGE limit is then 0 too (file comment). */
	static const char text[] = "inline: 3 SGEs";
	struct t_buf dst = {};
	struct ndk_result res;
	struct ndk_sge sge[3];
	struct t_fix f;
	int i;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	if (f.info.max_inline_data_size < sizeof(text)) {
		ndk_test_log("SKIP: %s has %u bytes of inline data", env->adapter_name,
			     f.info.max_inline_data_size);
		t_close_all(&f);
		return NDK_TEST_SKIP;
	}
	for (i = 0; i < 2; i++)
		NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[i], f.cq[i], &f.qp[i],
						8, 8, 1, 0, sizeof(text), NULL,
						NULL, &f.qp[i]),
			     STATUS_SUCCESS);
	if (env->failures || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_buf_reg(env, &f, &dst, 4096, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		goto out;

	sge[0] = t_sge(&dst, 0, 4096);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)81, sge, 1),
		     STATUS_SUCCESS);
	for (i = 0; i < 3; i++) {
		sge[i].virtual_address = (void *)(text + i * 5);
		sge[i].length = 5;
		sge[i].memory_region_token = 0xdeadbeef; /* ignored */
	}
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)82, sge, 3,
				   NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)82);
	NDK_T_CHECK(env, t_poll(f.cq[1], &res, 1) == 1);
	NDK_T_STATUS(env, res.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, res.request_context == (void *)81);
	NDK_T_CHECK(env, res.bytes_transferred == sizeof(text));
	NDK_T_CHECK(env, memcmp(dst.data, text, sizeof(text)) == 0);

	/* Without INLINE the QP's limit of 0 SGEs holds. */
	sge[0] = t_sge(&dst, 0, 16);
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)83, sge, 1, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_buf_free(env, &dst);
	return t_verdict(env, &f);
}

/*
 * MaxInlineDataSize is what an INLINE request really carries, end to
 * end: on QPs created with that inline size, an inline RDMA write of
 * exactly that many bytes, gathered from two unregistered SGEs, lands
 * whole in the peer's MR and nowhere else, and an inline send of as many
 * fills a receive; one byte more is refused inline with
 * STATUS_INVALID_PARAMETER and posts nothing.  On rxe and siw.
 */
static int t_cm_dp_inline_max(struct ndk_test_env *env)
{
	struct t_buf remote = {}, rbuf = {};
	struct ndk_result res;
	struct ndk_sge sge[2];
	u32 max, half, rtok;
	struct t_fix f;
	u8 *src = NULL;
	int i;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	max = f.info.max_inline_data_size;
	ndk_test_log("%s: MaxInlineDataSize %u", env->adapter_name, max);
	if (max < 2) {
		ndk_test_log("SKIP: %s has no inline data to speak of",
			     env->adapter_name);
		t_close_all(&f);
		return NDK_TEST_SKIP;
	}
	for (i = 0; i < 2; i++)
		NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[i], f.cq[i], &f.qp[i],
						8, 8, 1, 2, max, NULL, NULL,
						&f.qp[i]),
			     STATUS_SUCCESS);
	if (env->failures || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	src = kmalloc(max + 1, GFP_KERNEL);
	NDK_T_CHECK(env, src);
	if (!src ||
	    t_buf_reg(env, &f, &remote, max + 64,
		      NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
		      NDK_MR_FLAG_ALLOW_REMOTE_WRITE) ||
	    t_buf_reg(env, &f, &rbuf, max + 64, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		goto out;
	get_random_bytes(src, max + 1);
	rtok = ndk_get_remote_token_from_mr(remote.mr);
	half = max / 2;
	sge[0].virtual_address = src;
	sge[0].length = half;
	sge[0].memory_region_token = 0xdeadbeef;	/* ignored */
	sge[1].virtual_address = src + half;
	sge[1].length = max - half;
	sge[1].memory_region_token = 0xdeadbeef;

	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)91, sge, 2,
				    t_raddr(&remote, 32), rtok,
				    NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)91);

	/*
	 * The send behind the write is also the write's fence: on iWARP a
	 * write completes at the initiator before the target placed it, and
	 * the target serves the stream in order, so the write's bytes are
	 * checked once the send's receive completed.
	 */
	sge[0] = t_sge(&rbuf, 0, rbuf.len);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)92, sge, 1),
		     STATUS_SUCCESS);
	sge[0].virtual_address = src;
	sge[0].length = max;
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)93, sge, 1,
				   NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)93);
	NDK_T_CHECK(env, t_poll(f.cq[1], &res, 1) == 1);
	NDK_T_STATUS(env, res.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, res.request_context == (void *)92);
	NDK_T_CHECK(env, res.bytes_transferred == max);
	NDK_T_CHECK(env, memcmp(rbuf.data, src, max) == 0);
	NDK_T_CHECK(env, memcmp(remote.data + 32, src, max) == 0);
	NDK_T_CHECK(env, t_all(remote.data, 0, 32));
	NDK_T_CHECK(env, t_all(remote.data + 32 + max, 0, 32));
	NDK_T_CHECK(env, t_canaries_ok(&remote));

	/* One byte more, in one SGE or two: refused, nothing posted. */
	sge[0].length = max + 1;
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)94, sge, 1,
				    t_raddr(&remote, 0), rtok,
				    NDK_OP_FLAG_INLINE),
		     STATUS_INVALID_PARAMETER);
	sge[0].length = half + 1;
	sge[1].length = max - half;
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)95, sge, 2,
				   NDK_OP_FLAG_INLINE),
		     STATUS_INVALID_PARAMETER);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
	NDK_T_CHECK(env, memcmp(remote.data + 32, src, max) == 0);
out:
	kfree(src);
	t_buf_free(env, &remote);
	t_buf_free(env, &rbuf);
	return t_verdict(env, &f);
}

static void t_closed(void *context)
{
	complete(context);
}

/*
 * Replace the fixture's CQ 0 by one of @depth results with no
 * notification handler, before any QP uses it.  Return: 0, or -1 when it cannot be created.
 */
static int t_small_cq0(struct ndk_test_env *env, struct t_fix *f, u32 depth)
{
	ndk_close_cq(f->cq[0], NULL, NULL);
	f->cq[0] = NULL;
	NDK_T_STATUS(env, ndk_create_cq(f->adapter, depth, NULL, NULL, NULL,
					NULL, NULL, &f->cq[0]),
		     STATUS_SUCCESS);
	return f->cq[0] ? 0 : -1;
}

/*
 * A close whose QP still holds unsignaled requests that succeeded, on a
 * CQ of the QP's depth that unpolled results fill: no completion of the
 * unsignaled requests will come, so the close's drain marker retires
 * them, in the ib_cq's spare entry since the results hold every
 * reservation; the QP's teardown ends well short of the drain's 10 s
 * timeout (a few ms, on the debug kernel too; the check allows 5 s), and
 * the results are still there to poll.
 */
static int t_cm_dp_unsignaled_close(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	DECLARE_COMPLETION_ONSTACK(closed);
	struct ndk_result res;
	unsigned long start;
	struct ndk_sge sge;
	struct t_fix f;
	u32 rtok, i;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	if (t_small_cq0(env, &f, 8) || t_new_qp(env, &f, 0) ||
	    t_new_qp(env, &f, 1) || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	t_fill(src.data, 64, 3);
	/* 5 writes whose results nobody polls, then 3 silent ones. */
	for (i = 0; i < 8; i++) {
		sge = t_sge(&src, i * 8, 8);
		NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)(uintptr_t)(10 + i),
					    &sge, 1, t_raddr(&remote, i * 8),
					    rtok,
					    i < 5 ? 0 : NDK_OP_FLAG_SILENT_SUCCESS),
			     STATUS_SUCCESS);
	}
	/* The CQ is committed to its depth: a ninth request is refused. */
	NDK_T_STATUS(env, ndk_write(f.qp[0], NULL, NULL, 0, 0, 0, 0),
		     STATUS_INSUFFICIENT_RESOURCES);
	/* The data arrives: the requests are done. */
	NDK_T_CHECK(env, t_arrived(&remote, &src, 64));

	t_close_conn(&f.a);
	t_close_conn(&f.p);
	start = jiffies;
	NDK_T_STATUS(env, ndk_close_qp(f.qp[0], t_closed, &closed),
		     STATUS_PENDING);
	f.qp[0] = NULL;
	NDK_T_CHECK(env, wait_for_completion_timeout(&closed, NDK_T_TIMEOUT * 2));
	ndk_test_log("close with unsignaled requests claimed, CQ full: %u ms",
		     jiffies_to_msecs(jiffies - start));
	/* Well short of the drain's 10 s timeout, even on a debug kernel. */
	NDK_T_CHECK(env, time_before(jiffies, start + 5 * HZ));
	/* The five results, and nothing of the silent ones. */
	for (i = 0; i < 5; i++) {
		NDK_T_CHECK(env, ndk_get_cq_results(f.cq[0], &res, 1) == 1);
		t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0],
			       (void *)(uintptr_t)(10 + i));
	}
	NDK_T_CHECK(env, !ndk_get_cq_results(f.cq[0], &res, 1));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/*
 * Write through QP @q (one SGE, or none without @sge), polling CQ 0 while
 * the post is refused for want of room: a poll translates completions,
 * which retires unsignaled requests and drops silent successes.  Results
 * polled meanwhile must be STATUS_CANCELLED (a flushed QP's; callers
 * whose QP is not flushed expect none); *@polled counts them.
 * Return: the post's status, INSUFFICIENT_RESOURCES still after
 * NDK_T_TIMEOUT.
 */
static s32 t_write_room(struct ndk_test_env *env, struct t_fix *f, int q,
			u32 ctx, const struct ndk_sge *sge, u64 raddr,
			u32 rtok, u32 flags, u32 *polled)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	struct ndk_result res;
	s32 st;

	for (;;) {
		st = ndk_write(f->qp[q], (void *)(uintptr_t)ctx, sge, sge ? 1 : 0,
			       raddr, rtok, flags);
		if (st != STATUS_INSUFFICIENT_RESOURCES ||
		    time_after(jiffies, end))
			return st;
		while (ndk_get_cq_results(f->cq[0], &res, 1)) {
			NDK_T_STATUS(env, res.status, STATUS_CANCELLED);
			(*polled)++;
		}
		usleep_range(100, 200);
	}
}

/*
 * A signaled write of nothing through QP 0 (as t_write_room()), and its
 * result, the only one: every unsignaled request before it is retired.
 */
static void t_barrier(struct ndk_test_env *env, struct t_fix *f, u32 ctx,
		      u32 *polled)
{
	struct ndk_result res;

	NDK_T_STATUS(env, t_write_room(env, f, 0, ctx, NULL, 0, 0, 0, polled),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f->cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f->qp[0],
		       (void *)(uintptr_t)ctx);
}

/*
 * An unsignaled request holds its result's room in the CQ until a later
 * completion retires it.  32 silent writes through a QP of depth 8 whose
 * CQ holds 2 results all go through, and give no result: a CQ keeps
 * fewer than half its depth unsignaled (ndk_cq_unsignal()), so here none.
 * Before, the first two went unsignaled and held the CQ's whole room:
 * every later post failed STATUS_INSUFFICIENT_RESOURCES until the close.
 * Then, where the device resizes CQs (rxe), a CQ cannot shrink to the
 * unsignaled requests it holds: grown to 8, it takes one, and may then
 * go down to 2 but not 1.
 */
static int t_cm_dp_unsignaled_small_cq(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	struct ndk_sge sge;
	u32 rtok, i, polled = 0;
	struct t_fix f;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	if (t_small_cq0(env, &f, 2) || t_new_qp(env, &f, 0) ||
	    t_new_qp(env, &f, 1) || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	t_fill(src.data, 256, 5);
	for (i = 0; i < 32 && !env->failures; i++) {
		sge = t_sge(&src, i * 8, 8);
		NDK_T_STATUS(env, t_write_room(env, &f, 0, 100 + i, &sge,
					       t_raddr(&remote, i * 8), rtok,
					       NDK_OP_FLAG_SILENT_SUCCESS,
					       &polled), STATUS_SUCCESS);
	}
	ndk_test_log("%u silent writes through a CQ of 2", i);
	t_barrier(env, &f, 99, &polled);
	NDK_T_CHECK(env, !polled);
	NDK_T_CHECK(env, !memcmp(remote.data, src.data, 256));
	if (env->failures || !(f.info.adapter_flags &
			       NDK_ADAPTER_FLAG_CQ_RESIZE_SUPPORTED)) {
		ndk_test_log("resize part skipped: %s",
			     env->failures ? "failed already" :
			     "the device does not resize CQs");
		goto out;
	}

	NDK_T_STATUS(env, ndk_resize_cq(f.cq[0], 8, NULL, NULL),
		     STATUS_SUCCESS);
	memset(remote.data, 0, 8);
	sge = t_sge(&src, 0, 8);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)98, &sge, 1,
				    t_raddr(&remote, 0), rtok,
				    NDK_OP_FLAG_SILENT_SUCCESS), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_arrived(&remote, &src, 8));
	NDK_T_STATUS(env, ndk_resize_cq(f.cq[0], 1, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_resize_cq(f.cq[0], 2, NULL, NULL),
		     STATUS_SUCCESS);
	/* The next request is signaled, and retires the unsignaled one. */
	t_barrier(env, &f, 97, &polled);
	t_barrier(env, &f, 96, &polled);
	NDK_T_CHECK(env, !polled);
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/* Requests posted after the flush of t_cm_dp_unsignaled_flush(). */
#define T_UF_POSTS	24

/*
 * Three silent writes succeed unsignaled, then ndk_flush(): no completion
 * of the device retires them, so the flush posts a drain marker behind
 * them.  24 writes posted afterwards through the QP's 8 slots each
 * complete CANCELLED.  Before, the ring came round to the first
 * unsignaled slot after 5 of them, and every later post failed
 * STATUS_INSUFFICIENT_RESOURCES until the close.  For IB and RoCE: on
 * iWARP the QP's move to the error state ends the connection (siw drops
 * its socket), and posts soon fail STATUS_CONNECTION_INVALID instead.
 */
static int t_cm_dp_unsignaled_flush(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	struct ndk_result res;
	u32 rtok, i, polled = 0;
	struct t_fix f;

	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	t_fill(src.data, 24, 9);
	t_silent_writes(env, &f, 0, &src, &remote, rtok, 0, 3, 10);
	NDK_T_CHECK(env, t_arrived(&remote, &src, 24));

	ndk_flush(f.qp[0]);
	for (i = 0; i < T_UF_POSTS && !env->failures; i++)
		NDK_T_STATUS(env, t_write_room(env, &f, 0, 200 + i, NULL, 0, 0, 0,
					       &polled), STATUS_SUCCESS);
	ndk_test_log("%u writes posted after the flush, %u results polled while posting",
		     i, polled);
	while (polled < i && t_poll(f.cq[0], &res, 1) == 1) {
		NDK_T_STATUS(env, res.status, STATUS_CANCELLED);
		polled++;
	}
	NDK_T_CHECK(env, polled == T_UF_POSTS);
	/* Nothing of the silent writes, which succeeded. */
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/*
 * The flush of t_cm_dp_unsignaled_flush() on both QPs of a connection,
 * which share their CQ, at once.  The CQ has one spare entry for drain
 * markers, so one flush's marker may wait for the other's; its work then
 * comes back a tick later instead of sleeping in an ndk_wq worker
 * (ndk_qp_flush_work(); a module that logged the retry showed it once
 * here).  Either way T_UF_POSTS writes through each QP, past the wrap of
 * both rings, complete CANCELLED: both markers were posted.  For IB and
 * RoCE, as above.
 */
static int t_cm_dp_unsignaled_flush_shared(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	u32 rtok, i, polled = 0;
	struct ndk_result res;
	struct t_fix f;
	int q;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	for (q = 0; q < 2; q++)
		NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[0], f.cq[0], &f.qp[q],
						8, 8, 1, 1, 0, NULL, NULL,
						&f.qp[q]),
			     STATUS_SUCCESS);
	if (!f.qp[0] || !f.qp[1] || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	t_fill(src.data, 48, 9);
	for (q = 0; q < 2; q++)
		t_silent_writes(env, &f, q, &src, &remote, rtok, q * 24, 3,
				10 + q * 3);
	NDK_T_CHECK(env, t_arrived(&remote, &src, 48));

	ndk_flush(f.qp[0]);
	ndk_flush(f.qp[1]);
	for (i = 0; i < 2 * T_UF_POSTS && !env->failures; i++)
		NDK_T_STATUS(env, t_write_room(env, &f, i % 2, 200 + i, NULL, 0,
					       0, 0, &polled),
			     STATUS_SUCCESS);
	ndk_test_log("%u writes posted after the flushes, %u results polled while posting",
		     i, polled);
	while (polled < i && t_poll(f.cq[0], &res, 1) == 1) {
		NDK_T_STATUS(env, res.status, STATUS_CANCELLED);
		polled++;
	}
	NDK_T_CHECK(env, polled == 2 * T_UF_POSTS);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/* The CQ of t_cm_dp_unsignaled_disconnect()'s QP 0. */
#define T_UD_CQ		8

/*
 * A disconnect stops a QP as a flush does: the unsignaled requests that
 * succeeded have no later completion to retire them, so the connection's
 * end posts the drain marker behind them (ndk_qp_retire_unsignaled()).
 * QP 0, alone on a CQ of T_UD_CQ entries, makes three silent writes; the
 * connection is disconnected; once a poll has translated the marker (no
 * result: the writes were silent), T_UD_CQ receives, flushed by the
 * device, fit in the CQ.  Before, the three writes held their entries
 * until the close, and the receive after T_UD_CQ - 3 was refused.
 */
static int t_cm_dp_unsignaled_disconnect(struct ndk_test_env *env)
{
	struct ndk_result res[T_UD_CQ];
	struct t_buf src = {}, remote = {};
	u32 rtok, i, got;
	struct t_fix f;
	s32 st = STATUS_SUCCESS;

	if (t_open(env, &f, 0) || t_small_cq0(env, &f, T_UD_CQ))
		return t_verdict(env, &f);
	NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[0], f.cq[0], &f.qp[0],
					2 * T_UD_CQ, 8, 1, 1, 0, NULL, NULL,
					&f.qp[0]),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[1], f.cq[1], &f.qp[1], 8, 8,
					1, 1, 0, NULL, NULL, &f.qp[1]),
		     STATUS_SUCCESS);
	if (!f.qp[0] || !f.qp[1] || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	t_fill(src.data, 24, 5);
	t_silent_writes(env, &f, 0, &src, &remote, rtok, 0, 3, 20);
	NDK_T_CHECK(env, t_arrived(&remote, &src, 24));

	NDK_T_STATUS(env, ndk_disconnect(f.a, NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_p));
	/* The marker's completion, translated: no result. */
	msleep(300);
	NDK_T_CHECK(env, !ndk_get_cq_results(f.cq[0], res, 1));
	for (i = 0; i < 2 * T_UD_CQ; i++) {
		st = ndk_receive(f.qp[0], (void *)(uintptr_t)(100 + i), NULL, 0);
		if (st)
			break;
	}
	ndk_test_log("%u receives fit in the CQ of %u after the disconnect",
		     i, T_UD_CQ);
	NDK_T_STATUS(env, st, STATUS_INSUFFICIENT_RESOURCES);
	NDK_T_CHECK(env, i == T_UD_CQ);
	got = t_poll(f.cq[0], res, i);
	NDK_T_CHECK(env, got == i);
	while (got--)
		NDK_T_STATUS(env, res[got].status, STATUS_CANCELLED);
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

#define T_RF_ROUNDS	12
#define T_RF_READS	8
/*
 * The CQ's depth, and the reads of a round: 15, so that with the spare
 * entry its ib_cq is exactly 16 on siw, which rounds every ib_cq up to a
 * power of two: a CQ of 16 would have 15 entries of slack to hide an
 * overrun in.
 */
#define T_RF_CQ		(2 * T_RF_READS - 1)

/*
 * One round of t_cm_dp_read_flush() on a fresh connection whose two QPs
 * share one CQ of exactly their reads' depth, T_RF_CQ: QP 0 posts the
 * even reads, QP 1 the odd ones.
 */
static int t_read_flush_round(struct ndk_test_env *env, u32 *cancelled,
			      u32 *broken)
{
	struct ndk_result res[T_RF_READS];
	struct t_buf sink = {}, remote = {};
	u32 rtok, i, k, q, n, got, seen = 0;
	struct ndk_sge sge;
	struct t_fix f;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	if (t_small_cq0(env, &f, T_RF_CQ))
		return t_verdict(env, &f);
	for (q = 0; q < 2; q++)
		NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[0], f.cq[0], &f.qp[q],
						T_RF_READS, 8, 1, 1, 0, NULL,
						NULL, &f.qp[q]),
			     STATUS_SUCCESS);
	if (!f.qp[0] || !f.qp[1] || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_buf_reg(env, &f, &sink, 4096, NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
					    NDK_MR_FLAG_RDMA_READ_SINK) ||
	    t_buf_reg(env, &f, &remote, 4096, NDK_MR_FLAG_ALLOW_REMOTE_READ))
		goto out;
	rtok = ndk_get_remote_token_from_mr(remote.mr);
	for (k = 0; k < T_RF_CQ; k++) {
		sge = t_sge(&sink, k * 64, 64);
		NDK_T_STATUS(env, ndk_read(f.qp[k & 1],
					   (void *)(uintptr_t)(100 + k), &sge, 1,
					   t_raddr(&remote, k * 64), rtok, 0),
			     STATUS_SUCCESS);
	}
	ndk_flush(f.qp[0]);
	ndk_flush(f.qp[1]);
	for (got = 0; got < T_RF_CQ; got += n) {
		n = t_poll(f.cq[0], res, min(T_RF_CQ - got, T_RF_READS));
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			k = (uintptr_t)res[i].request_context - 100;
			NDK_T_CHECK(env, k < T_RF_CQ && !(seen & BIT(k)));
			if (k < T_RF_CQ)
				seen |= BIT(k);
			if (res[i].status == STATUS_CANCELLED)
				(*cancelled)++;
			else if (res[i].status == STATUS_INVALID_DEVICE_REQUEST &&
				 f.info.rdma_technology == NDK_IWARP)
				(*broken)++;
			else
				NDK_T_STATUS(env, res[i].status, STATUS_SUCCESS);
		}
	}
	NDK_T_CHECK(env, got == T_RF_CQ);
	/* No second result of any of them. */
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_buf_free(env, &sink);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/*
 * Reads flushed right after they were posted, while the device may hold
 * them queued for sending: each gives exactly one result, and the QP's
 * close finds no completion missing or left over.  6.1's siw completes
 * such a READ twice, from its outstanding-read queue and again from its
 * send queue (siw_sq_flush()); ndk.ko must not give the second one as a
 * result nor release the slot again (ndk_qp.h: the wr_id's claim count),
 * and the CQ, filled to its depth by two QPs' reads, must have room for
 * both QPs' second completions (ndk_cq_entries_per_result()).  Each read
 * succeeds or is cancelled; on iWARP one may also fail with
 * STATUS_INVALID_DEVICE_REQUEST (siw's IB_WC_LOC_QP_OP_ERR): a read in
 * flight when the other QP's flush ended the connection.
 */
static int t_cm_dp_read_flush(struct ndk_test_env *env)
{
	u32 round, cancelled = 0, broken = 0;

	for (round = 0; round < T_RF_ROUNDS && !env->failures; round++)
		t_read_flush_round(env, &cancelled, &broken);
	ndk_test_log("%u rounds of %u reads flushed: %u cancelled, %u failed with the connection",
		     round, T_RF_CQ, cancelled, broken);
	return env->failures ? NDK_TEST_FAIL : NDK_TEST_PASS;
}

/* Writes t_cm_dp_flush_race() posts, and what became of each. */
#define T_FLR_REQS	400
enum { T_FLR_NONE, T_FLR_POSTED, T_FLR_REFUSED, T_FLR_DONE };

/**
 * struct t_flr - the posting thread of t_cm_dp_flush_race()
 * @f:         the connection (QP 0 posts, CQ 0 gets the results)
 * @src:       what the writes send
 * @remote:    where they land
 * @rtok:      @remote's token
 * @state:     per write: T_FLR_*
 * @posted:    writes issued so far (accepted or refused)
 * @flushing:  set before ndk_flush() is called
 * @flushed:   set once ndk_flush() has returned: the second half of the
 *             writes waits for it
 * @bad:       unexpected inline statuses and result statuses
 * @bad_status: the first of them
 * @closed:    writes refused because the connection is gone (on iWARP
 *             the flush's move to the error state ends the connection)
 * @stray:     results of no accepted write, or a second result of one
 * @results:   results taken so far
 * @cancelled: results with STATUS_CANCELLED
 * @late:      successes of writes posted after ndk_flush() returned
 * @done:      the thread has collected every result or given up
 */
struct t_flr {
	struct t_fix *f;
	struct t_buf *src, *remote;
	u32 rtok;
	u8 state[T_FLR_REQS];
	atomic_t posted;
	bool flushing, flushed;
	int bad, stray, results, cancelled, closed, late;
	s32 bad_status;
	struct completion done;
};

static void t_flr_bad(struct t_flr *t, s32 status)
{
	if (!t->bad++)
		t->bad_status = status;
}

/* Take the results CQ 0 has; true once no accepted write lacks one. */
static bool t_flr_collect(struct t_flr *t)
{
	struct ndk_result res[16];
	u32 n, i, k;

	while ((n = ndk_get_cq_results(t->f->cq[0], res, ARRAY_SIZE(res)))) {
		t->results += n;
		for (i = 0; i < n; i++) {
			k = (uintptr_t)res[i].request_context - 1;
			if (k >= T_FLR_REQS || t->state[k] != T_FLR_POSTED) {
				t->stray++;
				continue;
			}
			t->state[k] = T_FLR_DONE;
			if (res[i].status == STATUS_CANCELLED)
				t->cancelled++;
			else if (res[i].status != STATUS_SUCCESS)
				t_flr_bad(t, res[i].status);
			else if (k >= T_FLR_REQS / 2)
				t->late++;
		}
	}
	for (k = 0; k < T_FLR_REQS; k++)
		if (t->state[k] == T_FLR_POSTED)
			return false;
	return true;
}

/*
 * After a refusal (queue full): until a result frees a slot or none is
 * outstanding.  The posts do not outrun the device, so writes are in
 * flight when the flush comes and the ones after it are accepted, however
 * slow the guest (the CI run of 2026-11-29 refused 392 of 400 in a burst
 * while the first 8 were still on their way, and nothing was cancelled).
 */
static void t_flr_wait_slot(struct t_flr *t)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	int before = t->results;

	while (!t_flr_collect(t) && t->results == before &&
	       time_before(jiffies, end))
		usleep_range(100, 200);
}

static int t_flr_poster(void *data)
{
	unsigned long end;
	struct t_flr *t = data;
	struct ndk_sge sge = t_sge(t->src, 0, 8);
	u32 i, flags;
	s32 st;

	for (i = 0; i < T_FLR_REQS; i++) {
		if (i == T_FLR_REQS / 2) {
			/* The second half follows the flush. */
			end = jiffies + NDK_T_TIMEOUT;
			while (!READ_ONCE(t->flushed) &&
			       time_before(jiffies, end))
				usleep_range(100, 200);
		}
		/* Every third deferred, the last never: a chain is pending. */
		flags = i % 3 == 1 && i + 1 < T_FLR_REQS ? NDK_OP_FLAG_DEFER : 0;
		st = ndk_write(t->f->qp[0], (void *)(uintptr_t)(i + 1), &sge, 1,
			       t_raddr(t->remote, (i % 512) * 8), t->rtok,
			       flags);
		if (st == STATUS_SUCCESS)
			t->state[i] = T_FLR_POSTED;
		else if (st == STATUS_INSUFFICIENT_RESOURCES)
			t->state[i] = T_FLR_REFUSED;
		else if (st == STATUS_CONNECTION_INVALID &&
			 READ_ONCE(t->flushing))
			t->closed++;
		else
			t_flr_bad(t, st);
		atomic_inc(&t->posted);
		if (t->state[i] == T_FLR_REFUSED)
			t_flr_wait_slot(t);
		else
			t_flr_collect(t);
	}
	end = jiffies + NDK_T_TIMEOUT;
	while (!t_flr_collect(t) && time_before(jiffies, end))
		usleep_range(1000, 2000);
	complete(&t->done);
	while (!kthread_should_stop())
		usleep_range(1000, 2000);
	return 0;
}

/*
 * ndk_flush() while another thread posts writes (every third deferred)
 * and polls their results: the flush lands between, or during, the first
 * half of the posts, and the second half follows it.  Every write
 * accepted gives exactly one result, SUCCESS or CANCELLED; a refused one
 * (queue full) none; the writes posted after the flush never succeed:
 * they complete CANCELLED (on iWARP, where the move to the error state
 * ends the connection, they may be refused with STATUS_CONNECTION_INVALID
 * once it has, all of them when the end comes before the second half:
 * the CI run of 2026-12-05 on the debug kernel cancelled none); and the
 * close finds nothing missing (the kernel log would say so).
 */
static int t_cm_dp_flush_race(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	struct task_struct *task;
	struct t_flr *t;
	struct t_fix f;
	int k, refused = 0, missing = 0;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	NDK_T_CHECK(env, t);
	if (!t)
		return NDK_TEST_FAIL;
	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		goto out_free;
	if (t_src_remote(env, &f, &src, &remote, &t->rtok))
		goto out;
	t->f = &f;
	t->src = &src;
	t->remote = &remote;
	init_completion(&t->done);
	task = kthread_run(t_flr_poster, t, "ndk_t_flr");
	if (IS_ERR(task)) {
		NDK_T_CHECK(env, !IS_ERR(task));
		goto out;
	}
	while (atomic_read(&t->posted) < T_FLR_REQS / 4)
		usleep_range(50, 100);
	WRITE_ONCE(t->flushing, true);
	ndk_flush(f.qp[0]);
	WRITE_ONCE(t->flushed, true);
	NDK_T_CHECK(env, wait_for_completion_timeout(&t->done,
						     2 * NDK_T_TIMEOUT));
	kthread_stop(task);
	for (k = 0; k < T_FLR_REQS; k++) {
		refused += t->state[k] == T_FLR_REFUSED;
		missing += t->state[k] == T_FLR_POSTED;
	}
	ndk_test_log("%d writes, flushed after %d: %d refused (queue full)",
		     T_FLR_REQS, T_FLR_REQS / 4, refused);
	ndk_test_log("%d refused after the connection ended, %d cancelled",
		     t->closed, t->cancelled);
	ndk_test_log("%d posted after the flush succeeded", t->late);
	ndk_test_log("%d missing, %d stray, %d bad (first %#x)", missing,
		     t->stray, t->bad, t->bad_status);
	NDK_T_CHECK(env, !missing && !t->stray && !t->bad);
	NDK_T_CHECK(env, !t->late && t->cancelled + t->closed > 0);
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
out_free:
	kfree(t);
	return t_verdict(env, &f);
}

/*
 * DEFER: two deferred writes, then a request that fails inline.  The
 * provider hands the deferred ones to the hardware before returning the
 * failure: both complete and carry their data; the failed one leaves no
 * result.
 */
static int t_cm_dp_defer_inline_failure(struct ndk_test_env *env)
{
	struct t_buf src = {}, remote = {};
	struct ndk_sge sge, two[2];
	struct ndk_result res[3];
	struct t_fix f;
	u32 rtok, got;

	if (t_open(env, &f, 2) || t_listen(env, &f) || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_src_remote(env, &f, &src, &remote, &rtok))
		goto out;
	get_random_bytes(src.data, src.len);

	sge = t_sge(&src, 0, 64);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)61, &sge, 1,
				    t_raddr(&remote, 0), rtok, NDK_OP_FLAG_DEFER),
		     STATUS_SUCCESS);
	sge = t_sge(&src, 64, 64);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)62, &sge, 1,
				    t_raddr(&remote, 64), rtok, NDK_OP_FLAG_DEFER),
		     STATUS_SUCCESS);
	/* The QPs take one SGE: two fail inline, before anything is posted. */
	two[0] = t_sge(&src, 0, 8);
	two[1] = t_sge(&src, 8, 8);
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)63, two, 2,
				    t_raddr(&remote, 200), rtok, 0),
		     STATUS_INVALID_PARAMETER);
	got = t_poll(f.cq[0], res, 2);
	NDK_T_CHECK(env, got == 2);
	if (got == 2) {
		t_check_result(env, &res[0], STATUS_SUCCESS, &f.qp[0], (void *)61);
		t_check_result(env, &res[1], STATUS_SUCCESS, &f.qp[0], (void *)62);
	}
	NDK_T_CHECK(env, t_cq_quiet(f.cq[0]));
	NDK_T_CHECK(env, memcmp(remote.data, src.data, 128) == 0);
	NDK_T_CHECK(env, t_all(remote.data + 128, 0, remote.len - 128));
out:
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/*
 * INLINE: the data is taken at post time from unregistered memory (the
 * token is ignored).  Send-and-invalidate: the receiver's result is
 * RECEIVE_AND_INVALIDATE with the token, and the token is dead after it.
 */
static int t_cm_dp_inline_invalidate(struct ndk_test_env *env)
{
	struct t_buf dst = {}, src = {}, remote = {};
	struct ndk_result_ex rex;
	struct ndk_result res;
	u8 stack_data[48];
	struct ndk_sge sge;
	struct t_fix f;
	u32 rtok;
	int i;

	if (t_open(env, &f, 0) || t_listen(env, &f))
		return t_verdict(env, &f);
	for (i = 0; i < 2; i++)
		NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[i], f.cq[i], &f.qp[i],
						8, 8, 1, 1, 64, NULL, NULL,
						&f.qp[i]), STATUS_SUCCESS);
	if (env->failures || t_connect_async(env, &f))
		return t_verdict(env, &f);
	if (t_buf_reg(env, &f, &dst, 4096, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) ||
	    t_buf_reg(env, &f, &src, 4096, NDK_MR_FLAG_ALLOW_LOCAL_READ) ||
	    t_buf_reg(env, &f, &remote, 4096, NDK_MR_FLAG_ALLOW_REMOTE_WRITE))
		goto out;

	get_random_bytes(stack_data, sizeof(stack_data));
	sge = t_sge(&dst, 0, 4096);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)71, &sge, 1),
		     STATUS_SUCCESS);
	sge.virtual_address = stack_data;
	sge.length = sizeof(stack_data);
	sge.memory_region_token = 0xdeadbeef;	/* ignored for INLINE */
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)72, &sge, 1,
				   NDK_OP_FLAG_INLINE), STATUS_SUCCESS);
	memset(stack_data + 1, 0, sizeof(stack_data) - 1); /* taken already */
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)72);
	NDK_T_CHECK(env, t_poll(f.cq[1], &res, 1) == 1);
	NDK_T_CHECK(env, res.bytes_transferred == sizeof(stack_data));
	NDK_T_CHECK(env, dst.data[0] == stack_data[0]);
	/* More than the QP's inline size is refused before posting. */
	sge.length = 65;
	NDK_T_STATUS(env, ndk_send(f.qp[0], (void *)73, &sge, 1,
				   NDK_OP_FLAG_INLINE), STATUS_INVALID_PARAMETER);

	rtok = ndk_get_remote_token_from_mr(remote.mr);
	sge = t_sge(&dst, 0, 4096);
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)74, &sge, 1),
		     STATUS_SUCCESS);
	sge = t_sge(&src, 0, 16);
	NDK_T_STATUS(env, ndk_send_and_invalidate(f.qp[0], (void *)75, &sge, 1,
						  0, rtok), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	t_check_result(env, &res, STATUS_SUCCESS, &f.qp[0], (void *)75);
	for (i = 0; i < 500 && !ndk_get_cq_results_ex(f.cq[1], &rex, 1); i++)
		msleep(20);
	NDK_T_CHECK(env, i < 500);
	NDK_T_STATUS(env, rex.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, rex.request_context == (void *)74);
	NDK_T_CHECK(env, rex.type == NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE);
	NDK_T_CHECK(env, rex.type & NDK_OPERATION_TYPE_RECEIVE);
	NDK_T_CHECK(env, rex.type_specific_completion_output == rtok);
	NDK_T_CHECK(env, rex.bytes_transferred == 16);

	/* The invalidated token no longer reaches the region. */
	NDK_T_STATUS(env, ndk_write(f.qp[0], (void *)76, &sge, 1,
				    t_raddr(&remote, 0), rtok, 0), STATUS_SUCCESS);
	NDK_T_CHECK(env, t_poll(f.cq[0], &res, 1) == 1);
	NDK_T_STATUS(env, res.status, STATUS_REMOTE_RESOURCES);
	NDK_T_CHECK(env, t_all(remote.data, 0, remote.len));
out:
	t_buf_free(env, &dst);
	t_buf_free(env, &src);
	t_buf_free(env, &remote);
	return t_verdict(env, &f);
}

/*
 * A connect that hangs in the provider holds no other connect: siw's
 * connect is a TCP connect() that blocks until the peer answers, and
 * rdma_cm resolves every id's route on one ordered workqueue.  Connect to
 * silent_ip, whose SYNs are lost; while that connect waits, a whole
 * loopback connection is made; then TCP gives up and the first fails.
 */
static int t_cm_connect_stall(struct ndk_test_env *env)
{
	struct ndk_connector *h = NULL;
	struct ndk_qp *hqp = NULL;
	struct sockaddr_in dst;
	struct ndk_t_wait hw;
	unsigned long t0;
	struct t_fix f;

	if (!env->silent_ip[0]) {
		ndk_test_log("SKIP: no silent_ip given");
		return NDK_TEST_SKIP;
	}
	if (t_open(env, &f, 2) || t_listen(env, &f))
		return t_verdict(env, &f);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons(4791);
	NDK_T_CHECK(env, in4_pton(env->silent_ip, -1,
				  (u8 *)&dst.sin_addr.s_addr, -1, NULL));
	NDK_T_STATUS(env, ndk_create_qp(f.pd, f.cq[0], f.cq[0], &hqp, 8, 8, 1,
					1, 0, NULL, NULL, &hqp), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_connector(f.adapter, NULL, NULL, &h),
		     STATUS_SUCCESS);
	if (env->failures)
		goto out;
	ndk_t_wait_init(&hw);
	NDK_T_STATUS(env, ndk_connect(h, hqp, NULL, 0, (struct sockaddr *)&dst,
				      sizeof(dst), 0, 0, NULL, 0,
				      ndk_t_requested, &hw), STATUS_PENDING);
	msleep(500);	/* the route resolves at once; the SYNs go unanswered */
	NDK_T_CHECK(env, atomic_read(&hw.calls) == 0);

	t0 = jiffies;
	if (!t_connect_async(env, &f))
		ndk_test_log("loopback connection made in %u ms, the connect to %pI4 %s",
			     jiffies_to_msecs(jiffies - t0), &dst.sin_addr,
			     atomic_read(&hw.calls) ? "done" : "still waiting");
	/* It came after the stalled connect, not behind it. */
	NDK_T_CHECK(env, atomic_read(&hw.calls) == 0);

	NDK_T_CHECK(env, ndk_t_wait(&hw));
	ndk_test_log("connect to %pI4 (silent): %#x after %u ms", &dst.sin_addr,
		     hw.status, jiffies_to_msecs(jiffies - t0));
	NDK_T_CHECK(env, hw.status != STATUS_SUCCESS &&
		    hw.status != STATUS_PENDING);
	NDK_T_CHECK(env, atomic_read(&hw.calls) == 1);
out:
	t_close_conn(&h);
	if (hqp)
		ndk_close_qp(hqp, NULL, NULL);
	return t_verdict(env, &f);
}

const struct ndk_test ndk_tests_cm[] = {
	{ "cm-listener", t_cm_listener },
	{ "cm-loopback", t_cm_loopback },
	{ "cm-async", t_cm_async },
	{ "cm-limits", t_cm_limits },
	{ "cm-reject", t_cm_reject },
	{ "cm-rej-established", t_cm_rej_established },
	{ "cm-accept-closed-early", t_cm_accept_closed_early },
	{ "cm-listen-kernel-charge", t_cm_listen_kernel_charge },
	{ "cm-no-listener", t_cm_no_listener },
	{ "cm-unreachable", t_cm_unreachable },
	{ "cm-pause", t_cm_pause },
	{ "cm-close-order", t_cm_close_order },
	{ "cm-connect-stall", t_cm_connect_stall },
	{ "cm-dp-not-connected", t_cm_dp_not_connected },
	{ "cm-dp-send-recv", t_cm_dp_send_recv },
	{ "cm-dp-read-write", t_cm_dp_read_write },
	{ "cm-dp-disconnect-flush", t_cm_dp_disconnect_flush },
	{ "cm-dp-bytes-send-recv", t_cm_dp_bytes_send_recv },
	{ "cm-dp-bytes-write-read", t_cm_dp_bytes_write_read },
	{ "cm-dp-silent", t_cm_dp_silent },
	{ "cm-dp-unsignaled", t_cm_dp_unsignaled },
	{ "cm-dp-unsignaled-close", t_cm_dp_unsignaled_close },
	{ "cm-dp-unsignaled-small-cq", t_cm_dp_unsignaled_small_cq },
	{ "cm-dp-unsignaled-flush", t_cm_dp_unsignaled_flush },
	{ "cm-dp-unsignaled-flush-shared", t_cm_dp_unsignaled_flush_shared },
	{ "cm-dp-unsignaled-disconnect", t_cm_dp_unsignaled_disconnect },
	{ "cm-dp-silent-read-fail", t_cm_dp_silent_read_fail },
	{ "cm-dp-refused-run", t_cm_dp_refused_run },
	{ "cm-dp-inline-sges", t_cm_dp_inline_sges },
	{ "cm-dp-inline-max", t_cm_dp_inline_max },
	{ "cm-dp-read-flush", t_cm_dp_read_flush },
	{ "cm-dp-flush-race", t_cm_dp_flush_race },
	{ "cm-dp-defer-inline-failure", t_cm_dp_defer_inline_failure },
	{ "cm-dp-inline-invalidate", t_cm_dp_inline_invalidate },
	{ NULL, NULL },
};
