/*
 * legacy_avx512.c - the Q8_0 and Q4_0 quantizers with AVX-512, sixteen blocks
 * at a time, their sixteen scales computed in one register; the weighted
 * (imatrix) Q4_0, Q4_1, Q5_0 and Q5_1 quantizers with the AVX-512 group searches.
 *
 * Bit-identical to legacy.c: each block's largest absolute value (order-free;
 * for Q4_0 the signed value at its first index), then in the lanes d (amax / 127,
 * max / -8) and id = 1 / d by true divisions, d to binary16 by the F16C
 * conversion (round to nearest even, as gk_fp32_to_fp16 does for every finite
 * value), and each value's level converted as the scalar code compiles it
 * (truncation to 32 bits, then the low byte). A block holding NaN or infinity,
 * where the scalar maximum's order matters, and the blocks past the last whole
 * group of sixteen go through the scalar kernel. Q8_0 and Q4_0 also quantize
 * binary16 rows directly (quantize_from_f16), widening sixteen values at a time in
 * registers as the F16 dequantizer would, so no F32 copy of the rows is made.
 */
#include <immintrin.h>
#include <string.h>

#include "types/fp16.h"
#include "types/kernels.h"
#include "types/quant_util.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))
#define QK 32
#define GROUP 16

AVX512 static inline __m512 absv(__m512 x) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFFFFFF)));
}

/* Whether any lane of a or b is NaN or infinite. */
AVX512 static inline bool nonfinite(__m512 a, __m512 b) {
    const __m512i expo = _mm512_set1_epi32(0x7F800000);
    const __mmask16 ma = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(a), expo), expo);
    const __mmask16 mb = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(b), expo), expo);
    return (ma | mb) != 0;
}

/* roundf (half away from zero) of each lane, exactly: truncate, then step away
 * from zero when the dropped fraction is at least one half. */
AVX512 static inline __m512 round_away(__m512 v) {
    const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask16 up = _mm512_cmp_ps_mask(absv(_mm512_sub_ps(v, t)), _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __m512 step = _mm512_or_ps(_mm512_set1_ps(1.0f), _mm512_and_ps(v, _mm512_set1_ps(-0.0f)));
    return _mm512_mask_add_ps(t, up, t, step);
}

typedef void (*scalar_quantizer)(const float *, void *, int64_t, int64_t, const float *);

/* Sixteen values from element at of src: floats, or binary16 widened (exact). */
AVX512 static inline __attribute__((always_inline)) __m512 load16(const void *src, int64_t at, bool f16) {
    if (f16) return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)src + at)));
    return _mm512_loadu_ps((const float *)src + at);
}

/* What differs between the two types: a block's partial extremes (two vectors
 * whose lanes hold what the block's extreme is taken over), the sixteen blocks'
 * extremes from those partials (one per lane), the divisor that makes them the
 * scales, a block's level bytes, and the scalar kernel for the blocks left to it. */
typedef struct block_kind {
    size_t block_bytes;
    float divisor;
    void (*partials)(__m512 v0, __m512 v1, __m512 *hi, __m512 *lo);
    __m512 (*extremes)(const __m512 *hi, const __m512 *lo, const void *src, bool f16, int64_t first);
    void (*levels)(__m512 x0, __m512 x1, __m512 id, uint8_t *qs);
    scalar_quantizer scalar;
} block_kind;

/* Lane b of the result: the largest (max) or smallest (!max) of the sixteen lanes
 * of v[b]. Four levels of pairwise shuffles, each combining lanes of one v[b]
 * only (so a NaN stays in its block's lane), then one permute to put block b in
 * lane b. Max and min of numbers do not depend on the order they are taken in. */
