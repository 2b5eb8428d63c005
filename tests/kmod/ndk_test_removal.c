// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: device removal with live objects.
 *
 * `rdma link delete` cannot be run from inside a scenario (the removal
 * waits for this very consumer), so each case is a sequence of scenarios
 * driven by tests/vm/removal-live-objects.sh, with the consumer's objects
 * kept in module-global state between them (the script keeps ndk_test.ko
 * loaded for the whole sequence):
 *
 * Live objects, closed later by the consumer:
 *   removal-setup    open the adapter with a removal callback, create two
 *                    PDs (one blocking, one asynchronous), the first with
 *                    its registration path (one MR registered and closed);
 *   (the script starts `rdma link delete` in the background and checks it
 *   is still waiting)
 *   removal-release  the callback ran exactly once; a new PD (blocking or
 *                    asynchronous) fails with STATUS_DEVICE_REMOVED, a new
 *                    adapter cannot open; close both PDs;
 *   (the script checks the delete still waits: the adapter is open)
 *   removal-close    close the adapter;
 *   (the script checks the delete finishes promptly)
 *
 * Everything closed from inside the removal callback:
 *   removal-cb-setup open the adapter and two PDs (the first with its
 *                    registration path); the callback checks
 *                    that new PDs fail, closes one PD blocking and one with
 *                    a completion, then closes the adapter itself;
 *   (the script runs `rdma link delete`, which must finish promptly)
 *   removal-cb-check what the callback saw, and that it ran exactly once.
 *
 * removal-cleanup closes whatever is still open (the script runs it when
 * a step failed, so that the device removal is not left waiting); module
 * unload does the same.  Every wait has a timeout.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "ndk_test.h"

#define NDK_T_RM_PDS		2

/*
 * struct ndk_t_rm - the consumer's state, kept across scenario runs
 * @lock:          serializes scenarios against module unload
 * @adapter:       the open adapter, NULL when closed
 * @pd:            the open PDs
 * @removals:      removal callback runs
 * @removal_wait:  woken by the removal callback
 * @create_done:   the asynchronous PD create completed
 * @create_status: its status
 * @create_object: its object
 * @create_calls:  its completion runs
 * @close_done:    the asynchronous PD close completed
 * @close_calls:   its completion runs
 * @cb_*:          what the closing removal callback saw
 */
static struct ndk_t_rm {
	struct mutex lock; /* scenarios vs. unload */
	struct ndk_adapter *adapter;
	struct ndk_pd *pd[NDK_T_RM_PDS];
	atomic_t removals;
	wait_queue_head_t removal_wait;
	struct completion create_done;
	s32 create_status;
	struct ndk_object_header *create_object;
	atomic_t create_calls;
	struct completion close_done;
	atomic_t close_calls;
	s32 cb_create_sync;
	s32 cb_create_async;
	s32 cb_query;
	s32 cb_close_sync;
	s32 cb_close_async;
	bool cb_closed_adapter;
} ndk_t_rm = {
	.lock = __MUTEX_INITIALIZER(ndk_t_rm.lock),
	.removal_wait = __WAIT_QUEUE_HEAD_INITIALIZER(ndk_t_rm.removal_wait),
};

static void ndk_t_rm_reset(void)
{
	struct ndk_t_rm *s = &ndk_t_rm;

	s->adapter = NULL;
	memset(s->pd, 0, sizeof(s->pd));
	atomic_set(&s->removals, 0);
	init_completion(&s->create_done);
	s->create_status = STATUS_UNSUCCESSFUL;
	s->create_object = NULL;
	atomic_set(&s->create_calls, 0);
	init_completion(&s->close_done);
	atomic_set(&s->close_calls, 0);
	s->cb_create_sync = STATUS_UNSUCCESSFUL;
	s->cb_create_async = STATUS_UNSUCCESSFUL;
	s->cb_query = STATUS_UNSUCCESSFUL;
	s->cb_close_sync = STATUS_UNSUCCESSFUL;
	s->cb_close_async = STATUS_UNSUCCESSFUL;
	s->cb_closed_adapter = false;
}

static void ndk_t_rm_create_done(void *context, s32 status,
				 struct ndk_object_header *object)
{
	struct ndk_t_rm *s = context;

