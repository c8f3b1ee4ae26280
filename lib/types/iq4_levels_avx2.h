/*
 * iq4_levels_avx2.h - the sixteen IQ4 levels as AVX2 looks them up: by index
 * (the IQ4 dequantizers of iquants_avx2.c and the AVX2 quantizers, iq4_avx2.c)
 * and by counting the inner levels a value is not less than (the quantizers).
 */
#ifndef GK_TYPES_IQ4_LEVELS_AVX2_H
#define GK_TYPES_IQ4_LEVELS_AVX2_H

#include <immintrin.h>

#include "types/iq_grids.h"

/* The 16 IQ4 levels as floats, split in two halves for permutes, and broadcasts
 * of the 14 inner levels for the interval count. */
typedef struct {
    __m256 lo, hi;
    __m256 inner[14];
} iq4_levels;

__attribute__((target("avx2"))) static inline void iq4_levels_init(iq4_levels *c) {
    float v[16];
    for (int k = 0; k < 16; k++) v[k] = gk_kvalues_iq4nl[k];
    c->lo = _mm256_loadu_ps(v);
    c->hi = _mm256_loadu_ps(v + 8);
    for (int k = 1; k <= 14; k++) c->inner[k - 1] = _mm256_set1_ps(v[k]);
}

/* Level value at index idx (0..15) in every lane. */
__attribute__((target("avx2"))) static inline __m256 iq4_level_at(const iq4_levels *c, __m256i idx) {
    __m256 a = _mm256_permutevar8x32_ps(c->lo, idx);
    __m256 b = _mm256_permutevar8x32_ps(c->hi, idx);
    return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(_mm256_slli_epi32(idx, 28)));
}

/* The count of inner levels k = 1..14 with x >= level[k] in every lane, where
 * iquants.c's binary search over the levels ends; counting "not less than"
 * makes NaN count 14, where the binary search also ends. */
__attribute__((target("avx2"))) static inline __m256i iq4_count(const iq4_levels *c, __m256 x) {
    __m256i ml = _mm256_setzero_si256();
    for (int k = 0; k < 14; k++)
        ml = _mm256_sub_epi32(ml, _mm256_castps_si256(_mm256_cmp_ps(x, c->inner[k], _CMP_NLT_UQ)));
    return ml;
}

#endif
