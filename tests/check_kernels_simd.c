/*
 * check_kernels_simd.c - vector kernels against the scalar ones, bit for bit.
 *
 * For every type whose entry in a vector level's table (gk_type_table_for)
 * differs from the scalar table, seeded inputs of many shapes are quantized by
 * both and the bytes compared; dequantizers get random blocks and are compared
 * on the float bit patterns (NaN included). Kernels that quantize F16 rows
 * directly are compared with the scalar route they replace (F16 dequantizer,
 * then quantizer) on rounded patterns and on raw binary16 bits. Levels the
 * processor lacks report SKIPPED.
 *
 * Size. The block counts below are the soak size: GGUFKIT_SIMD_SCALE (a factor)
 * multiplies them, and scripts/test --soak sets 1 (some 6 minutes of one core).
 * Without it a run takes SIMD_DEFAULT_SCALE, 1/20 of that (about 16 s), and the
 * sanitizer pass of scripts/test takes 1/100. At any size every pattern runs
 * at least once with each row shape, with and without weights (the chunk loops
 * go round the patterns before they count blocks), and the float sweep keeps
 * every binary16.
 *
 * What the default size still catches (December 2026). The history of this
 * suite and of the kernels names the faults it was made for; each was put back
 * into a scratch copy of a kernel (never committed) and the suite run at 0.05
 * and at 0.01: every one failed at both sizes, in the first pass over the
 * patterns (chunk 0 to 11 of a case), so neither size leans on the later
 * chunks, which only repeat the patterns with other random values:
 *   - legacy_avx2.c range_extremes: a Q4_1/Q5_1 block whose largest or smallest
 *     value is zero kept in the lanes (the sign of that zero is the scalar's
 *     first-of-equals): q4_1, q5_1 and both from F16 fail, all-zero, chunk 4;
 *   - legacy_avx2.c signed_extremes: a block holding +m and -m not resolved to
 *     the first of them: q4_0, q5_0 (near-float-limits, chunk 7), both from F16;
 *   - legacy_avx2.c round_away: halves rounded toward zero (>= 0.5 made > 0.5):
 *     q8_0 (small-integers, chunk 11), q8_0 from F16 (chunk 0);
 *   - legacy_avx2.c: blocks with NaN or Inf kept in the lanes instead of going
 *     to the scalar kernel: 10 cases fail (every legacy type, from F32 and
 *     from F16; nan-inf, chunk 10);
 *   - fp4_avx2.c abs_max: NaN no longer skipped (max's operands swapped):
 *     nvfp4 and mxfp4 (nan-inf, chunk 10);
 *   - quant_util_lanes.h: the qkx2 scale search keeping the last of equal
 *     errors (< made <=): q4_K, q5_K, q2_K and more (heavy-tailed, chunk 1).
 * The I-quant kernels' list is in check_iquants_simd.c.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"
#include "types/fp16.h"
#include "types/kernels.h"

/* The size of a run without GGUFKIT_SIMD_SCALE: 1/20 of the soak size. */
#define SIMD_DEFAULT_SCALE 0.05

static gk_type_info tables[3][GK_TYPE_COUNT];
static double scale_factor = SIMD_DEFAULT_SCALE;