	s->create_status = status;
	s->create_object = object;
	atomic_inc(&s->create_calls);
	complete(&s->create_done);
}

static void ndk_t_rm_close_done(void *context)
{
	struct ndk_t_rm *s = context;

	atomic_inc(&s->close_calls);
	complete(&s->close_done);
}

/* Close every object still open, then the adapter (blocking). */
static void ndk_t_rm_close_all(void)
{
	struct ndk_t_rm *s = &ndk_t_rm;
	int i;

	for (i = 0; i < NDK_T_RM_PDS; i++) {
		if (s->pd[i])
			ndk_close_pd(s->pd[i], NULL, NULL);
		s->pd[i] = NULL;
	}
	if (s->adapter)
		ndk_close_adapter(s->adapter);
	s->adapter = NULL;
}

/* Removal callback of the first case: only note it, close nothing. */
static void ndk_t_rm_removal(void *context)
{
	struct ndk_t_rm *s = context;

	pr_info("ndk_test: removal callback %d\n",
		atomic_inc_return(&s->removals));
	wake_up(&s->removal_wait);
}

/*
 * Removal callback of the second case: close everything from inside it.
 * It runs in the thread of the device removal, which is blocked until it
 * returns: every wait here is bounded.  It must not take ndk_t_rm.lock:
 * a scenario holding it may be closing the adapter, which waits for this
 * callback to return.
 */
static void ndk_t_rm_removal_close(void *context)
{
	struct ndk_t_rm *s = context;
	struct ndk_adapter_info info;
	struct ndk_adapter *adapter;
	struct ndk_pd *pd = NULL;
	u32 size = sizeof(info);

	pr_info("ndk_test: closing removal callback %d\n",
		atomic_inc_return(&s->removals));

	s->cb_create_sync = ndk_create_pd(s->adapter, NULL, NULL, &pd);
	if (s->cb_create_sync == STATUS_SUCCESS)
		ndk_close_pd(pd, NULL, NULL);
	s->cb_create_async = ndk_create_pd(s->adapter, ndk_t_rm_create_done,
					   s, &pd);
	if (s->cb_create_async == STATUS_PENDING &&
	    wait_for_completion_timeout(&s->create_done, NDK_T_TIMEOUT) &&
	    s->create_status == STATUS_SUCCESS)
		ndk_close_pd(ndk_to_pd(s->create_object), NULL, NULL);
	s->cb_query = ndk_query_adapter_info(s->adapter, &info, &size);

	if (s->pd[0])
		s->cb_close_sync = ndk_close_pd(s->pd[0], NULL, NULL);
	s->pd[0] = NULL;
	if (s->pd[1])
		s->cb_close_async = ndk_close_pd(s->pd[1], ndk_t_rm_close_done,
						 s);
	s->pd[1] = NULL;
	/* Blocks until the PD's close completion has run. */
	adapter = s->adapter;
	s->adapter = NULL;
	ndk_close_adapter(adapter);
	s->cb_closed_adapter = true;
	wake_up(&s->removal_wait);
}

/*
 * Register and deregister one MR on @pd: the PD keeps its internal
 * registration path (QP, pooled MR; on iWARP a loopback rdma_cm
 * connection) into the device removal.
 */
static void ndk_t_rm_reg_path(struct ndk_test_env *env, struct ndk_pd *pd)
{
	struct ndk_mdl *mdl = NULL;
	struct ndk_mr *mr = NULL;
	void *buf;

	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (buf)
		mdl = ndk_mdl_from_buffer(buf, PAGE_SIZE, GFP_KERNEL);
	NDK_T_CHECK(env, mdl);
	if (mdl) {
		NDK_T_STATUS(env, ndk_create_mr(pd, false, NULL, NULL, &mr),
			     STATUS_SUCCESS);
	}
	if (mr) {
		NDK_T_STATUS(env, ndk_register_mr(mr, mdl, PAGE_SIZE,
						  NDK_MR_FLAG_ALLOW_LOCAL_WRITE,
						  NULL, NULL), STATUS_SUCCESS);
		ndk_close_mr(mr, NULL, NULL);	/* deregisters */
	}
	ndk_mdl_free_chain(mdl);
	kfree(buf);
}

