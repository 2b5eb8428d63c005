#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build this tree's kernel modules (ndk.ko, the test and sample modules,
# everything `make kmod` builds) for the debug guest kernel, in a mirror of
# the source tree so that the stock builds stay where they are:
#   debug-modules.sh MIRROR
# The guest runner mounts MIRROR's *.ko over the stock ones (NDK_KO_TREE).
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
dst=${1:?usage: debug-modules.sh MIRROR}
entry=$("$src/scripts/debug-kernel.sh" --path) ||
	{ echo "debug-modules: no debug kernel built (scripts/debug-kernel.sh)" >&2; exit 1; }

mkdir -p "$dst"
# Tracked and new (not ignored) files: what a clean clone plus the work in
# progress would build.  Stale objects of removed sources go with --delete.
(cd "$src" && git ls-files -z --cached --others --exclude-standard) |
	rsync -a --delete-excluded --from0 --files-from=- "$src/" "$dst/"
make -s -C "$dst" kmod KDIR="$entry/build"
find "$dst" -name '*.ko' -not -path '*/.*' -printf 'debug-modules: %P\n'
