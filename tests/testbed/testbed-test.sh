#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Description: the test bed's verdict logic on the host: check-dmesg.sh
# flags every kind of kernel report and passes a clean log; vm-result.sh
# turns results into exit codes, and a skip caused by a missing guest or a
# dead rxe becomes a failure under CI=true; a guest's kernel command line
# keeps it off the TSC unless NDK_VM_APPEND chooses (vm-lib.sh).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
check() { # expected-rc description command...
	local want=$1 what=$2
	shift 2
	"$@" > /dev/null 2>&1
	local got=$?
	if [[ $got == "$want" ]]; then
		echo "ok   $what"
	else
		echo "FAIL $what: exit $got, expected $want"
		fails=$((fails + 1))
	fi
}
dmesg_of() { printf '[    1.000000] %s\n' "$1" | "$src/tests/testbed/check-dmesg.sh"; }

check 0 "clean log passes" dmesg_of "rxe: loaded"
check 0 "ndk lines pass" dmesg_of "infiniband rxe0: ndk: adapter 1 added"
check 0 "fault-injection frames pass" dmesg_of "  ? lockdep_init_map_type+0x169/0x770"
check 0 "module frames pass" dmesg_of " refcount_inc_checked+0x5/0x10 [ndk]"
check 0 "a removal's resolved requests pass" \
	dmesg_of "ndk: QP 7: 2 initiator and 0 receive requests resolved without a completion"
check 1 "a lockdep frame under a header fails" \
	dmesg_of "$(printf '%s\n[    1.000000]  ? lockdep_init_map_type+0x169/0x770' 'WARNING: CPU: 0 PID: 1 at x')"
for line in \
	"WARNING: CPU: 1 PID: 140 at kmod/ndk_main.c:45 ndk_selftest_warn_write+0x5/0x10 [ndk]" \
	"BUG: kernel NULL pointer dereference, address: 0000000000000060" \
	"Oops: 0000 [#1] PREEMPT SMP NOPTI" \
	"kernel BUG at mm/slub.c:100!" \
	"refcount_t: underflow; use-after-free." \
	"list_del corruption. prev->next should be ffff888, but was dead000000000100" \
	"BUG: KASAN: slab-use-after-free in ndk_ib_remove+0x10/0x20" \
	"UBSAN: shift-out-of-bounds in kmod/ndk_ioctl.c:10:3" \
	"WARNING: possible circular locking dependency detected" \
	"INFO: lockdep is turned off." \
	"kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)" \
	"INFO: task rdma:123 blocked for more than 120 seconds." \
	"watchdog: BUG: soft lockup - CPU#0 stuck for 22s!" \
	"Kernel panic - not syncing: Fatal exception" \
	"ndk: QP 3 closed with 1 initiator and 0 receive completions missing"; do
	check 1 "flags: ${line:0:50}" dmesg_of "$line"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
res() { # dir boot rxe
	mkdir -p "$tmp/$1"
	echo "$2" > "$tmp/$1/boot.status"
	[[ -n "$3" ]] && echo "$3" > "$tmp/$1/rxe.status"
	echo "$tmp/$1"
}
d=$(res ran ok ok)
echo 0 > "$d/pass.rc"; echo log > "$d/pass.log"
echo 1 > "$d/fail.rc"; echo log > "$d/fail.log"
echo 77 > "$d/skip.rc"; echo "feature not on rxe" > "$d/skip.log"
check 0 "vm-result: pass" env -u CI "$src/tests/testbed/vm-result.sh" "$d" pass
check 1 "vm-result: fail" env -u CI "$src/tests/testbed/vm-result.sh" "$d" fail
check 77 "vm-result: a feature skip stays a skip" env CI=true "$src/tests/testbed/vm-result.sh" "$d" skip
check 1 "vm-result: a test the guest never ran fails" env -u CI "$src/tests/testbed/vm-result.sh" "$d" missing
check 77 "vm-result: NDK_VM_ONLY deselects" env -u CI NDK_VM_ONLY=pass "$src/tests/testbed/vm-result.sh" "$d" other

d=$(res norxe ok "failed: rdma link add failed")
echo 77 > "$d/skip.rc"; echo "no rxe" > "$d/skip.log"
check 77 "vm-result: skip without rxe, no CI" env -u CI "$src/tests/testbed/vm-result.sh" "$d" skip
check 1 "vm-result: skip without rxe under CI fails" env CI=true "$src/tests/testbed/vm-result.sh" "$d" skip

d=$(res noqemu "qemu-system-x86_64 not installed" "")
check 77 "vm-result: no guest, no CI" env -u CI "$src/tests/testbed/vm-result.sh" "$d" pass
check 1 "vm-result: no guest under CI fails" env CI=true "$src/tests/testbed/vm-result.sh" "$d" pass

d=$(res hung "timeout: guest killed after 900 s" "")
check 1 "vm-result: a hung guest fails every test" env -u CI "$src/tests/testbed/vm-result.sh" "$d" pass

# qemu_words NAME=VALUE...: vm_qemu_args's command line, one word a
# line, with those variables set.
qemu_words() {
	# shellcheck source=tests/testbed/vm-lib.sh
	(for a; do export "${a?}"; done
	 . "$src/tests/testbed/vm-lib.sh"
	 kernel=/k mem=1 append="" vm_qemu_args /i /r
	 printf '%s\n' "${vm_qemu[@]}")
}

# append_has APPEND REGEX: with NDK_VM_APPEND set to APPEND, the -append
# value matches REGEX.
append_has() {
	[[ $(qemu_words NDK_VM_APPEND="$1" | grep -x -A1 -e -append | tail -n 1) =~ $2 ]]
}
check 0 "vm-lib: test guests boot with tsc=unstable" append_has "" " tsc=unstable( |$)"
check 1 "vm-lib: NDK_VM_APPEND's tsc= replaces it" append_has "tsc=reliable" "tsc=unstable"
check 0 "vm-lib: ... and is passed on" append_has "tsc=reliable" " tsc=reliable$"

# qemu_has ARGS WORDS...: with NDK_VM_QEMU_ARGS set to ARGS, the command
# line holds WORDS as consecutive words.
qemu_has() {
	local args=$1
	shift
	[[ " $(qemu_words NDK_VM_QEMU_ARGS="$args" | tr '\n' ' ')" == *" $* "* ]]
}
check 0 "vm-lib: NDK_VM_QEMU_ARGS adds QEMU options, word by word" \
	qemu_has "-icount shift=0,sleep=off" -icount shift=0,sleep=off -display
check 0 "vm-lib: without it the command line is as before" \
	qemu_has "" -m 1 -display none

echo "$fails failure(s)"
((fails == 0))
