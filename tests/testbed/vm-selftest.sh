#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: the vm test bed fails what must fail.  One boot runs a test
# that exits 1, a test that makes ndk.ko WARN but exits 0, and a test that
# passes; the runner must fail the first two, pass the third, and flag the
# kernel log of the run.  Then boots that idle before their init's mounts
# (ndk_testbed_stall, as a kernel stuck in early boot) must each be
# killed within seconds, and the run fail after the third.
# vm-selftest.sh KO WORKDIR
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
ko=$1 work=$2
mkdir -p "$work"
list=$work/selftest.list
printf '%s\t%s\t%s\n' \
	exits-1 30 "exit 1" \
	module-warn 30 "echo 1 > /sys/kernel/debug/ndk/selftest_warn" \
	passes 30 "grep -q '^ndk ' /proc/modules" > "$list"

"$src/scripts/vm-run.sh" --list "$list" --results "$work/results" --ko "$ko"
rc=$?
((rc == 0)) || exit "$rc" # 77: no guest here (vm-run.sh applies the CI rule)

fails=0
expect() { # name expected-rc
	local got
	got=$(cat "$work/results/$1.rc" 2>/dev/null || echo missing)
	if [[ "$got" == "$2" ]]; then
		echo "ok   $1: verdict $got"
	else
		echo "FAIL $1: verdict $got, expected $2"
		fails=$((fails + 1))
	fi
}
expect exits-1 1
expect module-warn 1
expect passes 0
expect dmesg-clean 1
expect module-unload 0
grep -q "kernel reported a problem" "$work/results/module-warn.log" ||
	{ echo "FAIL module-warn: log does not name the kernel report"; fails=$((fails + 1)); }

NDK_VM_APPEND="${NDK_VM_APPEND:-} ndk_testbed_stall" NDK_VM_BOOT_IDLE=5 \
	"$src/scripts/vm-run.sh" --list "$list" --results "$work/stall" \
	--ko "$ko" > "$work/stall.log" 2>&1
rc=$?
kills=$(grep -c "idled before its init's mounts.*(boot [123] of 3)" "$work/stall.log")
if ((rc == 1 && kills == 3)) && grep -q "^no boot: 3 boots stuck" "$work/stall/boot.status" &&
	cat "$work"/stall/console-attempt*.log | grep -q "ndk_testbed_stall: idling"; then
	echo "ok   idle boots: killed and booted again, 3 times, then failed"
else
	echo "FAIL idle boots: exit $rc, $kills idle kills:"
	cat "$work/stall.log" "$work/stall/boot.status"
	fails=$((fails + 1))
fi
((fails == 0))
