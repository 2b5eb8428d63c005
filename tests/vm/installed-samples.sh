#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: what `make install` put in a scratch prefix is enough for
# consumers (tests/install/build-installed-samples.sh built them on the
# host, against the installed tree only): the out-of-tree consumer module
# loads on rxe0 against the running ndk.ko (same symbol CRCs as the
# installed Module.symvers), prints NDK_ADAPTER_INFO, creates and closes a
# PD; the user program runs from the installed libndk, registers memory
# and sees its registration through netlink; the installed `ndk` tool runs
# from its RUNPATH.
#   installed-samples.sh OUT_DIR
set -u
out=$1
prefix=$out/destdir/opt/ndk
fail() { echo "FAIL: $*"; exit 1; }
[[ -e $out/NOT-BUILT ]] && fail "$(cat "$out/NOT-BUILT")"
[[ -e $out/module/ndk_sample.ko && -x $out/ndk_user ]] || fail "the samples were not built in $out"

# The module was built against the installed Module.symvers of the stock
# kernel; on the debug kernel (make check-debug) only the user side runs.
if [[ "${NDK_GUEST:-stock}" == stock ]]; then
	dmesg_start=$(dmesg | wc -l)
	insmod "$out/module/ndk_sample.ko" adapter=rxe0 || fail "insmod of the installed-tree consumer failed"
	rmmod ndk_sample || fail "rmmod ndk_sample failed"
	dmesg | tail -n +"$((dmesg_start + 1))" | grep 'ndk_sample: ' || fail "no ndk_sample output"
	for want in 'rxe0: NDK 1\.2 vendor' 'rxe0: PD created$' 'rxe0: PD closed$' 'rxe0: adapter closed, all done$'; do
		dmesg | tail -n +"$((dmesg_start + 1))" | grep -qE "ndk_sample: $want" || fail "no line matching '$want'"
	done
else
	echo "debug kernel: the installed-tree module (built for the stock kernel) is not loaded"
fi

lib=$(ldd "$out/ndk_user" | awk '$1 == "libndk.so.0" { print $3 }')
[[ "$(realpath "$lib")" == "$(realpath "$prefix/lib/libndk.so.0")" ]] ||
	fail "ndk_user uses $lib, not the installed libndk"
user=$("$out/ndk_user" rxe0) || { echo "$user"; fail "ndk_user failed"; }
echo "$user"
grep -q '^registered 65536 bytes on rxe0' <<<"$user" || fail "ndk_user did not register"
grep -qE '^registered again: handle [0-9]+, references 2$' <<<"$user" ||
	fail "ndk_user's second registration did not share the first"

"$prefix/bin/ndk" -j adapter show rxe0 | python3 -c 'import json,sys; assert json.load(sys.stdin)[0]["name"]=="rxe0"' ||
	fail "the installed ndk tool failed"
echo "PASS: consumer module and user program built against the installed tree run"
