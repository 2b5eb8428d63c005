# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154
#
# Pieces of the QEMU test bed shared by scripts/vm-run.sh (one guest, the
# vm test list) and scripts/vm-pair.sh (two guests on one network).
# Sourced, never run.  The caller defines unavailable MESSAGE (skip or, with
# CI=true, fail) and fatal MESSAGE (always fail), and sets $src (the tree)
# and $results (an existing directory for status files).

# vm_select_guest: sets guest (stock|debug, from NDK_GUEST), kver, kernel,
# moddir (the debug kernel's modules, else empty), append (extra kernel
# command line) and mem (MiB) for the guest kernel to boot.
vm_select_guest() {
	guest=${NDK_GUEST:-stock}
	case $guest in
	stock)
		kver=$("$src/scripts/guest-kernel.sh") || unavailable "no guest kernel installed"
		kernel=/boot/vmlinuz-$kver
		moddir=""
		append=""
		mem=${NDK_VM_MEM:-2048}
		;;
	debug)
		# Not "unavailable": a missing debug kernel is a failure, never a skip.
		local entry
		entry=$("$src/scripts/debug-kernel.sh" --path) ||
			fatal "no debug kernel built (scripts/debug-kernel.sh)"
		kver=$(cat "$entry/release")
		kernel=$entry/bzImage
		moddir=$entry/modules/lib/modules/$kver
		# no5lvl: TCG's -cpu max offers LA57, and with 5-level paging a
		# timer tick during identify_boot_cpu() writes a per-CPU clock
		# in vmalloc space (0xffa0...) before KASAN shadows it: a burst of
		# "wild-memory-access" reports at boot (~1 boot in 5), which turns
		# lockdep off and fails the run.  4-level paging never does it.
		# acpi=noirq: the PCI host bridge's _PRT method (QEMU's i440fx
		# builds its 128 routing entries in an AML loop) runs into
		# ACPICA's 30 s loop timeout on this kernel, once per virtio
		# device: 61 s of a 73 s boot.  The BIOS's PIRQ table routes the
		# same INTx (IRQ 11) at once: the boot takes 13 s.
		# loglevel=7: the boot's own messages, pr_info() included, so that
		# a boot that hangs (reliability.md, "A boot hang of the debug
		# kernel") shows where in its kept console.
		append=" kmemleak=on kasan_multi_shot no5lvl acpi=noirq loglevel=7"
		mem=${NDK_VM_MEM:-3072}
		;;
	*) echo "vm-run: NDK_GUEST must be stock or debug" >&2; exit 2 ;;
	esac
	[[ -r "$kernel" ]] || unavailable "$kernel not readable"
}

# vm_build_initramfs OUT: static busybox, tests/testbed/vm-init.sh as /init and
# the modules that mount a 9p+overlay root, as a gzipped cpio archive.
vm_build_initramfs() {
	local out=$1 busybox stage m
	busybox=$(command -v busybox) || unavailable "busybox not installed"
	stage=$(mktemp -d)
	mkdir -p "$stage"/{bin,proc,sys,dev,modules}
	cp "$busybox" "$stage/bin/busybox"
	ln -s busybox "$stage/bin/sh"
	cp "$src/tests/testbed/vm-init.sh" "$stage/init"
	: > "$stage/modlist"
	# The debug kernel has virtio, 9p and overlay built in.
	[[ $guest == debug ]] ||
		modprobe -a -S "$kver" --show-depends virtio_pci 9pnet_virtio 9p overlay |
		awk '$1 == "insmod" && !seen[$2]++ { print $2 }' > "$stage/modlist" ||
		{ rm -rf "$stage"; unavailable "cannot resolve the guest's 9p modules"; }
	: > "$stage/modules/order"
	while read -r m; do
		cp "$m" "$stage/modules/"
		basename "$m" >> "$stage/modules/order"
	done < "$stage/modlist"
	rm "$stage/modlist"
	(cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
	rm -rf "$stage"
}

# vm_cpu_ticks PIDFILE: prints the CPU time (clock ticks, user and
# system) of the process PIDFILE names; fails when it has none.
vm_cpu_ticks() {
	local pid
	pid=$(cat "$1" 2> /dev/null) && [[ -r /proc/$pid/stat ]] || return 1
	# The fields after the command's closing parenthesis: utime is 12th.
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat"
}

# vm_qemu_args INITRD RESULTS: sets the array vm_qemu to the QEMU command
# line of one guest (host root read-only over 9p, RESULTS writable, serial
# console on stdio, no network); the caller appends its own options.
# log_buf_len: a whole CI run logs more than the kernel's default 128 KiB
# (134 kB on 2026-12-03), and a ring that wraps loses the run's first
# lines and shifts the line counts the tests' scripts take of dmesg.
# tsc=unstable unless NDK_VM_APPEND says otherwise (the benchmarks'
# tsc=reliable): TCG's TSC is the host's, and a host whose own TSC is not
# trusted (a VM's) can jump it.  ci59's guest took a 2764 s jump on its
# TSC clocksource, which fired every jiffies and ktime bound at once; on
# HPET the guest's clock is QEMU's and does not jump.  Guests whose TSCs
# fail the kernel's synchronisation check already run on HPET, and the
# same tests took as long on either (Documentation/testing.md).
# NDK_VM_QEMU_ARGS: more QEMU options, split at spaces (bench-ab.sh
# --icount's instruction counter).
vm_qemu_args() {
	local clock=" tsc=unstable" extra=()

	[[ ${NDK_VM_APPEND:-} == *tsc=* ]] && clock=""
	read -ra extra <<< "${NDK_VM_QEMU_ARGS:-}"
	vm_qemu=(qemu-system-x86_64
		-accel tcg -cpu max -smp "${NDK_VM_SMP:-2}" -m "$mem" "${extra[@]}"
		-display none -monitor none -serial stdio -no-reboot -nic none
		-kernel "$kernel" -initrd "$1"
		-append "console=ttyS0 panic=-1 loglevel=4 log_buf_len=4M rdinit=/init$append$clock ${NDK_VM_APPEND:-}"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$2,mount_tag=results,security_model=none,multidevs=remap")
}
