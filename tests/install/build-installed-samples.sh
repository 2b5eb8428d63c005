#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build step (target installed-samples, part of every build): install the
# build tree and the module (make install's two halves) into a scratch
# DESTDIR with prefix /opt/ndk, then build, against that tree only,
#  - samples/ndk_sample as an out-of-tree consumer module: the installed
#    <ndk/ndkpi.h> and the installed Module.symvers, nothing of kmod/;
#  - samples/ndk_user with the installed pkg-config file and libndk.
# vm.installed-samples runs both in the guest.  Without kmod/ndk.ko (make
# kmod not run) it writes NOT-BUILT with the reason, which that test
# reports as its failure.  Does nothing when no input changed.
#   build-installed-samples.sh BUILD SRC VERSION
set -euo pipefail
build=$(realpath "$1") src=$(realpath "$2") version=$3
out=$build/installed-samples
dest=$out/destdir prefix=/opt/ndk
mkdir -p "$out"

inputs=$(ls -l --time-style=+%s.%N "$src/kmod/Module.symvers" "$src/kmod/ndk.ko" \
	"$src"/samples/ndk_sample/*.c "$src"/samples/ndk_user/*.cpp "$build"/lib/libndk.so.* \
	"$build/lib/ndk" "$0" "$src/scripts/install-kmod.sh" 2>&1 || true)
if [[ -e $out/stamp && "$(cat "$out/stamp")" == "$inputs" ]]; then
	exit 0
fi
rm -f "$out/stamp" "$out/NOT-BUILT"
if [[ ! -e $src/kmod/ndk.ko ]]; then
	echo "kmod/ndk.ko is not built: run make kmod before the build" > "$out/NOT-BUILT"
	echo "installed-samples: $(cat "$out/NOT-BUILT")"
	exit 0
fi

rm -rf "$dest"
DESTDIR=$dest cmake --install "$build" --prefix "$prefix" > "$out/install.log"
"$src/scripts/install-kmod.sh" "$src" "$version" "$prefix" "$dest" >> "$out/install.log"
kver=$(modinfo -F vermagic "$src/kmod/ndk.ko" | cut -d' ' -f1)
kernel=$dest$prefix/share/ndk/kernel

# The consumer module: its own copy of the sample, a Kbuild that names the
# installed header only.
rm -rf "$out/module"
mkdir -p "$out/module"
cp "$src/samples/ndk_sample/ndk_sample.c" "$out/module/"
printf 'obj-m := ndk_sample.o\nccflags-y += -I%s\n' "$kernel/include" > "$out/module/Kbuild"
make -s -C "/lib/modules/$kver/build" M="$out/module" \
	KBUILD_EXTRA_SYMBOLS="$kernel/$kver/Module.symvers" modules > "$out/module.log" 2>&1 ||
	{ cat "$out/module.log"; exit 1; }

# The user program: pkg-config from the installed tree only.
export PKG_CONFIG_LIBDIR=$dest$prefix/lib/pkgconfig PKG_CONFIG_PATH=
# shellcheck disable=SC2046
c++ -std=c++20 -Wall -Werror "$src/samples/ndk_user/ndk_user.cpp" -o "$out/ndk_user" \
	$(pkg-config --cflags --libs libndk) -Wl,-rpath,"$dest$prefix/lib"
echo "$inputs" > "$out/stamp"
echo "installed-samples: ndk_sample.ko and ndk_user built against $dest$prefix"
