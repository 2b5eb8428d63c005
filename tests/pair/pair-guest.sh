#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of each guest of the two-hosts test (scripts/vm-pair.sh), after
# vm-init.sh.  Brings up the virtio NIC with 10.98.0.1 (role a) or
# 10.98.0.2 (role b), rxe0 on it and ndk.ko, then runs the role's steps,
# each with its own timeout and judged by its exit code and the kernel log
# it produced (as guest-runner.sh), unloads ndk.ko, checks the whole
# kernel log and powers off.  Results in /ndk-results: <step>.rc/.log,
# module-unload.*, dmesg-clean.*, runner.status; dmesg-live.txt is the
# kernel log copied as it is written (all that is left of a killed guest).
#
# Role b loads ndkblk_target.ko (10.98.0.2:7474) and serves ndk-target on
# 10.98.0.2:7471 until the host creates /ndk-results/finish; when the host
# copies A's remove-b there, it deletes its rxe0, adds it again, starts
# ndk-target again and answers remove-b.done; its last life unloads
# ndkblk_target.ko before ndk.ko.  Role a: the user client, the kernel
# client, an outage under the user client (tests/pair/
# ndk_pair_client.cpp creates stop-b1; the host kills B and boots it
# again), an outage under the kernel client (ndk_test.ko pair-outage,
# stop-b2), an outage under fio on ndkblk (ndkblk.ko, stop-b3), a device
# removal under fio on ndkblk of B's rxe0 (remove-b), then of A's own
# (ndkblk-removal), the user client again.
set -u
R=/ndk-results
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C
# shellcheck source=/dev/null
. "$R/config.sh"

say() { echo "guest: $NDK_PAIR_NAME: $*"; }
# Every bound below (a step's timeout, a wait, retry_timeout) is in
# seconds on the stock kernel, multiplied by $scale (vm-pair.sh's
# NDK_VM_TIMEOUT_SCALE: 6 on the debug kernel).
scale=${NDK_PAIR_SCALE:-1}
kmsg() { echo "ndk-testbed: $*" > /dev/kmsg; }
poweroff_now() {
	sync
	echo o > /proc/sysrq-trigger
	sleep 30
}
trap poweroff_now EXIT

mount -t debugfs debugfs /sys/kernel/debug
hostname "ndk-$NDK_PAIR_NAME"
ulimit -c 0
dmesg -w > "$R/dmesg-live.txt" 2>&1 &
if [[ -n "${NDK_GUEST_MODULES:-}" ]]; then
	mkdir -p "/lib/modules/$(uname -r)"
	mount --bind "$NDK_GUEST_MODULES" "/lib/modules/$(uname -r)"
fi
say "kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
kmsg "setup begin"

# step NAME TIMEOUT COMMAND...: one verdict, as guest-runner.sh's tests;
# TIMEOUT x the scale.
# shellcheck source=tests/testbed/guest-lib.sh
. "$NDK_SRC/tests/testbed/guest-lib.sh"
step() {
	local name=$1 tmo=$(($2 * scale)) rc
	shift 2
	# bash runs the exported functions (setup, serve, ...) for timeout.
	ndk_judge "$name" "$tmo" bash -c '"$@"' "$name" "$@"
	rc=$?
	if ((rc == 0)); then
		say "PASS $name (${ndk_judge_secs} s)"
	else
		say "FAIL $name (rc $rc)"
		tail -n 20 "$R/$name.log" | sed 's/^/guest:   /'
	fi
	return "$rc"
}

if [[ $NDK_PAIR_ROLE == a ]]; then
	me=10.98.0.1 peer=10.98.0.2
else
	me=10.98.0.2 peer=10.98.0.1
fi
target_addr=10.98.0.2:7471

# The one NIC there is (eth0 or enp0s*, whatever udev-less naming gives):
# rxe0's netdev, at setup and when rxe0 is added again (ndkblk-removal).
nic_name() {
	local n
	for n in /sys/class/net/*; do
		[[ ${n##*/} == lo ]] || { echo "${n##*/}"; return 0; }
	done
	return 1
}

