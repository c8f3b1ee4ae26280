/*
 * kquants_dequant_avx2.c - Q2_K..Q6_K dequantizers with AVX2 (the AVX-512
 * level keeps them; the quantizers are kquants_lanes.h's).
 *
 * Each sub-block's scale and offset are computed as kquants.c computes them
 * (scalar float products); the per-value expression is the scalar one lane by
 * lane (int to float exact, one multiply, one subtract), so the floats are
 * bit-identical.
 */
#include <immintrin.h>
#include <string.h>

#include "types/kernels.h"
#include "types/kquants_scales.h"

#define AVX2 __attribute__((target("avx2,f16c")))

/* y[0..7] = a * q - b (q eight int32). */
AVX2 static inline void store_affine(float *y, __m256i q, float a, float b) {
    _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(_mm256_set1_ps(a), _mm256_cvtepi32_ps(q)),
                                      _mm256_set1_ps(b)));
}

/* y[0..7] = a * q. */
AVX2 static inline void store_scaled(float *y, __m256i q, float a) {
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_set1_ps(a), _mm256_cvtepi32_ps(q)));
}

/* Eight bytes at p as int32, shifted right by shift and masked. */
AVX2 static inline __m256i bytes8(const uint8_t *p, int shift, int mask) {
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
    return _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(mask));
}

/* Scales and offsets of sub-blocks is and is + 1 of a Q4_K/Q5_K block, as kquants.c. */
static inline void scale_pair(const uint8_t *scales, int is, float d, float min, float *d1,
                              float *m1, float *d2, float *m2) {
    uint8_t sc, m;
    unpack_scale_min_k4(is + 0, scales, &sc, &m);
    *d1 = d * sc;
    *m1 = min * m;
    unpack_scale_min_k4(is + 1, scales, &sc, &m);
    *d2 = d * sc;
    *m2 = min * m;
}

AVX2 static void dequantize_q4_K(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_K; i++, in += sizeof(block_q4_K)) {
        block_q4_K b;
        memcpy(&b, in, sizeof b);
        const float d = gk_fp16_to_fp32(b.d), min = gk_fp16_to_fp32(b.dmin);
        const uint8_t *q = b.qs;
        for (int is = 0; is < QK_K / 32; is += 2, q += 32) {
            float d1, m1, d2, m2;
            scale_pair(b.scales, is, d, min, &d1, &m1, &d2, &m2);
            for (int l = 0; l < 32; l += 8) {
                store_affine(dst + l, bytes8(q + l, 0, 0xF), d1, m1);
                store_affine(dst + 32 + l, bytes8(q + l, 4, 0xF), d2, m2);
            }
            dst += 64;
        }
    }
}

AVX2 static void dequantize_q5_K(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_K; i++, in += sizeof(block_q5_K)) {
        block_q5_K b;
        memcpy(&b, in, sizeof b);
        const float d = gk_fp16_to_fp32(b.d), min = gk_fp16_to_fp32(b.dmin);
        const uint8_t *ql = b.qs;
        int hbit = 0;
        for (int is = 0; is < QK_K / 32; is += 2, ql += 32, hbit += 2) {
            float d1, m1, d2, m2;
            scale_pair(b.scales, is, d, min, &d1, &m1, &d2, &m2);
            for (int l = 0; l < 32; l += 8) {
                const __m256i h1 = _mm256_slli_epi32(bytes8(b.qh + l, hbit, 1), 4);
                const __m256i h2 = _mm256_slli_epi32(bytes8(b.qh + l, hbit + 1, 1), 4);
                store_affine(dst + l, _mm256_add_epi32(bytes8(ql + l, 0, 0xF), h1), d1, m1);
                store_affine(dst + 32 + l, _mm256_add_epi32(bytes8(ql + l, 4, 0xF), h2), d2, m2);
            }
            dst += 64;
        }
    }
}

