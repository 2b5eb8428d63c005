// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the NDK object base and the asynchronous contract.
 *
 * Create: the object is allocated by its type's create function (atomic
 * allocation when a completion is given, since NDK callers may be in
 * atomic context), then ndk_obj_create() runs the type's init(), which
 * does the ib_core work that may sleep.  Without a completion, init() runs
 * inline and the result is returned (a Linux extension for process-context
 * callers).  With a completion, init() runs on ndk_wq and the call returns
 * STATUS_PENDING; the completion later gets the object (or the failure)
 * exactly once, and *out is never written.
 *
 * Busy: an object counts its successors whose consumer has not closed
 * them yet (@users: its children and the objects that hold it), from
 * ndk_obj_init() or ndk_obj_hold() to ndk_obj_close().  NDK defers an
 * antecedent's close rather than refusing it, so the kernel API only
 * counts; /dev/ndk refuses to close a busy object (ndk_obj_busy()), as
 * uverbs refuses to destroy an ib_pd whose usecnt is not zero.  A
 * connector made for a connection request counts in its adapter's, not
 * in its listener's: NDK lets a listener close while its connections
 * live on (ndk_obj_loosen()).
 *
 * Close: ndk_obj_close() drops the consumer's reference.  The object is
 * torn down when its last reference goes, i.e. once every successor has
 * been closed (NDK: an antecedent's close is deferred until its
 * successors are closed).  With a completion the call returns
 * STATUS_PENDING and the completion runs after teardown, before the
 * parent's reference is dropped; without one, the teardown runs inline
 * when nothing else holds the object, otherwise when the last successor
 * goes (a dereference), and the call returns STATUS_SUCCESS.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ndk_core.h"

struct workqueue_struct *ndk_wq;
struct workqueue_struct *ndk_connect_wq;
struct workqueue_struct *ndk_kill_wq;

/**
 * ndk_gfp() - allocation flags for a call that may be asynchronous
 * @completion: the consumer's completion callback, or NULL
 *
 * Objects are charged to the caller's memory cgroup (__GFP_ACCOUNT): a
 * /dev/ndk command runs in its caller's context; kernel consumers run in
 * kernel threads, whose charges go to the root cgroup.
 *
 * Return: GFP_ATOMIC when a completion is given (the caller may be in
 * atomic context), GFP_KERNEL for a blocking call; both accounted.
 */
gfp_t ndk_gfp(const void *completion)
{
	return completion ? GFP_ATOMIC | __GFP_ACCOUNT : GFP_KERNEL_ACCOUNT;
}

/**
 * ndk_status_from_errno() - the NTSTATUS for a negative kernel errno
 * @err: 0 or a negative errno
 *
 * Return: the NTSTATUS an NDK consumer expects (Documentation/ndk-mapping.md).
 */
s32 ndk_status_from_errno(int err)
{
	switch (err) {
	case 0:
		return STATUS_SUCCESS;
	case -ENOMEM:
	case -ENOSPC:
	case -ENOBUFS:
		return STATUS_INSUFFICIENT_RESOURCES;
	case -EINVAL:
	case -E2BIG:
	case -EOVERFLOW:
	case -ERANGE:
		return STATUS_INVALID_PARAMETER;
	case -EOPNOTSUPP:
		return STATUS_NOT_SUPPORTED;
	case -ENODEV:
	case -ENXIO:
		return STATUS_DEVICE_REMOVED;
	case -EBUSY:
	case -EAGAIN:
		return STATUS_DEVICE_BUSY;
	case -ETIMEDOUT:
		return STATUS_IO_TIMEOUT;
	case -ECONNREFUSED:
		return STATUS_CONNECTION_REFUSED;
	case -ENETUNREACH:
		return STATUS_NETWORK_UNREACHABLE;
	case -EHOSTUNREACH:
		return STATUS_HOST_UNREACHABLE;
	case -EADDRINUSE:
		return STATUS_SHARING_VIOLATION;
	case -EADDRNOTAVAIL:
		return STATUS_INVALID_ADDRESS;
	case -ECONNRESET:
		return STATUS_CONNECTION_RESET;
	case -ECONNABORTED:
		return STATUS_CONNECTION_ABORTED;
	case -ENOTCONN:
		return STATUS_CONNECTION_INVALID;
	case -EFAULT:
	case -EACCES:
	case -EPERM:
		return STATUS_ACCESS_VIOLATION;
	case -ECANCELED:
	case -EINTR:
		return STATUS_CANCELLED;
	default:
		return STATUS_UNSUCCESSFUL;
	}
}

