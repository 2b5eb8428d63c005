#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: boot the guest, bring up rxe, load ndk.ko, run ndk-demo
# (loopback connections, fast-register, a window, RDMA write and read, an
# access past the window refused, invalidation), then show what the module
# offers (ndkinfo, through libndk's /dev/ndk) and what the demo left in its
# statistics (`ndk stat`, through the netlink family), all in one boot;
# then the plot of the benchmark smoke run, if one was made.
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
for v in ndk-demo ndkinfo ndk-stat module-unload dmesg-clean; do
	[[ "$(cat "$work/results/$v.rc")" == 0 ]] || { echo "demo: $v failed"; exit 1; }
done

# ---- HOOK: benchmark plot (branch bench) -----------------------------------
# The benchmark smoke run writes a PNG under $build/bench-smoke/.  Until the
# lead connects it (run the smoke benchmark from here), this only points at
# a plot that a previous run left.
echo
plots=$(find "$build/bench-smoke" -maxdepth 1 -name '*.png' 2>/dev/null | sort || true)
if [[ -n "$plots" ]]; then
	echo "---- benchmark smoke run: plot ----"
	echo "$plots"
else
	echo "---- benchmark smoke run: no plot in $build/bench-smoke/ (not run) ----"
fi
# ---- end of HOOK ------------------------------------------------------------
