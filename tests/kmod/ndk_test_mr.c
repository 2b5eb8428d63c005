// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: MDL chains and memory registration (local behaviour).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

#include "ndk_test.h"

/* --- helpers ------------------------------------------------------------ */

struct ndk_t_ctx {
	struct ndk_adapter *adapter;
	struct ndk_pd *pd;
	struct ndk_adapter_info info;
};

static int ndk_t_setup(struct ndk_test_env *env, struct ndk_t_ctx *c)
{
	u32 size = sizeof(c->info);

	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &c->adapter))
		return -ENODEV;
	ndk_query_adapter_info(c->adapter, &c->info, &size);
	if (ndk_create_pd(c->adapter, NULL, NULL, &c->pd)) {
		ndk_close_adapter(c->adapter);
		return -ENOMEM;
	}
	return 0;
}

static void ndk_t_teardown(struct ndk_t_ctx *c)
{
	ndk_close_pd(c->pd, NULL, NULL);
	ndk_close_adapter(c->adapter);
}

/**
 * ndk_t_chain() - an MDL chain over a kernel buffer, cut at page boundaries
 * @buf:    the buffer (kmalloc'ed or vmalloc'ed)
 * @offset: where the chain starts in @buf
 * @len:    bytes the chain describes
 * @n:      elements; the last one takes whatever is left
 *
 * Return: the chain, or NULL when out of memory.
 */
struct ndk_mdl *ndk_t_chain(u8 *buf, u32 offset, u32 len, u32 n)
{
	struct ndk_mdl *head = NULL, **tail = &head;
	u32 done = 0, i;

	for (i = 0; i < n && done < len; i++) {
		u32 start = offset + done;
		u32 piece;
		struct ndk_mdl *m;

		if (i == n - 1)
			piece = len - done;
		else
			piece = min_t(u32, len - done,
				      PAGE_SIZE - offset_in_page(buf + start));
		m = ndk_mdl_from_buffer(buf + start, piece, GFP_KERNEL);
		if (!m) {
			ndk_mdl_free_chain(head);
			return NULL;
		}
		*tail = m;
		tail = &m->next;
		done += piece;
	}
	return head;
}

/* --- the contiguity check ------------------------------------------------ */

struct ndk_t_elem {
	u64 va;
	u32 count;
};

struct ndk_t_contig_case {
	const char *what;
	struct ndk_t_elem e[3];
	u64 length;
	int want;
	u32 pages;
};

#define P PAGE_SIZE
#define BASE 0x7f0000000000ULL

static const struct ndk_t_contig_case ndk_t_contig_cases[] = {
	{ "one element, offset", { { BASE + 100, 1000 } }, 1000, 0, 1 },
	{ "one element crossing a page", { { BASE + P - 10, 20 } }, 20, 0, 2 },
	{ "prefix of one element", { { BASE + 8, 3 * P } }, 1, 0, 1 },
	{ "length beyond the chain", { { BASE, P } }, P + 1, -ERANGE, 0 },
	{ "length 0", { { BASE, P } }, 0, -ERANGE, 0 },
	{ "two follow on", { { BASE + 100, P - 100 }, { BASE + P, 50 } },
	  P - 50, 0, 2 },
	{ "last element too short", { { BASE + 100, P - 100 }, { BASE + P, 50 } },
	  P, -ERANGE, 0 },
	{ "second starts mid-page", { { BASE, P }, { BASE + P + 8, 8 } },
	  P + 8, -EINVAL, 0 },
	{ "first ends mid-page", { { BASE, 100 }, { BASE + P, P } },
	  P + 100, -EINVAL, 0 },
	{ "gap between elements", { { BASE, P }, { BASE + 2 * P, P } },
	  2 * P, -EINVAL, 0 },
	{ "bad tail ignored when not reached", { { BASE, 100 }, { BASE + 9 * P + 3, 9 } },
	  100, 0, 1 },
	{ "three elements", { { BASE + P - 1, 1 }, { BASE + P, 2 * P }, { BASE + 3 * P, 1 } },
	  2 * P + 2, 0, 4 },
	{ "zero-count element", { { BASE, P }, { BASE + P, 0 } }, P + 1, -EINVAL, 0 },
	{ "join inside a page", { { BASE + 100, 200 }, { BASE + 300, P } },
	  P + 200, 0, 2 },
	{ "three joined in one page", { { BASE, 10 }, { BASE + 10, 20 }, { BASE + 30, P } },
	  P + 30, 0, 2 },
	{ "join inside a page, then a gap", { { BASE + 100, 200 }, { BASE + 301, P } },
	  P + 200, -EINVAL, 0 },
};

