/*
 * float.c - kernels of the plain number types: F32, F16, BF16, F64 and I8..I64.
 *
 * F32, F16 and BF16 convert from F32 with ggml's rounding (fp16.h). F64 and the
 * integer types only dequantize (value-wise conversion to float); they are never a
 * quantization target. Byte swapping reverses each element's bytes.
 */
#include <string.h>

#include "types/kernels.h"

/* ---- F32 --------------------------------------------------------------------- */

/** gk_quantize_f32() : copy nrows rows of n_per_row floats (imatrix unused). */
void gk_quantize_f32(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                     const float *imatrix) {
    (void)imatrix;
    memmove(dst, src, (size_t)(nrows * n_per_row) * sizeof(float));
}

/** gk_dequantize_f32() : copy n floats. */
void gk_dequantize_f32(const void *src, float *dst, int64_t n) {
    memmove(dst, src, (size_t)n * sizeof(float));
}

/** gk_byteswap_f32() : reverse the byte order of each of n floats. */
void gk_byteswap_f32(void *blocks, int64_t nblocks) { gk_swap32_run(blocks, nblocks); }

/* ---- F16 --------------------------------------------------------------------- */

/** gk_quantize_f16() : convert to binary16, round to nearest even (as
 *  ggml_fp32_to_fp16_row; imatrix unused). */
void gk_quantize_f16(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                     const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const int64_t n = nrows * n_per_row;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = gk_fp32_to_fp16(src[i]);
        memcpy(out + 2 * i, &h, 2);
    }
}

/** gk_dequantize_f16() : widen n binary16 values to float (exact). */
void gk_dequantize_f16(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, in + 2 * i, 2);
        dst[i] = gk_fp16_to_fp32(h);
    }
}

/** gk_byteswap_f16() : reverse the byte order of each of n halves. */
void gk_byteswap_f16(void *blocks, int64_t nblocks) { gk_swap16_run(blocks, nblocks); }

/* ---- BF16 -------------------------------------------------------------------- */

/** gk_quantize_bf16() : convert to bfloat16, round to nearest even, NaN kept
 *  quiet (as ggml_fp32_to_bf16_row_ref; imatrix unused). */
void gk_quantize_bf16(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const int64_t n = nrows * n_per_row;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = gk_fp32_to_bf16(src[i]);
        memcpy(out + 2 * i, &h, 2);
    }
}

/** gk_dequantize_bf16() : widen n bfloat16 values to float (exact). */
void gk_dequantize_bf16(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, in + 2 * i, 2);
        dst[i] = gk_bf16_to_fp32(h);
    }
}

/** gk_byteswap_bf16() : reverse the byte order of each of n bfloat16 values. */
void gk_byteswap_bf16(void *blocks, int64_t nblocks) { gk_swap16_run(blocks, nblocks); }

/* ---- F64 and integers: dequantize and byteswap only ---------------------------- */

/** gk_dequantize_f64() : narrow n doubles to float (round to nearest). */
void gk_dequantize_f64(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, in + 8 * i, 8);
        dst[i] = (float)v;
    }
}

/** gk_byteswap_f64() : reverse the byte order of each of n doubles. */
void gk_byteswap_f64(void *blocks, int64_t nblocks) { gk_swap64_run(blocks, nblocks); }

/** gk_dequantize_i8() : convert n signed bytes to float. */
void gk_dequantize_i8(const void *src, float *dst, int64_t n) {
    const int8_t *in = src;
    for (int64_t i = 0; i < n; i++) dst[i] = (float)in[i];
}

/** gk_byteswap_i8() : nothing to do for single bytes. */
void gk_byteswap_i8(void *blocks, int64_t nblocks) {
    (void)blocks;
    (void)nblocks;
}

/** gk_dequantize_i16() : convert n int16 values to float (exact). */
void gk_dequantize_i16(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n; i++) {
        int16_t v;
        memcpy(&v, in + 2 * i, 2);
        dst[i] = (float)v;
    }
}

/** gk_byteswap_i16() : reverse the byte order of each of n int16 values. */
void gk_byteswap_i16(void *blocks, int64_t nblocks) { gk_swap16_run(blocks, nblocks); }

/** gk_dequantize_i32() : convert n int32 values to float (round to nearest). */
void gk_dequantize_i32(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n; i++) {
        int32_t v;
        memcpy(&v, in + 4 * i, 4);
        dst[i] = (float)v;
    }
}

/** gk_byteswap_i32() : reverse the byte order of each of n int32 values. */
void gk_byteswap_i32(void *blocks, int64_t nblocks) { gk_swap32_run(blocks, nblocks); }

/** gk_dequantize_i64() : convert n int64 values to float (round to nearest). */
void gk_dequantize_i64(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n; i++) {
        int64_t v;
        memcpy(&v, in + 8 * i, 8);
        dst[i] = (float)v;
    }
}

/** gk_byteswap_i64() : reverse the byte order of each of n int64 values. */
void gk_byteswap_i64(void *blocks, int64_t nblocks) { gk_swap64_run(blocks, nblocks); }

/* ---- One value at a time (the public conversions) ------------------------------ */

uint16_t gk_f16_from_f32(float f) { return gk_fp32_to_fp16(f); }

float gk_f16_to_f32(uint16_t h) { return gk_fp16_to_fp32(h); }
