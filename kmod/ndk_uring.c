// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: the shared rings of the user path (NDK_U_FEATURE_RINGS).
 *
 * A ring is memory the kernel and the opening process share: pages
 * allocated here (charged to the caller), mapped in the kernel with
 * vmap() and in the process with mmap() of /dev/ndk at the offset
 * (handle << NDK_U_MMAP_RING_SHIFT).  The ring is reference-counted: its
 * object's entry holds one reference, a lookup by handle (mmap, doorbell)
 * another while it runs; the pages of a mapping live on with the mapping.
 *
 * Completion ring (a CQ created with NDK_U_CQ_CREATE_F_RING): the ring is
 * the CQ's sink (ndk_cq_set_sink()).  The CQ's completion handler writes
 * each translated result and publishes the tail; user space reads up to
 * the tail with no system call and publishes its head.  The kernel keeps
 * its own tail and the last head it accepted, and reads the head once per
 * use: a head outside [accepted, tail] is ignored.  Until the head moves,
 * the CQ counts the results the ring holds as reserved, so a reader that
 * keeps up never lets the ring overflow.
 *
 * Submission ring (a QP created with NDK_U_QP_CREATE_F_RING): an array of
 * struct ndk_u_qp_post that user space fills; NDK_IOCTL_QP_DOORBELL names
 * a range of it.  The kernel copies each descriptor once and posts the
 * copy through the QP_POST handler, so a descriptor rewritten while the
 * doorbell runs is checked and posted as one consistent copy or refused.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ndk_file.h"

/**
 * ndk_upages_alloc() - zeroed pages to share with the opener's process
 * @npages: how many, > 0
 *
 * The pages and their bookkeeping are charged to the caller, and a cgroup
 * at its limit gets an error, not the OOM killer.  vmalloc_user() would be
 * simpler, but charges nothing (6.1 offers it no gfp flags).
 *
 * Context: process context, may sleep.
 * Return: the pages, mapped for the kernel at ->va; NULL without memory.
 */
struct ndk_upages *ndk_upages_alloc(u32 npages)
{
	struct ndk_upages *p;
	u32 i;

	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return NULL;
	p->pages = kvcalloc(npages, sizeof(*p->pages), NDK_GFP_ARRAY);
	if (!p->pages)
		goto err_free;
	for (; p->npages < npages; p->npages++) {
		p->pages[p->npages] = alloc_page(NDK_GFP_ARRAY | __GFP_ZERO);
		if (!p->pages[p->npages])
			goto err_free;
	}
	p->va = vmap(p->pages, npages, VM_MAP, PAGE_KERNEL);
	if (p->va)
		return p;
err_free:
	for (i = 0; i < p->npages; i++)
		put_page(p->pages[i]);
	kvfree(p->pages);
	kfree(p);
	return NULL;
}

/**
 * ndk_upages_free() - free what ndk_upages_alloc() gave
 * @p: the pages, or NULL; mappings into processes keep their own page
 *     references
 *
 * Context: process context.
 */
void ndk_upages_free(struct ndk_upages *p)
{
	u32 i;

	if (!p)
		return;
	vunmap(p->va);
	for (i = 0; i < p->npages; i++)
		put_page(p->pages[i]);
	kvfree(p->pages);
	kfree(p);
}

/**
 * ndk_upages_mmap() - map the first pages of @p into a process
 * @p:   the pages
 * @vma: the new mapping, at most as long as @p, its flags set by the
 *       caller; never executable
 *
 * The opener's alone: a forked child gets no copy (VM_DONTCOPY), for it
 * could forge the results of a completion ring, rewrite the descriptors
 * of a submission ring before the doorbell, or read the counters.  Only
 * the opener can undo that (madvise(MADV_DOFORK)), sharing them with its
 * children by its own choice.
 *
 * Context: process context, mmap lock held for writing.
 * Return: 0; what vm_map_pages_zero() returns (-ENXIO: too long).
 */
int ndk_upages_mmap(struct ndk_upages *p, struct vm_area_struct *vma)
{
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_flags |= VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
	/* The mapping takes its own references to the pages. */
	return vm_map_pages_zero(vma, p->pages, p->npages);
}

/**
 * struct ndk_uring - a ring shared with the process that opened the file
 * @ref:     the entry's reference and those of running lookups
 * @mem:     its pages
 * @va:      their kernel mapping (@mem->va)
 * @entries: entries (results or descriptors), a power of two
 * @sink:    completion ring: the CQ's sink
 * @tail:    completion ring: results written (the kernel's own count)
 * @seen:    completion ring: the last head accepted
 */
struct ndk_uring {
	struct kref ref;
	struct ndk_upages *mem;
	void *va;
	u32 entries;
	struct ndk_cq_sink sink;
	u32 tail;
	u32 seen;
};

