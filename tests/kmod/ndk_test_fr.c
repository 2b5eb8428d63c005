// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: NdkFastRegister, NdkBind and NdkInvalidate, checked inline
 * and through real RDMA traffic over a loopback connection
 * (ndk_test_conn.h).
 *
 * The memory owner is the passive side: it posts the registration
 * requests on qp[1] (results in cq[1]) and the active side, qp[0], reads
 * and writes through the tokens (results in cq[0]).  On rxe a remote
 * access error moves both QPs of the connection to the error state, so
 * every access that must fail gets a fresh connection (fr_reconnect());
 * before it, a probe through a granted right proves the registration
 * still works on that connection, so a failure means the bounds or rights
 * were enforced and not that the registration was lost.
 *
 * iWARP (siw) differs: an RDMA write completes at the initiator once TCP
 * has its bytes, before the target has placed or refused it; a refused
 * access makes the target send a TERMINATE and tear the connection down,
 * and what the initiator then sees is a flush (STATUS_CANCELLED), not
 * STATUS_REMOTE_RESOURCES.  So on iWARP a write's bytes are checked only
 * after an RDMA read posted behind it completed (the target serves the
 * stream in order: the read is served only if the write was accepted),
 * and a refused access is proven by that fencing read (or the refused
 * read itself) not succeeding, the connection being dead, and the target
 * bytes being unchanged (fr_fence()).  And siw 6.1 serves a remote read
 * through any valid STag of the PD without checking its remote-read
 * right (Documentation/security.md, "Known limits"): a read the rights
 * must refuse is checked there to return exactly the target's bytes, the
 * documented defect, so a siw that starts refusing it fails here and the
 * note gets updated (fr_fail_unread()).
 *
 * Fast registrations use vmalloc'ed pages mapped with NdkBuildLAM, a
 * non-zero first-byte offset and a base virtual address unrelated to the
 * kernel address (FR_BASE + fbo): the address is only an index.  The rest
 * of every page the region touches is canary.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

#define FR_PEER		0		/* reads and writes remotely */
#define FR_OWNER	1		/* owns and registers the memory */
#define FR_BASE		0x10000000ULL	/* base VA of fast registrations */
#define FR_XFER_MAX	(18 * PAGE_SIZE) /* the peer's src and sink buffers */
#define FR_SIW_VENDOR_ID 0x626d74	/* siw's vendor_id ("bmt") */

/* Work request flags (NDK_OP_FLAG_*) by their meaning here. */
#define FR_R	NDK_OP_FLAG_ALLOW_REMOTE_READ
#define FR_LW	NDK_OP_FLAG_ALLOW_LOCAL_WRITE
#define FR_W	NDK_OP_FLAG_ALLOW_REMOTE_WRITE
#define FR_SINK	NDK_OP_FLAG_RDMA_READ_SINK
#define FR_SILENT NDK_OP_FLAG_SILENT_SUCCESS
#define FR_DEFER NDK_OP_FLAG_DEFER

#define T_FR	NDK_OPERATION_TYPE_FAST_REGISTER
#define T_BIND	NDK_OPERATION_TYPE_BIND
#define T_INV	NDK_OPERATION_TYPE_INVALIDATE
#define T_READ	NDK_OPERATION_TYPE_READ
#define T_WRITE	NDK_OPERATION_TYPE_WRITE
#define T_SEND	NDK_OPERATION_TYPE_SEND
#define T_RECV	NDK_OPERATION_TYPE_RECEIVE
#define T_RECV_INV NDK_OPERATION_TYPE_RECEIVE_AND_INVALIDATE

#define CTX(n)	((void *)(uintptr_t)(n))

/* The fixture plus the peer's buffers and whether the connection died. */
struct fr_fix {
	struct t_fix f;
	struct t_buf src;	/* peer: random bytes, REMOTE_READ */
	struct t_buf sink;	/* peer: REMOTE_WRITE | RDMA_READ_SINK */
	bool dead;		/* a remote access error killed the connection */
	u32 refused;		/* accesses refused as they must be */
	bool iwarp;		/* write results say nothing of the target */
	bool siw;		/* siw 6.1: remote reads ignore the right */
	u32 siw_reads;		/* reads served without the right (siw) */
};

/*
 * A fast-register MR over @pages vmalloc'ed pages: the region is the @len
 * bytes at @fbo of the first page, mapped with NdkBuildLAM.
 */
struct fr_buf {
	u8 *mem;
	u32 pages;
	u32 fbo;
	u32 len;
	struct ndk_mdl *mdl;
	struct ndk_logical_address_mapping *lam;
	struct ndk_mr *mr;
	u64 base;		/* FR_BASE + fbo */
};

/* A remote target: where it starts, its size, its token, its rights. */
struct fr_target {
	u64 addr;
	u32 len;
	u32 rtok;
	bool read;
	bool write;
};

/* --- results -------------------------------------------------------------- */

#define FR_WAIT(env, cq, ctx, type, status) \
	fr_wait(env, __LINE__, cq, CTX(ctx), type, status, NULL)

/*
 * The next result within NDK_T_TIMEOUT, of request @ctx of @type, with
 * any status; logged and counted when there is none or another request's.
 */
static bool fr_next(struct ndk_test_env *env, int line, struct ndk_cq *cq,
		    void *ctx, u32 type, struct ndk_result_ex *r)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	u32 got;

	for (;;) {
		got = ndk_get_cq_results_ex(cq, r, 1);
		if (got || time_after(jiffies, end))
			break;
		usleep_range(1000, 2000);
	}
	if (!got) {
		ndk_test_log("line %d: no result for request %lu", line,
			     (unsigned long)ctx);
		env->failures++;
		return false;
	}
	if (r->type != type || r->request_context != ctx) {
		ndk_test_log("line %d: status %#x type %#x request %lu, want type %#x request %lu",
			     line, r->status, r->type,
			     (unsigned long)r->request_context, type,
			     (unsigned long)ctx);
		env->failures++;
		return false;
	}
	return true;
}

/* One result within NDK_T_TIMEOUT; logged and counted when it differs. */
static bool fr_wait(struct ndk_test_env *env, int line, struct ndk_cq *cq,
		    void *ctx, u32 type, s32 status, struct ndk_result_ex *out)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	struct ndk_result_ex r;
	u32 got;

	for (;;) {
		got = ndk_get_cq_results_ex(cq, &r, 1);
		if (got || time_after(jiffies, end))
			break;
		usleep_range(1000, 2000);
	}
	if (!got) {
		ndk_test_log("line %d: no result for request %lu", line,
			     (unsigned long)ctx);
		env->failures++;
		return false;
	}
	if (out)
		*out = r;
	if (r.status != status || r.type != type || r.request_context != ctx) {
		ndk_test_log("line %d: status %#x type %#x request %lu, want %#x %#x %lu",
			     line, r.status, r.type,
			     (unsigned long)r.request_context, status, type,
			     (unsigned long)ctx);
		env->failures++;
		return false;
	}
	return true;
}

/* No result within 300 ms on either CQ. */
static void fr_quiet(struct ndk_test_env *env, int line, struct t_fix *f)
{
	struct ndk_result_ex r;
	int i;

	msleep(300);
	for (i = 0; i < 2; i++)
		if (ndk_get_cq_results_ex(f->cq[i], &r, 1)) {
			ndk_test_log("line %d: cq %d: stray result %#x type %#x request %lu",
				     line, i, r.status, r.type,
				     (unsigned long)r.request_context);
			env->failures++;
		}
}

#define FR_QUIET(env, f) fr_quiet(env, __LINE__, f)

/* --- the connection -------------------------------------------------------- */

/* Close both connectors and QPs, drain the CQs, connect two new QPs. */
static int fr_reconnect(struct ndk_test_env *env, struct t_fix *f)
{
	struct ndk_result_ex r;
	int i;

	t_close_conn(&f->a);
	t_close_conn(&f->p);
	for (i = 0; i < 2; i++) {
		if (f->qp[i])
			ndk_close_qp(f->qp[i], NULL, NULL);
		f->qp[i] = NULL;
	}
	for (i = 0; i < 2; i++)
		while (ndk_get_cq_results_ex(f->cq[i], &r, 1))
			;
	if (t_new_qp(env, f, 0) || t_new_qp(env, f, 1))
		return -1;
	reinit_completion(&f->got);
	spin_lock(&f->lock);
	f->count = 0;
	spin_unlock(&f->lock);
	ndk_t_wait_init(&f->connect_req);
	ndk_t_wait_init(&f->complete_req);
	ndk_t_wait_init(&f->accept_req);
	ndk_t_wait_init(&f->disc_a);
	ndk_t_wait_init(&f->disc_p);
	return t_connect_async(env, f);
}

/* A connection that works: a new one if a remote error killed the last. */
static int fr_live(struct ndk_test_env *env, struct fr_fix *x)
{
	if (!x->dead)
		return 0;
	if (fr_reconnect(env, &x->f))
		return -1;
	x->dead = false;
	return 0;
}

/* Fixture, connection, the peer's src and sink. */
static struct fr_fix *fr_open(struct ndk_test_env *env)
{
	struct fr_fix *x = kzalloc(sizeof(*x), GFP_KERNEL);

	if (!x)
		return NULL;
	if (t_open(env, &x->f, 2) || t_listen(env, &x->f) ||
	    t_connect_async(env, &x->f))
		return x;
	if (t_buf_reg(env, &x->f, &x->src, FR_XFER_MAX,
		      NDK_MR_FLAG_ALLOW_REMOTE_READ) ||
	    t_buf_reg(env, &x->f, &x->sink, FR_XFER_MAX,
		      NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
		      NDK_MR_FLAG_RDMA_READ_SINK))
		return x;
	get_random_bytes(x->src.data, x->src.len);
	x->iwarp = x->f.info.rdma_technology == NDK_IWARP;
	x->siw = x->iwarp && x->f.info.vendor_id == FR_SIW_VENDOR_ID;
	if (x->iwarp)
		ndk_test_log("# iWARP: %s; %s", "writes checked after a fencing RDMA read",
			     "refusals by the teardown (a flush), not by STATUS_REMOTE_RESOURCES");
	return x;
}

static int fr_close(struct ndk_test_env *env, struct fr_fix *x)
{
	int rc;

	if (!x)
		return NDK_TEST_FAIL;
	ndk_test_log("%u accesses refused, each on a fresh connection",
		     x->refused);
	if (x->siw)
		ndk_test_log("# siw: %u reads without the remote-read right served (%s)",
			     x->siw_reads,
			     "siw 6.1 checks no rights on reads, security.md");
	t_buf_free(env, &x->src);
	t_buf_free(env, &x->sink);
	rc = t_verdict(env, &x->f);
	kfree(x);
	return rc;
}

/* --- remote accesses from the peer ---------------------------------------- */

/*
 * iWARP: an RDMA read of one byte of the peer's own src, posted behind an
 * RDMA write on qp[0].  The target serves the stream in order, so the read
 * succeeds only once the write was placed, and is flushed when the target
 * refused the write and tore the connection down.  True when its result
 * says what @placed expects.
 */
static bool fr_fence(struct ndk_test_env *env, int line, struct fr_fix *x,
		     bool placed)
{
	struct ndk_sge sge = t_sge(&x->sink, x->sink.len - 1, 1);
	struct t_fix *f = &x->f;
	struct ndk_result_ex r = {};
	bool ok;
	s32 s;

	s = ndk_read(f->qp[FR_PEER], CTX(0x78), &sge, 1, t_raddr(&x->src, 0),
		     ndk_get_remote_token_from_mr(x->src.mr), 0);
	if (s != STATUS_SUCCESS) {
		if (!placed)	/* the teardown may already refuse the post */
			return true;
		ndk_test_log("line %d: fencing read post: status %#x", line, s);
		env->failures++;
		return false;
	}
	if (!fr_next(env, line, f->cq[FR_PEER], CTX(0x78), T_READ, &r))
		return false;
	ok = r.status == STATUS_SUCCESS;
	if (ok == placed)
		return true;
	ndk_test_log("line %d: fencing read after the write: status %#x, want %s",
		     line, r.status, placed ? "success (the write placed)" :
		     "a failure (the write refused, the connection torn down)");
	env->failures++;
	return false;
}

/*
 * fr_access() on iWARP, the request posted: a write that must succeed
 * completes and its fencing read succeeds; one that must be refused
 * completes with any status (STATUS_SUCCESS on siw: TCP took it) and its
 * fencing read fails; a read completes with @want, or, to be refused,
 * with any failure (the teardown's flush).
 */
static bool fr_access_iw(struct ndk_test_env *env, int line,
			 struct fr_fix *x, bool write, s32 want)
{
	struct ndk_result_ex r = {};
	bool ok;

	ok = fr_next(env, line, x->f.cq[FR_PEER], CTX(0x77),
		     write ? T_WRITE : T_READ, &r);
	if (ok && want == STATUS_SUCCESS && r.status != STATUS_SUCCESS) {
		ndk_test_log("line %d: %s: status %#x, want success", line,
			     write ? "write" : "read", r.status);
		env->failures++;
		ok = false;
	} else if (ok && want != STATUS_SUCCESS && !write &&
		   r.status == STATUS_SUCCESS) {
		ndk_test_log("line %d: read that must be refused succeeded",
			     line);
		env->failures++;
		ok = false;
	} else if (ok && want != STATUS_SUCCESS) {
		ndk_test_log("line %d: refused %s: initiator status %#x (iWARP)",
			     line, write ? "write" : "read", r.status);
	}
	if (ok && write)
		ok = fr_fence(env, line, x, want == STATUS_SUCCESS);
	if (!ok || want != STATUS_SUCCESS)
		x->dead = true;
	return ok;
}

/*
 * An RDMA write or read of @sge from qp[0]; its result must be @want.  Any
 * failed result kills the connection on rxe: the next access reconnects.
 * On iWARP fr_access_iw() decides.
 */
static bool fr_access(struct ndk_test_env *env, int line, struct fr_fix *x,
		      bool write, const struct ndk_sge *sge, u64 raddr,
		      u32 rtok, s32 want)
{
	struct t_fix *f = &x->f;
	struct ndk_result_ex r = {};
	bool ok;
	s32 s;

	if (write)
		s = ndk_write(f->qp[FR_PEER], CTX(0x77), sge, 1, raddr, rtok, 0);
	else
		s = ndk_read(f->qp[FR_PEER], CTX(0x77), sge, 1, raddr, rtok, 0);
	if (s != STATUS_SUCCESS) {
		ndk_test_log("line %d: %s post: status %#x", line,
			     write ? "write" : "read", s);
		env->failures++;
		x->dead = true;
		return false;
	}
	if (x->iwarp)
		return fr_access_iw(env, line, x, write, want);
	ok = fr_wait(env, line, f->cq[FR_PEER], CTX(0x77),
		     write ? T_WRITE : T_READ, want, &r);
	if (!ok || r.status != STATUS_SUCCESS)
		x->dead = true;
	return ok;
}

/* Write @len bytes of the peer's src (from @soff) to @raddr. */
static bool fr_write(struct ndk_test_env *env, int line, struct fr_fix *x,
		     u32 soff, u64 raddr, u32 rtok, u32 len, s32 want)
{
	struct ndk_sge sge = t_sge(&x->src, soff, len);

	return fr_access(env, line, x, true, &sge, raddr, rtok, want);
}

/*
 * Read @len bytes at @raddr into the peer's sink (at @soff).  On iWARP a
 * refused read must also leave the sink as it was.
 */
static bool fr_read(struct ndk_test_env *env, int line, struct fr_fix *x,
		    u32 soff, u64 raddr, u32 rtok, u32 len, s32 want)
{
	struct ndk_sge sge = t_sge(&x->sink, soff, len);
	u8 *dst = x->sink.data + soff;
	bool ok;

	if (!x->iwarp || want == STATUS_SUCCESS)
		return fr_access(env, line, x, false, &sge, raddr, rtok, want);
	memset(dst, 0x5a, len);
	ok = fr_access(env, line, x, false, &sge, raddr, rtok, want);
	if (ok && !t_all(dst, 0x5a, len)) {
		ndk_test_log("line %d: a refused read changed the sink", line);
		env->failures++;
		ok = false;
	}
	return ok;
}

#define FR_WRITE(env, x, soff, raddr, rtok, len, want) \
	fr_write(env, __LINE__, x, soff, raddr, rtok, len, want)
#define FR_READ(env, x, soff, raddr, rtok, len, want) \
	fr_read(env, __LINE__, x, soff, raddr, rtok, len, want)

/*
 * A granted right still works on this connection: a one-byte read, or a
 * write of the byte the target already holds (src[0], written before).
 */
static void fr_probe(struct ndk_test_env *env, int line, struct fr_fix *x,
		     const struct fr_target *t)
{
	if (t->read)
		fr_read(env, line, x, x->sink.len - 1, t->addr, t->rtok, 1,
			STATUS_SUCCESS);
	else if (t->write)
		fr_write(env, line, x, 0, t->addr, t->rtok, 1, STATUS_SUCCESS);
}

/*
 * An access of @len bytes at @raddr with @rtok that the adapter must
 * refuse (STATUS_REMOTE_RESOURCES), on a fresh connection, after a probe
 * of @probe.  The connection is dead afterwards.
 */
static void fr_fail(struct ndk_test_env *env, int line, struct fr_fix *x,
		    const struct fr_target *probe, bool write, u64 raddr,
		    u32 len, u32 rtok)
{
	if (fr_live(env, x))
		return;
	fr_probe(env, line, x, probe);
	if (write ? fr_write(env, line, x, 0, raddr, rtok, len,
			     STATUS_REMOTE_RESOURCES) :
		    fr_read(env, line, x, 0, raddr, rtok, len,
			    STATUS_REMOTE_RESOURCES))
		x->refused++;
	x->dead = true;
}

