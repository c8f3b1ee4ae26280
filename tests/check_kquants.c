/*
 * check_kquants.c - unit and golden-parity tests of the K-quant kernels
 * (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K in lib/types/kquants.c).
 *
 * Unit tests need no data: degenerate blocks, magnitudes, row handling,
 * round-trip error bounds, byte swapping and the type table entries. The golden
 * test (GGUFKIT_GOLDEN) quantizes the syn1 source tensors and compares sha256
 * with llama.cpp's files, with and without the importance matrix, and checks
 * every K-type tensor's dequantization against the reference's.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_util.h"
#include "ggufkit.h"
#include "types/blocks.h"
#include "types/fp16.h"
#include "types/kernels.h"
#include "sha256.h"

#define QK QK_K   /* the super-block of every k-quant */

typedef struct {
    const char *name;
    uint32_t id;
    size_t bytes;
    gk_quantize_fn quantize;
    gk_dequantize_fn dequantize;
    gk_byteswap_fn byteswap;
    double max_rel_rms;     /* bound on quantize->dequantize error, gaussian data */
} ktype;

static const ktype ktypes[] = {
    { "Q2_K", GK_TYPE_Q2_K, 84, gk_quantize_q2_K, gk_dequantize_q2_K, gk_byteswap_q2_K, 0.33 },
    { "Q3_K", GK_TYPE_Q3_K, 110, gk_quantize_q3_K, gk_dequantize_q3_K, gk_byteswap_q3_K, 0.17 },
    { "Q4_K", GK_TYPE_Q4_K, 144, gk_quantize_q4_K, gk_dequantize_q4_K, gk_byteswap_q4_K, 0.08 },
    { "Q5_K", GK_TYPE_Q5_K, 176, gk_quantize_q5_K, gk_dequantize_q5_K, gk_byteswap_q5_K, 0.04 },
    { "Q6_K", GK_TYPE_Q6_K, 210, gk_quantize_q6_K, gk_dequantize_q6_K, gk_byteswap_q6_K, 0.02 },
    { "Q8_K", GK_TYPE_Q8_K, 292, gk_quantize_q8_K, gk_dequantize_q8_K, gk_byteswap_q8_K, 0.009 },
};
#define NKTYPES ((int)(sizeof ktypes / sizeof ktypes[0]))

/* Multi-byte members of each block: offset and size, the byte order to swap
 * (written independently of the kernels, from ggml-common.h). */
typedef struct {
    int count;
    struct { int offset, size; } field[17];
} swap_map;

