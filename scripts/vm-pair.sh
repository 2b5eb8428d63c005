#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Two hosts: boot two QEMU guests (TCG) joined by a QEMU socket network
# (UDP between two host ports: no connection state, so either guest can
# die and boot again), rxe on each, and run tests/pair/pair-guest.sh in
# them instead of the vm test list (Documentation/reliability.md, "Two
# hosts").  Guest B (10.98.0.2) serves a window with ndk-target; guest A
# (10.98.0.1) reads and writes it from user space (ndk-pair-client) and
# from the kernel (ndk_test.ko pair-client, pair-outage); B also serves
# a block namespace (ndkblk_target.ko), which A mounts as /dev/ndkblk0
# (ndkblk.ko, samples/ndkblk).  Three times, when A has traffic running
# (user client, kernel client, fio on ndkblk) it creates stop-b<k> in its
# results share: this script then kills B's QEMU (SIGKILL: the host is
# gone, no disconnect), waits until A has seen the error (stop-b<k>.seen,
# at most 90 s) and boots B again; A reconnects and must work again.
# Then A's ndkblk-removal step removes a device under fio on ndkblk, B's
# first: it creates remove-b, this script copies it to B's share (a guest
# sees only its own), B deletes its rxe0 and adds it again, and its
# remove-b.done is copied back to A's share; then A removes its own.
#
#   vm-pair.sh --results DIR --ko NDK_KO --ktest NDK_TEST_KO
#              --client NDK_PAIR_CLIENT --target NDK_TARGET
#              --ndkblk NDKBLK_KO --ndkblk-target NDKBLK_TARGET_KO
#
# Results: DIR/a (guest A), DIR/b1, DIR/b2 and DIR/b3 (B's lives that
# were killed), DIR/b4 (B's last life), each with one <step>.rc/.log per
# step, dmesg-live.txt and console.log, and for a and b4 module-unload.*
# and dmesg-clean.*; DIR/summary.txt.  Exit: 0 pass, 1 fail, 77 when QEMU or
# a guest kernel is missing and CI is not "true" (as vm-run.sh).
# Environment: NDK_GUEST (stock or debug), NDK_KO_TREE (the modules of
# the debug kernel, as vm-run.sh), NDK_VM_TIMEOUT_SCALE (every
# bound x this, default 1), NDK_PAIR_TIMEOUT (s, default 600 x the scale)
# bounds the whole run; NDK_VM_MEM (MiB, default 1024 here, 2048 for
# debug), NDK_VM_SMP (default 1 here, 2 for debug).
set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
results="" ko="" ktest="" client="" target="" ndkblk="" ndkblk_target=""
while (($#)); do
	case $1 in
	--results) results=$2; shift 2 ;;
	--ko) ko=$(realpath "$2"); shift 2 ;;
	--ktest) ktest=$(realpath "$2"); shift 2 ;;
	--client) client=$(realpath "$2"); shift 2 ;;
	--target) target=$(realpath "$2"); shift 2 ;;
	--ndkblk) ndkblk=$(realpath "$2"); shift 2 ;;
	--ndkblk-target) ndkblk_target=$(realpath "$2"); shift 2 ;;
	*) echo "vm-pair: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -n "$results" && -n "$ko" && -n "$ktest" && -n "$client" && -n "$target" &&
	-n "$ndkblk" && -n "$ndkblk_target" ]] || {
	echo "usage: vm-pair.sh --results DIR --ko NDK_KO --ktest NDK_TEST_KO --client NDK_PAIR_CLIENT --target NDK_TARGET --ndkblk NDKBLK_KO --ndkblk-target NDKBLK_TARGET_KO" >&2
	exit 2
}

