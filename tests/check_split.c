/*
 * check_split.c - unit tests of lib/split: split plans (cut points as
 * llama-gguf-split, a tensor larger than the limit alone, the metadata-only first
 * shard), shard models (keys and their order), writing a set (all or none),
 * finding and checking a set (missing shard, duplicate tensor, wrong counts,
 * mixed byte order or alignment), merging back byte for byte, and byte order
 * conversion there and back. Inputs are generated; with GGUFKIT_GOLDEN the
 * reference shards and big-endian files are compared byte for byte too.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "pipeline/pipeline.h"

/* ---- helpers ---------------------------------------------------------------------- */

static bool exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

static bool same_bytes(const char *a, const char *b) {
    size_t la, lb;
    uint8_t *pa = read_whole_file(a, &la), *pb = read_whole_file(b, &lb);
    bool same = la == lb && memcmp(pa, pb, la) == 0;
    free(pa);
    free(pb);
    return same;
}

/* A model of n tensors "t.NN" of types F32, F16, Q8_0 in turn, rows of 64..192. */
static gk_model *make_model(size_t n, uint32_t align, bool big) {
    gk_model *m = gk_model_new();
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(gk_kv_set_str(m, "general.architecture", "test", NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_u32(m, "test.value", 7, NULL), GK_OK);
    if (align != GK_DEFAULT_ALIGNMENT) ck_assert_int_eq(gk_kv_set_u32(m, "general.alignment", align, NULL), GK_OK);
    static const uint32_t types[3] = { GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_Q8_0 };
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "t.%02zu", i);
        uint64_t ne[2] = { 64 * (1 + i % 3), 1 + i % 5 };
        ck_assert_int_eq(gk_tensor_add(m, name, types[i % 3], 2, ne, NULL), GK_OK);
    }
    gk_model_set_big_endian(m, big);
    return m;
}

/* Writes m (laid out canonically, padded at the end) with pseudo-random tensor bytes. */
static void write_model_file(gk_model *m, const char *path) {
    uint64_t data = gk_model_layout(m);
    uint8_t *header;
    size_t header_len;
    ck_assert_int_eq(gk_header_serialize(m, &header, &header_len, NULL), GK_OK);
    uint64_t align = gk_model_alignment(m);
    uint64_t total = header_len + (data + align - 1) / align * align;
    uint8_t *buf = calloc(1, (size_t)total);
    memcpy(buf, header, header_len);
    uint32_t x = 12345;
    for (size_t i = 0; i < gk_tensor_count(m); i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        for (uint64_t b = 0; b < t->nbytes; b++) {
            x = x * 1103515245u + 12345u;
            buf[header_len + t->offset + b] = (uint8_t)(x >> 16);
        }
    }
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(buf, 1, (size_t)total, f), (size_t)total);
    fclose(f);
    free(header);
    free(buf);
}

static gk_file *make_input(const char *name, size_t n, uint32_t align, bool big) {
    gk_model *m = make_model(n, align, big);
    write_model_file(m, tmp_path(name));
    gk_model_free(m);
    gk_file *f;
    gk_error err;
    ck_assert_msg(gk_open(tmp_path(name), GK_OPEN_DEFAULT, &f, &err) == GK_OK, "%s", err.message);
    return f;
}

static void split_file(gk_file *in, const char *prefix, uint64_t max_tensors) {
    gk_split_opts o = { GK_OPTS_INIT(gk_split_opts), .max_tensors = max_tensors };
    gk_split_plan plan;
    gk_error err;
    ck_assert_int_eq(gk_split_plan_build(gk_file_model(in), &o, &plan, &err), GK_OK);
    ck_assert_msg(gk_split_write(in, tmp_path(prefix), &plan, NULL, &err) == GK_OK, "%s", err.message);
    gk_split_plan_free(&plan);
}

/* ---- plans ------------------------------------------------------------------------ */

