#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the installed Debian guest kernel under QEMU (TCG), run a list of vm
# tests in it with tests/testbed/guest-runner.sh, and leave one <name>.rc and
# <name>.log per test in the results directory.  One boot serves the list.
# With NDK_GUEST=debug the guest runs the debug kernel of
# scripts/debug-kernel.sh instead (KASAN, lockdep, kmemleak, fault
# injection; `make check-debug`), with its own modules, and the modules of
# this tree rebuilt for it (NDK_KO_TREE) mounted over the stock ones.
#
#   vm-run.sh --list FILE [--debug-list FILE] --results DIR --ko PATH [--build DIR]
#
# --debug-list names the tests that need the debug kernel (fault
# injection): they are appended to the list only when NDK_GUEST=debug.
#
# Exit: 0 when the guest ran the whole list (the tests' own verdicts are in
# their .rc files), 1 when the guest hung, crashed or never got going (the
# console tail is printed), 77 when QEMU or a guest kernel is missing and
# CI is not "true" (with CI=true that is 1: the vm tier must really run).
# Environment: NDK_VM_TIMEOUT (s, default NDK_VM_TIMEOUT_DEFAULT or 900),
# NDK_VM_MEM (MiB, 2048; debug 3072), NDK_VM_SMP (2), NDK_VM_ONLY (regex of
# test names), NDK_GUEST_KVER; NDK_GUEST (stock|debug), NDK_KO_TREE (a
# mirror of this tree whose *.ko replace ours in the guest),
# NDK_VM_TIMEOUT_SCALE (per-test timeouts x this) and NDK_STRESS_SCALE
# (iteration counts x this) for slower kernels.
# NDK_VM_APPEND (extra kernel command line, e.g. tsc=reliable).
# NDK_VM_BOOT_TIMEOUT (s, default 300) and NDK_VM_BOOT_IDLE (s, default
# 60): a guest that has not reached its init's mounts by then, or whose
# QEMU idled (under a fifth of a host CPU) over a whole NDK_VM_BOOT_IDLE
# before it did, is killed and booted again, NDK_VM_BOOT_ATTEMPTS boots at
# most (default 3).
set -uo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
list="" debug_list="" results="" ko="" build=""
while (($#)); do
	case $1 in
	--list) list=$(realpath "$2"); shift 2 ;;
	--debug-list) debug_list=$(realpath "$2"); shift 2 ;;
	--results) results=$2; shift 2 ;;
	--ko) ko=$(realpath "$2"); shift 2 ;;
	--build) build=$(realpath "$2"); shift 2 ;;
	*) echo "vm-run: unknown argument $1" >&2; exit 2 ;;
	esac
done
[[ -n "$list" && -n "$results" && -n "$ko" ]] || {
	echo "usage: vm-run.sh --list FILE [--debug-list FILE] --results DIR --ko PATH [--build DIR]" >&2
	exit 2
}

# Stale results must never pass: start from an empty directory.
rm -rf "$results"
mkdir -p "$results"
results=$(realpath "$results")

unavailable() {
	echo "vm-run: $*" | tee "$results/boot.status"
	if [[ "${CI:-}" == true ]]; then
		echo "vm-run: CI=true: the vm tier must run, failing"
		exit 1
	fi
	exit 77
}

fatal() {
	echo "vm-run: $*" | tee "$results/boot.status"
	exit 1
}

# shellcheck source=tests/testbed/vm-lib.sh
. "$src/tests/testbed/vm-lib.sh"
command -v qemu-system-x86_64 > /dev/null || unavailable "qemu-system-x86_64 not installed"
vm_select_guest
if [[ "$guest" == debug && -n "$debug_list" ]]; then
	cat "$list" "$debug_list" > "$results/tests.list"
	list=$results/tests.list
fi
[[ -r "$ko" ]] || fatal "$ko missing (make kmod)"

# --- initramfs: static busybox, the modules that mount a 9p+overlay root ---
initrd="$results/initramfs.cpio.gz"
vm_build_initramfs "$initrd"

cat > "$results/config.sh" <<CFG
NDK_SRC='$src'
NDK_KO='$ko'
NDK_LIST='$list'
NDK_BUILD='${build:-$src}'
NDK_VM_ONLY='${NDK_VM_ONLY:-}'
NDK_GUEST='$guest'
NDK_GUEST_MODULES='$moddir'
NDK_KO_TREE='${NDK_KO_TREE:+$(realpath "${NDK_KO_TREE}")}'
NDK_VM_TIMEOUT_SCALE='${NDK_VM_TIMEOUT_SCALE:-1}'
NDK_STRESS_SCALE='${NDK_STRESS_SCALE:-1}'
CFG

