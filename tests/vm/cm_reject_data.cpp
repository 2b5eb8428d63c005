// SPDX-License-Identifier: GPL-2.0
// CONNECTOR_QUERY after a refused connect (Documentation/uapi.md): the
// listener rejects a connection request with private data, the connect
// completes ECONNREFUSED, and Connector::GetConnectionData() on the active
// connector gives the reject's private data (NdkGetConnectionData after a
// reject), read limits 0 and no addresses; GetLocalAddress() and
// GetPeerAddress() give ENOTCONN.  Before the fix the query needed the
// local address and gave EISCONN, so the data could not be read.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include "loopback.hpp"
#include "t_helpers.hpp"

namespace {

using ndk_t::Failure;
using ndk_t::Must;
using namespace std::chrono_literals;

std::vector<std::byte> Pattern(std::size_t n, unsigned seed) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(seed + i * 7);
    return v;
}

// The first `want.size()` bytes of `got` are `want`; the rest (IB and RoCE
// pad the field to MaxCalleeData) are zero.
bool DataIs(const std::vector<std::byte>& got, const std::vector<std::byte>& want) {
    if (got.size() < want.size()) return false;
    if (std::memcmp(got.data(), want.data(), want.size()) != 0) return false;
    for (std::size_t i = want.size(); i < got.size(); ++i)
        if (got[i] != std::byte{0}) return false;
    return true;
}

void Run() {
    ndk_t::Loopback lb;
    lb.Open();
    auto qp =
        Must(ndk::QueuePair::Create(*lb.pd, *lb.cq, *lb.cq, ndk::QueuePairParams{}), "create QP");
    auto listener = Must(ndk::Listener::Create(*lb.adapter), "create listener");
    auto bound = Must(listener.Listen(ndk::SockAddr::Parse("10.99.0.1").value()), "listen");
    auto active = Must(ndk::Connector::Create(*lb.adapter), "create connector");

    // Nothing received yet: no connection data.
    auto none = active.GetConnectionData();
    T_CHECK(!none.ok() && none.error().errnum == EISCONN);

    const auto request = Pattern(8, 0x11);
    const auto refusal = Pattern(20, 0x99);
    Must(active.Connect(qp, bound, {.private_data = request}), "connect");
    auto passive = Must(listener.GetConnectionRequest(10s), "connection request");
    auto in = Must(passive.GetConnectionData(), "passive connection data");
    T_CHECK(in.private_data.size() >= request.size() &&
            std::memcmp(in.private_data.data(), request.data(), request.size()) == 0);
    Must(passive.Reject(refusal), "reject");

    auto done = active.WaitFor(ndk::RequestKind::kConnect, 10s);
    T_CHECK(!done.ok() && done.error().errnum == ECONNREFUSED);
    if (!done.ok()) std::printf("connect: %s\n", done.error().Message().c_str());

    auto d = active.GetConnectionData();
    if (!d) {
        std::fprintf(stderr, "GetConnectionData after the reject: %s\n",
                     d.error().Message().c_str());
        ++t_failures;
        return;
    }
    std::printf("reject data: %zu bytes, read limits %u/%u\n", d->private_data.size(),
                d->inbound_read_limit, d->outbound_read_limit);
    T_CHECK(DataIs(d->private_data, refusal));
    T_CHECK(d->inbound_read_limit == 0 && d->outbound_read_limit == 0);
    T_CHECK(d->local_address.empty());
    T_CHECK(d->peer_address.empty());
    auto la = active.GetLocalAddress();
    T_CHECK(!la.ok() && la.error().errnum == ENOTCONN);
    auto pa = active.GetPeerAddress();
    T_CHECK(!pa.ok() && pa.error().errnum == ENOTCONN);

    // The passive side still has the request's data and both addresses.
    auto p = Must(passive.GetConnectionData(), "passive connection data after the reject");
    T_CHECK(!p.local_address.empty() && !p.peer_address.empty());
}

}  // namespace

int main() {
    try {
        Run();
    } catch (const Failure& f) {
        std::fprintf(stderr, "FAIL: %s\n", f.what.c_str());
        return kTestFail;
    }
    return t_result("cm-reject-data");
}