static swap_map swap_map_of(uint32_t id) {
    swap_map m = { 0 };
    switch (id) {
    case GK_TYPE_Q2_K: m.count = 2; m.field[0].offset = 80; m.field[1].offset = 82; break;
    case GK_TYPE_Q3_K: m.count = 1; m.field[0].offset = 108; break;
    case GK_TYPE_Q4_K:
    case GK_TYPE_Q5_K: m.count = 2; m.field[0].offset = 0; m.field[1].offset = 2; break;
    case GK_TYPE_Q6_K: m.count = 1; m.field[0].offset = 208; break;
    case GK_TYPE_Q8_K:
        m.count = 17;
        m.field[0].offset = 0;
        m.field[0].size = 4;
        for (int i = 0; i < 16; i++) m.field[1 + i].offset = 260 + 2 * i;
        break;
    }
    for (int i = 0; i < m.count; i++)
        if (m.field[i].size == 0) m.field[i].size = 2;
    return m;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static uint64_t rng_state;

static double rng_uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((rng_state >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static void fill_gaussian(float *x, int64_t n, double sigma, uint64_t seed) {
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        double u = rng_uniform(), v = rng_uniform();
        x[i] = (float)(sigma * sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
    }
}

static double rel_rms_error(const float *a, const float *b, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)a[i] * a[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Quantize nrows x n_per_row and dequantize back into out; returns the blocks. */
static uint8_t *round_trip(const ktype *t, const float *x, float *out, int64_t nrows,
                           int64_t n_per_row, const float *imatrix) {
    size_t nbytes = (size_t)(nrows * n_per_row / QK) * t->bytes;
    uint8_t *q = malloc(nbytes);
    ck_assert_ptr_nonnull(q);
    memset(q, 0xA5, nbytes);
    t->quantize(x, q, nrows, n_per_row, imatrix);
    t->dequantize(q, out, nrows * n_per_row);
    return q;
}

/* ------------------------------------------------------------------------ */
/* Unit tests (loop over the six types with _i)                             */
/* ------------------------------------------------------------------------ */

START_TEST(test_table_entries) {
    const ktype *t = &ktypes[_i];
    const gk_type_info *info = gk_type_get(t->id);
    ck_assert_ptr_nonnull(info);
    ck_assert_str_eq(info->name, t->name);
    ck_assert_uint_eq(info->block_elems, QK);
    ck_assert_uint_eq(info->block_bytes, t->bytes);
    /* the scalar level names these kernels; the active table may hold vector ones */
    static gk_type_info scalar[GK_TYPE_COUNT];
    gk_type_table_for(GK_ISA_SCALAR, scalar);
    ck_assert(scalar[t->id].quantize == t->quantize);
    ck_assert(scalar[t->id].dequantize == t->dequantize);
    ck_assert(info->byteswap == t->byteswap);
    ck_assert_ptr_nonnull(info->quantize);
    ck_assert_ptr_nonnull(info->dequantize);
    ck_assert(!info->needs_imatrix);
}
END_TEST

START_TEST(test_all_zero_block) {
    const ktype *t = &ktypes[_i];
    float x[2 * QK] = { 0 }, y[2 * QK], w[2 * QK];
    for (int i = 0; i < 2 * QK; i++) { y[i] = 1.0f; w[i] = 1.0f; }
    for (int pass = 0; pass < 2; pass++) {
        uint8_t *q = round_trip(t, x, y, 1, 2 * QK, pass ? w : NULL);
        for (int i = 0; i < 2 * QK; i++) ck_assert_msg(y[i] == 0.0f, "%s y[%d]=%g", t->name, i, y[i]);
        /* Every block scale must be zero (no NaN/garbage scale for an empty block). */
        swap_map m = swap_map_of(t->id);
        for (int b = 0; b < 2; b++) {
            const uint8_t *blk = q + b * t->bytes;
            for (int k = 0; k < m.count && k < 2; k++) {
                for (int j = 0; j < m.field[k].size; j++) {
                    uint8_t v = blk[m.field[k].offset + j];
                    /* half/float zero may carry a sign bit only */
                    ck_assert_msg((v & (j == m.field[k].size - 1 ? 0x7F : 0xFF)) == 0,
                                  "%s scale byte not zero", t->name);
                }
            }
        }
        free(q);
    }
}
END_TEST

START_TEST(test_constant_block) {
    const ktype *t = &ktypes[_i];
    const float values[] = { 1.0f, -1.0f, 0.37f, -123.5f };
    float x[QK], y[QK];
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        for (int i = 0; i < QK; i++) x[i] = values[v];
        free(round_trip(t, x, y, 1, QK, NULL));
        double err = rel_rms_error(x, y, QK);
        ck_assert_msg(err <= 1e-3, "%s constant %g: rel rms %g", t->name, values[v], err);
        for (int i = 1; i < QK; i++) ck_assert_msg(y[i] == y[0], "%s not constant", t->name);
    }
}
END_TEST

START_TEST(test_magnitudes) {
    const ktype *t = &ktypes[_i];
    /* Scales are fp16 in all but Q8_K: stay within its normal range there. */
    const double sigmas_half[] = { 1e3, 1.0, 3e-2 };
    const double sigmas_q8k[] = { 1e30, 1.0, 1e-30 };
    const double *sigmas = t->id == GK_TYPE_Q8_K ? sigmas_q8k : sigmas_half;
    float *x = malloc(4 * QK * sizeof(float)), *y = malloc(4 * QK * sizeof(float));
    for (int s = 0; s < 3; s++) {
        fill_gaussian(x, 4 * QK, sigmas[s], 7 + (uint64_t)s);
        free(round_trip(t, x, y, 4, QK, NULL));
        double err = rel_rms_error(x, y, 4 * QK);
        ck_assert_msg(isfinite(err) && err <= t->max_rel_rms * 1.25,
                      "%s sigma %g: rel rms %g", t->name, sigmas[s], err);
    }
    free(x);
    free(y);
}
END_TEST

START_TEST(test_round_trip_error) {
    const ktype *t = &ktypes[_i];
    const int64_t nrows = 16, n = 2 * QK;
    float *x = malloc(nrows * n * sizeof(float)), *y = malloc(nrows * n * sizeof(float));
    float *w = malloc(n * sizeof(float));
    fill_gaussian(x, nrows * n, 0.02, 99);
    for (int64_t i = 0; i < n; i++) w[i] = (float)(0.5 + rng_uniform());
    free(round_trip(t, x, y, nrows, n, NULL));
    double err = rel_rms_error(x, y, nrows * n);
    ck_assert_msg(err <= t->max_rel_rms, "%s NULL path rel rms %g > %g", t->name, err, t->max_rel_rms);
    free(round_trip(t, x, y, nrows, n, w));
    err = rel_rms_error(x, y, nrows * n);
    ck_assert_msg(err <= t->max_rel_rms, "%s imatrix path rel rms %g > %g", t->name, err,
                  t->max_rel_rms);
    free(x);
    free(y);
    free(w);
}
END_TEST

/* Rows are independent: one call over many rows equals row-by-row calls, and a
 * row of one block is a whole row. */
START_TEST(test_rows_independent) {
    const ktype *t = &ktypes[_i];
    const int64_t nrows = 5;
    for (int64_t n_per_row = QK; n_per_row <= 2 * QK; n_per_row += QK) {
        float *x = malloc(nrows * n_per_row * sizeof(float));
        float *w = malloc(n_per_row * sizeof(float));
        fill_gaussian(x, nrows * n_per_row, 1.0, (uint64_t)n_per_row);
        for (int64_t i = 0; i < n_per_row; i++) w[i] = (float)(0.1 + 2 * rng_uniform());
        size_t row_bytes = (size_t)(n_per_row / QK) * t->bytes;
        uint8_t *all = malloc(nrows * row_bytes), *one = malloc(row_bytes);
        for (int pass = 0; pass < 2; pass++) {
            const float *imat = pass ? w : NULL;
            t->quantize(x, all, nrows, n_per_row, imat);
            for (int64_t r = 0; r < nrows; r++) {
                t->quantize(x + r * n_per_row, one, 1, n_per_row, imat);
                ck_assert_msg(memcmp(one, all + r * row_bytes, row_bytes) == 0,
                              "%s row %d differs (imatrix %d)", t->name, (int)r, pass);
            }
        }
        free(x);
        free(w);
        free(all);
        free(one);
    }
}
END_TEST

/* The weighted path really uses the weights: giving all weight to one half of
 * each block must not make that half worse than the unweighted result by much,
 * and must change the output somewhere. */
START_TEST(test_imatrix_used) {
    const ktype *t = &ktypes[_i];
    if (t->id == GK_TYPE_Q8_K) return; /* ggml has no weighted Q8_K */
    const int64_t n = 8 * QK;
    float *x = malloc(n * sizeof(float)), *w = malloc(n * sizeof(float));
    fill_gaussian(x, n, 1.0, 5);
    for (int64_t i = 0; i < n; i++) w[i] = (i % 32) < 4 ? 100.f : 0.01f;
    size_t nbytes = (size_t)(n / QK) * t->bytes;
    uint8_t *a = malloc(nbytes), *b = malloc(nbytes);
    t->quantize(x, a, 1, n, NULL);
    t->quantize(x, b, 1, n, w);
    ck_assert_msg(memcmp(a, b, nbytes) != 0, "%s ignores the imatrix", t->name);
    float *ya = malloc(n * sizeof(float)), *yb = malloc(n * sizeof(float));
    t->dequantize(a, ya, n);
    t->dequantize(b, yb, n);
    double ea = 0, eb = 0;
    for (int64_t i = 0; i < n; i++) {
        if ((i % 32) >= 4) continue;
        ea += (x[i] - ya[i]) * (x[i] - ya[i]);
        eb += (x[i] - yb[i]) * (x[i] - yb[i]);
    }
    ck_assert_msg(eb < ea, "%s weighted error %g not below unweighted %g", t->name, eb, ea);
    free(x); free(w); free(a); free(b); free(ya); free(yb);
}
END_TEST

START_TEST(test_byteswap) {
    const ktype *t = &ktypes[_i];
    const int nblocks = 3;
    size_t n = nblocks * t->bytes;
    uint8_t *orig = malloc(n), *buf = malloc(n), *want = malloc(n);
    for (size_t i = 0; i < n; i++) orig[i] = (uint8_t)(i * 7 + 1);
    memcpy(buf, orig, n);
    memcpy(want, orig, n);
    swap_map m = swap_map_of(t->id);
    ck_assert_int_gt(m.count, 0);
    for (int b = 0; b < nblocks; b++) {
        for (int k = 0; k < m.count; k++) {
            uint8_t *f = want + b * t->bytes + m.field[k].offset;
            for (int j = 0; j < m.field[k].size / 2; j++) {
                uint8_t tmp = f[j];
                f[j] = f[m.field[k].size - 1 - j];
                f[m.field[k].size - 1 - j] = tmp;
            }
        }
    }
    t->byteswap(buf, nblocks);
    ck_assert_msg(memcmp(buf, want, n) == 0, "%s swapped the wrong bytes", t->name);
    t->byteswap(buf, nblocks);
    ck_assert_msg(memcmp(buf, orig, n) == 0, "%s byteswap twice is not identity", t->name);
    free(orig); free(buf); free(want);
}
END_TEST

/* Dequantization of a hand-built block: checks the layout, not only a round trip. */
START_TEST(test_known_blocks) {
    float y[QK];
    /* Q4_K: d = 1, dmin = 0.5, every scale 2, min 1, quants = index & 15. */
    uint8_t q4[144] = { 0 };
    uint16_t one = gk_fp32_to_fp16(1.0f), half = gk_fp32_to_fp16(0.5f);
    memcpy(q4, &one, 2);
    memcpy(q4 + 2, &half, 2);
    for (int j = 0; j < 4; j++) { q4[4 + j] = 2; q4[8 + j] = 1; }
    for (int j = 0; j < 4; j++) q4[12 + j] = 2 | (1 << 4);
    for (int i = 0; i < 128; i++) q4[16 + i] = (uint8_t)((i & 15) | ((15 - (i & 15)) << 4));
    gk_dequantize_q4_K(q4, y, QK);
    for (int c = 0; c < 4; c++) {
        for (int l = 0; l < 32; l++) {
            ck_assert_float_eq(y[64 * c + l], 2.0f * (l & 15) - 0.5f);
            ck_assert_float_eq(y[64 * c + 32 + l], 2.0f * (15 - (l & 15)) - 0.5f);
        }
    }
    /* Q8_K: float d = 0.25, qs[i] = i - 128. */
    uint8_t q8[292] = { 0 };
    float d = 0.25f;
    memcpy(q8, &d, 4);
    for (int i = 0; i < QK; i++) q8[4 + i] = (uint8_t)(int8_t)(i - 128);
    gk_dequantize_q8_K(q8, y, QK);
    for (int i = 0; i < QK; i++) ck_assert_float_eq(y[i], 0.25f * (i - 128));
    /* Q6_K: d = 1, scale[g] = g - 8, all quants at level 33 (value +1). */
    uint8_t q6[210] = { 0 };
    memset(q6, 0x11, 128);         /* low nibbles 1 */
    memset(q6 + 128, 0xAA, 64);    /* high bits 2 -> 32 */
    for (int g = 0; g < 16; g++) q6[192 + g] = (uint8_t)(int8_t)(g - 8);
    memcpy(q6 + 208, &one, 2);
    gk_dequantize_q6_K(q6, y, QK);
    for (int i = 0; i < QK; i++) ck_assert_float_eq(y[i], (float)(i / 16 - 8));
}
END_TEST

/* Q8_K block sums equal the sums of its quants. */
START_TEST(test_q8_K_bsums) {
    float x[QK];
    uint8_t q[292];
    fill_gaussian(x, QK, 3.0, 11);
    gk_quantize_q8_K(x, q, 1, QK, NULL);
    for (int g = 0; g < 16; g++) {
        int sum = 0;
        for (int i = 0; i < 16; i++) sum += (int8_t)q[4 + 16 * g + i];
        int16_t bs;
        memcpy(&bs, q + 260 + 2 * g, 2);
        ck_assert_int_eq(bs, sum);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Golden parity                                                             */
/* ------------------------------------------------------------------------ */

static const ktype *ktype_by_name(const char *name) {
    for (int i = 0; i < NKTYPES; i++)
        if (strcmp(ktypes[i].name, name) == 0) return &ktypes[i];
    return NULL;
}

static void *read_range(const char *path, long offset, size_t n) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    void *buf = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fseek(f, offset, SEEK_SET), 0);
    ck_assert_uint_eq(fread(buf, 1, n, f), n);
    fclose(f);
    return buf;
}

static cJSON *load_manifest(const char *dir, const char *sub) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/MANIFEST.json", dir, sub);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    cJSON *m = cJSON_Parse(text);
    free(text);
    ck_assert_msg(m != NULL, "bad manifest %s", path);
    return m;
}

static void sha256_hex(const void *p, size_t n, char out[GK_SHA256_HEX_SIZE]) {
    gk_sha256 h;
    uint8_t d[GK_SHA256_DIGEST_SIZE];
    gk_sha256_init(&h);
    gk_sha256_update(&h, p, n);
    gk_sha256_final(&h, d);
    gk_sha256_hex(d, out);
}

static int64_t tensor_elems(const cJSON *t) {
    int64_t n = 1;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(t, "ne")) n *= (int64_t)e->valuedouble;
    return n;
}

/* The F32 values a golden tensor was quantized from: read from the source file
 * of its chain (F32 as is, F16 and Q8_0 decoded as llama-quantize does). */
static float *source_values(const char *dir, const cJSON *src_manifest, const char *src_file,
                            const char *tensor, int64_t n) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
                                             src_manifest, src_file), "tensors"), tensor);
    ck_assert_msg(t != NULL, "no %s in %s", tensor, src_file);
    const char *type = cJSON_GetObjectItemCaseSensitive(t, "type")->valuestring;
    long offset = (long)cJSON_GetObjectItemCaseSensitive(t, "offset")->valuedouble;
    size_t nbytes = (size_t)cJSON_GetObjectItemCaseSensitive(t, "nbytes")->valuedouble;
    char path[4096];
    snprintf(path, sizeof path, "%s/syn1/%s", dir, src_file);
    uint8_t *raw = read_range(path, offset, nbytes);
    float *x = malloc((size_t)n * sizeof(float));
    if (strcmp(type, "F32") == 0) {
        ck_assert_uint_eq(nbytes, (size_t)n * 4);
        memcpy(x, raw, nbytes);
    } else if (strcmp(type, "F16") == 0) {
        for (int64_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, raw + 2 * i, 2);
            x[i] = gk_fp16_to_fp32(h);
        }
    } else if (strcmp(type, "Q8_0") == 0) {
        for (int64_t b = 0; b < n / 32; b++) {
            uint16_t h;
            memcpy(&h, raw + 34 * b, 2);
            const float d = gk_fp16_to_fp32(h);
            for (int j = 0; j < 32; j++) x[32 * b + j] = (int8_t)raw[34 * b + 2 + j] * d;
        }
    } else {
        ck_abort_msg("unexpected source type %s", type);
    }
    free(raw);
    return x;
}