setup() {
	local m nic=""
	for m in virtio_net ib_core ib_uverbs rdma_ucm rdma_rxe; do
		modprobe "$m" || { echo "modprobe $m failed"; return 1; }
	done
	ip link set lo up
	for _ in $(seq 50); do
		nic=$(nic_name) && break
		sleep 0.1
	done
	[[ -n "$nic" ]] || { echo "no network interface"; return 1; }
	if ! ip addr add "$me/24" dev "$nic" || ! ip link set "$nic" up; then
		echo "cannot configure $nic"
		return 1
	fi
	rdma link add rxe0 type rxe netdev "$nic" || { echo "rdma link add failed"; return 1; }
	[[ -e /sys/class/infiniband/rxe0 ]] || { echo "rxe0 did not appear"; return 1; }
	insmod "$NDK_KO" || { echo "insmod $NDK_KO failed"; return 1; }
	echo "$nic $me, rxe0, ndk.ko loaded"
	if [[ $NDK_PAIR_ROLE == b ]]; then
		insmod "$NDK_PAIR_NDKBLK_TARGET" addr="$me" ||
			{ echo "insmod $NDK_PAIR_NDKBLK_TARGET failed"; return 1; }
		echo "ndkblk_target.ko serving on $me"
	fi
}

# Waits until the peer answers pings (it boots at the same time); the
# host's busybox has a ping when the host has none.
wait_peer() {
	local i
	for i in $(seq $((300 * scale))); do
		busybox ping -c 1 -W 1 "$peer" > /dev/null 2>&1 &&
			{ echo "$peer answers after $i tries"; return 0; }
	done
	echo "$peer does not answer"
	return 1
}

# The kernel consumer: ndk_test.ko's pair-client scenario against B.
kernel_client() {
	NDK_VM_TIMEOUT_SCALE=$scale NDK_KTEST_PARAMS="peer_ip=$me pair_target=$target_addr" \
		"$NDK_SRC/tests/kmod/run-ktest.sh" pair-client
}

# The kernel consumer through B's second loss: pair-outage logs "traffic
# running", the watcher creates stop-b2 (the host kills b2), then
# "error", and the watcher creates stop-b2.seen (the host boots b3).
kernel_outage() {
	local w rc
	(
		for _ in $(seq $((1200 * scale))); do
			dmesg | grep -q '# pair-outage: traffic running' && { : > "$R/stop-b2"; break; }
			sleep 0.5
		done
		for _ in $(seq $((1200 * scale))); do
			dmesg | grep -q '# pair-outage: error' && { : > "$R/stop-b2.seen"; break; }
			sleep 0.5
		done
	) &
	w=$!
	NDK_VM_TIMEOUT_SCALE=$scale NDK_KTEST_PARAMS="peer_ip=$me pair_target=$target_addr" \
		"$NDK_SRC/tests/kmod/run-ktest.sh" pair-outage
	rc=$?
	kill "$w" 2> /dev/null
	wait "$w" 2> /dev/null
	return "$rc"
}

