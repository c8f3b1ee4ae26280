/*
 * fp4.h - the E2M1 (FP4) code book MXFP4 and NVFP4 share.
 *
 * A 4-bit code holds a sign (bit 3) and an E2M1 magnitude; the table gives each
 * code's value times two, so the block scales these formats store are applied
 * halved. The nearest code to a value is found as ggml does: the first code of
 * least absolute error over all sixteen, in code order.
 *
 * gk_fp4_nearest_in gives the same code from a block's eight products
 * p[k] = values[k] * d (k = 0..7), searching only one sign: for x >= 0 every
 * negative code's error |-p - x| rounds to at least |x|, code 0's, and comes
 * later, so it never wins; for x < 0 the same holds of the positive codes, and
 * code 8+k's error is exactly |p[k] - |x|| (rounding is symmetric in sign), so
 * the search over |x| picks k and the sign bit is added. NaN matches no
 * comparison and stays code 0, as in the full search.
 */
#ifndef GK_TYPES_FP4_H
#define GK_TYPES_FP4_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "types/quant_util.h"

/* E2M1 values times two, indexed by the 4-bit code (sign in bit 3). */
static const int8_t gk_fp4_values[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* Code whose value times d is nearest to x (lowest code on ties). */
static inline int gk_fp4_nearest(float x, float d) {
    int best = 0;
    float best_err = fabsf(gk_fp4_values[0] * d - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf(gk_fp4_values[i] * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

/* The E8M0 exponent byte of an MXFP4 block whose largest magnitude is amax:
 * floor(log2(amax)) - 2 + 127, as ggml computes it, wrapped to a byte as x86
 * wraps it (a block of tiny values gives a negative number: gk_trunc_i32). */
static inline uint8_t gk_mxfp4_e(float amax) {
    return amax > 0.0f ? (uint8_t)gk_trunc_i32(floorf(log2f(amax)) - 2 + 127) : 0;
}

/* Half of the E8M0 scale 2^(e-127) (MXFP4), exact for every e (denormal for e < 2). */
static inline float gk_e8m0_half(uint8_t e) {
    const uint32_t bits = e < 2 ? UINT32_C(0x00200000) << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Half of the value of UE4M3 byte u (NVFP4; bit 7 ignored, as ggml decodes it);
 * 0x00 and the NaN 0x7f give 0. Every product here is exact. */
static inline float gk_ue4m3_half(uint8_t u) {
    if (u == 0 || u == 0x7f) return 0.0f;
    const int e = (u >> 3) & 0x0f;
    const int m = u & 0x07;
    const float v = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return v * 0.5f;
}

/* UE4M3 byte of x, rounding as ggml_fp32_to_ue4m3 does: NaN and x <= 0 give 0,
 * x is clamped to 448, subnormals (below 2^-6) round x * 2^9 half up to 1..7,
 * normal values round the mantissa half up on its fourth bit (a carry raises the
 * exponent), exponents of 15 and more saturate at 0x7e. */
static inline uint8_t gk_ue4m3_of(float x) {
    if (!(x > 0.0f)) return 0;
    if (x > 448.0f) x = 448.0f;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int e = (int)((bits >> 23) & 0xff) - 127 + 7;
    if (e <= 0) {
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

/* The eight non-negative products values[k] * d of a block's scale. */
static inline void gk_fp4_products(float d, float p[8]) {
    for (int k = 0; k < 8; k++) p[k] = gk_fp4_values[k] * d;
}

/* gk_fp4_nearest(x, d) from the products of d (see above), without branches. */
static inline int gk_fp4_nearest_in(float x, const float p[8]) {
    const float a = fabsf(x);
    int best = 0;
    float best_err = fabsf(p[0] - a);
    for (int k = 1; k < 8; k++) {
        const float err = fabsf(p[k] - a);
        const int better = err < best_err;
        best = better ? k : best;
        best_err = better ? err : best_err;
    }
    return best | ((x < 0.0f && best != 0) << 3);
}

#endif