# With NDK_KO_TREE (make check-debug: this tree's modules rebuilt for the
# debug kernel, scripts/debug-modules.sh), each module given inside the
# source tree is taken from that tree instead.
if [[ -n "${NDK_KO_TREE:-}" ]]; then
	tree=$(realpath "$NDK_KO_TREE")
	for v in ko ktest ndkblk ndkblk_target; do
		[[ ${!v} == "$src"/* ]] && printf -v "$v" '%s' "$tree/${!v#"$src"/}"
	done
fi

# Every bound of the guests' steps and of the host's waits is multiplied
# by NDK_VM_TIMEOUT_SCALE (an integer, as in vm-run.sh): the debug guests
# (NDK_GUEST=debug, KASAN and lockdep under TCG) run it with 6.
scale=${NDK_VM_TIMEOUT_SCALE:-1}
[[ $scale =~ ^[1-9][0-9]*$ ]] ||
	{ echo "vm-pair: NDK_VM_TIMEOUT_SCALE must be a positive integer, not $scale" >&2; exit 2; }

# B's lives: b1 .. b<outages> are killed, the last one ($last) finishes.
outages=3
last=b$((outages + 1))
lives=()
for ((k = 1; k <= outages + 1; k++)); do lives+=("b$k"); done

rm -rf "$results"
mkdir -p "$results/a"
for g in "${lives[@]}"; do mkdir -p "$results/$g"; done
results=$(realpath "$results")

unavailable() {
	echo "vm-pair: $*" | tee "$results/boot.status"
	if [[ "${CI:-}" == true ]]; then
		echo "vm-pair: CI=true: the vm tier must run, failing"
		exit 1
	fi
	exit 77
}
fatal() {
	echo "vm-pair: $*" | tee "$results/boot.status"
	exit 1
}

# shellcheck source=tests/testbed/vm-lib.sh
. "$src/tests/testbed/vm-lib.sh"
command -v qemu-system-x86_64 > /dev/null || unavailable "qemu-system-x86_64 not installed"
# Two guests on two shared CPUs: one vCPU and 1 GiB each.  The debug
# kernel gets two vCPUs, as in vm-run.sh (its checks see more of the
# concurrency), and 2 GiB (KASAN's shadow, kmemleak's objects).
if [[ ${NDK_GUEST:-stock} == debug ]]; then
	NDK_VM_SMP=${NDK_VM_SMP:-2}
	NDK_VM_MEM=${NDK_VM_MEM:-2048}
else
	NDK_VM_SMP=${NDK_VM_SMP:-1}
	NDK_VM_MEM=${NDK_VM_MEM:-1024}
fi
vm_select_guest
for f in "$ko" "$ktest" "$client" "$target" "$ndkblk" "$ndkblk_target"; do
	[[ -r "$f" ]] || fatal "$f missing (make kmod lib)"
done
initrd=$results/initramfs.cpio.gz
vm_build_initramfs "$initrd"

# Two free UDP ports on the host's loopback: one per guest's end.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		ss -Hlun "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
}
port_a=$(free_port)
port_b=$(free_port)
while ((port_b == port_a)); do port_b=$(free_port); done

declare -A pid role_of started reboots
# start_guest NAME ROLE: boots guest NAME (a, b1 .. b4) in the background.
start_guest() {
	local name=$1 role=$2 dir=$results/$1 mine theirs mac
	if [[ $role == a ]]; then
		mine=$port_a theirs=$port_b mac=52:54:00:98:00:01
	else
		mine=$port_b theirs=$port_a mac=52:54:00:98:00:02
	fi
	cat > "$dir/config.sh" <<CFG
NDK_SRC='$src'
NDK_KO='$ko'
NDK_GUEST='$guest'
NDK_GUEST_MODULES='$moddir'
NDK_RUNNER='$src/tests/pair/pair-guest.sh'
NDK_PAIR_ROLE='$role'
NDK_PAIR_NAME='$name'
NDK_PAIR_SCALE='$scale'
NDK_PAIR_KTEST='$ktest'
NDK_PAIR_CLIENT='$client'
NDK_PAIR_TARGET='$target'
NDK_PAIR_NDKBLK='$ndkblk'
NDK_PAIR_NDKBLK_TARGET='$ndkblk_target'
CFG
	vm_qemu_args "$initrd" "$dir"
	"${vm_qemu[@]}" \
		-netdev "socket,id=n0,udp=127.0.0.1:$theirs,localaddr=127.0.0.1:$mine" \
		-device "virtio-net-pci,netdev=n0,mac=$mac" \
		< /dev/null > "$dir/console.log" 2>&1 &
	pid[$name]=$!
	role_of[$name]=$role
	started[$name]=$SECONDS
	echo "vm-pair: guest $name booted (role $role, qemu pid ${pid[$name]}, udp $mine -> $theirs)"
}
running() { [[ -n "${pid[$1]:-}" ]] && kill -0 "${pid[$1]}" 2>/dev/null; }
# boot_watch NAME: a guest whose kernel has not started pair-guest.sh
# 60 s (x the scale) after its boot began is killed and booted again, at
# most twice, before any of its steps ran.  The debug kernel sometimes
# hangs in its boot-time self test of RCU Tasks when two guests boot at
# once (Documentation/reliability.md, "Two hosts"), before any module of
# ours is loaded; the console of each such boot is kept.
boot_watch() {
	local name=$1 dir=$results/$1 n
	running "$name" || return 0
	grep -q "^guest: $name: kernel" "$dir/console.log" 2> /dev/null && return 0
	((SECONDS - started[$name] > 60 * scale)) || return 0
	n=$((${reboots[$name]:-0} + 1))
	stop_guest "$name"
	mv "$dir/console.log" "$dir/console-hung-boot-$n.log"
	echo "vm-pair: $(now) s: guest $name did not start its steps within $((60 * scale)) s of its boot: killed (last console line: $(tail -n 1 "$dir/console-hung-boot-$n.log"))"
	((n <= 2)) || return 1
	reboots[$name]=$n
	start_guest "$name" "${role_of[$name]}"
}
stop_guest() {
	running "$1" && kill -KILL "${pid[$1]}" 2>/dev/null
	[[ -n "${pid[$1]:-}" ]] && wait "${pid[$1]}" 2>/dev/null
	pid[$1]=""
}
cleanup() {
	local g
	for g in a "${lives[@]}"; do stop_guest "$g"; done
}
trap cleanup EXIT

limit=${NDK_PAIR_TIMEOUT:-$((600 * scale))}
echo "vm-pair: $kver ($guest) under TCG, two guests, timeout $limit s"
start=$SECONDS
now() { echo $((SECONDS - start)); }
start_guest a a
start_guest b1 b

# The host's part of the scenario, $outages outages: kill b<k> when A
# creates stop-b<k>, boot b<k+1> once A has seen the error
# (stop-b<k>.seen) or after 90 s (x the scale); when A is done, finish
# the last life.
# A's remove-b (its ndkblk-removal step) goes to B's current life, and
# B's remove-b.done back to A: each guest sees only its own share.
phase=run k=1 timed_out=0 hung=""
declare -A killed_at booted_at
relay() {
	[[ -e $1/$3 && ! -e $2/$3 ]] || return 0
	cp "$1/$3" "$2/.$3" && mv "$2/.$3" "$2/$3"
	echo "vm-pair: $(now) s: $3 relayed to ${2##*/}"
}
while :; do
	if ((SECONDS - start > limit)); then
		echo "vm-pair: timeout after $limit s (phase $phase, guest b$k)"
		timed_out=1
		break
	fi
	relay "$results/a" "$results/b$k" remove-b
	relay "$results/b$k" "$results/a" remove-b.done
	for g in a "b$k"; do
		boot_watch "$g" || hung=$g
	done
	[[ -z $hung ]] || break
	case $phase in
	run)
		if [[ -e $results/a/stop-b$k ]]; then
			stop_guest "b$k"
			killed_at[$k]=$SECONDS
			echo "vm-pair: $(now) s: guest A asked: guest b$k killed"
			phase=killed
		elif ! running "b$k"; then
			echo "vm-pair: guest b$k stopped before guest A was done"
			break
		elif ! running a; then
			if ((k <= outages)); then
				echo "vm-pair: guest A stopped before it asked for outage $k"
				break
			fi
			echo "vm-pair: $(now) s: guest A is done; finishing guest b$k"
			: > "$results/b$k/finish"
			phase=finish
		fi
		;;
	killed)
		if [[ -e $results/a/stop-b$k.seen ]] || ((SECONDS - killed_at[$k] > 90 * scale)) || ! running a; then
			echo "vm-pair: $(now) s: guest A saw the error $((SECONDS - killed_at[$k])) s after the kill (host clock); booting B again"
			k=$((k + 1))
			start_guest "b$k" b
			booted_at[$k]=$SECONDS
			phase=run
		fi
		;;
	finish)
		running "b$k" || break
		;;
	esac
	sleep 0.5
