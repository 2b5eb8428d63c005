// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDK connectors (NDK_CONNECTOR) and listeners (NDK_LISTENER)
 * over the kernel rdma_cm.
 *
 * NDK creates the QP independently of the connector, so every rdma_cm_id
 * here has a NULL ->qp and ndk.ko drives the QP itself: the attributes
 * come from rdma_init_qp_attr() and are applied with ib_modify_qp(), and
 * the QP number travels in rdma_conn_param.qp_num.
 *
 * Active side: ndk_connect() resolves the address and the route, moves
 * the QP to INIT and sends the REQ (rdma_connect_locked() from a work item
 * on ndk_connect_wq that the ROUTE_RESOLVED event queues: that event
 * comes from rdma_cm's one ordered workqueue, which every rdma_cm id of
 * the machine shares, and siw's connect is a blocking TCP connect()).
 * RDMA_CM_EVENT_CONNECT_RESPONSE (the REP) completes ndk_connect();
 * ndk_complete_connect() then moves the QP to RTR and RTS and calls
 * rdma_accept(id, NULL), which on an id without a QP only sends the RTU
 * (cma.c cma_rep_recv()); the QP is connected from there on.
 *
 * iWARP: the provider moves the QP from INIT to RTS itself when the MPA
 * exchange ends (siw refuses RTR/RTS by ib_modify_qp() without a
 * connection), and the active side gets RDMA_CM_EVENT_ESTABLISHED with the
 * peer's reply instead of a CONNECT_RESPONSE: that completes ndk_connect()
 * as a REP would, and ndk_complete_connect() only marks the connection up
 * (MPA has no RTU).  ndk_accept() moves the QP to INIT only.
 *
 * Passive side: each RDMA_CM_EVENT_CONNECT_REQUEST on a listening id makes
 * a connector object for the new id (its parent is the listener, so the
 * listener's close completes after its connectors' closes) and hands it
 * to the listener's ConnectEvent callback, or queues it while connect
 * events are paused.  ndk_accept() moves the QP to INIT, RTR and RTS and
 * sends the REP; RDMA_CM_EVENT_ESTABLISHED (the RTU) completes it.
 *
 * Requests (connect, complete-connect, accept, disconnect) follow ndk.ko's
 * asynchronous contract: with a completion they run on ndk_wq and return
 * STATUS_PENDING, the completion runs exactly once; without one they run
 * in the caller's thread and block until the outcome.  One request at a
 * time per connector.  Completions and the disconnect-event callback are
 * called from the rdma_cm event handler, ndk_wq or ndk_connect_wq, process
 * context.
 *
 * Lifetime: ids are destroyed only by the object's teardown (never from an
 * event handler), which runs after the consumer's close and after every
 * work item of the object (they hold references).  rdma_destroy_id() waits
 * for a running event handler, so no callback of a connector or listener
 * runs after its close completion; a request still pending at teardown
 * completes with STATUS_CANCELLED before the close completion.  A
 * connector holds a reference on its QP from ndk_connect()/ndk_accept()
 * until its teardown.
 *
 * Locking: the rdma_cm handler mutex of an id serialises its events with
 * ndk.ko's own calls that need it (rdma_lock_handler()); the connector's
 * and the listener's spinlocks protect their state, taken in any context.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/in.h>
#include <linux/capability.h>
#include <linux/delay.h>
#include <linux/in6.h>
#include <linux/memcontrol.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "ndk_core.h"
#include "ndk_qp.h"
#include "ndk_trace.h"

#define NDK_CM_RESOLVE_TIMEOUT_MS	2000
/*
 * Connection requests a listener holds at most that its consumer has not
 * accepted, rejected or closed yet (NdkListen has no backlog argument);
 * more are rejected before anything is allocated for them.
 */
#define NDK_CM_BACKLOG			128
/*
 * The largest private data rdma_cm hands over: a REP's on IB/RoCE, MPA's
 * on iWARP (the adapter's max_caller_data and max_callee_data never
 * exceed it).
 */
#define NDK_CM_PDATA_MAX		NDK_IWARP_PRIVATE_DATA
static_assert(NDK_CM_PDATA_MAX >= IB_CM_REP_PRIVATE_DATA_SIZE);
/*
 * Transport and RNR retries: 7 is "retry forever" for RNR.  Transport
 * retries stop at 6: rxe reads a retry_cnt of 7 as "forever" too, so a
 * peer that vanished (its host stopped) would never complete the
 * requests in flight with an error (Documentation/reliability.md, "Two
 * hosts").
 */
#define NDK_CM_RETRY_COUNT		6
#define NDK_CM_RNR_RETRY_COUNT		7

enum ndk_conn_state {
	NDK_CONN_IDLE,		/* created, not used yet */
	NDK_CONN_CONNECTING,	/* ndk_connect() pending */
	NDK_CONN_RESPONDED,	/* active: REP received, connect completed */
	NDK_CONN_REQUESTED,	/* passive: REQ received */
	NDK_CONN_COMPLETING,	/* ndk_complete_connect() pending */
	NDK_CONN_ACCEPTING,	/* ndk_accept() pending */
	NDK_CONN_CONNECTED,
	NDK_CONN_DISCONNECTING,	/* ndk_disconnect() pending */
	NDK_CONN_DISCONNECTED,	/* by either side */
	NDK_CONN_REJECTED,	/* ndk_reject() was called */
	NDK_CONN_FAILED,	/* connecting or accepting failed */
};

enum ndk_conn_op {
	NDK_CONN_OP_CONNECT,
	NDK_CONN_OP_COMPLETE,
	NDK_CONN_OP_ACCEPT,
	NDK_CONN_OP_DISCONNECT,
};

/**
 * struct ndk_connector - NDK_CONNECTOR
 * @obj:       object base (parent: the adapter, or the listener that
 *             received the connection request)
 * @id:        the rdma_cm id; its context is @obj
 * @lock:      protects the fields from @state to @peer_outbound
 * @state:     enum ndk_conn_state
 * @qp:        the QP given to ndk_connect()/ndk_accept(), referenced
 * @qp_live:   @qp left RESET under this connector: move it to ERR at close
 * @req_done:  completion of the pending request, NULL when none
 * @req_context: its context
 * @disc:      disconnect-event callback, cleared once called
 * @disc_context: its context
 * @have_data: @pdata_in and the peer's limits are valid
 * @pdata_in:  private data of the peer's REQ, REP or consumer REJ
 * @pdata_in_len: bytes of it reported (the transport pads to its size)
 * @peer_inbound:  the peer's inbound read limit (its responder resources)
 * @peer_outbound: the peer's outbound read limit (its initiator depth)
 * @inbound:   our inbound read limit (responder resources), negotiated
 * @outbound:  our outbound read limit (initiator depth), negotiated
 * @op:        the request @work runs
 * @have_src:  ndk_connect() got a source address
 * @src:       that source address
 * @dst:       the destination address
 * @pdata_out: private data to send with the REQ or REP
 * @pdata_out_len: its length
 * @entry:     in the listener's queue while not yet handed over
 * @backlogged: passive: counted in the listener's @pending (under @lock)
 * @work:      runs @op on ndk_wq for an asynchronous request
 * @connect_work: sends the REQ once the route is resolved
 *             (ndk_conn_connect_work())
 * @unbind_work: replaces an id that address resolution bound to another
 *             RDMA device (ndk_conn_unbind_work())
 * @closer:    runs the close completion, then releases @qp
 */
struct ndk_connector {
	struct ndk_obj obj;
	struct rdma_cm_id *id;
	spinlock_t lock; /* see above */
	enum ndk_conn_state state;
	struct ndk_qp *qp;
	bool qp_live;
	ndk_fn_request_completion req_done;
	void *req_context;
	ndk_fn_disconnect_event_callback disc;
	void *disc_context;
	bool have_data;
	u8 pdata_in[NDK_CM_PDATA_MAX];
	u32 pdata_in_len;
	u32 peer_inbound;
	u32 peer_outbound;
	u32 inbound;
	u32 outbound;
	enum ndk_conn_op op;
	bool have_src;
	struct sockaddr_storage src;
	struct sockaddr_storage dst;
	u8 pdata_out[NDK_CM_PDATA_MAX];
	u32 pdata_out_len;
	struct list_head entry;
	bool backlogged;
	struct work_struct work;
	struct work_struct connect_work;
	struct work_struct unbind_work;
	struct ndk_conn_closer *closer;
};

enum ndk_listener_state {
	NDK_LISTENER_IDLE,
	NDK_LISTENER_BINDING,
	NDK_LISTENER_LISTENING,
	NDK_LISTENER_FAILED,
};

/**
 * struct ndk_listener - NDK_LISTENER
 * @obj:           object base (parent: the adapter)
 * @id:            the listening rdma_cm id; its context is @obj
 * @connect_event: the consumer's ConnectEvent callback
 * @connect_event_context: its context
 * @lock:          protects @state, @paused, @stopping and @queue
 * @state:         enum ndk_listener_state
 * @paused:        ndk_control_connect_events() holds back ConnectEvents
 * @stopping:      ndk_close_listener() was called: no more ConnectEvents
 * @queue:         connectors not yet handed to the consumer
 * @pending:       connection requests not yet accepted, rejected or closed
 *                 (queued or handed over): at most NDK_CM_BACKLOG
 * @addr:          the address given to ndk_listen()
 * @listen_done:   completion of an asynchronous ndk_listen()
 * @listen_context: its context
 * @close_done:    completion of an asynchronous ndk_close_listener()
 * @close_context: its context
 * @listen_work:   runs an asynchronous ndk_listen()
 * @deliver_work:  hands queued connectors over after a resume
 * @close_work:    runs an asynchronous ndk_close_listener()
 * @memcg:         for a /dev/ndk adapter, the memory cgroup of the process
 *                 that called ndk_listen() (a reference); NULL for a kernel
 *                 consumer's (or a call from a kernel thread or atomic
 *                 context): what incoming requests allocate, in rdma_cm's
 *                 worker, is charged to it, or to no cgroup
 *                 (ndk_listener_charge())
 */
