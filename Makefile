# SPDX-License-Identifier: GPL-2.0
#
# ndk-linux: a thin dispatcher.  kbuild builds the module (kmod/), CMake
# builds the user side and drives CTest (build/).
#
#   make demo       install what is missing, build, boot the guest, show
#                   the adapters and version through libndk
#   make check      install what is missing, build, run every test
#   make unit       host tests only (label unit)
#   make test T=<name> [DEBUG=1]  one test of any tier by its CTest name
#                   or a vm test's short name (scripts/test.sh)
#   make vm-check   guest tests only (label vm)
#   make check-all  what CI runs: make check (with the debug kernel building
#                   beside it), then make check-debug's CI subset
#   make check-debug  the vm tests again on the debug kernel (KASAN, lockdep,
#                   kmemleak, fault injection), built once and cached
#                   (scripts/debug-kernel.sh, Documentation/reliability.md)
#   make install    install libndk, its headers, pkg-config and CMake
#                   package files, the tools, man pages, the udev rule
#                   (install-lib) and the module: source for DKMS, consumer
#                   header and Module.symvers (install-kmod); PREFIX, DESTDIR
#   make bench      the benchmark suite in one guest boot: bench-results/
#                   (Documentation/performance.md); make bench-smoke: the
#                   short run, build/bench-smoke/; make bench-ab
#                   BENCH_AB_BASE=REV: F1 and D1 of this tree's modules
#                   against REV's, loaded in turn in one boot: bench-ab/
#                   (BENCH_AB_ICOUNT=1: instructions instead of time)
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
NDK_VERSION := $(shell grep -o 'ndk-linux VERSION [0-9.]*' CMakeLists.txt | cut -d' ' -f3)

# Each phase prints its wall time (.ci/run and the README rely on it).
phase = @echo "==> $(1)"; start=$$(date +%s); if $(2); then echo "==> $(1): done in $$(( $$(date +%s) - start )) s"; \
	else echo "==> $(1): FAILED after $$(( $$(date +%s) - start )) s"; exit 1; fi

all: kmod lib

deps:
	$(call phase,dependencies,scripts/deps.sh)

# The consumers of ndk.ko (tests/kmod, samples/) must be re-linked when its
# symbol CRCs change; kbuild 6.1 does not notice a changed
# KBUILD_EXTRA_SYMBOLS by itself: drop their Module.symvers when stale.
ndk_relink = for d in tests/kmod tests/bench/kmod samples/ndk_sample samples/ndkblk; do [ $$d/Module.symvers -nt kmod/Module.symvers ] || rm -f $$d/Module.symvers; done

kmod: deps
	$(call phase,kernel modules (kbuild W=1),$(MAKE) -C kmod W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)) && $(ndk_relink) && $(MAKE) -C tests/kmod W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)) && $(MAKE) -C samples/ndk_sample W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)) && $(MAKE) -C samples/ndkblk W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)) && $(MAKE) -C tests/bench/kmod W=1 NDK_WERROR=y $(if $(KDIR),KDIR=$(KDIR)))

lib: deps
	$(call phase,user space (cmake),cmake -S . -B $(BUILD) -DNDK_VM_INJECT=$(NDK_VM_INJECT) > /dev/null && cmake --build $(BUILD) -j $(JOBS))

check: kmod lib
	$(call phase,tests (ctest),ctest --test-dir $(BUILD) -LE debug-only --output-on-failure $(CTEST_ARGS))

unit: lib
	$(call phase,unit tests,ctest --test-dir $(BUILD) -L unit --output-on-failure $(CTEST_ARGS))

test: kmod lib
	$(call phase,test $(T),scripts/test.sh $(BUILD) '$(T)' '$(DEBUG)')

vm-check: kmod lib
	$(call phase,vm tests,ctest --test-dir $(BUILD) -L vm -LE debug-only --output-on-failure $(CTEST_ARGS))

# The debug tier: build (or reuse) the debug guest kernel, rebuild the
# modules for it in $(BUILD)/debug-src, run every vm test on it (or only
# the tests NDK_DEBUG_ONLY names, a |-separated list).  Tests scale their
# iteration counts by NDK_STRESS_SCALE and their timeouts by
# NDK_VM_TIMEOUT_SCALE: KASAN and lockdep under TCG are ~10x slower.
NDK_DEBUG_ENV = NDK_GUEST=debug NDK_KO_TREE=$(abspath $(BUILD))/debug-src NDK_STRESS_SCALE=0.2 \
	NDK_VM_BOOT_ATTEMPTS=5 NDK_VM_BOOT_TIMEOUT=180 \
	NDK_VM_TIMEOUT_SCALE=6 NDK_VM_TIMEOUT=4200
