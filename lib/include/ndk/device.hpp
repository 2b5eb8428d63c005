// SPDX-License-Identifier: BSD-2-Clause
// ndk::Device: an open /dev/ndk.  Every NDK object a process creates
// through the library belongs to one Device (one open file); closing it
// releases them all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndk/result.hpp"

namespace ndk {

inline constexpr const char* kDefaultDevicePath = "/dev/ndk";

// What NDK_IOCTL_QUERY_INFO reports.
struct DeviceInfo {
    std::uint32_t abi_version = 0;
    std::uint64_t features = 0;
    std::uint32_t adapter_count = 0;
};

// One NDK adapter (one RDMA device) as NDK_IOCTL_ADAPTER_QUERY reports it.
struct AdapterDescription {
    std::uint32_t id = 0;
    std::string name;
    std::uint64_t node_guid = 0;
    std::uint32_t ib_index = 0;
    std::uint32_t port_count = 0;
};

// The commands libndk has issued with ioctl(2) in this process so far
// (one per command; a retry after EINTR is not counted again): the system
// calls behind an operation, e.g. none for a poll of a CQ with a
// completion ring.
std::uint64_t IoctlCount() noexcept;

// Move-only owner of an open /dev/ndk file descriptor.
class Device {
  public:
    // Opens path (O_RDWR | O_CLOEXEC) and checks that the module speaks
    // this library's ABI version: an older or newer incompatible module
    // gives EPROTO (STATUS_NOT_SUPPORTED).
    static Result<Device> Open(const char* path = kDefaultDevicePath);

    Device(Device&& other) noexcept;
    Device& operator=(Device&& other) noexcept;
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;
    ~Device();

    // Closes now and reports what close() said; the destructor does the
    // same silently.  A closed Device answers every call with EBADF.
    Result<void> Close() noexcept;

    int fd() const noexcept { return fd_; }
    const DeviceInfo& info() const noexcept { return info_; }

    // Asks the module again (adapter_count may have changed).
    Result<DeviceInfo> QueryInfo() const;
    // Every adapter present now, in id order.
    Result<std::vector<AdapterDescription>> ListAdapters() const;
    // One adapter by id; ENOENT when it does not exist (any more).
    Result<AdapterDescription> QueryAdapter(std::uint32_t id) const;

  private:
    explicit Device(int fd) noexcept : fd_(fd) {}
    int fd_ = -1;
    DeviceInfo info_{};
};

}  // namespace ndk
