/*
 * legacy_avx512.c - the legacy quantizers (legacy_lanes.h) with AVX-512:
 * sixteen blocks per register, a block in two registers. The dequantizers keep
 * AVX2's.
 */
#include "types/vec_avx512.h"

#define SEARCHES gk_searches_avx512
#define REGISTER gk_register_legacy_avx512

/* V_PAIRk: level k of the reduction tree (256-bit halves and 128-bit quarters
 * across the register, pairs and single lanes within each quarter; 0x44, 0xEE:
 * _MM_SHUFFLE(1, 0, 1, 0) and (3, 2, 3, 2); 0x88, 0xDD: (2, 0, 2, 0) and
 * (3, 1, 3, 1)). */
#define V_PAIR0(a, b, lo, hi) (lo = _mm512_shuffle_f32x4(a, b, 0x44), hi = _mm512_shuffle_f32x4(a, b, 0xEE))
#define V_PAIR1(a, b, lo, hi) (lo = _mm512_shuffle_f32x4(a, b, 0x88), hi = _mm512_shuffle_f32x4(a, b, 0xDD))
#define V_PAIR2(a, b, lo, hi) (lo = _mm512_shuffle_ps(a, b, 0x44), hi = _mm512_shuffle_ps(a, b, 0xEE))
#define V_PAIR3(a, b, lo, hi) (lo = _mm512_shuffle_ps(a, b, 0x88), hi = _mm512_shuffle_ps(a, b, 0xDD))
/* The tree leaves block 4e + q in lane 4q + e. */
#define V_LANE_ORDER(r) \
    _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), r)
/* Two vectors of truncated int32 narrowed to their low bytes, in order. */
#define V_BYTES(q)                                                \
    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(_mm512_cvttps_epi32((q)[0]))), \
                            _mm512_cvtepi32_epi8(_mm512_cvttps_epi32((q)[1])), 1)

#include "types/legacy_lanes.h"
