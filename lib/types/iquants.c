/*
 * iquants.c - kernels of ggml's I-quant types (IQ2_XXS .. IQ4_XS).
 *
 * Dequantization, byte swapping and quantization for all nine types, bit-exact
 * with ggml's reference quantizers of llama.cpp's September 2026 release (same
 * float operations in the same order; their 2025-26 fixes are noted where they
 * apply): IQ4_NL, IQ4_XS, IQ3_XXS and IQ3_S with or without an importance
 * matrix; IQ2_XXS, IQ2_XS and IQ1_S with one only (without it they write zero
 * blocks: callers refuse such tensors first, as llama-quantize does); IQ2_S and
 * IQ1_M with or without one. The 2-bit / 1-bit grid search tables are built once
 * by iq_search.c.
 *
 * Block layouts (little-endian on disk; offsets in bytes):
 *   IQ2_XXS  66: d f16 @0, qs u16[32] @2
 *   IQ2_XS   74: d f16 @0, qs u16[32] @2, scales u8[8] @66
 *   IQ2_S    82: d f16 @0, qs u8[64] @2 (32 grid indices, 32 sign bytes), qh u8[8] @66,
 *                scales u8[8] @74
 *   IQ3_XXS  98: d f16 @0, qs u8[96] @2 (64 grid indices, 8 u32 scale+sign words as bytes)
 *   IQ3_S   110: d f16 @0, qs u8[64] @2, qh u8[8] @66, signs u8[32] @74, scales u8[4] @106
 *   IQ1_S    50: d f16 @0, qs u8[32] @2, qh u16[8] @34
 *   IQ1_M    56: qs u8[32] @0, qh u8[16] @32, scales u8[8] @48 (holds the f16 scale in
 *                its top nibbles, read as four little-endian u16)
 *   IQ4_NL   18: d f16 @0, qs u8[16] @2
 *   IQ4_XS  136: d f16 @0, scales_h u16 @2, scales_l u8[4] @4, qs u8[128] @8
 *
 * The IQ3 quantizers search a grid through a map of all 4096 3-bit points and a
 * neighbour list for points off the grid, built once per grid (pthread_once) into
 * static storage: nothing is allocated, so initialisation cannot fail at run time.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "types/blocks.h"
#include "types/iq_grids.h"
#include "types/iquants.h"
#include "types/kernels.h"
#include "types/quant_util.h"
#include "util/byteorder.h"

/* Thresholds below which a group counts as all zero (ggml's values). */
#define GROUP_MAX_EPS_IQ3_XXS 1e-8f

/* ------------------------------------------------------------------------- */
/* Little-endian field access (util/byteorder.h)                            */

static inline float load_half(const uint8_t *p) { return gk_fp16_to_fp32(gk_load_le16(p)); }

/* v with its sign flipped when bit j of `signs` is set: the value of v * -1, and
 * for a NaN the same flip in every build (a product with -1 may keep or flip a
 * NaN's sign depending on how the compiler emits it). */
static inline float signed_by(float v, uint8_t signs, int j) {
    uint32_t bits = gk_f32_bits(v) ^ ((signs & gk_kmask_iq2xs[j]) ? 0x80000000u : 0u);
    return gk_bits_f32(bits);
}

/* Unsigned byte j of a packed grid entry (the 2- and 3-bit grids hold magnitudes). */
static inline uint8_t grid_u8(uint64_t entry, int j) { return (uint8_t)(entry >> (8 * j)); }

/* ------------------------------------------------------------------------- */
/* Dequantization                                                            */

/** gk_dequantize_iq2_xxs() : 8 groups of 32 per block; each 8-byte group record
 *  holds four 8-bit grid indices, four 7-bit sign patterns and a 4-bit scale. */
void gk_dequantize_iq2_xxs(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ2_XXS_BYTES) {
        const float d = load_half(b);
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {
            const uint8_t *rec = b + 2 + 8 * ib32;
            const uint32_t aux1 = gk_load_le32(rec + 4);
            const float db = d * (0.5f + (aux1 >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++) {
                const uint64_t g = gk_iq2xxs_grid[rec[l]];
                const uint8_t signs = gk_ksigns_iq2xs[(aux1 >> (7 * l)) & 127];
                for (int j = 0; j < 8; j++) dst[j] = signed_by(db * grid_u8(g, j), signs, j);
                dst += 8;
            }
        }
    }
}

/** gk_dequantize_iq2_xs() : 16-bit codes (9-bit grid index, 7-bit sign pattern) and a
 *  4-bit scale per 16 values. */
void gk_dequantize_iq2_xs(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ2_XS_BYTES) {
        const float d = load_half(b);
        const uint8_t *scales = b + 66;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {
            float db[2];
            db[0] = d * (0.5f + (scales[ib32] & 0xf)) * 0.25f;
            db[1] = d * (0.5f + (scales[ib32] >> 4)) * 0.25f;
            for (int l = 0; l < 4; l++) {
                const uint16_t code = gk_load_le16(b + 2 + 2 * (4 * ib32 + l));
                const uint64_t g = gk_iq2xs_grid[code & 511];
                const uint8_t signs = gk_ksigns_iq2xs[code >> 9];
                for (int j = 0; j < 8; j++) dst[j] = signed_by(db[l / 2] * grid_u8(g, j), signs, j);
                dst += 8;
            }
        }
    }
}

/** gk_dequantize_iq2_s() : 10-bit grid indices (low byte in qs, 2 high bits in qh),
 *  explicit 8-bit sign bytes, 4-bit scale per 16 values. */
void gk_dequantize_iq2_s(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ2_S_BYTES) {
        const float d = load_half(b);
        const uint8_t *qs = b + 2;
        const uint8_t *signs = qs + QK_K / 8;
        const uint8_t *qh = b + 66;
        const uint8_t *scales = b + 74;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {
            float db[2];
            db[0] = d * (0.5f + (scales[ib32] & 0xf)) * 0.25f;
            db[1] = d * (0.5f + (scales[ib32] >> 4)) * 0.25f;
            for (int l = 0; l < 4; l++) {
                const float dl = db[l / 2];
                const int index = qs[l] | ((qh[ib32] << (8 - 2 * l)) & 0x300);
                const uint64_t g = gk_iq2s_grid[index];
                for (int j = 0; j < 8; j++) dst[j] = signed_by(dl * grid_u8(g, j), signs[l], j);
                dst += 8;
            }
            qs += 4;
            signs += 4;
        }
    }
}

/** gk_dequantize_iq3_xxs() : pairs of 4-value grid points; per 32 values one u32 word
 *  with four 7-bit sign patterns and a 4-bit scale. */
void gk_dequantize_iq3_xxs(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ3_XXS_BYTES) {
        const float d = load_half(b);
        const uint8_t *qs = b + 2;
        const uint8_t *words = b + 2 + QK_K / 4;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {
            const uint32_t aux = gk_load_le32(words + 4 * ib32);
            const float db = d * (0.5f + (aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; l++) {
                const uint8_t signs = gk_ksigns_iq2xs[(aux >> (7 * l)) & 127];
                const uint32_t g1 = gk_iq3xxs_grid[qs[2 * l]];
                const uint32_t g2 = gk_iq3xxs_grid[qs[2 * l + 1]];
                for (int j = 0; j < 4; j++) {
                    dst[j] = signed_by(db * grid_u8(g1, j), signs, j);
                    dst[j + 4] = signed_by(db * grid_u8(g2, j), signs, j + 4);
                }
                dst += 8;
            }
            qs += 8;
        }
    }
}

/* One 32-value half of an IQ3_S block pair: 8 grid points, 4 sign bytes, scale db. */
static void iq3s_group(const uint8_t *qs, uint8_t qh, const uint8_t *signs, float db,
                       float *dst) {
    for (int l = 0; l < 4; l++) {
        const uint32_t g1 = gk_iq3s_grid[qs[2 * l] | ((qh << (8 - 2 * l)) & 256)];
        const uint32_t g2 = gk_iq3s_grid[qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256)];
        for (int j = 0; j < 4; j++) {
            dst[j] = signed_by(db * grid_u8(g1, j), signs[l], j);
            dst[j + 4] = signed_by(db * grid_u8(g2, j), signs[l], j + 4);
        }
        dst += 8;
    }
}

/** gk_dequantize_iq3_s() : 9-bit grid indices, explicit signs, odd 4-bit scales. */
void gk_dequantize_iq3_s(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ3_S_BYTES) {
        const float d = load_half(b);
        const uint8_t *qs = b + 2;
        const uint8_t *qh = b + 66;
        const uint8_t *signs = b + 74;
        const uint8_t *scales = b + 106;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32 += 2) {
            const float db1 = d * (1 + 2 * (scales[ib32 / 2] & 0xf));
            const float db2 = d * (1 + 2 * (scales[ib32 / 2] >> 4));
            iq3s_group(qs, qh[0], signs, db1, dst);
            iq3s_group(qs + 8, qh[1], signs + 4, db2, dst + 32);
            dst += 64;
            qh += 2;
            qs += 16;
            signs += 8;
        }
    }
}

/** gk_dequantize_iq1_s() : 11-bit indices into the ternary grid, a 3-bit scale and a
 *  signed delta per 32 values (both in the u16 qh word). */
void gk_dequantize_iq1_s(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ1_S_BYTES) {
        const float d = load_half(b);
        const uint8_t *qs = b + 2;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const uint16_t qh = gk_load_le16(b + 34 + 2 * ib);
            const float dl = d * (2 * ((qh >> 12) & 7) + 1);
            const float delta = (qh & 0x8000) ? -GK_IQ1S_DELTA : GK_IQ1S_DELTA;
            for (int l = 0; l < 4; l++) {
                const uint64_t g = gk_iq1s_grid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
                for (int j = 0; j < 8; j++) dst[j] = dl * (gk_grid_byte(g, j) + delta);
                dst += 8;
            }
            qs += 4;
        }
    }
}

/** gk_dequantize_iq1_m() : as IQ1_S with a scale per 16 values and a delta sign per
 *  8; the block's f16 scale is spread over the top nibbles of the four scale words. */
