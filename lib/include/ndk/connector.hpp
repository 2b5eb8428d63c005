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
//
// A connected connector with its QP is also the "socket" of the WSD SAN
// SPI: RegisterMemory / DeregisterMemory are WSPRegisterMemory /
// WSPDeregisterMemory on it, and Send / Receive / Read / Write take WSD
// buffers (WsaBuf, WSABUFEX) naming its registration handles
// (Documentation/library.md, "Socket-style registration").
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
class Connector;
class QueuePair;

namespace detail {
struct ConnectorState;
struct ListenerState;
struct PdState;
}  // namespace detail

// WSABUFEX: bytes [buffer, +length) of the registration `handle`
// (SocketRegistration::handle()) made on the connector it is used with;
// handle 0: of whichever registration on that connector holds them (the
// provider's own mapping of buffers to handles, WSPRegisterMemory).
struct WsaBuf {
    const void* buffer = nullptr;
    std::uint32_t length = 0;
    std::uint32_t handle = 0;
};

// One WSPRegisterMemory registration on one connector (Connector::
// RegisterMemory): one reference of the PD's kernel registration
// (NDK_IOCTL_MEM_REGISTER), so the same (buffer, length, flags) registered
// on several connectors of one PD is one registration in the kernel, one
// pin and one memlock charge, counted once per SocketRegistration and
// released with the last.  handle() is the WSD HANDLE: valid only with
// the connector it was registered on (its WsaBufs, its DeregisterMemory);
// connectors sharing the PD may get the same value for the same triple,
// which the seed allows.  Move-only; the destructor deregisters
// (WSPDeregisterMemory), errors ignored.  A moved-from or deregistered
// one is empty.
class [[nodiscard]] SocketRegistration {
  public:
    SocketRegistration() noexcept = default;
    SocketRegistration(SocketRegistration&& other) noexcept;
    SocketRegistration& operator=(SocketRegistration&& other) noexcept;
    SocketRegistration(const SocketRegistration&) = delete;
    SocketRegistration& operator=(const SocketRegistration&) = delete;
    ~SocketRegistration();

    bool empty() const noexcept { return !handle_; }
    explicit operator bool() const noexcept { return !empty(); }

    // The WSD HANDLE (the kernel registration's handle), 0 when empty.
    std::uint32_t handle() const noexcept { return handle_; }
    std::uint32_t local_token() const noexcept { return local_token_; }
    std::uint64_t base_address() const noexcept { return base_address_; }
    std::size_t length() const noexcept { return length_; }
    // kMemRead / kMemWrite as registered.
    std::uint32_t flags() const noexcept { return flags_; }
    // References the kernel counted for the handle right after this
    // registration (every connector's and ProtectionDomain's together).
    std::uint32_t references() const noexcept { return references_; }

  private:
    friend class Connector;
    // Drops this reference: the connector's count, then one kernel
    // reference.  On a kernel failure (EBUSY) nothing changes.
    Result<void> Release() noexcept;
    std::shared_ptr<detail::ConnectorState> owner_;
    std::shared_ptr<detail::PdState> pd_;
    std::uint32_t handle_ = 0;
    std::uint32_t local_token_ = 0;
    std::uint64_t base_address_ = 0;
    std::size_t length_ = 0;
    std::uint32_t flags_ = 0;
    std::uint32_t references_ = 0;
};

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
    // both addresses.  After a refused connect: the reject's private data,
    // read limits 0 and empty addresses (GetLocalAddress and
    // GetPeerAddress give ENOTCONN).
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

    // --- The connector as a WSD socket --------------------------------
    //
    // True once this connector's complete-connect (active side) or accept
    // (passive side) completed successfully, as seen in an event the
    // library took from the adapter's queue (WaitFor, GetEvents,
    // WaitEvent); false again from its Disconnect, or the peer's
    // disconnect (kDisconnected, kDisconnect) seen the same way.
    bool connected() const noexcept;

    // WSPRegisterMemory(s, buffer, length, flags): registers the buffer on
    // this connector's QP's PD for local access (kMemRead: a source of
    // Send/Write; kMemWrite: a sink of Receive/Read; kMemReadWrite: both).
    // Every error carries one of the seed's four codes in Error::wsa
    // (WsaForRegisterMemory), checked in this order: ENOTCONN/WSAENOTCONN
    // not connected(); EINVAL/WSAEINVAL flags 0 or outside kMemReadWrite,
    // length 0; then the kernel's: EFAULT/WSAEFAULT buffer not wholly in
    // valid user memory (unmapped, kernel half, wrapping, PROT_NONE,
    // read-only with kMemWrite; EOPNOTSUPP for a file's shared mapping
    // with kMemWrite); ENOMEM, EMSGSIZE, EPERM, ... /WSAENOBUFS.
    Result<SocketRegistration> RegisterMemory(const void* buffer, std::size_t length,
                                              std::uint32_t flags);
    // WSPDeregisterMemory(s, handle): drops reg's reference and empties
    // it.  EINVAL/WSAEINVAL for an empty registration or one made on
    // another connector (nothing changes); EBUSY/WSAEINVAL when the last
    // kernel reference is held by a bound window or fast-registered MR
    // (nothing changes).  Works connected or not.
    Result<void> DeregisterMemory(SocketRegistration& reg);

    // Posts on this connector's QP from WSD buffers.  Each WsaBuf must
    // name a handle registered on this connector (EINVAL/WSAEINVAL
    // otherwise: a handle of another connector is unknown here), or 0 to
    // have one of this connector's registrations that holds its bytes
    // found by address (preferring one with the right the post needs;
    // EFAULT/WSAEFAULT when none holds them), lie inside that
    // registration (EFAULT/WSAEFAULT), and the registration
    // must allow the access: kMemRead for the sources of Send and Write,
    // kMemWrite for the sinks of Receive and Read (EACCES/WSAEFAULT,
    // STATUS_ACCESS_VIOLATION).  ENOTCONN/WSAENOTCONN without a QP; the
    // post's own errors otherwise (QueuePair).  Nothing is posted on error.
    Result<void> Send(std::uint64_t request_context, std::span<const WsaBuf> bufs,
                      std::uint32_t flags = 0) const;
    Result<void> Receive(std::uint64_t request_context, std::span<const WsaBuf> bufs) const;
    Result<void> Write(std::uint64_t request_context, std::span<const WsaBuf> bufs,
                       std::uint64_t remote_address, std::uint32_t remote_token,
                       std::uint32_t flags = 0) const;
    Result<void> Read(std::uint64_t request_context, std::span<const WsaBuf> bufs,
                      std::uint64_t remote_address, std::uint32_t remote_token,
                      std::uint32_t flags = 0) const;

  private:
    friend class Listener;
    friend class SocketRegistration;
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