/* Importance matrix in llama-imatrix's legacy binary format, averaged per call as
 * llama-quantize does (a test-only reader; entry names point into one table). */
typedef struct {
    int count;
    char name[64][128];
    int nval[64];
    float *values[64];
} imatrix_table;

static void imatrix_load(const char *path, imatrix_table *im) {
    memset(im, 0, sizeof *im);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    int32_t n;
    ck_assert_uint_eq(fread(&n, 4, 1, f), 1);
    ck_assert(n > 0 && n <= 64);
    for (int e = 0; e < n; e++) {
        int32_t len, ncall, nval;
        ck_assert_uint_eq(fread(&len, 4, 1, f), 1);
        ck_assert(len > 0 && len < 128);
        ck_assert_uint_eq(fread(im->name[e], 1, (size_t)len, f), (size_t)len);
        ck_assert_uint_eq(fread(&ncall, 4, 1, f), 1);
        ck_assert_uint_eq(fread(&nval, 4, 1, f), 1);
        ck_assert(nval > 0);
        im->values[e] = malloc((size_t)nval * sizeof(float));
        ck_assert_uint_eq(fread(im->values[e], 4, (size_t)nval, f), (size_t)nval);
        if (ncall > 0)
            for (int i = 0; i < nval; i++) im->values[e][i] /= (float)ncall;
        im->nval[e] = nval;
    }
    im->count = n;
    fclose(f);
}