NDK_DEBUG_ONLY ?=
ndk_debug_select = $(if $(NDK_DEBUG_ONLY),NDK_VM_ONLY='^($(NDK_DEBUG_ONLY))$$' ctest --test-dir $(BUILD) \
	-R 'vm\.(boot|module-unload|dmesg-clean|$(NDK_DEBUG_ONLY))$$',ctest --test-dir $(BUILD) -L vm)
check-debug: kmod lib
	$(call phase,debug guest kernel,scripts/debug-kernel.sh > /dev/null)
	$(call phase,modules for the debug kernel,scripts/debug-modules.sh $(BUILD)/debug-src)
	$(call phase,vm tests on the debug kernel,$(NDK_DEBUG_ENV) $(ndk_debug_select) --output-on-failure $(CTEST_ARGS))

# CI: the stock tiers, then the debug tier's CI subset (Documentation/
# reliability.md, "The debug-kernel tier in CI"): the reliability, memory
# and lifetime tests and the security tests (Documentation/security.md)
# but those whose subject is accounting or access logic the two kernels
# share (sec-access-matrix, sec-listen-backlog, sec-memcg*) and
# ndkblk-lifecycle (the sec-ndkblk-* tests load and unload ndkblk
# there) and sec-kill-isolation-loaded (an ordering the two kernels
# share, under CPU hogs: 500 s on the debug kernel against 20 s): the
# stock tier runs them all, and `make check-debug` runs every test on the
# debug kernel (Documentation/testing.md, "CI budget").  A new sec-* test
# joins this list by name.
NDK_DEBUG_CI = dev-open|ioctl-abi|uring|uring-deferred-fill|uobj-handles|uobj-busy|uobj-mem|uobj-removal|uverbs|ucache|unplug-stress|fault-sweep|rxe-unload-stress|module-cycles|module-busy|rel-fuzz|rel-races|rel-isolation|rel-memory|netlink|k-mr-register|k-mr-register-invalid|k-mr-lifetime|k-fr-params|k-fr-rotation|k-mw-params|k-mw-lifetime|k-qp-close-drain|k-cq-direct|k-cq-close-in-callback|k-cm-dp-unsignaled|k-cm-dp-unsignaled-close|siw-cm-dp-unsignaled-close|siw-cm-dp-read-flush|siw-cq-limits|k-cm-dp-flush-race|siw-cm-dp-flush-race|k-cm-close-order|removal-live-objects|removal-in-callback|k-fr-reinit-race|sec-bind-close-release|sec-cm-foreign-bind|sec-cm-ports|sec-cq-notify-close|sec-cq-tasklet|sec-flushed-bind|sec-fr-reinit-race|sec-lifecycle-fuzz|sec-ndkblk-double-answer|sec-ndkblk-hostile|sec-ndkblk-silent-target|sec-netlink-reader|sec-pin-remap-race|sec-qp-destroy-resolves|sec-qp-two-connectors|sec-removal-fault|sec-removal-fault-register|sec-removal-race|sec-token-window|sec-uffd-mappings|siw-mr-register|siw-mr-register-invalid|siw-mr-lifetime|siw-fr-params|siw-fr-traffic|siw-mw-traffic|siw-fr-rotation|siw-mw-lifetime|siw-mw-params|reg-user-lazy|reg-user-modes|k-mr-classes|k-mr-huge-chunks|k-mdl-runs|k-mr-join-mid-page|k-mr-full-page-list|siw-mr-full-page-list|k-mr-register-async|siw-mr-register-async|k-reg-qp-refuse|siw-reg-qp-refuse|siw-cm-dp-silent-read-fail|siw-cq-direct-post-error|siw-cm-dp-refused-run|siw-cm-dp-inline-sges|k-fr-defer-inval|siw-fr-defer-inval|siw-sec-user|k-mw-fenced-read|siw-mw-fenced-read|k-fr-failed-reg|siw-fr-failed-reg|siw-mr-read-only|siw-cm-connect-stall|sec-inval-fence|sec-event-bound|sec-netlink-exec|uverbs-slow-kill|sec-rdma-cgroup|sec-netlink-walk|sec-netlink-files|sec-cq-fences|sec-qp-foreign-adapter|sec-recv-imm|k-fr-init-pending|siw-fr-init-pending|sec-removal-fanout|sec-foreign-release|k-cq-resize-close|k-cm-dp-unsignaled-flush|k-cm-dp-unsignaled-flush-shared|k-cm-dp-unsignaled-disconnect|k-cm-dp-unsignaled-small-cq|k-cm-rej-established|sec-kill-isolation|k-cm-accept-closed-early|k-pd-close-in-create|siw-wsp-socket|siw-qp-post-params|siw-cm-dp-inline-max
# The debug kernel and then the modules for it build in the background
# while the stock tiers run: a TCG guest and a kernel build share the two
# cores at little cost to either (Documentation/testing.md, "CI budget"),
# which keeps a fresh machine's CI under an hour.  check-debug's module
# phase then only finds them built.  A failing stock tier stops the build.
NDK_KBUILD_LOG = $(BUILD)/debug-kernel.log
check-all: kmod lib
	@echo "==> debug guest kernel and its modules (beside the stock tiers)"; start=$$(date +%s); \
	setsid sh -c 'scripts/debug-kernel.sh > /dev/null && scripts/debug-modules.sh $(BUILD)/debug-src > /dev/null' \
		2> $(NDK_KBUILD_LOG) & kpid=$$!; \
	$(MAKE) check || { kill -- -$$kpid 2> /dev/null; wait $$kpid; exit 1; }; \
	if wait $$kpid; then \
		echo "==> debug guest kernel and its modules (beside the stock tiers): done in $$(( $$(date +%s) - start )) s"; \
	else \
		tail -n 40 $(NDK_KBUILD_LOG); \
		echo "==> debug guest kernel and its modules (beside the stock tiers): FAILED after $$(( $$(date +%s) - start )) s"; \
		exit 1; \
	fi
	$(MAKE) check-debug NDK_DEBUG_ONLY='$(NDK_DEBUG_CI)'

