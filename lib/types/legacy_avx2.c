/*
 * legacy_avx2.c - the legacy quantizers (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), from
 * floats and straight from binary16 rows, and their dequantizers with AVX2.
 *
 * Bit-identical to legacy.c. The quantizers take eight blocks at a time: each
 * block's extremes are order-free (the largest magnitude; the signed value at
 * its first index for Q4_0 and Q5_0, found from the block's largest and
 * smallest values; the minimum and maximum for Q4_1 and Q5_1, where a zero
 * extreme, whose sign the scalar's first-of-equals decides, sends the block to
 * the scalar kernel), reduced for the eight blocks in one register; d and id by
 * true divisions there, d to binary16 by F16C (round to nearest even, as
 * gk_fp32_to_fp16 does for every finite value); each value's level is the scalar
 * expression lane by lane, converted as the scalar code compiles it (truncation
 * to 32 bits, then the low byte). A block holding NaN or infinity and the blocks
 * past the last whole group go through the scalar kernel. Binary16 rows
 * (quantize_from_f16) are widened in registers as the F16 dequantizer would, so
 * no F32 copy of them is made. With an importance matrix, Q4_0, Q4_1, Q5_0 and
 * Q5_1 are legacy.c's weighted quantizers with the AVX2 group searches.
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

/* What differs between the types: a block's partial extremes (two vectors whose
 * lanes hold what the block's extremes are taken over), from those partials the
 * eight blocks' values d is taken from (one per lane; with their minima in *mins
 * for the types that store one, and in *redo (a bit per block) the blocks the
 * scalar kernel must do), the divisor that makes them the scales, whether the
 * block stores its minimum after its scale, a block's level bytes (given its
 * values, the inverse scale and its minimum), and the scalar kernel for the
 * blocks left to it. */
