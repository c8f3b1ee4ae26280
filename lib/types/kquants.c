/*
 * kquants.c - the "K" super-block quantizations of ggml: Q2_K, Q3_K, Q4_K, Q5_K,
 * Q6_K and Q8_K (256 elements per block).
 *
 * Quantization reproduces ggml's reference quantizers bit for bit: without an
 * importance matrix the quantize_row_q*_K_ref algorithms, with one the weighted
 * per-row algorithms ggml's quantize_q*_K use (Q8_K has no weighted form and ignores
 * it). Every float expression keeps ggml's types and order of operations; the file
 * must be built without -ffast-math and with -ffp-contract=off (meson.build sets it).
 *
 * Block layouts (ggml-common.h), byte offsets, and what gk_byteswap_* swaps:
 *
 *   type  bytes  layout                                            swapped members
 *   Q2_K   84    scales[16] qs[64] d:half@80 dmin:half@82          d, dmin (2 bytes)
 *   Q3_K  110    hmask[32] qs[64] scales[12] d:half@108            d (2 bytes)
 *   Q4_K  144    d:half@0 dmin:half@2 scales[12] qs[128]           d, dmin (2 bytes)
 *   Q5_K  176    d:half@0 dmin:half@2 scales[12] qh[32] qs[128]    d, dmin (2 bytes)
 *   Q6_K  210    ql[128] qh[64] scales[16](int8) d:half@208        d (2 bytes)
 *   Q8_K  292    d:float@0 qs[256](int8) bsums[16]:int16@260       d (4 bytes), each bsums[i] (2)
 *
 * Byte arrays (quants, packed scales, int8 values) have no byte order and stay as
 * they are. Kernels work on a local copy of each block, so src/dst need no alignment.
 * Scale searches shared with the legacy types come from quant_util.h.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "types/kernels.h"
#include "types/kquants_scales.h"
#include "types/quant_util.h"

static inline float half_to_float(uint16_t h) { return gk_fp16_to_fp32(h); }
static inline uint16_t float_to_half(float f) { return gk_fp32_to_fp16(f); }

/* ------------------------------------------------------------------------ */
/* Bit packing shared by several types                                      */
/* ------------------------------------------------------------------------ */

/* 2-bit quants: byte l of each 32-byte half holds elements l, l+32, l+64, l+96
 * of that 128-element half, lowest bits first. */
static void pack_2bit(const uint8_t *L, uint8_t *qs) {
    for (int j = 0; j < QK_K; j += 128) {
        for (int l = 0; l < 32; ++l) {
            qs[j / 4 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
                                      (L[j + l + 96] << 6));
        }
    }
}

