#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: the out-of-tree sample consumer samples/ndk_sample loads on
# rxe0 (prints NDK_ADAPTER_INFO, creates and closes a PD, closes the
# adapter), unloads, and refuses to load on a device that does not exist.
#   sample-module.sh NDK_SAMPLE_KO
set -u
ko=$1
fail() { echo "FAIL: $*"; exit 1; }
dmesg_start=$(dmesg | wc -l)
new_dmesg() { dmesg | tail -n +"$((dmesg_start + 1))" | grep 'ndk_sample: '; }

insmod "$ko" adapter=rxe0 || fail "insmod $ko adapter=rxe0 failed"
grep -q '^ndk_sample ' /proc/modules || fail "ndk_sample not listed after insmod"
rmmod ndk_sample || fail "rmmod ndk_sample failed"
new_dmesg
for want in \
	'rxe0: NDK 1\.2 vendor 0x[0-9a-f]+ device 0x[0-9a-f]+ technology 4$' \
	'rxe0: max registration [0-9]+, FRMR pages [0-9]+, window [0-9]+$' \
	'rxe0: SGEs initiator [1-9][0-9]* receive [1-9][0-9]* read [1-9][0-9]*, transfer [1-9][0-9]*, inline [0-9]+$' \
	'rxe0: PD created$' 'rxe0: PD closed$' \
	'rxe0: adapter closed, all done$' 'unloaded$'; do
	new_dmesg | grep -qE "ndk_sample: $want" || fail "no line matching '$want'"
done

dmesg_start=$(dmesg | wc -l)
insmod "$ko" adapter=no-such-device 2> /tmp/sample.err &&
	fail "insmod with adapter=no-such-device succeeded"
new_dmesg
grep -q 'No such device' /tmp/sample.err || fail "unexpected insmod error: $(cat /tmp/sample.err)"
new_dmesg | grep -q 'cannot open adapter no-such-device: status 0xc000000d' ||
	fail "no 'cannot open adapter' message"
grep -q '^ndk_sample ' /proc/modules && fail "ndk_sample loaded after a failed init"
echo "sample module: loaded, printed, unloaded; refused an unknown device"
