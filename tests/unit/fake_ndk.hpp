// SPDX-License-Identifier: GPL-2.0
// A fake /dev/ndk for unit tests: installs ndk::testing::SetIoctlHook,
// records every ioctl's input struct, and answers like the module would
// (new handles, tokens, queued results and events).  Objects are opened on
// /dev/null, whose descriptor poll() reports readable at once.
#pragma once

#include <linux/ioctl.h>
#include <ndk/ndk_ioctl.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "ndk/ndk.hpp"
#include "ndk/testing.hpp"

namespace fake {

inline constexpr const char* kPath = "/dev/null";

struct Call {
    unsigned long cmd;
    std::vector<std::uint8_t> in;  // the struct as the library passed it
};

class FakeNdk {
  public:
    FakeNdk() {
        ndk::testing::SetIoctlHook(
            [this](int fd, unsigned long cmd, void* arg) { return Handle(fd, cmd, arg); });
    }
    ~FakeNdk() { ndk::testing::SetIoctlHook({}); }
    FakeNdk(const FakeNdk&) = delete;
    FakeNdk& operator=(const FakeNdk&) = delete;

    // The input of the n-th (from the end: 0 = last) call of cmd.
    template <typename T>
    T Last(unsigned long cmd, std::size_t from_end = 0) const {
        T t{};
        for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
            if (it->cmd != cmd) continue;
            if (from_end--) continue;
            std::memcpy(&t, it->in.data(), sizeof(T));
            return t;
        }
        ADD_FAILURE() << "no call of cmd 0x" << std::hex << cmd;
        return t;
    }
    int Count(unsigned long cmd) const {
        int n = 0;
        for (const auto& c : calls) n += c.cmd == cmd;
        return n;
    }
    // Handles closed, in order.
    std::vector<std::uint32_t> Closed() const {
        std::vector<std::uint32_t> out;
        for (const auto& c : calls)
            if (c.cmd == NDK_IOCTL_HANDLE_CLOSE) {
                ndk_u_handle_close h;
                std::memcpy(&h, c.in.data(), sizeof(h));
                out.push_back(h.handle);
            }
        return out;
    }

    std::vector<Call> calls;
    std::map<unsigned long, int> fail;  // cmd -> errno to fail with
    std::uint32_t next_handle = 1;
    std::uint64_t features =
        NDK_U_FEATURE_ADAPTER_QUERY | NDK_U_FEATURE_OBJECTS | NDK_U_FEATURE_VERBS;
    std::uint32_t post_token = 0xabcd01;
    std::deque<ndk_u_event> events;
    std::deque<ndk_u_result> results;
    std::vector<ndk_u_sge> last_sgl;         // the SGL of the last QP_POST
    std::vector<std::uint8_t> last_private;  // private data of CONNECT/ACCEPT/REJECT
    std::vector<std::uint8_t> peer_private{1, 2, 3};
    int event_gets = 0;
    // Live MEM_REGISTER registrations: handle -> references.
    std::map<std::uint32_t, std::uint32_t> mem_refs;

  private:
    using MemKey = std::tuple<std::uint32_t, std::uint64_t, std::uint64_t, std::uint32_t>;
    std::map<MemKey, std::uint32_t> mem_by_key;

