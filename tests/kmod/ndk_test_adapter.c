// SPDX-License-Identifier: GPL-2.0
/*
 * ndk_test.ko: adapter and PD scenarios.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>

#include "ndk_test.h"

static int ndk_t_count(const char *name, void *context)
{
	int *count = context;

	ndk_test_log("adapter: %s", name);
	(*count)++;
	return 0;
}

static int ndk_t_adapter_open(struct ndk_test_env *env)
{
	struct ndk_adapter *adapter;
	int count = 0;

	NDK_T_CHECK(env, ndk_enum_adapters(ndk_t_count, &count) == 0);
	NDK_T_CHECK(env, count >= 1);
	NDK_T_STATUS(env, ndk_open_adapter("no-such-device", NULL, NULL,
					   &adapter),
		     STATUS_INVALID_PARAMETER);
	NDK_T_STATUS(env, ndk_open_adapter(env->adapter_name, NULL, NULL,
					   &adapter), STATUS_SUCCESS);
	if (env->failures)
		return NDK_TEST_FAIL;
	ndk_close_adapter(adapter);
	return NDK_TEST_PASS;
}

static int ndk_t_adapter_info(struct ndk_test_env *env)
{
	struct ndk_adapter_info info;
	struct ndk_adapter *adapter;
	u32 size;

	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &adapter))
		return NDK_TEST_FAIL;

	/* Too small: the needed size comes back, nothing is written. */
	memset(&info, 0xa5, sizeof(info));
	size = sizeof(info) - 1;
	NDK_T_STATUS(env, ndk_query_adapter_info(adapter, &info, &size),
		     STATUS_BUFFER_TOO_SMALL);
	NDK_T_CHECK(env, size == 0x68);
	NDK_T_CHECK(env, info.vendor_id == 0xa5a5a5a5);
	size = 0;
	NDK_T_STATUS(env, ndk_query_adapter_info(adapter, &info, &size),
		     STATUS_BUFFER_TOO_SMALL);
	NDK_T_CHECK(env, size == 0x68);

	size = sizeof(info);
	NDK_T_STATUS(env, ndk_query_adapter_info(adapter, &info, &size),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, size == 0x68);

	/* One line per field, compared with ibv_devinfo by the vm test. */
	ndk_test_log("info.version=%u.%u", info.version.major, info.version.minor);
	ndk_test_log("info.vendor_id=%#x", info.vendor_id);
	ndk_test_log("info.device_id=%#x", info.device_id);
	ndk_test_log("info.max_registration_size=%llu", info.max_registration_size);
	ndk_test_log("info.max_window_size=%llu", info.max_window_size);
	ndk_test_log("info.frmr_page_count=%u", info.frmr_page_count);
	ndk_test_log("info.max_initiator_request_sge=%u", info.max_initiator_request_sge);
	ndk_test_log("info.max_receive_request_sge=%u", info.max_receive_request_sge);
	ndk_test_log("info.max_read_request_sge=%u", info.max_read_request_sge);
	ndk_test_log("info.max_transfer_length=%u", info.max_transfer_length);
	ndk_test_log("info.max_inline_data_size=%u", info.max_inline_data_size);
	ndk_test_log("info.max_inbound_read_limit=%u", info.max_inbound_read_limit);
	ndk_test_log("info.max_outbound_read_limit=%u", info.max_outbound_read_limit);
	ndk_test_log("info.max_receive_queue_depth=%u", info.max_receive_queue_depth);
	ndk_test_log("info.max_initiator_queue_depth=%u", info.max_initiator_queue_depth);
	ndk_test_log("info.max_srq_depth=%u", info.max_srq_depth);
	ndk_test_log("info.max_cq_depth=%u", info.max_cq_depth);
	ndk_test_log("info.large_request_threshold=%u", info.large_request_threshold);
	ndk_test_log("info.max_caller_data=%u", info.max_caller_data);
	ndk_test_log("info.max_callee_data=%u", info.max_callee_data);
	ndk_test_log("info.adapter_flags=%#x", info.adapter_flags);
	ndk_test_log("info.rdma_technology=%u", info.rdma_technology);

	NDK_T_CHECK(env, info.version.major == 1 && info.version.minor == 2);
	NDK_T_CHECK(env, info.reserved0 == 0 && info.reserved1 == 0);
	/*
	 * rxe is RoCEv2: no read-sink rights needed.  siw is iWARP: read
	 * responses are tagged writes, so the sink needs its flag; MPA v2
	 * private data (cm-pdata-limits checks the sizes on the wire).
	 * Both connect to their own address.
	 */
	if (info.rdma_technology == NDK_IWARP) {
		NDK_T_CHECK(env, !(info.adapter_flags &
				   NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED));
		NDK_T_CHECK(env, info.max_caller_data == 251);
		NDK_T_CHECK(env, info.max_callee_data == 251);
		/* NdkRegisterMr works on iWARP (a loopback registration QP). */
		NDK_T_CHECK(env, info.max_registration_size >=
				 info.max_window_size);
	} else {
		NDK_T_CHECK(env, info.rdma_technology == NDK_ROCE_V2);
		NDK_T_CHECK(env, info.adapter_flags &
				 NDK_ADAPTER_FLAG_RDMA_READ_SINK_NOT_REQUIRED);
		NDK_T_CHECK(env, info.max_caller_data == 56);
		NDK_T_CHECK(env, info.max_callee_data == 148);
	}
	NDK_T_CHECK(env, info.max_registration_size > 0);
	NDK_T_CHECK(env, info.adapter_flags &
			 NDK_ADAPTER_FLAG_LOOPBACK_CONNECTIONS_SUPPORTED);
	NDK_T_CHECK(env, !(info.adapter_flags &
			   NDK_ADAPTER_FLAG_RDMA_READ_LOCAL_INVALIDATE_SUPPORTED));
	/*
	 * Promised by no verbs device: in-order placement of a request's
	 * data, and engines running one QP's requests side by side
	 * (ndk-mapping.md); the seed's consumers must then not rely on them.
	 */
	NDK_T_CHECK(env, !(info.adapter_flags &
			   (NDK_ADAPTER_FLAG_IN_ORDER_DMA_SUPPORTED |
			    NDK_ADAPTER_FLAG_MULTI_ENGINE_SUPPORTED)));
	NDK_T_CHECK(env, info.frmr_page_count >= 16);
	NDK_T_CHECK(env, info.max_inline_data_size > 0);
	NDK_T_CHECK(env, info.max_window_size ==
			 (u64)(info.frmr_page_count - 1) * PAGE_SIZE);

	ndk_close_adapter(adapter);
	return NDK_TEST_PASS;
}

