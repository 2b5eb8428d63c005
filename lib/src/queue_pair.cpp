// SPDX-License-Identifier: BSD-2-Clause
#include "ndk/queue_pair.hpp"

#include <algorithm>
#include <cerrno>

#include "ndk/adapter.hpp"
#include "ndk/completion_queue.hpp"
#include "ndk/memory.hpp"
#include "state.hpp"
#include "sys.hpp"

namespace ndk {

MemorySource::MemorySource(const Registration& r) noexcept : handle_(r.handle()) {}
MemorySource::MemorySource(const MemoryRegion& mr) noexcept : handle_(mr.handle()) {}

Result<QueuePair> QueuePair::Create(const ProtectionDomain& pd, const CompletionQueue& receive_cq,
                                    const CompletionQueue& initiator_cq,
                                    const QueuePairParams& params) {
    if (!pd.s_ || !receive_cq.s_ || !initiator_cq.s_) return Error::FromErrno(EBADF);
    // Objects of another Adapter live on another file: their handles mean
    // nothing on this one.
    if (receive_cq.s_->adapter != pd.s_->adapter || initiator_cq.s_->adapter != pd.s_->adapter)
        return Error::FromErrno(EINVAL);
    ndk_u_qp_create c{};
    c.pd_handle = pd.s_->handle;
    c.receive_cq_handle = receive_cq.s_->handle;
    c.initiator_cq_handle = initiator_cq.s_->handle;
    c.receive_queue_depth = params.receive_queue_depth;
    c.initiator_queue_depth = params.initiator_queue_depth;
    c.max_receive_request_sge = params.max_receive_request_sge;
    c.max_initiator_request_sge = params.max_initiator_request_sge;
    c.inline_data_size = params.inline_data_size;
    c.context = params.context;
    if (detail::RingsWanted(*pd.s_->adapter)) c.flags = NDK_U_QP_CREATE_F_RING;
    if (auto r = detail::Ioctl(pd.s_->fd(), NDK_IOCTL_QP_CREATE, &c); !r) return r.error();
    auto s = std::make_shared<detail::QpState>(pd.s_, receive_cq.s_, initiator_cq.s_, c.handle);
    if (c.flags & NDK_U_QP_CREATE_F_RING) {
        auto m = detail::Mapping::Map(pd.s_->fd(), c.ring_offset, c.ring_size);
        if (!m) return m.error();
        s->ring = std::make_unique<detail::SubmissionRing>(
            std::move(*m), c.ring_entries,
            std::max(params.max_receive_request_sge, params.max_initiator_request_sge));
    }
    return QueuePair(std::move(s), params.context);
}

std::uint32_t QueuePair::handle() const noexcept { return s_ ? s_->handle : 0; }

namespace {

// Posts p after filling in the QP and the SGL; sgl entries are copied into
// the ABI's struct ndk_u_sge.  The kernel judges every request, even one
// with more SGEs than it takes, so that a refusal hands the requests
// deferred before it over to the device, as NDK's inline failures do.
Result<void> Post(const detail::QpState& qp, ndk_u_qp_post& p, std::span<const Sge> sgl) {
    p.qp_handle = qp.handle;
    if (qp.ring && sgl.size() <= qp.ring->max_sge()) return qp.ring->Post(qp.fd(), p, sgl);
    // Through the ioctl, after what waits in the ring.
    if (qp.ring) {
        if (auto r = qp.ring->Drain(qp.fd()); !r) return r.error();
    }
    ndk_u_sge u[NDK_U_SGE_MAX];
    if (sgl.size() <= NDK_U_SGE_MAX) {
        detail::FillSgl(p, sgl, u);
    } else {
        // Too many for the ABI: the count alone, which the kernel refuses.
        p.nsge = static_cast<std::uint32_t>(sgl.size());
        p.sgl = 0;
    }
    return detail::Ioctl(qp.fd(), NDK_IOCTL_QP_POST, &p);
}

ndk_u_qp_post Request(std::uint32_t op, std::uint64_t request_context, std::uint32_t flags) {
    ndk_u_qp_post p{};
    p.op = op;
    p.request_context = request_context;
    p.flags = flags;
    return p;
}

}  // namespace

Result<void> QueuePair::Send(std::uint64_t request_context, std::span<const Sge> sgl,
                             std::uint32_t flags) const {
    if (!s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_SEND, request_context, flags);
    return Post(*s_, p, sgl);
}

Result<void> QueuePair::SendAndInvalidate(std::uint64_t request_context, std::span<const Sge> sgl,
                                          std::uint32_t remote_token, std::uint32_t flags) const {
    if (!s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_SEND_INVALIDATE, request_context, flags);
    p.remote_token = remote_token;
    return Post(*s_, p, sgl);
}

Result<void> QueuePair::Receive(std::uint64_t request_context, std::span<const Sge> sgl) const {
    if (!s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_RECEIVE, request_context, 0);
    return Post(*s_, p, sgl);
}

Result<void> QueuePair::Read(std::uint64_t request_context, std::span<const Sge> sgl,
                             std::uint64_t remote_address, std::uint32_t remote_token,
                             std::uint32_t flags) const {
    if (!s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_READ, request_context, flags);
    p.remote_address = remote_address;
    p.remote_token = remote_token;
    return Post(*s_, p, sgl);
}

Result<void> QueuePair::Write(std::uint64_t request_context, std::span<const Sge> sgl,
                              std::uint64_t remote_address, std::uint32_t remote_token,
                              std::uint32_t flags) const {
    if (!s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_WRITE, request_context, flags);
    p.remote_address = remote_address;
    p.remote_token = remote_token;
    return Post(*s_, p, sgl);
}

Result<std::uint32_t> QueuePair::FastRegister(std::uint64_t request_context, MemoryRegion& mr,
                                              MemorySource source, const void* address,
                                              std::size_t length,
                                              std::uint64_t base_virtual_address,
                                              std::uint32_t flags) const {
    if (!s_ || !mr.s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_FAST_REGISTER, request_context, flags);
    p.object_handle = mr.s_->handle;
    p.mr_handle = source.handle();
    p.address = reinterpret_cast<std::uintptr_t>(address);
    p.length = length;
    p.remote_address = base_virtual_address;
    if (auto r = Post(*s_, p, {}); !r) return r.error();
    mr.s_->local_token = p.token;
    mr.s_->remote_token = p.token;
    return p.token;
}

Result<std::uint32_t> QueuePair::FastRegister(std::uint64_t request_context, MemoryRegion& mr,
                                              MemorySource source, const void* address,
                                              std::size_t length, std::uint32_t flags) const {
    return FastRegister(request_context, mr, source, address, length,
                        reinterpret_cast<std::uintptr_t>(address), flags);
}

Result<std::uint32_t> QueuePair::Bind(std::uint64_t request_context, MemorySource source,
                                      MemoryWindow& mw, const void* address, std::size_t length,
                                      std::uint32_t flags) const {
    if (!s_ || !mw.s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_BIND, request_context, flags);
    p.object_handle = mw.s_->handle;
    p.mr_handle = source.handle();
    p.address = reinterpret_cast<std::uintptr_t>(address);
    p.length = length;
    if (auto r = Post(*s_, p, {}); !r) return r.error();
    mw.s_->remote_token = p.token;
    return p.token;
}

Result<void> QueuePair::Invalidate(std::uint64_t request_context, const MemoryRegion& mr,
                                   std::uint32_t flags) const {
    if (!s_ || !mr.s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_INVALIDATE, request_context, flags);
    p.object_handle = mr.s_->handle;
    return Post(*s_, p, {});
}

Result<void> QueuePair::Invalidate(std::uint64_t request_context, const MemoryWindow& mw,
                                   std::uint32_t flags) const {
    if (!s_ || !mw.s_) return Error::FromErrno(EBADF);
    auto p = Request(NDK_U_OP_INVALIDATE, request_context, flags);
    p.object_handle = mw.s_->handle;
    return Post(*s_, p, {});
}

Result<void> QueuePair::Flush() const {
    if (!s_) return Error::FromErrno(EBADF);
    // Deferred requests still in the ring reach the kernel first.
    if (s_->ring) (void)s_->ring->Drain(s_->fd());
    ndk_u_qp_flush f{};
    f.handle = s_->handle;
    return detail::Ioctl(s_->fd(), NDK_IOCTL_QP_FLUSH, &f);
}

}  // namespace ndk
