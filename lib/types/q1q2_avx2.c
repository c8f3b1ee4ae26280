/*
 * q1q2_avx2.c - the Q1_0 and Q2_0 quantizers with AVX2.
 *
 * Bit-identical to q1q2.c. Q1_0's scale is the mean of |x| summed in element
 * order, so eight blocks are summed side by side, one block per lane (element
 * j of each of the eight gathered at a time), each lane adding in the scalar's
 * order; a row's last blocks (fewer than eight) go through the scalar kernel.
 * Its bits are the sign test x >= 0 of eight consecutive values, whose lane
 * mask is one byte of qs. Q2_0's scale is the largest |x| (order-free; a NaN
 * lane keeps the running maximum, as the scalar comparison skips NaN), and
 * each value's code the scalar's comparisons of x * id with -0.5, 0.5 and 1.5,
 * code 0 where the product is NaN or not below 2^31 in magnitude.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "types/blocks.h"
#include "types/kernels.h"

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline __m256 absv(__m256 x) {
    return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}

/* ---- Q1_0: 18-byte blocks of 128 ------------------------------------------------------ */

/* The sign bits of one block of 128 values into qs[16]. */
AVX2 static inline void q1_bits(const float *x, uint8_t *qs) {
    for (int k = 0; k < 16; k++)
        qs[k] = (uint8_t)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + 8 * k), _mm256_setzero_ps(), _CMP_GE_OQ));
}

AVX2 static void quantize_q1_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix) {
    uint8_t *out = dst;
    const int64_t nb = nrows * n_per_row / QK1_0;
    const __m256i lane_offsets = _mm256_setr_epi32(0, 128, 256, 384, 512, 640, 768, 896);
    int64_t i = 0;
    for (; i + 8 <= nb; i += 8) {
        const float *x = src + i * 128;
        __m256 sum = _mm256_setzero_ps();
        for (int j = 0; j < 128; j++)
            sum = _mm256_add_ps(sum, absv(_mm256_i32gather_ps(x + j, lane_offsets, 4)));
        const __m256 d = _mm256_div_ps(sum, _mm256_set1_ps(128.0f));
        float dv[8];
        _mm256_storeu_ps(dv, d);
        for (int b = 0; b < 8; b++) {
            uint8_t *o = out + (i + b) * 18;
            const uint16_t h = gk_fp32_to_fp16(dv[b]);
            memcpy(o, &h, 2);
            q1_bits(x + b * 128, o + 2);
        }
    }
    if (i < nb) gk_quantize_q1_0(src + i * 128, out + i * 18, 1, (nb - i) * 128, imatrix);
}

/* ---- Q2_0: 18-byte blocks of 64 ------------------------------------------------------- */

/* Codes of eight values x * id, shifted to their place in a byte (0, 2, 4, 6 twice). */
AVX2 static inline __m256i q2_codes8(__m256 x, __m256 id) {
    const __m256 r = _mm256_mul_ps(x, id);
    const __m256 valid = _mm256_cmp_ps(absv(r), _mm256_set1_ps(2147483648.0f), _CMP_LT_OQ);
    const __m256i c0 = _mm256_castps_si256(_mm256_cmp_ps(r, _mm256_set1_ps(-0.5f), _CMP_GT_OQ));
    const __m256i c1 = _mm256_castps_si256(_mm256_cmp_ps(r, _mm256_set1_ps(0.5f), _CMP_GE_OQ));
    const __m256i c2 = _mm256_castps_si256(_mm256_cmp_ps(r, _mm256_set1_ps(1.5f), _CMP_GE_OQ));
    __m256i code = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_add_epi32(_mm256_add_epi32(c0, c1), c2));
    code = _mm256_and_si256(code, _mm256_castps_si256(valid));
    return _mm256_sllv_epi32(code, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
}

AVX2 static void quantize_q2_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK2_0;
    for (int64_t i = 0; i < nb; i++, out += Q2_0_BYTES, x += QK2_0) {
        __m256 v[8];
        __m256 m = _mm256_setzero_ps();
        for (int k = 0; k < 8; k++) {
            v[k] = _mm256_loadu_ps(x + 8 * k);
            m = _mm256_max_ps(absv(v[k]), m);
        }
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
        const float amax = _mm_cvtss_f32(h);
        const float idf = amax > 0.0f ? 1.0f / amax : 0.0f;
        const uint16_t d = gk_fp32_to_fp16(amax);
        memcpy(out, &d, 2);
        const __m256 id = _mm256_set1_ps(idf);
        /* four codes per byte: the shifted codes of a byte's lanes summed (no bits overlap) */
        __m256i s[8];
        for (int k = 0; k < 8; k++) s[k] = q2_codes8(v[k], id);
        for (int half = 0; half < 2; half++) {
            const __m256i *t = s + 4 * half;
            const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(t[0], t[1]), _mm256_hadd_epi32(t[2], t[3]));
            /* a: bytes 0, 2, 4, 6 of these 32 values in the low lane, 1, 3, 5, 7 in the high */
            const __m256i ordered = _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(ordered), _mm256_extracti128_si256(ordered, 1));
            _mm_storel_epi64((__m128i *)(out + 2 + 8 * half), _mm_packus_epi16(w, w));
        }
    }
}

/** gk_register_q1q2_avx2() : the Q1_0 and Q2_0 quantizers of table. */
void gk_register_q1q2_avx2(gk_type_info *table) {
    table[GK_TYPE_Q1_0].quantize = quantize_q1_0;
    table[GK_TYPE_Q2_0].quantize = quantize_q2_0;
}