void gk_dequantize_iq1_m(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ1_M_BYTES) {
        const uint8_t *qs = b;
        const uint8_t *qh = b + 32;
        uint16_t sc[4];
        for (int k = 0; k < 4; k++) sc[k] = gk_load_le16(b + 48 + 2 * k);
        const uint16_t scale_bits = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                               ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = gk_fp16_to_fp32(scale_bits);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const float dl1 = d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1);
            const float dl2 = d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1);
            uint16_t idx[4];
            float delta[4];
            idx[0] = (uint16_t)(qs[0] | ((qh[0] << 8) & 0x700));
            idx[1] = (uint16_t)(qs[1] | ((qh[0] << 4) & 0x700));
            idx[2] = (uint16_t)(qs[2] | ((qh[1] << 8) & 0x700));
            idx[3] = (uint16_t)(qs[3] | ((qh[1] << 4) & 0x700));
            delta[0] = (qh[0] & 0x08) ? -GK_IQ1M_DELTA : GK_IQ1M_DELTA;
            delta[1] = (qh[0] & 0x80) ? -GK_IQ1M_DELTA : GK_IQ1M_DELTA;
            delta[2] = (qh[1] & 0x08) ? -GK_IQ1M_DELTA : GK_IQ1M_DELTA;
            delta[3] = (qh[1] & 0x80) ? -GK_IQ1M_DELTA : GK_IQ1M_DELTA;
            for (int l = 0; l < 4; l++) {
                const uint64_t g = gk_iq1s_grid[idx[l]];
                const float dl = l < 2 ? dl1 : dl2;
                for (int j = 0; j < 8; j++) dst[j] = dl * (gk_grid_byte(g, j) + delta[l]);
                dst += 8;
            }
            qs += 4;
            qh += 2;
        }
    }
}

/** gk_dequantize_iq4_nl() : 4-bit indices into the 16 non-linear levels, one f16 scale
 *  per 32 values; byte j holds values j (low nibble) and j+16 (high nibble). */
void gk_dequantize_iq4_nl(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK4_NL; i++, b += IQ4_NL_BYTES) {
        const uint8_t *qs = b + 2;
        const float d = load_half(b);
        for (int j = 0; j < QK4_NL / 2; j++) {
            dst[j] = d * gk_kvalues_iq4nl[qs[j] & 0xf];
            dst[j + QK4_NL / 2] = d * gk_kvalues_iq4nl[qs[j] >> 4];
        }
        dst += QK4_NL;
    }
}

/** gk_dequantize_iq4_xs() : IQ4_NL levels with a 6-bit scale per 32 values (low 4 bits
 *  in scales_l, high 2 bits in scales_h) under one f16 super-block scale. */
void gk_dequantize_iq4_xs(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ4_XS_BYTES) {
        const float d = load_half(b);
        const uint16_t scales_h = gk_load_le16(b + 2);
        const uint8_t *scales_l = b + 4;
        const uint8_t *qs = b + 8;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            const int ls = ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) |
                           (((scales_h >> (2 * ib)) & 3) << 4);
            const float dl = d * (ls - 32);
            for (int j = 0; j < 16; j++) {
                dst[j] = dl * gk_kvalues_iq4nl[qs[j] & 0xf];
                dst[j + 16] = dl * gk_kvalues_iq4nl[qs[j] >> 4];
            }
            dst += 32;
            qs += 16;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Byte swapping: only members declared wider than a byte change.            */

/** gk_byteswap_iq2_xxs() : swaps d and the 32 u16 codes of each block. */
void gk_byteswap_iq2_xxs(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ2_XXS_BYTES) gk_swap16_run(b, 1 + 32);
}

/** gk_byteswap_iq2_xs() : swaps d and the 32 u16 codes; the scale bytes stay. */
void gk_byteswap_iq2_xs(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ2_XS_BYTES) gk_swap16_run(b, 1 + 32);
}

/** gk_byteswap_iq2_s() : swaps d only (all other members are byte arrays). */
void gk_byteswap_iq2_s(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ2_S_BYTES) gk_swap16_run(b, 1);
}

/** gk_byteswap_iq3_xxs() : swaps d only (qs, scale/sign words included, is u8[]). */
void gk_byteswap_iq3_xxs(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ3_XXS_BYTES) gk_swap16_run(b, 1);
}

/** gk_byteswap_iq3_s() : swaps d only. */
void gk_byteswap_iq3_s(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ3_S_BYTES) gk_swap16_run(b, 1);
}

/** gk_byteswap_iq1_s() : swaps d and the 8 u16 qh words. */
void gk_byteswap_iq1_s(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ1_S_BYTES) {
        gk_swap16_run(b, 1);
        gk_swap16_run(b + 34, 8);
    }
}

/** gk_byteswap_iq1_m() : no-op: block_iq1_m declares only byte arrays. */
void gk_byteswap_iq1_m(void *blocks, int64_t nblocks) {
    (void)blocks;
    (void)nblocks;
}

/** gk_byteswap_iq4_nl() : swaps d only. */
void gk_byteswap_iq4_nl(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ4_NL_BYTES) gk_swap16_run(b, 1);
}

/** gk_byteswap_iq4_xs() : swaps d and scales_h. */
void gk_byteswap_iq4_xs(void *blocks, int64_t nblocks) {
    uint8_t *b = blocks;
    for (int64_t i = 0; i < nblocks; i++, b += IQ4_XS_BYTES) gk_swap16_run(b, 2);
}

/* ------------------------------------------------------------------------- */
/* IQ4_NL / IQ4_XS quantization (ggml's quantize_row_iq4_nl_impl)            */

/* Index of the level nearest to x in the sorted table val of n entries; ties go up.
 * The comparisons are ggml's: float differences, not midpoints. */
static int best_index_int8(int n, const int8_t *val, float x) {
    if (x <= val[0]) return 0;
    if (x >= val[n - 1]) return n - 1;
    int ml = 0, mu = n - 1;
    while (mu - ml > 1) {
        int mav = (ml + mu) / 2;
        if (x < val[mav]) mu = mav;
        else ml = mav;
    }
    return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

/* Output fields of one IQ4 super-block. scales_h/scales_l are NULL for IQ4_NL. */
typedef struct {
    uint16_t *dh;
    uint8_t *q4;
    uint16_t *scales_h;
    uint8_t *scales_l;
} iq4_out;

/* Best scale for one block of block_size values by trying 2*ntry+1 scales. */
static float iq4_block_scale(const float *xb, int block_size, const float *weight,
                             uint8_t *Lb, const int8_t *values, int ntry, float max) {
    float d = ntry > 0 ? -max / values[0] : max / values[0];
    float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int j = 0; j < block_size; j++) {
        float al = id * xb[j];
        int l = best_index_int8(16, values, al);
        Lb[j] = (uint8_t)l;
        float q = values[l];
        float w = weight[j];
        sumqx += w * q * xb[j];
        sumq2 += w * q * q;
    }
    d = sumq2 > 0 ? sumqx / sumq2 : 0.f; /* guarded since ggml's 2026-03 fix */
    float best = d * sumqx;
    for (int itry = -ntry; itry <= ntry; itry++) {
        id = (itry + values[0]) / max;
        sumqx = sumq2 = 0;
        for (int j = 0; j < block_size; j++) {
            float al = id * xb[j];
            int l = best_index_int8(16, values, al);
            float q = values[l];
            float w = weight[j];
            sumqx += w * q * xb[j];
            sumq2 += w * q * q;
        }
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    return d;
}

/* One super-block of super_block_size values in blocks of block_size (32).
 * scales, weight: scratch; L: super_block_size level indices, kept across calls
 * (ggml leaves the indices of an all-zero block as they were). */
static void iq4_quantize_superblock(int super_block_size, int block_size, const float *x,
                                    iq4_out out, float *scales, float *weight, uint8_t *L,
                                    const int8_t *values, const float *quant_weights,
                                    int ntry) {
    float sigma2 = 0;
    for (int j = 0; j < super_block_size; j++) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / super_block_size;

    memset(out.q4, 0, (size_t)super_block_size / 2);
    *out.dh = gk_fp32_to_fp16(0.f);

    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < super_block_size / block_size; ib++) {
        const float *xb = x + ib * block_size;
        uint8_t *Lb = L + ib * block_size;
        if (quant_weights) {
            const float *qw = quant_weights + ib * block_size;
            for (int j = 0; j < block_size; j++) weight[j] = qw[j] * sqrtf(sigma2 + xb[j] * xb[j]);
        } else {
            for (int j = 0; j < block_size; j++) weight[j] = xb[j] * xb[j];
        }
        float amax = 0, max = 0;
        for (int j = 0; j < block_size; j++) {
            float ax = fabsf(xb[j]);
            if (ax > amax) {
                amax = ax;
                max = xb[j];
            }
        }
        if (amax < GK_GROUP_MAX_EPS) {
            scales[ib] = 0;
            continue;
        }
        float d = iq4_block_scale(xb, block_size, weight, Lb, values, ntry, max);
        scales[ib] = d;
        float abs_d = fabsf(d);
        if (abs_d > amax_scale) {
            amax_scale = abs_d;
            max_scale = d;
        }
    }

    if (super_block_size / block_size > 1) {
        int nb = super_block_size / block_size;
        memset(out.scales_h, 0, (size_t)((nb + 7) / 8) * sizeof(uint16_t));
        float d = -max_scale / 32;
        *out.dh = gk_fp32_to_fp16(d);
        float id = d ? 1 / d : 0.f;
        for (int ib = 0; ib < nb; ib++) {
            int l = gk_nearest_int(id * scales[ib]);
            l = GK_MAX(-32, GK_MIN(31, l));
            float dl = d * l;
            float idl = dl ? 1 / dl : 0.f;
            uint8_t *Lb = L + ib * block_size;
            const float *xb = x + ib * block_size;
            for (int j = 0; j < block_size; j++) Lb[j] = (uint8_t)best_index_int8(16, values, idl * xb[j]);
            l += 32;
            uint8_t l_l = l & 0xf;
            uint8_t l_h = (uint8_t)(l >> 4);
            if (ib % 2 == 0) out.scales_l[ib / 2] = l_l;
            else out.scales_l[ib / 2] |= (uint8_t)(l_l << 4);
            out.scales_h[ib / 8] |= (uint16_t)(l_h << 2 * (ib % 8));
        }
    } else {
        *out.dh = gk_fp32_to_fp16(scales[0]);
        if (ntry > 0) {
            float id = scales[0] ? 1 / scales[0] : 0;
            for (int j = 0; j < super_block_size; j++) L[j] = (uint8_t)best_index_int8(16, values, id * x[j]);
        }
    }

    for (int i = 0; i < super_block_size / 32; i++) {
        for (int j = 0; j < 16; j++) out.q4[16 * i + j] = (uint8_t)(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
    }
}

/** gk_quantize_iq4_nl() : ggml's quantize_iq4_nl (7 scale trials per 32 values);
 *  imatrix, when given, holds n_per_row weights shared by all rows. */
void gk_quantize_iq4_nl(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                        const float *imatrix) {
    const int64_t nblock = n_per_row / QK4_NL;
    uint8_t *row = dst;
    uint8_t L[QK4_NL] = { 0 };
    float weight[QK4_NL];
    float scale;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t ib = 0; ib < nblock; ib++) {
            uint8_t *blk = row + ib * IQ4_NL_BYTES;
            uint16_t dh;
            uint16_t unused_h;
            iq4_out out = { &dh, blk + 2, &unused_h, NULL };
            const float *qw = imatrix ? imatrix + QK4_NL * ib : NULL;
            iq4_quantize_superblock(QK4_NL, 32, src + QK4_NL * ib, out, &scale, weight, L,
                                    gk_kvalues_iq4nl, qw, 7);
            gk_store_le16(blk, dh);
        }
        src += n_per_row;
        row += nblock * IQ4_NL_BYTES;
    }
}