/* Blocking create and close: inline results, no callbacks. */
static int ndk_t_pd_sync(struct ndk_test_env *env)
{
	struct ndk_adapter *adapter;
	struct ndk_pd *pd = NULL;

	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &adapter))
		return NDK_TEST_FAIL;
	NDK_T_STATUS(env, ndk_create_pd(adapter, NULL, NULL, &pd),
		     STATUS_SUCCESS);
	NDK_T_CHECK(env, pd && ((struct ndk_object_header *)pd)->object_type ==
			 NDK_OBJECT_TYPE_PD);
	if (pd)
		NDK_T_STATUS(env, ndk_close_pd(pd, NULL, NULL), STATUS_SUCCESS);
	ndk_close_adapter(adapter);
	return NDK_TEST_PASS;
}

/*
 * With completions: STATUS_PENDING, *out untouched, the object arrives
 * through the completion exactly once; the close completes through its
 * callback before the blocking adapter close returns.
 */
static int ndk_t_pd_async(struct ndk_test_env *env)
{
	struct ndk_pd *pd = (struct ndk_pd *)0x1;
	struct ndk_adapter *adapter;
	struct ndk_t_wait w;

	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &adapter))
		return NDK_TEST_FAIL;
	ndk_t_wait_init(&w);
	NDK_T_STATUS(env, ndk_create_pd(adapter, ndk_t_created, &w, &pd),
		     STATUS_PENDING);
	NDK_T_CHECK(env, ndk_t_wait(&w));
	NDK_T_STATUS(env, w.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, pd == (struct ndk_pd *)0x1);
	NDK_T_CHECK(env, w.object && w.object->object_type == NDK_OBJECT_TYPE_PD);
	NDK_T_CHECK(env, atomic_read(&w.calls) == 1);
	if (!w.object) {
		ndk_close_adapter(adapter);
		return NDK_TEST_FAIL;
	}
	pd = ndk_to_pd(w.object);

	ndk_t_wait_init(&w);
	NDK_T_STATUS(env, ndk_close_pd(pd, ndk_t_closed, &w),
		     STATUS_PENDING);
	ndk_close_adapter(adapter);
	/* The adapter close returned: the PD's close callback has run. */
	NDK_T_CHECK(env, atomic_read(&w.calls) == 1);
	return NDK_TEST_PASS;
}

