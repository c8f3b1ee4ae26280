/*
 * iquants_avx2.c - AVX2 kernels of the I-quant types, bit-exact with iquants.c.
 *
 * Exactness rule: every lane repeats, in the same order, the float operations the
 * scalar kernel performs for one independent unit of work, so results are equal bit
 * for bit (no fused multiply-add, true division and square root, comparisons with
 * the scalar code's NaN behaviour); where the scalar picks a best candidate in a
 * sequence, the lanes only compute the candidates and the choice is replayed in
 * the scalar's order.
 *   IQ4_XS, IQ4_NL: the quantizers are iq4_lanes.h's (iq4_avx2.c); the
 *           dequantizers are here.
 *   IQ3_XXS, IQ3_S: the scale search runs 8 trial scales at once, one per lane
 *           (iquants.c keeps the rest of the quantizer, reached through
 *           gk_quantize_iq3_*_with).
 *   IQ2_XXS, IQ2_XS, IQ2_S: trial scales in the lanes as for IQ3; the neighbour
 *           search of an off-grid point scores 8 listed candidates per step.
 *   IQ1_S, IQ1_M: the split searches score 8 splits per step; neighbour search
 *           as for IQ2.
 * Dequantizers compute each output value with the scalar expression, 8 at a time.
 */
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "types/blocks.h"
#include "types/iq4_levels_avx2.h"
#include "types/iq_grids.h"
#include "types/iquants.h"
#include "types/iquants_simd.h"
#include "types/quant_util.h"
#include "util/byteorder.h"

#define TARGET_AVX2 __attribute__((target("avx2")))


/* ------------------------------------------------------------------------- */
/* Shared helpers                                                            */

/* One step of the scalar searches' sequential choice: whether (sumqx, sumq2)
 * beats *best, updating *best and *scale as they do. */
static inline bool improves(float sumqx, float sumq2, float *best, float *scale) {
    if (sumq2 > 0 && sumqx * sumqx > *best * sumq2) {
        *scale = sumqx / sumq2;
        *best = *scale * sumqx;
        return true;
    }
    return false;
}

/* ------------------------------------------------------------------------- */
/* IQ3 scale search, one trial scale per lane                                */

/* gk_nearest_int in every lane (the same 1.5*2^23 trick on the float's bits). */
TARGET_AVX2 static inline __m256i nearest_int8(__m256 f) {
    __m256i bits = _mm256_castps_si256(_mm256_add_ps(f, _mm256_set1_ps(12582912.f)));
    return _mm256_sub_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)),
                            _mm256_set1_epi32(0x00400000));
}

/* Byte i of each lane's packed grid point, as a float. */
TARGET_AVX2 static inline __m256 grid_byte_ps(__m256i pg, int i) {
    return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(pg, 8 * i), _mm256_set1_epi32(0xff)));
}

/* gk_iq3_search_fn for AVX2: the trial scales is = -nis..nis go 8 at a time into the
 * lanes, each lane performing the scalar search's operations for its trial (levels,
 * neighbour search in list order with strict "<", then the 32-term sums in order).
 * The scalar's sequential choice among the trials is then replayed on the stored
 * sums, and the chosen trial's levels and on-grid flags are written to g. The
 * scalar search leaves g->Laux / g->on_grid_aux as scratch; they are not read
 * elsewhere and are not kept here. */
