/*
 * quant_util.c - scale-search helpers shared by the block quantizers.
 *
 * Each function follows the algorithm of the ggml helper of the same name
 * (ggml-quants.c) with identical float arithmetic, which is what makes our
 * quantized blocks bit-identical to the reference.
 */
#include "types/quant_util.h"

#include <math.h>

/* Weight of value xi when the caller gave none, by rmse_type (ggml's choice). */
static inline float default_weight(int rmse_type, float xi) {
    if (rmse_type == 1) return xi * xi;
    if (rmse_type == 2) return 1;
    if (rmse_type == 3) return fabsf(xi);
    return sqrtf(fabsf(xi));
}

/* The largest |x[i]| (0 for none), and in *max the x[i] that has it (the first
 * on ties, 0 when all are zero). */
static float largest_magnitude(int n, const float *x, float *max) {
    float amax = 0;
    *max = 0;
    for (int i = 0; i < n; ++i) {
        float ax = fabsf(x[i]);
        if (ax > amax) {
            amax = ax;
            *max = x[i];
        }
    }
    return amax;
}

/* Clamp a signed level to [-nmax, nmax-1]. */
static inline int clamp_signed_level(int l, int nmax) {
    return GK_MAX(-nmax, GK_MIN(nmax - 1, l));
}

float gk_make_qx_quants(int n, int nmax, const float *x, int8_t *L, int rmse_type,
                        const float *qw) {
    float max;
    const float amax = largest_magnitude(n, x, &max);
    if (amax < GK_GROUP_MAX_EPS) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = -nmax / max;
    if (rmse_type == 0) {
        for (int i = 0; i < n; ++i) {
            int l = gk_nearest_int(iscale * x[i]);
            L[i] = (int8_t)(nmax + clamp_signed_level(l, nmax));
        }
        return 1 / iscale;
    }
    bool return_early = false;
    if (rmse_type < 0) {
        rmse_type = -rmse_type;
        return_early = true;
    }
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = clamp_signed_level(gk_nearest_int(iscale * x[i]), nmax);
        L[i] = (int8_t)(l + nmax);
        float w = qw ? qw[i] : default_weight(rmse_type, x[i]);
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 ? sumlx / suml2 : 0.0f;
    if (return_early) return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = clamp_signed_level(gk_nearest_int(iscale * x[i]), nmax);
            float w = qw ? qw[i] : default_weight(rmse_type, x[i]);
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                int l = gk_nearest_int(iscale * x[i]);
                L[i] = (int8_t)(nmax + clamp_signed_level(l, nmax));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

float gk_make_qkx2_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                          float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                          bool use_mad) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        int l = gk_nearest_int(iscale * (x[i] - min));
        L[i] = (uint8_t)GK_MAX(0, GK_MIN(nmax, l));
        float diff = scale * L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        float w = weights[i];
        best_error += w * diff;
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = gk_nearest_int(iscale * (x[i] - min));
            l = GK_MAX(0, GK_MIN(nmax, l));
            Laux[i] = (uint8_t)l;
            float w = weights[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                diff = use_mad ? fabsf(diff) : diff * diff;
                float w = weights[i];
                cur_error += w * diff;
            }
            if (cur_error < best_error) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

