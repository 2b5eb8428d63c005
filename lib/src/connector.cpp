// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/connector.hpp"

#include <cerrno>

#include "ndk/adapter.hpp"
#include "ndk/queue_pair.hpp"
#include "state.hpp"
#include "sys.hpp"

namespace ndk {
namespace {

std::uint64_t Address(std::span<const std::byte> data) {
    return data.empty() ? 0 : reinterpret_cast<std::uintptr_t>(data.data());
}

}  // namespace

Result<Connector> Connector::Create(const Adapter& adapter, std::uint64_t context) {
    if (!adapter.s_) return Error::FromErrno(EBADF);
    ndk_u_connector_create c{};
    c.adapter_handle = adapter.s_->handle;
    c.context = context;
    if (auto r = detail::Ioctl(adapter.fd(), NDK_IOCTL_CONNECTOR_CREATE, &c); !r) return r.error();
    return Connector(std::make_shared<detail::ConnectorState>(adapter.s_, c.handle));
}

std::uint32_t Connector::handle() const noexcept { return s_ ? s_->handle : 0; }

Result<void> Connector::Connect(const QueuePair& qp, const SockAddr& destination,
                                const ConnectParams& params) {
    if (!s_ || !qp.s_) return Error::FromErrno(EBADF);
    if (qp.s_->adapter != s_->adapter) return Error::FromErrno(EINVAL);
    ndk_u_connect c{};
    c.connector_handle = s_->handle;
    c.qp_handle = qp.s_->handle;
    c.private_data_length = static_cast<std::uint32_t>(params.private_data.size());
    c.inbound_read_limit = params.inbound_read_limit;
    c.outbound_read_limit = params.outbound_read_limit;
    c.request_context = params.request_context;
    c.private_data = Address(params.private_data);
    params.source.CopyTo(c.src_address);
    destination.CopyTo(c.dest_address);
    if (auto r = detail::Ioctl(s_->fd(), NDK_IOCTL_CONNECT, &c); !r) return r.error();
    s_->qp = qp.s_;
    return {};
}

namespace {

Result<void> ConnectorRequest(const detail::ConnectorState& s, unsigned long cmd,
                              std::uint64_t request_context) {
    ndk_u_connector_request r{};
    r.connector_handle = s.handle;
    r.request_context = request_context;
    return detail::Ioctl(s.fd(), cmd, &r);
}

}  // namespace

Result<void> Connector::CompleteConnect(std::uint64_t request_context) const {
    if (!s_) return Error::FromErrno(EBADF);
    return ConnectorRequest(*s_, NDK_IOCTL_COMPLETE_CONNECT, request_context);
}

Result<void> Connector::Disconnect(std::uint64_t request_context) const {
    if (!s_) return Error::FromErrno(EBADF);
    if (auto r = ConnectorRequest(*s_, NDK_IOCTL_DISCONNECT, request_context); !r) return r;
    // No longer a connected socket, whenever the request completes.
    detail::SetPhase(*s_->adapter, s_->handle, detail::ConnPhase::kDisconnected);
    return {};
}

Result<void> Connector::Accept(const QueuePair& qp, const AcceptParams& params) {
    if (!s_ || !qp.s_) return Error::FromErrno(EBADF);
    if (qp.s_->adapter != s_->adapter) return Error::FromErrno(EINVAL);
    ndk_u_accept a{};
    a.connector_handle = s_->handle;
    a.qp_handle = qp.s_->handle;
    a.inbound_read_limit = params.inbound_read_limit;
    a.outbound_read_limit = params.outbound_read_limit;
    a.private_data_length = static_cast<std::uint32_t>(params.private_data.size());
    a.request_context = params.request_context;
    a.private_data = Address(params.private_data);
    if (auto r = detail::Ioctl(s_->fd(), NDK_IOCTL_ACCEPT, &a); !r) return r.error();
    s_->qp = qp.s_;
    return {};
}

Result<void> Connector::Reject(std::span<const std::byte> private_data) const {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_reject r{};
    r.connector_handle = s_->handle;
    r.private_data_length = static_cast<std::uint32_t>(private_data.size());
    r.private_data = Address(private_data);
    return detail::Ioctl(s_->fd(), NDK_IOCTL_REJECT, &r);
}

Result<ConnectionData> Connector::GetConnectionData() const {
    if (!s_) return Error::FromErrno(EBADF);
    // rdma_cm carries at most 196 bytes of private data (a REP on IB).
    std::vector<std::byte> buf(256);
    ndk_u_connector_query q{};
    q.connector_handle = s_->handle;
    q.private_data_length = static_cast<std::uint32_t>(buf.size());
    q.private_data = reinterpret_cast<std::uintptr_t>(buf.data());
    if (auto r = detail::Ioctl(s_->fd(), NDK_IOCTL_CONNECTOR_QUERY, &q); !r) return r.error();
    buf.resize(std::min<std::size_t>(q.private_data_length, buf.size()));
    ConnectionData d;
    d.inbound_read_limit = q.inbound_read_limit;
    d.outbound_read_limit = q.outbound_read_limit;
    d.private_data = std::move(buf);
    d.local_address = SockAddr::FromBytes(q.local_address);
    d.peer_address = SockAddr::FromBytes(q.peer_address);
    return d;
}

// A refused connect has the reject's data and no addresses (zero).
Result<SockAddr> Connector::GetLocalAddress() const {
    auto d = GetConnectionData();
    if (!d) return d.error();
    if (d->local_address.empty()) return Error::FromErrno(ENOTCONN);
    return d->local_address;
}

Result<SockAddr> Connector::GetPeerAddress() const {
    auto d = GetConnectionData();
    if (!d) return d.error();
    if (d->peer_address.empty()) return Error::FromErrno(ENOTCONN);
    return d->peer_address;
}

Result<Event> Connector::WaitFor(RequestKind kind, std::chrono::milliseconds timeout) const {
    if (!s_) return Error::FromErrno(EBADF);
    const std::uint32_t h = s_->handle;
    auto e = detail::WaitEvent(
        *s_->adapter,
        [h, kind](const Event& ev) {
            return ev.type == EventType::kRequest && ev.handle == h && ev.request_kind() == kind;
        },
        timeout);
    if (!e) return e.error();
    if (!NtSuccess(e->status)) return Error::FromStatus(e->status);
    return e;
}

Result<Event> Connector::WaitForDisconnect(std::chrono::milliseconds timeout) const {
    if (!s_) return Error::FromErrno(EBADF);
    const std::uint32_t h = s_->handle;
    return detail::WaitEvent(
        *s_->adapter,
        [h](const Event& ev) { return ev.type == EventType::kDisconnected && ev.handle == h; },
        timeout);
}

Result<Listener> Listener::Create(const Adapter& adapter, std::uint64_t context) {
    if (!adapter.s_) return Error::FromErrno(EBADF);
    ndk_u_listener_create c{};
    c.adapter_handle = adapter.s_->handle;
    c.context = context;
    if (auto r = detail::Ioctl(adapter.fd(), NDK_IOCTL_LISTENER_CREATE, &c); !r) return r.error();
    return Listener(std::make_shared<detail::ListenerState>(adapter.s_, c.handle));
}

std::uint32_t Listener::handle() const noexcept { return s_ ? s_->handle : 0; }

Result<SockAddr> Listener::Listen(const SockAddr& address) const {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_listen l{};
    l.listener_handle = s_->handle;
    address.CopyTo(l.address);
    if (auto r = detail::Ioctl(s_->fd(), NDK_IOCTL_LISTEN, &l); !r) return r.error();
    return SockAddr::FromBytes(l.address);
}

Result<Connector> Listener::TakeConnectionRequest(const Event& event) const {
    if (!s_) return Error::FromErrno(EBADF);
    if (event.type != EventType::kConnectRequest || event.handle != s_->handle || !event.object)
        return Error::FromErrno(EINVAL);
    auto c = std::make_shared<detail::ConnectorState>(s_->adapter, event.object);
    c->listener = s_;
    return Connector(std::move(c));
}

Result<Connector> Listener::GetConnectionRequest(std::chrono::milliseconds timeout) const {
    if (!s_) return Error::FromErrno(EBADF);
    const std::uint32_t h = s_->handle;
    auto e = detail::WaitEvent(
        *s_->adapter,
        [h](const Event& ev) { return ev.type == EventType::kConnectRequest && ev.handle == h; },
        timeout);
    if (!e) return e.error();
    return TakeConnectionRequest(*e);
}

}  // namespace ndk