TARGET_AVX2 static float iq3_search_scale_avx2(const gk_iq3_tables *t, gk_iq3_group *g,
                                               float max, int nis, bool on_grid_init) {
    enum { MAX_TRIALS = 40 };
    const int ntrial = 2 * nis + 1;
    float sumqx[MAX_TRIALS], sumq2[MAX_TRIALS];
    int32_t codes[8][MAX_TRIALS];
    int32_t off_grid[8][MAX_TRIALS];
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i one = _mm256_set1_epi32(1);
    const __m256 vmax = _mm256_set1_ps(max);
    for (int t0 = 0; t0 < ntrial; t0 += 8) {
        /* lanes past the last trial repeat it; their results are not read */
        __m256i is = _mm256_min_epi32(_mm256_add_epi32(_mm256_set1_epi32(t0 - nis), lane),
                                      _mm256_set1_epi32(nis));
        __m256 id = _mm256_div_ps(_mm256_add_ps(_mm256_set1_ps(15.f),
                                                _mm256_mul_ps(_mm256_cvtepi32_ps(is), _mm256_set1_ps(0.2f))),
                                  vmax);
        __m256 this_scale = _mm256_div_ps(_mm256_set1_ps(1.f), id);
        __m256 sx = _mm256_setzero_ps(), s2 = _mm256_setzero_ps();
        for (int k = 0; k < 8; k++) {
            const float *xv = g->xval + 4 * k;
            __m256i L[4];
            __m256i code = _mm256_setzero_si256();
            for (int i = 0; i < 4; i++) {
                __m256 f = _mm256_mul_ps(_mm256_set1_ps(0.5f),
                                         _mm256_sub_ps(_mm256_mul_ps(id, _mm256_set1_ps(xv[i])), _mm256_set1_ps(1.f)));
                L[i] = _mm256_max_epi32(_mm256_setzero_si256(), _mm256_min_epi32(_mm256_set1_epi32(7), nearest_int8(f)));
                code = _mm256_or_si256(code, _mm256_slli_epi32(L[i], 3 * i));
            }
            __m256i m = _mm256_i32gather_epi32(t->map, code, 4);
            __m256i off = _mm256_cmpgt_epi32(_mm256_setzero_si256(), m);
            if (!_mm256_testz_si256(off, off)) {
                /* list start -(m+1) in off-grid lanes, 0 elsewhere (never read) */
                __m256i start = _mm256_and_si256(off, _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_add_epi32(m, one)));
                /* u16 entries read as the low half of 4 bytes (the storage has spare
                 * entries past the last list) */
                const int *nb = (const int *)t->neighbours;
                __m256i count = _mm256_and_si256(_mm256_i32gather_epi32(nb, start, 2), _mm256_set1_epi32(0xffff));
                count = _mm256_and_si256(count, off);
                const int *pts = (const int *)t->neighbour_points;
                __m256i best_pg = _mm256_i32gather_epi32(pts, _mm256_add_epi32(start, one), 4);
                __m256 best_d2 = _mm256_set1_ps(FLT_MAX);
                int32_t counts[8];
                _mm256_storeu_si256((__m256i *)counts, count);
                int maxcount = 0;
                for (int l = 0; l < 8; l++) maxcount = counts[l] > maxcount ? counts[l] : maxcount;
                for (int j = 1; j <= maxcount; j++) {
                    __m256i jv = _mm256_set1_epi32(j);
                    __m256i active = _mm256_cmpgt_epi32(_mm256_add_epi32(count, one), jv);
                    __m256i pg = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), pts,
                                                             _mm256_add_epi32(start, jv), active, 4);
                    __m256 d2 = _mm256_setzero_ps();
                    for (int i = 0; i < 4; i++) {
                        __m256 diff = _mm256_sub_ps(_mm256_mul_ps(this_scale, grid_byte_ps(pg, i)), _mm256_set1_ps(xv[i]));
                        d2 = _mm256_add_ps(d2, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(g->waux[4 * k + i]), diff), diff));
                    }
                    __m256 better = _mm256_and_ps(_mm256_castsi256_ps(active), _mm256_cmp_ps(d2, best_d2, _CMP_LT_OQ));
                    best_d2 = _mm256_blendv_ps(best_d2, d2, better);
                    best_pg = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(best_pg),
                                                                   _mm256_castsi256_ps(pg), better));
                }
                code = _mm256_setzero_si256();
                for (int i = 0; i < 4; i++) {
                    __m256i lv = _mm256_srli_epi32(_mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(best_pg, 8 * i),
                                                                                     _mm256_set1_epi32(0xff)), one), 1);
                    L[i] = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(L[i]), _mm256_castsi256_ps(lv),
                                                                _mm256_castsi256_ps(off)));
                    code = _mm256_or_si256(code, _mm256_slli_epi32(L[i], 3 * i));
                }
            }
            for (int i = 0; i < 4; i++) {
                __m256 w = _mm256_set1_ps(g->weight[4 * k + i]);
                __m256 q = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_slli_epi32(L[i], 1), one));
                sx = _mm256_add_ps(sx, _mm256_mul_ps(_mm256_mul_ps(w, _mm256_set1_ps(xv[i])), q));
                s2 = _mm256_add_ps(s2, _mm256_mul_ps(_mm256_mul_ps(w, q), q));
            }
            _mm256_storeu_si256((__m256i *)(codes[k] + t0), code);
            _mm256_storeu_si256((__m256i *)(off_grid[k] + t0), off);
        }
        _mm256_storeu_ps(sumqx + t0, sx);
        _mm256_storeu_ps(sumq2 + t0, s2);
    }

    float best = 0;
    float scale = max / 15;
    int chosen = -1;
    for (int tr = 0; tr < ntrial; tr++)
        if (improves(sumqx[tr], sumq2[tr], &best, &scale)) chosen = tr;
    for (int k = 0; k < 8; k++) g->on_grid[k] = on_grid_init;
    if (chosen >= 0) {
        for (int k = 0; k < 8; k++) {
            for (int i = 0; i < 4; i++) g->L[4 * k + i] = (int8_t)((codes[k][chosen] >> (3 * i)) & 7);
            g->on_grid[k] = off_grid[k][chosen] == 0;
        }
    }
    return scale;
}

