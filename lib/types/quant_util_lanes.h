/*
 * quant_util_lanes.h - the group searches of quant_util.c with one group per
 * vector lane, written once for any lane count.
 *
 * Included by quant_util_avx2.c (LANES 8) and quant_util_avx512.c (LANES 16)
 * after they define LANES, LANE_TARGET (a function attribute), VANY(m)
 * (whether any lane of a comparison result is set), VMIN_EPI32(a, b) and
 * VMAX_EPI32(a, b) (the signed 32-bit lane minimum and maximum instructions),
 * and TWO_SOURCE_PERMUTE: 1 where one instruction picks any lanes of two
 * registers, PERMUTE2(a, idx, b) (lane c of the result is lane idx[c] of a, or
 * of b for idx[c] - LANES), so groups are transposed in registers; 0 to move
 * them one value at a time (faster than AVX2's emulated permutes, as measured).
 * Each lane performs exactly the float operations of the
 * scalar helper for its group, in the same order: comparisons and blends where
 * the scalar code branches, integer lanes for gk_nearest_int's bias trick, true
 * division, no fused multiply-add (-ffp-contract=off). A group count that is not
 * a multiple of LANES fills the spare lanes with copies of the last group and
 * drops their results.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef float vf __attribute__((vector_size(4 * LANES)));
typedef int32_t vi __attribute__((vector_size(4 * LANES)));

#define MAXN 32 /* longest group the K-quants and legacy types use */

LANE_TARGET static inline vf vset(float f) { return (vf){ 0 } + f; }
LANE_TARGET static inline vi iset(int32_t v) { return (vi){ 0 } + v; }
/* m ? a : b per lane, m a comparison result (all ones or zero). */
LANE_TARGET static inline vf fsel(vi m, vf a, vf b) { return (vf)((m & (vi)a) | (~m & (vi)b)); }
LANE_TARGET static inline vi isel(vi m, vi a, vi b) { return (m & a) | (~m & b); }
LANE_TARGET static inline vf vabs(vf x) { return (vf)((vi)x & 0x7fffffff); }
LANE_TARGET static inline vf tof(vi v) { return __builtin_convertvector(v, vf); }
LANE_TARGET static inline vi imin(vi a, vi b) { return (vi)VMIN_EPI32(a, b); }
LANE_TARGET static inline vi imax(vi a, vi b) { return (vi)VMAX_EPI32(a, b); }
/* gk_nearest_int per lane. */
LANE_TARGET static inline vi vnearest(vf f) {
    const vi bits = (vi)(f + 12582912.f);
    return (bits & 0x007fffff) - 0x00400000;
}
LANE_TARGET static inline bool any(vi m) { return VANY(m); }

#if TWO_SOURCE_PERMUTE
/* Transposes the LANES x LANES matrix of 32-bit values r (row j is r[j]) in
 * place: at each level h, element (j, c) with bit h set in c trades places with
 * element (j + h, c - h) for rows j with bit h clear. */
LANE_TARGET static inline void transpose_lanes(vi *r) {
    for (int h = LANES / 2; h >= 1; h /= 2) {
        vi lo, hi;
        for (int c = 0; c < LANES; ++c) {
            lo[c] = (c & h) ? LANES + c - h : c;
            hi[c] = (c & h) ? LANES + c : c + h;
        }
        for (int j = 0; j < LANES; ++j) {
            if (j & h) continue;
            const vi a = r[j], b = r[j + h];
            r[j] = (vi)PERMUTE2(a, lo, b);
            r[j + h] = (vi)PERMUTE2(a, hi, b);
        }
    }
}
#endif

/* Element i of lane k's group into xt[i][k], for groups first..first+LANES-1
 * of n values at src (groups past last repeat the last one). */
LANE_TARGET static void gather(const float *src, int n, int first, int ngroups, vf *xt) {
#if TWO_SOURCE_PERMUTE
    if (n % LANES == 0 && first + LANES <= ngroups) {
        for (int c = 0; c < n; c += LANES) {
            vi r[LANES];
            for (int k = 0; k < LANES; ++k) memcpy(&r[k], src + (int64_t)(first + k) * n + c, sizeof r[k]);
            transpose_lanes(r);
            for (int j = 0; j < LANES; ++j) xt[c + j] = (vf)r[j];
        }
        return;
    }
#endif
    for (int k = 0; k < LANES; ++k) {
        const int g = first + k < ngroups ? first + k : ngroups - 1;
        const float *p = src + (int64_t)g * n;
        for (int i = 0; i < n; ++i) xt[i][k] = p[i];
    }
}

