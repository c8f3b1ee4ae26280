/*
 * legacy_lanes.h - the legacy quantizers (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), from
 * floats and straight from binary16 rows, written once for any lane count.
 *
 * Bit-identical to legacy.c. The quantizers take LANES blocks at a time: each
 * block's extremes are order-free (the largest magnitude; the signed value at
 * its first index for Q4_0 and Q5_0, found from the block's largest and
 * smallest values; the minimum and maximum for Q4_1 and Q5_1, where a zero
 * extreme, whose sign the scalar's first-of-equals decides, sends the block to
 * the scalar kernel), reduced for the LANES blocks in one register; d and id by
 * true divisions there, d to binary16 by F16C (round to nearest even, as
 * gk_fp32_to_fp16 does for every finite value); each value's level is the
 * scalar expression lane by lane, converted as the scalar code compiles it
 * (truncation to 32 bits, then the low byte). A block holding NaN or infinity
 * and the blocks past the last whole group go through the scalar kernel.
 * Binary16 rows (quantize_from_f16) are widened in registers as the F16
 * dequantizer would, so no F32 copy of them is made. With an importance matrix,
 * Q4_0, Q4_1, Q5_0 and Q5_1 are legacy.c's weighted quantizers with the level's
 * group searches.
 *
 * Included by legacy_avx2.c (LANES 8) and legacy_avx512.c (LANES 16) after
 * vec_avx2.h or vec_avx512.h (LANES, LANE_TARGET, the lane types vf and vmask,
 * the V_ and M_ operations) and their own definitions of SEARCHES (their
 * gk_searches table), REGISTER (the registration function's name), V_PAIR0(a,
 * b, lo, hi) to V_PAIRk, k = log2(LANES) - 1 (level k of the reduction tree: of
 * the runs of LANES >> (k + 1) lanes, the even ones of a and b interleaved into
 * lo, the odd ones into hi), V_LANE_ORDER(r) (the permute that puts the tree's
 * result for block b in lane b) and V_BYTES(q) (the low bytes of the 32-bit
 * truncations of the 32 lanes of q[0..32/LANES-1], in order, as 32 bytes).
 */
#include <immintrin.h>
#include <string.h>

#include "types/blocks.h"
#include "types/kernels.h"
#include "types/quant_util.h"

#define QK QK8_0 /* values per block of every legacy type */
#define VPB (QK / LANES) /* vectors per block */

typedef void (*scalar_quantizer)(const float *, void *, int64_t, int64_t, const float *);

LANE_TARGET static inline vf absv(vf x) { return V_ABS(x); }

/* Whether any of a block's 32 values is NaN or infinite. */
LANE_TARGET static inline bool nonfinite_block(const vf *v) {
    vmask m = V_EXPONENT_FULL(v[0]);
    for (int k = 1; k < VPB; k++) m = M_OR(m, V_EXPONENT_FULL(v[k]));
    return M_BITS(m) != 0;
}

/* roundf (half away from zero) of each lane, exactly: truncate, then step away
 * from zero when the dropped fraction is at least one half. */
LANE_TARGET static inline vf round_away(vf v) {
    const vf t = V_TRUNC(v);
    const vmask up = V_CMP(absv(V_SUB(v, t)), V_SET1(0.5f), _CMP_GE_OQ);
    const vf step = V_OR(V_SET1(1.0f), V_AND(v, V_SET1(-0.0f)));
    return V_ADD_WHERE(up, t, step);
}

/* The 32 values of block i of src: floats, or binary16 widened (exact, as the
 * F16 dequantizer gives them). */
LANE_TARGET static inline __attribute__((always_inline)) void load_block(const void *src, int64_t i, bool f16,
                                                                         vf v[VPB]) {
    for (int k = 0; k < VPB; k++) {
        const int64_t at = i * QK + LANES * k;
        v[k] = f16 ? V_LOAD_HALF((const uint16_t *)src + at) : V_LOAD((const float *)src + at);
    }
}