/** gk_quantize_iq4_xs() : ggml's quantize_iq4_xs (6-bit sub-block scales). */
void gk_quantize_iq4_xs(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                        const float *imatrix) {
    const int64_t nblock = n_per_row / QK_K;
    uint8_t *row = dst;
    uint8_t L[QK_K] = { 0 };
    float weight[32];
    float scales[QK_K / 32];
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t ib = 0; ib < nblock; ib++) {
            uint8_t *blk = row + ib * IQ4_XS_BYTES;
            uint16_t dh, scales_h;
            iq4_out out = { &dh, blk + 8, &scales_h, blk + 4 };
            const float *qw = imatrix ? imatrix + QK_K * ib : NULL;
            iq4_quantize_superblock(QK_K, 32, src + QK_K * ib, out, scales, weight, L,
                                    gk_kvalues_iq4nl, qw, 7);
            gk_store_le16(blk, dh);
            gk_store_le16(blk + 2, scales_h);
        }
        src += n_per_row;
        row += nblock * IQ4_XS_BYTES;
    }
}

/* ------------------------------------------------------------------------- */
/* IQ3 search tables (ggml's iq3xs_init_impl), built once into static storage */

#define IQ3_KMAP_SIZE 4096
/* Neighbour list capacities (u16 entries). ggml's grids need exactly 22825 (256
 * points, 2 distance shells) and 28317 (512 points, 3 shells); the build checks the
 * bound before every list and leaves the tables unusable rather than overflow. */
#define IQ3XXS_NEIGHBOURS_CAP 24576
#define IQ3S_NEIGHBOURS_CAP 32768

static uint32_t iq3xxs_grid_points[GK_IQ3XXS_GRID_SIZE];
static uint32_t iq3s_grid_points[GK_IQ3S_GRID_SIZE];
static int iq3xxs_map[IQ3_KMAP_SIZE];
static int iq3s_map[IQ3_KMAP_SIZE];
static uint16_t iq3xxs_neighbours[IQ3XXS_NEIGHBOURS_CAP];
static uint16_t iq3s_neighbours[IQ3S_NEIGHBOURS_CAP];
static uint32_t iq3xxs_neighbour_points[IQ3XXS_NEIGHBOURS_CAP];
static uint32_t iq3s_neighbour_points[IQ3S_NEIGHBOURS_CAP];

static gk_iq3_tables iq3xxs_tables = { GK_IQ3XXS_GRID_SIZE, 2, gk_iq3xxs_grid, iq3xxs_grid_points,
                                    iq3xxs_map, iq3xxs_neighbours, iq3xxs_neighbour_points,
                                    IQ3XXS_NEIGHBOURS_CAP,
                                    false };
static gk_iq3_tables iq3s_tables = { GK_IQ3S_GRID_SIZE, 3, gk_iq3s_grid, iq3s_grid_points,
                                  iq3s_map, iq3s_neighbours, iq3s_neighbour_points,
                                  IQ3S_NEIGHBOURS_CAP, false };

/* 3-bit level (0..7) of a byte of the stored grids: IQ3_S stores 2*l+1, IQ3_XXS
 * stores 4 + 8*l except 62 for the top level. */
static int iq3_level_of(int grid_size, uint8_t byte) {
    if (grid_size == GK_IQ3S_GRID_SIZE) return (byte - 1) / 2;
    return byte == 0x3e ? 7 : (byte - 4) / 8;
}

/* Orders (distance, index) pairs by distance, then index (a total order). */
static int iq3_pair_compare(const void *left, const void *right) {
    const int *l = left, *r = right;
    return l[0] < r[0] ? -1 : l[0] > r[0] ? 1 : l[1] < r[1] ? -1 : l[1] > r[1] ? 1 : 0;
}

/* Squared distances from the point of code `code` to every grid point, sorted. */
static void iq3_sorted_distances(const gk_iq3_tables *t, int code, int *dist2) {
    int8_t pos[4];
    for (int k = 0; k < 4; k++) pos[k] = (int8_t)(2 * ((code >> (3 * k)) & 7) + 1);
    for (int j = 0; j < t->grid_size; j++) {
        int d2 = 0;
        for (int k = 0; k < 4; k++) {
            int diff = gk_grid_byte(t->grid[j], k) - pos[k];
            d2 += diff * diff;
        }
        dist2[2 * j] = d2;
        dist2[2 * j + 1] = j;
    }
    qsort(dist2, (size_t)t->grid_size, 2 * sizeof(int), iq3_pair_compare);
}

/* Fills grid, map and neighbour lists of t; leaves t->ready false if the static
 * neighbour storage were too small (it is sized for ggml's grids). */
static void iq3_build(gk_iq3_tables *t) {
    for (int k = 0; k < t->grid_size; k++) {
        uint32_t point = 0;
        for (int i = 0; i < 4; i++) {
            int l = iq3_level_of(t->grid_size, (uint8_t)(t->source[k] >> (8 * i)));
            point |= (uint32_t)(2 * l + 1) << (8 * i);
        }
        t->grid[k] = point;
    }
    for (int i = 0; i < IQ3_KMAP_SIZE; i++) t->map[i] = -1;
    for (int k = 0; k < t->grid_size; k++) {
        int code = 0;
        for (int i = 0; i < 4; i++) code |= ((gk_grid_byte(t->grid[k], i) - 1) / 2) << (3 * i);
        t->map[code] = k;
    }
    int dist2[2 * GK_IQ3S_GRID_SIZE];
    int counter = 0;
    for (int code = 0; code < IQ3_KMAP_SIZE; code++) {
        if (t->map[code] >= 0) continue;
        iq3_sorted_distances(t, code, dist2);
        if (counter + 1 + t->grid_size > t->neighbours_cap) return; /* not ready */
        t->map[code] = -(counter + 1);
        int start = counter++;
        int n = 0, nhave = 1, d2 = dist2[0];
        for (int j = 0; j < t->grid_size; j++) {
            if (dist2[2 * j] > d2) {
                if (nhave == t->nwant) break;
                d2 = dist2[2 * j];
                nhave++;
            }
            t->neighbours[counter++] = (uint16_t)dist2[2 * j + 1];
            n++;
        }
        t->neighbours[start] = (uint16_t)n;
    }
    /* the grid point of every list member, for searches that read it in one load */
    for (int i = 0; i < counter; i++) t->neighbour_points[i] = t->grid[t->neighbours[i] % t->grid_size];
    t->ready = true;
}

static pthread_once_t iq3xxs_once = PTHREAD_ONCE_INIT;
static pthread_once_t iq3s_once = PTHREAD_ONCE_INIT;

static void build_iq3xxs_tables(void) { iq3_build(&iq3xxs_tables); }
static void build_iq3s_tables(void) { iq3_build(&iq3s_tables); }

/** gk_iq3xxs_tables() : the IQ3_XXS (256-point) search tables, built on first use;
 *  NULL if unusable. */
const gk_iq3_tables *gk_iq3xxs_tables(void) {
    pthread_once(&iq3xxs_once, build_iq3xxs_tables);
    return iq3xxs_tables.ready ? &iq3xxs_tables : NULL;
}

/** gk_iq3s_tables() : the IQ3_S (512-point) search tables, built on first use;
 *  NULL if unusable. */
const gk_iq3_tables *gk_iq3s_tables(void) {
    pthread_once(&iq3s_once, build_iq3s_tables);
    return iq3s_tables.ready ? &iq3s_tables : NULL;
}

/** gk_iq3_tables_ready() : builds the IQ3 search tables if needed and reports
 *  whether both are usable (for tests; quantizers call it implicitly). */
bool gk_iq3_tables_ready(void) {
    return gk_iq3xxs_tables() != NULL && gk_iq3s_tables() != NULL;
}

/* Nearest listed neighbour of an off-grid group of 4 (weighted squared error at
 * `scale`); writes its levels to L. ggml's iq3_find_best_neighbour. */
static int iq3_best_neighbour(const uint16_t *neighbours, const uint32_t *grid,
                              const float *xval, const float *weight, float scale, int8_t *L) {
    int num_neighbors = neighbours[0];
    float best_d2 = FLT_MAX;
    int grid_index = neighbours[1];
    for (int j = 1; j <= num_neighbors; j++) {
        const uint32_t pg = grid[neighbours[j]];
        float d2 = 0;
        for (int i = 0; i < 4; i++) {
            float q = gk_grid_byte(pg, i);
            float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            grid_index = neighbours[j];
        }
    }
    for (int i = 0; i < 4; i++) L[i] = (int8_t)((gk_grid_byte(grid[grid_index], i) - 1) / 2);
    return grid_index;
}

/* Levels of group k at inverse scale id, clamped to 0..7, and their point code. */
static int iq3_levels(const float *xval, float id, int8_t *L) {
    int code = 0;
    for (int i = 0; i < 4; i++) {
        int l = gk_nearest_int(0.5f * (id * xval[i] - 1));
        L[i] = (int8_t)GK_MAX(0, GK_MIN(7, l));
        code |= L[i] << (3 * i);
    }
    return code;
}

/* Grid index of the levels in L (4 values); -1 when not a grid point. */
static int iq3_index_of(const gk_iq3_tables *t, const int8_t *L) {
    int code = 0;
    for (int i = 0; i < 4; i++) code |= L[i] << (3 * i);
    return t->map[code] >= 0 ? t->map[code] : -1;
}

/* Weighted least-squares scale of xval for the levels L (q = 2*l+1). */
static void iq3_sums(const gk_iq3_group *g, const int8_t *L, float *sumqx, float *sumq2) {
    float sx = 0, s2 = 0;
    for (int i = 0; i < 32; i++) {
        float w = g->weight[i];
        float q = 2 * L[i] + 1;
        sx += w * g->xval[i] * q;
        s2 += w * q * q;
    }
    *sumqx = sx;
    *sumq2 = s2;
}

/* Scale search for 32 magnitudes xval (ggml's loop over is = -nis..nis); leaves the
 * best levels in g->L and which groups were on the grid in g->on_grid. */
