/*
 * legacy.c - kernels of ggml's first block formats: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1.
 *
 * 32 values per block with an fp16 scale (and an fp16 min or sum). Without an
 * importance matrix quantization follows ggml's quantize_row_*_ref; with one, the
 * 4- and 5-bit types follow ggml's weighted row quantizers (make_qx_quants for the
 * symmetric types, make_qkx3_quants for the ones with a min). Q8_0 and Q8_1 ignore
 * the importance matrix as ggml does. Blocks are accessed through local copies so
 * that callers may pass unaligned buffers.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "types/blocks.h"
#include "types/kernels.h"
#include "types/quant_util.h"

#define QK QK8_0 /* values per block of every legacy type (blocks.h) */

/* ---- shared pieces ---------------------------------------------------------------- */

/* The value of largest magnitude in x[0..n) (the first one on ties), 0 if all zero. */
static float signed_absmax(const float *x, int n) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < n; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

/* Smallest and largest of x[0..n). */
static void min_and_max(const float *x, int n, float *min_out, float *max_out) {
    float min = FLT_MAX;
    float max = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
    *min_out = min;
    *max_out = max;
}

/* Largest |x| of x[0..n). */
static float abs_max(const float *x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; j++) amax = GK_MAX(amax, fabsf(x[j]));
    return amax;
}

/* Pack 32 five-bit levels: low nibbles into qs (element j and j+16 share a byte),
 * fifth bits into the 32-bit little-endian mask qh. */
static void pack_five_bit(const uint8_t level[QK], uint8_t qs[QK / 2], uint8_t qh_out[4]) {
    uint32_t qh = 0;
    for (int j = 0; j < QK / 2; j++) {
        const uint8_t lo = level[j];
        const uint8_t hi = level[j + QK / 2];
        qs[j] = (uint8_t)((lo & 0x0F) | ((hi & 0x0F) << 4));
        qh |= ((lo & 0x10u) >> 4) << (j + 0);
        qh |= ((hi & 0x10u) >> 4) << (j + QK / 2);
    }
    memcpy(qh_out, &qh, 4);
}

/* Fifth bit of element j (0..31) from the mask qh, as 0 or 0x10. */
static inline int fifth_bit(uint32_t qh, int j) { return (int)((qh >> j) << 4) & 0x10; }

/* Per-row weights of ggml's weighted legacy quantizers:
 * w[j] = imatrix[j] * sqrt(sigma2 + x[j]^2), sigma2 the mean square of the row. */
static float row_sigma2(const float *x, int64_t n_per_row) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n_per_row; ++j) sum_x2 += x[j] * x[j];
    return sum_x2 / n_per_row;
}

static void block_weights(const float *xb, const float *qw, float sigma2, float weight[QK]) {
    for (int j = 0; j < QK; ++j) weight[j] = qw[j] * sqrtf(sigma2 + xb[j] * xb[j]);
}

/* The weighted quantizers search BATCH blocks of a row at once (gk_searches). */
#define BATCH 64

/* Weights of blocks ib0.. of a row of nb blocks, at most BATCH. @return : how many. */
static int batch_weights(const float *x, const float *qw, int64_t ib0, int64_t nb, float sigma2,
                         float *weight) {
    const int m = nb - ib0 < BATCH ? (int)(nb - ib0) : BATCH;
    for (int k = 0; k < m; ++k)
        block_weights(x + QK * (ib0 + k), qw + QK * (ib0 + k), sigma2, weight + QK * k);
    return m;
}

/* ---- Q4_0 ---------------------------------------------------------------------------- */