/**
 * struct t_cic - pd-close-in-create
 * @created:   the create completion returned
 * @closed:    the close completion
 * @in_create: set while the create completion runs
 * @early:     the close completion ran while the create completion did
 * @status:    the create's status
 */
struct t_cic {
	struct completion created;
	struct ndk_t_wait closed;
	atomic_t in_create;
	bool early;
	s32 status;
};

static void t_cic_closed(void *context)
{
	struct t_cic *c = context;

	if (atomic_read(&c->in_create))
		WRITE_ONCE(c->early, true);
	ndk_t_closed(&c->closed);
}

/* Closes the new PD, then stays a while: the close must wait for it. */
static void t_cic_created(void *context, s32 status,
			  struct ndk_object_header *object)
{
	struct t_cic *c = context;

	atomic_set(&c->in_create, 1);
	c->status = status;
	if (status == STATUS_SUCCESS)
		ndk_close_pd(ndk_to_pd(object), t_cic_closed, c);
	msleep(300);
	atomic_set(&c->in_create, 0);
	complete(&c->created);
}

/*
 * A consumer may close an object from its create completion; the close
 * completion is still the object's last callback, so it comes after the
 * create completion returned.  Before the fix the create work held no
 * reference across the completion: the close dropped the last one, and
 * the teardown and its close completion ran on another worker of ndk_wq
 * while the create completion still ran (here, during its sleep).
 */
static int ndk_t_pd_close_in_create(struct ndk_test_env *env)
{
	struct ndk_adapter *adapter;
	struct ndk_pd *pd = NULL;
	struct t_cic c = {};

	if (ndk_open_adapter(env->adapter_name, NULL, NULL, &adapter))
		return NDK_TEST_FAIL;
	init_completion(&c.created);
	ndk_t_wait_init(&c.closed);
	atomic_set(&c.in_create, 0);
	NDK_T_STATUS(env, ndk_create_pd(adapter, t_cic_created, &c, &pd),
		     STATUS_PENDING);
	NDK_T_CHECK(env, wait_for_completion_timeout(&c.created,
						     NDK_T_TIMEOUT));
	NDK_T_STATUS(env, c.status, STATUS_SUCCESS);
	NDK_T_CHECK(env, ndk_t_wait(&c.closed));
	ndk_test_log("close completion %s the create completion returned",
		     READ_ONCE(c.early) ? "ran before" : "came after");
	NDK_T_CHECK(env, !READ_ONCE(c.early));
	NDK_T_CHECK(env, atomic_read(&c.closed.calls) == 1);
	ndk_close_adapter(adapter);
	return env->failures ? NDK_TEST_FAIL : NDK_TEST_PASS;
}

const struct ndk_test ndk_tests_adapter[] = {
	{ "adapter-open", ndk_t_adapter_open },
	{ "adapter-info", ndk_t_adapter_info },
	{ "pd-sync", ndk_t_pd_sync },
	{ "pd-async", ndk_t_pd_async },
	{ "pd-close-in-create", ndk_t_pd_close_in_create },
	{ NULL, NULL },
};
