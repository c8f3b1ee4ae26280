/*
 * vec_lanes.h - the vector words the lane templates (legacy_lanes.h,
 * iq4_lanes.h) use that are spelled alike at every x86 width: the intrinsic
 * named _mm<VBITS>_<op>. Included by vec_avx2.h and vec_avx512.h after they
 * define VBITS (the register width in bits); they define the words that differ.
 */
#include <immintrin.h>
#include <stdint.h>

#define VCAT_(a, b, c) a##b##c
#define VCAT(a, b, c) VCAT_(a, b, c)
#define VOP(op) VCAT(_mm, VBITS, _##op) /* _mm256_op, _mm512_op */

#define LANES (VBITS / 32)
typedef VCAT(__m, VBITS, ) vf;  /* float lanes */
typedef VCAT(__m, VBITS, i) vi; /* int32 lanes */

#define V_SET1 VOP(set1_ps)
#define V_ZERO VOP(setzero_ps)
#define V_LOAD VOP(loadu_ps)
#define V_STORE VOP(storeu_ps)
#define V_ADD VOP(add_ps)
#define V_SUB VOP(sub_ps)
#define V_MUL VOP(mul_ps)
#define V_DIV VOP(div_ps)
#define V_SQRT VOP(sqrt_ps)
#define V_MAX VOP(max_ps)
#define V_MIN VOP(min_ps)
#define V_AND VOP(and_ps)
#define V_OR VOP(or_ps)
#define V_XOR VOP(xor_ps)
#define VI_SET1 VOP(set1_epi32)
#define VI_ADD VOP(add_epi32)
#define VI_SHL VOP(slli_epi32)
#define VI_OR VCAT(VOP(or_si), VBITS, ) /* _mm256_or_si256, _mm512_or_si512 */
