// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: the loopback connection fixture (ndk_test_conn.h).
 *
 * Every connection is a loopback on one device: the listener binds the
 * adapter's own IPv4 address (module parameter peer_ip) and the connector
 * connects to it, which rdma_cm and rxe carry inside the device.  Waits
 * time out after 10 s and fail the scenario.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/kstrtox.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "ndk_test.h"
#include "ndk_test_conn.h"

/**
 * t_disc_cb() - a disconnect-event callback recording into a struct ndk_t_wait
 * @context: the struct ndk_t_wait
 */
void t_disc_cb(void *context)
{
	ndk_t_requested(context, STATUS_SUCCESS);
}

/**
 * t_connect_event() - the listener's ConnectEvent callback
 * @context: the struct t_fix
 * @c:       the new passive connector
 *
 * Keeps the first T_MAX_CONN connectors in @conn (closing the others),
 * accepts asynchronously when @auto_accept is set, completes @got.
 */
void t_connect_event(void *context, struct ndk_connector *c)
{
	struct t_fix *f = context;
	bool keep;
	s32 s;

	spin_lock(&f->lock);
	keep = f->count < T_MAX_CONN;
	if (keep)
		f->conn[f->count] = c;
	f->count++;
	f->event_seq = ndk_t_next_seq();
	spin_unlock(&f->lock);
	if (!keep) {
		ndk_close_connector(c, ndk_t_closed, NULL);
		return;
	}
	if (f->auto_accept) {
		f->p = c;
		s = ndk_accept(c, f->qp[1], f->in_p, f->out_p, f->sdata, f->slen,
			       t_disc_cb, &f->disc_p, ndk_t_requested, &f->accept_req);
		if (s != STATUS_PENDING)
			ndk_t_requested(&f->accept_req, s);
	}
	complete(&f->got);
}

/**
 * t_connect_done_auto() - a connect completion that completes the connect
 * @context: the struct t_fix
 * @status:  the connect's status, recorded in @connect_req
 *
 * On success calls ndk_complete_connect(), recorded in @complete_req.
 */
void t_connect_done_auto(void *context, s32 status)
{
	struct t_fix *f = context;
	s32 s;

	ndk_t_requested(&f->connect_req, status);
	if (status != STATUS_SUCCESS)
		return;
	s = ndk_complete_connect(f->a, t_disc_cb, &f->disc_a, ndk_t_requested,
				 &f->complete_req);
	if (s != STATUS_PENDING)
		ndk_t_requested(&f->complete_req, s);
}

/**
 * t_got_event() - wait for the next ConnectEvent
 * @f: the fixture
 *
 * Return: false if none came within NDK_T_TIMEOUT.
 */
bool t_got_event(struct t_fix *f)
{
	return wait_for_completion_timeout(&f->got, NDK_T_TIMEOUT) != 0;
}

/**
 * t_laddr() - ndk_get_listener_local_address() into a sockaddr_in
 * @l:   the listener
 * @sin: the address
 * @len: in: size of @sin, out: bytes written or needed
 *
 * Return: the NTSTATUS of ndk_get_listener_local_address().
 */
s32 t_laddr(struct ndk_listener *l, struct sockaddr_in *sin, u32 *len)
{
	return ndk_get_listener_local_address(l, (struct sockaddr *)sin, len);
}

/**
 * t_addr() - the adapter's IPv4 address (peer_ip) with a port
 * @env:  the scenario
 * @sin:  filled in
 * @port: in host order
 */
void t_addr(struct ndk_test_env *env, struct sockaddr_in *sin, u16 port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (!in4_pton(env->peer_ip, -1, (u8 *)&sin->sin_addr.s_addr, -1, NULL))
		ndk_test_log("bad peer_ip %s", env->peer_ip);
}

/**
 * t_fill() - fill a buffer with a pattern derived from @seed
 * @buf:  the buffer
 * @len:  its bytes
 * @seed: the first byte
 */