/* ---- seeded inputs ------------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t next_u64(void) {
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static float uniform01(void) { return (float)((next_u64() >> 40) + 0.5) / 16777216.0f; }
static float normal(void) {
    return sqrtf(-2.0f * logf(uniform01())) * cosf(6.2831853f * uniform01());
}

enum {
    P_NORMAL, P_HEAVY, P_MIXED_SCALE, P_EQUAL, P_ZERO, P_OUTLIER, P_SUBNORMAL, P_HUGE,
    P_NEGATIVE, P_ALTERNATING, P_NAN_INF, P_SMALL_INT, P_COUNT
};
static const char *const pattern_names[P_COUNT] = {
    "normal", "heavy-tailed", "mixed-scale", "all-equal", "all-zero", "single-outlier",
    "subnormal", "near-float-limits", "negative-only", "alternating-signs", "nan-inf",
    "small-integers",
};

/* Fill n values (one row) in pattern p; group: the block length, so shapes vary per block. */
static void fill(float *x, int64_t n, int p, int group) {
    for (int64_t i = 0; i < n; i++) {
        float v;
        switch (p) {
        case P_NORMAL: v = normal(); break;
        case P_HEAVY: { float u = uniform01(); v = normal() / (u * u + 1e-3f); break; }
        case P_MIXED_SCALE: v = normal() * powf(10.0f, (float)((i / 16) % 7) - 3.0f); break;
        case P_EQUAL: v = (i / group) % 2 ? -0.375f : 1.25f; break;
        case P_ZERO: v = (i % 5 == 0) ? -0.0f : 0.0f; break;
        case P_OUTLIER: v = (i % group == (int64_t)(next_u64() % 7)) ? 1000.0f * normal() : 1e-3f * normal(); break;
        case P_SUBNORMAL: v = normal() * 1e-40f; break;
        case P_HUGE: v = normal() * 1e37f; if (i % 11 == 0) v = (i & 1) ? 3.4e38f : -3.4e38f; break;
        case P_NEGATIVE: v = -fabsf(normal()) - 0.01f; break;
        case P_ALTERNATING: v = (i & 1 ? -1.0f : 1.0f) * (0.5f + fabsf(normal())); break;
        case P_NAN_INF: {
            v = normal();
            uint64_t r = next_u64() % 64;
            if (r == 0) v = NAN;
            else if (r == 1) v = INFINITY;
            else if (r == 2) v = -INFINITY;
            break;
        }
        default: v = (float)((int)(next_u64() % 9) - 4); break;
        }
        x[i] = v;
    }
    /* a block of the row in another shape now and then */
    if (n >= 2 * group && next_u64() % 3 == 0) {
        int64_t b = (int64_t)(next_u64() % (uint64_t)(n / group)) * group;
        float c = normal();
        for (int k = 0; k < group; k++) x[b + k] = c;
    }
}

static void fill_weights(float *w, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next_u64() % 16;
        w[i] = r == 0 ? 0.0f : r == 1 ? 1e-8f * uniform01() : uniform01() * uniform01() * 10.0f;
    }
}

/* ---- the comparisons ---------------------------------------------------------------- */

static const char *level_skip(gk_isa level) {
    if (gk_isa_supported() >= level) return NULL;
    return gk_isa_name(level);
}

/* The levels to compare for type id: every vector level whose quantizer (quant)
 * or dequantizer is its own, not the scalar one nor a lower level's (the
 * AVX-512 table keeps the AVX2 kernels it has no better one for). A level the
 * processor lacks is reported SKIPPED and left out; *own counts the levels with
 * a kernel of their own whether the processor has them or not. @return : the
 * levels in out. */
static int levels_to_compare(uint32_t id, bool quant, gk_isa out[], int *own) {
    int n = 0;
    *own = 0;
    for (int l = GK_ISA_AVX2; l <= GK_ISA_AVX512; l++) {
        const gk_type_info *t = &tables[l][id], *below = &tables[l - 1][id];
        if (quant ? t->quantize == below->quantize : t->dequantize == below->dequantize) continue;
        ++*own;
        if (gk_isa_supported() < (gk_isa)l) {
            printf("SKIPPED: %s %s %s: this processor has no %s\n", gk_isa_name((gk_isa)l), t->name,
                   quant ? "quantize" : "dequantize", gk_isa_name((gk_isa)l));
            continue;
        }
        out[n++] = (gk_isa)l;
    }
    return n;
}

/* Quantize at least nblocks blocks of type id (rows of rowblocks blocks), every
 * pattern, with importance weights or without: each chunk once with the scalar
 * oracle and once with each of the nlev levels, bytes compared. @return : blocks
 * compared per level. */