AVX2 static void dequantize_q6_K(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    const __m256i off = _mm256_set1_epi32(32);
    for (int64_t i = 0; i < n / QK_K; i++, in += sizeof(block_q6_K)) {
        block_q6_K b;
        memcpy(&b, in, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        const uint8_t *ql = b.ql, *qh = b.qh;
        const int8_t *sc = b.scales;
        for (int half = 0; half < 2; half++, ql += 64, qh += 32, sc += 8, dst += 128) {
            for (int l = 0; l < 32; l += 8) {
                const int is = l / 16;
                const __m256i q1 = _mm256_sub_epi32(
                    _mm256_or_si256(bytes8(ql + l, 0, 0xF), _mm256_slli_epi32(bytes8(qh + l, 0, 3), 4)), off);
                const __m256i q2 = _mm256_sub_epi32(
                    _mm256_or_si256(bytes8(ql + l + 32, 0, 0xF), _mm256_slli_epi32(bytes8(qh + l, 2, 3), 4)), off);
                const __m256i q3 = _mm256_sub_epi32(
                    _mm256_or_si256(bytes8(ql + l, 4, 0xF), _mm256_slli_epi32(bytes8(qh + l, 4, 3), 4)), off);
                const __m256i q4 = _mm256_sub_epi32(
                    _mm256_or_si256(bytes8(ql + l + 32, 4, 0xF), _mm256_slli_epi32(bytes8(qh + l, 6, 3), 4)), off);
                store_scaled(dst + l, q1, d * sc[is + 0]);
                store_scaled(dst + l + 32, q2, d * sc[is + 2]);
                store_scaled(dst + l + 64, q3, d * sc[is + 4]);
                store_scaled(dst + l + 96, q4, d * sc[is + 6]);
            }
        }
    }
}

AVX2 static void dequantize_q3_K(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_K; i++, in += sizeof(block_q3_K)) {
        block_q3_K b;
        memcpy(&b, in, sizeof b);
        const float d_all = gk_fp16_to_fp32(b.d);
        const uint8_t *q = b.qs;
        int is = 0, mbit = 0;
        for (int n128 = 0; n128 < 2; n128++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, mbit++) {
                for (int half = 0; half < 2; half++) {
                    const float dl = d_all * unpack_scale_q3(b.scales, is++);
                    for (int l = 16 * half; l < 16 * half + 16; l += 8, dst += 8) {
                        /* minus 4 where the high bit is clear */
                        const __m256i lo = bytes8(q + l, shift, 3);
                        const __m256i clear = _mm256_xor_si256(bytes8(b.hmask + l, mbit, 1), _mm256_set1_epi32(1));
                        store_scaled(dst, _mm256_sub_epi32(lo, _mm256_slli_epi32(clear, 2)), dl);
                    }
                }
            }
        }
    }
}

AVX2 static void dequantize_q2_K(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_K; i++, in += sizeof(block_q2_K)) {
        block_q2_K b;
        memcpy(&b, in, sizeof b);
        const float d = gk_fp16_to_fp32(b.d), min = gk_fp16_to_fp32(b.dmin);
        const uint8_t *q = b.qs;
        int is = 0;
        for (int n128 = 0; n128 < 2; n128++, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; half++) {
                    const uint8_t sc = b.scales[is++];
                    const float dl = d * (sc & 0xF), ml = min * (sc >> 4);
                    for (int l = 0; l < 16; l += 8, dst += 8)
                        store_affine(dst, bytes8(q + l + 16 * half, shift, 3), dl, ml);
                }
            }
        }
    }
}

/** gk_register_kquants_dequant_avx2() : the Q2_K..Q6_K dequantizers of table. */
void gk_register_kquants_dequant_avx2(gk_type_info *table) {
    table[GK_TYPE_Q2_K].dequantize = dequantize_q2_K;
    table[GK_TYPE_Q3_K].dequantize = dequantize_q3_K;
    table[GK_TYPE_Q4_K].dequantize = dequantize_q4_K;
    table[GK_TYPE_Q5_K].dequantize = dequantize_q5_K;
    table[GK_TYPE_Q6_K].dequantize = dequantize_q6_K;
}
