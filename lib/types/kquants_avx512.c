/*
 * kquants_avx512.c - Q2_K..Q6_K quantizers with the AVX-512 group searches:
 * sixteen groups per register pass, one block of Q2_K, Q3_K and Q6_K or two
 * consecutive blocks of Q4_K and Q5_K. The dequantizers keep AVX2.
 */
#include "types/kernels.h"
#include "types/quant_util.h"

GK_QUANTIZER_USING(q2_K, gk_searches_avx512)
GK_QUANTIZER_USING(q3_K, gk_searches_avx512)
GK_QUANTIZER_USING(q4_K, gk_searches_avx512)
GK_QUANTIZER_USING(q5_K, gk_searches_avx512)
GK_QUANTIZER_USING(q6_K, gk_searches_avx512)

/** gk_register_kquants_avx512() : the Q2_K..Q6_K quantizers of table. */
void gk_register_kquants_avx512(gk_type_info *table) {
    table[GK_TYPE_Q2_K].quantize = quantize_q2_K;
    table[GK_TYPE_Q3_K].quantize = quantize_q3_K;
    table[GK_TYPE_Q4_K].quantize = quantize_q4_K;
    table[GK_TYPE_Q5_K].quantize = quantize_q5_K;
    table[GK_TYPE_Q6_K].quantize = quantize_q6_K;
}