void t_fill(u8 *buf, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		buf[i] = (u8)(seed + i * 7);
}

static void t_cq_notify(void *context, s32 status)
{
}

/**
 * t_new_qp() - (re)create QP @i on CQ @i
 * @env: the scenario
 * @f:   the fixture
 * @i:   0 (active side) or 1 (passive side)
 *
 * Closes the old QP @i if there is one.  The new QP's context is
 * &f->qp[i]; depths 8, one SGE each way, no inline data.
 *
 * Return: 0, or -1 if the QP could not be created.
 */
int t_new_qp(struct ndk_test_env *env, struct t_fix *f, int i)
{
	if (f->qp[i])
		ndk_close_qp(f->qp[i], NULL, NULL);
	f->qp[i] = NULL;
	NDK_T_STATUS(env, ndk_create_qp(f->pd, f->cq[i], f->cq[i], &f->qp[i],
					8, 8, 1, 1, 0, NULL, NULL, &f->qp[i]),
		     STATUS_SUCCESS);
	return f->qp[i] ? 0 : -1;
}

/**
 * t_open() - adapter, PD, two CQs and @nqp QPs, QP i on CQ i
 * @env: the scenario
 * @f:   the fixture, initialised here
 * @nqp: QPs to create (0 to 2)
 *
 * Return: 0, or -1 on failure (t_verdict() still closes what was made).
 */
int t_open(struct ndk_test_env *env, struct t_fix *f, int nqp)
{
	u32 size = sizeof(f->info);
	int i;
	int failures = env->failures;

	memset(f, 0, sizeof(*f));
	init_completion(&f->got);
	spin_lock_init(&f->lock);
	ndk_t_wait_init(&f->connect_req);
	ndk_t_wait_init(&f->complete_req);
	ndk_t_wait_init(&f->accept_req);
	ndk_t_wait_init(&f->disc_a);
	ndk_t_wait_init(&f->disc_p);
	f->in_a = 3;
	f->out_a = 5;
	f->in_p = 4;
	f->out_p = 2;
	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &f->adapter)) {
		ndk_test_log("cannot open %s", env->adapter_name);
		return -1;
	}
	NDK_T_STATUS(env, ndk_query_adapter_info(f->adapter, &f->info, &size),
		     STATUS_SUCCESS);
	NDK_T_STATUS(env, ndk_create_pd(f->adapter, NULL, NULL, &f->pd),
		     STATUS_SUCCESS);
	if (env->failures != failures)
		return -1;
	for (i = 0; i < 2; i++) {
		NDK_T_STATUS(env, ndk_create_cq(f->adapter, 64, t_cq_notify,
						NULL, NULL, NULL, NULL,
						&f->cq[i]), STATUS_SUCCESS);
		if (env->failures != failures)
			return -1;
	}
	for (i = 0; i < nqp; i++)
		if (t_new_qp(env, f, i))
			return -1;
	return 0;
}

/**
 * t_listen() - a blocking listener on peer_ip, port chosen by rdma_cm
 * @env: the scenario
 * @f:   the fixture; @listener and @laddr are set
 *
 * Return: 0, or -1 on failure.
 */
int t_listen(struct ndk_test_env *env, struct t_fix *f)
{
	struct sockaddr_in sin;
	u32 len = sizeof(f->laddr);
	int failures = env->failures;

	NDK_T_STATUS(env, ndk_create_listener(f->adapter, t_connect_event, f,
					      NULL, NULL, &f->listener),
		     STATUS_SUCCESS);
	if (env->failures != failures)
		return -1;
	t_addr(env, &sin, 0);
	NDK_T_STATUS(env, ndk_listen(f->listener, (struct sockaddr *)&sin,
				     sizeof(sin), NULL, NULL), STATUS_SUCCESS);
	NDK_T_STATUS(env, t_laddr(f->listener, &f->laddr, &len), STATUS_SUCCESS);
	NDK_T_CHECK(env, len == sizeof(struct sockaddr_in));
	NDK_T_CHECK(env, f->laddr.sin_family == AF_INET);
	NDK_T_CHECK(env, f->laddr.sin_addr.s_addr == sin.sin_addr.s_addr);
	NDK_T_CHECK(env, f->laddr.sin_port != 0);
	return env->failures != failures ? -1 : 0;
}

