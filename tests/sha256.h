/*
 * sha256.h - the incremental SHA-256 interface the test suites use, now a thin
 * layer over the library's digests (io/digest.h, libcrypto): no SHA-256 of
 * our own. Library code uses io/digest.h directly.
 */
#ifndef GK_UTIL_SHA256_H
#define GK_UTIL_SHA256_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/digest.h"

#define GK_SHA256_DIGEST_SIZE 32
#define GK_SHA256_HEX_SIZE 65 /* 64 hex digits and the terminating NUL */

typedef struct gk_sha256 {
    gk_digest d;
} gk_sha256;

/** gk_sha256_init() : start a new hash in *h (aborts when out of memory: tests only). */
static inline void gk_sha256_init(gk_sha256 *h) {
    if (gk_digest_init(&h->d, GK_HASH_SHA256, NULL) != GK_OK) abort();
}

/** gk_sha256_update() : feed n bytes at data. */
static inline void gk_sha256_update(gk_sha256 *h, const void *data, size_t n) {
    gk_digest_update(&h->d, data, n);
}

/** gk_sha256_final() : finish the hash, write the 32-byte digest to out, release h. */
static inline void gk_sha256_final(gk_sha256 *h, uint8_t out[32]) {
    gk_hash_value v;
    gk_digest_final(&h->d, &v);
    gk_digest_free(&h->d);
    memcpy(out, v.bytes, 32);
}

/** gk_sha256_hex() : write the digest d as 64 lowercase hex digits and a NUL. */
static inline void gk_sha256_hex(const uint8_t d[32], char out[65]) {
    gk_hash_value v = { .len = 32 };
    memcpy(v.bytes, d, 32);
    char hex[GK_HASH_HEX_MAX];
    gk_hash_hex(GK_HASH_SHA256, &v, hex);
    memcpy(out, hex, GK_SHA256_HEX_SIZE);
}

#endif