# ndkblk (samples/ndkblk) through B's third loss: A's /dev/ndkblk0 is
# B's ndkblk_target.ko namespace (RAM: it dies with b3, b4's is zeroed).
# (Bounds x the scale.)
#  1. insmod ndkblk.ko io_timeout=10 (retried: B's target may be starting);
#  2. fio --verify=crc32c passes;
#  3. fio load (randrw, depth 16), then stop-b3: the host kills b3;
#  4. the load ends with an I/O error within 45 s (the 10 s I/O timeout or
#     rxe's transport retries kill the connection), a read with B away
#     fails at once (within 30 s, or it hangs); stop-b3.seen: the host
#     boots b4;
#  5. ndkblk reconnects within 240 s (b4's boot under TCG included), the
#     data written before the outage reads back as zeros (the new
#     namespace), fio --verify=crc32c passes;
#  6. rmmod ndkblk returns within 60 s and succeeds.
# The lines starting with "ndkblk" go to the summary (scripts/vm-pair.sh).
nb_dev=/dev/ndkblk0
nb_fail() {
	echo "FAIL: $*"
	dmesg | grep -E 'ndkblk' | tail -20
	[[ -n "${nb_load:-}" ]] && kill "$nb_load" 2> /dev/null
	lsmod | grep -q '^ndkblk ' && timeout $((60 * scale)) rmmod ndkblk
	# ndkblk-removal: the steps after this one need A's rxe0.
	[[ -e /sys/class/infiniband/rxe0 ]] || rdma link add rxe0 type rxe netdev "$(nic_name)"
	exit 1
}
# nb_since START: seconds since $EPOCHREALTIME was START, one decimal.
nb_since() {
	local us=$((${EPOCHREALTIME/./} - ${1/./}))
	echo "$((us / 1000000)).$((us / 100000 % 10))"
}
# nb_log: the kernel log from the last line "ndk-testbed: $nb_mark" on,
# or all of it while nb_mark is unset (ndkblk-outage loads ndkblk first).
nb_log() {
	if [[ -n "${nb_mark:-}" ]]; then
		dmesg | tac | sed "/ndk-testbed: $nb_mark\$/q" | tac
	else
		dmesg
	fi
}
# nb_wait_log SECONDS REGEX: a line matching REGEX appears in nb_log
# within SECONDS x the scale.  Deadlines are on bash's clock: a process
# costs time to start under TCG.
nb_wait_log() {
	local secs=$(($1 * scale))
	local end=$((SECONDS + secs))
	until nb_log | grep -qE "$2"; do
		((SECONDS < end)) || nb_fail "no kernel-log line matching '$2' within $secs s"
		sleep 0.2
	done
}
# nb_ktime REGEX: the kernel timestamp (s) of nb_log's first line matching REGEX.
nb_ktime() {
	nb_log | grep -m1 -E "$1" | sed -nE 's/^\[ *([0-9]+\.[0-9]+)\].*/\1/p'
}
nb_verify() {
	fio --name=verify --filename=$nb_dev --direct=1 --rw=randwrite --bs=4k \
		--ioengine=libaio --iodepth=16 --size=4m --offset=16m \
		--verify=crc32c --do_verify=1 --verify_fatal=1 > "$nb_work/verify.out" 2>&1 ||
		nb_fail "verified I/O $1: $(tail -5 "$nb_work/verify.out")"
	echo "ndkblk: fio write+verify (crc32c, 4 MiB) $1: ok"
}
# nb_insmod PARAM...: insmod ndkblk.ko target=B PARAM..., retried for up
# to 120 s x the scale (B's target may be starting), and /dev/ndkblk0
# appears.
nb_insmod() {
	local i
	for i in $(seq $((60 * scale))); do
		insmod "$NDK_PAIR_NDKBLK" target="$peer" "$@" 2> "$nb_work/insmod.err" &&
			break
		sleep 2
	done
	lsmod | grep -q '^ndkblk ' ||
		nb_fail "insmod ndkblk target=$peer $* failed for $((120 * scale)) s: $(cat "$nb_work/insmod.err")"
	for _ in $(seq 50); do [[ -b $nb_dev ]] && break; sleep 0.1; done
	[[ -b $nb_dev ]] || nb_fail "$nb_dev did not appear"
	echo "ndkblk: loaded (attempt $i): $(nb_log | grep -m1 'ndkblk: ndkblk0:')"
}
# nb_rmmod: rmmod ndkblk returns within 60 s (x the scale) and succeeds.
nb_rmmod() {
	local rc t1=$EPOCHREALTIME
	timeout $((60 * scale)) rmmod ndkblk
	rc=$?
	((rc == 124)) && nb_fail "rmmod ndkblk did not return within $((60 * scale)) s"
	((rc == 0)) || nb_fail "rmmod ndkblk failed"
	lsmod | grep -q '^ndkblk ' && nb_fail "ndkblk still loaded after rmmod"
	echo "ndkblk: rmmod in $(nb_since "$t1") s: $(nb_log | grep -m1 -oE 'ndkblk: [0-9]+ I/Os;.*')"
}
ndkblk_outage() {
	local rc secs t0 t1
	nb_work=$(mktemp -d)
	# 1.
	nb_insmod io_timeout=10
	# 2.
	nb_verify "before the outage"
	# 3.
	fio --name=load --filename=$nb_dev --direct=1 --rw=randrw --bs=64k \
		--ioengine=libaio --iodepth=16 --time_based --runtime=$((120 * scale)) \
		--offset=32m --size=32m > "$nb_work/load.out" 2>&1 &
	nb_load=$!
	sleep 3
	kill -0 "$nb_load" 2> /dev/null ||
		nb_fail "fio load ended before the outage: $(tail -5 "$nb_work/load.out")"
	t0=$EPOCHREALTIME
	: > "$R/stop-b3"
	# 4.
	while kill -0 "$nb_load" 2> /dev/null; do
		((${EPOCHREALTIME/./} - ${t0/./} < 45000000 * scale)) ||
			nb_fail "fio still running $((45 * scale)) s after the kill"
		sleep 0.1
	done
	secs=$(nb_since "$t0")
	wait "$nb_load" && nb_fail "fio saw no error: $(tail -5 "$nb_work/load.out")"
	nb_load=""
	grep -qE 'error|Input/output' "$nb_work/load.out" ||
		nb_fail "fio failed without an I/O error: $(tail -5 "$nb_work/load.out")"
	echo "ndkblk outage: I/O failed $secs s after the kill (counted from stop-b3; the host kills within 0.5 s)"
	grep -m2 -E 'error|Input/output' "$nb_work/load.out" | sed 's/^/  fio: /'
	nb_wait_log 15 'ndkblk: connection lost'
	echo "  kernel: $(dmesg | grep -m1 'ndkblk: connection lost')"
	t1=$EPOCHREALTIME
	timeout $((30 * scale)) dd if=$nb_dev of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null
	rc=$?
	((rc == 124)) && nb_fail "a read with B away did not return within $((30 * scale)) s"
	((rc == 0)) && nb_fail "a read succeeded with B away"
	echo "ndkblk outage: a read with B away failed after $(nb_since "$t1") s"
	: > "$R/stop-b3.seen"
	t1=$EPOCHREALTIME
	# 5.
	nb_wait_log 240 'ndkblk: reconnected'
	echo "ndkblk reconnected $(nb_since "$t1") s after B's boot (counted from stop-b3.seen; the host boots B within 0.5 s)"
	echo "  kernel: $(dmesg | grep -m1 'ndkblk: reconnected')"
	dd if=$nb_dev of="$nb_work/back" bs=1M skip=16 count=4 iflag=direct status=none ||
		nb_fail "reading the new namespace failed"
	# (no process substitution: the guest has no /dev/fd)
	cmp -s -n $((4 << 20)) "$nb_work/back" /dev/zero ||
		nb_fail "the 4 MiB written before the outage do not read back as zeros from B's new life: $(cmp -n $((4 << 20)) "$nb_work/back" /dev/zero 2>&1)"
	echo "ndkblk: the new namespace reads back zeros where the old data was"
	nb_verify "after reconnecting"
	# 6.
	nb_rmmod
	rm -rf "$nb_work"
}

