/*
 * iquants_avx512.c - AVX-512 quantizers of IQ4_XS and IQ4_NL, bit-exact with
 * iquants.c.
 *
 * The scale search of iquants_avx2.c with sixteen lanes: IQ4_NL puts sixteen
 * consecutive blocks of a row in the lanes, IQ4_XS the sixteen sub-blocks of two
 * consecutive super-blocks. Every lane repeats the scalar loop's float
 * operations in order (no fused multiply-add, true division and square root);
 * the nearest level is found by permutes of the sixteen levels. The AVX2 kernels
 * take what is left: a row's last super-block when their count is odd, a row's
 * blocks past its last sixteen, and the end of each IQ4_XS super-block after its
 * search (its 6-bit scales and packing: gk_iq4_xs_write_avx2). A block (IQ4_NL)
 * or super-block (IQ4_XS) holding NaN or infinity is redone by the scalar kernel.
 * The dequantizers stay AVX2's.
 */
#include <immintrin.h>

#include "types/blocks.h"
#include "types/iq_grids.h"
#include "types/iquants.h"
#include "types/iquants_simd.h"
#include "types/quant_util.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))


/* The 16 IQ4 levels (strictly increasing) in one register. */
typedef struct {
    __m512 all;
} iq4_levels16;

AVX512 static void levels_init(iq4_levels16 *c) {
    float v[16];
    for (int k = 0; k < 16; k++) v[k] = gk_kvalues_iq4nl[k];
    c->all = _mm512_loadu_ps(v);
}

/* iquants_avx2.c's iq4_best_index in sixteen lanes: ml is the count of inner
 * levels 1..14 that x is not less than (NaN counts 14, where the scalar binary
 * search ends), found by a binary search of four permutes (the count of levels
 * 1..15 that x is not less than is the last such level, the levels being
 * increasing), then capped at 14; the scalar's comparison of float differences
 * picks level ml or ml + 1. *q: the level. @return : its index. */
AVX512 static inline __m512i best_index(const iq4_levels16 *c, __m512 x, __m512 *q) {
    const __m512i one = _mm512_set1_epi32(1);
    __m512i ml = _mm512_setzero_si512();
    for (int step = 8; step >= 1; step >>= 1) {
        const __m512i next = _mm512_add_epi32(ml, _mm512_set1_epi32(step));
        const __mmask16 ge = _mm512_cmp_ps_mask(x, _mm512_permutexvar_ps(next, c->all), _CMP_NLT_UQ);
        ml = _mm512_mask_mov_epi32(ml, ge, next);
    }
    ml = _mm512_min_epi32(ml, _mm512_set1_epi32(14));
    const __m512i mu = _mm512_add_epi32(ml, one);
    const __m512 vl = _mm512_permutexvar_ps(ml, c->all), vu = _mm512_permutexvar_ps(mu, c->all);
    const __mmask16 lower = _mm512_cmp_ps_mask(_mm512_sub_ps(x, vl), _mm512_sub_ps(vu, x), _CMP_LT_OQ);
    *q = _mm512_mask_blend_ps(lower, vu, vl);
    return _mm512_mask_sub_epi32(mu, lower, mu, one);
}

/* t[j] = element j of each of the sixteen runs of 32 floats at src. */
AVX512 static void transpose_16x32(const float *src, __m512 t[32]) {
    const __m512i runs = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(32));
    for (int j = 0; j < 32; j++) t[j] = _mm512_i32gather_ps(_mm512_add_epi32(runs, _mm512_set1_epi32(j)), src, 4);
}

/* The lanes (blocks) of xt holding NaN or infinity. The scalar kernel redoes
 * them: with more than one NaN in play, which one a sum or product passes on
 * (and so the sign of a NaN scale) depends on the operand order the compiler
 * chose for the scalar loop, which no vector order can promise to match. */
AVX512 static __mmask16 nonfinite_lanes(const __m512 xt[32]) {
    __mmask16 m = 0;
    for (int j = 0; j < 32; j++) m |= _mm512_fpclass_ps_mask(xt[j], 0x01 | 0x08 | 0x10 | 0x80);
    return m;
}

/* sumqx and sumq2 of the 32 values at inverse scale id (iq4_scales8's inner loop). */
AVX512 static inline void trial(const iq4_levels16 *c, const __m512 xt[32], const __m512 wt[32], __m512 id,
                                __m512 *sumqx, __m512 *sumq2) {
    __m512 sx = _mm512_setzero_ps(), s2 = _mm512_setzero_ps();
    for (int j = 0; j < 32; j++) {
        __m512 q;
        (void)best_index(c, _mm512_mul_ps(id, xt[j]), &q);
        const __m512 wq = _mm512_mul_ps(wt[j], q);
        sx = _mm512_add_ps(sx, _mm512_mul_ps(wq, xt[j]));
        s2 = _mm512_add_ps(s2, _mm512_mul_ps(wq, q));
    }
    *sumqx = sx;
    *sumq2 = s2;
}

