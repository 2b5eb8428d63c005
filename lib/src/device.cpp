// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/device.hpp"

#include <fcntl.h>
#include <ndk/ndk_ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "sys.hpp"

namespace ndk {

Result<Device> Device::Open(const char* path) {
    int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return Error::FromErrno(errno);
    Device dev(fd);
    auto info = dev.QueryInfo();
    if (!info) return info.error();
    if (info->abi_version != NDK_U_ABI_VERSION) return Error::FromErrno(EPROTO);
    dev.info_ = *info;
    return dev;
}

Device::Device(Device&& other) noexcept : fd_(std::exchange(other.fd_, -1)), info_(other.info_) {}

Device& Device::operator=(Device&& other) noexcept {
    if (this != &other) {
        (void)Close();
        fd_ = std::exchange(other.fd_, -1);
        info_ = other.info_;
    }
    return *this;
}

Device::~Device() { (void)Close(); }

Result<void> Device::Close() noexcept {
    int fd = std::exchange(fd_, -1);
    if (fd < 0) return {};
    // Linux releases the descriptor even when close() fails: never retry.
    if (::close(fd) < 0) return Error::FromErrno(errno);
    return {};
}

Result<DeviceInfo> Device::QueryInfo() const {
    ndk_u_query_info q{};
    if (auto r = detail::Ioctl(fd_, NDK_IOCTL_QUERY_INFO, &q); !r) return r.error();
    return DeviceInfo{q.abi_version, q.features, q.adapter_count};
}

namespace {

Result<AdapterDescription> AdapterQuery(int fd, std::uint32_t id, std::uint32_t flags) {
    ndk_u_adapter_query q{};
    q.adapter_id = id;
    q.flags = flags;
    if (auto r = detail::Ioctl(fd, NDK_IOCTL_ADAPTER_QUERY, &q); !r) return r.error();
    const char* name = reinterpret_cast<const char*>(q.name);
    return AdapterDescription{q.adapter_id, std::string(name, strnlen(name, sizeof(q.name))),
                              q.node_guid, q.ib_index, q.port_count};
}

}  // namespace

Result<AdapterDescription> Device::QueryAdapter(std::uint32_t id) const {
    return AdapterQuery(fd_, id, 0);
}

Result<std::vector<AdapterDescription>> Device::ListAdapters() const {
    std::vector<AdapterDescription> out;
    std::uint64_t next = 0;
    while (next <= UINT32_MAX) {
        auto a = AdapterQuery(fd_, static_cast<std::uint32_t>(next), NDK_U_ADAPTER_QUERY_F_NEXT);
        if (!a) {
            if (a.error().errnum == ENOENT) break;
            return a.error();
        }
        next = std::uint64_t{a->id} + 1;
        out.push_back(std::move(*a));
    }
    return out;
}

}  // namespace ndk
