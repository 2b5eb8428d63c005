// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: pair-client and pair-outage, the kernel consumer of the
 * two-hosts test (scripts/vm-pair.sh, tests/pair/pair-guest.sh).
 *
 * Connects to ndk-target on another host (module parameter pair_target,
 * "a.b.c.d:port"), retrying while it does not listen yet, takes the
 * window's descriptor from the accept's private data (u64 address, u32
 * token, u32 length, little-endian: Documentation/ndk-target.md) and runs
 * rounds of an RDMA write of a pattern into the window and an RDMA read of
 * it back into another buffer, compared byte for byte.  Then disconnects.
 * pair-outage also lives through the loss of the target's host: error
 * results in bounded time, then a new connection that works.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

#define T_PAIR_ROUNDS	16
#define T_PAIR_BYTES	4096

static int t_pair_parse(const char *text, struct sockaddr_in *sin)
{
	const char *colon = strrchr(text, ':');
	u16 port;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if (!colon || kstrtou16(colon + 1, 10, &port) || !port)
		return -EINVAL;
	if (!in4_pton(text, colon - text, (u8 *)&sin->sin_addr.s_addr, ':',
		      NULL))
		return -EINVAL;
	sin->sin_port = htons(port);
	return 0;
}

/*
 * One connection attempt of f->qp[0] to @dst on a new connector f->a.
 * Return: 0 when connected; -1 (f->a closed) when not.
 */
static int t_pair_connect_once(struct ndk_test_env *env, struct t_fix *f,
			       struct sockaddr_in *dst, s32 *why)
{
	s32 s;

	ndk_t_wait_init(&f->connect_req);
	ndk_t_wait_init(&f->complete_req);
	ndk_t_wait_init(&f->disc_a);
	s = ndk_create_connector(f->adapter, NULL, NULL, &f->a);
	if (s != STATUS_SUCCESS) {
		*why = s;
		return -1;
	}
	s = ndk_connect(f->a, f->qp[0], NULL, 0, (struct sockaddr *)dst,
			sizeof(*dst), 0, min(f->info.max_outbound_read_limit, 4U),
			NULL, 0, ndk_t_requested, &f->connect_req);
	if (s == STATUS_PENDING) {
		s = ndk_t_wait(&f->connect_req) ? f->connect_req.status :
						  STATUS_IO_TIMEOUT;
	}
	if (s == STATUS_SUCCESS) {
		s = ndk_complete_connect(f->a, t_disc_cb, &f->disc_a,
					 ndk_t_requested, &f->complete_req);
		if (s == STATUS_PENDING)
			s = ndk_t_wait(&f->complete_req) ?
			    f->complete_req.status : STATUS_IO_TIMEOUT;
	}
	if (s == STATUS_SUCCESS)
		return 0;
	*why = s;
	t_close_conn(&f->a);
	/* A failed connect leaves the QP unusable for the next one. */
	return t_new_qp(env, f, 0) ? -2 : -1;
}

/**
 * struct t_pair - a connection to ndk-target and what it uses
 * @f:     the fixture: adapter, PD, CQ 0, QP 0, connector @f.a
 * @dst:   ndk-target's address
 * @w:     the pattern written
 * @r:     where it is read back
 * @raddr: the window's address (from the descriptor)
 * @token: the window's token
 * @wlen:  the window's length
 */
struct t_pair {
	struct t_fix f;
	struct sockaddr_in dst;
	struct t_buf w, r;
	u64 raddr;
	u32 token, wlen;
};

/*
 * Connects, retrying for @secs seconds (x ndk_t_time_scale), and reads the
 * descriptor.
 * Return: 0 when connected, with @p->raddr, @p->token and @p->wlen set.
 */