static int ndk_t_mdl_contiguity(struct ndk_test_env *env)
{
	int i, j;

	for (i = 0; i < ARRAY_SIZE(ndk_t_contig_cases); i++) {
		const struct ndk_t_contig_case *c = &ndk_t_contig_cases[i];
		struct ndk_mdl *head = NULL, **tail = &head;
		u32 pages = 0;
		int got;

		for (j = 0; j < ARRAY_SIZE(c->e) && (c->e[j].va || c->e[j].count); j++) {
			struct ndk_mdl *m;

			/* ndk_mdl_alloc refuses count 0; build that one by hand */
			m = ndk_mdl_alloc(c->e[j].va, c->e[j].count ?: 1, GFP_KERNEL);
			if (!m)
				return NDK_TEST_FAIL;
			m->byte_count = c->e[j].count;
			*tail = m;
			tail = &m->next;
		}
		got = ndk_mdl_check_contiguous(head, c->length, &pages);
		ndk_test_log("%-36s -> %d pages %u", c->what, got, pages);
		NDK_T_CHECK(env, got == c->want);
		if (!c->want)
			NDK_T_CHECK(env, pages == c->pages);
		ndk_mdl_free_chain(head);
	}
	/* The MmGetMdl* equivalents. */
	{
		struct ndk_mdl *m = ndk_mdl_alloc(BASE + 123, 5000, GFP_KERNEL);

		if (!m)
			return NDK_TEST_FAIL;
		NDK_T_CHECK(env, ndk_mdl_virtual_address(m) == BASE + 123);
		NDK_T_CHECK(env, ndk_mdl_byte_offset(m) == 123);
		NDK_T_CHECK(env, ndk_mdl_byte_count(m) == 5000);
		NDK_T_CHECK(env, m->page_count == 2);
		NDK_T_CHECK(env, ndk_mdl_pages(m) == m->pages);
		ndk_mdl_free_chain(m);
	}
	NDK_T_CHECK(env, !ndk_mdl_alloc(BASE, 0, GFP_KERNEL));
	NDK_T_CHECK(env, !ndk_mdl_alloc(U64_MAX - 10, 100, GFP_KERNEL));
	return NDK_TEST_PASS;
}

/* --- physical runs -------------------------------------------------------- */

#define RUNS_PAGES	70
#define RUNS_MAX	4

struct ndk_t_runs {
	u32 n;
	struct page *page[RUNS_MAX];
	u32 offset[RUNS_MAX];
	u32 len[RUNS_MAX];
};

static int ndk_t_runs_add(struct page *page, u32 offset, u32 len, void *ctx)
{
	struct ndk_t_runs *r = ctx;

	if (r->n == RUNS_MAX)
		return -E2BIG;
	r->page[r->n] = page;
	r->offset[r->n] = offset;
	r->len[r->n++] = len;
	return 0;
}

static void ndk_t_runs_want(struct ndk_t_runs *r, struct page *page,
			    u32 offset, u32 len)
{
	ndk_t_runs_add(page, offset, len, r);
}

/*
 * mdl-runs: __ndk_mdl_walk_runs() over one element of 70 pages (100 bytes
 * into the first, 50 bytes short of the end of the last) whose pages are
 * physically consecutive except one page put in at every position in turn
 * (and none): the runs are exactly the pages before it, it, and those
 * after it.  The walk compares eight pages per branch, so a break at each
 * offset inside and across those blocks is covered.
 */
static int ndk_t_mdl_runs(struct ndk_test_env *env)
{
	u32 len = RUNS_PAGES * PAGE_SIZE - 150, b, tail;
	struct page *base, *other;
	struct ndk_t_runs got, want;
	struct ndk_mdl *m;
	int i;

	base = alloc_pages(GFP_KERNEL, 7);
	other = alloc_page(GFP_KERNEL);
	m = ndk_mdl_alloc(BASE + 100, len, GFP_KERNEL);
	if (!base || !other || !m || m->page_count != RUNS_PAGES)
		goto out;
	for (b = 0; b <= RUNS_PAGES; b++) {
		for (i = 0; i < RUNS_PAGES; i++)
			m->pages[i] = nth_page(base, i);
		memset(&want, 0, sizeof(want));
		if (b == 0 || b == RUNS_PAGES) {
			/* No break (b == RUNS_PAGES), or at the first page. */
			if (b == 0)
				m->pages[0] = other;
			ndk_t_runs_want(&want, m->pages[0], 100,
					b ? len : PAGE_SIZE - 100);
			if (!b)
				ndk_t_runs_want(&want, nth_page(base, 1), 0,
						len - (PAGE_SIZE - 100));
		} else {
			m->pages[b] = other;
			ndk_t_runs_want(&want, base, 100, b * PAGE_SIZE - 100);
			tail = len - (b * PAGE_SIZE - 100);
			ndk_t_runs_want(&want, other, 0,
					min_t(u32, tail, PAGE_SIZE));
			if (tail > PAGE_SIZE)
				ndk_t_runs_want(&want, nth_page(base, b + 1), 0,
						tail - PAGE_SIZE);
		}
		memset(&got, 0, sizeof(got));
		NDK_T_CHECK(env, !__ndk_mdl_walk_runs(m, len, ndk_t_runs_add,
						      &got));
		if (memcmp(&got, &want, sizeof(got))) {
			ndk_test_log("break at page %u: %u runs, want %u", b,
				     got.n, want.n);
			NDK_T_CHECK(env, false);
		}
	}
	ndk_test_log("%u break positions in %u pages", RUNS_PAGES + 1,
		     RUNS_PAGES);
out:
	NDK_T_CHECK(env, base && other && m);
	ndk_mdl_free_chain(m);
	if (other)
		__free_page(other);
	if (base)
		__free_pages(base, 7);
	return NDK_TEST_PASS;
}

