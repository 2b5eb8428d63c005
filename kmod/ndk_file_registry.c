// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the registry of open /dev/ndk files (user path).
 *
 * Every open file gets an id here at open and leaves at release.  Readers
 * above the user path (the netlink family) see files and their objects
 * only through summaries copied under the locks (ndk_files_next(),
 * ndk_file_next_uobj(), ndk_files_cache_totals()): they never hold a
 * file, its lock or its handle table.  ndk_files_lock serialises the
 * table's writers (open() and release()) and the closed files' sums.
 * Readers walk the table under RCU (a file is freed a grace period after
 * its last reference, ndk_file_put()) and take a reference
 * (ndk_file.ref) on a file before they look into it, so neither passing
 * other users' files nor a walk of a file with millions of handles holds
 * a lock every open() and release() needs; the handles are walked under
 * the file's own lock.  Nor does a reader wait for that: a command may
 * hold it for long (a notifier's removal waits for the process's own
 * invalidations).  It tries the lock, and when the file is busy sleeps
 * and starts again (ndk_files_backoff()).  Lock order: ndk_file.lock >
 * ndk_devices_lock.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/delay.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "ndk_file.h"

static DEFINE_MUTEX(ndk_files_lock);	/* the table's writers, the sums */
static DEFINE_XARRAY_ALLOC1(ndk_files);
static u32 ndk_files_next_id;
/* Self-reported cache counters of files already closed. */
static u64 ndk_cache_hits_closed;
static u64 ndk_cache_misses_closed;

/* Files a walk passes in one RCU read section. */
#define NDK_FILES_BATCH 64

/*
 * The first file at or after *@pos that @want() accepts (for @pid and
 * @viewer), with a reference (ndk_file_put() it), its id in *@pos; NULL
 * when none is left.  A file whose last reference is gone is passed.
 */
static struct ndk_file *
ndk_files_find(unsigned long *pos, struct pid *pid,
	       const struct mm_struct *viewer,
	       bool (*want)(struct ndk_file *nf, struct pid *pid,
			    const struct mm_struct *viewer))
{
	unsigned int passed = 0;
	struct ndk_file *nf;
	unsigned long index;

	rcu_read_lock();
	xa_for_each_start(&ndk_files, index, nf, *pos) {
		if (want(nf, pid, viewer) && refcount_inc_not_zero(&nf->ref)) {
			rcu_read_unlock();
			*pos = index;
			return nf;
		}
		if (!(++passed % NDK_FILES_BATCH)) {
			rcu_read_unlock();
			cond_resched();
			rcu_read_lock();
		}
	}
	rcu_read_unlock();
	return NULL;
}

/**
 * ndk_files_add() - a new open file gets its id and becomes visible
 * @nf: the file, its owner fields set
 *
 * Context: process context.
 * Return: 0, %-ENOMEM or %-EBUSY (no id left).
 */
int ndk_files_add(struct ndk_file *nf)
{
	int ret;

	mutex_lock(&ndk_files_lock);
	ret = xa_alloc_cyclic(&ndk_files, &nf->id, nf, xa_limit_32b,
			      &ndk_files_next_id, GFP_KERNEL_ACCOUNT);
	mutex_unlock(&ndk_files_lock);
	nf->ucache.file_id = nf->id;
	return ret < 0 ? ret : 0;
}

/**
 * ndk_files_del() - a file being released disappears
 * @nf: the file, added by ndk_files_add()
 *
 * Its self-reported cache counters are kept in the module-wide sums.
 *
 * Context: process context; the file's lock not held.
 */
void ndk_files_del(struct ndk_file *nf)
{
	mutex_lock(&ndk_files_lock);
	xa_erase(&ndk_files, nf->id);
	if (nf->counters) {
		ndk_cache_hits_closed += READ_ONCE(nf->counters->hits);
		ndk_cache_misses_closed += READ_ONCE(nf->counters->misses);
	}
	mutex_unlock(&ndk_files_lock);
}

/**
 * ndk_files_empty() - is no file open any more?
 *
 * Context: process context.
 * Return: true when no /dev/ndk file is registered.
 */
bool ndk_files_empty(void)
{
	return xa_empty(&ndk_files);
}

/* Files with cache counters, for ndk_files_find(). */
static bool ndk_files_counting(struct ndk_file *nf, struct pid *pid,
			       const struct mm_struct *viewer)
{
	return READ_ONCE(nf->counters);
}

