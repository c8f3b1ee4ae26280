/*
 * check_imatrix.c - importance matrices (lib/quant/imatrix.c) and the 2-bit /
 * 1-bit I-quant quantizers that need them (lib/types/iquants.c, iq_search.c).
 *
 * Unit tests (always run): the legacy binary reader (values divided by the call
 * count, optional dataset trailer), every truncation and several inconsistencies
 * refused with an error, a GGUF matrix written with the library's own header
 * writer (in_sum2 / counts per row, rows never reached -> 1), include / exclude
 * filtering, a matrix for another model refused with the entry named, the
 * metadata pairs llama-quantize records, and sanity of the five new quantizers
 * (error bound, determinism, concurrent first use of the search tables).
 * Golden parity (needs $GGUFKIT_GOLDEN): golden/imatrix/syn1.imatrix loads as
 * llama-quantize reads it, and quantizing the F32 tensors of syn1/syn1-f32.gguf
 * with its weights (syn1-imat-* files) or with those of the GGUF-format
 * syn1.imatrix.gguf (syn1-gimat-* files) reproduces every IQ2_XXS, IQ2_XS, IQ2_S,
 * IQ1_S and IQ1_M tensor of golden/imatrix/ byte for byte (sha256 of
 * imatrix/MANIFEST.json).
 */
#include <check.h>
#include <cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "quant/overrides.h"
#include "types/kernels.h"
#include "sha256.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */

/* A growable byte buffer for building legacy files. */
typedef struct {
    uint8_t b[4096];
    size_t n;
} buf_t;

static void put_i32(buf_t *b, int32_t v) {
    uint32_t u = (uint32_t)v;
    for (int k = 0; k < 4; k++) b->b[b->n++] = (uint8_t)(u >> (8 * k));
}

static void put_f32(buf_t *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put_i32(b, (int32_t)u);
}

static void put_bytes(buf_t *b, const char *s) {
    size_t n = strlen(s);
    memcpy(b->b + b->n, s, n);
    b->n += n;
}

static void put_entry(buf_t *b, const char *name, int32_t ncall, int n, const float *v) {
    put_i32(b, (int32_t)strlen(name));
    put_bytes(b, name);
    put_i32(b, ncall);
    put_i32(b, n);
    for (int i = 0; i < n; i++) put_f32(b, v[i]);
}

/* A legacy file with two entries and, with trailer, chunk count 7 and "data.txt". */
static void build_legacy(buf_t *b, bool trailer) {
    static const float a[4] = { 4.f, 8.f, 1.f, 3.f };
    static const float e[2] = { 0.5f, 2.f };
    b->n = 0;
    put_i32(b, 2);
    put_entry(b, "blk.0.attn_q.weight", 4, 4, a);
    put_entry(b, "blk.0.ffn_down.weight", 0, 2, e);
    if (trailer) {
        put_i32(b, 7);
        put_i32(b, 8);
        put_bytes(b, "data.txt");
    }
}

static gk_status load_bytes(const void *data, size_t n, gk_imatrix **im, gk_error *err) {
    const char *p = tmp_path("m.imatrix");
    write_file(p, data, n);
    return gk_imatrix_load(p, im, err);
}

/* ------------------------------------------------------------------------- */
/* Legacy reader                                                             */

START_TEST(legacy_reads_and_divides) {
    buf_t b;
    build_legacy(&b, true);
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_int_eq(load_bytes(b.b, b.n, &im, &err), GK_OK);
    ck_assert_uint_eq(gk_imatrix_count(im), 2);
    ck_assert(!gk_imatrix_is_gguf(im));
    size_t n = 0;
    const float *v = gk_imatrix_find(im, "blk.0.attn_q.weight", &n);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(n, 4);
    ck_assert(v[0] == 1.f && v[1] == 2.f && v[2] == 0.25f && v[3] == 3.f / 4);
    v = gk_imatrix_find(im, "blk.0.ffn_down.weight", &n);
    ck_assert(n == 2 && v[0] == 0.5f && v[1] == 2.f); /* ncall 0: not divided */
    ck_assert_str_eq(gk_imatrix_dataset(im), "data.txt");
    ck_assert_int_eq(gk_imatrix_chunks(im), 7);
    ck_assert_ptr_null(gk_imatrix_find(im, "blk.0.attn_k.weight", NULL));
    const char *name = gk_imatrix_entry(im, 1, NULL, &n);
    ck_assert_str_eq(name, "blk.0.ffn_down.weight");
    ck_assert_ptr_null(gk_imatrix_entry(im, 2, NULL, NULL));
    gk_imatrix_free(im);
}
END_TEST

