// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/completion_queue.hpp"

#include <algorithm>
#include <cerrno>

#include "ndk/adapter.hpp"
#include "state.hpp"
#include "sys.hpp"

namespace ndk {

Result<CompletionQueue> CompletionQueue::Create(const Adapter& adapter, std::uint32_t depth,
                                                std::uint64_t context) {
    if (!adapter.s_) return Error::FromErrno(EBADF);
    ndk_u_cq_create c{};
    c.adapter_handle = adapter.s_->handle;
    c.depth = depth;
    c.context = context;
    if (detail::RingsWanted(*adapter.s_)) c.flags = NDK_U_CQ_CREATE_F_RING;
    if (auto r = detail::Ioctl(adapter.fd(), NDK_IOCTL_CQ_CREATE, &c); !r) return r.error();
    auto s = std::make_shared<detail::CqState>(adapter.s_, c.handle);
    if (c.flags & NDK_U_CQ_CREATE_F_RING) {
        auto m = detail::Mapping::Map(adapter.fd(), c.ring_offset, c.ring_size);
        if (!m) return m.error();
        s->ring = std::make_unique<detail::CompletionRing>(std::move(*m), c.ring_entries);
    }
    return CompletionQueue(std::move(s), context);
}

std::uint32_t CompletionQueue::handle() const noexcept { return s_ ? s_->handle : 0; }

Result<void> CompletionQueue::Arm(std::uint32_t type) const {
    if (!s_) return Error::FromErrno(EBADF);
    ndk_u_cq_arm a{};
    a.handle = s_->handle;
    a.type = type;
    return detail::Ioctl(s_->fd(), NDK_IOCTL_CQ_ARM, &a);
}

Result<std::size_t> CompletionQueue::Poll(std::span<CompletionResult> out) const {
    if (!s_) return Error::FromErrno(EBADF);
    if (s_->ring) return s_->ring->Poll(out);
    std::size_t got = 0;
    while (got < out.size()) {
        ndk_u_result buf[NDK_U_CQ_POLL_MAX];
        auto ask =
            static_cast<std::uint32_t>(std::min<std::size_t>(out.size() - got, NDK_U_CQ_POLL_MAX));
        ndk_u_cq_poll p{};
        p.handle = s_->handle;
        p.count = ask;
        p.results = reinterpret_cast<std::uintptr_t>(buf);
        if (auto r = detail::Ioctl(s_->fd(), NDK_IOCTL_CQ_POLL, &p); !r) {
            if (got) break;
            return r.error();
        }
        std::uint32_t n = std::min(p.count, ask);
        for (std::uint32_t i = 0; i < n; ++i) {
            const auto& u = buf[i];
            out[got++] = CompletionResult{u.request_context,   u.qp_context, u.status,
                                          u.bytes_transferred, u.type,       u.provider_error_code,
                                          u.type_specific};
        }
        if (n < ask) break;
    }
    return got;
}

Result<std::size_t> CompletionQueue::PollUntil(std::span<CompletionResult> out, std::size_t n,
                                               std::chrono::milliseconds timeout) const {
    if (!s_) return Error::FromErrno(EBADF);
    using Clock = std::chrono::steady_clock;
    const bool forever = timeout.count() < 0;
    const auto deadline = Clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);
    n = std::min(n, out.size());
    std::size_t got = 0;
    const std::uint32_t h = s_->handle;
    for (;;) {
        auto r = Poll(out.subspan(got));
        if (!r) return r.error();
        got += *r;
        if (got >= n) return got;
        if (auto a = Arm(cq_notify::kAny); !a) return a.error();
        // A result that arrived between the poll and the arm raised no
        // notification of its own: poll once more before sleeping.
        r = Poll(out.subspan(got));
        if (!r) return r.error();
        got += *r;
        if (got >= n) return got;
        auto left = std::chrono::milliseconds(-1);
        if (!forever) {
            left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) return got;
        }
        auto e = detail::WaitEvent(
            *s_->adapter,
            [h](const Event& ev) { return ev.type == EventType::kCq && ev.handle == h; }, left);
        if (!e) {
            if (e.error().errnum == ETIMEDOUT) {
                // Results may still have come in the last moment.
                r = Poll(out.subspan(got));
                if (!r) return r.error();
                return got + *r;
            }
            return e.error();
        }
        if (!NtSuccess(e->status)) return Error::FromStatus(e->status);
    }
}

}  // namespace ndk
