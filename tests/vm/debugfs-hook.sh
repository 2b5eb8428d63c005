#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a test with every kill of a fenced registration delayed:
#   slow-kill.sh MS COMMAND [ARG...]
# debugfs ndk/kill_delay_ms (root) makes each kill wait MS first, so that
# what user space does right after an invalidation's completion meets the
# kill still running (Documentation/registration.md, "Fenced
# registrations").  Restores 0 after.
set -u
hook=/sys/kernel/debug/ndk/kill_delay_ms
ms=$1
shift
echo "$ms" > "$hook" || { echo "FAIL: $hook"; exit 1; }
"$@"
rc=$?
echo 0 > "$hook" || rc=1
exit "$rc"
