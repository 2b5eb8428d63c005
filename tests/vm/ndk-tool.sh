#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: the `ndk` tool in the guest: `adapter show` (text and -j)
# against `ndkinfo --json` (same adapters, same NDK_ADAPTER_INFO values)
# and `ibv_devinfo` (node GUID); `resource show mr pid N` and `stat pid N`
# of a process holding two registrations and a cache hit; the resource
# summary; -p indented JSON; exit codes 1 (error) and 2 (usage); as an
# unprivileged user (setpriv to nobody): another process's objects refused
# with exit 1, its own view empty.
#   ndk-tool.sh NDK NDKINFO VM_NETLINK
set -u
ndk=$1
ndkinfo=$2
helper=$3
fail() { echo "FAIL: $*"; exit 1; }

# --- adapters ---------------------------------------------------------------
text=$("$ndk" adapter show) || fail "ndk adapter show: exit $?"
echo "$text"
grep -q '^[0-9]*: rxe0: node_guid ' <<<"$text" || fail "no rxe0 line in the text output"
grep -q 'max_registration_size ' <<<"$text" || fail "no NDK_ADAPTER_INFO field in the text output"
json=$("$ndk" -j adapter show) || fail "ndk -j adapter show: exit $?"
info=$("$ndkinfo" --json) || fail "ndkinfo --json failed"
guid=$(ibv_devinfo -d rxe0 | awk '/node_guid:/ {print $2}')
[[ -n "$guid" ]] || fail "ibv_devinfo gave no node_guid"
python3 - "$json" "$info" "$guid" <<'PY' || exit 1
import json, sys
nl = json.loads(sys.argv[1])
ref = json.loads(sys.argv[2])["adapters"]
guid = sys.argv[3]
if [a["name"] for a in nl] != [a["name"] for a in ref]:
    sys.exit("FAIL: adapters %s, ndkinfo %s" % ([a["name"] for a in nl], [a["name"] for a in ref]))
for a, r in zip(nl, ref):
    if a["id"] != r["id"]:
        sys.exit("FAIL: %s id %d, ndkinfo %d" % (a["name"], a["id"], r["id"]))
    for k, v in r["info"].items():
        if k == "version":
            v = v["major"] << 16 | v["minor"]
        elif not isinstance(v, int):
            continue
        if a["info"].get(k) != v:
            sys.exit("FAIL: %s %s: ndk %s, ndkinfo %s" % (a["name"], k, a["info"].get(k), v))
    print("%s: %d NDK_ADAPTER_INFO fields equal to ndkinfo's" % (a["name"], len(a["info"])))
rxe = [a for a in nl if a["name"] == "rxe0"][0]
if rxe["node_guid"] != guid:
    sys.exit("FAIL: node_guid %s, ibv_devinfo %s" % (rxe["node_guid"], guid))
if set(rxe["objects"]) != {"adapter", "pd", "cq", "qp", "mr", "mw", "connector", "listener", "mem"}:
    sys.exit("FAIL: object counts %s" % rxe["objects"])
print("node_guid", guid, "as ibv_devinfo")
PY
one=$("$ndk" -j adapter show rxe0) || fail "ndk -j adapter show rxe0: exit $?"
python3 -c 'import json,sys; a=json.loads(sys.argv[1]); assert len(a)==1 and a[0]["name"]=="rxe0", a' "$one" ||
	fail "adapter show rxe0 is not one adapter"

# --- exit codes -------------------------------------------------------------
"$ndk" adapter show no-such-adapter 2>/dev/null; rc=$?
[[ $rc -eq 1 ]] || fail "unknown adapter: exit $rc, expected 1"
"$ndk" frobnicate 2>/dev/null; rc=$?
[[ $rc -eq 2 ]] || fail "unknown object: exit $rc, expected 2"
"$ndk" resource show bogus 2>/dev/null; rc=$?
[[ $rc -eq 2 ]] || fail "unknown resource type: exit $rc, expected 2"
"$ndk" stat pid x 2>/dev/null; rc=$?
[[ $rc -eq 2 ]] || fail "bad pid: exit $rc, expected 2"
"$ndk" resource show mr pid 2147483000 2>/dev/null; rc=$?
[[ $rc -eq 1 ]] || fail "unknown pid: exit $rc, expected 1"
echo "exit codes: 1 for errors, 2 for usage"

