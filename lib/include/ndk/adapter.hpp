// SPDX-License-Identifier: BSD-2-Clause
// ndk::Adapter (NDK_ADAPTER), ndk::ProtectionDomain (NDK_PD) and
// ndk::Registration (WSPRegisterMemory / WSPDeregisterMemory) over the
// per-file object handles of /dev/ndk (Documentation/uapi.md).
//
// Ownership: every Adapter opens /dev/ndk for itself, so its handles are
// private to it.  Children keep their parents alive: a ProtectionDomain
// holds its adapter's state, a Registration its PD's, so the file and the
// parent handles outlive every child, whatever order the C++ objects are
// destroyed in.  All classes are move-only; a moved-from object is empty
// and answers EBADF.
//
// Events: everything asynchronous of an Adapter's objects arrives on its
// file's event queue (ndk/event.hpp).  GetEvents() takes what is queued
// without blocking, WaitEvent() waits with poll() on fd().  Events that a
// waiting helper (WaitEvent with a match, CompletionQueue::PollUntil,
// Connector::WaitFor, Listener::GetConnectionRequest) takes but does not
// want are kept, in order, and handed out first by the next GetEvents() or
// WaitEvent(): no event is lost to a helper.  Once the adapter's
// ADAPTER_REMOVED event has arrived, a wait for any other event (a
// helper's included) fails at once with ENODEV (STATUS_DEVICE_REMOVED)
// instead of at its timeout; the event itself stays for whoever asks.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ndk/device.hpp"
#include "ndk/event.hpp"
#include "ndk/result.hpp"

namespace ndk {

class ProtectionDomain;

namespace detail {
struct AdapterState;
struct PdState;
// A PD's /dev/ndk descriptor and handle for code of the library that
// issues its own commands on them (the registration cache's kernel
// backend); `keep` keeps the file and the PD open.
struct PdAccess {
    std::shared_ptr<const void> keep;
    int fd = -1;
    std::uint32_t handle = 0;
};
PdAccess AccessPd(const ProtectionDomain& pd) noexcept;
}  // namespace detail

// NDK_ADAPTER_INFO (ndkinfo.h), every field.
struct AdapterInfo {
    std::uint16_t version_major = 0;
    std::uint16_t version_minor = 0;
    std::uint32_t vendor_id = 0;
    std::uint32_t device_id = 0;
    std::uint64_t max_registration_size = 0;
    std::uint64_t max_window_size = 0;
    // Not an NDK_ADAPTER_INFO field: the longest user registration
    // (RegisterMemory, Mr::Register), the device's max_mr_size where its
    // driver registers user memory (Documentation/registration.md).
    std::uint64_t max_user_registration_size = 0;
    std::uint32_t frmr_page_count = 0;
    std::uint32_t max_initiator_request_sge = 0;
    std::uint32_t max_receive_request_sge = 0;
    std::uint32_t max_read_request_sge = 0;
    std::uint32_t max_transfer_length = 0;
    std::uint32_t max_inline_data_size = 0;
    std::uint32_t max_inbound_read_limit = 0;
    std::uint32_t max_outbound_read_limit = 0;
    std::uint32_t max_receive_queue_depth = 0;
    std::uint32_t max_initiator_queue_depth = 0;
    std::uint32_t max_srq_depth = 0;
    std::uint32_t max_cq_depth = 0;
    std::uint32_t large_request_threshold = 0;
    std::uint32_t max_caller_data = 0;
    std::uint32_t max_callee_data = 0;
    std::uint32_t adapter_flags = 0;
    std::uint32_t rdma_technology = 0;
};

// WSPRegisterMemory's dwFlags (ws2san.h).
inline constexpr std::uint32_t kMemRead = 1;
inline constexpr std::uint32_t kMemWrite = 2;
inline constexpr std::uint32_t kMemReadWrite = 3;

class ProtectionDomain;
class CompletionQueue;
class QueuePair;
class MemoryRegion;
class MemoryWindow;
class Connector;
class Listener;

// One registration reference (WSPRegisterMemory).  Registering the same
// (buffer, length, flags) again on the same PD gives another Registration
// with the same handle: the kernel counts the references, and the pages
// stay pinned until the last one is deregistered.  Errors carry the WSA
// code (Error::wsa).  Registrations are local sources and targets only:
// the remote token grants no remote access.
class [[nodiscard]] Registration {
  public:
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration();

    // WSPDeregisterMemory: drops this reference now.  EINVAL-class errors
    // (WSAEINVAL) for an empty Registration.  EBUSY (the last reference,
    // while a window or a fast-registered MR uses the memory) changes
    // nothing: the Registration keeps its reference, to be deregistered
    // again once they are gone.  The destructor and the move assignment do
    // the same silently; a reference they cannot drop stays with the file
    // until it is closed.
    Result<void> Deregister() noexcept;

