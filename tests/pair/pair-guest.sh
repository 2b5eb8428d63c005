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
# 10.98.0.2:7471 until the host creates /ndk-results/finish; its last life
# unloads ndkblk_target.ko before ndk.ko.  Role a: the user client, the
# kernel client, an outage under the user client (tests/pair/
# ndk_pair_client.cpp creates stop-b1; the host kills B and boots it
# again), an outage under the kernel client (ndk_test.ko pair-outage,
# stop-b2), an outage under fio on ndkblk (ndkblk.ko, stop-b3), the user
# client again.
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

# ndkblk (samples/ndkblk) through B's third loss: A's /dev/ndkblk0 is
# B's ndkblk_target.ko namespace (RAM: it dies with b3, b4's is zeroed).
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
	lsmod | grep -q '^ndkblk ' && timeout 60 rmmod ndkblk
	exit 1
}
# nb_since START: seconds since $EPOCHREALTIME was START, one decimal.
nb_since() {
	local us=$((${EPOCHREALTIME/./} - ${1/./}))
	echo "$((us / 1000000)).$((us / 100000 % 10))"
}
# nb_wait_log SECONDS REGEX: a kernel-log line matching REGEX appears
# (ndkblk is loaded once in this run, so the whole log is searched).
# Deadlines are on bash's clock: a process costs time to start under TCG.
nb_wait_log() {
	local end=$((SECONDS + $1))
	until dmesg | grep -qE "$2"; do
		((SECONDS < end)) || nb_fail "no kernel-log line matching '$2' within $1 s"
		sleep 0.2
	done
}
nb_verify() {
	fio --name=verify --filename=$nb_dev --direct=1 --rw=randwrite --bs=4k \
		--ioengine=libaio --iodepth=16 --size=4m --offset=16m \
		--verify=crc32c --do_verify=1 --verify_fatal=1 > "$nb_work/verify.out" 2>&1 ||
		nb_fail "verified I/O $1: $(tail -5 "$nb_work/verify.out")"
	echo "ndkblk: fio write+verify (crc32c, 4 MiB) $1: ok"
}
ndkblk_outage() {
	local i rc secs t0 t1
	nb_work=$(mktemp -d)
	# 1.
	for i in $(seq 60); do
		insmod "$NDK_PAIR_NDKBLK" target="$peer" io_timeout=10 2> "$nb_work/insmod.err" &&
			break
		sleep 2
	done
	lsmod | grep -q '^ndkblk ' ||
		nb_fail "insmod ndkblk target=$peer failed for 120 s: $(cat "$nb_work/insmod.err")"
	for _ in $(seq 50); do [[ -b $nb_dev ]] && break; sleep 0.1; done
	[[ -b $nb_dev ]] || nb_fail "$nb_dev did not appear"
	echo "ndkblk: loaded (attempt $i): $(dmesg | grep -m1 'ndkblk: ndkblk0:')"
	# 2.
	nb_verify "before the outage"
	# 3.
	fio --name=load --filename=$nb_dev --direct=1 --rw=randrw --bs=64k \
		--ioengine=libaio --iodepth=16 --time_based --runtime=120 \
		--offset=32m --size=32m > "$nb_work/load.out" 2>&1 &
	nb_load=$!
	sleep 3
	kill -0 "$nb_load" 2> /dev/null ||
		nb_fail "fio load ended before the outage: $(tail -5 "$nb_work/load.out")"
	t0=$EPOCHREALTIME
	: > "$R/stop-b3"
	# 4.
	while kill -0 "$nb_load" 2> /dev/null; do
		((${EPOCHREALTIME/./} - ${t0/./} < 45000000)) ||
			nb_fail "fio still running 45 s after the kill"
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
	timeout 30 dd if=$nb_dev of=/dev/null bs=4k count=1 iflag=direct status=none 2> /dev/null
	rc=$?
	((rc == 124)) && nb_fail "a read with B away did not return within 30 s"
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
	t1=$EPOCHREALTIME
	timeout 60 rmmod ndkblk
	rc=$?
	((rc == 124)) && nb_fail "rmmod ndkblk did not return within 60 s"
	((rc == 0)) || nb_fail "rmmod ndkblk failed"
	lsmod | grep -q '^ndkblk ' && nb_fail "ndkblk still loaded after rmmod"
	echo "ndkblk: rmmod in $(nb_since "$t1") s: $(dmesg | grep -m1 -oE 'ndkblk: [0-9]+ I/Os;.*')"
	rm -rf "$nb_work"
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
export -f nb_fail nb_since nb_wait_log nb_verify ndkblk_outage
export R me peer target_addr nb_dev NDK_SRC NDK_KO NDK_PAIR_TARGET NDK_PAIR_ROLE
export NDK_PAIR_NDKBLK NDK_PAIR_NDKBLK_TARGET
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
		step ndkblk-outage 600 ndkblk_outage
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
		timeout 60 rmmod "$m" || { echo "rmmod $m failed (or took over 60 s)"; return 1; }
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
