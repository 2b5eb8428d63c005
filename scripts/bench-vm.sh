# SPDX-License-Identifier: GPL-2.0
#
# Sourced by bench.sh and bench-ab.sh: one guest boot that runs a
# benchmark list, and its verdicts.
#
#   bench_vm_run TAG TEST LIST OUT KO BUILD TIMEOUT
#
# Boots the guest with KO loaded, runs LIST (whose one test is TEST) and
# keeps the guest's results in OUT/vm/.  Fails, printing why, when the
# run fails or any of TEST, the module's unload and the kernel log's check
# did not pass.  TIMEOUT is the run's default NDK_VM_TIMEOUT; NDK_VM_MEM
# and NDK_VM_APPEND (default tsc=reliable) are taken from the caller.

# shellcheck shell=bash
bench_vm_run() {
	local tag=$1 test=$2 list=$3 out=$4 ko=$5 build=$6 tmo=$7 v
	local here
	here=$(dirname "${BASH_SOURCE[0]}")

	# TCG's vCPUs fail the kernel's TSC synchronisation check, and the
	# fallback clocksource (HPET) costs microseconds per read, from user
	# space too (no vDSO path): tell the guest its TSC is good.
	NDK_VM_APPEND="${NDK_VM_APPEND:-tsc=reliable}" NDK_VM_TIMEOUT=${NDK_VM_TIMEOUT:-$tmo} NDK_VM_ONLY='' \
		"$here/vm-run.sh" --list "$list" --results "$out/vm" --ko "$ko" --build "$build" ||
		{ echo "$tag: the guest run failed"; return 1; }
	for v in "$test" module-unload dmesg-clean; do
		if [[ "$(cat "$out/vm/$v.rc" 2>/dev/null)" != 0 ]]; then
			echo "$tag: guest verdict $v failed:"
			tail -n 40 "$out/vm/$v.log"
			return 1
		fi
	done
}
