/*
 * check_pipeline.c - gk_write_model: canonical layout, copies, conversions with
 * and without importance weights (one set per expert for 3-D tensors), thread
 * invariance, and nothing left behind on failure; the rules every writer shares
 * (the last tensor padded whatever pad_end says, no header the reader refuses,
 * layout-key overrides refused); the header padding that keeps a data section's
 * position modulo the filesystem block (gk_model_pad_to_residue) and the byte
 * counts of gk_write_stats; the helper pool that converts a chunk's pieces
 * (every piece of every batch done once, whoever takes it); the reader that
 * reads chunks ahead (in order, its errors passed on where they happened, a
 * stream ended early and the next one begun).
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "format/file.h"
#include "pipeline/readahead.h"
#include "pipeline/workers.h"
#include "quant/overrides.h"

#define NE0 256
#define NE1 4
#define NE2 3

static size_t count_entries(void) {
    DIR *d = opendir(tmpdir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    if (d) closedir(d);
    return n;
}

static float value_at(size_t i) {
    uint32_t x = (uint32_t)i * 2654435761u;
    return ((float)(x >> 8) / 16777216.0f - 0.5f) * ((i % 7) + 1);
}

/* A model with one 3-D F32 tensor and one 1-D tensor, serialized with its data. */
static uint8_t *make_source(size_t *len) {
    gk_model *m = gk_model_new();
    gk_error err;
    uint64_t ne3[3] = { NE0, NE1, NE2 }, ne1[1] = { NE0 };
    ck_assert_int_eq(gk_kv_set_str(m, "general.name", "pipeline-test", &err), GK_OK);
    ck_assert_int_eq(gk_tensor_add(m, "blk.0.ffn_up_exps.weight", GK_TYPE_F32, 3, ne3, &err), GK_OK);
    ck_assert_int_eq(gk_tensor_add(m, "blk.0.attn_norm.weight", GK_TYPE_F32, 1, ne1, &err), GK_OK);
    uint64_t data = gk_model_layout(m);
    uint8_t *hdr;
    size_t hlen;
    ck_assert_int_eq(gk_header_serialize(m, &hdr, &hlen, &err), GK_OK);
    uint8_t *buf = calloc(1, hlen + data + 32);
    memcpy(buf, hdr, hlen);
    for (size_t t = 0; t < gk_tensor_count(m); t++) {
        const gk_tensor *ti = gk_tensor_at(m, t);
        float *f = (float *)(buf + hlen + ti->offset);
        for (size_t i = 0; i < ti->nbytes / 4; i++) f[i] = value_at(i + t * 1000);
    }
    *len = hlen + data;
    free(hdr);
    gk_model_free(m);
    return buf;
}

/* Quantizes the source's tensors (the first to `type`) into dest. */
static gk_status write_quantized(gk_file *src, const char *dest, uint32_t type, const float *imat,
                                 int threads, gk_error *err) {
    gk_model *out = gk_model_clone(gk_file_model(src));
    ck_assert_int_eq(gk_tensor_set_type(out, 0, type, err), GK_OK);
    gk_step steps[2] = { { src, 0, imat }, { src, 1, NULL } };
    gk_write_opts o = { GK_OPTS_INIT(gk_write_opts), .threads = threads, .pad_end = true };
    gk_status st = gk_write_model(dest, out, steps, &o, err);
    gk_model_free(out);
    return st;
}

/* Writes the source's model, unchanged, into dest with o. */
static gk_status write_copy(gk_file *src, const char *dest, const gk_write_opts *o, gk_error *err) {
    gk_model *out = gk_model_clone(gk_file_model(src));
    gk_step steps[2] = { { src, 0, NULL }, { src, 1, NULL } };
    gk_status st = gk_write_model(dest, out, steps, o, err);
    gk_model_free(out);
    return st;
}

START_TEST(test_copy_is_identical) {
    size_t len;
    uint8_t *bytes = make_source(&len);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(bytes, len, 0, &f, &err), GK_OK);
    make_tmpdir("check_pipeline");
    char dest[300];
    snprintf(dest, sizeof dest, "%s/copy.gguf", tmpdir);
    gk_write_opts o = { GK_OPTS_INIT(gk_write_opts), .pad_end = false };
    ck_assert_int_eq(write_copy(f, dest, &o, &err), GK_OK);
    size_t olen;
    uint8_t *got = read_whole_file(dest, &olen);
    ck_assert_uint_eq(olen, len);
    ck_assert_int_eq(memcmp(got, bytes, len), 0);
    free(got);
    gk_close(f);
    remove_tmpdir();
    free(bytes);
}
END_TEST