static int t_pair_connect(struct ndk_test_env *env, struct t_pair *p,
			  unsigned int secs)
{
	unsigned long end = jiffies + secs * ndk_t_time_scale * HZ;
	u32 len = T_CALLEE_MAX;
	s32 why = STATUS_SUCCESS;
	int tries = 0, rc;
	u8 pd[T_CALLEE_MAX];

	do {
		tries++;
		rc = t_pair_connect_once(env, &p->f, &p->dst, &why);
		if (rc != -1)
			break;
		msleep(1000);
	} while (time_before(jiffies, end));
	if (rc) {
		ndk_test_log("no connection to %pISpc after %d tries, last status %#x",
			     &p->dst, tries, why);
		env->failures++;
		return -1;
	}
	NDK_T_STATUS(env, ndk_get_connection_data(p->f.a, NULL, NULL, pd, &len),
		     STATUS_SUCCESS);
	if (len < 16) {
		ndk_test_log("private data of %u bytes, not 16", len);
		env->failures++;
		return -1;
	}
	p->raddr = get_unaligned_le64(&pd[0]);
	p->token = get_unaligned_le32(&pd[8]);
	p->wlen = get_unaligned_le32(&pd[12]);
	ndk_test_log("# pair: connected to %pISpc after %d tries", &p->dst, tries);
	ndk_test_log("# pair: window %#llx token %#x length %u", p->raddr,
		     p->token, p->wlen);
	if (p->wlen < T_PAIR_BYTES) {
		ndk_test_log("window of %u bytes, need %u", p->wlen, T_PAIR_BYTES);
		env->failures++;
		return -1;
	}
	return 0;
}

/*
 * Posts one round (a write of a pattern of @seed, a read of it back) and
 * collects its two results within @secs seconds (x ndk_t_time_scale)
 * into @res.  The guests' clock does not jump (tsc=unstable,
 * tests/testbed/vm-lib.sh), so a jiffies deadline is the bound.
 * Return: 0 both succeeded and the bytes match; 1 an error completion
 * (a clean failure); -1 anything else (logged).
 */
static int t_pair_round(struct t_pair *p, u32 seed, unsigned int secs,
			struct ndk_result *res)
{
	struct ndk_sge ws = t_sge(&p->w, 0, T_PAIR_BYTES);
	struct ndk_sge rs = t_sge(&p->r, 0, T_PAIR_BYTES);
	u64 at = p->raddr + (seed * 1024) % (p->wlen - T_PAIR_BYTES + 1);
	unsigned long end = jiffies + secs * ndk_t_time_scale * HZ;
	u32 got = 0, i;
	s32 s;

	t_fill(p->w.data, T_PAIR_BYTES, (u8)(seed * 37 + 1));
	memset(p->r.data, 0, T_PAIR_BYTES);
	s = ndk_write(p->f.qp[0], &p->w, &ws, 1, at, p->token, 0);
	if (s == STATUS_SUCCESS)
		s = ndk_read(p->f.qp[0], &p->r, &rs, 1, at, p->token, 0);
	if (s != STATUS_SUCCESS) {
		ndk_test_log("round %u: post: status %#x", seed, s);
		return -1;
	}
	while (got < 2 && time_before(jiffies, end)) {
		got += ndk_get_cq_results(p->f.cq[0], res + got, 2 - got);
		if (got < 2)
			msleep(20);
	}
	if (got < 2) {
		ndk_test_log("round %u: %u of 2 results within %u s: a hang",
			     seed, got, secs * ndk_t_time_scale);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		if (res[i].qp_context != &p->f.qp[0] ||
		    res[i].request_context != (i ? (void *)&p->r : (void *)&p->w)) {
			ndk_test_log("round %u: result %u has the wrong contexts",
				     seed, i);
			return -1;
		}
	}
	if (res[0].status != STATUS_SUCCESS || res[1].status != STATUS_SUCCESS)
		return 1;
	if (memcmp(p->r.data, p->w.data, T_PAIR_BYTES)) {
		for (i = 0; p->r.data[i] == p->w.data[i]; i++)
			;
		ndk_test_log("round %u: byte %u read back is %#x, wrote %#x",
			     seed, i, p->r.data[i], p->w.data[i]);
		return -1;
	}
	return 0;
}

/* @n rounds from @first that must all pass. */
static void t_pair_rounds(struct ndk_test_env *env, struct t_pair *p,
			  u32 first, u32 n)
{
	struct ndk_result res[2];
	u32 i;

	for (i = first; i < first + n; i++) {
		int rc = t_pair_round(p, i, 30, res);

		if (rc == 1)
			ndk_test_log("round %u: results %#x, %#x", i,
				     res[0].status, res[1].status);
		if (rc) {
			env->failures++;
			return;
		}
	}
	ndk_test_log("# pair: %u rounds of %u bytes written, read back and compared",
		     n, T_PAIR_BYTES);
}

