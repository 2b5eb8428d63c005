#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: ndkblk's lifecycle, initiator and target in one guest on
# rxe0.  Bounds: an I/O fails within 45 s of the target's loss, a rmmod
# or `rdma link` command returns within 60 s, a reconnection comes within
# 30 s of the target's return.
#  1. the target unloaded under load: fio's I/O fails (the initiator kills
#     the connection), a read while it is away fails at once; the target
#     loaded again: the initiator reconnects and verified I/O passes;
#  2. the device removed under load (`rdma link delete rxe0`): the delete
#     returns, both sides close their objects, I/O fails; the device added
#     again: the target serves again with its namespace intact (data
#     written before the removal reads back the same), the initiator
#     reconnects;
#  3. a target that stops answering (ndkblk_target's stall knob,
#     io_timeout=5): for 3 s, a read survives (killed, sent again after the
#     reconnection); for good, a read fails within 60 s (after its
#     retries); the initiator works again once the target answers;
#  4. rmmod of the initiator while its target is away, and of both.
#   ndkblk-lifecycle.sh NDKBLK_KO NDKBLK_TARGET_KO
set -u
ini=$1 tgt=$2
addr=10.99.0.1
dev=/dev/ndkblk0
work=$(mktemp -d)
dmesg_start=$(dmesg | wc -l)
new_dmesg() { dmesg | tail -n +"$((dmesg_start + 1))"; }
fail() {
	echo "FAIL: $*"
	new_dmesg | grep -E 'ndkblk' | tail -20
	kill %1 2> /dev/null
	rmmod ndkblk 2> /dev/null
	rmmod ndkblk_target 2> /dev/null
	exit 1
}
# timed SECONDS CMD...: CMD must return (with any status) within SECONDS.
timed() {
	local s=$1
	shift
	timeout "$s" "$@"
	(($? != 124)) || fail "'$*' did not return within $s s"
}
# wait_log SECONDS REGEX: a new kernel-log line matching REGEX appears.
wait_log() {
	for _ in $(seq $(($1 * 10))); do
		new_dmesg | grep -qE "$2" && return
		sleep 0.1
	done
	fail "no kernel-log line matching '$2' within $1 s"
}
load() {
	fio --name=load --filename=$dev --direct=1 --rw=randrw --bs=64k \
		--ioengine=libaio --iodepth=16 --time_based --runtime=120 \
		--offset=32m --size=32m > "$work/load.out" 2>&1 &
	sleep 3
}
# The load must end with an I/O error within 45 s.
load_fails() {
	local i
	for i in $(seq 450); do
		jobs -r | grep -q . || break
		sleep 0.1
	done
	((i < 450)) || fail "fio still running 45 s after the target's loss"
	wait %1 && fail "fio saw no error: $(tail -5 "$work/load.out")"
	grep -qE 'error|Input/output' "$work/load.out" ||
		fail "fio failed without an I/O error: $(tail -5 "$work/load.out")"
}
verify() {
	fio --name=verify --filename=$dev --direct=1 --rw=randwrite --bs=4k \
		--ioengine=libaio --iodepth=16 --size=4m --offset=16m \
		--verify=crc32c --do_verify=1 --verify_fatal=1 > "$work/verify.out" 2>&1 ||
		fail "verified I/O after reconnecting: $(tail -5 "$work/verify.out")"
}

insmod "$tgt" addr=$addr size_mb=64 || fail "insmod ndkblk_target failed"
# I/O waits 3 s (not 10) for a reconnection: steps 1 and 2 wait for none.
insmod "$ini" target=$addr retry_timeout=3 || fail "insmod ndkblk failed"
for _ in $(seq 50); do [[ -b $dev ]] && break; sleep 0.1; done
[[ -b $dev ]] || fail "$dev did not appear"
head -c $((4 << 20)) /dev/urandom > "$work/data"
dd if="$work/data" of=$dev bs=1M oflag=direct status=none || fail "writing the data failed"

# 1. The target unloaded under load, then loaded again.
load
timed 60 rmmod ndkblk_target || fail "rmmod ndkblk_target under load failed"
load_fails
wait_log 10 'ndkblk: connection lost'
start=$EPOCHREALTIME
dd if=$dev of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null &&
	fail "a read succeeded with the target away"
