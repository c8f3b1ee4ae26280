/*
 * dispatch.c - the one list of vector kernel registrations, by level.
 *
 * Each level includes the one below: the AVX-512 table starts from the AVX2
 * kernels and replaces those it has better ones for, so a type without an
 * AVX-512 kernel keeps its AVX2 one. A port (NEON, ...) adds its level here.
 */
#include "types/kernels.h"

void gk_kernels_register(gk_type_info *table, gk_isa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa >= GK_ISA_AVX2) {
        gk_register_float_avx2(table);
        gk_register_legacy_avx2(table);
        gk_register_legacy_dequant_avx2(table);
        gk_register_kquants_avx2(table);
        gk_register_kquants_dequant_avx2(table);
        gk_register_iquants_avx2(table);
        gk_register_iq4_avx2(table);
        gk_register_fp4_avx2(table);
        gk_register_q1q2_avx2(table);
    }
    if (isa >= GK_ISA_AVX512) {
        gk_register_legacy_avx512(table);
        gk_register_kquants_avx512(table);
        gk_register_iq4_avx512(table);
    }
#else
    (void)table;
    (void)isa;
#endif
}
