#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one test inside a fresh memory cgroup:
#   memcg-run.sh COMMAND [ARG...]
# Mounts cgroup v2 on /sys/fs/cgroup if nothing is (the guest's init
# mounts only proc, sysfs and devtmpfs), enables the memory controller for
# the root's children, moves this shell into ndk-memcg-run, runs COMMAND
# there (a scenario of ndk_test.ko runs in the process that writes its
# name, so in the cgroup), and moves back and removes the cgroup after.
set -u
root=/sys/fs/cgroup
if ! grep -q "^cgroup2 $root " /proc/self/mounts; then
	mount -t cgroup2 cgroup2 "$root" || { echo "FAIL: mount cgroup2"; exit 1; }
fi
if ! grep -qw memory "$root/cgroup.subtree_control"; then
	echo +memory > "$root/cgroup.subtree_control" ||
		{ echo "FAIL: no memory controller"; exit 1; }
fi
cg=$root/ndk-memcg-run
rmdir "$cg" 2>/dev/null
mkdir "$cg" || { echo "FAIL: mkdir $cg"; exit 1; }
echo $$ > "$cg/cgroup.procs" || { echo "FAIL: join $cg"; rmdir "$cg"; exit 1; }
"$@"
rc=$?
echo $$ > "$root/cgroup.procs"
rmdir "$cg" || echo "memcg-run.sh: $cg left behind"
exit $rc