/* The GGUF-format matrix (syn1.imatrix.gguf) through the library's reader, which
 * turns in_sum2 / counts into weights as llama-quantize does. */
static void imatrix_load_gguf(const char *path, imatrix_table *im) {
    memset(im, 0, sizeof *im);
    gk_imatrix *g = NULL;
    gk_error err;
    ck_assert_msg(gk_imatrix_load(path, &g, &err) == GK_OK, "%s: %s", path, err.message);
    size_t n = gk_imatrix_count(g);
    ck_assert(n > 0 && n <= 64);
    for (size_t e = 0; e < n; e++) {
        const float *v = NULL;
        size_t nval = 0;
        const char *name = gk_imatrix_entry(g, e, &v, &nval);
        ck_assert(strlen(name) < 128);
        strcpy(im->name[e], name);
        im->values[e] = malloc(nval * sizeof(float));
        memcpy(im->values[e], v, nval * sizeof(float));
        im->nval[e] = (int)nval;
    }
    im->count = (int)n;
    gk_imatrix_free(g);
}

static const float *imatrix_find(const imatrix_table *im, const char *name, int64_t n_per_row) {
    for (int e = 0; e < im->count; e++)
        if (strcmp(im->name[e], name) == 0 && im->nval[e] == n_per_row) return im->values[e];
    return NULL;
}

