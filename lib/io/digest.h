/*
 * digest.h - the digests ggufkit computes, over the libraries that implement
 * them: xxh64 from libxxhash, SHA-1 and SHA-256 from libcrypto (which uses the
 * processor's SHA instructions where it has them), and the UUIDv5 of llama.cpp's
 * gguf-hash (SHA-1 of a fixed namespace followed by the data).
 *
 * Typical use: gk_digest_init(&d, GK_HASH_SHA256, err); gk_digest_update(&d, p, n)
 * ...; gk_digest_final(&d, &value); gk_digest_free(&d). A finished digest may be
 * started again with gk_digest_reset.
 */
#ifndef GK_UTIL_DIGEST_H
#define GK_UTIL_DIGEST_H

#include <stddef.h>

#include "ggufkit.h"

/* A running digest of one kind. */
typedef struct gk_digest {
    gk_hash_kind kind;
    void *state;               /* XXH64_state_t or EVP_MD_CTX */
} gk_digest;

/** gk_digest_init() : allocates and starts a digest of kind.
 *  @return : GK_OK, GK_E_NOMEM, GK_E_ARG (unknown kind). */
gk_status gk_digest_init(gk_digest *d, gk_hash_kind kind, gk_error *err);

/** gk_digest_reset() : starts d again from nothing (a UUID digest from its namespace). */
void gk_digest_reset(gk_digest *d);

/** gk_digest_update() : feeds n bytes at p (p may be NULL when n is 0). */
void gk_digest_update(gk_digest *d, const void *p, size_t n);

/** gk_digest_final() : writes the digest of everything fed since the start or the
 *  last reset to *out (xxh64 in its canonical big-endian bytes; the UUID with its
 *  version and variant bits set). d must be reset before it is fed again. */
void gk_digest_final(gk_digest *d, gk_hash_value *out);

/** gk_digest_free() : releases d's state (a zeroed or freed digest is accepted). */
void gk_digest_free(gk_digest *d);

/** gk_digest_once() : the digest of kind over the n bytes at p, in one call.
 *  @return : GK_OK or GK_E_NOMEM. */
gk_status gk_digest_once(gk_hash_kind kind, const void *p, size_t n, gk_hash_value *out, gk_error *err);

#endif
