/*
 * quant_util.h - scalar helpers shared by the block quantizers (legacy, K-quants,
 * the I-quants' positive-level fit).
 *
 * These reproduce ggml's reference helpers operation for operation (same float
 * types, same evaluation order) so that quantized output is bit-identical to
 * ggml's reference quantizers. Build with -ffp-contract=off.
 */
#ifndef GK_TYPES_QUANT_UTIL_H
#define GK_TYPES_QUANT_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifndef GK_MIN
#define GK_MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef GK_MAX
#define GK_MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

/* Below this absolute maximum a group counts as all zero (ggml's GROUP_MAX_EPS). */
#define GK_GROUP_MAX_EPS 1e-15f

/** gk_trunc_i32() : v truncated toward zero to an int32 as x86's conversion
 *  instruction does it: NaN and values outside the int32 range give INT32_MIN.
 *  ggml's kernels cast such floats (inf from a block of subnormals, a negative
 *  exponent) straight to int8_t or uint8_t, which C leaves undefined and x86
 *  compiles to this conversion and its low byte; casting this function's
 *  result instead gives the same bytes, defined. */
static inline int32_t gk_trunc_i32(float v) {
    return v > -2147483904.0f && v < 2147483648.0f ? (int32_t)v : INT32_MIN;
}

/** gk_add_nan_first() : a + b, except that when both are NaN the result is a's
 *  NaN (quieted), as x86's add instructions give for their first operand. C
 *  leaves the pick unspecified and a compiler may swap the operands of an add
 *  (clang does), so a dequantizer whose scale and minimum can both be NaN uses
 *  this to give the same bits whatever the compiler and whatever the width. */
static inline float gk_add_nan_first(float a, float b) {
    return a != a ? a + a : a + b;
}

/** gk_nearest_int() : round to nearest, ties to even, by the 1.5*2^23 trick.
 *  Valid for |fval| <= 4194303 (as ggml's nearest_int; larger inputs give
 *  meaningless but harmless results). */
static inline int gk_nearest_int(float fval) {
    float biased = fval + 12582912.f;
    int32_t bits;
    memcpy(&bits, &biased, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

/** gk_make_qx_quants() : symmetric quantization of n values x to integers in
 *  [-nmax, nmax-1], stored in L offset by nmax (ggml's make_qx_quants).
 *  rmse_type 0: plain scaling; 1..4 weight choice when qw is NULL (x^2, 1, |x|,
 *  sqrt|x|); negative: one refinement step only. qw: optional per-value weights.
 *  @return : the scale (0 for an all-zero group). */
float gk_make_qx_quants(int n, int nmax, const float *x, int8_t *L, int rmse_type,
                        const float *qw);

/** gk_make_qkx2_quants() : asymmetric (scale and min) quantization of n values to
 *  [0, nmax] with per-value weights, searching nstep+1 scales from
 *  rmin + nmax in steps of rdelta (ggml's make_qkx2_quants). Laux: n scratch bytes.
 *  *the_min receives minus the fitted minimum. @return : the scale. */
float gk_make_qkx2_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                          float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                          bool use_mad);

/** gk_make_qkx3_quants() : as gk_make_qkx2_quants, but weights may be NULL (then x^2)
 *  and an all-equal group quantizes to zero (ggml's make_qkx3_quants, current
 *  version that also guards against out-of-range levels). */
float gk_make_qkx3_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                          float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                          bool use_mad);

/** gk_make_q3_quants() : symmetric quantization of n values to [-nmax, nmax-1]
 *  (stored offset by nmax) with x^2 weights, refined by up to five passes of
 *  per-value coordinate descent (ggml's make_q3_quants). @return : the scale. */
float gk_make_q3_quants(int n, int nmax, const float *x, int8_t *L);

/** gk_make_qp_quants() : non-negative values x (sub-block scales or mins, IQ2
 *  magnitudes) to levels L in [0, nmax] under weights qw: 8 trial scales around
 *  nmax/max by weighted error, then up to five passes of coordinate descent on L
 *  (ggml's make_qp_quants as of 2025-08: a group whose largest value is below
 *  GK_GROUP_MAX_EPS, or whose weighted sum of squared levels is not positive,
 *  gives scale 0 instead of a division by zero). @return : the scale. */
float gk_make_qp_quants(int n, int nmax, const float *x, uint8_t *L, const float *qw);

/* ------------------------------------------------------------------------ */
/* Group searches: the scale searches above over many independent groups.    */
/* ------------------------------------------------------------------------ */

/* ngroups groups of n values each (n <= 32), group g at x + g*n (weights at
 * w + g*n, levels at L + g*n); results per group in scales[g] (and mins[g]).
 * The block quantizers call the searches only through this table, so vector
 * versions (quant_util_avx2.c, ...) that run groups in lanes slot in; every
 * version gives bit-identical results. */
typedef struct gk_searches {
    /* gk_make_qkx2_quants per group (weights required) */
    void (*qkx2)(int ngroups, int n, int nmax, const float *x, const float *w, uint8_t *L,
                 float *scales, float *mins, float rmin, float rdelta, int nstep, bool use_mad);
    /* gk_make_qkx3_quants per group (weights required) */
    void (*qkx3)(int ngroups, int n, int nmax, const float *x, const float *w, uint8_t *L,
                 float *scales, float *mins, float rmin, float rdelta, int nstep, bool use_mad);
    /* gk_make_qx_quants with rmse_type 1 per group (w NULL: x^2 weights) */
    void (*qx)(int ngroups, int n, int nmax, const float *x, const float *w, int8_t *L,
               float *scales);
    /* gk_make_q3_quants per group */
    void (*q3)(int ngroups, int n, int nmax, const float *x, int8_t *L, float *scales);
    /* Final levels from the stored scales: for each group with d[g] != 0,
     * L = offset + clamp(nearest_int((x + dm[g]) / d[g]), lo, hi), or
     * nearest_int(x / d[g]) when dm is NULL; groups with d[g] == 0 keep L.
     * L holds bytes (the caller's int8_t or uint8_t levels). */
    void (*requant)(int ngroups, int n, const float *x, const float *d, const float *dm, int lo,
                    int hi, int offset, uint8_t *L);
} gk_searches;

/* The scalar reference searches (quant_util.c) and the lane versions (NULL-free
 * tables for the levels the build has; quant_util_avx2.c, quant_util_avx512.c). */
extern const gk_searches gk_searches_scalar;
extern const gk_searches gk_searches_avx2;
extern const gk_searches gk_searches_avx512;

#endif