START_TEST(test_expert_weights_per_slice) {
    size_t len;
    uint8_t *bytes = make_source(&len);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(bytes, len, 0, &f, &err), GK_OK);
    const gk_type_info *q = gk_type_get(GK_TYPE_Q4_K);
    float imat[NE0 * NE2];
    for (int e = 0; e < NE2; e++)
        for (int i = 0; i < NE0; i++) imat[e * NE0 + i] = (e == 1) ? (i % 3 == 0 ? 50.0f : 0.01f) : 1.0f + (float)(i % 5 * e);
    make_tmpdir("check_pipeline");
    char dest[300];
    snprintf(dest, sizeof dest, "%s/q.gguf", tmpdir);
    ck_assert_int_eq(write_quantized(f, dest, GK_TYPE_Q4_K, imat, 2, &err), GK_OK);
    gk_file *g;
    ck_assert_int_eq(gk_open(dest, 0, &g, &err), GK_OK);
    const gk_tensor *t = gk_tensor_at(gk_file_model(g), 0);
    uint64_t row_bytes = gk_type_row_bytes(GK_TYPE_Q4_K, NE0);
    uint8_t *got = malloc(t->nbytes), *want = malloc(row_bytes * NE1);
    ck_assert_int_eq(gk_file_tensor_read(g, 0, 0, got, t->nbytes, &err), GK_OK);
    const float *src = (const float *)(bytes + gk_file_data_offset(f) + gk_tensor_at(gk_file_model(f), 0)->offset);
    for (int e = 0; e < NE2; e++) {
        q->quantize(src + (size_t)e * NE1 * NE0, want, NE1, NE0, imat + e * NE0);
        ck_assert_msg(memcmp(got + e * NE1 * row_bytes, want, NE1 * row_bytes) == 0,
                      "expert %d was not quantized with its own weights", e);
    }
    /* And the weights matter: expert 1 with expert 0's weights differs. */
    q->quantize(src + (size_t)1 * NE1 * NE0, want, NE1, NE0, imat);
    ck_assert(memcmp(got + 1 * NE1 * row_bytes, want, NE1 * row_bytes) != 0);
    free(got);
    free(want);
    gk_close(g);
    gk_close(f);
    remove_tmpdir();
    free(bytes);
}
END_TEST

START_TEST(test_threads_do_not_change_bytes) {
    size_t len;
    uint8_t *bytes = make_source(&len);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(bytes, len, 0, &f, &err), GK_OK);
    make_tmpdir("check_pipeline");
    uint8_t *first = NULL;
    size_t first_len = 0;
    const int counts[] = { 1, 2, 3, 7 };
    for (size_t k = 0; k < 4; k++) {
        char dest[300];
        snprintf(dest, sizeof dest, "%s/t%d.gguf", tmpdir, counts[k]);
        ck_assert_int_eq(write_quantized(f, dest, GK_TYPE_Q6_K, NULL, counts[k], &err), GK_OK);
        size_t n;
        uint8_t *b = read_whole_file(dest, &n);
        if (first == NULL) {
            first = b;
            first_len = n;
        } else {
            ck_assert_uint_eq(n, first_len);
            ck_assert_int_eq(memcmp(b, first, n), 0);
            free(b);
        }
    }
    free(first);
    gk_close(f);
    remove_tmpdir();
    free(bytes);
}
END_TEST

START_TEST(test_failure_leaves_nothing) {
    size_t len;
    uint8_t *bytes = make_source(&len);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(bytes, len, 0, &f, &err), GK_OK);
    make_tmpdir("check_pipeline");
    char dest[300];
    snprintf(dest, sizeof dest, "%s/bad.gguf", tmpdir);
    /* A row of 256 cannot be IQ4_NL? It can; use a type with no quantizer instead. */
    gk_model *out = gk_model_clone(gk_file_model(f));
    ck_assert_int_eq(gk_tensor_set_type(out, 0, GK_TYPE_Q8_K, &err), GK_OK);
    gk_step steps[2] = { { f, 0, NULL }, { f, 5, NULL } };   /* second step names no tensor */
    gk_status st = gk_write_model(dest, out, steps, NULL, &err);
    ck_assert_int_ne(st, GK_OK);
    ck_assert_uint_eq(count_entries(), 0);
    /* An existing destination is refused and kept. */
    FILE *fp = fopen(dest, "w");
    fputs("keep", fp);
    fclose(fp);
    steps[1].src_tensor = 1;
    ck_assert_int_eq(gk_write_model(dest, out, steps, NULL, &err), GK_E_EXISTS);
    size_t n;
    uint8_t *b = read_whole_file(dest, &n);
    ck_assert_uint_eq(n, 4);
    free(b);
    ck_assert_uint_eq(count_entries(), 1);
    gk_model_free(out);
    gk_close(f);
    remove_tmpdir();
    free(bytes);
}
END_TEST

