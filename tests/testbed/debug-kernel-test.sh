#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: scripts/debug-kernel.sh's build path to its end, on a fake
# kernel tree that builds in a second: run under an outer make (as
# `make check-all` runs it), it must exit 0, print the entry's path, write
# a release file of exactly one line naming the installed modules
# directory, and mark the entry complete; a second run must take the
# cached path.  The real build is the same script with the real tarball.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# --- a fake linux-source tree: the targets debug-kernel.sh calls ---
rel=6.1.0-fake-ndk-debug
tree=$tmp/pkg/linux-source-6.1
mkdir -p "$tree/scripts/kconfig" "$tree/kernel/configs"
: > "$tree/kernel/configs/kvm_guest.config"
cat > "$tree/scripts/kconfig/merge_config.sh" <<'SH'
#!/bin/sh
# merge_config.sh -m BASE FRAGMENT...: append the fragments.
shift 2
cat "$@" >> .config
SH
chmod +x "$tree/scripts/kconfig/merge_config.sh"
cat > "$tree/Makefile" <<MK
# kbuild prints directory changes itself under an outer make, -s or not.
MAKEFLAGS += --print-directory
x86_64_defconfig:
	@: > .config
olddefconfig:
	@true
bzImage:
	@mkdir -p arch/x86/boot include/config && echo image > arch/x86/boot/bzImage
	@echo $rel > include/config/kernel.release
	@echo "  CC      fake.o"
modules:
	@true
modules_install:
	@mkdir -p \$(INSTALL_MOD_PATH)/lib/modules/$rel
kernelrelease:
	@echo $rel
MK
tar -C "$tmp/pkg" -cJf "$tmp/linux-source-6.1.tar.xz" linux-source-6.1
# A patch, as scripts/debug-kernel-patches holds: it must be applied.
mkdir -p "$tmp/patches"
cat > "$tmp/patches/0001-fake.patch" <<'PATCH'
--- /dev/null
+++ b/fake-fix.c
@@ -0,0 +1 @@
+/* applied */
PATCH

export NDK_CACHE_DIR=$tmp/cache NDK_DEBUG_KERNEL_TARBALL=$tmp/linux-source-6.1.tar.xz \
	NDK_DEBUG_KERNEL_SRCVER=0-fake NDK_DEBUG_KERNEL_PATCHES=$tmp/patches
# The outer make: its MAKELEVEL and MAKEFLAGS reach the script as in CI.
printf 'all:\n\t@"%s/scripts/debug-kernel.sh" > "%s/out" 2> "%s/err"\n' \
	"$src" "$tmp" "$tmp" > "$tmp/outer.mk"

if make -s -f "$tmp/outer.mk" > /dev/null 2>&1; then
	ok "build path exits 0 under an outer make"
else
	bad "build path failed under an outer make:"; cat "$tmp/err"
fi
entry=$(tail -n 1 "$tmp/out" 2>/dev/null)
if [[ -n "$entry" && -e "$entry/complete" ]]; then
	ok "prints a complete entry ($entry)"
else
	bad "no complete entry printed: '$entry'"
fi
if grep -qs applied "$entry/build/fake-fix.c"; then
	ok "the patches are applied"
else
	bad "the patch was not applied"
fi
if [[ -f "$entry/release" && $(wc -l < "$entry/release") == 1 && $(cat "$entry/release") == "$rel" ]]; then
	ok "release is one line: $rel"
else
	bad "release file: $(cat -A "$entry/release" 2>&1)"
fi
if [[ -d "$entry/modules/lib/modules/$(cat "$entry/release" 2>/dev/null)" ]]; then
	ok "release names the installed modules directory"
else
	bad "release names no modules directory"
fi
if [[ $("$src/scripts/debug-kernel.sh" --path 2>/dev/null) == "$entry" ]]; then
	ok "--path finds the entry"
else
	bad "--path does not find the entry"
fi

if make -s -f "$tmp/outer.mk" > /dev/null 2>&1 && grep -q "cached: $rel" "$tmp/err" &&
	[[ $(tail -n 1 "$tmp/out") == "$entry" ]]; then
	ok "second run takes the cached path"
else
	bad "second run did not take the cached path:"; cat "$tmp/err"
fi

echo "$fails failure(s)"
((fails == 0))