START_TEST(legacy_without_trailer) {
    buf_t b;
    build_legacy(&b, false);
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_int_eq(load_bytes(b.b, b.n, &im, &err), GK_OK);
    ck_assert_ptr_null(gk_imatrix_dataset(im));
    ck_assert_int_eq(gk_imatrix_chunks(im), 0);
    gk_kv_override o[4];
    size_t no = gk_imatrix_overrides(im, "x.imatrix", o);
    ck_assert_uint_eq(no, 2); /* file and entries_count only */
    ck_assert_str_eq(o[0].key, "quantize.imatrix.file");
    ck_assert_str_eq(o[1].key, "quantize.imatrix.entries_count");
    ck_assert_int_eq(o[1].i, 2);
    gk_imatrix_free(im);
}
END_TEST

/* Every proper prefix of a valid file is refused (and nothing crashes). */
START_TEST(legacy_truncated_refused) {
    buf_t b;
    build_legacy(&b, true);
    size_t entries_end = b.n - 16; /* before the trailer */
    for (size_t n = 0; n < b.n; n++) {
        if (n == entries_end) continue; /* a file without trailer is valid */
        gk_imatrix *im = (gk_imatrix *)1;
        gk_error err;
        gk_error_clear(&err);
        gk_status st = load_bytes(b.b, n, &im, &err);
        ck_assert_msg(st != GK_OK, "prefix of %zu bytes accepted", n);
        ck_assert_ptr_null(im);
        ck_assert_msg(err.message[0] != '\0', "no message for prefix %zu", n);
        if (n >= 4) ck_assert_msg(err.offset >= 0, "no offset for prefix %zu", n);
    }
}
END_TEST

START_TEST(legacy_inconsistent_refused) {
    gk_imatrix *im = NULL;
    gk_error err;
    buf_t b = { .n = 0 };
    put_i32(&b, 0); /* no entries */
    ck_assert_int_ne(load_bytes(b.b, b.n, &im, &err), GK_OK);
    ck_assert_ptr_nonnull(strstr(err.message, "no entries"));

    b.n = 0;
    put_i32(&b, 1);
    put_entry(&b, "t.weight", 1, 0, NULL); /* zero values */
    ck_assert_int_ne(load_bytes(b.b, b.n, &im, &err), GK_OK);

    b.n = 0;
    put_i32(&b, 1);
    put_i32(&b, -5); /* negative name length */
    ck_assert_int_ne(load_bytes(b.b, b.n, &im, &err), GK_OK);

    buf_t c;
    build_legacy(&c, true);
    put_bytes(&c, "junk"); /* bytes after the dataset name */
    ck_assert_int_eq(load_bytes(c.b, c.n, &im, &err), GK_E_CORRUPT);
    ck_assert_int_eq(err.offset, (int64_t)c.n - 4);

    float bad[2] = { 1.f, NAN };
    b.n = 0;
    put_i32(&b, 1);
    put_entry(&b, "nan.weight", 1, 2, bad);
    ck_assert_int_eq(load_bytes(b.b, b.n, &im, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "nan.weight"));

    ck_assert_int_eq(gk_imatrix_load(tmp_path("does-not-exist"), &im, &err), GK_E_IO);
}
END_TEST

