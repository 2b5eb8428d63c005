#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: the access-rights matrix (access_matrix.cpp) as user
# nobody, over a tmpfs and an ext4 file system holding a root-owned 0644
# file and one of nobody's own; afterwards the root-owned files must hold
# their bytes, read with pread before and after dropping the page cache
# (a page the device wrote behind the kernel's back is never dirtied, so
# only the first read sees it; a dirtied one reaches the disk).
set -u
prog=$1
# shellcheck source=tests/security/sec-fs-lib.sh
. "$(dirname "$0")/sec-fs-lib.sh"
sec_fs_setup sec-matrix
for d in tmpfs ext4; do
	head -c 8192 /dev/zero | tr '\0' '\021' > "$work/$d/root.dat"
	chmod 0644 "$work/$d/root.dat"
	cp "$work/$d/root.dat" "$work/$d/own.dat"
	chown nobody "$work/$d/own.dat"
	chmod 0755 "$work/$d"
done
chmod 0755 "$work"
sync
echo 8 > /proc/sys/vm/nr_hugepages
[[ $(cat /proc/sys/vm/nr_hugepages) -ge 1 ]] || fail "no huge page could be reserved"

head -c 8192 /dev/zero | tr '\0' '\021' > "$work/reference"
prlimit --memlock=67108864 -- setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
	"$prog" "$work/tmpfs" "$work/ext4"
rc=$?
echo 0 > /proc/sys/vm/nr_hugepages

check_root_files() { # when
	local d
	for d in tmpfs ext4; do
		cmp -s "$work/reference" "$work/$d/root.dat" ||
			{ echo "FAIL: $d/root.dat changed ($1)"; rc=1; }
	done
}
check_root_files "page cache"
sync
echo 3 > /proc/sys/vm/drop_caches
check_root_files "after dropping caches"
((rc == 0)) && echo "root-owned files unchanged on tmpfs and ext4, before and after dropping caches"
exit "$rc"
