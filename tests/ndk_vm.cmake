# SPDX-License-Identifier: GPL-2.0
#
# The vm tier's CMake side, shared by every test directory (tests/vm,
# tests/bench, tests/reliability, tests/security, tests/registration,
# tests/pair, all peers under tests/CMakeLists.txt).  One boot (the vm.boot
# fixture) runs every guest test; each vm.<name> CTest test then only reads
# its own verdict, so every test passes, fails or skips on its own.
set(NDK_VM_RESULTS ${CMAKE_BINARY_DIR}/vm-results)
set(NDK_VM_LIST ${CMAKE_BINARY_DIR}/vm-tests.list)
set(NDK_VM_DEBUG_LIST ${CMAKE_BINARY_DIR}/vm-tests-debug.list)
set(NDK_VM_INJECT "" CACHE STRING "Add a deliberately broken vm test: fail or warn")
set_property(GLOBAL PROPERTY NDK_VM_LINES "")
set_property(GLOBAL PROPERTY NDK_VM_DEBUG_LINES "")

# ndk_vm_test(NAME <name> TIMEOUT <s> [DEBUG_ONLY] COMMAND <cmd> [args...])
# COMMAND may use generator expressions; it runs in the guest under bash.
# The guest runs the tests in the order they were declared.
# DEBUG_ONLY: the test needs what only the debug kernel has (fault
# injection, siw); it is registered in the debug tier alone (label
# debug-only, which make check leaves out), so that no tier reports a
# test it can never run as skipped.
function(ndk_vm_test)
  cmake_parse_arguments(T "DEBUG_ONLY" "NAME;TIMEOUT" "COMMAND" ${ARGN})
  list(JOIN T_COMMAND " " cmd)
  if(T_DEBUG_ONLY)
    set_property(GLOBAL APPEND_STRING PROPERTY NDK_VM_DEBUG_LINES
                 "${T_NAME}\t${T_TIMEOUT}\t${cmd}\n")
    ndk_vm_verdict(${T_NAME} debug-only)
  else()
    set_property(GLOBAL APPEND_STRING PROPERTY NDK_VM_LINES "${T_NAME}\t${T_TIMEOUT}\t${cmd}\n")
    ndk_vm_verdict(${T_NAME})
  endif()
endfunction()

# A verdict the guest runner writes (each test's, module unload, kernel log).
# ndk_vm_verdict(<name> [debug-only])
function(ndk_vm_verdict name)
  add_test(NAME vm.${name}
    COMMAND ${PROJECT_SOURCE_DIR}/tests/testbed/vm-result.sh ${NDK_VM_RESULTS} ${name})
  set_tests_properties(vm.${name} PROPERTIES
    LABELS "vm;${ARGN}" FIXTURES_REQUIRED vm SKIP_RETURN_CODE 77 TIMEOUT 30)
endfunction()

# After every directory declared its tests: the guest's lists, the boot
# that runs them, and the test bed's own self-test.
function(ndk_vm_finish)
  # Written by the guest runner after the last test.
  ndk_vm_verdict(module-unload)
  ndk_vm_verdict(dmesg-clean)

  get_property(lines GLOBAL PROPERTY NDK_VM_LINES)
  get_property(debug_lines GLOBAL PROPERTY NDK_VM_DEBUG_LINES)
  file(GENERATE OUTPUT ${NDK_VM_LIST} CONTENT "${lines}")
  file(GENERATE OUTPUT ${NDK_VM_DEBUG_LIST} CONTENT "${debug_lines}")

  add_test(NAME vm.boot
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/vm-run.sh
            --list ${NDK_VM_LIST} --debug-list ${NDK_VM_DEBUG_LIST}
            --results ${NDK_VM_RESULTS} --ko ${NDK_KO}
            --build ${CMAKE_BINARY_DIR})
  # vm-run.sh kills a hung guest after NDK_VM_TIMEOUT (the environment's, as
  # make check-debug sets for the slower debug kernel, or this default);
  # CTest's own limit only backs that up.
  set_tests_properties(vm.boot PROPERTIES
    LABELS vm FIXTURES_SETUP vm RESOURCE_LOCK vm SKIP_RETURN_CODE 77
    TIMEOUT 7200 ENVIRONMENT NDK_VM_TIMEOUT_DEFAULT=${NDK_VM_TIMEOUT})

  # The test bed must be able to fail: a boot of its own runs a failing
  # test, a WARN in ndk.ko and a passing test, and checks each verdict.
  add_test(NAME vm.testbed-selftest
    COMMAND ${PROJECT_SOURCE_DIR}/tests/testbed/vm-selftest.sh ${NDK_KO}
            ${CMAKE_BINARY_DIR}/vm-selftest)
  set_tests_properties(vm.testbed-selftest PROPERTIES
    LABELS vm RESOURCE_LOCK vm SKIP_RETURN_CODE 77 TIMEOUT 900)
endfunction()
