#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test-bed guest as PID 1 (after vm-init.sh).  Sets up rxe
# over a veth pair, loads ndk.ko, runs every test of $NDK_LIST with its own
# timeout, judges each by its exit code AND by the kernel log it produced,
# unloads ndk.ko, and powers the guest off.  Results go to /ndk-results:
#   <name>.rc / <name>.log  one pair per test (rc 77 = skipped)
#   module-unload.*         the final `rmmod ndk`
#   dmesg-clean.*           the kernel log of the whole run (+ kmemleak)
#   rxe.status              "ok" or why rxe could not start
#   siw.status              debug guest: "ok" or why siw could not start
#   runner.status           "complete" once everything above is written
# List format, one test per line: name<TAB>timeout-seconds<TAB>command.
set -u
R=/ndk-results
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export NDK_RESULTS=$R HOME=/root LANG=C
# shellcheck source=/dev/null
. "$R/config.sh"
export NDK_SRC NDK_KO NDK_BUILD NDK_GUEST NDK_STRESS_SCALE NDK_VM_TIMEOUT_SCALE

say() { echo "guest: $*"; }
# shellcheck source=tests/testbed/guest-lib.sh
. "$NDK_SRC/tests/testbed/guest-lib.sh"
kmsg() { echo "ndk-testbed: $*" > /dev/kmsg; }

poweroff_now() {
	sync
	echo o > /proc/sysrq-trigger
	sleep 30
}
trap poweroff_now EXIT

# /tmp and /run stay the overlay's (writes land in its tmpfs upper layer):
# a tmpfs over them would hide a source tree that lives under /tmp.
mount -t tmpfs tmpfs /dev/shm 2>/dev/null || { mkdir -p /dev/shm && mount -t tmpfs tmpfs /dev/shm; }
mount -t debugfs debugfs /sys/kernel/debug
hostname ndk-guest
ulimit -c 0
# The debug guest boots with loglevel=7 (vm-lib.sh) so that a hung boot's
# console says where; from here on the console gets warnings only, as on
# the stock guest (the kernel log itself is judged from dmesg).
dmesg -n 4
say "kernel $(uname -r), $(nproc) cpus, up $(cut -d' ' -f1 /proc/uptime) s"

# --- the debug kernel (NDK_GUEST=debug): its own modules, and this tree's
#     modules rebuilt for it mounted over the stock builds, so every test
#     finds them at the paths it always uses ---
if [[ -n "${NDK_GUEST_MODULES:-}" ]]; then
	mkdir -p "/lib/modules/$(uname -r)"
	mount --bind "$NDK_GUEST_MODULES" "/lib/modules/$(uname -r)" ||
		say "cannot mount the debug kernel's modules"