/*
 * A read of @len bytes at @raddr with @rtok, a token without the
 * remote-read right over @bytes: refused as fr_fail(), except on siw 6.1,
 * which serves remote reads through any valid STag of the PD without
 * checking the right (siw_init_rresp() queues the response, the transmit
 * path checks its source STag with no permissions): there the read must
 * return exactly @bytes, the documented defect
 * (Documentation/security.md, "Known limits"), and a siw that refuses it
 * fails here so that the note is revisited.
 */
static void fr_fail_unread(struct ndk_test_env *env, int line,
			   struct fr_fix *x, const struct fr_target *probe,
			   u64 raddr, u32 len, u32 rtok, const u8 *bytes)
{
	if (!x->siw) {
		fr_fail(env, line, x, probe, false, raddr, len, rtok);
		return;
	}
	if (fr_live(env, x))
		return;
	fr_probe(env, line, x, probe);
	ndk_test_log("line %d: %s (%s): expecting the target's %u bytes", line,
		     "siw 6.1 serves a remote read without the remote-read right",
		     "security.md", len);
	memset(x->sink.data, 0x5a, len);
	if (fr_read(env, line, x, 0, raddr, rtok, len, STATUS_SUCCESS)) {
		x->siw_reads++;
		if (memcmp(x->sink.data, bytes, len)) {
			ndk_test_log("line %d: the read returned other bytes",
				     line);
			env->failures++;
		}
	}
}

/* Fails @off bytes from the start of target @t, with its token. */
static void fr_fail_at(struct ndk_test_env *env, int line, struct fr_fix *x,
		       const struct fr_target *t, bool write, s64 off, u32 len)
{
	fr_fail(env, line, x, t, write, t->addr + off, len, t->rtok);
}

#define FR_FAIL(env, x, t, write, off, len) \
	fr_fail_at(env, __LINE__, x, t, write, off, len)
/* Fails with token @tok at @raddr, after a probe of @t. */
#define FR_FAIL_TOK(env, x, t, write, raddr, len, tok) \
	fr_fail(env, __LINE__, x, t, write, raddr, len, tok)

/*
 * The conformance matrix of one target whose first byte is @bytes in the
 * kernel (the byte before it and the one after it are valid memory):
 * granted rights work byte-exact over the whole target; each granted
 * right fails one byte before the start and one byte past the end; a
 * right not granted fails inside (unless !@negatives).  Refused writes
 * change nothing.
 */
static void fr_check_target(struct ndk_test_env *env, struct fr_fix *x,
			    const struct fr_target *t, u8 *bytes, bool negatives)
{
	u8 prev, next, first, last;

	if (fr_live(env, x))
		return;
	if (t->write) {
		FR_WRITE(env, x, 0, t->addr, t->rtok, t->len, STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(bytes, x->src.data, t->len) == 0);
	} else {
		memcpy(bytes, x->src.data, t->len);	/* the owner writes */
	}
	if (t->read) {
		memset(x->sink.data, 0, t->len + 64);
		FR_READ(env, x, 0, t->addr, t->rtok, t->len, STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(x->sink.data, bytes, t->len) == 0);
		NDK_T_CHECK(env, t_all(x->sink.data + t->len, 0, 64));
	}
	if (!negatives)
		return;
	prev = bytes[-1];
	next = bytes[t->len];
	first = bytes[0];
	last = bytes[t->len - 1];
	if (t->write) {
		FR_FAIL(env, x, t, true, -1, 2);
		FR_FAIL(env, x, t, true, t->len - 1, 2);
	} else {
		FR_FAIL(env, x, t, true, 0, 1);
	}
	if (t->read) {
		FR_FAIL(env, x, t, false, -1, 2);
		FR_FAIL(env, x, t, false, t->len - 1, 2);
	} else {
		fr_fail_unread(env, __LINE__, x, t, t->addr, 1, t->rtok, bytes);
	}
	NDK_T_CHECK(env, bytes[-1] == prev && bytes[t->len] == next);
	NDK_T_CHECK(env, bytes[0] == first && bytes[t->len - 1] == last);
}

/* --- fast-register buffers ------------------------------------------------- */

/*
 * @pages pages, the region @len bytes at @fbo; an FR MR initialised for
 * @init_pages pages, with remote access if @remote.
 */
static int fr_buf_init(struct ndk_test_env *env, struct t_fix *f,
		       struct fr_buf *b, u32 pages, u32 fbo, u32 len,
		       u32 init_pages, bool remote)
{
	u32 size, lam_fbo = ~0U, spanned = DIV_ROUND_UP(fbo + len, PAGE_SIZE);
	int failures = env->failures;

	memset(b, 0, sizeof(*b));
	b->pages = pages;
	b->fbo = fbo;
	b->len = len;
	b->base = FR_BASE + fbo;
	b->mem = vmalloc(pages * PAGE_SIZE);
	if (!b->mem)
		return -ENOMEM;
	memset(b->mem, T_CANARY_BYTE, pages * PAGE_SIZE);
	memset(b->mem + fbo, 0, len);
	b->mdl = ndk_mdl_from_buffer(b->mem + fbo, len, GFP_KERNEL);
	size = struct_size(b->lam, adapter_page_array, spanned);
	b->lam = kzalloc(size, GFP_KERNEL);
	NDK_T_CHECK(env, b->mdl && b->lam);
	if (!b->mdl || !b->lam)
		return -ENOMEM;
	NDK_T_STATUS(env, ndk_build_lam(f->adapter, b->mdl, len, NULL, NULL,
					b->lam, &size, &lam_fbo), STATUS_SUCCESS);
	NDK_T_CHECK(env, lam_fbo == fbo);
	NDK_T_CHECK(env, b->lam->adapter_page_count == spanned);
	NDK_T_STATUS(env, ndk_create_mr(f->pd, true, NULL, NULL, &b->mr),
		     STATUS_SUCCESS);
	if (env->failures != failures)
		return -EINVAL;
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(b->mr, init_pages,
							  remote, NULL, NULL),
		     STATUS_SUCCESS);
	return env->failures != failures ? -EINVAL : 0;
}

/* Every byte of the pages outside the region is still canary. */
static bool fr_canaries_ok(struct fr_buf *b)
{
	u32 i;

	for (i = 0; i < b->pages * PAGE_SIZE; i++)
		if ((i < b->fbo || i >= b->fbo + b->len) &&
		    b->mem[i] != T_CANARY_BYTE)
			return false;
	return true;
}

static void fr_buf_free(struct ndk_test_env *env, struct t_fix *f,
			struct fr_buf *b)
{
	NDK_T_CHECK(env, !b->mem || fr_canaries_ok(b));
	if (b->mr)
		ndk_close_mr(b->mr, NULL, NULL);
	if (b->lam && b->lam->adapter_page_count)
		ndk_release_lam(f->adapter, b->lam);
	kfree(b->lam);
	ndk_mdl_free_chain(b->mdl);
	vfree(b->mem);
	memset(b, 0, sizeof(*b));
}

/* NdkFastRegister of the whole region with its LAM. */
static s32 fr_post(struct ndk_qp *qp, void *ctx, struct fr_buf *b, u32 flags)
{
	return ndk_fast_register(qp, ctx, b->mr, b->lam->adapter_page_count,
				 b->lam->adapter_page_array, b->fbo, b->len,
				 (void *)(uintptr_t)b->base, flags);
}

/* NdkInvalidate of an MR or a window. */
static s32 fr_inv(struct ndk_qp *qp, void *ctx, void *mr_or_mw, u32 flags)
{
	return ndk_invalidate(qp, ctx, (struct ndk_object_header *)mr_or_mw,
			      flags);
}

/* An SGE over the region, addressed by the registration's base VA. */
static struct ndk_sge fr_sge(struct fr_buf *b, u32 off, u32 len)
{
	struct ndk_sge sge = {
		.virtual_address = (void *)(uintptr_t)(b->base + off),
		.length = len,
		.memory_region_token = ndk_get_local_token_from_mr(b->mr),
	};
	return sge;
}

/* The region as a remote target with the rights of @flags. */
static struct fr_target fr_target(struct fr_buf *b, u32 flags)
{
	struct fr_target t = {
		.addr = b->base,
		.len = b->len,
		.rtok = ndk_get_remote_token_from_mr(b->mr),
		.read = flags & FR_R,
		.write = (flags & FR_W) == FR_W,
	};
	return t;
}

/* --- fr-params ------------------------------------------------------------- */

/*
 * Every STATUS_INVALID_PARAMETER of NdkFastRegister, on @qp, with @b an
 * initialised FR MR that is not registered, @small one initialised for
 * two pages, @plain an NdkRegisterMr MR, @uninit an FR MR never
 * initialised.
 */
static void fr_bad_fr(struct ndk_test_env *env, struct ndk_qp *qp,
		      struct fr_buf *b, struct fr_buf *small,
		      struct ndk_mr *plain, struct ndk_mr *unreg,
		      struct ndk_mr *uninit)
{
	static const u32 bad_flags[] = {
		0x20, 0x20 | FR_R, 0x4, 0x40, 0x100, 0x400, 0x800, 0x1000,
		0x80000000,
	};
	u32 n = b->lam->adapter_page_count, fbo = b->fbo, i;
	const u64 *pa = b->lam->adapter_page_array;
	void *base = (void *)(uintptr_t)b->base;
	u64 odd[8];

	for (i = 0; i < ARRAY_SIZE(bad_flags); i++)
		NDK_T_STATUS(env, fr_post(qp, CTX(1), b, bad_flags[i]),
			     STATUS_INVALID_PARAMETER);
	/* The wrong kind of MR, or one not initialised. */
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(2), plain, n, pa, fbo,
					    b->len, base, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(2), unreg, n, pa, fbo,
					    b->len, base, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(3), uninit, n, pa, fbo,
					    b->len, base, 0),
		     STATUS_INVALID_PARAMETER);
	/* Page count 0, or above the MR's initialised count. */
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(4), b->mr, 0, pa, fbo,
					    b->len, base, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(5), small->mr, 3, pa, fbo,
					    3 * PAGE_SIZE - fbo, base, 0),
		     STATUS_INVALID_PARAMETER);
	/* No page array; a page address not page aligned. */
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(6), b->mr, n, NULL, fbo,
					    b->len, base, 0),
		     STATUS_INVALID_PARAMETER);
	memcpy(odd, pa, n * sizeof(*odd));
	odd[1] += 8;
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(7), b->mr, n, odd, fbo,
					    b->len, base, 0),
		     STATUS_INVALID_PARAMETER);
	/* Also past the pages the length uses: every entry is checked. */
	memcpy(odd, pa, n * sizeof(*odd));
	odd[n - 1] += 8;
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(7), b->mr, n, odd, fbo,
					    PAGE_SIZE - fbo, base, 0),
		     STATUS_INVALID_PARAMETER);
	/* FBO not inside the first page. */
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(8), b->mr, n, pa,
					    PAGE_SIZE, PAGE_SIZE,
					    (void *)(uintptr_t)FR_BASE, 0),
		     STATUS_INVALID_PARAMETER);
	/* Length 0, or one byte more than the pages hold after FBO. */
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(9), b->mr, n, pa, fbo, 0,
					    base, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(10), b->mr, n, pa, fbo,
					    n * PAGE_SIZE - fbo + 1, base, 0),
		     STATUS_INVALID_PARAMETER);
	/* A base VA whose offset in its page is not FBO. */
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(11), b->mr, n, pa, fbo,
					    b->len, base + 1, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(12), b->mr, n, pa, fbo,
					    b->len, (void *)(uintptr_t)FR_BASE,
					    0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_fast_register(qp, CTX(13), b->mr, n, pa, fbo,
					    b->len, NULL, 0),
		     STATUS_INVALID_PARAMETER);
}

/* Invalidations refused for their parameters, on @qp. */
static void fr_bad_inv(struct ndk_test_env *env, struct t_fix *f,
		       struct ndk_qp *qp, struct ndk_mr *registered,
		       struct ndk_mr *plain)
{
	static const u32 bad_flags[] = {
		FR_R, FR_LW, FR_W, FR_SINK, 0x4, 0x40, 0x100, 0x400, 0x80000000,
	};
	u32 i;

	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(20),
					 (struct ndk_object_header *)plain, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(21),
					 (struct ndk_object_header *)f->pd, 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(22),
					 (struct ndk_object_header *)f->cq[0],
					 0),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(23),
					 (struct ndk_object_header *)qp, 0),
		     STATUS_INVALID_PARAMETER);
	if (!registered)
		return;
	for (i = 0; i < ARRAY_SIZE(bad_flags); i++)
		NDK_T_STATUS(env, ndk_invalidate(qp, CTX(24),
						 (struct ndk_object_header *)registered,
						 bad_flags[i]),
			     STATUS_INVALID_PARAMETER);
}

/*
 * fr-params: every inline status of NdkFastRegister and NdkInvalidate,
 * on an unconnected and on a connected QP; none produces a result, and the
 * QP works afterwards.
 */
static int t_fr_params(struct ndk_test_env *env)
{
	struct fr_buf b = {}, small = {}, local = {};
	struct ndk_mr *unreg = NULL, *uninit = NULL;
	struct ndk_qp *lone = NULL;
	struct ndk_pd *pd2 = NULL;
	struct fr_fix *x;
	struct t_fix *f;
	struct ndk_qp *qp;
	struct fr_target t;
	s32 local_reg;
	u64 *odd;

	x = fr_open(env);
	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	qp = f->qp[FR_OWNER];
	if (fr_buf_init(env, f, &b, 4, 200, 4 * PAGE_SIZE - 300, 4, true) ||
	    fr_buf_init(env, f, &small, 4, 200, 2 * PAGE_SIZE - 200, 2, true) ||
	    fr_buf_init(env, f, &local, 2, 64, PAGE_SIZE, 2, false))
		goto out;
	NDK_T_STATUS(env, ndk_create_mr(f->pd, false, NULL, NULL, &unreg),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mr(f->pd, true, NULL, NULL, &uninit),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_qp(f->pd, f->cq[0], f->cq[0], &lone, 8, 8,
					1, 1, 0, NULL, NULL, &lone),
		     STATUS_SUCCESS);
	if (env->failures)
		goto out;

	/* Unconnected: parameters first, then the connection. */
	fr_bad_fr(env, lone, &b, &small, x->src.mr, unreg, uninit);
	fr_bad_inv(env, f, lone, NULL, x->src.mr);
	NDK_T_STATUS(env, fr_post(lone, CTX(30), &b, FR_R | FR_W),
		     STATUS_CONNECTION_INVALID);

	/* Connected. */
	fr_bad_fr(env, qp, &b, &small, x->src.mr, unreg, uninit);
	fr_bad_inv(env, f, qp, NULL, x->src.mr);
	/* Remote rights on an MR initialised without remote access. */
	NDK_T_STATUS(env, fr_post(qp, CTX(31), &local, FR_R),
		     STATUS_ACCESS_VIOLATION);
	NDK_T_STATUS(env, fr_post(qp, CTX(32), &local, FR_W),
		     STATUS_ACCESS_VIOLATION);
	NDK_T_STATUS(env, fr_post(qp, CTX(33), &local, FR_R | FR_W | FR_SINK),
		     STATUS_ACCESS_VIOLATION);
	/* Not registered yet: nothing to invalidate. */
	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(34),
					 (struct ndk_object_header *)b.mr, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	/* An MR of another PD. */
	NDK_T_STATUS(env, ndk_create_pd(f->adapter, NULL, NULL, &pd2),
		     STATUS_SUCCESS);
	if (pd2) {
		struct ndk_mr *mr2 = NULL;

		NDK_T_STATUS(env, ndk_create_mr(pd2, true, NULL, NULL, &mr2),
			     STATUS_SUCCESS);
		if (mr2) {
			NDK_T_STATUS(env, ndk_initialize_fast_register_mr(mr2, 4,
									  true,
									  NULL,
									  NULL),
				     STATUS_SUCCESS);
			NDK_T_STATUS(env,
				     ndk_fast_register(qp, CTX(35), mr2,
						       b.lam->adapter_page_count,
						       b.lam->adapter_page_array,
						       b.fbo, b.len,
						       (void *)(uintptr_t)b.base,
						       0),
				     STATUS_INVALID_PARAMETER);
			ndk_close_mr(mr2, NULL, NULL);
		}
	}
	FR_QUIET(env, f);

	/* The QP works: the good request completes, only it. */
	NDK_T_STATUS(env, fr_post(qp, CTX(40), &b, FR_R | FR_W), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 40, T_FR, STATUS_SUCCESS);
	/*
	 * Local rights only on a local-access MR are fine; on iWARP a read
	 * sink is a remote write (read responses are tagged writes), which
	 * such an MR may not grant.
	 */
	if (x->iwarp)
		NDK_T_STATUS(env, fr_post(qp, CTX(36), &local, FR_SINK),
			     STATUS_ACCESS_VIOLATION);
	local_reg = fr_post(qp, CTX(41), &local,
			    x->iwarp ? FR_LW : FR_LW | FR_SINK);
	NDK_T_STATUS(env, local_reg, STATUS_SUCCESS);
	if (!local_reg)
		FR_WAIT(env, f->cq[FR_OWNER], 41, T_FR, STATUS_SUCCESS);
	/* Registered already. */
	NDK_T_STATUS(env, fr_post(qp, CTX(42), &b, FR_R),
		     STATUS_INVALID_DEVICE_REQUEST);
	/* A bad page array is refused as such, and spends no key. */
	odd = kmemdup(b.lam->adapter_page_array,
		      b.lam->adapter_page_count * sizeof(*odd), GFP_KERNEL);
	if (odd) {
		u32 token = ndk_get_remote_token_from_mr(b.mr);

		odd[0] += 8;
		NDK_T_STATUS(env, ndk_fast_register(qp, CTX(42), b.mr,
						    b.lam->adapter_page_count,
						    odd, b.fbo, b.len,
						    (void *)(uintptr_t)b.base,
						    0),
			     STATUS_INVALID_PARAMETER);
		NDK_T_CHECK(env, ndk_get_remote_token_from_mr(b.mr) == token);
		kfree(odd);
	}
	if (!local_reg)
		NDK_T_STATUS(env, fr_post(qp, CTX(43), &local, 0),
			     STATUS_INVALID_DEVICE_REQUEST);
	/* Invalidate: parameters on both QPs, connection on the lone one. */
	fr_bad_inv(env, f, lone, b.mr, x->src.mr);
	fr_bad_inv(env, f, qp, b.mr, x->src.mr);
	NDK_T_STATUS(env, ndk_invalidate(lone, CTX(44),
					 (struct ndk_object_header *)b.mr, 0),
		     STATUS_CONNECTION_INVALID);
	/* Invalidation posted, its completion not polled: busy. */
	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(45),
					 (struct ndk_object_header *)b.mr, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_post(qp, CTX(46), &b, FR_R), STATUS_DEVICE_BUSY);
	FR_WAIT(env, f->cq[FR_OWNER], 45, T_INV, STATUS_SUCCESS);
	/* Invalidated already. */
	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(47),
					 (struct ndk_object_header *)b.mr, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	if (!local_reg) {
		NDK_T_STATUS(env, fr_inv(qp, CTX(48), local.mr, 0),
			     STATUS_SUCCESS);
		FR_WAIT(env, f->cq[FR_OWNER], 48, T_INV, STATUS_SUCCESS);
	}
	FR_QUIET(env, f);

	/* Registered again, the region carries traffic byte-exact. */
	NDK_T_STATUS(env, fr_post(qp, CTX(49), &b, FR_R | FR_W), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 49, T_FR, STATUS_SUCCESS);
	t = fr_target(&b, FR_R | FR_W);
	FR_WRITE(env, x, 5, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(b.mem + b.fbo, x->src.data + 5, b.len) == 0);
	FR_READ(env, x, 0, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(x->sink.data, x->src.data + 5, b.len) == 0);
	NDK_T_STATUS(env, ndk_invalidate(qp, CTX(50),
					 (struct ndk_object_header *)b.mr, 0),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 50, T_INV, STATUS_SUCCESS);
	FR_QUIET(env, f);
