// SPDX-License-Identifier: GPL-2.0
/*
 * ndk-linux: NDKPI-style memory registration on ib_core.
 *
 * Module entry points.  Load order: the netlink family (so the ib_client's
 * adapter events have somewhere to go), the ib_client (so adapters exist
 * before user space can ask for them), then /dev/ndk, then debugfs.
 * Unload runs in reverse; misc_deregister() guarantees no new open, and the
 * module reference every open file holds keeps rmmod out while one exists.
 *
 * Copyright (c) 2026 The ndk-linux authors
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "ndk_file.h"
#include "ndk_mr.h"
#include "ndk_netlink.h"
#include "ndk_qp.h"

/* The one place the tracepoints of ndk_trace.h are defined. */
#define CREATE_TRACE_POINTS
#include "ndk_trace.h"

static const struct file_operations ndk_fops = {
	.owner = THIS_MODULE,
	.open = ndk_file_open,
	.release = ndk_file_release,
	.mmap = ndk_file_mmap,
	.unlocked_ioctl = ndk_ioctl,
	.poll = ndk_file_poll,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

static struct miscdevice ndk_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ndk",
	.fops = &ndk_fops,
	.mode = 0666,
};

static struct dentry *ndk_debugfs;

/*
 * debugfs ndk/selftest_warn (root only): writing to it hits a WARN.  It
 * exists so the test bed can prove that a kernel warning raised inside the
 * module during a vm test fails the run (Documentation/testing.md).
 */
static ssize_t ndk_selftest_warn_write(struct file *file,
				       const char __user *buf, size_t len,
				       loff_t *ppos)
{
	WARN(1, "ndk: warning requested through debugfs selftest_warn\n");
	return len;
}

static const struct file_operations ndk_selftest_warn_fops = {
	.owner = THIS_MODULE,
	.write = ndk_selftest_warn_write,
	.llseek = no_llseek,
};

static int __init ndk_init(void)
{
	int ret;

	ndk_wq = alloc_workqueue("ndk", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!ndk_wq)
		return -ENOMEM;
	ndk_connect_wq = alloc_workqueue("ndk_connect",
					 WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!ndk_connect_wq) {
		ret = -ENOMEM;
		goto err_destroy_wq;
	}
	ndk_kill_wq = alloc_workqueue("ndk_kill", WQ_UNBOUND | WQ_MEM_RECLAIM,
				      0);
	if (!ndk_kill_wq) {
		ret = -ENOMEM;
		goto err_destroy_connect_wq;
	}

	ret = ndk_mr_cache_init();
	if (ret)
		goto err_destroy_kill_wq;

	ret = ndk_netlink_init();
	if (ret)
		goto err_mr_cache_exit;

	ret = ndk_adapter_init();
	if (ret)
		goto err_netlink_exit;

	ret = ndk_uobj_cache_init();
	if (ret)
		goto err_adapter_exit;

	ret = ndk_ucache_cache_init();
	if (ret)
		goto err_uobj_cache_exit;

	ret = ndk_file_wq_init();
	if (ret)
		goto err_ucache_cache_exit;

	ret = misc_register(&ndk_miscdev);
	if (ret)
		goto err_file_wq_exit;

	ndk_debugfs = debugfs_create_dir("ndk", NULL);
	debugfs_create_file("selftest_warn", 0200, ndk_debugfs, NULL,
			    &ndk_selftest_warn_fops);
	ndk_reg_debugfs_init(ndk_debugfs);
	ndk_fr_debugfs_init(ndk_debugfs);
	ndk_qp_debugfs_init(ndk_debugfs);
	ndk_cq_debugfs_init(ndk_debugfs);
	ndk_file_debugfs_init(ndk_debugfs);
	ndk_umr_debugfs_init(ndk_debugfs);
	ndk_ucache_debugfs_init(ndk_debugfs);
	pr_info("ndk: loaded, ABI version %d\n", NDK_U_ABI_VERSION);
	return 0;

err_file_wq_exit:
	ndk_file_wq_exit();
err_ucache_cache_exit:
	ndk_ucache_cache_exit();
err_uobj_cache_exit:
	ndk_uobj_cache_exit();
err_adapter_exit:
	ndk_adapter_exit();
err_netlink_exit:
	ndk_netlink_exit();
err_mr_cache_exit:
	ndk_mr_cache_exit();
err_destroy_kill_wq:
	destroy_workqueue(ndk_kill_wq);
err_destroy_connect_wq:
	destroy_workqueue(ndk_connect_wq);
err_destroy_wq:
	destroy_workqueue(ndk_wq);
	return ret;
}

static void __exit ndk_exit(void)
{
	debugfs_remove(ndk_debugfs);
	misc_deregister(&ndk_miscdev);
	ndk_file_wq_exit();
	ndk_ucache_cache_exit();
	ndk_uobj_cache_exit();
	ndk_adapter_exit();
	ndk_netlink_exit();
	/* A kill's last PD reference queues the PD's teardown on ndk_wq. */
	destroy_workqueue(ndk_kill_wq);
	destroy_workqueue(ndk_connect_wq);
	destroy_workqueue(ndk_wq);
	ndk_mr_cache_exit();
	pr_info("ndk: unloaded\n");
}

module_init(ndk_init);
module_exit(ndk_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The ndk-linux authors");
MODULE_DESCRIPTION("NDKPI-style memory registration on ib_core");
