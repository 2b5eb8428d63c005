#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-ab: measure a kernel change against a base revision in one
# guest boot.  Builds the base's ndk.ko and ndk_bench.ko in a temporary
# git worktree (A), takes this tree's (B), loads the two pairs in turn
# (tests/bench/bench-ab-guest.sh) and prints every F1 and D1 ratio of
# bench-report.py per load and their median per module.
#
#   bench-ab.sh --base REV [--loads N] [--only f1,d1] [--icount] [--out DIR]
#               [--build DIR]
#
# --loads: loads of each module (default 4); --only: the kernel measures
# (f1, d1; default both), at sizes that resolve a few percent in minutes.
# --icount: the guest's clock counts instructions (QEMU -icount shift=0,
# one vCPU), so every time is the instructions the guest executed, 1 ns
# each: the same every run, where time varies by a few percent
# (Documentation/performance.md, "Counting instructions").
# Expects `make kmod lib` done in this tree.  OUT (default bench-ab/)
# holds the module pairs, the guest's results and ab.md.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-vm.sh
. "$src/scripts/bench-vm.sh"
base="" loads=4 only=f1,d1 out=$src/bench-ab build=$src/build icount=0
while (($#)); do
	case $1 in
	--base) base=$2; shift 2 ;;
	--icount) icount=1; shift ;;
	--loads) loads=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--build) build=$(realpath "$2"); shift 2 ;;
	*) echo "bench-ab: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -n "$base" ]] || { echo "usage: bench-ab.sh --base REV [--loads N] [--only f1,d1] [--icount] [--out DIR]" >&2; exit 2; }
[[ "$loads" =~ ^[1-9][0-9]*$ ]] || { echo "bench-ab: --loads takes a count" >&2; exit 2; }

measures=()
for m in ${only//,/ }; do
	case $m in
	f1) measures+=("f1 rounds=2 iters=1024 depth=64 sizes=1,64") ;;
	d1) measures+=("d1 rounds=2 iters=1024 depth=64 sizes=65536") ;;
	*) echo "bench-ab: $m is not a kernel measure of bench-ab (f1, d1)" >&2; exit 2 ;;
	esac
done
for f in "$src/kmod/ndk.ko" "$src/tests/bench/kmod/ndk_bench.ko"; do
	[[ -e "$f" ]] || { echo "bench-ab: $f missing (make kmod)"; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/ab/A" "$out/ab/B"
out=$(realpath "$out")
wt=$(mktemp -d)
trap 'git -C "$src" worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$wt"' EXIT
git -C "$src" worktree add --detach -q "$wt" "$base" || exit 1
echo "bench-ab: building $base ($(git -C "$wt" log -1 --format=%h)) in $wt"
make -C "$wt" -s kmod > "$out/base-build.log" 2>&1 || {
	echo "bench-ab: the base does not build:"
	tail -n 20 "$out/base-build.log"
	exit 1
}
cp "$wt/kmod/ndk.ko" "$wt/tests/bench/kmod/ndk_bench.ko" "$out/ab/A/"
cp "$src/kmod/ndk.ko" "$src/tests/bench/kmod/ndk_bench.ko" "$out/ab/B/"

list=$out/bench-ab.list
{
	# "$NDK_RESULTS" is the guest's: expanded there.
	# shellcheck disable=SC2016
	printf 'bench-ab\t1800\t%s "$NDK_RESULTS/raw" %s %s' \
		"$src/tests/bench/bench-ab-guest.sh" "$out/ab" "$loads"
	printf ' %q' "${measures[@]}"
	printf '\n'
} > "$list"
echo "bench-ab: $loads loads each of A ($base) and B (this tree): ${measures[*]}"
if ((icount)); then
	# One vCPU: QEMU runs every vCPU of an -icount guest on one thread.
	echo "bench-ab: times are instructions (-icount shift=0)"
	export NDK_VM_SMP=1 NDK_VM_QEMU_ARGS="-icount shift=0,align=off,sleep=off"
fi
bench_vm_run bench-ab bench-ab "$list" "$out" "$out/ab/B/ndk.ko" "$build" 2100 || exit 1
python3 "$src/scripts/bench-report.py" --ab "$out/vm/raw" --out "$out" \
	--command "make bench-ab BENCH_AB_BASE=$base$( ((icount)) && echo ' BENCH_AB_ICOUNT=1')"
