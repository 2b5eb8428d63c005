// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: the scenario runner.
 *
 * debugfs ndk_test/run (root only): write a scenario name to run it; the
 * write returns once the scenario is done.  Reading ndk_test/result then
 * gives its log followed by a KTAP-style verdict line:
 *   ok 1 <name>            pass
 *   not ok 1 <name>        fail
 *   ok 1 <name> # SKIP     skip
 * Writing "list" makes the result the list of scenario names.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "ndk_test.h"

static char *adapter = "rxe0";
module_param(adapter, charp, 0444);
MODULE_PARM_DESC(adapter, "ib_device the scenarios use");
static char *peer_ip = "10.99.0.1";
module_param(peer_ip, charp, 0444);
MODULE_PARM_DESC(peer_ip, "IPv4 address of the adapter's netdev");
static char *silent_ip = "";
module_param(silent_ip, charp, 0444);
MODULE_PARM_DESC(silent_ip, "IPv4 address whose neighbour resolves but never answers, for cm-connect-stall");
static char *pair_target = "";
module_param(pair_target, charp, 0444);
MODULE_PARM_DESC(pair_target, "ndk-target on another host (a.b.c.d:port), for pair-client");
unsigned int ndk_t_time_scale = 1;
module_param_named(time_scale, ndk_t_time_scale, uint, 0444);
MODULE_PARM_DESC(time_scale, "factor of every time bound (NDK_VM_TIMEOUT_SCALE: 6 on the debug kernel)");

static const struct ndk_test *const ndk_test_tables[] = {
	ndk_tests_adapter,
	ndk_tests_mr,
	ndk_tests_removal,
	ndk_tests_qp,
	ndk_tests_cm,
	ndk_tests_fr,
	ndk_tests_pair,
	ndk_tests_pdata,
	ndk_tests_iw,
	ndk_tests_direct,
};

#define NDK_TEST_RESULT_MAX (64 * 1024)

static DEFINE_MUTEX(ndk_test_lock);	/* one scenario at a time */
static char *ndk_test_result;		/* under ndk_test_lock */
static size_t ndk_test_result_len;
static struct dentry *ndk_test_dir;

/**
 * ndk_test_log() - append a line to the running scenario's log
 * @fmt: printf format
 *
 * Context: process context (the scenario's thread).
 */
void ndk_test_log(const char *fmt, ...)
{
	size_t room = NDK_TEST_RESULT_MAX - ndk_test_result_len;
	va_list args;
	int n;

	va_start(args, fmt);
	n = vscnprintf(ndk_test_result + ndk_test_result_len, room, fmt, args);
	va_end(args);
	pr_info("ndk_test: %s\n", ndk_test_result + ndk_test_result_len);
	ndk_test_result_len += n;
	ndk_test_result_len += scnprintf(ndk_test_result + ndk_test_result_len,
					 NDK_TEST_RESULT_MAX - ndk_test_result_len,
					 "\n");
}

static atomic_t ndk_t_seq = ATOMIC_INIT(0);

/**
 * ndk_t_next_seq() - number a callback among all recorded ones
 *
 * Return: the next sequence number (increasing, never 0).
 */
int ndk_t_next_seq(void)
{
	return atomic_inc_return(&ndk_t_seq);
}

/**
 * ndk_t_wait_init() - reset a completion record before a call
 * @w: the record
 */
void ndk_t_wait_init(struct ndk_t_wait *w)
{
	init_completion(&w->done);
	w->status = STATUS_PENDING;
	w->object = NULL;
	atomic_set(&w->calls, 0);
	w->seq = 0;
}

/**
 * ndk_t_requested() - an ndk_fn_request_completion recording into @context
 * @context: a struct ndk_t_wait
 * @status:  the request's status
 */
void ndk_t_requested(void *context, s32 status)
{
	struct ndk_t_wait *w = context;

	w->status = status;
	w->seq = ndk_t_next_seq();
	atomic_inc(&w->calls);
	complete(&w->done);
}

/**
 * ndk_t_created() - an ndk_fn_create_completion recording into @context
 * @context: a struct ndk_t_wait
 * @status:  the create's status
 * @object:  the new object, or NULL
 */
