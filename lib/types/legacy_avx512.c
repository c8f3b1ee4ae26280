/*
 * legacy_avx512.c - the legacy quantizers (legacy_lanes.h) with AVX-512:
 * sixteen blocks per register, a block in two registers. The dequantizers keep
 * AVX2's.
 */
#include <immintrin.h>

#define LANES 16
#define LANE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))
#define SEARCHES gk_searches_avx512
#define REGISTER gk_register_legacy_avx512
typedef __m512 vf;
typedef __mmask16 vmask;

#define V_SET1(f) _mm512_set1_ps(f)
#define V_ZERO() _mm512_setzero_ps()
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps(p, v)
#define V_LOAD_HALF(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define V_STORE_HALF(p, v) \
    _mm256_storeu_si256((__m256i *)(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define V_ADD _mm512_add_ps
#define V_SUB _mm512_sub_ps
#define V_MUL _mm512_mul_ps
#define V_DIV _mm512_div_ps
#define V_MAX _mm512_max_ps
#define V_MIN _mm512_min_ps
#define V_AND _mm512_and_ps
#define V_OR _mm512_or_ps
#define V_XOR _mm512_xor_ps
#define V_ABS(x) _mm512_abs_ps(x)
#define V_TRUNC(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define V_CMP _mm512_cmp_ps_mask
#define M_AND(a, b) ((vmask)((a) & (b)))
#define M_OR(a, b) ((vmask)((a) | (b)))
#define M_BITS(m) ((uint32_t)(m))
#define V_SELECT(m, a, b) _mm512_mask_blend_ps(m, b, a)
#define V_MASKZ(m, a) _mm512_maskz_mov_ps(m, a)
#define V_ADD_WHERE(m, a, b) _mm512_mask_add_ps(a, m, a, b)
#define V_EXPONENT_FULL(v) \
    _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7F800000)), \
                            _mm512_set1_epi32(0x7F800000))
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
