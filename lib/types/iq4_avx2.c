/*
 * iq4_avx2.c - the IQ4_XS and IQ4_NL quantizers (iq4_lanes.h) with AVX2: eight
 * blocks of 32 per pass (one IQ4_XS super-block).
 */
#include "types/vec_avx2.h"

#include "types/iq4_levels_avx2.h"

#define IQ4_LEVELS_INIT iq4_levels_init
#define IQ4_LEVEL_AT iq4_level_at
#define IQ4_COUNT iq4_count
#define V_TRANSPOSE32 transpose_8x32
#define V_NARROW16(v) narrow16(v)
#define QUANTIZE_XS gk_quantize_iq4_xs_avx2
#define QUANTIZE_NL gk_quantize_iq4_nl_avx2
#define REGISTER gk_register_iq4_avx2

/* Transposes 8 rows of 32 floats (row r at src + r * 32) into t[j] = element j of
 * each row, j = 0..31. */
LANE_TARGET static void transpose_8x32(const float *src, __m256 t[32]) {
    for (int jb = 0; jb < 4; jb++) {
        __m256 r[8];
        for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + 32 * i + 8 * jb);
        __m256 a0 = _mm256_unpacklo_ps(r[0], r[1]), a1 = _mm256_unpackhi_ps(r[0], r[1]);
        __m256 a2 = _mm256_unpacklo_ps(r[2], r[3]), a3 = _mm256_unpackhi_ps(r[2], r[3]);
        __m256 a4 = _mm256_unpacklo_ps(r[4], r[5]), a5 = _mm256_unpackhi_ps(r[4], r[5]);
        __m256 a6 = _mm256_unpacklo_ps(r[6], r[7]), a7 = _mm256_unpackhi_ps(r[6], r[7]);
        __m256 b0 = _mm256_shuffle_ps(a0, a2, 0x44), b1 = _mm256_shuffle_ps(a0, a2, 0xee);
        __m256 b2 = _mm256_shuffle_ps(a1, a3, 0x44), b3 = _mm256_shuffle_ps(a1, a3, 0xee);
        __m256 b4 = _mm256_shuffle_ps(a4, a6, 0x44), b5 = _mm256_shuffle_ps(a4, a6, 0xee);
        __m256 b6 = _mm256_shuffle_ps(a5, a7, 0x44), b7 = _mm256_shuffle_ps(a5, a7, 0xee);
        __m256 *o = t + 8 * jb;
        o[0] = _mm256_permute2f128_ps(b0, b4, 0x20);
        o[1] = _mm256_permute2f128_ps(b1, b5, 0x20);
        o[2] = _mm256_permute2f128_ps(b2, b6, 0x20);
        o[3] = _mm256_permute2f128_ps(b3, b7, 0x20);
        o[4] = _mm256_permute2f128_ps(b0, b4, 0x31);
        o[5] = _mm256_permute2f128_ps(b1, b5, 0x31);
        o[6] = _mm256_permute2f128_ps(b2, b6, 0x31);
        o[7] = _mm256_permute2f128_ps(b3, b7, 0x31);
    }
}


/* The low bytes of the sixteen int32 lanes of v[0] and v[1] (each 0..255), in
 * order. */
LANE_TARGET static inline __m128i narrow16(const __m256i *v) {
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(v[0], v[1]), 0xd8);
    return _mm_packus_epi16(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
}

#include "types/iq4_lanes.h"
