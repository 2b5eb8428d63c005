// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_bench.ko: the runner.
 *
 * debugfs ndk_bench/run (root only): write "<measure> key=value ..." to
 * run one measure; the write returns when it is done.  Keys: rounds=,
 * iters=, depth=, sizes=a,b,c.  Reading ndk_bench/result then gives the
 * measure's lines (ndk_bench.h) and a last line "ok <measure>" or
 * "not ok <measure> <errno>".
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>

#include "ndk_bench.h"

static char *adapter = "rxe0";
module_param(adapter, charp, 0444);
MODULE_PARM_DESC(adapter, "ib_device the measures use");
static char *peer_ip = "10.99.0.1";
module_param(peer_ip, charp, 0444);
MODULE_PARM_DESC(peer_ip, "IPv4 address of the adapter's netdev");

#define NB_RESULT_MAX (16 * 1024 * 1024)

static DEFINE_MUTEX(nb_lock);	/* one measure at a time */
static char *nb_result;		/* under nb_lock */
static size_t nb_result_len;
static bool nb_result_full;
static struct dentry *nb_dir;

/**
 * nb_out() - append a line to the running measure's result
 * @fmt: printf format, without the newline
 *
 * Context: process context, the measure's thread (under nb_lock).
 */
void nb_out(const char *fmt, ...)
{
	size_t room = NB_RESULT_MAX - nb_result_len;
	va_list args;
	int n;

	if (room < 256) {
		nb_result_full = true;
		return;
	}
	va_start(args, fmt);
	n = vscnprintf(nb_result + nb_result_len, room - 1, fmt, args);
	va_end(args);
	nb_result_len += n;
	nb_result[nb_result_len++] = '\n';
}

/**
 * nb_sample() - record one sample
 * @measure: F1, R1-reg, ...
 * @variant: ndk, raw, ...
 * @param:   the size the sample is for
 * @round:   the interleaved round
 * @ns:      nanoseconds the @ops operations took together
 * @ops:     operations timed
 */
void nb_sample(const char *measure, const char *variant, u32 param,
	       u32 round, u64 ns, u32 ops)
{
	nb_out("S %s %s %u %u %llu %u", measure, variant, param, round, ns,
	       ops);
}

struct nb_measure {
	const char *name;
	int (*run)(struct nb_env *env);
	bool user;	/* a user range (addr=, len=) instead of sizes= */
};

static const struct nb_measure nb_measures[] = {
	{ "f1", nb_f1 },
	{ "r1", nb_r1 },
	{ "w1", nb_w1 },
	{ "d1", nb_d1 },
	{ "pin", nb_pin, true },
};

static int nb_parse_sizes(struct nb_env *env, char *v)
{
	char *s;

	env->nparams = 0;
	while ((s = strsep(&v, ",")) != NULL) {
		if (env->nparams == NB_MAX_PARAMS)
			return -E2BIG;
		if (kstrtou32(s, 0, &env->params[env->nparams]) ||
		    !env->params[env->nparams])
			return -EINVAL;
		env->nparams++;
	}
	return 0;
}

/* "<measure> key=value ..." into @env; returns the measure or NULL. */
static const struct nb_measure *nb_parse(char *cmd, struct nb_env *env)
{
	const struct nb_measure *m = NULL;
	char *tok, *val;
	int i, ret = 0;

	tok = strsep(&cmd, " ");
	for (i = 0; i < ARRAY_SIZE(nb_measures); i++)
		if (tok && !strcmp(tok, nb_measures[i].name))
			m = &nb_measures[i];
	if (!m)
		return NULL;
	while (!ret && (tok = strsep(&cmd, " ")) != NULL) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val)
			return NULL;
		*val++ = '\0';
		if (!strcmp(tok, "rounds"))
			ret = kstrtou32(val, 0, &env->rounds);
		else if (!strcmp(tok, "iters"))
			ret = kstrtou32(val, 0, &env->iters);
		else if (!strcmp(tok, "depth"))
			ret = kstrtou32(val, 0, &env->depth);
		else if (!strcmp(tok, "sizes"))
			ret = nb_parse_sizes(env, val);
		else if (!strcmp(tok, "addr"))
			ret = kstrtou64(val, 0, &env->addr);
		else if (!strcmp(tok, "len"))
			ret = kstrtou64(val, 0, &env->len);
		else
			ret = -EINVAL;
	}
	if (ret || !env->rounds || !env->iters || env->depth < 8 ||
	    env->depth > 1024)
		return NULL;
	if (m->user ? !env->addr || !env->len : !env->nparams)
		return NULL;
	return m;
}

static ssize_t nb_run_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	struct nb_env env = {
		.adapter = adapter,
		.peer_ip = peer_ip,
		.rounds = 5,
		.iters = 100,
		.depth = 64,
	};
	const struct nb_measure *m;
	char cmd[256];
	int ret;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	strim(cmd);
	m = nb_parse(cmd, &env);
	if (!m)
		return -EINVAL;

	mutex_lock(&nb_lock);
	nb_result_len = 0;
	nb_result_full = false;
	if (m->user)
		goto run;
	nb_out("I kernel %s", utsname()->release);
	nb_out("I device %s", adapter);
	nb_out("I rounds %u", env.rounds);
	nb_out("I iters %u", env.iters);
	nb_out("I depth %u", env.depth);
run:
	ret = m->run(&env);
	if (!ret && nb_result_full)
		ret = -ENOSPC;
	if (ret)
		nb_out("not ok %s %d", m->name, ret);
	else
		nb_out("ok %s", m->name);
	mutex_unlock(&nb_lock);
	return count;
}

static ssize_t nb_result_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&nb_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, nb_result,
				      nb_result_len);
	mutex_unlock(&nb_lock);
	return ret;
}

static const struct file_operations nb_run_fops = {
	.owner = THIS_MODULE,
	.write = nb_run_write,
	.llseek = noop_llseek,
};

static const struct file_operations nb_result_fops = {
	.owner = THIS_MODULE,
	.read = nb_result_read,
	.llseek = default_llseek,
};

static int __init nb_init(void)
{
	nb_result = vmalloc(NB_RESULT_MAX);
	if (!nb_result)
		return -ENOMEM;
	nb_dir = debugfs_create_dir("ndk_bench", NULL);
	debugfs_create_file("run", 0200, nb_dir, NULL, &nb_run_fops);
	debugfs_create_file("result", 0400, nb_dir, NULL, &nb_result_fops);
	return 0;
}

static void __exit nb_exit(void)
{
	debugfs_remove_recursive(nb_dir);
	vfree(nb_result);
}

module_init(nb_init);
module_exit(nb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ndk-linux benchmarks: NDK kernel API vs raw ib_core");