START_TEST(plan_by_tensors) {
    gk_model *m = make_model(21, 32, false);
    gk_split_opts o = { GK_OPTS_INIT(gk_split_opts), .max_tensors = 5 };
    gk_split_plan p;
    ck_assert_int_eq(gk_split_plan_build(m, &o, &p, NULL), GK_OK);
    ck_assert_uint_eq(p.n_shards, 5);
    for (size_t k = 0; k < 5; k++) {
        ck_assert_uint_eq(p.shards[k].first_tensor, k * 5);
        ck_assert_uint_eq(p.shards[k].n_tensors, k < 4 ? 5 : 1);
    }
    gk_split_plan_free(&p);
    o.no_tensor_first_split = true;
    ck_assert_int_eq(gk_split_plan_build(m, &o, &p, NULL), GK_OK);
    ck_assert_uint_eq(p.n_shards, 6);
    ck_assert_uint_eq(p.shards[0].n_tensors, 0);
    ck_assert_uint_eq(p.shards[1].n_tensors, 5);
    ck_assert_uint_eq(p.shards[5].n_tensors, 1);
    gk_split_plan_free(&p);
    o = (gk_split_opts){ GK_OPTS_INIT(gk_split_opts), .max_tensors = 100 };
    ck_assert_int_eq(gk_split_plan_build(m, &o, &p, NULL), GK_OK);
    ck_assert_uint_eq(p.n_shards, 1);
    ck_assert_uint_eq(p.shards[0].n_tensors, 21);
    gk_split_plan_free(&p);
    gk_model_free(m);
}
END_TEST

START_TEST(plan_by_size) {
    gk_model *m = gk_model_new();
    /* F32 tensors of 1000, 100, 100, 5000, 100 and 40 bytes: padded 1024, 128, 128, 5024, 128, 64 */
    static const uint64_t elems[] = { 250, 25, 25, 1250, 25, 10 };
    for (size_t i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%zu", i);
        ck_assert_int_eq(gk_tensor_add(m, name, GK_TYPE_F32, 1, &elems[i], NULL), GK_OK);
    }
    gk_split_opts o = { GK_OPTS_INIT(gk_split_opts), .max_bytes = 1200 };
    gk_split_plan p;
    ck_assert_int_eq(gk_split_plan_build(m, &o, &p, NULL), GK_OK);
    /* [w0 w1] (1152) [w2] (w2+w3 > 1200) [w3] (alone, larger than the limit) [w4 w5] */
    ck_assert_uint_eq(p.n_shards, 4);
    ck_assert_uint_eq(p.shards[0].n_tensors, 2);
    ck_assert_uint_eq(p.shards[0].tensor_bytes, 1152);
    ck_assert_uint_eq(p.shards[1].n_tensors, 1);
    ck_assert_uint_eq(p.shards[2].n_tensors, 1);
    ck_assert_uint_eq(p.shards[2].first_tensor, 3);
    ck_assert_uint_eq(p.shards[2].tensor_bytes, 5024);
    ck_assert_uint_eq(p.shards[3].n_tensors, 2);
    gk_split_plan_free(&p);
    /* a first tensor above the limit: its own shard, never an empty one */
    o.max_bytes = 500;
    o.no_tensor_first_split = true;
    ck_assert_int_eq(gk_split_plan_build(m, &o, &p, NULL), GK_OK);
    ck_assert_uint_eq(p.shards[0].n_tensors, 0);
    for (size_t k = 1; k < p.n_shards; k++) ck_assert_uint_gt(p.shards[k].n_tensors, 0);
    ck_assert_uint_eq(p.shards[1].n_tensors, 1);
    gk_split_plan_free(&p);
    gk_model_free(m);
}
END_TEST

START_TEST(plan_bad_options) {
    gk_model *m = make_model(3, 32, false);
    gk_split_plan p;
    gk_split_opts none = { GK_OPTS_INIT(gk_split_opts) }, both = { GK_OPTS_INIT(gk_split_opts), .max_tensors = 1, .max_bytes = 10 };
    ck_assert_int_eq(gk_split_plan_build(m, &none, &p, NULL), GK_E_ARG);
    ck_assert_int_eq(gk_split_plan_build(m, &both, &p, NULL), GK_E_ARG);
    gk_model_free(m);
}
END_TEST

/* ---- shard models ----------------------------------------------------------------- */

static const char *key_at(const gk_model *m, size_t i) { return gk_kv_at(m, i)->key.ptr; }

