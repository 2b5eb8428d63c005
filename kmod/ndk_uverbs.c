// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the /dev/ndk command handlers: adapters, PDs, CQs, QPs, MRs,
 * MWs, connectors, listeners, events and handles.
 *
 * Each command checks its struct (flags, reserved fields, fields its
 * operation does not use must be zero), looks its handles up in the
 * file's table (ndk_uobj.c) and calls the kernel API, so user and kernel
 * consumers share one implementation.  What only user space needs:
 *
 *  - Contexts are __u64 values carried through the kernel API's void *
 *    contexts and handed back unchanged; the kernel never dereferences
 *    them.
 *  - An SGE may only name a registration of the QP's PD on this file,
 *    through its current local token, and (a region of ndk_register_mr())
 *    only bytes inside it: the PD's privileged token and other owners'
 *    memory are unreachable.  An INLINE request is copied from user space
 *    into a kernel buffer first (the device copies inline data from kernel
 *    addresses when the request is posted).
 *  - Fast-register and bind name memory by a registration and a range of
 *    it; the registration cannot be deregistered while either is live
 *    (ndk_fast_register_mr(), ndk_bind()).
 *  - Asynchronous outcomes become events on the file's queue (ndk_uevent.c):
 *    CQ notifications, connector request completions, the peer's
 *    disconnect and incoming connections.  A connection request's
 *    connector becomes a handle when user space takes the event.
 *
 * Locking: every command holds ndk_file.lock.  Callbacks only queue
 * events (ndk_uevent_queue()); they never take ndk_file.lock.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/capability.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ndk_file.h"
#include "ndk_mr.h"

/* Largest private data copied in (REP: 196 bytes less rdma_cm's header). */
#define NDK_UV_PRIVATE_DATA_MAX 256
/* Largest INLINE request copied in. */
#define NDK_UV_INLINE_MAX 1024

static void *ndk_uv_ptr(u64 v)
{
	return (void *)(uintptr_t)v;
}

static int ndk_uv_create(struct file *file, u32 parent_handle, u8 type,
			 void *arg, u32 *handle);

/*
 * The releases of the adapter children and PD children this file makes
 * (ndk_uobj_descs[].destroy): @u is out of the table and has no children.
 * Context: process context, ndk_file.lock held.
 */
void ndk_uv_cq_destroy(struct ndk_uobj *u)
{
	ndk_uring_cq_detach(u);
	ndk_close_cq(u->cq.cq, NULL, NULL);
	ndk_uevent_unqueue(&u->cq.notify);
}

void ndk_uv_qp_destroy(struct ndk_uobj *u)
{
	ndk_close_qp(u->qp.qp, NULL, NULL);
	ndk_uring_put(u->qp.ring);
}

void ndk_uv_mw_destroy(struct ndk_uobj *u)
{
	ndk_close_mw(u->mw, NULL, NULL);
}

void ndk_uv_connector_destroy(struct ndk_uobj *u)
{
	/* Pending requests complete (CANCELLED) before this returns. */
	ndk_close_connector(u->conn.conn, NULL, NULL);
	ndk_uevent_unqueue(&u->conn.disconnected);
}

void ndk_uv_listener_destroy(struct ndk_uobj *u)
{
	/* No request is queued after this (ndk_uv_connect_event()). */
	spin_lock_irq(&u->nf->ev_lock);
	u->listener.closing = true;
	spin_unlock_irq(&u->nf->ev_lock);
	ndk_uevent_drop_requests(u->nf, u);
	ndk_close_listener(u->listener.listener, NULL, NULL);
}

/* ---- CQ ------------------------------------------------------------------ */

static void ndk_uv_cq_notify(void *context, s32 status)
{
	struct ndk_uobj *u = context;

	ndk_uevent_queue(&u->cq.notify, status);
}

/**
 * ndk_uv_cq_create() - NDK_IOCTL_CQ_CREATE
 * @file: the file
 * @arg:  struct ndk_u_cq_create
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-ENODEV; %-ENOMEM; %-ENOBUFS.
 */
int ndk_uv_cq_create(struct file *file, void *arg)
{
	struct ndk_u_cq_create *c = arg;

	if ((c->flags & ~NDK_U_CQ_CREATE_F_RING) || c->handle ||
	    c->ring_offset || c->ring_size || c->ring_entries)
		return -EINVAL;
	return ndk_uv_create(file, c->adapter_handle, NDK_UOBJ_CQ, c,
			     &c->handle);
}

/**
 * ndk_uv_cq_arm() - NDK_IOCTL_CQ_ARM
 * @file: the file
 * @arg:  struct ndk_u_cq_arm
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (type, not a CQ).
 */
