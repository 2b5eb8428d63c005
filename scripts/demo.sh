#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: boot the guest, bring up rxe, load ndk.ko, run ndk-demo
# (loopback connections, fast-register, a window, RDMA write and read, an
# access past the window refused, invalidation), then show what the module
# offers (ndkinfo, through libndk's /dev/ndk) and what the demo left in its
# statistics (`ndk stat`, through the netlink family), then the benchmark
# smoke run (every measure of `make bench` with tiny sizes), all in one
# boot; then the smoke run's table and plot, made on the host.
#   demo.sh BUILD_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
work=$build/demo
mkdir -p "$work"
{
	printf '%s\t%s\t%s\n' ndk-demo 120 "$build/lib/ndk-demo"
	printf '%s\t%s\t%s\n' ndkinfo 60 "$build/lib/ndkinfo"
	printf '%s\t%s\t%s\n' ndk-stat 60 "$build/lib/ndk stat"
	printf '%s\t%s\t%s\n' bench-smoke 300 \
		"$src/tests/bench/bench-guest.sh smoke \"\$NDK_RESULTS/raw\" $build/tests/bench/ndk-ubench"
} > "$work/demo.list"
"$src/scripts/vm-run.sh" --list "$work/demo.list" --results "$work/results" \
	--ko "$src/kmod/ndk.ko" --build "$build"
echo
echo "---- ndk-demo, run in the guest through libndk ----"
cat "$work/results/ndk-demo.log"
echo
echo "---- ndkinfo, run in the guest through libndk ----"
cat "$work/results/ndkinfo.log"
echo
echo "---- ndk stat: what the demo left in ndk.ko's statistics (netlink) ----"
cat "$work/results/ndk-stat.log"
for v in ndk-demo ndkinfo ndk-stat bench-smoke module-unload dmesg-clean; do
	[[ "$(cat "$work/results/$v.rc")" == 0 ]] || { echo "demo: $v failed"; exit 1; }
done

# The smoke run's raw samples become a table and plots on the host
# (scripts/bench-report.py, as `make bench-smoke` does); the cache's
# library hit path is measured natively here.
echo
echo "---- benchmark smoke run: ours / baseline, tiny sizes (make bench for real numbers) ----"
"$build/tests/bench/ndk-ubench" c1host rounds=2 iters=2 sizes=4096 > "$work/results/raw/h-c1lib.txt"
python3 "$src/scripts/bench-report.py" --raw "$work/results/raw" --out "$work/bench" \
	--command "make demo" --check
echo "plots: $(find "$work/bench" -maxdepth 1 -name '*.png' | sort | tr '\n' ' ')"
