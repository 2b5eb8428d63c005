// SPDX-License-Identifier: GPL-2.0
// A hostile ndkblk target through /dev/ndk, for the tests that play one:
// its listener, its CQ and QP, and the accept with a hello.
#pragma once

#include <cstring>

#include "ndkblk_wire.hpp"
#include "sec_common.hpp"

namespace ndkblk_wire {

// A listener of adapter @ad on the target's port; 0 on error.
inline std::uint32_t ListenTarget(rel::Dev& d, std::uint32_t ad) {
    ndk_u_listener_create lc{};
    lc.adapter_handle = ad;
    std::uint32_t lis = d.Create(NDK_IOCTL_LISTENER_CREATE, &lc);
    ndk_u_listen ln{};
    ln.listener_handle = lis;
    sockaddr_in sin = rel::LoopbackAddress(kPort);
    std::memcpy(ln.address, &sin, sizeof(sin));
    return lis && d.Ioctl(NDK_IOCTL_LISTEN, &ln) == 0 ? lis : 0;
}

// A target's first steps: its adapter and PD (*@ad, *@pd), a listener on
// the target's port, @mark written once it listens, and the connector of
// the first connection request; 0 on error.
inline std::uint32_t AwaitInitiator(rel::Dev& d, const char* mark, std::uint32_t* ad,
                                    std::uint32_t* pd) {
    *ad = d.OpenAdapter();
    *pd = *ad ? t_pd_create(d.fd(), *ad) : 0;
    std::uint32_t lis = *pd ? ListenTarget(d, *ad) : 0;
    if (!lis) return 0;
    sec::WriteFile(mark, "listening");
    ndk_u_event ev{};
    return d.WaitEvent(NDK_U_EVENT_CONNECT_REQUEST, lis, &ev, 60000) ? ev.object : 0;
}

// A QP of @pd with its own CQ (*@cq), kDepth deep each way; 0 on error.
inline std::uint32_t TargetQp(rel::Dev& d, std::uint32_t ad, std::uint32_t pd, std::uint32_t* cq) {
    ndk_u_cq_create cc{};
    cc.adapter_handle = ad;
    cc.depth = 4 * kDepth;
    *cq = d.Create(NDK_IOCTL_CQ_CREATE, &cc);
    ndk_u_qp_create qc{};
    qc.pd_handle = pd;
    qc.receive_cq_handle = qc.initiator_cq_handle = *cq;
    qc.receive_queue_depth = qc.initiator_queue_depth = kDepth;
    qc.max_receive_request_sge = qc.max_initiator_request_sge = 1;
    return *cq && ioctl(d.fd(), NDK_IOCTL_QP_CREATE, &qc) == 0 ? qc.handle : 0;
}

// Accepts connector @con on @qp with a hello for a 2048-sector disk of one
// queue, and waits for the initiator's completion; false on error.
inline bool AcceptInitiator(rel::Dev& d, std::uint32_t con, std::uint32_t qp) {
    Hello hello{kMagic, kDepth, 128 << 10, 0, 2048, 1, 0};
    ndk_u_accept ac{};
    ac.connector_handle = con;
    ac.qp_handle = qp;
    ac.inbound_read_limit = ac.outbound_read_limit = 1;
    ac.private_data = reinterpret_cast<std::uintptr_t>(&hello);
    ac.private_data_length = sizeof(hello);
    ndk_u_event ev{};
    return d.Ioctl(NDK_IOCTL_ACCEPT, &ac) == 0 &&
           d.WaitEvent(NDK_U_EVENT_REQUEST, con, &ev, 30000) && ev.status == 0;
}

}  // namespace ndkblk_wire
