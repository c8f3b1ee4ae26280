/*
 * iq4_lanes.h - the IQ4_XS and IQ4_NL quantizers, bit-exact with iquants.c,
 * written once for any lane count.
 *
 * Every lane repeats, in the same order, the float operations of the scalar
 * scale search for one block of 32 values (no fused multiply-add, true division
 * and square root, comparisons with the scalar code's NaN behaviour); the
 * nearest level is found as the scalar's binary search ends. IQ4_NL puts LANES
 * consecutive blocks of a row in the lanes, IQ4_XS the sub-blocks of LANES / 8
 * consecutive super-blocks. A row's last pass, when fewer blocks (super-blocks)
 * are left than it takes, repeats the last one in the spare lanes and drops
 * their results. A block (IQ4_NL) or super-block (IQ4_XS) holding NaN or
 * infinity is redone by the scalar kernel: with more than one NaN in play, which
 * one a sum or product passes on depends on the operand order the compiler chose
 * for the scalar loop, which no vector order can promise to match.
 *
 * Included by iq4_avx2.c (LANES 8) and iq4_avx512.c (LANES 16) after
 * vec_avx2.h or vec_avx512.h (LANES, LANE_TARGET, the lane types vf, vi and
 * vmask, the V_, VI_ and M_ operations) and their own definitions of:
 * iq4_levels (the sixteen IQ4 levels as the width looks them up),
 * IQ4_LEVELS_INIT(c), IQ4_LEVEL_AT(c, idx) (level idx, 0..15, per lane),
 * IQ4_COUNT(c, x) (per lane, how many of the inner levels 1..14 x is not less
 * than: NaN counts 14, where the scalar binary search ends), V_TRANSPOSE32(src,
 * t) (t[j] = element j of each of the LANES runs of 32 floats at src),
 * V_NARROW16(v) (the 16 low bytes of the int32 lanes of v[0..16/LANES-1], in
 * order), QUANTIZE_XS, QUANTIZE_NL and REGISTER (the names of the two
 * quantizers, iquants_simd.h, and of the registration function, kernels.h).
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "types/blocks.h"
#include "types/iq_grids.h"
#include "types/iquants_simd.h"
#include "types/quant_util.h"

#define VPB (32 / LANES)   /* vectors per block of 32 */
#define SUPER (LANES / 8)  /* IQ4_XS super-blocks per pass (8 sub-blocks each) */
#define PASS_MAX (LANES * 32) /* values per pass, both types */

/* The scalar's choice of level for x (per lane): of the levels ml and ml + 1
 * around it, the nearer by the scalar's comparison of float differences (this
 * also gives 0 below the first level and 15 above the last, as the scalar's
 * early returns do). *q: the level. @return : its index. */
LANE_TARGET static inline vi best_index(const iq4_levels *c, vf x, vf *q) {
    const vi ml = IQ4_COUNT(c, x);
    const vi mu = VI_ADD(ml, VI_SET1(1));
    const vf vl = IQ4_LEVEL_AT(c, ml), vu = IQ4_LEVEL_AT(c, mu);
    const vmask lower = V_CMP(V_SUB(x, vl), V_SUB(vu, x), _CMP_LT_OQ);
    *q = V_SELECT(lower, vl, vu);
    return VI_SELECT(lower, ml, mu);
}

/* sumqx and sumq2 of the 32 values xt at inverse scale id (the scalar trial). */
LANE_TARGET static inline void trial(const iq4_levels *c, const vf xt[32], const vf wt[32], vf id, vf *sumqx,
                                     vf *sumq2) {
    vf sx = V_ZERO(), s2 = V_ZERO();
    for (int j = 0; j < 32; j++) {
        vf q;
        (void)best_index(c, V_MUL(id, xt[j]), &q);
        const vf wq = V_MUL(wt[j], q);
        sx = V_ADD(sx, V_MUL(wq, xt[j]));
        s2 = V_ADD(s2, V_MUL(wq, q));
    }
    *sumqx = sx;
    *sumq2 = s2;
}