START_TEST(shard_model_keys) {
    gk_model *m = make_model(7, 32, false);
    gk_split_opts o = { GK_OPTS_INIT(gk_split_opts), .max_tensors = 3 };
    gk_split_plan p;
    ck_assert_int_eq(gk_split_plan_build(m, &o, &p, NULL), GK_OK);
    gk_model *s0, *s2;
    ck_assert_int_eq(gk_split_shard_model(m, &p, 0, &s0, NULL), GK_OK);
    ck_assert_int_eq(gk_split_shard_model(m, &p, 2, &s2, NULL), GK_OK);
    ck_assert_uint_eq(gk_kv_count(s0), 5);
    ck_assert_str_eq(key_at(s0, 0), "general.architecture");
    ck_assert_str_eq(key_at(s0, 2), "split.no");
    ck_assert_str_eq(key_at(s0, 3), "split.tensors.count");
    ck_assert_str_eq(key_at(s0, 4), "split.count");
    ck_assert_int_eq(gk_kv_get(s0, "split.no")->type, GK_V_U16);
    ck_assert_int_eq(gk_kv_get(s0, "split.count")->type, GK_V_U16);
    ck_assert_int_eq(gk_kv_get(s0, "split.tensors.count")->type, GK_V_I32);
    ck_assert_uint_eq(gk_kv_get(s2, "split.no")->u, 2);
    ck_assert_uint_eq(gk_kv_get(s2, "split.count")->u, 3);
    ck_assert_int_eq(gk_kv_get(s2, "split.tensors.count")->i, 7);
    ck_assert_uint_eq(gk_kv_count(s2), 3);
    ck_assert_uint_eq(gk_tensor_count(s2), 1);
    ck_assert_str_eq(gk_tensor_at(s2, 0)->name.ptr, "t.06");
    gk_model_free(s0);
    gk_model_free(s2);
    gk_split_plan_free(&p);
    gk_model_free(m);
    /* other alignments: every shard says so */
    m = make_model(7, 64, true);
    ck_assert_int_eq(gk_split_plan_build(m, &o, &p, NULL), GK_OK);
    ck_assert_int_eq(gk_split_shard_model(m, &p, 1, &s2, NULL), GK_OK);
    ck_assert_uint_eq(gk_kv_count(s2), 4);
    ck_assert_str_eq(key_at(s2, 0), "general.alignment");
    ck_assert_uint_eq(gk_model_alignment(s2), 64);
    ck_assert(gk_model_big_endian(s2));
    gk_model_free(s2);
    gk_split_plan_free(&p);
    gk_model_free(m);
}
END_TEST

START_TEST(split_path_format) {
    char *p = gk_split_path("dir/model", 2, 17);
    ck_assert_str_eq(p, "dir/model-00003-of-00017.gguf");
    free(p);
}
END_TEST

/* ---- writing, finding and merging ------------------------------------------------- */

static void round_trip(uint32_t align, bool big, uint64_t max_tensors, size_t from_shard) {
    make_tmpdir("check_split");
    gk_file *in = make_input("in.gguf", 13, align, big);
    split_file(in, "s", max_tensors);
    size_t n = (13 + max_tensors - 1) / max_tensors;
    char *first = gk_split_path(tmp_path("s"), from_shard, n);
    gk_split_set *set;
    gk_error err;
    ck_assert_msg(gk_split_set_open(first, GK_OPEN_DEFAULT, &set, &err) == GK_OK, "%s", err.message);
    ck_assert_uint_eq(gk_split_set_count(set), n);
    ck_assert_uint_eq(gk_split_set_tensor_count(set), 13);
    ck_assert_str_eq(gk_split_set_prefix(set), tmp_path("s"));
    for (size_t k = 0; k < n; k++) {
        gk_model *sm = gk_file_model(gk_split_set_file(set, k));
        ck_assert_uint_eq(gk_model_alignment(sm), align);
        for (size_t i = 0; i < gk_tensor_count(sm); i++) ck_assert_uint_eq(gk_tensor_at(sm, i)->offset % align, 0);
    }
    ck_assert_msg(gk_merge_write(set, tmp_path("merged.gguf"), NULL, &err) == GK_OK, "%s", err.message);
    ck_assert(same_bytes(tmp_path("merged.gguf"), tmp_path("in.gguf")));
    /* never over a shard, even when asked to replace */
    gk_write_opts force = { GK_OPTS_INIT(gk_write_opts), .sink_flags = GK_SINK_OVERWRITE };
    ck_assert_int_eq(gk_merge_write(set, first, &force, &err), GK_E_SAME_FILE);
    gk_split_set_close(set);
    free(first);
    gk_close(in);
    remove_tmpdir();
}

START_TEST(merge_round_trip_32) { round_trip(32, false, 4, 2); }
END_TEST
START_TEST(merge_round_trip_64_big) { round_trip(64, true, 5, 0); }
END_TEST
START_TEST(merge_round_trip_one_shard) { round_trip(128, false, 50, 0); }
END_TEST

