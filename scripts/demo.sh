#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: boot the guest, bring up rxe, load ndk.ko, and show from
# user space, through libndk, what the module offers (ndkinfo), then run
# ndk-demo: loopback connections, fast-register, a window, RDMA write and
# read, an access past the window refused, invalidation.
#   demo.sh BUILD_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$src/build}")
work=$build/demo
mkdir -p "$work"
{
	printf '%s\t%s\t%s\n' ndkinfo 60 "$build/lib/ndkinfo"
	printf '%s\t%s\t%s\n' ndk-demo 120 "$build/lib/ndk-demo"
} > "$work/demo.list"
"$src/scripts/vm-run.sh" --list "$work/demo.list" --results "$work/results" \
	--ko "$src/kmod/ndk.ko" --build "$build"
echo
echo "---- ndkinfo, run in the guest through libndk ----"
cat "$work/results/ndkinfo.log"
echo
echo "---- ndk-demo, run in the guest through libndk ----"
cat "$work/results/ndk-demo.log"
for v in ndkinfo ndk-demo module-unload dmesg-clean; do
	[[ "$(cat "$work/results/$v.rc")" == 0 ]] || { echo "demo: $v failed"; exit 1; }
done
