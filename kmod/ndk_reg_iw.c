// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the registration QP of a PD on iWARP.
 *
 * An iWARP QP reaches RTS only through iw_cm (the provider moves it there
 * when the MPA exchange ends; siw refuses every post before), so the
 * self-connected QP of ndk_reg.c cannot be built with ib_modify_qp().  On
 * iWARP the registration QP is instead one end of a loopback connection
 * made through rdma_cm on the adapter's own IPv4 address:
 *
 *   1. a listener binds the address with port 0: rdma_cm picks a free
 *      port of its TCP port space (never one a consumer holds), and the
 *      listener lives only until the connection is up, so no consumer
 *      can ever find the port taken by ndk.ko for more than that moment;
 *   2. an active id resolves the address and the route, gets the
 *      registration QP (rdma_create_qp() in the PD, the registration CQ)
 *      and connects with a random 64-bit cookie as private data;
 *   3. the listener accepts only the request carrying that cookie (any
 *      other connector that finds the port is rejected) on a passive id
 *      with a QP of its own in the same PD, which never carries anything;
 *   4. once both ends are ESTABLISHED the listener is destroyed.
 *
 * The listener takes iw_cm's default backlog (0: the iw_cm default_backlog
 * sysctl, 256), not 1: iw_cm and siw keep one work entry per backlog slot
 * and drop a request that finds them all taken, so with one slot a local
 * user connecting to the port at the same moment could make ndk.ko's own
 * request be dropped and the registration wait out its 30 s.
 *
 * Both ends are kept until the PD's teardown, or until the registration
 * path is found broken (a failed local operation, or a disconnect or
 * device-removal event on either end): ndk_reg_get() then builds a new
 * connection and destroys the old one with every send credit held, so
 * nothing is posted on a QP that is going away.  Ids are destroyed only
 * from process context, never from the event handler, and the listener
 * first: after rdma_destroy_id() of the listener no connection request is
 * reported any more, so the passive id found then is the last one.
 *
 * Test hook: writing to the root-only module parameter reg_iw_drop
 * disconnects every iWARP registration connection, as a peer or network
 * failure would; reading it gives the number of rebuilds so far
 * (siw-reg-qp-rebuild).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/inetdevice.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/rdma_cm.h>

#include "ndk_mr.h"

#define NDK_REG_IW_RESOLVE_MS	2000
/* Every step of the loopback connection must end within this. */
#define NDK_REG_IW_TIMEOUT	(30 * HZ)
/* A listener port another socket took meanwhile: try another one. */
#define NDK_REG_IW_BIND_TRIES	4

/**
 * struct ndk_reg_iw - the loopback connection of an iWARP registration QP
 * @entry:   in ndk_reg_iw_list while connected (the test hook's list)
 * @reg:     the registration path it serves (marked broken on loss)
 * @listen:  the listener, until both ends are established
 * @active:  the end that owns the registration QP (@active->qp)
 * @passive: the accepting end, set by the connection request
 * @lock:    protects the fields below
 * @cookie:  the private data the listener accepts
 * @active_event:  last connection event of @active (-1: none yet)
 * @active_est:    @active is established
 * @passive_est:   @passive is established
 * @lost:    either end was disconnected, rejected or removed
 * @retired: replaced by a new connection: its events no longer mark
 *           @reg broken
 * @wait:    woken on every event
 */
struct ndk_reg_iw {
	struct list_head entry;
	struct ndk_reg *reg;
	struct rdma_cm_id *listen;
	struct rdma_cm_id *active;
	struct rdma_cm_id *passive;
	spinlock_t lock; /* see above */
	u64 cookie;
	int active_event;
	bool active_est;
	bool passive_est;
	bool lost;
	bool retired;
	wait_queue_head_t wait;
};

/* Connected registration connections, for the reg_iw_drop test hook. */
static LIST_HEAD(ndk_reg_iw_list);
static DEFINE_MUTEX(ndk_reg_iw_list_lock);
static atomic_t ndk_reg_iw_rebuilds = ATOMIC_INIT(0);

static int ndk_reg_iw_drop_set(const char *val, const struct kernel_param *kp)
{
	struct ndk_reg_iw *iw;

	mutex_lock(&ndk_reg_iw_list_lock);
	list_for_each_entry(iw, &ndk_reg_iw_list, entry)
		rdma_disconnect(iw->active);
	mutex_unlock(&ndk_reg_iw_list_lock);
	return 0;
}