demo: kmod lib
	$(call phase,demo in the guest,scripts/demo.sh $(BUILD))

# The benchmark suite (Documentation/performance.md): one guest boot,
# every measure against its baseline, bench-results/ (or
# $(BUILD)/bench-smoke/ for the short run that only checks each measure
# produced a number).  BENCH_ONLY=r1,u1 runs those measures only.
bench: kmod lib
	$(call phase,benchmarks in the guest,scripts/bench.sh --build $(BUILD) $(if $(BENCH_ONLY),--only $(BENCH_ONLY)))

bench-smoke: kmod lib
	$(call phase,benchmark smoke run in the guest,scripts/bench.sh --smoke --build $(BUILD) $(if $(BENCH_ONLY),--only $(BENCH_ONLY)))

# A kernel change against BENCH_AB_BASE (a git revision), F1 and D1 with
# the two module builds loaded in turn in one boot: bench-ab/ab.md.
bench-ab: kmod lib
	$(call phase,module A/B in the guest,scripts/bench-ab.sh --base "$(or $(BENCH_AB_BASE),HEAD)" --build $(BUILD) $(if $(BENCH_ONLY),--only $(BENCH_ONLY)) $(if $(BENCH_AB_ICOUNT),--icount))

install: install-lib install-kmod

install-lib: lib
	$(call phase,install into $(DESTDIR)$(PREFIX),DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)")

# Documentation/install.md: DKMS source tree, consumer header, Module.symvers.
install-kmod: kmod
	$(call phase,install the module,scripts/install-kmod.sh $(CURDIR) $(NDK_VERSION) "$(PREFIX)" "$(DESTDIR)")

checkpatch:
	scripts/checkpatch.sh

format:
	clang-format -i $$(git ls-files 'lib/*.[ch]pp' 'tests/*.[ch]pp')

clean:
	-$(MAKE) -C kmod clean
	-$(MAKE) -C tests/kmod clean
	-$(MAKE) -C samples/ndk_sample clean
	-$(MAKE) -C samples/ndkblk clean
	-$(MAKE) -C tests/bench/kmod clean
	rm -rf $(BUILD)

.PHONY: all deps kmod lib check unit test vm-check check-debug check-all demo install install-lib install-kmod checkpatch format clean
.PHONY: bench bench-smoke bench-ab