static int ndk_t_rm_open(struct ndk_test_env *env,
			 ndk_fn_adapter_removal_callback removal)
{
	struct ndk_t_rm *s = &ndk_t_rm;

	if (s->adapter) {
		ndk_test_log("objects of an earlier case are still open");
		return NDK_TEST_FAIL;
	}
	ndk_t_rm_reset();
	NDK_T_STATUS(env, ndk_open_adapter(env->adapter_name, removal, s,
					   &s->adapter), STATUS_SUCCESS);
	if (env->failures) {
		s->adapter = NULL;
		return NDK_TEST_FAIL;
	}
	/* One PD created blocking, one through its completion. */
	NDK_T_STATUS(env, ndk_create_pd(s->adapter, NULL, NULL, &s->pd[0]),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_pd(s->adapter, ndk_t_rm_create_done, s,
					&s->pd[1]), STATUS_PENDING);
	NDK_T_CHECK(env, wait_for_completion_timeout(&s->create_done,
						     NDK_T_TIMEOUT));
	NDK_T_STATUS(env, s->create_status, STATUS_SUCCESS);
	if (s->create_object)
		s->pd[1] = ndk_to_pd(s->create_object);
	reinit_completion(&s->create_done);
	atomic_set(&s->create_calls, 0);
	s->create_object = NULL;
	if (s->pd[0])
		ndk_t_rm_reg_path(env, s->pd[0]);
	if (env->failures) {
		ndk_t_rm_close_all();
		return NDK_TEST_FAIL;
	}
	ndk_test_log("adapter %s open with %d PDs", env->adapter_name,
		     NDK_T_RM_PDS);
	return NDK_TEST_PASS;
}

static int ndk_t_removal_setup(struct ndk_test_env *env)
{
	int rc;

	mutex_lock(&ndk_t_rm.lock);
	rc = ndk_t_rm_open(env, ndk_t_rm_removal);
	mutex_unlock(&ndk_t_rm.lock);
	return rc;
}

static int ndk_t_removal_release(struct ndk_test_env *env)
{
	struct ndk_t_rm *s = &ndk_t_rm;
	struct ndk_adapter_info info;
	struct ndk_adapter *other;
	struct ndk_pd *pd = NULL;
	u32 size = sizeof(info);
	s32 status;

	mutex_lock(&s->lock);
	if (!s->adapter) {
		ndk_test_log("removal-setup did not run");
		mutex_unlock(&s->lock);
		return NDK_TEST_FAIL;
	}
	NDK_T_CHECK(env, wait_event_timeout(s->removal_wait,
					    atomic_read(&s->removals) > 0,
					    NDK_T_TIMEOUT));
	/* Exactly once, even though the device is still going away. */
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&s->removals) == 1);
	ndk_test_log("removal callback runs: %d", atomic_read(&s->removals));

	/* New objects fail with a clear status, inline, whatever the mode. */
	NDK_T_STATUS(env, ndk_create_pd(s->adapter, NULL, NULL, &pd),
		     STATUS_DEVICE_REMOVED);
	NDK_T_CHECK(env, !pd);
	NDK_T_STATUS(env, ndk_create_pd(s->adapter, ndk_t_rm_create_done, s,
					&pd), STATUS_DEVICE_REMOVED);
	NDK_T_CHECK(env, !pd);
	NDK_T_CHECK(env, atomic_read(&s->create_calls) == 0);
	/* The adapter's information stays readable until it is closed. */
	NDK_T_STATUS(env, ndk_query_adapter_info(s->adapter, &info, &size),
		     STATUS_SUCCESS);
	/* The device is gone for new adapters. */
	status = ndk_open_adapter(env->adapter_name, NULL, NULL, &other);
	ndk_test_log("open of a removed adapter: status %#x", status);
	NDK_T_CHECK(env, status != STATUS_SUCCESS);
	NDK_T_CHECK(env, status == STATUS_INVALID_PARAMETER ||
		    status == STATUS_DEVICE_REMOVED);
	if (status == STATUS_SUCCESS)
		ndk_close_adapter(other);

	/* Close the PDs, one blocking, one with a completion. */
	NDK_T_STATUS(env, ndk_close_pd(s->pd[0], NULL, NULL), STATUS_SUCCESS);
	s->pd[0] = NULL;
	NDK_T_STATUS(env, ndk_close_pd(s->pd[1], ndk_t_rm_close_done, s),
		     STATUS_PENDING);
	s->pd[1] = NULL;
	NDK_T_CHECK(env, wait_for_completion_timeout(&s->close_done,
						     NDK_T_TIMEOUT));
	NDK_T_CHECK(env, atomic_read(&s->close_calls) == 1);
	mutex_unlock(&s->lock);
	return NDK_TEST_PASS;
}