/* A model with one F32 tensor of 3 elements (12 bytes) and the given metadata. */
static gk_model *small_model(const char *key, const gk_value *v) {
    gk_model *m = gk_model_new();
    uint64_t ne = 3;
    ck_assert_int_eq(gk_tensor_add(m, "w", GK_TYPE_F32, 1, &ne, NULL), GK_OK);
    if (key) ck_assert_int_eq(gk_kv_set(m, key, v, NULL), GK_OK);
    return m;
}

/* The source of every step: a file holding small_model's 12 bytes. */
static gk_file *small_source(uint8_t **bytes) {
    gk_model *m = small_model(NULL, NULL);
    uint64_t data = gk_model_layout(m);
    uint8_t *hdr;
    size_t hlen;
    ck_assert_int_eq(gk_header_serialize(m, &hdr, &hlen, NULL), GK_OK);
    *bytes = calloc(1, hlen + data);
    memcpy(*bytes, hdr, hlen);
    free(hdr);
    gk_file *f;
    ck_assert_int_eq(gk_open_memory(*bytes, hlen + data, 0, &f, NULL), GK_OK);
    gk_model_free(m);
    return f;
}

START_TEST(test_last_tensor_always_padded) {
    uint8_t *bytes;
    gk_file *f = small_source(&bytes);
    make_tmpdir("check_pipeline");
    char dest[300];
    const uint32_t aligns[] = { 32, 64, 4096, 65536 };
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        gk_value a = { .type = GK_V_U32, .u = aligns[i] };
        gk_model *out = small_model("general.alignment", &a);
        gk_step steps[1] = { { f, 0, NULL } };
        gk_write_opts o = { GK_OPTS_INIT(gk_write_opts), .pad_end = false };   /* only a tensorless file may end unpadded */
        snprintf(dest, sizeof dest, "%s/a%u.gguf", tmpdir, aligns[i]);
        ck_assert_int_eq(gk_write_model(dest, out, steps, &o, NULL), GK_OK);
        struct stat sb;
        ck_assert_int_eq(stat(dest, &sb), 0);
        ck_assert_uint_eq((uint64_t)sb.st_size, gk_model_data_start(out) + aligns[i]);
        gk_model_free(out);
    }
    gk_close(f);
    remove_tmpdir();
    free(bytes);
}
END_TEST

START_TEST(test_no_header_the_reader_refuses) {
    uint8_t *bytes;
    gk_file *f = small_source(&bytes);
    make_tmpdir("check_pipeline");
    char dest[300];
    snprintf(dest, sizeof dest, "%s/bad.gguf", tmpdir);
    const gk_value bad[] = { { .type = GK_V_I32, .i = 64 }, { .type = GK_V_U32, .u = 0 },
                             { .type = GK_V_U32, .u = 12 }, { .type = GK_V_STR, .s = { "x", 1 } } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gk_model *out = small_model("general.alignment", &bad[i]);
        gk_step steps[1] = { { f, 0, NULL } };
        gk_error err;
        uint8_t *hdr = NULL;
        size_t hlen;
        ck_assert_int_ne(gk_header_serialize(out, &hdr, &hlen, &err), GK_OK);
        ck_assert_ptr_null(hdr);
        ck_assert_ptr_nonnull(strstr(err.message, "general.alignment"));
        ck_assert_int_ne(gk_write_model(dest, out, steps, NULL, &err), GK_OK);
        ck_assert_uint_eq(count_entries(), 0);
        gk_model_free(out);
    }
    gk_close(f);
    remove_tmpdir();
    free(bytes);
}
END_TEST

