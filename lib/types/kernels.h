/*
 * kernels.h - internal declarations of the per-family tensor kernels.
 *
 * Each family file (float.c, legacy.c, kquants.c, iquants.c, ternary.c, mxfp4.c,
 * nvfp4.c, q1q2.c)
 * implements the three entry points of gk_type_info for its types:
 *   gk_quantize_<t>   (const float *src, void *dst, int64_t nrows, int64_t n_per_row,
 *                      const float *imatrix)             whole rows, imatrix may be NULL
 *   gk_dequantize_<t> (const void *src, float *dst, int64_t n)   n a multiple of the block
 *   gk_byteswap_<t>   (void *blocks, int64_t nblocks)            in place, self-inverse
 * and the data check gk_check_<t> (check.c, every family's in one file: the
 * fields it reads are the block layouts' scale fields).
 * Nothing outside lib/types calls these directly: callers go through gk_type_get().
 * (Tests call the scalar kernels by name, as the oracle of the vector ones.)
 *
 * Vector kernels live in FAMILY_ISA.c files (kquants_avx2.c, legacy_avx512.c, ...),
 * built with per-function target attributes so the binary stays portable. A
 * family with kernels at both widths is written once, as a template for any lane
 * count (FAMILY_lanes.h: quant_util, legacy, kquants, iq4), and its FAMILY_ISA.c
 * files only define the width's words (vec_avx2.h, vec_avx512.h) and include it;
 * kernels with one width only stay in their own file (legacy_dequant_avx2.c,
 * iquants_avx2.c, ...). Each defines gk_register_FAMILY_ISA(table), which
 * overwrites the quantize/dequantize entries of its types in a writable copy of
 * the type table; dispatch.c calls them for the active level (the AVX-512 level
 * runs the AVX2 registrations first).
 */
#ifndef GK_TYPES_KERNELS_H
#define GK_TYPES_KERNELS_H

#include "ggufkit.h"
#include "types/cpu.h"
#include "types/fp16.h"

#define GK_KERNELS(t)                                                                 \
    void gk_quantize_##t(const float *src, void *dst, int64_t nrows, int64_t n_per_row, \
                         const float *imatrix);                                       \
    void gk_dequantize_##t(const void *src, float *dst, int64_t n);                  \
    void gk_byteswap_##t(void *blocks, int64_t nblocks);                             \
    bool gk_check_##t(const void *blocks, int64_t nblocks, gk_block_fault_fn fn, void *ctx);

/* float.c (plain numbers; integer types dequantize as values and are not quantized) */
GK_KERNELS(f32)
GK_KERNELS(f16)
GK_KERNELS(bf16)
GK_KERNELS(f64)
GK_KERNELS(i8)
GK_KERNELS(i16)
GK_KERNELS(i32)
GK_KERNELS(i64)
/* legacy.c */
GK_KERNELS(q4_0)
GK_KERNELS(q4_1)
GK_KERNELS(q5_0)
GK_KERNELS(q5_1)
GK_KERNELS(q8_0)
GK_KERNELS(q8_1)
/* kquants.c */
GK_KERNELS(q2_K)
GK_KERNELS(q3_K)
GK_KERNELS(q4_K)
GK_KERNELS(q5_K)
GK_KERNELS(q6_K)
GK_KERNELS(q8_K)
/* iquants.c */
GK_KERNELS(iq2_xxs)
GK_KERNELS(iq2_xs)
GK_KERNELS(iq2_s)
GK_KERNELS(iq3_xxs)
GK_KERNELS(iq3_s)
GK_KERNELS(iq1_s)
GK_KERNELS(iq1_m)
GK_KERNELS(iq4_nl)
GK_KERNELS(iq4_xs)
/* ternary.c */
GK_KERNELS(tq1_0)
GK_KERNELS(tq2_0)
/* mxfp4.c */
GK_KERNELS(mxfp4)
/* nvfp4.c */
GK_KERNELS(nvfp4)
/* q1q2.c */
GK_KERNELS(q1_0)
GK_KERNELS(q2_0)

/* The block quantizers with their group searches as a parameter (quant_util.h):
 * gk_quantize_<t> is gk_quantize_<t>_with(&gk_searches_scalar, ...), and the vector
 * families pass their lane searches. */
struct gk_searches;
#define GK_QUANTIZE_WITH(t)                                                            \
    void gk_quantize_##t##_with(const struct gk_searches *s, const float *src, void *dst, \
                                int64_t nrows, int64_t n_per_row, const float *imatrix);
/* A gk_quantize_fn named quantize_<t> that runs gk_quantize_<t>_with(SEARCHES). */
#define GK_QUANTIZER_USING(t, SEARCHES)                                                \
    static void quantize_##t(const float *src, void *dst, int64_t nrows, int64_t n_per_row, \
                             const float *imatrix) {                                  \
        gk_quantize_##t##_with(&(SEARCHES), src, dst, nrows, n_per_row, imatrix);        \
    }
GK_QUANTIZE_WITH(q4_0)
GK_QUANTIZE_WITH(q4_1)
GK_QUANTIZE_WITH(q5_0)
GK_QUANTIZE_WITH(q5_1)
GK_QUANTIZE_WITH(q2_K)
GK_QUANTIZE_WITH(q3_K)
GK_QUANTIZE_WITH(q4_K)
GK_QUANTIZE_WITH(q5_K)
GK_QUANTIZE_WITH(q6_K)

/* table.c: the scalar table with the kernels of level isa registered over it. */
void gk_type_table_for(gk_isa isa, gk_type_info out[GK_TYPE_COUNT]);
/* dispatch.c: every gk_register_* call of level isa, in order. */
void gk_kernels_register(gk_type_info *table, gk_isa isa);

/* The vector families (x86-64 builds only). */
void gk_register_float_avx2(gk_type_info *table);
void gk_register_legacy_avx2(gk_type_info *table);
void gk_register_legacy_dequant_avx2(gk_type_info *table);
void gk_register_kquants_avx2(gk_type_info *table);
void gk_register_kquants_dequant_avx2(gk_type_info *table);
void gk_register_legacy_avx512(gk_type_info *table);
void gk_register_kquants_avx512(gk_type_info *table);
void gk_register_iquants_avx2(gk_type_info *table);
void gk_register_iq4_avx2(gk_type_info *table);
void gk_register_iq4_avx512(gk_type_info *table);
void gk_register_fp4_avx2(gk_type_info *table);
void gk_register_q1q2_avx2(gk_type_info *table);

#endif
