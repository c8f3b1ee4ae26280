/*
 * kquants_avx2.c - the Q2_K..Q6_K quantizers with the AVX2 group searches,
 * eight groups per register (kquants_lanes.h).
 */
#define SEARCHES gk_searches_avx2
#define REGISTER gk_register_kquants_avx2
#include "types/kquants_lanes.h"