/* iquants_avx2.c's iq4_scales8 for sixteen blocks of 32 given transposed (xt[j]:
 * element j of each block) with their weights wt: each block's scale (0 for a
 * block whose largest magnitude is below GK_GROUP_MAX_EPS) into scales. */
AVX512 static void scales16(const iq4_levels16 *c, const __m512 xt[32], const __m512 wt[32], float scales[16]) {
    __m512 amax = _mm512_setzero_ps(), max = _mm512_setzero_ps();
    for (int j = 0; j < 32; j++) {
        const __m512 ax = _mm512_abs_ps(xt[j]);
        const __mmask16 gt = _mm512_cmp_ps_mask(ax, amax, _CMP_GT_OQ);
        amax = _mm512_mask_mov_ps(amax, gt, ax);
        max = _mm512_mask_mov_ps(max, gt, xt[j]);
    }
    const float v0 = gk_kvalues_iq4nl[0];
    __m512 d = _mm512_div_ps(_mm512_xor_ps(max, _mm512_set1_ps(-0.0f)), _mm512_set1_ps(v0));
    __m512 sumqx, sumq2;
    trial(c, xt, wt, _mm512_div_ps(_mm512_set1_ps(1.f), d), &sumqx, &sumq2);
    /* d = sumq2 > 0 ? sumqx / sumq2 : 0, as the scalar */
    d = _mm512_maskz_div_ps(_mm512_cmp_ps_mask(sumq2, _mm512_setzero_ps(), _CMP_GT_OQ), sumqx, sumq2);
    __m512 best = _mm512_mul_ps(d, sumqx);
    for (int itry = -7; itry <= 7; itry++) {
        trial(c, xt, wt, _mm512_div_ps(_mm512_set1_ps((float)(itry + gk_kvalues_iq4nl[0])), max), &sumqx, &sumq2);
        const __mmask16 better =
            _mm512_cmp_ps_mask(sumq2, _mm512_setzero_ps(), _CMP_GT_OQ) &
            _mm512_cmp_ps_mask(_mm512_mul_ps(sumqx, sumqx), _mm512_mul_ps(best, sumq2), _CMP_GT_OQ);
        const __m512 dn = _mm512_div_ps(sumqx, sumq2);
        d = _mm512_mask_mov_ps(d, better, dn);
        best = _mm512_mask_mov_ps(best, better, _mm512_mul_ps(dn, sumqx));
    }
    const __mmask16 zero_block = _mm512_cmp_ps_mask(amax, _mm512_set1_ps(GK_GROUP_MAX_EPS), _CMP_LT_OQ);
    _mm512_storeu_ps(scales, _mm512_maskz_mov_ps((__mmask16)~zero_block, d));
}

/* Weights of the blocks xt: qwt (the importance weights, transposed) times
 * sqrt(sigma2 + x * x) per value, or x * x without importance weights. */
AVX512 static void weights(const __m512 xt[32], const float *qw, __m512 sigma2, __m512 wt[32]) {
    if (qw == NULL) {
        for (int j = 0; j < 32; j++) wt[j] = _mm512_mul_ps(xt[j], xt[j]);
        return;
    }
    transpose_16x32(qw, wt);
    for (int j = 0; j < 32; j++)
        wt[j] = _mm512_mul_ps(wt[j], _mm512_sqrt_ps(_mm512_add_ps(sigma2, _mm512_mul_ps(xt[j], xt[j]))));
}

/* Two consecutive IQ4_XS super-blocks of x (importance weights qw or NULL) into blk. */
AVX512 static void iq4xs_pair(const iq4_levels16 *c, const float *x, const float *qw, uint8_t *blk) {
    __m512 xt[32], wt[32];
    transpose_16x32(x, xt);
    __m512 sigma2 = _mm512_setzero_ps();
    if (qw != NULL) {
        float s[2] = { 0, 0 };
        for (int h = 0; h < 2; h++) {
            for (int j = 0; j < QK_K; j++) s[h] += x[QK_K * h + j] * x[QK_K * h + j];
            s[h] *= 2.f / QK_K;
        }
        sigma2 = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(s[0]), _mm512_set1_ps(s[1]));
    }
    weights(xt, qw, sigma2, wt);
    float scales[16];
    scales16(c, xt, wt, scales);
    const __mmask16 bad = nonfinite_lanes(xt);
    for (int h = 0; h < 2; h++) {
        const float *xh = x + QK_K * h;
        uint8_t *bh = blk + IQ4_XS_BYTES * h;
        if ((bad >> (8 * h)) & 0xFF) gk_quantize_iq4_xs(xh, bh, 1, QK_K, qw ? qw + QK_K * h : NULL);
        else gk_iq4_xs_write_avx2(scales + 8 * h, xh, bh);
    }
}

