#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module A/B inside the test-bed guest (one boot): load the module pair
# of AB/A and of AB/B (ndk.ko and the ndk_bench.ko built against it) in
# turn, LOADS times each, and run each kernel MEASURE after every load,
# its raw output in OUT/<A|B><load>/k-<name>.txt for
# scripts/bench-report.py --ab.  Two builds compared this way share the
# boot, the host's load and the device; separate boots differ by far more
# than a small change (performance.md, "F1: what the emulator charges").
#
#   bench-ab-guest.sh OUT AB LOADS MEASURE...
#
# MEASURE: what ndk_bench's run file takes ("f1 rounds=2 iters=1024 ...").
# Leaves AB/B's ndk.ko loaded (the runner unloads it).  Exit 0 when every
# measure ran after every load, 1 otherwise.
set -u
out=$1 ab=$2 loads=$3
shift 3
dbg=/sys/kernel/debug/ndk_bench

unload() {
	if grep -q '^ndk_bench ' /proc/modules; then rmmod ndk_bench || return 1; fi
	if grep -q '^ndk ' /proc/modules; then rmmod ndk || return 1; fi
}

for ((i = 1; i <= loads; i++)); do
	for m in A B; do
		dir=$out/$m$i
		mkdir -p "$dir"
		echo "bench-ab: load $i of $m ($(date +%T))"
		if ! unload || ! insmod "$ab/$m/ndk.ko" || ! insmod "$ab/$m/ndk_bench.ko"; then
			echo "bench-ab: cannot load $m's modules"
			exit 1
		fi
		for spec in "$@"; do
			name=${spec%% *}
			# k-d1-r0: the report reads D1's round from the file name.
			file=k-$name$([[ $name == d1 ]] && echo -r0)
			echo "$spec" > "$dbg/run" && cat "$dbg/result" > "$dir/$file.txt"
			grep -q "^ok $name\$" "$dir/$file.txt" || {
				echo "bench-ab: $m load $i: $spec failed"
				exit 1
			}
		done
	done
done
rmmod ndk_bench
