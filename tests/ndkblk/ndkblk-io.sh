#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: ndkblk (samples/ndkblk) carries a storage workload over NDK
# on rxe0, initiator and target in one guest over the loopback connection:
#  1. fio --verify=crc32c at every I/O size from 512 B to 4 MiB (the block
#     layer splits what exceeds one registration, 128 KiB), sequential and
#     random, queue depth 1 and 16;
#  2. mixed random reads and writes of mixed sizes at depth 16, verified;
#  3. a filesystem: mkfs.ext4, files written, unmounted, the initiator
#     unloaded and loaded again (a new connection) without inline writes
#     (inline_max=0), remounted, checksums; small writes verified again;
#     writes whose peer invalidations ndk.ko is told to distrust (debugfs
#     hooks): each key is killed, a slot's dispatch that meets the kill
#     gets STATUS_DEVICE_BUSY and is retried, and the connection stays;
#     then again in window mode (mode=window: a window bound over a
#     registered pool buffer per I/O): verified I/O and the checksums;
#  4. rmmod of both modules.
#  One hardware queue per CPU (the target serves 4; the guest has 2 CPUs),
#  each its own connection: the disk's queue count is checked, and the
#  mixed I/O of two jobs on two CPUs must reach both queues; the
#  reconnection without inline writes uses nr_queues=1 and max_io=65536
#  (requests of 64 KiB: larger I/O is split) and direct_notify=0 (the
#  initiator's CQ notifications from ndk.ko's work item; every other step
#  has them from the completion handler, the default).
#   ndkblk-io.sh NDKBLK_KO NDKBLK_TARGET_KO
#  Every I/O's registration must have been invalidated by the target
#  (send-and-invalidate), none locally; writes of up to 4 KiB go inline
#  in their request unless inline_max=0.  Data sizes scale with
#  NDK_STRESS_SCALE (the debug tier's 0.2: 1 MiB per fio job).
set -u
ini=$1 tgt=$2
mb=$(awk -v s="${NDK_STRESS_SCALE:-1}" 'BEGIN { m = int(8 * s); print (m < 1 ? 1 : m) }')
addr=10.99.0.1
dev=/dev/ndkblk0
work=$(mktemp -d)
fail() {
	echo "FAIL: $*"
	dmesg | grep -E 'ndkblk' | tail -20
	umount "$work/mnt" 2> /dev/null
	rmmod ndkblk 2> /dev/null
	rmmod ndkblk_target 2> /dev/null
	exit 1
}

# attach [PARAMS]: load the initiator, wait for its disk.
attach() {
	ndmesg=$(dmesg | wc -l)
	insmod "$ini" target=$addr "$@" || fail "insmod ndkblk target=$addr $* failed"
	for _ in $(seq 50); do [[ -b $dev ]] && return; sleep 0.1; done
	fail "$dev did not appear"
}

