/*
 * byteorder.h - byte-order access, the one place for it: loads and stores of
 * little-endian 16-, 24-, 32- and 64-bit fields at any alignment (GGUF's
 * blocks, journals, state files, safetensors and zstd headers), byte swaps,
 * and swaps of runs of values in place (every kernel family's byteswap).
 *
 * The loads and stores go byte by byte, so they mean the same on any host;
 * compilers turn each into one move where the host is little-endian.
 */
#ifndef GK_UTIL_BYTEORDER_H
#define GK_UTIL_BYTEORDER_H

#include <stdint.h>
#include <string.h>

/** gk_load_le16() : @return : the little-endian 16-bit value at p. */
static inline uint16_t gk_load_le16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

/** gk_load_le24() : @return : the little-endian 24-bit value at p (3 bytes). */
static inline uint32_t gk_load_le24(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
}

/** gk_load_le32() : @return : the little-endian 32-bit value at p. */
static inline uint32_t gk_load_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/** gk_load_le64() : @return : the little-endian 64-bit value at p. */
static inline uint64_t gk_load_le64(const uint8_t *p) {
    return (uint64_t)gk_load_le32(p) | ((uint64_t)gk_load_le32(p + 4) << 32);
}

/** gk_store_le16() : writes v at p, little-endian. */
static inline void gk_store_le16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/** gk_store_le32() : writes v at p, little-endian. */
static inline void gk_store_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/** gk_store_le64() : writes v at p, little-endian. */
static inline void gk_store_le64(uint8_t *p, uint64_t v) {
    gk_store_le32(p, (uint32_t)v);
    gk_store_le32(p + 4, (uint32_t)(v >> 32));
}

/** gk_bswap16() / gk_bswap32() / gk_bswap64() : @return : v with its bytes reversed. */
static inline uint16_t gk_bswap16(uint16_t v) { return __builtin_bswap16(v); }
static inline uint32_t gk_bswap32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint64_t gk_bswap64(uint64_t v) { return __builtin_bswap64(v); }

/* Reverse, in place, the byte order of n consecutive 2-, 4- or 8-byte values at p
 * (any alignment). Every kernel family's byteswap is built from these. */
static inline void gk_swap16_run(void *p, int64_t n) {
    uint8_t *b = (uint8_t *)p;
    for (int64_t i = 0; i < n; i++, b += 2) {
        uint16_t v;
        memcpy(&v, b, 2);
        v = gk_bswap16(v);
        memcpy(b, &v, 2);
    }
}
static inline void gk_swap32_run(void *p, int64_t n) {
    uint8_t *b = (uint8_t *)p;
    for (int64_t i = 0; i < n; i++, b += 4) {
        uint32_t v;
        memcpy(&v, b, 4);
        v = gk_bswap32(v);
        memcpy(b, &v, 4);
    }
}
static inline void gk_swap64_run(void *p, int64_t n) {
    uint8_t *b = (uint8_t *)p;
    for (int64_t i = 0; i < n; i++, b += 8) {
        uint64_t v;
        memcpy(&v, b, 8);
        v = gk_bswap64(v);
        memcpy(b, &v, 8);
    }
}

#endif
