/*
 * legacy_avx2.c - Q8_0 and Q4_0 quantizers (reference algorithms) and the
 * Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 dequantizers with AVX2.
 *
 * Bit-identical to legacy.c: the block maxima are order-free (max of absolute
 * values; the first index of the largest for Q4_0's signed maximum), the per
 * value work is the scalar expression lane by lane, and the float to integer
 * conversions reproduce what the scalar code compiles to (truncation to 32 bits,
 * then the low byte). A block holding NaN or infinity, where the scalar
 * maximum's order matters, goes through the scalar kernel. The weighted
 * (imatrix) quantizers of Q4_0, Q4_1, Q5_0 and Q5_1 are legacy.c's with the
 * AVX2 group searches (eight blocks per register pass). Q8_0 and Q4_0 also
 * quantize binary16 rows directly (quantize_from_f16), widening them in registers as
 * the F16 dequantizer would, so no F32 copy of the rows is made.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "types/kernels.h"
#include "types/quant_util.h"

#define AVX2 __attribute__((target("avx2,f16c")))
#define QK 32
#define GROUP 8

typedef void (*scalar_quantizer)(const float *, void *, int64_t, int64_t, const float *);

/* Whether any of the 32 values is NaN or infinite. */
AVX2 static inline bool nonfinite32(const __m256 *v) {
    const __m256i expo = _mm256_set1_epi32(0x7F800000);
    __m256i m = _mm256_setzero_si256();
    for (int k = 0; k < 4; k++)
        m = _mm256_or_si256(m, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v[k]), expo), expo));
    return !_mm256_testz_si256(m, m);
}

AVX2 static inline __m256 absv(__m256 x) {
    return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}

/* (int8_t) of a float as the scalar code computes it: 32-bit truncation (NaN and
 * overflow give INT_MIN), low byte, sign-extended. */
AVX2 static inline __m256i to_int8_lanes(__m256 f) {
    const __m256i t = _mm256_cvttps_epi32(f);
    return _mm256_srai_epi32(_mm256_slli_epi32(t, 24), 24);
}

/* Four vectors of int32 (each -128..255 as bytes) to 32 bytes in order. */
AVX2 static inline __m256i pack_bytes(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i mask = _mm256_set1_epi32(0xFF);
    const __m256i ab = _mm256_packus_epi32(_mm256_and_si256(a, mask), _mm256_and_si256(b, mask));
    const __m256i cd = _mm256_packus_epi32(_mm256_and_si256(c, mask), _mm256_and_si256(d, mask));
    const __m256i abcd = _mm256_packus_epi16(ab, cd);
    return _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* roundf (half away from zero) of each lane, exactly: truncate, then step away
 * from zero when the dropped fraction is at least one half. */
AVX2 static inline __m256 round_away(__m256 v) {
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = absv(_mm256_sub_ps(v, t));
    const __m256 step = _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ),
                                      _mm256_or_ps(_mm256_set1_ps(1.0f),
                                                   _mm256_and_ps(v, _mm256_set1_ps(-0.0f))));
    return _mm256_add_ps(t, step);
}

/* The 32 values of block i of src: floats, or binary16 widened (exact, as the
 * F16 dequantizer gives them). */
AVX2 static inline __attribute__((always_inline)) void load_block(const void *src, int64_t i, bool f16,
                                                                  __m256 v[4]) {
    for (int k = 0; k < 4; k++) {
        const int64_t at = i * QK + 8 * k;
        v[k] = f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)src + at)))
                   : _mm256_loadu_ps((const float *)src + at);
    }
}

/* One block through the scalar quantizer q (its values as loaded). */
AVX2 static void scalar_block(scalar_quantizer q, const __m256 v[4], uint8_t *out) {
    float x[QK];
    for (int k = 0; k < 4; k++) _mm256_storeu_ps(x + 8 * k, v[k]);
    q(x, out, 1, QK, NULL);
}

