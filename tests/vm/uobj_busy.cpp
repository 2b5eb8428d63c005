// SPDX-License-Identifier: GPL-2.0
// Guest test: HANDLE_CLOSE's busy rule is the kernel API object's
// (ndk_obj_busy(): its successors not closed yet), issue 18.
//   connection   over a loopback connection, every entry but the passive
//                connector (made for the listener's connection request)
//                closes at once, the listener first; the adapter does not
//                (EBUSY) while that connector lives: it counts in the
//                adapter, not in the listener; then it does.
//   answered     connection requests taken, then their listener closed:
//                one is accepted (the connection completes on both sides),
//                the other rejected (the connect fails with ECONNREFUSED);
//                the listener's backlog and the connectors' ids outlive it.
//   registering  a MEM_REGISTER that the driver pins is held for 2 s
//                after its pin (debugfs ndk/hold_registration_ms, root):
//                meanwhile HANDLE_CLOSE of its PD is EBUSY (the MR being
//                registered counts in the PD, as uverbs refuses to
//                destroy a PD a registration is being made in); the
//                registration then succeeds, and once it is deregistered
//                the PD closes.
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "loopback.hpp"
#include "sec_common.hpp"
#include "uobj_common.hpp"

namespace {

using ndk_t::Failure;
using ndk_t::kPage;
using ndk_t::Must;
using namespace std::chrono_literals;

void Connection() {
    ndk_t::Loopback lb;
    lb.Open();
    lb.Connect();
    int fd = lb.adapter->fd();
    std::uint32_t adapter = lb.adapter->handle();

    T_EXPECT_ERRNO(t_handle_close(fd, lb.pd->handle()), EBUSY);  // its QPs
    T_EXPECT_ERRNO(t_handle_close(fd, lb.cq->handle()), EBUSY);  // QPs count in it
    T_EXPECT_ERRNO(t_handle_close(fd, adapter), EBUSY);
    // The listener first: its connection outlives it (NDK).
    T_CHECK(t_handle_close(fd, lb.listener->handle()) == 0);
    T_CHECK(t_handle_close(fd, lb.active->handle()) == 0);
    T_CHECK(t_handle_close(fd, lb.client->handle()) == 0);
    T_CHECK(t_handle_close(fd, lb.server->handle()) == 0);  // the connector holds its QP
    T_CHECK(t_handle_close(fd, lb.cq->handle()) == 0);
    T_CHECK(t_handle_close(fd, lb.pd->handle()) == 0);
    T_EXPECT_ERRNO(t_handle_close(fd, adapter), EBUSY);  // the passive connector
    T_CHECK(t_handle_close(fd, lb.passive->handle()) == 0);
    T_CHECK(t_handle_close(fd, adapter) == 0);
}

// Requests taken from a listener are answered after it was closed.
void AnsweredAfterListenerClosed() {
    ndk_t::Loopback lb;
    lb.Open();
    int fd = lb.adapter->fd();
    ndk::QueuePairParams params;
    auto client = Must(ndk::QueuePair::Create(*lb.pd, *lb.cq, *lb.cq, params), "create QP");
    auto server = Must(ndk::QueuePair::Create(*lb.pd, *lb.cq, *lb.cq, params), "create QP");
    auto spare = Must(ndk::QueuePair::Create(*lb.pd, *lb.cq, *lb.cq, params), "create QP");
    auto listener = Must(ndk::Listener::Create(*lb.adapter), "create listener");
    auto bound = Must(listener.Listen(ndk::SockAddr::Parse("10.99.0.1").value()), "listen");
    auto accepted = Must(ndk::Connector::Create(*lb.adapter), "create connector");
    auto refused = Must(ndk::Connector::Create(*lb.adapter), "create connector");
    Must(accepted.Connect(client, bound, {}), "connect");
    auto a = Must(listener.GetConnectionRequest(10s), "connection request");
    Must(refused.Connect(spare, bound, {}), "connect");
    auto r = Must(listener.GetConnectionRequest(10s), "connection request");

    T_CHECK(t_handle_close(fd, listener.handle()) == 0);
    Must(a.Accept(server, {}), "accept after the listener closed");
    Must(accepted.WaitFor(ndk::RequestKind::kConnect, 10s), "connect completion");
    Must(accepted.CompleteConnect(), "complete connect");
    Must(accepted.WaitFor(ndk::RequestKind::kCompleteConnect, 10s), "complete-connect");
    Must(a.WaitFor(ndk::RequestKind::kAccept, 10s), "accept completion");
    Must(r.Reject(), "reject after the listener closed");
    auto done = refused.WaitFor(ndk::RequestKind::kConnect, 10s);
    T_CHECK(!done.ok() && done.error().errnum == ECONNREFUSED);
}

constexpr int kHoldMs = 2000;

void Registering() {
    int fd = t_open_ndk();
    long id = t_first_adapter(fd);
    T_CHECK(fd >= 0 && id >= 0);
    std::uint32_t ad = t_adapter_open(fd, static_cast<std::uint32_t>(id));
    std::uint32_t pd = t_pd_create(fd, ad);
    T_CHECK(ad && pd);
    void* buf = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T_CHECK(buf != MAP_FAILED);
    static_cast<char*>(buf)[0] = 1;  // anonymous and present: the driver pins it

    T_CHECK(sec::WriteFile("/sys/kernel/debug/ndk/hold_registration_ms", std::to_string(kHoldMs)));
    ndk_u_mem_register m{};
    int reg_rc = -1, reg_errno = 0;
    auto start = std::chrono::steady_clock::now();
    std::thread registrar([&] {
        reg_rc = t_mem_register(fd, pd, buf, kPage, NDK_U_MEM_READWRITE, &m);
        reg_errno = errno;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(kHoldMs / 4));
    T_EXPECT_ERRNO(t_handle_close(fd, pd), EBUSY);
    bool early = std::chrono::steady_clock::now() - start < std::chrono::milliseconds(kHoldMs);
    registrar.join();
    sec::WriteFile("/sys/kernel/debug/ndk/hold_registration_ms", "0");
    if (!early) {
        std::fprintf(stderr,
                     "registering: the close came after the hold; the test proves nothing\n");
        ++t_failures;
    }
    if (reg_rc != 0) {
        std::fprintf(stderr, "registering: MEM_REGISTER failed: %s\n", std::strerror(reg_errno));
        ++t_failures;
    } else {
        std::uint32_t left = 1;
        T_CHECK(t_mem_deregister(fd, m.handle, &left) == 0 && left == 0);
    }
    T_CHECK(t_handle_close(fd, pd) == 0);
    T_CHECK(t_handle_close(fd, ad) == 0);
    munmap(buf, kPage);
    close(fd);
}

}  // namespace

int main() {
    if (geteuid() != 0) {
        std::fprintf(stderr, "needs root (debugfs ndk/hold_registration_ms)\n");
        return kTestFail;
    }
    try {
        Connection();
        AnsweredAfterListenerClosed();
    } catch (const Failure& f) {
        std::fprintf(stderr, "FAIL: %s\n", f.what.c_str());
        return kTestFail;
    }
    Registering();
    return t_result("uobj-busy");
}
