#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The verdict of one vm test, read from the results of the boot that ran
# it (scripts/vm-run.sh).  Prints the test's log, exits with its code.
#   vm-result.sh RESULTS_DIR NAME
# A test without a result fails, unless the guest could not start at all
# (no QEMU, no kernel): that is a skip, and with CI=true a failure.  A test
# that skipped because rxe could not be set up also fails with CI=true.
set -u
dir=$1 name=$2

ci_skip() {
	echo "vm-result: $name: $*"
	if [[ "${CI:-}" == true ]]; then
		echo "vm-result: CI=true: a vm test may not skip because the test bed is missing"
		exit 1
	fi
	exit 77
}

boot=$(cat "$dir/boot.status" 2>/dev/null || echo "no boot was attempted")
if [[ ! -f "$dir/$name.rc" ]]; then
	case $boot in
	ok) ;;
	*"not installed"* | *"no guest kernel"* | *"not readable"*) ci_skip "guest unavailable: $boot" ;;
	*) echo "vm-result: $name: no result; boot: $boot"; exit 1 ;;
	esac
	if [[ -n "${NDK_VM_ONLY:-}" && ! "$name" =~ $NDK_VM_ONLY ]]; then
		echo "vm-result: $name: not selected by NDK_VM_ONLY=$NDK_VM_ONLY"
		exit 77
	fi
	if grep -q "^$name	" "$(dirname "$dir")/vm-tests-debug.list" 2> /dev/null &&
		[[ "${NDK_GUEST:-stock}" != debug ]]; then
		echo "vm-result: $name: runs on the debug kernel only (make check-debug), not in this tier"
		exit 1
	fi
	echo "vm-result: $name: the guest finished without running it"
	exit 1
fi

cat "$dir/$name.log"
rc=$(cat "$dir/$name.rc")
if [[ "$rc" == 77 ]] && ! grep -qx ok "$dir/rxe.status" 2>/dev/null; then
	ci_skip "skipped and rxe was not up: $(cat "$dir/rxe.status" 2>/dev/null)"
fi
exit "$rc"