    int Handle(int, unsigned long cmd, void* arg) {
        const auto* p = static_cast<const std::uint8_t*>(arg);
        calls.push_back(Call{cmd, std::vector<std::uint8_t>(p, p + _IOC_SIZE(cmd))});
        if (auto f = fail.find(cmd); f != fail.end()) return -f->second;
        switch (cmd) {
            case NDK_IOCTL_QUERY_INFO: {
                auto* q = static_cast<ndk_u_query_info*>(arg);
                q->abi_version = NDK_U_ABI_VERSION;
                q->features = features;
                q->adapter_count = 1;
                return 0;
            }
            case NDK_IOCTL_ADAPTER_OPEN:
                static_cast<ndk_u_adapter_open*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_PD_CREATE:
                static_cast<ndk_u_pd_create*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_CQ_CREATE:
                static_cast<ndk_u_cq_create*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_QP_CREATE:
                static_cast<ndk_u_qp_create*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_MR_CREATE:
                static_cast<ndk_u_mr_create*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_MW_CREATE:
                static_cast<ndk_u_mw_create*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_CONNECTOR_CREATE:
                static_cast<ndk_u_connector_create*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_LISTENER_CREATE:
                static_cast<ndk_u_listener_create*>(arg)->handle = next_handle++;
                return 0;
            case NDK_IOCTL_MEM_REGISTER: {
                // As the module: the same (PD, address, length, flags)
                // is the same handle with one more reference.
                auto* m = static_cast<ndk_u_mem_register*>(arg);
                MemKey key{m->pd_handle, m->address, m->length, m->flags};
                auto it = mem_by_key.find(key);
                if (it == mem_by_key.end()) {
                    it = mem_by_key.emplace(key, next_handle++).first;
                    mem_refs[it->second] = 0;
                }
                m->handle = it->second;
                m->local_token = 0x100;
                m->remote_token = 0x200;
                m->references = ++mem_refs[m->handle];
                m->base_address = m->address;
                return 0;
            }
            case NDK_IOCTL_MEM_DEREGISTER: {
                auto* m = static_cast<ndk_u_mem_deregister*>(arg);
                auto it = mem_refs.find(m->handle);
                if (it == mem_refs.end()) return -ENOENT;
                m->references = --it->second;
                if (!it->second) {
                    mem_refs.erase(it);
                    for (auto k = mem_by_key.begin(); k != mem_by_key.end(); ++k)
                        if (k->second == m->handle) {
                            mem_by_key.erase(k);
                            break;
                        }
                }
                return 0;
            }
            case NDK_IOCTL_MR_REGISTER: {
                auto* m = static_cast<ndk_u_mr_register*>(arg);
                m->local_token = 0x300;
                m->remote_token = 0x400;
                return 0;
            }
            case NDK_IOCTL_TOKEN_QUERY: {
                auto* t = static_cast<ndk_u_token_query*>(arg);
                t->local_token = 0x500;
                t->remote_token = 0x600;
                return 0;
            }
            case NDK_IOCTL_QP_POST: {
                auto* q = static_cast<ndk_u_qp_post*>(arg);
                // As the kernel: more SGEs than the ABI carries are
                // refused before the list is read.
                if (q->nsge > NDK_U_SGE_MAX) return -EINVAL;
                const auto* sgl = reinterpret_cast<const ndk_u_sge*>(q->sgl);
                last_sgl.assign(sgl, sgl + q->nsge);
                if (q->op == NDK_U_OP_FAST_REGISTER || q->op == NDK_U_OP_BIND)
                    q->token = post_token;
                return 0;
            }
            case NDK_IOCTL_CONNECT: {
                auto* c = static_cast<ndk_u_connect*>(arg);
                CopyPrivate(c->private_data, c->private_data_length);
                return 0;
            }
            case NDK_IOCTL_ACCEPT: {
                auto* a = static_cast<ndk_u_accept*>(arg);
                CopyPrivate(a->private_data, a->private_data_length);
                return 0;
            }
            case NDK_IOCTL_REJECT: {
                auto* r = static_cast<ndk_u_reject*>(arg);
                CopyPrivate(r->private_data, r->private_data_length);
                return 0;
            }
            case NDK_IOCTL_CONNECTOR_QUERY: {
                auto* q = static_cast<ndk_u_connector_query*>(arg);
                if (q->private_data_length < peer_private.size()) return -EOVERFLOW;
                std::memcpy(reinterpret_cast<void*>(q->private_data), peer_private.data(),
                            peer_private.size());
                q->private_data_length = static_cast<std::uint32_t>(peer_private.size());
                q->inbound_read_limit = 4;
                q->outbound_read_limit = 8;
                auto l = ndk::SockAddr::Parse("10.99.0.1:4791");
                auto r = ndk::SockAddr::Parse("10.99.0.1:50000");
                l->CopyTo(q->local_address);
                r->CopyTo(q->peer_address);
                return 0;
            }
            case NDK_IOCTL_LISTEN: {
                auto* l = static_cast<ndk_u_listen*>(arg);
                auto a = ndk::SockAddr::FromBytes(l->address);
                if (a.port() == 0) a.WithPort(40000).CopyTo(l->address);
                return 0;
            }
            case NDK_IOCTL_CQ_POLL: {
                auto* q = static_cast<ndk_u_cq_poll*>(arg);
                auto* out = reinterpret_cast<ndk_u_result*>(q->results);
                std::uint32_t n = 0;
                while (n < q->count && !results.empty()) {
                    out[n++] = results.front();
                    results.pop_front();
                }
                q->count = n;
                return 0;
            }
            case NDK_IOCTL_EVENT_GET: {
                ++event_gets;
                auto* g = static_cast<ndk_u_event_get*>(arg);
                auto* out = reinterpret_cast<ndk_u_event*>(g->events);
                std::uint32_t n = 0;
                while (n < g->count && !events.empty()) {
                    out[n++] = events.front();
                    events.pop_front();
                }
                g->count = n;
                return 0;
            }
            default:
                return 0;
        }
    }

    void CopyPrivate(std::uint64_t addr, std::uint32_t len) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(addr);
        last_private.assign(p, p + len);
    }
};

// Bytes [from, to) of a recorded struct are all zero (reserved fields).
inline bool Zero(const void* p, std::size_t from, std::size_t to) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    for (std::size_t i = from; i < to; ++i)
        if (b[i]) return false;
    return true;
}

}  // namespace fake