static int ndk_reg_iw_drop_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&ndk_reg_iw_rebuilds));
}

static const struct kernel_param_ops ndk_reg_iw_drop_ops = {
	.set = ndk_reg_iw_drop_set,
	.get = ndk_reg_iw_drop_get,
};
module_param_cb(reg_iw_drop, &ndk_reg_iw_drop_ops, NULL, 0600);
MODULE_PARM_DESC(reg_iw_drop,
		 "test hook: write disconnects every iWARP registration QP; read: rebuilds so far");

static int ndk_reg_iw_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct ndk_reg_iw *iw = id->context;
	const struct rdma_conn_param *p = &ev->param.conn;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&iw->lock, flags);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* Ours carries the cookie; anything else is refused. */
		if (iw->passive || p->private_data_len < sizeof(iw->cookie) ||
		    memcmp(p->private_data, &iw->cookie, sizeof(iw->cookie)))
			ret = -ECONNREFUSED;	/* rdma_cm destroys @id */
		else
			iw->passive = id;
	} else if (id == iw->active) {
		iw->active_event = ev->event;
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
			iw->active_est = true;
	} else if (id == iw->passive) {
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
			iw->passive_est = true;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		if (id == iw->listen)
			break;
		iw->lost = true;
		if (!iw->retired)
			ndk_reg_set_broken(iw->reg, "connection", ev->event);
		break;
	default:
		break;
	}
	spin_unlock_irqrestore(&iw->lock, flags);
	wake_up(&iw->wait);
	return ret;
}

/* The first IPv4 address of a netdev of @net that @ibdev runs on. */
static int ndk_reg_iw_addr(struct ib_device *ibdev, struct net *net,
			   struct sockaddr_in *sin)
{
	struct net_device *ndev;
	struct ib_device *found;
	__be32 addr = 0;

	rcu_read_lock();
	for_each_netdev_rcu(net, ndev) {
		found = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);
		if (!found)
			continue;
		if (found == ibdev)
			addr = inet_select_addr(ndev, 0, RT_SCOPE_UNIVERSE);
		ib_device_put(found);
		if (addr)
			break;
	}
	rcu_read_unlock();
	if (!addr)
		return -EADDRNOTAVAIL;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = addr;
	return 0;
}

static bool ndk_reg_iw_failed(struct ndk_reg_iw *iw)
{
	int ev = READ_ONCE(iw->active_event);

	return ev == RDMA_CM_EVENT_ADDR_ERROR ||
	       ev == RDMA_CM_EVENT_ROUTE_ERROR;
}

static bool ndk_reg_iw_addr_done(struct ndk_reg_iw *iw)
{
	return READ_ONCE(iw->active_event) == RDMA_CM_EVENT_ADDR_RESOLVED ||
	       ndk_reg_iw_failed(iw);
}

static bool ndk_reg_iw_route_done(struct ndk_reg_iw *iw)
{
	return READ_ONCE(iw->active_event) == RDMA_CM_EVENT_ROUTE_RESOLVED ||
	       ndk_reg_iw_failed(iw);
}

static bool ndk_reg_iw_requested(struct ndk_reg_iw *iw)
{
	return READ_ONCE(iw->passive);
}

static bool ndk_reg_iw_established(struct ndk_reg_iw *iw)
{
	return READ_ONCE(iw->active_est) && READ_ONCE(iw->passive_est);
}

/* Wait until @done(@iw), or the connection is lost, or the time is up. */
static int ndk_reg_iw_wait(struct ndk_reg_iw *iw,
			   bool (*done)(struct ndk_reg_iw *iw))
{
	long left = wait_event_timeout(iw->wait, done(iw) || READ_ONCE(iw->lost),
				       NDK_REG_IW_TIMEOUT);

	if (ndk_reg_iw_failed(iw))
		return -EHOSTUNREACH;
	if (done(iw))
		return 0;
	return left ? -ECONNABORTED : -ETIMEDOUT;
}

static int ndk_reg_iw_listen(struct ndk_reg_iw *iw, struct net *net,
			     struct sockaddr_in *sin)
{
	struct rdma_cm_id *id;
	int tries, ret = 0;

