/*
 * kquants_scales.h - the decoding of the K-quant blocks' packed scale fields
 * (layouts in blocks.h), shared by kquants.c and the vector dequantizers.
 */
#ifndef GK_TYPES_KQUANTS_SCALES_H
#define GK_TYPES_KQUANTS_SCALES_H

#include <stdint.h>

#include "types/blocks.h"

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
