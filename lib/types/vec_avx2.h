/*
 * vec_avx2.h - the AVX2 words of the lane templates (legacy_lanes.h,
 * iq4_lanes.h): eight float lanes per register, comparisons as all-ones lanes.
 * Included by the AVX2 instantiations before their template; vec_avx512.h
 * defines the same names for sixteen lanes.
 */
#include <immintrin.h>
#include <stdint.h>

#define LANES 8
#define LANE_TARGET __attribute__((target("avx2,f16c")))
typedef __m256 vf;     /* float lanes */
typedef __m256i vi;    /* int32 lanes */
typedef __m256 vmask;  /* a comparison's result */

#define V_SET1(f) _mm256_set1_ps(f)
#define V_ZERO() _mm256_setzero_ps()
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_storeu_ps(p, v)
/* LANES binary16 values widened (exact), and rounded to nearest even. */
#define V_LOAD_HALF(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define V_STORE_HALF(p, v) \
    _mm_storeu_si128((__m128i *)(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define V_ADD _mm256_add_ps
#define V_SUB _mm256_sub_ps
#define V_MUL _mm256_mul_ps
#define V_DIV _mm256_div_ps
#define V_SQRT _mm256_sqrt_ps
#define V_MAX _mm256_max_ps
#define V_MIN _mm256_min_ps
#define V_AND _mm256_and_ps
#define V_OR _mm256_or_ps
#define V_XOR _mm256_xor_ps
#define V_ABS(x) _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)))
#define V_TRUNC(v) _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC) /* toward zero */
#define V_CMP _mm256_cmp_ps
#define M_AND _mm256_and_ps
#define M_OR _mm256_or_ps
#define M_BITS(m) ((uint32_t)_mm256_movemask_ps(m)) /* lane k at bit k */
#define V_SELECT(m, a, b) _mm256_blendv_ps(b, a, m) /* m ? a : b per lane */
#define V_MASKZ(m, a) _mm256_and_ps(m, a)           /* m ? a : 0 */
#define V_ADD_WHERE(m, a, b) _mm256_add_ps(a, _mm256_and_ps(m, b)) /* m ? a + b : a */
/* The lanes that are NaN or infinite. */
#define V_EXPONENT_FULL(v) v_exponent_full(v)
LANE_TARGET static inline vmask v_exponent_full(vf v) {
    const __m256i e = _mm256_set1_epi32(0x7F800000);
    return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(v), e), e));
}
#define VI_SET1 _mm256_set1_epi32
#define VI_ADD _mm256_add_epi32
#define VI_OR _mm256_or_si256
#define VI_SHL _mm256_slli_epi32
#define VI_SELECT(m, a, b) _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(b), _mm256_castsi256_ps(a), m))