/* What differs between the two types: a block's partial extremes (two vectors
 * whose lanes hold what the block's extreme is taken over), the eight blocks'
 * extremes from those partials (one per lane), the divisor that makes them the
 * scales, a block's level bytes, and the scalar kernel for the blocks left to it. */
typedef struct block_kind {
    size_t block_bytes;
    float divisor;
    void (*partials)(const __m256 *v, __m256 *hi, __m256 *lo);
    __m256 (*extremes)(const __m256 *hi, const __m256 *lo, const void *src, bool f16, int64_t first);
    void (*levels)(const __m256 *v, __m256 id, uint8_t *qs);
    scalar_quantizer scalar;
} block_kind;

/* Lane b of the result: the largest (max) or smallest (!max) of the eight lanes
 * of v[b]. Three levels of pairwise shuffles, each combining lanes of one v[b]
 * only (so a NaN stays in its block's lane), then one permute to put block b in
 * lane b. Max and min of numbers do not depend on the order they are taken in. */
AVX2 static inline __attribute__((always_inline)) __m256 lanes_reduce(const __m256 *v, bool max) {
#define LANES_OP(a, b) (max ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b))
    __m256 r1[4], r2[2];
    for (int i = 0; i < 4; i++)  /* half h: block 2i + h, four partials */
        r1[i] = LANES_OP(_mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x20),
                         _mm256_permute2f128_ps(v[2 * i], v[2 * i + 1], 0x31));
    for (int i = 0; i < 2; i++)  /* half h: blocks 4i + h and 4i + 2 + h, two partials each */
        r2[i] = LANES_OP(_mm256_shuffle_ps(r1[2 * i], r1[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm256_shuffle_ps(r1[2 * i], r1[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    /* lane 4h + e: block 2e + h */
    const __m256 r = LANES_OP(_mm256_shuffle_ps(r2[0], r2[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm256_shuffle_ps(r2[0], r2[1], _MM_SHUFFLE(3, 1, 3, 1)));
#undef LANES_OP
    return _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

/* nb blocks of src (floats, or binary16 when f16) to out, eight at a time: the
 * eight extremes in one register, then the eight scales d = extreme / divisor
 * and id = 1 / d (0 where d is 0), d to binary16, the levels of each block. A
 * block holding NaN or infinity, and the blocks past the last whole group, go
 * through the scalar kernel. Inlined per kind and source, so the calls through
 * the kind are direct. */
AVX2 static inline __attribute__((always_inline)) void quantize_blocks(const block_kind *k, const void *src,
                                                                       bool f16, uint8_t *out, int64_t nb) {
    int64_t i = 0;
    for (; i + GROUP <= nb; i += GROUP) {
        uint8_t *o = out + (size_t)i * k->block_bytes;
        __m256 hi[GROUP], lo[GROUP];
        uint32_t bad = 0;
        for (int b = 0; b < GROUP; b++) {
            __m256 v[4];
            load_block(src, i + b, f16, v);
            if (nonfinite32(v)) bad |= 1u << b;
            k->partials(v, &hi[b], &lo[b]);
        }
        const __m256 d = _mm256_div_ps(k->extremes(hi, lo, src, f16, i), _mm256_set1_ps(k->divisor));
        const __m256 nonzero = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ);
        float id[GROUP];
        uint16_t h[GROUP];
        _mm256_storeu_ps(id, _mm256_and_ps(nonzero, _mm256_div_ps(_mm256_set1_ps(1.0f), d)));
        _mm_storeu_si128((__m128i *)h, _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        for (int b = 0; b < GROUP; b++) {
            __m256 v[4];
            load_block(src, i + b, f16, v);
            memcpy(o + b * k->block_bytes, &h[b], 2);
            k->levels(v, _mm256_set1_ps(id[b]), o + b * k->block_bytes + 2);
        }
        for (; bad; bad &= bad - 1) {
            const int b = __builtin_ctz(bad);
            __m256 v[4];
            load_block(src, i + b, f16, v);
            scalar_block(k->scalar, v, o + b * k->block_bytes);
        }
    }
    for (; i < nb; i++) {
        __m256 v[4];
        load_block(src, i, f16, v);
        scalar_block(k->scalar, v, out + (size_t)i * k->block_bytes);
    }
}

/* Q8_0: the largest magnitude. */
AVX2 static inline void q8_0_partials(const __m256 *v, __m256 *hi, __m256 *lo) {
    (void)lo;
    *hi = _mm256_max_ps(_mm256_max_ps(absv(v[0]), absv(v[1])), _mm256_max_ps(absv(v[2]), absv(v[3])));
}

AVX2 static inline __m256 q8_0_extremes(const __m256 *hi, const __m256 *lo, const void *src, bool f16,
                                        int64_t first) {
    (void)lo;
    (void)src;
    (void)f16;
    (void)first;
    return lanes_reduce(hi, true);
}

/* The 32 bytes of one Q8_0 block's levels: (int8_t) of roundf(x * id). */
AVX2 static inline void q8_0_levels(const __m256 *v, __m256 id, uint8_t *qs) {
    __m256i q[4];
    for (int k = 0; k < 4; k++) q[k] = to_int8_lanes(round_away(_mm256_mul_ps(v[k], id)));
    _mm256_storeu_si256((__m256i *)qs, pack_bytes(q[0], q[1], q[2], q[3]));
}

/* Q4_0: the signed value of largest magnitude, the first one on ties (0 when
 * every value is zero). From a block's largest value hi and smallest lo: hi when
 * hi > -lo (no value is -hi), lo when -lo > hi; only a block holding both +m
 * and -m as its largest magnitude m looks for the first of them. */
AVX2 static inline void q4_0_partials(const __m256 *v, __m256 *hi, __m256 *lo) {
    *hi = _mm256_max_ps(_mm256_max_ps(v[0], v[1]), _mm256_max_ps(v[2], v[3]));
    *lo = _mm256_min_ps(_mm256_min_ps(v[0], v[1]), _mm256_min_ps(v[2], v[3]));
}

/* The signed value at the first index of block b of src whose magnitude is m. */
AVX2 static float q4_0_first_of(const void *src, bool f16, int64_t b, float m) {
    __m256 v[4];
    load_block(src, b, f16, v);
    const __m256 vm = _mm256_set1_ps(m);
    uint32_t hit = 0;
    for (int k = 0; k < 4; k++)
        hit |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(absv(v[k]), vm, _CMP_EQ_OQ)) << (8 * k);
    const int at = __builtin_ctz(hit);
    return _mm256_cvtss_f32(_mm256_permutevar8x32_ps(v[at / 8], _mm256_set1_epi32(at % 8)));
}

AVX2 static inline __m256 q4_0_extremes(const __m256 *hi, const __m256 *lo, const void *src, bool f16,
                                        int64_t first) {
    const __m256 h = lanes_reduce(hi, true), l = lanes_reduce(lo, false);
    const __m256 neg_l = _mm256_xor_ps(l, _mm256_set1_ps(-0.0f)); /* exact: the sign bit flipped */
    const __m256 take_hi = _mm256_cmp_ps(h, neg_l, _CMP_GT_OQ);
    const __m256 take_lo = _mm256_cmp_ps(neg_l, h, _CMP_GT_OQ);
    __m256 e = _mm256_blendv_ps(_mm256_and_ps(take_hi, h), l, take_lo);
    unsigned tie = (unsigned)_mm256_movemask_ps(
        _mm256_and_ps(_mm256_cmp_ps(h, neg_l, _CMP_EQ_OQ), _mm256_cmp_ps(h, _mm256_setzero_ps(), _CMP_GT_OQ)));
    if (tie) {
        float ev[GROUP], hv[GROUP];
        _mm256_storeu_ps(ev, e);
        _mm256_storeu_ps(hv, h);
        for (; tie; tie &= tie - 1) {
            const int b = __builtin_ctz(tie);
            ev[b] = q4_0_first_of(src, f16, first + b, hv[b]);
        }
        e = _mm256_loadu_ps(ev);
    }
    return e;
}

/* The 16 bytes of one Q4_0 block's levels MIN(15, (int8_t)(x * id + 8.5)):
 * element j in the low nibble of byte j, element j + 16 in the high one. */
AVX2 static inline void q4_0_levels(const __m256 *v, __m256 id, uint8_t *qs) {
    const __m256 bias = _mm256_set1_ps(8.5f);
    __m256i q[4];
    for (int k = 0; k < 4; k++) {
        const __m256i l = to_int8_lanes(_mm256_add_ps(_mm256_mul_ps(v[k], id), bias));
        q[k] = _mm256_and_si256(_mm256_min_epi32(l, _mm256_set1_epi32(15)), _mm256_set1_epi32(0xFF));
    }
    /* low nibble from element j, high from j + 16 (as bytes, wrapping like uint8_t) */
    const __m256i lo = _mm256_permutevar8x32_epi32(
        _mm256_packus_epi16(_mm256_packus_epi32(q[0], q[1]), _mm256_setzero_si256()),
        _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    const __m256i hi = _mm256_permutevar8x32_epi32(
        _mm256_packus_epi16(_mm256_packus_epi32(q[2], q[3]), _mm256_setzero_si256()),
        _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    const __m128i packed = _mm_or_si128(_mm256_castsi256_si128(lo),
                                        _mm_and_si128(_mm_slli_epi16(_mm256_castsi256_si128(hi), 4),
                                                      _mm_set1_epi8((char)0xF0)));
    _mm_storeu_si128((__m128i *)qs, packed);
}

static const block_kind q8_0_kind = { 34, (1 << 7) - 1, q8_0_partials, q8_0_extremes, q8_0_levels,
                                      gk_quantize_q8_0 };
static const block_kind q4_0_kind = { 18, -8, q4_0_partials, q4_0_extremes, q4_0_levels, gk_quantize_q4_0 };

AVX2 static void quantize_q8_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix) {
    (void)imatrix;
    quantize_blocks(&q8_0_kind, src, false, dst, nrows * n_per_row / QK);
}

AVX2 static void quantize_q8_0_from_f16(const uint16_t *src, void *dst, int64_t nrows, int64_t n_per_row) {
    quantize_blocks(&q8_0_kind, src, true, dst, nrows * n_per_row / QK);
}

AVX2 static void quantize_q4_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix) {
    if (imatrix != NULL) {
        gk_quantize_q4_0_with(&gk_searches_avx2, src, dst, nrows, n_per_row, imatrix);
        return;
    }
    quantize_blocks(&q4_0_kind, src, false, dst, nrows * n_per_row / QK);
}

AVX2 static void quantize_q4_0_from_f16(const uint16_t *src, void *dst, int64_t nrows, int64_t n_per_row) {
    quantize_blocks(&q4_0_kind, src, true, dst, nrows * n_per_row / QK);
}

AVX2 static inline float load_half(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return gk_fp16_to_fp32(h);
}

AVX2 static void dequantize_q8_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += 34, dst += QK) {
        const __m256 d = _mm256_set1_ps(load_half(in));
        for (int k = 0; k < 4; k++) {
            const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(in + 2 + 8 * k)));
            _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
        }
    }
}

/* The 32 four-bit values of qs (low nibbles are elements 0..15, high 16..31) as
 * four vectors of eight int32, minus offset. */
AVX2 static inline void nibbles(const uint8_t *qs, int offset, __m256i out[4]) {
    const __m128i b = _mm_loadu_si128((const __m128i *)qs);
    const __m128i lo = _mm_and_si128(b, _mm_set1_epi8(0x0F));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0F));
    const __m256i off = _mm256_set1_epi32(offset);
    out[0] = _mm256_sub_epi32(_mm256_cvtepu8_epi32(lo), off);
    out[1] = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)), off);
    out[2] = _mm256_sub_epi32(_mm256_cvtepu8_epi32(hi), off);
    out[3] = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)), off);
}

