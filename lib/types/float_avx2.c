/*
 * float_avx2.c - F16 and BF16 conversions with AVX2 and F16C.
 *
 * Eight values at a time, bit-identical to fp16.h: the F16C conversions round
 * to nearest even like gk_fp32_to_fp16 and widen exactly; only NaN differs
 * (F16C keeps the payload, ggml writes 0x7E00 with the sign), so NaN lanes are
 * patched. BF16 is integer work on the bit patterns. Tails go through fp16.h.
 */
#include <immintrin.h>
#include <string.h>

#include "types/kernels.h"

#define AVX2 __attribute__((target("avx2,f16c")))

/* Eight floats to binary16, NaN as sign | 0x7E00. */
AVX2 static inline __m128i f32x8_to_f16(__m256 x) {
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i absb = _mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i nan = _mm256_cmpgt_epi32(absb, _mm256_set1_epi32(0x7F800000));
    const __m256i qnan = _mm256_or_si256(_mm256_srli_epi32(_mm256_andnot_si256(absb, bits), 16),
                                         _mm256_set1_epi32(0x7E00));
    __m256i h = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    h = _mm256_blendv_epi8(h, qnan, nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

AVX2 static void quantize_f16(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                              const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const int64_t n = nrows * n_per_row;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + 2 * i), f32x8_to_f16(_mm256_loadu_ps(src + i)));
    for (; i < n; i++) {
        uint16_t h = gk_fp32_to_fp16(src[i]);
        memcpy(out + 2 * i, &h, 2);
    }
}

AVX2 static void dequantize_f16(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(in + 2 * i))));
    for (; i < n; i++) {
        uint16_t h;
        memcpy(&h, in + 2 * i, 2);
        dst[i] = gk_fp16_to_fp32(h);
    }
}

/* Eight floats to bfloat16 in the low halves of 32-bit lanes (gk_fp32_to_bf16). */
AVX2 static inline __m256i f32x8_to_bf16(__m256i u) {
    const __m256i absb = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
    const __m256i nan = _mm256_cmpgt_epi32(absb, _mm256_set1_epi32(0x7F800000));
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), odd)), 16);
    const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
    return _mm256_blendv_epi8(rounded, quiet, nan);
}

AVX2 static void quantize_bf16(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const int64_t n = nrows * n_per_row;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i a = f32x8_to_bf16(_mm256_loadu_si256((const __m256i *)(src + i)));
        const __m256i b = f32x8_to_bf16(_mm256_loadu_si256((const __m256i *)(src + i + 8)));
        /* packus works per 128-bit lane: restore element order afterwards */
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        _mm256_storeu_si256((__m256i *)(out + 2 * i), p);
    }
    for (; i < n; i++) {
        uint16_t h = gk_fp32_to_bf16(src[i]);
        memcpy(out + 2 * i, &h, 2);
    }
}

AVX2 static void dequantize_bf16(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(in + 2 * i)));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_slli_epi32(h, 16));
    }
    for (; i < n; i++) {
        uint16_t h;
        memcpy(&h, in + 2 * i, 2);
        dst[i] = gk_bf16_to_fp32(h);
    }
}

/** gk_register_float_avx2() : F16 and BF16 conversions of table. */
void gk_register_float_avx2(gk_type_info *table) {
    table[GK_TYPE_F16].quantize = quantize_f16;
    table[GK_TYPE_F16].dequantize = dequantize_f16;
    table[GK_TYPE_BF16].quantize = quantize_bf16;
    table[GK_TYPE_BF16].dequantize = dequantize_bf16;
}