/* One block through the scalar quantizer q (its values as loaded). */
LANE_TARGET static void scalar_block(scalar_quantizer q, const vf v[VPB], uint8_t *out) {
    float x[QK];
    for (int k = 0; k < VPB; k++) V_STORE(x + LANES * k, v[k]);
    q(x, out, 1, QK, NULL);
}

/* What differs between the types: a block's partial extremes (two vectors whose
 * lanes hold what the block's extremes are taken over), from those partials the
 * LANES blocks' values d is taken from (one per lane; with their minima in
 * *mins for the types that store one, and in *redo (a bit per block) the blocks
 * the scalar kernel must do), the divisor that makes them the scales, whether
 * the block stores its minimum after its scale, a block's level bytes (given its
 * values, the inverse scale and its minimum), and the scalar kernel for the
 * blocks left to it. */
typedef struct block_kind {
    size_t block_bytes;
    float divisor;
    bool with_min;
    void (*partials)(const vf *v, vf *hi, vf *lo);
    vf (*extremes)(const vf *hi, const vf *lo, const void *src, bool f16, int64_t first, vf *mins,
                   uint32_t *redo);
    void (*levels)(const vf *v, vf id, vf min, uint8_t *qs);
    scalar_quantizer scalar;
} block_kind;

/* Level level of the reduction tree for vectors a and b (V_PAIRk). */
LANE_TARGET static inline __attribute__((always_inline)) void pair(vf a, vf b, int level, vf *lo, vf *hi) {
    switch (level) {
    case 0: V_PAIR0(a, b, *lo, *hi); break;
    case 1: V_PAIR1(a, b, *lo, *hi); break;
    case 2: V_PAIR2(a, b, *lo, *hi); break;
#ifdef V_PAIR3
    case 3: V_PAIR3(a, b, *lo, *hi); break;
#endif
    }
}

/* Lane b of the result: the largest (max) or smallest (!max) of the LANES lanes
 * of v[b]. Each level of the tree pairs the vectors and keeps half the lanes of
 * each (pair), combining lanes of one v[b] only (so a NaN stays in its block's
 * lane); one permute then puts block b in lane b. Max and min of numbers do not
 * depend on the order they are taken in. */
LANE_TARGET static inline __attribute__((always_inline)) vf lanes_reduce(const vf *v, bool max) {
    vf r[LANES];
    memcpy(r, v, sizeof r);
    int level = 0;
#pragma GCC unroll 8
    for (int n = LANES / 2; n >= 1; n /= 2, level++) {
#pragma GCC unroll 8
        for (int i = 0; i < n; i++) {
            vf lo, hi;
            pair(r[2 * i], r[2 * i + 1], level, &lo, &hi);
            r[i] = max ? V_MAX(lo, hi) : V_MIN(lo, hi);
        }
    }
    return V_LANE_ORDER(r[0]);
}

/* nb blocks of src (floats, or binary16 when f16) to out, LANES at a time: the
 * blocks' extremes in one register, then their scales d = extreme / divisor
 * and id = 1 / d (0 where d is 0), d (and the minimum) to binary16, the levels
 * of each block. A block holding NaN or infinity, one the kind hands back, and
 * the blocks past the last whole group go through the scalar kernel. Inlined
 * per kind and source, so the calls through the kind are direct. */