START_TEST(split_refuses_existing) {
    make_tmpdir("check_split");
    gk_file *in = make_input("in.gguf", 6, 32, false);
    FILE *f = fopen(tmp_path("s-00002-of-00002.gguf"), "w");
    fclose(f);
    gk_split_opts o = { GK_OPTS_INIT(gk_split_opts), .max_tensors = 3 };
    gk_split_plan p;
    ck_assert_int_eq(gk_split_plan_build(gk_file_model(in), &o, &p, NULL), GK_OK);
    gk_error err;
    ck_assert_int_eq(gk_split_write(in, tmp_path("s"), &p, NULL, &err), GK_E_EXISTS);
    ck_assert(!exists(tmp_path("s-00001-of-00002.gguf")));
    gk_split_plan_free(&p);
    gk_close(in);
    remove_tmpdir();
}
END_TEST

/* Stops the run once the second shard is under way. */
static bool stop_in_second(void *ctx, uint64_t done, uint64_t total) {
    (void)total;
    return done <= *(uint64_t *)ctx;
}

START_TEST(split_all_or_none) {
    make_tmpdir("check_split");
    gk_file *in = make_input("in.gguf", 9, 32, false);
    gk_split_opts o = { GK_OPTS_INIT(gk_split_opts), .max_tensors = 3 };
    gk_split_plan p;
    ck_assert_int_eq(gk_split_plan_build(gk_file_model(in), &o, &p, NULL), GK_OK);
    uint64_t first_bytes = 0;
    for (size_t i = 0; i < 3; i++) first_bytes += gk_tensor_at(gk_file_model(in), i)->nbytes;
    gk_write_opts wo = { GK_OPTS_INIT(gk_write_opts), .progress = stop_in_second, .progress_ctx = &first_bytes };
    gk_error err;
    ck_assert_int_eq(gk_split_write(in, tmp_path("s"), &p, &wo, &err), GK_E_INTERRUPTED);
    ck_assert_msg(strstr(err.message, "shard 2 of 3") != NULL, "%s", err.message);
    ck_assert(!exists(tmp_path("s-00001-of-00003.gguf")));
    ck_assert(!exists(tmp_path("s-00002-of-00003.gguf")));
    /* only the input is left in the folder */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    gk_split_plan_free(&p);
    gk_close(in);
    remove_tmpdir();
}
END_TEST

/* Writes shard k of plan with its model changed by edit (tensors from in). */
static void write_edited_shard(gk_file *in, const gk_split_plan *p, size_t k, const char *prefix,
                               void (*edit)(gk_model *)) {
    gk_model *m;
    ck_assert_int_eq(gk_split_shard_model(gk_file_model(in), p, k, &m, NULL), GK_OK);
    gk_step steps[64];
    for (size_t j = 0; j < p->shards[k].n_tensors; j++) steps[j] = (gk_step){ in, p->shards[k].first_tensor + j, NULL };
    edit(m);
    char *path = gk_split_path(tmp_path(prefix), k, p->n_shards);
    unlink(path);
    gk_write_opts o = { GK_OPTS_INIT(gk_write_opts), .pad_end = true };
    gk_error err;
    ck_assert_msg(gk_write_model(path, m, steps, &o, &err) == GK_OK, "%s", err.message);
    free(path);
    gk_model_free(m);
}

static void dup_tensor_name(gk_model *m) {
    /* rebuild the directory with the first tensor named as one of shard 0's */
    size_t n = gk_tensor_count(m);
    gk_tensor saved[64];
    char names[64][32];
    for (size_t i = 0; i < n; i++) {
        saved[i] = *gk_tensor_at(m, i);
        snprintf(names[i], sizeof names[i], "%s", i == 0 ? "t.00" : saved[i].name.ptr);
    }
    gk_tensor_clear(m);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(gk_tensor_add(m, names[i], saved[i].type, saved[i].n_dims, saved[i].ne, NULL), GK_OK);
}
static void wrong_total(gk_model *m) {
    gk_value v = { .type = GK_V_I32, .i = 99 };
    ck_assert_int_eq(gk_kv_set(m, "split.tensors.count", &v, NULL), GK_OK);
}
static void wrong_no(gk_model *m) {
    gk_value v = { .type = GK_V_U16, .u = 0 };
    ck_assert_int_eq(gk_kv_set(m, "split.no", &v, NULL), GK_OK);
}
static void other_order(gk_model *m) { gk_model_set_big_endian(m, true); }
static void other_alignment(gk_model *m) { gk_kv_set_u32(m, "general.alignment", 16, NULL); }