/* The reverse of gather for levels: L[g * n + i] = Lt[i][k] as a byte for the
 * groups g = first + k below ngroups. */
LANE_TARGET static void scatter_levels(const vi *Lt, int n, int first, int ngroups, uint8_t *L) {
#if TWO_SOURCE_PERMUTE
    if (n % LANES == 0 && first + LANES <= ngroups) {
        typedef uint8_t vb __attribute__((vector_size(LANES)));
        for (int c = 0; c < n; c += LANES) {
            vi r[LANES];
            memcpy(r, Lt + c, sizeof r);
            transpose_lanes(r);
            for (int k = 0; k < LANES; ++k) {
                const vb b = __builtin_convertvector(r[k], vb);
                memcpy(L + (int64_t)(first + k) * n + c, &b, sizeof b);
            }
        }
        return;
    }
#endif
    for (int k = 0; k < LANES && first + k < ngroups; ++k)
        for (int i = 0; i < n; ++i) L[(first + k) * n + i] = (uint8_t)Lt[i][k];
}

/* make_qkx2_quants (v3 false) or make_qkx3_quants (v3 true) for LANES groups. */
LANE_TARGET static void qkx_lanes(int n, int nmax, const vf *x, const vf *w, vi *L, vf *scale_out,
                                  vf *min_out, float rmin, float rdelta, int nstep, bool use_mad,
                                  bool v3) {
    vf min = x[0], max = x[0];
    vf sum_w = w[0];
    vf sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        min = fsel(x[i] < min, x[i], min);
        max = fsel(x[i] > max, x[i], max);
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    min = fsel(min > 0, vset(0), min);
    const vf min0 = min;
    const vi flat = v3 ? (max <= min) : (max == min);
    const vf fnmax = vset((float)nmax);
    vf iscale = fnmax / (max - min);
    vf scale = 1 / iscale;
    vf best_error = vset(0);
    for (int i = 0; i < n; ++i) {
        L[i] = imax(iset(0), imin(iset(nmax), vnearest(iscale * (x[i] - min))));
        vf diff = scale * tof(L[i]) + min - x[i];
        diff = use_mad ? vabs(diff) : diff * diff;
        best_error += w[i] * diff;
    }
    if (nstep >= 1) {
        vi Laux[MAXN];
        for (int is = 0; is <= nstep; ++is) {
            iscale = vset(rmin + rdelta * is + nmax) / (max - min);
            vf sum_l = vset(0), sum_l2 = vset(0), sum_xl = vset(0);
            for (int i = 0; i < n; ++i) {
                vi l;
                if (v3) {
                    const vf v = iscale * (x[i] - min);
                    l = isel(v > 0, vnearest(fsel(v < fnmax, v, fnmax)), iset(0));
                } else {
                    l = imax(iset(0), imin(iset(nmax), vnearest(iscale * (x[i] - min))));
                }
                Laux[i] = l;
                const vf fl = tof(l);
                sum_l += w[i] * fl;
                sum_l2 += w[i] * fl * fl;
                sum_xl += w[i] * fl * x[i];
            }
            const vf D = sum_w * sum_l2 - sum_l * sum_l;
            const vi ok = D > 0;
            if (!any(ok)) continue;
            vf this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            vf this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            const vi pos = this_min > 0;
            this_min = fsel(pos, vset(0), this_min);
            this_scale = fsel(pos, sum_xl / sum_l2, this_scale);
            vf cur_error = vset(0);
            for (int i = 0; i < n; ++i) {
                vf diff = this_scale * tof(Laux[i]) + this_min - x[i];
                diff = use_mad ? vabs(diff) : diff * diff;
                cur_error += w[i] * diff;
            }
            const vi take = ok & (cur_error < best_error);
            if (!any(take)) continue;
            for (int i = 0; i < n; ++i) L[i] = isel(take, Laux[i], L[i]);
            best_error = fsel(take, cur_error, best_error);
            scale = fsel(take, this_scale, scale);
            min = fsel(take, this_min, min);
        }
    }
    for (int i = 0; i < n; ++i) L[i] = isel(flat, iset(0), L[i]);
    *scale_out = fsel(flat, vset(0), scale);
    *min_out = -fsel(flat, min0, min);
}

