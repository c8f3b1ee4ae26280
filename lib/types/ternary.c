/*
 * ternary.c - kernels of the ternary formats TQ1_0 (1.6875 bpw) and TQ2_0 (2.0625 bpw).
 *
 * 256 values per block with one fp16 scale d = max|x|; each value becomes one of
 * -d, 0, +d. TQ1_0 packs five trits per byte (48 bytes qs, then 4 bytes qh holding
 * four trits each) as a base-3 fixed-point fraction; TQ2_0 packs four 2-bit codes
 * per byte. Quantization follows ggml's quantize_row_tq1_0_ref / tq2_0_ref.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "types/blocks.h"
#include "types/kernels.h"
#include "types/quant_util.h"

/* Largest |x| of one 256-value block. */
static float block_abs_max(const float *x) {
    float amax = 0.0f;
    for (int j = 0; j < QK_K; j++) amax = GK_MAX(amax, fabsf(x[j]));
    return amax;
}

/* Trit of value v scaled by id: -1, 0, 1 coded as 0, 1, 2. */
static inline int trit_of(float v, float id) { return (int)lroundf(v * id) + 1; }

/* Turn a base-3 number of five trits (0..242) into the byte whose top trit is
 * recovered by multiplying by 3 and taking the high byte (ceiling division). */
static inline uint8_t trits_to_byte(uint8_t q) { return (uint8_t)(((uint16_t)q * 256 + (243 - 1)) / 243); }

/* Trit number n (0 = most significant) of a packed byte, as -1, 0 or 1. */
static inline int byte_trit(uint8_t packed, uint8_t pow3_n) {
    const uint8_t q = (uint8_t)(packed * pow3_n);
    return (int16_t)(((uint16_t)q * 3) >> 8) - 1;
}

/* ---- TQ1_0 ---------------------------------------------------------------------------- */

/* Pack `width` bytes of five trits each; trit n of byte m is x[m + n*width]. */
static void tq1_pack_five(const float *x, float id, uint8_t *qs, int width) {
    for (int m = 0; m < width; ++m) {
        uint8_t q = 0;
        for (int n = 0; n < 5; ++n) q = (uint8_t)(q * 3 + trit_of(x[m + n * width], id));
        qs[m] = trits_to_byte(q);
    }
}

/** gk_quantize_tq1_0() : rows of F32 to TQ1_0 (ggml's reference; imatrix unused). */
void gk_quantize_tq1_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        block_tq1_0 b;
        const float d = block_abs_max(x);
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        /* 32 bytes x 5 trits, then 16 bytes x 5 trits */
        tq1_pack_five(x, id, b.qs, 32);
        x += 5 * 32;
        tq1_pack_five(x, id, b.qs + 32, 16);
        x += 5 * 16;
        /* 4 bytes x 4 trits, shifted up so that the first is the top trit */
        for (int j = 0; j < (int)sizeof b.qh; ++j) {
            uint8_t q = 0;
            for (int m = 0; m < 4; ++m) q = (uint8_t)(q * 3 + trit_of(x[j + m * (int)sizeof b.qh], id));
            q = (uint8_t)(q * 3);
            b.qh[j] = trits_to_byte(q);
        }
        x += 4 * sizeof b.qh;
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_tq1_0() : n values (a multiple of 256) from TQ1_0 blocks. */
void gk_dequantize_tq1_0(const void *src, float *dst, int64_t n) {
    static const uint8_t pow3[6] = { 1, 3, 9, 27, 81, 243 };
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_K; i++) {
        block_tq1_0 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        for (int nt = 0; nt < 5; ++nt)
            for (int m = 0; m < 32; ++m) *dst++ = (float)byte_trit(b.qs[m], pow3[nt]) * d;
        for (int nt = 0; nt < 5; ++nt)
            for (int m = 0; m < 16; ++m) *dst++ = (float)byte_trit(b.qs[32 + m], pow3[nt]) * d;
        for (int nt = 0; nt < 4; ++nt)
            for (int j = 0; j < (int)sizeof b.qh; ++j) *dst++ = (float)byte_trit(b.qh[j], pow3[nt]) * d;
    }
}

/** gk_byteswap_tq1_0() : swap the fp16 scale of each block. */
void gk_byteswap_tq1_0(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_tq1_0)) {
        gk_swap16_run(p + offsetof(block_tq1_0, d), 1);
    }
}

/* ---- TQ2_0 ---------------------------------------------------------------------------- */

/** gk_quantize_tq2_0() : rows of F32 to TQ2_0 (ggml's reference; imatrix unused). */
void gk_quantize_tq2_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        block_tq2_0 b;
        const float d = block_abs_max(x);
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        for (int j = 0; j < (int)sizeof b.qs; j += 32) {
            for (int m = 0; m < 32; ++m) {
                uint8_t q = 0;
                for (int nt = 0; nt < 4; ++nt) q = (uint8_t)(q + ((trit_of(x[m + nt * 32], id) & 3) << (2 * nt)));
                b.qs[j + m] = q;
            }
            x += 4 * 32;
        }
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_tq2_0() : n values (a multiple of 256) from TQ2_0 blocks. */
void gk_dequantize_tq2_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK_K; i++) {
        block_tq2_0 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        for (int j = 0; j < (int)sizeof b.qs; j += 32)
            for (int l = 0; l < 4; ++l)
                for (int m = 0; m < 32; ++m) {
                    const int8_t q = (int8_t)((b.qs[j + m] >> (l * 2)) & 3);
                    *dst++ = (float)(q - 1) * d;
                }
    }
}

/** gk_byteswap_tq2_0() : swap the fp16 scale of each block. */
void gk_byteswap_tq2_0(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_tq2_0)) {
        gk_swap16_run(p + offsetof(block_tq2_0, d), 1);
    }
}
