// SPDX-License-Identifier: BSD-2-Clause
// ndk::Event: one entry of an Adapter's event queue (struct ndk_u_event).
// Everything asynchronous of an Adapter's objects arrives there: CQ
// notifications after CompletionQueue::Arm, completions of the connector
// requests (connect, complete-connect, accept, disconnect), the peer's
// disconnect, connection requests on a listener, adapter removal.  The
// queue never blocks to read (Adapter::GetEvents); poll()/epoll on
// Adapter::fd() reports POLLIN while an event is queued.
#pragma once

#include <cstdint>

#include "ndk/status.hpp"

namespace ndk {

enum class EventType : std::uint32_t {
    kCq = 1,              // a CompletionQueue::Arm notification
    kRequest = 2,         // a connector request completed (see RequestKind)
    kDisconnected = 3,    // the peer disconnected
    kConnectRequest = 4,  // a listener got a connection request
    kAdapterRemoved = 5,  // the adapter is going away
};

// Which connector request an EventType::kRequest event completes.
enum class RequestKind : std::uint32_t {
    kConnect = 1,
    kCompleteConnect = 2,
    kAccept = 3,
    kDisconnect = 4,
};

struct Event {
    EventType type{};
    // The object it concerns: CQ, connector, listener or adapter handle.
    std::uint32_t handle = 0;
    // kCq: STATUS_SUCCESS, _BUFFER_OVERFLOW (overrun) or _INTERNAL_ERROR;
    // kRequest: the request's NTSTATUS; else STATUS_SUCCESS.
    NTSTATUS status = status::kSuccess;
    // kRequest: the RequestKind; kConnectRequest: the new connector's
    // handle (Listener::TakeConnectionRequest wraps it); else 0.
    std::uint32_t object = 0;
    // kRequest: the request's request_context; else the context the
    // object was created with (adapter: 0).
    std::uint64_t context = 0;

    RequestKind request_kind() const noexcept { return static_cast<RequestKind>(object); }
};

// "CQ", "REQUEST", ... for printing.
const char* EventTypeName(EventType type) noexcept;
// "CONNECT", "COMPLETE_CONNECT", "ACCEPT", "DISCONNECT".
const char* RequestKindName(RequestKind kind) noexcept;

}  // namespace ndk
