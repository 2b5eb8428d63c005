// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: direct CQ notifications (ndk_cq_set_direct_notification()).
 *
 * cq-direct, over a loopback connection (QP 0 on CQ 0 sends to QP 1 on
 * CQ 1, zero-length messages):
 *  - the call is refused once the CQ was armed;
 *  - callbacks come from the completion handler (on rxe a tasklet, so
 *    not in task context; siw's handler also runs in its TX thread and
 *    in socket backlog processing, so there the context is only
 *    logged), report the results, and a re-arm inside the callback
 *    brings the next one;
 *  - under a burst of completions the callbacks of one CQ never overlap,
 *    whether the completion handler or ndk.ko's work item delivers them:
 *    every other round the first callback takes one result and does not
 *    re-arm, and the test thread's arm then finds results waiting (the
 *    work item delivers) while the next completions come in;
 *  - a blocking ndk_close_cq() issued while a direct callback busy-waits
 *    returns only once that callback has returned, and no callback runs
 *    after it, although the CQ stays armed and gets a completion;
 *  - a direct callback closes its own CQ with a completion (atomic
 *    context: nothing may sleep; the debug kernel's might_sleep() and
 *    lockdep would tell); the completion comes once the QP that holds
 *    the CQ is closed.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/preempt.h>
#include <linux/sched.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

/* Rounds of the burst, each T_DN_BATCH sends and receives. */
#define T_DN_ROUNDS	100
#define T_DN_BATCH	8
/* How long a busy callback holds on, in ms. */
#define T_DN_BUSY_MS	20

/**
 * struct t_dn - what the callbacks of one CQ record
 * @cq:           the CQ
 * @calls:        callbacks so far
 * @running:      callbacks running now
 * @max_running:  the most that ever ran at once
 * @atomic_calls: callbacks not in task context (on rxe: direct)
 * @task_calls:   callbacks in task context (on rxe: ndk.ko's work item)
 * @results:      results polled in the callbacks
 * @bad:          failed results, and callbacks with a non-zero status
 * @after_close:  callbacks that began after the close returned
 * @one_shot:     the next callback polls one result, does not re-arm,
 *                and clears this when done with the CQ
 * @busy:         the next callback busy-waits T_DN_BUSY_MS
 * @entered:      the busy callback began
 * @left:         the busy callback is about to return
 * @busy_atomic:  the busy callback was not in task context
 * @closed:       set once the blocking close has returned
 * @close_in_cb:  the next callback closes the CQ, with @close_req
 * @close_status: what that ndk_close_cq() returned
 * @close_atomic: that callback was not in task context
 * @close_done:   that callback has closed the CQ
 * @close_req:    its close completion
 */
struct t_dn {
	struct ndk_cq *cq;
	atomic_t calls;
	atomic_t running;
	atomic_t max_running;
	atomic_t atomic_calls;
	atomic_t task_calls;
	atomic_t results;
	atomic_t bad;
	atomic_t after_close;
	bool one_shot;
	bool busy;
	bool entered;
	bool left;
	bool busy_atomic;
	bool closed;
	bool close_in_cb;
	s32 close_status;
	bool close_atomic;
	bool close_done;
	struct ndk_t_wait close_req;
};

static void t_dn_max(atomic_t *max, int v)
{
	int cur = atomic_read(max);

	while (v > cur && !atomic_try_cmpxchg(max, &cur, v))
		;
}

/* Poll up to @max results (0: all there are). */
static void t_dn_poll_max(struct t_dn *d, u32 max)
{
	struct ndk_result res[8];
	u32 n, i, want;

	do {
		want = max ? min_t(u32, max, ARRAY_SIZE(res)) :
			     ARRAY_SIZE(res);
		n = ndk_get_cq_results(d->cq, res, want);
		for (i = 0; i < n; i++)
			if (res[i].status != STATUS_SUCCESS)
				atomic_inc(&d->bad);
		atomic_add(n, &d->results);
	} while (n && !max);
}

static void t_dn_poll(struct t_dn *d)
{
	t_dn_poll_max(d, 0);
}

