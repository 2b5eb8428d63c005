#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a test with every vCPU kept busy by a spinning shell at nice -20, so
# that work items and other threads the test waits on start late, as on a
# loaded host (a CI machine building the debug kernel meanwhile):
#   cpu-hogs.sh COMMAND [ARG...]
# Needs root (negative nice).  Exit status: the command's.
set -u
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
for ((i = 0; i < $(nproc); i++)); do
	nice -n -20 bash -c 'while :; do :; done' &
	pids+=($!)
done
"$@"
