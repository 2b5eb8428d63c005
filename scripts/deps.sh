#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install every Debian package that building and testing ndk-linux needs.
# Idempotent: when everything is present it only runs dpkg-query (about a
# second).  Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
	# guest kernel and the headers the module builds against
	linux-image-amd64 linux-headers-amd64
	# the test bed: QEMU (TCG), busybox initramfs, guest user space
	qemu-system-x86 busybox-static cpio kmod iproute2
	# RDMA user space (guest tools, the library's comparisons, the verbs
	# peer of vm.ndk-target: librdmacm, libibverbs and the rxe provider)
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest libibverbs-dev
	librdmacm-dev libnl-3-dev libnl-genl-3-dev
	# host build and unit tests; groff (groff-base) renders the man pages
	# in doc.man-pages
	build-essential cmake googletest libgtest-dev pkg-config groff-base
	# checkpatch.pl and the debug-kernel source, plots
	linux-source-6.1 gnuplot-nox
	# building the debug guest kernel (scripts/debug-kernel.sh, patch for
	# scripts/debug-kernel-patches); libssl-dev also gives the tools'
	# SHA-256 (libcrypto)
	patch bc flex bison libelf-dev libssl-dev dwarves rsync xz-utils
	# the ndk tool's JSON (nlohmann), the vm tests that read it (python3)
	nlohmann-json3-dev
	python3
	# make install registers ndk.ko with DKMS; install.dkms builds with it
	dkms
	# ndkblk: its fio verify matrix and filesystem test, the nvme-rdma
	# comparison (nvme-cli)
	fio e2fsprogs nvme-cli
)

missing=()
for p in "${packages[@]}"; do
	case "$p" in \#*) continue ;; esac
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[[ "$status" == ii* ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
	echo "deps: all ${#packages[@]} packages present"
	exit 0
fi

echo "deps: installing ${#missing[@]} missing packages: ${missing[*]}"
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
start=$SECONDS
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" |
	grep -E '^(Unpacking|Setting up) ' || true
echo "deps: done in $((SECONDS - start)) s"