done
# Whatever is still up: a guest that does not finish by itself is a failure.
if running a || running "$last"; then
	grace=$((SECONDS + 60 * scale))
	: > "$results/$last/finish"
	while (running a || running "$last") && ((SECONDS < grace)); do sleep 1; done
fi
cleanup
echo "vm-pair: both guests ran $(now) s"

# --- verdict ---
fail=0
{
	echo "two hosts run of $(date -u +%FT%TZ), $(now) s wall"
	((timed_out)) && echo "FAIL: timed out after $limit s"
	[[ -n $hung ]] && echo "FAIL: guest $hung hung in its boot three times"
	for g in "${!reboots[@]}"; do
		echo "guest $g booted again ${reboots[$g]} time(s): its kernel hung before pair-guest.sh ($g/console-hung-boot-*.log)"
	done
	for g in a "$last"; do
		if [[ $(cat "$results/$g/runner.status" 2>/dev/null) != complete ]]; then
			echo "FAIL: guest $g did not complete (console tail below)"
			tail -n 30 "$results/$g/console.log" | sed "s/^/  $g| /"
		fi
	done
	for g in a "${lives[@]}"; do
		for rc in "$results/$g"/*.rc; do
			[[ -e $rc ]] || continue
			step=$(basename "$rc" .rc)
			v=$(cat "$rc")
			if [[ $v == 0 ]]; then
				echo "ok   $g/$step"
			else
				echo "FAIL $g/$step (rc $v)"
				tail -n 25 "$results/$g/$step.log" | sed "s/^/  $g| /"
			fi
		done
	done
	# The killed lives never reach their own kernel log check: judge what
	# they logged until the kill (the dmesg -w copy on their share).
	for g in "${lives[@]:0:outages}"; do
		if [[ ! -s $results/$g/dmesg-live.txt ]]; then
			echo "FAIL $g: no kernel log copied before the kill"
		elif sed -n '/ndk-testbed: setup begin$/,$p' "$results/$g/dmesg-live.txt" |
			"$src/tests/testbed/check-dmesg.sh" > "$results/$g/kreport.txt"; then
			echo "ok   $g/kernel-log-until-killed"
		else
			echo "FAIL $g/kernel-log-until-killed"
			sed "s/^/  $g| /" "$results/$g/kreport.txt"
		fi
	done
	for ((k = 1; k <= outages; k++)); do
		[[ -n "${killed_at[$k]:-}" ]] || { echo "FAIL: outage $k never happened"; continue; }
		echo "outage $k (host clock): b$k killed at $((killed_at[$k] - start)) s, b$((k + 1)) booted at $((${booted_at[$((k + 1))]:-0} - start)) s"
	done
	grep -hE '^(outage|reconnect|broken connection|round .* failed cleanly)' "$results/a/outage.log" 2>/dev/null
	grep -h '# pair' "$results/a"/kernel-*.log 2>/dev/null
	grep -h '^ndkblk' "$results/a/ndkblk-outage.log" "$results/a/ndkblk-removal.log" 2>/dev/null
} > "$results/summary.txt"
cat "$results/summary.txt"
grep -q '^FAIL' "$results/summary.txt" && fail=1
for g in a "$last"; do
	for s in module-unload dmesg-clean; do
		[[ -e $results/$g/$s.rc ]] || { echo "vm-pair: FAIL: no $g/$s verdict"; fail=1; }
	done
done
if ((fail)); then
	echo "vm-pair: FAILED"
	exit 1
fi
echo "vm-pair: PASS"
exit 0