/* Splits into 3 shards, replaces shard 1 by an edited one, expects the set refused. */
static void expect_refused(void (*edit)(gk_model *), gk_status want, const char *words) {
    make_tmpdir("check_split");
    gk_file *in = make_input("in.gguf", 9, 32, false);
    split_file(in, "s", 3);
    gk_split_opts o = { GK_OPTS_INIT(gk_split_opts), .max_tensors = 3 };
    gk_split_plan p;
    ck_assert_int_eq(gk_split_plan_build(gk_file_model(in), &o, &p, NULL), GK_OK);
    write_edited_shard(in, &p, 1, "s", edit);
    gk_split_set *set = NULL;
    gk_error err;
    ck_assert_int_eq(gk_split_set_open(tmp_path("s-00003-of-00003.gguf"), GK_OPEN_DEFAULT, &set, &err), want);
    ck_assert_ptr_null(set);
    ck_assert_msg(strstr(err.message, words) != NULL, "'%s' not in '%s'", words, err.message);
    gk_split_plan_free(&p);
    gk_close(in);
    remove_tmpdir();
}

START_TEST(set_duplicate_tensor) { expect_refused(dup_tensor_name, GK_E_CORRUPT, "'t.00' is also in an earlier shard"); }
END_TEST
START_TEST(set_wrong_total) { expect_refused(wrong_total, GK_E_CORRUPT, "split.tensors.count 99"); }
END_TEST
START_TEST(set_wrong_number) { expect_refused(wrong_no, GK_E_CORRUPT, "says it is shard 1 of 3"); }
END_TEST
START_TEST(set_mixed_order) { expect_refused(other_order, GK_E_CORRUPT, "big-endian"); }
END_TEST
START_TEST(set_mixed_alignment) { expect_refused(other_alignment, GK_E_CORRUPT, "alignment 16"); }
END_TEST

START_TEST(set_missing_shard) {
    make_tmpdir("check_split");
    gk_file *in = make_input("in.gguf", 9, 32, false);
    split_file(in, "s", 3);
    ck_assert_int_eq(unlink(tmp_path("s-00002-of-00003.gguf")), 0);
    gk_split_set *set = NULL;
    gk_error err;
    ck_assert_int_eq(gk_split_set_open(tmp_path("s-00001-of-00003.gguf"), GK_OPEN_DEFAULT, &set, &err),
                     GK_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "shard 2 of 3 is missing"));
    ck_assert_str_eq(err.file, tmp_path("s-00002-of-00003.gguf"));   /* the error names the missing shard */
    /* quantize's opener says the same, naming the same shard */
    gk_file **files = NULL;
    size_t n = 0;
    gk_error qerr;
    ck_assert_int_eq(gk_quant_open_inputs(tmp_path("s-00001-of-00003.gguf"), GK_OPEN_DEFAULT, &files, &n, &qerr),
                     GK_E_NOT_FOUND);
    ck_assert_str_eq(qerr.message, err.message);
    ck_assert_str_eq(qerr.file, err.file);
    /* a shard there but unreadable is named too, with the reader's offset */
    FILE *fp = fopen(tmp_path("s-00002-of-00003.gguf"), "wb");
    ck_assert_ptr_nonnull(fp);
    fputs("GGUF", fp);
    fclose(fp);
    ck_assert_int_eq(gk_split_set_open(tmp_path("s-00003-of-00003.gguf"), GK_OPEN_DEFAULT, &set, &err), GK_E_TRUNCATED);
    ck_assert_str_eq(err.file, tmp_path("s-00002-of-00003.gguf"));
    ck_assert_int_eq(gk_quant_open_inputs(tmp_path("s-00001-of-00003.gguf"), GK_OPEN_DEFAULT, &files, &n, &qerr),
                     GK_E_TRUNCATED);
    ck_assert_str_eq(qerr.file, err.file);
    ck_assert_int_eq(unlink(tmp_path("s-00002-of-00003.gguf")), 0);
    /* a file that is no shard, and a shard under a name that does not fit */
    ck_assert_int_eq(gk_split_set_open(tmp_path("in.gguf"), GK_OPEN_DEFAULT, &set, &err), GK_E_NOT_FOUND);
    ck_assert(!gk_model_is_shard(gk_file_model(in)));
    ck_assert_int_eq(rename(tmp_path("s-00003-of-00003.gguf"), tmp_path("s-3.gguf")), 0);
    ck_assert_int_eq(gk_split_set_open(tmp_path("s-3.gguf"), GK_OPEN_DEFAULT, &set, &err), GK_E_CORRUPT);
    gk_close(in);
    remove_tmpdir();
}
END_TEST