static int64_t compare_quantize(const gk_isa *levels, int nlev, uint32_t id, int64_t nblocks,
                                int rowblocks, bool weighted) {
    const gk_type_info *s = &tables[GK_ISA_SCALAR][id];
    if (nlev == 0) return 0;
    const int64_t n_per_row = (int64_t)rowblocks * s->block_elems;
    const int64_t nrows = 61;   /* a prime: no block group of a vector kernel divides a chunk */
    const int64_t chunk_blocks = nrows * rowblocks;
    const size_t out_bytes = (size_t)(chunk_blocks * s->block_bytes);
    float *x = malloc((size_t)(nrows * n_per_row) * sizeof *x);
    float *w = malloc((size_t)n_per_row * sizeof *w);
    uint8_t *a = malloc(out_bytes);
    uint8_t *b = malloc(out_bytes);
    ck_assert(x && w && a && b);
    int64_t done = 0;
    for (int64_t iter = 0; done < nblocks || iter < P_COUNT; iter++) {
        const int p = (int)(iter % P_COUNT);
        for (int64_t r = 0; r < nrows; r++) fill(x + r * n_per_row, n_per_row, p, (int)s->block_elems);
        if (weighted) fill_weights(w, n_per_row);
        memset(a, 0xA5, out_bytes);
        s->quantize(x, a, nrows, n_per_row, weighted ? w : NULL);
        for (int k = 0; k < nlev; k++) {
            memset(b, 0x5A, out_bytes);
            tables[levels[k]][id].quantize(x, b, nrows, n_per_row, weighted ? w : NULL);
            if (memcmp(a, b, out_bytes) == 0) continue;
            int64_t at = 0;
            while (memcmp(a + at * s->block_bytes, b + at * s->block_bytes, s->block_bytes) == 0) at++;
            ck_abort_msg("%s %s quantize differs from scalar: pattern %s, %s, rows of %d blocks, "
                         "block %lld of chunk %lld",
                         gk_isa_name(levels[k]), s->name, pattern_names[p],
                         weighted ? "weighted" : "unweighted", rowblocks, (long long)at, (long long)iter);
        }
        done += chunk_blocks;
    }
    free(x);
    free(w);
    free(a);
    free(b);
    return done;
}

/* Dequantize nblocks random blocks with the scalar table and each of the nlev
 * levels, compare float bits. @return : blocks compared per level. */
static int64_t compare_dequantize(const gk_isa *levels, int nlev, uint32_t id, int64_t nblocks) {
    const gk_type_info *s = &tables[GK_ISA_SCALAR][id];
    if (nlev == 0) return 0;
    const int64_t chunk = 4096;
    uint8_t *q = malloc((size_t)(chunk * s->block_bytes));
    float *a = malloc((size_t)(chunk * s->block_elems) * sizeof *a);
    float *b = malloc((size_t)(chunk * s->block_elems) * sizeof *b);
    ck_assert(q && a && b);
    int64_t done = 0;
    for (; done < nblocks; done += chunk) {
        for (int64_t i = 0; i < chunk * s->block_bytes; i += 8) {
            uint64_t r = next_u64();
            memcpy(q + i, &r, (size_t)(chunk * s->block_bytes - i < 8 ? chunk * s->block_bytes - i : 8));
        }
        s->dequantize(q, a, chunk * s->block_elems);
        for (int k = 0; k < nlev; k++) {
            tables[levels[k]][id].dequantize(q, b, chunk * s->block_elems);
            if (memcmp(a, b, (size_t)(chunk * s->block_elems) * sizeof *a) == 0) continue;
            int64_t at = 0;
            while (memcmp(a + at, b + at, 4) == 0) at++;
            ck_abort_msg("%s %s dequantize differs at value %lld: %a vs %a", gk_isa_name(levels[k]),
                         s->name, (long long)at, (double)a[at], (double)b[at]);
        }
    }
    free(q);
    free(a);
    free(b);
    return done;
}

/* One type at every level the processor has: quantize (rows of four blocks and
 * of one, without and with weights: nplain and nweighted blocks) and dequantize
 * (ndeq blocks: no search on either side, so many more). */
