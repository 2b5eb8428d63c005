// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/memory.hpp"

#include <cerrno>

#include "ndk/adapter.hpp"
#include "state.hpp"
#include "sys.hpp"

namespace ndk {
namespace detail {

MrState::~MrState() {
    if (registered) {
        ndk_u_mr_deregister d{};
        d.handle = handle;
        (void)Ioctl(fd(), NDK_IOCTL_MR_DEREGISTER, &d);
    }
    Close();
}

namespace {

Result<ndk_u_token_query> QueryToken(int fd, std::uint32_t handle) {
    ndk_u_token_query q{};
    q.handle = handle;
    if (auto r = Ioctl(fd, NDK_IOCTL_TOKEN_QUERY, &q); !r) return r.error();
    return q;
}

}  // namespace
}  // namespace detail

Result<MemoryRegion> MemoryRegion::Create(const ProtectionDomain& pd, bool fast_register) {
    if (!pd.s_) return Error::FromErrno(EBADF);
    ndk_u_mr_create c{};
    c.pd_handle = pd.s_->handle;
    c.flags = fast_register ? NDK_U_MR_CREATE_F_FAST_REGISTER : 0;
    if (auto r = detail::Ioctl(pd.s_->fd(), NDK_IOCTL_MR_CREATE, &c); !r) return r.error();
    return MemoryRegion(std::make_shared<detail::MrState>(pd.s_, c.handle, fast_register));
}

Result<void> MemoryRegion::Register(const void* buffer, std::size_t length, std::uint32_t flags) {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_mr_register m{};
    m.handle = s_->handle;
    m.flags = flags;
    m.address = reinterpret_cast<std::uintptr_t>(buffer);
    m.length = length;
    if (auto r = detail::Ioctl(s_->fd(), NDK_IOCTL_MR_REGISTER, &m); !r) return r.error();
    s_->registered = true;
    s_->local_token = m.local_token;
    s_->remote_token = m.remote_token;
    return {};
}

Result<void> MemoryRegion::Deregister() {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_mr_deregister d{};
    d.handle = s_->handle;
    if (auto r = detail::Ioctl(s_->fd(), NDK_IOCTL_MR_DEREGISTER, &d); !r) return r.error();
    s_->registered = false;
    s_->local_token = s_->remote_token = 0;
    return {};
}

Result<void> MemoryRegion::InitializeFastRegister(std::uint32_t page_count, bool remote_access) {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_mr_init_fr f{};
    f.handle = s_->handle;
    f.adapter_page_count = page_count;
    f.flags = remote_access ? NDK_U_MR_INIT_FR_F_REMOTE_ACCESS : 0;
    return detail::Ioctl(s_->fd(), NDK_IOCTL_MR_INIT_FR, &f);
}

Result<void> MemoryRegion::QueryTokens() {
    if (!s_) return Error::FromErrno(EBADF);
    auto q = detail::QueryToken(s_->fd(), s_->handle);
    if (!q) return q.error();
    s_->local_token = q->local_token;
    s_->remote_token = q->remote_token;
    return {};
}

std::uint32_t MemoryRegion::handle() const noexcept { return s_ ? s_->handle : 0; }
bool MemoryRegion::fast_register() const noexcept { return s_ && s_->fast_register; }
std::uint32_t MemoryRegion::local_token() const noexcept { return s_ ? s_->local_token : 0; }
std::uint32_t MemoryRegion::remote_token() const noexcept { return s_ ? s_->remote_token : 0; }

Result<MemoryWindow> MemoryWindow::Create(const ProtectionDomain& pd) {
    if (!pd.s_) return Error::FromErrno(EBADF);
    ndk_u_mw_create c{};
    c.pd_handle = pd.s_->handle;
    if (auto r = detail::Ioctl(pd.s_->fd(), NDK_IOCTL_MW_CREATE, &c); !r) return r.error();
    return MemoryWindow(std::make_shared<detail::MwState>(pd.s_, c.handle));
}

Result<void> MemoryWindow::QueryTokens() {
    if (!s_) return Error::FromErrno(EBADF);
    auto q = detail::QueryToken(s_->fd(), s_->handle);
    if (!q) return q.error();
    s_->remote_token = q->remote_token;
    return {};
}

std::uint32_t MemoryWindow::handle() const noexcept { return s_ ? s_->handle : 0; }
std::uint32_t MemoryWindow::remote_token() const noexcept { return s_ ? s_->remote_token : 0; }

}  // namespace ndk