/* The scalar's amax test and block scale search with ntry = 7 for LANES blocks
 * of 32 given transposed (xt[j]: element j of each block) with their weights
 * wt: each block's scale (0 for a block whose largest magnitude is below
 * GK_GROUP_MAX_EPS) into scales. */
LANE_TARGET static void block_scales(const iq4_levels *c, const vf xt[32], const vf wt[32], float scales[LANES]) {
    vf amax = V_ZERO(), max = V_ZERO();
    for (int j = 0; j < 32; j++) {
        const vf ax = V_ABS(xt[j]);
        const vmask gt = V_CMP(ax, amax, _CMP_GT_OQ);
        amax = V_SELECT(gt, ax, amax);
        max = V_SELECT(gt, xt[j], max);
    }
    const float v0 = gk_kvalues_iq4nl[0];
    vf d = V_DIV(V_XOR(max, V_SET1(-0.0f)), V_SET1(v0));
    vf sumqx, sumq2;
    trial(c, xt, wt, V_DIV(V_SET1(1.f), d), &sumqx, &sumq2);
    /* d = sumq2 > 0 ? sumqx / sumq2 : 0, as the scalar */
    d = V_MASKZ(V_CMP(sumq2, V_ZERO(), _CMP_GT_OQ), V_DIV(sumqx, sumq2));
    vf best = V_MUL(d, sumqx);
    for (int itry = -7; itry <= 7; itry++) {
        trial(c, xt, wt, V_DIV(V_SET1((float)(itry + gk_kvalues_iq4nl[0])), max), &sumqx, &sumq2);
        const vmask better = M_AND(V_CMP(sumq2, V_ZERO(), _CMP_GT_OQ),
                                   V_CMP(V_MUL(sumqx, sumqx), V_MUL(best, sumq2), _CMP_GT_OQ));
        const vf dn = V_DIV(sumqx, sumq2);
        d = V_SELECT(better, dn, d);
        best = V_SELECT(better, V_MUL(dn, sumqx), best);
    }
    const vmask zero_block = V_CMP(amax, V_SET1(GK_GROUP_MAX_EPS), _CMP_LT_OQ);
    V_STORE(scales, V_SELECT(zero_block, V_ZERO(), d));
}

/* Weights of the blocks xt: qw's (the importance weights, transposed) times
 * sqrt(sigma2 + x * x) per value, or x * x without importance weights. */
LANE_TARGET static void weights(const vf xt[32], const float *qw, vf sigma2, vf wt[32]) {
    if (qw == NULL) {
        for (int j = 0; j < 32; j++) wt[j] = V_MUL(xt[j], xt[j]);
        return;
    }
    V_TRANSPOSE32(qw, wt);
    for (int j = 0; j < 32; j++) wt[j] = V_MUL(wt[j], V_SQRT(V_ADD(sigma2, V_MUL(xt[j], xt[j]))));
}

/* The lanes (blocks) of xt holding NaN or infinity, a bit each. */
LANE_TARGET static uint32_t nonfinite_lanes(const vf xt[32]) {
    vmask m = V_EXPONENT_FULL(xt[0]);
    for (int j = 1; j < 32; j++) m = M_OR(m, V_EXPONENT_FULL(xt[j]));
    return M_BITS(m);
}

/* The 16 bytes of one IQ4 block: the levels of its 32 values xb at inverse
 * scale inv, value j in the low nibble of byte j and value j + 16 in the high
 * one. */
LANE_TARGET static void pack32(const iq4_levels *c, const float *xb, float inv, uint8_t *q4) {
    const vf iv = V_SET1(inv);
    vi l[VPB], both[VPB / 2];
    for (int k = 0; k < VPB; k++) {
        vf q;
        l[k] = best_index(c, V_MUL(iv, V_LOAD(xb + LANES * k)), &q);
    }
    for (int k = 0; k < VPB / 2; k++) both[k] = VI_OR(l[k], VI_SHL(l[k + VPB / 2], 4));
    _mm_storeu_si128((__m128i *)q4, V_NARROW16(both));
}

