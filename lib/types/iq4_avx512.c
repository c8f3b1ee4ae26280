/*
 * iq4_avx512.c - the IQ4_XS and IQ4_NL quantizers (iq4_lanes.h) with AVX-512:
 * sixteen blocks of 32 per pass (two IQ4_XS super-blocks). The dequantizers
 * keep AVX2's.
 */
#include "types/vec_avx512.h"

#include "types/iq_grids.h"

#define IQ4_LEVELS_INIT iq4_levels_init
#define IQ4_LEVEL_AT(c, idx) _mm512_permutexvar_ps(idx, (c)->all)
#define IQ4_COUNT iq4_count
#define V_TRANSPOSE32 transpose_16x32
#define V_NARROW16(v) _mm512_cvtepi32_epi8((v)[0])
#define QUANTIZE_XS gk_quantize_iq4_xs_avx512
#define QUANTIZE_NL gk_quantize_iq4_nl_avx512
#define REGISTER gk_register_iq4_avx512

/* The 16 IQ4 levels (strictly increasing) in one register. */
typedef struct {
    __m512 all;
} iq4_levels;

LANE_TARGET static void iq4_levels_init(iq4_levels *c) {
    float v[16];
    for (int k = 0; k < 16; k++) v[k] = gk_kvalues_iq4nl[k];
    c->all = _mm512_loadu_ps(v);
}

/* The count of inner levels 1..14 that x is not less than (NaN counts 14),
 * found by a binary search of four permutes (the count of levels 1..15 that x
 * is not less than is the last such level, the levels being increasing), then
 * capped at 14. */
LANE_TARGET static inline __m512i iq4_count(const iq4_levels *c, __m512 x) {
    __m512i ml = _mm512_setzero_si512();
    for (int step = 8; step >= 1; step >>= 1) {
        const __m512i next = _mm512_add_epi32(ml, _mm512_set1_epi32(step));
        const __mmask16 ge = _mm512_cmp_ps_mask(x, _mm512_permutexvar_ps(next, c->all), _CMP_NLT_UQ);
        ml = _mm512_mask_mov_epi32(ml, ge, next);
    }
    return _mm512_min_epi32(ml, _mm512_set1_epi32(14));
}

/* t[j] = element j of each of the sixteen runs of 32 floats at src. */
LANE_TARGET static void transpose_16x32(const float *src, __m512 t[32]) {
    const __m512i runs = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(32));
    for (int j = 0; j < 32; j++) t[j] = _mm512_i32gather_ps(_mm512_add_epi32(runs, _mm512_set1_epi32(j)), src, 4);
}

#include "types/iq4_lanes.h"