/**
 * ndk_obj_init() - initialise the base of a new object
 * @obj:     the object, zeroed
 * @type:    its NDK object type
 * @parent:  the object it is created from; a reference is taken
 * @destroy: releases the object's resources and frees it; process context
 *
 * Context: any.
 */
void ndk_obj_init(struct ndk_obj *obj, enum ndk_object_type type,
		  struct ndk_obj *parent, void (*destroy)(struct ndk_obj *))
{
	obj->hdr.version.major = NDK_VERSION_MAJOR;
	obj->hdr.version.minor = NDK_VERSION_MINOR;
	obj->hdr.object_type = type;
	refcount_set(&obj->ref, 1);
	obj->destroy = destroy;
	obj->parent = parent;
	if (parent) {
		ndk_obj_get(parent);
		atomic_inc(&parent->users);
		obj->adapter = parent->adapter;
	}
}

/**
 * ndk_obj_hold() - make an object a successor of one more antecedent
 * @obj:        the new object, before ndk_obj_create()
 * @antecedent: an object @obj uses besides its parent (a QP's CQ); a
 *              reference is taken and dropped with the parent's, after
 *              @obj's close completion, so @antecedent's close is deferred
 *              until then (NDK object lifetime rules)
 *
 * Context: any.
 */
void ndk_obj_hold(struct ndk_obj *obj, struct ndk_obj *antecedent)
{
	int i;

	for (i = 0; i < NDK_OBJ_MAX_ANTECEDENTS; i++) {
		if (!obj->antecedents[i]) {
			ndk_obj_get(antecedent);
			atomic_inc(&antecedent->users);
			obj->antecedents[i] = antecedent;
			return;
		}
	}
	WARN_ONCE(1, "ndk: too many antecedents\n");
}

/*
 * One user of @obj less.  Below zero it would let /dev/ndk close a parent
 * whose children's entries still point at its entry: warn.
 */
static void ndk_obj_unuse_one(struct ndk_obj *obj)
{
	WARN_ON_ONCE(atomic_dec_return(&obj->users) < 0);
}

/**
 * ndk_obj_loosen() - count a new object in another's users than its parent's
 * @obj:    the new object, before ndk_obj_create() or ndk_obj_count()
 * @holder: what it counts in instead (ndk_obj_hold()): a connection
 *          request's connector counts in its adapter, so that its
 *          listener may close first (NDK) and the adapter may not
 *
 * Context: any.
 */
void ndk_obj_loosen(struct ndk_obj *obj, struct ndk_obj *holder)
{
	ndk_obj_unuse_one(obj->parent);
	obj->loose = true;
	ndk_obj_hold(obj, holder);
}

/**
 * ndk_obj_busy() - does an object have successors not closed yet?
 * @obj: the object
 *
 * Context: any; the answer is a snapshot unless the caller excludes
 * creates from and closes of @obj's successors (as /dev/ndk's file lock
 * does for its own).
 * Return: true while a child or a holder of @obj is open.
 */
bool ndk_obj_busy(const struct ndk_obj *obj)
{
	return atomic_read(&obj->users) > 0;
}

/* The consumer is done with @obj: it no longer makes its antecedents busy. */
static void ndk_obj_unuse(struct ndk_obj *obj)
{
	int i;

	for (i = 0; i < NDK_OBJ_MAX_ANTECEDENTS; i++)
		if (obj->antecedents[i])
			ndk_obj_unuse_one(obj->antecedents[i]);
	if (obj->parent && !obj->loose)
		ndk_obj_unuse_one(obj->parent);
}

/* Drop the references of an object that is gone: antecedents, then parent. */
static void ndk_obj_release(struct ndk_obj *parent,
			    struct ndk_obj *const *antecedents)
{
	int i;

	for (i = 0; i < NDK_OBJ_MAX_ANTECEDENTS; i++)
		if (antecedents[i])
			ndk_obj_put(antecedents[i]);
	if (parent)
		ndk_obj_put(parent);
}

/* Free an object whose init() failed or never ran. */
static void ndk_obj_abort(struct ndk_obj *obj)
{
	struct ndk_obj *antecedents[NDK_OBJ_MAX_ANTECEDENTS];
	struct ndk_obj *parent = obj->parent;

	ndk_obj_unuse(obj);
	memcpy(antecedents, obj->antecedents, sizeof(antecedents));
	kfree(obj);
	ndk_obj_release(parent, antecedents);
}

/**
 * ndk_obj_count() - count a created object in its device's objects
 * @obj: an object whose creation succeeded, not an adapter
 *
 * Its teardown takes it out of the count again.
 *
 * Context: any.
 */