float gk_make_qkx3_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                          float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                          bool use_mad) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights ? weights[0] : x[0] * x[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        float w = weights ? weights[i] : x[i] * x[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max <= min) {
        memset(L, 0, (size_t)n);
        *the_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_mad = 0;
    for (int i = 0; i < n; ++i) {
        int l = gk_nearest_int(iscale * (x[i] - min));
        L[i] = (uint8_t)GK_MAX(0, GK_MIN(nmax, l));
        float diff = scale * L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        float w = weights ? weights[i] : x[i] * x[i];
        best_mad += w * diff;
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            /* the fitted min may sit at or near max: keep the level finite and in range */
            const float v = iscale * (x[i] - min);
            const int l = v > 0 ? gk_nearest_int(GK_MIN(v, (float)nmax)) : 0;
            Laux[i] = (uint8_t)l;
            float w = weights ? weights[i] : x[i] * x[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float mad = 0;
            for (int i = 0; i < n; ++i) {
                float diff = this_scale * Laux[i] + this_min - x[i];
                diff = use_mad ? fabsf(diff) : diff * diff;
                float w = weights ? weights[i] : x[i] * x[i];
                mad += w * diff;
            }
            if (mad < best_mad) {
                for (int i = 0; i < n; ++i) L[i] = Laux[i];
                best_mad = mad;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

float gk_make_q3_quants(int n, int nmax, const float *x, int8_t *L) {
    float max;
    const float amax = largest_magnitude(n, x, &max);
    if (amax < GK_GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.f;
    }
    float iscale = -nmax / max;
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = gk_nearest_int(iscale * x[i]);
        l = GK_MAX(-nmax, GK_MIN(nmax - 1, l));
        L[i] = (int8_t)l;
        float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            float w = x[i] * x[i];
            float slx = sumlx - w * x[i] * L[i];
            if (slx > 0) {
                float sl2 = suml2 - w * L[i] * L[i];
                int new_l = gk_nearest_int(x[i] * sl2 / slx);
                new_l = GK_MAX(-nmax, GK_MIN(nmax - 1, new_l));
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (int8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++changed;
                    }
                }
            }
        }
        if (!changed) break;
    }
    for (int i = 0; i < n; ++i) L[i] = (int8_t)(L[i] + nmax);
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float gk_make_qp_quants(int n, int nmax, const float *x, uint8_t *L, const float *qw) {
    float max = 0;
    for (int i = 0; i < n; ++i) max = GK_MAX(max, x[i]);
    if (max < GK_GROUP_MAX_EPS) {
        memset(L, 0, (size_t)n);
        return 0.f;
    }
    float iscale = nmax / max;
    for (int i = 0; i < n; ++i) L[i] = (uint8_t)gk_nearest_int(iscale * x[i]);
    /* the error of the plain scale, then of eight scales around it */
    float scale = 1 / iscale;
    float best_mse = 0;
    for (int i = 0; i < n; ++i) {
        float diff = x[i] - scale * L[i];
        best_mse += qw[i] * diff * diff;
    }
    for (int is = -4; is <= 4; ++is) {
        if (is == 0) continue;
        float iscale_is = (0.1f * is + nmax) / max;
        float scale_is = 1 / iscale_is;
        float mse = 0;
        for (int i = 0; i < n; ++i) {
            int l = GK_MIN(nmax, gk_nearest_int(iscale_is * x[i]));
            float diff = x[i] - scale_is * l;
            mse += qw[i] * diff * diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = GK_MIN(nmax, gk_nearest_int(iscale * x[i]));
        L[i] = (uint8_t)l;
        float w = qw[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    /* coordinate descent: move one level at a time while the fit improves */
    for (int pass = 0; pass < 5; ++pass) {
        int changed = 0;
        for (int i = 0; i < n; ++i) {
            float w = qw[i];
            float slx = sumlx - w * x[i] * L[i];
            float sl2 = suml2 - w * L[i] * L[i];
            if (slx > 0 && sl2 > 0) {
                int new_l = GK_MIN(nmax, gk_nearest_int(x[i] * sl2 / slx));
                if (new_l != L[i]) {
                    slx += w * x[i] * new_l;
                    sl2 += w * new_l * new_l;
                    if (slx * slx * suml2 > sumlx * sumlx * sl2) {
                        L[i] = (uint8_t)new_l;
                        sumlx = slx;
                        suml2 = sl2;
                        ++changed;
                    }
                }
            }
        }
        if (!changed) break;
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/* ---- the scalar group searches ---------------------------------------------------- */

static void qkx2_groups(int ngroups, int n, int nmax, const float *x, const float *w, uint8_t *L,
                        float *scales, float *mins, float rmin, float rdelta, int nstep,
                        bool use_mad) {
    uint8_t Laux[32];
    for (int g = 0; g < ngroups; ++g)
        scales[g] = gk_make_qkx2_quants(n, nmax, x + g * n, w + g * n, L + g * n, &mins[g], Laux,
                                        rmin, rdelta, nstep, use_mad);
}

static void qkx3_groups(int ngroups, int n, int nmax, const float *x, const float *w, uint8_t *L,
                        float *scales, float *mins, float rmin, float rdelta, int nstep,
                        bool use_mad) {
    uint8_t Laux[32];
    for (int g = 0; g < ngroups; ++g)
        scales[g] = gk_make_qkx3_quants(n, nmax, x + g * n, w + g * n, L + g * n, &mins[g], Laux,
                                        rmin, rdelta, nstep, use_mad);
}

static void qx_groups(int ngroups, int n, int nmax, const float *x, const float *w, int8_t *L,
                      float *scales) {
    for (int g = 0; g < ngroups; ++g)
        scales[g] = gk_make_qx_quants(n, nmax, x + g * n, L + g * n, 1, w ? w + g * n : NULL);
}

static void q3_groups(int ngroups, int n, int nmax, const float *x, int8_t *L, float *scales) {
    for (int g = 0; g < ngroups; ++g) scales[g] = gk_make_q3_quants(n, nmax, x + g * n, L + g * n);
}

static void requant_groups(int ngroups, int n, const float *x, const float *d, const float *dm,
                           int lo, int hi, int offset, uint8_t *L) {
    for (int g = 0; g < ngroups; ++g) {
        if (!d[g]) continue;
        for (int i = 0; i < n; ++i) {
            const float xi = x[g * n + i];
            const int l = gk_nearest_int(dm ? (xi + dm[g]) / d[g] : xi / d[g]);
            L[g * n + i] = (uint8_t)(offset + GK_MAX(lo, GK_MIN(hi, l)));
        }
    }
}

const gk_searches gk_searches_scalar = { qkx2_groups, qkx3_groups, qx_groups, q3_groups,
                                         requant_groups };
