// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/adapter.hpp"

#include <ndk/ndk_ioctl.h>

#include <cerrno>
#include <cstdint>
#include <utility>

#include "state.hpp"
#include "sys.hpp"

namespace ndk {
namespace detail {

// Closes a handle; errors are ignored (the file's release would do it).
void CloseHandle(int fd, std::uint32_t handle) noexcept {
    if (fd < 0 || !handle) return;
    ndk_u_handle_close c{};
    c.handle = handle;
    (void)Ioctl(fd, NDK_IOCTL_HANDLE_CLOSE, &c);
}

}  // namespace detail

Result<Adapter> Adapter::Open(std::uint32_t id, const char* path) {
    auto dev = Device::Open(path);
    if (!dev) return dev.error();
    if (!(dev->info().features & NDK_U_FEATURE_OBJECTS)) return Error::FromErrno(EOPNOTSUPP);
    ndk_u_adapter_open a{};
    a.adapter_id = id;
    if (auto r = detail::Ioctl(dev->fd(), NDK_IOCTL_ADAPTER_OPEN, &a); !r) return r.error();
    return Adapter(std::make_shared<detail::AdapterState>(std::move(*dev), id, a.handle));
}

Result<Adapter> Adapter::OpenByName(std::string_view name, const char* path) {
    auto dev = Device::Open(path);
    if (!dev) return dev.error();
    auto list = dev->ListAdapters();
    if (!list) return list.error();
    for (const auto& a : *list)
        if (a.name == name) return Open(a.id, path);
    return Error::FromErrno(ENOENT);
}

std::uint32_t Adapter::id() const noexcept { return s_ ? s_->id : 0; }
std::uint32_t Adapter::handle() const noexcept { return s_ ? s_->handle : 0; }
int Adapter::fd() const noexcept { return s_ ? s_->device.fd() : -1; }

Result<std::size_t> Adapter::GetEvents(std::span<Event> out) const {
    if (!s_) return Error::FromErrno(EBADF);
    return detail::GetEvents(*s_, out.data(), out.size());
}

Result<Event> Adapter::WaitEvent(std::chrono::milliseconds timeout) const {
    if (!s_) return Error::FromErrno(EBADF);
    return detail::WaitEvent(*s_, nullptr, timeout);
}

Result<Event> Adapter::WaitEvent(const std::function<bool(const Event&)>& match,
                                 std::chrono::milliseconds timeout) const {
    if (!s_) return Error::FromErrno(EBADF);
    return detail::WaitEvent(*s_, match, timeout);
}

Result<AdapterInfo> Adapter::QueryInfo() const {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_adapter_info q{};
    q.handle = s_->handle;
    if (auto r = detail::Ioctl(fd(), NDK_IOCTL_ADAPTER_INFO, &q); !r) return r.error();
    AdapterInfo i;
    i.version_major = q.info_version_major;
    i.version_minor = q.info_version_minor;
    i.vendor_id = q.vendor_id;
    i.device_id = q.device_id;
    i.max_registration_size = q.max_registration_size;
    i.max_user_registration_size = q.max_user_registration_size;
    i.max_window_size = q.max_window_size;
    i.frmr_page_count = q.frmr_page_count;
    i.max_initiator_request_sge = q.max_initiator_request_sge;
    i.max_receive_request_sge = q.max_receive_request_sge;
    i.max_read_request_sge = q.max_read_request_sge;
    i.max_transfer_length = q.max_transfer_length;
    i.max_inline_data_size = q.max_inline_data_size;
    i.max_inbound_read_limit = q.max_inbound_read_limit;
    i.max_outbound_read_limit = q.max_outbound_read_limit;
    i.max_receive_queue_depth = q.max_receive_queue_depth;
    i.max_initiator_queue_depth = q.max_initiator_queue_depth;
    i.max_srq_depth = q.max_srq_depth;
    i.max_cq_depth = q.max_cq_depth;
    i.large_request_threshold = q.large_request_threshold;
    i.max_caller_data = q.max_caller_data;
    i.max_callee_data = q.max_callee_data;
    i.adapter_flags = q.adapter_flags;
    i.rdma_technology = q.rdma_technology;
    return i;
}

Result<ProtectionDomain> Adapter::CreateProtectionDomain() const {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_pd_create p{};
    p.adapter_handle = s_->handle;
    if (auto r = detail::Ioctl(fd(), NDK_IOCTL_PD_CREATE, &p); !r) return r.error();
    return ProtectionDomain(std::make_shared<detail::PdState>(s_, p.handle));
}

std::uint32_t ProtectionDomain::handle() const noexcept { return s_ ? s_->handle : 0; }

detail::PdAccess detail::AccessPd(const ProtectionDomain& pd) noexcept {
    if (!pd.s_) return {};
    return {pd.s_, pd.s_->adapter->device.fd(), pd.s_->handle};
}

Result<Registration> ProtectionDomain::RegisterMemory(const void* buffer, std::size_t length,
                                                      std::uint32_t flags) const {
    if (!s_) return Error::ForRegisterMemory(EBADF);
    ndk_u_mem_register m{};
    m.pd_handle = s_->handle;
    m.flags = flags;
    m.address = reinterpret_cast<std::uintptr_t>(buffer);
    m.length = length;
    if (auto r = detail::Ioctl(s_->adapter->device.fd(), NDK_IOCTL_MEM_REGISTER, &m); !r)
        return Error::ForRegisterMemory(r.error().errnum);
    Registration reg;
    reg.pd_ = s_;
    reg.handle_ = m.handle;
    reg.local_token_ = m.local_token;
    reg.remote_token_ = m.remote_token;
    reg.references_ = m.references;
    reg.base_address_ = m.base_address;
    reg.length_ = length;
    return reg;
}

Registration::Registration(Registration&& other) noexcept
    : pd_(std::move(other.pd_)),
      handle_(std::exchange(other.handle_, 0)),
      local_token_(other.local_token_),
      remote_token_(other.remote_token_),
      references_(other.references_),
      base_address_(other.base_address_),
      length_(other.length_) {}

Registration& Registration::operator=(Registration&& other) noexcept {
    if (this != &other) {
        (void)Deregister();
        pd_ = std::move(other.pd_);
        handle_ = std::exchange(other.handle_, 0);
        local_token_ = other.local_token_;
        remote_token_ = other.remote_token_;
        references_ = other.references_;
        base_address_ = other.base_address_;
        length_ = other.length_;
    }
    return *this;
}

Registration::~Registration() { (void)Deregister(); }

Result<void> Registration::Deregister() noexcept {
    if (!pd_ || !handle_) return Error::ForDeregisterMemory(EBADF);
    ndk_u_mem_deregister m{};
    m.handle = handle_;
    // The kernel first: when it refuses (EBUSY: a window or a
    // fast-registered MR still uses the memory), the reference stays here
    // to be dropped again.  ENOENT: the kernel has nothing left to drop.
    auto r = detail::Ioctl(pd_->adapter->device.fd(), NDK_IOCTL_MEM_DEREGISTER, &m);
    if (!r && r.error().errnum != ENOENT) return Error::ForDeregisterMemory(r.error().errnum);
    handle_ = 0;
    pd_.reset();
    if (!r) return Error::ForDeregisterMemory(ENOENT);
    return {};
}

}  // namespace ndk