/* The fixture and both buffers; 0 on success. */
static int t_pair_open(struct ndk_test_env *env, struct t_pair *p)
{
	memset(p, 0, sizeof(*p));
	if (!env->pair_target || !*env->pair_target) {
		ndk_test_log("# SKIP no pair_target module parameter");
		return NDK_TEST_SKIP;
	}
	if (t_pair_parse(env->pair_target, &p->dst)) {
		ndk_test_log("bad pair_target %s", env->pair_target);
		return NDK_TEST_FAIL;
	}
	if (t_open(env, &p->f, 1) ||
	    t_buf_reg(env, &p->f, &p->w, T_PAIR_BYTES, NDK_MR_FLAG_ALLOW_LOCAL_READ) ||
	    t_buf_reg(env, &p->f, &p->r, T_PAIR_BYTES, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		return NDK_TEST_FAIL;
	return NDK_TEST_PASS;
}

static int t_pair_close(struct ndk_test_env *env, struct t_pair *p)
{
	t_close_conn(&p->f.a);
	t_buf_free(env, &p->w);
	t_buf_free(env, &p->r);
	return t_verdict(env, &p->f);
}

/* pair-client: connect, 16 rounds, disconnect. */
static int t_pair_client(struct ndk_test_env *env)
{
	struct t_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	int rc;

	if (!p)
		return NDK_TEST_FAIL;
	rc = t_pair_open(env, p);
	if (rc == NDK_TEST_SKIP) {
		kfree(p);
		return rc;
	}
	if (rc == NDK_TEST_PASS && !t_pair_connect(env, p, 120)) {
		t_pair_rounds(env, p, 0, T_PAIR_ROUNDS);
		NDK_T_STATUS(env, ndk_disconnect(p->f.a, NULL, NULL),
			     STATUS_SUCCESS);
	}
	rc = t_pair_close(env, p);
	kfree(p);
	return rc;
}

/*
 * pair-outage: connect, 16 rounds, then log "# pair-outage: traffic
 * running" (tests/pair/pair-guest.sh has the host kill ndk-target's guest
 * when it sees that line) and go on until a round ends with error results
 * (within 60 s each, 180 s in all: a hang fails), log "# pair-outage:
 * error", close the connection, reconnect within 240 s (the host boots
 * the target again) and pass 16 rounds again.
 */
static int t_pair_outage(struct ndk_test_env *env)
{
	struct t_pair *p = kzalloc(sizeof(*p), GFP_KERNEL);
	struct ndk_result res[2];
	unsigned long signalled, last_ok, failed;
	u32 round = T_PAIR_ROUNDS;
	int rc;

	if (!p)
		return NDK_TEST_FAIL;
	rc = t_pair_open(env, p);
	if (rc == NDK_TEST_SKIP) {
		kfree(p);
		return rc;
	}
	if (rc != NDK_TEST_PASS || t_pair_connect(env, p, 120))
		goto out;
	t_pair_rounds(env, p, 0, T_PAIR_ROUNDS);
	if (env->failures)
		goto out;
	ndk_test_log("# pair-outage: traffic running");
	signalled = jiffies;
	last_ok = jiffies;
	for (;;) {
		rc = t_pair_round(p, round, 60, res);
		if (rc)
			break;
		last_ok = jiffies;
		round++;
		if (time_after(jiffies, signalled + 180 * ndk_t_time_scale * HZ)) {
			ndk_test_log("traffic still works %u s after the signal",
				     180 * ndk_t_time_scale);
			rc = -1;
			break;
		}
	}
	if (rc < 0) {
		env->failures++;
		goto out;
	}
	failed = jiffies;
	ndk_test_log("# pair-outage: error: round %u: results %#x, %#x",
		     round, res[0].status, res[1].status);
	ndk_test_log("# pair-outage: %u ms after the last good round, %u rounds after the signal",
		     jiffies_to_msecs(failed - last_ok), round - T_PAIR_ROUNDS);
	/* The peer cannot answer a disconnect: close, new QP, connect. */
	t_close_conn(&p->f.a);
	if (t_new_qp(env, &p->f, 0) || t_pair_connect(env, p, 240))
		goto out;
	ndk_test_log("# pair-outage: reconnected %u ms after the error",
		     jiffies_to_msecs(jiffies - failed));
	t_pair_rounds(env, p, round + 1, T_PAIR_ROUNDS);
	NDK_T_STATUS(env, ndk_disconnect(p->f.a, NULL, NULL), STATUS_SUCCESS);
out:
	rc = t_pair_close(env, p);
	kfree(p);
	return rc;
}

const struct ndk_test ndk_tests_pair[] = {
	{ "pair-client", t_pair_client },
	{ "pair-outage", t_pair_outage },
	{ }
};
