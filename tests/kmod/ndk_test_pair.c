// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: pair-client, the kernel consumer of the two-hosts test
 * (scripts/vm-pair.sh, tests/pair/pair-guest.sh).
 *
 * Connects to ndk-target on another host (module parameter pair_target,
 * "a.b.c.d:port"), retrying while it does not listen yet, takes the
 * window's descriptor from the accept's private data (u64 address, u32
 * token, u32 length, little-endian: Documentation/ndk-target.md) and runs
 * rounds of an RDMA write of a pattern into the window and an RDMA read of
 * it back into another buffer, compared byte for byte.  Then disconnects.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

#define T_PAIR_ROUNDS	16
#define T_PAIR_BYTES	4096
#define T_PAIR_TRIES	60

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

/*
 * One round: write a pattern of @seed at the window's @off, read it back.
 * Return: 0 when the bytes read back are the ones written.
 */
static int t_pair_round(struct ndk_test_env *env, struct t_fix *f,
			struct t_buf *w, struct t_buf *r, u64 raddr, u32 token,
			u32 seed)
{
	struct ndk_sge ws = t_sge(w, 0, T_PAIR_BYTES);
	struct ndk_sge rs = t_sge(r, 0, T_PAIR_BYTES);
	struct ndk_result res[2];
	int failures = env->failures;
	u32 i;

	t_fill(w->data, T_PAIR_BYTES, (u8)(seed * 37 + 1));
	memset(r->data, 0, T_PAIR_BYTES);
	NDK_T_STATUS(env, ndk_write(f->qp[0], w, &ws, 1, raddr, token, 0),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_read(f->qp[0], r, &rs, 1, raddr, token, 0),
		     STATUS_SUCCESS);
	if (env->failures != failures)
		return -1;
	NDK_T_CHECK(env, t_poll(f->cq[0], res, 2) == 2);
	if (env->failures != failures)
		return -1;
	for (i = 0; i < 2; i++)
		t_check_result(env, &res[i], STATUS_SUCCESS, &f->qp[0],
			       i ? (void *)r : (void *)w);
	if (memcmp(r->data, w->data, T_PAIR_BYTES)) {
		for (i = 0; r->data[i] == w->data[i]; i++)
			;
		ndk_test_log("round %u: byte %u read back is %#x, wrote %#x",
			     seed, i, r->data[i], w->data[i]);
		env->failures++;
	}
	return env->failures != failures ? -1 : 0;
}

static int t_pair_client(struct ndk_test_env *env)
{
	struct sockaddr_in dst;
	struct t_buf w = {}, r = {};
	struct t_fix f;
	u8 pd[256];
	u32 len = sizeof(pd), token, wlen, i;
	s32 why = STATUS_SUCCESS;
	int tries, rc = -1;
	u64 raddr;

	if (!env->pair_target || !*env->pair_target) {
		ndk_test_log("# SKIP no pair_target module parameter");
		return NDK_TEST_SKIP;
	}
	if (t_pair_parse(env->pair_target, &dst)) {
		ndk_test_log("bad pair_target %s", env->pair_target);
		return NDK_TEST_FAIL;
	}
	if (t_open(env, &f, 1))
		return t_verdict(env, &f);
	if (t_buf_reg(env, &f, &w, T_PAIR_BYTES, NDK_MR_FLAG_ALLOW_LOCAL_READ) ||
	    t_buf_reg(env, &f, &r, T_PAIR_BYTES, NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
		goto out;

	for (tries = 1; tries <= T_PAIR_TRIES; tries++) {
		rc = t_pair_connect_once(env, &f, &dst, &why);
		if (rc != -1)
			break;
		msleep(1000);
	}
	if (rc) {
		ndk_test_log("no connection to %pISpc after %d tries, last status %#x",
			     &dst, tries - 1, why);
		env->failures++;
		goto out;
	}
	NDK_T_STATUS(env, ndk_get_connection_data(f.a, NULL, NULL, pd, &len),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, len >= 16);
	if (env->failures)
		goto out;
	raddr = get_unaligned_le64(&pd[0]);
	token = get_unaligned_le32(&pd[8]);
	wlen = get_unaligned_le32(&pd[12]);
	ndk_test_log("# pair-client: connected to %pISpc after %d tries", &dst,
		     tries);
	ndk_test_log("# pair-client: window %#llx token %#x length %u", raddr,
		     token, wlen);
	NDK_T_CHECK(env, wlen >= T_PAIR_BYTES);
	for (i = 0; !env->failures && i < T_PAIR_ROUNDS; i++)
		t_pair_round(env, &f, &w, &r, raddr + (i * 1024) % (wlen - T_PAIR_BYTES + 1),
			     token, i);
	if (!env->failures)
		ndk_test_log("# pair-client: %u rounds of %u bytes written, read back and compared",
			     i, T_PAIR_BYTES);

	NDK_T_STATUS(env, ndk_disconnect(f.a, NULL, NULL), STATUS_SUCCESS);
out:
	t_close_conn(&f.a);
	t_buf_free(env, &w);
	t_buf_free(env, &r);
	return t_verdict(env, &f);
}

const struct ndk_test ndk_tests_pair[] = {
	{ "pair-client", t_pair_client },
	{ }
};