struct ndk_listener {
	struct ndk_obj obj;
	struct rdma_cm_id *id;
	ndk_fn_connect_event_callback connect_event;
	void *connect_event_context;
	spinlock_t lock; /* see above */
	enum ndk_listener_state state;
	bool paused;
	bool stopping;
	struct list_head queue;
	atomic_t pending;
	struct sockaddr_storage addr;
	ndk_fn_request_completion listen_done;
	void *listen_context;
	ndk_fn_close_completion close_done;
	void *close_context;
	struct work_struct listen_work;
	struct work_struct deliver_work;
	struct work_struct close_work;
	struct mem_cgroup *memcg;
};

/* A blocking request waits for its own completion. */
struct ndk_cm_sync {
	struct completion done;
	s32 status;
};

static void ndk_cm_sync_done(void *context, s32 status)
{
	struct ndk_cm_sync *sync = context;

	sync->status = status;
	complete(&sync->done);
}

/**
 * struct ndk_conn_closer - the last steps of a connector's close
 * @done:    the consumer's close completion, NULL for a blocking close
 * @context: its context
 * @sync:    a blocking close waits here
 * @qp:      the connector's QP, released after @done: the QP is an
 *           antecedent of the connector, so its close must not complete
 *           before the connector's close completion has returned
 *
 * Allocated with the connector (it outlives it), freed by
 * ndk_conn_closed().
 */
struct ndk_conn_closer {
	ndk_fn_close_completion done;
	void *context;
	struct completion *sync;
	struct ndk_qp *qp;
};

/*
 * A connector takes only a QP of its own adapter: it holds the QP (and
 * so its PD and adapter) until its close, and an adapter's close waits
 * for its objects, so a QP of another adapter of the same device would
 * make that adapter's close, or the device's removal (which closes the
 * adapters one at a time), wait for a connector only its owner closes.
 */
static bool ndk_conn_qp_fits(struct ndk_connector *c, struct ndk_qp *qp)
{
	return qp && qp->obj.adapter == c->obj.adapter;
}

/*
 * A QP is given to one connector at a time: the first ndk_connect() or
 * ndk_accept() that names it holds it until that connector's close.
 */
static bool ndk_conn_claim_qp(struct ndk_qp *qp)
{
	return !atomic_cmpxchg(&qp->claimed, 0, 1);
}

static void ndk_conn_release_qp(struct ndk_qp *qp)
{
	atomic_set(&qp->claimed, 0);
}

/* The close completion ndk_obj runs after ndk_conn_destroy(). */
static void ndk_conn_closed(void *context)
{
	struct ndk_conn_closer *closer = context;

	if (closer->done)
		closer->done(closer->context);
	if (closer->qp) {
		ndk_conn_release_qp(closer->qp);
		ndk_obj_put(&closer->qp->obj);
	}
	if (closer->sync)
		complete(closer->sync);
	kfree(closer);
}

static const struct ndk_adapter_info *ndk_cm_info(struct ndk_obj *obj)
{
	return &obj->adapter->info;
}