LANE_TARGET static inline __attribute__((always_inline)) void quantize_blocks(const block_kind *k, const void *src,
                                                                              bool f16, uint8_t *out, int64_t nb) {
    const size_t levels_at = k->with_min ? 4 : 2;
    int64_t i = 0;
    for (; i + LANES <= nb; i += LANES) {
        uint8_t *o = out + (size_t)i * k->block_bytes;
        vf hi[LANES], lo[LANES];
        uint32_t bad = 0;
        for (int b = 0; b < LANES; b++) {
            vf v[VPB];
            load_block(src, i + b, f16, v);
            if (nonfinite_block(v)) bad |= 1u << b;
            k->partials(v, &hi[b], &lo[b]);
        }
        vf mins = V_ZERO();
        const vf d = V_DIV(k->extremes(hi, lo, src, f16, i, &mins, &bad), V_SET1(k->divisor));
        const vmask nonzero = V_CMP(d, V_ZERO(), _CMP_NEQ_UQ);
        float id[LANES], mn[LANES];
        uint16_t h[LANES], hm[LANES];
        V_STORE(id, V_MASKZ(nonzero, V_DIV(V_SET1(1.0f), d)));
        V_STORE_HALF(h, d);
        if (k->with_min) {
            V_STORE(mn, mins);
            V_STORE_HALF(hm, mins);
        }
        for (int b = 0; b < LANES; b++) {
            vf v[VPB];
            load_block(src, i + b, f16, v);
            uint8_t *ob = o + b * k->block_bytes;
            memcpy(ob, &h[b], 2);
            if (k->with_min) memcpy(ob + 2, &hm[b], 2);
            k->levels(v, V_SET1(id[b]), k->with_min ? V_SET1(mn[b]) : V_ZERO(), ob + levels_at);
        }
        for (; bad; bad &= bad - 1) {
            const int b = __builtin_ctz(bad);
            vf v[VPB];
            load_block(src, i + b, f16, v);
            scalar_block(k->scalar, v, o + b * k->block_bytes);
        }
    }
    for (; i < nb; i++) {
        vf v[VPB];
        load_block(src, i, f16, v);
        scalar_block(k->scalar, v, out + (size_t)i * k->block_bytes);
    }
}

/* Q8_0: the largest magnitude. */
LANE_TARGET static inline void q8_0_partials(const vf *v, vf *hi, vf *lo) {
    (void)lo;
    vf m = absv(v[0]);
    for (int k = 1; k < VPB; k++) m = V_MAX(m, absv(v[k]));
    *hi = m;
}

LANE_TARGET static inline vf q8_0_extremes(const vf *hi, const vf *lo, const void *src, bool f16, int64_t first,
                                           vf *mins, uint32_t *redo) {
    (void)lo;
    (void)src;
    (void)f16;
    (void)first;
    (void)mins;
    (void)redo;
    return lanes_reduce(hi, true);
}

/* The 32 bytes of one Q8_0 block's levels: (int8_t) of roundf(x * id). */
LANE_TARGET static inline void q8_0_levels(const vf *v, vf id, vf min, uint8_t *qs) {
    (void)min;
    vf q[VPB];
    for (int k = 0; k < VPB; k++) q[k] = round_away(V_MUL(v[k], id));
    _mm256_storeu_si256((__m256i *)qs, V_BYTES(q));
}

/* Every other type starts from a block's largest and smallest value. */
LANE_TARGET static inline void minmax_partials(const vf *v, vf *hi, vf *lo) {
    vf h = v[0], l = v[0];
    for (int k = 1; k < VPB; k++) {
        h = V_MAX(h, v[k]);
        l = V_MIN(l, v[k]);
    }
    *hi = h;
    *lo = l;
}

/* Q4_0 and Q5_0: the signed value of largest magnitude, the first one on ties
 * (0 when every value is zero). From a block's largest value hi and smallest
 * lo: hi when hi > -lo (no value is -hi), lo when -lo > hi; only a block holding
 * both +m and -m as its largest magnitude m looks for the first of them. */
LANE_TARGET static float first_of_magnitude(const void *src, bool f16, int64_t b, float m) {
    vf v[VPB];
    load_block(src, b, f16, v);
    float x[QK];
    uint32_t hit = 0;
    for (int k = 0; k < VPB; k++) {
        V_STORE(x + LANES * k, v[k]);
        hit |= M_BITS(V_CMP(absv(v[k]), V_SET1(m), _CMP_EQ_OQ)) << (LANES * k);
    }
    return x[__builtin_ctz(hit)];
}