/** gk_quantize_iq3_xxs_avx2() : gk_quantize_iq3_xxs with the AVX2 scale search. */
void gk_quantize_iq3_xxs_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                              const float *imatrix) {
    gk_quantize_iq3_xxs_with(iq3_search_scale_avx2, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq3_s_avx2() : gk_quantize_iq3_s with the AVX2 scale search. */
void gk_quantize_iq3_s_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix) {
    gk_quantize_iq3_s_with(iq3_search_scale_avx2, src, dst, nrows, n_per_row, imatrix);
}

/* ------------------------------------------------------------------------- */
/* IQ2 neighbour search, 8 listed candidates per step                        */

/* Smallest of the 8 lanes (no NaN among them). */
TARGET_AVX2 static inline float hmin8(__m256 v) {
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    m = _mm_min_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

/* The neighbour search shared by IQ2 and IQ1: each lane computes one listed
 * candidate's weighted squared error with the scalar's operations in its order
 * (candidate value: the grid byte, or xg[(byte - 1) / 2] when xg is given). The
 * scalar keeps the first candidate whose error is below every earlier one
 * (strict "<", starting from FLT_MAX, NaN never chosen), i.e. the first candidate
 * with the smallest error if that is below FLT_MAX: per step of 8, the step's
 * minimum replaces the best only if strictly smaller, and the first candidate
 * holding it wins. @return : its grid index, or -1 if none scores below FLT_MAX. */
TARGET_AVX2 static inline int listed_best(const gk_iq_search *t, int code, const float *xval,
                                          const float *weight, float scale, const float *xg) {
    const int start = -t->map[code] - 1;
    const uint16_t *nb = t->neighbours + start;
    const uint64_t *pts = t->neighbour_points + start + 1;
    const int count = nb[0];
    int grid_index = -1;
    float best_d2 = FLT_MAX;
    const __m256 vs = _mm256_set1_ps(scale);
    const __m256i ff = _mm256_set1_epi32(0xff);
    /* candidate held by each lane after the dword shuffles below */
    const __m256i lane_cand = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
    for (int c0 = 0; c0 < count; c0 += 8) {
        __m256 a = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(pts + c0)));
        __m256 b = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(pts + c0 + 4)));
        __m256i half[2] = { _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0x88)),   /* bytes 0-3 */
                            _mm256_castps_si256(_mm256_shuffle_ps(a, b, 0xdd)) }; /* bytes 4-7 */
        __m256 d2 = _mm256_setzero_ps();
        for (int i = 0; i < 8; i++) {
            __m256i byte = _mm256_and_si256(_mm256_srli_epi32(half[i / 4], 8 * (i % 4)), ff);
            __m256 q;
            if (xg != NULL) {
                /* bytes 1, 3, 5 stand for levels 0, 1, 2 */
                __m256 lv0 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(byte, _mm256_set1_epi32(1)));
                __m256 lv1 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(byte, _mm256_set1_epi32(3)));
                q = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_set1_ps(xg[2]), _mm256_set1_ps(xg[1]), lv1),
                                     _mm256_set1_ps(xg[0]), lv0);
            } else {
                q = _mm256_cvtepi32_ps(byte);
            }
            __m256 diff = _mm256_sub_ps(_mm256_mul_ps(vs, q), _mm256_set1_ps(xval[i]));
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(weight[i]), diff), diff));
        }
        __m256 usable = _mm256_and_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(count - c0), lane_cand)),
                                      _mm256_cmp_ps(d2, d2, _CMP_ORD_Q));
        d2 = _mm256_blendv_ps(_mm256_set1_ps(INFINITY), d2, usable);
        float m = hmin8(d2);
        if (m < best_d2) {
            unsigned lanes = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(d2, _mm256_set1_ps(m), _CMP_EQ_OQ));
            unsigned cands = (lanes & 0xc3u) | ((lanes & 0x0cu) << 2) | ((lanes & 0x30u) >> 2);
            best_d2 = m;
            grid_index = nb[1 + c0 + __builtin_ctz(cands)];
        }
    }
    return grid_index;
}

/* Levels 0..2 of grid point grid_index into L. */
static inline void grid_levels(const gk_iq_search *t, int grid_index, int8_t *L) {
    for (int i = 0; i < 8; i++) L[i] = (int8_t)((gk_grid_byte(t->grid[grid_index], i) - 1) / 2);
}

/* gk_iq2_neighbour_fn for AVX2 (an empty list gives grid point 0, as the scalar). */
TARGET_AVX2 static int iq2_best_neighbour_avx2(const gk_iq_search *t, int code, const float *xval,
                                               const float *weight, float scale, int8_t *L) {
    int grid_index = listed_best(t, code, xval, weight, scale, NULL);
    if (grid_index < 0) grid_index = t->neighbours[-t->map[code] - 1] > 0 ? t->neighbours[-t->map[code]] : 0;
    grid_levels(t, grid_index, L);
    return grid_index;
}

/* gk_iq1_neighbour_fn for AVX2; when no listed point scores below FLT_MAX, the
 * scalar search (which then scans the whole grid) decides. */
TARGET_AVX2 static int iq1_best_neighbour_avx2(const gk_iq_search *t, int code, const float *xval,
                                               const float *weight, float scale, const float *xg,
                                               int8_t *L) {
    int grid_index = listed_best(t, code, xval, weight, scale, xg);
    if (grid_index < 0) return gk_iq1_best_neighbour(t, code, xval, weight, scale, xg, L);
    grid_levels(t, grid_index, L);
    return grid_index;
}

/* gk_iq2_search_fn for AVX2: the trials go 8 at a time into the lanes, each lane
 * performing the scalar loop's operations for its trial (levels of each group of
 * 8, the 8*ngroups-term sums in order); a lane's off-grid group goes through
 * g->neighbour with that lane's code and scale. The scalar's sequential choice
 * among the trials is then replayed on the stored sums. The scalar loop leaves
 * g->Laux / g->on_grid_aux as scratch; they are not read elsewhere and not kept. */
