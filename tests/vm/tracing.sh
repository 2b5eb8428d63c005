#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: the tracepoints of TRACE_SYSTEM ndk through tracefs: a
# registration of a distinctive length (register, then deregister, and the
# invalidation by munmap with the registering pid), ndk-demo's fast
# registers, binds, invalidates (status 0) and its refused access (a
# completion error with a non-zero status), a connect nobody listens for
# (a refused connection), and rxe0's removal; the registration path's
# internal error exits (ndk_reg_broken, ndk_reg_wr_error) exist.
#   tracing.sh VM_NETLINK NDK_DEMO
set -u
helper=$1
demo=$2
fail() { echo "FAIL: $*"; exit 1; }

t=/sys/kernel/tracing
[[ -d $t/events ]] || mount -t tracefs nodev $t || fail "cannot mount tracefs"
[[ -d $t/events/ndk ]] || fail "no events/ndk in tracefs: $(ls $t/events | head)"
for e in ndk_mr_register ndk_mr_deregister ndk_fast_register ndk_bind ndk_invalidate \
	ndk_completion_error ndk_mem_invalidated ndk_device_remove ndk_reg_broken \
	ndk_reg_wr_error ndk_conn_refused; do
	[[ -d $t/events/ndk/$e ]] || fail "no tracepoint ndk:$e"
done
echo 0 >$t/tracing_on
echo >$t/trace
echo 1 >$t/events/ndk/enable
echo 1 >$t/tracing_on

reg=$("$helper" unmap 12345) || fail "helper: $reg"
refused=$("$helper" refused) || fail "helper refused: $refused"
"$demo" >/dev/null || fail "ndk-demo failed"
timeout 60 rdma link delete rxe0 || fail "rdma link delete rxe0"
rdma link add rxe0 type rxe netdev v0 || fail "rdma link add rxe0"

echo 0 >$t/tracing_on
echo 0 >$t/events/ndk/enable
trace=$(cat $t/trace)
echo >$t/trace
echo "$trace" | grep -v '^#' | head -40
echo "($(grep -c ': ndk_' <<<"$trace") ndk events)"

address=$(awk '{print $5}' <<<"$reg")
need() { grep -qE "$1" <<<"$trace" || fail "no trace line matching: $1"; }
need "ndk_mr_register: mr=[0-9a-f]+ address=$address length=12345 flags=0x1 key=0x[0-9a-f]+ status=0x00000000"
need "ndk_mem_invalidated: file=[0-9]+ pid=[0-9]+ handle=[1-9][0-9]* address=$address length=12345"
need "ndk_mr_deregister: mr=[0-9a-f]+ address=$address length=12345 status=0x00000000"
need "ndk_fast_register: qp=[0-9a-f]+ obj=[0-9a-f]+ address=0x[0-9a-f]+ length=[1-9][0-9]* flags=0x[0-9a-f]+ status=0x00000000"
need "ndk_bind: qp=[0-9a-f]+ obj=[0-9a-f]+ address=0x[0-9a-f]+ length=[1-9][0-9]* flags=0x[0-9a-f]+ status=0x00000000"
need "ndk_invalidate: qp=[0-9a-f]+ obj=[0-9a-f]+ .* status=0x00000000"
need "ndk_completion_error: qp=[0-9a-f]+ type=0x[0-9a-f]+ bytes=[0-9]+ status=0x[c-f][0-9a-f]{7}"
need "ndk_conn_refused: obj=[0-9a-f]+ cause=rejected status=0xc0000236"
need "ndk_device_remove: adapter=[0-9]+ name=rxe0 open_adapters=0"
echo "PASS"
