#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: `ndkinfo --json` is valid JSON and reports every
# NDK_ADAPTER_INFO field of the adapter with the value ndk.ko gives kernel
# consumers (the info.<field>=<value> lines of ndk_test.ko's adapter-info
# scenario), but for the limits a /dev/ndk file is clamped to
# (Documentation/uapi.md, "Resource limits"); the text output names
# every field too.
#   ndkinfo-json.sh RUN_KTEST NDKINFO [DEVICE]
set -u
run_ktest=$1
ndkinfo=$2
dev=${3:-rxe0}
fail() { echo "FAIL: $*"; exit 1; }

kernel=$("$run_ktest" adapter-info) || { echo "$kernel"; fail "adapter-info scenario failed"; }
json=$("$ndkinfo" --json) || fail "ndkinfo --json failed"
text=$("$ndkinfo") || fail "ndkinfo failed"
echo "$json"

NDK_KERNEL=$kernel NDK_DEV=$dev python3 - "$json" <<'PY' || exit 1
import json, os, sys

# The per-file limits of ndk_user_limits() (uapi.md, "Resource limits").
FILE_LIMITS = {"max_initiator_queue_depth": 4096, "max_receive_queue_depth": 4096,
               "max_cq_depth": 16384, "max_initiator_request_sge": 32,
               "max_receive_request_sge": 32, "max_read_request_sge": 32}
doc = json.loads(sys.argv[1])
kernel = {}
for line in os.environ["NDK_KERNEL"].splitlines():
    if line.startswith("info."):
        k, v = line[5:].split("=", 1)
        kernel[k] = v
adapters = [a for a in doc["adapters"] if a["name"] == os.environ["NDK_DEV"]]
if len(adapters) != 1:
    sys.exit("FAIL: %s listed %d times" % (os.environ["NDK_DEV"], len(adapters)))
info = adapters[0]["info"]
bad = 0
for field, want in sorted(kernel.items()):
    if field == "version":
        got = "%d.%d" % (info["version"]["major"], info["version"]["minor"])
        ok = got == want
    else:
        got = info.get(field)
        if field in FILE_LIMITS:
            want = str(min(int(want, 0), FILE_LIMITS[field]))
        ok = got is not None and got == int(want, 0)
    print("%-28s kernel %-12s ndkinfo %-12s %s" % (field, want, got, "ok" if ok else "MISMATCH"))
    bad += not ok
if len(kernel) != 22:
    sys.exit("FAIL: expected the 22 fields of NDK_ADAPTER_INFO, the kernel printed %d" % len(kernel))
missing = set(info) - set(kernel) - {"adapter_flag_names", "rdma_technology_name"}
if missing:
    sys.exit("FAIL: ndkinfo reports fields the kernel does not: %s" % sorted(missing))
if info["rdma_technology_name"] != "RoCEv2":
    sys.exit("FAIL: rxe should be RoCEv2, got %s" % info["rdma_technology_name"])
if "LOOPBACK_CONNECTIONS_SUPPORTED" not in info["adapter_flag_names"]:
    sys.exit("FAIL: adapter_flag_names lacks LOOPBACK_CONNECTIONS_SUPPORTED")
sys.exit("FAIL: %d fields differ" % bad if bad else 0)
PY

for field in version vendor_id max_registration_size max_window_size frmr_page_count \
	max_cq_depth adapter_flags rdma_technology; do
	grep -q "^    $field " <<< "$text" || fail "text output lacks $field"
done
echo "ndkinfo reports every field as the kernel does"
