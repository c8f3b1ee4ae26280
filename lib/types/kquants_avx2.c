/*
 * kquants_avx2.c - Q2_K..Q6_K quantizers with the AVX2 group searches.
 *
 * The block algorithm is kquants.c's (gk_quantize_<t>_with); only the per-group
 * scale searches, where the time goes, run eight groups at a time.
 */
#include "types/kernels.h"
#include "types/quant_util.h"

#define WITH_AVX2(t)                                                                   \
    static void quantize_##t(const float *src, void *dst, int64_t nrows, int64_t n_per_row, \
                             const float *imatrix) {                                  \
        gk_quantize_##t##_with(&gk_searches_avx2, src, dst, nrows, n_per_row, imatrix);  \
    }
WITH_AVX2(q2_K)
WITH_AVX2(q3_K)
WITH_AVX2(q4_K)
WITH_AVX2(q5_K)
WITH_AVX2(q6_K)

/** gk_register_kquants_avx2() : the Q2_K..Q6_K quantizers of table. */
void gk_register_kquants_avx2(gk_type_info *table) {
    table[GK_TYPE_Q2_K].quantize = quantize_q2_K;
    table[GK_TYPE_Q3_K].quantize = quantize_q3_K;
    table[GK_TYPE_Q4_K].quantize = quantize_q4_K;
    table[GK_TYPE_Q5_K].quantize = quantize_q5_K;
    table[GK_TYPE_Q6_K].quantize = quantize_q6_K;
}
