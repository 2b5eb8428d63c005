#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a test with one of ndk.ko's debugfs test hooks set:
#   debugfs-hook.sh HOOK VALUE COMMAND [ARG...]
# e.g. kill_delay_ms 300: every kill of a fenced registration waits 300 ms
# first, so that what user space does right after an invalidation's
# completion meets the kill still running (Documentation/registration.md,
# "Fenced registrations"); cq_fill_defer 1: the completion handler leaves
# every fill of a completion ring to the CQ's work item.  Needs root;
# restores 0 after.
set -u
hook=/sys/kernel/debug/ndk/$1
value=$2
shift 2
echo "$value" > "$hook" || { echo "FAIL: $hook"; exit 1; }
"$@"
rc=$?
echo 0 > "$hook" || rc=1
exit "$rc"
