// SPDX-License-Identifier: BSD-2-Clause
// The shared rings of NDK_U_FEATURE_RINGS (Documentation/uapi.md,
// "Rings"): a CQ's completion ring, read here with no system call, and a
// QP's submission ring, posted with one NDK_IOCTL_QP_DOORBELL per request
// that is not deferred.
#pragma once

#include <ndk/ndk_ioctl.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "ndk/completion_queue.hpp"
#include "ndk/queue_pair.hpp"
#include "ndk/result.hpp"

namespace ndk::detail {

struct AdapterState;

// Fills p's nsge and sgl from sgl (at most NDK_U_SGE_MAX entries),
// writing the ABI's struct ndk_u_sge into out, which must outlive the post.
void FillSgl(ndk_u_qp_post& p, std::span<const Sge> sgl, ndk_u_sge* out) noexcept;

// Whether objects of this adapter's file get rings: the module offers
// them and the environment does not say NDK_RINGS=0.
bool RingsWanted(const AdapterState& a) noexcept;

// One mmap() of a ring; munmap() on destruction.  Move-only.
class Mapping {
  public:
    static Result<Mapping> Map(int fd, std::uint64_t offset, std::size_t size);
    Mapping() = default;
    Mapping(Mapping&& o) noexcept;
    Mapping& operator=(Mapping&& o) noexcept;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping();
    void* data() const noexcept { return p_; }

  private:
    Mapping(void* p, std::size_t n) noexcept : p_(p), size_(n) {}
    void* p_ = nullptr;
    std::size_t size_ = 0;
};

// A CQ's completion ring: the kernel writes results and the tail, this
// reads them and publishes the head.
class CompletionRing {
  public:
    CompletionRing(Mapping m, std::uint32_t entries) noexcept;
    // Takes up to out.size() results; 0 when the ring is empty.
    std::size_t Poll(std::span<CompletionResult> out);

  private:
    Mapping map_;
    ndk_u_cq_ring* hdr_;
    const ndk_u_result* results_;
    std::uint32_t mask_;
    std::mutex lock_;
    std::uint32_t head_ = 0;
};

// A QP's submission ring and the SGE lists its descriptors point to.
class SubmissionRing {
  public:
    SubmissionRing(Mapping m, std::uint32_t entries, std::uint32_t max_sge);
    // Posts p (qp_handle set) with sgl (at most max_sge() entries)
    // through the ring: a data request with op_flag::kDefer (not
    // kInline) waits in the ring for the next request that is not
    // deferred; every other one rings the doorbell for itself and those
    // waiting, and returns the first inline failure among them (the
    // requests after a failure are not posted).  On success p.token
    // holds what the kernel wrote back (FAST_REGISTER, BIND).
    Result<void> Post(int fd, ndk_u_qp_post& p, std::span<const Sge> sgl);
    // Posts what waits in the ring (before a flush, or a request that
    // goes through the ioctl).
    Result<void> Drain(int fd);
    // The most SGEs a slot holds.
    std::uint32_t max_sge() const noexcept { return max_sge_; }

  private:
    Result<void> Doorbell(int fd, std::uint32_t handle);
    Mapping map_;
    ndk_u_qp_post* slots_;
    std::uint32_t entries_;
    std::uint32_t max_sge_;
    std::vector<ndk_u_sge> sges_;
    std::mutex lock_;
    std::uint32_t head_ = 0;
    std::uint32_t tail_ = 0;
    std::uint32_t handle_ = 0;
};

}  // namespace ndk::detail