/** gk_quantize_iq4_xs_avx512() : gk_quantize_iq4_xs with the sub-block scale searches
 *  of two super-blocks in the sixteen lanes. */
AVX512 void gk_quantize_iq4_xs_avx512(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                      const float *imatrix) {
    iq4_levels16 c;
    levels_init(&c);
    const int64_t nblock = n_per_row / QK_K;
    uint8_t *row = dst;
    for (int64_t r = 0; r < nrows; r++, src += n_per_row, row += nblock * IQ4_XS_BYTES) {
        int64_t ib = 0;
        for (; ib + 2 <= nblock; ib += 2)
            iq4xs_pair(&c, src + QK_K * ib, imatrix ? imatrix + QK_K * ib : NULL, row + ib * IQ4_XS_BYTES);
        if (ib < nblock)
            gk_quantize_iq4_xs_avx2(src + QK_K * ib, row + ib * IQ4_XS_BYTES, 1, QK_K,
                                    imatrix ? imatrix + QK_K * ib : NULL);
    }
}

/* The 16 bytes of one IQ4 block: the levels of its 32 values xb at inverse scale
 * inv, value j in the low nibble of byte j and value j + 16 in the high one. */
AVX512 static void pack32(const iq4_levels16 *c, const float *xb, float inv, uint8_t *q4) {
    const __m512 iv = _mm512_set1_ps(inv);
    __m512 q;
    const __m512i l0 = best_index(c, _mm512_mul_ps(iv, _mm512_loadu_ps(xb)), &q);
    const __m512i l1 = best_index(c, _mm512_mul_ps(iv, _mm512_loadu_ps(xb + 16)), &q);
    _mm_storeu_si128((__m128i *)q4, _mm512_cvtepi32_epi8(_mm512_or_si512(l0, _mm512_slli_epi32(l1, 4))));
}

/* Sixteen consecutive IQ4_NL blocks of x (importance weights qw or NULL) into blk. */
AVX512 static void iq4nl_blocks16(const iq4_levels16 *c, const float *x, const float *qw, uint8_t *blk) {
    __m512 xt[32], wt[32];
    transpose_16x32(x, xt);
    __m512 sigma2 = _mm512_setzero_ps();
    if (qw != NULL) {
        for (int j = 0; j < QK4_NL; j++) sigma2 = _mm512_add_ps(sigma2, _mm512_mul_ps(xt[j], xt[j]));
        sigma2 = _mm512_mul_ps(sigma2, _mm512_set1_ps(2.f / QK4_NL));
    }
    weights(xt, qw, sigma2, wt);
    float scales[16];
    scales16(c, xt, wt, scales);
    const __mmask16 bad = nonfinite_lanes(xt);
    for (int k = 0; k < 16; k++) {
        uint8_t *b = blk + k * IQ4_NL_BYTES;
        if ((bad >> k) & 1) {
            gk_quantize_iq4_nl(x + QK4_NL * k, b, 1, QK4_NL, qw ? qw + QK4_NL * k : NULL);
            continue;
        }
        const uint16_t h = gk_fp32_to_fp16(scales[k]);
        b[0] = (uint8_t)h;
        b[1] = (uint8_t)(h >> 8);
        pack32(c, x + QK4_NL * k, scales[k] ? 1 / scales[k] : 0, b + 2);
    }
}

/** gk_quantize_iq4_nl_avx512() : gk_quantize_iq4_nl with sixteen consecutive blocks in
 *  the lanes; a row's blocks past its last sixteen go through the AVX2 kernel. */
AVX512 void gk_quantize_iq4_nl_avx512(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                      const float *imatrix) {
    iq4_levels16 c;
    levels_init(&c);
    const int64_t nblock = n_per_row / QK4_NL;
    const int64_t nvec = nblock / 16 * 16;
    uint8_t *row = dst;
    for (int64_t r = 0; r < nrows; r++, src += n_per_row, row += nblock * IQ4_NL_BYTES) {
        for (int64_t ib = 0; ib < nvec; ib += 16)
            iq4nl_blocks16(&c, src + QK4_NL * ib, imatrix ? imatrix + QK4_NL * ib : NULL,
                           row + ib * IQ4_NL_BYTES);
        if (nvec < nblock)
            gk_quantize_iq4_nl_avx2(src + QK4_NL * nvec, row + nvec * IQ4_NL_BYTES, 1,
                                    (nblock - nvec) * QK4_NL, imatrix ? imatrix + QK4_NL * nvec : NULL);
    }
}

/** gk_register_iquants_avx512() : the AVX-512 IQ4_XS and IQ4_NL quantizers into
 *  table (the other I-quants, and every I-quant dequantizer, keep AVX2's). */
void gk_register_iquants_avx512(gk_type_info *table) {
    table[GK_TYPE_IQ4_XS].quantize = gk_quantize_iq4_xs_avx512;
    table[GK_TYPE_IQ4_NL].quantize = gk_quantize_iq4_nl_avx512;
}