/* ---- byte order ------------------------------------------------------------------- */

START_TEST(endian_round_trip) {
    make_tmpdir("check_split");
    gk_file *in = make_input("in.gguf", 10, 32, false);
    gk_error err;
    ck_assert_int_eq(gk_endian_check(gk_file_model(in), &err), GK_OK);
    ck_assert_msg(gk_endian_convert(in, tmp_path("be.gguf"), true, NULL, &err) == GK_OK, "%s", err.message);
    ck_assert(!same_bytes(tmp_path("be.gguf"), tmp_path("in.gguf")));
    gk_file *be;
    ck_assert_int_eq(gk_open(tmp_path("be.gguf"), GK_OPEN_DEFAULT, &be, &err), GK_OK);
    ck_assert(gk_model_big_endian(gk_file_model(be)));
    ck_assert_uint_eq(gk_kv_get(gk_file_model(be), "test.value")->u, 7);
    ck_assert_int_eq(gk_endian_convert(be, tmp_path("le.gguf"), false, NULL, &err), GK_OK);
    ck_assert(same_bytes(tmp_path("le.gguf"), tmp_path("in.gguf")));
    /* never in place, never over an existing file unless asked */
    ck_assert_int_eq(gk_endian_convert(in, tmp_path("in.gguf"), true, NULL, &err), GK_E_SAME_FILE);
    ck_assert_int_eq(gk_endian_convert(in, tmp_path("le.gguf"), true, NULL, &err), GK_E_EXISTS);
    gk_close(be);
    gk_close(in);
    remove_tmpdir();
}
END_TEST

START_TEST(endian_missing_kernel_named) {
    /* every type without a byte-swap kernel must be refused by name */
    size_t missing = 0;
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *t = gk_type_get(id);
        if (t == NULL || t->byteswap != NULL) continue;
        missing++;
        gk_model *m = gk_model_new();
        uint64_t ne = t->block_elems;
        ck_assert_int_eq(gk_tensor_add(m, "w", id, 1, &ne, NULL), GK_OK);
        gk_error err;
        ck_assert_int_eq(gk_endian_check(m, &err), GK_E_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(err.message, t->name));
        gk_model_free(m);
    }
    if (missing == 0) printf("check_split: every type has a byte-swap kernel\n");
}
END_TEST

START_TEST(pads_end) {
    make_tmpdir("check_split");
    gk_model *m = gk_model_new();
    uint64_t ne = 3;  /* 12 bytes: the file ends 20 bytes short of alignment unless padded */
    ck_assert_int_eq(gk_tensor_add(m, "w", GK_TYPE_F32, 1, &ne, NULL), GK_OK);
    write_model_file(m, tmp_path("p.gguf"));
    gk_file *f;
    ck_assert_int_eq(gk_open(tmp_path("p.gguf"), GK_OPEN_DEFAULT, &f, NULL), GK_OK);
    ck_assert(gk_file_pads_end(f));
    gk_close(f);
    ck_assert_int_eq(truncate(tmp_path("p.gguf"), (off_t)(gk_model_data_start(m) + 12)), 0);
    ck_assert_int_eq(gk_open(tmp_path("p.gguf"), GK_OPEN_DEFAULT, &f, NULL), GK_OK);
    ck_assert(!gk_file_pads_end(f));
    gk_error err;
    ck_assert_int_eq(gk_endian_convert(f, tmp_path("p.be.gguf"), true, NULL, &err), GK_OK);
    gk_file *g;
    ck_assert_int_eq(gk_open(tmp_path("p.be.gguf"), GK_OPEN_DEFAULT, &g, NULL), GK_OK);
    /* every output pads its last tensor, as ggml's reader reads it */
    ck_assert_uint_eq(gk_file_size(g), gk_model_data_start(m) + 32);
    ck_assert(gk_file_pads_end(g));
    gk_close(g);
    gk_close(f);
    gk_model_free(m);
    remove_tmpdir();
}
END_TEST