echo "read with the target away failed after $(bc <<< "$EPOCHREALTIME - $start") s"
dmesg_start=$(dmesg | wc -l)
insmod "$tgt" addr=$addr size_mb=64 || fail "insmod ndkblk_target again failed"
wait_log 30 'ndkblk: reconnected'
verify
echo "target unloaded under load: I/O failed, reconnected, verified I/O passed"

# 2. The device removed under load, then added again.
dd if="$work/data" of=$dev bs=1M oflag=direct status=none || fail "writing the data failed"
dmesg_start=$(dmesg | wc -l)
load
timed 60 rdma link delete rxe0 || fail "rdma link delete rxe0 failed"
load_fails
timed 60 rdma link add rxe0 type rxe netdev v0 || fail "rdma link add rxe0 failed"
wait_log 30 'ndkblk_target: serving again'
wait_log 30 'ndkblk: reconnected'
dd if=$dev of="$work/back" bs=1M count=4 iflag=direct status=none ||
	fail "reading the data back failed"
cmp "$work/back" "$work/data" || fail "the data written before the removal differs"
verify
echo "device removed under load: I/O failed, both sides served again, data intact"

# 3. A target that stops answering (its stall knob drops every request;
# the connection stays up, as when the far host hangs), io_timeout=5:
#  a. for a moment (3 s): the I/O timeout kills the connection, the read
#     waits for the reconnection and is sent again: it succeeds;
#  b. for good: the read is sent again after each reconnection and fails
#     at its third kill (within 60 s); the initiator works again once the
#     target answers.
timed 60 rmmod ndkblk || fail "rmmod ndkblk failed"
insmod "$ini" target=$addr io_timeout=5 || fail "insmod ndkblk io_timeout=5 failed"
for _ in $(seq 50); do [[ -b $dev ]] && break; sleep 0.1; done
[[ -b $dev ]] || fail "$dev did not appear"
dmesg_start=$(dmesg | wc -l)
knob=/sys/module/ndkblk_target/parameters/stall
echo 1 > $knob || fail "no stall knob"
# Answered again once the timeout has killed the connection (at least
# 3 s; the first read may reach the target late on a slow guest).
(
	sleep 3
	for _ in $(seq 300); do
		new_dmesg | grep -q 'ndkblk: connection lost (I/O timed out)' && break
		sleep 0.1
	done
	echo 0 > $knob
) &
start=$EPOCHREALTIME
timeout 60 dd if=$dev of="$work/back" bs=1M count=4 iflag=direct status=none ||
	fail "a read across a 3 s stall failed: it was not sent again after the reconnection"
wait %% 2> /dev/null
cmp -s -n $((4 << 20)) "$work/back" "$work/data" || fail "the read across a stall returned other data"
new_dmesg | grep -q 'ndkblk: connection lost (I/O timed out)' ||
	fail "the stall did not kill the connection: nothing was retried"
echo "a read across a 3 s stall: connection killed by the timeout, read sent again, data right after $(bc <<< "$EPOCHREALTIME - $start") s"
dmesg_start=$(dmesg | wc -l)
echo 1 > $knob
start=$EPOCHREALTIME
timeout 60 dd if=$dev of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null
rc=$?
((rc == 124)) && fail "a read from a target that does not answer hung for 60 s"
((rc == 0)) && fail "a read succeeded from a target that does not answer"
echo "a read from a target that does not answer failed after $(bc <<< "$EPOCHREALTIME - $start") s ($(new_dmesg | grep -c 'ndkblk: connection lost') kills)"
echo 0 > $knob
wait_log 30 'ndkblk: reconnected'
verify
echo "target not answering: the I/O timed out, was sent again, failed in the end; verified I/O passed after"

# 4. Unload with the target away, then the target.
timed 60 rmmod ndkblk_target || fail "rmmod ndkblk_target failed"
wait_log 10 'ndkblk: connection lost'
timed 60 rmmod ndkblk || fail "rmmod ndkblk with its target away failed"
rm -rf "$work"
echo "ndkblk lifecycle: target loss, device removal, unload: ok"