fi
if [[ -n "${NDK_KO_TREE:-}" ]]; then
	# A pipe, not process substitution: this early there is no /dev/fd.
	find "$NDK_KO_TREE" -name '*.ko' -not -path '*/.*' | while IFS= read -r ko; do
		target=$NDK_SRC/${ko#"$NDK_KO_TREE"/}
		[[ -e "$target" ]] || { mkdir -p "$(dirname "$target")" && : > "$target"; }
		mount --bind "$ko" "$target" || say "cannot mount $ko over $target"
	done
	say "$(grep -c '\.ko ' /proc/self/mountinfo) modules of $NDK_KO_TREE mounted over $NDK_SRC"
fi
kmsg "setup begin"

# --- rxe over a veth pair (Documentation/testing.md) ---
setup_rxe() {
	local m
	for m in ib_core ib_uverbs rdma_ucm rdma_rxe veth; do
		modprobe "$m" || { echo "modprobe $m failed"; return 1; }
	done
	ip link set lo up &&
	ip link add v0 type veth peer name v1 &&
	ip addr add 10.99.0.1/24 dev v0 &&
	ip link set v0 up && ip link set v1 up || { echo "veth setup failed"; return 1; }
	rdma link add rxe0 type rxe netdev v0 || { echo "rdma link add failed"; return 1; }
	[[ -e /sys/class/infiniband/rxe0 ]] || { echo "rxe0 did not appear"; return 1; }
}
if out=$(setup_rxe 2>&1); then
	echo ok > "$R/rxe.status"
	say "rxe0 up on v0 (10.99.0.1)"
else
	printf 'failed: %s\n' "$out" > "$R/rxe.status"
	say "rxe setup failed: $out"
	modprobe ib_core 2>/dev/null
fi

# --- siw (iWARP) in the debug guest, beside rxe0: its modules and its own
#     veth pair s0/s1 (10.99.1.1 on s0); siw0 is added once here to prove
#     it starts, then deleted: the siw-* tests add it for their run
#     (tests/vm/siw-run.sh), so every other test still sees one adapter.
#     The stock kernel has no siw. ---
setup_siw() {
	modprobe siw || { echo "modprobe siw failed"; return 1; }
	ip link add s0 type veth peer name s1 &&
	ip addr add 10.99.1.1/24 dev s0 &&
	ip link set s0 up && ip link set s1 up || { echo "veth setup failed"; return 1; }
	rdma link add siw0 type siw netdev s0 || { echo "rdma link add siw0 failed"; return 1; }
	[[ -e /sys/class/infiniband/siw0 ]] || { echo "siw0 did not appear"; return 1; }
	rdma link delete siw0 || { echo "rdma link delete siw0 failed"; return 1; }
}
if [[ "${NDK_GUEST:-stock}" != debug ]]; then
	echo "not the debug guest (the stock kernel has no siw)" > "$R/siw.status"
elif out=$(setup_siw 2>&1); then
	echo ok > "$R/siw.status"
	say "siw ready on s0 (10.99.1.1)"
else
	printf 'failed: %s\n' "$out" > "$R/siw.status"
	say "siw setup failed: $out"
fi

if ! out=$(insmod "$NDK_KO" 2>&1); then
	say "insmod $NDK_KO failed: $out"
	printf 'failed: insmod: %s\n' "$out" > "$R/module.status"
else
	echo ok > "$R/module.status"
	say "ndk.ko loaded"
fi

# --- the tests ---
[[ -r "$NDK_LIST" ]] || say "test list $NDK_LIST not readable"
pass=0 fail=0 skip=0 tmo_scale=${NDK_VM_TIMEOUT_SCALE:-1}
while IFS=$'\t' read -r name tmo cmd; do
	[[ -z "$name" || "$name" == \#* ]] && continue
	if [[ -n "${NDK_VM_ONLY:-}" && ! "$name" =~ $NDK_VM_ONLY ]]; then
		continue
	fi
	log="$R/$name.log"
	if [[ $tmo_scale =~ ^[0-9]+$ ]]; then
		tmo=$((tmo * tmo_scale))
	else
		tmo=$(awk -v t="$tmo" -v s="$tmo_scale" 'BEGIN { printf "%d", t * s }')
	fi
	ndk_judge "$name" "$tmo" bash -c "$cmd"
	rc=$?
	secs=$ndk_judge_secs
	case $rc in
	0) pass=$((pass + 1)); say "PASS $name (${secs} s)" ;;
	77) skip=$((skip + 1)); say "SKIP $name: $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); say "FAIL $name (rc $rc)"; tail -n 20 "$log" | sed 's/^/guest:   /' ;;
	esac
done < "$NDK_LIST"

# --- the end of the run: unload, then the whole log ---
if lsmod | grep -q '^ndk '; then
	out=$(rmmod ndk 2>&1)
	rc=$?
else
	out="ndk was not loaded at the end of the run" rc=1
fi
printf '%s\n' "$out" > "$R/module-unload.log"
echo "$rc" > "$R/module-unload.rc"
((rc == 0)) && say "rmmod ndk: ok" || say "rmmod ndk FAILED: $out"

kmsg "run end"
dmesg > "$R/dmesg.txt"
rc=0
sed -n '/ndk-testbed: setup begin$/,$p' "$R/dmesg.txt" | "$NDK_SRC/tests/testbed/check-dmesg.sh" \
	> "$R/dmesg-clean.log" || rc=1
if [[ -w /sys/kernel/debug/kmemleak ]]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	if [[ -s /sys/kernel/debug/kmemleak ]]; then
		cat /sys/kernel/debug/kmemleak >> "$R/dmesg-clean.log"
		rc=1
	fi
	say "kmemleak: scanned twice at the end of the run"
fi
# lockdep turns itself off after its first report: it must still be on.
if [[ -r /proc/lockdep_stats ]]; then
	if ! grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats; then
		echo "lockdep: debug_locks is off at the end of the run" >> "$R/dmesg-clean.log"
		rc=1
	fi
	say "lockdep: $(grep -E 'debug_locks|lock-classes' /proc/lockdep_stats | tr -s ' ' | paste -sd, -)"
fi
echo "$rc" > "$R/dmesg-clean.rc"
((rc == 0)) && say "kernel log: clean" || { say "kernel log: PROBLEMS"; cat "$R/dmesg-clean.log"; }

say "$pass passed, $fail failed, $skip skipped"
echo complete > "$R/runner.status"
