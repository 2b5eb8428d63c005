// SPDX-License-Identifier: GPL-2.0
// Helpers for the programs that run inside the test-bed guest.
// Exit codes: 0 pass, 1 fail, 77 skip (Documentation/testing.md).
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

inline constexpr int kTestPass = 0;
inline constexpr int kTestFail = 1;
inline constexpr int kTestSkip = 77;

inline int t_failures = 0;

// Records a failure with its location and goes on, so one run shows all.
#define T_CHECK(cond)                                                                     \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            ++t_failures;                                                                 \
        }                                                                                 \
    } while (0)

// An expression that must fail with errno `want` (a raw syscall returning -1).
#define T_EXPECT_ERRNO(expr, want)                                                                \
    do {                                                                                          \
        errno = 0;                                                                                \
        long t_rc_ = static_cast<long>(expr);                                                     \
        int t_err_ = errno;                                                                       \
        if (t_rc_ != -1 || t_err_ != (want)) {                                                    \
            std::fprintf(stderr, "%s:%d: %s: rc %ld errno %s, expected %s\n", __FILE__, __LINE__, \
                         #expr, t_rc_, strerrorname_np(t_err_), strerrorname_np(want));           \
            ++t_failures;                                                                         \
        }                                                                                         \
    } while (0)

inline int t_result(const char* name) {
    if (t_failures) {
        std::fprintf(stderr, "%s: %d check(s) failed\n", name, t_failures);
        return kTestFail;
    }
    std::printf("%s: all checks passed\n", name);
    return kTestPass;
}