typedef struct block_kind {
    size_t block_bytes;
    float divisor;
    bool with_min;
    void (*partials)(const __m256 *v, __m256 *hi, __m256 *lo);
    __m256 (*extremes)(const __m256 *hi, const __m256 *lo, const void *src, bool f16, int64_t first,
                       __m256 *mins, uint32_t *redo);
    void (*levels)(const __m256 *v, __m256 id, __m256 min, uint8_t *qs);
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
 * eight blocks' extremes in one register, then the eight scales
 * d = extreme / divisor and id = 1 / d (0 where d is 0), d (and the minimum) to
 * binary16, the levels of each block. A block holding NaN or infinity, one the
 * kind hands back, and the blocks past the last whole group go through the
 * scalar kernel. Inlined per kind and source, so the calls through the kind are
 * direct. */
AVX2 static inline __attribute__((always_inline)) void quantize_blocks(const block_kind *k, const void *src,
                                                                       bool f16, uint8_t *out, int64_t nb) {
    const size_t levels_at = k->with_min ? 4 : 2;
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
        __m256 mins = _mm256_setzero_ps();
        const __m256 d =
            _mm256_div_ps(k->extremes(hi, lo, src, f16, i, &mins, &bad), _mm256_set1_ps(k->divisor));
        const __m256 nonzero = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_NEQ_UQ);
        float id[GROUP], mn[GROUP];
        uint16_t h[GROUP], hm[GROUP];
        _mm256_storeu_ps(id, _mm256_and_ps(nonzero, _mm256_div_ps(_mm256_set1_ps(1.0f), d)));
        _mm_storeu_si128((__m128i *)h, _mm256_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        if (k->with_min) {
            _mm256_storeu_ps(mn, mins);
            _mm_storeu_si128((__m128i *)hm, _mm256_cvtps_ph(mins, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        }
        for (int b = 0; b < GROUP; b++) {
            __m256 v[4];
            load_block(src, i + b, f16, v);
            uint8_t *ob = o + b * k->block_bytes;
            memcpy(ob, &h[b], 2);
            if (k->with_min) memcpy(ob + 2, &hm[b], 2);
            k->levels(v, _mm256_set1_ps(id[b]), k->with_min ? _mm256_set1_ps(mn[b]) : _mm256_setzero_ps(),
                      ob + levels_at);
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
                                        int64_t first, __m256 *mins, uint32_t *redo) {
    (void)lo;
    (void)src;
    (void)f16;
    (void)first;
    (void)mins;
    (void)redo;
    return lanes_reduce(hi, true);
}

/* The 32 bytes of one Q8_0 block's levels: (int8_t) of roundf(x * id). */
AVX2 static inline void q8_0_levels(const __m256 *v, __m256 id, __m256 min, uint8_t *qs) {
    (void)min;
    __m256i q[4];
    for (int k = 0; k < 4; k++) q[k] = to_int8_lanes(round_away(_mm256_mul_ps(v[k], id)));
    _mm256_storeu_si256((__m256i *)qs, pack_bytes(q[0], q[1], q[2], q[3]));
}

/* Every other type starts from a block's largest and smallest value. */
AVX2 static inline void minmax_partials(const __m256 *v, __m256 *hi, __m256 *lo) {
    *hi = _mm256_max_ps(_mm256_max_ps(v[0], v[1]), _mm256_max_ps(v[2], v[3]));
    *lo = _mm256_min_ps(_mm256_min_ps(v[0], v[1]), _mm256_min_ps(v[2], v[3]));
}

/* Q4_0 and Q5_0: the signed value of largest magnitude, the first one on ties
 * (0 when every value is zero). From a block's largest value hi and smallest
 * lo: hi when hi > -lo (no value is -hi), lo when -lo > hi; only a block holding
 * both +m and -m as its largest magnitude m looks for the first of them. */
AVX2 static float first_of_magnitude(const void *src, bool f16, int64_t b, float m) {
    __m256 v[4];
    load_block(src, b, f16, v);
    const __m256 vm = _mm256_set1_ps(m);
    uint32_t hit = 0;
    for (int k = 0; k < 4; k++)
        hit |= (uint32_t)_mm256_movemask_ps(_mm256_cmp_ps(absv(v[k]), vm, _CMP_EQ_OQ)) << (8 * k);
    const int at = __builtin_ctz(hit);
    return _mm256_cvtss_f32(_mm256_permutevar8x32_ps(v[at / 8], _mm256_set1_epi32(at % 8)));
}

AVX2 static inline __m256 signed_extremes(const __m256 *hi, const __m256 *lo, const void *src, bool f16,
                                          int64_t first, __m256 *mins, uint32_t *redo) {
    (void)mins;
    (void)redo;
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
            ev[b] = first_of_magnitude(src, f16, first + b, hv[b]);
        }
        e = _mm256_loadu_ps(ev);
    }
    return e;
}

/* Q4_1 and Q5_1: max - min, the minimum in *mins. The scalar keeps the first of
 * equal values (strict comparisons), which only shows in the sign of a zero
 * extreme: a block whose largest or smallest value is zero goes to the scalar
 * kernel. */
AVX2 static inline __m256 range_extremes(const __m256 *hi, const __m256 *lo, const void *src, bool f16,
                                         int64_t first, __m256 *mins, uint32_t *redo) {
    (void)src;
    (void)f16;
    (void)first;
    const __m256 h = lanes_reduce(hi, true), l = lanes_reduce(lo, false);
    *redo |= (uint32_t)_mm256_movemask_ps(_mm256_or_ps(_mm256_cmp_ps(h, _mm256_setzero_ps(), _CMP_EQ_OQ),
                                                       _mm256_cmp_ps(l, _mm256_setzero_ps(), _CMP_EQ_OQ)));
    *mins = l;
    return _mm256_sub_ps(h, l);
}

/* The 32 level bytes of a block: (v - min) * id + bias (the subtraction left
 * out where !with_min), the low bytes of their 32-bit truncations (as the scalar
 * code's conversions to a byte compile), capped at cap as signed bytes when
 * cap < 128, in element order. */
AVX2 static inline __m256i level_bytes(const __m256 *v, __m256 id, __m256 min, bool with_min, float bias,
                                       int cap) {
    __m256i q[4];
    for (int k = 0; k < 4; k++) {
        const __m256 x = with_min ? _mm256_sub_ps(v[k], min) : v[k];
        q[k] = to_int8_lanes(_mm256_add_ps(_mm256_mul_ps(x, id), _mm256_set1_ps(bias)));
        if (cap < 128) q[k] = _mm256_min_epi32(q[k], _mm256_set1_epi32(cap));
    }
    return pack_bytes(q[0], q[1], q[2], q[3]);
}

/* 32 level bytes into qs as the 4-bit types store them: byte j is
 * b[j] | b[j + 16] << 4, b[j] unmasked as in the scalar code (a level is 0..15
 * there, but the expression keeps any bits it has). */
AVX2 static inline void pack_nibbles(__m256i b, uint8_t *qs) {
    const __m128i hi = _mm_and_si128(_mm_slli_epi16(_mm256_extracti128_si256(b, 1), 4), _mm_set1_epi8((char)0xF0));
    _mm_storeu_si128((__m128i *)qs, _mm_or_si128(_mm256_castsi256_si128(b), hi));
}

/* Five-bit levels: bit 4 of each byte into the 32-bit mask at out (element j at
 * bit j, little-endian), the low nibbles two to a byte after it. */
AVX2 static inline void pack_five_bits(__m256i b, uint8_t *out) {
    const uint32_t qh = (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(b, 3));
    memcpy(out, &qh, 4);
    pack_nibbles(_mm256_and_si256(b, _mm256_set1_epi8(0x0F)), out + 4);
}

/* Q4_0: MIN(15, (int8_t)(x * id + 8.5)). */
AVX2 static inline void q4_0_levels(const __m256 *v, __m256 id, __m256 min, uint8_t *qs) {
    pack_nibbles(level_bytes(v, id, min, false, 8.5f, 15), qs);
}

/* Q5_0: MIN(31, (int8_t)(x * id + 16.5)). */
AVX2 static inline void q5_0_levels(const __m256 *v, __m256 id, __m256 min, uint8_t *out) {
    pack_five_bits(level_bytes(v, id, min, false, 16.5f, 31), out);
}

/* Q4_1: MIN(15, (int8_t)((x - min) * id + 0.5)). */
AVX2 static inline void q4_1_levels(const __m256 *v, __m256 id, __m256 min, uint8_t *qs) {
    pack_nibbles(level_bytes(v, id, min, true, 0.5f, 15), qs);
}

/* Q5_1: (uint8_t)((x - min) * id + 0.5), no cap. */
AVX2 static inline void q5_1_levels(const __m256 *v, __m256 id, __m256 min, uint8_t *out) {
    pack_five_bits(level_bytes(v, id, min, true, 0.5f, 128), out);
}

static const block_kind q8_0_kind = { 34, (1 << 7) - 1, false, q8_0_partials, q8_0_extremes, q8_0_levels,
                                      gk_quantize_q8_0 };
static const block_kind q4_0_kind = { 18, -8, false, minmax_partials, signed_extremes, q4_0_levels,
                                      gk_quantize_q4_0 };
static const block_kind q5_0_kind = { 22, -16, false, minmax_partials, signed_extremes, q5_0_levels,
                                      gk_quantize_q5_0 };
static const block_kind q4_1_kind = { 20, (1 << 4) - 1, true, minmax_partials, range_extremes, q4_1_levels,
                                      gk_quantize_q4_1 };
static const block_kind q5_1_kind = { 24, (1 << 5) - 1, true, minmax_partials, range_extremes, q5_1_levels,
                                      gk_quantize_q5_1 };

/* quantize_T (rows of floats; with an importance matrix, legacy.c's weighted
 * quantizer with the AVX2 group searches) and quantize_T_from_f16. */
#define LEGACY_QUANTIZERS(t)                                                                          \
    AVX2 static void quantize_##t(const float *src, void *dst, int64_t nrows, int64_t n_per_row,      \
                                  const float *imatrix) {                                             \
        if (imatrix != NULL) {                                                                        \
            gk_quantize_##t##_with(&gk_searches_avx2, src, dst, nrows, n_per_row, imatrix);           \
            return;                                                                                   \
        }                                                                                             \
        quantize_blocks(&t##_kind, src, false, dst, nrows * n_per_row / QK);                          \
    }                                                                                                 \
    AVX2 static void quantize_##t##_from_f16(const uint16_t *src, void *dst, int64_t nrows,           \
                                             int64_t n_per_row) {                                     \
        quantize_blocks(&t##_kind, src, true, dst, nrows * n_per_row / QK);                           \
    }
LEGACY_QUANTIZERS(q4_0)
LEGACY_QUANTIZERS(q4_1)
LEGACY_QUANTIZERS(q5_0)
LEGACY_QUANTIZERS(q5_1)

AVX2 static void quantize_q8_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix) {
    (void)imatrix;
    quantize_blocks(&q8_0_kind, src, false, dst, nrows * n_per_row / QK);
}

AVX2 static void quantize_q8_0_from_f16(const uint16_t *src, void *dst, int64_t nrows, int64_t n_per_row) {
    quantize_blocks(&q8_0_kind, src, true, dst, nrows * n_per_row / QK);
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

/** gk_register_legacy_avx2() : the legacy quantizers and dequantizers of table,
 *  the quantizers also straight from F16. */
void gk_register_legacy_avx2(gk_type_info *table) {
    table[GK_TYPE_Q8_0].quantize = quantize_q8_0;
    table[GK_TYPE_Q8_0].quantize_from_f16 = quantize_q8_0_from_f16;
    table[GK_TYPE_Q8_0].dequantize = dequantize_q8_0;
    table[GK_TYPE_Q4_0].quantize = quantize_q4_0;
    table[GK_TYPE_Q4_0].quantize_from_f16 = quantize_q4_0_from_f16;
    table[GK_TYPE_Q4_0].dequantize = dequantize_q4_0;
    table[GK_TYPE_Q4_1].quantize = quantize_q4_1;
    table[GK_TYPE_Q4_1].quantize_from_f16 = quantize_q4_1_from_f16;
    table[GK_TYPE_Q4_1].dequantize = dequantize_q4_1;
    table[GK_TYPE_Q5_0].quantize = quantize_q5_0;
    table[GK_TYPE_Q5_0].quantize_from_f16 = quantize_q5_0_from_f16;
    table[GK_TYPE_Q5_1].quantize = quantize_q5_1;
    table[GK_TYPE_Q5_1].quantize_from_f16 = quantize_q5_1_from_f16;
    table[GK_TYPE_Q5_0].dequantize = dequantize_q5_0;
    table[GK_TYPE_Q5_1].dequantize = dequantize_q5_1;
}