static void t_dn_notify(void *context, s32 status)
{
	struct t_dn *d = context;
	int calls;

	t_dn_max(&d->max_running, atomic_inc_return(&d->running));
	calls = atomic_inc_return(&d->calls);
	if (READ_ONCE(d->closed))
		atomic_inc(&d->after_close);
	if (status)
		atomic_inc(&d->bad);
	atomic_inc(in_task() ? &d->task_calls : &d->atomic_calls);
	if (READ_ONCE(d->close_in_cb)) {
		WRITE_ONCE(d->close_in_cb, false);
		t_dn_poll(d);
		/* The CQ is gone for us after this: no arm, no poll. */
		d->close_status = ndk_close_cq(d->cq, ndk_t_closed,
					       &d->close_req);
		WRITE_ONCE(d->close_atomic, !in_task());
		WRITE_ONCE(d->close_done, true);
	} else if (READ_ONCE(d->one_shot)) {
		t_dn_poll_max(d, 1);
		WRITE_ONCE(d->one_shot, false);
	} else if (READ_ONCE(d->busy)) {
		WRITE_ONCE(d->busy_atomic, !in_task());
		WRITE_ONCE(d->entered, true);
		t_dn_poll(d);
		ndk_arm_cq(d->cq, NDK_CQ_NOTIFY_ANY);
		mdelay(T_DN_BUSY_MS);
		WRITE_ONCE(d->left, true);
	} else if (calls & 1) {
		/* Arm first: results still waiting make the work item fire. */
		ndk_arm_cq(d->cq, NDK_CQ_NOTIFY_ANY);
		t_dn_poll(d);
	} else {
		t_dn_poll(d);
		ndk_arm_cq(d->cq, NDK_CQ_NOTIFY_ANY);
	}
	/* Widen the window another deliverer could overlap in (atomic). */
	ndelay(10000);
	atomic_dec(&d->running);
}

static void t_dn_init(struct t_dn *d)
{
	memset(d, 0, sizeof(*d));
	ndk_t_wait_init(&d->close_req);
}

/* Wait until @v reaches @want; false after NDK_T_TIMEOUT. */
static bool t_dn_wait(atomic_t *v, int want)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;

	while (atomic_read(v) < want) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(200, 400);
	}
	return true;
}

/* Wait until @flag is @want; false after NDK_T_TIMEOUT. */
static bool t_dn_wait_flag(bool *flag, bool want)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;

	while (READ_ONCE(*flag) != want) {
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
	return true;
}

/*
 * Wait until no callback of either CQ runs and none began for 100 ms: the
 * notifications still queued (a work item held up) are delivered.  False
 * after NDK_T_TIMEOUT.
 */
static bool t_dn_settle(struct t_dn *d)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	int calls;

	do {
		calls = atomic_read(&d[0].calls) + atomic_read(&d[1].calls);
		msleep(100);
		if (calls == atomic_read(&d[0].calls) + atomic_read(&d[1].calls) &&
		    !atomic_read(&d[0].running) && !atomic_read(&d[1].running))
			return true;
	} while (time_before(jiffies, end));
	return false;
}

/* @n zero-length receives on QP 1, then @n sends from QP 0. */
static void t_dn_post(struct ndk_test_env *env, struct t_fix *f, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		NDK_T_STATUS(env, ndk_receive(f->qp[1], (void *)(uintptr_t)(i + 1),
					      NULL, 0), STATUS_SUCCESS);
	for (i = 0; i < n; i++)
		NDK_T_STATUS(env, ndk_send(f->qp[0], (void *)(uintptr_t)(i + 1),
					   NULL, 0, 0), STATUS_SUCCESS);
}

/*
 * Post @n each way and wait for both CQs' callbacks to poll them.
 * @test_arms: the first callback of each CQ takes one result and leaves
 * the CQ unarmed; this thread arms it again with the rest waiting (or
 * still coming).  Nothing else arms or polls then: the consumer's
 * serialization of arm and poll holds.
 */
static int t_dn_round(struct ndk_test_env *env, struct t_fix *f,
		      struct t_dn *d, u32 n, bool test_arms)
{
	int want0 = atomic_read(&d[0].results) + n;
	int want1 = atomic_read(&d[1].results) + n;
	int failures = env->failures;
	int i;

	for (i = 0; i < 2 && test_arms; i++)
		WRITE_ONCE(d[i].one_shot, true);
	t_dn_post(env, f, n);
	for (i = 0; i < 2 && test_arms; i++) {
		NDK_T_CHECK(env, t_dn_wait_flag(&d[i].one_shot, false));
		usleep_range(500, 1000);	/* let the others land */
		ndk_arm_cq(d[i].cq, NDK_CQ_NOTIFY_ANY);
	}
	NDK_T_CHECK(env, t_dn_wait(&d[0].results, want0));
	NDK_T_CHECK(env, t_dn_wait(&d[1].results, want1));
	return env->failures != failures ? -1 : 0;
}

