/*
 * digest.c - xxh64, SHA-1, SHA-256 and llama.cpp's UUIDv5 over libxxhash and
 * libcrypto (see digest.h). Nothing here implements a digest itself.
 * libcrypto is opened on first use of a SHA digest (shared/dynlib.h): linking it
 * would cost every command its loading time.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <xxhash.h>

#include "io/digest.h"
#include "shared/dynlib.h"

/* The libcrypto functions used here, reached through crypto_api once loaded. */
#define CRYPTO_FUNCS(X)                                                                            \
    X(EVP_sha1) X(EVP_sha256) X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_DigestInit_ex)            \
    X(EVP_DigestUpdate) X(EVP_DigestFinal_ex)
static struct { CRYPTO_FUNCS(GK_DYNLIB_SLOT) } C;
static const char *const crypto_symbols[] = {CRYPTO_FUNCS(GK_DYNLIB_NAME) NULL};
static const char *const crypto_sonames[] = {"libcrypto.so.3", "libcrypto.so", NULL};
static gk_dynlib crypto_lib = GK_DYNLIB_INIT("libcrypto", crypto_sonames, crypto_symbols, &C);

/* The namespace llama.cpp's gguf-hash derives its UUIDs in: uuid5(NAMESPACE_URL,
 * "en.wikipedia.org/wiki/Llama.cpp") = ef001206-dadc-5f6d-a15f-3359e577d4e5. */
static const unsigned char uuid_namespace[16] = { 0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                                  0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5 };

static const char *const kind_names[GK_HASH_KINDS] = { "xxh64", "sha1", "sha256", "uuid" };
static const unsigned kind_bytes[GK_HASH_KINDS] = { 8, 20, 32, 16 };

const char *gk_hash_kind_name(gk_hash_kind k) {
    return (unsigned)k < GK_HASH_KINDS ? kind_names[k] : NULL;
}

int gk_hash_kind_lookup(const char *name) {
    for (int k = 0; k < GK_HASH_KINDS; k++)
        if (name && strcmp(name, kind_names[k]) == 0) return k;
    return -1;
}

void gk_hash_hex(gk_hash_kind k, const gk_hash_value *v, char *out) {
    char *p = out;
    for (unsigned i = 0; i < v->len; i++) {
        if (k == GK_HASH_UUID && (i == 4 || i == 6 || i == 8 || i == 10)) *p++ = '-';
        p += sprintf(p, "%02x", v->bytes[i]);
    }
    *p = '\0';
}

static const EVP_MD *md_of(gk_hash_kind kind) {
    return kind == GK_HASH_SHA256 ? C.EVP_sha256() : C.EVP_sha1();
}

void gk_digest_reset(gk_digest *d) {
    if (d->kind == GK_HASH_XXH64) {
        XXH64_reset(d->state, 0);
        return;
    }
    C.EVP_DigestInit_ex(d->state, md_of(d->kind), NULL);
    if (d->kind == GK_HASH_UUID) C.EVP_DigestUpdate(d->state, uuid_namespace, sizeof uuid_namespace);
}

gk_status gk_digest_init(gk_digest *d, gk_hash_kind kind, gk_error *err) {
    d->kind = kind;
    d->state = NULL;
    if ((unsigned)kind >= GK_HASH_KINDS) return gk_error_set(err, GK_E_ARG, -1, "unknown digest kind %d", (int)kind);
    gk_status st = kind == GK_HASH_XXH64 ? GK_OK : gk_dynlib_load(&crypto_lib, "SHA-1/SHA-256", err);
    if (st != GK_OK) return st;
    d->state = kind == GK_HASH_XXH64 ? (void *)XXH64_createState() : (void *)C.EVP_MD_CTX_new();
    if (d->state == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_digest_reset(d);
    return GK_OK;
}

void gk_digest_update(gk_digest *d, const void *p, size_t n) {
    if (n == 0) return;
    if (d->kind == GK_HASH_XXH64) XXH64_update(d->state, p, n);
    else C.EVP_DigestUpdate(d->state, p, n);
}

void gk_digest_final(gk_digest *d, gk_hash_value *out) {
    memset(out, 0, sizeof *out);
    out->len = (uint8_t)kind_bytes[d->kind];
    if (d->kind == GK_HASH_XXH64) {
        XXH64_canonical_t c;
        XXH64_canonicalFromHash(&c, XXH64_digest(d->state));
        memcpy(out->bytes, c.digest, 8);
        return;
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    C.EVP_DigestFinal_ex(d->state, md, &n);
    memcpy(out->bytes, md, out->len);
    if (d->kind == GK_HASH_UUID) {
        /* RFC 9562 version 5 and variant 0b10 over the first 16 bytes of the SHA-1. */
        out->bytes[6] = (uint8_t)((out->bytes[6] & 0x0f) | 0x50);
        out->bytes[8] = (uint8_t)((out->bytes[8] & 0x3f) | 0x80);
    }
}

void gk_digest_free(gk_digest *d) {
    if (d->state == NULL) return;
    if (d->kind == GK_HASH_XXH64) XXH64_freeState(d->state);
    else C.EVP_MD_CTX_free(d->state);
    d->state = NULL;
}

gk_status gk_digest_once(gk_hash_kind kind, const void *p, size_t n, gk_hash_value *out, gk_error *err) {
    gk_digest d;
    gk_status s = gk_digest_init(&d, kind, err);
    if (s != GK_OK) return s;
    gk_digest_update(&d, p, n);
    gk_digest_final(&d, out);
    gk_digest_free(&d);
    return GK_OK;
}
