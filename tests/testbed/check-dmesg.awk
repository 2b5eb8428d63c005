# SPDX-License-Identifier: GPL-2.0
#
# Scan kernel log text for reports that fail a vm run: oops, BUG, WARNING,
# refcount and list corruption, KASAN/UBSAN/KFENCE, lockdep, kmemleak,
# hung tasks, soft lockups, panics, and ndk.ko's QP close that waited out
# its drain (a request the device never completed).  Prints the offending
# lines; exits 1 when any was found, 0 when clean.
#
# With -v from=TEXT [-v to=TEXT] only the lines from one ending in TEXT to
# the next ending in to's TEXT are scanned (as sed -n '/from$/,/to$/p'),
# so a guest judges one test's part of dmesg in one process.
# Call-trace frames are not matched: a frame such as
# "? lockdep_init_map_type+0x169/0x770" belongs to the dump that printed
# it (fault injection's "forcing a failure" dumps stacks by design), and
# every real report has its own header line above its frames.
# Shared by check-dmesg.sh (the end of a run, the host unit test) and the
# guests' per-test verdict (tests/testbed/guest-lib.sh).

function ends_with(s, t) {
	return length(s) >= length(t) && substr(s, length(s) - length(t) + 1) == t
}

BEGIN {
	pattern = "Oops|BUG:|kernel BUG|WARNING:|general protection fault"
	pattern = pattern "|refcount|list_del corruption|list_add corruption"
	pattern = pattern "|KASAN:|UBSAN:|KFENCE:|kmemleak: .*suspected memory leak|unreferenced object"
	pattern = pattern "|possible circular locking|possible recursive locking|inconsistent lock state"
	pattern = pattern "|lockdep|suspicious RCU usage|INFO: task .* blocked for more than"
	pattern = pattern "|soft lockup|hard LOCKUP|Kernel panic|stack-protector|double free"
	# ndk.ko's own: a QP close whose drain waited out its 10 s limit
	pattern = pattern "|ndk: QP [0-9]+ closed with .* completions missing"
	frame = "^(\\[[^]]*\\])? *(\\[ *[CT][0-9]+\\])? *(\\? )?[A-Za-z0-9_.]+\\+0x[0-9a-f]+/0x[0-9a-f]+( \\[[^]]+\\])? *$"
	inside = (from == "")
	found = 0
}

!inside && ends_with($0, from) { inside = 1 }

inside {
	if ($0 !~ frame && $0 ~ pattern) {
		print
		found = 1
	}
	if (from != "" && to != "" && ends_with($0, to))
		inside = 0
}

END { exit found }
