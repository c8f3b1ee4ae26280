/*
 * nvfp4.c - kernels of NVFP4 (NVIDIA FP4): 64 values per 36-byte block.
 *
 * A block is four sub-blocks of 16 values. Each sub-block has its own scale, one
 * byte of unsigned E4M3 (UE4M3: 4 exponent bits of bias 7, 3 mantissa bits, no
 * sign bit; 0x7f is NaN), stored in d[0..3], and 16 E2M1 codes in 8 bytes of qs
 * (value j in the low nibble of its byte j, value j+8 in the high nibble).
 * As in MXFP4 the codes index doubled E2M1 values (fp4.h), so the decoded scale
 * is halved. Quantization follows ggml's quantize_row_nvfp4_ref: the sub-block's
 * scale is UE4M3(max|x| / 6) (rounded half up on the mantissa, saturating at
 * 448, subnormals rounded half up, NaN and non-positive to 0), then each value
 * takes the nearest code under the decoded scale. ggml has no weighted variant:
 * the importance matrix is unused.
 */
#include <math.h>
#include <string.h>

#include "types/fp4.h"
#include "types/blocks.h"
#include "types/kernels.h"

#define NVFP4_SUBS (QK_NVFP4 / QK_NVFP4_SUB)

/** gk_quantize_nvfp4() : rows of F32 to NVFP4 (ggml's reference; imatrix unused). */
void gk_quantize_nvfp4(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK_NVFP4;
    for (int64_t i = 0; i < nb; i++) {
        block_nvfp4 b;
        for (int s = 0; s < NVFP4_SUBS; s++, x += QK_NVFP4_SUB) {
            float amax = 0.0f;
            for (int j = 0; j < QK_NVFP4_SUB; j++)
                if (amax < fabsf(x[j])) amax = fabsf(x[j]);
            b.d[s] = gk_ue4m3_of(amax / 6.0f);
            float p[8];
            gk_fp4_products(gk_ue4m3_half(b.d[s]), p);
            uint8_t *q = b.qs + s * (QK_NVFP4_SUB / 2);
            for (int j = 0; j < QK_NVFP4_SUB / 2; j++) {
                const uint8_t lo = (uint8_t)gk_fp4_nearest_in(x[j], p);
                const uint8_t hi = (uint8_t)gk_fp4_nearest_in(x[QK_NVFP4_SUB / 2 + j], p);
                q[j] = (uint8_t)(lo | (hi << 4));
            }
        }
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_nvfp4() : n values (a multiple of 64) from NVFP4 blocks. */
void gk_dequantize_nvfp4(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_NVFP4; i++) {
        block_nvfp4 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        for (int s = 0; s < NVFP4_SUBS; s++, dst += QK_NVFP4_SUB) {
            const float d = gk_ue4m3_half(b.d[s]);
            const uint8_t *q = b.qs + s * (QK_NVFP4_SUB / 2);
            for (int j = 0; j < QK_NVFP4_SUB / 2; j++) {
                dst[j] = gk_fp4_values[q[j] & 0x0f] * d;
                dst[j + QK_NVFP4_SUB / 2] = gk_fp4_values[q[j] >> 4] * d;
            }
        }
    }
}

/** gk_byteswap_nvfp4() : nothing to swap: the scales and codes are single bytes. */
void gk_byteswap_nvfp4(void *blocks, int64_t nblocks) {
    (void)blocks;
    (void)nblocks;
}