    std::uint32_t handle() const noexcept { return handle_; }
    // NDK: NdkGetLocalTokenFromMr / NdkGetRemoteTokenFromMr.
    std::uint32_t local_token() const noexcept { return local_token_; }
    std::uint32_t remote_token() const noexcept { return remote_token_; }
    // The region's base address: the buffer's address.
    std::uint64_t base_address() const noexcept { return base_address_; }
    std::size_t length() const noexcept { return length_; }
    // References the kernel counted right after this registration.
    std::uint32_t references() const noexcept { return references_; }

  private:
    friend class ProtectionDomain;
    Registration() = default;
    std::shared_ptr<detail::PdState> pd_;
    std::uint32_t handle_ = 0;
    std::uint32_t local_token_ = 0;
    std::uint32_t remote_token_ = 0;
    std::uint32_t references_ = 0;
    std::uint64_t base_address_ = 0;
    std::size_t length_ = 0;
};

// NDK_PD.
class [[nodiscard]] ProtectionDomain {
  public:
    ProtectionDomain(ProtectionDomain&&) noexcept = default;
    ProtectionDomain& operator=(ProtectionDomain&&) noexcept = default;
    ProtectionDomain(const ProtectionDomain&) = delete;
    ProtectionDomain& operator=(const ProtectionDomain&) = delete;
    ~ProtectionDomain() = default;

    // WSPRegisterMemory(buffer, length, flags): flags is kMemRead,
    // kMemWrite or kMemReadWrite.  Errors (errno / WSA): EINVAL/WSAEINVAL
    // bad flags or length 0; EFAULT/WSAEFAULT buffer not wholly in valid
    // user memory (unmapped, kernel half, wrapping, PROT_NONE, read-only
    // with kMemWrite); ENOMEM/WSAENOBUFS no memory or RLIMIT_MEMLOCK
    // reached; EMSGSIZE/WSAENOBUFS longer than MaxRegistrationSize.
    Result<Registration> RegisterMemory(const void* buffer, std::size_t length,
                                        std::uint32_t flags) const;

    std::uint32_t handle() const noexcept;

  private:
    friend class Adapter;
    friend class QueuePair;
    friend class MemoryRegion;
    friend class MemoryWindow;
    friend detail::PdAccess detail::AccessPd(const ProtectionDomain& pd) noexcept;
    explicit ProtectionDomain(std::shared_ptr<detail::PdState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::PdState> s_;
};

// NDK_ADAPTER on its own /dev/ndk file.
class [[nodiscard]] Adapter {
  public:
    // By the id NDK_IOCTL_ADAPTER_QUERY reports (Device::ListAdapters);
    // ENOENT when there is no such adapter; EOPNOTSUPP when the module has
    // no object handles (feature bit NDK_U_FEATURE_OBJECTS).
    static Result<Adapter> Open(std::uint32_t id, const char* path = kDefaultDevicePath);
    // By ib_device name ("rxe0"); ENOENT when there is none.
    static Result<Adapter> OpenByName(std::string_view name, const char* path = kDefaultDevicePath);

    Adapter(Adapter&&) noexcept = default;
    Adapter& operator=(Adapter&&) noexcept = default;
    Adapter(const Adapter&) = delete;
    Adapter& operator=(const Adapter&) = delete;
    ~Adapter() = default;

    // NDK: NdkQueryAdapterInfo, the full NDK_ADAPTER_INFO.
    Result<AdapterInfo> QueryInfo() const;
    // NDK: NdkCreatePd.
    Result<ProtectionDomain> CreateProtectionDomain() const;

    std::uint32_t id() const noexcept;
    std::uint32_t handle() const noexcept;
    // The adapter's own /dev/ndk descriptor (-1 when empty): poll()/epoll
    // it for POLLIN (an event is queued), then call GetEvents().  Events
    // already taken by a helper and kept are not seen by poll(): call
    // GetEvents() until it returns 0 before going back to poll().
    int fd() const noexcept;

    // Takes up to out.size() queued events, never blocking: the kept ones
    // first, then NDK_IOCTL_EVENT_GET.  0 when none is queued.
    Result<std::size_t> GetEvents(std::span<Event> out) const;
    // The next event, waiting up to timeout (poll() on fd(); negative:
    // forever).  ETIMEDOUT (STATUS_IO_TIMEOUT) when none came.
    Result<Event> WaitEvent(std::chrono::milliseconds timeout) const;
    // The next event for which match() is true, waiting up to timeout;
    // the others taken meanwhile are kept for GetEvents()/WaitEvent().
    Result<Event> WaitEvent(const std::function<bool(const Event&)>& match,
                            std::chrono::milliseconds timeout) const;

  private:
    friend class CompletionQueue;
    friend class Connector;
    friend class Listener;
    explicit Adapter(std::shared_ptr<detail::AdapterState> s) noexcept : s_(std::move(s)) {}
    std::shared_ptr<detail::AdapterState> s_;
};

}  // namespace ndk
