# SPDX-License-Identifier: GPL-2.0
#
# The benchmark suite (Documentation/performance.md): ndk-ubench, the user
# half, and vm.bench-smoke, which runs every measure with tiny sizes in
# the make check boot and fails unless each produced a number.  Included
# from tests/vm/CMakeLists.txt (ndk_vm_test() lives there); the full
# suite is `make bench` (scripts/bench.sh).
find_package(PkgConfig REQUIRED)
pkg_check_modules(NDK_BENCH_VERBS REQUIRED IMPORTED_TARGET libibverbs)
add_executable(ndk-ubench ${CMAKE_CURRENT_LIST_DIR}/ndk_ubench.cpp)
target_link_libraries(ndk-ubench PRIVATE ndk PkgConfig::NDK_BENCH_VERBS)

ndk_vm_test(NAME bench-smoke TIMEOUT 300
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/bench-smoke.sh $<TARGET_FILE:ndk-ubench>)