# ndkblk through a device removal of either side, after ndkblk-outage
# (B's fourth life, which lives to the end).  Issue 19.
#  (Bounds x the scale, retry_timeout too.)
#  1. insmod ndkblk.ko io_timeout=10 retry_timeout=30 (retried);
#  2. B's side: a verified fio write load (nb_removal), then A creates
#     remove-b; the host copies it to B's share and B (serve(), b_removal)
#     deletes its rxe0, adds it again 3 s later and answers remove-b.done
#     (relayed back to A); ndkblk_target.ko reopens the adapter itself;
#  3. A's side: the same load, A deletes its own rxe0 and adds it again
#     3 s later;
#     in 2 and 3 the kernel log shows "connection lost", then
#     "reconnected" (within 60 s each), and fio ends with its
#     verification passed and no I/O error: the I/O the kill ended is
#     sent again after the reconnection (within retry_timeout);
#  4. rmmod ndkblk returns within 60 s and succeeds, and its counters
#     show I/O ended by a kill (else no re-send was tested).
# nb_removal SIDE (target or initiator): one removal under two fio jobs
# of 64 KiB I/O: "verified" writes 8 MiB at random at 1 MiB/s (8 s at
# least; the removal comes 3 s in, once I/O is in flight), then reads
# them back and checks their crc32c; "load" keeps 4 random reads and
# writes in flight for 10 s x the scale (rate-limited I/O is mostly
# idle), so the kill ends some: they must be sent again, not fail.
nb_removal() {
	local side=$1 out=$nb_work/$1.out rc t0 tm tl tr rd wr
	fio --filename=$nb_dev --direct=1 --bs=64k --ioengine=libaio \
		--name=verified --rw=randwrite --iodepth=16 --offset=32m --size=8m \
		--rate=,1m --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--name=load --rw=randrw --iodepth=4 --offset=48m --size=16m \
		--time_based --runtime=$((10 * scale)) > "$out" 2>&1 &
	nb_load=$!
	sleep 3
	# fio takes seconds to start on the debug kernel: wait for I/O in
	# flight, or the removal may end none and test no re-send.
	for _ in $(seq $((150 * scale))); do
		read -r rd wr < "/sys/block/${nb_dev##*/}/inflight"
		((rd + wr)) && break
		sleep 0.2
	done
	((rd + wr)) || nb_fail "no I/O in flight $((30 * scale)) s after fio started"
	kill -0 "$nb_load" 2> /dev/null ||
		nb_fail "fio ended before the $side-side removal: $(tail -5 "$out")"
	nb_mark="ndkblk-removal: $side side"
	kmsg "$nb_mark"
	t0=$EPOCHREALTIME
	if [[ $side == target ]]; then
		: > "$R/remove-b"
		for _ in $(seq $((600 * scale))); do
			[[ -e $R/remove-b.done ]] && break
			sleep 0.2
		done
		[[ -e $R/remove-b.done ]] ||
			nb_fail "no remove-b.done from B within $((120 * scale)) s of remove-b"
		sed 's/^/  B: /' "$R/remove-b.done"
		grep -qx 'rc 0' "$R/remove-b.done" || nb_fail "B's removal and re-add failed"
	else
		timeout $((60 * scale)) rdma link delete rxe0
		rc=$?
		((rc == 124)) && nb_fail "rdma link delete rxe0 did not return within $((60 * scale)) s"
		((rc == 0)) || nb_fail "rdma link delete rxe0 failed ($rc)"
		echo "  A: rdma link delete rxe0 returned in $(nb_since "$t0") s"
		sleep 3
		timeout $((60 * scale)) rdma link add rxe0 type rxe netdev "$(nic_name)" ||
			nb_fail "rdma link add rxe0 failed"
		echo "  A: rdma link add rxe0 done $(nb_since "$t0") s after the delete began"
	fi
	nb_wait_log 60 'ndkblk: connection lost'
	nb_wait_log 60 'ndkblk: reconnected'
	nb_log | grep -E 'ndkblk: (connection lost|reconnected)' | head -1 |
		grep -q 'connection lost' || nb_fail "reconnected before the connection was lost"
	while kill -0 "$nb_load" 2> /dev/null; do
		((${EPOCHREALTIME/./} - ${t0/./} < 120000000 * scale)) ||
			nb_fail "fio still running $((120 * scale)) s after the $side-side removal"
		sleep 0.2
	done
	wait "$nb_load"
	rc=$?
	nb_load=""
	((rc == 0)) || nb_fail "fio failed across the $side-side removal ($rc): $(tail -8 "$out")"
	tm=$(nb_ktime "ndk-testbed: $nb_mark\$")
	tl=$(nb_ktime 'ndkblk: connection lost')
	tr=$(nb_ktime 'ndkblk: reconnected')
	echo "ndkblk removal, $side side: connection lost $(awk "BEGIN { printf \"%.1f\", $tl - $tm }") s, reconnected $(awk "BEGIN { printf \"%.1f\", $tr - $tm }") s after the removal began$([[ $side == target ]] && echo " (counted from remove-b: the host's and B's polls add up to 1 s)"), fio write+verify (crc32c, 8 MiB) ok, load ok, in $(nb_since "$t0") s"
	echo "  kernel: $(nb_log | grep -m1 'ndkblk: connection lost')"
	echo "  kernel: $(nb_log | grep -m1 'ndkblk: reconnected')"
	grep -E 'err=|read:|write:' "$out" | sed 's/^ */  fio: /'
}
ndkblk_removal() {
	nb_work=$(mktemp -d)
	nb_mark="begin ndkblk-removal"	# ndk_judge's marker
	# 1.
	nb_insmod io_timeout=10 retry_timeout=$((30 * scale))
	# 2., 3.
	nb_removal target
	nb_removal initiator
	# 4.
	nb_rmmod
	nb_log | grep -qE 'ndkblk: [0-9]+ I/Os;.* ended by a kill [1-9]' ||
		nb_fail "no I/O in flight was ended by a kill: the removals tested no re-send"
	rm -rf "$nb_work"
}

