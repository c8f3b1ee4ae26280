/*
 * check_safetensors.c - the safetensors reader and the checkpoint set
 * (lib/convert/): well-formed files read back, and one broken file per kind of
 * lie a header can tell (each refused with the file, the tensor and the byte
 * offset), and the checkpoint's own refusals (missing shard, a tensor in two
 * parts, index and parts disagreeing, a bad index); SentencePiece models read
 * as the reference converter reads them (golden/convert's tokenizers against the
 * token arrays it wrote).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_util.h"
#include "convert/checkpoint.h"
#include "convert/safetensors.h"
#include "convert/spm.h"

/* Writes a safetensors file: the JSON header (padded with spaces to a multiple
 * of 8, as the reference writer does, when pad) and data_len bytes 0, 1, 2 ... */
static void write_st(const char *path, const char *json, size_t data_len, bool pad) {
    size_t jl = strlen(json), hl = pad ? (jl + 7) / 8 * 8 : jl;
    size_t total = 8 + hl + data_len;
    uint8_t *b = calloc(1, total);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(b + 8, json, jl);
    memset(b + 8 + jl, ' ', hl - jl);
    for (size_t i = 0; i < data_len; i++) b[8 + hl + i] = (uint8_t)i;
    write_file(path, b, total);
    free(b);
}

static gk_status open_json(const char *json, size_t data_len, gk_st_file **f, gk_error *err) {
    char *p = tmp_path("t.safetensors");
    write_st(p, json, data_len, true);
    return gk_st_open(p, f, err);
}

START_TEST(reads_a_good_file) {
    make_tmpdir("check_safetensors");
    gk_st_file *f;
    gk_error err;
    const char *json = "{\"__metadata__\":{\"format\":\"pt\"},"
                       "\"b.weight\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[8,20]},"
                       "\"a.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"c\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[20,22]}}";
    ck_assert_int_eq(open_json(json, 22, &f, &err), GK_OK);
    ck_assert_uint_eq(gk_st_count(f), 3);
    ck_assert_str_eq(gk_st_at(f, 0)->name, "a.weight");   /* by offset */
    ck_assert_str_eq(gk_st_sorted(f, 1)->name, "b.weight");
    const gk_st_tensor *b = gk_st_find(f, "b.weight");
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->dtype, GK_ST_F16);
    ck_assert_uint_eq(b->n_dims, 2);
    ck_assert_uint_eq(b->shape[1], 3);
    ck_assert_uint_eq(b->nbytes, 12);
    ck_assert_str_eq(gk_st_metadata(f, "format"), "pt");
    ck_assert_ptr_null(gk_st_find(f, "missing"));
    uint8_t buf[4];
    ck_assert_int_eq(gk_st_read(f, b, 2, buf, 4, &err), GK_OK);
    ck_assert_uint_eq(buf[0], 10);   /* data byte 8 + 2 */
    ck_assert_int_eq(gk_st_read(f, b, 10, buf, 4, &err), GK_E_ARG);
    gk_st_close(f);
    remove_tmpdir();
}
END_TEST

/* One lying header per row: the JSON, the data length, the code, and a piece
 * of the message. */
