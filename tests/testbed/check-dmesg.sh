#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan kernel log text (a file or stdin) for reports that fail a vm run
# (tests/testbed/check-dmesg.awk has the patterns and the rules).
# Prints the offending lines; exit 1 when any was found, 0 when clean.
# Shared by the guest runners, vm-pair.sh and their host unit test
# (tests/testbed).
exec awk -f "$(dirname "$0")/check-dmesg.awk" "${1:--}"