/* --- registration -------------------------------------------------------- */

/* Register @len bytes at @offset of @buf in @n elements; check tokens. */
static void ndk_t_register_once(struct ndk_test_env *env, struct ndk_t_ctx *c,
				u8 *buf, u32 offset, u32 len, u32 n, u32 flags)
{
	struct ndk_mdl *chain = ndk_t_chain(buf, offset, len, n);
	struct ndk_mr *mr;
	u32 key1, key2;

	NDK_T_CHECK(env, chain);
	if (!chain)
		return;
	NDK_T_STATUS(env, ndk_create_mr(c->pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, len, flags, NULL, NULL),
		     STATUS_SUCCESS);
	key1 = ndk_get_remote_token_from_mr(mr);
	NDK_T_CHECK(env, ndk_get_local_token_from_mr(mr) != 0);
	/* Registered twice without deregistering: refused, state kept. */
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, len, flags, NULL, NULL),
		     STATUS_INVALID_DEVICE_REQUEST);
	NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL),
		     STATUS_INVALID_DEVICE_REQUEST);
	/* Again: the key differs from every earlier one of this MR. */
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, len, flags, NULL, NULL),
		     STATUS_SUCCESS);
	key2 = ndk_get_remote_token_from_mr(mr);
	NDK_T_CHECK(env, key1 != key2);
	NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_close_mr(mr, NULL, NULL), STATUS_SUCCESS);
	ndk_mdl_free_chain(chain);
}

