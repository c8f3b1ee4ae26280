/*
 * kquants_avx512.c - the K-quants whose blocks have sixteen groups (Q2_K, Q3_K,
 * Q6_K) with the AVX-512 group searches, one block per register pass. Q4_K and
 * Q5_K have eight groups per block and keep their AVX2 kernels.
 */
#include "types/kernels.h"
#include "types/quant_util.h"

#define WITH_AVX512(t)                                                                 \
    static void quantize_##t(const float *src, void *dst, int64_t nrows, int64_t n_per_row, \
                             const float *imatrix) {                                  \
        gk_quantize_##t##_with(&gk_searches_avx512, src, dst, nrows, n_per_row, imatrix); \
    }
WITH_AVX512(q2_K)
WITH_AVX512(q3_K)
WITH_AVX512(q6_K)

/** gk_register_kquants_avx512() : the Q2_K, Q3_K and Q6_K quantizers of table. */
void gk_register_kquants_avx512(gk_type_info *table) {
    table[GK_TYPE_Q2_K].quantize = quantize_q2_K;
    table[GK_TYPE_Q3_K].quantize = quantize_q3_K;
    table[GK_TYPE_Q6_K].quantize = quantize_q6_K;
}
