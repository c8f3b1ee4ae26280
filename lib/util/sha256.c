/*
 * sha256.c - SHA-256 as specified by FIPS 180-4, section 6.2.
 *
 * The message is processed in 64-byte blocks; a trailing partial block is kept
 * in the state until more data or the final padding arrives.
 */
#include "util/sha256.h"

#include <string.h>

/* First 32 bits of the fractional parts of the cube roots of the first 64 primes. */
static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static inline uint32_t rotate_right(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static inline uint32_t load_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Compress one 64-byte block into the state. */
static void compress_block(uint32_t state[8], const uint8_t block[64]) {
    uint32_t w[64];
    for (int t = 0; t < 16; t++) w[t] = load_be32(block + 4 * t);
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotate_right(w[t - 15], 7) ^ rotate_right(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotate_right(w[t - 2], 17) ^ rotate_right(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        uint32_t big_s1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
        uint32_t choose = (e & f) ^ (~e & g);
        uint32_t t1 = h + big_s1 + choose + round_constants[t] + w[t];
        uint32_t big_s0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
        uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = big_s0 + majority;
        h = g; g = f; f = e; e = d + t1;
        d = c; c = b; b = a; a = t1 + t2;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}

void gk_sha256_init(gk_sha256 *h) {
    static const uint32_t initial[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(h->state, initial, sizeof initial);
    h->total_bytes = 0;
    h->buffered = 0;
}

void gk_sha256_update(gk_sha256 *h, const void *data, size_t n) {
    const uint8_t *p = data;
    h->total_bytes += n;
    if (h->buffered > 0) {
        size_t take = 64 - h->buffered;
        if (take > n) take = n;
        memcpy(h->buffer + h->buffered, p, take);
        h->buffered += take;
        p += take;
        n -= take;
        if (h->buffered < 64) return;
        compress_block(h->state, h->buffer);
        h->buffered = 0;
    }
    while (n >= 64) {
        compress_block(h->state, p);
        p += 64;
        n -= 64;
    }
    if (n > 0) {
        memcpy(h->buffer, p, n);
        h->buffered = n;
    }
}

void gk_sha256_final(gk_sha256 *h, uint8_t out[32]) {
    const uint64_t bit_length = h->total_bytes * 8;
    h->buffer[h->buffered++] = 0x80;
    if (h->buffered > 56) {
        memset(h->buffer + h->buffered, 0, 64 - h->buffered);
        compress_block(h->state, h->buffer);
        h->buffered = 0;
    }
    memset(h->buffer + h->buffered, 0, 56 - h->buffered);
    for (int i = 0; i < 8; i++) h->buffer[56 + i] = (uint8_t)(bit_length >> (56 - 8 * i));
    compress_block(h->state, h->buffer);
    for (int i = 0; i < 8; i++) store_be32(out + 4 * i, h->state[i]);
    h->buffered = 0;
}

void gk_sha256_hex(const uint8_t d[32], char out[65]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[64] = '\0';
}