void ndk_obj_count(struct ndk_obj *obj)
{
	u32 type = obj->hdr.object_type;

	if (type == NDK_OBJECT_TYPE_ADAPTER || type >= NDK_OBJECT_TYPE_MAX)
		return;
	atomic_inc(&obj->adapter->dev->objects[type]);
	obj->counted = true;
}

static void ndk_obj_teardown(struct ndk_obj *obj)
{
	ndk_fn_close_completion completion = obj->close_completion;
	struct ndk_obj *antecedents[NDK_OBJ_MAX_ANTECEDENTS];
	void *context = obj->close_context;
	struct ndk_obj *parent = obj->parent;

	memcpy(antecedents, obj->antecedents, sizeof(antecedents));
	/* The parent reference keeps the adapter, and so the device, here. */
	if (obj->counted)
		atomic_dec(&obj->adapter->dev->objects[obj->hdr.object_type]);
	obj->destroy(obj);	/* frees obj */
	if (completion)
		completion(context);
	ndk_obj_release(parent, antecedents);
}

static void ndk_obj_teardown_work(struct work_struct *work)
{
	ndk_obj_teardown(container_of(work, struct ndk_obj, work));
}

/**
 * ndk_obj_last_put() - the last reference of @obj is gone (ndk_obj_put())
 * @obj: the object
 *
 * The teardown runs on ndk_wq, so the last put may come from any context,
 * including from an NDK callback.
 *
 * Context: any.
 */
void ndk_obj_last_put(struct ndk_obj *obj)
{
	INIT_WORK(&obj->work, ndk_obj_teardown_work);
	queue_work(ndk_wq, &obj->work);
}

static void ndk_obj_create_work(struct work_struct *work)
{
	struct ndk_obj *obj = container_of(work, struct ndk_obj, work);
	int ret;

	ret = obj->init(obj);
	if (ret) {
		obj->create_completion(obj->create_context,
				       ndk_status_from_errno(ret), NULL);
		ndk_obj_abort(obj);
		return;
	}
	ndk_obj_count(obj);
	/*
	 * The consumer may close the object from its completion: hold it
	 * until the completion returned, so that the close completion (and
	 * an adapter close waiting for it) comes after (NDK: the close
	 * completion is the object's last callback).
	 */
	ndk_obj_get(obj);
	obj->create_completion(obj->create_context, STATUS_SUCCESS, &obj->hdr);
	ndk_obj_put(obj);
}

/**
 * ndk_obj_create() - finish creating an object, inline or asynchronously
 * @obj:               the object, set up by ndk_obj_init() and its type
 * @init:              does the type's ib_core work; may sleep; on failure
 *                     it has released what it took and returns -errno
 * @create_completion: NULL for a blocking create (process context)
 * @request_context:   passed to @create_completion
 * @out:               receives the object on inline success only
 *
 * On failure @obj is freed and its parent reference dropped.
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_SUCCESS, STATUS_PENDING, STATUS_DEVICE_REMOVED when the
 * device is going away, or the status of @init's errno.
 */
s32 ndk_obj_create(struct ndk_obj *obj, int (*init)(struct ndk_obj *obj),
		   ndk_fn_create_completion create_completion,
		   void *request_context, void **out)
{
	int ret;

	if (ndk_adapter_removed(obj->adapter)) {
		ndk_obj_abort(obj);
		return STATUS_DEVICE_REMOVED;
	}
	if (create_completion) {
		obj->init = init;
		obj->create_completion = create_completion;
		obj->create_context = request_context;
		INIT_WORK(&obj->work, ndk_obj_create_work);
		queue_work(ndk_wq, &obj->work);
		return STATUS_PENDING;
	}
	might_sleep();
	ret = init(obj);
	if (ret) {
		ndk_obj_abort(obj);
		return ndk_status_from_errno(ret);
	}
	ndk_obj_count(obj);
	*out = obj;
	return STATUS_SUCCESS;
}

/**
 * ndk_obj_close() - the consumer closes its object
 * @obj:             the object; the consumer may not use it afterwards
 * @completion:      NULL for a blocking close (process context)
 * @request_context: passed to @completion
 *
 * Context: any with a completion; process context without.
 * Return: STATUS_PENDING with a completion, STATUS_SUCCESS without.
 */
s32 ndk_obj_close(struct ndk_obj *obj, ndk_fn_close_completion completion,
		  void *request_context)
{
	ndk_obj_unuse(obj);
	obj->close_completion = completion;
	obj->close_context = request_context;
	WRITE_ONCE(obj->closing, true);
	if (completion) {
		ndk_obj_put(obj);
		return STATUS_PENDING;
	}
	might_sleep();
	if (refcount_dec_and_test(&obj->ref))
		ndk_obj_teardown(obj);
	return STATUS_SUCCESS;
}