timeout_s=${NDK_VM_TIMEOUT:-${NDK_VM_TIMEOUT_DEFAULT:-900}}
boot_s=${NDK_VM_BOOT_TIMEOUT:-300}
vm_qemu_args "$initrd" "$results"
vm_qemu+=(-pidfile "$results/qemu.pid")

# One boot of the guest in the background; its QEMU exit status goes to
# qemu.rc.
vm_boot() {
	rm -f "$results/boot.stage" "$results/qemu.rc" "$results/qemu.pid"
	(
		timeout -k 10 "$timeout_s" "${vm_qemu[@]}" < /dev/null 2>&1 |
			tee "$results/console.log" | grep --line-buffered -E '^(guest|vm-init):'
		echo "${PIPESTATUS[0]}" > "$results/qemu.rc"
	) &
	vm_pid=$!
}

# A guest that has not reached its init's mounts (boot.stage) is stuck in
# early boot when its QEMU idles: a booting TCG guest keeps a host CPU
# busy, an idle one takes about 2 % of it, and the debug kernel's
# early-boot hangs whose CPU use was looked at (reliability.md) left the
# vCPUs idle, printing nothing, until killed minutes later.  Each idle_s
# seconds the CPU time QEMU used since the last look is checked; under a
# fifth of the window, or no boot.stage after boot_s seconds at all (a
# hang that spins), the guest is killed and booted again, three boots at
# most.
idle_s=${NDK_VM_BOOT_IDLE:-60}
hz=$(getconf CLK_TCK)
attempts=${NDK_VM_BOOT_ATTEMPTS:-3}
for ((attempt = 1; attempt <= attempts; attempt++)); do
	echo "vm-run: booting $kver ($guest) under TCG ($(grep -c . "$list") tests, timeout ${timeout_s} s, boot ${boot_s} s)"
	start=$SECONDS
	vm_boot
	stuck="" mark=$SECONDS ticks=0
	while kill -0 "$vm_pid" 2> /dev/null && [[ ! -e "$results/boot.stage" ]]; do
		sleep 1
		if ((SECONDS - start >= boot_s)); then
			stuck="did not reach its init's mounts within ${boot_s} s"
			break
		fi
		((SECONDS - mark >= idle_s)) || continue
		used=$(vm_cpu_ticks "$results/qemu.pid") || continue
		window=$(((SECONDS - mark) * hz))
		if (((used - ticks) * 5 < window)); then
			stuck="idled before its init's mounts: $(((used - ticks) * 100 / window)) % of a host CPU over $((SECONDS - mark)) s, $((SECONDS - start)) s after its start"
			break
		fi
		mark=$SECONDS ticks=$used
	done
	if [[ -z $stuck ]]; then
		wait "$vm_pid"
		break
	fi
	echo "vm-run: the guest $stuck (boot $attempt of $attempts)"
	kill "$(cat "$results/qemu.pid" 2> /dev/null)" 2> /dev/null
	wait "$vm_pid"
	mv "$results/console.log" "$results/console-attempt$attempt.log"
	echo "no boot: $stuck" > "$results/qemu.rc"
done
qemu_rc=$(cat "$results/qemu.rc" 2> /dev/null || echo "unknown")
echo "vm-run: guest ran $((SECONDS - start)) s (qemu exit $qemu_rc)"

status=$(cat "$results/runner.status" 2>/dev/null)
if [[ "$status" == complete ]]; then
	echo ok > "$results/boot.status"
	exit 0
fi
if [[ "$qemu_rc" == "no boot"* ]]; then
	echo "no boot: $attempts boots stuck before their init's mounts; the last one ${qemu_rc#no boot: }" > "$results/boot.status"
	cp "$results/console-attempt$attempts.log" "$results/console.log"
elif [[ "$qemu_rc" == 124 || "$qemu_rc" == 137 ]]; then
	echo "timeout: guest killed after ${timeout_s} s" > "$results/boot.status"
else
	echo "incomplete: guest stopped before the runner finished (qemu exit $qemu_rc)" > "$results/boot.status"
fi
echo "vm-run: FAILED: $(cat "$results/boot.status"); console tail:"
tail -n 60 "$results/console.log"
exit 1
