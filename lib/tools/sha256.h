/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SHA-256 digest of a buffer as hex, from OpenSSL's libcrypto:
 * ndk-target prints the digest of its buffer with it, and the vm test's
 * verbs peer the digest of what it read.  Header-only C, so both the C++
 * tool and the C peer use it; link with libcrypto.
 */
#ifndef NDK_TOOLS_SHA256_H
#define NDK_TOOLS_SHA256_H

#include <stddef.h>
#include <stdio.h>

#include <openssl/evp.h>

/* The digest of data as 64 lowercase hex digits and a NUL ("" on error). */
static inline void ndk_sha256_hex(const void* data, size_t len, char hex[65]) {
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    hex[0] = '\0';
    if (!EVP_Digest(data, len, d, &n, EVP_sha256(), NULL) || n != 32) return;
    for (unsigned int i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

#endif