/* What follows the scale search of one IQ4_XS super-block: the super-block
 * scale from its 8 sub-block scales, their 6-bit codes, and the 256 levels of x
 * packed into blk. */
LANE_TARGET static void xs_write(const iq4_levels *c, const float scales[8], const float *x, uint8_t *blk) {
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < 8; ib++) {
        const float abs_d = fabsf(scales[ib]);
        if (scales[ib] != 0 && abs_d > amax_scale) {
            amax_scale = abs_d;
            max_scale = scales[ib];
        }
    }
    const float d = -max_scale / 32;
    const uint16_t dh = gk_fp32_to_fp16(d);
    memcpy(blk, &dh, 2); /* x86: little-endian */
    const float id = d ? 1 / d : 0.f;
    uint16_t scales_h = 0;
    uint8_t *scales_l = blk + 4;
    for (int ib = 0; ib < 8; ib++) {
        int l = gk_nearest_int(id * scales[ib]);
        l = GK_MAX(-32, GK_MIN(31, l));
        const float dl = d * l;
        const float idl = dl ? 1 / dl : 0.f;
        pack32(c, x + 32 * ib, idl, blk + 8 + 16 * ib);
        l += 32;
        const uint8_t l_l = l & 0xf, l_h = (uint8_t)(l >> 4);
        if (ib % 2 == 0) scales_l[ib / 2] = l_l;
        else scales_l[ib / 2] |= (uint8_t)(l_l << 4);
        scales_h |= (uint16_t)(l_h << 2 * ib);
    }
    memcpy(blk + 2, &scales_h, 2);
}

/* The scale search of one pass: the LANES blocks of 32 at x (importance
 * weights qw or NULL; super: IQ4_XS, whose weights take sigma2 over each
 * super-block of 256 rather than each block) into scales. @return : the lanes
 * (blocks) holding NaN or infinity, a bit each. */
LANE_TARGET static uint32_t pass_scales(const iq4_levels *c, const float *x, const float *qw, bool super,
                                        float scales[LANES]) {
    vf xt[32], wt[32];
    V_TRANSPOSE32(x, xt);
    vf sigma2 = V_ZERO();
    if (qw != NULL && super) {
        float s[LANES];
        for (int h = 0; h < SUPER; h++) {
            float sh = 0;
            for (int j = 0; j < QK_K; j++) sh += x[QK_K * h + j] * x[QK_K * h + j];
            sh *= 2.f / QK_K;
            for (int k = 0; k < 8; k++) s[8 * h + k] = sh;
        }
        sigma2 = V_LOAD(s);
    } else if (qw != NULL) {
        for (int j = 0; j < QK4_NL; j++) sigma2 = V_ADD(sigma2, V_MUL(xt[j], xt[j]));
        sigma2 = V_MUL(sigma2, V_SET1(2.f / QK4_NL));
    }
    weights(xt, qw, sigma2, wt);
    block_scales(c, xt, wt, scales);
    return nonfinite_lanes(xt);
}

/* n (1..SUPER) consecutive IQ4_XS super-blocks of x (importance weights qw or
 * NULL), SUPER of them readable, into blk. */
LANE_TARGET static void xs_pass(const iq4_levels *c, const float *x, const float *qw, int n, uint8_t *blk) {
    float scales[LANES];
    const uint32_t bad = pass_scales(c, x, qw, true, scales);
    for (int h = 0; h < n; h++) {
        const float *xh = x + QK_K * h;
        uint8_t *bh = blk + IQ4_XS_BYTES * h;
        if ((bad >> (8 * h)) & 0xFF) gk_quantize_iq4_xs(xh, bh, 1, QK_K, qw ? qw + QK_K * h : NULL);
        else xs_write(c, scales + 8 * h, xh, bh);
    }
}

