/*
 * iquants_simd.h - internal declarations of the vector I-quant kernels.
 *
 * The functions named gk_<op>_<type>_<isa> take the arguments of their scalar
 * namesakes in kernels.h and write the same bytes (floats) bit for bit; they may
 * only be called on a processor that has <isa> (see lib/types/cpu.h). The type
 * table reaches them through gk_register_iquants_<isa>; the differential tests
 * call them directly against the scalar kernels.
 */
#ifndef GK_TYPES_IQUANTS_SIMD_H
#define GK_TYPES_IQUANTS_SIMD_H

#include "types/kernels.h"

#define GK_IQ_SIMD_KERNELS(t, isa)                                                       \
    void gk_quantize_##t##_##isa(const float *src, void *dst, int64_t nrows,             \
                                 int64_t n_per_row, const float *imatrix);               \
    void gk_dequantize_##t##_##isa(const void *src, float *dst, int64_t n);

/* iquants_avx2.c */
GK_IQ_SIMD_KERNELS(iq4_xs, avx2)
GK_IQ_SIMD_KERNELS(iq4_nl, avx2)
void gk_quantize_iq3_xxs_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                              const float *imatrix);
void gk_quantize_iq3_s_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix);

void gk_quantize_iq2_xxs_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                              const float *imatrix);
void gk_quantize_iq2_xs_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                             const float *imatrix);
void gk_quantize_iq2_s_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix);
void gk_quantize_iq1_s_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix);
void gk_quantize_iq1_m_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix);
void gk_dequantize_iq3_xxs_avx2(const void *src, float *dst, int64_t n);
void gk_dequantize_iq3_s_avx2(const void *src, float *dst, int64_t n);
void gk_dequantize_iq2_xxs_avx2(const void *src, float *dst, int64_t n);
void gk_dequantize_iq2_xs_avx2(const void *src, float *dst, int64_t n);
void gk_dequantize_iq2_s_avx2(const void *src, float *dst, int64_t n);
void gk_dequantize_iq1_s_avx2(const void *src, float *dst, int64_t n);
void gk_dequantize_iq1_m_avx2(const void *src, float *dst, int64_t n);
/* The end of one IQ4_XS super-block's quantization after its 8 sub-block scales
 * are found (for the AVX-512 search, which finds them two super-blocks at a time). */
void gk_iq4_xs_write_avx2(const float scales[8], const float *x, uint8_t *blk);

/* iquants_avx512.c (the dequantizers stay AVX2's) */
void gk_quantize_iq4_xs_avx512(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix);
void gk_quantize_iq4_nl_avx512(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                               const float *imatrix);

#endif