static u32 ndk_cm_addr_len(sa_family_t family)
{
	switch (family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

/* Validate a consumer's socket address and copy it. */
static s32 ndk_cm_copy_addr(struct sockaddr_storage *to,
			    const struct sockaddr *addr, u32 len)
{
	u32 need;

	if (!addr || len < sizeof(addr->sa_family))
		return STATUS_INVALID_PARAMETER;
	need = ndk_cm_addr_len(addr->sa_family);
	if (!need)
		return STATUS_INVALID_ADDRESS;
	if (len < need)
		return STATUS_INVALID_PARAMETER;
	memset(to, 0, sizeof(*to));
	memcpy(to, addr, need);
	return STATUS_SUCCESS;
}

/* Hand an address out: the consumer's buffer must hold the whole of it. */
static s32 ndk_cm_put_addr(const struct sockaddr_storage *ss,
			   struct sockaddr *addr, u32 *len)
{
	u32 need = ndk_cm_addr_len(ss->ss_family);

	if (!need)
		return STATUS_INVALID_DEVICE_STATE;
	if (*len < need) {
		*len = need;
		return STATUS_BUFFER_TOO_SMALL;
	}
	memcpy(addr, ss, need);
	*len = need;
	return STATUS_SUCCESS;
}

/**
 * ndk_cm_port_allowed() - may the caller bind this local address's port?
 * @adapter: the adapter of the connector or listener
 * @addr:    the local address (a validated copy)
 *
 * Binds run on ndk_wq for asynchronous requests, where rdma_cm's own
 * CAP_NET_BIND_SERVICE check (cma_use_port()) sees a kernel worker.  The
 * caller's right is therefore checked here, in its context, for adapters
 * of /dev/ndk files: a port below PROT_SOCK needs CAP_NET_BIND_SERVICE in
 * the user namespace owning the adapter's network namespace, as for
 * sockets.  Port 0 picks one from ip_local_port_range.  Kernel consumers
 * are trusted.
 *
 * Context: the consumer's.
 * Return: true when the bind may go ahead.
 */
static bool ndk_cm_port_allowed(struct ndk_adapter *adapter,
				const struct sockaddr_storage *addr)
{
	u16 port = 0;

	if (!adapter->user)
		return true;
	if (addr->ss_family == AF_INET)
		port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
	else if (addr->ss_family == AF_INET6)
		port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	return !port || port >= PROT_SOCK ||
	       ns_capable(adapter->net->user_ns, CAP_NET_BIND_SERVICE);
}

/*
 * The status of a failed address resolution or bind.  @local: the error
 * concerns the consumer's own (source or listen) address.
 */
static s32 ndk_cm_addr_status(int err, bool local)
{
	switch (err) {
	case -EADDRINUSE:
		return STATUS_SHARING_VIOLATION;
	case -EADDRNOTAVAIL:
	case -ENODEV:
	case -EAFNOSUPPORT:
	case -EINVAL:
		return local ? STATUS_INVALID_ADDRESS : STATUS_NETWORK_UNREACHABLE;
	case -ENETUNREACH:
		return STATUS_NETWORK_UNREACHABLE;
	case -EHOSTUNREACH:
	case -ETIMEDOUT:
	case -ENODATA:
		return STATUS_HOST_UNREACHABLE;
	default:
		return ndk_status_from_errno(err);
	}
}

/* --- Connector: requests ------------------------------------------------ */

/* Complete the pending request, if any, exactly once. */
static void ndk_conn_finish(struct ndk_connector *c, s32 status)
{
	ndk_fn_request_completion done;
	unsigned long flags;
	void *context;

	spin_lock_irqsave(&c->lock, flags);
	done = c->req_done;
	context = c->req_context;
	c->req_done = NULL;
	spin_unlock_irqrestore(&c->lock, flags);
	if (done)
		done(context, status);
}

static enum ndk_conn_state ndk_conn_set_state(struct ndk_connector *c,
					      enum ndk_conn_state state)
{
	enum ndk_conn_state old;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	old = c->state;
	c->state = state;
	spin_unlock_irqrestore(&c->lock, flags);
	return old;
}

static enum ndk_conn_state ndk_conn_get_state(struct ndk_connector *c)
{
	enum ndk_conn_state state;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	state = c->state;
	spin_unlock_irqrestore(&c->lock, flags);
	return state;
}

/*
 * A passive connector's request is answered (accepted or rejected) or the
 * connector goes: it no longer counts in its listener's backlog.  Once.
 */
static void ndk_conn_unbacklog(struct ndk_connector *c)
{
	unsigned long flags;
	bool was;

	spin_lock_irqsave(&c->lock, flags);
	was = c->backlogged;
	c->backlogged = false;
	spin_unlock_irqrestore(&c->lock, flags);
	if (was)
		atomic_dec(&container_of(c->obj.parent, struct ndk_listener,
					 obj)->pending);
}

/*
 * Start a request: the connector must be in @expect and have no request
 * pending; it moves to @next with @done (or @sync's) as the completion.
 * An asynchronous request (@done) holds the connector from here until its
 * work has run: ndk_conn_submit() follows at once, with no failure between.
 */
static s32 ndk_conn_begin(struct ndk_connector *c, enum ndk_conn_state expect,
			  enum ndk_conn_state next,
			  ndk_fn_request_completion done, void *context,
			  struct ndk_cm_sync *sync)
{
	unsigned long flags;
	s32 status = STATUS_SUCCESS;

	spin_lock_irqsave(&c->lock, flags);
	if (c->req_done || c->state != expect) {
		status = c->state == NDK_CONN_FAILED ?
			 STATUS_CONNECTION_ABORTED : STATUS_INVALID_DEVICE_STATE;
	} else {
		c->state = next;
		if (done) {
			c->req_done = done;
			c->req_context = context;
			/*
			 * The work's reference, before the completion is
			 * published: a peer's REJ or DREQ may run it at
			 * once, and it may close the connector.
			 */
			ndk_obj_get(&c->obj);
		} else {
			init_completion(&sync->done);
			c->req_done = ndk_cm_sync_done;
			c->req_context = sync;
		}
	}
	spin_unlock_irqrestore(&c->lock, flags);
	return status;
}

/*
 * siw flushes the QP inside the move to the error state, from this
 * thread: no direct callback meanwhile (ndk_qp_defer_direct()).  The
 * unsignaled requests that succeeded have no later completion to retire
 * them now: the flush work's drain marker does.
 */
static void ndk_conn_qp_error(struct ndk_connector *c)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (!c->qp)
		return;
	ndk_qp_set_connected(c->qp, false);
	if (!c->qp_live)
		return;
	ndk_qp_defer_direct(c->qp);
	ib_modify_qp(c->qp->ibqp, &attr, IB_QP_STATE);
	ndk_qp_undefer_direct(c->qp);
	ndk_qp_retire_unsignaled(c->qp);
}

/*
 * Move the QP one step with the attributes rdma_cm computes for the id,
 * plus what NDK wants: remote read and write allowed at the QP (the MRs
 * decide) and the negotiated read limits.
 */
static int ndk_conn_modify_qp(struct ndk_connector *c, enum ib_qp_state state)
{
	struct ib_qp_attr attr = {};
	int mask, ret;

	attr.qp_state = state;
	ret = rdma_init_qp_attr(c->id, &attr, &mask);
	if (ret)
		return ret;
	switch (state) {
	case IB_QPS_INIT:
		attr.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ;
		mask |= IB_QP_ACCESS_FLAGS;
		break;
	case IB_QPS_RTR:
		attr.max_dest_rd_atomic = c->inbound;
		mask |= IB_QP_MAX_DEST_RD_ATOMIC;
		break;
	case IB_QPS_RTS:
		attr.max_rd_atomic = c->outbound;
		mask |= IB_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		break;
	}
	ret = ib_modify_qp(c->qp->ibqp, &attr, mask);
	if (!ret)
		c->qp_live = true;
	return ret;
}

/* A failure while connecting or accepting: the pending request gets it. */
static void ndk_conn_fail(struct ndk_connector *c, s32 status)
{
	ndk_conn_set_state(c, NDK_CONN_FAILED);
	ndk_conn_finish(c, status);
}

static void ndk_conn_fill_param(struct ndk_connector *c,
				struct rdma_conn_param *param)
{
	memset(param, 0, sizeof(*param));
	param->private_data = c->pdata_out_len ? c->pdata_out : NULL;
	param->private_data_len = c->pdata_out_len;
	param->responder_resources = c->inbound;
	param->initiator_depth = c->outbound;
	param->flow_control = 1;
	param->retry_count = NDK_CM_RETRY_COUNT;
	param->rnr_retry_count = NDK_CM_RNR_RETRY_COUNT;
	param->qp_num = c->qp->ibqp->qp_num;
}

/* Is @id bound to an RDMA device other than the connector's adapter's? */
static bool ndk_conn_foreign(struct ndk_connector *c, struct rdma_cm_id *id)
{
	return id->device && id->device != ndk_ibdev(&c->obj);
}

/*
 * From the id's event handler: queue @work on @wq with a reference on the
 * connector for it, unless the close has dropped the last one (then the
 * teardown, which waits for this handler, destroys the id and cancels the
 * request, and nothing may be queued).  A work item queued already has
 * its reference.
 */
static void ndk_conn_queue(struct ndk_connector *c,
			   struct workqueue_struct *wq, struct work_struct *work)
{
	if (refcount_inc_not_zero(&c->obj.ref) && !queue_work(wq, work))
		ndk_obj_put(&c->obj);
}

/*
 * The connect's id is bound to another RDMA device (its source address or
 * its route is there): the connect fails with @status, and the id is
 * replaced by an unbound one (ndk_conn_unbind_work()), or rdma_cm would
 * hold that device's removal until the connector is closed.  The work
 * holds the connector before the failure is reported: the consumer's
 * completion may close it.  The event may also come after the close
 * dropped the last reference, before the teardown destroys the id (which
 * waits for this handler): then there is nothing to replace, and no
 * reference may be taken.
 */
static void ndk_conn_fail_foreign(struct ndk_connector *c, s32 status)
{
	ndk_conn_queue(c, ndk_wq, &c->unbind_work);
	ndk_conn_fail(c, status);
}

/* ndk_connect(): start address resolution; the events do the rest. */
static void ndk_conn_do_connect(struct ndk_connector *c)
{
	s32 status;
	int ret;

	ret = rdma_resolve_addr(c->id,
				c->have_src ? (struct sockaddr *)&c->src : NULL,
				(struct sockaddr *)&c->dst,
				NDK_CM_RESOLVE_TIMEOUT_MS);
	if (!ret)
		return;
	status = ndk_cm_addr_status(ret, c->have_src);
	/* A source address may have bound it before resolution failed. */
	if (ndk_conn_foreign(c, c->id))
		ndk_conn_fail_foreign(c, status);
	else
		ndk_conn_fail(c, status);
}

/* iWARP: iw_cm and the provider move the QP past INIT (file comment). */
static bool ndk_conn_iwarp(struct ndk_connector *c)
{
	return rdma_protocol_iwarp(c->id->device, c->id->port_num);
}

/*
 * Test hook, module parameter cm_withhold_rtu (root only; a parameter
 * rather than a debugfs file, which ndk_test.ko could not write with
 * kernel_write()): the next N complete-connects on IB/RoCE bring the QP
 * up but send no RTU, as if it were lost.  The peer's ib_cm waits in
 * REP_SENT (MRA_REP_RCVD) for it, so closing the peer's connector rejects
 * a connection this side has up (k-cm-rej-established).  The count is the
 * whole module's: the next complete-connects of any consumer take it, so
 * a test arms it only while it runs alone.  A connector whose RTU was
 * withheld sends no DREQ on a disconnect (ib_cm is not ESTABLISHED): only
 * the peer's REJ, or a close, ends it.
 */
static atomic_t ndk_cm_withhold_rtu = ATOMIC_INIT(0);

/*
 * Test hook, module parameter cm_hold_request_ms (root only, as above):
 * the next asynchronous request (connect, complete-connect, accept,
 * disconnect) sleeps this long between ndk_conn_begin(), which publishes
 * its completion, and the queueing of its work, then the hook disarms.
 * A peer's REJ or DREQ in that window completes the request, and its
 * completion may close the connector (k-cm-accept-closed-early).  It
 * sleeps: armed only while a test that calls from process context runs
 * alone.
 */
static atomic_t ndk_cm_hold_request_ms = ATOMIC_INIT(0);

/* Both hooks: a count that cannot go below 0, in kp->arg. */
static int ndk_cm_hook_set(const char *val, const struct kernel_param *kp)
{
	int n, ret;

	ret = kstrtoint(val, 0, &n);
	if (ret)
		return ret;
	if (n < 0)
		return -EINVAL;
	atomic_set(kp->arg, n);
	return 0;
}

static int ndk_cm_hook_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops ndk_cm_hook_ops = {
	.set = ndk_cm_hook_set,
	.get = ndk_cm_hook_get,
};
module_param_cb(cm_withhold_rtu, &ndk_cm_hook_ops, &ndk_cm_withhold_rtu,
		0600);
MODULE_PARM_DESC(cm_withhold_rtu,
		 "test hook: the next N complete-connects on IB/RoCE send no RTU");
module_param_cb(cm_hold_request_ms, &ndk_cm_hook_ops,
		&ndk_cm_hold_request_ms, 0600);
MODULE_PARM_DESC(cm_hold_request_ms,
		 "test hook: the next asynchronous connector request sleeps N ms (10 s at most) before it is queued");

static int ndk_conn_send_rtu(struct ndk_connector *c)
{
	if (atomic_dec_if_positive(&ndk_cm_withhold_rtu) >= 0)
		return 0;
	return rdma_accept(c->id, NULL);	/* rejects on error */
}

/* ndk_complete_connect(): RTR, RTS, then the RTU through rdma_accept(). */
static void ndk_conn_do_complete(struct ndk_connector *c)
{
	unsigned long flags;
	int ret;

	rdma_lock_handler(c->id);
	if (ndk_conn_get_state(c) != NDK_CONN_COMPLETING) {
		/* The connection failed meanwhile; the request completed. */
		rdma_unlock_handler(c->id);
		return;
	}
	if (ndk_conn_iwarp(c)) {
		ret = 0;	/* already in RTS, and MPA has no RTU */
	} else {
		ret = ndk_conn_modify_qp(c, IB_QPS_RTR);
		if (!ret)
			ret = ndk_conn_modify_qp(c, IB_QPS_RTS);
		if (!ret)
			ret = ndk_conn_send_rtu(c);
		else
			rdma_reject(c->id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	}
	if (!ret) {
		ndk_qp_set_connected(c->qp, true);
		spin_lock_irqsave(&c->lock, flags);
		c->state = NDK_CONN_CONNECTED;
		spin_unlock_irqrestore(&c->lock, flags);
	}
	rdma_unlock_handler(c->id);
	if (ret) {
		ndk_conn_qp_error(c);
		ndk_conn_fail(c, ndk_status_from_errno(ret));
		return;
	}
	ndk_conn_finish(c, STATUS_SUCCESS);
}

/* ndk_accept(): INIT, RTR, RTS, then the REP; ESTABLISHED completes it. */
static void ndk_conn_do_accept(struct ndk_connector *c)
{
	struct rdma_conn_param param;
	int ret;

	ndk_conn_fill_param(c, &param);
	rdma_lock_handler(c->id);
	if (ndk_conn_get_state(c) != NDK_CONN_ACCEPTING) {
		rdma_unlock_handler(c->id);
		return;
	}
	ret = ndk_conn_modify_qp(c, IB_QPS_INIT);
	if (!ret && !ndk_conn_iwarp(c))
		ret = ndk_conn_modify_qp(c, IB_QPS_RTR);
	if (!ret && !ndk_conn_iwarp(c))
		ret = ndk_conn_modify_qp(c, IB_QPS_RTS);
	if (!ret)
		ret = rdma_accept(c->id, &param);	/* rejects on error */
	else
		rdma_reject(c->id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	rdma_unlock_handler(c->id);
	if (ret) {
		ndk_conn_qp_error(c);
		ndk_conn_fail(c, ndk_status_from_errno(ret));
	}
}

/* ndk_disconnect(): flush the QP, send the DREQ; DISCONNECTED completes. */
static void ndk_conn_do_disconnect(struct ndk_connector *c)
{
	int ret;

	ndk_conn_qp_error(c);
	/* iw_cm moves the QP on, and siw flushes it again (receives). */
	if (c->qp)
		ndk_qp_defer_direct(c->qp);
	ret = rdma_disconnect(c->id);
	if (c->qp)
		ndk_qp_undefer_direct(c->qp);
	if (ret) {
		/* Nothing left to tear down on the wire. */
		ndk_conn_set_state(c, NDK_CONN_DISCONNECTED);
		ndk_conn_finish(c, STATUS_SUCCESS);
	}
}

static void ndk_conn_run(struct ndk_connector *c)
{
	switch (c->op) {
	case NDK_CONN_OP_CONNECT:
		ndk_conn_do_connect(c);
		break;
	case NDK_CONN_OP_COMPLETE:
		ndk_conn_do_complete(c);
		break;
	case NDK_CONN_OP_ACCEPT:
		ndk_conn_do_accept(c);
		break;
	case NDK_CONN_OP_DISCONNECT:
		ndk_conn_do_disconnect(c);
		break;
	}
}

static void ndk_conn_work(struct work_struct *work)
{
	struct ndk_connector *c = container_of(work, struct ndk_connector, work);

	ndk_conn_run(c);
	ndk_obj_put(&c->obj);
}

/*
 * A test hook, but even root's mistake holds a request 10 s at most, and
 * only a caller that may sleep (the kernel API's may be atomic).
 */
#define NDK_CM_HOLD_MAX_MS	10000

static void ndk_conn_test_hold(void)
{
	int ms;

	if (!preemptible())
		return;
	ms = atomic_xchg(&ndk_cm_hold_request_ms, 0);
	if (ms > 0)
		msleep(min(ms, NDK_CM_HOLD_MAX_MS));
}

/*
 * Run a begun request on ndk_wq (with the reference ndk_conn_begin() took
 * for it), or inline and wait for its outcome.
 */
static s32 ndk_conn_submit(struct ndk_connector *c, enum ndk_conn_op op,
			   ndk_fn_request_completion done,
			   struct ndk_cm_sync *sync)
{
	c->op = op;
	if (done) {
		ndk_conn_test_hold();
		queue_work(ndk_wq, &c->work);
		return STATUS_PENDING;
	}
	might_sleep();
	ndk_conn_run(c);
	wait_for_completion(&sync->done);
	return sync->status;
}

/* --- Connector: rdma_cm events ------------------------------------------- */

/*
 * Keep the peer's private data and read limits from a REQ, REP or REJ
 * (@param NULL: a REJ has no limits, and those of a REP before it are
 * void).
 */
static void ndk_conn_save_data(struct ndk_connector *c, const void *data,
			       u32 len, u32 limit,
			       const struct rdma_conn_param *param)
{
	unsigned long flags;

	len = min3(len, limit, (u32)NDK_CM_PDATA_MAX);
	spin_lock_irqsave(&c->lock, flags);
	memset(c->pdata_in, 0, sizeof(c->pdata_in));
	if (data)
		memcpy(c->pdata_in, data, len);
	c->pdata_in_len = data ? len : 0;
	/* ib_cm swaps them to the receiver's view. */
	c->peer_inbound = param ? param->initiator_depth : 0;
	c->peer_outbound = param ? param->responder_resources : 0;
	c->have_data = true;
	spin_unlock_irqrestore(&c->lock, flags);
}

static int ndk_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/*
 * Address resolution bound the id of a failed connect to another RDMA
 * device: rdma_cm would hold that device's removal until the connector is
 * closed.  Give the connector a fresh, unbound id and destroy the old one
 * (not from its own event handler, hence this work item).  The connector
 * is FAILED: nothing else uses its id any more, and ndk_conn_event()
 * ignores the old id's events meanwhile.
 */
static void ndk_conn_unbind_work(struct work_struct *work)
{
	struct ndk_connector *c = container_of(work, struct ndk_connector,
					       unbind_work);
	struct rdma_cm_id *id, *old = c->id;

	id = rdma_create_id(c->obj.adapter->net, ndk_cm_handler, &c->obj,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (!IS_ERR(id)) {
		WRITE_ONCE(c->id, id);
		rdma_destroy_id(old);
	}
	ndk_obj_put(&c->obj);
}

static void ndk_conn_addr_resolved(struct ndk_connector *c)
{
	int ret;

	ret = rdma_resolve_route(c->id, NDK_CM_RESOLVE_TIMEOUT_MS);
	if (ret)
		ndk_conn_fail(c, ndk_cm_addr_status(ret, false));
}

/*
 * The route is resolved: move the QP to INIT and send the REQ, under the
 * id's handler lock as the event handler would.  Not from the handler:
 * rdma_cm delivers ROUTE_RESOLVED from its one ordered workqueue, and
 * siw's connect is a TCP connect() that blocks until the peer answers (up
 * to the SYN retries against a host that drops them), which would hold
 * every rdma_cm user's resolution on the machine behind it.  A connector
 * closed meanwhile sends nothing; its teardown cancels the request.  The
 * id stays: it is bound to the adapter's device, so no unbind replaces it.
 */
static void ndk_conn_connect_work(struct work_struct *work)
{
	struct ndk_connector *c = container_of(work, struct ndk_connector,
					       connect_work);
	struct rdma_conn_param param;
	int ret = 0;

	rdma_lock_handler(c->id);
	if (!READ_ONCE(c->obj.closing) &&
	    ndk_conn_get_state(c) == NDK_CONN_CONNECTING) {
		ret = ndk_conn_modify_qp(c, IB_QPS_INIT);
		if (!ret) {
			ndk_conn_fill_param(c, &param);
			ret = rdma_connect_locked(c->id, &param);
		}
	}
	rdma_unlock_handler(c->id);
	if (ret)
		ndk_conn_fail(c, ndk_status_from_errno(ret));
	ndk_obj_put(&c->obj);
}

static void ndk_conn_route_resolved(struct ndk_connector *c)
{
	ndk_conn_queue(c, ndk_connect_wq, &c->connect_work);
}

static void ndk_conn_responded(struct ndk_connector *c,
			       const struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *p = &ev->param.conn;
	unsigned long flags;
	bool ours;

	ndk_conn_save_data(c, p->private_data, p->private_data_len,
			   ndk_cm_info(&c->obj)->max_callee_data, p);
	spin_lock_irqsave(&c->lock, flags);
	ours = c->state == NDK_CONN_CONNECTING;
	if (ours) {
		c->state = NDK_CONN_RESPONDED;
		c->inbound = min_t(u32, c->inbound, p->responder_resources);
		c->outbound = min_t(u32, c->outbound, p->initiator_depth);
	}
	spin_unlock_irqrestore(&c->lock, flags);
	if (ours)
		ndk_conn_finish(c, STATUS_SUCCESS);
}

static void ndk_conn_established(struct ndk_connector *c)
{
	unsigned long flags;
	bool ours;

	spin_lock_irqsave(&c->lock, flags);
	ours = c->state == NDK_CONN_ACCEPTING;
	if (ours) {
		ndk_qp_set_connected(c->qp, true);
		c->state = NDK_CONN_CONNECTED;
	}
	spin_unlock_irqrestore(&c->lock, flags);
	if (ours)
		ndk_conn_finish(c, STATUS_SUCCESS);
}

static void ndk_conn_disconnected(struct ndk_connector *c)
{
	ndk_fn_disconnect_event_callback disc = NULL;
	enum ndk_conn_state old;
	unsigned long flags;
	void *context = NULL;

	spin_lock_irqsave(&c->lock, flags);
	old = c->state;
	if (old == NDK_CONN_CONNECTED) {
		disc = c->disc;
		context = c->disc_context;
		c->disc = NULL;
	}
	c->state = NDK_CONN_DISCONNECTED;
	spin_unlock_irqrestore(&c->lock, flags);

	ndk_conn_qp_error(c);
	/* Answer the peer's DREQ (after a REJ ib_cm refuses: nothing to do). */
	if (old == NDK_CONN_CONNECTED)
		rdma_disconnect(c->id);
	if (disc)
		disc(context);
	if (old == NDK_CONN_DISCONNECTING)
		ndk_conn_finish(c, STATUS_SUCCESS);
	else
		ndk_conn_finish(c, STATUS_CONNECTION_ABORTED);
}

/*
 * A REJ.  While connecting or accepting it refuses the connection; on a
 * connection that is up (or being disconnected by us) it ends it: 6.1's
 * cm_rej_handler() takes a REJ in REP_RCVD/MRA_REP_SENT (our RTU not yet
 * received), ESTABLISHED and DREQ_SENT, as when the peer's id goes while
 * its ib_cm still waits for our RTU (cm_destroy_id() rejects from
 * REP_SENT), and rdma_cm reports REJECTED, not DISCONNECTED.
 * That is a disconnect for the consumer: its disconnect-event callback
 * fires once, the QP is flushed, a pending ndk_disconnect() succeeds.  The
 * reject's private data is not kept then: GetConnectionData still gives
 * what the REP or REQ carried (k-cm-rej-established).  Events of an id
 * are serialised; meanwhile a CONNECTED connector only moves on towards
 * DISCONNECTED, which ndk_conn_disconnected() takes as it finds it.
 */
static void ndk_conn_rejected(struct ndk_connector *c, struct rdma_cm_event *ev)
{
	s32 status = ev->status == IB_CM_REJ_TIMEOUT ? STATUS_IO_TIMEOUT :
			STATUS_CONNECTION_REFUSED;
	const void *data;
	u8 len;

	switch (ndk_conn_get_state(c)) {
	case NDK_CONN_CONNECTED:
	case NDK_CONN_DISCONNECTING:
		ndk_conn_disconnected(c);
		return;
	default:
		break;
	}
	data = rdma_consumer_reject_data(c->id, ev, &len);
	if (data)
		ndk_conn_save_data(c, data, len,
				   ndk_cm_info(&c->obj)->max_callee_data, NULL);
	trace_ndk_conn_refused(c, "rejected", status);
	ndk_conn_qp_error(c);
	ndk_conn_fail(c, status);
}

static void ndk_conn_event(struct ndk_connector *c, struct rdma_cm_id *id,
			   struct rdma_cm_event *ev)
{
	pr_debug("ndk: connector %p: %s (status %d)\n", c,
		 rdma_event_msg(ev->event), ev->status);
	/*
	 * An id bound to another device: the connect's own fails and is
	 * replaced (a source address there binds it before resolution ends,
	 * so its ADDR_ERROR or DEVICE_REMOVAL counts too); a replaced one's
	 * later events are not ours.
	 */
	if (ndk_conn_foreign(c, id)) {
		if (id == READ_ONCE(c->id))
			ndk_conn_fail_foreign(c,
					      ev->event == RDMA_CM_EVENT_ADDR_ERROR ?
					      ndk_cm_addr_status(ev->status, false) :
					      c->have_src ? STATUS_INVALID_ADDRESS :
					      STATUS_NETWORK_UNREACHABLE);
		return;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ndk_conn_addr_resolved(c);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ndk_conn_route_resolved(c);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		ndk_conn_fail(c, ndk_cm_addr_status(ev->status, false));
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		ndk_conn_responded(c, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		ndk_conn_rejected(c, ev);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		/* REQ or REP timed out. */
		trace_ndk_conn_refused(c, "unreachable", STATUS_IO_TIMEOUT);
		ndk_conn_qp_error(c);
		ndk_conn_fail(c, STATUS_IO_TIMEOUT);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		ndk_conn_qp_error(c);
		ndk_conn_fail(c, STATUS_CONNECTION_ABORTED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* iWARP's active side: the MPA reply, the QP in RTS. */
		if (ndk_conn_get_state(c) == NDK_CONN_CONNECTING)
			ndk_conn_responded(c, ev);
		else
			ndk_conn_established(c);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ndk_conn_disconnected(c);
		break;
	default:
		break;
	}
}

/* --- Listener: incoming requests ----------------------------------------- */

static void ndk_conn_destroy(struct ndk_obj *obj);

static struct ndk_connector *ndk_conn_alloc(gfp_t gfp)
{
	struct ndk_connector *c;

	c = kzalloc(sizeof(*c), gfp);
	if (!c)
		return NULL;
	spin_lock_init(&c->lock);
	INIT_LIST_HEAD(&c->entry);
	INIT_WORK(&c->work, ndk_conn_work);
	INIT_WORK(&c->connect_work, ndk_conn_connect_work);
	INIT_WORK(&c->unbind_work, ndk_conn_unbind_work);
	return c;
}

/*
 * Incoming requests arrive in rdma_cm's worker, which belongs to no one:
 * what they allocate (a connector, and in the consumer's ConnectEvent the
 * user path's event) is charged to the listener's creator when that is a
 * /dev/ndk file, as everything else a file makes; a kernel consumer's
 * listener has no @memcg, and nothing is charged (the root's).  Returns
 * the scope to restore.
 */
static struct mem_cgroup *ndk_listener_charge(struct ndk_listener *l)
{
	return set_active_memcg(l->memcg);
}

/* Hand queued connectors to the consumer unless paused or closing. */
static void ndk_listener_deliver(struct ndk_listener *l)
{
	struct mem_cgroup *old = ndk_listener_charge(l);
	struct ndk_connector *c;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&l->lock, flags);
		if (l->paused || l->stopping || list_empty(&l->queue)) {
			spin_unlock_irqrestore(&l->lock, flags);
			break;
		}
		c = list_first_entry(&l->queue, struct ndk_connector, entry);
		list_del_init(&c->entry);
		spin_unlock_irqrestore(&l->lock, flags);
		/* The consumer owns @c from here on. */
		l->connect_event(l->connect_event_context, c);
	}
	set_active_memcg(old);
}

/*
 * RDMA_CM_EVENT_CONNECT_REQUEST: @id is the new connection's id.  A
 * non-zero return makes rdma_cm destroy it, which rejects the request.
 */
static int ndk_listener_request(struct ndk_listener *l, struct rdma_cm_id *id,
				const struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *p = &ev->param.conn;
	struct ndk_connector *c;
	struct mem_cgroup *old;
	unsigned long flags;

	if (READ_ONCE(l->stopping) || ndk_adapter_removed(l->obj.adapter)) {
		trace_ndk_conn_refused(l, "listener closing",
				       STATUS_CONNECTION_REFUSED);
		return -ECONNREFUSED;
	}
	/* A wildcard listen also hears other devices' requests. */
	if (id->device != ndk_ibdev(&l->obj)) {
		trace_ndk_conn_refused(l, "another device",
				       STATUS_CONNECTION_REFUSED);
		return -ECONNREFUSED;
	}
	/* The backlog is full: reject, allocating nothing. */
	if (atomic_inc_return(&l->pending) > NDK_CM_BACKLOG) {
		atomic_dec(&l->pending);
		trace_ndk_conn_refused(l, "backlog full",
				       STATUS_CONNECTION_REFUSED);
		return -ECONNREFUSED;
	}
	old = ndk_listener_charge(l);
	c = ndk_conn_alloc(NDK_GFP_PEER);
	if (c) {
		c->closer = kzalloc(sizeof(*c->closer), NDK_GFP_PEER);
		if (!c->closer) {
			kfree(c);
			c = NULL;
		}
	}
	set_active_memcg(old);
	if (!c)
		goto err_unbacklog;
	ndk_obj_init(&c->obj, NDK_OBJECT_TYPE_CONNECTOR, &l->obj,
		     ndk_conn_destroy);
	/* The listener may close first; its adapter may not. */
	ndk_obj_loosen(&c->obj, &l->obj.adapter->obj);
	c->id = id;
	c->state = NDK_CONN_REQUESTED;
	c->backlogged = true;
	ndk_conn_save_data(c, p->private_data, p->private_data_len,
			   ndk_cm_info(&c->obj)->max_caller_data, p);
	id->context = &c->obj;	/* under the new id's handler mutex */
	ndk_obj_count(&c->obj);

	spin_lock_irqsave(&l->lock, flags);
	list_add_tail(&c->entry, &l->queue);
	spin_unlock_irqrestore(&l->lock, flags);
	ndk_listener_deliver(l);
	return 0;

err_unbacklog:
	atomic_dec(&l->pending);
	return -ENOMEM;
}

static int ndk_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct ndk_obj *obj = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return ndk_listener_request(container_of(obj, struct ndk_listener,
							 obj), id, ev);
	/*
	 * A listener's DEVICE_REMOVAL: the adapter's removal callback makes
	 * the consumer close the listener, which destroys the id.
	 */
	if (obj->hdr.object_type == NDK_OBJECT_TYPE_LISTENER)
		return 0;
	ndk_conn_event(container_of(obj, struct ndk_connector, obj), id, ev);
	return 0;
}

/* --- Connector: objects -------------------------------------------------- */

static int ndk_conn_init(struct ndk_obj *obj)
{
	struct ndk_connector *c = container_of(obj, struct ndk_connector, obj);

	c->closer = kzalloc(sizeof(*c->closer), GFP_KERNEL_ACCOUNT);
	if (!c->closer)
		return -ENOMEM;
	c->id = rdma_create_id(obj->adapter->net, ndk_cm_handler, &c->obj,
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(c->id)) {
		kfree(c->closer);
		return PTR_ERR(c->id);
	}
	return 0;
}

static void ndk_conn_destroy(struct ndk_obj *obj)
{
	struct ndk_connector *c = container_of(obj, struct ndk_connector, obj);

	/*
	 * Waits for a running event handler; no event comes after it.  On
	 * iWARP it moves an established QP to the error state (iw_cm), which
	 * siw flushes from this thread (ndk_qp_defer_direct()).
	 */
	if (c->qp)
		ndk_qp_defer_direct(c->qp);
	rdma_destroy_id(c->id);
	if (c->qp)
		ndk_qp_undefer_direct(c->qp);
	ndk_conn_unbacklog(c);
	ndk_conn_qp_error(c);
	ndk_conn_finish(c, STATUS_CANCELLED);
	/* ndk_conn_closed() releases the QP after the close completion. */
	c->closer->qp = c->qp;
	kfree(c);
}

/**
 * ndk_create_connector() - NdkCreateConnector
 * @adapter:           the adapter
 * @create_completion: NULL for a blocking create
 * @request_context:   passed to @create_completion
 * @connector:         receives the connector on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INSUFFICIENT_RESOURCES,
 * STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_connector(struct ndk_adapter *adapter,
			 ndk_fn_create_completion create_completion,
			 void *request_context,
			 struct ndk_connector **connector)
{
	struct ndk_connector *c;

	c = ndk_conn_alloc(ndk_gfp(create_completion));
	if (!c)
		return STATUS_INSUFFICIENT_RESOURCES;
	c->state = NDK_CONN_IDLE;
	ndk_obj_init(&c->obj, NDK_OBJECT_TYPE_CONNECTOR, &adapter->obj,
		     ndk_conn_destroy);
	return ndk_obj_create(&c->obj, ndk_conn_init, create_completion,
			      request_context, (void **)connector);
}
EXPORT_SYMBOL_GPL(ndk_create_connector);

/**
 * ndk_close_connector() - NdkCloseConnector
 * @connector:        the connector; a connection still up is torn down
 *                    (the peer sees a disconnect), a pending request
 *                    completes before the close completion (with
 *                    STATUS_CANCELLED, or with its own outcome when the
 *                    peer's answer came first), and the QP is released;
 *                    no call on it may follow, from that request's
 *                    completion either
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_connector(struct ndk_connector *connector,
			ndk_fn_close_completion close_completion,
			void *request_context)
{
	struct ndk_conn_closer *closer = connector->closer;
	struct completion sync;

	closer->done = close_completion;
	closer->context = request_context;
	if (close_completion)
		return ndk_obj_close(&connector->obj, ndk_conn_closed, closer);
	/* Blocking: nothing but our own work items holds the connector. */
	might_sleep();
	init_completion(&sync);
	closer->sync = &sync;
	flush_work(&connector->work);
	ndk_obj_close(&connector->obj, ndk_conn_closed, closer);
	wait_for_completion(&sync);
	return STATUS_SUCCESS;
}
EXPORT_SYMBOL_GPL(ndk_close_connector);

/**
 * ndk_connect() - NdkConnect: connect a QP to a listening peer
 * @connector:           an unused connector
 * @qp:                  the QP to connect, in RESET, of the connector's
 *                       adapter; referenced until the connector is closed
 * @src_address:         local address, or NULL (then chosen by routing)
 * @src_address_length:  bytes at @src_address (0 with NULL)
 * @dest_address:        the peer's listen address (IPv4 or IPv6)
 * @dest_address_length: bytes at @dest_address
 * @inbound_read_limit:  RDMA reads the peer may have in flight to us
 * @outbound_read_limit: RDMA reads we may have in flight to the peer
 * @private_data:        sent with the request, at most max_caller_data
 * @private_data_length: its length
 * @request_completion:  NULL for a blocking call
 * @request_context:     passed to @request_completion
 *
 * Success means the peer accepted: read its private data with
 * ndk_get_connection_data(), then call ndk_complete_connect() (or
 * ndk_reject()).
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING, or the outcome: STATUS_SUCCESS,
 * STATUS_CONNECTION_REFUSED (rejected, or nobody listens),
 * STATUS_IO_TIMEOUT, STATUS_NETWORK_UNREACHABLE, STATUS_HOST_UNREACHABLE,
 * STATUS_SHARING_VIOLATION (source address in use), STATUS_INVALID_ADDRESS
 * (bad source address or address family), STATUS_ACCESS_VIOLATION (a
 * source port below 1024 without CAP_NET_BIND_SERVICE, /dev/ndk adapters
 * only: ndk_cm_port_allowed()), STATUS_INVALID_PARAMETER
 * (private data or read limits over the adapter's, @qp of another
 * adapter, bad arguments),
 * STATUS_INVALID_DEVICE_STATE (connector already used, or @qp given to
 * another connector that is not closed yet),
 * STATUS_DEVICE_REMOVED, STATUS_INSUFFICIENT_RESOURCES.  Inline failures
 * never call @request_completion.
 */
s32 ndk_connect(struct ndk_connector *connector, struct ndk_qp *qp,
		const struct sockaddr *src_address, u32 src_address_length,
		const struct sockaddr *dest_address, u32 dest_address_length,
		u32 inbound_read_limit, u32 outbound_read_limit,
		const void *private_data, u32 private_data_length,
		ndk_fn_request_completion request_completion,
		void *request_context)
{
	const struct ndk_adapter_info *info = ndk_cm_info(&connector->obj);
	struct ndk_connector *c = connector;
	struct sockaddr_storage src, dst;
	struct ndk_cm_sync sync;
	bool have_src = false;
	s32 status;

	if (ndk_adapter_removed(c->obj.adapter))
		return STATUS_DEVICE_REMOVED;
	if (!ndk_conn_qp_fits(c, qp))
		return STATUS_INVALID_PARAMETER;
	if (private_data_length > info->max_caller_data ||
	    (private_data_length && !private_data))
		return STATUS_INVALID_PARAMETER;
	if (inbound_read_limit > info->max_inbound_read_limit ||
	    outbound_read_limit > info->max_outbound_read_limit ||
	    inbound_read_limit > U8_MAX || outbound_read_limit > U8_MAX)
		return STATUS_INVALID_PARAMETER;
	status = ndk_cm_copy_addr(&dst, dest_address, dest_address_length);
	if (status)
		return status;
	if (src_address && src_address_length) {
		status = ndk_cm_copy_addr(&src, src_address,
					  src_address_length);
		if (status)
			return status;
		if (src.ss_family != dst.ss_family)
			return STATUS_INVALID_ADDRESS;
		if (!ndk_cm_port_allowed(c->obj.adapter, &src))
			return STATUS_ACCESS_VIOLATION;
		have_src = true;
	}

	if (!ndk_conn_claim_qp(qp))
		return STATUS_INVALID_DEVICE_STATE;
	status = ndk_conn_begin(c, NDK_CONN_IDLE, NDK_CONN_CONNECTING,
				request_completion, request_context, &sync);
	if (status) {
		ndk_conn_release_qp(qp);
		return status;
	}
	ndk_obj_get(&qp->obj);
	c->qp = qp;
	c->have_src = have_src;
	c->src = src;
	c->dst = dst;
	c->inbound = inbound_read_limit;
	c->outbound = outbound_read_limit;
	memcpy(c->pdata_out, private_data, private_data_length);
	c->pdata_out_len = private_data_length;
	return ndk_conn_submit(c, NDK_CONN_OP_CONNECT, request_completion,
			       &sync);
}
EXPORT_SYMBOL_GPL(ndk_connect);

/**
 * ndk_complete_connect() - NdkCompleteConnect: finish an accepted connect
 * @connector:                a connector whose ndk_connect() succeeded
 * @disconnect_event:         called once when the peer disconnects; may
 *                            be NULL
 * @disconnect_event_context: passed to @disconnect_event
 * @request_completion:       NULL for a blocking call
 * @request_context:          passed to @request_completion
 *
 * Moves the QP to RTR and RTS and sends the RTU; the QP is connected when
 * this succeeds.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING, or the outcome: STATUS_SUCCESS,
 * STATUS_INVALID_DEVICE_STATE (no accepted connect), STATUS_CONNECTION_ABORTED
 * (the connection failed meanwhile), or the status of a QP or rdma_cm error.
 */
s32 ndk_complete_connect(struct ndk_connector *connector,
			 ndk_fn_disconnect_event_callback disconnect_event,
			 void *disconnect_event_context,
			 ndk_fn_request_completion request_completion,
			 void *request_context)
{
	struct ndk_connector *c = connector;
	struct ndk_cm_sync sync;
	unsigned long flags;
	s32 status;

	status = ndk_conn_begin(c, NDK_CONN_RESPONDED, NDK_CONN_COMPLETING,
				request_completion, request_context, &sync);
	if (status)
		return status;
	spin_lock_irqsave(&c->lock, flags);
	c->disc = disconnect_event;
	c->disc_context = disconnect_event_context;
	spin_unlock_irqrestore(&c->lock, flags);
	return ndk_conn_submit(c, NDK_CONN_OP_COMPLETE, request_completion,
			       &sync);
}
EXPORT_SYMBOL_GPL(ndk_complete_connect);

/**
 * ndk_accept() - NdkAccept: accept a connection request
 * @connector:                a connector from a listener's ConnectEvent
 * @qp:                       the QP to connect, in RESET, of the
 *                            connector's adapter; referenced until the
 *                            connector is closed
 * @inbound_read_limit:       RDMA reads the peer may have in flight to us
 *                            (lowered to the peer's outbound limit)
 * @outbound_read_limit:      RDMA reads we may have in flight (lowered to
 *                            the peer's inbound limit)
 * @private_data:             sent with the reply, at most max_callee_data
 * @private_data_length:      its length
 * @disconnect_event:         called once when the peer disconnects; may
 *                            be NULL
 * @disconnect_event_context: passed to @disconnect_event
 * @request_completion:       NULL for a blocking call
 * @request_context:          passed to @request_completion
 *
 * Completes when the peer's ndk_complete_connect() arrives (the RTU); the
 * QP is connected from then on.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING, or the outcome: STATUS_SUCCESS,
 * STATUS_INVALID_PARAMETER (private data or read limits over the
 * adapter's, @qp of another adapter), STATUS_INVALID_DEVICE_STATE (not a
 * pending request, or @qp given to another connector that is not closed
 * yet),
 * STATUS_CONNECTION_ABORTED (the peer gave up), STATUS_CONNECTION_REFUSED
 * (the peer rejected the reply), STATUS_IO_TIMEOUT, STATUS_DEVICE_REMOVED.
 */
s32 ndk_accept(struct ndk_connector *connector, struct ndk_qp *qp,
	       u32 inbound_read_limit, u32 outbound_read_limit,
	       const void *private_data, u32 private_data_length,
	       ndk_fn_disconnect_event_callback disconnect_event,
	       void *disconnect_event_context,
	       ndk_fn_request_completion request_completion,
	       void *request_context)
{
	const struct ndk_adapter_info *info = ndk_cm_info(&connector->obj);
	struct ndk_connector *c = connector;
	struct ndk_cm_sync sync;
	unsigned long flags;
	s32 status;

	if (ndk_adapter_removed(c->obj.adapter))
		return STATUS_DEVICE_REMOVED;
	if (!ndk_conn_qp_fits(c, qp))
		return STATUS_INVALID_PARAMETER;
	if (private_data_length > info->max_callee_data ||
	    (private_data_length && !private_data))
		return STATUS_INVALID_PARAMETER;
	if (inbound_read_limit > info->max_inbound_read_limit ||
	    outbound_read_limit > info->max_outbound_read_limit)
		return STATUS_INVALID_PARAMETER;

	if (!ndk_conn_claim_qp(qp))
		return STATUS_INVALID_DEVICE_STATE;
	status = ndk_conn_begin(c, NDK_CONN_REQUESTED, NDK_CONN_ACCEPTING,
				request_completion, request_context, &sync);
	if (status) {
		ndk_conn_release_qp(qp);
		return status;
	}
	ndk_conn_unbacklog(c);
	ndk_obj_get(&qp->obj);
	c->qp = qp;
	memcpy(c->pdata_out, private_data, private_data_length);
	c->pdata_out_len = private_data_length;
	spin_lock_irqsave(&c->lock, flags);
	c->inbound = min(inbound_read_limit, c->peer_outbound);
	c->outbound = min(outbound_read_limit, c->peer_inbound);
	c->disc = disconnect_event;
	c->disc_context = disconnect_event_context;
	spin_unlock_irqrestore(&c->lock, flags);
	return ndk_conn_submit(c, NDK_CONN_OP_ACCEPT, request_completion,
			       &sync);
}
EXPORT_SYMBOL_GPL(ndk_accept);

/**
 * ndk_reject() - NdkReject: refuse a connection request or reply
 * @connector:           a connector from a ConnectEvent, or one whose
 *                       ndk_connect() succeeded
 * @private_data:        sent with the reject, at most max_callee_data
 * @private_data_length: its length
 *
 * The peer's ndk_connect() (or ndk_accept()) completes with
 * STATUS_CONNECTION_REFUSED.  The consumer closes the connector afterwards.
 *
 * Context: process context; a ConnectEvent callback or a connect's
 * completion may call it (rdma_reject() waits for no event handler).
 * rdma_reject() sleeps on iWARP: siw waits for its endpoint's other work
 * (siw_cep_set_inuse()) and sends the reject on the TCP socket; on IB and
 * RoCE ib_cm sends the REJ under a spinlock, but only process context is
 * promised.
 * Return: STATUS_SUCCESS, STATUS_INVALID_PARAMETER (private data too long),
 * STATUS_INVALID_DEVICE_STATE (nothing to reject), or the status of the
 * rdma_cm error.
 */
s32 ndk_reject(struct ndk_connector *connector, const void *private_data,
	       u32 private_data_length)
{
	struct ndk_connector *c = connector;
	unsigned long flags;
	bool ok;
	int ret;

	might_sleep();
	if (private_data_length > ndk_cm_info(&c->obj)->max_callee_data ||
	    (private_data_length && !private_data))
		return STATUS_INVALID_PARAMETER;
	spin_lock_irqsave(&c->lock, flags);
	ok = !c->req_done && (c->state == NDK_CONN_REQUESTED ||
			      c->state == NDK_CONN_RESPONDED);
	if (ok)
		c->state = NDK_CONN_REJECTED;
	spin_unlock_irqrestore(&c->lock, flags);
	if (!ok)
		return STATUS_INVALID_DEVICE_STATE;
	ndk_conn_unbacklog(c);
	ret = rdma_reject(c->id, private_data, private_data_length,
			  IB_CM_REJ_CONSUMER_DEFINED);
	return ndk_status_from_errno(ret);
}
EXPORT_SYMBOL_GPL(ndk_reject);

/**
 * ndk_get_connection_data() - NdkGetConnectionData: what the peer sent
 * @connector:           a connector that received a request (passive), a
 *                       reply (ndk_connect() succeeded) or a reject with
 *                       private data (ndk_connect() was refused)
 * @inbound_read_limit:  receives the peer's inbound read limit; may be NULL
 * @outbound_read_limit: receives the peer's outbound read limit; may be NULL
 * @private_data:        receives the peer's private data; may be NULL when
 *                       *@private_data_length is 0
 * @private_data_length: in: bytes at @private_data; out: bytes of private
 *                       data (or needed); may be NULL
 *
 * IB and RoCE carry private data in fixed-size fields: the length reported
 * is that of the field (max_caller_data for a request, max_callee_data for
 * a reply or reject), the bytes past what the peer sent being zero.
 *
 * Context: any.
 * Return: STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL (the needed length in
 * *@private_data_length, nothing copied), STATUS_INVALID_DEVICE_STATE
 * (nothing received).
 */
s32 ndk_get_connection_data(struct ndk_connector *connector,
			    u32 *inbound_read_limit, u32 *outbound_read_limit,
			    void *private_data, u32 *private_data_length)
{
	struct ndk_connector *c = connector;
	s32 status = STATUS_SUCCESS;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	if (!c->have_data) {
		status = STATUS_INVALID_DEVICE_STATE;
		goto out_unlock;
	}
	if (private_data_length) {
		if (*private_data_length < c->pdata_in_len) {
			*private_data_length = c->pdata_in_len;
			status = STATUS_BUFFER_TOO_SMALL;
			goto out_unlock;
		}
		if (c->pdata_in_len)
			memcpy(private_data, c->pdata_in, c->pdata_in_len);
		*private_data_length = c->pdata_in_len;
	}
	if (inbound_read_limit)
		*inbound_read_limit = c->peer_inbound;
	if (outbound_read_limit)
		*outbound_read_limit = c->peer_outbound;
out_unlock:
	spin_unlock_irqrestore(&c->lock, flags);
	return status;
}
EXPORT_SYMBOL_GPL(ndk_get_connection_data);

/* Addresses are known from a reply (active) or a request (passive) on. */
static bool ndk_conn_has_addresses(struct ndk_connector *c)
{
	switch (ndk_conn_get_state(c)) {
	case NDK_CONN_IDLE:
	case NDK_CONN_CONNECTING:
	case NDK_CONN_FAILED:
		return false;
	default:
		return true;
	}
}

/**
 * ndk_get_local_address() - NdkGetLocalAddress of a connector
 * @connector:      a connector with a connection (being) established
 * @address:        receives the local address
 * @address_length: in: bytes at @address; out: bytes written, or needed
 *
 * Context: any.
 * Return: STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL (the needed size in
 * *@address_length), STATUS_INVALID_DEVICE_STATE (no connection yet).
 */
s32 ndk_get_local_address(struct ndk_connector *connector,
			  struct sockaddr *address, u32 *address_length)
{
	if (!ndk_conn_has_addresses(connector))
		return STATUS_INVALID_DEVICE_STATE;
	return ndk_cm_put_addr(&connector->id->route.addr.src_addr, address,
			       address_length);
}
EXPORT_SYMBOL_GPL(ndk_get_local_address);

/**
 * ndk_get_peer_address() - NdkGetPeerAddress
 * @connector:      a connector with a connection (being) established
 * @address:        receives the peer's address
 * @address_length: in: bytes at @address; out: bytes written, or needed
 *
 * Context: any.
 * Return: STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL (the needed size in
 * *@address_length), STATUS_INVALID_DEVICE_STATE (no connection yet).
 */
s32 ndk_get_peer_address(struct ndk_connector *connector,
			 struct sockaddr *address, u32 *address_length)
{
	if (!ndk_conn_has_addresses(connector))
		return STATUS_INVALID_DEVICE_STATE;
	return ndk_cm_put_addr(&connector->id->route.addr.dst_addr, address,
			       address_length);
}
EXPORT_SYMBOL_GPL(ndk_get_peer_address);

/**
 * ndk_disconnect() - NdkDisconnect
 * @connector:          a connected connector
 * @request_completion: NULL for a blocking call
 * @request_context:    passed to @request_completion
 *
 * Moves the QP to the error state (outstanding requests are flushed),
 * marks it not connected and disconnects; the peer's disconnect-event
 * callback fires.  This side's own disconnect-event callback does not.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING, or the outcome: STATUS_SUCCESS (also when the
 * peer disconnected first), STATUS_CONNECTION_INVALID (never connected),
 * STATUS_INVALID_DEVICE_STATE (a request is pending).
 */
s32 ndk_disconnect(struct ndk_connector *connector,
		   ndk_fn_request_completion request_completion,
		   void *request_context)
{
	struct ndk_connector *c = connector;
	struct ndk_cm_sync sync;
	s32 status;

	switch (ndk_conn_get_state(c)) {
	case NDK_CONN_DISCONNECTED:
		return STATUS_SUCCESS;
	case NDK_CONN_CONNECTED:
	case NDK_CONN_DISCONNECTING:
		break;
	default:
		return STATUS_CONNECTION_INVALID;
	}
	status = ndk_conn_begin(c, NDK_CONN_CONNECTED, NDK_CONN_DISCONNECTING,
				request_completion, request_context, &sync);
	if (status) {
		/* The peer's disconnect may have won the race. */
		if (ndk_conn_get_state(c) == NDK_CONN_DISCONNECTED)
			return STATUS_SUCCESS;
		return status;
	}
	return ndk_conn_submit(c, NDK_CONN_OP_DISCONNECT, request_completion,
			       &sync);
}
EXPORT_SYMBOL_GPL(ndk_disconnect);

/* --- Listener ------------------------------------------------------------ */

static s32 ndk_listener_start(struct ndk_listener *l)
{
	enum ndk_listener_state state = NDK_LISTENER_FAILED;
	unsigned long flags;
	s32 status;
	int ret;

	ret = rdma_bind_addr(l->id, (struct sockaddr *)&l->addr);
	if (ret) {
		status = ndk_cm_addr_status(ret, true);
		goto out_set_state;
	}
	/* A specific address binds the id to its device. */
	if (l->id->device && l->id->device != ndk_ibdev(&l->obj)) {
		status = STATUS_INVALID_ADDRESS;
		goto err_destroy_id;
	}
	ret = rdma_listen(l->id, NDK_CM_BACKLOG);
	if (ret) {
		status = ndk_cm_addr_status(ret, true);
		goto err_destroy_id;
	}
	state = NDK_LISTENER_LISTENING;
	status = STATUS_SUCCESS;
	goto out_set_state;

err_destroy_id:
	/*
	 * A bound id holds its device (maybe another adapter's): its removal
	 * would wait for this listener's close.  A failed listener keeps no
	 * id; it can only be closed.
	 */
	rdma_destroy_id(l->id);
	l->id = NULL;
out_set_state:
	spin_lock_irqsave(&l->lock, flags);
	l->state = state;
	spin_unlock_irqrestore(&l->lock, flags);
	return status;
}

static void ndk_listener_listen_work(struct work_struct *work)
{
	struct ndk_listener *l = container_of(work, struct ndk_listener,
					      listen_work);

	l->listen_done(l->listen_context, ndk_listener_start(l));
	ndk_obj_put(&l->obj);
}

static void ndk_listener_deliver_work(struct work_struct *work)
{
	struct ndk_listener *l = container_of(work, struct ndk_listener,
					      deliver_work);

	ndk_listener_deliver(l);
	ndk_obj_put(&l->obj);
}

static void ndk_cm_close_nop(void *context)
{
}

/*
 * The consumer closes the listener: no ConnectEvent from here on, stop
 * listening, and refuse the requests still queued (the consumer never saw
 * those connectors, so ndk.ko closes them, asynchronously: this may run
 * on ndk_wq, and the listener's teardown waits for them anyway since they
 * are its children).  Process context.
 */
static void ndk_listener_stop(struct ndk_listener *l)
{
	struct ndk_connector *c, *next;
	unsigned long flags;
	LIST_HEAD(queue);

	spin_lock_irqsave(&l->lock, flags);
	l->stopping = true;
	spin_unlock_irqrestore(&l->lock, flags);
	flush_work(&l->listen_work);
	flush_work(&l->deliver_work);
	/* Waits for a running CONNECT_REQUEST handler. */
	if (l->id)
		rdma_destroy_id(l->id);
	l->id = NULL;

	spin_lock_irqsave(&l->lock, flags);
	list_splice_init(&l->queue, &queue);
	spin_unlock_irqrestore(&l->lock, flags);
	list_for_each_entry_safe(c, next, &queue, entry) {
		list_del_init(&c->entry);
		ndk_reject(c, NULL, 0);
		ndk_close_connector(c, ndk_cm_close_nop, NULL);
	}
}

static void ndk_listener_close_work(struct work_struct *work)
{
	struct ndk_listener *l = container_of(work, struct ndk_listener,
					      close_work);

	ndk_listener_stop(l);
	ndk_obj_close(&l->obj, l->close_done, l->close_context);
}

static int ndk_listener_init(struct ndk_obj *obj)
{
	struct ndk_listener *l = container_of(obj, struct ndk_listener, obj);

	l->id = rdma_create_id(obj->adapter->net, ndk_cm_handler, &l->obj,
			       RDMA_PS_TCP, IB_QPT_RC);
	return PTR_ERR_OR_ZERO(l->id);
}

static void ndk_listener_destroy(struct ndk_obj *obj)
{
	struct ndk_listener *l = container_of(obj, struct ndk_listener, obj);

	/* ndk_listener_stop() destroyed the id at close. */
	mem_cgroup_put(l->memcg);
	kfree(l);
}

/**
 * ndk_create_listener() - NdkCreateListener
 * @adapter:               the adapter
 * @connect_event:         called with a new connector for each incoming
 *                         connection request; the consumer owns it and
 *                         must close it (accepted, rejected or not).  At
 *                         most NDK_CM_BACKLOG (128) requests are pending
 *                         (not yet accepted, rejected or closed); further
 *                         ones are rejected (the peer sees
 *                         STATUS_CONNECTION_REFUSED)
 * @connect_event_context: passed to @connect_event
 * @create_completion:     NULL for a blocking create
 * @request_context:       passed to @create_completion
 * @listener:              receives the listener on inline success
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_INVALID_PARAMETER (no
 * @connect_event), STATUS_INSUFFICIENT_RESOURCES, STATUS_DEVICE_REMOVED.
 */
s32 ndk_create_listener(struct ndk_adapter *adapter,
			ndk_fn_connect_event_callback connect_event,
			void *connect_event_context,
			ndk_fn_create_completion create_completion,
			void *request_context, struct ndk_listener **listener)
{
	struct ndk_listener *l;

	if (!connect_event)
		return STATUS_INVALID_PARAMETER;
	l = kzalloc(sizeof(*l), ndk_gfp(create_completion));
	if (!l)
		return STATUS_INSUFFICIENT_RESOURCES;
	ndk_obj_init(&l->obj, NDK_OBJECT_TYPE_LISTENER, &adapter->obj,
		     ndk_listener_destroy);
	l->connect_event = connect_event;
	l->connect_event_context = connect_event_context;
	spin_lock_init(&l->lock);
	INIT_LIST_HEAD(&l->queue);
	INIT_WORK(&l->listen_work, ndk_listener_listen_work);
	INIT_WORK(&l->deliver_work, ndk_listener_deliver_work);
	INIT_WORK(&l->close_work, ndk_listener_close_work);
	return ndk_obj_create(&l->obj, ndk_listener_init, create_completion,
			      request_context, (void **)listener);
}
EXPORT_SYMBOL_GPL(ndk_create_listener);

/**
 * ndk_close_listener() - NdkCloseListener
 * @listener:         the listener; it stops listening at once, requests not
 *                    yet handed over are rejected, and the close completes
 *                    once the connectors it handed over are closed
 * @close_completion: NULL for a blocking close
 * @request_context:  passed to @close_completion
 *
 * No ConnectEvent callback runs after this returns (blocking) or after the
 * close completion.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_close_listener(struct ndk_listener *listener,
		       ndk_fn_close_completion close_completion,
		       void *request_context)
{
	if (!close_completion) {
		might_sleep();
		ndk_listener_stop(listener);
		return ndk_obj_close(&listener->obj, NULL, NULL);
	}
	listener->close_done = close_completion;
	listener->close_context = request_context;
	queue_work(ndk_wq, &listener->close_work);
	return STATUS_PENDING;
}
EXPORT_SYMBOL_GPL(ndk_close_listener);

/**
 * ndk_listen() - NdkListen
 * @listener:           a listener not listening yet
 * @address:            local IPv4 or IPv6 address of the adapter (or the
 *                      wildcard address) and port; port 0 picks one
 * @address_length:     bytes at @address
 * @request_completion: NULL for a blocking call
 * @request_context:    passed to @request_completion
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING, or the outcome: STATUS_SUCCESS,
 * STATUS_SHARING_VIOLATION (address and port in use),
 * STATUS_INVALID_ADDRESS (not an address of this adapter, or an
 * unsupported family), STATUS_ACCESS_VIOLATION (a port below 1024 without
 * CAP_NET_BIND_SERVICE, /dev/ndk adapters only), STATUS_INVALID_PARAMETER,
 * STATUS_INVALID_DEVICE_STATE (listen was called already),
 * STATUS_DEVICE_REMOVED, STATUS_INSUFFICIENT_RESOURCES.
 */
s32 ndk_listen(struct ndk_listener *listener, const struct sockaddr *address,
	       u32 address_length,
	       ndk_fn_request_completion request_completion,
	       void *request_context)
{
	struct ndk_listener *l = listener;
	struct sockaddr_storage addr;
	unsigned long flags;
	s32 status;

	if (ndk_adapter_removed(l->obj.adapter))
		return STATUS_DEVICE_REMOVED;
	status = ndk_cm_copy_addr(&addr, address, address_length);
	if (status)
		return status;
	if (!ndk_cm_port_allowed(l->obj.adapter, &addr))
		return STATUS_ACCESS_VIOLATION;
	spin_lock_irqsave(&l->lock, flags);
	if (l->state != NDK_LISTENER_IDLE) {
		spin_unlock_irqrestore(&l->lock, flags);
		return STATUS_INVALID_DEVICE_STATE;
	}
	l->state = NDK_LISTENER_BINDING;
	spin_unlock_irqrestore(&l->lock, flags);
	/*
	 * A /dev/ndk listener's requests are charged to its caller's memory
	 * cgroup.  A kernel consumer's are charged to none (the root): the
	 * process that happens to call, modprobe for ndkblk's target, is not
	 * the one they are made for.  In interrupt context current is whoever
	 * was interrupted.
	 */
	if (l->obj.adapter->user && !l->memcg && in_task() && current->mm)
		l->memcg = get_mem_cgroup_from_mm(current->mm);
	l->addr = addr;
	if (!request_completion) {
		might_sleep();
		return ndk_listener_start(l);
	}
	l->listen_done = request_completion;
	l->listen_context = request_context;
	ndk_obj_get(&l->obj);
	queue_work(ndk_wq, &l->listen_work);
	return STATUS_PENDING;
}
EXPORT_SYMBOL_GPL(ndk_listen);

/**
 * ndk_get_listener_local_address() - NdkGetLocalAddress of a listener
 * @listener:       a listening listener
 * @address:        receives the address, with the port actually bound
 * @address_length: in: bytes at @address; out: bytes written, or needed
 *
 * Context: any.
 * Return: STATUS_SUCCESS, STATUS_BUFFER_TOO_SMALL (the needed size in
 * *@address_length), STATUS_INVALID_DEVICE_STATE (not listening).
 */
s32 ndk_get_listener_local_address(struct ndk_listener *listener,
				   struct sockaddr *address,
				   u32 *address_length)
{
	unsigned long flags;
	bool listening;

	spin_lock_irqsave(&listener->lock, flags);
	listening = listener->state == NDK_LISTENER_LISTENING;
	spin_unlock_irqrestore(&listener->lock, flags);
	if (!listening)
		return STATUS_INVALID_DEVICE_STATE;
	return ndk_cm_put_addr(&listener->id->route.addr.src_addr, address,
			       address_length);
}
EXPORT_SYMBOL_GPL(ndk_get_listener_local_address);

/**
 * ndk_control_connect_events() - NdkControlConnectEvents
 * @listener: the listener
 * @pause:    true: hold back ConnectEvent callbacks (requests queue up and
 *            wait for their answer); false: deliver the queued ones (from
 *            ndk_wq) and new ones again
 *
 * A ConnectEvent already running when pausing may still complete.
 *
 * Context: any.
 * Return: STATUS_SUCCESS.
 */
s32 ndk_control_connect_events(struct ndk_listener *listener, bool pause)
{
	struct ndk_listener *l = listener;
	unsigned long flags;
	bool kick;

	spin_lock_irqsave(&l->lock, flags);
	l->paused = pause;
	kick = !pause && !l->stopping && !list_empty(&l->queue);
	spin_unlock_irqrestore(&l->lock, flags);
	if (kick) {
		ndk_obj_get(&l->obj);
		if (!queue_work(ndk_wq, &l->deliver_work))
			ndk_obj_put(&l->obj);
	}
	return STATUS_SUCCESS;
}
EXPORT_SYMBOL_GPL(ndk_control_connect_events);