static const struct {
    const char *json;
    size_t data;
    gk_status code;
    const char *says;
} lies[] = {
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, GK_E_TRUNCATED, "past the end" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, GK_E_CORRUPT, "overlaps" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, GK_E_CORRUPT, "gap" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12, GK_E_CORRUPT, "no tensor claims" },
    { "{\"a\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1, GK_E_UNSUPPORTED, "unknown dtype" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "12 bytes" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, GK_E_CORRUPT, "before begin" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "whole number" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "whole number" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}", 8,
      GK_E_CORRUPT, "overflows" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, GK_E_CORRUPT, "pair" },
    { "{\"a\":{\"dtype\":32,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "not a string" },
    { "{\"a\":[1,2]}", 0, GK_E_CORRUPT, "not an object" },
    { "[1,2,3]", 0, GK_E_CORRUPT, "not a JSON object" },
    { "{\"a\":{\"dtype\":\"F32\",", 0, GK_E_CORRUPT, "not valid JSON" },
    { "{} x", 0, GK_E_CORRUPT, "after the header" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, GK_E_CORRUPT, "twice" },
    { "{\"__metadata__\":{\"k\":3}}", 0, GK_E_CORRUPT, "not a string" },
    { "{\"\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "empty name" },
};

START_TEST(refuses_lying_headers) {
    make_tmpdir("check_safetensors");
    gk_st_file *f = NULL;
    gk_error err;
    gk_status s = open_json(lies[_i].json, lies[_i].data, &f, &err);
    ck_assert_msg(s == lies[_i].code, "row %d: %d (%s), want %d", _i, s, err.message, lies[_i].code);
    ck_assert_msg(strstr(err.message, lies[_i].says) != NULL, "row %d: '%s' lacks '%s'", _i, err.message,
                  lies[_i].says);
    ck_assert_msg(strstr(err.file, "t.safetensors") != NULL, "row %d: error names no file", _i);
    ck_assert_ptr_null(f);
    remove_tmpdir();
}
END_TEST

START_TEST(names_the_offset) {
    make_tmpdir("check_safetensors");
    gk_st_file *f;
    gk_error err;
    const char *json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}";
    ck_assert_int_eq(open_json(json, 20, &f, &err), GK_E_CORRUPT);
    size_t hl = (strlen(json) + 7) / 8 * 8;
    ck_assert_int_eq(err.offset, (int64_t)(8 + hl + 8));   /* where the gap starts */
    ck_assert_ptr_nonnull(strstr(err.message, "'b'"));
    json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
           "\"b\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[8,16]}}";
    ck_assert_int_eq(open_json(json, 16, &f, &err), GK_E_UNSUPPORTED);
    ck_assert_int_eq(err.offset, (int64_t)(8 + (strstr(json, "\"b\"") - json)));
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_bad_lengths) {
    make_tmpdir("check_safetensors");
    char *p = tmp_path("t.safetensors");
    gk_st_file *f;
    gk_error err;
    uint8_t huge[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}' };
    write_file(p, huge, sizeof huge);
    ck_assert_int_eq(gk_st_open(p, &f, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "over the limit"));
    uint8_t past[12] = { 200, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ' };
    write_file(p, past, sizeof past);
    ck_assert_int_eq(gk_st_open(p, &f, &err), GK_E_TRUNCATED);
    write_file(p, past, 5);
    ck_assert_int_eq(gk_st_open(p, &f, &err), GK_E_TRUNCATED);
    ck_assert_int_eq(gk_st_open(tmp_path("none.safetensors"), &f, &err), GK_E_NOT_FOUND);
    remove_tmpdir();
}
END_TEST

/* ---- checkpoints ---------------------------------------------------------- */

static char *in_dir(const char *dir, const char *name) {
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void put(const char *dir, const char *name, const char *json, size_t data) {
    char *p = in_dir(dir, name);
    write_st(p, json, data, true);
    free(p);
}

static void put_text(const char *dir, const char *name, const char *text) {
    char *p = in_dir(dir, name);
    write_file(p, text, strlen(text));
    free(p);
}

#define T(NAME, OFF) "\"" NAME "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[" OFF "]}"

static const char *index_json = "{\"metadata\":{\"total_size\":32},\"weight_map\":{"
                                "\"z\":\"model-00001-of-00002.safetensors\",\"a\":\"model-00001-of-00002.safetensors\","
                                "\"m\":\"model-00002-of-00002.safetensors\",\"b\":\"model-00002-of-00002.safetensors\"}}";

START_TEST(sharded_checkpoint) {
    make_tmpdir("check_safetensors");
    char *d = tmp_path("");
    put(d, "model-00001-of-00002.safetensors", "{" T("z", "0,8") "," T("a", "8,16") "}", 16);
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "," T("b", "8,16") "}", 16);
    put_text(d, "model.safetensors.index.json", index_json);
    put(d, "other.safetensors", "{" T("x", "0,8") "}", 8);   /* not a part: ignored */
    gk_ckpt *c;
    gk_error err;
    ck_assert_msg(gk_ckpt_open(d, &c, &err) == GK_OK, "%s", err.message);
    ck_assert_uint_eq(gk_ckpt_count(c), 4);
    const char *order[] = { "a", "z", "b", "m" };   /* parts by name, names sorted in each */
    for (int i = 0; i < 4; i++) ck_assert_str_eq(gk_ckpt_at(c, (size_t)i)->t->name, order[i]);
    ck_assert_ptr_nonnull(gk_ckpt_find(c, "m"));
    ck_assert_uint_eq(gk_ckpt_part_count(c), 2);
    gk_ckpt_close(c);
    remove_tmpdir();
}
END_TEST

START_TEST(checkpoint_refusals) {
    make_tmpdir("check_safetensors");
    char *d = tmp_path("");
    gk_ckpt *c;
    gk_error err;
    /* nothing */
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_NOT_FOUND);
    /* a shard the index names is missing */
    put(d, "model-00001-of-00002.safetensors", "{" T("z", "0,8") "," T("a", "8,16") "}", 16);
    put_text(d, "model.safetensors.index.json", index_json);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "model-00002-of-00002.safetensors"));
    /* one tensor in two shards */
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "," T("a", "8,16") "}", 16);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "two files"));
    /* the index names a tensor no part holds */
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "}", 8);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "'b'"));
    /* a part holds a tensor the index does not name */
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "," T("b", "8,16") "," T("q", "16,24") "}", 24);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "not in the index"));
    /* bad indexes */
    put_text(d, "model.safetensors.index.json", "{\"weight_map\":[1]}");
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    put_text(d, "model.safetensors.index.json", "{\"weight_map\":{\"a\":\"../x.safetensors\"}}");
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    put_text(d, "model.safetensors.index.json", "{\"weight_map\":");
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.file, "index.json"));
    remove_tmpdir();
}
END_TEST