# ndk-target until the host creates $R/finish; its exit status and
# output are the verdict.  On remove-b (A's ndkblk-removal step, copied
# here by the host) B removes its rxe0 and adds it again (b_removal).
# ndk-target gets ADAPTER_REMOVED and exits with 1 ("the adapter was
# removed"): it runs without --reopen.  serve() expects that and
# starts a new one once rxe0 is back, as a service manager would, so
# user-client-after runs after the removal against the new one.  This is
# simpler than running the removal after user-client-after: ndk-target
# would exit all the same, and serve() would have to tell that exit from
# a failure anyway.
# target_start OUT: starts ndk-target (its pid in t, output in OUT) and
# waits until it listens (at most 120 s x the scale, or until it exits).
target_start() {
	"$NDK_PAIR_TARGET" --listen "$target_addr" --size 65536 --window 4096:8192 \
		--access rw --adapter rxe0 > "$1" 2>&1 &
	t=$!
	for _ in $(seq $((600 * scale))); do
		grep -q '^listening' "$1" && break
		kill -0 "$t" 2>/dev/null || break
		sleep 0.2
	done
	cat "$1"
	grep -q '^listening' "$1"
}
# b_removal: rdma link delete rxe0 (ndk-target, pid t, must exit by itself
# within 20 s), 3 s later rdma link add rxe0; ndkblk_target.ko must serve
# again by itself (within 30 s), and a new ndk-target listens.
b_removal() {
	local rc t0=$EPOCHREALTIME nb_mark=remove-b
	kmsg "$nb_mark"
	timeout $((60 * scale)) rdma link delete rxe0
	rc=$?
	((rc == 0)) || { echo "FAIL: rdma link delete rxe0: $rc (124: not within $((60 * scale)) s)"; return 1; }
	echo "rdma link delete rxe0 returned in $(nb_since "$t0") s"
	for _ in $(seq $((100 * scale))); do
		kill -0 "$t" 2>/dev/null || break
		sleep 0.2
	done
	if kill -0 "$t" 2>/dev/null; then
		echo "FAIL: ndk-target still runs $((20 * scale)) s after its adapter's removal"
		return 1
	fi
	wait "$t"
	rc=$?
	echo "ndk-target exited ($rc): $(grep -m1 'adapter was removed' "$R/target.out")"
	grep -q 'adapter was removed' "$R/target.out" ||
		{ echo "FAIL: ndk-target did not report the removal"; return 1; }
	sleep 3
	timeout $((60 * scale)) rdma link add rxe0 type rxe netdev "$(nic_name)" ||
		{ echo "FAIL: rdma link add rxe0 failed"; return 1; }
	echo "rdma link add rxe0 done $(nb_since "$t0") s after the delete began"
	for _ in $(seq $((150 * scale))); do
		nb_log | grep -q 'ndkblk_target: serving again' && break
		sleep 0.2
	done
	nb_log | grep -q 'ndkblk_target: serving again' ||
		{ echo "FAIL: ndkblk_target did not serve again within $((30 * scale)) s of the add"; return 1; }
	echo "ndkblk_target serves again $(nb_since "$t0") s after the delete began"
	mv "$R/target.out" "$R/target-before-removal.out"
	target_start "$R/target.out" ||
		{ echo "FAIL: ndk-target did not start again"; return 1; }
	echo "ndk-target listens again $(nb_since "$t0") s after the delete began"
}
serve() {
	local t rc removal=0
	target_start "$R/target.out" || { echo "ndk-target did not start"; return 1; }
	while [[ ! -e $R/finish ]]; do
		if [[ -e $R/remove-b && ! -e $R/remove-b.done ]]; then
			b_removal > "$R/remove-b.tmp" 2>&1
			rc=$?
			echo "rc $rc" >> "$R/remove-b.tmp"
			mv "$R/remove-b.tmp" "$R/remove-b.done"
			echo "--- remove-b:"
			cat "$R/remove-b.done"
			((rc == 0)) || removal=1
		fi
		kill -0 "$t" 2>/dev/null || { echo "ndk-target stopped by itself"; break; }
		sleep 0.5
	done
	kill -TERM "$t" 2>/dev/null
	wait "$t"
	rc=$?
	echo "--- ndk-target (exit $rc):"
	cat "$R/target.out"
	((removal == 0)) || { echo "FAIL: the removal of rxe0 (remove-b) failed"; return 1; }
	return "$rc"
}

