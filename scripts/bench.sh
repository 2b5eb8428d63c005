#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench / make bench-smoke: boot the guest once, run the benchmark
# suite in it (tests/bench/bench-guest.sh: ndk_bench.ko, ndk-ubench,
# perftest), then turn its raw output into OUT/results.md, results.json
# and PNG plots (scripts/bench-report.py) and print the table.
#
#   bench.sh [--smoke] [--only f1,r1,...] [--out DIR] [--build DIR]
#
# --only: run those measures only (f1 r1 w1 d1 u1 c1 m1 s1 b1, comma-
# separated; c1 includes the host's hit path); the report then checks
# only theirs.  make bench BENCH_ONLY=r1 passes it.
#
# Expects `make kmod lib` done.  The guest's own results (console.log,
# dmesg, the runner's verdicts, raw samples) stay in OUT/vm/; a kernel
# report in the guest's log fails the run like any vm test.
# Environment: NDK_VM_MEM (MiB; 3072 for the full run, which registers
# 256 MiB buffers and 100k live registrations), NDK_VM_TIMEOUT,
# NDK_VM_APPEND (guest kernel command line; default tsc=reliable).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-vm.sh
. "$src/scripts/bench-vm.sh"
mode=full out="" build=$src/build only=""
while (($#)); do
	case $1 in
	--smoke) mode=smoke; shift ;;
	--out) out=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--build) build=$(realpath "$2"); shift 2 ;;
	*) echo "bench: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -n "$out" ]] || out=$([[ $mode == smoke ]] && echo "$build/bench-smoke" || echo "$src/bench-results")
ubench=$build/tests/bench/ndk-ubench
for f in "$ubench" "$src/kmod/ndk.ko" "$src/tests/bench/kmod/ndk_bench.ko"; do
	[[ -e "$f" ]] || { echo "bench: $f missing (make kmod lib)"; exit 1; }
done

mkdir -p "$out"
out=$(realpath "$out")
rm -f "$out"/*.png "$out"/*.dat "$out"/*.gp "$out"/results.*
list=$out/bench.list
if [[ $mode == smoke ]]; then
	tmo=300 mem=${NDK_VM_MEM:-2048}
else
	tmo=3600 mem=${NDK_VM_MEM:-3072}
fi
printf 'bench\t%s\t%s\n' "$tmo" \
	"$src/tests/bench/bench-guest.sh $mode \"\$NDK_RESULTS/raw\" $ubench $only" > "$list"

echo "bench: $mode run${only:+ of $only}, guest memory $mem MiB, results in $out"
NDK_VM_MEM=$mem bench_vm_run bench bench "$list" "$out" "$src/kmod/ndk.ko" "$build" $((tmo + 300)) ||
	exit 1

# The cache's library hit path natively as well (no device needed): the
# guest's number is inflated by TCG, this one is the real cost.
if [[ -n "$only" && ",$only," != *",c1,"* ]]; then
	:
elif [[ $mode == smoke ]]; then
	"$ubench" c1host rounds=2 iters=2 sizes=4096 > "$out/vm/raw/h-c1lib.txt"
else
	"$ubench" c1host rounds=7 iters=20 sizes=4096,1048576 > "$out/vm/raw/h-c1lib.txt"
fi || { echo "bench: c1host on the host failed"; exit 1; }

cmd="make $([[ $mode == smoke ]] && echo bench-smoke || echo bench)${only:+ BENCH_ONLY=$only}"
# --check: fail unless every measure produced a finite number (never
# how fast it is).
python3 "$src/scripts/bench-report.py" --raw "$out/vm/raw" --out "$out" \
	--command "$cmd" --check ${only:+--only "$only"}
