// SPDX-License-Identifier: BSD-2-Clause
// The connector as a WSD socket: WSPRegisterMemory / WSPDeregisterMemory
// on it (SocketRegistration) and posts from WSD buffers (WsaBuf) naming
// its registration handles.  Documentation/library.md, "Socket-style
// registration".
#include <cerrno>
#include <utility>

#include "ndk/adapter.hpp"
#include "ndk/connector.hpp"
#include "ndk/queue_pair.hpp"
#include "state.hpp"
#include "sys.hpp"

namespace ndk {
namespace {

// A WsaBuf refused before any post: the errno, its NTSTATUS and the WSA
// code of the Connector's transfer calls (connector.hpp).
Error BufferError(int e) noexcept {
    return Error{e, StatusFromErrno(e), e == EACCES ? wsa::kEfault : WsaFromErrno(e)};
}

// Does registration m hold [addr, +length)?
bool Covers(const detail::SocketMem& m, std::uint64_t addr, std::uint32_t length) {
    return addr >= m.base_address && length <= m.length &&
           addr - m.base_address <= m.length - length;
}

// The registration of a WsaBuf without a handle: the seed's "a SAN service
// provider must maintain its own mapping of memory buffers to handles".
// One of the connector's registrations that holds the bytes with the
// `need` right, else one that holds them without it (EACCES follows),
// else none (EFAULT).  Under s.mem_lock.
const detail::SocketMem* FindByAddress(const detail::ConnectorState& s, std::uint64_t addr,
                                       std::uint32_t length, std::uint32_t need) {
    const detail::SocketMem* without_right = nullptr;
    for (const auto& [handle, m] : s.mem) {
        if (!Covers(m, addr, length)) continue;
        if ((m.flags & need) == need) return &m;
        without_right = &m;
    }
    return without_right;
}

// The SGL of bufs, each checked against the connector's registrations:
// known here (or, without a handle, found by its address), inside its
// registration, with the `need` right.
Result<std::size_t> ToSgl(detail::ConnectorState& s, std::span<const WsaBuf> bufs,
                          std::uint32_t need, Sge (&out)[NDK_U_SGE_MAX]) {
    if (bufs.size() > NDK_U_SGE_MAX) return BufferError(EINVAL);
    std::lock_guard<std::mutex> g(s.mem_lock);
    for (std::size_t i = 0; i < bufs.size(); ++i) {
        const WsaBuf& b = bufs[i];
        const auto addr = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(b.buffer));
        const detail::SocketMem* m = nullptr;
        if (b.handle) {
            auto it = s.mem.find(b.handle);
            if (it == s.mem.end()) return BufferError(EINVAL);
            m = &it->second;
        } else {
            m = FindByAddress(s, addr, b.length, need);
        }
        if (!m || !Covers(*m, addr, b.length)) return BufferError(EFAULT);
        if ((m->flags & need) != need) return BufferError(EACCES);
        out[i] = Sge{b.buffer, b.length, m->local_token};
    }
    return bufs.size();
}

Result<void> WithWsa(Result<void> r) {
    if (r) return r;
    return Error::FromErrnoWsa(r.error().errnum);
}

}  // namespace

SocketRegistration::SocketRegistration(SocketRegistration&& other) noexcept
    : owner_(std::move(other.owner_)),
      pd_(std::move(other.pd_)),
      handle_(std::exchange(other.handle_, 0)),
      local_token_(other.local_token_),
      base_address_(other.base_address_),
      length_(other.length_),
      flags_(other.flags_),
      references_(other.references_) {}

SocketRegistration& SocketRegistration::operator=(SocketRegistration&& other) noexcept {
    if (this != &other) {
        (void)Release();
        owner_ = std::move(other.owner_);
        pd_ = std::move(other.pd_);
        handle_ = std::exchange(other.handle_, 0);
        local_token_ = other.local_token_;
        base_address_ = other.base_address_;
        length_ = other.length_;
        flags_ = other.flags_;
        references_ = other.references_;
    }
    return *this;
}

SocketRegistration::~SocketRegistration() { (void)Release(); }

Result<void> SocketRegistration::Release() noexcept {
    if (!handle_ || !owner_ || !pd_) return Error::ForDeregisterMemory(EINVAL);
    ndk_u_mem_deregister d{};
    d.handle = handle_;
    // The kernel first: when it refuses (EBUSY), nothing changes here either.
    if (auto r = detail::Ioctl(pd_->fd(), NDK_IOCTL_MEM_DEREGISTER, &d); !r)
        return Error::ForDeregisterMemory(r.error().errnum);
    {
        std::lock_guard<std::mutex> g(owner_->mem_lock);
        auto it = owner_->mem.find(handle_);
        if (it != owner_->mem.end() && !--it->second.count) owner_->mem.erase(it);
    }
    handle_ = 0;
    owner_.reset();
    pd_.reset();
    return {};
}

