// SPDX-License-Identifier: BSD-2-Clause
// The shared state behind the public classes.  Each object's state holds
// its parents' states (shared_ptr), so a parent handle is closed only
// after every child's: the kernel refuses to close a parent with open
// children (EBUSY).  Every state closes its handle when the last owner
// goes (NDK_IOCTL_HANDLE_CLOSE; errors are ignored, the file's release
// would do it anyway).
#pragma once

#include <ndk/ndk_ioctl.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "ndk/device.hpp"
#include "ndk/event.hpp"
#include "ndk/result.hpp"
#include "ring.hpp"

namespace ndk::detail {

void CloseHandle(int fd, std::uint32_t handle) noexcept;

// A connector's connection as the library has seen it (Connector::connected,
// the socket-style registration): idle until its complete-connect or
// accept completes successfully, disconnected from its own Disconnect or
// the peer's disconnect on.  Never connected again.
enum class ConnPhase { kIdle, kConnected, kDisconnected };

// The phase after `e` was seen for a connector in phase `p`.
ConnPhase NextPhase(ConnPhase p, const Event& e) noexcept;

struct AdapterState {
    Device device;
    std::uint32_t id = 0;
    std::uint32_t handle = 0;
    // Events a waiting helper took but did not want, oldest first.
    std::mutex events_lock;
    std::deque<Event> kept;
    // Connection phases of this file's live connectors (ConnectorState)
    // by handle, updated from every event the library takes from the file
    // (Observe), under events_lock.
    std::map<std::uint32_t, ConnPhase> phases;

    AdapterState(Device d, std::uint32_t i, std::uint32_t h)
        : device(std::move(d)), id(i), handle(h) {}
    ~AdapterState() { CloseHandle(device.fd(), handle); }
    AdapterState(const AdapterState&) = delete;
    AdapterState& operator=(const AdapterState&) = delete;

    int fd() const noexcept { return device.fd(); }
};

// The event queue of an adapter's file (lib/src/events.cpp).
// Observe: updates `phases` from one event taken from the file; the
// caller holds events_lock.
void Observe(AdapterState& a, const Event& e);
// Phase: kIdle for an untracked handle.  SetPhase: of a tracked one only.
// TrackConnector: starts (kIdle) or ends tracking a connector handle.
ConnPhase Phase(AdapterState& a, std::uint32_t connector);
void SetPhase(AdapterState& a, std::uint32_t connector, ConnPhase p);
void TrackConnector(AdapterState& a, std::uint32_t connector, bool track);
Result<std::size_t> GetEvents(AdapterState& a, Event* out, std::size_t n);
Result<Event> WaitEvent(AdapterState& a, const std::function<bool(const Event&)>& match,
                        std::chrono::milliseconds timeout);

// A child handle of an adapter's file: closes it on destruction.
struct HandleState {
    std::shared_ptr<AdapterState> adapter;
    std::uint32_t handle = 0;
    HandleState(std::shared_ptr<AdapterState> a, std::uint32_t h)
        : adapter(std::move(a)), handle(h) {}
    // A state with parents of its own closes its handle in its own
    // destructor, before those members (the parents) are released.
    virtual ~HandleState() { Close(); }
    HandleState(const HandleState&) = delete;
    HandleState& operator=(const HandleState&) = delete;
    int fd() const noexcept { return adapter->fd(); }
    void Close() noexcept { CloseHandle(adapter->fd(), std::exchange(handle, 0)); }
};

struct PdState : HandleState {
    using HandleState::HandleState;
};

struct CqState : HandleState {
    using HandleState::HandleState;
    // Its completion ring, when the file has rings (RingsWanted).
    std::unique_ptr<CompletionRing> ring;
};

struct QpState : HandleState {
    std::shared_ptr<PdState> pd;
    std::shared_ptr<CqState> receive_cq;
    std::shared_ptr<CqState> initiator_cq;
    QpState(std::shared_ptr<PdState> p, std::shared_ptr<CqState> rcq, std::shared_ptr<CqState> icq,
            std::uint32_t h)
        : HandleState(p->adapter, h),
          pd(std::move(p)),
          receive_cq(std::move(rcq)),
          initiator_cq(std::move(icq)) {}
    ~QpState() override { Close(); }
    // Its submission ring, when the file has rings (RingsWanted).
    std::unique_ptr<SubmissionRing> ring;
};

struct MrState : HandleState {
    std::shared_ptr<PdState> pd;
    bool fast_register = false;
    bool registered = false;  // by MemoryRegion::Register
    std::uint32_t local_token = 0;
    std::uint32_t remote_token = 0;
    MrState(std::shared_ptr<PdState> p, std::uint32_t h, bool fr)
        : HandleState(p->adapter, h), pd(std::move(p)), fast_register(fr) {}
    // Deregisters first when still registered, then closes
    // (lib/src/memory.cpp).
    ~MrState() override;
};

struct MwState : HandleState {
    std::shared_ptr<PdState> pd;
    std::uint32_t remote_token = 0;
    MwState(std::shared_ptr<PdState> p, std::uint32_t h)
        : HandleState(p->adapter, h), pd(std::move(p)) {}
    ~MwState() override { Close(); }
};

struct ListenerState : HandleState {
    using HandleState::HandleState;
};

// One WSPRegisterMemory handle of a connector: the registrations made on
// it (SocketRegistration) with this kernel handle, and what a WsaBuf
// naming it may address.
struct SocketMem {
    std::uint32_t local_token = 0;
    std::uint64_t base_address = 0;
    std::uint64_t length = 0;
    std::uint32_t flags = 0;  // kMemRead / kMemWrite
    std::uint32_t count = 0;  // live SocketRegistrations of this handle
};

struct ConnectorState : HandleState {
    // The listener a connection request came from (kept open while its
    // connector is), and the QP once Connect/Accept named one.
    std::shared_ptr<ListenerState> listener;
    std::shared_ptr<QpState> qp;
    // The socket-style registrations made on this connector, by handle.
    std::mutex mem_lock;
    std::map<std::uint32_t, SocketMem> mem;
    // Tracked from idle while the handle is open.
    ConnectorState(std::shared_ptr<AdapterState> a, std::uint32_t h)
        : HandleState(std::move(a), h) {
        TrackConnector(*adapter, h, true);
    }
    ~ConnectorState() override {
        TrackConnector(*adapter, handle, false);
        Close();
    }
};

}  // namespace ndk::detail