	for (tries = 0; tries < NDK_REG_IW_BIND_TRIES; tries++) {
		id = rdma_create_id(net, ndk_reg_iw_handler, iw, RDMA_PS_TCP,
				    IB_QPT_RC);
		if (IS_ERR(id))
			return PTR_ERR(id);
		iw->listen = id;
		sin->sin_port = 0;
		ret = rdma_bind_addr(id, (struct sockaddr *)sin);
		if (!ret)
			ret = rdma_listen(id, 0);
		if (!ret)
			break;
		iw->listen = NULL;
		rdma_destroy_id(id);
		if (ret != -EADDRINUSE)
			return ret;
	}
	if (ret)
		return ret;
	/* The port rdma_bind_addr() picked. */
	sin->sin_port = ((struct sockaddr_in *)
			 &iw->listen->route.addr.src_addr)->sin_port;
	return 0;
}

static void ndk_reg_iw_qp_attr(struct ib_qp_init_attr *attr,
			       struct ib_cq *cq, u32 depth)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_type = IB_QPT_RC;
	attr->send_cq = cq;
	attr->recv_cq = cq;
	attr->sq_sig_type = IB_SIGNAL_REQ_WR;
	attr->cap.max_send_wr = depth;
	attr->cap.max_recv_wr = 1;
	attr->cap.max_send_sge = 1;
	attr->cap.max_recv_sge = 1;
}

/* Steps 2 to 4 of the file comment, once the listener is up. */
static int ndk_reg_iw_link(struct ndk_reg_iw *iw, struct ndk_pd *pd,
			   struct net *net, struct sockaddr_in *dst)
{
	struct ib_device *ibdev = pd->ibpd->device;
	struct rdma_conn_param param = {};
	struct sockaddr_in src = *dst;
	struct ib_qp_init_attr attr;
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(net, ndk_reg_iw_handler, iw, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	iw->active = id;
	src.sin_port = 0;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)dst, NDK_REG_IW_RESOLVE_MS);
	if (ret)
		return ret;
	ret = ndk_reg_iw_wait(iw, ndk_reg_iw_addr_done);
	if (ret)
		return ret;
	if (id->device != ibdev)
		return -ENODEV;	/* the address moved to another device */
	ret = rdma_resolve_route(id, NDK_REG_IW_RESOLVE_MS);
	if (ret)
		return ret;
	ret = ndk_reg_iw_wait(iw, ndk_reg_iw_route_done);
	if (ret)
		return ret;

	ndk_reg_iw_qp_attr(&attr, iw->reg->cq, NDK_REG_SQ_DEPTH);
	ret = rdma_create_qp(id, pd->ibpd, &attr);
	if (ret)
		return ret;
	param.private_data = &iw->cookie;
	param.private_data_len = sizeof(iw->cookie);
	ret = rdma_connect(id, &param);
	if (ret)
		return ret;

	ret = ndk_reg_iw_wait(iw, ndk_reg_iw_requested);
	if (ret)
		return ret;
	id = iw->passive;
	ndk_reg_iw_qp_attr(&attr, iw->reg->cq, 1);
	ret = rdma_create_qp(id, pd->ibpd, &attr);
	if (ret)
		return ret;
	memset(&param, 0, sizeof(param));
	rdma_lock_handler(id);
	ret = rdma_accept(id, &param);
	rdma_unlock_handler(id);
	if (ret)
		return ret;
	return ndk_reg_iw_wait(iw, ndk_reg_iw_established);
}

static void ndk_reg_iw_free(struct ndk_reg_iw *iw)
{
	mutex_lock(&ndk_reg_iw_list_lock);
	list_del_init(&iw->entry);
	mutex_unlock(&ndk_reg_iw_list_lock);
	if (iw->listen)
		rdma_destroy_id(iw->listen);
	/* No connection request is reported any more: @passive is final. */
	if (iw->passive) {
		if (iw->passive->qp)
			rdma_destroy_qp(iw->passive);
		rdma_destroy_id(iw->passive);
	}
	if (iw->active) {
		if (iw->active->qp)
			rdma_destroy_qp(iw->active);
		rdma_destroy_id(iw->active);
	}
	kfree(iw);
}