TARGET_AVX2 static float iq2_search_scale_avx2(const gk_iq_search *t, gk_iq2_state *g,
                                               int ngroups, int nis, float max, float scale) {
    enum { MAX_TRIALS = 24 };
    const int ntrial = 2 * nis + 1;
    float sumqx[MAX_TRIALS], sumq2[MAX_TRIALS];
    int32_t codes[4][MAX_TRIALS];
    int32_t off_grid[4][MAX_TRIALS];
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i one = _mm256_set1_epi32(1);
    const __m256 vmax = _mm256_set1_ps(max);
    for (int t0 = 0; t0 < ntrial; t0 += 8) {
        __m256i is = _mm256_min_epi32(_mm256_add_epi32(_mm256_set1_epi32(t0 - nis), lane),
                                      _mm256_set1_epi32(nis));
        __m256 id = _mm256_div_ps(_mm256_add_ps(_mm256_set1_ps(5.f),
                                                _mm256_mul_ps(_mm256_cvtepi32_ps(is), _mm256_set1_ps(0.1f))),
                                  vmax);
        float this_scale[8];
        _mm256_storeu_ps(this_scale, _mm256_div_ps(_mm256_set1_ps(1.f), id));
        /* lanes past the last trial repeat it: no neighbour search for them */
        const unsigned real_lanes = ntrial - t0 >= 8 ? 0xffu : (1u << (ntrial - t0)) - 1;
        __m256 sx = _mm256_setzero_ps(), s2 = _mm256_setzero_ps();
        for (int k = 0; k < ngroups; k++) {
            const float *xv = g->xval + 8 * k;
            __m256i L[8];
            __m256i code = _mm256_setzero_si256();
            for (int i = 0; i < 8; i++) {
                __m256 f = _mm256_mul_ps(_mm256_set1_ps(0.5f),
                                         _mm256_sub_ps(_mm256_mul_ps(id, _mm256_set1_ps(xv[i])), _mm256_set1_ps(1.f)));
                L[i] = _mm256_max_epi32(_mm256_setzero_si256(), _mm256_min_epi32(_mm256_set1_epi32(2), nearest_int8(f)));
                code = _mm256_or_si256(code, _mm256_slli_epi32(L[i], 2 * i));
            }
            __m256i off = _mm256_cmpgt_epi32(_mm256_setzero_si256(), _mm256_i32gather_epi32(t->map, code, 4));
            unsigned off_lanes = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(off)) & real_lanes;
            if (off_lanes) {
                int32_t lane_code[8], lane_level[8][8];
                _mm256_storeu_si256((__m256i *)lane_code, code);
                for (int i = 0; i < 8; i++) _mm256_storeu_si256((__m256i *)lane_level[i], L[i]);
                for (; off_lanes; off_lanes &= off_lanes - 1) {
                    const int l = __builtin_ctz(off_lanes);
                    int8_t lv[8];
                    g->neighbour(t, lane_code[l], xv, g->waux + 8 * k, this_scale[l], lv);
                    lane_code[l] = 0;
                    for (int i = 0; i < 8; i++) {
                        lane_level[i][l] = lv[i];
                        lane_code[l] |= lv[i] << (2 * i);
                    }
                }
                for (int i = 0; i < 8; i++) L[i] = _mm256_loadu_si256((const __m256i *)lane_level[i]);
                code = _mm256_loadu_si256((const __m256i *)lane_code);
            }
            for (int i = 0; i < 8; i++) {
                __m256 w = _mm256_set1_ps(g->weight[8 * k + i]);
                __m256 q = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_slli_epi32(L[i], 1), one));
                sx = _mm256_add_ps(sx, _mm256_mul_ps(_mm256_mul_ps(w, _mm256_set1_ps(xv[i])), q));
                s2 = _mm256_add_ps(s2, _mm256_mul_ps(_mm256_mul_ps(w, q), q));
            }
            _mm256_storeu_si256((__m256i *)(codes[k] + t0), code);
            _mm256_storeu_si256((__m256i *)(off_grid[k] + t0), off);
        }
        _mm256_storeu_ps(sumqx + t0, sx);
        _mm256_storeu_ps(sumq2 + t0, s2);
    }

    float best = 0;
    int chosen = -1;
    for (int tr = 0; tr < ntrial; tr++)
        if (improves(sumqx[tr], sumq2[tr], &best, &scale)) chosen = tr;
    if (chosen >= 0) {
        for (int k = 0; k < ngroups; k++) {
            for (int i = 0; i < 8; i++) g->L[8 * k + i] = (int8_t)((codes[k][chosen] >> (2 * i)) & 3);
            g->on_grid[k] = off_grid[k][chosen] == 0;
        }
    }
    return scale;
}

/** gk_quantize_iq2_xxs_avx2() : gk_quantize_iq2_xxs with the AVX2 trial loop and
 *  neighbour search. */