static void imatrix_free(imatrix_table *im) {
    for (int e = 0; e < im->count; e++) free(im->values[e]);
}

typedef struct {
    int quant_ok[NKTYPES][2], quant_all[NKTYPES][2]; /* [type][0 = NULL, 1 = imatrix] */
    int deq_ok[NKTYPES], deq_all[NKTYPES];
} parity_counts;

/* The file a golden file was quantized from (syn1/ names). */
static const char *chain_source(const char *file) {
    if (strcmp(file, "syn1-f16.to-Q5_K_S.gguf") == 0) return "syn1-f16.gguf";
    if (strcmp(file, "syn1-Q8_0.to-Q4_K_S.gguf") == 0) return "syn1-Q8_0.gguf";
    return "syn1-f32.gguf";
}

/* Which golden files are quantized from scratch and compared: the --pure K
 * files, the two chains, the presets (type mixes, no imatrix) and every
 * imatrix file (weights where the matrix has the tensor, else the NULL path). */
static bool quantize_this_file(const char *sub, const char *file) {
    static const char *syn1_files[] = {
        "syn1-Q2_K.gguf", "syn1-Q3_K_S.gguf", "syn1-Q4_K_S.gguf", "syn1-Q5_K_S.gguf",
        "syn1-Q6_K.gguf", "syn1-f16.to-Q5_K_S.gguf", "syn1-Q8_0.to-Q4_K_S.gguf",
    };
    if (strcmp(sub, "imatrix") == 0 || strncmp(file, "syn1-preset-", 12) == 0) return true;
    for (size_t i = 0; i < sizeof syn1_files / sizeof syn1_files[0]; i++)
        if (strcmp(file, syn1_files[i]) == 0) return true;
    return false;
}

