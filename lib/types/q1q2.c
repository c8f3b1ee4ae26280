/*
 * q1q2.c - kernels of Q1_0 (1.125 bpw) and Q2_0 (2.25 bpw), the plain low-bit formats.
 *
 * Both blocks are an fp16 scale d followed by the codes, 18 bytes each:
 *   Q1_0: 128 values, one bit each (value j is bit j%8 of qs[j/8]); a set bit is
 *         +d, a clear one -d. d is the mean of |x| over the block.
 *   Q2_0: 64 values, two bits each (value j is bits 2*(j%4) of qs[j/4]); code q
 *         is (q-1)*d, so -d, 0, +d, +2d. d is max|x|; each value is round(x/d)+1
 *         clamped to 0..3.
 * Quantization follows ggml's quantize_row_q1_0_ref / quantize_row_q2_0_ref.
 * ggml's quantize_q1_0 / quantize_q2_0 take an importance matrix but give the
 * same bytes without one (they only walk the rows one by one), so it is unused.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "types/blocks.h"
#include "types/kernels.h"
#include "types/quant_util.h"

/* ---- Q1_0 ------------------------------------------------------------------------------ */

/** gk_quantize_q1_0() : rows of F32 to Q1_0 (ggml's reference; imatrix unused). */
void gk_quantize_q1_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK1_0;
    for (int64_t i = 0; i < nb; i++, x += QK1_0) {
        block_q1_0 b;
        float sum = 0.0f;
        for (int j = 0; j < QK1_0; j++) sum += fabsf(x[j]);
        b.d = gk_fp32_to_fp16(sum / QK1_0);
        memset(b.qs, 0, sizeof b.qs);
        /* the sign alone: x >= 0 (so also -0) sets the bit, NaN leaves it clear */
        for (int j = 0; j < QK1_0; j++) b.qs[j / 8] |= (uint8_t)((x[j] >= 0.0f) << (j % 8));
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_q1_0() : n values (a multiple of 128) from Q1_0 blocks. */
void gk_dequantize_q1_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK1_0; i++, dst += QK1_0) {
        block_q1_0 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        /* -d is d with its sign bit flipped (NaN too): a clear bit flips it */
        const uint32_t dbits = gk_f32_bits(gk_fp16_to_fp32(b.d));
        for (int j = 0; j < QK1_0; j++) {
            const uint32_t clear = ~((uint32_t)b.qs[j / 8] >> (j % 8)) & 1u;
            dst[j] = gk_bits_f32(dbits ^ (clear << 31));
        }
    }
}

/** gk_byteswap_q1_0() : swap the fp16 scale of each block. */
void gk_byteswap_q1_0(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q1_0)) gk_swap16_run(p + offsetof(block_q1_0, d), 1);
}

/* ---- Q2_0 ------------------------------------------------------------------------------ */

/* Code of x scaled by id: roundf(x * id) + 1 clamped to 0..3, found by comparing
 * the product with the points where roundf (halves away from zero) changes:
 * r <= -0.5 gives 0, below 0.5 1, below 1.5 2, else 3. A product that is NaN or
 * out of int range gives code 0, as ggml's (int) conversion does on x86-64 (the
 * "integer indefinite" INT_MIN, then clamped); C leaves that conversion undefined. */
static inline int q2_code(float x, float id) {
    const float r = x * id;
    if (!(fabsf(r) < 2147483648.0f)) return 0;
    return (r > -0.5f) + (r >= 0.5f) + (r >= 1.5f);
}

/** gk_quantize_q2_0() : rows of F32 to Q2_0 (ggml's reference; imatrix unused). */
void gk_quantize_q2_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK2_0;
    for (int64_t i = 0; i < nb; i++, x += QK2_0) {
        block_q2_0 b;
        float amax = 0.0f;
        for (int j = 0; j < QK2_0; j++) {
            const float a = fabsf(x[j]);
            if (a > amax) amax = a;
        }
        const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
        b.d = gk_fp32_to_fp16(amax);
        memset(b.qs, 0, sizeof b.qs);
        for (int j = 0; j < QK2_0; j++) {
            b.qs[j / 4] |= (uint8_t)(q2_code(x[j], id) << (2 * (j % 4)));
        }
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_q2_0() : n values (a multiple of 64) from Q2_0 blocks. */
void gk_dequantize_q2_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK2_0; i++, dst += QK2_0) {
        block_q2_0 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        for (int j = 0; j < QK2_0; j++) {
            const int q = (b.qs[j / 4] >> (2 * (j % 4))) & 3;
            dst[j] = (float)(q - 1) * d;
        }
    }
}

/** gk_byteswap_q2_0() : swap the fp16 scale of each block. */
void gk_byteswap_q2_0(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q2_0)) gk_swap16_run(p + offsetof(block_q2_0, d), 1);
}
