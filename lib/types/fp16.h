/*
 * fp16.h - half (IEEE binary16) and bfloat16 conversions, rounding as ggml does.
 *
 * fp32 -> fp16 rounds to nearest even; NaN stays NaN, overflow becomes infinity.
 * fp32 -> bf16 rounds to nearest even; NaN becomes a quiet NaN with the sign kept.
 */
#ifndef GK_TYPES_FP16_H
#define GK_TYPES_FP16_H

#include <stdint.h>
#include <string.h>

#include "util/byteorder.h"   /* gk_bswap*, gk_swap*_run: byte swaps live there */

static inline uint32_t gk_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float gk_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* binary16 -> binary32 (exact). */
static inline float gk_fp16_to_fp32(uint16_t h) {
    const uint32_t w = (uint32_t)h << 16;
    const uint32_t sign = w & UINT32_C(0x80000000);
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = UINT32_C(0xE0) << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized = gk_bits_f32((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = UINT32_C(126) << 23;
    const float magic_bias = 0.5f;
    const float denormalized = gk_bits_f32((two_w >> 17) | magic_mask) - magic_bias;
    const uint32_t denormalized_cutoff = UINT32_C(1) << 27;
    const uint32_t result = sign | (two_w < denormalized_cutoff ? gk_f32_bits(denormalized)
                                                                : gk_f32_bits(normalized));
    return gk_bits_f32(result);
}

/* binary32 -> binary16, round to nearest even. */
static inline uint16_t gk_fp32_to_fp16(float f) {
    const float scale_to_inf = 0x1.0p+112f;
    const float scale_to_zero = 0x1.0p-110f;
    /* |f| by clearing the sign bit, exactly as fabsf (also for -0 and NaN) */
    float base = gk_bits_f32(gk_f32_bits(f) & UINT32_C(0x7FFFFFFF)) * scale_to_inf;
    base *= scale_to_zero;
    const uint32_t w = gk_f32_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & UINT32_C(0x80000000);
    uint32_t bias = shl1_w & UINT32_C(0xFF000000);
    if (bias < UINT32_C(0x71000000)) bias = UINT32_C(0x71000000);
    base = gk_bits_f32((bias >> 1) + UINT32_C(0x07800000)) + base;
    const uint32_t bits = gk_f32_bits(base);
    const uint32_t exp_bits = (bits >> 13) & UINT32_C(0x00007C00);
    const uint32_t mantissa_bits = bits & UINT32_C(0x00000FFF);
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return (uint16_t)((sign >> 16) | (shl1_w > UINT32_C(0xFF000000) ? UINT16_C(0x7E00) : nonsign));
}

static inline float gk_bf16_to_fp32(uint16_t h) { return gk_bits_f32((uint32_t)h << 16); }

static inline uint16_t gk_fp32_to_bf16(float f) {
    uint32_t u = gk_f32_bits(f);
    if ((u & 0x7fffffff) > 0x7f800000) return (uint16_t)((u >> 16) | 64); /* quiet NaN */
    return (uint16_t)((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

#endif