static int ndk_t_removal_close(struct ndk_test_env *env)
{
	struct ndk_t_rm *s = &ndk_t_rm;

	mutex_lock(&s->lock);
	if (!s->adapter) {
		ndk_test_log("no adapter open");
		mutex_unlock(&s->lock);
		return NDK_TEST_FAIL;
	}
	NDK_T_CHECK(env, !s->pd[0] && !s->pd[1]);
	ndk_t_rm_close_all();
	NDK_T_CHECK(env, atomic_read(&s->removals) == 1);
	ndk_test_log("adapter closed");
	mutex_unlock(&s->lock);
	return NDK_TEST_PASS;
}

static int ndk_t_removal_cb_setup(struct ndk_test_env *env)
{
	int rc;

	mutex_lock(&ndk_t_rm.lock);
	rc = ndk_t_rm_open(env, ndk_t_rm_removal_close);
	mutex_unlock(&ndk_t_rm.lock);
	return rc;
}

static int ndk_t_removal_cb_check(struct ndk_test_env *env)
{
	struct ndk_t_rm *s = &ndk_t_rm;

	NDK_T_CHECK(env, wait_event_timeout(s->removal_wait,
					    READ_ONCE(s->cb_closed_adapter),
					    NDK_T_TIMEOUT));
	mutex_lock(&s->lock);
	NDK_T_CHECK(env, atomic_read(&s->removals) == 1);
	ndk_test_log("removal callback runs: %d", atomic_read(&s->removals));
	NDK_T_STATUS(env, s->cb_create_sync, STATUS_DEVICE_REMOVED);
	NDK_T_STATUS(env, s->cb_create_async, STATUS_DEVICE_REMOVED);
	NDK_T_CHECK(env, atomic_read(&s->create_calls) == 0);
	NDK_T_STATUS(env, s->cb_query, STATUS_SUCCESS);
	NDK_T_STATUS(env, s->cb_close_sync, STATUS_SUCCESS);
	NDK_T_STATUS(env, s->cb_close_async, STATUS_PENDING);
	/* The adapter close returned only after the PD's close completion. */
	NDK_T_CHECK(env, atomic_read(&s->close_calls) == 1);
	NDK_T_CHECK(env, !s->adapter);
	if (s->adapter)
		ndk_t_rm_close_all();
	mutex_unlock(&s->lock);
	return NDK_TEST_PASS;
}

static int ndk_t_removal_cleanup(struct ndk_test_env *env)
{
	mutex_lock(&ndk_t_rm.lock);
	if (ndk_t_rm.adapter)
		ndk_test_log("closing the objects left open");
	ndk_t_rm_close_all();
	mutex_unlock(&ndk_t_rm.lock);
	return NDK_TEST_PASS;
}

/**
 * ndk_test_removal_exit() - close what the removal scenarios left open
 *
 * Context: module unload.
 */
void ndk_test_removal_exit(void)
{
	mutex_lock(&ndk_t_rm.lock);
	ndk_t_rm_close_all();
	mutex_unlock(&ndk_t_rm.lock);
}

const struct ndk_test ndk_tests_removal[] = {
	{ "removal-setup", ndk_t_removal_setup },
	{ "removal-release", ndk_t_removal_release },
	{ "removal-close", ndk_t_removal_close },
	{ "removal-cb-setup", ndk_t_removal_cb_setup },
	{ "removal-cb-check", ndk_t_removal_cb_check },
	{ "removal-cleanup", ndk_t_removal_cleanup },
	{ NULL, NULL },
};