out:
	if (lone)
		ndk_close_qp(lone, NULL, NULL);
	if (unreg)
		ndk_close_mr(unreg, NULL, NULL);
	if (uninit)
		ndk_close_mr(uninit, NULL, NULL);
	fr_buf_free(env, f, &b);
	fr_buf_free(env, f, &small);
	fr_buf_free(env, f, &local);
	if (pd2)
		ndk_close_pd(pd2, NULL, NULL);
	return fr_close(env, x);
}

/* --- fr-traffic ------------------------------------------------------------ */

/*
 * Local uses of a registered region, addressed by its base VA with its
 * local token: a send source always; a receive buffer with local write;
 * an RDMA read sink with RDMA_READ_SINK.
 */
static void fr_local_uses(struct ndk_test_env *env, struct fr_fix *x,
			  struct fr_buf *b, u32 flags)
{
	struct t_fix *f = &x->f;
	u8 *bytes = b->mem + b->fbo;
	struct ndk_result_ex r;
	struct ndk_sge sge;

	if (fr_live(env, x))
		return;
	memcpy(bytes, x->src.data + 11, b->len);
	memset(x->sink.data, 0, b->len + 64);
	sge = t_sge(&x->sink, 0, b->len);
	NDK_T_STATUS(env, ndk_receive(f->qp[FR_PEER], CTX(60), &sge, 1),
		     STATUS_SUCCESS);
	sge = fr_sge(b, 0, b->len);
	NDK_T_STATUS(env, ndk_send(f->qp[FR_OWNER], CTX(61), &sge, 1, 0),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 61, T_SEND, STATUS_SUCCESS);
	if (fr_wait(env, __LINE__, f->cq[FR_PEER], CTX(60), T_RECV,
		    STATUS_SUCCESS, &r))
		NDK_T_CHECK(env, r.bytes_transferred == b->len);
	NDK_T_CHECK(env, memcmp(x->sink.data, bytes, b->len) == 0);
	NDK_T_CHECK(env, t_all(x->sink.data + b->len, 0, 64));

	if (flags & FR_LW) {
		sge = fr_sge(b, 0, b->len);
		NDK_T_STATUS(env, ndk_receive(f->qp[FR_OWNER], CTX(62), &sge, 1),
			     STATUS_SUCCESS);
		sge = t_sge(&x->src, 3, b->len);
		NDK_T_STATUS(env, ndk_send(f->qp[FR_PEER], CTX(63), &sge, 1, 0),
			     STATUS_SUCCESS);
		FR_WAIT(env, f->cq[FR_PEER], 63, T_SEND, STATUS_SUCCESS);
		FR_WAIT(env, f->cq[FR_OWNER], 62, T_RECV, STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(bytes, x->src.data + 3, b->len) == 0);
	}
	/*
	 * A read sink: its flag, or local write alone where the adapter
	 * says RDMA_READ_SINK_NOT_REQUIRED (the NDK_ADAPTER_INFO seed).
	 */
	if ((flags & FR_SINK) ||
	    ((flags & FR_LW) && (f->info.adapter_flags &
				 NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED))) {
		sge = fr_sge(b, 0, b->len);
		NDK_T_STATUS(env, ndk_read(f->qp[FR_OWNER], CTX(64), &sge, 1,
					   t_raddr(&x->src, 7),
					   ndk_get_remote_token_from_mr(x->src.mr),
					   0), STATUS_SUCCESS);
		FR_WAIT(env, f->cq[FR_OWNER], 64, T_READ, STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(bytes, x->src.data + 7, b->len) == 0);
	}
}

/* Register @b with @flags on a live connection and check it all. */
static void fr_register_and_check(struct ndk_test_env *env, struct fr_fix *x,
				  struct fr_buf *b, u32 flags, bool negatives)
{
	struct t_fix *f = &x->f;
	struct fr_target t;

	if (fr_live(env, x))
		return;
	NDK_T_STATUS(env, fr_post(f->qp[FR_OWNER], CTX(70), b, flags),
		     STATUS_SUCCESS);
	if (!FR_WAIT(env, f->cq[FR_OWNER], 70, T_FR, STATUS_SUCCESS))
		return;
	ndk_test_log("registered %u bytes at %#llx: local token %#x, remote %#x",
		     b->len, b->base, ndk_get_local_token_from_mr(b->mr),
		     ndk_get_remote_token_from_mr(b->mr));
	fr_local_uses(env, x, b, flags);
	t = fr_target(b, flags);
	fr_check_target(env, x, &t, b->mem + b->fbo, negatives);
}

static const struct {
	u32 flags;
	bool remote;	/* RemoteAccess of NdkInitializeFastRegisterMr */
} fr_combos[] = {
	{ 0, false },
	{ FR_R, true },
	{ FR_LW, false },
	{ FR_LW, true },
	{ FR_W, true },
	{ FR_R | FR_W, true },
	{ FR_SINK, false },
	{ FR_LW | FR_SINK, false },
	{ FR_W | FR_SINK, true },
	{ FR_R | FR_W | FR_SINK, true },
};

/*
 * fr-traffic: every fast-register flag combination through real traffic
 * (the RDMA_READ_SINK ones without the failing accesses), then 17 pages
 * at the MR's initialised count, and the longest region five pages allow
 * (FBO 4095) on an MR initialised for more pages.
 */
static int t_fr_traffic(struct ndk_test_env *env)
{
	struct fr_fix *x = fr_open(env);
	struct fr_buf b = {};
	u32 i, fbo, flags, init;

	if (!x || env->failures)
		return fr_close(env, x);
	for (i = 0; i < ARRAY_SIZE(fr_combos); i++) {
		flags = fr_combos[i].flags;
		fbo = 256 + 8 * i;
		ndk_test_log("fast register, flags %#x, fbo %u, remote access %d",
			     flags, fbo, fr_combos[i].remote);
		if (fr_buf_init(env, &x->f, &b, 3, fbo,
				3 * PAGE_SIZE - fbo - 128, 4,
				fr_combos[i].remote)) {
			fr_buf_free(env, &x->f, &b);
			continue;
		}
		if (x->iwarp && (flags & FR_SINK) && !fr_combos[i].remote)
			/* On iWARP a read sink is a remote write: refused. */
			NDK_T_STATUS(env, fr_post(x->f.qp[FR_OWNER], CTX(70),
						  &b, flags),
				     STATUS_ACCESS_VIOLATION);
		else
			fr_register_and_check(env, x, &b, flags,
					      !(flags & FR_SINK));
		fr_buf_free(env, &x->f, &b);
	}

	ndk_test_log("fast register, 17 pages of an MR initialised for 17");
	if (!fr_buf_init(env, &x->f, &b, 17, 1000, 17 * PAGE_SIZE - 1500, 17,
			 true))
		fr_register_and_check(env, x, &b, FR_R | FR_W, true);
	fr_buf_free(env, &x->f, &b);

	init = min_t(u32, 32, x->f.info.frmr_page_count);
	ndk_test_log("fast register, 5 pages at fbo 4095 of an MR initialised for %u",
		     init);
	if (!fr_buf_init(env, &x->f, &b, 6, PAGE_SIZE - 1, 4 * PAGE_SIZE + 1,
			 init, true))
		fr_register_and_check(env, x, &b, FR_R | FR_W | FR_SINK, false);
	fr_buf_free(env, &x->f, &b);
	return fr_close(env, x);
}

/* --- fr-rotation ----------------------------------------------------------- */

#define FR_CYCLES 12

/* Tokens @tok[@i] differ from every earlier one. */
static void fr_check_new(struct ndk_test_env *env, const char *what,
			 const u32 *tok, u32 i)
{
	u32 j;

	for (j = 0; j < i; j++)
		if (tok[j] == tok[i]) {
			ndk_test_log("%s token %#x of cycle %u repeats cycle %u",
				     what, tok[i], i, j);
			env->failures++;
		}
}

/*
 * fr-rotation: local and remote tokens change on every fast register;
 * each works at once; the previous token fails even while the MR is
 * registered again at the same address, the last one fails after the
 * invalidation, and the privileged token is no remote token.
 */