# detach INLINE [spread]: unload the initiator; every registered I/O's
# registration was invalidated by the target, none locally; INLINE:
# whether writes went inline (some / none).
detach() {
	local stats re
	rmmod ndkblk || fail "rmmod ndkblk failed"
	stats=$(dmesg | tail -n +"$((ndmesg + 1))" | grep -E 'ndkblk: [0-9]+ I/Os;') ||
		fail "no I/O statistics at rmmod"
	echo "$stats"
	re='ndkblk: ([0-9]+) I/Os; registrations invalidated by the target ([0-9]+), locally ([0-9]+), ended by a kill ([0-9]+); inline writes ([0-9]+)'
	[[ $stats =~ $re ]] || fail "unexpected statistics: $stats"
	((BASH_REMATCH[1] > 0 && BASH_REMATCH[2] + BASH_REMATCH[4] == BASH_REMATCH[1] &&
		BASH_REMATCH[3] == 0)) ||
		fail "not every registration was invalidated by the target: $stats"
	if [[ $1 == some ]]; then
		((BASH_REMATCH[5] > 0)) || fail "no write went inline: $stats"
	else
		((BASH_REMATCH[5] == 0)) || fail "writes went inline with inline_max=0: $stats"
	fi
	replays

	# SPREAD: the first two queues carried requests (two CPUs submitted).
	[[ ${2:-} == spread ]] || return 0
	stats=$(dmesg | tail -n +"$((ndmesg + 1))" | grep -E 'ndkblk: requests per queue:') ||
		fail "no requests per queue at rmmod"
	echo "$stats"
	read -ra per <<< "${stats#*queue:}"
	for ((h = 0; h < ${#per[@]} && h < 2; h++)); do
		((per[h] > 0)) || fail "hardware queue $h carried no request: $stats"
	done
}

# replays: a kill is allowed only for rxe's replayed local operation (a
# retransmission re-runs a fast-register or bind that already ran and
# the QP fails it, IB_WC_LOC_QP_OP_ERR: "ndkblk: request type 4 (or 8):
# 0xc0000010", rxe logs "rxe_reg_fast_mr: ... not free" or, once per
# boot, "... MW not in the free state"; performance.md, B1); its I/O is
# sent again after the reconnection, which fio's verification checks.
replays() {
	local log kills replayed
	log=$(dmesg | tail -n +"$((ndmesg + 1))")
	kills=$(grep -c 'ndkblk: connection lost' <<< "$log")
	((kills == 0)) && return
	replayed=$(grep -cE 'ndkblk: request type (4|8): 0xc0000010' <<< "$log")
	((kills <= replayed)) ||
		fail "$kills kills, $replayed of them rxe's replayed local operation: $(grep -E 'ndkblk|rdma_rxe' <<< "$log" | tail -8)"
	echo "NOTE: $kills kills from rxe's replayed local operation, their I/O sent again: $(grep -m1 -E 'not free|not in the free state' <<< "$log")"
}

# queues N: the disk has N hardware queues.
queues() {
	local n
	n=$(find /sys/block/ndkblk0/mq -mindepth 1 -maxdepth 1 | wc -l)
	((n == $1)) || fail "$dev has $n hardware queues, not $1"
	echo "$dev: $n hardware queues"
}
nq=$(nproc)
((nq > 4)) && nq=4

insmod "$tgt" addr=$addr size_mb=64 || fail "insmod ndkblk_target failed"
attach
queues "$nq"
# CQ notifications from the completion handler unless told otherwise.
[[ $(cat /sys/module/ndkblk/parameters/direct_notify) == Y ]] ||
	fail "ndkblk's direct_notify is not on by default"
[[ $(blockdev --getsize64 $dev) == $((64 << 20)) ]] ||
	fail "$dev has $(blockdev --getsize64 $dev) bytes, not 64 MiB"

# fio JOB-OPTIONS...: one verified job; its errors fail the test.
run_fio() {
	local out
	out=$(fio --name=ndkblk --filename=$dev --direct=1 --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --output-format=terse "$@" 2>&1) ||
		fail "fio $*: $out"
	echo "fio $*: ok"
}

# 1. Every size, 512 B to 4 MiB; the offset keeps sizes from sharing data.
# Each job moves mb MiB, but at most 1024 I/Os of the small sizes.
off=0
for bs in 512 1024 4096 8192 61440 65536 131072 135168 1048576 4194304; do
	size=$((mb << 20))
	((size > bs * 1024)) && size=$((bs * 1024))
	((size < bs)) && size=$bs
	run_fio --rw=write --bs=$bs --size=$size --offset=$((off << 20)) --ioengine=psync
	run_fio --rw=randwrite --bs=$bs --size=$size --offset=$((off << 20)) \
		--ioengine=libaio --iodepth=16 --randseed=$RANDOM
	off=$(((off + 8) % 56))
done
# Small adjacent I/O submitted in batches: the block layer merges requests
# whose buffers continue one page (the MDL then names that page once).
# They merge in the I/O scheduler, which a multi-queue disk has not by
# default.
echo mq-deadline > /sys/block/ndkblk0/queue/scheduler || fail "no mq-deadline scheduler"
merges0=$(awk '{ print $2 + $6 }' /sys/block/ndkblk0/stat)
run_fio --rw=write --bs=1024 --size=$((mb << 20)) --offset=56m --ioengine=libaio --iodepth=16 \
	--iodepth_batch_submit=16 --iodepth_batch_complete_min=16
merges=$(($(awk '{ print $2 + $6 }' /sys/block/ndkblk0/stat) - merges0))
echo "requests merged by the block layer in batched 1 KiB I/O: $merges"
((merges > 0)) || fail "no request merged: the merged-request case went untested"
# 2. Mixed sizes, reads and writes, at depth 16; two jobs on two CPUs,
# so on both hardware queues (the first detach checks both had some).
cpus=()
((nq > 1)) && cpus=(--cpus_allowed=0-1 --cpus_allowed_policy=split)
run_fio --rw=randrw --bsrange=512-1m --size=$((4 * mb))m --ioengine=libaio --iodepth=16 \
	--numjobs=2 --offset_increment=32m --randseed=$RANDOM "${cpus[@]}"

# 3. A filesystem across a reconnection.
mkdir -p "$work/mnt"
mkfs.ext4 -q -F $dev || fail "mkfs.ext4 failed"
mount $dev "$work/mnt" || fail "mount failed"
for i in 1 2 3; do
	head -c $((i * 3 << 20)) /dev/urandom > "$work/mnt/f$i" || fail "write f$i"
done
(cd "$work/mnt" && sha256sum f1 f2 f3) > "$work/sums"
umount "$work/mnt" || fail "umount failed"
detach some spread
# Without inline writes: small writes take the fast-register path too;
# one hardware queue, 64 KiB per request (the block layer splits more);
# the initiator's notifications from ndk.ko's work item (direct_notify=0).
attach inline_max=0 nr_queues=1 max_io=65536 direct_notify=0
queues 1
kb=$(cat /sys/block/ndkblk0/queue/max_hw_sectors_kb)
((kb == 64)) || fail "max_io=65536 gave $kb KiB per request"
run_fio --rw=randrw --bsrange=60k-260k --size=$((mb << 20)) --offset=48m --ioengine=libaio \
	--iodepth=16 --randseed=$RANDOM
mount $dev "$work/mnt" || fail "remount after reconnecting failed"
(cd "$work/mnt" && sha256sum -c --quiet "$work/sums") || fail "checksums differ after remount"
umount "$work/mnt" || fail "umount failed"
for bs in 512 4096; do
	run_fio --rw=randwrite --bs=$bs --size=$((mb << 20)) --offset=48m --ioengine=libaio \
		--iodepth=16 --randseed=$RANDOM
done
# A peer's invalidation ndk.ko cannot trust (rxe may put the receive
# result ahead of the registration's completion): the key is killed and
# the slot's next fast-register meets STATUS_DEVICE_BUSY until the kill is
# done; ndkblk retries the dispatch and keeps its connection (replays()).
# The kills wait 20 ms each (kill_delay_ms), so the slots come back
# before them.
dbg=/sys/kernel/debug/ndk
echo 20 > $dbg/kill_delay_ms && echo 64 > $dbg/distrust_peer_invalidations ||
	fail "no test hooks in $dbg"
run_fio --rw=randwrite --bs=4096 --size=$((mb << 18)) --offset=48m --ioengine=libaio \
	--iodepth=16 --randseed=$RANDOM
echo 0 > $dbg/kill_delay_ms
left=$(cat $dbg/distrust_peer_invalidations)
((left == 0)) || fail "$left distrusted invalidations left"
detach none
busy=$(dmesg | tail -n +"$((ndmesg + 1))" | grep -oE 'retried for a key.s kill [0-9]+' | grep -oE '[0-9]+$')
echo "dispatches that met a key's kill and were retried: ${busy:-none}"
((${busy:-0} > 0)) || fail "no dispatch met a killed key: the busy path went untested"
# Window mode: each I/O through the slot's registered pool buffer and a
# window bound over it.
attach mode=window
for bs in 8192 65536 135168 1048576; do
	run_fio --rw=randwrite --bs=$bs --size=$(((mb > 4 ? mb : 4) << 20)) --offset=40m \
		--ioengine=libaio --iodepth=16 --randseed=$RANDOM
done
run_fio --rw=randrw --bsrange=512-1m --size=$((2 * mb))m --ioengine=libaio --iodepth=16 \
	--offset=40m --randseed=$RANDOM
mount $dev "$work/mnt" || fail "mount in window mode failed"
(cd "$work/mnt" && sha256sum -c --quiet "$work/sums") || fail "checksums differ in window mode"
umount "$work/mnt" || fail "umount failed"
detach some

# 4. Unload.
rmmod ndkblk_target || fail "rmmod ndkblk_target failed"
rm -rf "$work"
echo "ndkblk: fio verify at 512 B .. 4 MiB, mixed I/O, ext4 across reconnections, small writes inline and registered, window mode, notifications direct and from the work item: ok"
