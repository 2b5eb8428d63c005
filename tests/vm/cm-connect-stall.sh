#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run ndk_test.ko's cm-connect-stall on the adapter siw-run.sh set up:
#   cm-connect-stall.sh RUN-KTEST NETDEV
# Gives NETDEV a neighbour that never answers (10.99.1.77, a permanent
# entry with a MAC nobody has: the SYNs to it are lost), lets TCP give up
# after 3 SYN retries (15 s instead of about 127 s) and runs the scenario
# with silent_ip pointing at it; restores both after.
set -u
run_ktest=$1 dev=$2
silent=10.99.1.77
retries=$(sysctl -n net.ipv4.tcp_syn_retries) || exit 1
ip neigh replace "$silent" lladdr 02:00:00:00:00:77 dev "$dev" nud permanent ||
	{ echo "FAIL: ip neigh on $dev"; exit 1; }
sysctl -q -w net.ipv4.tcp_syn_retries=3 || exit 1
NDK_KTEST_PARAMS="${NDK_KTEST_PARAMS:-} silent_ip=$silent" "$run_ktest" cm-connect-stall
rc=$?
sysctl -q -w net.ipv4.tcp_syn_retries="$retries" || rc=1
ip neigh del "$silent" dev "$dev" || rc=1
exit "$rc"
