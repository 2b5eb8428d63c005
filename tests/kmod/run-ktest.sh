#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one ndk_test.ko scenario in the guest: load the module, run the
# scenario, print its log, unload.  Exit 0 pass, 1 fail, 77 skip.
#   run-ktest.sh NAME [--fail-mr-alloc N] [--fail-qp-post CONTEXT]
#                     [--fail-completion CONTEXT]
# --fail-mr-alloc, --fail-qp-post and --fail-completion arm ndk.ko's
# debugfs fault injection for the scenario (the next N fast-register MR
# allocations fail; every post of a request with that RequestContext is
# refused; its successful completion is reported failed) and disarm it
# after.
# NDK_KTEST_PARAMS: module parameters for ndk_test.ko (peer_ip=...);
# NDK_KTEST_KO: the module (default: ndk_test.ko beside this script);
# NDK_VM_TIMEOUT_SCALE: the factor of the scenarios' time bounds
# (time_scale, an integer: a fraction is rounded up; 6 on the debug
# kernel).
set -u
name=$1
shift
fail_mr_alloc= fail_qp_post= fail_completion=
while (($#)); do
	case $1 in
	--fail-mr-alloc) fail_mr_alloc=$2 ;;
	--fail-qp-post) fail_qp_post=$2 ;;
	--fail-completion) fail_completion=$2 ;;
	*) echo "run-ktest.sh: unknown option $1"; exit 1 ;;
	esac
	shift 2
done
dir=$(cd "$(dirname "$0")" && pwd)
ko=${NDK_KTEST_KO:-$dir/ndk_test.ko}
dbg=/sys/kernel/debug/ndk_test

scale=$(awk -v s="${NDK_VM_TIMEOUT_SCALE:-1}" \
	'BEGIN { n = int(s); if (n < s) n++; print n < 1 ? 1 : n }')
# shellcheck disable=SC2086 # parameters are words
insmod "$ko" time_scale="$scale" ${NDK_KTEST_PARAMS:-} || { echo "insmod $ko failed"; exit 1; }
trap 'echo 0 > /sys/kernel/debug/ndk/fail_mr_alloc
echo 0 > /sys/kernel/debug/ndk/fail_qp_post
echo 0 > /sys/kernel/debug/ndk/fail_completion
rmmod ndk_test || { echo "rmmod ndk_test failed"; exit 1; }' EXIT
[[ -n "$fail_mr_alloc" ]] && echo "$fail_mr_alloc" > /sys/kernel/debug/ndk/fail_mr_alloc
[[ -n "$fail_qp_post" ]] && echo "$fail_qp_post" > /sys/kernel/debug/ndk/fail_qp_post
[[ -n "$fail_completion" ]] && echo "$fail_completion" > /sys/kernel/debug/ndk/fail_completion
if ! echo "$name" > "$dbg/run"; then
	echo "scenario $name could not run"
	exit 1
fi
cat "$dbg/result"
verdict=$(grep -E '^(not )?ok 1 ' "$dbg/result" | tail -n 1)
case $verdict in
"ok 1 $name # SKIP"*) exit 77 ;;
"ok 1 $name") exit 0 ;;
*) exit 1 ;;
esac
