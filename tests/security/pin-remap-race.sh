#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: writable registrations racing a thread that remaps their
# range between anonymous memory and a shared mapping of an ext4 file
# (sec_pin_remap_race.cpp), as user nobody.  The file is nobody's own, one
# page of 0x11 bytes on a loop-mounted ext4 in a tmpfs; afterwards it must
# hold its bytes, read with pread before and after dropping the page cache
# (the first read sees a page cache page the device wrote; the second what
# writeback took to the disk), and nothing the program registered may stay
# pinned.
set -u
prog=$1
# shellcheck source=tests/security/sec-fs-lib.sh
. "$(dirname "$0")/sec-fs-lib.sh"
sec_fs_setup sec-pin-race
head -c 4096 /dev/zero | tr '\0' '\021' > "$work/reference"
cp "$work/reference" "$work/ext4/own.dat"
chown nobody "$work/ext4/own.dat"
chmod 0644 "$work/ext4/own.dat"
chmod 0755 "$work" "$work/ext4"
sync

pinned() { cat /sys/kernel/debug/ndk/user_pinned_pages 2> /dev/null || echo unknown; }
before=$(pinned)
prlimit --memlock=67108864 -- setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	"$prog" "$work/ext4/own.dat"
rc=$?

check_file() { # when
	cmp -s "$work/reference" "$work/ext4/own.dat" && return
	echo "FAIL: own.dat changed ($1):"
	od -A d -t x1 "$work/ext4/own.dat" | head -n 8
	rc=1
}
check_file "page cache"
sync
echo 3 > /proc/sys/vm/drop_caches
check_file "after dropping caches"
# The program's registrations went with its file (waited for: the last
# unpin may run after its exit).
for ((i = 0; i < 100; i++)); do
	[[ $(pinned) == "$before" ]] && break
	sleep 0.1
done
[[ $(pinned) == "$before" ]] ||
	{ echo "FAIL: user_pinned_pages $(pinned) after the program, $before before"; rc=1; }
((rc == 0)) && echo "own.dat unchanged, before and after dropping caches; nothing left pinned"
exit "$rc"