void gk_quantize_iq2_xxs_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                              const float *imatrix) {
    gk_quantize_iq2_xxs_with(iq2_search_scale_avx2, iq2_best_neighbour_avx2, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq2_xs_avx2() : gk_quantize_iq2_xs with the AVX2 trial loop and
 *  neighbour search. */
void gk_quantize_iq2_xs_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                             const float *imatrix) {
    gk_quantize_iq2_xs_with(iq2_search_scale_avx2, iq2_best_neighbour_avx2, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq2_s_avx2() : gk_quantize_iq2_s with the AVX2 trial loop and
 *  neighbour search. */
void gk_quantize_iq2_s_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix) {
    gk_quantize_iq2_s_with(iq2_search_scale_avx2, iq2_best_neighbour_avx2, src, dst, nrows, n_per_row, imatrix);
}

/* ------------------------------------------------------------------------- */
/* IQ1 split searches, one split per lane                                    */

static const float iq1s_p[3] = { -1 + GK_IQ1S_DELTA, GK_IQ1S_DELTA, 1 + GK_IQ1S_DELTA };
static const float iq1s_m[3] = { -1 - GK_IQ1S_DELTA, -GK_IQ1S_DELTA, 1 - GK_IQ1S_DELTA };
static const float iq1m_p[3] = { -1 + GK_IQ1M_DELTA, GK_IQ1M_DELTA, 1 + GK_IQ1M_DELTA };
static const float iq1m_m[3] = { -1 - GK_IQ1M_DELTA, -GK_IQ1M_DELTA, 1 - GK_IQ1M_DELTA };

/* sumqx and sumq2 of the IQ1_S split (i1, i2) in each lane (i2 per lane) for the
 * shifted levels x, in the scalar's operation order. */
TARGET_AVX2 static inline void iq1s_split_sums(const float *sumx, const float *sumw, int i1, __m256 sx2,
                                               __m256 sw2, const float *x, __m256 *qx, __m256 *q2) {
    const int n = 32;
    const __m256 x0 = _mm256_set1_ps(x[0]), x1 = _mm256_set1_ps(x[1]), x2 = _mm256_set1_ps(x[2]);
    const __m256 sx1 = _mm256_set1_ps(sumx[i1]), sw1 = _mm256_set1_ps(sumw[i1]);
    *qx = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(sumx[i1] - sumx[0]), x0),
                                      _mm256_mul_ps(_mm256_sub_ps(sx2, sx1), x1)),
                        _mm256_mul_ps(_mm256_sub_ps(_mm256_set1_ps(sumx[n]), sx2), x2));
    *q2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(sumw[i1] - sumw[0]), x0), x0),
                                      _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(sw2, sw1), x1), x1)),
                        _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(_mm256_set1_ps(sumw[n]), sw2), x2), x2));
}

/* gk_iq1_split_fn of IQ1_S for AVX2: for each i1, the splits i2 = i1..32 go 8 at a
 * time into the lanes; the scalar's sequential choice (i2 ascending, the plus
 * shift before the minus shift) is replayed on the stored sums. */
TARGET_AVX2 static float iq1s_split_avx2(gk_iq1_state *s, const float *xb, float max, int *shift) {
    const int n = 32;
    gk_iq1_prefix_sums(s, xb, n);
    float sumx[n + 1 + 8], sumw[n + 1 + 8]; /* padded for 8-wide loads */
    memcpy(sumx, s->sumx, sizeof s->sumx);
    memcpy(sumw, s->sumw, sizeof s->sumw);
    for (int j = n + 1; j < n + 1 + 8; j++) sumx[j] = sumw[j] = 0;
    float best_score = -FLT_MAX, scale = max;
    int besti1 = -1, besti2 = -1, best_shift = 0;
    for (int i1 = 0; i1 <= n; i1++) {
        float qxp[n + 8], q2p[n + 8], qxm[n + 8], q2m[n + 8];
        const int count = n - i1 + 1;
        for (int c = 0; c < count; c += 8) {
            __m256 sx2 = _mm256_loadu_ps(sumx + i1 + c), sw2 = _mm256_loadu_ps(sumw + i1 + c);
            __m256 qx, q2;
            iq1s_split_sums(sumx, sumw, i1, sx2, sw2, iq1s_p, &qx, &q2);
            _mm256_storeu_ps(qxp + c, qx);
            _mm256_storeu_ps(q2p + c, q2);
            iq1s_split_sums(sumx, sumw, i1, sx2, sw2, iq1s_m, &qx, &q2);
            _mm256_storeu_ps(qxm + c, qx);
            _mm256_storeu_ps(q2m + c, q2);
        }
        for (int c = 0; c < count; c++) {
            if (improves(qxp[c], q2p[c], &best_score, &scale)) {
                besti1 = i1;
                besti2 = i1 + c;
                best_shift = 1;
            }
            if (improves(qxm[c], q2m[c], &best_score, &scale)) {
                besti1 = i1;
                besti2 = i1 + c;
                best_shift = -1;
            }
        }
    }
    *shift = best_shift;
    if (besti1 < 0 || besti2 < 0 || best_shift == 0) return 0;
    gk_iq1_assign_levels(s, n, besti1, besti2);
    return scale;
}

