// SPDX-License-Identifier: BSD-2-Clause
// Errors as values: ndk::Error carries both the kernel errno and the NDK
// status code; ndk::Result<T> holds a T or an Error (std::expected is
// C++23, and GCC 12 builds this project as C++20).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "ndk/status.hpp"
#include "ndk/wsa.hpp"

namespace ndk {

// A failed operation.  errnum is the positive errno the kernel (or libc)
// returned; status is the NTSTATUS an NDK consumer would have seen; wsa is
// the Winsock code a WSD switch would have seen, for the WSP-style calls
// (Registration), wsa::kNone elsewhere.
struct Error {
    int errnum = 0;
    NTSTATUS status = status::kUnsuccessful;
    int wsa = wsa::kNone;

    // The usual constructor: the status follows from the errno.
    static Error FromErrno(int e) noexcept { return Error{e, StatusFromErrno(e)}; }
    // For WSP-style calls: the WSA code follows from the errno as well.
    static Error FromErrnoWsa(int e) noexcept {
        return Error{e, StatusFromErrno(e), WsaFromErrno(e)};
    }
    // WSPRegisterMemory's and WSPDeregisterMemory's failures: every errno
    // gets one of the codes their documents list (wsa.hpp).
    static Error ForRegisterMemory(int e) noexcept {
        return Error{e, StatusFromErrno(e), WsaForRegisterMemory(e)};
    }
    static Error ForDeregisterMemory(int e) noexcept {
        return Error{e, StatusFromErrno(e), WsaForDeregisterMemory(e)};
    }
    // An NTSTATUS that arrived as a value (a completion, an event): the
    // status is kept exactly, errnum is ErrnoFromStatus(s).
    static Error FromStatus(NTSTATUS s) noexcept { return Error{ErrnoFromStatus(s), s}; }
    // "EINVAL (STATUS_INVALID_PARAMETER): Invalid argument", with
    // " [WSAEINVAL]" appended when wsa is set.
    std::string Message() const;
    friend bool operator==(const Error&, const Error&) = default;
};

template <typename T>
class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
    Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

    bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    // Reading the wrong alternative is a caller bug: it aborts with a
    // message instead of throwing (no exceptions cross the API).
    T& value() & { return *Get<T>("value() on an error Result"); }
    const T& value() const& { return *Get<T>("value() on an error Result"); }
    T&& value() && { return std::move(*Get<T>("value() on an error Result")); }
    const Error& error() const { return *Get<Error>("error() on an ok Result"); }

    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

  private:
    template <typename U>
    U* Get(const char* misuse) const {
        auto* p = std::get_if<U>(const_cast<std::variant<T, Error>*>(&v_));
        if (!p) {
            std::fprintf(stderr, "ndk::Result: %s\n", misuse);
            std::abort();
        }
        return p;
    }
    std::variant<T, Error> v_;
};

// Success with no value.
template <>
class [[nodiscard]] Result<void> {
  public:
    Result() = default;
    Result(Error error) : error_(error), ok_(false) {}  // NOLINT: implicit by design

    bool ok() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    const Error& error() const {
        if (ok_) {
            std::fprintf(stderr, "ndk::Result: error() on an ok Result\n");
            std::abort();
        }
        return error_;
    }

  private:
    Error error_{};
    bool ok_ = true;
};

}  // namespace ndk
