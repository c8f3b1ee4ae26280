/*
 * kquants_blocks.h - the K-quant block layouts (ggml-common.h) and their scale
 * fields' decoding, shared by kquants.c and the vector kernels.
 * kquants.c's header comment gives the byte offsets.
 */
#ifndef GK_TYPES_KQUANTS_BLOCKS_H
#define GK_TYPES_KQUANTS_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#define QK_K 256

typedef struct {
    uint8_t scales[QK_K / 16]; /* low nibble scale, high nibble min */
    uint8_t qs[QK_K / 4];
    uint16_t d;
    uint16_t dmin;
} block_q2_K;

typedef struct {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12]; /* sixteen 6-bit scales */
    uint16_t d;
} block_q3_K;

typedef struct {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12]; /* eight 6-bit scales and eight 6-bit mins */
    uint8_t qs[QK_K / 2];
} block_q4_K;

typedef struct {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;

typedef struct {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    uint16_t d;
} block_q6_K;

typedef struct {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;

_Static_assert(sizeof(block_q2_K) == 84 && offsetof(block_q2_K, d) == 80, "q2_K layout");
_Static_assert(sizeof(block_q3_K) == 110 && offsetof(block_q3_K, d) == 108, "q3_K layout");
_Static_assert(sizeof(block_q4_K) == 144 && offsetof(block_q4_K, qs) == 16, "q4_K layout");
_Static_assert(sizeof(block_q5_K) == 176 && offsetof(block_q5_K, qs) == 48, "q5_K layout");
_Static_assert(sizeof(block_q6_K) == 210 && offsetof(block_q6_K, d) == 208, "q6_K layout");
_Static_assert(sizeof(block_q8_K) == 292 && offsetof(block_q8_K, bsums) == 260, "q8_K layout");

/* Scale and min j (0..7) of a Q4_K/Q5_K 12-byte scale field, 6 bits each. */
static inline void unpack_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

/* Signed sub-block scale j of a Q3_K block (-32..31). */
static inline int unpack_scale_q3(const uint8_t *scales, int j) {
    int sc = j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4;
    sc |= ((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4;
    return sc - 32;
}

#endif
