/*
 * legacy_avx512.c - the legacy quantizers (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) with
 * AVX-512, from floats and straight from binary16 rows (the dequantizers keep
 * AVX2's).
 *
 * legacy_avx2.c's method with sixteen blocks at a time: order-free extremes
 * per block reduced for the sixteen in one register (a zero minimum or maximum
 * of Q4_1 and Q5_1 sends its block to the scalar kernel), d and id by true
 * divisions, d (and the minimum) to binary16 by F16C, the levels lane by lane as
 * the scalar code computes and converts them. NaN or infinity in a block, and
 * the blocks past the last whole group, go through the scalar kernel. With an
 * importance matrix, Q4_0, Q4_1, Q5_0 and Q5_1 are legacy.c's weighted
 * quantizers with the AVX-512 group searches.
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

/* What differs between the types: a block's partial extremes (two vectors whose
 * lanes hold what the block's extremes are taken over), from those partials the
 * sixteen blocks' values d is taken from (one per lane; with their minima in
 * *mins for the types that store one, and in *redo the blocks the scalar kernel
 * must do), the divisor that makes them the scales, whether the block stores its
 * minimum after its scale, a block's level bytes (given its values, the inverse
 * scale and its minimum), and the scalar kernel for the blocks left to it. */
typedef struct block_kind {
    size_t block_bytes;
    float divisor;
    bool with_min;
    void (*partials)(__m512 v0, __m512 v1, __m512 *hi, __m512 *lo);
    __m512 (*extremes)(const __m512 *hi, const __m512 *lo, const void *src, bool f16, int64_t first,
                       __m512 *mins, __mmask16 *redo);
    void (*levels)(__m512 x0, __m512 x1, __m512 id, __m512 min, uint8_t *qs);
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
 * the sixteen blocks' extremes in one register, then the sixteen scales
 * d = extreme / divisor and id = 1 / d (0 where d is 0) in one register, d (and
 * the minimum) to binary16, the levels of each block. A block holding NaN or
 * infinity, one the kind hands back, and the blocks past the last whole group
 * go through the scalar kernel. Inlined per kind and source, so the calls
 * through the kind are direct. */
AVX512 static inline __attribute__((always_inline)) void quantize_blocks(const block_kind *k, const void *src,
                                                                         bool f16, uint8_t *out, int64_t nb) {
    const size_t levels_at = k->with_min ? 4 : 2;
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
        __m512 mins = _mm512_setzero_ps();
        __mmask16 redo = 0;
        const __m512 d =
            _mm512_div_ps(k->extremes(hi, lo, src, f16, i, &mins, &redo), _mm512_set1_ps(k->divisor));
        bad |= redo;
        const __mmask16 nonzero = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_UQ);
        float id[GROUP], mn[GROUP];
        uint16_t h[GROUP], hm[GROUP];
        _mm512_storeu_ps(id, _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(1.0f), d));
        _mm256_storeu_si256((__m256i *)h, _mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        if (k->with_min) {
            _mm512_storeu_ps(mn, mins);
            _mm256_storeu_si256((__m256i *)hm, _mm512_cvtps_ph(mins, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        }
        for (int b = 0; b < GROUP; b++) {
            const int64_t at = (i + b) * QK;
            uint8_t *ob = o + b * k->block_bytes;
            memcpy(ob, &h[b], 2);
            if (k->with_min) memcpy(ob + 2, &hm[b], 2);
            k->levels(load16(src, at, f16), load16(src, at + 16, f16), _mm512_set1_ps(id[b]),
                      k->with_min ? _mm512_set1_ps(mn[b]) : _mm512_setzero_ps(), ob + levels_at);
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
                                          int64_t first, __m512 *mins, __mmask16 *redo) {
    (void)lo;
    (void)src;
    (void)f16;
    (void)first;
    (void)mins;
    (void)redo;
    return lanes_reduce(hi, true);
}

/* The 32 bytes of one Q8_0 block's levels: (int8_t) of roundf(x * id). */
AVX512 static inline void q8_0_levels(__m512 x0, __m512 x1, __m512 id, __m512 min, uint8_t *qs) {
    (void)min;
    const __m512i q0 = _mm512_cvttps_epi32(round_away(_mm512_mul_ps(x0, id)));
    const __m512i q1 = _mm512_cvttps_epi32(round_away(_mm512_mul_ps(x1, id)));
    _mm_storeu_si128((__m128i *)qs, _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128((__m128i *)(qs + 16), _mm512_cvtepi32_epi8(q1));
}

/* Every other type starts from a block's largest and smallest value. */
AVX512 static inline void minmax_partials(__m512 v0, __m512 v1, __m512 *hi, __m512 *lo) {
    *hi = _mm512_max_ps(v0, v1);
    *lo = _mm512_min_ps(v0, v1);
}

/* Q4_0 and Q5_0: the signed value of largest magnitude, the first one on ties
 * (0 when every value is zero). From a block's largest value hi and smallest
 * lo: hi when hi > -lo (no value is -hi), lo when -lo > hi; only a block holding
 * both +m and -m as its largest magnitude m looks for the first of them. */
AVX512 static float first_of_magnitude(const void *src, bool f16, int64_t b, float m) {
    const __m512 v0 = load16(src, b * QK, f16), v1 = load16(src, b * QK + 16, f16);
    const __m512 vm = _mm512_set1_ps(m);
    const uint32_t hit = (uint32_t)_mm512_cmp_ps_mask(absv(v0), vm, _CMP_EQ_OQ) |
                         (uint32_t)_mm512_cmp_ps_mask(absv(v1), vm, _CMP_EQ_OQ) << 16;
    return _mm512_cvtss_f32(_mm512_permutex2var_ps(v0, _mm512_set1_epi32(__builtin_ctz(hit)), v1));
}

AVX512 static inline __m512 signed_extremes(const __m512 *hi, const __m512 *lo, const void *src, bool f16,
                                            int64_t first, __m512 *mins, __mmask16 *redo) {
    (void)mins;
    (void)redo;
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
            ev[b] = first_of_magnitude(src, f16, first + b, hv[b]);
        }
        e = _mm512_loadu_ps(ev);
    }
    return e;
}

/* Q4_1 and Q5_1: max - min, the minimum in *mins. The scalar keeps the first of
 * equal values (strict comparisons), which only shows in the sign of a zero
 * extreme: a block whose largest or smallest value is zero goes to the scalar
 * kernel. */
AVX512 static inline __m512 range_extremes(const __m512 *hi, const __m512 *lo, const void *src, bool f16,
                                           int64_t first, __m512 *mins, __mmask16 *redo) {
    (void)src;
    (void)f16;
    (void)first;
    const __m512 h = lanes_reduce(hi, true), l = lanes_reduce(lo, false);
    *redo = _mm512_cmp_ps_mask(h, _mm512_setzero_ps(), _CMP_EQ_OQ) |
            _mm512_cmp_ps_mask(l, _mm512_setzero_ps(), _CMP_EQ_OQ);
    *mins = l;
    return _mm512_sub_ps(h, l);
}

/* The level bytes of the two halves of a block: (x - min) * id + bias (the
 * subtraction left out where !with_min), the low bytes of their 32-bit
 * truncations (as the scalar code's conversions to a byte compile), capped at
 * cap as signed bytes when cap < 128. */
AVX512 static inline void level_bytes(__m512 x0, __m512 x1, __m512 id, __m512 min, bool with_min, float bias,
                                      int cap, __m128i *b0, __m128i *b1) {
    const __m512 vb = _mm512_set1_ps(bias);
    if (with_min) {
        x0 = _mm512_sub_ps(x0, min);
        x1 = _mm512_sub_ps(x1, min);
    }
    *b0 = _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(x0, id), vb)));
    *b1 = _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(x1, id), vb)));
    if (cap < 128) {
        *b0 = _mm_min_epi8(*b0, _mm_set1_epi8((char)cap));
        *b1 = _mm_min_epi8(*b1, _mm_set1_epi8((char)cap));
    }
}