/* Shared driver of qkx2/qkx3: groups in chunks of LANES. */
LANE_TARGET static void qkx_groups(int ngroups, int n, int nmax, const float *x, const float *w,
                                   uint8_t *L, float *scales, float *mins, float rmin,
                                   float rdelta, int nstep, bool use_mad, bool v3) {
    vf xt[MAXN], wt[MAXN];
    vi Lt[MAXN];
    for (int first = 0; first < ngroups; first += LANES) {
        gather(x, n, first, ngroups, xt);
        gather(w, n, first, ngroups, wt);
        vf sc, mn;
        qkx_lanes(n, nmax, xt, wt, Lt, &sc, &mn, rmin, rdelta, nstep, use_mad, v3);
        for (int k = 0; k < LANES && first + k < ngroups; ++k) {
            const int g = first + k;
            scales[g] = sc[k];
            mins[g] = mn[k];
        }
        scatter_levels(Lt, n, first, ngroups, L);
    }
}

LANE_TARGET static void lanes_qkx2(int ngroups, int n, int nmax, const float *x, const float *w,
                                   uint8_t *L, float *scales, float *mins, float rmin,
                                   float rdelta, int nstep, bool use_mad) {
    qkx_groups(ngroups, n, nmax, x, w, L, scales, mins, rmin, rdelta, nstep, use_mad, false);
}

LANE_TARGET static void lanes_qkx3(int ngroups, int n, int nmax, const float *x, const float *w,
                                   uint8_t *L, float *scales, float *mins, float rmin,
                                   float rdelta, int nstep, bool use_mad) {
    qkx_groups(ngroups, n, nmax, x, w, L, scales, mins, rmin, rdelta, nstep, use_mad, true);
}

/* Clamp to [-nmax, nmax-1]. */
LANE_TARGET static inline vi clamp_signed(vi l, int nmax) {
    return imax(iset(-nmax), imin(iset(nmax - 1), l));
}

/* make_qx_quants with rmse_type 1 (weights w, or x^2 when w is NULL) for LANES
 * groups; L receives the levels offset by nmax. The scalar sum w * x[i] * l is
 * (w * x[i]) * l, so that product is formed once per value for all 19 trials. */
LANE_TARGET static vf qx_lanes(int n, int nmax, const vf *x, const vf *wq, vi *L) {
    vf w[MAXN], wx[MAXN];
    vf max = vset(0), amax = vset(0);
    for (int i = 0; i < n; ++i) {
        w[i] = wq ? wq[i] : x[i] * x[i];
        wx[i] = w[i] * x[i];
        const vf ax = vabs(x[i]);
        const vi m = ax > amax;
        amax = fsel(m, ax, amax);
        max = fsel(m, x[i], max);
    }
    const vi zero = amax < GK_GROUP_MAX_EPS;
    vf iscale = vset((float)-nmax) / max;
    vf sumlx = vset(0), suml2 = vset(0);
    for (int i = 0; i < n; ++i) {
        const vi l = clamp_signed(vnearest(iscale * x[i]), nmax);
        L[i] = l + nmax;
        const vf fl = tof(l);
        sumlx += wx[i] * fl;
        suml2 += w[i] * fl * fl;
    }
    vf scale = fsel(suml2 != 0, sumlx / suml2, vset(0));
    vf best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = vset(-(nmax + 0.1f * is)) / max;
        vi lv[MAXN];
        sumlx = suml2 = vset(0);
        for (int i = 0; i < n; ++i) {
            lv[i] = clamp_signed(vnearest(iscale * x[i]), nmax);
            const vf fl = tof(lv[i]);
            sumlx += wx[i] * fl;
            suml2 += w[i] * fl * fl;
        }
        const vi take = (suml2 > 0) & (sumlx * sumlx > best * suml2);
        if (!any(take)) continue;
        for (int i = 0; i < n; ++i) L[i] = isel(take, lv[i] + nmax, L[i]);
        const vf s = sumlx / suml2;
        scale = fsel(take, s, scale);
        best = fsel(take, s * sumlx, best);
    }
    for (int i = 0; i < n; ++i) L[i] = isel(zero, iset(0), L[i]);
    return fsel(zero, vset(0), scale);
}

