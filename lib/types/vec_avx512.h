/*
 * vec_avx512.h - the AVX-512 words of the lane templates (legacy_lanes.h,
 * iq4_lanes.h): sixteen float lanes per register, comparisons as mask
 * registers. Included by the AVX-512 instantiations before their template;
 * vec_avx2.h defines the same names for eight lanes.
 */
#include <immintrin.h>
#include <stdint.h>

#define LANES 16
#define LANE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))
typedef __m512 vf;      /* float lanes */
typedef __m512i vi;     /* int32 lanes */
typedef __mmask16 vmask; /* a comparison's result */

#define V_SET1(f) _mm512_set1_ps(f)
#define V_ZERO() _mm512_setzero_ps()
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, v) _mm512_storeu_ps(p, v)
/* LANES binary16 values widened (exact), and rounded to nearest even. */
#define V_LOAD_HALF(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define V_STORE_HALF(p, v) \
    _mm256_storeu_si256((__m256i *)(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define V_ADD _mm512_add_ps
#define V_SUB _mm512_sub_ps
#define V_MUL _mm512_mul_ps
#define V_DIV _mm512_div_ps
#define V_SQRT _mm512_sqrt_ps
#define V_MAX _mm512_max_ps
#define V_MIN _mm512_min_ps
#define V_AND _mm512_and_ps
#define V_OR _mm512_or_ps
#define V_XOR _mm512_xor_ps
#define V_ABS(x) _mm512_abs_ps(x)
#define V_TRUNC(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC) /* toward zero */
#define V_CMP _mm512_cmp_ps_mask
#define M_AND(a, b) ((vmask)((a) & (b)))
#define M_OR(a, b) ((vmask)((a) | (b)))
#define M_BITS(m) ((uint32_t)(m)) /* lane k at bit k */
#define V_SELECT(m, a, b) _mm512_mask_blend_ps(m, b, a) /* m ? a : b per lane */
#define V_MASKZ(m, a) _mm512_maskz_mov_ps(m, a)         /* m ? a : 0 */
#define V_ADD_WHERE(m, a, b) _mm512_mask_add_ps(a, m, a, b) /* m ? a + b : a */
/* The lanes that are NaN or infinite. */
#define V_EXPONENT_FULL(v) _mm512_fpclass_ps_mask(v, 0x01 | 0x08 | 0x10 | 0x80)
#define VI_SET1 _mm512_set1_epi32
#define VI_ADD _mm512_add_epi32
#define VI_OR _mm512_or_si512
#define VI_SHL _mm512_slli_epi32
#define VI_SELECT(m, a, b) _mm512_mask_blend_epi32(m, b, a)