/**
 * ndk_files_cache_totals() - self-reported cache hits and misses of all
 * files, open and closed
 * @hits:   out
 * @misses: out
 *
 * The closed files' sums are read first, so a file is counted once at
 * most: one closed during the walk before the walk reached it is left
 * out.
 *
 * Context: process context.
 */
void ndk_files_cache_totals(u64 *hits, u64 *misses)
{
	struct ndk_u_cache_counters *c;
	unsigned long pos = 0;
	struct ndk_file *nf;

	mutex_lock(&ndk_files_lock);
	*hits = ndk_cache_hits_closed;
	*misses = ndk_cache_misses_closed;
	mutex_unlock(&ndk_files_lock);
	while ((nf = ndk_files_find(&pos, NULL, NULL, ndk_files_counting))) {
		c = READ_ONCE(nf->counters);
		if (c) {
			*hits += READ_ONCE(c->hits);
			*misses += READ_ONCE(c->misses);
		}
		ndk_file_put(nf);
		pos++;
	}
}

/* The netlink object type of a handle table entry. */
static u32 ndk_uobj_nl_type(const struct ndk_uobj *u)
{
	return ndk_uobj_descs[u->type].nl_type;
}

/*
 * Under RCU: may @viewer see @nf (of @pid, if set)?  A viewer is
 * an address space, not a thread group: a thread group keeps its pid
 * across execve(), and a dump requested before the exec of a setuid
 * program must not show that program's files (netlink.md).
 */
static bool ndk_files_visible(struct ndk_file *nf, struct pid *pid,
			      const struct mm_struct *viewer)
{
	if (pid && nf->tgid != pid)
		return false;
	return !viewer || nf->mm == viewer;
}

/* @nf's owner, as current's pid namespace sees it (a reference held). */
static void ndk_file_owner(struct ndk_file *nf, struct ndk_file_owner *o)
{
	o->id = nf->id;
	o->pid = pid_vnr(nf->tgid);
	memcpy(o->comm, nf->comm, sizeof(o->comm));
}

/* A busy file's lock is tried every 10 ms for a second. */
#define NDK_FILES_BUSY_MS	10

/*
 * After a walk of the registry that returned @ret: -EBUSY to walk again
 * (a file's lock was busy; slept), else what the reader gets.  *@until
 * is 0 before the first busy file.
 */
static int ndk_files_backoff(int ret, unsigned long *until)
{
	if (ret != -EBUSY)
		return ret;
	if (!*until)
		*until = jiffies + HZ;
	else if (time_after(jiffies, *until))
		return -EAGAIN;
	if (msleep_interruptible(NDK_FILES_BUSY_MS))
		return -EINTR;
	return -EBUSY;
}

/*
 * The first file at or after *@pos that the caller may see (as for
 * ndk_files_next()), with a reference (ndk_file_put() it), its id in
 * *@pos; NULL when none is left.
 */
static struct ndk_file *ndk_files_get(unsigned long *pos, struct pid *pid,
				      const struct mm_struct *viewer)
{
	return ndk_files_find(pos, pid, viewer, ndk_files_visible);
}

/* @nf (a reference held) summarised: 1, or -EBUSY when its lock is. */
static int ndk_file_summarize(struct ndk_file *nf, struct ndk_file_summary *s)
{
	struct ndk_uobj *u;
	unsigned long handle;

	memset(s, 0, sizeof(*s));
	ndk_file_owner(nf, &s->owner);
	if (!mutex_trylock(&nf->lock))
		return -EBUSY;
	xa_for_each(&nf->handles, handle, u) {
		s->counts[ndk_uobj_nl_type(u)]++;
		if (ndk_uobj_holds_pages(u)) {
			s->bytes += ndk_uobj_umem(u)->length;
			s->pages += ndk_uobj_umem(u)->npages;
		}
	}
	mutex_unlock(&nf->lock);
	if (nf->counters) {
		s->hits = READ_ONCE(nf->counters->hits);
		s->misses = READ_ONCE(nf->counters->misses);
	}
	s->invalidations = atomic64_read(&nf->ucache.invalidations);
	return 1;
}

