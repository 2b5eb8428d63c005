#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make test T=<name> [DEBUG=1]: run one test of any tier by its name, with
# no regular expression to write.  <name> is a CTest name as
# `ctest --test-dir build -N` lists it (RegClass.Fits, kmod.checkpatch,
# vm.uobj-mem) or a vm test's name without "vm." (uobj-mem,
# k-fr-rotation).  A vm test runs in one guest boot with vm.boot,
# vm.module-unload and vm.dmesg-clean around it, on the debug kernel when
# DEBUG=1 or when the test exists only there (label debug-only: siw-*,
# fault-sweep).  Exit status: the test's; 2 when no test has that name.
set -u
build=$1 t=$2 debug=${3:-}
if [[ -z "$t" ]]; then
	echo "usage: make test T=<name> [DEBUG=1] (names: ctest --test-dir $build -N)" >&2
	exit 2
fi
list() { ctest --test-dir "$build" -N "$@" | sed -n 's/^ *Test *#[0-9]*: //p'; }
names=$(list)
if grep -qxF -- "$t" <<< "$names"; then
	name=$t
elif grep -qxF -- "vm.$t" <<< "$names"; then
	name=vm.$t
else
	echo "test: no test named \"$t\" (ctest --test-dir $build -N lists them)" >&2
	exit 2
fi
# The name as a regular expression matching only itself.
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }
case $name in
vm.*)
	short=$(re "${name#vm.}")
	if [[ "$debug" == 1 ]] || list -L debug-only | grep -qxF -- "$name"; then
		exec make --no-print-directory check-debug BUILD="$build" NDK_DEBUG_ONLY="$short"
	fi
	NDK_VM_ONLY="^($short)\$" exec ctest --test-dir "$build" \
		-R "^vm\\.(boot|$short|module-unload|dmesg-clean)\$" --output-on-failure
	;;
*)
	exec ctest --test-dir "$build" -R "^$(re "$name")\$" --output-on-failure
	;;
esac