/* ---- golden parity ---------------------------------------------------------------- */

static const char *golden_syn1(void) {
    static char dir[512];
    const char *g = getenv("GGUFKIT_GOLDEN");
    snprintf(dir, sizeof dir, "%s/syn1", g ? g : "");
    if (g == NULL || !exists(dir)) {
        printf("SKIPPED: golden parity (no golden data at %s)\n", g ? g : "<GGUFKIT_GOLDEN unset>");
        return NULL;
    }
    return dir;
}

static char *golden(const char *dir, const char *name) {
    static char buf[4][600];
    static int at;
    char *p = buf[at++ % 4];
    snprintf(p, 600, "%s/%s", dir, name);
    return p;
}

START_TEST(golden_split_merge) {
    const char *dir = golden_syn1();
    if (dir == NULL) return;
    make_tmpdir("check_split");
    gk_file *in;
    gk_error err;
    ck_assert_int_eq(gk_open(golden(dir, "syn1-f32.gguf"), GK_OPEN_DEFAULT, &in, &err), GK_OK);
    split_file(in, "syn1-split-t5", 5);
    int same = 0;
    for (size_t k = 0; k < 5; k++) {
        char *mine = gk_split_path(tmp_path("syn1-split-t5"), k, 5);
        char *ref = gk_split_path(golden(dir, "syn1-split-t5"), k, 5);
        ck_assert_msg(same_bytes(mine, ref), "%s differs from %s", mine, ref);
        same++;
        free(mine);
        free(ref);
    }
    ck_assert_int_eq(same, 5);
    gk_close(in);
    gk_split_set *set;
    ck_assert_int_eq(gk_split_set_open(golden(dir, "syn1-split-1M-00003-of-00004.gguf"), GK_OPEN_DEFAULT, &set, &err),
                     GK_OK);
    ck_assert_int_eq(gk_merge_write(set, tmp_path("m16.gguf"), NULL, &err), GK_OK);
    ck_assert(same_bytes(tmp_path("m16.gguf"), golden(dir, "syn1-f16.gguf")));
    gk_split_set_close(set);
    remove_tmpdir();
}
END_TEST

START_TEST(golden_endian) {
    const char *dir = golden_syn1();
    if (dir == NULL) return;
    make_tmpdir("check_split");
    static const char *const names[2][2] = { { "syn1-f32.gguf", "syn1-f32.be.gguf" },
                                             { "syn1-f16.gguf", "syn1-f16.be.gguf" } };
    for (int i = 0; i < 2; i++) {
        gk_file *in;
        gk_error err;
        ck_assert_int_eq(gk_open(golden(dir, names[i][0]), GK_OPEN_DEFAULT, &in, &err), GK_OK);
        unlink(tmp_path("be.gguf"));
        ck_assert_int_eq(gk_endian_convert(in, tmp_path("be.gguf"), true, NULL, &err), GK_OK);
        ck_assert_msg(same_bytes(tmp_path("be.gguf"), golden(dir, names[i][1])), "%s", names[i][1]);
        gk_close(in);
    }
    remove_tmpdir();
}
END_TEST

static Suite *split_suite(void) {
    Suite *s = suite_create("split");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, plan_by_tensors);
    tcase_add_test(tc, plan_by_size);
    tcase_add_test(tc, plan_bad_options);
    tcase_add_test(tc, shard_model_keys);
    tcase_add_test(tc, split_path_format);
    tcase_add_test(tc, merge_round_trip_32);
    tcase_add_test(tc, merge_round_trip_64_big);
    tcase_add_test(tc, merge_round_trip_one_shard);
    tcase_add_test(tc, split_refuses_existing);
    tcase_add_test(tc, split_all_or_none);
    tcase_add_test(tc, set_duplicate_tensor);
    tcase_add_test(tc, set_wrong_total);
    tcase_add_test(tc, set_wrong_number);
    tcase_add_test(tc, set_mixed_order);
    tcase_add_test(tc, set_mixed_alignment);
    tcase_add_test(tc, set_missing_shard);
    tcase_add_test(tc, endian_round_trip);
    tcase_add_test(tc, endian_missing_kernel_named);
    tcase_add_test(tc, pads_end);
    tcase_add_test(tc, golden_split_merge);
    tcase_add_test(tc, golden_endian);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(split_suite());
}
