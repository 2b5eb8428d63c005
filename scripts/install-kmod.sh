#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel half of `make install` (Documentation/install.md):
#   install-kmod.sh SRC VERSION PREFIX [DESTDIR]
#  - $DESTDIR/usr/src/ndk-VERSION/: the module source for DKMS (dkms.conf,
#    kmod/, uapi/);
#  - $DESTDIR$PREFIX/share/ndk/kernel/include/ndk/*.h: the consumer header
#    and the uapi header ndk_ioctl.h, whose NDK_U_* values ndkpi.h uses;
#  - $DESTDIR$PREFIX/share/ndk/kernel/KVER/Module.symvers: ndk.ko's symbols
#    for out-of-tree consumers (KBUILD_EXTRA_SYMBOLS), KVER the kernel the
#    tree's kmod/ndk.ko was built for (make kmod);
#  - without DESTDIR: the source is registered with DKMS (`dkms add`, then
#    `dkms install` for KVER) when dkms is installed; otherwise kmod/ndk.ko
#    goes to /lib/modules/KVER/updates/ and depmod runs.
set -euo pipefail
src=$1 version=$2 prefix=$3 destdir=${4:-}
ko=$src/kmod/ndk.ko
if [[ ! -e $ko || ! -e $src/kmod/Module.symvers ]]; then
	echo "install-kmod: $ko is not built (make kmod)" >&2
	exit 1
fi
kver=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)

usrc=$destdir/usr/src/ndk-$version
rm -rf "$usrc"
install -d "$usrc/kmod/include/ndk" "$usrc/uapi/ndk"
sed "s/@VERSION@/$version/" "$src/kmod/dkms.conf.in" > "$usrc/dkms.conf"
# The module's sources, not kbuild's generated ndk.mod.c.
sources=()
for f in "$src"/kmod/*.c; do
	[[ $f == *.mod.c ]] || sources+=("$f")
done
install -m 0644 "${sources[@]}" "$src"/kmod/*.h "$src/kmod/Kbuild" "$usrc/kmod/"
# Without the test bed's default kernel lookup: DKMS always passes KDIR.
# shellcheck disable=SC2016 # $(shell ...) is make's, for the Makefile
sed 's|^KDIR ?= .*|KDIR ?= /lib/modules/$(shell uname -r)/build|' "$src/kmod/Makefile" \
	> "$usrc/kmod/Makefile"
install -m 0644 "$src"/kmod/include/ndk/*.h "$usrc/kmod/include/ndk/"
install -m 0644 "$src"/uapi/ndk/*.h "$usrc/uapi/ndk/"
echo "install-kmod: module source in $usrc"

share=$destdir$prefix/share/ndk/kernel
install -d "$share/include/ndk" "$share/$kver"
install -m 0644 "$src"/kmod/include/ndk/*.h "$src/uapi/ndk/ndk_ioctl.h" "$share/include/ndk/"
install -m 0644 "$src/kmod/Module.symvers" "$share/$kver/Module.symvers"
echo "install-kmod: consumer header and Module.symvers ($kver) in $share"

[[ -z "$destdir" ]] || exit 0
if command -v dkms > /dev/null; then
	dkms remove -m ndk -v "$version" --all > /dev/null 2>&1 || true
	dkms add "$usrc"
	dkms install -m ndk -v "$version" -k "$kver"
	echo "install-kmod: ndk/$version registered with DKMS, installed for $kver"
else
	install -D -m 0644 "$ko" "/lib/modules/$kver/updates/ndk.ko"
	depmod -a "$kver"
	echo "install-kmod: no dkms: ndk.ko installed for $kver only"
fi