static void ndk_uring_release(struct kref *ref)
{
	struct ndk_uring *r = container_of(ref, struct ndk_uring, ref);

	ndk_upages_free(r->mem);
	kfree(r);
}

/**
 * ndk_uring_put() - drop a reference to a ring
 * @r: the ring, or NULL
 *
 * Context: process context.
 */
void ndk_uring_put(struct ndk_uring *r)
{
	if (r)
		kref_put(&r->ref, ndk_uring_release);
}

/* A zeroed ring of @entries entries of @size bytes after @head bytes. */
static struct ndk_uring *ndk_uring_alloc(u32 entries, size_t size,
					 size_t head)
{
	struct ndk_uring *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return NULL;
	kref_init(&r->ref);
	r->entries = entries;
	r->mem = ndk_upages_alloc(PAGE_ALIGN(head + entries * size) >>
				  PAGE_SHIFT);
	if (!r->mem) {
		kfree(r);
		return NULL;
	}
	r->va = r->mem->va;
	return r;
}

/*
 * The ring of entry @handle, referenced, or NULL: @types, BIT() of
 * NDK_UOBJ_CQ, NDK_UOBJ_QP or both, says what the entry may be.
 */
static struct ndk_uring *ndk_uring_get(struct ndk_file *nf, u32 handle,
				       unsigned int types)
{
	struct ndk_uring *r = NULL;
	struct ndk_uobj *u;

	/* An entry leaves the table (xa_erase()) before its ring goes. */
	xa_lock(&nf->handles);
	u = handle ? xa_load(&nf->handles, handle) : NULL;
	if (u && (types & BIT(u->type)))
		r = u->type == NDK_UOBJ_CQ ? u->cq.ring : u->qp.ring;
	if (r)
		kref_get(&r->ref);
	xa_unlock(&nf->handles);
	return r;
}

/**
 * ndk_uring_describe() - the ring's mmap() offset, size and entries
 * @r:       the ring
 * @handle:  its entry's handle
 * @offset:  receives the mmap() offset
 * @size:    receives the bytes to map
 * @entries: receives the entries
 *
 * Context: any.
 */
void ndk_uring_describe(const struct ndk_uring *r, u32 handle, u64 *offset,
			u32 *size, u32 *entries)
{
	*offset = (u64)handle << NDK_U_MMAP_RING_SHIFT;
	*size = r->mem->npages << PAGE_SHIFT;
	*entries = r->entries;
}

/**
 * ndk_uring_mmap() - map a CQ's or QP's ring
 * @nf:  the file; the caller checked the process opened it
 * @vma: the new mapping: MAP_SHARED, the whole ring, at the offset
 *       ndk_uring_describe() gave
 *
 * Context: process context, mmap lock held for writing.
 * Return: 0; %-EINVAL (no ring at that offset, another size, not
 * MAP_SHARED); %-EPERM (PROT_EXEC); what vm_map_pages_zero() returns.
 */
int ndk_uring_mmap(struct ndk_file *nf, struct vm_area_struct *vma)
{
	unsigned long shift = NDK_U_MMAP_RING_SHIFT - PAGE_SHIFT;
	unsigned long pgoff = vma->vm_pgoff;
	struct ndk_uring *r;
	int ret;

	if (pgoff & ((1UL << shift) - 1) || pgoff >> shift > U32_MAX)
		return -EINVAL;
	r = ndk_uring_get(nf, pgoff >> shift,
			  BIT(NDK_UOBJ_CQ) | BIT(NDK_UOBJ_QP));
	if (!r)
		return -EINVAL;
	ret = -EINVAL;
	if (vma_pages(vma) != r->mem->npages ||
	    !(vma->vm_flags & VM_SHARED))
		goto out_put;
	ret = -EPERM;
	if (vma->vm_flags & VM_EXEC)
		goto out_put;
	ret = ndk_upages_mmap(r->mem, vma);
out_put:
	ndk_uring_put(r);
	return ret;
}

/**
 * ndk_uv_result() - the user ABI's form of a result
 * @out: receives it
 * @res: the result
 *
 * Context: any.
 */
void ndk_uv_result(struct ndk_u_result *out, const struct ndk_result_ex *res)
{
	out->request_context = (uintptr_t)res->request_context;
	out->qp_context = (uintptr_t)res->qp_context;
	out->status = res->status;
	out->bytes_transferred = res->bytes_transferred;
	out->type = res->type;
	out->provider_error_code = res->provider_error_code;
	out->type_specific = res->type_specific_completion_output;
}

static bool ndk_uring_cq_push(struct ndk_cq_sink *sink,
			      const struct ndk_result_ex *res)
{
	struct ndk_uring *r = container_of(sink, struct ndk_uring, sink);
	struct ndk_u_cq_ring *hdr = r->va;
	struct ndk_u_result *slots = r->va + NDK_U_CQ_RING_RESULTS;

	if (r->tail - r->seen >= r->entries)
		return false;
	ndk_uv_result(&slots[r->tail & (r->entries - 1)], res);
	r->tail++;
	/* The result is written before the reader can see the new tail. */
	smp_store_release(&hdr->tail, r->tail);
	return true;
}