/* n (1..LANES) consecutive IQ4_NL blocks of x (importance weights qw or NULL),
 * LANES of them readable, into blk. */
LANE_TARGET static void nl_pass(const iq4_levels *c, const float *x, const float *qw, int n, uint8_t *blk) {
    float scales[LANES];
    const uint32_t bad = pass_scales(c, x, qw, false, scales);
    for (int k = 0; k < n; k++) {
        uint8_t *b = blk + k * IQ4_NL_BYTES;
        if ((bad >> k) & 1) {
            gk_quantize_iq4_nl(x + QK4_NL * k, b, 1, QK4_NL, qw ? qw + QK4_NL * k : NULL);
            continue;
        }
        const uint16_t h = gk_fp32_to_fp16(scales[k]);
        memcpy(b, &h, 2); /* x86: little-endian */
        pack32(c, x + QK4_NL * k, scales[k] ? 1 / scales[k] : 0, b + 2);
    }
}

/* n runs of run floats from src into pad, the last repeated to fill runs_max. */
static const float *padded(const float *src, int n, int run, int runs_max, float *pad) {
    memcpy(pad, src, sizeof(float) * (size_t)(n * run));
    for (int k = n; k < runs_max; k++) memcpy(pad + k * run, src + (n - 1) * run, sizeof(float) * (size_t)run);
    return pad;
}

/* Rows of units of unit values, bytes each, per_pass units a pass: a row's
 * last pass, with fewer left, reads a copy with the last unit repeated. */
typedef void (*pass_fn)(const iq4_levels *c, const float *x, const float *qw, int n, uint8_t *blk);
LANE_TARGET static inline __attribute__((always_inline)) void quantize_rows(pass_fn pass, int unit, int per_pass,
                                                                            int64_t bytes, const float *src,
                                                                            uint8_t *row, int64_t nrows,
                                                                            int64_t n_per_row, const float *imatrix) {
    iq4_levels c;
    IQ4_LEVELS_INIT(&c);
    const int64_t nunit = n_per_row / unit;
    for (int64_t r = 0; r < nrows; r++, src += n_per_row, row += nunit * bytes) {
        for (int64_t ib = 0; ib < nunit; ib += per_pass) {
            const int n = nunit - ib < per_pass ? (int)(nunit - ib) : per_pass;
            const float *x = src + unit * ib, *qw = imatrix ? imatrix + unit * ib : NULL;
            float xpad[PASS_MAX], wpad[PASS_MAX];
            if (n < per_pass) {
                x = padded(x, n, unit, per_pass, xpad);
                if (qw) qw = padded(qw, n, unit, per_pass, wpad);
            }
            pass(&c, x, qw, n, row + ib * bytes);
        }
    }
}

/** QUANTIZE_XS() : gk_quantize_iq4_xs with the sub-block scale searches of
 *  LANES / 8 super-blocks in the lanes. */
LANE_TARGET void QUANTIZE_XS(const float *src, void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix) {
    quantize_rows(xs_pass, QK_K, SUPER, IQ4_XS_BYTES, src, dst, nrows, n_per_row, imatrix);
}

/** QUANTIZE_NL() : gk_quantize_iq4_nl with LANES consecutive blocks in the
 *  lanes. */
LANE_TARGET void QUANTIZE_NL(const float *src, void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix) {
    quantize_rows(nl_pass, QK4_NL, LANES, IQ4_NL_BYTES, src, dst, nrows, n_per_row, imatrix);
}

/** REGISTER() : this width's IQ4_XS and IQ4_NL quantizers into table. */
void REGISTER(gk_type_info *table) {
    table[GK_TYPE_IQ4_XS].quantize = QUANTIZE_XS;
    table[GK_TYPE_IQ4_NL].quantize = QUANTIZE_NL;
}

#undef PASS_MAX
#undef SUPER
#undef VPB