static void check_type(uint32_t id, int64_t nplain, int64_t nweighted, int64_t ndeq) {
    const gk_type_info *s = &tables[GK_ISA_SCALAR][id];
    gk_isa qlev[2], dlev[2];
    int qown, down;
    const int nq = levels_to_compare(id, true, qlev, &qown);
    const int nd = levels_to_compare(id, false, dlev, &down);
    ck_assert_msg(qown + down > 0, "%s: no vector kernel registered", s->name);
    rng_state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)id << 32);
    nplain = (int64_t)(nplain * scale_factor);
    nweighted = (int64_t)(nweighted * scale_factor);
    ndeq = (int64_t)(ndeq * scale_factor);
    const int64_t plain = compare_quantize(qlev, nq, id, nplain, 4, false) +
                          compare_quantize(qlev, nq, id, nplain / 8, 1, false);
    const int64_t weighted = compare_quantize(qlev, nq, id, nweighted, 4, true) +
                             compare_quantize(qlev, nq, id, nweighted / 8, 1, true);
    const int64_t deq = compare_dequantize(dlev, nd, id, ndeq);
    for (int k = 0; k < nq; k++)
        printf("%s %-6s quantize: %lld blocks without weights, %lld with (rows of 4 blocks and of 1)\n",
               gk_isa_name(qlev[k]), s->name, (long long)plain, (long long)weighted);
    for (int k = 0; k < nd; k++)
        printf("%s %-6s dequantize: %lld blocks\n", gk_isa_name(dlev[k]), s->name, (long long)deq);
    fflush(stdout);
}

/* Block counts per type at the soak size (scale 1): quantized without and with
 * weights, and dequantized. The scalar searches (the oracle, quantizing each
 * chunk once for every level) are the slow side: some 40 thousand K-quant blocks
 * a second with the vector runs beside them, so a K-quant gets 1.2 million
 * blocks here (half a minute; the default run 1/20 of it) and
 * GGUFKIT_SIMD_SCALE=N gives N times that; the legacy types and every
 * dequantizer get tens of millions. */
#define K_BLOCKS 800000, 300000, 2000000
#define LEGACY_BLOCKS 20000000, 200000, 10000000

START_TEST(q4_K) { check_type(GK_TYPE_Q4_K, K_BLOCKS); }
END_TEST
START_TEST(q5_K) { check_type(GK_TYPE_Q5_K, K_BLOCKS); }
END_TEST
START_TEST(q6_K) { check_type(GK_TYPE_Q6_K, K_BLOCKS); }
END_TEST
START_TEST(q3_K) { check_type(GK_TYPE_Q3_K, K_BLOCKS); }
END_TEST
START_TEST(q2_K) { check_type(GK_TYPE_Q2_K, K_BLOCKS); }
END_TEST
START_TEST(q8_0) { check_type(GK_TYPE_Q8_0, LEGACY_BLOCKS); }
END_TEST
START_TEST(q4_0) { check_type(GK_TYPE_Q4_0, LEGACY_BLOCKS); }
END_TEST
START_TEST(q4_1) { check_type(GK_TYPE_Q4_1, LEGACY_BLOCKS); }
END_TEST
START_TEST(q5_0) { check_type(GK_TYPE_Q5_0, LEGACY_BLOCKS); }
END_TEST
START_TEST(q5_1) { check_type(GK_TYPE_Q5_1, LEGACY_BLOCKS); }
END_TEST
/* Q4_1 and Q5_1 blocks whose scale and minimum are both NaN, with different
 * payloads: every level gives the scale's NaN (through the product) in every
 * value. C leaves the pick to the compiler, which may swap an add's operands
 * (clang does), so the kernels choose it themselves (gk_add_nan_first). */