START_TEST(test_layout_overrides_refused) {
    const char *bad[] = { "general.alignment=int:48", "general.alignment=str:x", "split.count=int:2",
                          "split.no=float:1", "split.tensors.count=bool:true" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gk_model *m = small_model(NULL, NULL);
        gk_kv_override o;
        gk_error err;
        ck_assert_int_eq(gk_kv_override_parse(bad[i], &o, &err), GK_OK);
        ck_assert_int_ne(gk_kv_override_apply(m, &o, &err), GK_OK);
        ck_assert_int_lt(gk_kv_find(m, o.key), 0);
        gk_model_free(m);
    }
    /* An existing u32 general.alignment keeps its type: a power of two is taken, 48 is not. */
    gk_value a = { .type = GK_V_U32, .u = 32 };
    gk_model *m = small_model("general.alignment", &a);
    gk_kv_override o;
    ck_assert_int_eq(gk_kv_override_parse("general.alignment=int:64", &o, NULL), GK_OK);
    ck_assert_int_eq(gk_kv_override_apply(m, &o, NULL), GK_OK);
    ck_assert_uint_eq(gk_model_alignment(m), 64);
    ck_assert_int_eq(gk_kv_override_parse("general.alignment=int:48", &o, NULL), GK_OK);
    ck_assert_int_ne(gk_kv_override_apply(m, &o, NULL), GK_OK);
    gk_model_free(m);
}
END_TEST

START_TEST(test_pad_to_residue) {
    size_t len;
    uint8_t *bytes = make_source(&len);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(bytes, len, 0, &f, &err), GK_OK);
    const uint64_t residues[] = { 0, 32, 64, 2048, 4064 };
    for (size_t k = 0; k < sizeof residues / sizeof residues[0]; k++) {
        for (int reserve = 0; reserve < 2; reserve++) {
            gk_model *m = gk_model_clone(gk_file_model(f));
            if (reserve) ck_assert_int_eq(gk_model_set_padding(m, 1000, &err), GK_OK);
            gk_model_layout(m);
            bool done = false;
            ck_assert_int_eq(gk_model_pad_to_residue(m, 4096, residues[k], &done, &err), GK_OK);
            ck_assert(done);
            ck_assert_uint_eq(gk_model_data_start(m) % 4096, residues[k]);
            const gk_value *pad = gk_kv_get(m, GK_PADDING_KEY);
            if (reserve) ck_assert_uint_ge(pad->arr.n, 1000);   /* grown, never shrunk */
            if (pad) ck_assert_int_eq(pad->arr.elem, GK_V_U8);
            uint8_t *hdr;
            size_t hlen;
            ck_assert_int_eq(gk_header_serialize(m, &hdr, &hlen, &err), GK_OK);
            ck_assert_uint_eq(hlen % 4096, residues[k]);
            free(hdr);
            gk_model_free(m);
        }
    }
    /* A residue the alignment cannot reach changes nothing. */
    gk_model *m = gk_model_clone(gk_file_model(f));
    uint64_t before = gk_model_header_size(m);
    bool done = true;
    ck_assert_int_eq(gk_model_pad_to_residue(m, 4096, 17, &done, &err), GK_OK);
    ck_assert(!done);
    ck_assert_uint_eq(gk_model_header_size(m), before);
    ck_assert_ptr_null(gk_kv_get(m, GK_PADDING_KEY));
    gk_model_free(m);
    gk_close(f);
    free(bytes);
}
END_TEST

/* Where nothing clones (a file in memory; /tmp), every byte counts as copied and
 * the output is the one GK_CLONE_NEVER writes. */
START_TEST(test_stats_count_copied) {
    size_t len;
    uint8_t *bytes = make_source(&len);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(bytes, len, 0, &f, &err), GK_OK);
    make_tmpdir("check_pipeline");
    char a[300], b[300];
    snprintf(a, sizeof a, "%s/pad.gguf", tmpdir);
    snprintf(b, sizeof b, "%s/never.gguf", tmpdir);
    gk_write_stats st = { 7, 5 };
    gk_write_opts o = { GK_OPTS_INIT(gk_write_opts), .pad_end = true, .clone = GK_CLONE_PAD, .stats = &st };
    ck_assert_int_eq(write_copy(f, a, &o, &err), GK_OK);
    size_t alen, blen;
    uint8_t *got = read_whole_file(a, &alen);
    ck_assert_uint_eq(st.cloned, 7);            /* added to what it held */
    ck_assert_uint_eq(st.copied, 5 + alen);
    o.clone = GK_CLONE_NEVER;
    o.stats = NULL;
    ck_assert_int_eq(write_copy(f, b, &o, &err), GK_OK);
    uint8_t *never = read_whole_file(b, &blen);
    ck_assert_uint_eq(alen, blen);
    ck_assert_int_eq(memcmp(got, never, alen), 0);
    free(got);
    free(never);
    gk_close(f);
    remove_tmpdir();
    free(bytes);
}
END_TEST