static float iq3_search_scale(const gk_iq3_tables *t, gk_iq3_group *g, float max, int nis,
                              bool on_grid_init) {
    const int kMaxQ = 8;
    float best = 0;
    float scale = max / (2 * kMaxQ - 1);
    for (int k = 0; k < 8; k++) g->on_grid[k] = on_grid_init;
    for (int is = -nis; is <= nis; is++) {
        float id = (2 * kMaxQ - 1 + is * 0.2f) / max;
        float this_scale = 1 / id;
        for (int k = 0; k < 8; k++) {
            int code = iq3_levels(g->xval + 4 * k, id, g->Laux + 4 * k);
            g->on_grid_aux[k] = true;
            if (t->map[code] < 0) {
                g->on_grid_aux[k] = false;
                const uint16_t *nb = t->neighbours - t->map[code] - 1;
                iq3_best_neighbour(nb, t->grid, g->xval + 4 * k, g->waux + 4 * k, this_scale,
                                   g->Laux + 4 * k);
            }
        }
        float sumqx, sumq2;
        iq3_sums(g, g->Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(g->L, g->Laux, 32);
            memcpy(g->on_grid, g->on_grid_aux, 8 * sizeof(bool));
        }
    }
    return scale;
}

/* Re-projects off-grid groups (all groups when only_off_grid is false, as IQ3_S
 * does) at the final scale and refits the scale. */
static float iq3_refit(const gk_iq3_tables *t, gk_iq3_group *g, float scale, bool only_off_grid) {
    int n_not_ongrid = 0;
    for (int k = 0; k < 8; k++)
        if (!g->on_grid[k]) n_not_ongrid++;
    if (n_not_ongrid == 0 || !(scale > 0)) return scale;
    float id = 1 / scale;
    for (int k = 0; k < 8; k++) {
        if (only_off_grid && g->on_grid[k]) continue;
        int8_t lv[4];
        int code = iq3_levels(g->xval + 4 * k, id, lv);
        int grid_index = t->map[code];
        if (grid_index < 0) {
            const uint16_t *nb = t->neighbours - t->map[code] - 1;
            grid_index = iq3_best_neighbour(nb, t->grid, g->xval + 4 * k, g->waux + 4 * k, scale,
                                            g->L + 4 * k);
        }
        for (int i = 0; i < 4; i++) g->L[4 * k + i] = (int8_t)((gk_grid_byte(t->grid[grid_index], i) - 1) / 2);
    }
    float sumqx, sumq2;
    iq3_sums(g, g->L, &sumqx, &sumq2);
    if (sumq2 > 0) scale = sumqx / sumq2;
    return scale;
}

/* Importance of each of 32 values: imatrix-weighted, or x^2 without one. */
static void iq3_weights(gk_iq3_group *g, const float *xb, const float *qw, float sigma2) {
    if (qw) {
        for (int i = 0; i < 32; i++) g->weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < 32; i++) g->weight[i] = xb[i] * xb[i];
    }
    for (int i = 0; i < 32; i++) g->waux[i] = sqrtf(g->weight[i]);
}

/* Magnitudes of 8 values and their sign bits. */
static uint8_t iq3_split_signs(const float *xb, float *xval) {
    uint8_t s = 0;
    for (int i = 0; i < 8; i++) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            s |= (uint8_t)(1 << i);
        }
    }
    return s;
}

/* One IQ3_XXS super-block (ggml's quantize_row_iq3_xxs_impl with grid 256). */
static void iq3xxs_quantize_block(const gk_iq3_tables *t, gk_iq3_search_fn search,
                                  gk_iq3_group *gp, const float *xbl, const float *qwbl,
                                  uint8_t *blk) {
    float scales[QK_K / 32];
    uint8_t q3[3 * (QK_K / 8)];
    uint32_t words[QK_K / 32];
    gk_iq3_group g = *gp;
    memset(q3, 0, sizeof q3);
    memset(words, 0, sizeof words);
    gk_store_le16(blk, gk_fp32_to_fp16(0.f));

    float max_scale = 0;
    float sumx2 = 0;
    for (int i = 0; i < QK_K; i++) sumx2 += xbl[i] * xbl[i];
    float sigma2 = 2 * sumx2 / QK_K;

    for (int ib = 0; ib < QK_K / 32; ib++) {
        const float *xb = xbl + 32 * ib;
        iq3_weights(&g, xb, qwbl ? qwbl + 32 * ib : NULL, sigma2);
        uint8_t block_signs[4];
        for (int k = 0; k < 4; k++) {
            uint8_t s = iq3_split_signs(xb + 8 * k, g.xval + 8 * k);
            int nflip = __builtin_popcount(s);
            if (nflip % 2) {
                /* an odd count of negatives: flip the least important value */
                int imin = 0;
                float min = g.weight[8 * k] * xb[8 * k] * xb[8 * k];
                for (int i = 1; i < 8; i++) {
                    float ax = g.weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                    if (ax < min) {
                        min = ax;
                        imin = i;
                    }
                }
                g.xval[8 * k + imin] = -g.xval[8 * k + imin];
                s ^= (uint8_t)(1 << imin);
            }
            block_signs[k] = s & 127;
        }
        float max = g.xval[0];
        for (int i = 1; i < 32; i++) max = GK_MAX(max, g.xval[i]);
        memset(g.L, 0, sizeof g.L); /* levels start at 0 in every group (ggml since 2026-03) */
        if (max < GROUP_MAX_EPS_IQ3_XXS) {
            scales[ib] = 0;
            continue;
        }
        float scale = search(t, &g, max, 15, true);
        scale = iq3_refit(t, &g, scale, true);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; k++) block_signs[k] = (~block_signs[k]) & 127;
        }
        for (int k = 0; k < 8; k++) {
            int grid_index = iq3_index_of(t, g.L + 4 * k);
            q3[8 * ib + k] = (uint8_t)(grid_index < 0 ? 0 : grid_index);
        }
        words[ib] = block_signs[0] | (block_signs[1] << 7) | (block_signs[2] << 14) |
                    ((uint32_t)block_signs[3] << 21);
        scales[ib] = scale;
        max_scale = GK_MAX(max_scale, scale);
    }

    *gp = g;
    if (!max_scale) {
        memset(blk + 2, 0, IQ3_XXS_BYTES - 2);
        return;
    }
    float d = max_scale / 31;
    gk_store_le16(blk, gk_fp32_to_fp16(d * 1.0125f));
    float id = 1 / d;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        int l = gk_nearest_int(0.5f * (id * scales[ib] - 1));
        l = GK_MAX(0, GK_MIN(15, l));
        words[ib] |= (uint32_t)l << 28;
    }
    memcpy(blk + 2, q3, QK_K / 4);
    for (int ib = 0; ib < QK_K / 32; ib++) gk_store_le32(blk + 2 + QK_K / 4 + 4 * ib, words[ib]);
}

/* One IQ3_S super-block (ggml's quantize_row_iq3_s_impl, block size 32). Like ggml,
 * an all-zero group of 32 does not advance the qs/signs write positions. */
static void iq3s_quantize_block(const gk_iq3_tables *t, gk_iq3_search_fn search,
                                gk_iq3_group *gp, const float *xbl, const float *qwbl,
                                uint8_t *blk) {
    float scales[QK_K / 32];
    gk_iq3_group g = *gp;
    memset(blk, 0, IQ3_S_BYTES);
    gk_store_le16(blk, gk_fp32_to_fp16(0.f));
    uint8_t *qs = blk + 2;
    uint8_t *qh = blk + 66;
    uint8_t *signs = blk + 74;
    uint8_t *block_scales = blk + 106;

    float max_scale = 0;
    float sumx2 = 0;
    for (int i = 0; i < QK_K; i++) sumx2 += xbl[i] * xbl[i];
    float sigma2 = 2 * sumx2 / QK_K;

    for (int ib = 0; ib < QK_K / 32; ib++) {
        const float *xb = xbl + 32 * ib;
        iq3_weights(&g, xb, qwbl ? qwbl + 32 * ib : NULL, sigma2);
        uint8_t block_signs[4];
        for (int k = 0; k < 4; k++) block_signs[k] = iq3_split_signs(xb + 8 * k, g.xval + 8 * k);
        float max = g.xval[0];
        for (int i = 1; i < 32; i++) max = GK_MAX(max, g.xval[i]);
        memset(g.L, 0, sizeof g.L); /* levels start at 0 in every group (ggml since 2026-03) */
        if (!max) {
            scales[ib] = 0;
            continue;
        }
        float scale = search(t, &g, max, 9, false);
        scale = iq3_refit(t, &g, scale, false);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; k++) block_signs[k] = (uint8_t)~block_signs[k];
        }
        for (int k = 0; k < 8; k++) {
            int grid_index = iq3_index_of(t, g.L + 4 * k);
            if (grid_index < 0) grid_index = 0;
            qs[k] = (uint8_t)(grid_index & 255);
            qh[(ib * 8 + k) / 8] |= (uint8_t)((grid_index >> 8) << ((ib * 8 + k) % 8));
        }
        qs += 8;
        memcpy(signs, block_signs, 4);
        signs += 4;
        scales[ib] = scale;
        max_scale = GK_MAX(max_scale, scale);
    }

    *gp = g;
    if (!max_scale) return;
    float d = max_scale / 31;
    gk_store_le16(blk, gk_fp32_to_fp16(d * 1.033f));
    float id = 1 / d;
    for (int ib = 0; ib < QK_K / 32; ib += 2) {
        int l1 = gk_nearest_int(0.5f * (id * scales[ib] - 1));
        l1 = GK_MAX(0, GK_MIN(15, l1));
        int l2 = gk_nearest_int(0.5f * (id * scales[ib + 1] - 1));
        l2 = GK_MAX(0, GK_MIN(15, l2));
        block_scales[ib / 2] = (uint8_t)(l1 | (l2 << 4));
    }
}

/* Writes zero blocks: the fallback if the search tables are unavailable (they are
 * static and cannot fail in practice; see gk_iq3_tables_ready). */
static void zero_rows(void *dst, int64_t nrows, int64_t n_per_row, int block_bytes) {
    memset(dst, 0, (size_t)(nrows * (n_per_row / QK_K) * block_bytes));
}

/** gk_quantize_iq3_xxs_with() : gk_quantize_iq3_xxs with the scale search `search`
 *  (the scalar one or a vector equal). */
void gk_quantize_iq3_xxs_with(gk_iq3_search_fn search, const float *src, void *dst,
                              int64_t nrows, int64_t n_per_row, const float *imatrix) {
    const gk_iq3_tables *t = gk_iq3xxs_tables();
    if (t == NULL) {
        zero_rows(dst, nrows, n_per_row, IQ3_XXS_BYTES);
        return;
    }
    const int64_t nblock = n_per_row / QK_K;
    uint8_t *out = dst;
    gk_iq3_group group; /* scratch reused from block to block, as ggml's buffers */
    memset(&group, 0, sizeof group);
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t ib = 0; ib < nblock; ib++, out += IQ3_XXS_BYTES) {
            iq3xxs_quantize_block(t, search, &group, src + QK_K * ib, imatrix ? imatrix + QK_K * ib : NULL, out);
        }
        src += n_per_row;
    }
}