static u32 ndk_uring_cq_consumed(struct ndk_cq_sink *sink)
{
	struct ndk_uring *r = container_of(sink, struct ndk_uring, sink);
	struct ndk_u_cq_ring *hdr = r->va;
	/* The reader's loads of the results come before its head store. */
	u32 head = smp_load_acquire(&hdr->head);
	u32 n = head - r->seen;

	if (n > r->tail - r->seen)
		return 0;	/* not a head the reader can have: ignored */
	r->seen = head;
	return n;
}

/**
 * ndk_uring_cq_attach() - give a new CQ its completion ring
 * @u:     the CQ's entry, its CQ created, no QP attached yet
 * @depth: the CQ's depth
 *
 * Context: process context, may sleep.
 * Return: 0; %-ENOMEM.
 */
int ndk_uring_cq_attach(struct ndk_uobj *u, u32 depth)
{
	struct ndk_uring *r;

	r = ndk_uring_alloc(roundup_pow_of_two(depth),
			    sizeof(struct ndk_u_result), NDK_U_CQ_RING_RESULTS);
	if (!r)
		return -ENOMEM;
	r->sink.push = ndk_uring_cq_push;
	r->sink.consumed = ndk_uring_cq_consumed;
	u->cq.ring = r;
	ndk_cq_set_sink(u->cq.cq, &r->sink);
	return 0;
}

/**
 * ndk_uring_cq_detach() - take a CQ's completion ring away
 * @u: the CQ's entry, out of the table
 *
 * The CQ writes to the ring no more once this returns.
 *
 * Context: process context.
 */
void ndk_uring_cq_detach(struct ndk_uobj *u)
{
	if (!u->cq.ring)
		return;
	ndk_cq_set_sink(u->cq.cq, NULL);
	ndk_uring_put(u->cq.ring);
	u->cq.ring = NULL;
}

/**
 * ndk_uring_qp_alloc() - a submission ring for a new QP
 * @u: the QP's entry, not published yet, its QP created
 *
 * The ring holds as many requests as the QP's two queues together, as
 * the QP took them (a depth of 0 is one).
 *
 * Context: process context, may sleep.
 * Return: 0; %-ENOMEM.
 */
int ndk_uring_qp_alloc(struct ndk_uobj *u)
{
	u32 depth = ndk_qp_depths(u->qp.qp);

	u->qp.ring = ndk_uring_alloc(roundup_pow_of_two(depth),
				     sizeof(struct ndk_u_qp_post), 0);
	return u->qp.ring ? 0 : -ENOMEM;
}

/**
 * ndk_uv_qp_doorbell() - NDK_IOCTL_QP_DOORBELL
 * @file: the file
 * @arg:  struct ndk_u_qp_doorbell
 *
 * Posts the descriptors [@head, @head + @count) of the QP's submission
 * ring in order, each through ndk_uv_qp_submit() on a copy made once, and
 * stops at the first that fails (which first posts the DEFER chain, as
 * every failure does).
 *
 * Context: process context, may sleep.
 * Return: 0 (@count and @error set); %-EPERM (not the process that
 * opened the file); %-EINVAL (flags, reserved fields, @count 0 or beyond
 * the ring); %-ENOENT (not a QP with a ring).
 */
int ndk_uv_qp_doorbell(struct file *file, void *arg)
{
	struct ndk_u_qp_doorbell *d = arg;
	struct ndk_file *nf = file->private_data;
	struct ndk_u_qp_post *slots, p;
	struct ndk_uring *r;
	u32 i, idx;
	int ret = 0;

	if (current->mm != nf->mm)
		return -EPERM;
	if (d->flags || d->error || d->reserved || !d->count)
		return -EINVAL;
	r = ndk_uring_get(nf, d->handle, BIT(NDK_UOBJ_QP));
	if (!r)
		return -ENOENT;
	if (d->count > r->entries) {
		ndk_uring_put(r);
		return -EINVAL;
	}
	slots = r->va;
	for (i = 0; i < d->count; i++) {
		idx = (d->head + i) & (r->entries - 1);
		memcpy(&p, &slots[idx], sizeof(p));
		/* One naming another QP fails on this one. */
		ret = p.qp_handle == d->handle ? 0 : -EINVAL;
		p.qp_handle = d->handle;
		ret = ndk_uv_qp_submit(file, &p, ret);
		if (ret)
			break;
		if (p.token)
			WRITE_ONCE(slots[idx].token, p.token);
	}
	d->count = i;
	d->error = -ret;
	ndk_uring_put(r);
	return 0;
}