/* Level bytes b0 (elements 0..15) and b1 (16..31) into qs as the 4-bit types
 * store them: byte j is b0[j] | b1[j] << 4, b0[j] unmasked as in the scalar code
 * (a level is 0..15 there, but the expression keeps any bits it has). */
AVX512 static inline void pack_nibbles(__m128i b0, __m128i b1, uint8_t *qs) {
    const __m128i hi = _mm_and_si128(_mm_slli_epi16(b1, 4), _mm_set1_epi8((char)0xF0));
    _mm_storeu_si128((__m128i *)qs, _mm_or_si128(b0, hi));
}

/* Five-bit levels: bit 4 of each byte into the 32-bit mask at out (element j at
 * bit j, little-endian), the low nibbles two to a byte after it. */
AVX512 static inline void pack_five_bits(__m128i b0, __m128i b1, uint8_t *out) {
    const uint32_t qh = (uint32_t)_mm_movemask_epi8(_mm_slli_epi16(b0, 3)) |
                        (uint32_t)_mm_movemask_epi8(_mm_slli_epi16(b1, 3)) << 16;
    memcpy(out, &qh, 4);
    pack_nibbles(_mm_and_si128(b0, _mm_set1_epi8(0x0F)), b1, out + 4);
}

/* Q4_0: MIN(15, (int8_t)(x * id + 8.5)). */
AVX512 static inline void q4_0_levels(__m512 x0, __m512 x1, __m512 id, __m512 min, uint8_t *qs) {
    __m128i b0, b1;
    level_bytes(x0, x1, id, min, false, 8.5f, 15, &b0, &b1);
    pack_nibbles(b0, b1, qs);
}