/* Bits 0..31 of qh as 0 or 16 in four vectors of eight int32. */
AVX2 static inline void fifth_bits(const uint8_t *qhp, __m256i out[4]) {
    uint32_t qh;
    memcpy(&qh, qhp, 4);
    const __m256i shifts = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int k = 0; k < 4; k++) {
        const __m256i bits = _mm256_srlv_epi32(_mm256_set1_epi32((int)(qh >> (8 * k))), shifts);
        out[k] = _mm256_slli_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(1)), 4);
    }
}

AVX2 static void dequantize_q4_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += 18, dst += QK) {
        const __m256 d = _mm256_set1_ps(load_half(in));
        __m256i q[4];
        nibbles(in + 2, 8, q);
        for (int k = 0; k < 4; k++) _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(q[k]), d));
    }
}

AVX2 static void dequantize_q4_1(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += 20, dst += QK) {
        const __m256 d = _mm256_set1_ps(load_half(in)), m = _mm256_set1_ps(load_half(in + 2));
        __m256i q[4];
        nibbles(in + 4, 0, q);
        for (int k = 0; k < 4; k++)
            _mm256_storeu_ps(dst + 8 * k, _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(q[k]), d), m));
    }
}

AVX2 static void dequantize_q5_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += 22, dst += QK) {
        const __m256 d = _mm256_set1_ps(load_half(in));
        __m256i q[4], h[4];
        nibbles(in + 6, 0, q);
        fifth_bits(in + 2, h);
        for (int k = 0; k < 4; k++) {
            const __m256i l = _mm256_sub_epi32(_mm256_or_si256(q[k], h[k]), _mm256_set1_epi32(16));
            _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(l), d));
        }
    }
}

