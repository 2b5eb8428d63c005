# SPDX-License-Identifier: BSD-2-Clause
#
# `make install` (cmake --install build [--prefix P], DESTDIR honoured):
#   lib/libndk.so.X.Y.Z + SONAME link libndk.so.0 + dev link libndk.so
#   include/ndk/*.hpp and include/ndk/ndk_ioctl.h (the uapi header)
#   lib/pkgconfig/libndk.pc             pkg-config --cflags --libs libndk
#   lib/cmake/ndk/ndkConfig*.cmake      find_package(ndk) -> ndk::ndk
#   bin/ndkinfo, ndk, ndk-demo, ndk-target (RUNPATH $ORIGIN/../lib)
#   share/man/man1/ndkinfo.1, man8/ndk.8, man3/libndk.3 + ndk_*.3 (dev)
# The pkg-config and CMake files find the prefix relative to where they
# are installed, so a tree installed with DESTDIR or moved elsewhere works
# as it is (tests/install/install-test.sh checks both ways).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

target_include_directories(ndk INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# The public headers are C++20 (std::span, operator== = default).
target_compile_features(ndk PUBLIC cxx_std_20)

install(TARGETS ndk EXPORT ndkTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev)
install(DIRECTORY include/ndk DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
  FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_SOURCE_DIR}/uapi/ndk/ndk_ioctl.h ${PROJECT_SOURCE_DIR}/uapi/ndk/ndk_netlink.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ndk COMPONENT dev)

set(ndk_tools)
foreach(t ndkinfo ndk-tool ndk-demo ndk-target)
  if(TARGET ${t})
    list(APPEND ndk_tools ${t})
  endif()
endforeach()
file(RELATIVE_PATH ndk_bin_to_lib /x/${CMAKE_INSTALL_BINDIR} /x/${CMAKE_INSTALL_LIBDIR})
set_target_properties(${ndk_tools} PROPERTIES INSTALL_RPATH "$ORIGIN/${ndk_bin_to_lib}")
install(TARGETS ${ndk_tools} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

set(ndk_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ndk)
install(EXPORT ndkTargets NAMESPACE ndk:: FILE ndkTargets.cmake
  DESTINATION ${ndk_cmake_dir} COMPONENT dev)
configure_package_config_file(ndkConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/ndkConfig.cmake
  INSTALL_DESTINATION ${ndk_cmake_dir})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ndkConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ndkConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/ndkConfigVersion.cmake
  DESTINATION ${ndk_cmake_dir} COMPONENT dev)

# pkg-config: prefix from the .pc file's own place (${pcfiledir}).
file(RELATIVE_PATH ndk_pc_to_prefix /x/${CMAKE_INSTALL_LIBDIR}/pkgconfig /x)
string(REGEX REPLACE "/$" "" ndk_pc_to_prefix "${ndk_pc_to_prefix}")
configure_file(libndk.pc.in ${CMAKE_CURRENT_BINARY_DIR}/libndk.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/libndk.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# Manual pages, and the udev rule for /dev/ndk (group rdma, 0660).  udev
# reads /usr/lib/udev/rules.d and /etc/udev/rules.d only: with another
# prefix, point NDK_UDEV_RULES_DIR at one (an absolute path is taken as
# is, a relative one is under the prefix).
install(FILES ${PROJECT_SOURCE_DIR}/Documentation/man/ndk.8
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/Documentation/man/ndkinfo.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
# The library's pages (libndk.3, one ndk_<Class>.3 per public class) go
# with its headers; globbed at install time, so a new page needs no edit.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/Documentation/man/
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man3 COMPONENT dev
  FILES_MATCHING PATTERN "*.3")
set(NDK_UDEV_RULES_DIR "lib/udev/rules.d" CACHE STRING "Where 60-ndk.rules is installed")
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/60-ndk.rules
  DESTINATION ${NDK_UDEV_RULES_DIR} COMPONENT runtime)