static int t_fr_rotation(struct ndk_test_env *env)
{
	u32 ltok[FR_CYCLES + 2], rtok[FR_CYCLES + 2], priv = 0, i;
	struct fr_fix *x = fr_open(env);
	struct fr_target t, none;
	struct fr_buf b = {};
	struct t_fix *f;
	struct ndk_qp *qp;

	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	if (fr_buf_init(env, f, &b, 2, 512, PAGE_SIZE, 2, true))
		goto out;
	for (i = 0; i < FR_CYCLES; i++) {
		qp = f->qp[FR_OWNER];
		NDK_T_STATUS(env, fr_post(qp, CTX(100 + i), &b, FR_R | FR_W),
			     STATUS_SUCCESS);
		ltok[i] = ndk_get_local_token_from_mr(b.mr);
		rtok[i] = ndk_get_remote_token_from_mr(b.mr);
		FR_WAIT(env, f->cq[FR_OWNER], 100 + i, T_FR, STATUS_SUCCESS);
		NDK_T_CHECK(env, ndk_get_local_token_from_mr(b.mr) == ltok[i]);
		NDK_T_CHECK(env, ndk_get_remote_token_from_mr(b.mr) == rtok[i]);
		fr_check_new(env, "local", ltok, i);
		fr_check_new(env, "remote", rtok, i);
		/* The new token works at once. */
		FR_WRITE(env, x, i, b.base + 16 * i, rtok[i], 16, STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(b.mem + b.fbo + 16 * i, x->src.data + i,
					16) == 0);
		if (i == FR_CYCLES - 1)
			break;
		NDK_T_STATUS(env, fr_inv(qp, CTX(200 + i), b.mr, 0),
			     STATUS_SUCCESS);
		FR_WAIT(env, f->cq[FR_OWNER], 200 + i, T_INV, STATUS_SUCCESS);
	}
	ndk_test_log("remote tokens %#x %#x %#x ... %#x", rtok[0], rtok[1],
		     rtok[2], rtok[FR_CYCLES - 1]);
	if (env->failures)
		goto out;

	/* Registered again at the same address: the previous token is dead. */
	t = fr_target(&b, FR_R | FR_W);
	FR_FAIL_TOK(env, x, &t, true, b.base, 16, rtok[FR_CYCLES - 2]);
	FR_FAIL_TOK(env, x, &t, false, b.base, 16, rtok[FR_CYCLES - 2]);
	/* Invalidated: the last token is dead. */
	if (fr_live(env, x))
		goto out;
	qp = f->qp[FR_OWNER];
	NDK_T_STATUS(env, fr_inv(qp, CTX(300), b.mr, 0), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 300, T_INV, STATUS_SUCCESS);
	none = t;
	none.read = false;
	none.write = false;
	FR_FAIL_TOK(env, x, &none, true, b.base, 16, rtok[FR_CYCLES - 1]);
	FR_FAIL_TOK(env, x, &none, false, b.base, 16, rtok[FR_CYCLES - 1]);

	/* The privileged token reaches nothing remotely. */
	if (fr_live(env, x))
		goto out;
	i = FR_CYCLES;
	NDK_T_STATUS(env, fr_post(f->qp[FR_OWNER], CTX(301), &b, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 301, T_FR, STATUS_SUCCESS);
	ltok[i] = ndk_get_local_token_from_mr(b.mr);
	rtok[i] = ndk_get_remote_token_from_mr(b.mr);
	fr_check_new(env, "local", ltok, i);
	fr_check_new(env, "remote", rtok, i);
	t = fr_target(&b, FR_R | FR_W);
	ndk_get_privileged_memory_region_token(f->pd, &priv);
	FR_FAIL_TOK(env, x, &t, true, b.base, 16, priv);
	fr_fail_unread(env, __LINE__, x, &t,
		       b.lam->adapter_page_array[0] + b.fbo, 16, priv,
		       b.mem + b.fbo);
	FR_FAIL_TOK(env, x, &t, true, b.lam->adapter_page_array[0] + b.fbo, 16,
		    priv);
out:
	fr_buf_free(env, f, &b);
	return fr_close(env, x);
}

/* --- fr-remote-invalidate ---------------------------------------------------- */

/*
 * The peer sends-and-invalidates @tok: the owner's receive result says
 * RECEIVE_AND_INVALIDATE with the token.
 */
static void fr_remote_invalidate(struct ndk_test_env *env, struct fr_fix *x,
				 u32 tok, int ctx)
{
	struct t_fix *f = &x->f;
	struct ndk_result_ex r = {};

	NDK_T_STATUS(env, ndk_receive(f->qp[FR_OWNER], CTX(ctx), NULL, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_send_and_invalidate(f->qp[FR_PEER], CTX(ctx + 1),
						  NULL, 0, 0, tok),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_PEER], ctx + 1, T_SEND, STATUS_SUCCESS);
	if (fr_wait(env, __LINE__, f->cq[FR_OWNER], CTX(ctx), T_RECV_INV,
		    STATUS_SUCCESS, &r))
		NDK_T_CHECK(env, r.type_specific_completion_output == tok);
}

/*
 * fr-remote-invalidate: the peer's send-and-invalidate of a fast-register
 * MR's token; the MR is no longer registered (a local invalidate is
 * refused), it registers again without one, the new token works and the
 * old one does not.
 */
static int t_fr_remote_invalidate(struct ndk_test_env *env)
{
	struct fr_fix *x = fr_open(env);
	struct fr_target t, none = {};
	struct fr_buf b = {};
	struct t_fix *f;
	u32 tok;

	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	if (fr_buf_init(env, f, &b, 3, 100, 2 * PAGE_SIZE, 3, true))
		goto out;
	NDK_T_STATUS(env, fr_post(f->qp[FR_OWNER], CTX(1), &b, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 1, T_FR, STATUS_SUCCESS);
	tok = ndk_get_remote_token_from_mr(b.mr);
	FR_WRITE(env, x, 0, b.base, tok, 64, STATUS_SUCCESS);

	fr_remote_invalidate(env, x, tok, 10);
	NDK_T_STATUS(env, fr_inv(f->qp[FR_OWNER], CTX(12), b.mr, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	FR_QUIET(env, f);
	NDK_T_STATUS(env, fr_post(f->qp[FR_OWNER], CTX(13), &b, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 13, T_FR, STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_get_remote_token_from_mr(b.mr) != tok);
	t = fr_target(&b, FR_R | FR_W);
	FR_WRITE(env, x, 0, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(b.mem + b.fbo, x->src.data, b.len) == 0);
	/* The old token, on the same connection: refused. */
	FR_FAIL_TOK(env, x, &t, true, b.base, 16, tok);

	/* A second round on a fresh connection, remote-invalidated again. */
	if (fr_live(env, x))
		goto out;
	fr_remote_invalidate(env, x, t.rtok, 20);
	NDK_T_STATUS(env, fr_inv(f->qp[FR_OWNER], CTX(22), b.mr, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	FR_FAIL_TOK(env, x, &none, false, b.base, 16, t.rtok);
out:
	fr_buf_free(env, f, &b);
	return fr_close(env, x);
}

/* --- memory windows -------------------------------------------------------- */

/* NdkBind of @len bytes at @off of @m's data (its VA space). */
static s32 mw_bind(struct ndk_qp *qp, void *ctx, struct t_buf *m,
		   struct ndk_mw *mw, u32 off, u32 len, u32 flags)
{
	return ndk_bind(qp, ctx, m->mr, mw, m->data + off, len, flags);
}

static struct fr_target mw_target(struct ndk_mw *mw, struct t_buf *m,
				  u32 off, u32 len, u32 flags)
{
	struct fr_target t = {
		.addr = t_raddr(m, off),
		.len = len,
		.rtok = ndk_get_remote_token_from_mw(mw),
		.read = flags & FR_R,
		.write = (flags & FR_W) == FR_W,
	};
	return t;
}

/*
 * Every STATUS_INVALID_PARAMETER of NdkBind on @qp: @m is registered with
 * local write, @frmr is a fast-register MR.
 */
static void mw_bad_bind(struct ndk_test_env *env, struct ndk_qp *qp,
			struct t_buf *m, struct ndk_mw *mw, struct ndk_mr *frmr)
{
	static const u32 bad_flags[] = {
		FR_LW, 0x20, 0x20 | FR_R, FR_SINK, FR_LW | FR_R, 0x4, 0x40,
		0x100, 0x400, 0x80000000,
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bad_flags); i++)
		NDK_T_STATUS(env, mw_bind(qp, CTX(1), m, mw, 100, 1000,
					  bad_flags[i]),
			     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_bind(qp, CTX(2), frmr, mw, m->data + 100, 1000,
				   FR_R), STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_bind(qp, CTX(3), m->mr, mw, NULL, 1000, FR_R),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, mw_bind(qp, CTX(4), m, mw, 100, 0, FR_R),
		     STATUS_INVALID_PARAMETER);
	/* One byte before the MR, one past it, starting at its end. */
	NDK_T_STATUS(env, ndk_bind(qp, CTX(5), m->mr, mw, m->data - 1, 10,
				   FR_R), STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, mw_bind(qp, CTX(6), m, mw, m->len - 10, 11, FR_R),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, mw_bind(qp, CTX(7), m, mw, m->len, 1, FR_R),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, mw_bind(qp, CTX(8), m, mw, 0, m->len + 1, FR_R),
		     STATUS_INVALID_PARAMETER);
}

/*
 * The seed's IRQL <= DISPATCH_LEVEL for NdkBind and NdkInvalidate: both
 * called with a spinlock held and bottom halves off (the debug kernel's
 * might_sleep() and lockdep check that nothing in them sleeps).  @mw is
 * not bound, and is not again afterwards.
 */
static void mw_dispatch(struct ndk_test_env *env, struct t_fix *f,
			struct t_buf *m, struct ndk_mw *mw)
{
	static DEFINE_SPINLOCK(dispatch);
	struct ndk_qp *qp = f->qp[FR_OWNER];
	s32 st;

	spin_lock_bh(&dispatch);
	st = mw_bind(qp, CTX(40), m, mw, 100, 5000, FR_R);
	spin_unlock_bh(&dispatch);
	NDK_T_STATUS(env, st, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 40, T_BIND, STATUS_SUCCESS);
	spin_lock_bh(&dispatch);
	st = fr_inv(qp, CTX(41), mw, 0);
	spin_unlock_bh(&dispatch);
	NDK_T_STATUS(env, st, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 41, T_INV, STATUS_SUCCESS);
	ndk_test_log("bind and invalidate at dispatch level: %s",
		     env->failures ? "failed" : "both completed");
}

/*
 * mw-params: every inline status of NdkBind, and NdkInvalidate of
 * windows, on an unconnected and a connected QP; none produces a result
 * and the QP works afterwards.
 */
static int t_mw_params(struct ndk_test_env *env)
{
	struct t_buf m = {}, mro = {}, mrr = {}, gone = {};
	struct ndk_mw *w1 = NULL, *w2 = NULL, *w3 = NULL, *w_other = NULL;
	struct ndk_mr *frmr = NULL, *m_other = NULL;
	struct fr_fix *x = fr_open(env);
	struct ndk_qp *lone = NULL, *qp;
	struct ndk_pd *pd2 = NULL;
	struct fr_target t;
	struct t_fix *f;
	u32 tok;

	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	qp = f->qp[FR_OWNER];
	if (t_buf_reg(env, f, &m, 3 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE) ||
	    t_buf_reg(env, f, &mro, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_READ) ||
	    t_buf_reg(env, f, &mrr, PAGE_SIZE, NDK_MR_FLAG_ALLOW_REMOTE_READ) ||
	    t_buf_reg(env, f, &gone, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		goto out;
	NDK_T_STATUS(env, ndk_deregister_mr(gone.mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mw(f->pd, NULL, NULL, &w1), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mw(f->pd, NULL, NULL, &w2), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mw(f->pd, NULL, NULL, &w3), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mr(f->pd, true, NULL, NULL, &frmr),
		     STATUS_SUCCESS);
	if (env->failures)
		goto out;
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(frmr, 4, true, NULL,
							  NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_qp(f->pd, f->cq[0], f->cq[0], &lone, 8, 8,
					1, 1, 0, NULL, NULL, &lone),
		     STATUS_SUCCESS);
	if (env->failures)
		goto out;

	/* Unconnected: parameters first, then the connection. */
	mw_bad_bind(env, lone, &m, w1, frmr);
	NDK_T_STATUS(env, mw_bind(lone, CTX(10), &m, w1, 100, 1000, FR_R | FR_W),
		     STATUS_CONNECTION_INVALID);
	NDK_T_STATUS(env, fr_inv(lone, CTX(11), w1, FR_R),
		     STATUS_INVALID_PARAMETER);

	/* Connected. */
	mw_bad_bind(env, qp, &m, w1, frmr);
	/* Remote write needs an MR with local write. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(12), &mro, w1, 0, 100, FR_W),
		     STATUS_ACCESS_VIOLATION);
	NDK_T_STATUS(env, mw_bind(qp, CTX(13), &mrr, w1, 0, 100, FR_W),
		     STATUS_ACCESS_VIOLATION);
	NDK_T_STATUS(env, mw_bind(qp, CTX(14), &mrr, w1, 0, 100, FR_R | FR_W),
		     STATUS_ACCESS_VIOLATION);
	/* The MR is no longer registered. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(15), &gone, w1, 0, 100, FR_R),
		     STATUS_INVALID_DEVICE_REQUEST);
	/* Never bound: nothing to invalidate. */
	NDK_T_STATUS(env, fr_inv(qp, CTX(16), w1, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	/* A window or an MR of another PD. */
	NDK_T_STATUS(env, ndk_create_pd(f->adapter, NULL, NULL, &pd2),
		     STATUS_SUCCESS);
	if (pd2) {
		NDK_T_STATUS(env, ndk_create_mw(pd2, NULL, NULL, &w_other),
			     STATUS_SUCCESS);
		NDK_T_STATUS(env, ndk_create_mr(pd2, false, NULL, NULL, &m_other),
			     STATUS_SUCCESS);
		if (m_other)
			NDK_T_STATUS(env, ndk_register_mr(m_other, m.mdl, m.len,
							  NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
							  NULL, NULL),
				     STATUS_SUCCESS);
		if (w_other)
			NDK_T_STATUS(env, mw_bind(qp, CTX(17), &m, w_other, 0,
						  100, FR_R),
				     STATUS_INVALID_PARAMETER);
		if (m_other)
			NDK_T_STATUS(env, ndk_bind(qp, CTX(18), m_other, w1,
						   m.data, 100, FR_R),
				     STATUS_INVALID_PARAMETER);
	}
	FR_QUIET(env, f);

	/* Good binds: the token is final when ndk_bind() returns. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(20), &m, w1, 100, 5000, FR_R | FR_W),
		     STATUS_SUCCESS);
	tok = ndk_get_remote_token_from_mw(w1);
	FR_WAIT(env, f->cq[FR_OWNER], 20, T_BIND, STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_get_remote_token_from_mw(w1) == tok);
	/* Bound already. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(21), &m, w1, 100, 5000, FR_R),
		     STATUS_INVALID_DEVICE_REQUEST);
	/* Remote read through a window of a local-read-only MR. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(22), &mro, w2, 0, mro.len, FR_R),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 22, T_BIND, STATUS_SUCCESS);
	/* The whole MR, boundaries included. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(23), &m, w3, 0, m.len, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 23, T_BIND, STATUS_SUCCESS);
	/* Invalidate: flags checked on a bound window, on both QPs. */
	NDK_T_STATUS(env, fr_inv(lone, CTX(24), w2, FR_R),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, fr_inv(qp, CTX(25), w2, FR_W),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, fr_inv(lone, CTX(26), w2, 0),
		     STATUS_CONNECTION_INVALID);
	/* Invalidation posted, its completion not polled: busy. */
	NDK_T_STATUS(env, fr_inv(qp, CTX(27), w1, 0), STATUS_SUCCESS);
	NDK_T_STATUS(env, mw_bind(qp, CTX(28), &m, w1, 100, 5000, FR_R),
		     STATUS_DEVICE_BUSY);
	FR_WAIT(env, f->cq[FR_OWNER], 27, T_INV, STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_inv(qp, CTX(29), w1, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	FR_QUIET(env, f);
	mw_dispatch(env, f, &m, w1);

	/* The QP works; the windows carry traffic byte-exact. */
	get_random_bytes(mro.data, mro.len);
	FR_READ(env, x, 0, t_raddr(&mro, 0), ndk_get_remote_token_from_mw(w2),
		mro.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(x->sink.data, mro.data, mro.len) == 0);
	NDK_T_STATUS(env, mw_bind(qp, CTX(30), &m, w1, 300, 4000, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 30, T_BIND, STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_get_remote_token_from_mw(w1) != tok);
	t = mw_target(w1, &m, 300, 4000, FR_R | FR_W);
	fr_check_target(env, x, &t, m.data + 300, false);
	t = mw_target(w3, &m, 0, m.len, FR_R | FR_W);
	FR_WRITE(env, x, 9, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(m.data, x->src.data + 9, m.len) == 0);
	NDK_T_STATUS(env, fr_inv(qp, CTX(31), w1, 0), STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_inv(qp, CTX(32), w2, 0), STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_inv(qp, CTX(33), w3, 0), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 31, T_INV, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 32, T_INV, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 33, T_INV, STATUS_SUCCESS);
	FR_QUIET(env, f);
out:
	if (lone)
		ndk_close_qp(lone, NULL, NULL);
	if (w1)
		ndk_close_mw(w1, NULL, NULL);
	if (w2)
		ndk_close_mw(w2, NULL, NULL);
	if (w3)
		ndk_close_mw(w3, NULL, NULL);
	if (w_other)
		ndk_close_mw(w_other, NULL, NULL);
	if (m_other)
		ndk_close_mr(m_other, NULL, NULL);
	if (frmr)
		ndk_close_mr(frmr, NULL, NULL);
	if (pd2)
		ndk_close_pd(pd2, NULL, NULL);
	t_buf_free(env, &m);
	t_buf_free(env, &mro);
	t_buf_free(env, &mrr);
	t_buf_free(env, &gone);
	return fr_close(env, x);
}

/*
 * mw-traffic: windows with READ, WRITE and READ|WRITE over MRs registered
 * LOCAL_READ, LOCAL_WRITE, REMOTE_READ and REMOTE_WRITE (WRITE windows only
 * where the MR has local write): the conformance matrix of each window,
 * whose neighbour bytes lie inside the MR; the canaries around the MR.
 */
static int t_mw_traffic(struct ndk_test_env *env)
{
	static const u32 mr_flags[] = {
		NDK_MR_FLAG_ALLOW_LOCAL_READ, NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
		NDK_MR_FLAG_ALLOW_REMOTE_READ, NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
	};
	static const u32 mw_flags[] = { FR_R, FR_W, FR_R | FR_W };
	struct fr_fix *x = fr_open(env);
	struct ndk_mw *w = NULL;
	struct fr_target t;
	struct t_buf m;
	u32 i, j, off;

	if (!x || env->failures)
		return fr_close(env, x);
	NDK_T_STATUS(env, ndk_create_mw(x->f.pd, NULL, NULL, &w), STATUS_SUCCESS);
	if (!w)
		return fr_close(env, x);
	for (i = 0; i < ARRAY_SIZE(mr_flags); i++) {
		if (t_buf_reg(env, &x->f, &m, 3 * PAGE_SIZE, mr_flags[i])) {
			t_buf_free(env, &m);
			break;
		}
		for (j = 0; j < ARRAY_SIZE(mw_flags); j++) {
			if ((mw_flags[j] & FR_W) == FR_W &&
			    !(mr_flags[i] & NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
				continue;
			off = 1000 + 8 * (i * 3 + j);
			ndk_test_log("window %#x over an MR registered %#x at %u",
				     mw_flags[j], mr_flags[i], off);
			if (fr_live(env, x))
				break;
			NDK_T_STATUS(env, mw_bind(x->f.qp[FR_OWNER], CTX(40), &m, w,
						  off, 6000, mw_flags[j]),
				     STATUS_SUCCESS);
			if (!FR_WAIT(env, x->f.cq[FR_OWNER], 40, T_BIND,
				     STATUS_SUCCESS))
				break;
			t = mw_target(w, &m, off, 6000, mw_flags[j]);
			fr_check_target(env, x, &t, m.data + off, true);
			if (fr_live(env, x))
				break;
			NDK_T_STATUS(env, fr_inv(x->f.qp[FR_OWNER], CTX(41), w, 0),
				     STATUS_SUCCESS);
			FR_WAIT(env, x->f.cq[FR_OWNER], 41, T_INV, STATUS_SUCCESS);
		}
		t_buf_free(env, &m);
	}
	ndk_close_mw(w, NULL, NULL);
	return fr_close(env, x);
}

/*
 * mw-lifetime: a bound window keeps its MR registered (deregister is
 * STATUS_DEVICE_BUSY) until its invalidation completes; the old window
 * token is dead once the MR is deregistered or registered again; keys
 * change on every bind; closing the window unbinds it; closing the MR
 * with a window bound completes only once the window is closed; the
 * peer's send-and-invalidate unbinds a window.
 */
static int t_mw_lifetime(struct ndk_test_env *env)
{
	struct ndk_mw *w = NULL, *w2 = NULL, *w3 = NULL;
	struct fr_fix *x = fr_open(env);
	struct t_buf m = {}, m2 = {};
	struct fr_target t, none = {};
	u32 tok[FR_CYCLES], old;
	struct ndk_t_wait closed;
	struct t_fix *f;
	struct ndk_qp *qp;
	int i;

	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	qp = f->qp[FR_OWNER];
	NDK_T_STATUS(env, ndk_create_mw(f->pd, NULL, NULL, &w), STATUS_SUCCESS);
	if (!w || t_buf_reg(env, f, &m, 3 * PAGE_SIZE,
			    NDK_MR_FLAG_ALLOW_LOCAL_WRITE) ||
	    t_buf_reg(env, f, &m2, PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		goto out;

	/* Deregister refused while bound; allowed after the invalidation. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(1), &m, w, 1000, 4000, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 1, T_BIND, STATUS_SUCCESS);
	old = ndk_get_remote_token_from_mw(w);
	NDK_T_STATUS(env, ndk_deregister_mr(m.mr, NULL, NULL),
		     STATUS_DEVICE_BUSY);
	FR_WRITE(env, x, 0, t_raddr(&m, 1000), old, 4000, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(m.data + 1000, x->src.data, 4000) == 0);
	NDK_T_STATUS(env, fr_inv(qp, CTX(2), w, 0), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 2, T_INV, STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_deregister_mr(m.mr, NULL, NULL), STATUS_SUCCESS);
	FR_FAIL_TOK(env, x, &none, true, t_raddr(&m, 1000), 16, old);

	/* Keys differ on every bind; each is final when ndk_bind() returns. */
	NDK_T_STATUS(env, ndk_register_mr(m.mr, m.mdl, m.len,
					  NDK_MR_FLAG_ALLOW_LOCAL_WRITE, NULL,
					  NULL), STATUS_SUCCESS);
	if (fr_live(env, x))
		goto out;
	qp = f->qp[FR_OWNER];
	for (i = 0; i < FR_CYCLES; i++) {
		NDK_T_STATUS(env, mw_bind(qp, CTX(100 + i), &m, w, 8 * i, 64,
					  FR_W), STATUS_SUCCESS);
		tok[i] = ndk_get_remote_token_from_mw(w);
		FR_WAIT(env, f->cq[FR_OWNER], 100 + i, T_BIND, STATUS_SUCCESS);
		NDK_T_CHECK(env, ndk_get_remote_token_from_mw(w) == tok[i]);
		fr_check_new(env, "window", tok, i);
		FR_WRITE(env, x, i, t_raddr(&m, 8 * i), tok[i], 64,
			 STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(m.data + 8 * i, x->src.data + i, 64) == 0);
		NDK_T_STATUS(env, fr_inv(qp, CTX(200 + i), w, 0), STATUS_SUCCESS);
		FR_WAIT(env, f->cq[FR_OWNER], 200 + i, T_INV, STATUS_SUCCESS);
	}
	ndk_test_log("window tokens %#x %#x %#x ... %#x", tok[0], tok[1],
		     tok[2], tok[FR_CYCLES - 1]);

	/* The MR registered again: the old window token is dead. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(3), &m, w, 0, 4000, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 3, T_BIND, STATUS_SUCCESS);
	old = ndk_get_remote_token_from_mw(w);
	NDK_T_STATUS(env, fr_inv(qp, CTX(4), w, 0), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 4, T_INV, STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_deregister_mr(m.mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_register_mr(m.mr, m.mdl, m.len,
					  NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
					  NDK_MR_FLAG_ALLOW_REMOTE_READ, NULL,
					  NULL), STATUS_SUCCESS);
	t = (struct fr_target){
		.addr = t_raddr(&m, 0), .len = m.len,
		.rtok = ndk_get_remote_token_from_mr(m.mr),
		.read = true, .write = true,
	};
	FR_FAIL_TOK(env, x, &t, true, t_raddr(&m, 0), 16, old);

	/* Closing a bound window unbinds it: the MR deregisters. */
	if (fr_live(env, x))
		goto out;
	qp = f->qp[FR_OWNER];
	NDK_T_STATUS(env, ndk_create_mw(f->pd, NULL, NULL, &w2), STATUS_SUCCESS);
	if (!w2)
		goto out;
	NDK_T_STATUS(env, mw_bind(qp, CTX(5), &m, w2, 0, 4000, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 5, T_BIND, STATUS_SUCCESS);
	old = ndk_get_remote_token_from_mw(w2);
	NDK_T_STATUS(env, ndk_deregister_mr(m.mr, NULL, NULL),
		     STATUS_DEVICE_BUSY);
	NDK_T_STATUS(env, ndk_close_mw(w2, NULL, NULL), STATUS_SUCCESS);
	w2 = NULL;
	NDK_T_STATUS(env, ndk_deregister_mr(m.mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_register_mr(m.mr, m.mdl, m.len,
					  NDK_MR_FLAG_ALLOW_REMOTE_WRITE |
					  NDK_MR_FLAG_ALLOW_REMOTE_READ, NULL,
					  NULL), STATUS_SUCCESS);
	t.rtok = ndk_get_remote_token_from_mr(m.mr);
	FR_FAIL_TOK(env, x, &t, false, t_raddr(&m, 0), 16, old);

	/* Closing the MR with a window bound waits for the window's close. */
	if (fr_live(env, x))
		goto out;
	qp = f->qp[FR_OWNER];
	NDK_T_STATUS(env, ndk_create_mw(f->pd, NULL, NULL, &w3), STATUS_SUCCESS);
	if (!w3)
		goto out;
	NDK_T_STATUS(env, mw_bind(qp, CTX(6), &m, w3, 64, 128, FR_R),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 6, T_BIND, STATUS_SUCCESS);
	ndk_t_wait_init(&closed);
	NDK_T_STATUS(env, ndk_close_mr(m.mr, ndk_t_closed, &closed),
		     STATUS_PENDING);
	m.mr = NULL;
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&closed.calls) == 0);
	NDK_T_STATUS(env, ndk_close_mw(w3, NULL, NULL), STATUS_SUCCESS);
	w3 = NULL;
	NDK_T_CHECK(env, ndk_t_wait(&closed));
	NDK_T_CHECK(env, atomic_read(&closed.calls) == 1);

	/* The peer's send-and-invalidate unbinds a window. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(7), &m2, w, 100, 1000, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 7, T_BIND, STATUS_SUCCESS);
	old = ndk_get_remote_token_from_mw(w);
	fr_remote_invalidate(env, x, old, 8);
	NDK_T_STATUS(env, fr_inv(qp, CTX(10), w, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	NDK_T_STATUS(env, mw_bind(qp, CTX(11), &m2, w, 200, 1000, FR_R | FR_W),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 11, T_BIND, STATUS_SUCCESS);
	t = mw_target(w, &m2, 200, 1000, FR_R | FR_W);
	NDK_T_CHECK(env, t.rtok != old);
	FR_WRITE(env, x, 0, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(m2.data + 200, x->src.data, 1000) == 0);
	NDK_T_STATUS(env, ndk_deregister_mr(m2.mr, NULL, NULL),
		     STATUS_DEVICE_BUSY);
	FR_FAIL_TOK(env, x, &t, true, t_raddr(&m2, 200), 16, old);
out:
	if (w)
		ndk_close_mw(w, NULL, NULL);
	if (w2)
		ndk_close_mw(w2, NULL, NULL);
	if (w3)
		ndk_close_mw(w3, NULL, NULL);
	t_buf_free(env, &m);
	t_buf_free(env, &m2);
	return fr_close(env, x);
}

/* --- fr-silent-defer ------------------------------------------------------- */

/*
 * A zero-length RDMA write on the owner's QP, waited for: requests posted
 * before it on that QP are complete, and their results (none if silent)
 * were polled on the way.
 */
static void fr_barrier(struct ndk_test_env *env, int line, struct t_fix *f,
		       int ctx)
{
	NDK_T_STATUS(env, ndk_write(f->qp[FR_OWNER], CTX(ctx), NULL, 0, 0, 0, 0),
		     STATUS_SUCCESS);
	fr_wait(env, line, f->cq[FR_OWNER], CTX(ctx), T_WRITE, STATUS_SUCCESS,
		NULL);
}

#define FR_BARRIER(env, f, ctx) fr_barrier(env, __LINE__, f, ctx)

/*
 * After a wait that failed: a zero-length write pushes whatever is still
 * deferred to the adapter; every result up to its own is dropped, so the
 * rest of the scenario starts from a known state.
 */
static void fr_unstick(struct t_fix *f, int ctx)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	struct ndk_result_ex r;

	if (ndk_write(f->qp[FR_OWNER], CTX(ctx), NULL, 0, 0, 0, 0))
		return;
	while (time_before(jiffies, end)) {
		if (!ndk_get_cq_results_ex(f->cq[FR_OWNER], &r, 1))
			usleep_range(1000, 2000);
		else if (r.request_context == CTX(ctx))
			return;
	}
}

/*
 * fr-silent-defer: SILENT_SUCCESS fast register, bind and invalidate give
 * no result yet take effect; DEFER chains complete in order, including a
 * write that uses the MR the chain fast-registers; a deferred
 * invalidation followed by an inline failure still reaches the adapter.
 */
static int t_fr_silent_defer(struct ndk_test_env *env)
{
	struct fr_fix *x = fr_open(env);
	struct ndk_mw *w = NULL;
	struct fr_buf b = {};
	struct t_buf m = {};
	struct fr_target t;
	struct ndk_sge sge;
	struct t_fix *f;
	struct ndk_qp *qp;

	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	qp = f->qp[FR_OWNER];
	NDK_T_STATUS(env, ndk_create_mw(f->pd, NULL, NULL, &w), STATUS_SUCCESS);
	if (!w || fr_buf_init(env, f, &b, 2, 300, PAGE_SIZE, 2, true) ||
	    t_buf_reg(env, f, &m, 2 * PAGE_SIZE, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		goto out;

	/* Silent fast register: no result, the region works. */
	NDK_T_STATUS(env, fr_post(qp, CTX(1), &b, FR_R | FR_W | FR_SILENT),
		     STATUS_SUCCESS);
	FR_BARRIER(env, f, 2);
	FR_QUIET(env, f);
	t = fr_target(&b, FR_R | FR_W);
	FR_WRITE(env, x, 0, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(b.mem + b.fbo, x->src.data, b.len) == 0);
	/* Silent invalidate: no result; once polled past, registers again. */
	NDK_T_STATUS(env, fr_inv(qp, CTX(3), b.mr, FR_SILENT), STATUS_SUCCESS);
	FR_BARRIER(env, f, 4);
	FR_QUIET(env, f);
	NDK_T_STATUS(env, fr_inv(qp, CTX(5), b.mr, 0),
		     STATUS_INVALID_DEVICE_REQUEST);
	/* Silent bind: no result, the window works. */
	NDK_T_STATUS(env, mw_bind(qp, CTX(6), &m, w, 100, 3000,
				  FR_R | FR_W | FR_SILENT), STATUS_SUCCESS);
	FR_BARRIER(env, f, 7);
	FR_QUIET(env, f);
	t = mw_target(w, &m, 100, 3000, FR_R | FR_W);
	FR_WRITE(env, x, 1, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(m.data + 100, x->src.data + 1, 3000) == 0);
	NDK_T_STATUS(env, fr_inv(qp, CTX(8), w, FR_SILENT), STATUS_SUCCESS);
	FR_BARRIER(env, f, 9);
	FR_QUIET(env, f);
	NDK_T_STATUS(env, fr_inv(qp, CTX(10), w, 0),
		     STATUS_INVALID_DEVICE_REQUEST);

	/*
	 * DEFER: fast register and bind deferred, then a write that reads
	 * the freshly registered region: all complete, in order.
	 */
	memcpy(b.mem + b.fbo, x->src.data + 5, b.len);
	memset(x->sink.data, 0, b.len + 64);
	NDK_T_STATUS(env, fr_post(qp, CTX(20), &b, FR_R | FR_W | FR_DEFER),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, mw_bind(qp, CTX(21), &m, w, 0, 2000,
				  FR_R | FR_DEFER), STATUS_SUCCESS);
	sge = fr_sge(&b, 0, b.len);
	NDK_T_STATUS(env, ndk_write(qp, CTX(22), &sge, 1, t_raddr(&x->sink, 0),
				    ndk_get_remote_token_from_mr(x->sink.mr), 0),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 20, T_FR, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 21, T_BIND, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 22, T_WRITE, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(x->sink.data, x->src.data + 5, b.len) == 0);
	NDK_T_CHECK(env, t_all(x->sink.data + b.len, 0, 64));
	t = mw_target(w, &m, 0, 2000, FR_R);
	FR_READ(env, x, 0, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(x->sink.data, m.data, 2000) == 0);
	/* Deferred invalidations, then a barrier: in order. */
	NDK_T_STATUS(env, fr_inv(qp, CTX(23), b.mr, FR_DEFER), STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_inv(qp, CTX(24), w, FR_DEFER), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_write(qp, CTX(25), NULL, 0, 0, 0, 0),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 23, T_INV, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 24, T_INV, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 25, T_WRITE, STATUS_SUCCESS);

	/*
	 * Inline failures hand the deferred requests to the adapter first:
	 * a deferred zero-length write, then a fast register refused for
	 * its flags: the write completes, the refused request gives nothing.
	 */
	NDK_T_STATUS(env, ndk_write(qp, CTX(26), NULL, 0, 0, 0, FR_DEFER),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_post(qp, CTX(27), &b, 0x20),
		     STATUS_INVALID_PARAMETER);
	if (!FR_WAIT(env, f->cq[FR_OWNER], 26, T_WRITE, STATUS_SUCCESS))
		fr_unstick(f, 28);
	/*
	 * A deferred fast register, then a deferred invalidation, then a
	 * fast register refused because the invalidation is not complete:
	 * the deferred two reach the adapter and complete.
	 */
	NDK_T_STATUS(env, fr_post(qp, CTX(30), &b, FR_R | FR_DEFER),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_inv(qp, CTX(31), b.mr, FR_DEFER), STATUS_SUCCESS);
	NDK_T_STATUS(env, fr_post(qp, CTX(32), &b, FR_R), STATUS_DEVICE_BUSY);
	if (!FR_WAIT(env, f->cq[FR_OWNER], 30, T_FR, STATUS_SUCCESS) ||
	    !FR_WAIT(env, f->cq[FR_OWNER], 31, T_INV, STATUS_SUCCESS))
		fr_unstick(f, 35);
	FR_QUIET(env, f);
	/* Registered again and usable; then invalidated for the close. */
	NDK_T_STATUS(env, fr_post(qp, CTX(33), &b, FR_R), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 33, T_FR, STATUS_SUCCESS);
	t = fr_target(&b, FR_R);
	FR_READ(env, x, 0, t.addr, t.rtok, t.len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(x->sink.data, b.mem + b.fbo, b.len) == 0);
	NDK_T_STATUS(env, fr_inv(qp, CTX(34), b.mr, 0), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 34, T_INV, STATUS_SUCCESS);
	FR_QUIET(env, f);
out:
	if (w)
		ndk_close_mw(w, NULL, NULL);
	t_buf_free(env, &m);
	fr_buf_free(env, f, &b);
	return fr_close(env, x);
}

/* --- mr-chains-traffic ----------------------------------------------------- */

/* --- fr-defer-inval ------------------------------------------------------- */

/*
 * The registration @ctx of @obj waits in the owner QP's DEFER chain while
 * the peer QP (same PD) invalidates @obj.  True when the device reported
 * that invalidation a success: siw invalidates an index whatever its key
 * (siw_invalidate_stag()); rxe refuses a key it has not registered yet,
 * which breaks the peer QP.
 */
static bool fr_early_inval(struct ndk_test_env *env, struct fr_fix *x,
			   void *obj, int ctx)
{
	struct t_fix *f = &x->f;
	struct ndk_result_ex r = {};

	NDK_T_STATUS(env, fr_inv(f->qp[FR_PEER], CTX(ctx + 1), obj, 0),
		     STATUS_SUCCESS);
	if (!fr_next(env, __LINE__, f->cq[FR_PEER], CTX(ctx + 1), T_INV, &r))
		return false;
	ndk_test_log("request %d: invalidated from the other QP before it ran: status %#x",
		     ctx, r.status);
	if (r.status != STATUS_SUCCESS)
		x->dead = true;
	return r.status == STATUS_SUCCESS;
}

/*
 * Then the registration runs after all (a zero-length write pushes the
 * chain), or, where the invalidation broke the connection, is flushed
 * with its QP (a new connection).
 */
static void fr_run_late(struct ndk_test_env *env, struct fr_fix *x,
			bool early, int ctx, u32 type)
{
	struct t_fix *f = &x->f;

	if (!early) {
		fr_live(env, x);
		return;
	}
	NDK_T_STATUS(env, ndk_write(f->qp[FR_OWNER], CTX(ctx + 2), NULL, 0, 0,
				    0, 0), STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], ctx, type, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], ctx + 2, T_WRITE, STATUS_SUCCESS);
}

/*
 * The token of @mr (or, without it, of @mw) has moved on from @tok: the
 * kill's work replaced the ib_mr, whose deregistration killed @tok.
 */
static void fr_token_moves(struct ndk_test_env *env, struct ndk_mr *mr,
			   struct ndk_mw *mw, u32 tok)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;

	while ((mr ? ndk_get_remote_token_from_mr(mr) :
		     ndk_get_remote_token_from_mw(mw)) == tok &&
	       time_before(jiffies, end))
		msleep(20);
	NDK_T_CHECK(env, (mr ? ndk_get_remote_token_from_mr(mr) :
			       ndk_get_remote_token_from_mw(mw)) != tok);
}

/* ndk_deregister_mr() of @m once its window let it go (a kill's work). */
static void fr_dereg_soon(struct ndk_test_env *env, struct t_buf *m)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	s32 s;

	while ((s = ndk_deregister_mr(m->mr, NULL, NULL)) ==
	       STATUS_DEVICE_BUSY && time_before(jiffies, end))
		msleep(20);
	NDK_T_STATUS(env, s, STATUS_SUCCESS);
}

/* fr_open() with a window and a page registered with local write, zeroed. */
static struct fr_fix *fr_open_mw(struct ndk_test_env *env, struct ndk_mw **w,
				 struct t_buf *m)
{
	struct fr_fix *x = fr_open(env);

	if (!x || env->failures)
		return x;
	NDK_T_STATUS(env, ndk_create_mw(x->f.pd, NULL, NULL, w),
		     STATUS_SUCCESS);
	if (*w && !t_buf_reg(env, &x->f, m, PAGE_SIZE,
			     NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		memset(m->data, 0, 64);
	return x;
}

/*
 * After a kill: the token of @mr (or @mw) moved on from @tok, a write
 * through @tok at @raddr is refused, and the 64 bytes at @mem stay zero.
 */
static void fr_token_dead(struct ndk_test_env *env, int line,
			  struct fr_fix *x, struct ndk_mr *mr,
			  struct ndk_mw *mw, u64 raddr, u32 tok, const u8 *mem)
{
	struct fr_target none = {};

	fr_token_moves(env, mr, mw, tok);
	fr_fail(env, line, x, &none, true, raddr, 16, tok);
	if (!t_all(mem, 0, 64)) {
		ndk_test_log("line %d: a write through the dead token %#x landed",
			     line, tok);
		env->failures++;
	}
}

#define FR_TOKEN_DEAD(env, x, mr, mw, raddr, tok, mem) \
	fr_token_dead(env, __LINE__, x, mr, mw, raddr, tok, mem)

/*
 * fr-defer-inval: an invalidation that completes before its registration
 * has run proves nothing.  A bind (then a fast-register) waits in the
 * owner QP's DEFER chain while the other QP of the PD invalidates it.
 * The window keeps its MR (deregister STATUS_DEVICE_BUSY) and the
 * fast-register MR cannot be initialised again until the registration
 * has run and its key was killed (the token moves on); the old token is
 * dead, and the memory untouched.  Before the fix, on siw, the MR deregistered at once,
 * the re-initialisation freed the ib_mr the queued request used, and the
 * bind's key came alive over the released pages.
 */
static int t_fr_defer_inval(struct ndk_test_env *env)
{
	struct ndk_mw *w = NULL;
	struct t_buf m = {};
	struct fr_fix *x = fr_open_mw(env, &w, &m);
	struct fr_buf b = {};
	struct t_fix *f;
	bool early;
	u32 tok;

	if (!x)
		return fr_close(env, x);
	f = &x->f;
	if (env->failures)
		goto out;
	NDK_T_STATUS(env, mw_bind(f->qp[FR_OWNER], CTX(1), &m, w, 0, 64,
				  FR_W | FR_DEFER), STATUS_SUCCESS);
	tok = ndk_get_remote_token_from_mw(w);
	early = fr_early_inval(env, x, w, 1);
	NDK_T_STATUS(env, ndk_deregister_mr(m.mr, NULL, NULL),
		     STATUS_DEVICE_BUSY);
	fr_run_late(env, x, early, 1, T_BIND);
	FR_TOKEN_DEAD(env, x, NULL, w, t_raddr(&m, 0), tok, m.data);
	fr_dereg_soon(env, &m);

	if (fr_live(env, x) || fr_buf_init(env, f, &b, 1, 0, 64, 1, true))
		goto out;
	NDK_T_STATUS(env, fr_post(f->qp[FR_OWNER], CTX(11), &b,
				  FR_W | FR_DEFER), STATUS_SUCCESS);
	tok = ndk_get_remote_token_from_mr(b.mr);
	early = fr_early_inval(env, x, b.mr, 11);
	NDK_T_CHECK(env, ndk_initialize_fast_register_mr(b.mr, 1, true, NULL,
							 NULL) != STATUS_SUCCESS);
	fr_run_late(env, x, early, 11, T_FR);
	FR_TOKEN_DEAD(env, x, b.mr, NULL, b.base, tok, b.mem);
out:
	fr_buf_free(env, f, &b);
	if (w)
		ndk_close_mw(w, NULL, NULL);
	t_buf_free(env, &m);
	return fr_close(env, x);
}

/* --- fr-init-pending ------------------------------------------------------ */

#define FR_PENDING_ROUNDS	64

/*
 * How often each outcome of a fast-register posted before its MR's
 * initialisation completed was seen.
 */
struct fr_pending_seen {
	u32 refused;	/* posted before the first initialisation: refused */
	u32 old_rights;	/* posted on the previous initialisation's rights */
	u32 busy;	/* the initialisation found the MR fast-registered */
	u32 after;	/* the initialisation was in place first */
};

/*
 * A fast-register of @b with @flags, posted right after an asynchronous
 * NdkInitializeFastRegisterMr (2 pages, remote access) returned
 * STATUS_PENDING.  @old_refusal is what the post gets when it comes
 * before the initialisation: STATUS_INVALID_PARAMETER for an MR never
 * initialised, STATUS_ACCESS_VIOLATION for remote rights on an MR
 * initialised without remote access, 0 when the previous initialisation
 * allows it.  Returns with the MR invalidated and initialised again for
 * 2 pages without remote access.
 */
static void fr_pending_round(struct ndk_test_env *env, struct fr_fix *x,
			     struct fr_buf *b, u32 flags, s32 old_refusal,
			     u32 ctx, struct fr_pending_seen *seen)
{
	struct ndk_qp *qp = x->f.qp[FR_OWNER];
	struct ndk_cq *cq = x->f.cq[FR_OWNER];
	struct ndk_t_wait w;
	bool done_before;
	s32 s, init;

	ndk_t_wait_init(&w);
	NDK_T_STATUS(env, ndk_initialize_fast_register_mr(b->mr, 2, true,
							  ndk_t_requested, &w),
		     STATUS_PENDING);
	done_before = atomic_read(&w.calls);
	s = fr_post(qp, CTX(ctx), b, flags);
	NDK_T_CHECK(env, ndk_t_wait(&w));
	init = w.status;
	if (s == STATUS_SUCCESS)
		FR_WAIT(env, cq, ctx, T_FR, STATUS_SUCCESS);
	/* The one refusal the previous initialisation explains. */
	if (s != STATUS_SUCCESS && (s != old_refusal || done_before)) {
		ndk_test_log("round %u: fast-register %#x, initialisation %#x (done first: %d)",
			     ctx, s, init, done_before);
		env->failures++;
	}
	/* Busy only when the MR was fast-registered (or being refused). */
	if (init != STATUS_SUCCESS &&
	    (init != STATUS_DEVICE_BUSY || done_before)) {
		ndk_test_log("round %u: initialisation %#x after fast-register %#x",
			     ctx, init, s);
		env->failures++;
	}
	if (s != STATUS_SUCCESS && old_refusal == STATUS_INVALID_PARAMETER)
		seen->refused++;
	else if (s != STATUS_SUCCESS)
		seen->old_rights++;
	if (init == STATUS_DEVICE_BUSY)
		seen->busy++;
	else if (s == STATUS_SUCCESS && done_before)
		seen->after++;
	if (init == STATUS_DEVICE_BUSY) {
		/* The previous initialisation stays in force. */
		if (s == STATUS_SUCCESS) {
			NDK_T_STATUS(env, fr_inv(qp, CTX(ctx + 1), b->mr, 0),
				     STATUS_SUCCESS);
			FR_WAIT(env, cq, ctx + 1, T_INV, STATUS_SUCCESS);
		}
		if (old_refusal)
			NDK_T_STATUS(env, fr_post(qp, CTX(ctx + 2), b, flags),
				     old_refusal);
	} else if (s == STATUS_SUCCESS) {
		NDK_T_STATUS(env, fr_inv(qp, CTX(ctx + 1), b->mr, 0),
			     STATUS_SUCCESS);
		FR_WAIT(env, cq, ctx + 1, T_INV, STATUS_SUCCESS);
	}
	if (init == STATUS_SUCCESS) {
		/* The new initialisation's remote access is in force. */
		NDK_T_STATUS(env, fr_post(qp, CTX(ctx + 2), b, FR_W),
			     STATUS_SUCCESS);
		FR_WAIT(env, cq, ctx + 2, T_FR, STATUS_SUCCESS);
		NDK_T_STATUS(env, fr_inv(qp, CTX(ctx + 3), b->mr, 0),
			     STATUS_SUCCESS);
		FR_WAIT(env, cq, ctx + 3, T_INV, STATUS_SUCCESS);
	}
	if (!old_refusal || old_refusal == STATUS_ACCESS_VIOLATION ||
	    init == STATUS_SUCCESS)
		NDK_T_STATUS(env, ndk_initialize_fast_register_mr(b->mr, 2,
								  false, NULL,
								  NULL),
			     STATUS_SUCCESS);
}

/*
 * fr-init-pending: the seed's "once NdkInitializeFastRegisterMr returns,
 * a fast-register may be posted", read with the header's STATUS_PENDING
 * (registration.md): a fast-register posted while an asynchronous
 * initialisation is pending is refused when the MR was never initialised
 * (STATUS_INVALID_PARAMETER), or runs on the previous initialisation,
 * whose rights stay in force (remote rights refused with
 * STATUS_ACCESS_VIOLATION), and the initialisation then ends with
 * STATUS_DEVICE_BUSY if it found the MR fast-registered.  Nothing else:
 * every round checks the outcome against the previous and the new
 * initialisation, and the MR works after it.  Which way a round goes is
 * the workqueue's race; the counts are logged.
 */
static int t_fr_init_pending(struct ndk_test_env *env)
{
	struct fr_pending_seen seen = {};
	struct fr_fix *x = fr_open(env);
	struct fr_buf b = {};
	struct ndk_mr *fresh;
	struct t_fix *f;
	u32 i;

	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	if (fr_buf_init(env, f, &b, 1, 0, 64, 2, false))
		goto out;
	for (i = 0; i < FR_PENDING_ROUNDS && !env->failures; i++) {
		/* Remote rights, on an MR initialised without them. */
		fr_pending_round(env, x, &b, FR_W, STATUS_ACCESS_VIOLATION,
				 1000 + 16 * i, &seen);
		/* Local rights only: the previous initialisation takes it. */
		fr_pending_round(env, x, &b, 0, 0, 1004 + 16 * i, &seen);
		/* An MR never initialised. */
		NDK_T_STATUS(env, ndk_create_mr(f->pd, true, NULL, NULL,
						&fresh), STATUS_SUCCESS);
		if (env->failures)
			break;
		swap(b.mr, fresh);
		fr_pending_round(env, x, &b, 0, STATUS_INVALID_PARAMETER,
				 1008 + 16 * i, &seen);
		swap(b.mr, fresh);
		NDK_T_STATUS(env, ndk_close_mr(fresh, NULL, NULL),
			     STATUS_SUCCESS);
	}
	ndk_test_log("%u rounds: refused %u (uninitialised), %u (remote); busy %u; first %u",
		     i, seen.refused, seen.old_rights, seen.busy, seen.after);
	/* The post wins the race nearly every round (63 of 64 on rxe). */
	if (!env->failures && (!seen.refused || !seen.old_rights || !seen.busy)) {
		ndk_test_log("no round posted while the initialisation was pending");
		env->failures++;
	}
out:
	fr_buf_free(env, f, &b);
	return fr_close(env, x);
}

/* --- mw-fenced-read ------------------------------------------------------- */

/*
 * mw-fenced-read: a deferred RDMA read fenced behind earlier reads, then
 * a bind.  siw 6.1 queues the chain, cannot start a fenced read, and
 * refuses the post without naming a request (siw_post_send()); the read
 * stays at the head of its send queue.  The chain counts as posted and the
 * QP is flushed: each request completes once, cancelled, the window keeps
 * its MR until its key was killed, and its token is dead after.  rxe runs
 * both.  Before the fix, on siw, the bind failed inline while siw held it,
 * and its MR was let go at once.
 */
static int t_mw_fenced_read(struct ndk_test_env *env)
{
	struct ndk_mw *w = NULL;
	struct t_buf m = {};
	struct fr_fix *x = fr_open_mw(env, &w, &m);
	struct ndk_result_ex r = {};
	struct ndk_sge sge;
	struct t_fix *f;
	s32 read_status;
	u32 tok;

	if (!x)
		return fr_close(env, x);
	f = &x->f;
	if (env->failures)
		goto out;
	sge = t_sge(&x->sink, 0, 64);
	NDK_T_STATUS(env, ndk_read(f->qp[FR_OWNER], CTX(1), &sge, 1,
				   t_raddr(&x->src, 0),
				   ndk_get_remote_token_from_mr(x->src.mr),
				   FR_DEFER | NDK_OP_FLAG_READ_FENCE),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, mw_bind(f->qp[FR_OWNER], CTX(2), &m, w, 0, 64, FR_W),
		     STATUS_SUCCESS);
	tok = ndk_get_remote_token_from_mw(w);
	if (!fr_next(env, __LINE__, f->cq[FR_OWNER], CTX(1), T_READ, &r))
		goto out;
	read_status = r.status;
	if (!fr_next(env, __LINE__, f->cq[FR_OWNER], CTX(2), T_BIND, &r))
		goto out;
	ndk_test_log("a fenced read and a bind behind it: statuses %#x %#x",
		     read_status, r.status);
	if (r.status == STATUS_SUCCESS) {
		NDK_T_STATUS(env, read_status, STATUS_SUCCESS);
		NDK_T_STATUS(env, fr_inv(f->qp[FR_OWNER], CTX(3), w, 0),
			     STATUS_SUCCESS);
		FR_WAIT(env, f->cq[FR_OWNER], 3, T_INV, STATUS_SUCCESS);
		/* Invalidated on its QP after its result: freed, no kill. */
		FR_FAIL_TOK(env, x, &(struct fr_target){}, true,
			    t_raddr(&m, 0), 16, tok);
		NDK_T_CHECK(env, t_all(m.data, 0, 64));
	} else {
		/* The QP was flushed: both cancelled, the bind's key killed. */
		NDK_T_STATUS(env, read_status, STATUS_CANCELLED);
		NDK_T_STATUS(env, r.status, STATUS_CANCELLED);
		x->dead = true;
		FR_TOKEN_DEAD(env, x, NULL, w, t_raddr(&m, 0), tok, m.data);
	}
	fr_dereg_soon(env, &m);
out:
	if (w)
		ndk_close_mw(w, NULL, NULL);
	t_buf_free(env, &m);
	return fr_close(env, x);
}

/* --- fr-failed-reg -------------------------------------------------------- */

/*
 * The RequestContext ndk.ko's debugfs fail_completion reports failed: the
 * vm test arms it with this value (run-ktest.sh --fail-completion).
 */
#define FR_FAILED_CTX	0x6661696c65642172ULL	/* "failed!r" */

/*
 * fr-failed-reg: a fast-register or bind whose completion reports a
 * failure may have run (rxe runs a REG_MR again when it retries the
 * requests before it, and the second run fails on the MR the first made
 * valid).  A bind and a fast-register that ran and completed "failed"
 * (debugfs fail_completion) keep their MR until their key was killed:
 * the token moves on, the old one is dead, the memory untouched.
 * Before the fix the window let its MR go at once and the token still
 * wrote through.
 */
static int t_fr_failed_reg(struct ndk_test_env *env)
{
	void *ctx = (void *)(uintptr_t)FR_FAILED_CTX;
	struct ndk_mw *w = NULL;
	struct t_buf m = {};
	struct fr_fix *x = fr_open_mw(env, &w, &m);
	struct ndk_result_ex r = {};
	struct fr_buf b = {};
	struct t_fix *f;
	u32 tok;

	if (!x)
		return fr_close(env, x);
	f = &x->f;
	if (env->failures)
		goto out;
	/*
	 * Silent and fenced: a silent request that fails still gets its
	 * result (the seed's rule for NdkBind's SILENT_SUCCESS).
	 */
	NDK_T_STATUS(env, ndk_bind(f->qp[FR_OWNER], ctx, m.mr, w, m.data, 64,
				   FR_W | NDK_OP_FLAG_SILENT_SUCCESS |
				   NDK_OP_FLAG_READ_FENCE), STATUS_SUCCESS);
	tok = ndk_get_remote_token_from_mw(w);
	if (fr_next(env, __LINE__, f->cq[FR_OWNER], ctx, T_BIND, &r)) {
		ndk_test_log("a silent, fenced bind that ran, reported failed: status %#x",
			     r.status);
		NDK_T_CHECK(env, r.status != STATUS_SUCCESS);
	}
	FR_TOKEN_DEAD(env, x, NULL, w, t_raddr(&m, 0), tok, m.data);
	fr_dereg_soon(env, &m);

	if (fr_live(env, x) || fr_buf_init(env, f, &b, 1, 0, 64, 1, true))
		goto out;
	NDK_T_STATUS(env, fr_post(f->qp[FR_OWNER], ctx, &b, FR_W),
		     STATUS_SUCCESS);
	tok = ndk_get_remote_token_from_mr(b.mr);
	if (fr_next(env, __LINE__, f->cq[FR_OWNER], ctx, T_FR, &r))
		NDK_T_CHECK(env, r.status != STATUS_SUCCESS);
	FR_TOKEN_DEAD(env, x, b.mr, NULL, b.base, tok, b.mem);
out:
	fr_buf_free(env, f, &b);
	if (w)
		ndk_close_mw(w, NULL, NULL);
	t_buf_free(env, &m);
	return fr_close(env, x);
}

static u32 fr_chain_len(const struct ndk_mdl *m)
{
	u32 n = 0;

	for (; m; m = m->next)
		n++;
	return n;
}

#define FR_CHAIN_PAGES 256

/* One vmalloc'ed buffer registered whole as @flags. */
struct fr_vbuf {
	u8 *mem;
	struct ndk_mdl *mdl;
	struct ndk_mr *mr;
};

static int fr_vbuf_reg(struct ndk_test_env *env, struct t_fix *f,
		       struct fr_vbuf *v, u32 len, u32 flags)
{
	int failures = env->failures;

	v->mem = vzalloc(len);
	v->mdl = v->mem ? ndk_mdl_from_buffer(v->mem, len, GFP_KERNEL) : NULL;
	NDK_T_CHECK(env, v->mdl);
	if (!v->mdl)
		return -ENOMEM;
	NDK_T_STATUS(env, ndk_create_mr(f->pd, false, NULL, NULL, &v->mr),
		     STATUS_SUCCESS);
	if (!v->mr)
		return -ENOMEM;
	NDK_T_STATUS(env, ndk_register_mr(v->mr, v->mdl, len, flags, NULL, NULL),
		     STATUS_SUCCESS);
	return env->failures != failures ? -EINVAL : 0;
}

static void fr_vbuf_free(struct fr_vbuf *v)
{
	if (v->mr)
		ndk_close_mr(v->mr, NULL, NULL);
	ndk_mdl_free_chain(v->mdl);
	vfree(v->mem);
}

/*
 * mr-chains-traffic: NdkRegisterMr over chains of 1, 2, 17 and 255 MDL
 * elements at a random offset in the first page carries remote writes and
 * reads byte-exact over the whole region; the bytes around it are intact.
 */
static int t_mr_chains_traffic(struct ndk_test_env *env)
{
	static const u32 elements[] = { 1, 2, 17, 255 };
	u32 size = (FR_CHAIN_PAGES + 1) * PAGE_SIZE, i, off, len, rtok;
	struct fr_vbuf src = {}, sink = {};
	struct fr_fix *x = fr_open(env);
	struct ndk_mdl *chain;
	struct ndk_sge sge;
	struct ndk_mr *mr;
	u8 *buf = NULL;
	int failures;
	u64 va;

	if (!x || env->failures)
		return fr_close(env, x);
	buf = vmalloc(size);
	if (!buf ||
	    fr_vbuf_reg(env, &x->f, &src, FR_CHAIN_PAGES * PAGE_SIZE,
			NDK_MR_FLAG_ALLOW_LOCAL_READ) ||
	    fr_vbuf_reg(env, &x->f, &sink, FR_CHAIN_PAGES * PAGE_SIZE,
			NDK_MR_FLAG_ALLOW_LOCAL_WRITE |
			NDK_MR_FLAG_RDMA_READ_SINK))
		goto out;
	for (i = 0; i < ARRAY_SIZE(elements); i++) {
		off = get_random_u32_below(PAGE_SIZE);
		len = (elements[i] - 1) * PAGE_SIZE + 1 +
		      get_random_u32_below(PAGE_SIZE - off);
		ndk_test_log("chain of %u elements, offset %u, %u bytes",
			     elements[i], off, len);
		memset(buf, T_CANARY_BYTE, size);
		memset(buf + off, 0, len);
		chain = ndk_t_chain(buf, off, len, elements[i]);
		NDK_T_CHECK(env, chain && fr_chain_len(chain) == elements[i]);
		if (!chain)
			break;
		failures = env->failures;
		mr = NULL;
		NDK_T_STATUS(env, ndk_create_mr(x->f.pd, false, NULL, NULL, &mr),
			     STATUS_SUCCESS);
		if (mr)
			NDK_T_STATUS(env, ndk_register_mr(mr, chain, len,
							  NDK_MR_FLAG_ALLOW_REMOTE_READ |
							  NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
							  NULL, NULL),
				     STATUS_SUCCESS);
		if (!mr || env->failures != failures || fr_live(env, x)) {
			if (mr)
				ndk_close_mr(mr, NULL, NULL);
			ndk_mdl_free_chain(chain);
			break;
		}
		va = ndk_mdl_virtual_address(chain);
		rtok = ndk_get_remote_token_from_mr(mr);
		get_random_bytes(src.mem, len);
		sge = (struct ndk_sge){
			.virtual_address = src.mem, .length = len,
			.memory_region_token = ndk_get_local_token_from_mr(src.mr),
		};
		fr_access(env, __LINE__, x, true, &sge, va, rtok, STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(buf + off, src.mem, len) == 0);
		memset(sink.mem, 0, len);
		sge.virtual_address = sink.mem;
		sge.memory_region_token = ndk_get_local_token_from_mr(sink.mr);
		fr_access(env, __LINE__, x, false, &sge, va, rtok, STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(sink.mem, src.mem, len) == 0);
		NDK_T_CHECK(env, t_all(buf, T_CANARY_BYTE, off));
		NDK_T_CHECK(env, t_all(buf + off + len, T_CANARY_BYTE,
				       size - off - len));
		ndk_close_mr(mr, NULL, NULL);
		ndk_mdl_free_chain(chain);
	}
out:
	fr_vbuf_free(&src);
	fr_vbuf_free(&sink);
	vfree(buf);
	return fr_close(env, x);
}

/* --- registration sizes and layouts ----------------------------------------- */

#define REG_VA		0x4000000000ULL	/* 1 GiB aligned: any page size fits */
#define REG_CHUNK_ORDER	(21 - PAGE_SHIFT)	/* 2 MiB chunks */
#define REG_CHUNKS	16
#define REG_HUGE_MAX	512		/* chunks: rxe's page list, 1 GiB */

/* The device's page-list limit, from MaxRegistrationSize ((limit-1) pages). */
static u32 reg_limit(struct fr_fix *x)
{
	return x->f.info.max_registration_size / PAGE_SIZE + 1;
}

/*
 * Through @rtok at @raddr: write @len random bytes of the peer's src, find
 * them at @mem (the registered memory there), read them back into the
 * peer's sink.
 */
static void reg_rw(struct ndk_test_env *env, int line, struct fr_fix *x,
		   u64 raddr, u32 rtok, const u8 *mem, u32 len)
{
	if (fr_live(env, x))
		return;
	get_random_bytes(x->src.data, len);
	fr_write(env, line, x, 0, raddr, rtok, len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(mem, x->src.data, len) == 0);
	memset(x->sink.data, 0, len);
	fr_read(env, line, x, 0, raddr, rtok, len, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(x->sink.data, x->src.data, len) == 0);
}

static struct ndk_mr *reg_mr(struct ndk_test_env *env, struct fr_fix *x,
			     struct ndk_mdl *chain, u64 len, s32 want)
{
	struct ndk_mr *mr = NULL;
	s32 s;

	NDK_T_STATUS(env, ndk_create_mr(x->f.pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	if (!mr)
		return NULL;
	s = ndk_register_mr(mr, chain, len, NDK_MR_FLAG_ALLOW_REMOTE_READ |
			    NDK_MR_FLAG_ALLOW_REMOTE_WRITE, NULL, NULL);
	ndk_test_log("register %llu bytes at %#llx: %#x (want %#x)", len,
		     ndk_mdl_virtual_address(chain), s, want);
	NDK_T_CHECK(env, s == want);
	if (s != STATUS_SUCCESS) {
		ndk_close_mr(mr, NULL, NULL);
		return NULL;
	}
	return mr;
}

/* Element @k of a chunk chain: 2 MiB at REG_VA + @k * 2 MiB, chunk @c's. */
static struct ndk_mdl *reg_chunk_mdl(u32 k, struct page *c)
{
	struct ndk_mdl *m = ndk_mdl_alloc(REG_VA + ((u64)k << 21), SZ_2M,
					  GFP_KERNEL);
	u32 i;

	if (!m)
		return NULL;
	for (i = 0; i < m->page_count; i++)
		m->pages[i] = nth_page(c, i);
	return m;
}

/*
 * mr-huge-chunks: an MDL of 512 chunks of 2 MiB, each physically
 * contiguous and 2 MiB aligned, at a 2 MiB aligned address: 1 GiB in
 * rxe's 512-entry page list (mapped with 2 MiB pages).  The chunks are
 * 16 real ones (32 MiB of memory): the region's chunk k is chunk k % 15,
 * its last chunk is chunk 15, so the last page is memory nothing else
 * maps.  RDMA writes and reads through the token at the first, a middle
 * and the last page and across a chunk boundary land in the right chunk.
 * A blocking call measures the layout while it fills the table, an
 * asynchronous one before it returns: the same chain registers
 * asynchronously too, its last page reachable.  The same chain at an
 * address 4 KiB off the chunks' alignment needs 4 KiB pages, 262144 of
 * them: STATUS_INVALID_PARAMETER, inline in both ways.
 */
static int t_mr_huge_chunks(struct ndk_test_env *env)
{
	struct page *chunk[REG_CHUNKS] = {};
	struct ndk_mdl *chain = NULL, **tail = &chain, *m;
	struct fr_fix *x = fr_open(env);
	struct ndk_t_wait w;
	u32 n, k, i, rtok;
	struct ndk_mr *mr;
	u64 len;

	if (!x || env->failures)
		return fr_close(env, x);
	n = min_t(u32, reg_limit(x), REG_HUGE_MAX);
	len = (u64)n << 21;
	for (i = 0; i < REG_CHUNKS; i++) {
		chunk[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				       REG_CHUNK_ORDER);
		NDK_T_CHECK(env, chunk[i]);
		if (!chunk[i])
			goto out;
	}
	for (k = 0; k < n; k++) {
		m = reg_chunk_mdl(k, chunk[k == n - 1 ? REG_CHUNKS - 1 :
					   k % (REG_CHUNKS - 1)]);
		NDK_T_CHECK(env, m);
		if (!m)
			goto out;
		*tail = m;
		tail = &m->next;
	}
	ndk_test_log("%u chunks of 2 MiB, %llu bytes, page list of %u",
		     n, len, reg_limit(x));
	mr = reg_mr(env, x, chain, len, STATUS_SUCCESS);
	if (mr) {
		rtok = ndk_get_remote_token_from_mr(mr);
		/* The last page: chunk 15's last page. */
		reg_rw(env, __LINE__, x, REG_VA + len - PAGE_SIZE, rtok,
		       page_address(chunk[REG_CHUNKS - 1]) + SZ_2M - PAGE_SIZE,
		       PAGE_SIZE);
		/* The first bytes, and chunk 301 (chunk 1) inside. */
		reg_rw(env, __LINE__, x, REG_VA + 100, rtok,
		       page_address(chunk[0]) + 100, 1000);
		if (n > 301)
			reg_rw(env, __LINE__, x, REG_VA + (301ULL << 21) + 12345,
			       rtok, page_address(chunk[301 % 15]) + 12345, 3000);
		/* Across the boundary of chunks 4 and 5. */
		get_random_bytes(x->src.data, PAGE_SIZE);
		if (!fr_live(env, x))
			FR_WRITE(env, x, 0, REG_VA + (5ULL << 21) - 2048, rtok,
				 PAGE_SIZE, STATUS_SUCCESS);
		NDK_T_CHECK(env, !memcmp(page_address(chunk[4]) + SZ_2M - 2048,
					 x->src.data, 2048));
		NDK_T_CHECK(env, !memcmp(page_address(chunk[5]),
					 x->src.data + 2048, 2048));
		memset(x->sink.data, 0, PAGE_SIZE);
		if (!fr_live(env, x))
			FR_READ(env, x, 0, REG_VA + (5ULL << 21) - 2048, rtok,
				PAGE_SIZE, STATUS_SUCCESS);
		NDK_T_CHECK(env, !memcmp(x->sink.data, x->src.data, PAGE_SIZE));
		/* Again, asynchronously (measured before the call returns). */
		NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL),
			     STATUS_SUCCESS);
		ndk_t_wait_init(&w);
		NDK_T_STATUS(env, ndk_register_mr(mr, chain, len,
						  NDK_MR_FLAG_ALLOW_REMOTE_READ |
						  NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
						  ndk_t_requested, &w),
			     STATUS_PENDING);
		NDK_T_CHECK(env, ndk_t_wait(&w));
		NDK_T_STATUS(env, w.status, STATUS_SUCCESS);
		if (w.status == STATUS_SUCCESS)
			reg_rw(env, __LINE__, x, REG_VA + len - PAGE_SIZE,
			       ndk_get_remote_token_from_mr(mr),
			       page_address(chunk[REG_CHUNKS - 1]) + SZ_2M -
			       PAGE_SIZE, PAGE_SIZE);
		NDK_T_STATUS(env, ndk_close_mr(mr, NULL, NULL), STATUS_SUCCESS);
	}
	/* 4 KiB off the chunks' alignment: 4 KiB pages, far too many. */
	for (m = chain; m; m = m->next)
		m->start_va += PAGE_SIZE;
	reg_mr(env, x, chain, len, STATUS_INVALID_PARAMETER);
	if (ndk_create_mr(x->f.pd, false, NULL, NULL, &mr) == STATUS_SUCCESS) {
		ndk_t_wait_init(&w);
		NDK_T_STATUS(env, ndk_register_mr(mr, chain, len,
						  NDK_MR_FLAG_ALLOW_REMOTE_READ,
						  ndk_t_requested, &w),
			     STATUS_INVALID_PARAMETER);
		ndk_close_mr(mr, NULL, NULL);
		NDK_T_CHECK(env, atomic_read(&w.calls) == 0);
	}
out:
	ndk_mdl_free_chain(chain);
	for (i = 0; i < REG_CHUNKS; i++)
		if (chunk[i])
			__free_pages(chunk[i], REG_CHUNK_ORDER);
	return fr_close(env, x);
}

/*
 * mr-full-page-list: an MR or window whose page list is full, reached at
 * its last byte.  6.1's rxe reads one pointer past an MR's page map when
 * an access ends at the last entry of a full map (a KASAN
 * slab-out-of-bounds read on the debug kernel, registration.md): ndk.ko
 * gives every fast-register MR it allocates a spare entry there.  A
 * consumer's FR MR initialised for FRMRPageCount pages and fast-registered
 * over all of them, and a window bound over FRMRPageCount pages (of an MR
 * of 2 MiB chunks, at least two, so the range can be that long), each
 * take an RDMA write and read of their last two pages, byte-exact; a
 * window one byte longer at each end spans one page more: refused.  On
 * siw, whose registrations use 4 KiB pages and stop below FRMRPageCount
 * pages, no MR is long enough for the window: the FR MR only.
 */
static int t_mr_full_page_list(struct ndk_test_env *env)
{
	struct fr_fix *x = fr_open(env);
	struct ndk_mdl *chain = NULL, **tail = &chain, *m;
	struct page *chunk[REG_CHUNKS] = {};
	struct ndk_mr *mr = NULL;
	struct ndk_mw *w = NULL;
	const u32 len = 2 * PAGE_SIZE;
	struct fr_buf b = {};
	u32 n, k, nchunks;
	u64 va, end;

	if (!x || env->failures)
		return fr_close(env, x);
	n = x->f.info.frmr_page_count;
	nchunks = max_t(u32, 2, DIV_ROUND_UP((u64)n * PAGE_SIZE, SZ_2M));
	end = REG_VA + ((u64)nchunks << 21);
	ndk_test_log("FRMRPageCount %u: FR MR and window of %u pages", n, n);
	if (n < 2 || nchunks > REG_CHUNKS) {
		ndk_test_log("FRMRPageCount %u: this test covers 2 ... %u", n,
			     (u32)(REG_CHUNKS * (SZ_2M / PAGE_SIZE)));
		env->failures++;
		return fr_close(env, x);
	}

	/* The FR MR: the region starts 8 bytes in and ends at a page end. */
	if (!fr_buf_init(env, &x->f, &b, n, 8, n * PAGE_SIZE - 8, n, true)) {
		NDK_T_STATUS(env, fr_post(x->f.qp[FR_OWNER], CTX(90), &b,
					  FR_R | FR_W), STATUS_SUCCESS);
		if (FR_WAIT(env, x->f.cq[FR_OWNER], 90, T_FR, STATUS_SUCCESS))
			reg_rw(env, __LINE__, x, b.base + b.len - len,
			       ndk_get_remote_token_from_mr(b.mr),
			       b.mem + b.fbo + b.len - len, len);
		if (!fr_live(env, x)) {
			NDK_T_STATUS(env, fr_inv(x->f.qp[FR_OWNER], CTX(91),
						 b.mr, 0), STATUS_SUCCESS);
			FR_WAIT(env, x->f.cq[FR_OWNER], 91, T_INV,
				STATUS_SUCCESS);
		}
	}
	fr_buf_free(env, &x->f, &b);

	if (x->siw) {
		/* 4 KiB pages only, fewer than a window holds. */
		ndk_test_log("# siw: no MR spans FRMRPageCount pages (%s)",
			     "no 2 MiB pages, MaxRegistrationSize below it");
		goto out;
	}
	/* The window: the last n pages of the chunks. */
	for (k = 0; k < nchunks; k++) {
		chunk[k] = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
				       REG_CHUNK_ORDER);
		m = chunk[k] ? reg_chunk_mdl(k, chunk[k]) : NULL;
		NDK_T_CHECK(env, m);
		if (!m)
			goto out;
		*tail = m;
		tail = &m->next;
	}
	mr = reg_mr(env, x, chain, end - REG_VA, STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_mw(x->f.pd, NULL, NULL, &w),
		     STATUS_SUCCESS);
	if (!mr || !w || fr_live(env, x))
		goto out;
	va = end - (u64)n * PAGE_SIZE;
	NDK_T_STATUS(env, ndk_bind(x->f.qp[FR_OWNER], CTX(92), mr, w,
				   (void *)(uintptr_t)va, n * PAGE_SIZE,
				   FR_R | FR_W), STATUS_SUCCESS);
	if (FR_WAIT(env, x->f.cq[FR_OWNER], 92, T_BIND, STATUS_SUCCESS))
		reg_rw(env, __LINE__, x, end - len,
		       ndk_get_remote_token_from_mw(w),
		       page_address(chunk[nchunks - 1]) + SZ_2M - len, len);
	if (!fr_live(env, x)) {
		NDK_T_STATUS(env, fr_inv(x->f.qp[FR_OWNER], CTX(93), w, 0),
			     STATUS_SUCCESS);
		FR_WAIT(env, x->f.cq[FR_OWNER], 93, T_INV, STATUS_SUCCESS);
		/* One page more than the window's list: refused inline. */
		NDK_T_STATUS(env, ndk_bind(x->f.qp[FR_OWNER], CTX(94), mr, w,
					   (void *)(uintptr_t)(va - 1),
					   n * PAGE_SIZE + 1, FR_R),
			     STATUS_INVALID_PARAMETER);
	}
out:
	if (w)
		ndk_close_mw(w, NULL, NULL);
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
	ndk_mdl_free_chain(chain);
	for (k = 0; k < REG_CHUNKS; k++)
		if (chunk[k])
			__free_pages(chunk[k], REG_CHUNK_ORDER);
	return fr_close(env, x);
}

/*
 * One MDL element of @len bytes at @va whose pages are never physically
 * adjacent (so 4 KiB page-list entries, one per page): alternately pages
 * 0 and 2 of @q, and @last for the last page.
 */
static struct ndk_mdl *reg_scattered(u64 va, u32 len, struct page *q,
				     struct page *last)
{
	struct ndk_mdl *m = ndk_mdl_alloc(va, len, GFP_KERNEL);
	u32 i;

	if (!m)
		return NULL;
	for (i = 0; i < m->page_count; i++)
		m->pages[i] = i == m->page_count - 1 ? last :
			      nth_page(q, i % 2 ? 2 : 0);
	return m;
}

/*
 * mr-classes: one registration at the top of every pool class (16, 32,
 * ... pages up to the device's page list), of pages that never coalesce,
 * at the worst offset (the first byte the last of its page), each carrying
 * an RDMA write and read at its last page; exactly MaxRegistrationSize at
 * that offset; the page list's length in bytes at offset 0 (more than
 * MaxRegistrationSize, but its layout fits: accepted); one page more
 * refused with STATUS_INVALID_PARAMETER, after which the PD still
 * registers (nothing reached the device).
 */
static int t_mr_classes(struct ndk_test_env *env)
{
	struct page *q = NULL, *last = NULL;
	struct fr_fix *x = fr_open(env);
	struct ndk_mdl *m;
	u32 limit, e, len, rtok;
	struct ndk_mr *mr;
	bool done = false;

	if (!x || env->failures)
		return fr_close(env, x);
	limit = reg_limit(x);
	q = alloc_pages(GFP_KERNEL | __GFP_ZERO, 2);
	last = alloc_pages(GFP_KERNEL | __GFP_ZERO, 2);
	NDK_T_CHECK(env, q && last);
	if (!q || !last)
		goto out;
	for (e = 16; !done; e <<= 1) {
		if (e >= limit) {
			e = limit;
			done = true;
		}
		/* @e pages: from the last byte of the first to a page end. */
		len = (e - 1) * PAGE_SIZE + 1;
		m = reg_scattered(REG_VA + PAGE_SIZE - 1, len, q, last);
		NDK_T_CHECK(env, m && m->page_count == e);
		if (!m)
			break;
		mr = reg_mr(env, x, m, len, STATUS_SUCCESS);
		if (mr) {
			rtok = ndk_get_remote_token_from_mr(mr);
			reg_rw(env, __LINE__, x, REG_VA + (u64)e * PAGE_SIZE -
			       PAGE_SIZE, rtok, page_address(last), PAGE_SIZE);
			reg_rw(env, __LINE__, x, REG_VA + PAGE_SIZE - 1, rtok,
			       page_address(q) + PAGE_SIZE - 1, 1);
			ndk_close_mr(mr, NULL, NULL);
		}
		ndk_mdl_free_chain(m);
	}
	/* MaxRegistrationSize at the worst offset. */
	len = x->f.info.max_registration_size;
	m = reg_scattered(REG_VA + PAGE_SIZE - 1, len, q, last);
	mr = m ? reg_mr(env, x, m, len, STATUS_SUCCESS) : NULL;
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
	ndk_mdl_free_chain(m);
	/* The page list's length at offset 0, then one page more. */
	len = limit * PAGE_SIZE;
	m = reg_scattered(REG_VA, len + PAGE_SIZE, q, last);
	NDK_T_CHECK(env, m);
	if (m) {
		mr = reg_mr(env, x, m, len, STATUS_SUCCESS);
		if (mr)
			ndk_close_mr(mr, NULL, NULL);
		reg_mr(env, x, m, len + 1, STATUS_INVALID_PARAMETER);
		reg_mr(env, x, m, len + PAGE_SIZE, STATUS_INVALID_PARAMETER);
		mr = reg_mr(env, x, m, PAGE_SIZE, STATUS_SUCCESS);
		if (mr)
			ndk_close_mr(mr, NULL, NULL);
		ndk_mdl_free_chain(m);
	}
out:
	if (q)
		__free_pages(q, 2);
	if (last)
		__free_pages(last, 2);
	return fr_close(env, x);
}

/*
 * mr-join-mid-page: a chain of two elements joining inside a page (the
 * first ends at byte 500 of its second page, the second starts there) is
 * virtually contiguous: it registers, the shared page is in the
 * registration once (NdkBuildLAM gives 3 pages for 3 pages spanned), and
 * RDMA writes and reads across the join are byte-exact with the bytes
 * around the region intact.  Elements that name different pages for the
 * page they share are refused with STATUS_INVALID_PARAMETER.
 */
static int t_mr_join_mid_page(struct ndk_test_env *env)
{
	struct ndk_logical_address_mapping *lam = NULL;
	u32 off = 100, len = 3 * PAGE_SIZE - 200, lam_size, fbo, rtok;
	struct fr_fix *x = fr_open(env);
	struct ndk_mdl *a = NULL, *bad = NULL;
	struct page *other = NULL;
	struct ndk_mr *mr;
	u8 *buf = NULL;
	u32 join = PAGE_SIZE + 500;

	if (!x || env->failures)
		return fr_close(env, x);
	buf = vmalloc(3 * PAGE_SIZE);
	other = alloc_page(GFP_KERNEL);
	lam = kzalloc(struct_size(lam, adapter_page_array, 8), GFP_KERNEL);
	if (buf)
		memset(buf, T_CANARY_BYTE, 3 * PAGE_SIZE);
	a = buf ? ndk_mdl_from_buffer(buf + off, join - off, GFP_KERNEL) : NULL;
	if (a)
		a->next = ndk_mdl_from_buffer(buf + join, off + len - join,
					      GFP_KERNEL);
	NDK_T_CHECK(env, buf && other && lam && a && a->next);
	if (!buf || !other || !lam || !a || !a->next)
		goto out;
	NDK_T_CHECK(env, a->next->pages[0] == a->pages[a->page_count - 1]);
	fbo = 0;
	NDK_T_CHECK(env, ndk_mdl_check_contiguous(a, len, &fbo) == 0);
	NDK_T_CHECK(env, fbo == 3);

	lam_size = struct_size(lam, adapter_page_array, 8);
	NDK_T_STATUS(env, ndk_build_lam(x->f.adapter, a, len, NULL, NULL, lam,
					&lam_size, &fbo), STATUS_SUCCESS);
	NDK_T_CHECK(env, lam->adapter_page_count == 3 && fbo == off);
	ndk_release_lam(x->f.adapter, lam);

	mr = reg_mr(env, x, a, len, STATUS_SUCCESS);
	if (mr) {
		rtok = ndk_get_remote_token_from_mr(mr);
		memset(buf + off, 0, len);
		/* The whole region, then 64 bytes either side of the join. */
		reg_rw(env, __LINE__, x, (uintptr_t)buf + off, rtok, buf + off,
		       len);
		reg_rw(env, __LINE__, x, (uintptr_t)buf + join - 64, rtok,
		       buf + join - 64, 128);
		NDK_T_CHECK(env, t_all(buf, T_CANARY_BYTE, off));
		NDK_T_CHECK(env, t_all(buf + off + len, T_CANARY_BYTE,
				       3 * PAGE_SIZE - off - len));
		ndk_close_mr(mr, NULL, NULL);
	}
	/* The second element names another page for the shared one. */
	bad = ndk_mdl_from_buffer(buf + join, off + len - join, GFP_KERNEL);
	if (bad) {
		bad->pages[0] = other;
		swap(a->next, bad);
		reg_mr(env, x, a, len, STATUS_INVALID_PARAMETER);
		swap(a->next, bad);
	}
out:
	ndk_mdl_free_chain(a);
	ndk_mdl_free_chain(bad);
	if (other)
		__free_page(other);
	kfree(lam);
	vfree(buf);
	return fr_close(env, x);
}

/*
 * lam-privileged: a logical address mapping (NdkBuildLAM) used with the
 * PD's privileged token as a send source and, where the adapter sets
 * NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED, as an RDMA read sink (the
 * seed: consumers may use LAMs with that token directly as read sinks).
 * Byte-exact both ways.  On iWARP the sink needs a registration: skipped.
 */
static int t_lam_privileged(struct ndk_test_env *env)
{
	const u32 off = 300, len = 1000;
	struct fr_fix *x = fr_open(env);
	struct ndk_logical_address_mapping *lam = NULL;
	struct ndk_mdl *mdl = NULL;
	struct ndk_sge sge;
	u32 size, fbo, tok;
	struct t_fix *f;
	u8 *buf = NULL;

	if (!x || env->failures)
		return fr_close(env, x);
	f = &x->f;
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	mdl = buf ? ndk_mdl_from_buffer(buf + off, len, GFP_KERNEL) : NULL;
	size = struct_size(lam, adapter_page_array, 1);
	lam = kzalloc(size, GFP_KERNEL);
	NDK_T_CHECK(env, mdl && lam);
	if (!mdl || !lam)
		goto out;
	NDK_T_STATUS(env, ndk_build_lam(f->adapter, mdl, len, NULL, NULL, lam,
					&size, &fbo), STATUS_SUCCESS);
	if (env->failures)
		goto out;
	NDK_T_CHECK(env, fbo == off && lam->adapter_page_count == 1);
	ndk_get_privileged_memory_region_token(f->pd, &tok);
	sge = (struct ndk_sge) {
		.logical_address = lam->adapter_page_array[0] + fbo,
		.length = len,
		.memory_region_token = tok,
	};

	/* A send source: the peer receives the bytes. */
	get_random_bytes(buf + off, len);
	memset(x->sink.data, 0, len);
	{
		struct ndk_sge rs = t_sge(&x->sink, 0, len);

		NDK_T_STATUS(env, ndk_receive(f->qp[FR_PEER], CTX(95), &rs, 1),
			     STATUS_SUCCESS);
	}
	NDK_T_STATUS(env, ndk_send(f->qp[FR_OWNER], CTX(96), &sge, 1, 0),
		     STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_OWNER], 96, T_SEND, STATUS_SUCCESS);
	FR_WAIT(env, f->cq[FR_PEER], 95, T_RECV, STATUS_SUCCESS);
	NDK_T_CHECK(env, memcmp(x->sink.data, buf + off, len) == 0);

	/* A read sink, where the adapter needs no sink rights. */
	if (!(f->info.adapter_flags &
	      NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED)) {
		ndk_test_log("# iWARP: a read sink needs a registration");
	} else {
		memset(buf + off, 0, len);
		fr_access(env, __LINE__, x, false, &sge, t_raddr(&x->src, 5),
			  ndk_get_remote_token_from_mr(x->src.mr),
			  STATUS_SUCCESS);
		NDK_T_CHECK(env, memcmp(buf + off, x->src.data + 5, len) == 0);
		NDK_T_CHECK(env, t_all(buf, 0, off));
		NDK_T_CHECK(env, t_all(buf + off + len, 0,
				       PAGE_SIZE - off - len));
	}
	ndk_release_lam(f->adapter, lam);
out:
	kfree(lam);
	ndk_mdl_free_chain(mdl);
	kfree(buf);
	return fr_close(env, x);
}

/*
 * Reads the peer's src into the first 64 bytes of @mem, registered in @mr,
 * through @mr's local token (fr_access()); @want is the read's result,
 * and a refused read leaves @mem as it was.
 */
static void fr_read_into(struct ndk_test_env *env, int line,
			 struct fr_fix *x, struct ndk_mr *mr, u8 *mem,
			 s32 want)
{
	struct ndk_sge sge = {
		.virtual_address = mem,
		.length = 64,
		.memory_region_token = ndk_get_local_token_from_mr(mr),
	};

	if (fr_live(env, x))
		return;
	memset(mem, 0, 64);
	fr_access(env, line, x, false, &sge, t_raddr(&x->src, 0),
		  ndk_get_remote_token_from_mr(x->src.mr), want);
	if (want == STATUS_SUCCESS)
		NDK_T_CHECK(env, memcmp(mem, x->src.data, 64) == 0);
	else
		NDK_T_CHECK(env, t_all(mem, 0, 64));
}

/*
 * mr-register-rights: what each NdkRegisterMr flag set lets a peer do
 * through the MR's own remote token, over a region 100 bytes into a
 * page: granted rights byte-exact over the whole region and refused a
 * byte outside it, rights not granted refused inside it (each refusal on
 * a fresh connection; siw serves reads without the right: security.md);
 * and a local read into the MR succeeds exactly with the local write
 * right.
 */
static int t_mr_register_rights(struct ndk_test_env *env)
{
	static const u32 flags[] = { 0x0, 0x1, 0x2, 0x5, 0x7 };
	const u32 off = 100, len = 2 * PAGE_SIZE;
	struct fr_fix *x = fr_open(env);
	struct ndk_mr *mr = NULL;
	struct fr_target t;
	struct ndk_mdl *mdl;
	u8 *mem;
	u32 i;

	if (!x || env->failures)
		return fr_close(env, x);
	mem = vzalloc(len + 2 * off);
	mdl = mem ? ndk_mdl_from_buffer(mem + off, len, GFP_KERNEL) : NULL;
	NDK_T_CHECK(env, mdl);
	if (!mdl)
		goto out_free;
	NDK_T_STATUS(env, ndk_create_mr(x->f.pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	for (i = 0; !env->failures && i < ARRAY_SIZE(flags); i++) {
		NDK_T_STATUS(env, ndk_register_mr(mr, mdl, len, flags[i], NULL,
						  NULL), STATUS_SUCCESS);
		t = (struct fr_target) {
			.addr = (uintptr_t)(mem + off),
			.len = len,
			.rtok = ndk_get_remote_token_from_mr(mr),
			.read = flags[i] & NDK_MR_FLAG_ALLOW_REMOTE_READ,
			.write = (flags[i] & NDK_MR_FLAG_ALLOW_REMOTE_WRITE) ==
				 NDK_MR_FLAG_ALLOW_REMOTE_WRITE,
		};
		ndk_test_log("NdkRegisterMr flags %#x: remote read %d, write %d",
			     flags[i], t.read, t.write);
		fr_check_target(env, x, &t, mem + off, true);
		/*
		 * NDK_MR_FLAG_ALLOW_LOCAL_WRITE: a read lands in the MR
		 * through its local token only with it, and a refused one
		 * writes nothing (on iWARP a read sink needs a remote write
		 * as well: mr-read-only).
		 */
		if (!x->iwarp)
			fr_read_into(env, __LINE__, x, mr, mem + off,
				     flags[i] & NDK_MR_FLAG_ALLOW_LOCAL_WRITE ?
				     STATUS_SUCCESS : STATUS_ACCESS_VIOLATION);
		NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL),
			     STATUS_SUCCESS);
	}
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
out_free:
	ndk_mdl_free_chain(mdl);
	vfree(mem);
	return fr_close(env, x);
}

/*
 * mr-read-only: NdkRegisterMr over pages the device must not write
 * (NDK_MDL_READ_ONLY).  A write right is STATUS_ACCESS_VIOLATION, but the
 * seed says RDMA_READ_SINK must not fail a registration on an adapter
 * with NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED: there it registers
 * without its local write, and a read into it fails with nothing
 * written.  On iWARP a read sink is a remote write: refused.  Over
 * writable pages the flag alone makes a read sink on both.
 */
static int t_mr_read_only(struct ndk_test_env *env)
{
	static const u32 flags[] = { 0x0, 0x2, 0x8, 0xa, 0x1, 0x3, 0x5, 0x9,
				     0xf };
	struct fr_fix *x = fr_open(env);
	struct ndk_mdl *mdl = NULL;
	struct ndk_mr *mr = NULL;
	bool sink_free, writes;
	u8 *mem = NULL;
	s32 status;
	u32 i;

	if (!x || env->failures)
		return fr_close(env, x);
	sink_free = x->f.info.adapter_flags &
		    NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED;
	NDK_T_CHECK(env, sink_free == !x->iwarp);
	mem = vzalloc(2 * PAGE_SIZE);
	mdl = mem ? ndk_mdl_from_buffer(mem, 2 * PAGE_SIZE, GFP_KERNEL) : NULL;
	NDK_T_CHECK(env, mdl);
	if (!mdl)
		goto out;
	NDK_T_STATUS(env, ndk_create_mr(x->f.pd, false, NULL, NULL, &mr),
		     STATUS_SUCCESS);
	if (!mr)
		goto out;

	/* Writable pages: RDMA_READ_SINK alone makes a read sink. */
	NDK_T_STATUS(env, ndk_register_mr(mr, mdl, 2 * PAGE_SIZE,
					  NDK_MR_FLAG_RDMA_READ_SINK, NULL,
					  NULL), STATUS_SUCCESS);
	fr_read_into(env, __LINE__, x, mr, mem, STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL), STATUS_SUCCESS);

	mdl->flags |= NDK_MDL_READ_ONLY;
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		writes = flags[i] & NDK_MR_FLAG_ALLOW_LOCAL_WRITE ||
			 (flags[i] & NDK_MR_FLAG_RDMA_READ_SINK && !sink_free);
		status = ndk_register_mr(mr, mdl, 2 * PAGE_SIZE, flags[i],
					 NULL, NULL);
		ndk_test_log("flags %#x over read-only pages: %#x", flags[i],
			     status);
		NDK_T_STATUS(env, status, writes ? STATUS_ACCESS_VIOLATION :
					  STATUS_SUCCESS);
		if (status)
			continue;
		/* No local write: a read into the pages is refused. */
		if (flags[i] & NDK_MR_FLAG_RDMA_READ_SINK)
			fr_read_into(env, __LINE__, x, mr, mem,
				     STATUS_ACCESS_VIOLATION);
		NDK_T_STATUS(env, ndk_deregister_mr(mr, NULL, NULL),
			     STATUS_SUCCESS);
	}
out:
	if (mr)
		ndk_close_mr(mr, NULL, NULL);
	ndk_mdl_free_chain(mdl);
	vfree(mem);
	return fr_close(env, x);
}

const struct ndk_test ndk_tests_fr[] = {
	{ "fr-params", t_fr_params },
	{ "fr-traffic", t_fr_traffic },
	{ "fr-rotation", t_fr_rotation },
	{ "fr-remote-invalidate", t_fr_remote_invalidate },
	{ "mw-params", t_mw_params },
	{ "mw-traffic", t_mw_traffic },
	{ "mw-lifetime", t_mw_lifetime },
	{ "fr-silent-defer", t_fr_silent_defer },
	{ "fr-defer-inval", t_fr_defer_inval },
	{ "fr-init-pending", t_fr_init_pending },
	{ "mw-fenced-read", t_mw_fenced_read },
	{ "fr-failed-reg", t_fr_failed_reg },
	{ "mr-read-only", t_mr_read_only },
	{ "mr-register-rights", t_mr_register_rights },
	{ "lam-privileged", t_lam_privileged },
	{ "mr-chains-traffic", t_mr_chains_traffic },
	{ "mr-huge-chunks", t_mr_huge_chunks },
	{ "mr-classes", t_mr_classes },
	{ "mr-join-mid-page", t_mr_join_mid_page },
	{ "mr-full-page-list", t_mr_full_page_list },
	{ NULL, NULL },
};