AVX2 static void dequantize_q5_1(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += 24, dst += QK) {
        const __m256 d = _mm256_set1_ps(load_half(in)), m = _mm256_set1_ps(load_half(in + 2));
        __m256i q[4], h[4];
        nibbles(in + 8, 0, q);
        fifth_bits(in + 4, h);
        for (int k = 0; k < 4; k++) {
            const __m256 l = _mm256_cvtepi32_ps(_mm256_or_si256(q[k], h[k]));
            _mm256_storeu_ps(dst + 8 * k, _mm256_add_ps(_mm256_mul_ps(l, d), m));
        }
    }
}

/* The other 4- and 5-bit types: reference paths as legacy.c, weighted ones with
 * the AVX2 searches. */
GK_QUANTIZER_USING(q4_1, gk_searches_avx2)
GK_QUANTIZER_USING(q5_0, gk_searches_avx2)
GK_QUANTIZER_USING(q5_1, gk_searches_avx2)

/** gk_register_legacy_avx2() : the legacy quantizers and dequantizers of table,
 *  and Q8_0's and Q4_0's straight from F16. */
void gk_register_legacy_avx2(gk_type_info *table) {
    table[GK_TYPE_Q8_0].quantize = quantize_q8_0;
    table[GK_TYPE_Q8_0].quantize_from_f16 = quantize_q8_0_from_f16;
    table[GK_TYPE_Q8_0].dequantize = dequantize_q8_0;
    table[GK_TYPE_Q4_0].quantize = quantize_q4_0;
    table[GK_TYPE_Q4_0].quantize_from_f16 = quantize_q4_0_from_f16;
    table[GK_TYPE_Q4_0].dequantize = dequantize_q4_0;
    table[GK_TYPE_Q4_1].quantize = quantize_q4_1;
    table[GK_TYPE_Q4_1].dequantize = dequantize_q4_1;
    table[GK_TYPE_Q5_0].quantize = quantize_q5_0;
    table[GK_TYPE_Q5_1].quantize = quantize_q5_1;
    table[GK_TYPE_Q5_0].dequantize = dequantize_q5_0;
    table[GK_TYPE_Q5_1].dequantize = dequantize_q5_1;
}
