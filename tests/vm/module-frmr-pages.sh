#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: NDK_ADAPTER_INFO's floor of 16 FRMR pages, through ndk.ko's
# frmr_pages parameter (Documentation/ndk-mapping.md, FRMRPageCount):
#   - frmr_pages=15: the device is no adapter (none listed, the kernel log
#     says why), and the module unloads cleanly;
#   - frmr_pages=16, the smallest adapter NDK allows: adapter info reports
#     16 pages and a window of 15, and the fast-register and window
#     scenarios of ndk_test.ko pass at that size;
#   - reloaded without the parameter, the adapter is back at its default.
#   module-frmr-pages.sh RUN_KTEST NDKINFO [DEVICE]
set -u
run_ktest=$1
ndkinfo=$2
dev=${3:-rxe0}
fail() { echo "FAIL: $*"; exit 1; }
# Whatever happens, leave ndk.ko loaded with its defaults for the next test.
trap 'grep -q "^ndk " /proc/modules && [[ $(cat /sys/module/ndk/parameters/frmr_pages) != 512 ]] &&
	rmmod ndk; grep -q "^ndk " /proc/modules || insmod "$NDK_KO"' EXIT

reload() {
	rmmod ndk || fail "rmmod ndk failed"
	insmod "$NDK_KO" "$@" || fail "insmod ndk.ko $* failed"
}
info() { sed -n "s/^info\.$1=//p" <<< "$kernel" | tail -n 1; }

mark="module-frmr-pages $$"
echo "$mark" > /dev/kmsg
reload frmr_pages=15
listed=$("$ndkinfo" -l) || fail "ndkinfo -l failed"
[[ -z "$listed" ]] || fail "adapters listed at 15 pages: $listed"
dmesg | sed -n "/$mark/,\$p" | grep -q "ndk: not an adapter: 15 fast-register pages, NDK needs 16" ||
	fail "no 'not an adapter' line in the kernel log"
echo "frmr_pages=15: no adapter, the kernel log says why"

reload frmr_pages=16
"$ndkinfo" -l | grep -qx "$dev" || fail "$dev not listed at 16 pages"
kernel=$("$run_ktest" adapter-info) || { echo "$kernel"; fail "adapter-info at 16 pages"; }
[[ $(info frmr_page_count) == 16 ]] || fail "frmr_page_count $(info frmr_page_count), not 16"
[[ $(info max_window_size) == $((15 * 4096)) ]] ||
	fail "max_window_size $(info max_window_size), not 15 pages"
for k in frmr-initialize fr-params mw-params mw-traffic; do
	out=$("$run_ktest" "$k") || { echo "$out"; fail "scenario $k at 16 pages"; }
	echo "frmr_pages=16: $k passed"
done

reload
"$ndkinfo" -l | grep -qx "$dev" || fail "$dev not listed after reloading with defaults"
kernel=$("$run_ktest" adapter-info) || { echo "$kernel"; fail "adapter-info after reload"; }
[[ $(info frmr_page_count) -gt 16 ]] || fail "frmr_page_count $(info frmr_page_count) by default"
echo "default again: frmr_page_count $(info frmr_page_count)"
