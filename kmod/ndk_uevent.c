// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the event queue of an open /dev/ndk file.
 *
 * Asynchronous completions of the user path (connection events, adapter
 * removal, CQ and QP notifications) are struct ndk_uevent, embedded in
 * the object they concern (request completions and connection requests
 * are allocated, "owned", and a connection request carries its
 * connector).  An event is queued once however often its source fires
 * before user space takes it (NDK_IOCTL_EVENT_GET, poll()).  Owned events
 * are counted per file and bounded (NDK_UEVENT_OWNED_MAX): a caller that
 * never takes its events, repeating DISCONNECT on a connector that is
 * disconnected already (it completes at once, each time), gets ENOBUFS
 * instead of growing the queue that ndk_uevent_drop_requests() walks with
 * interrupts off.
 *
 * Locking: ndk_file.ev_lock, a spinlock taken in any context, protects
 * the queue and each event's queued state.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/list.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "ndk_file.h"

/**
 * ndk_uevent_init() - set up an event
 * @e:       the event, zeroed
 * @nf:      the file whose queue it goes to
 * @type:    NDK_U_EVENT_*
 * @handle:  the object it concerns
 * @context: the context user space gets
 *
 * Context: any.
 */
void ndk_uevent_init(struct ndk_uevent *e, struct ndk_file *nf, u32 type,
		     u32 handle, u64 context)
{
	INIT_LIST_HEAD(&e->entry);
	e->nf = nf;
	e->ev.type = type;
	e->ev.handle = handle;
	e->ev.context = context;
}

/**
 * ndk_uevent_alloc() - allocate an owned event
 * @nf:  the file it is for
 * @gfp: GFP_KERNEL_ACCOUNT in a command, NDK_GFP_PEER in a callback
 *
 * Context: as @gfp allows.
 * Return: the event, zeroed, owned, for @nf; ERR_PTR(%-ENOBUFS) when the
 * file has NDK_UEVENT_OWNED_MAX owned events already; ERR_PTR(%-ENOMEM).
 */
struct ndk_uevent *ndk_uevent_alloc(struct ndk_file *nf, gfp_t gfp)
{
	struct ndk_uevent *e;

	if (atomic_inc_return(&nf->owned_events) > NDK_UEVENT_OWNED_MAX) {
		atomic_dec(&nf->owned_events);
		return ERR_PTR(-ENOBUFS);
	}
	e = kzalloc(sizeof(*e), gfp);
	if (!e) {
		atomic_dec(&nf->owned_events);
		return ERR_PTR(-ENOMEM);
	}
	e->nf = nf;
	e->owned = true;
	return e;
}

/**
 * ndk_uevent_free() - free an event once it is off the queue
 * @e: the event, or NULL; nothing happens unless it is owned
 *
 * Context: any.
 */
void ndk_uevent_free(struct ndk_uevent *e)
{
	if (!e || !e->owned)
		return;
	atomic_dec(&e->nf->owned_events);
	kfree(e);
}

/**
 * ndk_uevent_queue() - queue an event and wake poll()
 * @e:      the event; queued once however often this runs before it is
 *          taken (a later error status replaces a success)
 * @status: its status
 *
 * Context: any.
 */
void ndk_uevent_queue(struct ndk_uevent *e, s32 status)
{
	struct ndk_file *nf = e->nf;
	unsigned long flags;

	spin_lock_irqsave(&nf->ev_lock, flags);
	if (!e->queued || NT_SUCCESS(e->ev.status))
		e->ev.status = status;
	if (!e->queued) {
		e->queued = true;
		list_add_tail(&e->entry, &nf->events);
	}
	spin_unlock_irqrestore(&nf->ev_lock, flags);
	wake_up_interruptible(&nf->wait);
}

/**
 * ndk_uevent_unqueue() - take an embedded event off the queue
 * @e: the event, whose source can no longer queue it
 *
 * Context: any.
 */
void ndk_uevent_unqueue(struct ndk_uevent *e)
{
	unsigned long flags;

	spin_lock_irqsave(&e->nf->ev_lock, flags);
	if (e->queued) {
		e->queued = false;
		list_del_init(&e->entry);
	}
	spin_unlock_irqrestore(&e->nf->ev_lock, flags);
}

/**
 * ndk_uevent_take() - take the oldest event off the queue
 * @nf: the file
 *
 * Context: process context.
 * Return: the event, or NULL when none is queued.
 */
struct ndk_uevent *ndk_uevent_take(struct ndk_file *nf)
{
	struct ndk_uevent *e;

	spin_lock_irq(&nf->ev_lock);
	e = list_first_entry_or_null(&nf->events, struct ndk_uevent, entry);
	if (e) {
		e->queued = false;
		list_del_init(&e->entry);
	}
	spin_unlock_irq(&nf->ev_lock);
	return e;
}

/**
 * ndk_uevent_drop_requests() - drop connection requests not yet taken
 * @nf:    the file, locked
 * @scope: a listener: its requests; NULL: all
 *
 * Their connectors are closed: the peers see a reject.
 *
 * Context: process context, ndk_file.lock held.
 */
void ndk_uevent_drop_requests(struct ndk_file *nf, struct ndk_uobj *scope)
{
	struct ndk_uevent *e, *tmp;
	LIST_HEAD(drop);

	spin_lock_irq(&nf->ev_lock);
	list_for_each_entry_safe(e, tmp, &nf->events, entry) {
		if (e->conn && (!scope || e->listener == scope)) {
			e->queued = false;
			list_move_tail(&e->entry, &drop);
		}
	}
	spin_unlock_irq(&nf->ev_lock);
	list_for_each_entry_safe(e, tmp, &drop, entry) {
		ndk_close_connector(e->conn, NULL, NULL);
		ndk_uevent_free(e);
	}
}
