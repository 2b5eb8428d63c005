#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# unit test: the module source that `make install` installs builds with
# DKMS, and DKMS refuses a kernel without InfiniBand.
#   dkms-test.sh BUILD SRC VERSION
# Installs the module half (scripts/install-kmod.sh) with a scratch
# DESTDIR, then runs `dkms add` and `dkms build` with scratch source and
# DKMS trees (--sourcetree, --dkmstree: the machine's DKMS state is left
# alone) for the kernel kmod/ndk.ko was built for: ndk.ko must come out
# with that kernel's vermagic.  Then the same for a kernel tree whose
# .config lacks CONFIG_INFINIBAND: DKMS must refuse it (exit 77,
# BUILD_EXCLUSIVE), and so must the plain make.  Exit 77 without dkms
# (1 with CI=true).
set -u
build=$(realpath "$1") src=$(realpath "$2") version=$3
scratch=$build/dkms-test
fail() { echo "FAIL: $*"; exit 1; }
if ! command -v dkms > /dev/null; then
	echo "dkms is not installed (scripts/deps.sh installs it)"
	[[ "${CI:-}" == true ]] && exit 1
	exit 77
fi
if [[ ! -e $src/kmod/ndk.ko ]]; then
	echo "kmod/ndk.ko is not built (make kmod; make check does)"
	[[ "${CI:-}" == true ]] && exit 1
	exit 77
fi
kver=$(modinfo -F vermagic "$src/kmod/ndk.ko" | cut -d' ' -f1)
rm -rf "$scratch"
mkdir -p "$scratch/dkms"
"$src/scripts/install-kmod.sh" "$src" "$version" /usr "$scratch/dest" || fail "install-kmod failed"
tree=(--sourcetree "$scratch/dest/usr/src" --dkmstree "$scratch/dkms")
test -f "$scratch/dest/usr/src/ndk-$version/dkms.conf" || fail "no dkms.conf installed"
grep -q "^PACKAGE_VERSION=\"$version\"$" "$scratch/dest/usr/src/ndk-$version/dkms.conf" ||
	fail "dkms.conf does not carry version $version"

dkms add -m ndk -v "$version" "${tree[@]}" || fail "dkms add"
dkms build -m ndk -v "$version" -k "$kver" "${tree[@]}" > "$scratch/build.log" 2>&1 ||
	{ cat "$scratch/build.log"; fail "dkms build for $kver"; }
ko=$(find "$scratch/dkms/ndk/$version/$kver" -name 'ndk.ko*' | head -n 1)
[[ -n "$ko" ]] || { cat "$scratch/build.log"; fail "dkms build left no ndk.ko"; }
got=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
[[ "$got" == "$kver" ]] || fail "DKMS's ndk.ko has vermagic $got, expected $kver"
echo "ok: dkms built $ko for $kver"

# A kernel without InfiniBand: refused before any compilation.
mkdir -p "$scratch/noib"
grep -v '^CONFIG_INFINIBAND' "/lib/modules/$kver/build/.config" > "$scratch/noib/.config"
dkms build -m ndk -v "$version" -k "$kver-noib" --kernelsourcedir "$scratch/noib" "${tree[@]}" \
	> "$scratch/noib.log" 2>&1
rc=$?
cat "$scratch/noib.log"
[[ $rc -eq 77 ]] || fail "dkms build for a kernel without InfiniBand: exit $rc, expected 77"
grep -q BUILD_EXCLUSIVE "$scratch/noib.log" || fail "DKMS did not name BUILD_EXCLUSIVE"
make -C "$scratch/dest/usr/src/ndk-$version/kmod" KDIR="$scratch/noib" > "$scratch/make.log" 2>&1 &&
	fail "make against a kernel without InfiniBand succeeded"
grep -q "without CONFIG_INFINIBAND" "$scratch/make.log" || { cat "$scratch/make.log"; fail "no clear error"; }
echo "ok: a kernel without InfiniBand is refused by DKMS and by make"
rm -rf "$scratch"
echo "PASS"
