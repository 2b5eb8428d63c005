#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test-bed initramfs (busybox sh).  Mounts the host's root
# read-only over virtio-9p with a tmpfs overlay on top, mounts the writable
# results share at /ndk-results, and switches to the guest runner of the
# source tree named in /ndk-results/config.sh (or to NDK_RUNNER when that
# file sets it: scripts/vm-pair.sh runs a role script instead).
export PATH=/bin

die() {
	echo "vm-init: $*"
	echo "vm-init: $*" > /ndk-results-failed 2>/dev/null
	echo o > /proc/sysrq-trigger
	sleep 60
}

/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

while read -r m; do
	insmod "/modules/$m" || die "insmod $m failed"
done < /modules/order

# The test bed's own check (vm-selftest.sh): a boot that hangs idle
# before its mounts, as a kernel stuck in early boot would.
if grep -qw ndk_testbed_stall /proc/cmdline; then
	echo "vm-init: ndk_testbed_stall: idling"
	sleep 100000
fi

opts=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /lower /rw /newroot
mount -t 9p -o "$opts,ro,cache=loose" hostroot /lower || die "cannot mount the host root"
mount -t tmpfs -o mode=0755 tmpfs /rw || die "cannot mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay \
	-o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	die "cannot mount the overlay root"
mkdir -p /newroot/ndk-results
mount -t 9p -o "$opts" results /newroot/ndk-results || die "cannot mount the results share"
echo "booted $(cat /proc/uptime)" > /newroot/ndk-results/boot.stage

for d in proc sys dev; do
	mount --move "/$d" "/newroot/$d"
done
exec switch_root /newroot /bin/bash -c \
	'. /ndk-results/config.sh &&
	exec /bin/bash "${NDK_RUNNER:-$NDK_SRC/tests/testbed/guest-runner.sh}"'