/** gk_quantize_iq3_s_with() : gk_quantize_iq3_s with the scale search `search`. */
void gk_quantize_iq3_s_with(gk_iq3_search_fn search, const float *src, void *dst,
                            int64_t nrows, int64_t n_per_row, const float *imatrix) {
    const gk_iq3_tables *t = gk_iq3s_tables();
    if (t == NULL) {
        zero_rows(dst, nrows, n_per_row, IQ3_S_BYTES);
        return;
    }
    const int64_t nblock = n_per_row / QK_K;
    uint8_t *out = dst;
    gk_iq3_group group; /* scratch reused from block to block, as ggml's buffers */
    memset(&group, 0, sizeof group);
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t ib = 0; ib < nblock; ib++, out += IQ3_S_BYTES) {
            iq3s_quantize_block(t, search, &group, src + QK_K * ib, imatrix ? imatrix + QK_K * ib : NULL, out);
        }
        src += n_per_row;
    }
}

/** gk_quantize_iq3_xxs() : ggml's quantize_iq3_xxs; imatrix optional (n_per_row
 *  weights shared by all rows). */
void gk_quantize_iq3_xxs(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                         const float *imatrix) {
    gk_quantize_iq3_xxs_with(iq3_search_scale, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq3_s() : ggml's quantize_iq3_s; imatrix optional. */
void gk_quantize_iq3_s(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    gk_quantize_iq3_s_with(iq3_search_scale, src, dst, nrows, n_per_row, imatrix);
}

/* ------------------------------------------------------------------------- */
/* IQ2_XXS / IQ2_XS / IQ2_S / IQ1_S / IQ1_M quantization                      */
/* (ggml's quantize_row_iq2_xxs/iq2_xs/iq2_s/iq1_s/iq1_m_impl, Sept 2026)   */
/*                                                                           */
/* Where ggml asserts or aborts (a point left off the grid) - which only      */
/* degenerate input such as all-zero importance can cause - these write the   */
/* nearest valid encoding instead (grid point 0). A group with no usable      */
/* split (IQ1) or no positive fit (IQ2_XXS) is a zero group, as in ggml.      */

#define GROUP_MAX_EPS_IQ2_S 1e-8f
#define GROUP_MAX_EPS_IQ1_M 1e-7f
#define GROUP_MAX_EPS_IQ1_S 1e-12f
#define IQ2_KMAXQ 3

/* Code of 8 two-bit levels, level i in bits 2i..2i+1. */
static inline int iq2_code(const int8_t *L) {
    int u = 0;
    for (int i = 0; i < 8; i++) u |= L[i] << (2 * i);
    return u;
}

/* The neighbour list of an off-grid code. */
static inline const uint16_t *iq2_neighbours_of(const gk_iq_search *t, int code) {
    return t->neighbours - t->map[code] - 1;
}

/* Listed neighbour nearest to xval at `scale` (weighted squared error); writes its
 * levels to L. ggml's iq2_find_best_neighbour. */
static int iq2_best_neighbour(const gk_iq_search *t, int code, const float *xval,
                              const float *weight, float scale, int8_t *L) {
    const uint16_t *nb = iq2_neighbours_of(t, code);
    int num_neighbors = nb[0];
    float best_d2 = FLT_MAX;
    int grid_index = num_neighbors > 0 ? nb[1] : 0; /* ggml asserts a find */
    for (int j = 1; j <= num_neighbors; j++) {
        const uint64_t pg = t->grid[nb[j]];
        float d2 = 0;
        for (int i = 0; i < 8; i++) {
            float q = gk_grid_byte(pg, i);
            float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            grid_index = nb[j];
        }
    }
    for (int i = 0; i < 8; i++) L[i] = (int8_t)((gk_grid_byte(t->grid[grid_index], i) - 1) / 2);
    return grid_index;
}

/* Grid index of the levels L (ggml aborts when they are off the grid). */
static inline int iq2_index_of(const gk_iq_search *t, const int8_t *L) {
    /* Degenerate input (no usable scale) can leave negative levels or a code past
     * the map, which ggml would shift or read out of bounds: no grid point, so 0. */
    for (int i = 0; i < 8; i++)
        if (L[i] < 0) return 0;
    int u = iq2_code(L);
    int gi = u < GK_IQ_SEARCH_MAP_SIZE ? t->map[u] : -1;
    return gi >= 0 ? gi : 0;
}

/* Levels (clamped to 0..2) of 8 magnitudes at inverse scale id, and their code. */
static inline int iq2_levels(const float *xval, float id, int8_t *L) {
    for (int i = 0; i < 8; i++) {
        int l = gk_nearest_int(0.5f * (id * xval[i] - 1));
        L[i] = (int8_t)GK_MAX(0, GK_MIN(IQ2_KMAXQ - 1, l));
    }
    return iq2_code(L);
}

/* Weighted sums of x*q and q*q for n magnitudes at levels L (q = 2*l+1). */
static void iq2_sums(int n, const float *weight, const float *xval, const int8_t *L,
                     float *sumqx, float *sumq2) {
    float sx = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        float w = weight[i];
        float q = 2 * L[i] + 1;
        sx += w * xval[i] * q;
        s2 += w * q * q;
    }
    *sumqx = sx;
    *sumq2 = s2;
}

/* Magnitudes of 8 values and their sign bits with an even count of negatives:
 * for an odd count the least important value (weight*x^2) takes the other sign.
 * Returns the 7 stored sign bits (the 8th is implied by parity). */
static uint8_t iq2_even_signs(const float *xb, const float *weight, float *xval) {
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; i++) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            nflip++;
            s |= (uint8_t)(1 << i);
        }
    }
    if (nflip % 2) {
        int imin = 0;
        float min = weight[imin] * xb[imin] * xb[imin];
        for (int i = 1; i < 8; i++) {
            float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s ^= (uint8_t)(1 << imin);
    }
    return s & 127;
}

/* Trial loop of the 2-bit searches (shared by IQ2_XXS's groups of 32 and the
 * groups of 16 of IQ2_XS / IQ2_S): see gk_iq2_search_fn in iquants.h. */
static float iq2_search_scale(const gk_iq_search *t, gk_iq2_state *g, int ngroups, int nis,
                              float max, float scale) {
    float best = 0;
    for (int is = -nis; is <= nis; is++) {
        float id = (2 * IQ2_KMAXQ - 1 + is * 0.1f) / max;
        float this_scale = 1 / id;
        for (int k = 0; k < ngroups; k++) {
            int u = iq2_levels(g->xval + 8 * k, id, g->Laux + 8 * k);
            g->on_grid_aux[k] = true;
            if (t->map[u] < 0) {
                g->on_grid_aux[k] = false;
                g->neighbour(t, u, g->xval + 8 * k, g->waux + 8 * k, this_scale, g->Laux + 8 * k);
            }
        }
        float sumqx, sumq2;
        iq2_sums(8 * ngroups, g->weight, g->xval, g->Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            memcpy(g->L, g->Laux, (size_t)(8 * ngroups));
            memcpy(g->on_grid, g->on_grid_aux, (size_t)ngroups * sizeof(bool));
        }
    }
    return scale;
}

/* One group of 32 for IQ2_XXS: scale search seeded by the positive-level fit,
 * then a re-projection of all 4 points at the final scale; the scale goes to
 * *scale_out. @return : false, with all levels 0, when the fit's largest level
 * value is not positive: the caller then leaves the group zero (ggml since
 * 2026-03; a NaN still goes through the search, as there). */
