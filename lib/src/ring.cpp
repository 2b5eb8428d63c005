// SPDX-License-Identifier: BSD-2-Clause
#include "ring.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "ndk/constants.hpp"
#include "state.hpp"
#include "sys.hpp"

namespace ndk::detail {

bool RingsWanted(const AdapterState& a) noexcept {
    const char* env = std::getenv("NDK_RINGS");
    if (env && std::strcmp(env, "0") == 0) return false;
    return (a.device.info().features & NDK_U_FEATURE_RINGS) != 0;
}

void FillSgl(ndk_u_qp_post& p, std::span<const Sge> sgl, ndk_u_sge* out) noexcept {
    for (std::size_t i = 0; i < sgl.size(); ++i) {
        out[i] = ndk_u_sge{};
        out[i].address = reinterpret_cast<std::uintptr_t>(sgl[i].buffer);
        out[i].length = sgl[i].length;
        out[i].token = sgl[i].token;
    }
    p.nsge = static_cast<std::uint32_t>(sgl.size());
    p.sgl = sgl.empty() ? 0 : reinterpret_cast<std::uintptr_t>(out);
}

Result<Mapping> Mapping::Map(int fd, std::uint64_t offset, std::size_t size) {
    void* p =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) return Error::FromErrno(errno);
    return Mapping(p, size);
}

Mapping::Mapping(Mapping&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), size_(std::exchange(o.size_, 0)) {}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
    if (this != &o) {
        if (p_) ::munmap(p_, size_);
        p_ = std::exchange(o.p_, nullptr);
        size_ = std::exchange(o.size_, 0);
    }
    return *this;
}

Mapping::~Mapping() {
    if (p_) ::munmap(p_, size_);
}

CompletionRing::CompletionRing(Mapping m, std::uint32_t entries) noexcept
    : map_(std::move(m)),
      hdr_(static_cast<ndk_u_cq_ring*>(map_.data())),
      results_(reinterpret_cast<const ndk_u_result*>(static_cast<const char*>(map_.data()) +
                                                     NDK_U_CQ_RING_RESULTS)),
      mask_(entries - 1) {}

std::size_t CompletionRing::Poll(std::span<CompletionResult> out) {
    std::lock_guard g(lock_);
    // The kernel writes a result before it publishes the tail past it.
    const std::uint32_t tail = std::atomic_ref(hdr_->tail).load(std::memory_order_acquire);
    std::size_t n = 0;
    for (; head_ != tail && n < out.size(); ++head_, ++n) {
        const ndk_u_result& u = results_[head_ & mask_];
        out[n] = CompletionResult{u.request_context,   u.qp_context, u.status,
                                  u.bytes_transferred, u.type,       u.provider_error_code,
                                  u.type_specific};
    }
    // The results are read before the kernel may reuse their slots.
    if (n) std::atomic_ref(hdr_->head).store(head_, std::memory_order_release);
    return n;
}

SubmissionRing::SubmissionRing(Mapping m, std::uint32_t entries, std::uint32_t max_sge)
    : map_(std::move(m)),
      slots_(static_cast<ndk_u_qp_post*>(map_.data())),
      entries_(entries),
      max_sge_(max_sge),
      sges_(static_cast<std::size_t>(entries) * max_sge) {}

Result<void> SubmissionRing::Doorbell(int fd, std::uint32_t handle) {
    ndk_u_qp_doorbell d{};
    d.handle = handle;
    d.head = head_;
    d.count = tail_ - head_;
    // Posted or not, the descriptors leave the ring.
    head_ = tail_;
    if (auto r = Ioctl(fd, NDK_IOCTL_QP_DOORBELL, &d); !r) return r.error();
    if (d.error) return Error::FromErrno(static_cast<int>(d.error));
    return {};
}

Result<void> SubmissionRing::Post(int fd, ndk_u_qp_post& p, std::span<const Sge> sgl) {
    std::lock_guard g(lock_);
    handle_ = p.qp_handle;
    if (tail_ - head_ == entries_) {
        if (auto r = Doorbell(fd, handle_); !r) return r.error();
    }
    const std::uint32_t idx = tail_ & (entries_ - 1);
    FillSgl(p, sgl, sges_.data() + static_cast<std::size_t>(idx) * max_sge_);
    p.token = 0;
    std::memcpy(&slots_[idx], &p, sizeof(p));
    ++tail_;
    const bool data = p.op != NDK_U_OP_FAST_REGISTER && p.op != NDK_U_OP_BIND;
    if (data && (p.flags & op_flag::kDefer) && !(p.flags & op_flag::kInline)) return {};
    if (auto r = Doorbell(fd, handle_); !r) return r.error();
    p.token = std::atomic_ref(slots_[idx].token).load(std::memory_order_relaxed);
    return {};
}

Result<void> SubmissionRing::Drain(int fd) {
    std::lock_guard g(lock_);
    if (tail_ == head_) return {};
    return Doorbell(fd, handle_);
}

}  // namespace ndk::detail
