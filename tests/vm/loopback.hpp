// SPDX-License-Identifier: GPL-2.0
// Helpers of the reliability guest tests built on libndk: results that
// must hold (a Failure otherwise), page-aligned buffers, and a loopback
// connection of two QPs on one adapter (rxe0, 10.99.0.1).
#pragma once

#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <string>

#include "ndk/ndk.hpp"

namespace ndk_t {

using namespace std::chrono_literals;

inline constexpr std::size_t kPage = 4096;

struct Failure {
    std::string what;
};

template <typename T>
T Must(ndk::Result<T> r, const char* what) {
    if (!r) throw Failure{std::string(what) + ": " + r.error().Message()};
    return std::move(*r);
}

inline void Must(ndk::Result<void> r, const char* what) {
    if (!r) throw Failure{std::string(what) + ": " + r.error().Message()};
}

// One completion within 10 s; returns it (status unchecked).
inline ndk::CompletionResult WaitOne(const ndk::CompletionQueue& cq, const char* what) {
    ndk::CompletionResult r[1];
    auto n = cq.PollUntil(r, 1, 10s);
    if (!n || *n != 1) throw Failure{std::string(what) + ": no completion"};
    return r[0];
}

inline void WaitOk(const ndk::CompletionQueue& cq, const char* what) {
    if (!ndk::NtSuccess(WaitOne(cq, what).status))
        throw Failure{std::string(what) + ": completion failed"};
}

// Page-aligned anonymous memory, zeroed (pre-faulted), unmapped at the end.
struct Pages {
    explicit Pages(std::size_t n) : len(n * kPage) {
        void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw Failure{"mmap"};
        base = static_cast<char*>(p);
        std::memset(base, 0, len);
    }
    ~Pages() { munmap(base, len); }
    Pages(const Pages&) = delete;
    Pages& operator=(const Pages&) = delete;
    char* base = nullptr;
    std::size_t len;
};

// Adapter, PD, one CQ and two QPs connected to each other.
struct Loopback {
    std::optional<ndk::Adapter> adapter;
    std::optional<ndk::ProtectionDomain> pd;
    std::optional<ndk::CompletionQueue> cq;
    std::optional<ndk::QueuePair> client, server;
    std::optional<ndk::Listener> listener;
    std::optional<ndk::Connector> active, passive;
    // IRD and ORD of both sides (0: no RDMA read).
    std::uint32_t read_limit = 0;

    void Open(const char* name = "rxe0") {
        adapter.emplace(Must(ndk::Adapter::OpenByName(name), "open adapter"));
        pd.emplace(Must(adapter->CreateProtectionDomain(), "create PD"));
        cq.emplace(Must(ndk::CompletionQueue::Create(*adapter, 64), "create CQ"));
    }

    // Creates the QPs and connects them (Open first).
    void Connect(const char* ip = "10.99.0.1") {
        ndk::QueuePairParams params;
        client.emplace(Must(ndk::QueuePair::Create(*pd, *cq, *cq, params), "create QP"));
        server.emplace(Must(ndk::QueuePair::Create(*pd, *cq, *cq, params), "create QP"));
        listener.emplace(Must(ndk::Listener::Create(*adapter), "create listener"));
        auto bound = Must(listener->Listen(ndk::SockAddr::Parse(ip).value()), "listen");
        active.emplace(Must(ndk::Connector::Create(*adapter), "create connector"));
        Must(active->Connect(*client, bound,
                             {.inbound_read_limit = read_limit, .outbound_read_limit = read_limit}),
             "connect");
        passive.emplace(Must(listener->GetConnectionRequest(10s), "connection request"));
        Must(passive->Accept(*server,
                             {.inbound_read_limit = read_limit, .outbound_read_limit = read_limit}),
             "accept");
        Must(active->WaitFor(ndk::RequestKind::kConnect, 10s), "connect completion");
        Must(active->CompleteConnect(), "complete connect");
        Must(active->WaitFor(ndk::RequestKind::kCompleteConnect, 10s), "complete-connect");
        Must(passive->WaitFor(ndk::RequestKind::kAccept, 10s), "accept completion");
    }

    // Drops the connection and both QPs (the next Connect makes new ones).
    void Disconnect() {
        passive.reset();
        active.reset();
        listener.reset();
        server.reset();
        client.reset();
    }
};

}  // namespace ndk_t