/* ggml's quantize_row_q4_0_ref over nb blocks. */
static void q4_0_reference(const float *x, uint8_t *out, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        block_q4_0 b;
        const float max = signed_absmax(x, QK);
        const float d = max / -8;
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        for (int j = 0; j < QK / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[QK / 2 + j] * id;
            const uint8_t xi0 = GK_MIN(15, (int8_t)gk_trunc_i32(x0 + 8.5f));
            const uint8_t xi1 = GK_MIN(15, (int8_t)gk_trunc_i32(x1 + 8.5f));
            b.qs[j] = (uint8_t)(xi0 | (xi1 << 4));
        }
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/* ggml's quantize_row_q4_0_impl with weights: one row. */
static void q4_0_weighted_row(const gk_searches *s, const float *x, uint8_t *out, int64_t n_per_row,
                              const float *qw) {
    float weight[BATCH * QK], d[BATCH];
    int8_t L[BATCH * QK];
    const float sigma2 = row_sigma2(x, n_per_row);
    for (int64_t ib0 = 0; ib0 < n_per_row / QK; ib0 += BATCH) {
        const int m = batch_weights(x, qw, ib0, n_per_row / QK, sigma2, weight);
        s->qx(m, QK, 8, x + QK * ib0, weight, L, d);
        for (int k = 0; k < m; ++k) {
            block_q4_0 b;
            const int8_t *Lk = L + QK * k;
            b.d = gk_fp32_to_fp16(d[k]);
            for (int j = 0; j < QK / 2; ++j) b.qs[j] = (uint8_t)(Lk[j] | (Lk[j + QK / 2] << 4));
            memcpy(out + (ib0 + k) * sizeof b, &b, sizeof b);
        }
    }
}

/** gk_quantize_q4_0_with() : as gk_quantize_q4_0, with the group searches s. */
void gk_quantize_q4_0_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    if (imatrix == NULL) {
        q4_0_reference(src, dst, nrows * n_per_row / QK);
        return;
    }
    const int64_t row_bytes = n_per_row / QK * (int64_t)sizeof(block_q4_0);
    for (int64_t r = 0; r < nrows; r++)
        q4_0_weighted_row(s, src + r * n_per_row, (uint8_t *)dst + r * row_bytes, n_per_row, imatrix);
}

/** gk_quantize_q4_0() : rows of F32 to Q4_0 (weighted by imatrix when given). */
void gk_quantize_q4_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q4_0_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q4_0() : n values (a multiple of 32) from Q4_0 blocks. */
void gk_dequantize_q4_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, dst += QK) {
        block_q4_0 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        for (int j = 0; j < QK / 2; ++j) {
            const int x0 = (b.qs[j] & 0x0F) - 8;
            const int x1 = (b.qs[j] >> 4) - 8;
            dst[j] = x0 * d;
            dst[j + QK / 2] = x1 * d;
        }
    }
}

/** gk_byteswap_q4_0() : swap the fp16 scale of each block. */
void gk_byteswap_q4_0(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q4_0)) {
        gk_swap16_run(p + offsetof(block_q4_0, d), 1);
    }
}

/* ---- Q4_1 ---------------------------------------------------------------------------- */

/* ggml's quantize_row_q4_1_ref over nb blocks. */
static void q4_1_reference(const float *x, uint8_t *out, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        block_q4_1 b;
        float min, max;
        min_and_max(x, QK, &min, &max);
        const float d = (max - min) / ((1 << 4) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        b.m = gk_fp32_to_fp16(min);
        for (int j = 0; j < QK / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[QK / 2 + j] - min) * id;
            const uint8_t xi0 = GK_MIN(15, (int8_t)gk_trunc_i32(x0 + 0.5f));
            const uint8_t xi1 = GK_MIN(15, (int8_t)gk_trunc_i32(x1 + 0.5f));
            b.qs[j] = (uint8_t)(xi0 | (xi1 << 4));
        }
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/* ggml's quantize_row_q4_1_impl with weights: one row. */
static void q4_1_weighted_row(const gk_searches *s, const float *x, uint8_t *out, int64_t n_per_row,
                              const float *qw) {
    float weight[BATCH * QK], d[BATCH], min[BATCH];
    uint8_t L[BATCH * QK];
    const float sigma2 = row_sigma2(x, n_per_row);
    for (int64_t ib0 = 0; ib0 < n_per_row / QK; ib0 += BATCH) {
        const int m = batch_weights(x, qw, ib0, n_per_row / QK, sigma2, weight);
        s->qkx3(m, QK, 15, x + QK * ib0, weight, L, d, min, -0.9f, 0.05f, 36, false);
        for (int k = 0; k < m; ++k) {
            block_q4_1 b;
            const uint8_t *Lk = L + QK * k;
            b.d = gk_fp32_to_fp16(d[k]);
            b.m = gk_fp32_to_fp16(-min[k]);
            for (int j = 0; j < QK / 2; ++j) b.qs[j] = (uint8_t)(Lk[j] | (Lk[j + QK / 2] << 4));
            memcpy(out + (ib0 + k) * sizeof b, &b, sizeof b);
        }
    }
}

/** gk_quantize_q4_1_with() : as gk_quantize_q4_1, with the group searches s. */
void gk_quantize_q4_1_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    if (imatrix == NULL) {
        q4_1_reference(src, dst, nrows * n_per_row / QK);
        return;
    }
    const int64_t row_bytes = n_per_row / QK * (int64_t)sizeof(block_q4_1);
    for (int64_t r = 0; r < nrows; r++)
        q4_1_weighted_row(s, src + r * n_per_row, (uint8_t *)dst + r * row_bytes, n_per_row, imatrix);
}

