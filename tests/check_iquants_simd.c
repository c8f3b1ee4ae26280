/*
 * check_iquants_simd.c - differential tests of the vector I-quant kernels
 * (lib/types/iquants_avx2.c, iq4_avx2.c, iq4_avx512.c) against the scalar oracle
 * (lib/types/iquants.c).
 *
 * For every vectorized quantizer: seeded rows of many value patterns (normal,
 * heavy-tailed, all-equal, all-zero, single outlier, subnormal, near the float
 * limits, negative-only, alternating signs, NaN/Inf, small integers, blocks
 * mixing these), with and without importance weights, in rows of one block and
 * of several, quantized by both kernels and compared byte for byte. For every
 * vectorized dequantizer: random block bytes (every encoding, NaN/Inf scales
 * included) and the quantized rows, compared bit for bit. An ISA the processor
 * lacks is reported with a SKIPPED line.
 *
 * Size. The block counts in kinds[] (and the 4 million random blocks per
 * dequantizer) are the soak size: GGUFKIT_SIMD_SCALE (a positive factor)
 * multiplies them, and scripts/test --soak sets 1 (some 8 minutes of one core).
 * Without it a run takes SIMD_DEFAULT_SCALE, 1/20 of that (about 25 s), and the
 * sanitizer pass of scripts/test takes 1/100. At any size every pattern runs
 * with and without weights and every row shape comes round (the loop makes at
 * least 2 * PAT_COUNT calls before it counts blocks).
 *
 * What the default size still catches (December 2026): faults named in the
 * history of these kernels, put back into a scratch copy (never committed), the
 * suite run at 0.05 and at 0.01. Caught at both sizes, in the first calls:
 *   - iquants_avx2.c grid8_signed: the sign applied by multiplying by -1, not
 *     by flipping the sign bit (a NaN scale keeps its sign): the IQ3_XXS,
 *     IQ3_S, IQ2_XXS, IQ2_XS and IQ2_S dequantizers fail, on quantized rows
 *     and on random bytes (10 cases);
 *   - iquants_avx2.c iq4_scales8: the first fit's 0/0 left unguarded (ggml's
 *     2026 fix): IQ4_NL at avx2 and avx512 (NaN/Inf pattern);
 *   - iquants_avx512.c: the blocks of a row past its last sixteen left
 *     unwritten: IQ4_NL avx512 (rows of one block);
 *   - iquants_avx2.c iq4_scales8: the largest magnitude keeping the last of
 *     equal ones (> made >=), which shows only in a block holding +m and -m as
 *     its largest: before the small-integers pattern the default size missed
 *     it and the soak size caught it only in IQ4_XS avx2 (normal pattern, a
 *     chance tie among a million blocks); with that pattern IQ4_XS and IQ4_NL
 *     at avx2 and avx512 fail at 0.05 and 0.01 in the first calls. The soak
 *     size is for such chance inputs; a fault found there gets a pattern here.
 * Not caught at 0.05 nor 0.01 (its soak run was stopped unfinished): the
 * AVX-512 IQ4_XS pair sending no NaN/Inf super-block to the scalar kernel; the
 * NaN/Inf pattern still gives the scalar's bytes without that fallback, which
 * looks like a guard whose loss this comparison cannot see.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "ggufkit.h"
#include "types/cpu.h"
#include "types/iquants_simd.h"
#include "types/kernels.h"

typedef void (*quantize_fn)(const float *, void *, int64_t, int64_t, const float *);
typedef void (*dequantize_fn)(const void *, float *, int64_t);

typedef struct {
    const char *name;
    const char *isa; /* gk_isa_name() of the level the kernel needs */
    gk_isa level;
    uint32_t id;
    int elems, bytes;
    quantize_fn scalar_q, vector_q; /* vector_q NULL: dequantizer only */
    dequantize_fn scalar_dq, vector_dq; /* vector_dq NULL: no vector dequantizer */
    bool needs_imatrix;
    long blocks; /* quantized blocks compared at scale 1 */
} simd_kind;

/* Block counts at the soak size: what the scalar oracle gets through in 20-50 s
 * per type (it runs 6 thousand (IQ1_M, IQ2_XS) to 130 thousand (IQ4_NL) blocks
 * a second here with the vector kernel beside it); GGUFKIT_SIMD_SCALE=N compares
 * N times more, the default run 1/20. */
