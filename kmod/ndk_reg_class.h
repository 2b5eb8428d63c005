/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndk-linux: size classes of the pooled fast-register MRs of a PD's
 * registration path (ndk_reg.c).
 *
 * Pure functions of (entries, device limit), with no kernel dependency, so
 * that the host unit test (tests/unit/reg_class_test.cpp) compiles this
 * very header against fake devices.  An "entry" is one element of a
 * fast-register page list, of whatever page size the registration maps
 * with; the device limit is max_fast_reg_page_list_len.
 *
 * Class c holds MRs of min(16 << c, limit) entries, and the last class
 * holds MRs of exactly the limit: every count 1 ... limit maps to a class
 * whose MRs are at least that long and never longer than the device
 * allows, whatever the limit (rxe 512, mlx5 65536, ...).
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#ifndef NDK_REG_CLASS_H
#define NDK_REG_CLASS_H

#ifdef __KERNEL__
#include <linux/types.h>
#endif

/* Classes: 16 << 0 ... 16 << 14 entries, the last one the device limit. */
#define NDK_REG_CLASSES		16
#define NDK_REG_CLASS_MIN_SHIFT	4
/* Idle MRs kept per class: 32, fewer for long ones (entries bounded). */
#define NDK_REG_POOL_PER_CLASS	32
#define NDK_REG_POOL_ENTRIES	16384

/**
 * ndk_reg_class_entries() - page-list entries of the MRs of a class
 * @cls: the class, 0 ... NDK_REG_CLASSES - 1
 * @limit: the device's max_fast_reg_page_list_len, > 0
 *
 * Return: min(16 << @cls, @limit); @limit for the last class.
 */
static inline u32 ndk_reg_class_entries(int cls, u32 limit)
{
	u32 n;

	if (cls >= NDK_REG_CLASSES - 1)
		return limit;
	n = 1U << (cls + NDK_REG_CLASS_MIN_SHIFT);
	return n < limit ? n : limit;
}

/**
 * ndk_reg_class() - the class of a registration of @entries entries
 * @entries: page-list entries the registration needs, 1 ... @limit
 * @limit:   the device's max_fast_reg_page_list_len, > 0
 *
 * Return: the smallest class whose MRs hold @entries entries, or -1 when
 * @entries is 0 or above @limit.
 */
static inline int ndk_reg_class(u32 entries, u32 limit)
{
	int cls;

	if (!entries || entries > limit)
		return -1;
	for (cls = 0; cls < NDK_REG_CLASSES - 1; cls++)
		if (ndk_reg_class_entries(cls, limit) >= entries)
			break;
	return cls;
}

/**
 * ndk_reg_class_pool() - idle MRs a class keeps at most
 * @cls: the class
 * @limit: the device limit
 *
 * Return: NDK_REG_POOL_PER_CLASS, less for classes of long MRs so that a
 * class keeps at most about NDK_REG_POOL_ENTRIES entries idle (at least 2).
 */
static inline u32 ndk_reg_class_pool(int cls, u32 limit)
{
	u32 n = NDK_REG_POOL_ENTRIES / ndk_reg_class_entries(cls, limit);

	if (n > NDK_REG_POOL_PER_CLASS)
		return NDK_REG_POOL_PER_CLASS;
	return n < 2 ? 2 : n;
}

#endif /* NDK_REG_CLASS_H */