/**
 * ndk_files_next() - the next file a caller may see, summarised
 * @pos:   in: the first file id to look at; out: the id of the file found
 * @pid:   only files of this process (a get_pid() reference), or NULL
 * @viewer: the address space whose files the caller may see (its own:
 *         the requester's at the dump's start, not a later reader's, and
 *         not what the requester execs later), or NULL for every
 *         process's (CAP_NET_ADMIN)
 * @s:     out: the file's summary
 *
 * Context: process context (current is the caller), may sleep.
 * Return: 1 when a file was found, 0 when none is left, %-EAGAIN when
 * the next file's commands held its lock for a second, %-EINTR.
 */
int ndk_files_next(unsigned long *pos, struct pid *pid,
		   const struct mm_struct *viewer, struct ndk_file_summary *s)
{
	unsigned long until = 0;
	struct ndk_file *nf;
	int ret;

	do {
		nf = ndk_files_get(pos, pid, viewer);
		if (!nf)
			return 0;
		ret = ndk_file_summarize(nf, s);
		ndk_file_put(nf);
	} while ((ret = ndk_files_backoff(ret, &until)) == -EBUSY);
	return ret;
}

/* Under @nf->lock: @u as readers see it. */
static void ndk_uobj_summarize(struct ndk_uobj *u, struct ndk_uobj_summary *o)
{
	struct ndk_uobj *root = ndk_uobj_root(u);

	memset(o, 0, sizeof(*o));
	o->type = ndk_uobj_nl_type(u);
	o->handle = u->handle;
	o->parent = u->parent ? u->parent->handle : 0;
	if (root->adapter) {
		o->adapter = true;
		o->adapter_id = root->adapter->dev->id;
		strscpy(o->adapter_name, root->adapter->dev->name,
			sizeof(o->adapter_name));
	}
	if (ndk_uobj_holds_pages(u)) {
		o->mem = true;
		o->address = ndk_uobj_umem(u)->address;
		o->length = ndk_uobj_umem(u)->length;
		o->pages = ndk_uobj_umem(u)->npages;
		o->flags = u->mem.flags;
	}
	if (u->type == NDK_UOBJ_MEM) {
		o->has_refs = true;
		o->refs = u->mem.refs;
	}
}

/*
 * The first object of @type in @nf (a reference held) at or after handle
 * *@handle, summarised, its handle in *@handle: 1; 0 when there is none;
 * -EBUSY when the file's lock is.
 */
static int ndk_file_find_uobj(struct ndk_file *nf, unsigned long *handle,
			      u32 type, struct ndk_file_owner *owner,
			      struct ndk_uobj_summary *o)
{
	struct ndk_uobj *u;
	unsigned long h;
	int found = 0;

	if (!mutex_trylock(&nf->lock))
		return -EBUSY;
	xa_for_each_start(&nf->handles, h, u, *handle) {
		if (ndk_uobj_nl_type(u) != type)
			continue;
		ndk_file_owner(nf, owner);
		ndk_uobj_summarize(u, o);
		*handle = h;
		found = 1;
		break;
	}
	mutex_unlock(&nf->lock);
	return found;
}

/**
 * ndk_file_next_uobj() - the next object of a type in the files a caller
 * may see, summarised
 * @file:   in: the first file id to look at; out: the file of the object
 * @handle: in: the first handle to look at in @file (in later files, 0);
 *          out: the object's handle
 * @pid:    as for ndk_files_next()
 * @viewer: as for ndk_files_next()
 * @type:   NDK_NL_OBJ_* of the objects wanted
 * @owner:  out: the object's file's owner
 * @o:      out: the object
 *
 * Context: process context (current is the caller), may sleep.
 * Return: 1 when an object was found, 0 when none is left, %-EAGAIN when
 * a file's commands held its lock for a second, %-EINTR.
 */
int ndk_file_next_uobj(unsigned long *file, unsigned long *handle,
		       struct pid *pid, const struct mm_struct *viewer,
		       u32 type, struct ndk_file_owner *owner,
		       struct ndk_uobj_summary *o)
{
	unsigned long until = 0, want;
	struct ndk_file *nf;
	int ret;

	for (;;) {
		want = *file;
		nf = ndk_files_get(file, pid, viewer);
		if (!nf)
			return 0;
		if (*file != want)
			*handle = 0;	/* a later file: from its first handle */
		ret = ndk_file_find_uobj(nf, handle, type, owner, o);
		ndk_file_put(nf);
		if (!ret) {	/* none left in this file */
			(*file)++;
			*handle = 0;
			continue;
		}
		ret = ndk_files_backoff(ret, &until);
		if (ret != -EBUSY)
			return ret;
	}
}
