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