LANE_TARGET static void lanes_qx(int ngroups, int n, int nmax, const float *x, const float *w,
                                 int8_t *L, float *scales) {
    vf xt[MAXN], wt[MAXN];
    vi Lt[MAXN];
    for (int first = 0; first < ngroups; first += LANES) {
        gather(x, n, first, ngroups, xt);
        if (w) gather(w, n, first, ngroups, wt);
        const vf sc = qx_lanes(n, nmax, xt, w ? wt : NULL, Lt);
        for (int k = 0; k < LANES && first + k < ngroups; ++k) scales[first + k] = sc[k];
        scatter_levels(Lt, n, first, ngroups, (uint8_t *)L);
    }
}

/* make_q3_quants for LANES groups; a lane whose pass changed nothing stops as
 * the scalar loop breaks (its later passes are masked off). */
LANE_TARGET static vf q3_lanes(int n, int nmax, const vf *x, vi *L) {
    vf max = vset(0), amax = vset(0);
    for (int i = 0; i < n; ++i) {
        const vf ax = vabs(x[i]);
        const vi m = ax > amax;
        amax = fsel(m, ax, amax);
        max = fsel(m, x[i], max);
    }
    const vi zero = amax < GK_GROUP_MAX_EPS;
    const vf iscale = vset((float)-nmax) / max;
    vf sumlx = vset(0), suml2 = vset(0);
    for (int i = 0; i < n; ++i) {
        const vi l = clamp_signed(vnearest(iscale * x[i]), nmax);
        L[i] = l;
        const vf w = x[i] * x[i];
        const vf fl = tof(l);
        sumlx += w * x[i] * fl;
        suml2 += w * fl * fl;
    }
    vi active = ~zero;
    for (int pass = 0; pass < 5 && any(active); ++pass) {
        vi changed = iset(0);
        for (int i = 0; i < n; ++i) {
            const vf w = x[i] * x[i];
            const vf fL = tof(L[i]);
            vf slx = sumlx - w * x[i] * fL;
            const vi pos = active & (slx > 0);
            if (!any(pos)) continue;
            vf sl2 = suml2 - w * fL * fL;
            const vi new_l = clamp_signed(vnearest(x[i] * sl2 / slx), nmax);
            const vi differ = pos & (new_l != L[i]);
            if (!any(differ)) continue;
            const vf fn = tof(new_l);
            slx += w * x[i] * fn;
            sl2 += w * fn * fn;
            const vi take = differ & (sl2 > 0) & (slx * slx * suml2 > sumlx * sumlx * sl2);
            L[i] = isel(take, new_l, L[i]);
            sumlx = fsel(take, slx, sumlx);
            suml2 = fsel(take, sl2, suml2);
            changed |= take;
        }
        active &= changed;
    }
    for (int i = 0; i < n; ++i) L[i] = isel(zero, iset(0), L[i] + nmax);
    return fsel(zero, vset(0), fsel(suml2 > 0, sumlx / suml2, vset(0)));
}

LANE_TARGET static void lanes_q3(int ngroups, int n, int nmax, const float *x, int8_t *L,
                                 float *scales) {
    vf xt[MAXN];
    vi Lt[MAXN];
    for (int first = 0; first < ngroups; first += LANES) {
        gather(x, n, first, ngroups, xt);
        const vf sc = q3_lanes(n, nmax, xt, Lt);
        for (int k = 0; k < LANES && first + k < ngroups; ++k) scales[first + k] = sc[k];
        scatter_levels(Lt, n, first, ngroups, (uint8_t *)L);
    }
}

/* Final levels from given scales, LANES values of a group at a time. */
LANE_TARGET static void lanes_requant(int ngroups, int n, const float *x, const float *d,
                                      const float *dm, int lo, int hi, int offset, uint8_t *L) {
    typedef uint8_t vb __attribute__((vector_size(LANES)));
    for (int g = 0; g < ngroups; ++g) {
        if (!d[g]) continue;
        const vf vd = vset(d[g]);
        int i = 0;
        for (; i + LANES <= n; i += LANES) {
            vf xv;
            memcpy(&xv, x + g * n + i, sizeof xv);
            if (dm) xv = xv + dm[g];
            const vi l = imax(iset(lo), imin(iset(hi), vnearest(xv / vd))) + offset;
            const vb b = __builtin_convertvector(l, vb);
            memcpy(L + g * n + i, &b, sizeof b);
        }
        for (; i < n; ++i) {
            const float xi = x[g * n + i];
            const int l = gk_nearest_int(dm ? (xi + dm[g]) / d[g] : xi / d[g]);
            L[g * n + i] = (uint8_t)(offset + GK_MAX(lo, GK_MIN(hi, l)));
        }
    }
}

#undef MAXN
