/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MDL-like scatter lists for NDK memory registration.
 *
 * A Windows MDL describes a virtually contiguous buffer: a page-aligned
 * start address, a byte offset into the first page, a byte count, and the
 * physical pages (the PFN array that follows the MDL).  MDLs chain through
 * Next.  struct ndk_mdl mirrors that, with struct page pointers as the
 * "PFN array".  The virtual address is used by NDK as an index only (it
 * becomes the MR's I/O virtual address) and is never dereferenced by
 * ndk.ko; the pages are what the adapter reaches.
 *
 * Windows macro            Linux
 * MmGetMdlVirtualAddress   ndk_mdl_virtual_address()
 * MmGetMdlByteCount        ndk_mdl_byte_count()
 * MmGetMdlByteOffset       ndk_mdl_byte_offset()
 * MmGetMdlPfnArray         ndk_mdl_pages()
 * Mdl->Next                mdl->next
 */
#ifndef _NDK_NDK_MDL_H
#define _NDK_NDK_MDL_H

#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/types.h>

/**
 * struct ndk_mdl - one element of an MDL chain
 * @next:        the next element, or NULL
 * @start_va:    page-aligned virtual address of the first page (StartVa)
 * @byte_offset: offset of the buffer in the first page, < PAGE_SIZE
 * @byte_count:  bytes described, > 0
 * @page_count:  entries in @pages: pages spanned by offset + count
 * @flags:       NDK_MDL_READ_ONLY or 0
 * @pages:       the pages, in address order (the PFN array)
 *
 * An element marked NDK_MDL_READ_ONLY describes pages the device must never
 * write (the IoReadAccess of MmProbeAndLockPages): ndk_register_mr()
 * refuses every registration that would grant a write right over it.
 * /dev/ndk marks the pages it pins without FOLL_WRITE so; the allocators
 * below leave @flags 0 (writable).
 */
struct ndk_mdl {
	struct ndk_mdl *next;
	u64 start_va;
	u32 byte_offset;
	u32 byte_count;
	u32 page_count;
	u32 flags;
	struct page *pages[];
};

#define NDK_MDL_READ_ONLY	0x1

static inline u64 ndk_mdl_virtual_address(const struct ndk_mdl *mdl)
{
	return mdl->start_va + mdl->byte_offset;
}

static inline u32 ndk_mdl_byte_count(const struct ndk_mdl *mdl)
{
	return mdl->byte_count;
}

static inline u32 ndk_mdl_byte_offset(const struct ndk_mdl *mdl)
{
	return mdl->byte_offset;
}

static inline struct page **ndk_mdl_pages(struct ndk_mdl *mdl)
{
	return mdl->pages;
}

struct ndk_mdl *ndk_mdl_alloc(u64 va, u32 byte_count, gfp_t gfp);
struct ndk_mdl *ndk_mdl_from_pages(struct page **pages, u64 va,
				   u32 byte_count, gfp_t gfp);
struct ndk_mdl *ndk_mdl_from_buffer(const void *buf, u32 byte_count,
				    gfp_t gfp);
void ndk_mdl_free_chain(struct ndk_mdl *chain);
int ndk_mdl_check_contiguous(const struct ndk_mdl *chain, u64 length,
			     u32 *page_count);

/* Called for each page of the first bytes of a contiguous chain. */
typedef int (*ndk_mdl_page_fn)(struct page *page, u32 offset, u32 len,
			       void *context);
int ndk_mdl_walk_pages(const struct ndk_mdl *chain, u64 length,
		       ndk_mdl_page_fn fn, void *context);

/**
 * __ndk_mdl_walk_pages() - ndk_mdl_walk_pages(), inlined into its caller
 * @chain:   a chain that ndk_mdl_check_contiguous() accepted for @length
 * @length:  bytes from the chain's virtual address
 * @fn:      called once per page (see ndk_mdl_walk_pages()); a constant
 *           @fn is inlined too, with no indirect call per page
 * @context: passed to @fn
 *
 * Context: any (as @fn allows).
 * Return: 0, or the first non-zero return of @fn.
 */
static __always_inline int __ndk_mdl_walk_pages(const struct ndk_mdl *chain,
						u64 length, ndk_mdl_page_fn fn,
						void *context)
{
	const struct ndk_mdl *mdl;
	struct page *page = NULL;
	u64 remaining = length;
	u32 page_off = 0, page_len = 0;
	int ret;

	for (mdl = chain; mdl && remaining; mdl = mdl->next) {
		u64 left = min_t(u64, remaining, mdl->byte_count);
		u32 offset = mdl->byte_offset;
		u32 i;

		for (i = 0; left; i++) {
			u32 len = min_t(u64, PAGE_SIZE - offset, left);

			left -= len;
			remaining -= len;
			/* The rest of a page the previous element began. */
			if (page && page == mdl->pages[i] &&
			    offset == page_off + page_len) {
				page_len += len;
				offset = 0;
				continue;
			}
			if (page) {
				ret = fn(page, page_off, page_len, context);
				if (ret)
					return ret;
			}
			page = mdl->pages[i];
			page_off = offset;
			page_len = len;
			offset = 0;
		}
	}
	return page ? fn(page, page_off, page_len, context) : 0;
}

/* Non-zero when @pages[@j] is not the @j-th page after @page. */
static __always_inline unsigned long
__ndk_mdl_diff(struct page *const *pages, const struct page *page, u64 j)
{
	return (unsigned long)pages[j] ^ (unsigned long)nth_page(page, j);
}

/*
 * The first of @pages[1 ... @n] that does not follow @pages[0] physically
 * (nth_page()), or @n + 1: eight pages with one branch, then one by one.
 */
static __always_inline u64 __ndk_mdl_follow(struct page *const *pages, u64 n)
{
	const struct page *p = pages[0];
	u64 j;

	for (j = 1; j + 7 <= n; j += 8)
		if (__ndk_mdl_diff(pages, p, j) |
		    __ndk_mdl_diff(pages, p, j + 1) |
		    __ndk_mdl_diff(pages, p, j + 2) |
		    __ndk_mdl_diff(pages, p, j + 3) |
		    __ndk_mdl_diff(pages, p, j + 4) |
		    __ndk_mdl_diff(pages, p, j + 5) |
		    __ndk_mdl_diff(pages, p, j + 6) |
		    __ndk_mdl_diff(pages, p, j + 7))
			break;
	for (; j <= n; j++)
		if (__ndk_mdl_diff(pages, p, j))
			break;
	return j;
}

/**
 * __ndk_mdl_walk_runs() - visit the first @length bytes in physical runs
 * @chain:   a chain that ndk_mdl_check_contiguous() accepted for @length
 * @length:  bytes from the chain's virtual address
 * @fn:      called in address order with the first page of a run of
 *           physically consecutive pages of one element, the offset in it
 *           and the run's length (which may span many pages); a run never
 *           crosses elements, so the callback joins runs that continue
 *           each other (as at a join inside a page)
 * @context: passed to @fn
 *
 * Looks at each page pointer once, with no call per page: the walk of a
 * registration of huge pages costs a comparison per 4 KiB page.
 *
 * Context: any (as @fn allows).
 * Return: 0, or the first non-zero return of @fn.
 */
static __always_inline int __ndk_mdl_walk_runs(const struct ndk_mdl *chain,
					       u64 length, ndk_mdl_page_fn fn,
					       void *context)
{
	const struct ndk_mdl *mdl;
	u64 remaining = length;
	int ret;

	for (mdl = chain; mdl && remaining; mdl = mdl->next) {
		u64 left = min_t(u64, remaining, mdl->byte_count);
		u32 offset = mdl->byte_offset;
		u32 i = 0;

		remaining -= left;
		while (left) {
			struct page *page = mdl->pages[i];
			u32 len = min_t(u64, PAGE_SIZE - offset, left);
			u64 full, j;

			left -= len;
			/* The whole pages that follow @page physically. */
			full = left >> PAGE_SHIFT;
			j = __ndk_mdl_follow(mdl->pages + i, full);
			len += (j - 1) << PAGE_SHIFT;
			left -= (j - 1) << PAGE_SHIFT;
			i += j - 1;
			/* And the last, partial one. */
			if (left && left < PAGE_SIZE && j > full &&
			    mdl->pages[i + 1] == nth_page(page, j)) {
				len += left;
				left = 0;
				i++;
			}
			ret = fn(page, offset, len, context);
			if (ret)
				return ret;
			offset = 0;
			i++;
		}
	}
	return 0;
}

#endif /* _NDK_NDK_MDL_H */
