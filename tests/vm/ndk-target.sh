#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm test: ndk-target (libndk) serves a buffer through memory windows to a
# plain librdmacm/libibverbs peer (verbs-peer, no libndk), over rxe0.
#   ndk-target.sh <ndk-target> <verbs-peer>
# Target A (--access rw, 7 connections): a write inside the window and a
# read of it back, writes and reads one byte before and past the window
# refused, a second write inside; then it exits by itself and its sha256
# must be the one of the buffer the test expects.  Target B (--access r,
# stopped with SIGTERM): a write refused, a read of zeros.  Target C
# (--reopen, 2 connections): a write, then rxe0 is deleted and added
# again; the target must wait, listen again by itself and serve the
# buffer unchanged (a read of what was written), then exit 0.  Target D
# (--reopen) gets SIGTERM while it waits and exits 0.  Every
# connection must get a token of its own.
set -u
target=$1 peer=$2
addr=10.99.0.1
work=$(mktemp -d)
netdev=$(rdma link show rxe0/1 | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
# Whatever happens, rxe0 is back for the tests after this one.
trap 'kill "$tpid" 2>/dev/null; rdma link show rxe0/1 > /dev/null 2>&1 ||
	rdma link add rxe0 type rxe netdev "$netdev"; rm -rf "$work"' EXIT
tpid=
checks=0 failed=0

check() { # check DESCRIPTION COMMAND...
	checks=$((checks + 1))
	if "${@:2}"; then
		echo "ok: $1"
	else
		echo "FAIL: $1"
		failed=$((failed + 1))
	fi
}

sha_py() { # sha_py PYTHON-EXPRESSION-OF-BYTES
	python3 -c "import hashlib; b = $1; print(hashlib.sha256(bytes(b)).hexdigest())"
}

# last_port FILE: the port of the last "listening ADDR:PORT" line.
last_port() {
	sed -n 's/^listening .*:\([0-9]*\)$/\1/p' "$1" | tail -n 1
}

# start_target NAME ARGS...: runs ndk-target in the background, waits for
# its "listening ADDR:PORT" line, sets $tpid and $port.
start_target() {
	local name=$1 i
	shift
	"$target" --listen "$addr:0" "$@" > "$work/$name.out" 2> "$work/$name.err" &
	tpid=$!
	port=
	for ((i = 0; i < 100; i++)); do
		port=$(last_port "$work/$name.out")
		[[ -n "$port" ]] && break
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	echo "== ndk-target $name: $* (pid $tpid, port ${port:-none})"
	[[ -n "$port" ]]
}

# wait_target NAME: waits up to 30 s for it to exit; prints its output;
# sets $trc and $tsha.
wait_target() {
	local name=$1 i
	for ((i = 0; i < 300; i++)); do
		kill -0 "$tpid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$tpid" 2>/dev/null; then
		echo "ndk-target $name still running: killing it"
		kill -KILL "$tpid"
	fi
	wait "$tpid"
	trc=$?
	tpid=
	sed "s/^/  $name: /" "$work/$name.out" "$work/$name.err"
	tsha=$(sed -n 's/^sha256 \([0-9a-f]\{64\}\)$/\1/p' "$work/$name.out")
}

tokens=()
# peer EXPECT OP ARGS...: one connection of verbs-peer; records its token
# and, for reads, sets $rsha.
peer() {
	local expect=$1 out rc
	shift
	out=$("$peer" --expect "$expect" "$addr:$port" "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  peer: /'
	tokens+=("$(echo "$out" | sed -n 's/^descriptor .* token \(0x[0-9a-f]*\) .*/\1/p')")
	rsha=$(echo "$out" | sed -n 's/^sha256 \([0-9a-f]\{64\}\)$/\1/p')
	desc_len=$(echo "$out" | sed -n 's/^descriptor .* length \([0-9]*\)$/\1/p')
	return $rc
}

# --- target A: read-write window 4096:8192 of 64 KiB, 7 connections ------
if check "ndk-target A listens" start_target A --size 65536 --window 4096:8192 --access rw \
	--connections 7; then
	check "write 8192 bytes of 0x5a over the window" peer ok write 0 8192 0x5a
	check "the descriptor's length is the window's" test "$desc_len" = 8192
	check "read the window back" peer ok read 0 8192
	check "what was read is what was written" test "$rsha" = "$(sha_py 'b"\x5a" * 8192')"
	check "write one byte before the window: refused" peer error write -1 1 0x11
	check "write one byte past the window: refused" peer error write 8192 1 0x22
	check "read across the window's start: refused" peer error read -1 2
	check "read across the window's end: refused" peer error read 8191 2
	check "write 16 bytes of 0x33 at 100" peer ok write 100 16 0x33
	wait_target A
	check "ndk-target A exits 0 after 7 connections" test "$trc" = 0
	expected=$(sha_py 'bytearray(65536); b[4096:12288] = b"\x5a" * 8192; b[4196:4212] = b"\x33" * 16')
	echo "  expected sha256 $expected"
	check "ndk-target A's buffer is the expected one" test "$tsha" = "$expected"
fi

# --- target B: read-only window, stopped by SIGTERM ----------------------
if check "ndk-target B listens" start_target B --size 65536 --window 0:4096 --access r; then
	check "write into a read-only window: refused" peer error write 0 16 0x77
	check "read from a read-only window" peer ok read 0 16
	check "what was read is zeros" test "$rsha" = "$(sha_py 'bytes(16)')"
	check "connect once more" peer ok info
	kill -TERM "$tpid"
	wait_target B
	check "ndk-target B exits 0 on SIGTERM" test "$trc" = 0
	check "ndk-target B's buffer is still all zeros" test "$tsha" = "$(sha_py 'bytes(65536)')"
fi

# --- target C: the adapter removed and added again under --reopen -------
# wait_for FILE PATTERN SECONDS: until a line of FILE matches.
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}
# A new rxe0 numbers its keys afresh: C's tokens may repeat A's and B's.
ntokens=${#tokens[@]}
if check "ndk-target C listens" start_target C --size 65536 --window 0:8192 --access rw \
	--adapter rxe0 --reopen --connections 2; then
	check "write 4096 bytes of 0x6b" peer ok write 0 4096 0x6b
	first_port=$port
	check "rdma link delete rxe0" rdma link delete rxe0
	check "ndk-target C waits for its adapter" \
		wait_for "$work/C.out" '^adapter removed: waiting' 20
	check "ndk-target C still runs" kill -0 "$tpid"
	check "rdma link add rxe0" rdma link add rxe0 type rxe netdev "$netdev"
	for ((i = 0; i < 300; i++)); do
		[[ $(grep -c '^listening' "$work/C.out") -ge 2 ]] && break
		sleep 0.1
	done
	check "ndk-target C listens again after the add" \
		test "$(grep -c '^listening' "$work/C.out")" = 2
	port=$(last_port "$work/C.out")
	echo "  port $first_port before the removal, $port after"
	check "read back what was written before the removal" peer ok read 0 4096
	check "it is what was written" test "$rsha" = "$(sha_py 'b"\x6b" * 4096')"
	wait_target C
	check "ndk-target C exits 0 after 2 connections" test "$trc" = 0
	check "ndk-target C's buffer is the expected one" \
		test "$tsha" = "$(sha_py 'b"\x6b" * 4096 + bytes(65536 - 4096)')"
fi
# Target D: a signal while it waits for its adapter stops it with 0.
if check "ndk-target D listens" start_target D --size 4096 --window 0:4096 --access r \
	--adapter rxe0 --reopen; then
	check "rdma link delete rxe0 (D)" rdma link delete rxe0
	check "ndk-target D waits for its adapter" \
		wait_for "$work/D.out" '^adapter removed: waiting' 20
	kill -TERM "$tpid"
	wait_target D
	check "ndk-target D exits 0 on SIGTERM while it waits" test "$trc" = 0
	check "ndk-target D reported the signal" grep -q '^signal .*: stopping' "$work/D.out"
	check "rdma link add rxe0 (D)" rdma link add rxe0 type rxe netdev "$netdev"
fi
tokens=("${tokens[@]:0:ntokens}")

# Every connection of A and B had a window token of its own.
n=${#tokens[@]}
uniq=$(printf '%s\n' "${tokens[@]}" | grep -c . | tr -d ' ')
distinct=$(printf '%s\n' "${tokens[@]}" | grep . | sort -u | wc -l | tr -d ' ')
echo "tokens: ${tokens[*]}"
check "every connection got a token ($uniq of $n)" test "$uniq" = "$n"
check "the $n tokens all differ" test "$distinct" = "$n"

echo "$((checks - failed)) passed, $failed failed"
((failed == 0))