static const simd_kind kinds[] = {
    { "IQ4_XS", "avx2", GK_ISA_AVX2, GK_TYPE_IQ4_XS, 256, 136, gk_quantize_iq4_xs, gk_quantize_iq4_xs_avx2,
      gk_dequantize_iq4_xs, gk_dequantize_iq4_xs_avx2, false, 1000000 },
    { "IQ4_NL", "avx2", GK_ISA_AVX2, GK_TYPE_IQ4_NL, 32, 18, gk_quantize_iq4_nl, gk_quantize_iq4_nl_avx2,
      gk_dequantize_iq4_nl, gk_dequantize_iq4_nl_avx2, false, 3000000 },
    { "IQ4_XS", "avx512", GK_ISA_AVX512, GK_TYPE_IQ4_XS, 256, 136, gk_quantize_iq4_xs, gk_quantize_iq4_xs_avx512,
      gk_dequantize_iq4_xs, NULL, false, 1000000 },
    { "IQ4_NL", "avx512", GK_ISA_AVX512, GK_TYPE_IQ4_NL, 32, 18, gk_quantize_iq4_nl, gk_quantize_iq4_nl_avx512,
      gk_dequantize_iq4_nl, NULL, false, 3000000 },
    { "IQ3_XXS", "avx2", GK_ISA_AVX2, GK_TYPE_IQ3_XXS, 256, 98, gk_quantize_iq3_xxs, gk_quantize_iq3_xxs_avx2,
      gk_dequantize_iq3_xxs, gk_dequantize_iq3_xxs_avx2, false, 250000 },
    { "IQ3_S", "avx2", GK_ISA_AVX2, GK_TYPE_IQ3_S, 256, 110, gk_quantize_iq3_s, gk_quantize_iq3_s_avx2,
      gk_dequantize_iq3_s, gk_dequantize_iq3_s_avx2, false, 250000 },
    { "IQ2_XXS", "avx2", GK_ISA_AVX2, GK_TYPE_IQ2_XXS, 256, 66, gk_quantize_iq2_xxs, gk_quantize_iq2_xxs_avx2,
      gk_dequantize_iq2_xxs, gk_dequantize_iq2_xxs_avx2, true, 300000 },
    { "IQ2_XS", "avx2", GK_ISA_AVX2, GK_TYPE_IQ2_XS, 256, 74, gk_quantize_iq2_xs, gk_quantize_iq2_xs_avx2,
      gk_dequantize_iq2_xs, gk_dequantize_iq2_xs_avx2, true, 150000 },
    { "IQ2_S", "avx2", GK_ISA_AVX2, GK_TYPE_IQ2_S, 256, 82, gk_quantize_iq2_s, gk_quantize_iq2_s_avx2,
      gk_dequantize_iq2_s, gk_dequantize_iq2_s_avx2, false, 300000 },
    { "IQ1_S", "avx2", GK_ISA_AVX2, GK_TYPE_IQ1_S, 256, 50, gk_quantize_iq1_s, gk_quantize_iq1_s_avx2,
      gk_dequantize_iq1_s, gk_dequantize_iq1_s_avx2, true, 500000 },
    { "IQ1_M", "avx2", GK_ISA_AVX2, GK_TYPE_IQ1_M, 256, 56, gk_quantize_iq1_m, gk_quantize_iq1_m_avx2,
      gk_dequantize_iq1_m, gk_dequantize_iq1_m_avx2, false, 150000 },
};
#define NKINDS (int)(sizeof kinds / sizeof kinds[0])

/* ---- seeded generator ---------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(void) { return (double)(rng_next() >> 11) * 0x1.0p-53; }

static float rng_normal(void) {
    double u = rng_unit(), v = rng_unit();
    return (float)(sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v));
}

/* A random magnitude from 1e-6 to 1e6 (log-uniform). */
static float rng_magnitude(void) { return (float)pow(10.0, 12.0 * rng_unit() - 6.0); }

enum {
    PAT_NORMAL,
    PAT_HEAVY,
    PAT_EQUAL,
    PAT_ZERO,
    PAT_OUTLIER,
    PAT_SUBNORMAL,
    PAT_LIMITS,
    PAT_NEGATIVE,
    PAT_ALTERNATING,
    PAT_NONFINITE,
    PAT_TINY,
    PAT_SMALL_INT, /* -4..4 times one scale: ties, +m beside -m among them */
    PAT_MIXED, /* every 32 values a different pattern of the above */
    PAT_COUNT
};

static const char *const pattern_names[PAT_COUNT] = {
    "normal", "heavy-tailed", "all-equal", "all-zero", "single outlier", "subnormal",
    "near float limits", "negative-only", "alternating signs", "NaN/Inf", "tiny", "small integers",
    "mixed",
};