START_TEST(both_nan_takes_the_scales) {
    const uint32_t ids[] = { GK_TYPE_Q4_1, GK_TYPE_Q5_1 };
    const uint16_t d_half = 0x7E01, m_half = 0xFE02;   /* two quiet NaNs */
    uint32_t want, other;
    float fd = gk_fp16_to_fp32(d_half), fm = gk_fp16_to_fp32(m_half);
    memcpy(&want, &fd, 4);
    memcpy(&other, &fm, 4);
    ck_assert_uint_ne(want, other);
    for (size_t t = 0; t < sizeof ids / sizeof ids[0]; t++) {
        uint8_t block[64];
        for (size_t i = 0; i < sizeof block; i++) block[i] = (uint8_t)(i * 37 + 11);   /* quants of all kinds */
        block[8] = 0x00;   /* and a zero quant: 0 * NaN is NaN too */
        memcpy(block, &d_half, 2);
        memcpy(block + 2, &m_half, 2);
        for (int level = GK_ISA_SCALAR; level <= (int)gk_isa_supported(); level++) {
            float y[32];
            tables[level][ids[t]].dequantize(block, y, 32);
            for (int j = 0; j < 32; j++) {
                uint32_t bits;
                memcpy(&bits, &y[j], 4);
                ck_assert_msg(bits == want, "%s %s value %d: 0x%08x, want the scale's NaN 0x%08x",
                              gk_isa_name((gk_isa)level), tables[level][ids[t]].name, j, bits, want);
            }
        }
    }
}
END_TEST
/* NVFP4 and MXFP4: 256 M values each without weights (the weights are unused:
 * a smaller run checks that they change nothing at any level either). */
START_TEST(nvfp4) { check_type(GK_TYPE_NVFP4, 4000000, 200000, 0); }
END_TEST
START_TEST(mxfp4) { check_type(GK_TYPE_MXFP4, 8000000, 400000, 0); }
END_TEST
/* Q1_0 and Q2_0: no search, so twice as many values (Q1_0's eight-block groups
 * meet the 61-row chunks' tails and rows of one block). */
START_TEST(q1_0) { check_type(GK_TYPE_Q1_0, 4000000, 200000, 0); }
END_TEST
START_TEST(q2_0) { check_type(GK_TYPE_Q2_0, 8000000, 400000, 0); }
END_TEST

/* ---- F16 rows quantized directly ----------------------------------------------------- */

/* Fill n binary16 values: half of the rows are a pattern's floats rounded to
 * binary16 (scalar conversion), the others raw random bit patterns (every
 * subnormal, infinity and NaN among them). */
static void fill_halves(uint16_t *h, float *scratch, int64_t n, int p, int group, bool raw) {
    if (raw) {
        for (int64_t i = 0; i < n; i++) h[i] = (uint16_t)next_u64();
        return;
    }
    fill(scratch, n, p, group);
    for (int64_t i = 0; i < n; i++) h[i] = gk_fp32_to_fp16(scratch[i]);
}

/* Type id's quantize_from_f16 at every level that has one, against the scalar
 * route it replaces (the scalar F16 dequantizer, then the scalar quantizer):
 * at least nblocks blocks in rows of rowblocks. @return : blocks compared per level. */
