#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the release of the newest installed Debian guest kernel that has
# both an image in /boot and a build tree in /lib/modules/<ver>/build.
# Nothing is hard-coded: package versions move.  NDK_GUEST_KVER overrides.
set -euo pipefail

if [[ -n "${NDK_GUEST_KVER:-}" ]]; then
	echo "$NDK_GUEST_KVER"
	exit 0
fi
best=""
for img in /boot/vmlinuz-*; do
	[[ -e "$img" ]] || continue
	ver=${img#/boot/vmlinuz-}
	[[ -d /lib/modules/$ver/kernel && -e /lib/modules/$ver/build/Makefile ]] || continue
	best=$(printf '%s\n%s\n' "$best" "$ver" | sed '/^$/d' | sort -V | tail -n 1)
done
if [[ -z "$best" ]]; then
	echo "guest-kernel: no kernel with headers installed (run scripts/deps.sh)" >&2
	exit 1
fi
echo "$best"