int ndk_uv_cq_arm(struct file *file, void *arg)
{
	struct ndk_u_cq_arm *a = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	int ret = 0;

	if (a->type > NDK_CQ_NOTIFY_SOLICITED)
		return -EINVAL;
	u = ndk_file_lock_uobj(file, a->handle, NDK_UOBJ_CQ, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	ndk_arm_cq(u->cq.cq, a->type);
	mutex_unlock(&nf->lock);
	return ret;
}

/**
 * ndk_uv_cq_poll() - NDK_IOCTL_CQ_POLL
 * @file: the file
 * @arg:  struct ndk_u_cq_poll
 *
 * Context: process context, may sleep.
 * Return: 0 (count set, possibly 0); %-EPERM; %-ENOENT; %-EINVAL;
 * %-ENOMEM; %-EFAULT (the results taken are lost).
 */
int ndk_uv_cq_poll(struct file *file, void *arg)
{
	struct ndk_u_cq_poll *p = arg;
	struct ndk_result_ex *res;
	struct ndk_u_result *out;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	u32 i, n = 0;
	int ret = 0;

	if (!p->count || p->count > NDK_U_CQ_POLL_MAX)
		return -EINVAL;
	res = kcalloc(p->count, sizeof(*res) + sizeof(*out),
		      GFP_KERNEL_ACCOUNT);
	if (!res)
		return -ENOMEM;
	out = (struct ndk_u_result *)(res + p->count);
	u = ndk_file_lock_uobj(file, p->handle, NDK_UOBJ_CQ, &nf);
	if (IS_ERR(u)) {
		kfree(res);
		return PTR_ERR(u);
	}
	n = ndk_get_cq_results_ex(u->cq.cq, res, p->count);
	mutex_unlock(&nf->lock);
	for (i = 0; i < n; i++)
		ndk_uv_result(&out[i], &res[i]);
	if (!ret && n &&
	    copy_to_user(u64_to_user_ptr(p->results), out, n * sizeof(*out)))
		ret = -EFAULT;
	p->count = n;
	kfree(res);
	return ret;
}

/* ---- QP ------------------------------------------------------------------ */

/**
 * ndk_uv_qp_create() - NDK_IOCTL_QP_CREATE
 * @file: the file
 * @arg:  struct ndk_u_qp_create
 *
 * The QP's CQs count it as a child: they cannot be closed before it.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (limits, CQs of another
 * adapter); %-ENODEV; %-ENOMEM; %-ENOBUFS.
 */
int ndk_uv_qp_create(struct file *file, void *arg)
{
	struct ndk_u_qp_create *c = arg;
	struct ndk_uobj *pd, *rcq, *icq, *u;
	struct ndk_file *nf;
	s32 status;
	int ret;

	if ((c->flags & ~NDK_U_QP_CREATE_F_RING) || c->handle ||
	    c->ring_offset || c->ring_size || c->ring_entries)
		return -EINVAL;
	pd = ndk_file_lock_uobj(file, c->pd_handle, NDK_UOBJ_PD, &nf);
	if (IS_ERR(pd))
		return PTR_ERR(pd);
	rcq = ndk_uobj_find(nf, c->receive_cq_handle, NDK_UOBJ_CQ);
	if (IS_ERR(rcq)) {
		ret = PTR_ERR(rcq);
		goto out_unlock;
	}
	icq = ndk_uobj_find(nf, c->initiator_cq_handle, NDK_UOBJ_CQ);
	if (IS_ERR(icq)) {
		ret = PTR_ERR(icq);
		goto out_unlock;
	}
	u = ndk_uobj_alloc(nf, NDK_UOBJ_QP, pd);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	status = ndk_create_qp(pd->pd, rcq->cq.cq, icq->cq.cq,
			       ndk_uv_ptr(c->context), c->receive_queue_depth,
			       c->initiator_queue_depth,
			       c->max_receive_request_sge,
			       c->max_initiator_request_sge,
			       c->inline_data_size, NULL, NULL, &u->qp.qp);
	if (status) {
		ret = ndk_errno_from_status(status);
		goto err_free_uobj;
	}
	if (c->flags & NDK_U_QP_CREATE_F_RING) {
		ret = ndk_uring_qp_alloc(u);
		if (ret)
			goto err_close_qp;
	}
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_put_ring;
	c->handle = u->handle;
	if (u->qp.ring)
		ndk_uring_describe(u->qp.ring, u->handle, &c->ring_offset,
				   &c->ring_size, &c->ring_entries);
	mutex_unlock(&nf->lock);
	return 0;

err_put_ring:
	ndk_uring_put(u->qp.ring);
err_close_qp:
	ndk_close_qp(u->qp.qp, NULL, NULL);
err_free_uobj:
	ndk_uobj_free(u);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}

/*
 * What a data post takes from user memory, copied before the file's lock
 * is taken: a fault stalled there (userfaultfd, FUSE) must not hold up the
 * device removal, which needs that lock.
 * @usge: the SGE list
 * @buf:  INLINE: the bytes of the request (kmalloc'ed), else NULL
 * @len:  INLINE: their count
 */
struct ndk_uv_post_in {
	struct ndk_u_sge usge[NDK_U_SGE_MAX];
	void *buf;
	u32 len;
};

static bool ndk_uv_post_is_data(const struct ndk_u_qp_post *p)
{
	switch (p->op) {
	case NDK_U_OP_SEND:
	case NDK_U_OP_SEND_INVALIDATE:
	case NDK_U_OP_RECEIVE:
	case NDK_U_OP_READ:
	case NDK_U_OP_WRITE:
		return true;
	default:
		return false;
	}
}

/* The fields a data post must leave 0; before anything is copied. */
static int ndk_uv_post_data_check(const struct ndk_u_qp_post *p)
{
	bool rdma = p->op == NDK_U_OP_READ || p->op == NDK_U_OP_WRITE;

	if (p->object_handle || p->mr_handle || p->address || p->length ||
	    (!rdma && p->remote_address) ||
	    (!rdma && p->op != NDK_U_OP_SEND_INVALIDATE && p->remote_token))
		return -EINVAL;
	return 0;
}

/*
 * Copy a data post's SGE list and, for INLINE, its bytes (at most
 * NDK_UV_INLINE_MAX) into @in.  Without the file's lock.
 */
static int ndk_uv_post_copy(const struct ndk_u_qp_post *p,
			    struct ndk_uv_post_in *in)
{
	u32 i, total = 0;
	u8 *data;

	in->buf = NULL;
	in->len = 0;
	if (p->nsge > NDK_U_SGE_MAX)
		return -EINVAL;
	if (copy_from_user(in->usge, u64_to_user_ptr(p->sgl),
			   p->nsge * sizeof(*in->usge)))
		return -EFAULT;
	if (!(p->flags & NDK_OP_FLAG_INLINE))
		return 0;
	for (i = 0; i < p->nsge; i++) {
		if (in->usge[i].length > NDK_UV_INLINE_MAX - total)
			return -EINVAL;
		total += in->usge[i].length;
	}
	data = kmalloc(max(total, 1U), GFP_KERNEL_ACCOUNT);
	if (!data)
		return -ENOMEM;
	for (total = 0, i = 0; i < p->nsge; total += in->usge[i].length, i++) {
		if (copy_from_user(data + total,
				   u64_to_user_ptr(in->usge[i].address),
				   in->usge[i].length)) {
			kfree(data);
			return -EFAULT;
		}
	}
	in->buf = data;
	in->len = total;
	return 0;
}

/*
 * Check the copied SGEs of @p for @qp: each must name, by its current
 * local token, a registration of the QP's PD on this file and lie inside
 * it, or a fast-register MR of that PD (the device checks its current
 * region).
 */
static int ndk_uv_sgl(struct ndk_uobj *qp, const struct ndk_u_qp_post *p,
		      const struct ndk_u_sge *usge, struct ndk_sge *sgl)
{
	const struct ndk_umem *um;
	struct ndk_uobj *m;
	u64 end;
	u32 i;

	for (i = 0; i < p->nsge; i++) {
		if (check_add_overflow(usge[i].address, (u64)usge[i].length,
				       &end))
			return -EFAULT;
		m = ndk_umr_key_find(qp->parent, usge[i].token);
		if (m) {
			um = ndk_uobj_umem(m);
			if (ndk_umem_held(um) &&
			    (usge[i].address < um->address ||
			     end > um->address + um->length))
				return -EFAULT;
		} else if (!ndk_fr_mr_lkey(qp->parent->pd, usge[i].token)) {
			return -EACCES;
		}
		sgl[i].logical_address = usge[i].address;
		sgl[i].length = usge[i].length;
		sgl[i].memory_region_token = usge[i].token;
	}
	return 0;
}

/* A registration (MEM or MR, registered) named by @handle. */
static struct ndk_uobj *ndk_uv_registration(struct ndk_file *nf, u32 handle)
{
	struct ndk_uobj *u = ndk_uobj_find_of(nf, handle, NDK_UOBJ_REGS);

	if (!IS_ERR(u) && !ndk_uobj_holds_pages(u))
		return ERR_PTR(-EBADRQC);
	return u;
}

/* NDK_U_OP_FAST_REGISTER, _BIND and _INVALIDATE. */
static int ndk_uv_post_mem(struct ndk_file *nf, struct ndk_uobj *qp,
			   struct ndk_u_qp_post *p)
{
	void *ctx = ndk_uv_ptr(p->request_context);
	struct ndk_uobj *obj, *src = NULL;
	s32 status;
	int ret;

	if (p->nsge || p->sgl || p->remote_token ||
	    (p->op != NDK_U_OP_FAST_REGISTER && p->remote_address))
		return -EINVAL;
	if (p->op == NDK_U_OP_INVALIDATE) {
		if (p->mr_handle || p->address || p->length)
			return -EINVAL;
		obj = ndk_uobj_find_of(nf, p->object_handle,
				       BIT(NDK_UOBJ_MR) | BIT(NDK_UOBJ_MW));
		if (IS_ERR(obj))
			return PTR_ERR(obj);
		local_bh_disable();	/* see ndk_uv_post_data() */
		status = ndk_invalidate(qp->qp.qp, ctx,
					obj->type == NDK_UOBJ_MR ?
					&obj->mem.mr->obj.hdr :
					&obj->mw->obj.hdr, p->flags);
		local_bh_enable();
		return ndk_errno_from_status(status);
	}

	src = ndk_uv_registration(nf, p->mr_handle);
	if (IS_ERR(src))
		return PTR_ERR(src);
	ret = ndk_umr_pages(src);
	if (ret)
		return ret;
	if (p->op == NDK_U_OP_FAST_REGISTER) {
		obj = ndk_uobj_find(nf, p->object_handle, NDK_UOBJ_MR);
		if (IS_ERR(obj))
			return PTR_ERR(obj);
		if (obj->mem.mr->fast_register)	/* else refused below */
			ndk_fr_settle(&obj->mem.mr->fr);
		local_bh_disable();
		status = ndk_fast_register_mr(qp->qp.qp, ctx, obj->mem.mr,
					      src->mem.mr, p->address,
					      p->length, p->remote_address,
					      p->flags);
		local_bh_enable();
		if (!status)
			p->token = ndk_get_remote_token_from_mr(obj->mem.mr);
	} else {
		obj = ndk_uobj_find(nf, p->object_handle, NDK_UOBJ_MW);
		if (IS_ERR(obj))
			return PTR_ERR(obj);
		ndk_fr_settle(&obj->mw->fr);
		local_bh_disable();
		status = ndk_bind(qp->qp.qp, ctx, src->mem.mr, obj->mw,
				  ndk_uv_ptr(p->address), p->length, p->flags);
		local_bh_enable();
		if (!status)
			p->token = ndk_get_remote_token_from_mw(obj->mw);
	}
	return ndk_errno_from_status(status);
}

/*
 * NDK_U_OP_SEND, _SEND_INVALIDATE, _RECEIVE, _READ and _WRITE, with what
 * ndk_uv_post_copy() took from user memory.
 */
static int ndk_uv_post_data(struct ndk_uobj *qp, struct ndk_u_qp_post *p,
			    const struct ndk_uv_post_in *in)
{
	void *ctx = ndk_uv_ptr(p->request_context);
	struct ndk_sge sgl[NDK_U_SGE_MAX];
	struct ndk_qp *q = qp->qp.qp;
	u32 nsge = p->nsge;
	s32 status;
	int ret;

	if (p->flags & NDK_OP_FLAG_INLINE) {
		/* The device copies from kernel addresses. */
		sgl[0].virtual_address = in->buf;
		sgl[0].length = in->len;
		sgl[0].memory_region_token = 0;
		nsge = 1;
	} else {
		ret = ndk_uv_sgl(qp, p, in->usge, sgl);
		if (ret)
			return ret;
	}

	/*
	 * A driver that finishes a request in a tasklet (rxe for kernel
	 * QPs) then runs it here when bottom halves are enabled again,
	 * rather than in ksoftirqd after a context switch: the caller's
	 * process does its own request's work, as rxe does for its user
	 * QPs.
	 */
	local_bh_disable();
	switch (p->op) {
	case NDK_U_OP_SEND:
		status = ndk_send(q, ctx, sgl, nsge, p->flags);
		break;
	case NDK_U_OP_SEND_INVALIDATE:
		status = ndk_send_and_invalidate(q, ctx, sgl, nsge, p->flags,
						 p->remote_token);
		break;
	case NDK_U_OP_RECEIVE:
		/* NdkReceive takes no flags: INLINE is refused here too. */
		status = p->flags ? STATUS_INVALID_PARAMETER :
				    ndk_receive(q, ctx, sgl, nsge);
		break;
	case NDK_U_OP_READ:
		status = ndk_read(q, ctx, sgl, nsge, p->remote_address,
				  p->remote_token, p->flags);
		break;
	default:
		status = ndk_write(q, ctx, sgl, nsge, p->remote_address,
				   p->remote_token, p->flags);
		break;
	}
	local_bh_enable();
	return ndk_errno_from_status(status);
}

/**
 * ndk_uv_qp_submit() - post one request of the user ABI
 * @file: the file
 * @p:    the request, copied from user memory once
 * @err:  0, or what the caller found wrong with @p: @p fails with it
 *
 * Every failure of an initiator request on an existing QP first posts the
 * requests deferred before it, as the kernel API's inline failures do.
 *
 * Context: process context, may sleep.
 * Return: 0 (a result follows unless silent and successful); %-EPERM;
 * %-ENOENT; %-EINVAL (op, flags, fields the op does not use, limits);
 * %-EACCES (an SGE token that is not a registration of the QP's PD on
 * this file; a right the MR lacks); %-EFAULT (an SGE outside its
 * registration, an unreadable SGE list or inline data); %-EBADRQC
 * (STATUS_INVALID_DEVICE_REQUEST: registered already, not registered);
 * %-EBUSY (an invalidation not yet complete); %-ENOTCONN (QP not
 * connected); %-ENOMEM (queue full); %-ENODEV; @err.
 */
int ndk_uv_qp_submit(struct file *file, struct ndk_u_qp_post *p, int err)
{
	struct ndk_uv_post_in in = {};
	struct ndk_file *nf;
	struct ndk_uobj *qp;
	int ret = err;

	/*
	 * User memory is read before the lock (struct ndk_uv_post_in); what
	 * is wrong with it fails the request once the QP is known.
	 */
	if (!ret && p->token)
		ret = -EINVAL;
	else if (!ret && ndk_uv_post_is_data(p))
		ret = ndk_uv_post_data_check(p) ?: ndk_uv_post_copy(p, &in);
	qp = ndk_file_lock_uobj(file, p->qp_handle, NDK_UOBJ_QP, &nf);
	if (IS_ERR(qp)) {
		/* The request's own error first, as before the lookup. */
		ret = ret ?: PTR_ERR(qp);
		goto out_free;
	}
	if (ret)
		goto out_refuse;
	if (ndk_uv_post_is_data(p))
		ret = ndk_uv_post_data(qp, p, &in);
	else if (p->op == NDK_U_OP_FAST_REGISTER || p->op == NDK_U_OP_BIND ||
		 p->op == NDK_U_OP_INVALIDATE)
		ret = ndk_uv_post_mem(nf, qp, p);
	else
		ret = -EINVAL;
out_refuse:
	/*
	 * NDK: a request that fails inline first hands the DEFER chain over
	 * to the device, whichever check refused it (the core's refusals
	 * did so already; a second call finds the chain empty).  A receive
	 * is not an initiator request.
	 */
	if (ret && p->op != NDK_U_OP_RECEIVE) {
		local_bh_disable();	/* see ndk_uv_post_data() */
		ndk_qp_refuse(qp->qp.qp, ndk_status_from_errno(ret));
		local_bh_enable();
	}
	mutex_unlock(&nf->lock);
out_free:
	kfree(in.buf);
	return ret;
}

/**
 * ndk_uv_qp_post() - NDK_IOCTL_QP_POST
 * @file: the file
 * @arg:  struct ndk_u_qp_post
 *
 * Context: process context, may sleep.
 * Return: as ndk_uv_qp_submit().
 */
int ndk_uv_qp_post(struct file *file, void *arg)
{
	return ndk_uv_qp_submit(file, arg, 0);
}

/**
 * ndk_uv_qp_flush() - NDK_IOCTL_QP_FLUSH
 * @file: the file
 * @arg:  struct ndk_u_qp_flush
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL.
 */
int ndk_uv_qp_flush(struct file *file, void *arg)
{
	struct ndk_u_qp_flush *f = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	int ret = 0;

	if (f->flags)
		return -EINVAL;
	u = ndk_file_lock_uobj(file, f->handle, NDK_UOBJ_QP, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	ndk_flush(u->qp.qp);
	mutex_unlock(&nf->lock);
	return ret;
}

/* ---- adapters, PDs, events, handles ------------------------------------- */

/**
 * ndk_uv_event_get() - NDK_IOCTL_EVENT_GET
 * @file: the file
 * @arg:  struct ndk_u_event_get
 *
 * A connection request becomes a connector handle here; when that fails
 * the request is dropped (the peer sees a reject).  The buffer is checked
 * writable (cleared) before any event is taken, so a bad buffer loses
 * none: a connector handle the caller never learned would hold its peer
 * until the file's close.
 *
 * Context: process context, may sleep.
 * Return: 0 (count set, possibly 0); %-EPERM; %-EINVAL; %-ENOMEM;
 * %-EFAULT (nothing taken, unless the buffer went away meanwhile: then
 * the events taken are lost).
 */
int ndk_uv_event_get(struct file *file, void *arg)
{
	struct ndk_u_event_get *g = arg;
	struct ndk_u_event *out;
	struct ndk_uevent *e;
	struct ndk_file *nf;
	u32 n = 0;
	int ret = 0;

	if (g->flags || !g->count || g->count > NDK_U_EVENT_GET_MAX)
		return -EINVAL;
	if (clear_user(u64_to_user_ptr(g->events), g->count * sizeof(*out)))
		return -EFAULT;
	out = kcalloc(g->count, sizeof(*out), GFP_KERNEL_ACCOUNT);
	if (!out)
		return -ENOMEM;
	nf = ndk_file_lock(file);
	if (IS_ERR(nf)) {
		kfree(out);
		return PTR_ERR(nf);
	}
	while (n < g->count && (e = ndk_uevent_take(nf))) {
		if (e->conn && !ndk_uverbs_accepted(nf, e)) {
			ndk_uevent_free(e);
			continue;
		}
		out[n++] = e->ev;
		ndk_uevent_free(e);
	}
	mutex_unlock(&nf->lock);
	if (n && copy_to_user(u64_to_user_ptr(g->events), out,
			      n * sizeof(*out)))
		ret = -EFAULT;
	g->count = n;
	kfree(out);
	return ret;
}

/**
 * ndk_uv_adapter_open() - NDK_IOCTL_ADAPTER_OPEN
 * @file: the file
 * @arg:  struct ndk_u_adapter_open; in: adapter_id; out: handle
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM (not the opener); %-ENOENT (no such adapter);
 * %-ENODEV (it is being removed); %-ENOMEM; %-ENOBUFS (no handle left).
 */
int ndk_uv_adapter_open(struct file *file, void *arg)
{
	struct ndk_u_adapter_open *a = arg;
	struct ndk_adapter *adapter;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status;
	int ret;

	if (a->flags || a->reserved)
		return -EINVAL;

	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	u = ndk_uobj_alloc(nf, NDK_UOBJ_ADAPTER, NULL);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	status = ndk_open_adapter_id(a->adapter_id, ndk_file_adapter_removed,
				     u, &adapter);
	if (status) {
		ret = status == STATUS_INVALID_PARAMETER ? -ENOENT :
			ndk_errno_from_status(status);
		goto err_free_uobj;
	}
	/*
	 * siw (6.1) serves a remote read through any STag of the QP's PD
	 * without its remote-read right, the DMA MR over all of memory that
	 * every PD of siw has included (security.md, "Known limits"): with
	 * two QPs of its own, a user would read kernel memory.
	 */
	if (ndk_ibdev(&adapter->obj)->ops.driver_id == RDMA_DRIVER_SIW &&
	    !capable(CAP_SYS_RAWIO)) {
		ret = -EPERM;
		goto err_close_adapter;
	}
	u->adapter = adapter;
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_close_adapter;
	ndk_uevent_init(&u->removed, nf, NDK_U_EVENT_ADAPTER_REMOVED,
			u->handle, 0);
	a->handle = u->handle;
	mutex_unlock(&nf->lock);
	return 0;

err_close_adapter:
	mutex_unlock(&nf->lock);
	ndk_close_adapter(adapter);
	ndk_uobj_free(u);
	return ret;
err_free_uobj:
	ndk_uobj_free(u);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}

/**
 * ndk_uv_adapter_info() - NDK_IOCTL_ADAPTER_INFO
 * @file: the file
 * @arg:  struct ndk_u_adapter_info; in: handle; out: the NDK_ADAPTER_INFO
 *        fields
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT (no such handle); %-EINVAL (not an adapter).
 */
int ndk_uv_adapter_info(struct file *file, void *arg)
{
	struct ndk_u_adapter_info *q = arg;
	struct ndk_adapter_info info;
	u32 size = sizeof(info);
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status;

	if (q->flags || q->reserved0 || q->reserved1 ||
	    q->max_user_registration_size)
		return -EINVAL;

	u = ndk_file_lock_uobj(file, q->handle, NDK_UOBJ_ADAPTER, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	status = ndk_query_adapter_info(u->adapter, &info, &size);
	if (!status)
		q->max_user_registration_size = ndk_umr_limit(u->adapter, &info);
	mutex_unlock(&nf->lock);
	if (status)
		return ndk_errno_from_status(status);

	q->info_version_major = info.version.major;
	q->info_version_minor = info.version.minor;
	q->vendor_id = info.vendor_id;
	q->device_id = info.device_id;
	q->reserved0 = 0;
	q->max_registration_size = info.max_registration_size;
	q->max_window_size = info.max_window_size;
	q->frmr_page_count = info.frmr_page_count;
	q->max_initiator_request_sge = info.max_initiator_request_sge;
	q->max_receive_request_sge = info.max_receive_request_sge;
	q->max_read_request_sge = info.max_read_request_sge;
	q->max_transfer_length = info.max_transfer_length;
	q->max_inline_data_size = info.max_inline_data_size;
	q->max_inbound_read_limit = info.max_inbound_read_limit;
	q->max_outbound_read_limit = info.max_outbound_read_limit;
	q->max_receive_queue_depth = info.max_receive_queue_depth;
	q->max_initiator_queue_depth = info.max_initiator_queue_depth;
	q->max_srq_depth = info.max_srq_depth;
	q->max_cq_depth = info.max_cq_depth;
	q->large_request_threshold = info.large_request_threshold;
	q->max_caller_data = info.max_caller_data;
	q->max_callee_data = info.max_callee_data;
	q->adapter_flags = info.adapter_flags;
	q->rdma_technology = info.rdma_technology;
	q->reserved1 = 0;
	return 0;
}

/**
 * ndk_uv_pd_create() - NDK_IOCTL_PD_CREATE
 * @file: the file
 * @arg:  struct ndk_u_pd_create; in: adapter_handle; out: handle
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (not an adapter); %-ENODEV;
 * %-ENOMEM; %-ENOBUFS (no handle left).
 */
int ndk_uv_pd_create(struct file *file, void *arg)
{
	struct ndk_u_pd_create *p = arg;
	struct ndk_uobj *parent, *u;
	struct ndk_file *nf;
	struct ndk_pd *pd;
	s32 status;
	int ret;

	if (p->flags || p->reserved)
		return -EINVAL;

	parent = ndk_file_lock_uobj(file, p->adapter_handle, NDK_UOBJ_ADAPTER,
				    &nf);
	if (IS_ERR(parent))
		return PTR_ERR(parent);
	u = ndk_uobj_alloc(nf, NDK_UOBJ_PD, parent);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	u->mems = RB_ROOT;
	u->keys = RB_ROOT;
	status = ndk_create_pd(parent->adapter, NULL, NULL, &pd);
	if (status) {
		ret = ndk_errno_from_status(status);
		goto err_free_uobj;
	}
	u->pd = pd;
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_close_pd;
	p->handle = u->handle;
	mutex_unlock(&nf->lock);
	return 0;

err_close_pd:
	ndk_close_pd(pd, NULL, NULL);
err_free_uobj:
	ndk_uobj_free(u);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}

/**
 * ndk_uv_handle_close() - NDK_IOCTL_HANDLE_CLOSE
 * @file: the file
 * @arg:  struct ndk_u_handle_close: any handle of the file
 *
 * A registration is released whatever its reference count.  An adapter
 * is closed without the lock: its removal callback may be waiting for it.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EBUSY (objects created from it are
 * open, or windows or fast-registered MRs use its memory).
 */
int ndk_uv_handle_close(struct file *file, void *arg)
{
	struct ndk_u_handle_close *c = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;

	if (c->flags)
		return -EINVAL;
	u = ndk_file_lock_uobj_of(file, c->handle, NDK_UOBJ_ANY, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	if (ndk_uobj_busy(u) || (ndk_uobj_is_mem(u) && ndk_umr_deregister(u))) {
		mutex_unlock(&nf->lock);
		return -EBUSY;
	}
	if (u->type != NDK_UOBJ_ADAPTER) {
		ndk_uobj_destroy(nf, u);
		mutex_unlock(&nf->lock);
		return 0;
	}
	ndk_uobj_adapter_detach(nf, u);
	mutex_unlock(&nf->lock);
	ndk_uobj_adapter_close(u);
	return 0;
}

/* ---- MR, MW, tokens --------------------------------------------------------- */

/**
 * ndk_uv_mr_create() - NDK_IOCTL_MR_CREATE
 * @file: the file
 * @arg:  struct ndk_u_mr_create
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-ENODEV; %-ENOMEM; %-ENOBUFS.
 */
int ndk_uv_mr_create(struct file *file, void *arg)
{
	struct ndk_u_mr_create *c = arg;

	if ((c->flags & ~NDK_U_MR_CREATE_F_FAST_REGISTER) || c->handle ||
	    c->reserved)
		return -EINVAL;
	return ndk_uv_create(file, c->pd_handle, NDK_UOBJ_MR, c, &c->handle);
}

/**
 * ndk_uv_mw_create() - NDK_IOCTL_MW_CREATE
 * @file: the file
 * @arg:  struct ndk_u_mw_create
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-ENODEV; %-ENOMEM; %-ENOBUFS.
 */
int ndk_uv_mw_create(struct file *file, void *arg)
{
	struct ndk_u_mw_create *c = arg;

	if (c->flags || c->handle || c->reserved)
		return -EINVAL;
	return ndk_uv_create(file, c->pd_handle, NDK_UOBJ_MW, c, &c->handle);
}

#define NDK_UV_MR_FLAGS (NDK_MR_FLAG_ALLOW_LOCAL_WRITE | \
			 NDK_MR_FLAG_ALLOW_REMOTE_READ | \
			 NDK_MR_FLAG_ALLOW_REMOTE_WRITE | \
			 NDK_MR_FLAG_RDMA_READ_SINK)

/* Under the lock: @r's MR entry, if it may be registered now (@req). */
static struct ndk_uobj *ndk_uv_mr_registrable(struct ndk_file *nf,
					      struct ndk_u_mr_register *r,
					      struct ndk_umr_req *req)
{
	struct ndk_uobj *u = ndk_uobj_find(nf, r->handle, NDK_UOBJ_MR);
	int ret;

	if (IS_ERR(u))
		return u;
	if (ndk_uobj_holds_pages(u))
		return ERR_PTR(-EBADRQC);
	/* Fast-register MRs are registered by posts. */
	if (u->mem.mr->fast_register)
		return ERR_PTR(-EINVAL);
	ret = ndk_umr_check(u, &u->mem.mr->obj, req);
	return ret ? ERR_PTR(ret) : u;
}

/**
 * ndk_uv_mr_register() - NDK_IOCTL_MR_REGISTER
 * @file: the file
 * @arg:  struct ndk_u_mr_register
 *
 * The memory is pinned (by ndk.ko, nothing referenced) or registered (by
 * the driver, the MR referenced) without the file's lock: a fault may
 * wait on user space, and device removal needs the lock.  Then the entry
 * is looked up again: closed meanwhile (-ENOENT), its device removed
 * (-ENODEV), naming another MR or registered by another thread
 * (-EBADRQC), what was done is undone.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (flags, length 0, not an MR, a
 * fast-register MR); %-EBADRQC (registered already); %-ENODEV; what
 * ndk_umr_check(), ndk_umr_plan() and ndk_umr_acquire() return.
 */
int ndk_uv_mr_register(struct file *file, void *arg)
{
	struct ndk_u_mr_register *r = arg;
	struct ndk_umr_req req = {
		.address = r->address,
		.length = r->length,
		.mr_flags = r->flags,
	};
	struct ndk_umr_req again;
	struct ndk_ucache_reg *cache;
	struct ndk_umem um = {};
	struct ndk_file *nf;
	struct ndk_uobj *u;
	struct ndk_mr *mr;
	u32 adapter;
	int ret;

	if ((r->flags & ~NDK_UV_MR_FLAGS) || !r->length || r->local_token ||
	    r->remote_token)
		return -EINVAL;
	nf = ndk_file_lock(file);
	if (IS_ERR(nf))
		return PTR_ERR(nf);
	u = ndk_uv_mr_registrable(nf, r, &req);
	if (IS_ERR(u)) {
		mutex_unlock(&nf->lock);
		return PTR_ERR(u);
	}
	mr = u->mem.mr;
	ndk_obj_get(&mr->obj);
	adapter = ndk_uobj_root(u)->handle;
	mutex_unlock(&nf->lock);

	ret = ndk_umr_plan(&req);
	if (!ret && !req.driver) {
		/* ndk.ko pins: nothing referenced while it may fault. */
		ndk_obj_put(&mr->obj);
		mr = NULL;
	}
	if (ret)
		goto out_put;
	cache = ndk_ucache_reg_alloc();
	if (!cache) {
		ret = -ENOMEM;
		goto out_put;
	}
	ret = ndk_umr_acquire(nf, &req, mr, &um, cache);
	if (ret)
		goto out_free_cache;

	mutex_lock(&nf->lock);
	again = req;
	u = ndk_uv_mr_registrable(nf, r, &again);
	if (IS_ERR(u)) {
		ret = ndk_uobj_gone(nf, adapter, PTR_ERR(u));
		goto err_release;
	}
	if ((mr && u->mem.mr != mr) || again.write != req.write) {
		/* The handle names another MR now. */
		ret = -ENOENT;
		goto err_release;
	}
	ret = ndk_umr_finish(&req, u->mem.mr, &um);
	if (ret)
		goto err_release;
	u->mem.cache = cache;
	WRITE_ONCE(cache->handle, u->handle);	/* the notifier reads it */
	ret = ndk_umr_key_add(u);
	if (ret) {
		u->mem.cache = NULL;
		ndk_umr_release(u->mem.mr, &um, cache, true);
		ndk_ucache_reg_free(cache);
		goto out_unlock;
	}
	u->mem.flags = req.mr_flags;	/* without a sink ndk_umr_plan() dropped */
	r->local_token = ndk_get_local_token_from_mr(u->mem.mr);
	r->remote_token = ndk_get_remote_token_from_mr(u->mem.mr);
out_unlock:
	mutex_unlock(&nf->lock);
	goto out_put;

err_release:
	mutex_unlock(&nf->lock);
	ndk_umr_release(mr, &um, cache, req.driver);
out_free_cache:
	ndk_ucache_reg_free(cache);
out_put:
	if (mr)
		ndk_obj_put(&mr->obj);
	return ret;
}

/**
 * ndk_uv_mr_deregister() - NDK_IOCTL_MR_DEREGISTER
 * @file: the file
 * @arg:  struct ndk_u_mr_deregister
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-EBADRQC (not registered);
 * %-EBUSY (a window is bound in it, or an MR fast-registered over it).
 */
int ndk_uv_mr_deregister(struct file *file, void *arg)
{
	struct ndk_u_mr_deregister *d = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	int ret;

	if (d->flags)
		return -EINVAL;
	u = ndk_file_lock_uobj(file, d->handle, NDK_UOBJ_MR, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	if (!ndk_uobj_holds_pages(u))
		ret = -EBADRQC;
	else
		ret = ndk_errno_from_status(ndk_umr_deregister(u));
	mutex_unlock(&nf->lock);
	return ret;
}

/**
 * ndk_uv_mr_init_fr() - NDK_IOCTL_MR_INIT_FR
 * @file: the file
 * @arg:  struct ndk_u_mr_init_fr
 *
 * The MR's local token becomes usable in SGEs once it is fast-registered.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (not a fast-register MR, a count
 * of 0, flags); %-ERANGE (above FRMRPageCount); %-EBUSY (registered);
 * %-ENOMEM.
 */
int ndk_uv_mr_init_fr(struct file *file, void *arg)
{
	struct ndk_u_mr_init_fr *i = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status;
	int ret;

	if ((i->flags & ~NDK_U_MR_INIT_FR_F_REMOTE_ACCESS) || i->reserved)
		return -EINVAL;
	u = ndk_file_lock_uobj(file, i->handle, NDK_UOBJ_MR, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	status = ndk_initialize_fast_register_mr(u->mem.mr,
						 i->adapter_page_count,
						 i->flags, NULL, NULL);
	ret = ndk_errno_from_status(status);
	mutex_unlock(&nf->lock);
	return ret;
}

/**
 * ndk_uv_token_query() - NDK_IOCTL_TOKEN_QUERY
 * @file: the file
 * @arg:  struct ndk_u_token_query
 *
 * Context: process context, may sleep.
 * Return: 0 (tokens 0 for an MR with no registration, or one still being
 * made); %-EPERM; %-ENOENT; %-EINVAL (flags, not an MR, MW or
 * registration).
 */
int ndk_uv_token_query(struct file *file, void *arg)
{
	struct ndk_u_token_query *t = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;

	if (t->flags || t->local_token || t->remote_token)
		return -EINVAL;
	u = ndk_file_lock_uobj_of(file, t->handle,
				  BIT(NDK_UOBJ_MW) | NDK_UOBJ_REGS, &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	/*
	 * An MR's registration has tokens once it is published: not while
	 * MR_REGISTER makes it without the file's lock, where the driver's
	 * keys are live before the check that may undo them (a range
	 * remapped meanwhile).  Until then: 0.
	 */
	if (u->type == NDK_UOBJ_MW) {
		t->remote_token = ndk_get_remote_token_from_mw(u->mw);
	} else if (u->mem.mr->fast_register || ndk_uobj_holds_pages(u)) {
		t->local_token = ndk_get_local_token_from_mr(u->mem.mr);
		t->remote_token = ndk_get_remote_token_from_mr(u->mem.mr);
	}
	mutex_unlock(&nf->lock);
	return 0;
}

/* ---- Connectors and listeners ------------------------------------------- */

/*
 * A struct sockaddr_in or _in6 from the ABI's zero-padded field; false for
 * another family or a non-zero pad.  AF_UNSPEC (all zero) gives length 0.
 */
static bool ndk_uv_sockaddr(const u8 *field, struct sockaddr_storage *ss,
			    u32 *len)
{
	u32 i;

	memset(ss, 0, sizeof(*ss));
	memcpy(ss, field, NDK_U_SOCKADDR_SIZE);
	switch (ss->ss_family) {
	case AF_INET:
		*len = sizeof(struct sockaddr_in);
		break;
	case AF_INET6:
		*len = sizeof(struct sockaddr_in6);
		break;
	case AF_UNSPEC:
		*len = 0;
		break;
	default:
		return false;
	}
	for (i = *len; i < NDK_U_SOCKADDR_SIZE; i++)
		if (field[i])
			return false;
	return true;
}

static void ndk_uv_sockaddr_out(u8 *field, const struct sockaddr_storage *ss,
				u32 len)
{
	memset(field, 0, NDK_U_SOCKADDR_SIZE);
	memcpy(field, ss, min_t(u32, len, NDK_U_SOCKADDR_SIZE));
}

/* Private data from user space: NULL and 0 bytes, a copy, or an ERR_PTR. */
static void *ndk_uv_private_data(u64 address, u32 length)
{
	if (!length)
		return address ? ERR_PTR(-EINVAL) : NULL;
	if (length > NDK_UV_PRIVATE_DATA_MAX)
		return ERR_PTR(-EINVAL);
	return memdup_user(u64_to_user_ptr(address), length);
}

static void ndk_uv_request_done(void *context, s32 status)
{
	ndk_uevent_queue(context, status);
}

/*
 * An event for a request of connector @u, or an ERR_PTR (ndk_uevent_alloc()).
 * The kernel API takes it as the request's context; ndk_uv_submitted()
 * settles it.
 */
static struct ndk_uevent *ndk_uv_request(struct ndk_uobj *u, u32 req,
					 u64 context)
{
	struct ndk_uevent *e = ndk_uevent_alloc(u->nf, GFP_KERNEL_ACCOUNT);

	if (IS_ERR(e))
		return e;
	ndk_uevent_init(e, u->nf, NDK_U_EVENT_REQUEST, u->handle, context);
	e->ev.object = req;
	return e;
}

/* The inline outcome of a request given event @e. */
static int ndk_uv_submitted(struct ndk_uevent *e, s32 status)
{
	if (status == STATUS_PENDING)
		return 0;
	if (NT_SUCCESS(status)) {
		ndk_uevent_queue(e, status);
		return 0;
	}
	ndk_uevent_free(e);
	return ndk_errno_from_status(status);
}

static void ndk_uv_disconnected(void *context)
{
	ndk_uevent_queue(context, STATUS_SUCCESS);
}

/* Set up a connector entry's DISCONNECTED event. */
static void ndk_uv_connector_init(struct ndk_uobj *u, u64 context)
{
	ndk_uevent_init(&u->conn.disconnected, u->nf, NDK_U_EVENT_DISCONNECTED,
			u->handle, context);
}

/**
 * ndk_uv_connector_create() - NDK_IOCTL_CONNECTOR_CREATE
 * @file: the file
 * @arg:  struct ndk_u_connector_create
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-ENODEV; %-ENOMEM; %-ENOBUFS.
 */
int ndk_uv_connector_create(struct file *file, void *arg)
{
	struct ndk_u_connector_create *c = arg;

	if (c->flags || c->handle || c->reserved)
		return -EINVAL;
	return ndk_uv_create(file, c->adapter_handle, NDK_UOBJ_CONNECTOR, c,
			     &c->handle);
}

/**
 * ndk_uv_connect() - NDK_IOCTL_CONNECT
 * @file: the file
 * @arg:  struct ndk_u_connect
 *
 * Context: process context, may sleep.
 * Return: 0 (an NDK_U_EVENT_REQUEST event follows); %-EPERM; %-ENOENT;
 * %-EINVAL (addresses, private data, limits); %-EFAULT; %-EISCONN
 * (connector used already); %-EADDRNOTAVAIL; %-EADDRINUSE; %-ENODEV;
 * %-ENOMEM; %-ENOBUFS (NDK_UEVENT_OWNED_MAX events alive).
 */
int ndk_uv_connect(struct file *file, void *arg)
{
	struct ndk_u_connect *c = arg;
	struct sockaddr_storage src, dst;
	u32 src_len, dst_len;
	struct ndk_uobj *u, *qp;
	struct ndk_uevent *e;
	struct ndk_file *nf;
	void *pdata;
	s32 status;
	int ret;

	if (c->flags || !ndk_uv_sockaddr(c->src_address, &src, &src_len) ||
	    !ndk_uv_sockaddr(c->dest_address, &dst, &dst_len) || !dst_len)
		return -EINVAL;
	pdata = ndk_uv_private_data(c->private_data, c->private_data_length);
	if (IS_ERR(pdata))
		return PTR_ERR(pdata);
	u = ndk_file_lock_uobj(file, c->connector_handle, NDK_UOBJ_CONNECTOR,
			       &nf);
	if (IS_ERR(u)) {
		kfree(pdata);
		return PTR_ERR(u);
	}
	qp = ndk_uobj_find(nf, c->qp_handle, NDK_UOBJ_QP);
	if (IS_ERR(qp)) {
		ret = PTR_ERR(qp);
		goto out_unlock;
	}
	e = ndk_uv_request(u, NDK_U_REQ_CONNECT, c->request_context);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out_unlock;
	}
	status = ndk_connect(u->conn.conn, qp->qp.qp,
			     src_len ? (struct sockaddr *)&src : NULL, src_len,
			     (struct sockaddr *)&dst, dst_len,
			     c->inbound_read_limit, c->outbound_read_limit,
			     pdata, c->private_data_length,
			     ndk_uv_request_done, e);
	ret = ndk_uv_submitted(e, status);
out_unlock:
	mutex_unlock(&nf->lock);
	kfree(pdata);
	return ret;
}

/*
 * COMPLETE_CONNECT and DISCONNECT: a request of a connector taking only a
 * context.
 */
static int ndk_uv_connector_request(struct file *file, void *arg, u32 req)
{
	struct ndk_u_connector_request *r = arg;
	struct ndk_uevent *e;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status;
	int ret;

	if (r->flags)
		return -EINVAL;
	u = ndk_file_lock_uobj(file, r->connector_handle, NDK_UOBJ_CONNECTOR,
			       &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	e = ndk_uv_request(u, req, r->request_context);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out_unlock;
	}
	if (req == NDK_U_REQ_COMPLETE_CONNECT)
		status = ndk_complete_connect(u->conn.conn,
					      ndk_uv_disconnected,
					      &u->conn.disconnected,
					      ndk_uv_request_done, e);
	else
		status = ndk_disconnect(u->conn.conn, ndk_uv_request_done, e);
	ret = ndk_uv_submitted(e, status);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}

/**
 * ndk_uv_complete_connect() - NDK_IOCTL_COMPLETE_CONNECT
 * @file: the file
 * @arg:  struct ndk_u_connector_request
 *
 * Context: process context, may sleep.
 * Return: 0 (an NDK_U_EVENT_REQUEST event follows); %-EPERM; %-ENOENT;
 * %-EINVAL; %-EISCONN (not after a successful connect); %-ENODEV;
 * %-ENOMEM; %-ENOBUFS (NDK_UEVENT_OWNED_MAX events alive).
 */
int ndk_uv_complete_connect(struct file *file, void *arg)
{
	return ndk_uv_connector_request(file, arg, NDK_U_REQ_COMPLETE_CONNECT);
}

/**
 * ndk_uv_disconnect() - NDK_IOCTL_DISCONNECT
 * @file: the file
 * @arg:  struct ndk_u_connector_request
 *
 * Context: process context, may sleep.
 * Return: 0 (an NDK_U_EVENT_REQUEST event follows); %-EPERM; %-ENOENT;
 * %-EINVAL; %-ENOTCONN / %-EISCONN (not connected); %-ENOMEM; %-ENOBUFS
 * (NDK_UEVENT_OWNED_MAX events alive).
 */
int ndk_uv_disconnect(struct file *file, void *arg)
{
	return ndk_uv_connector_request(file, arg, NDK_U_REQ_DISCONNECT);
}

/**
 * ndk_uv_accept() - NDK_IOCTL_ACCEPT
 * @file: the file
 * @arg:  struct ndk_u_accept
 *
 * Context: process context, may sleep.
 * Return: 0 (an NDK_U_EVENT_REQUEST event follows); %-EPERM; %-ENOENT;
 * %-EINVAL (private data, limits); %-EFAULT; %-EISCONN (not an incoming
 * connection, or accepted already); %-ENODEV; %-ENOMEM; %-ENOBUFS
 * (NDK_UEVENT_OWNED_MAX events alive).
 */
int ndk_uv_accept(struct file *file, void *arg)
{
	struct ndk_u_accept *a = arg;
	struct ndk_uobj *u, *qp;
	struct ndk_uevent *e;
	struct ndk_file *nf;
	void *pdata;
	s32 status;
	int ret;

	if (a->flags)
		return -EINVAL;
	pdata = ndk_uv_private_data(a->private_data, a->private_data_length);
	if (IS_ERR(pdata))
		return PTR_ERR(pdata);
	u = ndk_file_lock_uobj(file, a->connector_handle, NDK_UOBJ_CONNECTOR,
			       &nf);
	if (IS_ERR(u)) {
		kfree(pdata);
		return PTR_ERR(u);
	}
	qp = ndk_uobj_find(nf, a->qp_handle, NDK_UOBJ_QP);
	if (IS_ERR(qp)) {
		ret = PTR_ERR(qp);
		goto out_unlock;
	}
	e = ndk_uv_request(u, NDK_U_REQ_ACCEPT, a->request_context);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto out_unlock;
	}
	status = ndk_accept(u->conn.conn, qp->qp.qp, a->inbound_read_limit,
			    a->outbound_read_limit, pdata,
			    a->private_data_length, ndk_uv_disconnected,
			    &u->conn.disconnected, ndk_uv_request_done, e);
	ret = ndk_uv_submitted(e, status);
out_unlock:
	mutex_unlock(&nf->lock);
	kfree(pdata);
	return ret;
}

/**
 * ndk_uv_reject() - NDK_IOCTL_REJECT
 * @file: the file
 * @arg:  struct ndk_u_reject
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-EFAULT; %-EISCONN (nothing to
 * reject).
 */
int ndk_uv_reject(struct file *file, void *arg)
{
	struct ndk_u_reject *r = arg;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	void *pdata;
	int ret;

	pdata = ndk_uv_private_data(r->private_data, r->private_data_length);
	if (IS_ERR(pdata))
		return PTR_ERR(pdata);
	u = ndk_file_lock_uobj(file, r->connector_handle, NDK_UOBJ_CONNECTOR,
			       &nf);
	if (IS_ERR(u)) {
		kfree(pdata);
		return PTR_ERR(u);
	}
	ret = ndk_errno_from_status(ndk_reject(u->conn.conn, pdata,
					       r->private_data_length));
	mutex_unlock(&nf->lock);
	kfree(pdata);
	return ret;
}

/**
 * ndk_uv_connector_query() - NDK_IOCTL_CONNECTOR_QUERY
 * @file: the file
 * @arg:  struct ndk_u_connector_query
 *
 * What the peer sent, as ndk_get_connection_data() has it, and both
 * addresses when the connector has them.  A refused connect has the
 * reject's private data but no addresses (ndk_conn_has_addresses()): the
 * query gives the data with both address fields zero, as NdkGetConnectionData
 * after a reject gives the peer's data.
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-EISCONN (no connection data
 * yet); %-EOVERFLOW (the peer's private data does not fit); %-EFAULT.
 */
int ndk_uv_connector_query(struct file *file, void *arg)
{
	struct ndk_u_connector_query *q = arg;
	u8 pdata[NDK_UV_PRIVATE_DATA_MAX];
	u32 plen = sizeof(pdata), len;
	struct sockaddr_storage ss;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status, s;
	int ret;

	if (q->flags || q->reserved || q->inbound_read_limit ||
	    q->outbound_read_limit ||
	    memchr_inv(q->local_address, 0, sizeof(q->local_address)) ||
	    memchr_inv(q->peer_address, 0, sizeof(q->peer_address)))
		return -EINVAL;
	u = ndk_file_lock_uobj(file, q->connector_handle, NDK_UOBJ_CONNECTOR,
			       &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	status = ndk_get_connection_data(u->conn.conn, &q->inbound_read_limit,
					 &q->outbound_read_limit, pdata,
					 &plen);
	if (!status) {
		len = sizeof(ss);
		s = ndk_get_local_address(u->conn.conn, (struct sockaddr *)&ss,
					  &len);
		if (!s) {
			ndk_uv_sockaddr_out(q->local_address, &ss, len);
			len = sizeof(ss);
			s = ndk_get_peer_address(u->conn.conn,
						 (struct sockaddr *)&ss, &len);
		}
		if (!s)
			ndk_uv_sockaddr_out(q->peer_address, &ss, len);
		/*
		 * No addresses: both fields zero.  They came in zero (checked
		 * above); the local one is cleared again in case the
		 * connection failed between the two reads.
		 */
		if (s == STATUS_INVALID_DEVICE_STATE)
			memset(q->local_address, 0, sizeof(q->local_address));
		else
			status = s;
	}
	ret = ndk_errno_from_status(status);
	mutex_unlock(&nf->lock);
	if (ret)
		return ret;
	if (plen > q->private_data_length)
		return -EOVERFLOW;
	if (plen && copy_to_user(u64_to_user_ptr(q->private_data), pdata, plen))
		return -EFAULT;
	q->private_data_length = plen;
	return 0;
}

static void ndk_uv_connector_closed(void *context)
{
}

/*
 * A listener's ConnectEvent: queue the new connector; it becomes a handle
 * when user space takes the event (ndk_uverbs_accepted()).  Without memory
 * for the event, with the file's owned events at their bound, or once the
 * listener's entry is going, the connector is
 * closed, which rejects the peer.  The close does not wait: this runs in
 * the listener's rdma_cm event handler.
 */
static void ndk_uv_connect_event(void *context, struct ndk_connector *conn)
{
	struct ndk_uobj *listener = context;
	struct ndk_file *nf = listener->nf;
	struct ndk_uevent *e;
	unsigned long flags;

	e = ndk_uevent_alloc(nf, NDK_GFP_PEER);
	if (IS_ERR(e)) {
		e = NULL;
	} else {
		ndk_uevent_init(e, nf, NDK_U_EVENT_CONNECT_REQUEST,
				listener->handle, listener->listener.context);
		e->conn = conn;
		e->listener = listener;
	}
	spin_lock_irqsave(&nf->ev_lock, flags);
	if (e && !listener->listener.closing) {
		e->queued = true;
		list_add_tail(&e->entry, &nf->events);
		e = NULL;
		conn = NULL;
	}
	spin_unlock_irqrestore(&nf->ev_lock, flags);
	ndk_uevent_free(e);
	if (conn)
		ndk_close_connector(conn, ndk_uv_connector_closed, NULL);
	else
		wake_up_interruptible(&nf->wait);
}

/**
 * ndk_uverbs_accepted() - give a connection request's connector a handle
 * @nf: the file, locked
 * @e:  a NDK_U_EVENT_CONNECT_REQUEST event just taken
 *
 * The connector's entry is a child of the listener's adapter's, as the
 * connector counts in the adapter (ndk_obj_loosen()): NDK lets the
 * listener close while its connections live on.
 *
 * Context: process context, ndk_file.lock held.
 * Return: the connector's entry (@e->ev.object is its handle), or NULL
 * when it could not get one: the connector is closed then.
 */
struct ndk_uobj *ndk_uverbs_accepted(struct ndk_file *nf,
				     struct ndk_uevent *e)
{
	struct ndk_uobj *u;

	u = ndk_uobj_alloc(nf, NDK_UOBJ_CONNECTOR, e->listener->parent);
	if (!u)
		goto err_close_connector;
	u->conn.conn = e->conn;
	if (ndk_uobj_publish(nf, u))
		goto err_free_uobj;
	ndk_uv_connector_init(u, 0);
	e->ev.object = u->handle;
	return u;

err_free_uobj:
	ndk_uobj_free(u);
err_close_connector:
	ndk_close_connector(e->conn, NULL, NULL);
	return NULL;
}

/**
 * ndk_uv_listener_create() - NDK_IOCTL_LISTENER_CREATE
 * @file: the file
 * @arg:  struct ndk_u_listener_create
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL; %-ENODEV; %-ENOMEM; %-ENOBUFS.
 */
int ndk_uv_listener_create(struct file *file, void *arg)
{
	struct ndk_u_listener_create *c = arg;

	if (c->flags || c->handle || c->reserved)
		return -EINVAL;
	return ndk_uv_create(file, c->adapter_handle, NDK_UOBJ_LISTENER, c,
			     &c->handle);
}

/**
 * ndk_uv_listen() - NDK_IOCTL_LISTEN
 * @file: the file
 * @arg:  struct ndk_u_listen
 *
 * Context: process context, may sleep.
 * Return: 0; %-EPERM; %-ENOENT; %-EINVAL (address, listening already);
 * %-EADDRINUSE; %-EADDRNOTAVAIL; %-ENODEV; %-ENOMEM.
 */
int ndk_uv_listen(struct file *file, void *arg)
{
	struct ndk_u_listen *l = arg;
	struct sockaddr_storage ss;
	struct ndk_file *nf;
	struct ndk_uobj *u;
	s32 status;
	u32 len;
	int ret;

	if (l->flags || !ndk_uv_sockaddr(l->address, &ss, &len) || !len)
		return -EINVAL;
	u = ndk_file_lock_uobj(file, l->listener_handle, NDK_UOBJ_LISTENER,
			       &nf);
	if (IS_ERR(u))
		return PTR_ERR(u);
	status = ndk_listen(u->listener.listener, (struct sockaddr *)&ss, len,
			    NULL, NULL);
	if (!status) {
		len = sizeof(ss);
		status = ndk_get_listener_local_address(u->listener.listener,
							(struct sockaddr *)&ss,
							&len);
		ndk_uv_sockaddr_out(l->address, &ss, len);
	}
	ret = ndk_errno_from_status(status);
	mutex_unlock(&nf->lock);
	return ret;
}

/* ---- Creating adapter and PD children ------------------------------------- */

/*
 * The opens of the entries ndk_uv_create() makes (ndk_uobj_descs[].open):
 * create the object of the new entry @u from its parent's, with the
 * arguments of its create command @arg.  Its event is set up before the
 * object can raise it; the handle in the event is filled in once known
 * (ndk_uobj_descs[].published).
 */
s32 ndk_uv_cq_open(struct ndk_uobj *u, void *arg)
{
	const struct ndk_u_cq_create *c = arg;
	s32 status;

	ndk_uevent_init(&u->cq.notify, u->nf, NDK_U_EVENT_CQ, 0, c->context);
	status = ndk_create_cq(u->parent->adapter, c->depth, ndk_uv_cq_notify,
			       u, NULL, NULL, NULL, &u->cq.cq);
	if (status || !(c->flags & NDK_U_CQ_CREATE_F_RING) ||
	    !ndk_uring_cq_attach(u, c->depth))
		return status;
	ndk_close_cq(u->cq.cq, NULL, NULL);
	return STATUS_INSUFFICIENT_RESOURCES;
}

void ndk_uv_cq_published(struct ndk_uobj *u, void *arg)
{
	struct ndk_u_cq_create *c = arg;

	u->cq.notify.ev.handle = u->handle;
	if (u->cq.ring)
		ndk_uring_describe(u->cq.ring, u->handle, &c->ring_offset,
				   &c->ring_size, &c->ring_entries);
}

s32 ndk_uv_connector_open(struct ndk_uobj *u, void *arg)
{
	const struct ndk_u_connector_create *c = arg;

	ndk_uv_connector_init(u, c->context);
	return ndk_create_connector(u->parent->adapter, NULL, NULL,
				    &u->conn.conn);
}

void ndk_uv_connector_published(struct ndk_uobj *u, void *arg)
{
	u->conn.disconnected.ev.handle = u->handle;
}

s32 ndk_uv_listener_open(struct ndk_uobj *u, void *arg)
{
	const struct ndk_u_listener_create *c = arg;

	/* No connection request arrives before LISTEN. */
	u->listener.context = c->context;
	return ndk_create_listener(u->parent->adapter, ndk_uv_connect_event,
				   u, NULL, NULL, &u->listener.listener);
}

s32 ndk_uv_mr_open(struct ndk_uobj *u, void *arg)
{
	const struct ndk_u_mr_create *c = arg;

	RB_CLEAR_NODE(&u->mem.key_node);
	return ndk_create_mr(u->parent->pd,
			     c->flags & NDK_U_MR_CREATE_F_FAST_REGISTER,
			     NULL, NULL, &u->mem.mr);
}

s32 ndk_uv_mw_open(struct ndk_uobj *u, void *arg)
{
	return ndk_create_mw(u->parent->pd, NULL, NULL, &u->mw);
}

/*
 * The create commands of CQs, connectors and listeners (children of an
 * adapter) and of MRs and MWs (children of a PD): @arg is the command's
 * struct, checked by the caller; *@handle receives the new handle.
 */
static int ndk_uv_create(struct file *file, u32 parent_handle, u8 type,
			 void *arg, u32 *handle)
{
	u8 parent_type = ndk_uobj_descs[type].parent;
	struct ndk_uobj *parent, *u;
	struct ndk_file *nf;
	s32 status;
	int ret;

	parent = ndk_file_lock_uobj(file, parent_handle, parent_type, &nf);
	if (IS_ERR(parent))
		return PTR_ERR(parent);
	u = ndk_uobj_alloc(nf, type, parent);
	if (!u) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	status = ndk_uobj_descs[type].open(u, arg);
	if (status) {
		ret = ndk_errno_from_status(status);
		goto err_free_uobj;
	}
	ret = ndk_uobj_publish(nf, u);
	if (ret)
		goto err_destroy_object;
	if (ndk_uobj_descs[type].published)
		ndk_uobj_descs[type].published(u, arg);
	*handle = u->handle;
	mutex_unlock(&nf->lock);
	return 0;

err_destroy_object:
	/* Never published: nothing refers to it yet (a new MR has no pages). */
	ndk_uobj_descs[type].destroy(u);
err_free_uobj:
	ndk_uobj_free(u);
out_unlock:
	mutex_unlock(&nf->lock);
	return ret;
}
