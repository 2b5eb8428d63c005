#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: `ndk -j monitor` reports, as they happen, rxe0's removal and
# addition (`rdma link delete/add rxe0`) with its old and new adapter ids,
# and the invalidation of a cached registration by munmap() with the pid,
# address and length the registering process printed; `monitor count N`
# exits after N events; an unprivileged monitor of "mem" is refused (exit
# 1) and one of "all" falls back to adapter events.
#   ndk-monitor.sh NDK VM_NETLINK
set -u
ndk=$1
helper=$2
fail() { echo "FAIL: $*"; exit 1; }
# wait_line FILE PATTERN: until a line of FILE matches (30 s at most).
wait_line() {
	for _ in $(seq 300); do grep -q "$2" "$1" && return; sleep 0.1; done
}
out=$(mktemp) err=$(mktemp)

id1=$("$ndk" -j adapter show rxe0 | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])') ||
	fail "no adapter rxe0"
timeout 60 "$ndk" -j monitor all count 3 >"$out" 2>"$err" &
mon=$!
wait_line "$err" listening
grep -q "listening for adapter mem events" "$err" || { cat "$err"; fail "monitor did not start"; }

timeout 60 rdma link delete rxe0 || fail "rdma link delete rxe0 (rc $?)"
rdma link add rxe0 type rxe netdev v0 || fail "rdma link add rxe0"
reg=$("$helper" unmap 12288) || fail "helper unmap failed: $reg"
echo "helper: $reg"
wait "$mon"; rc=$?
echo "--- monitor output"; cat "$out"; cat "$err"
[[ $rc -eq 0 ]] || fail "monitor exit $rc (124: it did not see 3 events in time)"

read -r _ _ _ _ address _ handle _ hpid <<<"$reg"
python3 - "$out" "$id1" "$address" "$handle" "$hpid" <<'PY' || exit 1
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
id1, address = int(sys.argv[2]), int(sys.argv[3], 16)
handle, pid = int(sys.argv[4]), int(sys.argv[5])
kinds = [e["event"] for e in events]
if kinds != ["adapter-removed", "adapter-added", "mem-invalidated"]:
    sys.exit("FAIL: events %s" % kinds)
rm, add, inv = events
if rm["name"] != "rxe0" or rm["id"] != id1:
    sys.exit("FAIL: removal %s, expected rxe0 id %d" % (rm, id1))
if add["name"] != "rxe0" or add["id"] <= id1:
    sys.exit("FAIL: addition %s, expected rxe0 with an id above %d" % (add, id1))
if (inv["address"], inv["length"], inv["handle"], inv["pid"]) != (address, 12288, handle, pid):
    sys.exit("FAIL: invalidation %s, expected address %#x length 12288 handle %d pid %d"
             % (inv, address, handle, pid))
print("events: rxe0 id %d removed, id %d added, %#x+12288 invalidated (pid %d)"
      % (id1, add["id"], address, inv["pid"]))
PY

# Unprivileged: "mem" refused, "all" falls back to adapter events.
setpriv --reuid=65534 --regid=65534 --clear-groups timeout 30 "$ndk" monitor mem >"$out" 2>&1
rc=$?
[[ $rc -eq 1 ]] || { cat "$out"; fail "nobody's monitor mem: exit $rc, expected 1"; }
grep -q "Operation not permitted" "$out" || { cat "$out"; fail "no EPERM message"; }
setpriv --reuid=65534 --regid=65534 --clear-groups timeout 60 "$ndk" monitor all >"$out" 2>&1 &
mon=$!
wait_line "$out" "listening for adapter events"
kill -0 "$mon" 2>/dev/null || { cat "$out"; fail "nobody's monitor all exited, expected to run until killed"; }
kill "$mon"
wait "$mon"
grep -q "adapter events only" "$out" || { cat "$out"; fail "no fall-back message"; }
grep -q "listening for adapter events" "$out" || { cat "$out"; fail "not listening for adapter events"; }
rm -f "$out" "$err"
echo "PASS"
