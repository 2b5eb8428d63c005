/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk_bench.ko: the kernel half of the benchmark suite (make bench,
 * Documentation/performance.md).
 *
 * Each measure runs NDK (ndk.ko's kernel API) and its raw ib_core
 * baseline in the same module, on the same device and PD kind, queue
 * depth and buffer, interleaved: every round runs both variants, and
 * the order alternates from round to round.  Nothing is judged here:
 * the module prints one line per sample and the host computes medians,
 * percentiles and ratios (scripts/bench-report.py).
 *
 * Output lines (debugfs ndk_bench/result):
 *   S <measure> <variant> <param> <round> <total_ns> <ops>
 *   I <key> <value>               a condition of the run
 *   E <text>                      an error: the measure is incomplete
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_BENCH_H
#define NDK_BENCH_H

#include <linux/completion.h>
#include <linux/in.h>
#include <linux/types.h>
#include <ndk/ndkpi.h>
#include <rdma/ib_verbs.h>

#define NB_MAX_PARAMS	16
/* Fixed base address of fast registrations (an index, never used). */
#define NB_BASE		0x10000000ULL
/* How long any single wait may take before the run gives up. */
#define NB_TIMEOUT	(10 * HZ)

/**
 * struct nb_env - one run's parameters (written to ndk_bench/run)
 * @adapter: ib_device name (module parameter)
 * @peer_ip: IPv4 address of its netdev (module parameter)
 * @rounds:  interleaved rounds (rounds=)
 * @iters:   operations per variant and round (iters=)
 * @depth:   initiator queue depth of every QP (depth=)
 * @params:  the measure's sizes, in pages or bytes (sizes=)
 * @nparams: entries in @params
 * @addr:    pin: a user address of the writing process (addr=)
 * @len:     pin: bytes at @addr (len=)
 */
struct nb_env {
	const char *adapter;
	const char *peer_ip;
	u32 rounds;
	u32 iters;
	u32 depth;
	u32 params[NB_MAX_PARAMS];
	u32 nparams;
	u64 addr;
	u64 len;
};

/**
 * struct nb_fix - an NDK loopback connection and a raw ib_core twin
 * @adapter:   the NDK adapter
 * @info:      its NDK_ADAPTER_INFO
 * @pd:        the NDK PD of every NDK object
 * @cq:        [0] active side, [1] passive side
 * @qp:        [0] active side, [1] passive side, connected to each other
 * @listener:  listening on the adapter's address
 * @a:         the active connector
 * @p:         the passive connector (from the ConnectEvent)
 * @accepted:  completed by the accept's completion
 * @accept_status: its status
 * @ibdev:     the raw baseline's ib_device (same device)
 * @ibpd:      its PD
 * @dcq:       a CQ polled directly (ib_process_cq_direct())
 * @dqp:       an RC QP on @dcq connected to itself, depth @depth
 * @icq:       a CQ completed in softirq context
 * @iqp:       an RC QP on @icq connected to itself
 */
struct nb_fix {
	struct ndk_adapter *adapter;
	struct ndk_adapter_info info;
	struct ndk_pd *pd;
	struct ndk_cq *cq[2];
	struct ndk_qp *qp[2];
	struct ndk_listener *listener;
	struct ndk_connector *a;
	struct ndk_connector *p;
	struct completion accepted;
	s32 accept_status;

	struct ib_device *ibdev;
	struct ib_pd *ibpd;
	struct ib_cq *dcq;
	struct ib_qp *dqp;
	struct ib_cq *icq;
	struct ib_qp *iqp;
};

/* Output (ndk_bench_main.c). */
__printf(1, 2) void nb_out(const char *fmt, ...);
void nb_sample(const char *measure, const char *variant, u32 param,
	       u32 round, u64 ns, u32 ops);

/* Fixture (ndk_bench_fix.c). */
int nb_fix_open(struct nb_env *env, struct nb_fix *f, bool connect);
void nb_fix_close(struct nb_fix *f);
u32 nb_poll(struct ndk_cq *cq, struct ndk_result *res, u32 want);
struct sg_table *nb_sgt_from_vmalloc(void *mem, u32 pages);
void nb_sgt_free(struct sg_table *sgt);

/* Measures: 0, or a negative errno after an E line. */
int nb_f1(struct nb_env *env);
int nb_r1(struct nb_env *env);
int nb_w1(struct nb_env *env);
int nb_d1(struct nb_env *env);
int nb_pin(struct nb_env *env);

#endif /* NDK_BENCH_H */