LANE_TARGET static inline vf signed_extremes(const vf *hi, const vf *lo, const void *src, bool f16, int64_t first,
                                             vf *mins, uint32_t *redo) {
    (void)mins;
    (void)redo;
    const vf h = lanes_reduce(hi, true), l = lanes_reduce(lo, false);
    const vf neg_l = V_XOR(l, V_SET1(-0.0f)); /* exact: the sign bit flipped */
    const vmask take_hi = V_CMP(h, neg_l, _CMP_GT_OQ);
    const vmask take_lo = V_CMP(neg_l, h, _CMP_GT_OQ);
    vf e = V_SELECT(take_lo, l, V_MASKZ(take_hi, h));
    uint32_t tie = M_BITS(M_AND(V_CMP(h, neg_l, _CMP_EQ_OQ), V_CMP(h, V_ZERO(), _CMP_GT_OQ)));
    if (tie) {
        float ev[LANES], hv[LANES];
        V_STORE(ev, e);
        V_STORE(hv, h);
        for (; tie; tie &= tie - 1) {
            const int b = __builtin_ctz(tie);
            ev[b] = first_of_magnitude(src, f16, first + b, hv[b]);
        }
        e = V_LOAD(ev);
    }
    return e;
}

/* Q4_1 and Q5_1: max - min, the minimum in *mins. The scalar keeps the first of
 * equal values (strict comparisons), which only shows in the sign of a zero
 * extreme: a block whose largest or smallest value is zero goes to the scalar
 * kernel. */
LANE_TARGET static inline vf range_extremes(const vf *hi, const vf *lo, const void *src, bool f16, int64_t first,
                                            vf *mins, uint32_t *redo) {
    (void)src;
    (void)f16;
    (void)first;
    const vf h = lanes_reduce(hi, true), l = lanes_reduce(lo, false);
    *redo |= M_BITS(M_OR(V_CMP(h, V_ZERO(), _CMP_EQ_OQ), V_CMP(l, V_ZERO(), _CMP_EQ_OQ)));
    *mins = l;
    return V_SUB(h, l);
}

/* The 32 level bytes of a block: (v - min) * id + bias (the subtraction left
 * out where !with_min), the low bytes of their 32-bit truncations (as the scalar
 * code's conversions to a byte compile), capped at cap as signed bytes when
 * cap < 128, in element order. */
LANE_TARGET static inline __m256i level_bytes(const vf *v, vf id, vf min, bool with_min, float bias, int cap) {
    vf q[VPB];
    for (int k = 0; k < VPB; k++) q[k] = V_ADD(V_MUL(with_min ? V_SUB(v[k], min) : v[k], id), V_SET1(bias));
    const __m256i b = V_BYTES(q);
    return cap < 128 ? _mm256_min_epi8(b, _mm256_set1_epi8((char)cap)) : b;
}

/* 32 level bytes into qs as the 4-bit types store them: byte j is
 * b[j] | b[j + 16] << 4, b[j] unmasked as in the scalar code (a level is 0..15
 * there, but the expression keeps any bits it has). */
LANE_TARGET static inline void pack_nibbles(__m256i b, uint8_t *qs) {
    const __m128i hi = _mm_and_si128(_mm_slli_epi16(_mm256_extracti128_si256(b, 1), 4), _mm_set1_epi8((char)0xF0));
    _mm_storeu_si128((__m128i *)qs, _mm_or_si128(_mm256_castsi256_si128(b), hi));
}

/* Five-bit levels: bit 4 of each byte into the 32-bit mask at out (element j at
 * bit j, little-endian), the low nibbles two to a byte after it. */
LANE_TARGET static inline void pack_five_bits(__m256i b, uint8_t *out) {
    const uint32_t qh = (uint32_t)_mm256_movemask_epi8(_mm256_slli_epi16(b, 3));
    memcpy(out, &qh, 4);
    pack_nibbles(_mm256_and_si256(b, _mm256_set1_epi8(0x0F)), out + 4);
}