START_TEST(single_file_checkpoint) {
    make_tmpdir("check_safetensors");
    char *d = tmp_path("");
    put(d, "model.safetensors", "{" T("w", "0,8") "," T("v", "8,16") "}", 16);
    gk_ckpt *c;
    gk_error err;
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_OK);
    ck_assert_str_eq(gk_ckpt_at(c, 0)->t->name, "v");
    gk_ckpt_close(c);
    remove_tmpdir();
}
END_TEST

/* ---- SentencePiece ------------------------------------------------------ */

START_TEST(spm_matches_reference_vocab) {
    const char *g = golden_dir("convert");
    if (g == NULL) {
        printf("SKIPPED: SentencePiece parity (no golden convert/ data)\n");
        return;
    }
    static const char *folders[] = { "llama-gqa", "mixtral", "llama-shards", "mistral-l3" };
    for (size_t k = 0; k < 4; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/convert/%s/tokenizer.model", g, folders[k]);
        gk_spm *m;
        gk_error err;
        ck_assert_msg(gk_spm_load(path, &m, &err) == GK_OK, "%s: %s", path, err.message);
        snprintf(path, sizeof path, "%s/convert/%s-f32.gguf", g, folders[k]);
        gk_file *f;
        ck_assert_int_eq(gk_open(path, GK_OPEN_DEFAULT, &f, &err), GK_OK);
        const gk_model *gm = gk_file_model(f);
        const gk_value *tokens = gk_kv_get(gm, "tokenizer.ggml.tokens");
        const gk_value *scores = gk_kv_get(gm, "tokenizer.ggml.scores");
        const gk_value *types = gk_kv_get(gm, "tokenizer.ggml.token_type");
        ck_assert_ptr_nonnull(tokens);
        ck_assert_uint_eq(tokens->arr.n, gk_spm_count(m));
        const gk_str *tok = tokens->arr.data;
        for (size_t i = 0; i < gk_spm_count(m); i++) {
            ck_assert_msg(tok[i].len == strlen(gk_spm_piece(m, i)) && memcmp(tok[i].ptr, gk_spm_piece(m, i), tok[i].len) == 0,
                          "%s: token %zu", folders[k], i);
            ck_assert_msg(((const float *)scores->arr.data)[i] == gk_spm_score(m, i), "%s: score %zu", folders[k], i);
            ck_assert_msg(((const int32_t *)types->arr.data)[i] == gk_spm_kind(m, i), "%s: type %zu", folders[k], i);
        }
        gk_close(f);
        gk_spm_free(m);
    }
}
END_TEST

START_TEST(spm_refuses_garbage) {
    make_tmpdir("check_convert");
    gk_spm *m;
    gk_error err;
    write_file(tmp_path("t.model"), "\xff\xff\xff\xff not a protobuf", 22);
    ck_assert_int_eq(gk_spm_load(tmp_path("t.model"), &m, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.file, "t.model"));
    const uint8_t empty[1] = { 0 };
    write_file(tmp_path("e.model"), empty, 0);
    ck_assert_int_eq(gk_spm_load(tmp_path("e.model"), &m, &err), GK_E_CORRUPT);
    /* a piece of kind 9: field 1 (piece), len 5: field 1 "ab", field 3 varint 9 */
    const uint8_t bad_kind[] = { 0x0a, 0x06, 0x0a, 0x02, 'a', 'b', 0x18, 0x09 };
    write_file(tmp_path("k.model"), bad_kind, sizeof bad_kind);
    ck_assert_int_eq(gk_spm_load(tmp_path("k.model"), &m, &err), GK_E_CORRUPT);
    ck_assert_int_eq(gk_spm_load(tmp_path("missing.model"), &m, &err), GK_E_NOT_FOUND);
    remove_tmpdir();
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, reads_a_good_file);
    tcase_add_loop_test(tc, refuses_lying_headers, 0, (int)(sizeof lies / sizeof lies[0]));
    tcase_add_test(tc, names_the_offset);
    tcase_add_test(tc, refuses_bad_lengths);
    suite_add_tcase(s, tc);
    tc = tcase_create("checkpoint");
    tcase_add_test(tc, sharded_checkpoint);
    tcase_add_test(tc, checkpoint_refusals);
    tcase_add_test(tc, single_file_checkpoint);
    suite_add_tcase(s, tc);
    tc = tcase_create("spm");
    tcase_add_test(tc, spm_matches_reference_vocab);
    tcase_add_test(tc, spm_refuses_garbage);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