static int64_t compare_from_f16(uint32_t id, int64_t nblocks, int rowblocks, int *nlevels) {
    const gk_type_info *s = &tables[GK_ISA_SCALAR][id];
    gk_isa levels[2];
    int nlev = 0;
    for (int l = GK_ISA_AVX2; l <= GK_ISA_AVX512; l++) {
        if (tables[l][id].quantize_from_f16 == NULL) continue;
        if (l > GK_ISA_AVX2 && tables[l][id].quantize_from_f16 == tables[l - 1][id].quantize_from_f16) continue;
        if (gk_isa_supported() < (gk_isa)l) {
            printf("SKIPPED: %s %s quantize from F16: this processor has no %s\n", gk_isa_name((gk_isa)l),
                   s->name, gk_isa_name((gk_isa)l));
            continue;
        }
        levels[nlev++] = (gk_isa)l;
    }
    *nlevels = nlev;
    if (nlev == 0) return 0;
    const int64_t n_per_row = (int64_t)rowblocks * s->block_elems;
    const int64_t nrows = 61;
    const int64_t chunk_blocks = nrows * rowblocks;
    const int64_t n = nrows * n_per_row;
    const size_t out_bytes = (size_t)(chunk_blocks * s->block_bytes);
    uint16_t *h = malloc((size_t)n * sizeof *h);
    float *x = malloc((size_t)n * sizeof *x);
    uint8_t *a = malloc(out_bytes);
    uint8_t *b = malloc(out_bytes);
    ck_assert(h && x && a && b);
    int64_t done = 0;
    for (int64_t iter = 0; done < nblocks || iter < 2 * P_COUNT; iter++) {
        const int p = (int)(iter % P_COUNT);
        const bool raw = (iter / P_COUNT) % 2 == 1;
        for (int64_t r = 0; r < nrows; r++)
            fill_halves(h + r * n_per_row, x, n_per_row, p, (int)s->block_elems, raw);
        gk_dequantize_f16(h, x, n);
        memset(a, 0xA5, out_bytes);
        s->quantize(x, a, nrows, n_per_row, NULL);
        for (int k = 0; k < nlev; k++) {
            memset(b, 0x5A, out_bytes);
            tables[levels[k]][id].quantize_from_f16(h, b, nrows, n_per_row);
            if (memcmp(a, b, out_bytes) == 0) continue;
            int64_t at = 0;
            while (memcmp(a + at * s->block_bytes, b + at * s->block_bytes, s->block_bytes) == 0) at++;
            ck_abort_msg("%s %s quantize from F16 differs from scalar: %s, rows of %d blocks, block %lld "
                         "of chunk %lld",
                         gk_isa_name(levels[k]), s->name, raw ? "raw binary16 bits" : pattern_names[p],
                         rowblocks, (long long)at, (long long)iter);
        }
        done += chunk_blocks;
    }
    free(h);
    free(x);
    free(a);
    free(b);
    return done;
}

/* F16 rows straight to type id at every level that can, nblocks blocks. */
static void check_from_f16(uint32_t id, int64_t nblocks) {
    rng_state = 0xD1B54A32D192ED03ull ^ ((uint64_t)id << 32);
    nblocks = (int64_t)(nblocks * scale_factor);
    int nlev = 0;
    const int64_t done = compare_from_f16(id, nblocks, 8, &nlev) + compare_from_f16(id, nblocks / 8, 1, &nlev);
    printf("%s quantize from F16: %lld blocks at each of %d levels (rows of 8 blocks and of 1)\n",
           tables[GK_ISA_SCALAR][id].name, (long long)done, nlev);
    fflush(stdout);
    if (gk_isa_supported() >= GK_ISA_AVX2)
        ck_assert_msg(nlev > 0, "%s: no kernel quantizes F16 directly", tables[GK_ISA_SCALAR][id].name);
}

START_TEST(q8_0_from_f16) { check_from_f16(GK_TYPE_Q8_0, 20000000); }
END_TEST
START_TEST(q4_0_from_f16) { check_from_f16(GK_TYPE_Q4_0, 20000000); }
END_TEST
START_TEST(q4_1_from_f16) { check_from_f16(GK_TYPE_Q4_1, 20000000); }
END_TEST
START_TEST(q5_0_from_f16) { check_from_f16(GK_TYPE_Q5_0, 20000000); }
END_TEST
START_TEST(q5_1_from_f16) { check_from_f16(GK_TYPE_Q5_1, 20000000); }
END_TEST