/* Q4_K/Q5_K 12-byte scale field: eight 6-bit scales and eight 6-bit mins. */
static void pack_scale_min_k4(const uint8_t *ls, const uint8_t *lm, uint8_t *scales) {
    for (int j = 0; j < QK_K / 32; ++j) {
        if (j < 4) {
            scales[j] = ls[j];
            scales[j + 4] = lm[j];
        } else {
            scales[j + 4] = (uint8_t)((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            scales[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            scales[j - 0] |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
}

/* Q3_K 12-byte scale field: sixteen 6-bit values (already offset by 32). Low
 * nibbles in bytes 0..7 (j < 8 low half, j >= 8 high half), top two bits in
 * bytes 8..11. */
static void pack_scales_q3(const int *l6, uint8_t *scales) {
    memset(scales, 0, 12);
    for (int j = 0; j < QK_K / 16; ++j) {
        int l = l6[j];
        if (j < 8) {
            scales[j] = (uint8_t)(l & 0xF);
        } else {
            scales[j - 8] |= (uint8_t)((l & 0xF) << 4);
        }
        l >>= 4;
        scales[j % 4 + 8] |= (uint8_t)(l << (2 * (j / 4)));
    }
}

/* Weights of ggml's weighted K-quant paths for one block: w = qw * sqrt(sigma2 +
 * x^2), sigma2 = factor * (sum of x^2) / 256; sw[j] sums the weights of group j
 * of n values. */
static void importance_weights(const float *x, const float *qw, float factor, int n, float *w,
                               float *sw) {
    float sum_x2 = 0;
    for (int l = 0; l < QK_K; ++l) sum_x2 += x[l] * x[l];
    const float sigma2 = factor * sum_x2 / QK_K;
    for (int j = 0; j < QK_K / n; ++j) {
        float *wj = w + n * j;
        for (int l = 0; l < n; ++l) wj[l] = qw[n * j + l] * sqrtf(sigma2 + x[n * j + l] * x[n * j + l]);
        float sumw = 0;
        for (int l = 0; l < n; ++l) sumw += wj[l];
        sw[j] = sumw;
    }
}

/* ------------------------------------------------------------------------ */
/* Q2_K: 16 groups of 16, 2-bit quants, 4-bit scale and min per group        */
/* ------------------------------------------------------------------------ */

/* Final 2-bit levels from the stored (fp16-rounded) scales and mins. */
static void requantize_q2_K(const gk_searches *s, const float *x, const block_q2_K *b,
                            uint8_t *L) {
    const float dall = half_to_float(b->d);
    const float mall = half_to_float(b->dmin);
    float d[QK_K / 16], dm[QK_K / 16];
    for (int j = 0; j < QK_K / 16; ++j) {
        d[j] = dall * (b->scales[j] & 0xF);
        dm[j] = mall * (b->scales[j] >> 4);
    }
    s->requant(QK_K / 16, 16, x, d, dm, 0, 3, 0, L);
}

static void quantize_block_q2_K_ref(const gk_searches *s, const float *x, block_q2_K *b) {
    uint8_t L[QK_K];
    float weights[QK_K];
    float mins[QK_K / 16];
    float scales[QK_K / 16];
    const float q4scale = 15.f;

    for (int l = 0; l < QK_K; ++l) weights[l] = fabsf(x[l]);
    s->qkx2(QK_K / 16, 16, 3, x, weights, L, scales, mins, -0.5f, 0.1f, 15, true);
    float max_scale = 0;
    float max_min = 0;
    for (int j = 0; j < QK_K / 16; ++j) {
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }

    if (max_scale > 0) {
        float iscale = q4scale / max_scale;
        for (int j = 0; j < QK_K / 16; ++j)
            b->scales[j] = (uint8_t)gk_nearest_int(iscale * scales[j]);
        b->d = float_to_half(max_scale / q4scale);
    } else {
        memset(b->scales, 0, sizeof b->scales);
        b->d = float_to_half(0.f);
    }
    if (max_min > 0) {
        float iscale = q4scale / max_min;
        for (int j = 0; j < QK_K / 16; ++j) {
            int l = gk_nearest_int(iscale * mins[j]);
            b->scales[j] |= (uint8_t)((unsigned)l << 4);   /* l < 0 only for NaN or out-of-range input */
        }
        b->dmin = float_to_half(max_min / q4scale);
    } else {
        b->dmin = float_to_half(0.f);
    }
    requantize_q2_K(s, x, b, L);
    pack_2bit(L, b->qs);
}

static void quantize_block_q2_K_weighted(const gk_searches *s, const float *x, block_q2_K *b,
                                         const float *qw) {
    uint8_t L[QK_K];
    float mins[QK_K / 16];
    float scales[QK_K / 16];
    float sw[QK_K / 16];
    float weight[QK_K];
    uint8_t Ls[QK_K / 16], Lm[QK_K / 16];

    importance_weights(x, qw, 1, 16, weight, sw);
    s->qkx3(QK_K / 16, 16, 3, x, weight, L, scales, mins, -0.9f, 0.05f, 36, false);

    float dm = gk_make_qp_quants(QK_K / 16, 15, scales, Ls, sw);
    float mm = gk_make_qp_quants(QK_K / 16, 15, mins, Lm, sw);
    b->d = float_to_half(dm);
    b->dmin = float_to_half(mm);
    for (int j = 0; j < QK_K / 16; ++j) b->scales[j] = (uint8_t)(Ls[j] | (Lm[j] << 4));

    requantize_q2_K(s, x, b, L);
    pack_2bit(L, b->qs);
}

static void dequantize_block_q2_K(const block_q2_K *b, float *y) {
    const float d = half_to_float(b->d);
    const float min = half_to_float(b->dmin);
    const uint8_t *q = b->qs;
    int is = 0;
    for (int n = 0; n < QK_K; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 2; ++half) {
                uint8_t sc = b->scales[is++];
                const float dl = d * (sc & 0xF);
                const float ml = min * (sc >> 4);
                for (int l = 0; l < 16; ++l)
                    *y++ = dl * ((int8_t)((q[l + 16 * half] >> shift) & 3)) - ml;
            }
        }
        q += 32;
    }
}

/* ------------------------------------------------------------------------ */
/* Q3_K: 16 groups of 16, 3-bit quants (2 low bits + high-bit mask), 6-bit   */
/* signed scales                                                              */
/* ------------------------------------------------------------------------ */

/* Final levels from the stored scales, then split into hmask and 2-bit qs. */
static void finish_block_q3_K(const gk_searches *s, const float *x, block_q3_K *b, int8_t *L) {
    const float dall = half_to_float(b->d);
    float d[QK_K / 16];
    for (int j = 0; j < QK_K / 16; ++j) d[j] = dall * (int8_t)unpack_scale_q3(b->scales, j);
    s->requant(QK_K / 16, 16, x, d, NULL, -4, 3, 4, (uint8_t *)L);
    /* High bit of element j (levels are 0..7) goes to bit j/32 of hmask[j%32];
     * without branches: which way they go is the data's, the predictor's guess. */
    uint8_t L2[QK_K];
    for (int k = 0; k < 32; ++k) {
        unsigned h = 0;
        for (int i = 0; i < QK_K / 32; ++i) h |= (((unsigned)L[32 * i + k] >> 2) & 1u) << i;
        b->hmask[k] = (uint8_t)h;
    }
    for (int j = 0; j < QK_K; ++j) L2[j] = (uint8_t)(L[j] & 3);
    pack_2bit(L2, b->qs);
}

static void quantize_block_q3_K_ref(const gk_searches *s, const float *x, block_q3_K *b) {
    int8_t L[QK_K];
    float scales[QK_K / 16];

    s->q3(QK_K / 16, 16, 4, x, L, scales);
    float max_scale = 0;
    float amax = 0;
    for (int j = 0; j < QK_K / 16; ++j) {
        float scale = fabsf(scales[j]);
        if (scale > amax) {
            amax = scale;
            max_scale = scales[j];
        }
    }

    if (max_scale) {
        float iscale = -32.f / max_scale;
        int l6[QK_K / 16];
        for (int j = 0; j < QK_K / 16; ++j) {
            int8_t l = (int8_t)gk_nearest_int(iscale * scales[j]);
            l6[j] = GK_MAX(-32, GK_MIN(31, l)) + 32;
        }
        pack_scales_q3(l6, b->scales);
        b->d = float_to_half(1 / iscale);
    } else {
        memset(b->scales, 0, sizeof b->scales);
        b->d = float_to_half(0.f);
    }
    finish_block_q3_K(s, x, b, L);
}

static void quantize_block_q3_K_weighted(const gk_searches *s, const float *x, block_q3_K *b,
                                         const float *qw) {
    int8_t L[QK_K];
    float scales[QK_K / 16];
    float weight[QK_K];
    float sw[QK_K / 16];
    int8_t Ls[QK_K / 16];

    importance_weights(x, qw, 2, 16, weight, sw);
    s->qx(QK_K / 16, 16, 4, x, weight, L, scales);

    float d_block = gk_make_qx_quants(QK_K / 16, 32, scales, Ls, 1, sw);
    int l6[QK_K / 16];
    for (int j = 0; j < QK_K / 16; ++j) l6[j] = Ls[j];
    pack_scales_q3(l6, b->scales);
    b->d = float_to_half(d_block);
    finish_block_q3_K(s, x, b, L);
}

static void dequantize_block_q3_K(const block_q3_K *b, float *y) {
    const float d_all = half_to_float(b->d);
    const uint8_t *q = b->qs;
    int is = 0;
    uint8_t m = 1;
    for (int n = 0; n < QK_K; n += 128) {
        for (int shift = 0; shift < 8; shift += 2) {
            for (int half = 0; half < 2; ++half) {
                const float dl = d_all * unpack_scale_q3(b->scales, is++);
                for (int l = 16 * half; l < 16 * half + 16; ++l) {
                    *y++ = dl * ((int8_t)((q[l] >> shift) & 3) - ((b->hmask[l] & m) ? 0 : 4));
                }
            }
            m <<= 1;
        }
        q += 32;
    }
}

/* ------------------------------------------------------------------------ */
/* Q4_K / Q5_K: 8 groups of 32, 4- or 5-bit quants, 6-bit scale and min     */
/* ------------------------------------------------------------------------ */

/* Q4_K/Q5_K search up to K4_BATCH consecutive blocks of a row in one call of
 * the group searches (sixteen groups fill an AVX-512 register). */
#define K4_BATCH 2

/* Per-group weights and scale/min fits of nblk consecutive blocks: without qw
 * weighted by rms + |x| per group (reference), with qw by the importance
 * weights times sqrt(sigma2 + x^2) per block (sw receives each group's weight
 * sum). Fills L, scales[8*nblk], mins[8*nblk]. */
static void search_blocks_k4(const gk_searches *s, const float *x, const float *qw, int nblk,
                             int nmax, float rmin, float rdelta, int nstep, uint8_t *L,
                             float *scales, float *mins, float *sw) {
    float weights[K4_BATCH * QK_K];
    for (int k = 0; k < nblk; ++k) {
        const float *xb = x + QK_K * k;
        float *wb = weights + QK_K * k;
        if (qw == NULL) {
            for (int j = 0; j < QK_K / 32; ++j) {
                float sum_x2 = 0;
                for (int l = 0; l < 32; ++l) sum_x2 += xb[32 * j + l] * xb[32 * j + l];
                float av_x = sqrtf(sum_x2 / 32);
                for (int l = 0; l < 32; ++l) wb[32 * j + l] = av_x + fabsf(xb[32 * j + l]);
            }
            continue;
        }
        importance_weights(xb, qw + QK_K * k, 2, 32, wb, sw + QK_K / 32 * k);
    }
    const int ngroups = nblk * (QK_K / 32);
    if (qw == NULL)
        s->qkx2(ngroups, 32, nmax, x, weights, L, scales, mins, rmin, rdelta, nstep, false);
    else
        s->qkx3(ngroups, 32, nmax, x, weights, L, scales, mins, -0.9f, 0.05f, 36, false);
}

/* Reference scales of one block: the group scales and mins quantized to 6 bits
 * against their maxima. Fills packed[12], d, dmin. */
static void finish_block_k4_ref(const float *scales, const float *mins, uint16_t *d,
                                uint16_t *dmin, uint8_t *packed) {
    float max_scale = 0;
    float max_min = 0;
    for (int j = 0; j < QK_K / 32; ++j) {
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }

    float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    uint8_t ls[QK_K / 32], lm[QK_K / 32];
    for (int j = 0; j < QK_K / 32; ++j) {
        ls[j] = (uint8_t)gk_nearest_int(inv_scale * scales[j]);
        lm[j] = (uint8_t)gk_nearest_int(inv_min * mins[j]);
        ls[j] = GK_MIN(63, ls[j]);
        lm[j] = GK_MIN(63, lm[j]);
    }
    pack_scale_min_k4(ls, lm, packed);
    *d = float_to_half(max_scale / 63.f);
    *dmin = float_to_half(max_min / 63.f);
}

/* Weighted scales of one block (imatrix path of Q4_K and Q5_K). Only ggml's
 * Q5_K caps the 6-bit levels at 63 again (clamp63); Q4_K packs them as is. */
static void finish_block_k4_weighted(float *scales, float *mins, float *sw, bool clamp63,
                                     uint16_t *d, uint16_t *dmin, uint8_t *packed) {
    uint8_t Ls[QK_K / 32];
    uint8_t Lm[QK_K / 32];
    float d_block = gk_make_qp_quants(QK_K / 32, 63, scales, Ls, sw);
    float m_block = gk_make_qp_quants(QK_K / 32, 63, mins, Lm, sw);
    for (int j = 0; clamp63 && j < QK_K / 32; ++j) {
        Ls[j] = GK_MIN(63, Ls[j]);
        Lm[j] = GK_MIN(63, Lm[j]);
    }
    pack_scale_min_k4(Ls, Lm, packed);
    *d = float_to_half(d_block);
    *dmin = float_to_half(m_block);
}

/* Final levels 0..nmax from the stored scales and mins. */
static void requantize_k4(const gk_searches *s, const float *x, int nmax, const uint8_t *packed,
                          uint16_t d16, uint16_t dmin16, uint8_t *L) {
    float d[QK_K / 32], dm[QK_K / 32];
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        unpack_scale_min_k4(j, packed, &sc, &m);
        d[j] = half_to_float(d16) * sc;
        dm[j] = half_to_float(dmin16) * m;
    }
    s->requant(QK_K / 32, 32, x, d, dm, 0, nmax, 0, L);
}

static void pack_q4_K(const uint8_t *L, uint8_t *qs) {
    for (int j = 0; j < QK_K; j += 64) {
        for (int l = 0; l < 32; ++l) qs[j / 2 + l] = (uint8_t)(L[j + l] | (L[j + l + 32] << 4));
    }
}

/* Low nibbles to qs like Q4_K; bit 4 of elements n+j and n+j+32 of each
 * 64-element chunk c go to bits 2c and 2c+1 of qh[j]. */
static void pack_q5_K(const uint8_t *L, uint8_t *qh, uint8_t *qs) {
    /* Levels are 0..31; no branches on bit 4 (the data's, the predictor's guess). */
    for (int j = 0; j < 32; ++j) {
        unsigned h = 0;
        for (int c = 0; c < QK_K / 64; ++c)
            h |= (((unsigned)L[64 * c + j] >> 4) & 1u) << (2 * c) | (((unsigned)L[64 * c + j + 32] >> 4) & 1u)
                                                                       << (2 * c + 1);
        qh[j] = (uint8_t)h;
    }
    for (int n = 0; n < QK_K; n += 64)
        for (int j = 0; j < 32; ++j) qs[n / 2 + j] = (uint8_t)((L[n + j] & 15) | ((L[n + j + 32] & 15) << 4));
}

/* Q4_K (q5 false) or Q5_K blocks: nblk consecutive blocks of a row at x (their
 * importance weights at qw, or NULL) to out. */
static void quantize_blocks_k4(const gk_searches *s, const float *x, const float *qw, int nblk,
                               bool q5, uint8_t *out) {
    const int nmax = q5 ? 31 : 15;
    uint8_t L[K4_BATCH * QK_K];
    float scales[K4_BATCH * QK_K / 32], mins[K4_BATCH * QK_K / 32], sw[K4_BATCH * QK_K / 32];
    if (q5)
        search_blocks_k4(s, x, qw, nblk, nmax, -0.5f, 0.1f, 15, L, scales, mins, sw);
    else
        search_blocks_k4(s, x, qw, nblk, nmax, -1.f, 0.1f, 20, L, scales, mins, sw);
    for (int k = 0; k < nblk; ++k) {
        const int g = QK_K / 32 * k;
        const float *xb = x + QK_K * k;
        uint8_t *Lb = L + QK_K * k;
        if (q5) {
            block_q5_K b;
            memset(&b, 0, sizeof b);
            if (qw) finish_block_k4_weighted(scales + g, mins + g, sw + g, true, &b.d, &b.dmin, b.scales);
            else finish_block_k4_ref(scales + g, mins + g, &b.d, &b.dmin, b.scales);
            requantize_k4(s, xb, nmax, b.scales, b.d, b.dmin, Lb);
            pack_q5_K(Lb, b.qh, b.qs);
            memcpy(out + k * sizeof b, &b, sizeof b);
        } else {
            block_q4_K b;
            memset(&b, 0, sizeof b);
            if (qw) finish_block_k4_weighted(scales + g, mins + g, sw + g, false, &b.d, &b.dmin, b.scales);
            else finish_block_k4_ref(scales + g, mins + g, &b.d, &b.dmin, b.scales);
            requantize_k4(s, xb, nmax, b.scales, b.d, b.dmin, Lb);
            pack_q4_K(Lb, b.qs);
            memcpy(out + k * sizeof b, &b, sizeof b);
        }
    }
}

/* Rows of Q4_K or Q5_K, K4_BATCH blocks at a time. */
static void quantize_rows_k4(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                             int64_t n_per_row, const float *imatrix, bool q5) {
    const int64_t nb = n_per_row / QK_K;
    const size_t bytes = q5 ? sizeof(block_q5_K) : sizeof(block_q4_K);
    uint8_t *out = dst;
    for (int64_t row = 0; row < nrows; ++row) {
        for (int64_t i = 0; i < nb; i += K4_BATCH) {
            const int m = nb - i < K4_BATCH ? (int)(nb - i) : K4_BATCH;
            quantize_blocks_k4(s, src + row * n_per_row + i * QK_K, imatrix ? imatrix + i * QK_K : NULL,
                               m, q5, out);
            out += (size_t)m * bytes;
        }
    }
}

static void dequantize_block_q4_K(const block_q4_K *b, float *y) {
    const float d = half_to_float(b->d);
    const float min = half_to_float(b->dmin);
    const uint8_t *q = b->qs;
    for (int is = 0; is < QK_K / 32; is += 2) {
        uint8_t sc, m;
        unpack_scale_min_k4(is + 0, b->scales, &sc, &m);
        const float d1 = d * sc;
        const float m1 = min * m;
        unpack_scale_min_k4(is + 1, b->scales, &sc, &m);
        const float d2 = d * sc;
        const float m2 = min * m;
        for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
        q += 32;
    }
}

static void dequantize_block_q5_K(const block_q5_K *b, float *y) {
    const float d = half_to_float(b->d);
    const float min = half_to_float(b->dmin);
    const uint8_t *ql = b->qs;
    const uint8_t *qh = b->qh;
    uint8_t u1 = 1, u2 = 2;
    for (int is = 0; is < QK_K / 32; is += 2) {
        uint8_t sc, m;
        unpack_scale_min_k4(is + 0, b->scales, &sc, &m);
        const float d1 = d * sc;
        const float m1 = min * m;
        unpack_scale_min_k4(is + 1, b->scales, &sc, &m);
        const float d2 = d * sc;
        const float m2 = min * m;
        for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
        ql += 32;
        u1 = (uint8_t)(u1 << 2);
        u2 = (uint8_t)(u2 << 2);
    }
}

/* ------------------------------------------------------------------------ */
/* Q6_K: 16 groups of 16, 6-bit quants, 8-bit signed scales                  */
/* ------------------------------------------------------------------------ */

/* Low nibbles: ql[l] holds elements l and l+64, ql[l+32] elements l+32 and l+96
 * of each 128-element half; qh[l] holds the top two bits of all four. */
static void pack_q6_K(const int8_t *L, uint8_t *ql, uint8_t *qh) {
    for (int j = 0; j < QK_K; j += 128) {
        for (int l = 0; l < 32; ++l) {
            const uint8_t q1 = L[j + l + 0] & 0xF;
            const uint8_t q2 = L[j + l + 32] & 0xF;
            const uint8_t q3 = L[j + l + 64] & 0xF;
            const uint8_t q4 = L[j + l + 96] & 0xF;
            ql[l + 0] = (uint8_t)(q1 | (q3 << 4));
            ql[l + 32] = (uint8_t)(q2 | (q4 << 4));
            qh[l] = (uint8_t)((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                              ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
        }
        ql += 64;
        qh += 32;
    }
}

/* qw NULL: reference path (x^2 weights); else the raw importance weights. */
static void quantize_block_q6_K(const gk_searches *s, const float *x, block_q6_K *b,
                               const float *qw) {
    int8_t L[QK_K];
    float scales[QK_K / 16];

    s->qx(QK_K / 16, 16, 32, x, qw, L, scales);
    float max_scale = 0;
    float max_abs_scale = 0;
    for (int ib = 0; ib < QK_K / 16; ++ib) {
        const float scale = scales[ib];
        const float abs_scale = fabsf(scale);
        if (abs_scale > max_abs_scale) {
            max_abs_scale = abs_scale;
            max_scale = scale;
        }
    }

    if (max_abs_scale < GK_GROUP_MAX_EPS) {
        memset(b, 0, sizeof *b);
        b->d = float_to_half(0.f);
        return;
    }

    float iscale = -128.f / max_scale;
    b->d = float_to_half(1 / iscale);
    for (int ib = 0; ib < QK_K / 16; ++ib)
        b->scales[ib] = (int8_t)GK_MIN(127, gk_nearest_int(iscale * scales[ib]));

    const float dall = half_to_float(b->d);
    float d[QK_K / 16];
    for (int j = 0; j < QK_K / 16; ++j) d[j] = dall * b->scales[j];
    s->requant(QK_K / 16, 16, x, d, NULL, -32, 31, 32, (uint8_t *)L);
    pack_q6_K(L, b->ql, b->qh);
}

static void dequantize_block_q6_K(const block_q6_K *b, float *y) {
    const float d = half_to_float(b->d);
    const uint8_t *ql = b->ql;
    const uint8_t *qh = b->qh;
    const int8_t *sc = b->scales;
    for (int n = 0; n < QK_K; n += 128) {
        for (int l = 0; l < 32; ++l) {
            int is = l / 16;
            const int8_t q1 = (int8_t)((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int8_t q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int8_t q3 = (int8_t)((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int8_t q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l + 0] = d * sc[is + 0] * q1;
            y[l + 32] = d * sc[is + 2] * q2;
            y[l + 64] = d * sc[is + 4] * q3;
            y[l + 96] = d * sc[is + 6] * q4;
        }
        y += 128;
        ql += 64;
        qh += 32;
        sc += 8;
    }
}

/* ------------------------------------------------------------------------ */
/* Q8_K: one float scale, 8-bit quants, sums of each 16 quants               */
/* ------------------------------------------------------------------------ */

static void quantize_block_q8_K(const float *x, block_q8_K *b) {
    float max = 0;
    float amax = 0;
    for (int j = 0; j < QK_K; ++j) {
        float ax = fabsf(x[j]);
        if (ax > amax) {
            amax = ax;
            max = x[j];
        }
    }
    if (!amax) {
        /* ggml leaves bsums untouched here; they are zero sums, so write zeros. */
        memset(b, 0, sizeof *b);
        return;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < QK_K; ++j) {
        int v = gk_nearest_int(iscale * x[j]);
        b->qs[j] = (int8_t)GK_MIN(127, v);
    }
    for (int j = 0; j < QK_K / 16; ++j) {
        int sum = 0;
        for (int ii = 0; ii < 16; ++ii) sum += b->qs[j * 16 + ii];
        b->bsums[j] = (int16_t)sum;
    }
    b->d = 1 / iscale;
}

static void dequantize_block_q8_K(const block_q8_K *b, float *y) {
    for (int j = 0; j < QK_K; ++j) y[j] = b->d * b->qs[j];
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

/* Shared row/block walk: quantize every 256-element block of every row into a
 * local block and copy it out. The importance weights restart at each row. */
#define KQ_QUANTIZE_ROWS(T, CALL)                                                      \
    do {                                                                               \
        const int64_t nb = n_per_row / QK_K;                                           \
        uint8_t *out = dst;                                                            \
        for (int64_t row = 0; row < nrows; ++row) {                                    \
            for (int64_t i = 0; i < nb; ++i) {                                         \
                const float *x = src + row * n_per_row + i * QK_K;                     \
                const float *qw = imatrix ? imatrix + i * QK_K : NULL;                 \
                T blk;                                                                 \
                memset(&blk, 0, sizeof blk);                                           \
                CALL;                                                                  \
                (void)qw;                                                              \
                memcpy(out, &blk, sizeof blk);                                         \
                out += sizeof blk;                                                     \
            }                                                                          \
        }                                                                              \
    } while (0)

#define KQ_DEQUANTIZE(T, FN)                                                           \
    do {                                                                               \
        const uint8_t *in = src;                                                       \
        for (int64_t i = 0; i < n / QK_K; ++i) {                                       \
            T blk;                                                                     \
            memcpy(&blk, in + i * (int64_t)sizeof blk, sizeof blk);                    \
            FN(&blk, dst + i * QK_K);                                                  \
        }                                                                              \
    } while (0)

/** gk_quantize_q2_K_with() : Q2_K rows with the group searches s. */
void gk_quantize_q2_K_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    KQ_QUANTIZE_ROWS(block_q2_K, qw ? quantize_block_q2_K_weighted(s, x, &blk, qw)
                                    : quantize_block_q2_K_ref(s, x, &blk));
}

/** gk_quantize_q2_K() : Q2_K rows; imatrix selects ggml's weighted algorithm. */
void gk_quantize_q2_K(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q2_K_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q2_K() : n elements of Q2_K blocks to floats. */
void gk_dequantize_q2_K(const void *src, float *dst, int64_t n) {
    KQ_DEQUANTIZE(block_q2_K, dequantize_block_q2_K);
}

/** gk_byteswap_q2_K() : swaps d and dmin of each block. */
void gk_byteswap_q2_K(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; ++i, p += sizeof(block_q2_K)) {
        gk_swap16_run(p + offsetof(block_q2_K, d), 1);
        gk_swap16_run(p + offsetof(block_q2_K, dmin), 1);
    }
}

/** gk_quantize_q3_K_with() : Q3_K rows with the group searches s. */
void gk_quantize_q3_K_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    KQ_QUANTIZE_ROWS(block_q3_K, qw ? quantize_block_q3_K_weighted(s, x, &blk, qw)
                                    : quantize_block_q3_K_ref(s, x, &blk));
}

/** gk_quantize_q3_K() : Q3_K rows; imatrix selects ggml's weighted algorithm. */
void gk_quantize_q3_K(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q3_K_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q3_K() : n elements of Q3_K blocks to floats. */
void gk_dequantize_q3_K(const void *src, float *dst, int64_t n) {
    KQ_DEQUANTIZE(block_q3_K, dequantize_block_q3_K);
}

/** gk_byteswap_q3_K() : swaps d of each block. */
void gk_byteswap_q3_K(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; ++i, p += sizeof(block_q3_K))
        gk_swap16_run(p + offsetof(block_q3_K, d), 1);
}

/** gk_quantize_q4_K_with() : Q4_K rows with the group searches s. */
void gk_quantize_q4_K_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    quantize_rows_k4(s, src, dst, nrows, n_per_row, imatrix, false);
}

/** gk_quantize_q4_K() : Q4_K rows; imatrix selects ggml's weighted algorithm. */
void gk_quantize_q4_K(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q4_K_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q4_K() : n elements of Q4_K blocks to floats. */
void gk_dequantize_q4_K(const void *src, float *dst, int64_t n) {
    KQ_DEQUANTIZE(block_q4_K, dequantize_block_q4_K);
}

/** gk_byteswap_q4_K() : swaps d and dmin of each block. */
void gk_byteswap_q4_K(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; ++i, p += sizeof(block_q4_K)) {
        gk_swap16_run(p + offsetof(block_q4_K, d), 1);
        gk_swap16_run(p + offsetof(block_q4_K, dmin), 1);
    }
}

/** gk_quantize_q5_K_with() : Q5_K rows with the group searches s. */
void gk_quantize_q5_K_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    quantize_rows_k4(s, src, dst, nrows, n_per_row, imatrix, true);
}

/** gk_quantize_q5_K() : Q5_K rows; imatrix selects ggml's weighted algorithm. */
void gk_quantize_q5_K(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q5_K_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q5_K() : n elements of Q5_K blocks to floats. */
void gk_dequantize_q5_K(const void *src, float *dst, int64_t n) {
    KQ_DEQUANTIZE(block_q5_K, dequantize_block_q5_K);
}

/** gk_byteswap_q5_K() : swaps d and dmin of each block. */
void gk_byteswap_q5_K(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; ++i, p += sizeof(block_q5_K)) {
        gk_swap16_run(p + offsetof(block_q5_K, d), 1);
        gk_swap16_run(p + offsetof(block_q5_K, dmin), 1);
    }
}

/** gk_quantize_q6_K_with() : Q6_K rows with the group searches s. */
void gk_quantize_q6_K_with(const gk_searches *s, const float *src, void *dst, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    KQ_QUANTIZE_ROWS(block_q6_K, quantize_block_q6_K(s, x, &blk, qw));
}

/** gk_quantize_q6_K() : Q6_K rows; imatrix selects ggml's weighted algorithm. */
void gk_quantize_q6_K(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    gk_quantize_q6_K_with(&gk_searches_scalar, src, dst, nrows, n_per_row, imatrix);
}

/** gk_dequantize_q6_K() : n elements of Q6_K blocks to floats. */
void gk_dequantize_q6_K(const void *src, float *dst, int64_t n) {
    KQ_DEQUANTIZE(block_q6_K, dequantize_block_q6_K);
}

/** gk_byteswap_q6_K() : swaps d of each block. */
void gk_byteswap_q6_K(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; ++i, p += sizeof(block_q6_K))
        gk_swap16_run(p + offsetof(block_q6_K, d), 1);
}

/** gk_quantize_q8_K() : Q8_K rows (ggml has no weighted Q8_K: imatrix is ignored). */
void gk_quantize_q8_K(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                      const float *imatrix) {
    imatrix = NULL;
    KQ_QUANTIZE_ROWS(block_q8_K, quantize_block_q8_K(x, &blk));
}

/** gk_dequantize_q8_K() : n elements of Q8_K blocks to floats. */
void gk_dequantize_q8_K(const void *src, float *dst, int64_t n) {
    KQ_DEQUANTIZE(block_q8_K, dequantize_block_q8_K);
}

/** gk_byteswap_q8_K() : swaps the float d and each of the 16 int16 bsums. */
void gk_byteswap_q8_K(void *blocks, int64_t nblocks) {
    uint8_t *p = blocks;
    for (int64_t i = 0; i < nblocks; ++i, p += sizeof(block_q8_K)) {
        uint32_t d;
        memcpy(&d, p + offsetof(block_q8_K, d), 4);
        d = gk_bswap32(d);
        memcpy(p + offsetof(block_q8_K, d), &d, 4);
        for (int j = 0; j < QK_K / 16; ++j)
            gk_swap16_run(p + offsetof(block_q8_K, bsums) + 2 * (size_t)j, 1);
    }
}
