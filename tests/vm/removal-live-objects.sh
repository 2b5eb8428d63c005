#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: `rdma link delete rxe0` while a kernel consumer holds live
# NDK objects on it.  The consumer is ndk_test.ko, kept loaded across the
# steps (its objects live in module-global state, see
# tests/kmod/ndk_test_removal.c).
#   removal-live-objects.sh NDK_TEST_KO live
#       the consumer's removal callback runs once; the delete waits while
#       the objects and then the adapter are open; new objects fail with
#       STATUS_DEVICE_REMOVED; the delete finishes promptly once the
#       consumer has closed everything.
#   removal-live-objects.sh NDK_TEST_KO in-callback
#       the consumer closes everything from inside its removal callback;
#       the delete finishes promptly.
# Either way rxe0 is added back at the end and its adapter opens again.
# NDK_RM_DEV and NDK_RM_ADD run it on another device (siw-removal-*:
# siw0, re-added with `rdma link add siw0 type siw netdev s0`), with
# NDK_KTEST_PARAMS for ndk_test.ko.
# Every wait is bounded; on failure the consumer's objects are closed so
# that the device removal is never left waiting.
set -u
ko=$1
mode=$2
dev=${NDK_RM_DEV:-rxe0}
add=${NDK_RM_ADD:-rdma link add rxe0 type rxe netdev v0}
dbg=/sys/kernel/debug/ndk_test
rm_pid=
rm_rc=/tmp/removal-$mode.rc

log() { echo "removal: $*"; }

# Run one scenario of the loaded ndk_test.ko; 0 if it passed.
scenario() {
	local name=$1 verdict
	if ! echo "$name" > "$dbg/run"; then
		log "scenario $name could not run"
		return 1
	fi
	cat "$dbg/result"
	verdict=$(grep -E '^(not )?ok 1 ' "$dbg/result" | tail -n 1)
	[[ "$verdict" == "ok 1 $name" ]]
}

delete_running() { [[ -n "$rm_pid" ]] && kill -0 "$rm_pid" 2> /dev/null; }

# Wait up to $1 seconds for the background delete to end; 0 if it did.
wait_delete() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		delete_running || return 0
		sleep 0.1
	done
	return 1
}

start_delete() {
	rm -f "$rm_rc"
	(timeout 60 rdma link delete "$dev"; echo $? > "$rm_rc") &
	rm_pid=$!
}

readd_rxe0() {
	[[ -e /sys/class/infiniband/$dev ]] && return 0
	$add || { log "$add failed"; return 1; }
}

# On any failure: release the device, put rxe0 back, unload the consumer.
fail() {
	echo "FAIL: $*"
	if lsmod | grep -q '^ndk_test '; then
		scenario removal-cleanup > /dev/null
		wait_delete 30 || log "rdma link delete still waiting after cleanup"
		rmmod ndk_test || log "rmmod ndk_test failed"
	fi
	readd_rxe0
	exit 1
}

# The kernel log since the start of this test, and ndk.ko's removal lines.
dmesg_start=$(dmesg | wc -l)
new_dmesg() { dmesg | tail -n +"$((dmesg_start + 1))"; }
ndk_msgs() { new_dmesg | grep -E "$dev: ndk: adapter [0-9]+ removal"; }

[[ -e /sys/class/infiniband/$dev ]] || fail "no $dev to start with"
# shellcheck disable=SC2086 # parameters are words
insmod "$ko" ${NDK_KTEST_PARAMS:-} || fail "insmod $ko failed"

case $mode in
live)
	scenario removal-setup || fail "removal-setup"
	start=$(date +%s)
	start_delete
	# The delete must reach ndk.ko's wait for its consumer and stay there.
	for ((i = 0; i < 200; i++)); do
		ndk_msgs | grep -q 'removal waits for its consumers' && break
		delete_running || break
		sleep 0.1
	done
	ndk_msgs
	ndk_msgs | grep -q 'removal waits for its consumers' ||
		fail "no 'removal waits for its consumers' message within 20 s"
	sleep 1
	delete_running || fail "rdma link delete returned while objects were open (rc $(cat "$rm_rc" 2> /dev/null))"
	log "rdma link delete is waiting while the consumer's PDs are open"

	scenario removal-release || fail "removal-release"
	sleep 1
	delete_running || fail "rdma link delete returned while the adapter was open"
	log "rdma link delete is still waiting with the adapter open"

	scenario removal-close || fail "removal-close"
	t0=$(date +%s.%N)
	wait_delete 10 || fail "rdma link delete did not finish within 10 s of the last close"
	secs=$(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
	[[ "$(cat "$rm_rc")" == 0 ]] || fail "rdma link delete failed (rc $(cat "$rm_rc"))"
	log "rdma link delete finished $secs s after the adapter close ($(($(date +%s) - start)) s in all)"
	;;
in-callback)
	scenario removal-cb-setup || fail "removal-cb-setup"
	start_delete
	wait_delete 30 || fail "rdma link delete did not finish within 30 s"
	[[ "$(cat "$rm_rc")" == 0 ]] || fail "rdma link delete failed (rc $(cat "$rm_rc"))"
	ndk_msgs
	log "rdma link delete finished"
	scenario removal-cb-check || fail "removal-cb-check"
	;;
*)
	fail "unknown mode $mode"
	;;
esac

[[ -e /sys/class/infiniband/$dev ]] && fail "$dev still present after the delete"
new_dmesg | grep -q 'ndk_test: .*removal callback 2' && fail "removal callback ran twice"

# Put rxe0 back for the tests that follow, and check its adapter is back.
readd_rxe0 || fail "could not add $dev back"
scenario adapter-open || fail "adapter $dev did not come back"
rmmod ndk_test || fail "rmmod ndk_test failed"
log "ok"
