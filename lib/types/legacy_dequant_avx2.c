/*
 * legacy_dequant_avx2.c - the legacy dequantizers (Q8_0, Q4_0, Q4_1, Q5_0,
 * Q5_1) with AVX2; the AVX-512 level keeps them (the quantizers are
 * legacy_lanes.h's).
 *
 * Each value is the scalar expression lane by lane (int to float exact, one
 * multiply, and one add for the types with a minimum), so the floats are
 * bit-identical to legacy.c's. Where the scale and the minimum are both NaN,
 * both take the product's NaN (gk_add_nan_first), whichever way round a
 * compiler puts the add's operands.
 */
#include <immintrin.h>
#include <string.h>

#include "types/blocks.h"
#include "types/kernels.h"

#define AVX2 __attribute__((target("avx2,f16c")))
#define QK QK8_0 /* values per block of every legacy type */

/* p + m, lane by lane as gk_add_nan_first: p's NaN where both are NaN. m_nan
 * says whether the block's minimum is NaN (else the plain add). */
AVX2 static inline __m256 add_min(__m256 p, __m256 m, int m_nan) {
    const __m256 sum = _mm256_add_ps(p, m);
    return m_nan ? _mm256_blendv_ps(sum, _mm256_add_ps(p, p), _mm256_cmp_ps(p, p, _CMP_UNORD_Q)) : sum;
}

AVX2 static inline float load_half(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return gk_fp16_to_fp32(h);
}

AVX2 static void dequantize_q8_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += Q8_0_BYTES, dst += QK) {
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
    for (int64_t i = 0; i < n / QK; i++, in += Q4_0_BYTES, dst += QK) {
        const __m256 d = _mm256_set1_ps(load_half(in));
        __m256i q[4];
        nibbles(in + 2, 8, q);
        for (int k = 0; k < 4; k++) _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(q[k]), d));
    }
}

AVX2 static void dequantize_q4_1(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += Q4_1_BYTES, dst += QK) {
        const float m1 = load_half(in + 2);
        const __m256 d = _mm256_set1_ps(load_half(in)), m = _mm256_set1_ps(m1);
        __m256i q[4];
        nibbles(in + 4, 0, q);
        for (int k = 0; k < 4; k++)
            _mm256_storeu_ps(dst + 8 * k, add_min(_mm256_mul_ps(_mm256_cvtepi32_ps(q[k]), d), m, m1 != m1));
    }
}

AVX2 static void dequantize_q5_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, in += Q5_0_BYTES, dst += QK) {
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
    for (int64_t i = 0; i < n / QK; i++, in += Q5_1_BYTES, dst += QK) {
        const float m1 = load_half(in + 2);
        const __m256 d = _mm256_set1_ps(load_half(in)), m = _mm256_set1_ps(m1);
        __m256i q[4], h[4];
        nibbles(in + 8, 0, q);
        fifth_bits(in + 4, h);
        for (int k = 0; k < 4; k++) {
            const __m256 l = _mm256_cvtepi32_ps(_mm256_or_si256(q[k], h[k]));
            _mm256_storeu_ps(dst + 8 * k, add_min(_mm256_mul_ps(l, d), m, m1 != m1));
        }
    }
}

/** gk_register_legacy_dequant_avx2() : the Q8_0, Q4_0, Q4_1, Q5_0 and Q5_1
 *  dequantizers of table. */
void gk_register_legacy_dequant_avx2(gk_type_info *table) {
    table[GK_TYPE_Q8_0].dequantize = dequantize_q8_0;
    table[GK_TYPE_Q4_0].dequantize = dequantize_q4_0;
    table[GK_TYPE_Q4_1].dequantize = dequantize_q4_1;
    table[GK_TYPE_Q5_0].dequantize = dequantize_q5_0;
    table[GK_TYPE_Q5_1].dequantize = dequantize_q5_1;
}