/* Q4_0: MIN(15, (int8_t)(x * id + 8.5)). */
LANE_TARGET static inline void q4_0_levels(const vf *v, vf id, vf min, uint8_t *qs) {
    pack_nibbles(level_bytes(v, id, min, false, 8.5f, 15), qs);
}

/* Q5_0: MIN(31, (int8_t)(x * id + 16.5)). */
LANE_TARGET static inline void q5_0_levels(const vf *v, vf id, vf min, uint8_t *out) {
    pack_five_bits(level_bytes(v, id, min, false, 16.5f, 31), out);
}

/* Q4_1: MIN(15, (int8_t)((x - min) * id + 0.5)). */
LANE_TARGET static inline void q4_1_levels(const vf *v, vf id, vf min, uint8_t *qs) {
    pack_nibbles(level_bytes(v, id, min, true, 0.5f, 15), qs);
}

/* Q5_1: (uint8_t)((x - min) * id + 0.5), no cap. */
LANE_TARGET static inline void q5_1_levels(const vf *v, vf id, vf min, uint8_t *out) {
    pack_five_bits(level_bytes(v, id, min, true, 0.5f, 128), out);
}

static const block_kind q8_0_kind = { Q8_0_BYTES, (1 << 7) - 1, false, q8_0_partials, q8_0_extremes, q8_0_levels,
                                      gk_quantize_q8_0 };
static const block_kind q4_0_kind = { Q4_0_BYTES, -8, false, minmax_partials, signed_extremes, q4_0_levels,
                                      gk_quantize_q4_0 };
static const block_kind q5_0_kind = { Q5_0_BYTES, -16, false, minmax_partials, signed_extremes, q5_0_levels,
                                      gk_quantize_q5_0 };
static const block_kind q4_1_kind = { Q4_1_BYTES, (1 << 4) - 1, true, minmax_partials, range_extremes, q4_1_levels,
                                      gk_quantize_q4_1 };
static const block_kind q5_1_kind = { Q5_1_BYTES, (1 << 5) - 1, true, minmax_partials, range_extremes, q5_1_levels,
                                      gk_quantize_q5_1 };

/* quantize_T (rows of floats; with an importance matrix, legacy.c's weighted
 * quantizer with the level's group searches) and quantize_T_from_f16. */
#define LEGACY_QUANTIZERS(t)                                                                          \
    LANE_TARGET static void quantize_##t(const float *src, void *dst, int64_t nrows, int64_t n_per_row, \
                                         const float *imatrix) {                                      \
        if (imatrix != NULL) {                                                                        \
            gk_quantize_##t##_with(&SEARCHES, src, dst, nrows, n_per_row, imatrix);                   \
            return;                                                                                   \
        }                                                                                             \
        quantize_blocks(&t##_kind, src, false, dst, nrows * n_per_row / QK);                          \
    }                                                                                                 \
    LANE_TARGET static void quantize_##t##_from_f16(const uint16_t *src, void *dst, int64_t nrows,    \
                                                    int64_t n_per_row) {                              \
        quantize_blocks(&t##_kind, src, true, dst, nrows * n_per_row / QK);                           \
    }
LEGACY_QUANTIZERS(q4_0)
LEGACY_QUANTIZERS(q4_1)
LEGACY_QUANTIZERS(q5_0)
LEGACY_QUANTIZERS(q5_1)

LANE_TARGET static void quantize_q8_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                      const float *imatrix) {
    (void)imatrix;
    quantize_blocks(&q8_0_kind, src, false, dst, nrows * n_per_row / QK);
}

LANE_TARGET static void quantize_q8_0_from_f16(const uint16_t *src, void *dst, int64_t nrows, int64_t n_per_row) {
    quantize_blocks(&q8_0_kind, src, true, dst, nrows * n_per_row / QK);
}

/** REGISTER() : the Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1 quantizers of table, from
 *  floats and straight from F16. */
void REGISTER(gk_type_info *table) {
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

#undef VPB
#undef QK
