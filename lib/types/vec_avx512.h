/*
 * vec_avx512.h - the AVX-512 words of the lane templates (legacy_lanes.h,
 * iq4_lanes.h): sixteen float lanes per register, comparisons as mask
 * registers. The words spelled alike at every width are vec_lanes.h's;
 * vec_avx2.h defines the rest for eight lanes.
 */
#define VBITS 512
#define LANE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))
#include "types/vec_lanes.h"

typedef __mmask16 vmask; /* a comparison's result */
#define M_AND(a, b) ((vmask)((a) & (b)))
#define M_OR(a, b) ((vmask)((a) | (b)))
#define M_BITS(m) ((uint32_t)(m)) /* lane k at bit k */
#define V_CMP _mm512_cmp_ps_mask
#define V_SELECT(m, a, b) _mm512_mask_blend_ps(m, b, a) /* m ? a : b per lane */
#define V_MASKZ(m, a) _mm512_maskz_mov_ps(m, a)         /* m ? a : 0 */
#define V_ADD_WHERE(m, a, b) _mm512_mask_add_ps(a, m, a, b) /* m ? a + b : a */
#define VI_SELECT(m, a, b) _mm512_mask_blend_epi32(m, b, a)
#define V_ABS(x) _mm512_abs_ps(x)
/* LANES binary16 values widened (exact), and rounded to nearest even. */
#define V_LOAD_HALF(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define V_STORE_HALF(p, v) \
    _mm256_storeu_si256((__m256i *)(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define V_TRUNC(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC) /* toward zero */
/* The lanes that are NaN or infinite. */
#define V_EXPONENT_FULL(v) _mm512_fpclass_ps_mask(v, 0x01 | 0x08 | 0x10 | 0x80)
