// SPDX-License-Identifier: GPL-2.0
// Helpers of the uobj-* guest tests: raw ioctls on /dev/ndk objects, VmPin
// and ndk.ko's debugfs counters.
#pragma once

#include <fcntl.h>
#include <ndk/ndk_ioctl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "t_helpers.hpp"

inline int t_open_ndk() {
    int fd = open("/dev/ndk", O_RDWR | O_CLOEXEC);
    if (fd < 0) perror("open /dev/ndk");
    return fd;
}

// The first adapter's id, or -1.
inline long t_first_adapter(int fd) {
    ndk_u_adapter_query q{};
    q.flags = NDK_U_ADAPTER_QUERY_F_NEXT;
    if (ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &q) != 0) return -1;
    return q.adapter_id;
}

// ADAPTER_OPEN: the handle, or 0 with errno set.
inline std::uint32_t t_adapter_open(int fd, std::uint32_t id) {
    ndk_u_adapter_open a{};
    a.adapter_id = id;
    return ioctl(fd, NDK_IOCTL_ADAPTER_OPEN, &a) == 0 ? a.handle : 0;
}

inline std::uint32_t t_pd_create(int fd, std::uint32_t adapter) {
    ndk_u_pd_create p{};
    p.adapter_handle = adapter;
    return ioctl(fd, NDK_IOCTL_PD_CREATE, &p) == 0 ? p.handle : 0;
}

inline int t_mem_register(int fd, std::uint32_t pd, const void* addr, std::uint64_t len,
                          std::uint32_t flags, ndk_u_mem_register* out = nullptr) {
    ndk_u_mem_register m{};
    m.pd_handle = pd;
    m.flags = flags;
    m.address = reinterpret_cast<std::uintptr_t>(addr);
    m.length = len;
    int rc = ioctl(fd, NDK_IOCTL_MEM_REGISTER, &m);
    if (out) *out = m;
    return rc;
}

inline int t_mem_register_raw(int fd, std::uint32_t pd, std::uint64_t addr, std::uint64_t len,
                              std::uint32_t flags) {
    ndk_u_mem_register m{};
    m.pd_handle = pd;
    m.flags = flags;
    m.address = addr;
    m.length = len;
    return ioctl(fd, NDK_IOCTL_MEM_REGISTER, &m);
}

inline int t_mem_deregister(int fd, std::uint32_t handle, std::uint32_t* left = nullptr) {
    ndk_u_mem_deregister m{};
    m.handle = handle;
    int rc = ioctl(fd, NDK_IOCTL_MEM_DEREGISTER, &m);
    if (left) *left = m.references;
    return rc;
}

inline int t_handle_close(int fd, std::uint32_t handle) {
    ndk_u_handle_close c{};
    c.handle = handle;
    return ioctl(fd, NDK_IOCTL_HANDLE_CLOSE, &c);
}

// VmPin of this process in kB, or -1.
inline long t_vmpin_kb() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmPin:", 0) == 0) return std::stol(line.substr(6));
    return -1;
}

// A debugfs counter of ndk.ko (user_objects, user_pinned_pages), or -1.
inline long t_ndk_counter(const char* name) {
    std::ifstream in(std::string("/sys/kernel/debug/ndk/") + name);
    long v = -1;
    in >> v;
    return in ? v : -1;
}
