/*
 * legacy_avx2.c - the legacy quantizers (legacy_lanes.h) with AVX2: eight
 * blocks per register, a block in four registers.
 */
#include <immintrin.h>

#define LANES 8
#define LANE_TARGET __attribute__((target("avx2,f16c")))
#define SEARCHES gk_searches_avx2
#define REGISTER gk_register_legacy_avx2
typedef __m256 vf;
typedef __m256 vmask;

#define V_SET1(f) _mm256_set1_ps(f)
#define V_ZERO() _mm256_setzero_ps()
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps(p, v)
#define V_LOAD_HALF(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define V_STORE_HALF(p, v) \
    _mm_storeu_si128((__m128i *)(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define V_ADD _mm256_add_ps
#define V_SUB _mm256_sub_ps
#define V_MUL _mm256_mul_ps
#define V_DIV _mm256_div_ps
#define V_MAX _mm256_max_ps
#define V_MIN _mm256_min_ps
#define V_AND _mm256_and_ps
#define V_OR _mm256_or_ps
#define V_XOR _mm256_xor_ps
#define V_ABS(x) _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)))
#define V_TRUNC(v) _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define V_CMP _mm256_cmp_ps
#define M_AND _mm256_and_ps
#define M_OR _mm256_or_ps
#define M_BITS(m) ((uint32_t)_mm256_movemask_ps(m))
#define V_SELECT(m, a, b) _mm256_blendv_ps(b, a, m)
#define V_MASKZ(m, a) _mm256_and_ps(m, a)
#define V_ADD_WHERE(m, a, b) _mm256_add_ps(a, _mm256_and_ps(m, b))
#define V_EXPONENT_FULL(v)                                                                                    \
    _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7F800000)), \
                                           _mm256_set1_epi32(0x7F800000)))
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