/* Q5_0: MIN(31, (int8_t)(x * id + 16.5)). */
AVX512 static inline void q5_0_levels(__m512 x0, __m512 x1, __m512 id, __m512 min, uint8_t *out) {
    __m128i b0, b1;
    level_bytes(x0, x1, id, min, false, 16.5f, 31, &b0, &b1);
    pack_five_bits(b0, b1, out);
}

/* Q4_1: MIN(15, (int8_t)((x - min) * id + 0.5)). */
AVX512 static inline void q4_1_levels(__m512 x0, __m512 x1, __m512 id, __m512 min, uint8_t *qs) {
    __m128i b0, b1;
    level_bytes(x0, x1, id, min, true, 0.5f, 15, &b0, &b1);
    pack_nibbles(b0, b1, qs);
}

/* Q5_1: (uint8_t)((x - min) * id + 0.5), no cap. */
AVX512 static inline void q5_1_levels(__m512 x0, __m512 x1, __m512 id, __m512 min, uint8_t *out) {
    __m128i b0, b1;
    level_bytes(x0, x1, id, min, true, 0.5f, 128, &b0, &b1);
    pack_five_bits(b0, b1, out);
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
 * quantizer with the AVX-512 group searches) and quantize_T_from_f16. */
#define LEGACY_QUANTIZERS(t)                                                                          \
    AVX512 static void quantize_##t(const float *src, void *dst, int64_t nrows, int64_t n_per_row,    \
                                    const float *imatrix) {                                           \
        if (imatrix != NULL) {                                                                        \
            gk_quantize_##t##_with(&gk_searches_avx512, src, dst, nrows, n_per_row, imatrix);         \
            return;                                                                                   \
        }                                                                                             \
        quantize_blocks(&t##_kind, src, false, dst, nrows * n_per_row / QK);                          \
    }                                                                                                 \
    AVX512 static void quantize_##t##_from_f16(const uint16_t *src, void *dst, int64_t nrows,         \
                                               int64_t n_per_row) {                                   \
        quantize_blocks(&t##_kind, src, true, dst, nrows * n_per_row / QK);                           \
    }
LEGACY_QUANTIZERS(q4_0)
LEGACY_QUANTIZERS(q4_1)
LEGACY_QUANTIZERS(q5_0)
LEGACY_QUANTIZERS(q5_1)

AVX512 static void quantize_q8_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                 const float *imatrix) {
    (void)imatrix;
    quantize_blocks(&q8_0_kind, src, false, dst, nrows * n_per_row / QK);
}

AVX512 static void quantize_q8_0_from_f16(const uint16_t *src, void *dst, int64_t nrows, int64_t n_per_row) {
    quantize_blocks(&q8_0_kind, src, true, dst, nrows * n_per_row / QK);
}

/** gk_register_legacy_avx512() : the Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 quantizers
 *  of table, from floats and straight from F16 (the dequantizers keep AVX2). */
void gk_register_legacy_avx512(gk_type_info *table) {
    table[GK_TYPE_Q8_0].quantize = quantize_q8_0;
    table[GK_TYPE_Q8_0].quantize_from_f16 = quantize_q8_0_from_f16;
    table[GK_TYPE_Q4_0].quantize = quantize_q4_0;
    table[GK_TYPE_Q4_0].quantize_from_f16 = quantize_q4_0_from_f16;
    table[GK_TYPE_Q4_1].quantize = quantize_q4_1;
    table[GK_TYPE_Q4_1].quantize_from_f16 = quantize_q4_1_from_f16;
    table[GK_TYPE_Q5_0].quantize = quantize_q5_0;
    table[GK_TYPE_Q5_0].quantize_from_f16 = quantize_q5_0_from_f16;
    table[GK_TYPE_Q5_1].quantize = quantize_q5_1;
    table[GK_TYPE_Q5_1].quantize_from_f16 = quantize_q5_1_from_f16;
}
