#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark suite inside the test-bed guest (one boot): every measure
# of ndk_bench.ko (kernel) and ndk-ubench (user), and perftest on the
# same rxe device, each writing its raw output to OUT/<file>.txt for
# scripts/bench-report.py.  Nothing is judged here except that each
# measure ran to its end ("ok" line, exit 0).
#
#   bench-guest.sh full|smoke OUT UBENCH [ONLY]
#
# ONLY: a comma-separated list of the measures to run (f1,r1,w1,d1,u1,
# c1,m1,s1,b1); all of them when absent or empty.
# Exit 0 when every measure ran, 1 otherwise (the failed ones are named).
set -u
mode=$1 out=$2 ubench=$3 only=${4:-}
want() { [[ -z "$only" || ",$only," == *",$1,"* ]]; }
dir=$(cd "$(dirname "$0")" && pwd)
ko=$dir/kmod/ndk_bench.ko
dbg=/sys/kernel/debug/ndk_bench
ip=10.99.0.1
mkdir -p "$out"
failed=()

case $mode in
full)
	R=7
	F1="rounds=$R iters=512 depth=64 sizes=1,8,64,256,512"
	# 1024 and more: huge-page MDLs of 2 MiB chunks (4 MiB, 64 MiB, 1 GiB).
	R1="rounds=$R iters=30 sizes=1,8,64,256,511,1024,16384,262144"
	W1="rounds=$R iters=256 depth=64 sizes=1,16,128"
	D1="rounds=1 iters=512 depth=64 sizes=65536"
	D1U="rounds=1 iters=512 sizes=65536"
	C1LIB="rounds=$R iters=20 sizes=4096,1048576"
	# Above 2 MiB fewer iterations (ndk-ubench ItersAt); 1 GiB with io_uring
	# too is its limit and adds minutes: it stops at 256 MiB.
	U1="rounds=$R iters=12 sizes=4096,16384,65536,262144,1048576,2093056"
	U1BIG="big=8388608,33554432,134217728,268435456,1073741824"
	U1URING="big=8388608,33554432,134217728,268435456"
	C1="rounds=$R iters=20 sizes=4096,65536,1048576,2093056 count=500"
	M1="rounds=$R count=2000"
	S1_COUNTS="1000 10000 100000"
	S1="rounds=1 iters=100"
	PT_N=1000
	;;
smoke)
	R=2
	F1="rounds=$R iters=16 depth=16 sizes=1,64"
	R1="rounds=$R iters=2 sizes=1,64,1024"
	W1="rounds=$R iters=16 depth=16 sizes=16"
	D1="rounds=1 iters=16 depth=16 sizes=65536"
	D1U="rounds=1 iters=16 sizes=65536"
	C1LIB="rounds=$R iters=2 sizes=4096"
	U1="rounds=$R iters=2 sizes=4096,262144"
	U1BIG="big=4194304"
	U1URING=$U1BIG
	C1="rounds=$R iters=3 sizes=4096,65536 count=20"
	M1="rounds=$R count=50"
	S1_COUNTS="100"
	S1="rounds=1 iters=10"
	PT_N=50
	;;
*)
	echo "usage: bench-guest.sh full|smoke OUT UBENCH" >&2
	exit 2
	;;
esac

step() { echo "bench: $* ($(date +%T))"; }