static bool iq2xxs_group(const gk_iq_search *t, gk_iq2_state *g, float *scale_out) {
    float scale = gk_make_qp_quants(32, IQ2_KMAXQ + 1, g->xval, (uint8_t *)g->L, g->weight);
    float eff_max = scale * IQ2_KMAXQ;
    if (eff_max <= 0) {
        memset(g->L, 0, 32);
        return false;
    }
    scale = g->search(t, g, 4, 6, eff_max, scale);
    if (scale > 0) {
        float id = 1 / scale;
        for (int k = 0; k < 4; k++) {
            int8_t lv[8];
            int u = iq2_levels(g->xval + 8 * k, id, lv);
            int grid_index = t->map[u];
            if (grid_index < 0)
                grid_index = g->neighbour(t, u, g->xval + 8 * k, g->waux + 8 * k, scale, g->L + 8 * k);
            for (int i = 0; i < 8; i++) g->L[8 * k + i] = (int8_t)((gk_grid_byte(t->grid[grid_index], i) - 1) / 2);
        }
        float sumqx, sumq2;
        iq2_sums(32, g->weight, g->xval, g->L, &sumqx, &sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    *scale_out = scale;
    return true;
}

/* One group of 16 for IQ2_XS / IQ2_S: 19 trial scales from max/5, then only the
 * off-grid points re-projected at the final scale. Returns the scale. */
static float iq2_group16(const gk_iq_search *t, gk_iq2_state *g, float max) {
    g->on_grid[0] = g->on_grid[1] = true;
    float scale = g->search(t, g, 2, 9, max, max / (2 * IQ2_KMAXQ - 1));
    int n_not_ongrid = !g->on_grid[0] + !g->on_grid[1];
    if (n_not_ongrid > 0 && scale > 0) {
        float id = 1 / scale;
        for (int k = 0; k < 2; k++) {
            if (g->on_grid[k]) continue;
            int u = iq2_levels(g->xval + 8 * k, id, g->L + 8 * k);
            if (t->map[u] < 0)
                g->neighbour(t, u, g->xval + 8 * k, g->waux + 8 * k, scale, g->L + 8 * k);
        }
        float sumqx, sumq2;
        iq2_sums(16, g->weight, g->xval, g->L, &sumqx, &sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

/* Sum of squares of the 256 values of a super-block. */
static float superblock_sumx2(const float *xbl) {
    float sumx2 = 0;
    for (int i = 0; i < QK_K; i++) sumx2 += xbl[i] * xbl[i];
    return sumx2;
}

/* Importance weights qw*sqrt(sigma2 + x^2) of n values. */
static void imatrix_weights(int n, const float *xb, const float *qw, float sigma2, float *weight) {
    for (int i = 0; i < n; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i] * xb[i]);
}

/* One IQ2_XXS super-block. */
static void iq2xxs_quantize_block(const gk_iq_search *t, gk_iq2_state *g, const float *xbl,
                                  const float *qwbl, uint8_t *blk) {
    float scales[QK_K / 32];
    uint32_t q2[2 * (QK_K / 32)];
    gk_store_le16(blk, gk_fp32_to_fp16(0.f));
    memset(q2, 0, sizeof q2);
    float max_scale = 0;
    float sigma2 = superblock_sumx2(xbl) / QK_K;

    for (int ib = 0; ib < QK_K / 32; ib++) {
        const float *xb = xbl + 32 * ib;
        imatrix_weights(32, xb, qwbl + 32 * ib, sigma2, g->weight);
        for (int i = 0; i < 32; i++) g->waux[i] = sqrtf(g->weight[i]);
        uint8_t block_signs[4];
        for (int k = 0; k < 4; k++)
            block_signs[k] = iq2_even_signs(xb + 8 * k, g->weight + 8 * k, g->xval + 8 * k);
        float max = g->xval[0];
        for (int i = 1; i < 32; i++) max = GK_MAX(max, g->xval[i]);
        if (max < GK_GROUP_MAX_EPS) {
            scales[ib] = 0;
            memset(g->L, 0, 32);
            continue;
        }
        float scale;
        if (!iq2xxs_group(t, g, &scale)) {
            scales[ib] = 0;
            continue;
        }
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; k++) block_signs[k] = (~block_signs[k]) & 127;
        }
        for (int k = 0; k < 4; k++) {
            int grid_index = iq2_index_of(t, g->L + 8 * k);
            q2[2 * ib] |= (uint32_t)grid_index << (8 * k);
            q2[2 * ib + 1] |= (uint32_t)block_signs[k] << (7 * k);
        }
        scales[ib] = scale;
        max_scale = GK_MAX(max_scale, scale);
    }

    if (!max_scale) {
        memset(blk + 2, 0, QK_K / 4);
        return;
    }
    float d = max_scale / 31;
    gk_store_le16(blk, gk_fp32_to_fp16(d));
    float id = 1 / d;
    for (int ib = 0; ib < QK_K / 32; ib++) {
        int l = gk_nearest_int(0.5f * (id * scales[ib] - 1));
        l = GK_MAX(0, GK_MIN(15, l));
        q2[2 * ib + 1] |= (uint32_t)l << 28;
    }
    for (int i = 0; i < 2 * (QK_K / 32); i++) gk_store_le32(blk + 2 + 4 * i, q2[i]);
}

/* One IQ2_XS super-block. */
static void iq2xs_quantize_block(const gk_iq_search *t, gk_iq2_state *g, const float *xbl,
                                 const float *qwbl, uint8_t *blk) {
    float scales[QK_K / 16];
    uint16_t q2[2 * (QK_K / 16)];
    uint8_t *block_scales = blk + 66;
    gk_store_le16(blk, gk_fp32_to_fp16(0.f));
    memset(q2, 0, sizeof q2);
    memset(block_scales, 0, QK_K / 32);
    float max_scale = 0;
    float sigma2 = superblock_sumx2(xbl) / QK_K;

    for (int ib = 0; ib < QK_K / 16; ib++) {
        const float *xb = xbl + 16 * ib;
        imatrix_weights(16, xb, qwbl + 16 * ib, sigma2, g->weight);
        for (int i = 0; i < 16; i++) g->waux[i] = sqrtf(g->weight[i]);
        uint8_t block_signs[2];
        for (int k = 0; k < 2; k++)
            block_signs[k] = iq2_even_signs(xb + 8 * k, g->weight + 8 * k, g->xval + 8 * k);
        float max = g->xval[0];
        for (int i = 1; i < 16; i++) max = GK_MAX(max, g->xval[i]);
        memset(g->L, 0, 16); /* levels start at 0 in every group (ggml since 2026-03) */
        if (max < GK_GROUP_MAX_EPS) {
            scales[ib] = 0;
            continue;
        }
        float scale = iq2_group16(t, g, max);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 2; k++) block_signs[k] = (~block_signs[k]) & 127;
        }
        for (int k = 0; k < 2; k++) {
            int grid_index = iq2_index_of(t, g->L + 8 * k);
            q2[2 * ib + k] = (uint16_t)(grid_index | (block_signs[k] << 9));
        }
        scales[ib] = scale;
        max_scale = GK_MAX(max_scale, scale);
    }

    if (!max_scale) {
        memset(blk + 2, 0, QK_K / 4);
        return;
    }
    float d = max_scale / 31;
    gk_store_le16(blk, gk_fp32_to_fp16(d));
    float id = 1 / d;
    for (int ib = 0; ib < QK_K / 16; ib++) {
        int l = gk_nearest_int(0.5f * (id * scales[ib] - 1));
        l = GK_MAX(0, GK_MIN(15, l));
        if (ib % 2 == 0) block_scales[ib / 2] = (uint8_t)l;
        else block_scales[ib / 2] |= (uint8_t)(l << 4);
    }
    for (int i = 0; i < 2 * (QK_K / 16); i++) gk_store_le16(blk + 2 + 2 * i, q2[i]);
}

/* One IQ2_S super-block (explicit 8 sign bits, 10-bit grid indices). */
static void iq2s_quantize_block(const gk_iq_search *t, gk_iq2_state *g, const float *xbl,
                                const float *qwbl, uint8_t *blk) {
    float scales[QK_K / 16];
    uint8_t *qs = blk + 2;
    uint8_t *qh = blk + 66;
    uint8_t *block_scales = blk + 74;
    memset(blk, 0, IQ2_S_BYTES);
    gk_store_le16(blk, gk_fp32_to_fp16(0.f));
    float max_scale = 0;
    float sigma2 = 2 * superblock_sumx2(xbl) / QK_K;

    for (int ib = 0; ib < QK_K / 16; ib++) {
        const float *xb = xbl + 16 * ib;
        if (qwbl) {
            imatrix_weights(16, xb, qwbl + 16 * ib, sigma2, g->weight);
        } else {
            for (int i = 0; i < 16; i++) g->weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
        }
        for (int i = 0; i < 16; i++) g->waux[i] = sqrtf(g->weight[i]);
        uint8_t block_signs[2];
        for (int k = 0; k < 2; k++) {
            uint8_t s = 0;
            for (int i = 0; i < 8; i++) {
                float v = xb[8 * k + i];
                if (v >= 0) {
                    g->xval[8 * k + i] = v;
                } else {
                    g->xval[8 * k + i] = -v;
                    s |= (uint8_t)(1 << i);
                }
            }
            block_signs[k] = s;
        }
        float max = g->xval[0];
        for (int i = 1; i < 16; i++) max = GK_MAX(max, g->xval[i]);
        memset(g->L, 0, 16); /* levels start at 0 in every group (ggml since 2026-03) */
        if (max < GROUP_MAX_EPS_IQ2_S) {
            scales[ib] = 0;
            continue;
        }
        float scale = iq2_group16(t, g, max);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 2; k++) block_signs[k] = (uint8_t)~block_signs[k];
        }
        for (int k = 0; k < 2; k++) {
            int grid_index = iq2_index_of(t, g->L + 8 * k);
            const int i8 = 2 * ib + k;
            qs[i8] = (uint8_t)(grid_index & 255);
            qh[i8 / 4] |= (uint8_t)((grid_index >> 8) << (2 * (i8 % 4)));
            qs[QK_K / 8 + i8] = block_signs[k];
        }
        scales[ib] = scale;
        max_scale = GK_MAX(max_scale, scale);
    }

    if (!max_scale) return;
    float d = max_scale / 31;
    gk_store_le16(blk, gk_fp32_to_fp16(d * 0.9875f));
    float id = 1 / d;
    for (int ib = 0; ib < QK_K / 16; ib++) {
        int l = gk_nearest_int(0.5f * (id * scales[ib] - 1));
        l = GK_MAX(0, GK_MIN(15, l));
        if (ib % 2 == 0) block_scales[ib / 2] = (uint8_t)l;
        else block_scales[ib / 2] |= (uint8_t)(l << 4);
    }
}

/* ---- IQ1 (ternary grid with a shifted zero point) ----------------------- */


/* Sorts the n values of xb ascending into s->value / s->order; equal values keep
 * their order (as the merge sort behind glibc's qsort does). */
static void iq1_sort(gk_iq1_state *s, const float *xb, int n) {
    for (int j = 0; j < n; j++) {
        float v = xb[j];
        int p = j;
        while (p > 0 && s->value[p - 1] > v) {
            s->value[p] = s->value[p - 1];
            s->order[p] = s->order[p - 1];
            p--;
        }
        s->value[p] = v;
        s->order[p] = j;
    }
}

/* Nearest listed neighbour under the shifted levels xg (weighted squared error at
 * `scale`), ggml's iq1_find_best_neighbour2; writes its levels to L. ggml falls back
 * to the whole grid if no neighbour scores below FLT_MAX (reading xval out of
 * range there); this fallback reads xval in range. */
/** gk_iq1_prefix_sums() : s->sumx / s->sumw[j] = sums of weight*x / weight over the
 *  first j values in sorted order (j = 0..n). */
void gk_iq1_prefix_sums(gk_iq1_state *s, const float *xb, int n) {
    s->sumx[0] = s->sumw[0] = 0;
    for (int j = 0; j < n; j++) {
        int i = s->order[j];
        s->sumx[j + 1] = s->sumx[j] + s->weight[i] * xb[i];
        s->sumw[j + 1] = s->sumw[j] + s->weight[i];
    }
}

int gk_iq1_best_neighbour(const gk_iq_search *t, int code, const float *xval,
                              const float *weight, float scale, const float *xg, int8_t *L) {
    const uint16_t *nb = iq2_neighbours_of(t, code);
    int num_neighbors = nb[0];
    float best_score = FLT_MAX;
    int grid_index = -1;
    for (int j = 1; j <= num_neighbors; j++) {
        const uint64_t pg = t->grid[nb[j]];
        float d2 = 0;
        for (int i = 0; i < 8; i++) {
            float q = xg[(gk_grid_byte(pg, i) - 1) / 2];
            float w = weight[i];
            float diff = scale * q - xval[i];
            d2 += w * diff * diff;
        }
        if (d2 < best_score) {
            best_score = d2;
            grid_index = nb[j];
        }
    }
    if (grid_index < 0) {
        for (int i = 0; i < t->grid_size; i++) {
            float d2 = 0;
            for (int j = 0; j < 8; j++) {
                float w = weight[j];
                float q = xg[(gk_grid_byte(t->grid[i], j) - 1) / 2];
                float diff = scale * q - xval[j];
                d2 += w * diff * diff;
            }
            if (d2 < best_score) {
                best_score = d2;
                grid_index = i;
            }
        }
    }
    if (grid_index < 0) grid_index = 0;
    for (int i = 0; i < 8; i++) L[i] = (int8_t)((gk_grid_byte(t->grid[grid_index], i) - 1) / 2);
    return grid_index;
}