AVX512 static inline __attribute__((always_inline)) __m512 lanes_reduce(const __m512 *v, bool max) {
#define LANES_OP(a, b) (max ? _mm512_max_ps(a, b) : _mm512_min_ps(a, b))
    __m512 r1[8], r2[4], r3[2];
    for (int i = 0; i < 8; i++)  /* 128-bit quarters: two blocks, eight partials each */
        r1[i] = LANES_OP(_mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(v[2 * i], v[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    for (int i = 0; i < 4; i++)  /* quarter q: block 4i + q, four partials */
        r2[i] = LANES_OP(_mm512_shuffle_f32x4(r1[2 * i], r1[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(r1[2 * i], r1[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
    for (int i = 0; i < 2; i++)  /* quarter q: blocks 8i + q and 8i + 4 + q, two partials each */
        r3[i] = LANES_OP(_mm512_shuffle_ps(r2[2 * i], r2[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(r2[2 * i], r2[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* lane 4q + e: block 4e + q */
    const __m512 r = LANES_OP(_mm512_shuffle_ps(r3[0], r3[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_ps(r3[0], r3[1], _MM_SHUFFLE(3, 1, 3, 1)));
#undef LANES_OP
    return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), r);
}

/* Blocks first..first+n-1 of src through the scalar kernel (binary16 widened
 * first, a block at a time). */
static void scalar_blocks(const block_kind *k, const void *src, bool f16, int64_t first, int64_t n,
                          uint8_t *out) {
    if (!f16) {
        k->scalar((const float *)src + first * QK, out + (size_t)first * k->block_bytes, 1, n * QK, NULL);
        return;
    }
    for (int64_t b = first; b < first + n; b++) {
        float x[QK];
        const uint16_t *h = (const uint16_t *)src + b * QK;
        for (int j = 0; j < QK; j++) x[j] = gk_fp16_to_fp32(h[j]);
        k->scalar(x, out + (size_t)b * k->block_bytes, 1, QK, NULL);
    }
}

/* nb blocks of src (floats, or binary16 when f16) to out, sixteen at a time:
 * the sixteen extremes in one register, then the sixteen scales d = extreme / divisor and id = 1 / d (0
 * where d is 0) in one register, d to binary16, the levels of each block.
 * Inlined per kind and source, so the calls through the kind are direct. */
AVX512 static inline __attribute__((always_inline)) void quantize_blocks(const block_kind *k, const void *src,
                                                                         bool f16, uint8_t *out, int64_t nb) {
    int64_t i = 0;
    for (; i + GROUP <= nb; i += GROUP) {
        uint8_t *o = out + (size_t)i * k->block_bytes;
        __m512 hi[GROUP], lo[GROUP];
        uint32_t bad = 0;
        for (int b = 0; b < GROUP; b++) {
            const int64_t at = (i + b) * QK;
            const __m512 v0 = load16(src, at, f16), v1 = load16(src, at + 16, f16);
            if (nonfinite(v0, v1)) bad |= 1u << b;
            k->partials(v0, v1, &hi[b], &lo[b]);
        }
        const __m512 d = _mm512_div_ps(k->extremes(hi, lo, src, f16, i), _mm512_set1_ps(k->divisor));
        const __mmask16 nonzero = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_UQ);
        float id[GROUP];
        uint16_t h[GROUP];
        _mm512_storeu_ps(id, _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(1.0f), d));
        _mm256_storeu_si256((__m256i *)h, _mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        for (int b = 0; b < GROUP; b++) {
            const int64_t at = (i + b) * QK;
            memcpy(o + b * k->block_bytes, &h[b], 2);
            k->levels(load16(src, at, f16), load16(src, at + 16, f16), _mm512_set1_ps(id[b]),
                      o + b * k->block_bytes + 2);
        }
        for (; bad; bad &= bad - 1) scalar_blocks(k, src, f16, i + __builtin_ctz(bad), 1, out);
    }
    if (i < nb) scalar_blocks(k, src, f16, i, nb - i, out);
}

/* Q8_0: the largest magnitude. */
AVX512 static inline void q8_0_partials(__m512 v0, __m512 v1, __m512 *hi, __m512 *lo) {
    (void)lo;
    *hi = _mm512_max_ps(absv(v0), absv(v1));
}

AVX512 static inline __m512 q8_0_extremes(const __m512 *hi, const __m512 *lo, const void *src, bool f16,
                                          int64_t first) {
    (void)lo;
    (void)src;
    (void)f16;
    (void)first;
    return lanes_reduce(hi, true);
}

/* The 32 bytes of one Q8_0 block's levels: (int8_t) of roundf(x * id). */
AVX512 static inline void q8_0_levels(__m512 x0, __m512 x1, __m512 id, uint8_t *qs) {
    const __m512i q0 = _mm512_cvttps_epi32(round_away(_mm512_mul_ps(x0, id)));
    const __m512i q1 = _mm512_cvttps_epi32(round_away(_mm512_mul_ps(x1, id)));
    _mm_storeu_si128((__m128i *)qs, _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128((__m128i *)(qs + 16), _mm512_cvtepi32_epi8(q1));
}

/* Q4_0: the signed value of largest magnitude, the first one on ties (0 when
 * every value is zero). From a block's largest value hi and smallest lo: hi when
 * hi > -lo (no value is -hi), lo when -lo > hi; only a block holding both +m
 * and -m as its largest magnitude m looks for the first of them. */
AVX512 static inline void q4_0_partials(__m512 v0, __m512 v1, __m512 *hi, __m512 *lo) {
    *hi = _mm512_max_ps(v0, v1);
    *lo = _mm512_min_ps(v0, v1);
}

/* The signed value at the first index of block b of src whose magnitude is m. */
AVX512 static float q4_0_first_of(const void *src, bool f16, int64_t b, float m) {
    const __m512 v0 = load16(src, b * QK, f16), v1 = load16(src, b * QK + 16, f16);
    const __m512 vm = _mm512_set1_ps(m);
    const uint32_t hit = (uint32_t)_mm512_cmp_ps_mask(absv(v0), vm, _CMP_EQ_OQ) |
                         (uint32_t)_mm512_cmp_ps_mask(absv(v1), vm, _CMP_EQ_OQ) << 16;
    return _mm512_cvtss_f32(_mm512_permutex2var_ps(v0, _mm512_set1_epi32(__builtin_ctz(hit)), v1));
}

AVX512 static inline __m512 q4_0_extremes(const __m512 *hi, const __m512 *lo, const void *src, bool f16,
                                          int64_t first) {
    const __m512 h = lanes_reduce(hi, true), l = lanes_reduce(lo, false);
    const __m512 neg_l = _mm512_xor_ps(l, _mm512_set1_ps(-0.0f)); /* exact: the sign bit flipped */
    const __mmask16 take_hi = _mm512_cmp_ps_mask(h, neg_l, _CMP_GT_OQ);
    const __mmask16 take_lo = _mm512_cmp_ps_mask(neg_l, h, _CMP_GT_OQ);
    __m512 e = _mm512_mask_mov_ps(_mm512_maskz_mov_ps(take_hi, h), take_lo, l);
    __mmask16 tie = _mm512_cmp_ps_mask(h, neg_l, _CMP_EQ_OQ) & _mm512_cmp_ps_mask(h, _mm512_setzero_ps(), _CMP_GT_OQ);
    if (tie) {
        float ev[GROUP], hv[GROUP];
        _mm512_storeu_ps(ev, e);
        _mm512_storeu_ps(hv, h);
        for (; tie; tie &= (__mmask16)(tie - 1)) {
            const int b = __builtin_ctz(tie);
            ev[b] = q4_0_first_of(src, f16, first + b, hv[b]);
        }
        e = _mm512_loadu_ps(ev);
    }
    return e;
}

/* The 16 bytes of one Q4_0 block's levels MIN(15, (int8_t)(x * id + 8.5)):
 * element j in the low nibble of byte j, element j + 16 in the high one. */
AVX512 static inline void q4_0_levels(__m512 x0, __m512 x1, __m512 id, uint8_t *qs) {
    const __m512 half = _mm512_set1_ps(8.5f);
    const __m128i fifteen = _mm_set1_epi8(15);
    const __m128i l0 = _mm_min_epi8(
        _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(x0, id), half))), fifteen);
    const __m128i l1 = _mm_min_epi8(
        _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(x1, id), half))), fifteen);
    const __m128i hi = _mm_and_si128(_mm_slli_epi16(l1, 4), _mm_set1_epi8((char)0xF0));
    _mm_storeu_si128((__m128i *)qs, _mm_or_si128(l0, hi));
}

static const block_kind q8_0_kind = { 34, (1 << 7) - 1, q8_0_partials, q8_0_extremes, q8_0_levels,
                                      gk_quantize_q8_0 };
static const block_kind q4_0_kind = { 18, -8, q4_0_partials, q4_0_extremes, q4_0_levels, gk_quantize_q4_0 };

AVX512 static void quantize_q8_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                 const float *imatrix) {
    (void)imatrix;
    quantize_blocks(&q8_0_kind, src, false, dst, nrows * n_per_row / QK);
}

AVX512 static void quantize_q8_0_from_f16(const uint16_t *src, void *dst, int64_t nrows, int64_t n_per_row) {
    quantize_blocks(&q8_0_kind, src, true, dst, nrows * n_per_row / QK);
}

AVX512 static void quantize_q4_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                 const float *imatrix) {
    if (imatrix != NULL) {
        gk_quantize_q4_0_with(&gk_searches_avx512, src, dst, nrows, n_per_row, imatrix);
        return;
    }
    quantize_blocks(&q4_0_kind, src, false, dst, nrows * n_per_row / QK);
}

AVX512 static void quantize_q4_0_from_f16(const uint16_t *src, void *dst, int64_t nrows, int64_t n_per_row) {
    quantize_blocks(&q4_0_kind, src, true, dst, nrows * n_per_row / QK);
}

/* The other 4- and 5-bit types: reference paths as legacy.c, weighted ones with
 * the AVX-512 searches (sixteen blocks per register pass). */
GK_QUANTIZER_USING(q4_1, gk_searches_avx512)
GK_QUANTIZER_USING(q5_0, gk_searches_avx512)
GK_QUANTIZER_USING(q5_1, gk_searches_avx512)

/** gk_register_legacy_avx512() : the Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 quantizers
 *  of table, and Q8_0's and Q4_0's straight from F16 (the dequantizers keep AVX2). */
void gk_register_legacy_avx512(gk_type_info *table) {
    table[GK_TYPE_Q8_0].quantize = quantize_q8_0;
    table[GK_TYPE_Q8_0].quantize_from_f16 = quantize_q8_0_from_f16;
    table[GK_TYPE_Q4_0].quantize = quantize_q4_0;
    table[GK_TYPE_Q4_0].quantize_from_f16 = quantize_q4_0_from_f16;
    table[GK_TYPE_Q4_1].quantize = quantize_q4_1;
    table[GK_TYPE_Q5_0].quantize = quantize_q5_0;
    table[GK_TYPE_Q5_1].quantize = quantize_q5_1;
}
