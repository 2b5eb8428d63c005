// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: MDL-like scatter lists (see <ndk/ndk_mdl.h>).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <ndk/ndk_mdl.h>

/**
 * ndk_mdl_alloc() - allocate one MDL element with an empty page array
 * @va:         virtual address of the first byte (only an index)
 * @byte_count: bytes described, > 0
 * @gfp:        allocation flags
 *
 * The caller fills ndk_mdl_pages() with mdl->page_count pages.
 *
 * Context: as @gfp allows.
 * Return: the element, or NULL on a zero count, an address range that
 * wraps, or no memory.
 */
struct ndk_mdl *ndk_mdl_alloc(u64 va, u32 byte_count, gfp_t gfp)
{
	struct ndk_mdl *mdl;
	u64 end;
	u32 pages;

	if (!byte_count || check_add_overflow(va, (u64)byte_count, &end))
		return NULL;
	pages = (PAGE_ALIGN(end) - (va & PAGE_MASK)) >> PAGE_SHIFT;
	mdl = kzalloc(struct_size(mdl, pages, pages), gfp);
	if (!mdl)
		return NULL;
	mdl->start_va = va & PAGE_MASK;
	mdl->byte_offset = offset_in_page(va);
	mdl->byte_count = byte_count;
	mdl->page_count = pages;
	return mdl;
}
EXPORT_SYMBOL_GPL(ndk_mdl_alloc);

/**
 * ndk_mdl_from_pages() - an MDL element over pages the caller holds
 * @pages:      the pages spanned by [@va, @va + @byte_count)
 * @va:         virtual address of the first byte (only an index)
 * @byte_count: bytes described
 * @gfp:        allocation flags
 *
 * The caller keeps the pages alive (pinned) for as long as the MDL is
 * registered; the MDL does not take page references.
 *
 * Context: as @gfp allows.
 * Return: the element, or NULL.
 */
struct ndk_mdl *ndk_mdl_from_pages(struct page **pages, u64 va,
				   u32 byte_count, gfp_t gfp)
{
	struct ndk_mdl *mdl = ndk_mdl_alloc(va, byte_count, gfp);

	if (mdl)
		memcpy(mdl->pages, pages, mdl->page_count * sizeof(*pages));
	return mdl;
}
EXPORT_SYMBOL_GPL(ndk_mdl_from_pages);

/**
 * ndk_mdl_from_buffer() - an MDL element over a kernel buffer
 * @buf:        kmalloc'ed, page-allocator or vmalloc'ed memory
 * @byte_count: bytes described
 * @gfp:        allocation flags
 *
 * The virtual address of the MDL is @buf's address.
 *
 * Context: as @gfp allows.
 * Return: the element, or NULL.
 */
struct ndk_mdl *ndk_mdl_from_buffer(const void *buf, u32 byte_count,
				    gfp_t gfp)
{
	struct ndk_mdl *mdl = ndk_mdl_alloc((uintptr_t)buf, byte_count, gfp);
	const u8 *p;
	u32 i;

	if (!mdl)
		return NULL;
	p = (const u8 *)(uintptr_t)mdl->start_va;
	for (i = 0; i < mdl->page_count; i++, p += PAGE_SIZE)
		mdl->pages[i] = is_vmalloc_addr(p) ? vmalloc_to_page(p) :
						     virt_to_page(p);
	return mdl;
}
EXPORT_SYMBOL_GPL(ndk_mdl_from_buffer);

/**
 * ndk_mdl_free_chain() - free every element of a chain (not the pages)
 * @chain: the first element, or NULL
 *
 * Context: any.
 */
void ndk_mdl_free_chain(struct ndk_mdl *chain)
{
	while (chain) {
		struct ndk_mdl *next = chain->next;

		kfree(chain);
		chain = next;
	}
}
EXPORT_SYMBOL_GPL(ndk_mdl_free_chain);

/**
 * ndk_mdl_check_contiguous() - is [VA, VA + @length) virtually contiguous?
 * @chain:      the chain; VA is ndk_mdl_virtual_address(@chain)
 * @length:     bytes from VA that are to be registered, > 0
 * @page_count: if not NULL, receives the pages those bytes span
 *
 * Only the elements covering the first @length bytes are looked at.  They
 * are virtually contiguous when each element starts where the previous
 * one ended.  Elements may join inside a page (an element ending at byte
 * 100 of a page, the next starting there): both then describe that page,
 * which must be the same page in both, and the registration holds it once
 * (it is counted once in @page_count and visited once by
 * ndk_mdl_walk_pages()).
 *
 * Context: any.
 * Return: 0; %-EINVAL if not contiguous, an element is malformed or two
 * elements joining inside a page name different pages for it; %-ERANGE if
 * @length is 0 or beyond what the chain describes.
 */
int ndk_mdl_check_contiguous(const struct ndk_mdl *chain, u64 length,
			     u32 *page_count)
{
	const struct ndk_mdl *mdl, *prev = NULL;
	u64 remaining = length, next_va = 0;
	u64 pages;

	if (!chain || !length)
		return -ERANGE;
	for (mdl = chain; mdl; prev = mdl, mdl = mdl->next) {
		u64 used = min_t(u64, remaining, mdl->byte_count);

		if (!mdl->byte_count || mdl->byte_offset >= PAGE_SIZE ||
		    offset_in_page(mdl->start_va))
			return -EINVAL;
		if (prev) {
			if (ndk_mdl_virtual_address(mdl) != next_va)
				return -EINVAL;
			/* Joined inside a page: the same page on both sides. */
			if (mdl->byte_offset &&
			    mdl->pages[0] != prev->pages[prev->page_count - 1])
				return -EINVAL;
		}
		remaining -= used;
		if (!remaining || !mdl->next)
			break;
		next_va = ndk_mdl_virtual_address(mdl) + mdl->byte_count;
	}
	if (remaining)
		return -ERANGE;
	if (page_count) {
		pages = (ndk_mdl_byte_offset(chain) + length - 1) / PAGE_SIZE + 1;
		if (pages > U32_MAX)
			return -ERANGE;
		*page_count = pages;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(ndk_mdl_check_contiguous);

/**
 * ndk_mdl_walk_pages() - visit the pages of the first @length bytes
 * @chain:   a chain that ndk_mdl_check_contiguous() accepted for @length
 * @length:  bytes from the chain's virtual address
 * @fn:      called once per page, in address order, with the offset and
 *           length used in it (a page shared by two elements joining
 *           inside it is one call); a non-zero return stops the walk
 * @context: passed to @fn
 *
 * Context: any (as @fn allows).
 * Return: 0, or the first non-zero return of @fn.
 */
int ndk_mdl_walk_pages(const struct ndk_mdl *chain, u64 length,
		       ndk_mdl_page_fn fn, void *context)
{
	return __ndk_mdl_walk_pages(chain, length, fn, context);
}
EXPORT_SYMBOL_GPL(ndk_mdl_walk_pages);
