#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan kernel log text (a file or stdin) for reports that fail a vm run:
# oops, BUG, WARNING, refcount and list corruption, KASAN/UBSAN/KFENCE,
# lockdep, kmemleak, hung tasks, soft lockups, panics.
# Prints the offending lines; exit 1 when any was found, 0 when clean.
# Call-trace frames are not matched: a frame such as
# "? lockdep_init_map_type+0x169/0x770" belongs to the dump that printed
# it (fault injection's "forcing a failure" dumps stacks by design), and
# every real report has its own header line above its frames.
# Shared by the guest runner and its host unit test (tests/testbed).
set -u

pattern='Oops|BUG:|kernel BUG|WARNING:|general protection fault'
pattern+='|refcount|list_del corruption|list_add corruption'
pattern+='|KASAN:|UBSAN:|KFENCE:|kmemleak: .*suspected memory leak|unreferenced object'
pattern+='|possible circular locking|possible recursive locking|inconsistent lock state'
pattern+='|lockdep|suspicious RCU usage|INFO: task .* blocked for more than'
pattern+='|soft lockup|hard LOCKUP|Kernel panic|stack-protector|double free'

frame='^(\[[^]]*\])? *(\[ *[CT][0-9]+\])? *(\? )?[A-Za-z0-9_.]+\+0x[0-9a-f]+/0x[0-9a-f]+( \[[^]]+\])? *$'

if grep -v -E -- "$frame" "${1:--}" | grep -E -- "$pattern"; then
	exit 1
fi
exit 0
