/*
 * kquants_lanes.h - the Q2_K..Q6_K quantizers of one vector level, written once
 * for any lane count.
 *
 * The block algorithm is kquants.c's (gk_quantize_<t>_with); only the
 * per-group scale searches and the final requantization, where the time goes,
 * run a register of groups (or values) at a time: the level's table of group
 * searches (quant_util_lanes.h). At sixteen lanes one pass takes one block of
 * Q2_K, Q3_K and Q6_K or two consecutive blocks of Q4_K and Q5_K.
 *
 * Included by kquants_avx2.c and kquants_avx512.c after they define SEARCHES
 * (their level's gk_searches table) and REGISTER (the name of the registration
 * function kernels.h declares for them).
 */
#include "types/kernels.h"
#include "types/quant_util.h"

GK_QUANTIZER_USING(q2_K, SEARCHES)
GK_QUANTIZER_USING(q3_K, SEARCHES)
GK_QUANTIZER_USING(q4_K, SEARCHES)
GK_QUANTIZER_USING(q5_K, SEARCHES)
GK_QUANTIZER_USING(q6_K, SEARCHES)

/** REGISTER() : the Q2_K..Q6_K quantizers of table, with this level's searches. */
void REGISTER(gk_type_info *table) {
    table[GK_TYPE_Q2_K].quantize = quantize_q2_K;
    table[GK_TYPE_Q3_K].quantize = quantize_q3_K;
    table[GK_TYPE_Q4_K].quantize = quantize_q4_K;
    table[GK_TYPE_Q5_K].quantize = quantize_q5_K;
    table[GK_TYPE_Q6_K].quantize = quantize_q6_K;
}
