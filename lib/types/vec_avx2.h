/*
 * vec_avx2.h - the AVX2 words of the lane templates (legacy_lanes.h,
 * iq4_lanes.h): eight float lanes per register, comparisons as all-ones lanes.
 * The words spelled alike at every width are vec_lanes.h's; vec_avx512.h
 * defines the rest for sixteen lanes.
 */
#define VBITS 256
#define LANE_TARGET __attribute__((target("avx2,f16c")))
#include "types/vec_lanes.h"

typedef __m256 vmask; /* a comparison's result */
#define M_AND _mm256_and_ps
#define M_OR _mm256_or_ps
#define M_BITS(m) ((uint32_t)_mm256_movemask_ps(m)) /* lane k at bit k */
#define V_CMP _mm256_cmp_ps
#define V_SELECT(m, a, b) _mm256_blendv_ps(b, a, m) /* m ? a : b per lane */
#define V_MASKZ(m, a) _mm256_and_ps(m, a)           /* m ? a : 0 */
#define V_ADD_WHERE(m, a, b) _mm256_add_ps(a, _mm256_and_ps(m, b)) /* m ? a + b : a */
#define VI_SELECT(m, a, b) _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m))
#define V_ABS(x) _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)))
/* LANES binary16 values widened (exact), and rounded to nearest even. */
#define V_LOAD_HALF(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define V_STORE_HALF(p, v) \
    _mm_storeu_si128((__m128i *)(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define V_TRUNC(v) _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC) /* toward zero */

/* The lanes that are NaN or infinite. */
#define V_EXPONENT_FULL(v) v_exponent_full(v)
LANE_TARGET static inline vmask v_exponent_full(vf v) {
    const __m256i e = _mm256_set1_epi32(0x7F800000);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), e), e));
}