/* gk_iq1_split_fn of IQ1_M for AVX2: the 153 splits (i1, i2) go 8 at a time into
 * the lanes, each accumulating the four sign combinations over the 16 sorted
 * values in the scalar's order; the sequential choice (split order, then
 * combination 0..3) is replayed on the stored sums. */
TARGET_AVX2 static float iq1m_split_avx2(gk_iq1_state *s, const float *xb, float max, int *best_kp) {
    enum { N = 16, NPAIRS = (N + 1) * (N + 2) / 2, PADDED = (NPAIRS + 7) / 8 * 8 };
    int32_t pi1[PADDED], pi2[PADDED];
    int np = 0;
    for (int i1 = 0; i1 <= N; i1++)
        for (int i2 = i1; i2 <= N; i2++, np++) {
            pi1[np] = i1;
            pi2[np] = i2;
        }
    for (; np < PADDED; np++) pi1[np] = pi2[np] = N;
    float sqx[4][PADDED], sq2[4][PADDED];
    for (int c = 0; c < PADDED; c += 8) {
        const __m256i vi1 = _mm256_loadu_si256((const __m256i *)(pi1 + c));
        const __m256i vi2 = _mm256_loadu_si256((const __m256i *)(pi2 + c));
        __m256 qx[4], q2[4];
        for (int k = 0; k < 4; k++) qx[k] = q2[k] = _mm256_setzero_ps();
        for (int j = 0; j < N; j++) {
            const int i = s->order[j];
            const __m256 w = _mm256_set1_ps(s->weight[i]), x = _mm256_set1_ps(xb[i]);
            const __m256 below1 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(vi1, _mm256_set1_epi32(j)));
            const __m256 below2 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(vi2, _mm256_set1_epi32(j)));
            for (int k = 0; k < 4; k++) {
                /* the first half follows bit 1 of k, the second half bit 0 */
                const bool minus = i < N / 2 ? k >= 2 : (k % 2) == 1;
                const float *tb = minus ? iq1m_m : iq1m_p;
                __m256 xq = _mm256_blendv_ps(_mm256_blendv_ps(_mm256_set1_ps(tb[2]), _mm256_set1_ps(tb[1]), below2),
                                             _mm256_set1_ps(tb[0]), below1);
                __m256 wq = _mm256_mul_ps(w, xq);
                qx[k] = _mm256_add_ps(qx[k], _mm256_mul_ps(wq, x));
                q2[k] = _mm256_add_ps(q2[k], _mm256_mul_ps(wq, xq));
            }
        }
        for (int k = 0; k < 4; k++) {
            _mm256_storeu_ps(sqx[k] + c, qx[k]);
            _mm256_storeu_ps(sq2[k] + c, q2[k]);
        }
    }
    float best_score = -FLT_MAX, scale = max;
    int besti1 = -1, besti2 = -1, best_k = -1;
    for (int p = 0; p < NPAIRS; p++) {
        for (int k = 0; k < 4; k++) {
            if (improves(sqx[k][p], sq2[k][p], &best_score, &scale)) {
                besti1 = pi1[p];
                besti2 = pi2[p];
                best_k = k;
            }
        }
    }
    *best_kp = best_k;
    if (besti1 < 0 || besti2 < 0 || best_k < 0) return 0;
    gk_iq1_assign_levels(s, N, besti1, besti2);
    return scale;
}

/** gk_quantize_iq1_s_avx2() : gk_quantize_iq1_s with the AVX2 split and neighbour
 *  searches. */
void gk_quantize_iq1_s_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix) {
    gk_quantize_iq1_s_with(iq1s_split_avx2, iq1_best_neighbour_avx2, src, dst, nrows, n_per_row, imatrix);
}

/** gk_quantize_iq1_m_avx2() : gk_quantize_iq1_m with the AVX2 split and neighbour
 *  searches. */
void gk_quantize_iq1_m_avx2(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                            const float *imatrix) {
    gk_quantize_iq1_m_with(iq1m_split_avx2, iq1_best_neighbour_avx2, src, dst, nrows, n_per_row, imatrix);
}

/* ------------------------------------------------------------------------- */
/* IQ4 dequantization                                                        */

/* 32 values of one IQ4 block: dl times the level of each nibble of q4. */
TARGET_AVX2 static inline void iq4_dequant32(const iq4_levels *c, const uint8_t *q4, float dl,
                                             float *dst) {
    const __m256 dv = _mm256_set1_ps(dl);
    const __m128i bytes = _mm_loadu_si128((const __m128i *)q4);
    const __m128i lo = _mm_and_si128(bytes, _mm_set1_epi8(0xf));
    const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0xf));
    const __m128i parts[4] = { lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8) };
    for (int k = 0; k < 4; k++) {
        __m256i idx = _mm256_cvtepu8_epi32(parts[k]);
        _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(dv, iq4_level_at(c, idx)));
    }
}

