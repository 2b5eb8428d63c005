#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.bench-smoke: the whole benchmark suite with tiny sizes and rounds (a
# few seconds of guest time), then the report in check mode: it fails
# unless every measure produced a finite number.  How fast anything is
# is not judged.  Leaves results.md, results.json and the plots in
# $NDK_RESULTS/bench-smoke/.
#   bench-smoke.sh UBENCH
set -u
dir=$(cd "$(dirname "$0")" && pwd)
out=${NDK_RESULTS:-/tmp}/bench-smoke
rm -rf "$out"
"$dir/bench-guest.sh" smoke "$out/raw" "$1" || exit 1
python3 "$dir/../../scripts/bench-report.py" --raw "$out/raw" --out "$out" --check
