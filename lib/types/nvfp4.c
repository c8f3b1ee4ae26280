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
#include <assert.h>
#include <math.h>
#include <string.h>

#include "types/fp4.h"
#include "types/kernels.h"

#define QK_NVFP4 64
#define QK_NVFP4_SUB 16
#define NVFP4_SUBS (QK_NVFP4 / QK_NVFP4_SUB)

typedef struct { uint8_t d[NVFP4_SUBS]; uint8_t qs[QK_NVFP4 / 2]; } block_nvfp4;
static_assert(sizeof(block_nvfp4) == 36, "NVFP4 block is 36 bytes");

/* Half of the value of UE4M3 byte u (bit 7 ignored, as ggml decodes it); 0x00
 * and the NaN 0x7f give 0. Every product here is exact. */
static float ue4m3_half(uint8_t u) {
    if (u == 0 || u == 0x7f) return 0.0f;
    const int e = (u >> 3) & 0x0f;
    const int m = u & 0x07;
    const float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return v * 0.5f;
}

/* UE4M3 byte of x, rounding as ggml_fp32_to_ue4m3 does. */
static uint8_t ue4m3_of(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 23) & 0xff) - 127 + 7;
    if (e <= 0) {
        /* subnormal: mantissa = x * 2^9, rounded half up, in 1..7 */
        int m = (int)(x * 512.0f + 0.5f);
        if (m > 7) m = 7;
        return m < 1 ? 0 : (uint8_t)m;
    }
    if (e >= 15) return 0x7e;
    int m = (int)((bits >> 20) & 0x07) + (int)((bits >> 19) & 1);
    if (m > 7) {
        m = 0;
        if (++e >= 15) return 0x7e;
    }
    return (uint8_t)((e << 3) | m);
}

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
            b.d[s] = ue4m3_of(amax / 6.0f);
            float p[8];
            gk_fp4_products(ue4m3_half(b.d[s]), p);
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
            const float d = ue4m3_half(b.d[s]);
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
