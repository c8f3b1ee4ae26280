/*
 * mxfp4.c - kernels of MXFP4 (OCP microscaling FP4): 32 values per 17-byte block.
 *
 * A block holds an E8M0 shared exponent e and 32 4-bit E2M1 codes (element j in
 * the low nibble of qs[j], element j+16 in the high nibble). Codes index the table
 * of doubled E2M1 values, so the scale applied is 2^(e-127) / 2 (ggml's
 * ggml_e8m0_to_fp32_half). Quantization follows ggml's quantize_row_mxfp4_ref:
 * e = floor(log2(max|x|)) - 2 + 127, then each value takes the nearest code
 * (first one on ties).
 */
#include <math.h>
#include <string.h>

#include "types/fp4.h"
#include "types/blocks.h"
#include "types/kernels.h"

/** gk_quantize_mxfp4() : rows of F32 to MXFP4 (ggml's reference; imatrix unused). */
void gk_quantize_mxfp4(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK_MXFP4;
    for (int64_t i = 0; i < nb; i++, x += QK_MXFP4) {
        block_mxfp4 b;
        float amax = 0.0f;
        for (int j = 0; j < QK_MXFP4; j++)
            if (amax < fabsf(x[j])) amax = fabsf(x[j]);
        b.e = gk_mxfp4_e(amax);
        const float d = gk_e8m0_half(b.e);
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            const uint8_t lo = (uint8_t)gk_fp4_nearest(x[j], d);
            const uint8_t hi = (uint8_t)gk_fp4_nearest(x[QK_MXFP4 / 2 + j], d);
            b.qs[j] = (uint8_t)(lo | (hi << 4));
        }
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_mxfp4() : n values (a multiple of 32) from MXFP4 blocks. */
void gk_dequantize_mxfp4(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_MXFP4; i++, dst += QK_MXFP4) {
        block_mxfp4 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_e8m0_half(b.e);
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            dst[j] = gk_fp4_values[b.qs[j] & 0x0F] * d;
            dst[j + QK_MXFP4 / 2] = gk_fp4_values[b.qs[j] >> 4] * d;
        }
    }
}

/** gk_byteswap_mxfp4() : nothing to swap: every member is a single byte. */
void gk_byteswap_mxfp4(void *blocks, int64_t nblocks) {
    (void)blocks;
    (void)nblocks;
}
