#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the debug guest kernel of the reliability tier from Debian's
# linux-source-6.1: x86_64_defconfig + kvm_guest.config + the trimmed
# fragment scripts/debug-kernel.config (KASAN, lockdep, kmemleak, UBSAN,
# KFENCE, fault injection, hung-task detection, rxe, 9p), with the fixes in
# scripts/debug-kernel-patches/*.patch applied (bugs of 6.1 the test bed
# reaches, each fixed upstream later).  The result is cached outside the
# work tree, keyed by a hash of the fragment and the patches, the build
# recipe's version (bump $recipe when the steps below change what is
# built), the source package version and the compiler:
#
#   $NDK_CACHE_DIR/debug-kernel/<key>/      (default /var/cache/ndk-linux)
#       linux-*/            the configured and built tree (KDIR for modules)
#       modules/lib/modules/<release>/      stripped modules_install
#       bzImage, release    the image and its `uname -r`
#       complete            written last: the cache entry is usable
#
#   debug-kernel.sh           build when not cached, print the entry's path
#   debug-kernel.sh --path    print the path only if the entry is complete
#   debug-kernel.sh --key     print the cache key
#
# For the test bed's own test (tests/testbed/debug-kernel-test.sh):
# NDK_DEBUG_KERNEL_TARBALL replaces the source tarball,
# NDK_DEBUG_KERNEL_SRCVER its package version and NDK_DEBUG_KERNEL_PATCHES
# the directory of patches.
#
# Progress goes to stderr every 30 s (objects compiled, elapsed time); the
# full build log is <entry>/build.log.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
fragment=$src/scripts/debug-kernel.config
shopt -s nullglob
patches=("${NDK_DEBUG_KERNEL_PATCHES:-$src/scripts/debug-kernel-patches}"/*.patch)
shopt -u nullglob
tarball=${NDK_DEBUG_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
cache_root=${NDK_CACHE_DIR:-/var/cache/ndk-linux}/debug-kernel
say() { echo "debug-kernel: $*" >&2; }

srcver=${NDK_DEBUG_KERNEL_SRCVER:-$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)} ||
	{ say "linux-source-6.1 is not installed (scripts/deps.sh)"; exit 1; }
recipe=3
key=$( { cat "$fragment" "${patches[@]}"; echo "recipe $recipe $srcver"; gcc --version | head -n 1; } |
	sha256sum | cut -c1-16)
entry=$cache_root/$key

if [[ "${1:-}" == --key ]]; then
	echo "$key"
	exit 0
fi
if [[ "${1:-}" == --path ]]; then
	[[ -e "$entry/complete" ]] || exit 1
	echo "$entry"
	exit 0
fi
if [[ -e "$entry/complete" ]]; then
	say "cached: $(cat "$entry/release") in $entry"
	echo "$entry"
	exit 0
fi

mkdir -p "$cache_root"
exec 9> "$cache_root/.lock"
say "waiting for the cache lock" && flock 9
if [[ -e "$entry/complete" ]]; then
	echo "$entry"
	exit 0
fi
mkdir -p "$entry"
log=$entry/build.log
start=$SECONDS
# An entry left incomplete (an interrupted build) is resumed in place:
# make is incremental.  Only the unpacking starts over when it did not end.
if [[ -e "$entry/unpacked" ]]; then
	say "resuming the build of entry $key (source $srcver); log: $log"
else
	say "building a new entry $key (source $srcver); log: $log"
	find "$entry" -mindepth 1 -delete
	say "unpacking $tarball"
	tar -C "$entry" -xJf "$tarball"
	tree=$(find "$entry" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*' | head -n 1)
	[[ -n "$tree" ]] || { say "no source tree in $tarball"; exit 1; }
	for p in "${patches[@]}"; do
		say "applying $(basename "$p")"
		patch -d "$tree" -p1 -s --forward < "$p" >> "$log" 2>&1 ||
			{ say "$(basename "$p") does not apply; see $log"; exit 1; }
	done
	: > "$entry/unpacked"
fi
tree=$(find "$entry" -mindepth 1 -maxdepth 1 -type d -name 'linux-source-*' | head -n 1)
[[ -n "$tree" ]] || { say "no source tree in $tarball"; exit 1; }

say "configuring"
{
	make -C "$tree" -s x86_64_defconfig &&
		(cd "$tree" && scripts/kconfig/merge_config.sh -m .config \
			kernel/configs/kvm_guest.config "$fragment") &&
		make -C "$tree" -s olddefconfig
} >> "$log" 2>&1 || { say "configuration failed; last lines of $log:"; tail -n 5 "$log" >&2; exit 1; }

# Every option the fragment asks for must have survived olddefconfig: a
# dependency that is not met would silently drop, say, KASAN.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		opt=${line%%=*}
		got=$(grep -E "^$opt=" "$tree/.config" || echo "$opt unset")
		[[ "$got" == "$line" ]] || { say "config: wanted $line, got $got"; bad=1; }
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		if grep -qE "^$opt=" "$tree/.config"; then
			say "config: wanted $opt off, got $(grep -E "^$opt=" "$tree/.config")"
			bad=1
		fi
		;;
	esac
done < "$fragment"
((bad == 0)) || { say "the fragment does not apply to this source; see above"; exit 1; }

jobs=$(nproc)
say "compiling with $jobs jobs (about 20 min on 2 cores)"
(
	while sleep 30; do
		n=$(grep -cE '^  (CC|AS|LD)' "$log" || true)
		say "... $n objects, $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
	done
) &
ticker=$!
# Stopping the ticker must never decide the script's exit status: by the
# time an EXIT trap runs, the ticker may long be reaped and kill fails.
stop_ticker() {
	kill "$ticker" 2> /dev/null || true
	wait "$ticker" 2> /dev/null || true
}
trap stop_ticker EXIT
make -C "$tree" -j"$jobs" bzImage modules >> "$log" 2>&1 ||
	{ say "build failed; last lines of $log:"; tail -n 30 "$log" >&2; exit 1; }
make -C "$tree" -s INSTALL_MOD_PATH="$entry/modules" INSTALL_MOD_STRIP=1 \
	modules_install >> "$log" 2>&1 ||
	{ say "modules_install failed; last lines of $log:"; tail -n 30 "$log" >&2; exit 1; }
stop_ticker

# The release is the file kbuild wrote, not `make kernelrelease`'s output:
# under an outer make that output carries "Entering directory" lines.  It
# must name exactly one line and the modules directory just installed.
release=$(cat "$tree/include/config/kernel.release")
if [[ $(wc -l < "$tree/include/config/kernel.release") != 1 ||
	! "$release" =~ ^[A-Za-z0-9._+-]+$ || ! -d "$entry/modules/lib/modules/$release" ]]; then
	say "bad kernel release '$release': not one line naming $entry/modules/lib/modules/*"
	exit 1
fi
cp "$tree/arch/x86/boot/bzImage" "$entry/bzImage"
echo "$release" > "$entry/release"
ln -sfn "$(basename "$tree")" "$entry/build"
echo "built in $((SECONDS - start)) s" > "$entry/complete"
say "done: $(cat "$entry/release") in $((SECONDS - start)) s"
echo "$entry"