/**
 * t_close_conn() - close a connector (blocking) if there is one
 * @c: the connector, set to NULL
 */
void t_close_conn(struct ndk_connector **c)
{
	if (*c)
		ndk_close_connector(*c, NULL, NULL);
	*c = NULL;
}

/**
 * t_close_all() - close what is left of a fixture, blocking, children first
 * @f: the fixture
 */
void t_close_all(struct t_fix *f)
{
	int i;

	t_close_conn(&f->a);
	if (f->p == f->conn[0])
		f->conn[0] = NULL;
	t_close_conn(&f->p);
	for (i = 0; i < T_MAX_CONN; i++)
		t_close_conn(&f->conn[i]);
	if (f->listener)
		ndk_close_listener(f->listener, NULL, NULL);
	for (i = 0; i < 2; i++)
		if (f->qp[i])
			ndk_close_qp(f->qp[i], NULL, NULL);
	for (i = 0; i < 2; i++)
		if (f->cq[i])
			ndk_close_cq(f->cq[i], NULL, NULL);
	if (f->pd)
		ndk_close_pd(f->pd, NULL, NULL);
	if (f->adapter)
		ndk_close_adapter(f->adapter);
}

/**
 * t_verdict() - close the fixture and give the scenario's verdict
 * @env: the scenario
 * @f:   the fixture
 *
 * Return: NDK_TEST_FAIL if any check failed, else NDK_TEST_PASS.
 */
int t_verdict(struct ndk_test_env *env, struct t_fix *f)
{
	t_close_all(f);
	return env->failures ? NDK_TEST_FAIL : NDK_TEST_PASS;
}

/**
 * t_request() - a connection request of qp[0], pending at the listener
 * @env: the scenario
 * @f:   the fixture, listening (t_listen()); @a and @p are set
 *
 * From the test thread: create @a, connect it (its read limits and
 * private data from @f, @connect_req), wait for the ConnectEvent and
 * take its connector as @p.
 *
 * Return: 0, or -1 on failure.
 */
int t_request(struct ndk_test_env *env, struct t_fix *f)
{
	s32 s;
	int failures = env->failures;

	NDK_T_STATUS(env, ndk_create_connector(f->adapter, NULL, NULL, &f->a),
		     STATUS_SUCCESS);
	if (env->failures != failures)
		return -1;
	s = ndk_connect(f->a, f->qp[0], NULL, 0, (struct sockaddr *)&f->laddr,
			sizeof(f->laddr), f->in_a, f->out_a, f->cdata, f->clen,
			ndk_t_requested, &f->connect_req);
	NDK_T_STATUS(env, s, STATUS_PENDING);
	if (s != STATUS_PENDING)
		return -1;
	NDK_T_CHECK(env, t_got_event(f));
	if (env->failures != failures)
		return -1;
	f->p = f->conn[0];
	f->conn[0] = NULL;
	return 0;
}

/**
 * t_connect_async() - connect qp[0] to qp[1] asynchronously
 * @env: the scenario
 * @f:   the fixture, listening (t_listen()); @a and @p are set
 *
 * From the test thread: connect, ConnectEvent, accept, connect completes,
 * complete_connect; both sides are connected on return.
 *
 * Return: 0, or -1 on failure.
 */