# The steps run under timeout(1) in a bash of their own.
export -f kmsg nic_name setup wait_peer kernel_client kernel_outage
export -f target_start b_removal serve
export -f nb_fail nb_since nb_log nb_wait_log nb_ktime nb_verify nb_insmod nb_rmmod
export -f ndkblk_outage nb_removal ndkblk_removal
export R scale me peer target_addr nb_dev NDK_SRC NDK_KO NDK_PAIR_TARGET NDK_PAIR_ROLE
export NDK_PAIR_NDKBLK NDK_PAIR_NDKBLK_TARGET
# run-ktest.sh loads the ndk_test.ko vm-pair.sh was given (--ktest).
export NDK_KTEST_KO=$NDK_PAIR_KTEST
if step setup 120 setup; then
	if [[ $NDK_PAIR_ROLE == b ]]; then
		step serve 900 serve
	else
		step wait-peer 330 wait_peer &&
			step user-client 200 "$NDK_PAIR_CLIENT" "$target_addr" verify 20
		step kernel-client 200 kernel_client
		# The host kills B when stop-bN appears and boots it again
		# when stop-bN.seen does (or 90 s later).
		step outage 420 "$NDK_PAIR_CLIENT" --timeout $((60000 * scale)) \
			"$target_addr" outage "$R/stop-b1" 20 $((240 * scale))
		step kernel-outage 480 kernel_outage
		step ndkblk-outage 600 ndkblk_outage
		step ndkblk-removal 300 ndkblk_removal
		step user-client-after 200 "$NDK_PAIR_CLIENT" "$target_addr" verify 20
	fi