/** gk_dequantize_iq4_nl_avx2() : gk_dequantize_iq4_nl, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq4_nl_avx2(const void *src, float *dst, int64_t n) {
    iq4_levels c;
    iq4_levels_init(&c);
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK4_NL; i++, b += IQ4_NL_BYTES, dst += QK4_NL)
        iq4_dequant32(&c, b + 2, gk_fp16_to_fp32(gk_load_le16(b)), dst);
}

/** gk_dequantize_iq4_xs_avx2() : gk_dequantize_iq4_xs, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq4_xs_avx2(const void *src, float *dst, int64_t n) {
    iq4_levels c;
    iq4_levels_init(&c);
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ4_XS_BYTES) {
        const float d = gk_fp16_to_fp32(gk_load_le16(b));
        const uint16_t scales_h = gk_load_le16(b + 2);
        for (int ib = 0; ib < QK_K / 32; ib++, dst += 32) {
            const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xf) | (((scales_h >> (2 * ib)) & 3) << 4);
            iq4_dequant32(&c, b + 8 + 16 * ib, d * (ls - 32), dst);
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Grid dequantization (IQ3, IQ2, IQ1), 8 values per step                    */

/* dst[j] = db * byte j of the 8 grid bytes g, its sign bit flipped when bit j of
 * signs is set (iquants.c's signed_by). */
TARGET_AVX2 static inline void grid8_signed(float *dst, float db, uint64_t g, uint8_t signs) {
    const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)g)));
    const __m256i bit = _mm256_and_si256(_mm256_set1_epi32(signs), _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128));
    const __m256i flip = _mm256_slli_epi32(_mm256_cmpgt_epi32(bit, _mm256_setzero_si256()), 31);
    _mm256_storeu_ps(dst, _mm256_xor_ps(_mm256_mul_ps(_mm256_set1_ps(db), q), _mm256_castsi256_ps(flip)));
}

/* dst[j] = dl * (signed byte j of g + delta), as the IQ1 scalar expression. */
TARGET_AVX2 static inline void grid8_shifted(float *dst, float dl, uint64_t g, float delta) {
    const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128((long long)g)));
    _mm256_storeu_ps(dst, _mm256_mul_ps(_mm256_set1_ps(dl), _mm256_add_ps(q, _mm256_set1_ps(delta))));
}

/** gk_dequantize_iq2_xxs_avx2() : gk_dequantize_iq2_xxs, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq2_xxs_avx2(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ2_XXS_BYTES) {
        const float d = gk_fp16_to_fp32(gk_load_le16(b));
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {
            const uint8_t *rec = b + 2 + 8 * ib32;
            const uint32_t aux1 = gk_load_le32(rec + 4);
            const float db = d * (0.5f + (aux1 >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++, dst += 8)
                grid8_signed(dst, db, gk_iq2xxs_grid[rec[l]], gk_ksigns_iq2xs[(aux1 >> (7 * l)) & 127]);
        }
    }
}

/** gk_dequantize_iq2_xs_avx2() : gk_dequantize_iq2_xs, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq2_xs_avx2(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ2_XS_BYTES) {
        const float d = gk_fp16_to_fp32(gk_load_le16(b));
        const uint8_t *scales = b + 66;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++) {
            const float db[2] = { d * (0.5f + (scales[ib32] & 0xf)) * 0.25f, d * (0.5f + (scales[ib32] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, dst += 8) {
                const uint16_t code = gk_load_le16(b + 2 + 2 * (4 * ib32 + l));
                grid8_signed(dst, db[l / 2], gk_iq2xs_grid[code & 511], gk_ksigns_iq2xs[code >> 9]);
            }
        }
    }
}

/** gk_dequantize_iq2_s_avx2() : gk_dequantize_iq2_s, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq2_s_avx2(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ2_S_BYTES) {
        const float d = gk_fp16_to_fp32(gk_load_le16(b));
        const uint8_t *qs = b + 2, *signs = b + 2 + QK_K / 8, *qh = b + 66, *scales = b + 74;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++, qs += 4, signs += 4) {
            const float db[2] = { d * (0.5f + (scales[ib32] & 0xf)) * 0.25f, d * (0.5f + (scales[ib32] >> 4)) * 0.25f };
            for (int l = 0; l < 4; l++, dst += 8)
                grid8_signed(dst, db[l / 2], gk_iq2s_grid[qs[l] | ((qh[ib32] << (8 - 2 * l)) & 0x300)], signs[l]);
        }
    }
}

/* Two 4-value IQ3 grid points as one 8-byte entry. */
static inline uint64_t grid_pair(uint32_t g1, uint32_t g2) { return (uint64_t)g1 | ((uint64_t)g2 << 32); }

