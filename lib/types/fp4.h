/*
 * fp4.h - the E2M1 (FP4) code book MXFP4 and NVFP4 share.
 *
 * A 4-bit code holds a sign (bit 3) and an E2M1 magnitude; the table gives each
 * code's value times two, so the block scales these formats store are applied
 * halved. The nearest code to a value is found as ggml does: the first code of
 * least absolute error over all sixteen, in code order.
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

#endif
