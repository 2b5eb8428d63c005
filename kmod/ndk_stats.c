// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: module-wide registration counters and failed requests by
 * status.  The core counts (ndk_mr.c, ndk_mr_user.c, ndk_fr.c); the
 * netlink family only reads (ndk_netlink.c, STAT_GET).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/cpumask.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "ndk_stats.h"

struct ndk_stats ndk_stats;
DEFINE_PER_CPU(struct ndk_stats_requests, ndk_stats_requests);

/**
 * ndk_stat_requests() - the requests counted so far, over every CPU
 * @sum: out: the totals
 *
 * Not a snapshot: requests posted meanwhile may or may not count.
 *
 * Context: any.
 */
void ndk_stat_requests(struct ndk_stats_requests *sum)
{
	const struct ndk_stats_requests *c;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(&ndk_stats_requests, cpu);
		sum->fast_registers += READ_ONCE(c->fast_registers);
		sum->binds += READ_ONCE(c->binds);
		sum->invalidates += READ_ONCE(c->invalidates);
	}
}

static DEFINE_SPINLOCK(ndk_errors_lock);	/* protects ndk_errors */
static struct {
	s32 status;
	u64 count;
} ndk_errors[NDK_STAT_ERROR_SLOTS];

/**
 * ndk_stat_error() - count a failed registration request by its status
 * @status: the NTSTATUS it failed with
 *
 * Counted: refusals and failed completions of NdkRegisterMr,
 * NdkFastRegister, NdkBind and NdkInvalidate.
 *
 * Context: any.
 */
void ndk_stat_error(s32 status)
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&ndk_errors_lock, flags);
	for (i = 0; i < NDK_STAT_ERROR_SLOTS - 1; i++)
		if (!ndk_errors[i].count || ndk_errors[i].status == status)
			break;
	ndk_errors[i].status = ndk_errors[i].count ? ndk_errors[i].status :
						     status;
	ndk_errors[i].count++;
	spin_unlock_irqrestore(&ndk_errors_lock, flags);
}

/**
 * ndk_stat_errors() - the failed requests counted so far, by status
 * @status: out: NDK_STAT_ERROR_SLOTS entries, the statuses
 * @count:  out: NDK_STAT_ERROR_SLOTS entries, their counts
 *
 * Context: any.
 * Return: the entries filled, in the order the statuses first failed.
 */
int ndk_stat_errors(s32 *status, u64 *count)
{
	unsigned long flags;
	int n;

	spin_lock_irqsave(&ndk_errors_lock, flags);
	for (n = 0; n < NDK_STAT_ERROR_SLOTS && ndk_errors[n].count; n++) {
		status[n] = ndk_errors[n].status;
		count[n] = ndk_errors[n].count;
	}
	spin_unlock_irqrestore(&ndk_errors_lock, flags);
	return n;
}