/*
 * A new loopback connection for @reg in @pd: the registration QP is
 * (*@out)->active->qp, in RTS.
 */
static int ndk_reg_iw_build(struct ndk_reg *reg, struct ndk_pd *pd,
			    struct ndk_reg_iw **out)
{
	struct net *net = pd->obj.adapter->net;
	struct ndk_reg_iw *iw;
	struct sockaddr_in sin;
	int ret;

	ret = ndk_reg_iw_addr(pd->ibpd->device, net, &sin);
	if (ret)
		return ret;
	iw = kzalloc(sizeof(*iw), GFP_KERNEL_ACCOUNT);
	if (!iw)
		return -ENOMEM;
	iw->reg = reg;
	INIT_LIST_HEAD(&iw->entry);
	spin_lock_init(&iw->lock);
	init_waitqueue_head(&iw->wait);
	iw->active_event = -1;
	iw->cookie = get_random_u64();

	ret = ndk_reg_iw_listen(iw, net, &sin);
	if (!ret)
		ret = ndk_reg_iw_link(iw, pd, net, &sin);
	if (ret) {
		ndk_reg_iw_free(iw);
		return ret;
	}
	rdma_destroy_id(iw->listen);
	iw->listen = NULL;
	mutex_lock(&ndk_reg_iw_list_lock);
	list_add_tail(&iw->entry, &ndk_reg_iw_list);
	mutex_unlock(&ndk_reg_iw_list_lock);
	*out = iw;
	return 0;
}

/**
 * ndk_reg_iw_connect() - give an iWARP registration path its QP
 * @reg: the registration path, its CQ allocated, no QP yet
 * @pd:  its PD
 *
 * Connects the loopback described in the file comment and sets @reg->qp
 * to the registration QP, in RTS.
 *
 * Context: process context, may sleep (up to a few seconds per step).
 * Return: 0 or a negative errno; nothing is left allocated on error.
 */
int ndk_reg_iw_connect(struct ndk_reg *reg, struct ndk_pd *pd)
{
	struct ndk_reg_iw *iw;
	int ret;

	ret = ndk_reg_iw_build(reg, pd, &iw);
	if (ret)
		return ret;
	reg->iw = iw;
	reg->qp = iw->active->qp;
	return 0;
}

/**
 * ndk_reg_iw_reconnect() - replace a broken iWARP registration QP
 * @reg: the registration path, broken
 * @pd:  its PD
 *
 * Builds a new loopback connection first, then, holding every send
 * credit (no work request in flight and none posted meanwhile), makes its
 * QP the registration QP and destroys the old connection.  On error the
 * old connection stays and @reg stays broken: the next user retries.
 *
 * Context: process context, may sleep; the caller holds @pd->reg_lock.
 * Return: 0 or a negative errno.
 */
int ndk_reg_iw_reconnect(struct ndk_reg *reg, struct ndk_pd *pd)
{
	struct ndk_reg_iw *iw, *old;
	unsigned long flags;
	int ret;

	ndk_reg_take_credits(reg);
	ret = ndk_reg_iw_build(reg, pd, &iw);
	if (!ret) {
		old = reg->iw;
		spin_lock_irqsave(&old->lock, flags);
		old->retired = true;
		spin_unlock_irqrestore(&old->lock, flags);
		/* No poster: every credit is taken (struct ndk_reg). */
		reg->iw = iw;
		WRITE_ONCE(reg->qp, iw->active->qp);
		/* A loss the new connection saw already keeps it broken. */
		spin_lock_irqsave(&iw->lock, flags);
		WRITE_ONCE(reg->broken, iw->lost);
		spin_unlock_irqrestore(&iw->lock, flags);
		ndk_reg_iw_free(old);
		atomic_inc(&ndk_reg_iw_rebuilds);
	}
	ndk_reg_give_credits(reg);
	return ret;
}

/**
 * ndk_reg_iw_destroy() - disconnect and free an iWARP registration QP
 * @reg: the registration path, quiesced (no work request in flight)
 *
 * Context: process context, may sleep.
 */
void ndk_reg_iw_destroy(struct ndk_reg *reg)
{
	ndk_reg_iw_free(reg->iw);
	reg->iw = NULL;
	reg->qp = NULL;
}