/* The matrices of golden/imatrix: syn1-imat-* files were made with the legacy
 * syn1.imatrix, syn1-gimat-* with the GGUF-format syn1.imatrix.gguf. */
typedef struct {
    imatrix_table legacy, gguf;
} imatrix_pair;

static void check_golden_dir(const char *dir, const char *sub, const cJSON *syn1_manifest,
                             const imatrix_pair *ims, parity_counts *c) {
    cJSON *m = load_manifest(dir, sub);
    const cJSON *file;
    cJSON_ArrayForEach(file, m) {
        const imatrix_table *im = strncmp(file->string, "syn1-gimat-", 11) == 0 ? &ims->gguf : &ims->legacy;
        const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(file, "tensors");
        const cJSON *t;
        cJSON_ArrayForEach(t, tensors) {
            const ktype *kt = ktype_by_name(cJSON_GetObjectItemCaseSensitive(t, "type")->valuestring);
            if (kt == NULL) continue;
            int ti = (int)(kt - ktypes);
            int64_t n = tensor_elems(t);
            int64_t n_per_row = (int64_t)cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(t, "ne"), 0)->valuedouble;
            size_t nbytes = (size_t)cJSON_GetObjectItemCaseSensitive(t, "nbytes")->valuedouble;
            ck_assert_uint_eq(nbytes, (size_t)(n / QK) * kt->bytes);
            char path[4096], hex[GK_SHA256_HEX_SIZE];
            snprintf(path, sizeof path, "%s/%s/%s", dir, sub, file->string);
            uint8_t *golden = read_range(path, (long)cJSON_GetObjectItemCaseSensitive(t, "offset")->valuedouble,
                                         nbytes);

            const cJSON *deq_sha = cJSON_GetObjectItemCaseSensitive(t, "deq_f32_sha256");
            if (deq_sha != NULL) {
                float *y = malloc((size_t)n * sizeof(float));
                kt->dequantize(golden, y, n);
                sha256_hex(y, (size_t)n * sizeof(float), hex);
                c->deq_all[ti]++;
                if (strcmp(hex, deq_sha->valuestring) == 0) c->deq_ok[ti]++;
                else fprintf(stderr, "deq mismatch: %s/%s %s\n", sub, file->string, t->string);
                free(y);
            }

            if (quantize_this_file(sub, file->string)) {
                float *x = source_values(dir, syn1_manifest, chain_source(file->string), t->string, n);
                const float *w = strcmp(sub, "imatrix") == 0 ? imatrix_find(im, t->string, n_per_row) : NULL;
                uint8_t *q = malloc(nbytes);
                kt->quantize(x, q, n / n_per_row, n_per_row, w);
                sha256_hex(q, nbytes, hex);
                int path_ix = w != NULL;
                c->quant_all[ti][path_ix]++;
                if (strcmp(hex, cJSON_GetObjectItemCaseSensitive(t, "sha256")->valuestring) == 0)
                    c->quant_ok[ti][path_ix]++;
                else
                    fprintf(stderr, "quant mismatch (%s): %s/%s %s\n", w ? "imatrix" : "NULL",
                            sub, file->string, t->string);
                free(q);
                free(x);
            }
            free(golden);
        }
    }
    cJSON_Delete(m);
}

