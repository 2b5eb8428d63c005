// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: the iWARP registration QP (kmod/ndk_reg_iw.c), a loopback
 * connection through rdma_cm, lost and rebuilt.
 *
 * ndk.ko's root-only module parameter reg_iw_drop disconnects every iWARP
 * registration connection when written, as a failing peer or network
 * would, and reads back the number of rebuilds so far.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/slab.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

#define T_IW_DROP	"/sys/module/ndk/parameters/reg_iw_drop"

/* Rebuilds so far, or -1 when the parameter cannot be read. */
static long t_iw_rebuilds(void)
{
	char buf[24] = {};
	struct file *f;
	loff_t pos = 0;
	long val;
	ssize_t n;

	f = filp_open(T_IW_DROP, O_RDONLY, 0);
	if (IS_ERR(f)) {
		ndk_test_log("open %s: %ld", T_IW_DROP, PTR_ERR(f));
		return -1;
	}
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0 || kstrtol(strim(buf), 10, &val)) {
		ndk_test_log("read %s: %zd '%s'", T_IW_DROP, n, buf);
		return -1;
	}
	return val;
}

static bool t_iw_drop(void)
{
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = filp_open(T_IW_DROP, O_WRONLY, 0);
	if (IS_ERR(f)) {
		ndk_test_log("open %s: %ld", T_IW_DROP, PTR_ERR(f));
		return false;
	}
	n = kernel_write(f, "1\n", 2, &pos);
	filp_close(f, NULL);
	if (n != 2)
		ndk_test_log("write %s: %zd", T_IW_DROP, n);
	return n == 2;
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

const struct ndk_test ndk_tests_iw[] = {
	{ "reg-qp-rebuild", t_reg_qp_rebuild },
	{ }
};
