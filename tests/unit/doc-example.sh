#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The example program printed in a document must be the file it names:
#   doc-example.sh DOC
# Each "<!-- example: PATH -->" line is followed by a fenced code block
# that must equal PATH (relative to the repository root) byte for byte.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
doc=$1
found=0
while IFS= read -r path; do
	found=1
	diff -u "$src/$path" <(awk -v p="$path" '
		$0 == "<!-- example: " p " -->" { want = 1; next }
		want == 1 && /^```/ { want = 2; next }
		want == 2 && /^```$/ { exit }
		want == 2 { print }' "$doc") ||
		{ echo "doc-example: $doc differs from $path (copy the file into the document)"; exit 1; }
	echo "doc-example: $doc shows $path unchanged"
done < <(sed -n 's/^<!-- example: \(.*\) -->$/\1/p' "$doc")
((found)) || { echo "doc-example: no example marker in $doc"; exit 1; }
