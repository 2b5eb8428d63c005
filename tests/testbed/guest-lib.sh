# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the guest scripts (tests/testbed/guest-runner.sh, tests/pair/
# pair-guest.sh).  Sourced, never run.  The caller sets R (the results
# share), NDK_SRC (the tree) and defines kmsg MESSAGE (to /dev/kmsg).

# ndk_judge NAME TIMEOUT COMMAND...: runs COMMAND in /tmp with stdin from
# /dev/null and its output in $R/NAME.log, killed after TIMEOUT seconds;
# judges it by its exit code and by the kernel log between the markers it
# writes around it (tests/testbed/check-dmesg.awk: a report fails it even
# when it exited 0).  Leaves the verdict in $R/NAME.rc and the wall time in
# ndk_judge_secs; returns the verdict.
# A process costs about 0.4 s to start in the debug guest (KASAN, lockdep
# and kmemleak under TCG), so the judge starts three of its own: timeout,
# dmesg and awk; the clock is bash's, the report goes to /tmp.
ndk_judge() {
	local name=$1 tmo=$2 rc start us log=$R/$1.log report=/tmp/ndk-kreport
	shift 2
	kmsg "begin $name"
	start=$EPOCHREALTIME
	cd /tmp || return 1
	timeout -k 5 "$tmo" "$@" > "$log" 2>&1 < /dev/null
	rc=$?
	cd - > /dev/null || return 1
	kmsg "end $name"
	us=$((${EPOCHREALTIME/./} - ${start/./}))
	# shellcheck disable=SC2034 # an output: the sourcing scripts read it
	printf -v ndk_judge_secs '%d.%d' $((us / 1000000)) $((us / 100000 % 10))
	((rc == 124 || rc == 137)) && echo "testbed: timed out after $tmo s" >> "$log"
	if ! dmesg | awk -v from="ndk-testbed: begin $name" -v to="ndk-testbed: end $name" \
		-f "$NDK_SRC/tests/testbed/check-dmesg.awk" > "$report"; then
		{ echo "testbed: kernel reported a problem during this test:"; cat "$report"; } >> "$log"
		rc=1
	fi
	echo "$rc" > "$R/$name.rc"
	return "$rc"
}