/* Replace the fixture's CQs by direct ones recording into @d. */
static int t_dn_open(struct ndk_test_env *env, struct t_fix *f,
		     struct t_dn *d)
{
	struct ndk_cq *cq;
	int failures = env->failures;
	int i;

	if (t_open(env, f, 0))
		return -1;
	for (i = 0; i < 2; i++) {
		ndk_close_cq(f->cq[i], NULL, NULL);
		f->cq[i] = NULL;
		t_dn_init(&d[i]);
		NDK_T_STATUS(env, ndk_create_cq(f->adapter, 64, t_dn_notify,
						&d[i], NULL, NULL, NULL, &cq),
			     STATUS_SUCCESS);
		if (env->failures != failures)
			return -1;
		f->cq[i] = cq;
		d[i].cq = cq;
		NDK_T_STATUS(env, ndk_cq_set_direct_notification(cq),
			     STATUS_SUCCESS);
		/* Again before an arm: still fine. */
		NDK_T_STATUS(env, ndk_cq_set_direct_notification(cq),
			     STATUS_SUCCESS);
	}
	if (env->failures != failures || t_new_qp(env, f, 0) ||
	    t_new_qp(env, f, 1) || t_listen(env, f) || t_connect_async(env, f))
		return -1;
	return 0;
}

/* Too late once the CQ was armed, whatever the type. */
static void t_dn_refused(struct ndk_test_env *env, struct t_fix *f)
{
	struct ndk_cq *cq;

	NDK_T_STATUS(env, ndk_create_cq(f->adapter, 8, t_dn_notify, NULL,
					NULL, NULL, NULL, &cq), STATUS_SUCCESS);
	if (env->failures)
		return;
	ndk_arm_cq(cq, NDK_CQ_NOTIFY_ERRORS);
	NDK_T_STATUS(env, ndk_cq_set_direct_notification(cq),
		     STATUS_INVALID_DEVICE_STATE);
	ndk_close_cq(cq, NULL, NULL);
}

