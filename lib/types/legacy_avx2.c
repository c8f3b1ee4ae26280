/*
 * legacy_avx2.c - the legacy quantizers (legacy_lanes.h) with AVX2: eight
 * blocks per register, a block in four registers.
 */
#include "types/vec_avx2.h"

#define SEARCHES gk_searches_avx2
#define REGISTER gk_register_legacy_avx2

/* V_PAIRk: level k of the reduction tree (128-bit halves, pairs, single lanes;
 * 0x44, 0xEE: _MM_SHUFFLE(1, 0, 1, 0) and (3, 2, 3, 2); 0x88, 0xDD: (2, 0, 2, 0)
 * and (3, 1, 3, 1)). */
#define V_PAIR0(a, b, lo, hi) (lo = _mm256_permute2f128_ps(a, b, 0x20), hi = _mm256_permute2f128_ps(a, b, 0x31))
#define V_PAIR1(a, b, lo, hi) (lo = _mm256_shuffle_ps(a, b, 0x44), hi = _mm256_shuffle_ps(a, b, 0xEE))
#define V_PAIR2(a, b, lo, hi) (lo = _mm256_shuffle_ps(a, b, 0x88), hi = _mm256_shuffle_ps(a, b, 0xDD))
/* The tree leaves block 2e + h in lane 4h + e. */
#define V_LANE_ORDER(r) _mm256_permutevar8x32_ps(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
/* Four vectors of truncated int32, masked to their low bytes and packed in order. */
#define V_BYTES(q) lane_bytes(q)
LANE_TARGET static inline __m256i lane_bytes(const vf *q) {
    const __m256i m = _mm256_set1_epi32(0xFF);
    __m256i t[4];
    for (int k = 0; k < 4; k++) t[k] = _mm256_and_si256(_mm256_cvttps_epi32(q[k]), m);
    const __m256i abcd = _mm256_packus_epi16(_mm256_packus_epi32(t[0], t[1]), _mm256_packus_epi32(t[2], t[3]));
    return _mm256_permutevar8x32_epi32(abcd, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

#include "types/legacy_lanes.h"
