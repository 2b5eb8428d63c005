# SPDX-License-Identifier: GPL-2.0
#
# ndk-linux: a thin dispatcher.  kbuild builds the module (kmod/), CMake
# builds the user side and drives CTest (build/).
#
#   make demo       install what is missing, build, boot the guest, show
#                   the adapters and version through libndk
#   make check      install what is missing, build, run every test
#   make unit       host tests only (label unit)
#   make vm-check   guest tests only (label vm)
#   make install    install libndk, its headers, pkg-config and CMake
#                   package files and the tools (PREFIX, DESTDIR)
#   make bench      the benchmark suite in one guest boot: bench-results/
#                   (Documentation/performance.md); make bench-smoke: the
#                   short run, build/bench-smoke/
#   make kmod | lib | deps | checkpatch | format | clean
#
# Variables: KDIR (kernel build tree; default: the newest installed Debian
# guest kernel), BUILD (build/), NDK_VM_ONLY (regex: run only these vm
# tests), NDK_VM_INJECT (fail|warn: add a broken vm test, see
# Documentation/testing.md), V=1 (verbose), PREFIX (/usr/local) and
# DESTDIR (staging root) for make install.

BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
NDK_VM_INJECT ?=
CTEST_ARGS ?=
JOBS ?= $(shell nproc)

# Each phase prints its wall time (.ci/run and the README rely on it).
phase = @echo "==> $(1)"; start=$$(date +%s); $(2) && echo "==> $(1): done in $$(( $$(date +%s) - start )) s"

all: kmod lib

deps:
	$(call phase,dependencies,scripts/deps.sh)

# The consumers of ndk.ko (tests/kmod, samples/) must be re-linked when its
# symbol CRCs change; kbuild 6.1 does not notice a changed
# KBUILD_EXTRA_SYMBOLS by itself: drop their Module.symvers when stale.
ndk_relink = for d in tests/kmod tests/bench/kmod samples/ndk_sample; do [ $$d/Module.symvers -nt kmod/Module.symvers ] || rm -f $$d/Module.symvers; done

kmod: deps
	$(call phase,kernel modules (kbuild W=1),$(MAKE) -C kmod W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)) && $(ndk_relink) && $(MAKE) -C tests/kmod W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)) && $(MAKE) -C samples/ndk_sample W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)) && $(MAKE) -C tests/bench/kmod W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)))

lib: deps
	$(call phase,user space (cmake),cmake -S . -B $(BUILD) -DNDK_VM_INJECT=$(NDK_VM_INJECT) > /dev/null && cmake --build $(BUILD) -j $(JOBS))

check: kmod lib
	$(call phase,tests (ctest),ctest --test-dir $(BUILD) --output-on-failure $(CTEST_ARGS))

unit: lib
	$(call phase,unit tests,ctest --test-dir $(BUILD) -L unit --output-on-failure $(CTEST_ARGS))

vm-check: kmod lib
	$(call phase,vm tests,ctest --test-dir $(BUILD) -L vm --output-on-failure $(CTEST_ARGS))

demo: kmod lib
	$(call phase,demo in the guest,scripts/demo.sh $(BUILD))

# The benchmark suite (Documentation/performance.md): one guest boot,
# every measure against its baseline, bench-results/ (or
# $(BUILD)/bench-smoke/ for the short run that only checks each measure
# produced a number).
bench: kmod lib
	$(call phase,benchmarks in the guest,scripts/bench.sh --build $(BUILD))

bench-smoke: kmod lib
	$(call phase,benchmark smoke run in the guest,scripts/bench.sh --smoke --build $(BUILD))

install: lib
	$(call phase,install into $(DESTDIR)$(PREFIX),DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)")

checkpatch:
	scripts/checkpatch.sh

format:
	clang-format -i $$(git ls-files 'lib/*.[ch]pp' 'tests/*.[ch]pp')

clean:
	-$(MAKE) -C kmod clean
	-$(MAKE) -C tests/kmod clean
	-$(MAKE) -C samples/ndk_sample clean
	-$(MAKE) -C tests/bench/kmod clean
	rm -rf $(BUILD)

.PHONY: all deps kmod lib check unit vm-check demo install checkpatch format clean
.PHONY: bench bench-smoke