/** gk_iq1_assign_levels() : levels 0/1/2 to the sorted positions split at i1, i2. */
void gk_iq1_assign_levels(gk_iq1_state *s, int n, int i1, int i2) {
    for (int j = 0; j < i1; j++) s->L[s->order[j]] = 0;
    for (int j = i1; j < i2; j++) s->L[s->order[j]] = 1;
    for (int j = i2; j < n; j++) s->L[s->order[j]] = 2;
}

/* Grid indices of the n/8 points of L; off-grid points are replaced by their best
 * neighbour under the shifted levels xx[k] of each point. Returns true if all
 * points were on the grid. */
static bool iq1_points(const gk_iq_search *t, gk_iq1_state *s, const float *xb, int n,
                       float scale, const float *const *xx) {
    bool all_on_grid = true;
    for (int k = 0; k < n / 8; k++) {
        int u = iq2_code(s->L + 8 * k);
        int grid_index = t->map[u];
        if (grid_index < 0) {
            all_on_grid = false;
            grid_index = s->neighbour(t, u, xb + 8 * k, s->weight + 8 * k, scale, xx[k],
                                            s->L + 8 * k);
        }
        s->index[k] = (uint16_t)grid_index;
    }
    return all_on_grid;
}

/* Least-squares scale of the chosen points (kept if both sums are positive). */
static float iq1_refit(const gk_iq_search *t, const gk_iq1_state *s, const float *xb, int n,
                       const float *const *xx, float scale) {
    float sumqx = 0, sumq2 = 0;
    for (int k = 0; k < n / 8; k++) {
        const uint64_t pg = t->grid[s->index[k]];
        for (int j = 0; j < 8; j++) {
            float w = s->weight[8 * k + j];
            float q = xx[k][(gk_grid_byte(pg, j) - 1) / 2];
            sumqx += w * q * xb[8 * k + j];
            sumq2 += w * q * q;
        }
    }
    if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
    return scale;
}

static const float iq1s_xp[3] = { -1 + GK_IQ1S_DELTA, GK_IQ1S_DELTA, 1 + GK_IQ1S_DELTA };
static const float iq1s_xm[3] = { -1 - GK_IQ1S_DELTA, -GK_IQ1S_DELTA, 1 - GK_IQ1S_DELTA };
static const float iq1m_xp[3] = { -1 + GK_IQ1M_DELTA, GK_IQ1M_DELTA, 1 + GK_IQ1M_DELTA };
static const float iq1m_xm[3] = { -1 - GK_IQ1M_DELTA, -GK_IQ1M_DELTA, 1 - GK_IQ1M_DELTA };

/* Exhaustive split search of one IQ1_S group of 32 (both delta signs); sets
 * s->L, returns the scale and the shift (+1/-1) in *shift, or 0 when ggml's search
 * would find no split. */
static float iq1s_split(gk_iq1_state *s, const float *xb, float max, int *shift) {
    const int n = 32;
    const float *x_p = iq1s_xp, *x_m = iq1s_xm;
    gk_iq1_prefix_sums(s, xb, n);
    const float *sumx = s->sumx, *sumw = s->sumw;
    float best_score = -FLT_MAX, scale = max; /* -FLT_MIN before ggml's 2025-08 fix */
    int besti1 = -1, besti2 = -1, best_shift = 0;
    for (int i1 = 0; i1 <= n; i1++) {
        for (int i2 = i1; i2 <= n; i2++) {
            float sumqx = (sumx[i1] - sumx[0]) * x_p[0] + (sumx[i2] - sumx[i1]) * x_p[1] +
                          (sumx[n] - sumx[i2]) * x_p[2];
            float sumq2 = (sumw[i1] - sumw[0]) * x_p[0] * x_p[0] +
                          (sumw[i2] - sumw[i1]) * x_p[1] * x_p[1] +
                          (sumw[n] - sumw[i2]) * x_p[2] * x_p[2];
            if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                scale = sumqx / sumq2;
                best_score = scale * sumqx;
                besti1 = i1;
                besti2 = i2;
                best_shift = 1;
            }
            sumqx = (sumx[i1] - sumx[0]) * x_m[0] + (sumx[i2] - sumx[i1]) * x_m[1] +
                    (sumx[n] - sumx[i2]) * x_m[2];
            sumq2 = (sumw[i1] - sumw[0]) * x_m[0] * x_m[0] + (sumw[i2] - sumw[i1]) * x_m[1] * x_m[1] +
                    (sumw[n] - sumw[i2]) * x_m[2] * x_m[2];
            if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                scale = sumqx / sumq2;
                best_score = scale * sumqx;
                besti1 = i1;
                besti2 = i2;
                best_shift = -1;
            }
        }
    }
    *shift = best_shift;
    if (besti1 < 0 || besti2 < 0 || best_shift == 0) return 0; /* no split: a zero group */
    gk_iq1_assign_levels(s, n, besti1, besti2);
    return scale;
}

/* One IQ1_S super-block (8 groups of 32). */
static void iq1s_quantize_block(const gk_iq_search *t, gk_iq1_state *s, const float *xbl,
                                const float *qwbl, uint8_t *blk) {
    uint8_t *qs = blk + 2;
    uint16_t qh[QK_K / 32];
    gk_store_le16(blk, gk_fp32_to_fp16(0.f));
    memset(qs, 0, QK_K / 8);
    memset(qh, 0, sizeof qh);
    float max_scale = 0;
    float sigma2 = 2 * superblock_sumx2(xbl) / QK_K;

    for (int ib = 0; ib < QK_K / 32; ib++) {
        const float *xb = xbl + 32 * ib;
        imatrix_weights(32, xb, qwbl + 32 * ib, sigma2, s->weight);
        float max = fabsf(xb[0]);
        for (int i = 1; i < 32; i++) max = GK_MAX(max, fabsf(xb[i]));
        int best_shift = 0;
        float scale = 0;
        if (!(max < GROUP_MAX_EPS_IQ1_S)) {
            iq1_sort(s, xb, 32);
            scale = s->split(s, xb, max, &best_shift);
        }
        if (best_shift == 0) {
            /* all zero, or no split scores: a zero group with shift +1 (ggml since
             * 2026-03; the shift was left from the previous block before) */
            s->scales[ib] = 0;
            s->shifts[ib] = 1;
            memset(s->L, 1, 32);
            continue;
        }
        if (scale < 0) {
            for (int j = 0; j < 32; j++) s->L[j] = (int8_t)(2 - s->L[j]);
            scale = -scale;
            best_shift = -best_shift;
        }
        const float *xs = best_shift == 1 ? iq1s_xp : iq1s_xm;
        const float *xx[4] = { xs, xs, xs, xs };
        if (!iq1_points(t, s, xb, 32, scale, xx)) scale = iq1_refit(t, s, xb, 32, xx, scale);
        uint16_t h = 0;
        for (int k = 0; k < 4; k++) {
            qs[4 * ib + k] = (uint8_t)(s->index[k] & 255);
            h |= (uint16_t)((s->index[k] >> 8) << (3 * k));
        }
        qh[ib] = h;
        s->scales[ib] = scale;
        s->shifts[ib] = (int8_t)best_shift;
        max_scale = GK_MAX(max_scale, scale);
    }

    if (max_scale) {
        float d = max_scale / 15;
        gk_store_le16(blk, gk_fp32_to_fp16(d * 1.125f));
        float id = 1 / d;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int l = gk_nearest_int(0.5f * (id * s->scales[ib] - 1));
            l = GK_MAX(0, GK_MIN(7, l));
            if (s->shifts[ib] == -1) l |= 8;
            qh[ib] |= (uint16_t)(l << 12);
        }
    }
    for (int ib = 0; ib < QK_K / 32; ib++) gk_store_le16(blk + 34 + 2 * ib, qh[ib]);
}

/* Shifted levels of point k (0 or 1) of an IQ1_M group of 16 for shift code
 * best_k (bit 1: first point uses x_m, bit 0: second point uses x_m). */
static const float *iq1m_levels_of(int best_k, int k) {
    if (k == 0) return best_k < 2 ? iq1m_xp : iq1m_xm;
    return best_k % 2 == 0 ? iq1m_xp : iq1m_xm;
}

/* Exhaustive split search of one IQ1_M group of 16 over the 4 delta-sign
 * combinations; sets s->L, returns the scale and the combination in *best_kp (-1
 * when ggml's search would find none). */
static float iq1m_split(gk_iq1_state *s, const float *xb, float max, int *best_kp) {
    const int n = 16;
    float best_score = -FLT_MAX, scale = max; /* -FLT_MIN before ggml's 2025-08 fix */
    int besti1 = -1, besti2 = -1, best_k = -1;
    for (int i1 = 0; i1 <= n; i1++) {
        for (int i2 = i1; i2 <= n; i2++) {
            float sumqx[4] = { 0, 0, 0, 0 }, sumq2[4] = { 0, 0, 0, 0 };
            for (int j = 0; j < n; j++) {
                int i = s->order[j];
                int lv = j < i1 ? 0 : j < i2 ? 1 : 2;
                int half = i < n / 2 ? 0 : 1;
                for (int k = 0; k < 4; k++) {
                    /* the first half follows bit 1 of k, the second half bit 0 */
                    bool minus = half == 0 ? k >= 2 : (k % 2) == 1;
                    float xq = minus ? iq1m_xm[lv] : iq1m_xp[lv];
                    sumqx[k] += s->weight[i] * xq * xb[i];
                    sumq2[k] += s->weight[i] * xq * xq;
                }
            }
            for (int k = 0; k < 4; k++) {
                if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
                    scale = sumqx[k] / sumq2[k];
                    best_score = scale * sumqx[k];
                    besti1 = i1;
                    besti2 = i2;
                    best_k = k;
                }
            }
        }
    }
    *best_kp = best_k;
    if (besti1 < 0 || besti2 < 0 || best_k < 0) return 0; /* no split: a zero group */
    gk_iq1_assign_levels(s, n, besti1, besti2);
    return scale;
}

/* Weights of n values for IQ1_M: imatrix-weighted, or x^2 without one. */
static void iq1m_weights(int n, const float *xb, const float *qw, float sigma2, float *weight) {
    if (qw) imatrix_weights(n, xb, qw, sigma2, weight);
    else
        for (int i = 0; i < n; i++) weight[i] = xb[i] * xb[i];
}

/* One IQ1_M super-block (16 groups of 16; the f16 scale spread over the top
 * nibbles of the four scale words). */
