// SPDX-License-Identifier: BSD-2-Clause
// The event queue of an adapter's file: NDK_IOCTL_EVENT_GET (never blocks)
// and poll() for POLLIN.
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "ndk/constants.hpp"
#include "state.hpp"
#include "sys.hpp"

namespace ndk {
namespace detail {
namespace {

Event FromAbi(const ndk_u_event& e) noexcept {
    return Event{static_cast<EventType>(e.type), e.handle, e.status, e.object, e.context};
}

// One EVENT_GET of up to n (<= NDK_U_EVENT_GET_MAX) events.
Result<std::size_t> Take(int fd, ndk_u_event* buf, std::uint32_t n) {
    ndk_u_event_get g{};
    g.count = n;
    g.events = reinterpret_cast<std::uintptr_t>(buf);
    if (auto r = Ioctl(fd, NDK_IOCTL_EVENT_GET, &g); !r) return r.error();
    return std::size_t{std::min(g.count, n)};
}

}  // namespace

ConnPhase NextPhase(ConnPhase p, const Event& e) noexcept {
    if (e.type == EventType::kDisconnected) return ConnPhase::kDisconnected;
    if (e.type != EventType::kRequest) return p;
    switch (e.request_kind()) {
        case RequestKind::kCompleteConnect:
        case RequestKind::kAccept:
            if (p == ConnPhase::kIdle && NtSuccess(e.status)) return ConnPhase::kConnected;
            return p;
        case RequestKind::kDisconnect:
            return ConnPhase::kDisconnected;
        default:
            return p;
    }
}

void Observe(AdapterState& a, const Event& e) {
    if (e.type != EventType::kRequest && e.type != EventType::kDisconnected) return;
    // Only connectors with a ConnectorState are tracked.
    if (auto it = a.phases.find(e.handle); it != a.phases.end())
        it->second = NextPhase(it->second, e);
}

ConnPhase Phase(AdapterState& a, std::uint32_t connector) {
    std::lock_guard<std::mutex> g(a.events_lock);
    auto it = a.phases.find(connector);
    return it == a.phases.end() ? ConnPhase::kIdle : it->second;
}

void SetPhase(AdapterState& a, std::uint32_t connector, ConnPhase p) {
    std::lock_guard<std::mutex> g(a.events_lock);
    if (auto it = a.phases.find(connector); it != a.phases.end()) it->second = p;
}

void TrackConnector(AdapterState& a, std::uint32_t connector, bool track) {
    std::lock_guard<std::mutex> g(a.events_lock);
    if (track)
        a.phases[connector] = ConnPhase::kIdle;
    else
        a.phases.erase(connector);
}

Result<std::size_t> GetEvents(AdapterState& a, Event* out, std::size_t n) {
    std::size_t got = 0;
    {
        std::lock_guard<std::mutex> g(a.events_lock);
        while (got < n && !a.kept.empty()) {
            out[got++] = a.kept.front();
            a.kept.pop_front();
        }
    }
    while (got < n) {
        ndk_u_event buf[NDK_U_EVENT_GET_MAX];
        auto ask = static_cast<std::uint32_t>(std::min<std::size_t>(n - got, NDK_U_EVENT_GET_MAX));
        auto r = Take(a.fd(), buf, ask);
        if (!r) {
            if (got) break;  // report what was taken; the error comes again
            return r.error();
        }
        {
            std::lock_guard<std::mutex> g(a.events_lock);
            for (std::size_t i = 0; i < *r; ++i) {
                out[got] = FromAbi(buf[i]);
                Observe(a, out[got++]);
            }
        }
        if (*r < ask) break;
    }
    return got;
}

// The adapter is gone (its ADAPTER_REMOVED event is queued, kept for
// whoever waits for it): no other event can come, so a wait for one ends
// at once with ENODEV instead of at its timeout.  Under events_lock.
static bool Removed(const AdapterState& a) {
    return std::any_of(a.kept.begin(), a.kept.end(),
                       [](const Event& e) { return e.type == EventType::kAdapterRemoved; });
}

Result<Event> WaitEvent(AdapterState& a, const std::function<bool(const Event&)>& match,
                        std::chrono::milliseconds timeout) {
    using Clock = std::chrono::steady_clock;
    const bool forever = timeout.count() < 0;
    const auto deadline = Clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);
    {
        std::lock_guard<std::mutex> g(a.events_lock);
        auto it = match ? std::find_if(a.kept.begin(), a.kept.end(), match) : a.kept.begin();
        if (it != a.kept.end()) {
            Event e = *it;
            a.kept.erase(it);
            return e;
        }
        if (Removed(a)) return Error::FromErrno(ENODEV);
    }
    for (;;) {
        ndk_u_event buf[16];
        auto r = Take(a.fd(), buf, 16);
        if (!r) return r.error();
        std::optional<Event> found;
        {
            std::lock_guard<std::mutex> g(a.events_lock);
            for (std::size_t i = 0; i < *r; ++i) {
                Event e = FromAbi(buf[i]);
                Observe(a, e);
                if (!found && (!match || match(e)))
                    found = e;
                else
                    a.kept.push_back(e);
            }
        }
        if (found) return *found;
        {
            std::lock_guard<std::mutex> g(a.events_lock);
            if (Removed(a)) return Error::FromErrno(ENODEV);
        }
        if (*r) continue;  // the queue may hold more
        int wait_ms = -1;
        if (!forever) {
            auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) return Error::FromErrno(ETIMEDOUT);
            wait_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
        }
        pollfd p{a.fd(), POLLIN, 0};
        int n = ::poll(&p, 1, wait_ms);
        if (n < 0 && errno != EINTR) return Error::FromErrno(errno);
        if (n > 0 && (p.revents & (POLLERR | POLLNVAL))) return Error::FromErrno(EBADF);
        // n == 0: timed out; the loop takes once more, then reports it.
    }
}

}  // namespace detail

const char* EventTypeName(EventType type) noexcept {
    switch (type) {
        case EventType::kCq:
            return "CQ";
        case EventType::kRequest:
            return "REQUEST";
        case EventType::kDisconnected:
            return "DISCONNECTED";
        case EventType::kConnectRequest:
            return "CONNECT_REQUEST";
        case EventType::kAdapterRemoved:
            return "ADAPTER_REMOVED";
    }
    return "UNKNOWN";
}

const char* RequestKindName(RequestKind kind) noexcept {
    switch (kind) {
        case RequestKind::kConnect:
            return "CONNECT";
        case RequestKind::kCompleteConnect:
            return "COMPLETE_CONNECT";
        case RequestKind::kAccept:
            return "ACCEPT";
        case RequestKind::kDisconnect:
            return "DISCONNECT";
    }
    return "UNKNOWN";
}

const char* OperationTypeName(std::uint32_t type) noexcept {
    switch (type) {
        case operation_type::kReceive:
            return "RECEIVE";
        case operation_type::kReceiveAndInvalidate:
            return "RECEIVE_AND_INVALIDATE";
        case operation_type::kSend:
            return "SEND";
        case operation_type::kFastRegister:
            return "FAST_REGISTER";
        case operation_type::kBind:
            return "BIND";
        case operation_type::kInvalidate:
            return "INVALIDATE";
        case operation_type::kRead:
            return "READ";
        case operation_type::kWrite:
            return "WRITE";
        default:
            return "UNKNOWN";
    }
}

}  // namespace ndk
