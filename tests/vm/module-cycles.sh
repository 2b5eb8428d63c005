#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: reliability plan row L4.  `rmmod ndk` is refused while a
# /dev/ndk file with objects is open, then 50 unload/load cycles (x
# NDK_STRESS_SCALE, at least 5) with rxe0 deleted and added back between
# every fifth: each unload succeeds, the module's reference count is 0 at
# rest, each load finds rxe0 again (or no adapter while rxe0 is gone) and
# starts with no user objects and no pinned pages.
set -u
ndkinfo=$1
fail() { echo "FAIL: $*"; exit 1; }
counter() { cat "/sys/kernel/debug/ndk/$1"; }
cycles=$(awk -v s="${NDK_STRESS_SCALE:-1}" 'BEGIN { n = int(50 * s + 0.5); print (n < 5 ? 5 : n) }')

# Refused while in use: an open file with live objects (ndkinfo is not
# needed; a shell fd on /dev/ndk is enough to hold the module).
exec 3< /dev/ndk
rmmod ndk 2> /tmp/rmmod.err && fail "rmmod ndk succeeded with /dev/ndk open"
grep -q "in use" /tmp/rmmod.err || fail "unexpected rmmod error: $(cat /tmp/rmmod.err)"
exec 3<&-

link_down=0
for ((i = 1; i <= cycles; i++)); do
	refcnt=$(cat /sys/module/ndk/refcnt)
	[[ "$refcnt" == 0 ]] || fail "cycle $i: ndk refcnt $refcnt at rest"
	rmmod ndk || fail "cycle $i: rmmod ndk failed"
	[[ -e /dev/ndk ]] && fail "cycle $i: /dev/ndk still present after rmmod"
	if ((i % 5 == 0)); then
		if ((link_down)); then
			rdma link add rxe0 type rxe netdev v0 || fail "cycle $i: rdma link add failed"
			link_down=0
		else
			timeout 60 rdma link delete rxe0 || fail "cycle $i: rdma link delete failed"
			link_down=1
		fi
	fi
	insmod "$NDK_KO" || fail "cycle $i: insmod failed"
	if ((link_down)); then
		"$ndkinfo" -l | grep -q . && fail "cycle $i: adapters listed while rxe0 is gone"
	else
		"$ndkinfo" -l | grep -qx rxe0 || fail "cycle $i: rxe0 not listed after load"
	fi
	[[ $(counter user_objects) == 0 && $(counter user_pinned_pages) == 0 ]] ||
		fail "cycle $i: counters not at zero after load"
done
if ((link_down)); then
	rdma link add rxe0 type rxe netdev v0 || fail "final rdma link add failed"
	"$ndkinfo" -l | grep -qx rxe0 || fail "rxe0 not listed after the last add"
fi
echo "rmmod refused while open; $cycles unload/load cycles, rxe0 removed and added $((cycles / 5)) times"