/* Fills x[0..n) with pattern p. */
static void fill_pattern(float *x, int n, int p) {
    if (p == PAT_MIXED) {
        for (int i = 0; i < n; i += 32) fill_pattern(x + i, n - i < 32 ? n - i : 32, (int)(rng_next() % PAT_MIXED));
        return;
    }
    const float scale = rng_magnitude();
    const float c = (rng_next() & 1 ? -1.f : 1.f) * rng_magnitude();
    for (int i = 0; i < n; i++) {
        float v;
        switch (p) {
        case PAT_NORMAL: v = scale * rng_normal(); break;
        case PAT_HEAVY: v = scale * rng_normal() / (float)(rng_unit() + 1e-3); break;
        case PAT_EQUAL: v = c; break;
        case PAT_ZERO: v = (rng_next() & 7) ? 0.f : -0.f; break;
        case PAT_OUTLIER: v = 1e-3f * rng_normal(); break;
        case PAT_SUBNORMAL: v = rng_normal() * 1e-39f; break;
        case PAT_LIMITS: v = (rng_next() & 1 ? -1.f : 1.f) * FLT_MAX * (float)(0.5 + 0.5 * rng_unit()); break;
        case PAT_NEGATIVE: v = -scale * fabsf(rng_normal()); break;
        case PAT_ALTERNATING: v = (i & 1 ? -1.f : 1.f) * scale * (float)(0.5 + rng_unit()); break;
        case PAT_NONFINITE: {
            uint64_t r = rng_next() % 16;
            v = r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : scale * rng_normal();
            break;
        }
        case PAT_SMALL_INT: v = scale * (float)((int)(rng_next() % 9) - 4); break;
        default: v = 1e-16f * rng_normal(); break; /* PAT_TINY: about the all-zero threshold */
        }
        x[i] = v;
    }
    if (p == PAT_OUTLIER && n > 0) x[rng_next() % (uint64_t)n] = c * 1e3f;
}

/* Importance weights: positive, some zero, some huge; about one run of 16 in
 * eight all zero (groups that find no scale or split: ggml's 2025-26 fixes). */
static void fill_imatrix(float *w, int n) {
    for (int i = 0; i < n; i++) {
        uint64_t r = rng_next() % 32;
        w[i] = r == 0 ? 0.f : r == 1 ? 1e6f * (float)rng_unit() : (float)(rng_unit() * 4.0);
    }
    for (int i = 0; i + 16 <= n; i += 16)
        if (rng_next() % 8 == 0) memset(w + i, 0, 16 * sizeof(float));
}

/* The size of a run without GGUFKIT_SIMD_SCALE: 1/20 of the soak size. */
#define SIMD_DEFAULT_SCALE 0.05

static double test_scale(void) {
    const char *s = getenv("GGUFKIT_SIMD_SCALE");
    double f = s && *s ? atof(s) : SIMD_DEFAULT_SCALE;
    return f > 0 ? f : SIMD_DEFAULT_SCALE;
}

static bool have_isa(const simd_kind *k) { return gk_isa_supported() >= k->level; }

/* Reports the first differing block of two quantized buffers, if any. */
static void compare_blocks(const simd_kind *k, const uint8_t *a, const uint8_t *b, long nblocks,
                           const char *what, int pattern, bool imat, int blocks_per_row) {
    if (memcmp(a, b, (size_t)nblocks * k->bytes) == 0) return;
    for (long i = 0; i < nblocks; i++) {
        if (memcmp(a + i * k->bytes, b + i * k->bytes, k->bytes) == 0) continue;
        int off = 0;
        while (a[i * k->bytes + off] == b[i * k->bytes + off]) off++;
        ck_abort_msg("%s %s %s: pattern %s, %s imatrix, %d blocks per row: block %ld differs "
                     "at byte %d (scalar 0x%02x, %s 0x%02x)",
                     k->name, k->isa, what, pattern_names[pattern], imat ? "with" : "without",
                     blocks_per_row, i, off, a[i * k->bytes + off], k->isa, b[i * k->bytes + off]);
    }
}

/* Compares n dequantized floats bit for bit. */
static void compare_floats(const simd_kind *k, const float *a, const float *b, long n, const char *what) {
    if (memcmp(a, b, (size_t)n * sizeof(float)) == 0) return;
    for (long i = 0; i < n; i++) {
        if (memcmp(a + i, b + i, sizeof(float)) == 0) continue;
        ck_abort_msg("%s %s dequantize (%s): value %ld (block %ld) differs: scalar %a, vector %a",
                     k->name, k->isa, what, i, i / k->elems, (double)a[i], (double)b[i]);
    }
}

/* Row shapes: one block, several (a multiple of 8 and not), long rows (64, and
 * 37: the AVX-512 groups of sixteen blocks or two super-blocks, with a rest); 7
 * shapes, prime to the 13 patterns. */
static const int row_blocks[] = { 1, 8, 11, 3, 64, 37, 2 };
#define NSHAPES (int)(sizeof row_blocks / sizeof row_blocks[0])

