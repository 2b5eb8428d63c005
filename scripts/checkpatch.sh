#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# checkpatch.pl --strict over the kernel C of the project (kmod/, uapi/,
# tests/kmod/, samples/).
# checkpatch.pl comes from Debian's linux-source-6.1 tarball; the three
# files it needs are extracted once into ~/.cache/ndk-linux.
# Exit 0 clean, 1 findings, 77 when the tarball is missing (1 with CI=true).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)

tarball=$(find /usr/src -maxdepth 1 -name 'linux-source-*.tar.xz' | sort -V | tail -n 1)
if [[ -z "$tarball" ]]; then
	echo "checkpatch: no /usr/src/linux-source-*.tar.xz (scripts/deps.sh installs it)"
	[[ "${CI:-}" == true ]] && exit 1
	exit 77
fi
top=$(basename "$tarball" .tar.xz)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/ndk-linux/$top
if [[ ! -x "$cache/scripts/checkpatch.pl" ]]; then
	echo "checkpatch: extracting checkpatch.pl from $tarball"
	mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" --strip-components=1 \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch"
fi

cd "$src"
mapfile -t files < <(find kmod uapi tests/kmod tests/bench/kmod samples -name '*.[ch]' ! -name '*.mod.c' | sort)
echo "checkpatch: ${#files[@]} files"
out=$("$cache/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	--ignore FILE_PATH_CHANGES -f "${files[@]}" || true)
printf '%s\n' "$out"
if grep -qE ': (ERROR|WARNING|CHECK):' <<< "$out"; then
	echo "checkpatch: findings above"
	exit 1
fi
echo "checkpatch: clean"
