#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: `rmmod ndk` is refused while /dev/ndk is open, succeeds once
# it is closed, and the module loads again with its adapters.
set -u
ndkinfo=$1
fail() { echo "FAIL: $*"; exit 1; }

exec 3< /dev/ndk
rmmod ndk 2> /tmp/rmmod.err && fail "rmmod ndk succeeded with /dev/ndk open"
grep -q "in use" /tmp/rmmod.err || fail "unexpected rmmod error: $(cat /tmp/rmmod.err)"
exec 3<&-
rmmod ndk || fail "rmmod ndk failed after close"
[[ -e /dev/ndk ]] && fail "/dev/ndk still present after rmmod"
insmod "$NDK_KO" || fail "insmod after rmmod failed"
"$ndkinfo" -l | grep -qx rxe0 || fail "rxe0 not listed after reload"
echo "refused while open, unloaded and reloaded"