static int t_cq_direct(struct ndk_test_env *env)
{
	struct t_dn d[2];
	struct t_fix f;
	int calls, results, i;
	bool iwarp;

	if (t_dn_open(env, &f, d))
		return t_verdict(env, &f);
	iwarp = f.info.rdma_technology == NDK_IWARP;
	t_dn_refused(env, &f);	/* (0) too late after an arm */

	/* (a) Direct callbacks report the results; their re-arm works. */
	for (i = 0; i < 2; i++)
		ndk_arm_cq(d[i].cq, NDK_CQ_NOTIFY_ANY);
	for (i = 0; i < 3; i++)
		if (t_dn_round(env, &f, d, 1, false))
			return t_verdict(env, &f);
	for (i = 0; i < 2; i++) {
		ndk_test_log("CQ %d: %d callbacks (%d atomic), %d results", i,
			     atomic_read(&d[i].calls),
			     atomic_read(&d[i].atomic_calls),
			     atomic_read(&d[i].results));
		NDK_T_CHECK(env, iwarp || atomic_read(&d[i].atomic_calls) > 0);
		NDK_T_CHECK(env, atomic_read(&d[i].results) == 3);
	}

	/* (b) A burst: one callback at a time per CQ. */
	for (i = 0; i < T_DN_ROUNDS; i++)
		if (t_dn_round(env, &f, d, T_DN_BATCH, i & 1))
			return t_verdict(env, &f);
	NDK_T_CHECK(env, t_dn_settle(d));
	for (i = 0; i < 2; i++) {
		ndk_test_log("CQ %d burst: %d calls (%d atomic, %d task), %d results, max %d",
			     i, atomic_read(&d[i].calls),
			     atomic_read(&d[i].atomic_calls),
			     atomic_read(&d[i].task_calls),
			     atomic_read(&d[i].results),
			     atomic_read(&d[i].max_running));
		NDK_T_CHECK(env, atomic_read(&d[i].max_running) == 1);
		NDK_T_CHECK(env, atomic_read(&d[i].task_calls) > 0);
		NDK_T_CHECK(env, atomic_read(&d[i].results) ==
				 3 + T_DN_ROUNDS * T_DN_BATCH);
		NDK_T_CHECK(env, atomic_read(&d[i].bad) == 0);
	}

	/* (c) A blocking close waits for the direct callback running. */
	WRITE_ONCE(d[1].busy, true);
	t_dn_post(env, &f, 1);
	NDK_T_CHECK(env, t_dn_wait_flag(&d[1].entered, true));
	if (env->failures)
		return t_verdict(env, &f);
	NDK_T_CHECK(env, iwarp || READ_ONCE(d[1].busy_atomic));
	NDK_T_STATUS(env, ndk_close_cq(d[1].cq, NULL, NULL), STATUS_SUCCESS);
	NDK_T_CHECK(env, READ_ONCE(d[1].left));
	NDK_T_CHECK(env, atomic_read(&d[1].running) == 0);
	WRITE_ONCE(d[1].closed, true);
	f.cq[1] = NULL;		/* QP 1 keeps it until t_verdict() */
	calls = atomic_read(&d[1].calls);
	/*
	 * The CQ is armed (the busy callback did) and gets a completion.
	 * Count CQ 0's results before posting: rxe may complete the send,
	 * and CQ 0's callback poll it, before ndk_send() returns.
	 */
	results = atomic_read(&d[0].results);
	t_dn_post(env, &f, 1);
	NDK_T_CHECK(env, t_dn_wait(&d[0].results, results + 1));
	msleep(200);
	NDK_T_CHECK(env, atomic_read(&d[1].calls) == calls);
	NDK_T_CHECK(env, atomic_read(&d[1].after_close) == 0);

	/* (d) A direct callback closes its own CQ, with a completion. */
	msleep(100);
	WRITE_ONCE(d[0].close_in_cb, true);
	t_dn_post(env, &f, 1);
	NDK_T_CHECK(env, t_dn_wait_flag(&d[0].close_done, true));
	if (!READ_ONCE(d[0].close_done)) {
		/* t_verdict() closes it; a late callback must not. */
		WRITE_ONCE(d[0].close_in_cb, false);
		return t_verdict(env, &f);
	}
	NDK_T_STATUS(env, d[0].close_status, STATUS_PENDING);
	NDK_T_CHECK(env, iwarp || READ_ONCE(d[0].close_atomic));
	f.cq[0] = NULL;
	/* QP 0 (kept by its connector) holds the CQ until it is closed. */
	t_close_all(&f);
	NDK_T_CHECK(env, ndk_t_wait(&d[0].close_req));
	NDK_T_CHECK(env, atomic_read(&d[0].close_req.calls) == 1);
	for (i = 0; i < 2; i++)
		NDK_T_CHECK(env, atomic_read(&d[i].max_running) == 1);
	return env->failures ? NDK_TEST_FAIL : NDK_TEST_PASS;
}

/**
 * struct t_pe - what the callbacks of one CQ of cq-direct-post-error record
 * @cq:        the CQ
 * @poster:    the thread making the call under test
 * @in_call:   set around that call
 * @calls:     callbacks so far
 * @inside:    callbacks that ran inside the call, from its own thread
 * @results:   results polled in the callbacks
 * @cancelled: of which STATUS_CANCELLED
 */
struct t_pe {
	struct ndk_cq *cq;
	struct task_struct *poster;
	bool in_call;
	atomic_t calls;
	atomic_t inside;
	atomic_t results;
	atomic_t cancelled;
};

static void t_pe_notify(void *context, s32 status)
{
	struct t_pe *p = context;
	struct ndk_result res[4];
	u32 n, i;

	/*
	 * The thread of the call in task context: called from inside it (a
	 * softirq interrupting it would not be in task context, and the
	 * work item runs in a kworker).
	 */
	if (READ_ONCE(p->in_call) && in_task() &&
	    READ_ONCE(p->poster) == current)
		atomic_inc(&p->inside);
	do {
		n = ndk_get_cq_results(p->cq, res, ARRAY_SIZE(res));
		for (i = 0; i < n; i++)
			if (res[i].status == STATUS_CANCELLED)
				atomic_inc(&p->cancelled);
		atomic_add(n, &p->results);
	} while (n);
	atomic_inc(&p->calls);
}