# --- a process holding registrations ----------------------------------------
coproc HOLD { "$helper" hold; }
read -r -t 20 word pid <&"${HOLD[0]}" || fail "the helper did not start"
[[ "$word" == holding ]] || fail "helper said: $word $pid"
cleanup() { exec {HOLD[1]}>&-; wait "$HOLD_PID" 2>/dev/null; }

res=$("$ndk" -j resource show mr pid "$pid") || { cleanup; fail "resource show mr: exit $?"; }
echo "$res"
pretty=$("$ndk" -p resource show mr pid "$pid") || { cleanup; fail "resource show -p: exit $?"; }
stat=$("$ndk" -j stat pid "$pid") || { cleanup; fail "stat pid: exit $?"; }
echo "$stat"
summary=$("$ndk" -j resource show) || { cleanup; fail "resource summary: exit $?"; }
"$ndk" resource show mr pid "$pid" || { cleanup; fail "resource show mr (text): exit $?"; }
"$ndk" stat || { cleanup; fail "stat (text): exit $?"; }
other=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$ndk" resource show mr pid "$pid" 2>&1)
other_rc=$?
mine=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$ndk" -j resource show 2>&1)
mine_rc=$?
nobody_stat=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$ndk" -j stat 2>&1)
nobody_stat_rc=$?
cleanup

python3 - "$res" "$pretty" "$stat" "$summary" "$pid" <<'PY' || exit 1
import json, sys
res, pretty, stat, summary = (json.loads(x) for x in sys.argv[1:5])
pid = int(sys.argv[5])
if "\n" not in sys.argv[2]:
    sys.exit("FAIL: -p output is not indented")
if pretty != res:
    sys.exit("FAIL: -p and -j differ")
mem = sorted((r for r in res if r["type"] == "mem"), key=lambda r: r["length"])
if len(mem) != 2 or [r["length"] for r in mem] != [4096, 3 * 4096 + 1]:
    sys.exit("FAIL: expected registrations of 4096 and 12289 bytes, got %s" % res)
if [r["pages"] for r in mem] != [1, 4] or any(r["pid"] != pid or r["adapter"] != "rxe0" for r in mem):
    sys.exit("FAIL: pages, pid or adapter wrong: %s" % mem)
procs = stat["processes"]
if len(procs) != 1 or procs[0]["pid"] != pid:
    sys.exit("FAIL: stat pid %d gave %s" % (pid, procs))
p = procs[0]
want = {"adapter": 1, "pd": 1, "mem": 2, "qp": 0}
if any(p["objects"][k] != v for k, v in want.items()):
    sys.exit("FAIL: objects %s, expected %s" % (p["objects"], want))
if p["stats"]["registered_bytes"] != 4096 + 3 * 4096 + 1 or p["stats"]["pinned_pages"] != 5:
    sys.exit("FAIL: per-process stats %s" % p["stats"])
if p["stats"]["cache_hits"] != 1 or p["stats"]["cache_misses"] != 1:
    sys.exit("FAIL: cache hits/misses %s" % p["stats"])
module = stat["module"]["stats"]
for k in ("registrations", "deregistrations", "registered_bytes", "pinned_pages", "fast_registers",
          "binds", "invalidates", "cache_hits", "cache_misses", "cache_invalidations", "errors"):
    if k not in module:
        sys.exit("FAIL: module statistics lack %s" % k)
if module["registered_bytes"] < 4096 + 3 * 4096 + 1 or module["pinned_pages"] < 5:
    sys.exit("FAIL: module-wide statistics below the helper's own: %s" % module)
if sum(e["count"] for e in stat["module"]["errors"]) != module["errors"]:
    sys.exit("FAIL: errors by status do not add up")
if pid not in [s["pid"] for s in summary]:
    sys.exit("FAIL: the summary lacks pid %d" % pid)
print("resource show, stat and the summary agree with the helper's objects")
PY

[[ $other_rc -eq 1 ]] || fail "nobody reading pid $pid: exit $other_rc, expected 1 ($other)"
grep -q "Operation not permitted" <<<"$other" || fail "nobody reading pid $pid: $other"
[[ $mine_rc -eq 0 && "$mine" == "[]" ]] || fail "nobody's own summary: exit $mine_rc: $mine"
[[ $nobody_stat_rc -eq 0 ]] || fail "nobody's stat: exit $nobody_stat_rc: $nobody_stat"
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["processes"]==[], d' "$nobody_stat" ||
	fail "nobody sees processes in ndk stat"
echo "unprivileged: another process refused (exit 1, EPERM), own view empty"
echo "PASS"
