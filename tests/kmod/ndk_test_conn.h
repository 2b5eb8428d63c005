/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk_test.ko: the loopback connection fixture the data-path scenarios
 * share (ndk_test_cm.c, ndk_test_fr.c).
 *
 * A struct t_fix holds an adapter, a PD, two CQs, up to two QPs (QP i on
 * CQ i, its context &f->qp[i]), a listener on the adapter's own IPv4
 * address and the two connectors of one loopback connection.  Every
 * helper records failed checks in the scenario's env and returns non-zero
 * when the scenario cannot go on; t_verdict() closes whatever is left.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_TEST_CONN_H
#define NDK_TEST_CONN_H

#include <linux/completion.h>
#include <linux/in.h>
#include <linux/spinlock.h>

#include "ndk_test.h"

#define T_MAX_CONN	4
#define T_CALLER_MAX	56
#define T_CALLEE_MAX	148

/**
 * struct t_fix - a loopback connection and what it is made of
 * @adapter:      the adapter under test
 * @info:         its NDK_ADAPTER_INFO
 * @pd:           the PD of every QP and MR
 * @qp:           [0] active side, [1] passive side; context &qp[i]
 * @cq:           both queues of qp[i]
 * @listener:     listening on peer_ip (t_listen())
 * @laddr:        the listener's address, with its port
 * @got:          completed by each ConnectEvent
 * @lock:         protects @conn and @count
 * @conn:         connectors the ConnectEvents handed over
 * @count:        ConnectEvents so far
 * @event_seq:    ndk_t_next_seq() at the last ConnectEvent
 * @a:            the active connector
 * @p:            the passive connector
 * @connect_req:  the connect completion
 * @complete_req: the complete-connect completion
 * @accept_req:   the accept completion
 * @disc_a:       the active side's disconnect events
 * @disc_p:       the passive side's disconnect events
 * @auto_accept:  the ConnectEvent accepts by itself (asynchronously)
 * @auto_complete: informational: the connect completion completes the
 *                connect (t_connect_done_auto())
 * @in_a:         the active side's inbound read limit
 * @out_a:        the active side's outbound read limit
 * @in_p:         the passive side's inbound read limit
 * @out_p:        the passive side's outbound read limit
 * @cdata:        the caller's private data
 * @sdata:        the callee's private data
 * @clen:         bytes of @cdata sent
 * @slen:         bytes of @sdata sent
 */
struct t_fix {
	struct ndk_adapter *adapter;
	struct ndk_adapter_info info;
	struct ndk_pd *pd;
	struct ndk_qp *qp[2];
	struct ndk_cq *cq[2];
	struct ndk_listener *listener;
	struct sockaddr_in laddr;

	struct completion got;
	spinlock_t lock;	/* protects conn and count */
	struct ndk_connector *conn[T_MAX_CONN];
	int count;
	int event_seq;

	struct ndk_connector *a;
	struct ndk_connector *p;
	struct ndk_t_wait connect_req, complete_req, accept_req;
	struct ndk_t_wait disc_a, disc_p;

	bool auto_accept;
	bool auto_complete;
	u32 in_a, out_a, in_p, out_p;
	u8 cdata[T_CALLER_MAX + 1];
	u8 sdata[T_CALLEE_MAX + 1];
	u32 clen, slen;
};

/* Bytes of canary either side of a struct t_buf's data, and their value. */
#define T_CANARY	64
#define T_CANARY_BYTE	0xa5

/**
 * struct t_buf - a kmalloc'ed buffer with canaries, registered as one MR
 * @mem:  canary | data | canary
 * @data: the registered bytes (the MR's base virtual address)
 * @len:  bytes of @data
 * @mdl:  one MDL over @data
 * @mr:   the MR (NdkRegisterMr), or NULL
 */
struct t_buf {
	u8 *mem;
	u8 *data;
	u32 len;
	struct ndk_mdl *mdl;
	struct ndk_mr *mr;
};

/* Fixture: open, listen, connect, close. */
int t_open(struct ndk_test_env *env, struct t_fix *f, int nqp);
int t_new_qp(struct ndk_test_env *env, struct t_fix *f, int i);
int t_listen(struct ndk_test_env *env, struct t_fix *f);
int t_request(struct ndk_test_env *env, struct t_fix *f);
int t_connect_async(struct ndk_test_env *env, struct t_fix *f);
void t_close_conn(struct ndk_connector **c);
void t_close_all(struct t_fix *f);
int t_verdict(struct ndk_test_env *env, struct t_fix *f);

/* Callbacks and addresses. */
void t_disc_cb(void *context);
void t_connect_event(void *context, struct ndk_connector *c);
void t_connect_done_auto(void *context, s32 status);
bool t_got_event(struct t_fix *f);
s32 t_laddr(struct ndk_listener *l, struct sockaddr_in *sin, u32 *len);
void t_addr(struct ndk_test_env *env, struct sockaddr_in *sin, u16 port);

/* Results. */
u32 t_poll(struct ndk_cq *cq, struct ndk_result *res, u32 want);
bool t_cq_quiet(struct ndk_cq *cq);
void t_check_result(struct ndk_test_env *env, struct ndk_result *r,
		    s32 status, void *qp_context, void *request_context);

/* Registered buffers and their bytes. */
int t_buf_reg(struct ndk_test_env *env, struct t_fix *f, struct t_buf *b,
	      u32 len, u32 flags);
bool t_canaries_ok(struct t_buf *b);
void t_buf_free(struct ndk_test_env *env, struct t_buf *b);
struct ndk_sge t_sge(struct t_buf *b, u32 offset, u32 len);
u64 t_raddr(struct t_buf *b, u32 offset);
void t_fill(u8 *buf, u32 len, u8 seed);
bool t_all(const u8 *p, u8 v, u32 len);

/* ndk.ko's test hooks (module parameters, debugfs). */
long t_hook_read(const char *path);
bool t_hook_write(const char *path, const char *val);

#endif /* NDK_TEST_CONN_H */