void ndk_t_created(void *context, s32 status, struct ndk_object_header *object)
{
	struct ndk_t_wait *w = context;

	w->object = object;
	ndk_t_requested(context, status);
}

/**
 * ndk_t_closed() - an ndk_fn_close_completion recording into @context
 * @context: a struct ndk_t_wait
 */
void ndk_t_closed(void *context)
{
	ndk_t_requested(context, STATUS_SUCCESS);
}

/**
 * ndk_t_wait() - wait for the recorded callback
 * @w: the record
 *
 * Return: false if it did not run within NDK_T_TIMEOUT.
 */
bool ndk_t_wait(struct ndk_t_wait *w)
{
	return wait_for_completion_timeout(&w->done, NDK_T_TIMEOUT) != 0;
}

static const struct ndk_test *ndk_test_find(const char *name)
{
	const struct ndk_test *t;
	int i;

	for (i = 0; i < ARRAY_SIZE(ndk_test_tables); i++)
		for (t = ndk_test_tables[i]; t->name; t++)
			if (strcmp(t->name, name) == 0)
				return t;
	return NULL;
}

static void ndk_test_list(void)
{
	const struct ndk_test *t;
	int i;

	for (i = 0; i < ARRAY_SIZE(ndk_test_tables); i++)
		for (t = ndk_test_tables[i]; t->name; t++)
			ndk_test_log("%s", t->name);
}

static ssize_t ndk_test_run_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	struct ndk_test_env env = {
		.adapter_name = adapter,
		.peer_ip = peer_ip,
		.silent_ip = silent_ip,
		.pair_target = pair_target,
	};
	const struct ndk_test *t;
	char name[64];
	int rc;

	if (len == 0 || len >= sizeof(name))
		return -EINVAL;
	if (copy_from_user(name, ubuf, len))
		return -EFAULT;
	name[len] = 0;
	strim(name);

	mutex_lock(&ndk_test_lock);
	ndk_test_result_len = 0;
	ndk_test_result[0] = 0;
	if (strcmp(name, "list") == 0) {
		ndk_test_list();
		goto out_unlock;
	}
	t = ndk_test_find(name);
	if (!t) {
		mutex_unlock(&ndk_test_lock);
		return -ENOENT;
	}
	ndk_test_log("# running %s on %s", t->name, adapter);
	rc = t->run(&env);
	if (rc == NDK_TEST_PASS && env.failures)
		rc = NDK_TEST_FAIL;
	if (rc == NDK_TEST_PASS)
		ndk_test_log("ok 1 %s", t->name);
	else if (rc == NDK_TEST_SKIP)
		ndk_test_log("ok 1 %s # SKIP", t->name);
	else
		ndk_test_log("not ok 1 %s (%d failed checks)", t->name,
			     env.failures);
out_unlock:
	mutex_unlock(&ndk_test_lock);
	return len;
}

static ssize_t ndk_test_result_read(struct file *file, char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&ndk_test_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, ndk_test_result,
				      ndk_test_result_len);
	mutex_unlock(&ndk_test_lock);
	return ret;
}

static const struct file_operations ndk_test_run_fops = {
	.owner = THIS_MODULE,
	.write = ndk_test_run_write,
	.llseek = no_llseek,
};

static const struct file_operations ndk_test_result_fops = {
	.owner = THIS_MODULE,
	.read = ndk_test_result_read,
	.llseek = default_llseek,
};

static int __init ndk_test_init(void)
{
	ndk_t_time_scale = max(ndk_t_time_scale, 1U);
	ndk_test_result = kvzalloc(NDK_TEST_RESULT_MAX, GFP_KERNEL);
	if (!ndk_test_result)
		return -ENOMEM;
	ndk_test_dir = debugfs_create_dir("ndk_test", NULL);
	debugfs_create_file("run", 0200, ndk_test_dir, NULL, &ndk_test_run_fops);
	debugfs_create_file("result", 0400, ndk_test_dir, NULL,
			    &ndk_test_result_fops);
	return 0;
}

static void __exit ndk_test_exit(void)
{
	debugfs_remove(ndk_test_dir);
	ndk_test_removal_exit();
	kvfree(ndk_test_result);
}

module_init(ndk_test_init);
module_exit(ndk_test_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("In-kernel scenarios for ndk.ko");