/** gk_quantize_q4_1() : rows of F32 to Q4_1 (weighted by imatrix when given). */
void gk_quantize_q4_1(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q4_1_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q4_1() : n values (a multiple of 32) from Q4_1 blocks. */
void gk_dequantize_q4_1(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, dst += QK) {
        block_q4_1 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        const float m = gk_fp16_to_fp32(b.m);
        const bool nan_m = m != m;   /* both NaN: the product's (gk_add_nan_first) */
        for (int j = 0; j < QK / 2; ++j) {
            const int x0 = b.qs[j] & 0x0F;
            const int x1 = b.qs[j] >> 4;
            dst[j] = nan_m ? gk_add_nan_first(x0 * d, m) : x0 * d + m;
            dst[j + QK / 2] = nan_m ? gk_add_nan_first(x1 * d, m) : x1 * d + m;
        }
    }
}

/** gk_byteswap_q4_1() : swap the fp16 scale and min of each block. */
void gk_byteswap_q4_1(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q4_1)) {
        gk_swap16_run(p + offsetof(block_q4_1, d), 1);
        gk_swap16_run(p + offsetof(block_q4_1, m), 1);
    }
}

/* ---- Q5_0 ---------------------------------------------------------------------------- */

/* ggml's quantize_row_q5_0_ref over nb blocks. */
static void q5_0_reference(const float *x, uint8_t *out, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        block_q5_0 b;
        uint8_t level[QK];
        const float max = signed_absmax(x, QK);
        const float d = max / -16;
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        for (int j = 0; j < QK; ++j) level[j] = GK_MIN(31, (int8_t)gk_trunc_i32(x[j] * id + 16.5f));
        pack_five_bit(level, b.qs, b.qh);
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/* ggml's quantize_row_q5_0_impl with weights: one row. */
static void q5_0_weighted_row(const gk_searches *s, const float *x, uint8_t *out, int64_t n_per_row,
                              const float *qw) {
    float weight[BATCH * QK], d[BATCH];
    int8_t L[BATCH * QK];
    uint8_t level[QK];
    const float sigma2 = row_sigma2(x, n_per_row);
    for (int64_t ib0 = 0; ib0 < n_per_row / QK; ib0 += BATCH) {
        const int m = batch_weights(x, qw, ib0, n_per_row / QK, sigma2, weight);
        s->qx(m, QK, 16, x + QK * ib0, weight, L, d);
        for (int k = 0; k < m; ++k) {
            block_q5_0 b;
            b.d = gk_fp32_to_fp16(d[k]);
            for (int j = 0; j < QK; ++j) level[j] = (uint8_t)L[QK * k + j];
            pack_five_bit(level, b.qs, b.qh);
            memcpy(out + (ib0 + k) * sizeof b, &b, sizeof b);
        }
    }
}

/** gk_quantize_q5_0_with() : as gk_quantize_q5_0, with the group searches s. */
void gk_quantize_q5_0_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    if (imatrix == NULL) {
        q5_0_reference(src, dst, nrows * n_per_row / QK);
        return;
    }
    const int64_t row_bytes = n_per_row / QK * (int64_t)sizeof(block_q5_0);
    for (int64_t r = 0; r < nrows; r++)
        q5_0_weighted_row(s, src + r * n_per_row, (uint8_t *)dst + r * row_bytes, n_per_row, imatrix);
}

