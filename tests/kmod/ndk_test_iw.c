// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: the registration QP of a PD lost and rebuilt: on iWARP a
 * loopback connection through rdma_cm (kmod/ndk_reg_iw.c), elsewhere a QP
 * connected to itself (kmod/ndk_reg.c).
 *
 * ndk.ko's root-only module parameter reg_iw_drop disconnects every iWARP
 * registration connection when written, as a failing peer or network
 * would, and reads back the number of rebuilds so far; reg_refuse makes
 * the next N registration posts fail as a QP out of RTS refuses them, and
 * reads back the rebuilds of self-connected QPs.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

#define T_IW_DROP	"/sys/module/ndk/parameters/reg_iw_drop"
#define T_REFUSE	"/sys/module/ndk/parameters/reg_refuse"

static long t_iw_rebuilds(void)
{
	return t_hook_read(T_IW_DROP);
}

static bool t_iw_drop(void)
{
	return t_hook_write(T_IW_DROP, "1\n");
}

/*
 * Register @b right after a drop of the registration connection: the
 * first try may be refused (a post outside RTS marks the path broken);
 * the second, a second later, must work.  Return: 0, or what it failed
 * with.
 */
static int t_reg_after_drop(struct ndk_test_env *env, struct t_fix *f,
			    struct t_buf *b, u32 len, u32 flags)
{
	int fails = env->failures;

	if (!t_buf_reg(env, f, b, len, flags))
		return 0;
	ndk_test_log("the registration right after the drop was refused; retrying");
	env->failures = fails;	/* allowed once */
	t_buf_free(env, b);
	memset(b, 0, sizeof(*b));
	msleep(1000);
	return t_buf_reg(env, f, b, len, flags);
}

/*
 * Register A; drop the registration connection; after the disconnect
 * events a registration of B rebuilds it (one rebuild) and works, and A
 * deregisters on the new QP.  Then drop it again and register at once,
 * before the events may have come: within two tries a registration works
 * (a post refused outside RTS marks the path broken too), and the next
 * one again, with one more rebuild.
 */