static int ndk_t_mr_register(struct ndk_test_env *env)
{
	static const u32 flags[] = { 0x0, 0x1, 0x2, 0x3, 0x5, 0x7, 0x8, 0xf };
	static const u32 elements[] = { 1, 2, 17, 255 };
	struct ndk_t_ctx c;
	u32 i, max_len;
	u8 *vbuf, *kbuf;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	max_len = c.info.max_registration_size;
	ndk_test_log("max_registration_size %u", max_len);
	NDK_T_CHECK(env, max_len >= 16 * PAGE_SIZE);
	vbuf = vzalloc(max_len + 2 * PAGE_SIZE);
	kbuf = kzalloc(4 * PAGE_SIZE, GFP_KERNEL);
	if (!vbuf || !kbuf)
		goto out;

	/* Every flag combination the seed lists, kmalloc'ed memory. */
	for (i = 0; i < ARRAY_SIZE(flags); i++)
		ndk_t_register_once(env, &c, kbuf, 100, 3 * PAGE_SIZE, 1, flags[i]);
	/* Chains of 1, 2, 17 and 255 elements at a random offset. */
	for (i = 0; i < ARRAY_SIZE(elements); i++) {
		u32 off = get_random_u32_below(PAGE_SIZE);
		u32 len = (elements[i] - 1) * PAGE_SIZE + 1 +
			  get_random_u32_below(PAGE_SIZE - off);

		ndk_test_log("chain of %u elements, offset %u, %u bytes",
			     elements[i], off, len);
		ndk_t_register_once(env, &c, vbuf, off, len, elements[i], 0x7);
	}
	/* From 1 byte to the adapter's limit, at the worst offset. */
	ndk_t_register_once(env, &c, vbuf, 17, 1, 1, 0x1);
	ndk_t_register_once(env, &c, vbuf, PAGE_SIZE - 1, max_len, 1, 0x7);
	ndk_t_register_once(env, &c, vbuf, 0, max_len, 3, 0x2);
out:
	vfree(vbuf);
	kfree(kbuf);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/*
 * Tokens never come back: NDK_T_KEY_CYCLES registrations of one MR, more
 * than the 256 values of a key byte, all have different remote tokens
 * (the pooled MR under them is replaced before its key byte wraps).
 */
#define NDK_T_KEY_CYCLES	600

static int ndk_t_mr_key_cycle(struct ndk_test_env *env)
{
	struct ndk_mdl *chain = NULL;
	struct ndk_mr *mr = NULL;
	struct ndk_t_ctx c;
	u32 *keys, i, j, dups = 0;
	u8 *buf;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	keys = kcalloc(NDK_T_KEY_CYCLES, sizeof(*keys), GFP_KERNEL);
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (buf)
		chain = ndk_mdl_from_buffer(buf, PAGE_SIZE, GFP_KERNEL);
	NDK_T_CHECK(env, keys && chain);
	if (!keys || !chain)
		goto out;
	NDK_T_STATUS(env, ndk_create_mr(c.pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	for (i = 0; mr && i < NDK_T_KEY_CYCLES && !env->failures; i++) {
		NDK_T_STATUS(env, ndk_register_mr(mr, chain, PAGE_SIZE, 0x7,
						  NULL, NULL), STATUS_SUCCESS);
		keys[i] = ndk_get_remote_token_from_mr(mr);
		NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL),
			     STATUS_SUCCESS);
	}
	for (i = 0; i < NDK_T_KEY_CYCLES; i++)
		for (j = i + 1; j < NDK_T_KEY_CYCLES; j++)
			dups += keys[i] && keys[i] == keys[j];
	ndk_test_log("mr-key-cycle: %d registrations, first token %#x, 257th %#x, %u repeated",
		     NDK_T_KEY_CYCLES, keys[0], keys[256], dups);
	NDK_T_CHECK(env, dups == 0);
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
out:
	ndk_mdl_free_chain(chain);
	kfree(buf);
	kfree(keys);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/* Every STATUS_INVALID_PARAMETER of NdkRegisterMr, each otherwise valid. */
static int ndk_t_mr_register_invalid(struct ndk_test_env *env)
{
	struct ndk_mdl *good, *gap, *zero;
	struct ndk_mr *mr, *frmr;
	struct ndk_t_ctx c;
	u8 *buf;
	u64 too_big;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	buf = vzalloc(8 * PAGE_SIZE);
	good = buf ? ndk_t_chain(buf, 0, 4 * PAGE_SIZE, 2) : NULL;
	gap = buf ? ndk_t_chain(buf, 0, PAGE_SIZE, 1) : NULL;
	if (gap)
		gap->next = ndk_mdl_from_buffer(buf + 2 * PAGE_SIZE, PAGE_SIZE,
						GFP_KERNEL);
	zero = ndk_mdl_from_pages(good ? good->pages : NULL, 0, PAGE_SIZE,
				  GFP_KERNEL);
	if (!good || !gap || !gap->next || !zero)
		goto out;
	NDK_T_STATUS(env, ndk_create_mr(c.pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mr(c.pd, true, NULL, NULL, &frmr),
		     STATUS_SUCCESS);

	NDK_T_STATUS(env, ndk_register_mr(mr, gap, 2 * PAGE_SIZE, 0x1, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_register_mr(mr, good, 4 * PAGE_SIZE + 1, 0x1,
					  NULL, NULL), STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_register_mr(mr, good, 0, 0x1, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_register_mr(mr, good, PAGE_SIZE, 0x10, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_register_mr(mr, good, PAGE_SIZE, 0x4, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_register_mr(mr, zero, PAGE_SIZE, 0x1, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_register_mr(frmr, good, PAGE_SIZE, 0x1, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_deregister_mr(frmr, NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	/*
	 * One page more than the adapter can map in one registration: every
	 * page the same one, so no larger page size helps.
	 */
	too_big = c.info.max_registration_size + 2 * PAGE_SIZE;
	{
		struct ndk_mdl *big = ndk_mdl_alloc(0x100000000ULL, too_big,
						    GFP_KERNEL);
		struct ndk_t_wait w;
		u32 i;

		for (i = 0; big && i < big->page_count; i++)
			big->pages[i] = vmalloc_to_page(buf);
		if (big) {
			NDK_T_STATUS(env, ndk_register_mr(mr, big, too_big, 0x1,
							  NULL, NULL),
				     STATUS_INVALID_PARAMETER);
			/* Measured before an asynchronous call returns. */
			ndk_t_wait_init(&w);
			NDK_T_STATUS(env, ndk_register_mr(mr, big, too_big, 0x1,
							  ndk_t_requested, &w),
				     STATUS_INVALID_PARAMETER);
			NDK_T_CHECK(env, atomic_read(&w.calls) == 0);
			ndk_mdl_free_chain(big);
		}
	}
	/* None of that reached the hardware: the MR still registers. */
	NDK_T_STATUS(env, ndk_register_mr(mr, good, 4 * PAGE_SIZE, 0x1, NULL, NULL),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL), STATUS_SUCCESS);
	ndk_close_mr(frmr, NULL, NULL);
	ndk_close_mr(mr, NULL, NULL);
out:
	ndk_mdl_free_chain(good);
	ndk_mdl_free_chain(gap);
	ndk_mdl_free_chain(zero);
	vfree(buf);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/*
 * The seeds' IRQL <= DISPATCH_LEVEL: NdkRegisterMr, NdkDeregisterMr and
 * NdkInitializeFastRegisterMr with a completion, called with a spinlock
 * held and bottom halves off (the debug kernel's might_sleep() and
 * lockdep check that nothing in them sleeps).
 */
static void ndk_t_mr_dispatch(struct ndk_test_env *env, struct ndk_t_ctx *c,
			      struct ndk_mdl *chain)
{
	static DEFINE_SPINLOCK(dispatch);
	struct ndk_mr *mr, *frmr;
	struct ndk_t_wait r[3];
	s32 st[3];
	int i;

	NDK_T_STATUS(env, ndk_create_mr(c->pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mr(c->pd, true, NULL, NULL, &frmr),
		     STATUS_SUCCESS);
	if (env->failures)
		return;
	for (i = 0; i < 3; i++)
		ndk_t_wait_init(&r[i]);
	spin_lock_bh(&dispatch);
	st[0] = ndk_register_mr(mr, chain, PAGE_SIZE, 0x7, ndk_t_requested,
				&r[0]);
	st[1] = ndk_initialize_fast_register_mr(frmr, 16, true,
						ndk_t_requested, &r[1]);
	spin_unlock_bh(&dispatch);
	for (i = 0; i < 2; i++) {
		NDK_T_STATUS(env, st[i], STATUS_PENDING);
		NDK_T_CHECK(env, ndk_t_wait(&r[i]));
		NDK_T_STATUS(env, r[i].status, STATUS_SUCCESS);
	}
	spin_lock_bh(&dispatch);
	st[2] = ndk_deregister_mr(mr, ndk_t_requested, &r[2]);
	spin_unlock_bh(&dispatch);
	NDK_T_STATUS(env, st[2], STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r[2]));
	NDK_T_STATUS(env, r[2].status, STATUS_SUCCESS);
	ndk_test_log("register, initialize and deregister at dispatch level: %#x %#x %#x",
		     r[0].status, r[1].status, r[2].status);
	NDK_T_STATUS(env, ndk_close_mr(frmr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_close_mr(mr, NULL, NULL), STATUS_SUCCESS);
}

/* A registration's completion that deregisters, then closes blocking. */
struct ndk_t_close_in_cb {
	struct ndk_mr *mr;
	struct ndk_t_wait dereg;
	s32 dereg_status;
	s32 close_status;
	struct completion done;
};

static void ndk_t_close_in_cb_done(void *context, s32 status)
{
	struct ndk_t_close_in_cb *x = context;

	x->dereg_status = ndk_deregister_mr(x->mr, ndk_t_requested, &x->dereg);
	/* Waits for the deregistration, not for this registration. */
	x->close_status = ndk_close_mr(x->mr, NULL, NULL);
	complete(&x->done);
}

/*
 * The blocking close's wait for the MR's other requests: woken when the
 * deregistration ends (the count falls to the caller's own one), not only
 * when some MR's last request ends.  The module before slept on until
 * the next MR anywhere finished its last request: another MR's
 * registration here.
 */
static void ndk_t_mr_close_in_completion(struct ndk_test_env *env,
					 struct ndk_t_ctx *c,
					 struct ndk_mdl *chain)
{
	struct ndk_t_close_in_cb x = {};
	struct ndk_t_wait r;
	struct ndk_mr *other;
	bool in_time;

	init_completion(&x.done);
	ndk_t_wait_init(&x.dereg);
	NDK_T_STATUS(env, ndk_create_mr(c->pd, false, NULL, NULL, &other),
		     STATUS_SUCCESS);
	if (env->failures)
		return;
	NDK_T_STATUS(env, ndk_create_mr(c->pd, false, NULL, NULL, &x.mr),
		     STATUS_SUCCESS);
	if (env->failures) {
		ndk_close_mr(other, NULL, NULL);
		return;
	}
	NDK_T_STATUS(env, ndk_register_mr(x.mr, chain, PAGE_SIZE, 0x7,
					  ndk_t_close_in_cb_done, &x),
		     STATUS_PENDING);
	in_time = wait_for_completion_timeout(&x.done, 10 * HZ);
	ndk_test_log("close from a completion with a deregistration in flight: %s",
		     in_time ? "returned" : "still waiting after 10 s");
	NDK_T_CHECK(env, in_time);
	if (!in_time) {
		/* Wake it as the module before needed: another MR's request. */
		ndk_t_wait_init(&r);
		ndk_register_mr(other, chain, PAGE_SIZE, 0x7, ndk_t_requested,
				&r);
		ndk_t_wait(&r);
		wait_for_completion(&x.done);
	}
	NDK_T_STATUS(env, x.dereg_status, STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&x.dereg));
	NDK_T_STATUS(env, x.dereg.status, STATUS_SUCCESS);
	NDK_T_STATUS(env, x.close_status, STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_close_mr(other, NULL, NULL), STATUS_SUCCESS);
}

/* STATUS_PENDING and the completion; closing a registered MR. */
static int ndk_t_mr_register_async(struct ndk_test_env *env)
{
	struct ndk_t_ctx c;
	struct ndk_mdl *chain;
	struct ndk_t_wait r;
	struct ndk_mr *mr;
	u8 *buf;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	buf = kzalloc(2 * PAGE_SIZE, GFP_KERNEL);
	chain = buf ? ndk_mdl_from_buffer(buf + 10, PAGE_SIZE, GFP_KERNEL) : NULL;
	if (!chain)
		goto out;
	NDK_T_STATUS(env, ndk_create_mr(c.pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, PAGE_SIZE, 0x7,
					  ndk_t_requested, &r), STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_STATUS(env, r.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_get_remote_token_from_mr(mr) != 0);

	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_deregister_mr(mr, ndk_t_requested, &r),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_STATUS(env, r.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, atomic_read(&r.calls) == 1);

	/* Closing an MR that is still registered releases the registration. */
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, PAGE_SIZE, 0x1, NULL, NULL),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_close_mr(mr, NULL, NULL), STATUS_SUCCESS);

	/*
	 * A blocking close right after an asynchronous request: the
	 * request's completion has run when the close returns, never after.
	 */
	NDK_T_STATUS(env, ndk_create_mr(c.pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, PAGE_SIZE, 0x7,
					  ndk_t_requested, &r), STATUS_PENDING);
	NDK_T_STATUS(env, ndk_close_mr(mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, atomic_read(&r.calls) == 1);
	NDK_T_STATUS(env, r.status, STATUS_SUCCESS);
	ndk_t_mr_dispatch(env, &c, chain);
	ndk_t_mr_close_in_completion(env, &c, chain);
out:
	ndk_mdl_free_chain(chain);
	kfree(buf);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/*
 * STATUS_INSUFFICIENT_RESOURCES inline and through the completion.  The
 * vm test arms ndk.ko's debugfs fail_mr_alloc with 3 before this runs:
 * the first three fast-register MR allocations fail.
 */
static int ndk_t_mr_insufficient(struct ndk_test_env *env)
{
	struct ndk_t_ctx c;
	struct ndk_mdl *chain;
	struct ndk_mr *mr, *frmr;
	struct ndk_t_wait r;
	u8 *buf;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	chain = buf ? ndk_mdl_from_buffer(buf, 64, GFP_KERNEL) : NULL;
	if (!chain || ndk_create_mr(c.pd, false, NULL, NULL, &mr))
		goto out;
	if (ndk_create_mr(c.pd, true, NULL, NULL, &frmr))
		goto out_close_mr;

	/* A fresh PD: the pool cannot serve these, allocations fail. */
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, 64, 0x1, NULL, NULL),
		     STATUS_INSUFFICIENT_RESOURCES);
	ndk_t_wait_init(&r);
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, 64, 0x1, ndk_t_requested, &r),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&r));
	NDK_T_STATUS(env, r.status, STATUS_INSUFFICIENT_RESOURCES);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(frmr, 16, true, NULL, NULL),
		     STATUS_INSUFFICIENT_RESOURCES);

	/* Nothing was lost: both work now. */
	NDK_T_STATUS(env, ndk_register_mr(mr, chain, 64, 0x1, NULL, NULL),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(frmr, 16, true, NULL, NULL),
		     STATUS_SUCCESS);
	ndk_close_mr(frmr, NULL, NULL);
out_close_mr:
	ndk_close_mr(mr, NULL, NULL);
out:
	ndk_mdl_free_chain(chain);
	kfree(buf);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/* NdkInitializeFastRegisterMr: limits, tokens, several in parallel. */
static int ndk_t_frmr_initialize(struct ndk_test_env *env)
{
	struct ndk_mr *mrs[8], *plain;
	struct ndk_t_wait reqs[8];
	struct ndk_t_ctx c;
	u32 max, dev_max;
	int i;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	max = c.info.frmr_page_count;
	NDK_T_CHECK(env, max >= 16);
	for (i = 0; i < ARRAY_SIZE(mrs); i++)
		NDK_T_STATUS(env, ndk_create_mr(c.pd, true, NULL, NULL, &mrs[i]),
			     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mr(c.pd, false, NULL, NULL, &plain),
		     STATUS_SUCCESS);
	if (env->failures)
		goto out;

	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(mrs[0], 0, true,
							  NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	/*
	 * The adapter's limit, not FRMRPageCount (at most 512): the page
	 * list MaxRegistrationSize is derived from (ndk_adapter.c).
	 */
	dev_max = (c.info.max_registration_size >> PAGE_SHIFT) + 1;
	NDK_T_CHECK(env, max <= dev_max);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(mrs[0], dev_max + 1,
							  true, NULL, NULL),
		     STATUS_IMPLEMENTATION_LIMIT);
	/* Inline with a completion too, which is then never called. */
	ndk_t_wait_init(&reqs[0]);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(mrs[0], dev_max + 1,
							  true, ndk_t_requested,
							  &reqs[0]),
		     STATUS_IMPLEMENTATION_LIMIT);
	msleep(100);
	NDK_T_CHECK(env, atomic_read(&reqs[0].calls) == 0);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(mrs[0], dev_max, true,
							  NULL, NULL),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(plain, 16, true,
							  NULL, NULL),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(mrs[0], max, false,
							  NULL, NULL),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_get_local_token_from_mr(mrs[0]) != 0);

	/* All pending at once, one of them twice on the same MR. */
	for (i = 0; i < ARRAY_SIZE(mrs); i++) {
		ndk_t_wait_init(&reqs[i]);
		NDK_T_STATUS(env, ndk_initialize_fast_register_mr(mrs[i ? i : 1],
								  16 << (i % 4),
								  i & 1,
								  ndk_t_requested,
								  &reqs[i]),
			     STATUS_PENDING);
	}
	for (i = 0; i < ARRAY_SIZE(mrs); i++) {
		NDK_T_CHECK(env, ndk_t_wait(&reqs[i]));
		NDK_T_STATUS(env, reqs[i].status, STATUS_SUCCESS);
		NDK_T_CHECK(env, atomic_read(&reqs[i].calls) == 1);
	}
	for (i = 1; i < ARRAY_SIZE(mrs); i++)
		NDK_T_CHECK(env, ndk_get_remote_token_from_mr(mrs[i]) != 0);
out:
	for (i = 0; i < ARRAY_SIZE(mrs); i++)
		if (mrs[i])
			ndk_close_mr(mrs[i], NULL, NULL);
	ndk_close_mr(plain, NULL, NULL);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/* fr-reinit-race: the reader of the MR's tokens. */
struct ndk_t_token_reader {
	struct ndk_mr *mr;
	unsigned long reads;
	unsigned long zero;
	bool stop;
	struct completion done;
};

static int ndk_t_token_reader_fn(void *arg)
{
	struct ndk_t_token_reader *r = arg;

	while (!READ_ONCE(r->stop)) {
		if (!ndk_get_local_token_from_mr(r->mr) ||
		    !ndk_get_remote_token_from_mr(r->mr))
			r->zero++;
		r->reads++;
		cond_resched();
	}
	complete(&r->done);
	return 0;
}

/*
 * Re-initialisations of one fast-register MR, four pending at once on
 * ndk_wq (they run concurrently), while a thread reads its tokens: the
 * getters never read the ib_mr a re-initialisation frees (KASAN on the
 * debug kernel), and a token read is never 0 once initialised.
 */
static int ndk_t_fr_reinit_race(struct ndk_test_env *env)
{
	struct ndk_t_token_reader r = {};
	struct ndk_t_wait reqs[4];
	unsigned long rounds = 0, end;
	struct task_struct *t;
	struct ndk_t_ctx c;
	int i;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	NDK_T_STATUS(env, ndk_create_mr(c.pd, true, NULL, NULL, &r.mr),
		     STATUS_SUCCESS);
	if (env->failures)
		goto out;
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(r.mr, 8, true, NULL,
							  NULL),
		     STATUS_SUCCESS);
	init_completion(&r.done);
	t = kthread_run(ndk_t_token_reader_fn, &r, "ndk_t_tokens");
	if (IS_ERR(t)) {
		NDK_T_CHECK(env, !IS_ERR(t));
		goto out;
	}
	end = jiffies + 5 * HZ;
	while (time_before(jiffies, end) && !env->failures) {
		for (i = 0; i < ARRAY_SIZE(reqs); i++) {
			u32 pages = 1 + (rounds + i) % 16;

			ndk_t_wait_init(&reqs[i]);
			NDK_T_STATUS(env,
				     ndk_initialize_fast_register_mr(r.mr, pages,
								     i & 1,
								     ndk_t_requested,
								     &reqs[i]),
				     STATUS_PENDING);
		}
		for (i = 0; i < ARRAY_SIZE(reqs); i++) {
			NDK_T_CHECK(env, ndk_t_wait(&reqs[i]));
			NDK_T_STATUS(env, reqs[i].status, STATUS_SUCCESS);
		}
		/* And a blocking one between the rounds. */
		NDK_T_STATUS(env, ndk_initialize_fast_register_mr(r.mr, 4, true,
								  NULL, NULL),
			     STATUS_SUCCESS);
		rounds++;
	}
	WRITE_ONCE(r.stop, true);
	wait_for_completion(&r.done);
	ndk_test_log("fr-reinit-race: %lu rounds of 5 initialisations, %lu token reads, %lu gave 0",
		     rounds, r.reads, r.zero);
	NDK_T_CHECK(env, rounds > 0 && r.reads > 0);
	NDK_T_CHECK(env, r.zero == 0);
out:
	if (r.mr)
		ndk_close_mr(r.mr, NULL, NULL);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/* NdkBuildLAM / NdkReleaseLAM and the privileged token. */
static int ndk_t_lam(struct ndk_test_env *env)
{
	struct ndk_logical_address_mapping *lam;
	struct ndk_mdl *chain, *gap;
	struct ndk_t_ctx c;
	u32 size, fbo, token;
	u8 *buf;

	if (ndk_t_setup(env, &c))
		return NDK_TEST_FAIL;
	buf = vzalloc(6 * PAGE_SIZE);
	chain = buf ? ndk_t_chain(buf, 300, 3 * PAGE_SIZE, 3) : NULL;
	gap = buf ? ndk_t_chain(buf, 0, 100, 1) : NULL;
	if (gap)
		gap->next = ndk_mdl_from_buffer(buf + PAGE_SIZE, 100, GFP_KERNEL);
	lam = kzalloc(struct_size(lam, adapter_page_array, 8), GFP_KERNEL);
	if (!chain || !gap || !gap->next || !lam)
		goto out;

	size = 16;
	NDK_T_STATUS(env, ndk_build_lam(c.adapter, chain, 3 * PAGE_SIZE, NULL,
					NULL, lam, &size, &fbo),
		     STATUS_BUFFER_TOO_SMALL);
	NDK_T_CHECK(env, size == 16 + 8 * 4);
	NDK_T_STATUS(env, ndk_build_lam(c.adapter, gap, 200, NULL, NULL, lam,
					&size, &fbo), STATUS_INVALID_PARAMETER);
	size = struct_size(lam, adapter_page_array, 8);
	NDK_T_STATUS(env, ndk_build_lam(c.adapter, chain, 3 * PAGE_SIZE, NULL,
					NULL, lam, &size, &fbo), STATUS_SUCCESS);
	NDK_T_CHECK(env, size == 16 + 8 * 4);
	NDK_T_CHECK(env, fbo == 300);
	NDK_T_CHECK(env, lam->adapter_page_count == 4);
	NDK_T_CHECK(env, !(lam->adapter_page_array[0] & ~PAGE_MASK));
	ndk_release_lam(c.adapter, lam);
	NDK_T_CHECK(env, lam->adapter_page_count == 0);
	/* Pages the device must never write get no adapter addresses. */
	chain->next->flags |= NDK_MDL_READ_ONLY;
	NDK_T_STATUS(env, ndk_build_lam(c.adapter, chain, 3 * PAGE_SIZE, NULL,
					NULL, lam, &size, &fbo),
		     STATUS_ACCESS_VIOLATION);
	NDK_T_CHECK(env, lam->adapter_page_count == 0);
	chain->next->flags = 0;

	ndk_get_privileged_memory_region_token(c.pd, &token);
	ndk_test_log("privileged token %#x", token);
out:
	kfree(lam);
	ndk_mdl_free_chain(chain);
	ndk_mdl_free_chain(gap);
	vfree(buf);
	ndk_t_teardown(&c);
	return NDK_TEST_PASS;
}

/* A PD's close waits for its MR and MW; windows have tokens. */
static int ndk_t_mr_lifetime(struct ndk_test_env *env)
{
	struct ndk_adapter *adapter;
	struct ndk_t_wait pd_closed;
	struct ndk_mr *mr;
	struct ndk_mw *mw;
	struct ndk_pd *pd;

	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &adapter))
		return NDK_TEST_FAIL;
	if (ndk_create_pd(adapter, NULL, NULL, &pd))
		goto out;
	NDK_T_STATUS(env, ndk_create_mr(pd, false, NULL, NULL, &mr), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mw(pd, NULL, NULL, &mw), STATUS_SUCCESS);
	if (env->failures)
		goto out;
	NDK_T_CHECK(env, ndk_get_remote_token_from_mw(mw) != 0);
	ndk_t_wait_init(&pd_closed);
	NDK_T_STATUS(env, ndk_close_pd(pd, ndk_t_closed, &pd_closed),
		     STATUS_PENDING);
	msleep(100);
	NDK_T_CHECK(env, atomic_read(&pd_closed.calls) == 0);	/* deferred: MR and MW live */
	NDK_T_STATUS(env, ndk_close_mr(mr, NULL, NULL), STATUS_SUCCESS);
	msleep(100);
	NDK_T_CHECK(env, atomic_read(&pd_closed.calls) == 0);	/* the MW still lives */
	NDK_T_STATUS(env, ndk_close_mw(mw, NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&pd_closed));
	NDK_T_CHECK(env, atomic_read(&pd_closed.calls) == 1);
out:
	ndk_close_adapter(adapter);
	return NDK_TEST_PASS;
}

const struct ndk_test ndk_tests_mr[] = {
	{ "mdl-contiguity", ndk_t_mdl_contiguity },
	{ "mdl-runs", ndk_t_mdl_runs },
	{ "mr-register", ndk_t_mr_register },
	{ "mr-register-invalid", ndk_t_mr_register_invalid },
	{ "mr-register-async", ndk_t_mr_register_async },
	{ "mr-key-cycle", ndk_t_mr_key_cycle },
	{ "mr-insufficient-resources", ndk_t_mr_insufficient },
	{ "frmr-initialize", ndk_t_frmr_initialize },
	{ "fr-reinit-race", ndk_t_fr_reinit_race },
	{ "lam", ndk_t_lam },
	{ "mr-lifetime", ndk_t_mr_lifetime },
	{ NULL, NULL },
};