fi

# --- the end: unload (ndkblk's modules first), then the whole kernel log ---
unload() {
	local m
	if [[ $NDK_PAIR_ROLE == b ]] && ! lsmod | grep -q '^ndkblk_target '; then
		echo "ndkblk_target was not loaded at the end of the run"
		return 1
	fi
	for m in ndkblk ndkblk_target; do
		lsmod | grep -q "^$m " || continue
		timeout $((60 * scale)) rmmod "$m" ||
			{ echo "rmmod $m failed (or took over $((60 * scale)) s)"; return 1; }
		echo "rmmod $m: ok"
	done
	lsmod | grep -q '^ndk ' || { echo "ndk was not loaded at the end of the run"; return 1; }
	rmmod ndk && echo "rmmod ndk: ok"
}
out=$(unload 2>&1)
rc=$?
printf '%s\n' "$out" > "$R/module-unload.log"
echo "$rc" > "$R/module-unload.rc"
if ((rc == 0)); then say "unload: ok"; else say "unload FAILED: $out"; fi
kmsg "run end"
dmesg > "$R/dmesg.txt"
sed -n '/ndk-testbed: setup begin$/,$p' "$R/dmesg.txt" | "$NDK_SRC/tests/testbed/check-dmesg.sh" \
	> "$R/dmesg-clean.log"
echo $? > "$R/dmesg-clean.rc"
say "kernel log: $( [[ $(cat "$R/dmesg-clean.rc") == 0 ]] && echo clean || echo PROBLEMS)"
echo complete > "$R/runner.status"