START_TEST(test_quantize_matches_scalar) {
    const simd_kind *k = &kinds[_i];
    if (k->vector_q == NULL) return;
    if (!have_isa(k)) {
        printf("SKIPPED: %s %s quantizer (the processor has no %s)\n", k->name, k->isa, k->isa);
        return;
    }
    static gk_type_info table[GK_TYPE_COUNT];
    gk_type_table_for(k->level, table);
    ck_assert_msg(table[k->id].quantize == k->vector_q, "%s: %s quantizer not registered", k->name, k->isa);
    rng_state = 0x5eed0000ull + (uint64_t)_i;
    const long target = (long)(k->blocks * test_scale()) + 1;
    const int chunk = 128; /* blocks per call */
    float *x = malloc((size_t)chunk * k->elems * sizeof(float));
    float *w = malloc((size_t)64 * k->elems * sizeof(float));
    uint8_t *qa = malloc((size_t)chunk * k->bytes), *qb = malloc((size_t)chunk * k->bytes);
    float *da = malloc((size_t)chunk * k->elems * sizeof(float));
    float *db = malloc((size_t)chunk * k->elems * sizeof(float));
    ck_assert(x && w && qa && qb && da && db);
    long done = 0, calls = 0;
    /* at least every pattern with and without weights; the row shapes cycle
     * independently (their count is prime to the pattern count) */
    while (done < target || calls < 2 * PAT_COUNT) {
        const int pattern = (int)(calls % PAT_COUNT);
        const bool imat = k->needs_imatrix || (calls / PAT_COUNT) % 2 == 1;
        const int per_row = row_blocks[calls % NSHAPES];
        const int nrows = chunk / per_row;
        const int64_t n_per_row = (int64_t)per_row * k->elems;
        fill_pattern(x, nrows * per_row * k->elems, pattern);
        if (imat) fill_imatrix(w, (int)n_per_row);
        memset(qa, 0xa5, (size_t)chunk * k->bytes);
        memset(qb, 0x5a, (size_t)chunk * k->bytes);
        k->scalar_q(x, qa, nrows, n_per_row, imat ? w : NULL);
        k->vector_q(x, qb, nrows, n_per_row, imat ? w : NULL);
        const long nb = (long)nrows * per_row;
        compare_blocks(k, qa, qb, nb, "quantize", pattern, imat, per_row);
        if (k->vector_dq != NULL) {
            k->scalar_dq(qa, da, nb * k->elems);
            k->vector_dq(qa, db, nb * k->elems);
            compare_floats(k, da, db, nb * k->elems, "of quantized rows");
        }
        done += nb;
        calls++;
    }
    printf("%s %s: %ld blocks quantized%s, identical to scalar\n", k->name, k->isa, done,
           k->vector_dq ? " and dequantized" : "");
    free(x);
    free(w);
    free(qa);
    free(qb);
    free(da);
    free(db);
}
END_TEST

START_TEST(test_dequantize_random_bytes) {
    const simd_kind *k = &kinds[_i];
    if (k->vector_dq == NULL) return;
    if (!have_isa(k)) {
        printf("SKIPPED: %s %s dequantizer (the processor has no %s)\n", k->name, k->isa, k->isa);
        return;
    }
    static gk_type_info table[GK_TYPE_COUNT];
    gk_type_table_for(k->level, table);
    ck_assert_msg(table[k->id].dequantize == k->vector_dq, "%s: %s dequantizer not registered", k->name, k->isa);
    rng_state = 0xdec0de00ull + (uint64_t)_i;
    const int chunk = 1024;
    const long target = (long)(4000000 * test_scale()) + 1;
    uint8_t *q = malloc((size_t)chunk * k->bytes);
    float *da = malloc((size_t)chunk * k->elems * sizeof(float));
    float *db = malloc((size_t)chunk * k->elems * sizeof(float));
    ck_assert(q && da && db);
    long done = 0;
    while (done < target) {
        for (size_t i = 0; i < (size_t)chunk * k->bytes; i += 8) {
            uint64_t r = rng_next();
            memcpy(q + i, &r, (size_t)chunk * k->bytes - i < 8 ? (size_t)chunk * k->bytes - i : 8);
        }
        k->scalar_dq(q, da, (int64_t)chunk * k->elems);
        k->vector_dq(q, db, (int64_t)chunk * k->elems);
        compare_floats(k, da, db, (long)chunk * k->elems, "random bytes");
        done += chunk;
    }
    printf("%s %s: %ld random blocks dequantized, identical to scalar\n", k->name, k->isa, done);
    free(q);
    free(da);
    free(db);
}
END_TEST

static Suite *iquants_simd_suite(void) {
    Suite *s = suite_create("iquants_simd");
    TCase *q = tcase_create("quantize");
    tcase_add_loop_test(q, test_quantize_matches_scalar, 0, NKINDS);
    suite_add_tcase(s, q);
    TCase *d = tcase_create("dequantize");
    tcase_add_loop_test(d, test_dequantize_random_bytes, 0, NKINDS);
    suite_add_tcase(s, d);
    return s;
}

int main(void) { return run_suite(iquants_simd_suite()); }
