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
# Role b serves ndk-target on 10.98.0.2:7471 until the host creates
# /ndk-results/finish.  Role a: the user client, the kernel client, an
# outage under the user client (tests/pair/ndk_pair_client.cpp creates
# stop-b1; the host kills B and boots it again), an outage under the
# kernel client (ndk_test.ko pair-outage, stop-b2), the user client again.
set -u
R=/ndk-results
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C
# shellcheck source=/dev/null
. "$R/config.sh"

say() { echo "guest: $NDK_PAIR_NAME: $*"; }
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

# step NAME TIMEOUT COMMAND...: one verdict, as guest-runner.sh's tests.
# shellcheck source=tests/testbed/guest-lib.sh
. "$NDK_SRC/tests/testbed/guest-lib.sh"
step() {
	local name=$1 tmo=$2 rc
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

setup() {
	local m n nic=""
	for m in virtio_net ib_core ib_uverbs rdma_ucm rdma_rxe; do
		modprobe "$m" || { echo "modprobe $m failed"; return 1; }
	done
	ip link set lo up
	# The one NIC there is (eth0 or enp0s*, whatever udev-less naming gives).
	for _ in $(seq 50); do
		for n in /sys/class/net/*; do
			[[ ${n##*/} == lo ]] || { nic=${n##*/}; break; }
		done
		[[ -n "$nic" ]] && break
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
}

# Waits until the peer answers pings (it boots at the same time); the
# host's busybox has a ping when the host has none.
wait_peer() {
	local i
	for i in $(seq 300); do
		busybox ping -c 1 -W 1 "$peer" > /dev/null 2>&1 &&
			{ echo "$peer answers after $i tries"; return 0; }
	done
	echo "$peer does not answer"
	return 1
}

# The kernel consumer: ndk_test.ko's pair-client scenario against B.
kernel_client() {
	NDK_KTEST_PARAMS="peer_ip=$me pair_target=$target_addr" \
		"$NDK_SRC/tests/kmod/run-ktest.sh" pair-client
}

# The kernel consumer through B's second loss: pair-outage logs "traffic
# running", the watcher creates stop-b2 (the host kills b2), then
# "error", and the watcher creates stop-b2.seen (the host boots b3).
kernel_outage() {
	local w rc
	(
		for _ in $(seq 1200); do
			dmesg | grep -q '# pair-outage: traffic running' && { : > "$R/stop-b2"; break; }
			sleep 0.5
		done
		for _ in $(seq 1200); do
			dmesg | grep -q '# pair-outage: error' && { : > "$R/stop-b2.seen"; break; }
			sleep 0.5
		done
	) &
	w=$!
	NDK_KTEST_PARAMS="peer_ip=$me pair_target=$target_addr" \
		"$NDK_SRC/tests/kmod/run-ktest.sh" pair-outage
	rc=$?
	kill "$w" 2> /dev/null
	wait "$w" 2> /dev/null
	return "$rc"
}

# ndk-target until the host creates $R/finish; its exit status and
# output are the verdict.
serve() {
	local t i
	"$NDK_PAIR_TARGET" --listen "$target_addr" --size 65536 --window 4096:8192 \
		--access rw --adapter rxe0 > "$R/target.out" 2>&1 &
	t=$!
	for i in $(seq 600); do
		grep -q '^listening' "$R/target.out" && break
		kill -0 "$t" 2>/dev/null || break
		sleep 0.2
	done
	cat "$R/target.out"
	grep -q '^listening' "$R/target.out" || { echo "ndk-target did not start"; return 1; }
	while [[ ! -e $R/finish ]]; do
		kill -0 "$t" 2>/dev/null || { echo "ndk-target stopped by itself"; break; }
		sleep 1
	done
	kill -TERM "$t" 2>/dev/null
	wait "$t"
	local rc=$?
	echo "--- ndk-target (exit $rc):"
	cat "$R/target.out"
	return "$rc"
}

# The steps run under timeout(1) in a bash of their own.
export -f setup wait_peer kernel_client kernel_outage serve
export R me peer target_addr NDK_SRC NDK_KO NDK_PAIR_TARGET
if step setup 120 setup; then
	if [[ $NDK_PAIR_ROLE == b ]]; then
		step serve 900 serve
	else
		step wait-peer 330 wait_peer &&
			step user-client 200 "$NDK_PAIR_CLIENT" "$target_addr" verify 20
		step kernel-client 200 kernel_client
		# The host kills B when stop-bN appears and boots it again
		# when stop-bN.seen does (or 90 s later).
		step outage 420 "$NDK_PAIR_CLIENT" --timeout 60000 "$target_addr" outage \
			"$R/stop-b1" 20 240
		step kernel-outage 480 kernel_outage
		step user-client-after 200 "$NDK_PAIR_CLIENT" "$target_addr" verify 20
	fi
fi

# --- the end: unload, then the whole kernel log ---
if lsmod | grep -q '^ndk '; then
	out=$(rmmod ndk 2>&1)
	rc=$?
else
	out="ndk was not loaded at the end of the run" rc=1
fi
printf '%s\n' "$out" > "$R/module-unload.log"
echo "$rc" > "$R/module-unload.rc"
if ((rc == 0)); then say "rmmod ndk: ok"; else say "rmmod ndk FAILED: $out"; fi
kmsg "run end"
dmesg > "$R/dmesg.txt"
sed -n '/ndk-testbed: setup begin$/,$p' "$R/dmesg.txt" | "$NDK_SRC/tests/testbed/check-dmesg.sh" \
	> "$R/dmesg-clean.log"
echo $? > "$R/dmesg-clean.rc"
say "kernel log: $( [[ $(cat "$R/dmesg-clean.rc") == 0 ]] && echo clean || echo PROBLEMS)"
echo complete > "$R/runner.status"
