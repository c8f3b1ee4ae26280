/*
 * sha256.h - SHA-256 (FIPS 180-4) with an incremental interface.
 *
 * Used to fingerprint tensor data and whole files; small and dependency free.
 * Typical use: gk_sha256_init(&h); gk_sha256_update(&h, p, n) ...;
 * gk_sha256_final(&h, digest); gk_sha256_hex(digest, text).
 */
#ifndef GK_UTIL_SHA256_H
#define GK_UTIL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GK_SHA256_DIGEST_SIZE 32
#define GK_SHA256_HEX_SIZE 65 /* 64 hex digits and the terminating NUL */

/* Running state of one hash computation. */
typedef struct gk_sha256 {
    uint32_t state[8];
    uint64_t total_bytes;  /* message length so far */
    uint8_t buffer[64];    /* partial block not yet compressed */
    size_t buffered;       /* bytes used in buffer */
} gk_sha256;

/** gk_sha256_init() : start a new hash in *h. */
void gk_sha256_init(gk_sha256 *h);

/** gk_sha256_update() : feed n bytes at data (data may be NULL when n == 0). */
void gk_sha256_update(gk_sha256 *h, const void *data, size_t n);

/** gk_sha256_final() : finish the hash and write the 32-byte digest to out.
 *  *h must be initialised again before reuse. */
void gk_sha256_final(gk_sha256 *h, uint8_t out[32]);

/** gk_sha256_hex() : write the digest d as 64 lowercase hex digits and a NUL. */
void gk_sha256_hex(const uint8_t d[32], char out[65]);

#endif
