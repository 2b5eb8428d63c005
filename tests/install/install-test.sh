#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# unit test: `make install` gives a usable libndk.
#   install-test.sh <build dir> <source dir> <version>
# Installs the build tree with DESTDIR into a scratch directory under the
# build dir (prefix /opt/ndk), checks the files, then builds
# tests/install/consumer.cpp against that tree only, once with pkg-config
# and once with find_package(ndk), and runs both (and the installed
# ndk-target --help): the library must come from the installed tree.
set -u
build=$(realpath "$1") src=$(realpath "$2") version=$3
scratch=$build/install-test
rm -rf "$scratch"
mkdir -p "$scratch"
dest=$scratch/destdir
prefix=$dest/opt/ndk
checks=0 failed=0

check() { # check DESCRIPTION COMMAND...
	checks=$((checks + 1))
	if "${@:2}" > "$scratch/check.log" 2>&1; then
		echo "ok: $1"
	else
		echo "FAIL: $1"
		sed 's/^/  /' "$scratch/check.log"
		failed=$((failed + 1))
	fi
}

soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
has() { test -e "$1"; }
from_prefix() { # from_prefix BINARY: its libndk is the installed one
	local got
	got=$(LD_LIBRARY_PATH=${2:-} ldd "$1" | awk '$1 == "libndk.so.0" { print $3 }')
	echo "libndk.so.0 => $got"
	[[ -n "$got" && "$(realpath "$got")" == "$(realpath "$prefix/lib/libndk.so.0")" ]]
}
runs() { # runs BINARY [LD_LIBRARY_PATH]: prints the version and ENOENT
	local out
	out=$(LD_LIBRARY_PATH=${2:-} "$1" "$scratch/no-such-device") || return 1
	echo "$out"
	grep -q "^ABI version [0-9]" <<< "$out" && grep -q "ENOENT" <<< "$out"
}

check "cmake --install with DESTDIR" env DESTDIR="$dest" cmake --install "$build" --prefix /opt/ndk
check "libndk.so.$version installed" has "$prefix/lib/libndk.so.$version"
check "libndk's SONAME is libndk.so.0" test "$(soname "$prefix/lib/libndk.so.$version")" = libndk.so.0
check "libndk.so.0 and libndk.so links" test -L "$prefix/lib/libndk.so.0" -a -L "$prefix/lib/libndk.so"
for h in ndk.hpp adapter.hpp queue_pair.hpp memory.hpp connector.hpp ndk_ioctl.h \
	ndk_netlink.h; do
	check "header ndk/$h" has "$prefix/include/ndk/$h"
done
check "libndk links no libnl (the netlink client is the ndk tool's)" \
	sh -c "! readelf -d '$prefix/lib/libndk.so.$version' | grep -q 'libnl'"
check "no netlink client header installed" test ! -e "$prefix/include/ndk/netlink.hpp"
for f in pkgconfig/libndk.pc cmake/ndk/ndkConfig.cmake cmake/ndk/ndkConfigVersion.cmake \
	cmake/ndk/ndkTargets.cmake; do
	check "lib/$f" has "$prefix/lib/$f"
done
for t in ndkinfo ndk ndk-target; do
	check "bin/$t" test -x "$prefix/bin/$t"
done
for f in share/man/man8/ndk.8 share/man/man1/ndkinfo.1 share/man/man3/libndk.3 \
	share/man/man3/ndk_QueuePair.3 lib/udev/rules.d/60-ndk.rules; do
	check "$f" has "$prefix/$f"
done
check "the udev rule gives /dev/ndk to group rdma, 0660" \
	grep -q 'KERNEL=="ndk", SUBSYSTEM=="misc", GROUP="rdma", MODE="0660"' \
	"$prefix/lib/udev/rules.d/60-ndk.rules"
check "ndk.8 renders without warnings" bash -c \
	"out=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$prefix/share/man/man8/ndk.8' 2>&1 >/dev/null); echo \"\$out\"; test -z \"\$out\""
check "the installed ndk runs from its RUNPATH (exit 2 for usage)" \
	bash -c "'$prefix/bin/ndk' bogus 2>/dev/null; test \$? -eq 2"
check "no path of the build or source tree in the CMake package" \
	bash -c "! grep -rl -e '$build' -e '$src' '$prefix/lib/cmake' '$prefix/lib/pkgconfig'"

# pkg-config, from the installed tree only.
export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_PATH=
check "pkg-config --modversion libndk is $version" test "$(pkg-config --modversion libndk)" = "$version"
check "build the consumer with pkg-config" bash -c \
	"c++ -std=c++20 -Wall -Werror '$src/tests/install/consumer.cpp' -o '$scratch/consumer-pc' \
	\$(pkg-config --cflags --libs libndk)"
check "the pkg-config consumer links the installed libndk" from_prefix "$scratch/consumer-pc" \
	"$prefix/lib"
check "the pkg-config consumer runs" runs "$scratch/consumer-pc" "$prefix/lib"

# find_package(ndk), from the installed tree only.
check "configure the consumer with find_package(ndk)" cmake -S "$src/tests/install" \
	-B "$scratch/consumer-cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
check "build the find_package consumer" cmake --build "$scratch/consumer-cmake"
bin=$scratch/consumer-cmake/ndk-consumer
check "the find_package consumer links the installed libndk" from_prefix "$bin"
check "the find_package consumer runs" runs "$bin"
check "it reports version $version" bash -c "'$bin' /nonexistent | grep -qx 'libndk $version'"

# The installed tools find the installed library by themselves (RUNPATH).
check "the installed ndk-target links the installed libndk" from_prefix "$prefix/bin/ndk-target"
check "the installed ndk-target --help" "$prefix/bin/ndk-target" --help
check "the installed ndkinfo links the installed libndk" from_prefix "$prefix/bin/ndkinfo"

echo "$((checks - failed)) passed, $failed failed"
((failed == 0))