bool Connector::connected() const noexcept {
    return s_ && detail::Phase(*s_->adapter, s_->handle) == detail::ConnPhase::kConnected;
}

Result<SocketRegistration> Connector::RegisterMemory(const void* buffer, std::size_t length,
                                                     std::uint32_t flags) {
    if (!s_) return Error::ForRegisterMemory(EBADF);
    if (!s_->qp || !connected()) return Error::ForRegisterMemory(ENOTCONN);
    if (!flags || (flags & ~kMemReadWrite) || !length) return Error::ForRegisterMemory(EINVAL);
    const std::shared_ptr<detail::PdState>& pd = s_->qp->pd;
    ndk_u_mem_register m{};
    m.pd_handle = pd->handle;
    m.flags = flags;
    m.address = reinterpret_cast<std::uintptr_t>(buffer);
    m.length = length;
    if (auto r = detail::Ioctl(pd->fd(), NDK_IOCTL_MEM_REGISTER, &m); !r)
        return Error::ForRegisterMemory(r.error().errnum);
    SocketRegistration reg;
    reg.owner_ = s_;
    reg.pd_ = pd;
    reg.handle_ = m.handle;
    reg.local_token_ = m.local_token;
    reg.base_address_ = m.base_address;
    reg.length_ = length;
    reg.flags_ = flags;
    reg.references_ = m.references;
    std::lock_guard<std::mutex> g(s_->mem_lock);
    detail::SocketMem& e = s_->mem[m.handle];
    if (!e.count) e = detail::SocketMem{m.local_token, m.base_address, length, flags, 0};
    ++e.count;
    return reg;
}

Result<void> Connector::DeregisterMemory(SocketRegistration& reg) {
    if (!s_ || reg.empty() || reg.owner_ != s_) return Error::ForDeregisterMemory(EINVAL);
    return reg.Release();
}

Result<void> Connector::Send(std::uint64_t request_context, std::span<const WsaBuf> bufs,
                             std::uint32_t flags) const {
    if (!s_ || !s_->qp) return BufferError(s_ ? ENOTCONN : EBADF);
    Sge sgl[NDK_U_SGE_MAX];
    auto n = ToSgl(*s_, bufs, kMemRead, sgl);
    if (!n) return n.error();
    return WithWsa(QueuePair(s_->qp, 0).Send(request_context, std::span(sgl, *n), flags));
}

Result<void> Connector::Receive(std::uint64_t request_context, std::span<const WsaBuf> bufs) const {
    if (!s_ || !s_->qp) return BufferError(s_ ? ENOTCONN : EBADF);
    Sge sgl[NDK_U_SGE_MAX];
    auto n = ToSgl(*s_, bufs, kMemWrite, sgl);
    if (!n) return n.error();
    return WithWsa(QueuePair(s_->qp, 0).Receive(request_context, std::span(sgl, *n)));
}

Result<void> Connector::Write(std::uint64_t request_context, std::span<const WsaBuf> bufs,
                              std::uint64_t remote_address, std::uint32_t remote_token,
                              std::uint32_t flags) const {
    if (!s_ || !s_->qp) return BufferError(s_ ? ENOTCONN : EBADF);
    Sge sgl[NDK_U_SGE_MAX];
    auto n = ToSgl(*s_, bufs, kMemRead, sgl);
    if (!n) return n.error();
    return WithWsa(QueuePair(s_->qp, 0).Write(request_context, std::span(sgl, *n), remote_address,
                                              remote_token, flags));
}

Result<void> Connector::Read(std::uint64_t request_context, std::span<const WsaBuf> bufs,
                             std::uint64_t remote_address, std::uint32_t remote_token,
                             std::uint32_t flags) const {
    if (!s_ || !s_->qp) return BufferError(s_ ? ENOTCONN : EBADF);
    Sge sgl[NDK_U_SGE_MAX];
    auto n = ToSgl(*s_, bufs, kMemWrite, sgl);
    if (!n) return n.error();
    return WithWsa(QueuePair(s_->qp, 0).Read(request_context, std::span(sgl, *n), remote_address,
                                             remote_token, flags));
}

}  // namespace ndk
