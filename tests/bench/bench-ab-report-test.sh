#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# unit: scripts/bench-report.py --ab (make bench-ab's report) over made-up
# loads: each load's ratio, the medians per module and B over A are the
# arithmetic of the samples, and a run that gave no ratio fails.
set -u
report=$(cd "$(dirname "$0")/../.." && pwd)/scripts/bench-report.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench-ab-report-test: $*"; exit 1; }

load() {	# load DIR NDK_NS: one F1 load at 1 page, raw variants 1000 ns
	mkdir -p "$tmp/raw/$1"
	printf 'S F1 %s 1 0 %s 1\n' ndk "$2" raw 1000 raw-sig 1000 floor 1000 \
		> "$tmp/raw/$1/k-f1.txt"
	echo "ok f1" >> "$tmp/raw/$1/k-f1.txt"
}
load A1 2000
load A2 2500
load A3 1500
load B1 1250
load B2 1000
load B3 1600
python3 "$report" --ab "$tmp/raw" --out "$tmp/out" --command test > "$tmp/log" 2>&1 ||
	fail "the report failed: $(cat "$tmp/log")"
row=$(grep '| F1 | ndk vs floor | 1 pages |' "$tmp/out/ab.md") || fail "no ndk vs floor row"
# A: 0.5, 0.4, 0.667 (median 0.5); B: 0.8, 1, 0.625 (median 0.8); B/A 1.6.
[[ "$row" == *"| 0.500 0.400 0.667 | 0.800 1.000 0.625 | 0.5× | 0.8× | 1.6× |"* ]] ||
	fail "wrong row: $row"

rm -rf "$tmp/raw"
mkdir -p "$tmp/raw/A1"
echo "E F1 post: status 0xc0000001" > "$tmp/raw/A1/k-f1.txt"
if python3 "$report" --ab "$tmp/raw" --out "$tmp/out" --command test > "$tmp/log" 2>&1; then
	fail "a run without ratios passed"
fi
grep -q "no load gave a ratio" "$tmp/log" || fail "no reason given: $(cat "$tmp/log")"
echo "bench-ab-report-test: ok"