START_TEST(test_golden_parity) {
    const char *dir = golden_dir(NULL);
    if (dir == NULL) {
        const char *env = getenv("GGUFKIT_GOLDEN");
        printf("SKIPPED: golden parity (no golden data at %s)\n", env ? env : "(GGUFKIT_GOLDEN unset)");
        return;
    }
    cJSON *syn1 = load_manifest(dir, "syn1");
    imatrix_pair *im = malloc(sizeof *im);
    char path[4096];
    snprintf(path, sizeof path, "%s/imatrix/syn1.imatrix", dir);
    imatrix_load(path, &im->legacy);
    snprintf(path, sizeof path, "%s/imatrix/syn1.imatrix.gguf", dir);
    imatrix_load_gguf(path, &im->gguf);

    parity_counts c;
    memset(&c, 0, sizeof c);
    check_golden_dir(dir, "syn1", syn1, im, &c);
    check_golden_dir(dir, "imatrix", syn1, im, &c);

    int bad = 0, total = 0;
    for (int i = 0; i < NKTYPES; i++) {
        printf("golden %s: quantize NULL %d/%d, imatrix %d/%d; dequantize %d/%d\n", ktypes[i].name,
               c.quant_ok[i][0], c.quant_all[i][0], c.quant_ok[i][1], c.quant_all[i][1],
               c.deq_ok[i], c.deq_all[i]);
        bad += c.quant_all[i][0] - c.quant_ok[i][0] + c.quant_all[i][1] - c.quant_ok[i][1] +
               c.deq_all[i] - c.deq_ok[i];
        total += c.quant_all[i][0] + c.quant_all[i][1] + c.deq_all[i];
    }
    imatrix_free(&im->legacy);
    imatrix_free(&im->gguf);
    free(im);
    cJSON_Delete(syn1);
    ck_assert_msg(total > 0, "golden data holds no K-quant tensors");
    /* Every type with golden files must have been exercised on both paths. */
    ck_assert_int_gt(c.quant_all[0][1], 0);
    ck_assert_int_gt(c.quant_all[2][0], 0);
    ck_assert_msg(bad == 0, "%d golden mismatches (see stderr)", bad);
}
END_TEST

static Suite *kquants_suite(void) {
    Suite *s = suite_create("kquants");
    TCase *unit = tcase_create("unit");
    tcase_add_loop_test(unit, test_table_entries, 0, NKTYPES);
    tcase_add_loop_test(unit, test_all_zero_block, 0, NKTYPES);
    tcase_add_loop_test(unit, test_constant_block, 0, NKTYPES);
    tcase_add_loop_test(unit, test_magnitudes, 0, NKTYPES);
    tcase_add_loop_test(unit, test_round_trip_error, 0, NKTYPES);
    tcase_add_loop_test(unit, test_rows_independent, 0, NKTYPES);
    tcase_add_loop_test(unit, test_imatrix_used, 0, NKTYPES);
    tcase_add_loop_test(unit, test_byteswap, 0, NKTYPES);
    tcase_add_test(unit, test_known_blocks);
    tcase_add_test(unit, test_q8_K_bsums);
    suite_add_tcase(s, unit);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, test_golden_parity);
    suite_add_tcase(s, golden);
    return s;
}

int main(void) {
    return run_suite(kquants_suite());
}