START_TEST(filter_include_exclude) {
    buf_t b = { .n = 0 };
    float one = 1.f;
    const char *names[] = { "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.1.attn_q.weight",
                            "blk.1.ffn_up.weight", "output.weight" };
    put_i32(&b, 5);
    for (int i = 0; i < 5; i++) put_entry(&b, names[i], 1, 1, &one);
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_int_eq(load_bytes(b.b, b.n, &im, &err), GK_OK);
    const char *ex[] = { "attn_k", "output" };
    gk_imatrix_filter(im, NULL, 0, ex, 2);
    ck_assert_uint_eq(gk_imatrix_count(im), 3);
    ck_assert_ptr_null(gk_imatrix_find(im, "output.weight", NULL));
    const char *in[] = { "attn_q", "blk.1." };
    gk_imatrix_filter(im, in, 2, NULL, 0);
    ck_assert_uint_eq(gk_imatrix_count(im), 3);
    const char *in2[] = { "ffn" };
    gk_imatrix_filter(im, in2, 1, NULL, 0);
    ck_assert_uint_eq(gk_imatrix_count(im), 1);
    ck_assert_ptr_nonnull(gk_imatrix_find(im, "blk.1.ffn_up.weight", NULL));
    gk_imatrix_free(im);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* GGUF reader (files written with the library's header writer)              */

typedef struct {
    const char *name;
    uint32_t n_dims;
    uint64_t ne[4];
    const float *data;
} gguf_tensor_spec;

/* Writes a GGUF file with the given F32 tensors and (when with_meta) the
 * imatrix.* keys; datasets may be NULL for an empty list. */
static void write_gguf(const char *path, const gguf_tensor_spec *ts, size_t nt, bool with_meta,
                       const char *dataset) {
    gk_model *m = gk_model_new();
    ck_assert_ptr_nonnull(m);
    gk_error err;
    if (with_meta) {
        gk_str ds = { dataset, dataset ? strlen(dataset) : 0 };
        gk_value v = { .type = GK_V_ARR };
        v.arr.elem = GK_V_STR;
        v.arr.n = dataset ? 1 : 0;
        v.arr.data = &ds;
        ck_assert_int_eq(gk_kv_set(m, "imatrix.datasets", &v, &err), GK_OK);
        ck_assert_int_eq(gk_kv_set_u32(m, "imatrix.chunk_count", 12, &err), GK_OK);
        ck_assert_int_eq(gk_kv_set_u32(m, "imatrix.chunk_size", 512, &err), GK_OK);
    }
    for (size_t i = 0; i < nt; i++)
        ck_assert_int_eq(gk_tensor_add(m, ts[i].name, GK_TYPE_F32, ts[i].n_dims, ts[i].ne, &err), GK_OK);
    uint64_t data_size = gk_model_layout(m);
    uint8_t *hdr = NULL;
    size_t hlen = 0;
    ck_assert_int_eq(gk_header_serialize(m, &hdr, &hlen, &err), GK_OK);
    uint8_t *file = calloc(1, hlen + data_size + 32);
    ck_assert_ptr_nonnull(file);
    memcpy(file, hdr, hlen);
    for (size_t i = 0; i < nt; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        memcpy(file + hlen + t->offset, ts[i].data, t->nbytes);
    }
    write_file(path, file, hlen + data_size);
    free(file);
    free(hdr);
    gk_model_free(m);
}

START_TEST(gguf_reads_sums_over_counts) {
    /* an expert tensor: 4 values per row, 3 experts, expert 1 never reached */
    static const float sums[12] = { 2, 4, 6, 8, 9, 9, 9, 9, 1, 2, 3, 4 };
    static const float counts[3] = { 2, 0, 4 };
    static const float dsums[4] = { 3, 6, 9, 12 };
    static const float dcounts[1] = { 3 };
    gguf_tensor_spec ts[] = {
        { "blk.0.ffn_up_exps.weight.in_sum2", 2, { 4, 3, 1, 1 }, sums },
        { "blk.0.ffn_up_exps.weight.counts", 2, { 1, 3, 1, 1 }, counts },
        { "blk.0.attn_q.weight.counts", 2, { 1, 1, 1, 1 }, dcounts },
        { "blk.0.attn_q.weight.in_sum2", 2, { 4, 1, 1, 1 }, dsums },
    };
    const char *p = tmp_path("m.gguf");
    write_gguf(p, ts, 4, true, "calib.txt");
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_msg(gk_imatrix_load(p, &im, &err) == GK_OK, "%s", err.message);
    ck_assert(gk_imatrix_is_gguf(im));
    ck_assert_uint_eq(gk_imatrix_count(im), 2);
    ck_assert_str_eq(gk_imatrix_dataset(im), "calib.txt");
    ck_assert_int_eq(gk_imatrix_chunks(im), 12);
    size_t n;
    const float *v = gk_imatrix_find(im, "blk.0.ffn_up_exps.weight", &n);
    ck_assert_uint_eq(n, 12);
    static const float want[12] = { 1, 2, 3, 4, 1, 1, 1, 1, 0.25f, 0.5f, 0.75f, 1 };
    for (int i = 0; i < 12; i++) ck_assert_msg(v[i] == want[i], "value %d: %g", i, (double)v[i]);
    v = gk_imatrix_find(im, "blk.0.attn_q.weight", &n);
    ck_assert(n == 4 && v[0] == 1 && v[3] == 4);
    /* entries in name order, as the reference's ordered map */
    ck_assert_str_eq(gk_imatrix_entry(im, 0, NULL, NULL), "blk.0.attn_q.weight");

    gk_kv_override o[4];
    ck_assert_uint_eq(gk_imatrix_overrides(im, "m.gguf", o), 4);
    ck_assert_str_eq(o[1].key, "quantize.imatrix.dataset");
    ck_assert_str_eq(o[1].s, "calib.txt");
    ck_assert_str_eq(o[3].key, "quantize.imatrix.chunks_count");
    ck_assert(o[3].kind == GK_OVR_U32 && o[3].i == 12);

    /* the matrix against models: 3-D expert tensor needs ne[0]*ne[2] values */
    gk_model *m = gk_model_new();
    uint64_t ne_e[3] = { 4, 16, 3 }, ne_q[2] = { 4, 8 };
    ck_assert_int_eq(gk_tensor_add(m, "blk.0.ffn_up_exps.weight", GK_TYPE_F32, 3, ne_e, &err), GK_OK);
    ck_assert_int_eq(gk_tensor_add(m, "blk.0.attn_q.weight", GK_TYPE_F32, 2, ne_q, &err), GK_OK);
    const gk_model *ms[1] = { m };
    ck_assert_msg(gk_imatrix_check_model(im, ms, 1, &err) == GK_OK, "%s", err.message);
    ck_assert_ptr_eq(gk_imatrix_for_tensor(im, gk_tensor_at(m, 0)),
                     gk_imatrix_find(im, "blk.0.ffn_up_exps.weight", NULL));
    gk_model_free(m);

    m = gk_model_new(); /* same names, other sizes: another model */
    uint64_t ne_q2[2] = { 8, 8 };
    ck_assert_int_eq(gk_tensor_add(m, "blk.0.ffn_up_exps.weight", GK_TYPE_F32, 3, ne_e, &err), GK_OK);
    ck_assert_int_eq(gk_tensor_add(m, "blk.0.attn_q.weight", GK_TYPE_F32, 2, ne_q2, &err), GK_OK);
    ms[0] = m;
    ck_assert_int_eq(gk_imatrix_check_model(im, ms, 1, &err), GK_E_ARG);
    ck_assert_ptr_nonnull(strstr(err.message, "blk.0.attn_q.weight"));
    ck_assert_ptr_null(gk_imatrix_for_tensor(im, gk_tensor_at(m, 1)));
    gk_model_free(m);

    m = gk_model_new(); /* a tensor of the matrix missing */
    ck_assert_int_eq(gk_tensor_add(m, "blk.0.attn_q.weight", GK_TYPE_F32, 2, ne_q, &err), GK_OK);
    ms[0] = m;
    ck_assert_int_eq(gk_imatrix_check_model(im, ms, 1, &err), GK_E_ARG);
    ck_assert_ptr_nonnull(strstr(err.message, "blk.0.ffn_up_exps.weight"));
    gk_model_free(m);
    gk_imatrix_free(im);
}
END_TEST

/* As today's llama-quantize: the sums split into one run per count whatever
 * their shape (here 4 sums in one row, 2 counts: runs of 2), and each count is
 * rounded to an integer first (2.4 -> 2; 0.4 -> 0, a run of weights 1). */
START_TEST(gguf_runs_per_count_rounded) {
    static const float sums[4] = { 1, 2, 3, 4 };
    static const float counts[2] = { 2.4f, 0.4f };
    gguf_tensor_spec ts[] = { { "a.weight.in_sum2", 2, { 4, 1, 1, 1 }, sums },
                              { "a.weight.counts", 2, { 1, 2, 1, 1 }, counts } };
    const char *p = tmp_path("runs.gguf");
    write_gguf(p, ts, 2, true, "d");
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_msg(gk_imatrix_load(p, &im, &err) == GK_OK, "%s", err.message);
    size_t n = 0;
    const float *v = gk_imatrix_find(im, "a.weight", &n);
    ck_assert_uint_eq(n, 4);
    static const float want[4] = { 0.5f, 1, 1, 1 };
    for (int i = 0; i < 4; i++) ck_assert_msg(v[i] == want[i], "value %d: %g", i, (double)v[i]);
    gk_imatrix_free(im);
}
END_TEST

/* An empty dataset name: the release records none from a legacy trailer of
 * length 0, but records a GGUF matrix's first dataset even when it is "". */
START_TEST(empty_dataset_names) {
    buf_t b;
    build_legacy(&b, false);
    put_i32(&b, 5);
    put_i32(&b, 0);
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_msg(load_bytes(b.b, b.n, &im, &err) == GK_OK, "%s", err.message);
    ck_assert_ptr_null(gk_imatrix_dataset(im));
    ck_assert_int_eq(gk_imatrix_chunks(im), 5);
    gk_kv_override o[4];
    ck_assert_uint_eq(gk_imatrix_overrides(im, "x", o), 3); /* file, entries, chunks */
    gk_imatrix_free(im);

    static const float sums[4] = { 1, 2, 3, 4 }, counts[1] = { 1 };
    gguf_tensor_spec ts[] = { { "a.weight.in_sum2", 2, { 4, 1, 1, 1 }, sums },
                              { "a.weight.counts", 2, { 1, 1, 1, 1 }, counts } };
    const char *p = tmp_path("empty-ds.gguf");
    write_gguf(p, ts, 2, true, "");
    ck_assert_msg(gk_imatrix_load(p, &im, &err) == GK_OK, "%s", err.message);
    ck_assert_ptr_nonnull(gk_imatrix_dataset(im));
    ck_assert_uint_eq(gk_imatrix_overrides(im, "x", o), 4);
    ck_assert_str_eq(o[1].key, "quantize.imatrix.dataset");
    ck_assert_str_eq(o[1].s, "");
    gk_imatrix_free(im);
}
END_TEST

START_TEST(gguf_inconsistent_refused) {
    static const float sums[4] = { 1, 2, 3, 4 };
    static const float counts[2] = { 1, 1 };
    gk_imatrix *im = NULL;
    gk_error err;
    const char *p = tmp_path("bad.gguf");

    gguf_tensor_spec only_sums[] = { { "a.weight.in_sum2", 2, { 4, 1, 1, 1 }, sums } };
    write_gguf(p, only_sums, 1, true, "d");
    ck_assert_int_eq(gk_imatrix_load(p, &im, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "a.weight"));

    gguf_tensor_spec only_counts[] = { { "a.weight.counts", 2, { 1, 1, 1, 1 }, counts } };
    write_gguf(p, only_counts, 1, true, "d");
    ck_assert_int_eq(gk_imatrix_load(p, &im, &err), GK_E_CORRUPT);

    /* counts that do not divide the sums (4 sums, 3 counts) */
    static const float counts3[3] = { 1, 1, 1 };
    gguf_tensor_spec mismatch[] = { { "a.weight.in_sum2", 2, { 4, 1, 1, 1 }, sums },
                                    { "a.weight.counts", 2, { 1, 3, 1, 1 }, counts3 } };
    write_gguf(p, mismatch, 2, true, "d");
    ck_assert_int_eq(gk_imatrix_load(p, &im, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "counts"));

    /* a count that is no number */
    static const float nan_counts[2] = { 1, NAN };
    gguf_tensor_spec nan_count[] = { { "a.weight.in_sum2", 2, { 4, 1, 1, 1 }, sums },
                                     { "a.weight.counts", 2, { 1, 2, 1, 1 }, nan_counts } };
    write_gguf(p, nan_count, 2, true, "d");
    ck_assert_int_eq(gk_imatrix_load(p, &im, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "not finite"));

    gguf_tensor_spec ok[] = { { "a.weight.in_sum2", 2, { 4, 1, 1, 1 }, sums },
                              { "a.weight.counts", 2, { 1, 1, 1, 1 }, counts } };
    write_gguf(p, ok, 2, false, NULL); /* no imatrix.* keys */
    ck_assert_int_eq(gk_imatrix_load(p, &im, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "imatrix.chunk_count"));

    write_gguf(p, ok, 2, true, NULL); /* empty dataset list: valid, no dataset */
    ck_assert_int_eq(gk_imatrix_load(p, &im, &err), GK_OK);
    ck_assert_ptr_null(gk_imatrix_dataset(im));
    gk_imatrix_free(im);

    /* a truncated GGUF matrix: the reader's error, with its offset */
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    write_file(p, buf, n - 5);
    ck_assert_int_ne(gk_imatrix_load(p, &im, &err), GK_OK);
    ck_assert_ptr_null(im);
}
END_TEST

START_TEST(overrides_cut_long_strings) {
    buf_t b;
    build_legacy(&b, true);
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_int_eq(load_bytes(b.b, b.n, &im, &err), GK_OK);
    char path[300];
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    gk_kv_override o[4];
    ck_assert_uint_eq(gk_imatrix_overrides(im, path, o), 4);
    ck_assert_uint_eq(strlen(o[0].s), 127);
    ck_assert(o[0].kind == GK_OVR_STR && o[2].kind == GK_OVR_U32);
    ck_assert_str_eq(o[2].key, "quantize.imatrix.entries_count");
    /* the counts land as UINT32 (today's release), also over a key of another type */
    gk_model *m = gk_model_new();
    gk_value old = { .type = GK_V_I32, .i = -7 };
    ck_assert_int_eq(gk_kv_set_last(m, "quantize.imatrix.chunks_count", &old, &err), GK_OK);
    for (int k = 2; k < 4; k++) ck_assert_int_eq(gk_kv_override_apply(m, &o[k], &err), GK_OK);
    const gk_value *ec = gk_kv_get(m, "quantize.imatrix.entries_count");
    const gk_value *cc = gk_kv_get(m, "quantize.imatrix.chunks_count");
    ck_assert(ec != NULL && ec->type == GK_V_U32 && ec->u == 2);
    ck_assert(cc != NULL && cc->type == GK_V_U32 && cc->u == (uint64_t)gk_imatrix_chunks(im));
    gk_model_free(m);
    gk_imatrix_free(im);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* The five quantizers: sanity without golden data                           */

typedef struct {
    const char *name;
    uint32_t id;
    void (*quantize)(const float *, void *, int64_t, int64_t, const float *);
    void (*dequantize)(const void *, float *, int64_t);
    double max_rel_rms;
} lowbit_kind;

static const lowbit_kind lowbit[] = {
    { "IQ2_XXS", GK_TYPE_IQ2_XXS, gk_quantize_iq2_xxs, gk_dequantize_iq2_xxs, 0.45 },
    { "IQ2_XS", GK_TYPE_IQ2_XS, gk_quantize_iq2_xs, gk_dequantize_iq2_xs, 0.40 },
    { "IQ2_S", GK_TYPE_IQ2_S, gk_quantize_iq2_s, gk_dequantize_iq2_s, 0.40 },
    { "IQ1_S", GK_TYPE_IQ1_S, gk_quantize_iq1_s, gk_dequantize_iq1_s, 0.60 },
    { "IQ1_M", GK_TYPE_IQ1_M, gk_quantize_iq1_m, gk_dequantize_iq1_m, 0.60 },
};
#define NLOWBIT ((int)(sizeof lowbit / sizeof lowbit[0]))

/* Deterministic pseudo-normal data. */
static void fill_data(float *x, int n, uint32_t seed) {
    for (int i = 0; i < n; i++) {
        float s = 0;
        for (int k = 0; k < 4; k++) {
            seed = seed * 1664525u + 1013904223u;
            s += (float)(seed >> 8) / 16777216.f - 0.5f;
        }
        x[i] = s;
    }
}

#define ROWS 4
#define NPR 512

START_TEST(lowbit_roundtrip_bounded) {
    const lowbit_kind *k = &lowbit[_i];
    const gk_type_info *ti = gk_type_get(k->id);
    ck_assert_ptr_nonnull(ti);
    /* the scalar table holds the scalar kernel; gk_type_get serves the active level's */
    static gk_type_info scalar[GK_TYPE_COUNT];
    gk_type_table_for(GK_ISA_SCALAR, scalar);
    ck_assert_msg(scalar[k->id].quantize == k->quantize, "%s: table lacks the quantizer", k->name);
    ck_assert_ptr_nonnull(ti->quantize);
    ck_assert(ti->needs_imatrix);
    float *x = malloc(ROWS * NPR * sizeof *x), *y = malloc(ROWS * NPR * sizeof *y);
    float w[NPR];
    for (int i = 0; i < NPR; i++) w[i] = 0.5f + (float)(i % 7);
    fill_data(x, ROWS * NPR, 42);
    size_t bytes = ROWS * (NPR / 256) * ti->block_bytes;
    uint8_t *q1 = malloc(bytes), *q2 = malloc(bytes);
    k->quantize(x, q1, ROWS, NPR, w);
    k->quantize(x, q2, ROWS, NPR, w);
    ck_assert_msg(memcmp(q1, q2, bytes) == 0, "%s not deterministic", k->name);
    k->dequantize(q1, y, ROWS * NPR);
    double se = 0, sx = 0;
    for (int i = 0; i < ROWS * NPR; i++) {
        se += (double)(x[i] - y[i]) * (x[i] - y[i]);
        sx += (double)x[i] * x[i];
    }
    double rel = sqrt(se / sx);
    ck_assert_msg(rel < k->max_rel_rms, "%s: relative RMS error %.3f", k->name, rel);
    /* all-zero rows quantize to zeros */
    memset(x, 0, ROWS * NPR * sizeof *x);
    k->quantize(x, q1, ROWS, NPR, w);
    k->dequantize(q1, y, ROWS * NPR);
    for (int i = 0; i < ROWS * NPR; i++) ck_assert_msg(fabsf(y[i]) < 1e-6f, "%s zero row", k->name);
    free(x);
    free(y);
    free(q1);
    free(q2);
}
END_TEST

typedef struct {
    const lowbit_kind *k;
    const float *x, *w;
    uint8_t *out;
} thread_job;

static void *run_job(void *arg) {
    thread_job *j = arg;
    j->k->quantize(j->x, j->out, ROWS, NPR, j->w);
    return NULL;
}

/* First use of the search tables from several threads at once. Runs in its own
 * process (CK_FORK) so the tables are not built yet. */
START_TEST(lowbit_concurrent_first_use) {
    float *x = malloc(ROWS * NPR * sizeof *x);
    float w[NPR];
    for (int i = 0; i < NPR; i++) w[i] = 1.f + (float)(i % 3);
    fill_data(x, ROWS * NPR, 7);
    enum { NT = 2 * 5 };
    thread_job jobs[NT];
    pthread_t tid[NT];
    for (int t = 0; t < NT; t++) {
        const lowbit_kind *k = &lowbit[t % NLOWBIT];
        size_t bytes = ROWS * (NPR / 256) * gk_type_get(k->id)->block_bytes;
        jobs[t] = (thread_job){ k, x, w, calloc(1, bytes) };
        ck_assert_int_eq(pthread_create(&tid[t], NULL, run_job, &jobs[t]), 0);
    }
    for (int t = 0; t < NT; t++) pthread_join(tid[t], NULL);
    for (int t = 0; t < NLOWBIT; t++) {
        size_t bytes = ROWS * (NPR / 256) * gk_type_get(lowbit[t].id)->block_bytes;
        ck_assert_msg(memcmp(jobs[t].out, jobs[t + NLOWBIT].out, bytes) == 0, "%s differs between threads",
                      lowbit[t].name);
    }
    for (int t = 0; t < NT; t++) free(jobs[t].out);
    free(x);
}
END_TEST

/* The types that demand weights write zero blocks rather than crash without them. */
START_TEST(lowbit_without_weights) {
    float x[NPR];
    fill_data(x, NPR, 3);
    uint8_t out[2 * 82];
    float y[NPR];
    gk_quantize_iq2_xxs(x, out, 1, NPR, NULL);
    gk_dequantize_iq2_xxs(out, y, NPR);
    for (int i = 0; i < NPR; i++) ck_assert(y[i] == 0.f);
    /* IQ2_S and IQ1_M accept no weights, as ggml's do */
    gk_quantize_iq2_s(x, out, 1, NPR, NULL);
    gk_dequantize_iq2_s(out, y, NPR);
    double se = 0, sx = 0;
    for (int i = 0; i < NPR; i++) {
        se += (double)(x[i] - y[i]) * (x[i] - y[i]);
        sx += (double)x[i] * x[i];
    }
    ck_assert(sqrt(se / sx) < 0.4);
    gk_quantize_iq1_m(x, out, 1, NPR, NULL);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* Golden parity                                                             */

/* The golden folder when it holds the matrix and its model, else NULL. */
static const char *golden_imatrix(void) {
    if (golden_dir("imatrix/syn1.imatrix") == NULL) return NULL;
    return golden_dir("syn1/syn1-f32.gguf");
}

static void skipped(const char *what) {
    const char *g = getenv("GGUFKIT_GOLDEN");
    printf("SKIPPED: golden parity (no golden data at %s): %s\n", g && g[0] ? g : "(GGUFKIT_GOLDEN unset)",
           what);
}

static cJSON *load_json(const char *path) {
    char *text = read_text_file(path);
    if (text == NULL) return NULL;
    cJSON *json = cJSON_Parse(text);
    free(text);
    return json;
}

START_TEST(golden_matrix_loads) {
    const char *g = golden_imatrix();
    if (g == NULL) {
        skipped("syn1.imatrix reading");
        return;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/imatrix/syn1.imatrix", g);
    gk_imatrix *im = NULL;
    gk_error err;
    ck_assert_msg(gk_imatrix_load(path, &im, &err) == GK_OK, "%s", err.message);
    ck_assert_uint_eq(gk_imatrix_count(im), 15);
    ck_assert_str_eq(gk_imatrix_dataset(im), "text.txt");
    ck_assert_int_eq(gk_imatrix_chunks(im), 8);
    snprintf(path, sizeof path, "%s/syn1/syn1-f32.gguf", g);
    gk_file *f = NULL;
    ck_assert_int_eq(gk_open(path, 0, &f, &err), GK_OK);
    const gk_model *ms[1] = { gk_file_model(f) };
    ck_assert_msg(gk_imatrix_check_model(im, ms, 1, &err) == GK_OK, "%s", err.message);
    gk_close(f);

    /* a model without those tensors (another model) is refused */
    gk_model *other = gk_model_new();
    uint64_t ne[2] = { 4096, 4096 };
    ck_assert_int_eq(gk_tensor_add(other, "blk.0.attn_q.weight", GK_TYPE_F32, 2, ne, &err), GK_OK);
    ms[0] = other;
    ck_assert_int_eq(gk_imatrix_check_model(im, ms, 1, &err), GK_E_ARG);
    gk_model_free(other);
    gk_imatrix_free(im);
}
END_TEST

static bool is_lowbit(const char *type) {
    for (int k = 0; k < NLOWBIT; k++)
        if (strcmp(lowbit[k].name, type) == 0) return true;
    return false;
}

START_TEST(golden_kernel_parity) {
    const char *g = golden_imatrix();
    if (g == NULL) {
        skipped("IQ2_XXS/IQ2_XS/IQ2_S/IQ1_S/IQ1_M kernel parity");
        return;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/imatrix/MANIFEST.json", g);
    cJSON *man = load_json(path);
    ck_assert_ptr_nonnull(man);
    /* syn1-imat-* were made with the legacy matrix, syn1-gimat-* with the GGUF one */
    snprintf(path, sizeof path, "%s/imatrix/syn1.imatrix", g);
    gk_imatrix *im = NULL, *gim = NULL;
    gk_error err;
    ck_assert_int_eq(gk_imatrix_load(path, &im, &err), GK_OK);
    snprintf(path, sizeof path, "%s/imatrix/syn1.imatrix.gguf", g);
    ck_assert_msg(gk_imatrix_load(path, &gim, &err) == GK_OK, "%s", err.message);
    snprintf(path, sizeof path, "%s/syn1/syn1-f32.gguf", g);
    gk_file *src = NULL;
    ck_assert_int_eq(gk_open(path, 0, &src, &err), GK_OK);
    const gk_model *sm = gk_file_model(src);

    int matched = 0, mismatched = 0, checked_pairs = 0;
    char seen[256][96];
    int n_seen = 0;
    const cJSON *file;
    int n_gguf = 0;
    cJSON_ArrayForEach(file, man) {
        const bool from_gguf = strncmp(file->string, "syn1-gimat-", 11) == 0;
        const gk_imatrix *fim = from_gguf ? gim : im;
        const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(file, "tensors");
        const cJSON *t;
        cJSON_ArrayForEach(t, tensors) {
            const char *type = cJSON_GetObjectItemCaseSensitive(t, "type")->valuestring;
            if (!is_lowbit(type)) continue;
            n_gguf += from_gguf;
            const char *want = cJSON_GetObjectItemCaseSensitive(t, "sha256")->valuestring;
            char key[96];
            snprintf(key, sizeof key, "%c/%s/%s/%.16s", from_gguf ? 'g' : 'l', t->string, type, want);
            bool dup = false;
            for (int s = 0; s < n_seen && !dup; s++) dup = strcmp(seen[s], key) == 0;
            checked_pairs++;
            if (dup) {
                matched++; /* same tensor, type and bytes as one already compared */
                continue;
            }
            if (n_seen < 256) snprintf(seen[n_seen++], sizeof seen[0], "%s", key);
            int64_t ti = gk_tensor_find(sm, t->string);
            ck_assert_msg(ti >= 0, "%s missing from syn1-f32.gguf", t->string);
            const gk_tensor *st = gk_tensor_at(sm, (size_t)ti);
            ck_assert_uint_eq(st->type, GK_TYPE_F32);
            const gk_type_info *to = gk_type_lookup(type);
            uint64_t n = st->nbytes / 4, rows = n / st->ne[0];
            float *x = malloc(st->nbytes);
            ck_assert_int_eq(gk_file_tensor_read(src, (size_t)ti, 0, x, st->nbytes, &err), GK_OK);
            size_t out_bytes = rows * gk_type_row_bytes(to->id, st->ne[0]);
            uint8_t *q = malloc(out_bytes);
            to->quantize(x, q, (int64_t)rows, (int64_t)st->ne[0], gk_imatrix_for_tensor(fim, st));
            gk_sha256 h;
            uint8_t d[32];
            char hex[65];
            gk_sha256_init(&h);
            gk_sha256_update(&h, q, out_bytes);
            gk_sha256_final(&h, d);
            gk_sha256_hex(d, hex);
            if (strcmp(hex, want) == 0) {
                matched++;
            } else {
                mismatched++;
                fprintf(stderr, "  MISMATCH %s %s %s\n", file->string, t->string, type);
            }
            free(x);
            free(q);
        }
    }
    printf("imatrix kernel parity: %d of %d low-bit tensors match (%d computed)\n", matched, checked_pairs,
           n_seen);
    ck_assert_int_eq(mismatched, 0);
    ck_assert_int_gt(matched, 0);
    ck_assert_int_gt(n_gguf, 0); /* the GGUF matrix's files were among them */
    gk_close(src);
    gk_imatrix_free(im);
    gk_imatrix_free(gim);
    cJSON_Delete(man);
}
END_TEST

static Suite *imatrix_suite(void) {
    Suite *s = suite_create("imatrix");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, legacy_reads_and_divides);
    tcase_add_test(tc, legacy_without_trailer);
    tcase_add_test(tc, legacy_truncated_refused);
    tcase_add_test(tc, legacy_inconsistent_refused);
    tcase_add_test(tc, filter_include_exclude);
    tcase_add_test(tc, gguf_reads_sums_over_counts);
    tcase_add_test(tc, gguf_runs_per_count_rounded);
    tcase_add_test(tc, empty_dataset_names);
    tcase_add_test(tc, gguf_inconsistent_refused);
    tcase_add_test(tc, overrides_cut_long_strings);
    suite_add_tcase(s, tc);
    TCase *tk = tcase_create("kernels");
    tcase_add_test(tk, lowbit_concurrent_first_use);
    tcase_add_loop_test(tk, lowbit_roundtrip_bounded, 0, NLOWBIT);
    tcase_add_test(tk, lowbit_without_weights);
    suite_add_tcase(s, tk);
    TCase *tg = tcase_create("golden");
    tcase_add_test(tg, golden_matrix_loads);
    tcase_add_test(tg, golden_kernel_parity);
    suite_add_tcase(s, tg);
    return s;
}

int main(void) {
    /* made before forking, so the parent can remove it */
    if (!try_make_tmpdir("check_imatrix")) {
        perror("mkdtemp");
        exit(1);
    }
    SRunner *sr = srunner_create(imatrix_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    char was[sizeof tmpdir];
    memcpy(was, tmpdir, sizeof was);
    if (try_remove_tmpdir() != 0) fprintf(stderr, "could not remove %s\n", was);
    return failed ? 1 : 0;
}
