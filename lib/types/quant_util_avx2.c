/*
 * quant_util_avx2.c - the group searches of quant_util.c, eight groups per
 * AVX2 register (quant_util_lanes.h), as the table gk_searches_avx2.
 */
#include <immintrin.h>

#include "types/quant_util.h"

#define LANES 8
#define LANE_TARGET __attribute__((target("avx2")))
#define VANY(m) (_mm256_movemask_ps((__m256)(m)) != 0)
#define VMIN_EPI32(a, b) _mm256_min_epi32((__m256i)(a), (__m256i)(b))
#define VMAX_EPI32(a, b) _mm256_max_epi32((__m256i)(a), (__m256i)(b))
#define TWO_SOURCE_PERMUTE 0
#include "types/quant_util_lanes.h"

const gk_searches gk_searches_avx2 = { lanes_qkx2, lanes_qkx3, lanes_qx, lanes_q3,
                                       lanes_requant };
