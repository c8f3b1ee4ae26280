/*
 * iquants_simd.h - internal declarations of the vector I-quant kernels.
 *
 * The functions named gk_<op>_<type>_<isa> take the arguments of their scalar
 * namesakes in kernels.h and write the same bytes (floats) bit for bit; they may
 * only be called on a processor that has <isa> (see lib/types/cpu.h). The type
 * table reaches them through gk_register_iquants_avx2 and gk_register_iq4_<isa>;
 * the differential tests call them directly against the scalar kernels.
 */
#ifndef GK_TYPES_IQUANTS_SIMD_H
#define GK_TYPES_IQUANTS_SIMD_H

#include "types/kernels.h"

/* iq4_avx2.c and iq4_avx512.c (iq4_lanes.h): the IQ4 quantizers of each width */
#define GK_IQ4_QUANTIZERS(isa)                                                               \
    void gk_quantize_iq4_xs_##isa(const float *src, void *dst, int64_t nrows, int64_t n_per_row, \
                                  const float *imatrix);                                   \
    void gk_quantize_iq4_nl_##isa(const float *src, void *dst, int64_t nrows, int64_t n_per_row, \
                                  const float *imatrix);
GK_IQ4_QUANTIZERS(avx2)
GK_IQ4_QUANTIZERS(avx512)

/* iquants_avx2.c */
void gk_dequantize_iq4_xs_avx2(const void *src, float *dst, int64_t n);
void gk_dequantize_iq4_nl_avx2(const void *src, float *dst, int64_t n);
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

#endif
