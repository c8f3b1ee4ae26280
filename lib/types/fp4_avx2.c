/*
 * fp4_avx2.c - the NVFP4 and MXFP4 quantizers with AVX2.
 *
 * Bit-identical to nvfp4.c and mxfp4.c. The scale of each block (MXFP4) or
 * sub-block (NVFP4) is the scalar code's, from the largest |x| found eight
 * lanes at a time (max with the running maximum as the second operand, so a
 * NaN lane keeps it, as the scalar "amax < |x|" skips NaN; the maximum of
 * magnitudes does not depend on order). Each value's code is the one-sign
 * search of fp4.h (gk_fp4_nearest_in), done for eight values at once: the same
 * subtraction, absolute value and ordered less-than per candidate, the first
 * strictly smaller error winning, then the sign bit for negative values with a
 * nonzero code. The importance matrix is unused, as in the scalar kernels.
 */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "types/blocks.h"
#include "types/fp4.h"
#include "types/kernels.h"

#define AVX2 __attribute__((target("avx2")))

AVX2 static inline __m256 absv(__m256 x) {
    return _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}

/* Largest |x| of n values (a multiple of 8), NaN skipped. */
AVX2 static inline float abs_max(const float *x, int n) {
    __m256 m = _mm256_setzero_ps();
    for (int j = 0; j < n; j += 8) m = _mm256_max_ps(absv(_mm256_loadu_ps(x + j)), m);
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

/* Codes of eight values from the products p (gk_fp4_nearest_in lane by lane). */
AVX2 static inline __m256i codes8(__m256 x, const __m256 p[8]) {
    const __m256 a = absv(x);
    __m256i best = _mm256_setzero_si256();
    __m256 best_err = absv(_mm256_sub_ps(p[0], a));
    for (int k = 1; k < 8; k++) {
        const __m256 err = absv(_mm256_sub_ps(p[k], a));
        const __m256 better = _mm256_cmp_ps(err, best_err, _CMP_LT_OQ);
        best = _mm256_blendv_epi8(best, _mm256_set1_epi32(k), _mm256_castps_si256(better));
        best_err = _mm256_blendv_ps(best_err, err, better);
    }
    const __m256i neg = _mm256_castps_si256(_mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
    const __m256i nonzero = _mm256_xor_si256(_mm256_cmpeq_epi32(best, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
    return _mm256_or_si256(best, _mm256_and_si256(_mm256_and_si256(neg, nonzero), _mm256_set1_epi32(8)));
}

/* Eight bytes lo | hi << 4 from two vectors of codes. */
AVX2 static inline void store_nibbles(uint8_t *q, __m256i lo, __m256i hi) {
    const __m256i v = _mm256_or_si256(lo, _mm256_slli_epi32(hi, 4));
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)q, _mm_packus_epi16(w, w));
}

AVX2 static inline void broadcast_products(float d, __m256 p[8]) {
    float s[8];
    gk_fp4_products(d, s);
    for (int k = 0; k < 8; k++) p[k] = _mm256_set1_ps(s[k]);
}

/* ---- NVFP4: 36-byte blocks, four sub-blocks of 16 with a UE4M3 scale each ------------- */

AVX2 static void quantize_nvfp4(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK_NVFP4;
    for (int64_t i = 0; i < nb; i++, out += NVFP4_BYTES) {
        for (int s = 0; s < 4; s++, x += 16) {
            const uint8_t u = gk_ue4m3_of(abs_max(x, 16) / 6.0f);
            out[s] = u;
            __m256 p[8];
            broadcast_products(gk_ue4m3_half(u), p);
            store_nibbles(out + 4 + 8 * s, codes8(_mm256_loadu_ps(x), p), codes8(_mm256_loadu_ps(x + 8), p));
        }
    }
}

/* ---- MXFP4: 17-byte blocks of 32 with an E8M0 scale ------------------------------------ */

AVX2 static void quantize_mxfp4(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK_MXFP4;
    for (int64_t i = 0; i < nb; i++, out += MXFP4_BYTES, x += QK_MXFP4) {
        const float amax = abs_max(x, 32);
        const uint8_t e = gk_mxfp4_e(amax);
        out[0] = e;
        __m256 p[8];
        broadcast_products(gk_e8m0_half(e), p);
        store_nibbles(out + 1, codes8(_mm256_loadu_ps(x), p), codes8(_mm256_loadu_ps(x + 16), p));
        store_nibbles(out + 9, codes8(_mm256_loadu_ps(x + 8), p), codes8(_mm256_loadu_ps(x + 24), p));
    }
}

/** gk_register_fp4_avx2() : the NVFP4 and MXFP4 quantizers of table. */
void gk_register_fp4_avx2(gk_type_info *table) {
    table[GK_TYPE_NVFP4].quantize = quantize_nvfp4;
    table[GK_TYPE_MXFP4].quantize = quantize_mxfp4;
}