/* A batch of the pool test: how often each piece was done. */
typedef struct piece_counts {
    int64_t n;
    int done[64];
} piece_counts;

static void count_piece(void *ctx, int64_t piece) {
    piece_counts *c = ctx;
    ck_assert_int_ge(piece, 0);
    ck_assert_int_lt(piece, c->n);
    __atomic_fetch_add(&c->done[piece], 1, __ATOMIC_RELAXED);
}

START_TEST(test_workers_do_every_piece_once) {
    const int helpers[] = { 0, 1, 3 };
    for (size_t h = 0; h < 3; h++) {
        gk_workers *w;
        gk_error err;
        ck_assert_int_eq(gk_workers_start(helpers[h], &w, &err), GK_OK);
        for (int batch = 0; batch < 500; batch++) {
            piece_counts c = { .n = batch % 65 };   /* 0 to 64 pieces */
            gk_workers_post(w, count_piece, &c, c.n);
            gk_workers_join(w);
            for (int64_t p = 0; p < 64; p++) ck_assert_int_eq(c.done[p], p < c.n ? 1 : 0);
        }
        gk_workers_stop(w);
    }
}
END_TEST

/* A stream of the reader test: items 0..n-1, item i is 1000 bytes of i and
 * says i in its description; item fail_at (if below n) fails instead. */
typedef struct numbered_stream {
    int64_t next, n, fail_at;
} numbered_stream;

static gk_status read_numbered(void *ctx, uint8_t *buf, void *meta, bool *done, gk_error *err) {
    numbered_stream *st = ctx;
    if (st->next == st->n) {
        *done = true;
        return GK_OK;
    }
    const int64_t i = st->next++;
    if (i == st->fail_at) return gk_error_set(err, GK_E_IO, 4096 + i, "item %lld failed", (long long)i);
    memset(buf, (int)(i & 0xff), 1000);
    memcpy(meta, &i, sizeof i);
    return GK_OK;
}

START_TEST(test_readahead_in_order) {
    gk_readahead *r;
    gk_error err;
    ck_assert_int_eq(gk_readahead_create(&r, &err), GK_OK);
    for (int round = 0; round < 200; round++) {
        const int64_t n = round % 23;
        numbered_stream st = { 0, n, round % 3 == 1 ? round % 7 : -1 };
        const int64_t stop_at = round % 5 == 2 ? n / 2 : n;   /* some streams ended early */
        ck_assert_int_eq(gk_readahead_begin(r, read_numbered, &st, 1000 + (size_t)round, &err), GK_OK);
        int64_t got = 0;
        for (;;) {
            uint8_t *buf;
            void *meta;
            gk_status s = gk_readahead_next(r, &buf, &meta, &err);
            if (got == st.fail_at && got < n) {
                ck_assert_int_eq(s, GK_E_IO);
                ck_assert_int_eq(err.offset, 4096 + got);
                break;
            }
            ck_assert_int_eq(s, GK_OK);
            if (got == n) {
                ck_assert_ptr_null(buf);
                break;
            }
            ck_assert_ptr_nonnull(buf);
            int64_t i;
            memcpy(&i, meta, sizeof i);
            ck_assert_int_eq(i, got);
            ck_assert_int_eq(buf[0], (int)(got & 0xff));
            ck_assert_int_eq(buf[999], (int)(got & 0xff));
            gk_readahead_release(r);
            if (++got == stop_at && stop_at < n) break;
        }
        gk_readahead_end(r);
    }
    gk_readahead_free(r);
}
END_TEST

int main(void) {
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("write_model");
    tcase_add_test(tc, test_copy_is_identical);
    tcase_add_test(tc, test_expert_weights_per_slice);
    tcase_add_test(tc, test_threads_do_not_change_bytes);
    tcase_add_test(tc, test_failure_leaves_nothing);
    tcase_add_test(tc, test_last_tensor_always_padded);
    tcase_add_test(tc, test_no_header_the_reader_refuses);
    tcase_add_test(tc, test_layout_overrides_refused);
    tcase_add_test(tc, test_pad_to_residue);
    tcase_add_test(tc, test_stats_count_copied);
    tcase_add_test(tc, test_workers_do_every_piece_once);
    tcase_add_test(tc, test_readahead_in_order);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
