/*
 * quant_util_avx512.c - the group searches of quant_util.c, sixteen groups per
 * AVX-512 register (quant_util_lanes.h), as the table gk_searches_avx512.
 */
#include <immintrin.h>

#include "types/quant_util.h"

#define LANES 16
#define LANE_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define VANY(m) (_mm512_test_epi32_mask((__m512i)(m), (__m512i)(m)) != 0)
#define VMIN_EPI32(a, b) _mm512_min_epi32((__m512i)(a), (__m512i)(b))
#define VMAX_EPI32(a, b) _mm512_max_epi32((__m512i)(a), (__m512i)(b))
#define TWO_SOURCE_PERMUTE 1
#define PERMUTE2(a, idx, b) _mm512_permutex2var_epi32((__m512i)(a), (__m512i)(idx), (__m512i)(b))
#include "types/quant_util_lanes.h"

const gk_searches gk_searches_avx512 = { lanes_qkx2, lanes_qkx3, lanes_qx, lanes_q3,
                                       lanes_requant };
