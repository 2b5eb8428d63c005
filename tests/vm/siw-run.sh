#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one test on the siw (iWARP) adapter of the debug guest:
#   siw-run.sh COMMAND [ARG...]
# Adds siw0 over s0 (tests/testbed/guest-runner.sh prepared siw and the veth
# pair), runs COMMAND with NDK_KTEST_PARAMS pointing ndk_test.ko at siw0
# and its address, and deletes siw0 again, so that every other test of the
# run still sees rxe0 alone.  siw that cannot start is a failure (exit 1),
# never a skip: the siw tier exists to run these.
set -u
status=$(cat "${NDK_RESULTS:-/ndk-results}/siw.status" 2>/dev/null || echo "no siw.status")
if [[ "$status" != ok ]]; then
	echo "FAIL: siw is not available in this guest: $status"
	exit 1
fi
if [[ ! -e /sys/class/infiniband/siw0 ]]; then
	rdma link add siw0 type siw netdev s0 || { echo "FAIL: rdma link add siw0"; exit 1; }
fi
for _ in $(seq 50); do
	[[ -e /sys/class/infiniband/siw0 ]] && break
	sleep 0.1
done
export NDK_KTEST_PARAMS="adapter=siw0 peer_ip=10.99.1.1 ${NDK_KTEST_PARAMS:-}"
"$@"
rc=$?
if ! out=$(rdma link delete siw0 2>&1); then
	echo "FAIL: rdma link delete siw0: $out"
	rc=1
fi
exit "$rc"
