/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * SHA-256 (FIPS 180-4), small and dependency-free: ndk-target prints the
 * digest of its buffer with it, and the vm test's verbs peer the digest of
 * what it read.  C, so both the C++ tool and the C peer compile sha256.c.
 */
#ifndef NDK_TOOLS_SHA256_H
#define NDK_TOOLS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ndk_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t block[64];
    size_t used;
};

void ndk_sha256_init(struct ndk_sha256* s);
void ndk_sha256_update(struct ndk_sha256* s, const void* data, size_t len);
void ndk_sha256_final(struct ndk_sha256* s, uint8_t digest[32]);
/* The digest of data as 64 lowercase hex digits and a NUL. */
void ndk_sha256_hex(const void* data, size_t len, char hex[65]);

#ifdef __cplusplus
}
#endif

#endif /* NDK_TOOLS_SHA256_H */