/* Mark the test thread's call under test as begun (or ended). */
static void t_pe_call(struct t_pe *p, bool on)
{
	WRITE_ONCE(p->poster, current);
	WRITE_ONCE(p->in_call, on);
}

/*
 * Direct notifications never run inside a call of the consumer, also
 * where the device completes inside it: siw completes a receive posted
 * to a QP in the error state inside ib_post_recv(), and flushes a QP
 * inside the ib_modify_qp() of a disconnect, calling the completion
 * handler right there, with ndk.ko's QP lock held in a post (a callback
 * posting on that QP would spin on it for ever).  Over a loopback
 * connection with both CQs direct:
 *  - QP 1 holds a receive, CQ 1 is armed, and the passive side
 *    disconnects (blocking): the receive's cancellation is notified
 *    after ndk_disconnect(), not from inside it;
 *  - once the active side saw the disconnect (QP 0 in the error state),
 *    CQ 0 is armed and a receive posted on QP 0: it completes cancelled,
 *    and its notification does not run inside ndk_receive().
 * Each callback checks whether it runs in the test thread while that
 * call is in progress.  On rxe the flushes come from its tasklets, after
 * the calls; the scenario is for siw, as siw-cq-direct-post-error.
 */
static int t_cq_direct_post_error(struct ndk_test_env *env)
{
	struct t_pe p[2] = {};
	struct ndk_cq *cq;
	struct t_fix f;
	int failures, i;
	s32 st;

	if (t_open(env, &f, 0))
		return t_verdict(env, &f);
	failures = env->failures;
	for (i = 0; i < 2; i++) {
		ndk_close_cq(f.cq[i], NULL, NULL);
		f.cq[i] = NULL;
		NDK_T_STATUS(env, ndk_create_cq(f.adapter, 64, t_pe_notify,
						&p[i], NULL, NULL, NULL, &cq),
			     STATUS_SUCCESS);
		if (env->failures != failures)
			return t_verdict(env, &f);
		f.cq[i] = cq;
		p[i].cq = cq;
		NDK_T_STATUS(env, ndk_cq_set_direct_notification(cq),
			     STATUS_SUCCESS);
	}
	if (env->failures != failures || t_new_qp(env, &f, 0) ||
	    t_new_qp(env, &f, 1) || t_listen(env, &f) ||
	    t_connect_async(env, &f))
		return t_verdict(env, &f);

	/* (a) The flush of a disconnect, inside ndk_disconnect(). */
	NDK_T_STATUS(env, ndk_receive(f.qp[1], (void *)1, NULL, 0),
		     STATUS_SUCCESS);
	ndk_arm_cq(p[1].cq, NDK_CQ_NOTIFY_ANY);
	t_pe_call(&p[1], true);
	st = ndk_disconnect(f.p, NULL, NULL);
	t_pe_call(&p[1], false);
	NDK_T_STATUS(env, st, STATUS_SUCCESS);
	NDK_T_CHECK(env, t_dn_wait(&p[1].results, 1));
	NDK_T_CHECK(env, atomic_read(&p[1].cancelled) == 1);
	NDK_T_CHECK(env, atomic_read(&p[1].inside) == 0);

	/* (b) A receive posted to a QP in the error state. */
	NDK_T_CHECK(env, ndk_t_wait(&f.disc_a));
	if (env->failures)
		return t_verdict(env, &f);
	ndk_arm_cq(p[0].cq, NDK_CQ_NOTIFY_ANY);
	t_pe_call(&p[0], true);
	st = ndk_receive(f.qp[0], (void *)2, NULL, 0);
	t_pe_call(&p[0], false);
	NDK_T_STATUS(env, st, STATUS_SUCCESS);
	NDK_T_CHECK(env, t_dn_wait(&p[0].results, 1));
	NDK_T_CHECK(env, atomic_read(&p[0].cancelled) == 1);
	NDK_T_CHECK(env, atomic_read(&p[0].inside) == 0);
	for (i = 0; i < 2; i++)
		ndk_test_log("CQ %d: %d callbacks, %d inside the call, %d results",
			     i, atomic_read(&p[i].calls),
			     atomic_read(&p[i].inside),
			     atomic_read(&p[i].results));
	return t_verdict(env, &f);
}

const struct ndk_test ndk_tests_direct[] = {
	{ "cq-direct", t_cq_direct },
	{ "cq-direct-post-error", t_cq_direct_post_error },
	{ }
};