static void iq1m_quantize_block(const gk_iq_search *t, gk_iq1_state *s, const float *xbl,
                                const float *qwbl, uint8_t *blk) {
    static const uint8_t masks[4] = { 0x00, 0x80, 0x08, 0x88 };
    uint8_t *qs = blk;
    uint8_t *qh = blk + 32;
    uint16_t sc[4] = { 0, 0, 0, 0 };
    memset(blk, 0, IQ1_M_BYTES);
    float max_scale = 0;
    float sigma2 = 2 * superblock_sumx2(xbl) / QK_K;

    for (int ib = 0; ib < QK_K / 16; ib++) {
        const float *xb = xbl + 16 * ib;
        iq1m_weights(16, xb, qwbl ? qwbl + 16 * ib : NULL, sigma2, s->weight);
        float max = fabsf(xb[0]);
        for (int i = 1; i < 16; i++) max = GK_MAX(max, fabsf(xb[i]));
        int best_k = -1;
        float scale = 0;
        if (!(max < GROUP_MAX_EPS_IQ1_M)) {
            iq1_sort(s, xb, 16);
            scale = s->split(s, xb, max, &best_k);
        }
        if (best_k < 0) {
            /* all zero, or no split scores: a zero group with shift code 0 (ggml
             * since 2026-03; the code was left from the previous block before) */
            s->scales[ib] = 0;
            s->shifts[ib] = 0;
            memset(s->L, 1, 16);
            continue;
        }
        if (scale < 0) {
            for (int j = 0; j < 16; j++) s->L[j] = (int8_t)(2 - s->L[j]);
            scale = -scale;
            best_k = 3 - best_k;
        }
        const float *xx[2] = { iq1m_levels_of(best_k, 0), iq1m_levels_of(best_k, 1) };
        if (!iq1_points(t, s, xb, 16, scale, xx)) scale = iq1_refit(t, s, xb, 16, xx, scale);
        qs[2 * ib] = (uint8_t)(s->index[0] & 255);
        qs[2 * ib + 1] = (uint8_t)(s->index[1] & 255);
        qh[ib] = (uint8_t)((s->index[0] >> 8) | ((s->index[1] >> 8) << 4));
        s->scales[ib] = scale;
        s->shifts[ib] = (int8_t)best_k;
        max_scale = GK_MAX(max_scale, scale);
    }

    if (!max_scale) return;
    float d = max_scale / 15;
    float id = 1 / d;
    float sumqx_f = 0, sumq2_f = 0;
    for (int ib = 0; ib < QK_K / 16; ib++) {
        int l = gk_nearest_int(0.5f * (id * s->scales[ib] - 1));
        l = GK_MAX(0, GK_MIN(7, l));
        sc[ib / 4] |= (uint16_t)(l << (3 * (ib % 4)));
        qh[ib] |= masks[s->shifts[ib] & 3];
        const float *xb = xbl + 16 * ib;
        iq1m_weights(16, xb, qwbl ? qwbl + 16 * ib : NULL, sigma2, s->weight);
        for (int k = 0; k < 2; k++) {
            const float *xx = iq1m_levels_of(s->shifts[ib], k);
            const uint64_t pg = t->grid[qs[2 * ib + k] + ((qh[ib] << (8 - 4 * k)) & 0x700)];
            for (int j = 0; j < 8; j++) {
                float w = s->weight[8 * k + j];
                float q = xx[(gk_grid_byte(pg, j) - 1) / 2] * (2 * l + 1);
                sumqx_f += w * q * xb[8 * k + j];
                sumq2_f += w * q * q;
            }
        }
    }
    if (sumq2_f > 0) d = sumqx_f / sumq2_f;
    uint16_t s16 = gk_fp32_to_fp16(d * 1.1125f);
    sc[0] |= (uint16_t)((s16 & 0x000f) << 12);
    sc[1] |= (uint16_t)((s16 & 0x00f0) << 8);
    sc[2] |= (uint16_t)((s16 & 0x0f00) << 4);
    sc[3] |= (uint16_t)(s16 & 0xf000);
    for (int k = 0; k < 4; k++) gk_store_le16(blk + 48 + 2 * k, sc[k]);
}

/* ---- entry points -------------------------------------------------------- */

/* Shared row loop of the 2-bit / 1-bit quantizers. block_fn quantizes one
 * super-block with its 256 weights (NULL only where the type allows it). */
typedef void (*iq_block_fn)(const gk_iq_search *t, void *state, const float *xbl,
                            const float *qwbl, uint8_t *blk);

static void iq_quantize_rows(uint32_t type, iq_block_fn block_fn, void *state, int block_bytes,
                             const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                             const float *imatrix) {
    const gk_iq_search *t = gk_iq_search_get(type);
    if (t == NULL) {
        zero_rows(dst, nrows, n_per_row, block_bytes);
        return;
    }
    const int64_t nblock = n_per_row / QK_K;
    uint8_t *out = dst;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t ib = 0; ib < nblock; ib++, out += block_bytes)
            block_fn(t, state, src + QK_K * ib, imatrix ? imatrix + QK_K * ib : NULL, out);
        src += n_per_row;
    }
}

static void iq2xxs_block(const gk_iq_search *t, void *st, const float *x, const float *qw, uint8_t *b) {
    iq2xxs_quantize_block(t, st, x, qw, b);
}
static void iq2xs_block(const gk_iq_search *t, void *st, const float *x, const float *qw, uint8_t *b) {
    iq2xs_quantize_block(t, st, x, qw, b);
}
static void iq2s_block(const gk_iq_search *t, void *st, const float *x, const float *qw, uint8_t *b) {
    iq2s_quantize_block(t, st, x, qw, b);
}
static void iq1s_block(const gk_iq_search *t, void *st, const float *x, const float *qw, uint8_t *b) {
    iq1s_quantize_block(t, st, x, qw, b);
}
static void iq1m_block(const gk_iq_search *t, void *st, const float *x, const float *qw, uint8_t *b) {
    iq1m_quantize_block(t, st, x, qw, b);
}

/** gk_quantize_iq2_xxs() : ggml's quantize_iq2_xxs. Requires imatrix (n_per_row
 *  weights shared by all rows); without one (ggml asserts) the rows are zeroed -
 *  callers must refuse the tensor beforehand (gk_type_info.needs_imatrix). */
void gk_quantize_iq2_xxs(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                        const float *imatrix) {
    gk_quantize_iq2_xxs_with(iq2_search_scale, iq2_best_neighbour, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq2_xxs_with() : gk_quantize_iq2_xxs with the trial loop `search` and the
 *  neighbour search `neighbour`. */
void gk_quantize_iq2_xxs_with(gk_iq2_search_fn search, gk_iq2_neighbour_fn neighbour, const float *src, void *dst, int64_t nrows,
                          int64_t n_per_row, const float *imatrix) {
    if (imatrix == NULL) {
        zero_rows(dst, nrows, n_per_row, IQ2_XXS_BYTES);
        return;
    }
    gk_iq2_state state;
    memset(&state, 0, sizeof state);
    state.search = search;
    state.neighbour = neighbour;
    iq_quantize_rows(GK_TYPE_IQ2_XXS, iq2xxs_block, &state, IQ2_XXS_BYTES, src, dst, nrows,
                     n_per_row, imatrix);
}

/** gk_quantize_iq2_xs() : ggml's quantize_iq2_xs. Requires imatrix (as IQ2_XXS). */
void gk_quantize_iq2_xs(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                        const float *imatrix) {
    gk_quantize_iq2_xs_with(iq2_search_scale, iq2_best_neighbour, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq2_xs_with() : gk_quantize_iq2_xs with the trial loop `search` and the
 *  neighbour search `neighbour`. */
void gk_quantize_iq2_xs_with(gk_iq2_search_fn search, gk_iq2_neighbour_fn neighbour, const float *src, void *dst, int64_t nrows,
                          int64_t n_per_row, const float *imatrix) {
    if (imatrix == NULL) {
        zero_rows(dst, nrows, n_per_row, IQ2_XS_BYTES);
        return;
    }
    gk_iq2_state state;
    memset(&state, 0, sizeof state);
    state.search = search;
    state.neighbour = neighbour;
    iq_quantize_rows(GK_TYPE_IQ2_XS, iq2xs_block, &state, IQ2_XS_BYTES, src, dst, nrows,
                     n_per_row, imatrix);
}

/** gk_quantize_iq2_s() : ggml's quantize_iq2_s; imatrix optional (without one the
 *  weights are sigma2/4 + x^2). */
void gk_quantize_iq2_s(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    gk_quantize_iq2_s_with(iq2_search_scale, iq2_best_neighbour, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq2_s_with() : gk_quantize_iq2_s with the trial loop `search` and the
 *  neighbour search `neighbour`. */
void gk_quantize_iq2_s_with(gk_iq2_search_fn search, gk_iq2_neighbour_fn neighbour, const float *src, void *dst, int64_t nrows,
                            int64_t n_per_row, const float *imatrix) {
    gk_iq2_state state;
    memset(&state, 0, sizeof state);
    state.search = search;
    state.neighbour = neighbour;
    iq_quantize_rows(GK_TYPE_IQ2_S, iq2s_block, &state, IQ2_S_BYTES, src, dst, nrows, n_per_row,
                     imatrix);
}

/** gk_quantize_iq1_s() : ggml's quantize_iq1_s. Requires imatrix (as IQ2_XXS). */
void gk_quantize_iq1_s(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    gk_quantize_iq1_s_with(iq1s_split, gk_iq1_best_neighbour, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq1_s_with() : gk_quantize_iq1_s with the split search `split` and
 *  the neighbour search `neighbour`. */
void gk_quantize_iq1_s_with(gk_iq1_split_fn split, gk_iq1_neighbour_fn neighbour, const float *src,
                            void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix) {
    if (imatrix == NULL) {
        zero_rows(dst, nrows, n_per_row, IQ1_S_BYTES);
        return;
    }
    gk_iq1_state state;
    memset(&state, 0, sizeof state);
    state.split = split;
    state.neighbour = neighbour;
    iq_quantize_rows(GK_TYPE_IQ1_S, iq1s_block, &state, IQ1_S_BYTES, src, dst, nrows, n_per_row,
                     imatrix);
}

/** gk_quantize_iq1_m() : ggml's quantize_iq1_m; imatrix optional (without one the
 *  weights are x^2), though llama-quantize demands one for most tensors. */
void gk_quantize_iq1_m(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                       const float *imatrix) {
    gk_quantize_iq1_m_with(iq1m_split, gk_iq1_best_neighbour, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq1_m_with() : gk_quantize_iq1_m with the split search `split` and
 *  the neighbour search `neighbour`. */
void gk_quantize_iq1_m_with(gk_iq1_split_fn split, gk_iq1_neighbour_fn neighbour, const float *src,
                            void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix) {
    gk_iq1_state state;
    memset(&state, 0, sizeof state);
    state.split = split;
    state.neighbour = neighbour;
    iq_quantize_rows(GK_TYPE_IQ1_M, iq1m_block, &state, IQ1_M_BYTES, src, dst, nrows, n_per_row,
                     imatrix);
}