static int t_reg_qp_rebuild(struct ndk_test_env *env)
{
	struct t_buf a = {}, b = {}, c = {}, d = {};
	const u32 flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
	long before, after;
	struct t_fix f;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	if (f.info.rdma_technology != NDK_IWARP) {
		ndk_test_log("# the loopback registration QP exists on iWARP only");
		t_close_all(&f);
		return NDK_TEST_SKIP;
	}
	if (t_buf_reg(env, &f, &a, 3 * PAGE_SIZE, flags))
		goto out;
	before = t_iw_rebuilds();
	NDK_T_CHECK(env, before >= 0);
	NDK_T_CHECK(env, t_iw_drop());
	msleep(1000);	/* the disconnect events, on a slow guest maybe not */
	NDK_T_CHECK(env, !t_reg_after_drop(env, &f, &b, 5 * PAGE_SIZE, flags));
	after = t_iw_rebuilds();
	ndk_test_log("rebuilds: %ld before the drop, %ld after", before, after);
	NDK_T_CHECK(env, after == before + 1);
	NDK_T_STATUS(env, ndk_deregister_mr(a.mr, NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_register_mr(a.mr, a.mdl, a.len, flags, NULL,
					  NULL), STATUS_SUCCESS);

	/* At once this time. */
	NDK_T_CHECK(env, t_iw_drop());
	NDK_T_CHECK(env, !t_reg_after_drop(env, &f, &c, PAGE_SIZE, flags));
	NDK_T_CHECK(env, t_buf_reg(env, &f, &d, PAGE_SIZE, flags) == 0);
	after = t_iw_rebuilds();
	ndk_test_log("rebuilds: %ld after the second drop", after);
	NDK_T_CHECK(env, after == before + 2);
out:
	t_buf_free(env, &d);
	t_buf_free(env, &c);
	t_buf_free(env, &b);
	t_buf_free(env, &a);
	return t_verdict(env, &f);
}

/* reg-qp-refuse: a registering thread; see t_reg_qp_refuse(). */
struct t_refuse_worker {
	struct ndk_test_env *env;
	struct t_buf b;
	struct completion done;
	atomic_t *stop;
	bool finished;
	u32 ok, refused;
};

#define T_REFUSE_WORKERS	4
#define T_REFUSE_ROUNDS		30

/* The workers and their stop flag, kept if one of them never finishes. */
struct t_refuse {
	atomic_t stop;
	struct t_refuse_worker w[T_REFUSE_WORKERS];
};

static int t_refuse_worker_fn(void *arg)
{
	const u32 flags = NDK_MR_FLAG_ALLOW_LOCAL_WRITE;
	struct t_refuse_worker *w = arg;
	struct t_buf *b = &w->b;
	s32 status;

	/* Registered by t_buf_reg(): each round deregisters first. */
	while (!atomic_read(w->stop)) {
		NDK_T_STATUS(w->env, ndk_deregister_mr(b->mr, NULL, NULL),
			     STATUS_SUCCESS);
		status = ndk_register_mr(b->mr, b->mdl, b->len, flags, NULL,
					 NULL);
		if (status == STATUS_SUCCESS) {
			w->ok++;
			continue;
		}
		w->refused++;
		/* Registered again before the loop deregisters it. */
		while (!atomic_read(w->stop) &&
		       ndk_register_mr(b->mr, b->mdl, b->len, flags, NULL,
				       NULL))
			w->refused++;
	}
	complete(&w->done);
	return 0;
}

/*
 * Registration posts refused while T_REFUSE_WORKERS threads register and
 * deregister on one PD: each refusal breaks the registration path, the
 * next registration rebuilds it (credits held across the QP's reset and
 * reconnection, so no thread posts in between and loses its request),
 * and every thread keeps going: none waits for ever, and registrations
 * work again once the refusals stop.
 */
static int t_reg_qp_refuse(struct ndk_test_env *env)
{
	struct t_refuse_worker *w;
	const char *rebuilds_hook;
	struct t_refuse *rf;
	bool all_done = true;
	struct task_struct *t;
	long before, after;
	struct t_buf last = {};
	struct t_fix f;
	u32 ok = 0, refused = 0;
	int i, started = 0;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	rf = kzalloc(sizeof(*rf), GFP_KERNEL);
	NDK_T_CHECK(env, rf);
	if (!rf)
		return t_verdict(env, &f);
	w = rf->w;
	rebuilds_hook = f.info.rdma_technology == NDK_IWARP ? T_IW_DROP :
			T_REFUSE;
	before = t_hook_read(rebuilds_hook);
	NDK_T_CHECK(env, before >= 0);
	for (i = 0; i < T_REFUSE_WORKERS; i++) {
		w[i].env = env;
		w[i].stop = &rf->stop;
		init_completion(&w[i].done);
		if (t_buf_reg(env, &f, &w[i].b, PAGE_SIZE,
			      NDK_MR_FLAG_ALLOW_LOCAL_WRITE))
			break;
		t = kthread_run(t_refuse_worker_fn, &w[i], "ndk_t_refuse%d", i);
		NDK_T_CHECK(env, !IS_ERR(t));
		if (IS_ERR(t))
			break;
		started++;
	}
	for (i = 0; started && i < T_REFUSE_ROUNDS; i++) {
		NDK_T_CHECK(env, t_hook_write(T_REFUSE, "1\n"));
		msleep(30);
	}
	NDK_T_CHECK(env, t_hook_write(T_REFUSE, "0\n"));
	atomic_set(&rf->stop, 1);
	for (i = 0; i < started; i++) {
		/* A thread whose request was lost would sleep for ever. */
		if (!wait_for_completion_timeout(&w[i].done,
						 6 * NDK_T_TIMEOUT)) {
			ndk_test_log("worker %d did not finish: a registration waits for ever", i);
			NDK_T_CHECK(env, false);
			all_done = false;
			continue;
		}
		w[i].finished = true;
		ok += w[i].ok;
		refused += w[i].refused;
	}
	for (i = 0; i < T_REFUSE_WORKERS; i++)
		if (i >= started || w[i].finished)
			t_buf_free(env, &w[i].b);
	/* Refusals spent, the path rebuilt: registrations work. */
	NDK_T_CHECK(env, t_buf_reg(env, &f, &last, PAGE_SIZE,
				   NDK_MR_FLAG_ALLOW_LOCAL_WRITE) == 0);
	t_buf_free(env, &last);
	after = t_hook_read(rebuilds_hook);
	ndk_test_log("reg-qp-refuse: %u registrations, %u refused, rebuilds %ld -> %ld",
		     ok, refused, before, after);
	NDK_T_CHECK(env, refused > 0 && ok > 0 && after > before);
	if (all_done)
		kfree(rf);
	return t_verdict(env, &f);
}

const struct ndk_test ndk_tests_iw[] = {
	{ "reg-qp-rebuild", t_reg_qp_rebuild },
	{ "reg-qp-refuse", t_reg_qp_refuse },
	{ }
};