int t_connect_async(struct ndk_test_env *env, struct t_fix *f)
{
	int failures = env->failures;

	if (t_request(env, f))
		return -1;
	NDK_T_STATUS(env, ndk_accept(f->p, f->qp[1], f->in_p, f->out_p,
				     f->sdata, f->slen, t_disc_cb, &f->disc_p,
				     ndk_t_requested, &f->accept_req),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&f->connect_req));
	NDK_T_STATUS(env, f->connect_req.status, STATUS_SUCCESS);
	if (env->failures != failures)
		return -1;
	/*
	 * Not established before the RTU.  iWARP has none (MPA without the
	 * peer-to-peer RTR, which siw does not send): the passive side is
	 * up once its MPA reply is out, so the accept may have completed.
	 */
	if (f->info.rdma_technology != NDK_IWARP)
		NDK_T_CHECK(env, atomic_read(&f->accept_req.calls) == 0);
	NDK_T_STATUS(env, ndk_complete_connect(f->a, t_disc_cb, &f->disc_a,
					       ndk_t_requested, &f->complete_req),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&f->complete_req));
	NDK_T_STATUS(env, f->complete_req.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&f->accept_req));
	NDK_T_STATUS(env, f->accept_req.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, atomic_read(&f->connect_req.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f->complete_req.calls) == 1);
	NDK_T_CHECK(env, atomic_read(&f->accept_req.calls) == 1);
	return env->failures != failures ? -1 : 0;
}

/**
 * t_poll() - collect @want results within NDK_T_TIMEOUT
 * @cq:   the CQ
 * @res:  room for @want results
 * @want: how many
 *
 * Return: how many arrived.
 */
u32 t_poll(struct ndk_cq *cq, struct ndk_result *res, u32 want)
{
	unsigned long end = jiffies + NDK_T_TIMEOUT;
	u32 got = 0;

	while (got < want && time_before(jiffies, end)) {
		got += ndk_get_cq_results(cq, res + got, want - got);
		if (got < want)
			msleep(20);
	}
	return got;
}

/**
 * t_cq_quiet() - check that no further result shows up within 300 ms
 * @cq: the CQ
 *
 * Return: true if none did.
 */
bool t_cq_quiet(struct ndk_cq *cq)
{
	struct ndk_result res;

	msleep(300);
	return ndk_get_cq_results(cq, &res, 1) == 0;
}

/**
 * t_check_result() - check a result's status and contexts
 * @env:             the scenario
 * @r:               the result
 * @status:          the expected status
 * @qp_context:      the expected QP context
 * @request_context: the expected request context
 *
 * A successful result must also report 0 bytes (initiator requests and
 * zero-length receives).
 */
void t_check_result(struct ndk_test_env *env, struct ndk_result *r,
		    s32 status, void *qp_context, void *request_context)
{
	NDK_T_STATUS(env, r->status, status);
	NDK_T_CHECK(env, r->qp_context == qp_context);
	NDK_T_CHECK(env, r->request_context == request_context);
	if (status == STATUS_SUCCESS)
		NDK_T_CHECK(env, r->bytes_transferred == 0);
}

/**
 * t_buf_reg() - a zeroed kmalloc'ed buffer with canaries, registered
 * @env:   the scenario
 * @f:     the fixture (its PD)
 * @b:     the buffer, initialised here
 * @len:   bytes of data
 * @flags: NDK_MR_FLAG_* for ndk_register_mr()
 *
 * The MR's base virtual address is @b->data.
 *
 * Return: 0, or a negative errno when one of its own checks failed
 * (t_buf_free() still releases @b).
 */
int t_buf_reg(struct ndk_test_env *env, struct t_fix *f,
	      struct t_buf *b, u32 len, u32 flags)
{
	int failures = env->failures;

	memset(b, 0, sizeof(*b));
	b->mem = kmalloc(len + 2 * T_CANARY, GFP_KERNEL);
	if (!b->mem)
		return -ENOMEM;
	memset(b->mem, T_CANARY_BYTE, len + 2 * T_CANARY);
	b->data = b->mem + T_CANARY;
	b->len = len;
	memset(b->data, 0, len);
	b->mdl = ndk_mdl_from_buffer(b->data, len, GFP_KERNEL);
	NDK_T_CHECK(env, b->mdl);
	if (!b->mdl)
		return -ENOMEM;
	NDK_T_STATUS(env, ndk_create_mr(f->pd, false, NULL, NULL, &b->mr),
		     STATUS_SUCCESS);
	if (!b->mr)
		return -ENOMEM;
	NDK_T_STATUS(env, ndk_register_mr(b->mr, b->mdl, len, flags, NULL, NULL),
		     STATUS_SUCCESS);
	return env->failures != failures ? -EINVAL : 0;
}