/** gk_quantize_q5_0() : rows of F32 to Q5_0 (weighted by imatrix when given). */
void gk_quantize_q5_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q5_0_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q5_0() : n values (a multiple of 32) from Q5_0 blocks. */
void gk_dequantize_q5_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, dst += QK) {
        block_q5_0 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        uint32_t qh;
        memcpy(&qh, b.qh, 4);
        for (int j = 0; j < QK / 2; ++j) {
            const int32_t x0 = ((b.qs[j] & 0x0F) | fifth_bit(qh, j)) - 16;
            const int32_t x1 = ((b.qs[j] >> 4) | fifth_bit(qh, j + QK / 2)) - 16;
            dst[j] = x0 * d;
            dst[j + QK / 2] = x1 * d;
        }
    }
}

/** gk_byteswap_q5_0() : swap the fp16 scale of each block (qh is a byte array). */
void gk_byteswap_q5_0(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q5_0)) {
        gk_swap16_run(p + offsetof(block_q5_0, d), 1);
    }
}

/* ---- Q5_1 ---------------------------------------------------------------------------- */

/* ggml's quantize_row_q5_1_ref over nb blocks. */
static void q5_1_reference(const float *x, uint8_t *out, int64_t nb) {
    for (int64_t i = 0; i < nb; i++, x += QK) {
        block_q5_1 b;
        uint8_t level[QK];
        float min, max;
        min_and_max(x, QK, &min, &max);
        const float d = (max - min) / ((1 << 5) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        b.m = gk_fp32_to_fp16(min);
        for (int j = 0; j < QK; ++j) level[j] = (uint8_t)gk_trunc_i32((x[j] - min) * id + 0.5f);
        pack_five_bit(level, b.qs, b.qh);
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/* ggml's quantize_row_q5_1_impl with weights: one row. */
static void q5_1_weighted_row(const gk_searches *s, const float *x, uint8_t *out, int64_t n_per_row,
                              const float *qw) {
    float weight[BATCH * QK], d[BATCH], min[BATCH];
    uint8_t L[BATCH * QK];
    const float sigma2 = row_sigma2(x, n_per_row);
    for (int64_t ib0 = 0; ib0 < n_per_row / QK; ib0 += BATCH) {
        const int m = batch_weights(x, qw, ib0, n_per_row / QK, sigma2, weight);
        s->qkx3(m, QK, 31, x + QK * ib0, weight, L, d, min, -0.9f, 0.05f, 36, false);
        for (int k = 0; k < m; ++k) {
            block_q5_1 b;
            b.d = gk_fp32_to_fp16(d[k]);
            b.m = gk_fp32_to_fp16(-min[k]);
            pack_five_bit(L + QK * k, b.qs, b.qh);
            memcpy(out + (ib0 + k) * sizeof b, &b, sizeof b);
        }
    }
}

/** gk_quantize_q5_1_with() : as gk_quantize_q5_1, with the group searches s. */
void gk_quantize_q5_1_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    if (imatrix == NULL) {
        q5_1_reference(src, dst, nrows * n_per_row / QK);
        return;
    }
    const int64_t row_bytes = n_per_row / QK * (int64_t)sizeof(block_q5_1);
    for (int64_t r = 0; r < nrows; r++)
        q5_1_weighted_row(s, src + r * n_per_row, (uint8_t *)dst + r * row_bytes, n_per_row, imatrix);
}

/** gk_quantize_q5_1() : rows of F32 to Q5_1 (weighted by imatrix when given). */
void gk_quantize_q5_1(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q5_1_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q5_1() : n values (a multiple of 32) from Q5_1 blocks. */
void gk_dequantize_q5_1(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, dst += QK) {
        block_q5_1 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        const float m = gk_fp16_to_fp32(b.m);
        const bool nan_m = m != m;   /* both NaN: the product's (gk_add_nan_first) */
        uint32_t qh;
        memcpy(&qh, b.qh, 4);
        for (int j = 0; j < QK / 2; ++j) {
            const int x0 = (b.qs[j] & 0x0F) | fifth_bit(qh, j);
            const int x1 = (b.qs[j] >> 4) | fifth_bit(qh, j + QK / 2);
            dst[j] = nan_m ? gk_add_nan_first(x0 * d, m) : x0 * d + m;
            dst[j + QK / 2] = nan_m ? gk_add_nan_first(x1 * d, m) : x1 * d + m;
        }
    }
}

/** gk_byteswap_q5_1() : swap the fp16 scale and min of each block (qh is a byte array). */
void gk_byteswap_q5_1(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q5_1)) {
        gk_swap16_run(p + offsetof(block_q5_1, d), 1);
        gk_swap16_run(p + offsetof(block_q5_1, m), 1);
    }
}