/** gk_dequantize_iq3_xxs_avx2() : gk_dequantize_iq3_xxs, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq3_xxs_avx2(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ3_XXS_BYTES) {
        const float d = gk_fp16_to_fp32(gk_load_le16(b));
        const uint8_t *qs = b + 2, *words = b + 2 + QK_K / 4;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++, qs += 8) {
            const uint32_t aux = gk_load_le32(words + 4 * ib32);
            const float db = d * (0.5f + (aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; l++, dst += 8)
                grid8_signed(dst, db, grid_pair(gk_iq3xxs_grid[qs[2 * l]], gk_iq3xxs_grid[qs[2 * l + 1]]),
                             gk_ksigns_iq2xs[(aux >> (7 * l)) & 127]);
        }
    }
}

/** gk_dequantize_iq3_s_avx2() : gk_dequantize_iq3_s, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq3_s_avx2(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ3_S_BYTES) {
        const float d = gk_fp16_to_fp32(gk_load_le16(b));
        const uint8_t *qs = b + 2, *qh = b + 66, *signs = b + 74, *scales = b + 106;
        for (int ib32 = 0; ib32 < QK_K / 32; ib32++, qs += 8, signs += 4) {
            const float db = d * (1 + 2 * ((scales[ib32 / 2] >> (4 * (ib32 % 2))) & 0xf));
            const uint8_t h = qh[ib32];
            for (int l = 0; l < 4; l++, dst += 8)
                grid8_signed(dst, db, grid_pair(gk_iq3s_grid[qs[2 * l] | ((h << (8 - 2 * l)) & 256)],
                                                gk_iq3s_grid[qs[2 * l + 1] | ((h << (7 - 2 * l)) & 256)]),
                             signs[l]);
        }
    }
}

/** gk_dequantize_iq1_s_avx2() : gk_dequantize_iq1_s, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq1_s_avx2(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ1_S_BYTES) {
        const float d = gk_fp16_to_fp32(gk_load_le16(b));
        const uint8_t *qs = b + 2;
        for (int ib = 0; ib < QK_K / 32; ib++, qs += 4) {
            const uint16_t qh = gk_load_le16(b + 34 + 2 * ib);
            const float dl = d * (2 * ((qh >> 12) & 7) + 1);
            const float delta = (qh & 0x8000) ? -GK_IQ1S_DELTA : GK_IQ1S_DELTA;
            for (int l = 0; l < 4; l++, dst += 8)
                grid8_shifted(dst, dl, gk_iq1s_grid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], delta);
        }
    }
}

/** gk_dequantize_iq1_m_avx2() : gk_dequantize_iq1_m, 8 values per step. */
TARGET_AVX2 void gk_dequantize_iq1_m_avx2(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t i = 0; i < n / QK_K; i++, b += IQ1_M_BYTES) {
        const uint8_t *qs = b, *qh = b + 32;
        uint16_t sc[4];
        for (int k = 0; k < 4; k++) sc[k] = gk_load_le16(b + 48 + 2 * k);
        const float d = gk_fp16_to_fp32((uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
                                                   ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
        for (int ib = 0; ib < QK_K / 32; ib++, qs += 4, qh += 2) {
            const float dl1 = d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1);
            const float dl2 = d * (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1);
            const int idx[4] = { qs[0] | ((qh[0] << 8) & 0x700), qs[1] | ((qh[0] << 4) & 0x700),
                                 qs[2] | ((qh[1] << 8) & 0x700), qs[3] | ((qh[1] << 4) & 0x700) };
            const uint8_t dbit[4] = { qh[0] & 0x08, qh[0] & 0x80, qh[1] & 0x08, qh[1] & 0x80 };
            for (int l = 0; l < 4; l++, dst += 8)
                grid8_shifted(dst, l < 2 ? dl1 : dl2, gk_iq1s_grid[idx[l]], dbit[l] ? -GK_IQ1M_DELTA : GK_IQ1M_DELTA);
        }
    }
}

/* ------------------------------------------------------------------------- */

/** gk_register_iquants_avx2() : the AVX2 I-quant kernels into table (the IQ4
 *  quantizers are iq4_avx2.c's). */
void gk_register_iquants_avx2(gk_type_info *table) {
    table[GK_TYPE_IQ4_XS].dequantize = gk_dequantize_iq4_xs_avx2;
    table[GK_TYPE_IQ4_NL].dequantize = gk_dequantize_iq4_nl_avx2;
    table[GK_TYPE_IQ3_XXS].quantize = gk_quantize_iq3_xxs_avx2;
    table[GK_TYPE_IQ3_S].quantize = gk_quantize_iq3_s_avx2;
    table[GK_TYPE_IQ2_XXS].quantize = gk_quantize_iq2_xxs_avx2;
    table[GK_TYPE_IQ2_XS].quantize = gk_quantize_iq2_xs_avx2;
    table[GK_TYPE_IQ2_S].quantize = gk_quantize_iq2_s_avx2;
    table[GK_TYPE_IQ1_S].quantize = gk_quantize_iq1_s_avx2;
    table[GK_TYPE_IQ1_M].quantize = gk_quantize_iq1_m_avx2;
    table[GK_TYPE_IQ3_XXS].dequantize = gk_dequantize_iq3_xxs_avx2;
    table[GK_TYPE_IQ3_S].dequantize = gk_dequantize_iq3_s_avx2;
    table[GK_TYPE_IQ2_XXS].dequantize = gk_dequantize_iq2_xxs_avx2;
    table[GK_TYPE_IQ2_XS].dequantize = gk_dequantize_iq2_xs_avx2;
    table[GK_TYPE_IQ2_S].dequantize = gk_dequantize_iq2_s_avx2;
    table[GK_TYPE_IQ1_S].dequantize = gk_dequantize_iq1_s_avx2;
    table[GK_TYPE_IQ1_M].dequantize = gk_dequantize_iq1_m_avx2;
}
