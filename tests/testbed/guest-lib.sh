# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the guest scripts (tests/testbed/guest-runner.sh, tests/pair/
# pair-guest.sh).  Sourced, never run.  The caller sets R (the results
# share), NDK_SRC (the tree) and defines kmsg MESSAGE (to /dev/kmsg).

# ndk_judge NAME TIMEOUT COMMAND...: runs COMMAND in /tmp with stdin from
# /dev/null and its output in $R/NAME.log, killed after TIMEOUT seconds;
# judges it by its exit code and by the kernel log between the markers it
# writes around it (tests/testbed/check-dmesg.sh: a report fails it even when it
# exited 0).  Leaves the verdict in $R/NAME.rc and the wall time in
# ndk_judge_secs; returns the verdict.
ndk_judge() {
	local name=$1 tmo=$2 rc start log=$R/$1.log
	shift 2
	kmsg "begin $name"
	start=$(date +%s.%N)
	(cd /tmp && timeout -k 5 "$tmo" bash -c '"$@"' "$name" "$@") > "$log" 2>&1 < /dev/null
	rc=$?
	kmsg "end $name"
	ndk_judge_secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	((rc == 124 || rc == 137)) && echo "testbed: timed out after $tmo s" >> "$log"
	if ! dmesg | sed -n "/ndk-testbed: begin $name\$/,/ndk-testbed: end $name\$/p" |
		"$NDK_SRC/tests/testbed/check-dmesg.sh" > "$R/$name.kreport"; then
		{ echo "testbed: kernel reported a problem during this test:"; cat "$R/$name.kreport"; } >> "$log"
		rc=1
	fi
	rm -f "$R/$name.kreport"
	echo "$rc" > "$R/$name.rc"
	return "$rc"
}
