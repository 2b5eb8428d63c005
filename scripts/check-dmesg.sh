#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan kernel log text (a file or stdin) for reports that fail a vm run:
# oops, BUG, WARNING, refcount and list corruption, KASAN/UBSAN/KFENCE,
# lockdep, kmemleak, hung tasks, soft lockups, panics.
# Prints the offending lines; exit 1 when any was found, 0 when clean.
# Shared by the guest runner and its host unit test (tests/testbed).
set -u

pattern='Oops|BUG:|kernel BUG|WARNING:|general protection fault'
pattern+='|refcount|list_del corruption|list_add corruption'
pattern+='|KASAN:|UBSAN:|KFENCE:|kmemleak: .*suspected memory leak|unreferenced object'
pattern+='|possible circular locking|possible recursive locking|inconsistent lock state'
pattern+='|lockdep|suspicious RCU usage|INFO: task .* blocked for more than'
pattern+='|soft lockup|hard LOCKUP|Kernel panic|stack-protector|double free'

if grep -E -- "$pattern" "${1:--}"; then
	exit 1
fi
exit 0
