/*
 * kquants_avx512.c - the Q2_K..Q6_K quantizers with the AVX-512 group searches,
 * sixteen groups per register (kquants_lanes.h). The dequantizers keep AVX2's.
 */
#define SEARCHES gk_searches_avx512
#define REGISTER gk_register_kquants_avx512
#include "types/kquants_lanes.h"
