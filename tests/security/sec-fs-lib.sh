# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the security tests that need real file systems in the guest
# (whose root is 9p under an overlay): sec_fs_setup NAME makes $work, a
# temporary directory with a tmpfs at $work/tmpfs and a 16 MB ext4 at
# $work/ext4, loop-mounted from an image in that tmpfs, all undone at
# exit.  fail WHY ends the test.

fail() { echo "FAIL: $*"; exit 1; }

sec_fs_cleanup() {
	umount "$work/ext4" 2> /dev/null
	[[ -n "${loopdev:-}" ]] && losetup -d "$loopdev"
	umount "$work/tmpfs" 2> /dev/null
	rm -rf "$work"
}

sec_fs_setup() { # NAME
	work=$(mktemp -d "/tmp/$1.XXXXXX")
	trap sec_fs_cleanup EXIT
	mkdir -p "$work/tmpfs" "$work/ext4"
	mount -t tmpfs -o size=32m sec "$work/tmpfs" || fail "tmpfs mount"
	local img=$work/tmpfs/ext4.img
	truncate -s 16M "$img"
	mkfs.ext4 -q -F "$img" || fail "mkfs.ext4"
	modprobe -q loop
	modprobe -q ext4
	loopdev=$(losetup -f --show "$img") || fail "losetup: no loop device"
	mount -t ext4 "$loopdev" "$work/ext4" || fail "ext4 mount of $loopdev"
}