/* F16/BF16: every binary16 widened, and a strided sweep over all float bit patterns. */
static void check_float_type(gk_isa level, uint32_t id) {
    const char *skip = level_skip(level);
    const gk_type_info *s = &tables[GK_ISA_SCALAR][id];
    const gk_type_info *v = &tables[level][id];
    if (skip) {
        printf("SKIPPED: %s %s: this processor has no %s\n", skip, s->name, skip);
        return;
    }
    ck_assert_msg(v->quantize != s->quantize, "%s %s: no vector kernel", gk_isa_name(level), s->name);
    enum { N = 1 << 16 };
    static uint16_t h[N], ha[N + 7], hb[N + 7];
    static float fa[N + 7], fb[N + 7];
    for (int i = 0; i < N; i++) h[i] = (uint16_t)i;
    s->dequantize(h, fa, N);
    v->dequantize(h, fb, N);
    ck_assert_msg(memcmp(fa, fb, sizeof(float) * N) == 0, "%s %s dequantize differs", gk_isa_name(level), s->name);
    const uint64_t stride = (uint64_t)(4099 / (scale_factor < 1e-3 ? 1e-3 : scale_factor > 1 ? 1 : scale_factor));
    uint64_t count = 0;
    for (uint64_t base = 0; base < (1ull << 32); base += (uint64_t)N * stride) {
        for (int i = 0; i < N + 7; i++) {
            uint32_t u = (uint32_t)(base + (uint64_t)i * stride + (uint64_t)(i & 4095));
            fa[i] = gk_bits_f32(u);
        }
        /* an odd length exercises the scalar tail */
        s->quantize(fa, ha, 1, N + 7, NULL);
        v->quantize(fa, hb, 1, N + 7, NULL);
        if (memcmp(ha, hb, sizeof(uint16_t) * (N + 7)) != 0) {
            int k = 0;
            while (ha[k] == hb[k]) k++;
            ck_abort_msg("%s %s quantize differs for bits 0x%08x: 0x%04x vs 0x%04x", gk_isa_name(level),
                         s->name, gk_f32_bits(fa[k]), ha[k], hb[k]);
        }
        count += N + 7;
    }
    printf("%s %-6s dequantize: all 65536 halves; quantize: %llu float bit patterns\n", gk_isa_name(level),
           s->name, (unsigned long long)count);
}

START_TEST(f16_avx2) { check_float_type(GK_ISA_AVX2, GK_TYPE_F16); }
END_TEST
START_TEST(bf16_avx2) { check_float_type(GK_ISA_AVX2, GK_TYPE_BF16); }
END_TEST

static Suite *simd_suite(void) {
    Suite *s = suite_create("kernels_simd");
    TCase *tc = tcase_create("vector_vs_scalar");
    tcase_set_timeout(tc, 1800);
    tcase_add_test(tc, f16_avx2);
    tcase_add_test(tc, bf16_avx2);
    tcase_add_test(tc, q4_K);
    tcase_add_test(tc, q5_K);
    tcase_add_test(tc, q6_K);
    tcase_add_test(tc, q3_K);
    tcase_add_test(tc, q2_K);
    tcase_add_test(tc, q8_0);
    tcase_add_test(tc, q4_0);
    tcase_add_test(tc, q4_1);
    tcase_add_test(tc, q5_0);
    tcase_add_test(tc, q5_1);
    tcase_add_test(tc, both_nan_takes_the_scales);
    tcase_add_test(tc, nvfp4);
    tcase_add_test(tc, mxfp4);
    tcase_add_test(tc, q1_0);
    tcase_add_test(tc, q2_0);
    tcase_add_test(tc, q8_0_from_f16);
    tcase_add_test(tc, q4_0_from_f16);
    tcase_add_test(tc, q4_1_from_f16);
    tcase_add_test(tc, q5_0_from_f16);
    tcase_add_test(tc, q5_1_from_f16);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    const char *f = getenv("GGUFKIT_SIMD_SCALE");
    if (f && *f) scale_factor = atof(f);
    if (!(scale_factor > 0)) scale_factor = SIMD_DEFAULT_SCALE;
    for (int level = GK_ISA_SCALAR; level <= GK_ISA_AVX512; level++) gk_type_table_for((gk_isa)level, tables[level]);
    printf("processor supports: %s; block counts scaled by %g\n", gk_isa_name(gk_isa_supported()), scale_factor);
    SRunner *sr = srunner_create(simd_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