/* ---- Q8_0 ---------------------------------------------------------------------------- */

/** gk_quantize_q8_0() : rows of F32 to Q8_0 (ggml's reference; imatrix unused). */
void gk_quantize_q8_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        block_q8_0 b;
        const float d = abs_max(x, QK) / ((1 << 7) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        for (int j = 0; j < QK; ++j) b.qs[j] = (int8_t)gk_trunc_i32(roundf(x[j] * id));
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_q8_0() : n values (a multiple of 32) from Q8_0 blocks. */
void gk_dequantize_q8_0(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, dst += QK) {
        block_q8_0 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        for (int j = 0; j < QK; ++j) dst[j] = b.qs[j] * d;
    }
}

/** gk_byteswap_q8_0() : swap the fp16 scale of each block. */
void gk_byteswap_q8_0(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q8_0)) {
        gk_swap16_run(p + offsetof(block_q8_0, d), 1);
    }
}

/* ---- Q8_1 ---------------------------------------------------------------------------- */

/** gk_quantize_q8_1() : rows of F32 to Q8_1, s = d * sum of the levels (ggml's
 *  reference; imatrix unused). */
void gk_quantize_q8_1(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const float *x = src;
    const int64_t nb = nrows * n_per_row / QK;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        block_q8_1 b;
        const float d = abs_max(x, QK) / ((1 << 7) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        b.d = gk_fp32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < QK / 2; ++j) {
            b.qs[j] = (int8_t)gk_trunc_i32(roundf(x[j] * id));
            b.qs[QK / 2 + j] = (int8_t)gk_trunc_i32(roundf(x[QK / 2 + j] * id));
            sum += b.qs[j];
            sum += b.qs[QK / 2 + j];
        }
        b.s = gk_fp32_to_fp16(sum * d);
        memcpy(out + i * sizeof b, &b, sizeof b);
    }
}

/** gk_dequantize_q8_1() : n values (a multiple of 32) from Q8_1 blocks (qs * d;
 *  the stored sum is not needed). */
void gk_dequantize_q8_1(const void *src, float *dst, int64_t n) {
    const uint8_t *in = src;
    for (int64_t i = 0; i < n / QK; i++, dst += QK) {
        block_q8_1 b;
        memcpy(&b, in + i * sizeof b, sizeof b);
        const float d = gk_fp16_to_fp32(b.d);
        for (int j = 0; j < QK; ++j) dst[j] = b.qs[j] * d;
    }
}

/** gk_byteswap_q8_1() : swap the fp16 scale and sum of each block. */
void gk_byteswap_q8_1(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; i++, p += sizeof(block_q8_1)) {
        gk_swap16_run(p + offsetof(block_q8_1, d), 1);
        gk_swap16_run(p + offsetof(block_q8_1, s), 1);
    }
}