# Conditions of the run.
{
	echo "I kernel $(uname -r)"
	echo "I cpus $(nproc)"
	echo "I cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "I mem_kib $(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
	echo "I thp $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
	echo "I clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "I device rxe0 on veth v0 ($ip)"
	echo "I mode $mode"
} > "$out/conditions.txt"

# --- kernel measures (ndk_bench.ko) ---
kernel() {	# kernel NAME FILE ARGS
	local name=$1 file=$2
	shift 2
	step "kernel $name $*"
	if ! echo "$name $*" > "$dbg/run"; then
		echo "E cannot run $name $*" > "$out/$file.txt"
		failed+=("$file")
		return
	fi
	cat "$dbg/result" > "$out/$file.txt"
	grep -q "^ok $name\$" "$out/$file.txt" || failed+=("$file")
}

# --- perftest, loopback on rxe0, retried ---
# The TCP side channel, not rdma_cm (-R): with -R, ib_read_lat 4.5 can
# crash in librdmacm while tearing down after its results (a user-space
# general protection fault in the kernel log fails the run).  The client
# starts once the server listens; every run uses a port of its own.
pt_port=18515
perftest() {	# perftest TOOL FILE ARGS
	local tool=$1 file=$2 try srv rc i
	shift 2
	step "$tool $*"
	for try in 1 2 3 4 5; do
		pt_port=$((pt_port + 1))
		timeout 120 "$tool" -d rxe0 -F -p "$pt_port" "$@" > "$out/$file.srv" 2>&1 &
		srv=$!
		for ((i = 0; i < 100; i++)); do
			ss -ltn | grep -q ":$pt_port " && break
			sleep 0.1
		done
		timeout 120 "$tool" -d rxe0 -F -p "$pt_port" "$@" "$ip" > "$out/$file.txt" 2>&1
		rc=$?
		wait "$srv"
		# Under TCG perftest's cycle-counter calibration sometimes fails
		# (r^2 < 0.9): it then prints "inf" for every latency and 0.00
		# for every bandwidth.  Try again.
		if ((rc == 0)) && { grep -qwE '(-?nan|inf)' "$out/$file.txt" ||
			grep -qF 'Correlation coefficient r^2' "$out/$file.txt"; }; then
			echo "bench: $tool's clock calibration failed, no finite number (try $try)"
			rc=1
		fi
		((rc == 0)) && return
		echo "bench: $tool failed (try $try, rc $rc)"
		kill "$srv" 2>/dev/null
		sleep 1
	done
	failed+=("$file")
}

# --- user measures (ndk-ubench) ---
user() {	# user NAME FILE ARGS
	local name=$1 file=$2
	shift 2
	step "user $name $*"
	"$ubench" "$name" "$@" > "$out/$file.txt" 2>&1 || failed+=("$file")
}
if ! insmod "$ko"; then
	echo "bench: insmod $ko failed"
	exit 1
fi
want f1 && kernel f1 k-f1 $F1
want r1 && kernel r1 k-r1 $R1
want w1 && kernel w1 k-w1 $W1
# D1: the NDK kernel path, the libndk user path and perftest, round by round.
for ((r = 0; r < R; r++)); do
	want d1 || break
	kernel d1 "k-d1-r$r" $D1
	user d1 "u-d1-r$r" $D1U
	NDK_RINGS=0 user d1 "u-d1-ioctl-r$r" $D1U
	# The same depth (32 in flight) and completion moderation (every
	# request signalled) as ours.
	perftest ib_write_bw "pt-write-r$r" -s 65536 -n "$PT_N" -t 32 -Q 1
	perftest ib_read_lat "pt-read-r$r" -s 8 -n "$PT_N"
done
if want u1; then
	user u1 u-u1 $U1 $U1BIG
	# io_uring's unregistration disturbs what follows it: measured on its own.
	user u1 u-u1-uring $U1 $U1URING variants=uring
fi
if want c1; then
	user c1 u-c1 $C1
	user c1host u-c1lib $C1LIB
fi
want m1 && user m1 u-m1 $M1
for n in $S1_COUNTS; do
	want s1 || break
	user s1 "u-s1-$n" $S1 count="$n"
done
# U1's kernel pin floor used ndk_bench.ko.
rmmod ndk_bench || failed+=("rmmod")
# B1: ndkblk against nvme-rdma (fio), the storage consumer's measure.
if want b1; then
	step "b1 ndkblk vs nvme-rdma"
	"$dir/../ndkblk/ndkblk-bench.sh" "$mode" "$out" "$dir/../../samples/ndkblk/ndkblk.ko" \
		"$dir/../../samples/ndkblk/ndkblk_target.ko" || failed+=("b1")
fi

if ((${#failed[@]})); then
	echo "bench: incomplete: ${failed[*]}"
	exit 1
fi
step "all measures ran"
