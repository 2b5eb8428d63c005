#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: an NDK adapter appears for rxe0, disappears when rxe0 is
# deleted (and `rdma link delete` returns promptly, even with /dev/ndk
# open), and comes back with a new id when rxe0 is added again.
set -u
ndkinfo=$1
fail() { echo "FAIL: $*"; exit 1; }
has_rxe0() { "$ndkinfo" -l | grep -qx rxe0; }
rxe0_id() { "$ndkinfo" | awk '$3 == "rxe0" { sub(":", "", $2); print $2 }'; }

"$ndkinfo" || fail "ndkinfo failed"
has_rxe0 || fail "no adapter for rxe0"
id1=$(rxe0_id)

exec 3< /dev/ndk # an open file must not hold the device
timeout 60 rdma link delete rxe0 || fail "rdma link delete rxe0 failed or hung (rc $?)"
has_rxe0 && fail "adapter rxe0 still listed after rdma link delete"
dmesg | grep -q "rxe0: ndk: adapter $id1 removed" || fail "no removal message for adapter $id1"
"$ndkinfo"

rdma link add rxe0 type rxe netdev v0 || fail "rdma link add rxe0 failed"
has_rxe0 || fail "adapter rxe0 did not come back"
id2=$(rxe0_id)
[[ "$id2" -gt "$id1" ]] || fail "adapter id reused: $id1 then $id2"
exec 3<&-
"$ndkinfo"
echo "adapter rxe0: id $id1 removed, id $id2 added"
