// SPDX-License-Identifier: BSD-2-Clause
// libndk example (Documentation/library.md): one process connects two QPs
// of one adapter over a loopback connection, sends a message and
// RDMA-writes into a fast-registered buffer of the peer.
//   libndk-example [ADAPTER [IP]]     default: rxe0 10.99.0.1
#include <cstdio>
#include <cstring>
#include <vector>

#include "ndk/ndk.hpp"

using namespace std::chrono_literals;

// Prints the error and gives exit status 1.
static int Fail(const char* what, const ndk::Error& e) {
    std::fprintf(stderr, "%s: %s\n", what, e.Message().c_str());
    return 1;
}

// Waits for one completion on cq and checks its status.
static bool Wait(const ndk::CompletionQueue& cq, const char* what) {
    ndk::CompletionResult r[1];
    auto n = cq.PollUntil(r, 1, 5s);
    if (!n || *n == 0 || !ndk::NtSuccess(r[0].status)) {
        std::fprintf(stderr, "%s: %s\n", what,
                     !n        ? n.error().Message().c_str()
                     : *n == 0 ? "timed out"
                               : std::string(ndk::StatusName(r[0].status)).c_str());
        return false;
    }
    std::printf("%s: %s, %u bytes\n", what, ndk::OperationTypeName(r[0].type),
                r[0].bytes_transferred);
    return true;
}

int main(int argc, char** argv) {
    const char* name = argc > 1 ? argv[1] : "rxe0";
    const char* ip = argc > 2 ? argv[2] : "10.99.0.1";

    // Adapter (its own /dev/ndk file), PD, one CQ, two QPs.
    auto adapter = ndk::Adapter::OpenByName(name);
    if (!adapter) return Fail("open adapter", adapter.error());
    auto pd = adapter->CreateProtectionDomain();
    if (!pd) return Fail("create PD", pd.error());
    auto cq = ndk::CompletionQueue::Create(*adapter, 16);
    if (!cq) return Fail("create CQ", cq.error());
    ndk::QueuePairParams params;  // depths 16, one SGE each way
    auto client = ndk::QueuePair::Create(*pd, *cq, *cq, params);
    auto server = ndk::QueuePair::Create(*pd, *cq, *cq, params);
    if (!client || !server) return Fail("create QP", (client ? server : client).error());

    // Loopback connection: listen on any port, connect, accept.
    auto listener = ndk::Listener::Create(*adapter);
    if (!listener) return Fail("create listener", listener.error());
    auto bound = listener->Listen(ndk::SockAddr::Parse(ip).value());
    if (!bound) return Fail("listen", bound.error());
    auto active = ndk::Connector::Create(*adapter);
    if (!active) return Fail("create connector", active.error());
    if (auto r = active->Connect(*client, *bound); !r) return Fail("connect", r.error());
    auto passive = listener->GetConnectionRequest(5s);
    if (!passive) return Fail("connection request", passive.error());
    if (auto r = passive->Accept(*server); !r) return Fail("accept", r.error());
    if (auto e = active->WaitFor(ndk::RequestKind::kConnect, 5s); !e)
        return Fail("connect", e.error());
    if (auto r = active->CompleteConnect(); !r) return Fail("complete connect", r.error());
    if (auto e = active->WaitFor(ndk::RequestKind::kCompleteConnect, 5s); !e)
        return Fail("complete connect", e.error());
    if (auto e = passive->WaitFor(ndk::RequestKind::kAccept, 5s); !e)
        return Fail("accept", e.error());
    std::printf("connected to %s\n", bound->ToString().c_str());

    // Memory: one registration for both sides' buffers (same PD).
    std::vector<char> mem(8192);
    char* msg = mem.data();          // client's send source
    char* inbox = mem.data() + 256;  // server's receive buffer
    char* target = mem.data() + 4096;
    auto mr = ndk::MemoryRegion::Create(*pd);
    if (!mr) return Fail("create MR", mr.error());
    if (auto r = mr->Register(mem.data(), mem.size(), ndk::mr_flag::kAllowLocalWrite); !r)
        return Fail("register", r.error());

    // Send / receive.
    std::strcpy(msg, "hello over NDK");
    ndk::Sge rx{inbox, 256, mr->local_token()};
    if (auto r = server->Receive(1, std::span(&rx, 1)); !r) return Fail("receive", r.error());
    ndk::Sge tx{msg, static_cast<std::uint32_t>(std::strlen(msg) + 1), mr->local_token()};
    if (auto r = client->Send(2, std::span(&tx, 1)); !r) return Fail("send", r.error());
    if (!Wait(*cq, "completion") || !Wait(*cq, "completion")) return 1;  // send, receive
    std::printf("server received \"%s\"\n", inbox);

    // The server exposes [target, +1024) for remote write: a fast-register
    // MR over the registration's pages; the client writes through its token.
    auto fr = ndk::MemoryRegion::Create(*pd, /*fast_register=*/true);
    if (!fr) return Fail("create FR MR", fr.error());
    if (auto r = fr->InitializeFastRegister(2, /*remote_access=*/true); !r)
        return Fail("init FR", r.error());
    auto token = server->FastRegister(3, *fr, *mr, target, 1024, ndk::op_flag::kAllowRemoteWrite);
    if (!token) return Fail("fast-register", token.error());
    if (!Wait(*cq, "fast-register")) return 1;
    if (auto r =
            client->Write(4, std::span(&tx, 1), reinterpret_cast<std::uintptr_t>(target), *token);
        !r)
        return Fail("write", r.error());
    if (!Wait(*cq, "RDMA write")) return 1;
    std::printf("target now holds \"%s\" (token 0x%x)\n", target, *token);

    // Invalidate, disconnect; destructors close everything, children first.
    if (auto r = server->Invalidate(5, *fr); !r) return Fail("invalidate", r.error());
    if (!Wait(*cq, "invalidate")) return 1;
    if (auto r = active->Disconnect(); !r) return Fail("disconnect", r.error());
    if (auto e = active->WaitFor(ndk::RequestKind::kDisconnect, 5s); !e)
        return Fail("disconnect", e.error());
    return std::strcmp(target, msg) == 0 ? 0 : 1;
}
