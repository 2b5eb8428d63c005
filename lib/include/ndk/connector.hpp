// SPDX-License-Identifier: BSD-2-Clause
// ndk::Connector (NDK_CONNECTOR) and ndk::Listener (NDK_LISTENER).
//
// Every connector request completes later, as an EventType::kRequest event
// on the adapter's event queue (object: the RequestKind, status: the
// request's NTSTATUS, context: its request_context).  The NDK flow:
//   active:  Connect -> kConnect event -> CompleteConnect ->
//            kCompleteConnect event
//   passive: Listener::Listen -> kConnectRequest event (a new connector:
//            Listener::TakeConnectionRequest / GetConnectionRequest) ->
//            Accept (or Reject) -> kAccept event
//   either:  Disconnect -> kDisconnect event; the peer's disconnect is an
//            EventType::kDisconnected event with the connector's context.
// Connector::WaitFor(kind, timeout) is the synchronous helper for one step.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ndk/event.hpp"
#include "ndk/result.hpp"
#include "ndk/sockaddr.hpp"

namespace ndk {

class Adapter;
class QueuePair;

namespace detail {
struct ConnectorState;
struct ListenerState;
}  // namespace detail

struct ConnectParams {
    // IRD: RDMA reads the peer may have in flight towards us.
    std::uint32_t inbound_read_limit = 0;
    // ORD: RDMA reads we may have in flight towards the peer.
    std::uint32_t outbound_read_limit = 0;
    // At most MaxCallerData bytes.
    std::span<const std::byte> private_data{};
    // Local address; AF_UNSPEC: the route's.
    SockAddr source{};
    std::uint64_t request_context = 0;
};

struct AcceptParams {
    std::uint32_t inbound_read_limit = 0;
    std::uint32_t outbound_read_limit = 0;
    // At most MaxCalleeData bytes.
    std::span<const std::byte> private_data{};
    std::uint64_t request_context = 0;
};

// NdkGetConnectionData, NdkGetLocalAddress, NdkGetPeerAddress at once.
struct ConnectionData {
    std::uint32_t inbound_read_limit = 0;   // the peer's IRD
    std::uint32_t outbound_read_limit = 0;  // the peer's ORD
    std::vector<std::byte> private_data;    // what the peer sent
    SockAddr local_address;
    SockAddr peer_address;
};

class [[nodiscard]] Connector {
  public:
    // NdkCreateConnector; context comes back in its kDisconnected events.
    static Result<Connector> Create(const Adapter& adapter, std::uint64_t context = 0);

    Connector(Connector&&) noexcept = default;
    Connector& operator=(Connector&&) noexcept = default;
    Connector(const Connector&) = delete;
    Connector& operator=(const Connector&) = delete;
    ~Connector() = default;

    // NdkConnect qp to a listener at destination (completes: kConnect).
    Result<void> Connect(const QueuePair& qp, const SockAddr& destination,
                         const ConnectParams& params = {});
    // NdkCompleteConnect, after a successful kConnect event.
    Result<void> CompleteConnect(std::uint64_t request_context = 0) const;
    // NdkAccept of a connection request with qp (completes: kAccept).
    Result<void> Accept(const QueuePair& qp, const AcceptParams& params = {});
    // NdkReject a connection request, or a connect whose kConnect event
    // came; inline, no event.
    Result<void> Reject(std::span<const std::byte> private_data = {}) const;
    // NdkDisconnect (completes: kDisconnect).
    Result<void> Disconnect(std::uint64_t request_context = 0) const;

    // NDK_IOCTL_CONNECTOR_QUERY: the peer's IRD/ORD and private data, and
    // both addresses.
    Result<ConnectionData> GetConnectionData() const;
    Result<SockAddr> GetLocalAddress() const;
    Result<SockAddr> GetPeerAddress() const;

    // Synchronous helper: waits up to timeout for the kRequest event of
    // this connector's request kind; an event whose status is a failure
    // gives Error::FromStatus(status) (e.g. STATUS_CONNECTION_REFUSED ->
    // ECONNREFUSED).  ETIMEDOUT when none came.
    Result<Event> WaitFor(RequestKind kind, std::chrono::milliseconds timeout) const;
    // Waits for the peer's disconnect (EventType::kDisconnected).
    Result<Event> WaitForDisconnect(std::chrono::milliseconds timeout) const;

    std::uint32_t handle() const noexcept;

  private:
    friend class Listener;
    explicit Connector(std::shared_ptr<detail::ConnectorState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::ConnectorState> s_;
};

class [[nodiscard]] Listener {
  public:
    // NdkCreateListener; context comes back in its kConnectRequest events.
    static Result<Listener> Create(const Adapter& adapter, std::uint64_t context = 0);

    Listener(Listener&&) noexcept = default;
    Listener& operator=(Listener&&) noexcept = default;
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    ~Listener() = default;

    // NdkListen on address (port 0: any free port), then
    // NdkGetListenerLocalAddress: returns the address listened on.
    Result<SockAddr> Listen(const SockAddr& address) const;

    // Wraps the new connector of a kConnectRequest event of this listener
    // (taken with Adapter::GetEvents/WaitEvent).  EINVAL for any other
    // event.  The Connector closes the handle when it goes.
    Result<Connector> TakeConnectionRequest(const Event& event) const;
    // Synchronous helper (IND2Listener::GetConnectionRequest): waits up to
    // timeout for this listener's next connection request.
    Result<Connector> GetConnectionRequest(std::chrono::milliseconds timeout) const;

    std::uint32_t handle() const noexcept;

  private:
    explicit Listener(std::shared_ptr<detail::ListenerState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::ListenerState> s_;
};

}  // namespace ndk