/**
 * t_canaries_ok() - check the canaries either side of a buffer's data
 * @b: the buffer
 *
 * Return: true if every canary byte is intact.
 */
bool t_canaries_ok(struct t_buf *b)
{
	u32 i;

	for (i = 0; i < T_CANARY; i++)
		if (b->mem[i] != T_CANARY_BYTE ||
		    b->data[b->len + i] != T_CANARY_BYTE)
			return false;
	return true;
}

/**
 * t_buf_free() - check the canaries, close the MR, free the buffer
 * @env: the scenario (a damaged canary fails it)
 * @b:   the buffer
 */
void t_buf_free(struct ndk_test_env *env, struct t_buf *b)
{
	NDK_T_CHECK(env, !b->mem || t_canaries_ok(b));
	if (b->mr)
		ndk_close_mr(b->mr, NULL, NULL);	/* deregisters too */
	ndk_mdl_free_chain(b->mdl);
	kfree(b->mem);
}

/**
 * t_sge() - an SGE over part of a registered buffer
 * @b:      the buffer
 * @offset: first byte, from @b->data
 * @len:    bytes
 *
 * Return: the SGE, with the MR's local token.
 */
struct ndk_sge t_sge(struct t_buf *b, u32 offset, u32 len)
{
	struct ndk_sge sge = {
		.virtual_address = b->data + offset,
		.length = len,
		.memory_region_token = ndk_get_local_token_from_mr(b->mr),
	};
	return sge;
}

/**
 * t_raddr() - the remote address of a byte of a registered buffer
 * @b:      the buffer
 * @offset: the byte, from @b->data
 *
 * Return: the MR's base virtual address plus @offset.
 */
u64 t_raddr(struct t_buf *b, u32 offset)
{
	return (u64)(uintptr_t)b->data + offset;
}

/**
 * t_all() - check that every byte of a range has one value
 * @p:   the range
 * @v:   the value
 * @len: bytes
 *
 * Return: true if they all do.
 */
bool t_all(const u8 *p, u8 v, u32 len)
{
	while (len--)
		if (*p++ != v)
			return false;
	return true;
}

/**
 * t_hook_read() - read a number from one of ndk.ko's test hooks
 * @path: the hook's file (a module parameter or a debugfs file)
 *
 * Return: its value, or -1 when it cannot be read.
 */
long t_hook_read(const char *path)
{
	char buf[24] = {};
	struct file *f;
	loff_t pos = 0;
	long val;
	ssize_t n;

	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f)) {
		ndk_test_log("open %s: %ld", path, PTR_ERR(f));
		return -1;
	}
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0 || kstrtol(strim(buf), 10, &val)) {
		ndk_test_log("read %s: %zd '%s'", path, n, buf);
		return -1;
	}
	return val;
}

/**
 * t_hook_write() - write to one of ndk.ko's test hooks
 * @path: the hook's file
 * @val:  what to write ("1\n" fires or arms most)
 *
 * Return: true when all of @val was written.
 */
bool t_hook_write(const char *path, const char *val)
{
	size_t len = strlen(val);
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = filp_open(path, O_WRONLY, 0);
	if (IS_ERR(f)) {
		ndk_test_log("open %s: %ld", path, PTR_ERR(f));
		return false;
	}
	n = kernel_write(f, val, len, &pos);
	filp_close(f, NULL);
	if (n != len)
		ndk_test_log("write %s: %zd", path, n);
	return n == len;
}
