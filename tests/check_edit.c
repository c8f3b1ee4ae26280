/*
 * check_edit.c - unit tests of metadata edits (lib/edit): key rules and
 * well-known types, value parsing and inference, refusals and --force, delete
 * globs, renames, special tokens, JSON patches (exact 64-bit integers and
 * \u0000 strings), the in-place fit with its padding pair, in-place writes
 * with a simulated crash before every low-level operation followed by journal
 * recovery, torn and foreign journals, and the atomic rewrite of the input.
 * Needs no golden data: the files are made here, in a temporary folder.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "format/journal.h"
#include "io/digest.h"

/* A small model: a few pairs of several types, a vocabulary, two F32 tensors. */
static gk_model *small_model(void) {
    gk_model *m = gk_model_new();
    gk_kv_set_str(m, "general.architecture", "llama", NULL);
    gk_kv_set_str(m, "general.name", "small", NULL);
    gk_kv_set_u32(m, "llama.context_length", 2048, NULL);
    gk_value u8 = { .type = GK_V_U8, .u = 7 };
    gk_kv_set(m, "test.u8", &u8, NULL);
    gk_str toks[4] = { { "<unk>", 5 }, { "<s>", 3 }, { "</s>", 4 }, { "hi", 2 } };
    gk_value tv = { .type = GK_V_ARR };
    tv.arr.elem = GK_V_STR;
    tv.arr.n = 4;
    tv.arr.data = toks;
    gk_kv_set(m, "tokenizer.ggml.tokens", &tv, NULL);
    gk_kv_set_u32(m, "tokenizer.ggml.bos_token_id", 1, NULL);
    uint64_t ne1[2] = { 8, 4 }, ne2[1] = { 8 };
    ck_assert_int_eq(gk_tensor_add(m, "a.weight", GK_TYPE_F32, 2, ne1, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(m, "b.weight", GK_TYPE_F32, 1, ne2, NULL), GK_OK);
    gk_model_layout(m);
    return m;
}

/* Writes m with patterned tensor bytes (and ggml's end padding) to path. */
static void write_model(const char *path, gk_model *m) {
    uint8_t *hdr;
    size_t len;
    ck_assert_int_eq(gk_header_serialize(m, &hdr, &len, NULL), GK_OK);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    fwrite(hdr, 1, len, fp);
    uint64_t pos = 0;
    for (size_t i = 0; i < gk_tensor_count(m); i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        while (pos < t->offset) fputc(0, fp), pos++;
        for (uint64_t k = 0; k < t->nbytes; k++) fputc((int)((k * 7 + i) & 0xFF), fp), pos++;
    }
    while (pos % 32) fputc(0, fp), pos++;
    fclose(fp);
    free(hdr);
}

/* Applies e to a clone of m. @return : the status; *out the edited clone. */
static gk_status apply(gk_edit *e, const gk_model *m, unsigned flags, gk_model **out, gk_edit_result *res) {
    *out = gk_model_clone(m);
    gk_error err;
    gk_status st = gk_edit_apply(e, *out, flags, res, &err);
    gk_edit_free(e);
    return st;
}

static gk_status set1(const gk_model *m, const char *key, const char *type, const char *text, gk_model **out,
                      gk_edit_result *res) {
    gk_edit *e = gk_edit_new();
    ck_assert_int_eq(gk_edit_add_set(e, key, type, text, strlen(text), NULL), GK_OK);
    return apply(e, m, 0, out, res);
}

/* ---- rules ---------------------------------------------------------------------- */

START_TEST(test_key_names) {
    ck_assert(gk_key_name_valid("general.name"));
    ck_assert(gk_key_name_valid("general.base_model.0.name"));
    ck_assert(gk_key_name_valid("x"));
    ck_assert(!gk_key_name_valid(""));
    ck_assert(!gk_key_name_valid("General.name"));
    ck_assert(!gk_key_name_valid("general..name"));
    ck_assert(!gk_key_name_valid(".general"));
    ck_assert(!gk_key_name_valid("general."));
    ck_assert(!gk_key_name_valid("gen-eral.name"));
    ck_assert(!gk_key_name_valid("g\xc3\xa9n\xc3\xa9ral"));
    char *longkey = malloc(65537);
    memset(longkey, 'a', 65536);
    longkey[65536] = '\0';
    ck_assert(!gk_key_name_valid(longkey));
    longkey[65535] = '\0';
    ck_assert(gk_key_name_valid(longkey));
    free(longkey);
}
END_TEST

START_TEST(test_known_types) {
    gk_vtype t, e;
    bool arr;
    ck_assert(gk_key_expected_type("llama.context_length", &t, &e, &arr));
    ck_assert_int_eq(t, GK_V_U32);
    ck_assert(gk_key_expected_type("qwen2.attention.head_count", &t, &e, &arr));
    ck_assert(arr);
    ck_assert(gk_key_expected_type("tokenizer.ggml.tokens", &t, &e, &arr));
    ck_assert_int_eq(t, GK_V_ARR);
    ck_assert_int_eq(e, GK_V_STR);
    ck_assert(gk_key_expected_type("tokenizer.ggml.fim_pre_token_id", &t, &e, &arr));
    ck_assert_int_eq(t, GK_V_U32);
    ck_assert(gk_key_expected_type("tokenizer.chat_template.tool_use", &t, &e, &arr));
    ck_assert_int_eq(t, GK_V_STR);
    ck_assert(gk_key_expected_type("general.base_model.0.name", &t, &e, &arr));
    ck_assert(!gk_key_expected_type("test.u8", &t, &e, &arr));
    ck_assert(!gk_key_expected_type("context_length", &t, &e, &arr));
}
END_TEST

/* ---- values ---------------------------------------------------------------------- */

START_TEST(test_set_keeps_type) {
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    ck_assert_int_eq(set1(m, "test.u8", NULL, "200", &out, &res), GK_OK);
    ck_assert_int_eq(gk_kv_get(out, "test.u8")->type, GK_V_U8);
    ck_assert_uint_eq(gk_kv_get(out, "test.u8")->u, 200);
    ck_assert_int_eq(gk_kv_find(out, "test.u8"), gk_kv_find(m, "test.u8"));   /* position kept */
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "test.u8", NULL, "256", &out, &res), GK_OK);
    ck_assert(!res.refused);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "test.u8", NULL, "-1", &out, &res), GK_OK);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "llama.context_length", NULL, "12x", &out, &res), GK_OK);
    gk_model_free(out);
    gk_model_free(m);
}
END_TEST

static gk_vtype inferred(const char *text) {
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    ck_assert_int_eq(set1(m, "new.key", NULL, text, &out, &res), GK_OK);
    gk_vtype t = gk_kv_get(out, "new.key")->type;
    gk_model_free(out);
    gk_model_free(m);
    return t;
}

START_TEST(test_inference) {
    ck_assert_int_eq(inferred("5"), GK_V_U32);
    ck_assert_int_eq(inferred("4294967295"), GK_V_U32);
    ck_assert_int_eq(inferred("4294967296"), GK_V_U64);
    ck_assert_int_eq(inferred("-5"), GK_V_I32);
    ck_assert_int_eq(inferred("-2147483649"), GK_V_I64);
    ck_assert_int_eq(inferred("1.5"), GK_V_F32);
    ck_assert_int_eq(inferred("1e-5"), GK_V_F32);
    ck_assert_int_eq(inferred("true"), GK_V_BOOL);
    ck_assert_int_eq(inferred("hello"), GK_V_STR);
    ck_assert_int_eq(inferred("0x10"), GK_V_STR);
    ck_assert_int_eq(inferred("99999999999999999999999"), GK_V_STR);
    /* a new well-known key takes its type */
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    ck_assert_int_eq(set1(m, "llama.block_count", NULL, "22", &out, &res), GK_OK);
    ck_assert_int_eq(gk_kv_get(out, "llama.block_count")->type, GK_V_U32);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "llama.rope.freq_base", NULL, "10000", &out, &res), GK_OK);
    ck_assert_int_eq(gk_kv_get(out, "llama.rope.freq_base")->type, GK_V_F32);
    gk_model_free(out);
    gk_model_free(m);
}
END_TEST

START_TEST(test_explicit_types) {
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    ck_assert_int_eq(set1(m, "x.a", "i16", "-300", &out, &res), GK_OK);
    ck_assert_int_eq(gk_kv_get(out, "x.a")->type, GK_V_I16);
    ck_assert_int_eq(gk_kv_get(out, "x.a")->i, -300);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "x.a", "u64", "18446744073709551615", &out, &res), GK_OK);
    ck_assert_uint_eq(gk_kv_get(out, "x.a")->u, UINT64_MAX);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "x.a", "i64", "-9223372036854775808", &out, &res), GK_OK);
    ck_assert(gk_kv_get(out, "x.a")->i == INT64_MIN);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "x.a", "u64", "18446744073709551616", &out, &res), GK_OK);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "x.a", "f32", "0.1", &out, &res), GK_OK);
    ck_assert(gk_kv_get(out, "x.a")->f == (double)0.1f);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "x.a", "f32", "1e39", &out, &res), GK_OK);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "x.a", "bool", "yes", &out, &res), GK_OK);
    gk_model_free(out);
    gk_edit *e = gk_edit_new();
    ck_assert_int_eq(gk_edit_add_set(e, "x.a", "u9", "1", 1, NULL), GK_E_ARG);
    gk_edit_free(e);
    /* a string with a NUL byte, given by length */
    e = gk_edit_new();
    ck_assert_int_eq(gk_edit_add_set(e, "x.s", "str", "a\0b", 3, NULL), GK_OK);
    ck_assert_int_eq(apply(e, m, 0, &out, &res), GK_OK);
    ck_assert_uint_eq(gk_kv_get(out, "x.s")->s.len, 3);
    gk_model_free(out);
    gk_model_free(m);
}
END_TEST

START_TEST(test_json_arrays) {
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    ck_assert_int_eq(set1(m, "x.list", "json", "[\"a\",\"b\\u0000c\"]", &out, &res), GK_OK);
    const gk_value *v = gk_kv_get(out, "x.list");
    ck_assert_int_eq(v->type, GK_V_ARR);
    ck_assert_int_eq(v->arr.elem, GK_V_STR);
    ck_assert_uint_eq(((const gk_str *)v->arr.data)[1].len, 3);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "x.list", "array[u8]", "[1,2,255]", &out, &res), GK_OK);
    v = gk_kv_get(out, "x.list");
    ck_assert_int_eq(v->arr.elem, GK_V_U8);
    ck_assert_uint_eq(((const uint8_t *)v->arr.data)[2], 255);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "x.list", "array[u8]", "[256]", &out, &res), GK_OK);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "x.list", "json", "[1,-2]", &out, &res), GK_OK);
    ck_assert_int_eq(gk_kv_get(out, "x.list")->arr.elem, GK_V_I32);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "x.list", "json", "[1,2.5]", &out, &res), GK_OK);
    ck_assert_int_eq(gk_kv_get(out, "x.list")->arr.elem, GK_V_F32);
    gk_model_free(out);
    ck_assert_int_eq(set1(m, "x.list", "json", "[[1,2],[\"a\"]]", &out, &res), GK_OK);
    v = gk_kv_get(out, "x.list");
    ck_assert_int_eq(v->arr.elem, GK_V_ARR);
    ck_assert_int_eq(((const gk_value *)v->arr.data)[1].arr.elem, GK_V_STR);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "x.list", "json", "[]", &out, &res), GK_OK);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "x.list", "json", "[1,\"a\"]", &out, &res), GK_OK);
    gk_model_free(out);
    ck_assert_int_ne(set1(m, "x.list", "json", "[1,", &out, &res), GK_OK);
    gk_model_free(out);
    /* nesting: as deep as the reader takes (16 levels), no deeper */
    char deep[64];
    memset(deep, '[', 16);
    deep[16] = '1';
    memset(deep + 17, ']', 16);
    deep[33] = '\0';
    ck_assert_int_eq(set1(m, "x.deep", "json", deep, &out, &res), GK_OK);
    gk_model_free(out);
    memset(deep, '[', 17);
    deep[17] = '1';
    memset(deep + 18, ']', 17);
    deep[35] = '\0';
    ck_assert_int_eq(set1(m, "x.deep", "json", deep, &out, &res), GK_E_NESTING);
    gk_model_free(out);
    /* an existing array keeps its element type; the text is JSON */
    ck_assert_int_eq(set1(m, "tokenizer.ggml.tokens", NULL, "[\"x\",\"y\"]", &out, &res), GK_OK);
    ck_assert_uint_eq(gk_kv_get(out, "tokenizer.ggml.tokens")->arr.n, 2);
    gk_model_free(out);
    gk_model_free(m);
}
END_TEST

/* ---- refusals ---------------------------------------------------------------------- */

static void expect_refused(const char *key, const char *type, const char *text) {
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    ck_assert_int_ne(set1(m, key, type, text, &out, &res), GK_OK);
    ck_assert_msg(res.refused, "%s not refused", key);
    gk_model_free(out);
    gk_edit *e = gk_edit_new();
    gk_edit_add_set(e, key, type, text, strlen(text), NULL);
    ck_assert_int_eq(apply(e, m, GK_EDIT_FORCE, &out, &res), GK_OK);
    gk_model_free(out);
    gk_model_free(m);
}

START_TEST(test_refusals) {
    expect_refused("general.alignment", "u32", "64");
    expect_refused("split.count", "u16", "2");
    expect_refused("GGUF.version", "u32", "3");
    expect_refused("Bad.Key", NULL, "1");
    expect_refused("a..b", NULL, "1");
    expect_refused("llama.context_length", "str", "4096");
    expect_refused("llama.context_length", "u64", "4096");
    expect_refused("mistral.rope.freq_base", "f64", "1.5");
    expect_refused("tokenizer.ggml.token_type", "array[u32]", "[1]");
    expect_refused(GK_PADDING_KEY, "u8", "1");
    /* forced or not, general.alignment must stay a value readers take */
    gk_model *fm = small_model(), *fout;
    gk_edit_result fres;
    gk_edit *fe = gk_edit_new();
    gk_edit_add_set(fe, "general.alignment", "u32", "48", 2, NULL);
    ck_assert_int_eq(apply(fe, fm, GK_EDIT_FORCE, &fout, &fres), GK_E_ALIGN_VALUE);
    gk_model_free(fout);
    fe = gk_edit_new();
    gk_edit_add_set(fe, "general.alignment", "str", "64", 2, NULL);
    ck_assert_int_eq(apply(fe, fm, GK_EDIT_FORCE, &fout, &fres), GK_E_ALIGN_VALUE);
    gk_model_free(fout);
    fe = gk_edit_new();
    gk_edit_add_set(fe, "general.alignment", "u32", "64", 2, NULL);
    ck_assert_int_eq(apply(fe, fm, GK_EDIT_FORCE, &fout, &fres), GK_OK);
    ck_assert_uint_eq(gk_model_alignment(fout), 64);
    gk_model_free(fout);
    gk_model_free(fm);
    /* per-layer arrays are accepted for the keys that allow them */
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    ck_assert_int_eq(set1(m, "llama.feed_forward_length", "array[u32]", "[1,2]", &out, &res), GK_OK);
    gk_model_free(out);
    gk_model_free(m);
}
END_TEST

START_TEST(test_delete_rename) {
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    gk_edit *e = gk_edit_new();
    gk_edit_add_delete(e, "tokenizer.*", NULL);
    ck_assert_int_eq(apply(e, m, 0, &out, &res), GK_OK);
    ck_assert_uint_eq(res.n_deleted, 2);
    ck_assert_uint_eq(gk_kv_count(out), gk_kv_count(m) - 2);
    gk_model_free(out);
    e = gk_edit_new();
    gk_edit_add_delete(e, "nope.*", NULL);
    ck_assert_int_eq(apply(e, m, 0, &out, &res), GK_E_NOT_FOUND);
    gk_model_free(out);
    e = gk_edit_new();
    gk_edit_add_rename(e, "test.u8", "test.renamed", NULL);
    ck_assert_int_eq(apply(e, m, 0, &out, &res), GK_OK);
    ck_assert_int_eq(gk_kv_find(out, "test.renamed"), gk_kv_find(m, "test.u8"));
    gk_model_free(out);
    e = gk_edit_new();
    gk_edit_add_rename(e, "test.u8", "general.name", NULL);
    ck_assert_int_eq(apply(e, m, 0, &out, &res), GK_E_EXISTS);
    gk_model_free(out);
    e = gk_edit_new();
    gk_edit_add_rename(e, "test.u8", "llama.block_count", NULL);   /* u8 where u32 is expected */
    ck_assert_int_ne(apply(e, m, 0, &out, &res), GK_OK);
    ck_assert(res.refused);
    gk_model_free(out);
    /* in order: set then rename then set the new name again */
    e = gk_edit_new();
    gk_edit_add_set(e, "x.a", NULL, "5", 1, NULL);
    gk_edit_add_rename(e, "x.a", "x.b", NULL);
    gk_edit_add_set(e, "x.b", NULL, "6", 1, NULL);
    ck_assert_int_eq(apply(e, m, 0, &out, &res), GK_OK);
    ck_assert_uint_eq(gk_kv_get(out, "x.b")->u, 6);
    ck_assert_int_lt(gk_kv_find(out, "x.a"), 0);
    gk_model_free(out);
    /* a key holding glob characters is deleted alone; a backslash escapes */
    gk_value one = { .type = GK_V_U32, .u = 1 };
    const char *odd[] = { "x*y", "xzy", "x?z", "xaz" };
    for (int k = 0; k < 4; k++) ck_assert_int_eq(gk_kv_set(m, odd[k], &one, NULL), GK_OK);
    const char *pattern[] = { "x*y", "x?z", "x\\*y", "x?y", "x\\?q" };
    const char *left[][4] = { { "xzy", "x?z", "xaz", NULL }, { "x*y", "xzy", "xaz", NULL },
                              { "xzy", "x?z", "xaz", NULL }, { "x?z", "xaz", NULL, NULL }, { NULL } };
    for (int k = 0; k < 5; k++) {
        e = gk_edit_new();
        gk_edit_add_delete(e, pattern[k], NULL);
        gk_status st = apply(e, m, 0, &out, &res);
        if (k == 4) {
            ck_assert_int_eq(st, GK_E_NOT_FOUND);
            gk_model_free(out);
            continue;
        }
        ck_assert_int_eq(st, GK_OK);
        size_t n_left = 0;
        for (int j = 0; j < 4; j++) {
            bool want = false;
            for (int i = 0; i < 4 && left[k][i]; i++) want |= strcmp(left[k][i], odd[j]) == 0;
            ck_assert_msg((gk_kv_find(out, odd[j]) >= 0) == want, "delete '%s': key '%s'", pattern[k], odd[j]);
            n_left += want;
        }
        ck_assert_uint_eq(res.n_deleted, 4 - n_left);
        gk_model_free(out);
    }
    gk_model_free(m);
}
END_TEST

START_TEST(test_special_tokens) {
    gk_model *m = small_model(), *out;
    gk_edit_result res;
    gk_edit *e = gk_edit_new();
    ck_assert_int_eq(gk_edit_add_special_token(e, "eos", "</s>", NULL), GK_OK);
    ck_assert_int_eq(gk_edit_add_special_token_id(e, "pad", 3, NULL), GK_OK);
    ck_assert_int_eq(gk_edit_add_special_token_id(e, "sep", 0, NULL), GK_OK);
    ck_assert_int_eq(apply(e, m, 0, &out, &res), GK_OK);
    ck_assert_uint_eq(gk_kv_get(out, "tokenizer.ggml.eos_token_id")->u, 2);
    ck_assert_uint_eq(gk_kv_get(out, "tokenizer.ggml.padding_token_id")->u, 3);
    ck_assert_int_ge(gk_kv_find(out, "tokenizer.ggml.seperator_token_id"), 0);
    gk_model_free(out);
    e = gk_edit_new();
    gk_edit_add_special_token_id(e, "eos", 4, NULL);
    ck_assert_int_ne(apply(e, m, 0, &out, &res), GK_OK);
    gk_model_free(out);
    e = gk_edit_new();
    gk_edit_add_special_token(e, "eos", "missing", NULL);
    ck_assert_int_ne(apply(e, m, 0, &out, &res), GK_OK);
    gk_model_free(out);
    e = gk_edit_new();
    ck_assert_int_eq(gk_edit_add_special_token(e, "nonsense", "x", NULL), GK_E_ARG);
    gk_edit_free(e);
    gk_model_free(m);
}
END_TEST

/* ---- patches ---------------------------------------------------------------------- */

static gk_status patch(const gk_model *m, const char *json, gk_model **out) {
    gk_edit *e = gk_edit_new();
    gk_error err;
    gk_status st = gk_edit_add_patch(e, json, strlen(json), &err);
    if (st != GK_OK) {
        gk_edit_free(e);
        *out = NULL;
        return st;
    }
    gk_edit_result res;
    return apply(e, m, 0, out, &res);
}

START_TEST(test_patch_sections) {
    gk_model *m = small_model(), *out;
    ck_assert_int_eq(patch(m, "{\"set\": {\"general.name\": \"x\", \"llama.context_length\": {\"type\": \"u32\", \"value\": 8192},"
                              " \"x.big\": {\"type\": \"u64\", \"value\": 18446744073709551615}},"
                              " \"delete\": [\"test.u8\"], \"rename\": {\"general.name\": \"general.basename\"}}",
                           &out),
                     GK_OK);
    gk_str s;
    ck_assert_int_eq(gk_kv_get_str(out, "general.basename", &s), GK_OK);
    ck_assert_str_eq(s.ptr, "x");
    ck_assert_uint_eq(gk_kv_get(out, "llama.context_length")->u, 8192);
    ck_assert_uint_eq(gk_kv_get(out, "x.big")->u, UINT64_MAX);
    ck_assert_int_lt(gk_kv_find(out, "test.u8"), 0);
    gk_model_free(out);
    ck_assert_int_eq(patch(m, "{\"sett\": {}}", &out), GK_E_ARG);
    ck_assert_int_eq(patch(m, "[1]", &out), GK_E_ARG);
    ck_assert_int_eq(patch(m, "{\"set\": {\"x\": {\"type\": \"u32\", \"value\": 1.5}}}", &out), GK_E_ARG);
    gk_model_free(out);
    gk_model_free(m);
}
END_TEST

START_TEST(test_patch_dump_shape) {
    gk_model *m = small_model(), *out;
    const char *dump =
        "{\"filename\": \"f\", \"endian\": \"LITTLE\", \"metadata\": {"
        "\"GGUF.version\": {\"index\": 0, \"type\": \"UINT32\", \"offset\": 4, \"value\": 3},"
        "\"general.name\": {\"index\": 4, \"type\": \"STRING\", \"offset\": 60, \"value\": \"a\\u0000b\"},"
        "\"tokenizer.ggml.tokens\": {\"index\": 5, \"type\": \"ARRAY\", \"offset\": 99, \"array_types\": [\"STRING\"]},"
        "\"test.i64\": {\"index\": 9, \"type\": \"INT64\", \"offset\": 1, \"value\": -9223372036854775807},"
        "\"test.nested\": {\"index\": 9, \"type\": \"ARRAY\", \"offset\": 1, \"array_types\": [\"ARRAY\", \"INT16\"], \"value\": [[1],[2,3]]}"
        "}, \"tensors\": {}}";
    ck_assert_int_eq(patch(m, dump, &out), GK_OK);
    ck_assert_uint_eq(gk_kv_get(out, "general.name")->s.len, 3);
    ck_assert_uint_eq(gk_kv_get(out, "tokenizer.ggml.tokens")->arr.n, 4);   /* no value: kept */
    ck_assert(gk_kv_get(out, "test.i64")->i == -9223372036854775807LL);
    const gk_value *n = gk_kv_get(out, "test.nested");
    ck_assert_int_eq(n->arr.elem, GK_V_ARR);
    ck_assert_int_eq(((const gk_value *)n->arr.data)[1].arr.elem, GK_V_I16);
    ck_assert_int_lt(gk_kv_find(out, "GGUF.version"), 0);
    gk_model_free(out);
    gk_model_free(m);
}
END_TEST

/* ---- in place ---------------------------------------------------------------------- */

/* tmp_path(name), malloc'ed (the tests hold more paths than its buffers). */
static char *path_in_tmp(const char *name) {
    char *p = strdup(tmp_path(name));
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Edits path's general.name in place; @return : the status of the write. */
static gk_status edit_name_in_place(const char *path, const char *name, gk_io_hook hook, void *ctx, bool *fits) {
    gk_file *f;
    gk_status st = gk_open_exclusive(path, 0, 0, NULL, &f, NULL);
    if (st != GK_OK) return st;
    gk_model *m = gk_model_clone(gk_file_model(f));
    ck_assert_int_eq(gk_kv_set_str(m, "general.name", name, NULL), GK_OK);
    gk_inplace_plan plan;
    ck_assert_int_eq(gk_inplace_fit(f, m, &plan, NULL), GK_OK);
    *fits = plan.fits;
    if (plan.fits) st = gk_inplace_write_hooked(f, m, hook, ctx, NULL, NULL);
    gk_model_free(m);
    gk_close(f);
    return st;
}

START_TEST(test_inplace_fit_and_padding) {
    make_tmpdir("check_edit");
    char *path = path_in_tmp("m.gguf");
    gk_model *m = small_model();
    write_model(path, m);
    size_t old_len, new_len;
    uint8_t *old = read_whole_file(path, &old_len);
    gk_file *f;
    ck_assert_int_eq(gk_open(path, 0, &f, NULL), GK_OK);
    uint64_t data = gk_file_data_offset(f);
    gk_close(f);
    bool fits;
    /* too long for the alignment slack, and no padding pair: no fit */
    ck_assert_int_eq(edit_name_in_place(path, "a name far longer than the slack allows", NULL, NULL, &fits), GK_OK);
    ck_assert(!fits);
    /* reserve room with a rewrite, then the long name fits in place */
    ck_assert_int_eq(gk_open(path, 0, &f, NULL), GK_OK);
    gk_model *r = gk_model_clone(gk_file_model(f));
    ck_assert_int_eq(gk_model_set_padding(r, 200, NULL), GK_OK);
    char *path2 = path_in_tmp("r.gguf");
    ck_assert_int_eq(gk_edit_rewrite(f, r, path2, NULL, NULL), GK_OK);
    gk_model_free(r);
    gk_close(f);
    size_t r_len;
    uint8_t *rbytes = read_whole_file(path2, &r_len);
    ck_assert_int_eq(edit_name_in_place(path2, "a name far longer than the slack allows", NULL, NULL, &fits), GK_OK);
    ck_assert(fits);
    uint8_t *after = read_whole_file(path2, &new_len);
    ck_assert_uint_eq(new_len, r_len);
    ck_assert_int_eq(gk_open(path2, 0, &f, NULL), GK_OK);
    uint64_t d2 = gk_file_data_offset(f);
    ck_assert_int_eq(memcmp(rbytes + d2, after + d2, r_len - d2), 0);   /* tensor bytes untouched */
    gk_str s;
    ck_assert_int_eq(gk_kv_get_str(gk_file_model(f), "general.name", &s), GK_OK);
    ck_assert_str_eq(s.ptr, "a name far longer than the slack allows");
    ck_assert_int_ge(gk_kv_find(gk_file_model(f), GK_PADDING_KEY), 0);
    gk_close(f);
    /* and back to a short name: the padding grows again */
    ck_assert_int_eq(edit_name_in_place(path2, "small", NULL, NULL, &fits), GK_OK);
    ck_assert(fits);
    free(after);
    after = read_whole_file(path2, &new_len);
    ck_assert_uint_eq(new_len, r_len);
    ck_assert_int_eq(memcmp(rbytes + d2, after + d2, r_len - d2), 0);
    (void)data;
    free(after);
    free(rbytes);
    free(old);
    free(path2);
    free(path);
    gk_model_free(m);
    remove_tmpdir();
}
END_TEST

/* Stops (a simulated crash) before operation number `at`. */
typedef struct crash_at {
    int at, done;
} crash_at;

static bool crash_hook(void *ctx, const char *what) {
    (void)what;
    crash_at *c = ctx;
    if (c->done >= c->at) return false;
    c->done++;
    return true;
}

START_TEST(test_inplace_crash_recovery) {
    make_tmpdir("check_edit");
    char *path = path_in_tmp("m.gguf"), *ref = path_in_tmp("ref.gguf");
    gk_model *m = small_model();
    ck_assert_int_eq(gk_model_set_padding(m, 100, NULL), GK_OK);
    gk_model_layout(m);
    write_model(ref, m);
    size_t old_len, new_len;
    uint8_t *old = read_whole_file(ref, &old_len);
    /* the finished edit, for comparison */
    write_model(path, m);
    bool fits;
    ck_assert_int_eq(edit_name_in_place(path, "a-longer-name", NULL, NULL, &fits), GK_OK);
    ck_assert(fits);
    uint8_t *done = read_whole_file(path, &new_len);
    ck_assert_uint_eq(new_len, old_len);
    ck_assert_int_ne(memcmp(old, done, old_len), 0);
    int saw_old = 0, saw_new = 0, restored = 0;
    for (int at = 0; at < 40; at++) {
        write_model(path, m);
        crash_at c = { at, 0 };
        gk_status st = edit_name_in_place(path, "a-longer-name", crash_hook, &c, &fits);
        gk_recovery what;
        ck_assert_int_eq(gk_journal_recover(path, 0, &what, NULL), GK_OK);
        if (st == GK_OK) ck_assert_int_eq(what, GK_RECOVERY_NONE);
        if (what == GK_RECOVERY_RESTORED) restored++;
        size_t len;
        uint8_t *now = read_whole_file(path, &len);
        bool is_old = len == old_len && memcmp(now, old, len) == 0;
        bool is_new = len == new_len && memcmp(now, done, len) == 0;
        ck_assert_msg(is_old || is_new, "crash before operation %d left a mixed file", at);
        saw_old += is_old;
        saw_new += is_new;
        free(now);
        char *j = path_in_tmp("m.gguf" GK_JOURNAL_SUFFIX);
        ck_assert_int_ne(access(j, F_OK), 0);
        free(j);
        if (st == GK_OK) break;
    }
    ck_assert_int_gt(saw_old, 0);
    ck_assert_int_gt(saw_new, 0);
    ck_assert_int_gt(restored, 0);
    free(old);
    free(done);
    free(ref);
    free(path);
    gk_model_free(m);
    remove_tmpdir();
}
END_TEST

/* Writes small_model() with 100 bytes of padding to path. @return : the model. */
static gk_model *write_padded(const char *path) {
    gk_model *m = small_model();
    ck_assert_int_eq(gk_model_set_padding(m, 100, NULL), GK_OK);
    gk_model_layout(m);
    write_model(path, m);
    return m;
}

START_TEST(test_journal_torn_and_foreign) {
    make_tmpdir("check_edit");
    char *path = path_in_tmp("m.gguf"), *j = path_in_tmp("m.gguf" GK_JOURNAL_SUFFIX);
    gk_model *m = write_padded(path);
    size_t old_len;
    uint8_t *old = read_whole_file(path, &old_len);
    /* a torn journal: removed, file untouched */
    FILE *fp = fopen(j, "wb");
    fputs("GGUFKJ01 and nothing more", fp);
    fclose(fp);
    gk_recovery what;
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, NULL), GK_OK);
    ck_assert_int_eq(what, GK_RECOVERY_TORN);
    ck_assert_int_ne(access(j, F_OK), 0);
    /* a journal left beside the file: readers refuse the file and leave the
     * journal (they never write); an exclusive open recovers it first */
    fp = fopen(j, "wb");
    fclose(fp);
    gk_file *f;
    ck_assert_int_eq(gk_open(path, 0, &f, NULL), GK_E_JOURNAL);
    ck_assert_int_eq(access(j, F_OK), 0);
    ck_assert_int_eq(gk_open_exclusive(path, 0, 0, &what, &f, NULL), GK_OK);
    ck_assert_int_eq(what, GK_RECOVERY_TORN);
    ck_assert_int_ne(access(j, F_OK), 0);
    gk_close(f);
    bool fits;
    /* A complete journal of a file with other bytes (another name here) is stale:
     * refused, file and journal left alone; gk_journal_discard removes it. */
    char *other = path_in_tmp("o.gguf"), *oj = path_in_tmp("o.gguf" GK_JOURNAL_SUFFIX);
    ck_assert_int_eq(gk_kv_set_str(m, "general.name", "other-model", NULL), GK_OK);
    gk_model_layout(m);
    write_model(other, m);
    crash_at c = { 5, 0 };   /* after the journal is complete */
    ck_assert_int_eq(edit_name_in_place(other, "smol", crash_hook, &c, &fits), GK_E_INTERRUPTED);
    ck_assert_int_eq(rename(oj, j), 0);
    gk_error err;
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_E_JOURNAL);
    ck_assert_ptr_nonnull(strstr(err.message, "stale"));
    ck_assert_ptr_nonnull(strstr(err.message, "--discard-journal"));
    ck_assert_int_eq(access(j, F_OK), 0);
    ck_assert_int_eq(gk_open(path, 0, &f, &err), GK_E_JOURNAL);
    ck_assert_ptr_nonnull(strstr(err.message, "--discard-journal"));
    ck_assert_int_eq(gk_open_exclusive(path, 0, 0, &what, &f, &err), GK_E_JOURNAL);
    size_t len;
    uint8_t *now = read_whole_file(path, &len);
    ck_assert(len == old_len && memcmp(now, old, len) == 0);
    free(now);
    ck_assert_int_eq(gk_journal_discard(path, 0, &what, &err), GK_OK);
    ck_assert_int_eq(what, GK_RECOVERY_DISCARDED);
    ck_assert_int_ne(access(j, F_OK), 0);
    now = read_whole_file(path, &len);
    ck_assert(len == old_len && memcmp(now, old, len) == 0);
    free(now);
    free(old);
    free(other);
    free(oj);
    free(j);
    free(path);
    gk_model_free(m);
    remove_tmpdir();
}
END_TEST

/* Writes small_model() with 100 bytes of padding to path, its tensor bytes
 * patterned from seed (write_model's pattern when seed is 0). */
static void write_padded_seeded(const char *path, unsigned seed) {
    gk_model *m = write_padded(path);
    gk_model_free(m);
    if (seed == 0) return;
    gk_file *f;
    ck_assert_int_eq(gk_open(path, 0, &f, NULL), GK_OK);
    uint64_t data = gk_file_data_offset(f);
    gk_close(f);
    FILE *fp = fopen(path, "r+b");
    ck_assert_ptr_nonnull(fp);
    fseek(fp, (long)data, SEEK_SET);
    for (unsigned i = 0; i < 160; i++) fputc((int)((i * 7 + seed) & 0xff), fp);
    fclose(fp);
}

/* A journal proves that it belongs to the bytes it finds: the example of the
 * defect report (cp of another model over the file), a same-sized file whose
 * header is the same and whose tensor bytes differ, a copy of the file under a
 * new inode (its bytes prove it: recovered), an edit interrupted while it
 * restored, and journals of format 1. */
START_TEST(test_journal_proves_its_file) {
    make_tmpdir("check_edit");
    char *path = path_in_tmp("m.gguf"), *j = path_in_tmp("m.gguf" GK_JOURNAL_SUFFIX);
    char *ref = path_in_tmp("ref.gguf"), *twin = path_in_tmp("twin.gguf"), *other = path_in_tmp("o.gguf");
    write_padded_seeded(ref, 0);
    write_padded_seeded(twin, 9);    /* the same header, other tensor bytes */
    gk_model *big = small_model();
    uint64_t ne[2] = { 64, 4 };
    ck_assert_int_eq(gk_tensor_add(big, "c.weight", GK_TYPE_F32, 2, ne, NULL), GK_OK);
    gk_model_layout(big);
    write_model(other, big);
    gk_model_free(big);
    size_t ref_len, len;
    uint8_t *refb = read_whole_file(ref, &ref_len);
    gk_error err;
    gk_recovery what;
    bool fits;
    const char *replacements[] = { "o.gguf", "twin.gguf" };
    for (int r = 0; r < 2; r++) {
        for (int at = 5; at <= 7; at++) {   /* before, in the middle of, after the header write */
            write_padded_seeded(path, 0);
            crash_at c = { at, 0 };
            ck_assert_int_eq(edit_name_in_place(path, "edited", crash_hook, &c, &fits), GK_E_INTERRUPTED);
            ck_assert_int_eq(access(j, F_OK), 0);
            char *src = path_in_tmp(replacements[r]);
            size_t src_len;
            uint8_t *srcb = read_whole_file(src, &src_len);
            FILE *fp = fopen(path, "r+b");   /* as cp does: same inode, new bytes */
            ck_assert_ptr_nonnull(fp);
            ck_assert_int_eq(ftruncate(fileno(fp), 0), 0);
            fwrite(srcb, 1, src_len, fp);
            fclose(fp);
            ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_E_JOURNAL);
            ck_assert_ptr_nonnull(strstr(err.message, "stale"));
            uint8_t *now = read_whole_file(path, &len);
            ck_assert(len == src_len && memcmp(now, srcb, len) == 0);
            free(now);
            gk_file *f;
            ck_assert_int_eq(gk_open_exclusive(path, 0, 0, &what, &f, &err), GK_E_JOURNAL);
            ck_assert_int_eq(gk_journal_discard(path, 0, &what, &err), GK_OK);
            ck_assert_int_eq(what, GK_RECOVERY_DISCARDED);
            ck_assert_int_ne(access(j, F_OK), 0);
            now = read_whole_file(path, &len);
            ck_assert(len == src_len && memcmp(now, srcb, len) == 0);
            free(now);
            free(srcb);
            free(src);
        }
    }
    /* A copy under a new inode holding the interrupted edit's bytes: they prove
     * it, it is recovered; discarding such a journal is refused. */
    write_padded_seeded(path, 0);
    crash_at c = { 7, 0 };
    ck_assert_int_eq(edit_name_in_place(path, "edited", crash_hook, &c, &fits), GK_E_INTERRUPTED);
    uint8_t *mid = read_whole_file(path, &len);
    ck_assert(len == ref_len && memcmp(mid, refb, len) != 0);
    ck_assert_int_eq(unlink(path), 0);
    FILE *fp = fopen(path, "wb");
    fwrite(mid, 1, len, fp);
    fclose(fp);
    free(mid);
    ck_assert_int_eq(gk_journal_discard(path, 0, &what, &err), GK_E_JOURNAL);
    ck_assert_ptr_nonnull(strstr(err.message, "--recover"));
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_OK);
    ck_assert_int_eq(what, GK_RECOVERY_RESTORED);
    uint8_t *now = read_whole_file(path, &len);
    ck_assert(len == ref_len && memcmp(now, refb, len) == 0);
    free(now);
    /* A recovery interrupted before each of its steps leaves a file its journal
     * still proves: the next recovery finishes it. */
    for (int at = 0; at < 8; at++) {
        write_padded_seeded(path, 0);
        c = (crash_at){ 7, 0 };
        ck_assert_int_eq(edit_name_in_place(path, "edited-again", crash_hook, &c, &fits), GK_E_INTERRUPTED);
        crash_at rc = { at, 0 };
        gk_status st = gk_journal_recover_hooked(path, 0, &what, crash_hook, &rc, &err);
        ck_assert(st == GK_OK || st == GK_E_INTERRUPTED);
        ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_OK);
        now = read_whole_file(path, &len);
        ck_assert(len == ref_len && memcmp(now, refb, len) == 0);
        free(now);
        ck_assert_int_ne(access(j, F_OK), 0);
    }
    /* Format 1: removed when the file holds its old bytes; refused (unproven)
     * when it does not, applied then only when forced; stale for another inode. */
    write_padded_seeded(path, 0);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    uint8_t v1[48 + 4 + 32];
    memcpy(v1, "GGUFKJ01", 8);
    uint64_t fields[5] = { (uint64_t)sb.st_ino, ref_len, ref_len, 40, 4 };
    for (int k = 0; k < 5; k++)
        for (int b = 0; b < 8; b++) v1[8 + 8 * k + b] = (uint8_t)(fields[k] >> (8 * b));
    memcpy(v1 + 48, refb + 40, 4);
    gk_hash_value sum;
    ck_assert_int_eq(gk_digest_once(GK_HASH_SHA256, v1, 52, &sum, NULL), GK_OK);
    memcpy(v1 + 52, sum.bytes, 32);
    fp = fopen(j, "wb");
    fwrite(v1, 1, sizeof v1, fp);
    fclose(fp);
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_OK);
    ck_assert_int_eq(what, GK_RECOVERY_UNTOUCHED);
    fp = fopen(path, "r+b");   /* the range changed: unproven */
    fseek(fp, 40, SEEK_SET);
    fputs("XXXX", fp);
    fclose(fp);
    fp = fopen(j, "wb");
    fwrite(v1, 1, sizeof v1, fp);
    fclose(fp);
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_E_JOURNAL);
    ck_assert_ptr_nonnull(strstr(err.message, "--force"));
    ck_assert_int_eq(gk_journal_recover_force(path, 0, &what, &err), GK_OK);
    ck_assert_int_eq(what, GK_RECOVERY_RESTORED);
    now = read_whole_file(path, &len);
    ck_assert(len == ref_len && memcmp(now, refb, len) == 0);
    free(now);
    for (int b = 0; b < 8; b++) v1[8 + b] ^= 0x55;   /* another inode */
    ck_assert_int_eq(gk_digest_once(GK_HASH_SHA256, v1, 52, &sum, NULL), GK_OK);
    memcpy(v1 + 52, sum.bytes, 32);
    fp = fopen(j, "wb");
    fwrite(v1, 1, sizeof v1, fp);
    fclose(fp);
    ck_assert_int_eq(gk_journal_recover_force(path, 0, &what, &err), GK_E_JOURNAL);
    ck_assert_ptr_nonnull(strstr(err.message, "stale"));
    ck_assert_int_eq(gk_journal_discard(path, 0, &what, &err), GK_OK);
    ck_assert_int_ne(access(j, F_OK), 0);
    /* A journal whose file is gone: discarded. */
    fp = fopen(j, "wb");
    fwrite(v1, 1, sizeof v1, fp);
    fclose(fp);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "--discard-journal"));
    ck_assert_int_eq(gk_journal_discard(path, 0, &what, &err), GK_OK);
    ck_assert_int_ne(access(j, F_OK), 0);
    free(refb);
    free(ref);
    free(twin);
    free(other);
    free(j);
    free(path);
    remove_tmpdir();
}
END_TEST

/* The edit lock: one holder at a time (another open waits, then GK_E_LOCKED),
 * readers not kept out, recovery never takes the journal of a live editor, and
 * only an exclusive open may write in place or replace the file. */
START_TEST(test_edit_lock) {
    make_tmpdir("check_edit");
    char *path = path_in_tmp("m.gguf"), *j = path_in_tmp("m.gguf" GK_JOURNAL_SUFFIX);
    gk_model *m = write_padded(path);
    gk_file *held, *other, *reader;
    gk_error err;
    ck_assert_int_eq(gk_open_exclusive(path, 0, 0, NULL, &held, NULL), GK_OK);
    ck_assert_int_eq(gk_open_exclusive(path, 0, 50, NULL, &other, &err), GK_E_LOCKED);
    ck_assert_ptr_null(other);
    ck_assert_int_eq(gk_open(path, 0, &reader, NULL), GK_OK);
    /* a reader's handle cannot write */
    gk_model *e = gk_model_clone(gk_file_model(reader));
    ck_assert_int_eq(gk_kv_set_str(e, "general.name", "x", NULL), GK_OK);
    gk_inplace_plan plan;
    ck_assert_int_eq(gk_inplace_fit(reader, e, &plan, NULL), GK_OK);
    ck_assert(plan.fits);
    ck_assert_int_eq(gk_inplace_write(reader, e, NULL, &err), GK_E_ARG);
    ck_assert_int_eq(gk_edit_rewrite(reader, e, NULL, NULL, &err), GK_E_ARG);
    gk_model_free(e);
    gk_close(reader);
    /* the journal of the live holder is left alone */
    FILE *fp = fopen(j, "wb");
    fclose(fp);
    gk_recovery what;
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_E_LOCKED);
    ck_assert_int_eq(access(j, F_OK), 0);
    gk_close(held);
    ck_assert_int_eq(gk_journal_recover(path, 0, &what, &err), GK_OK);
    ck_assert_int_eq(what, GK_RECOVERY_TORN);
    /* once the holder is gone, the next one gets in */
    ck_assert_int_eq(gk_open_exclusive(path, 0, 0, NULL, &other, NULL), GK_OK);
    gk_close(other);
    free(j);
    free(path);
    gk_model_free(m);
    remove_tmpdir();
}
END_TEST

START_TEST(test_rewrite_replaces_input) {
    make_tmpdir("check_edit");
    char *path = path_in_tmp("m.gguf");
    gk_model *m = small_model();
    write_model(path, m);
    chmod(path, 0640);
    size_t old_len, new_len;
    uint8_t *old = read_whole_file(path, &old_len);
    gk_file *f;
    ck_assert_int_eq(gk_open_exclusive(path, 0, 0, NULL, &f, NULL), GK_OK);
    uint64_t d_old = gk_file_data_offset(f);
    gk_model *e = gk_model_clone(gk_file_model(f));
    gk_kv_set_str(e, "general.name", "a name long enough to move the data section by a block or two", NULL);
    ck_assert_int_eq(gk_edit_rewrite(f, e, NULL, NULL, NULL), GK_OK);
    gk_close(f);
    gk_model_free(e);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0640);
    uint8_t *now = read_whole_file(path, &new_len);
    ck_assert_int_eq(gk_open(path, 0, &f, NULL), GK_OK);
    uint64_t d_new = gk_file_data_offset(f);
    ck_assert_uint_gt(d_new, d_old);
    ck_assert_uint_eq(new_len - d_new, old_len - d_old);
    ck_assert_int_eq(memcmp(now + d_new, old + d_old, old_len - d_old), 0);
    gk_close(f);
    free(now);
    free(old);
    free(path);
    gk_model_free(m);
    remove_tmpdir();
}
END_TEST

static Suite *edit_suite(void) {
    Suite *s = suite_create("edit");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, test_key_names);
    tcase_add_test(rules, test_known_types);
    tcase_add_test(rules, test_refusals);
    suite_add_tcase(s, rules);
    TCase *values = tcase_create("values");
    tcase_add_test(values, test_set_keeps_type);
    tcase_add_test(values, test_inference);
    tcase_add_test(values, test_explicit_types);
    tcase_add_test(values, test_json_arrays);
    tcase_add_test(values, test_delete_rename);
    tcase_add_test(values, test_special_tokens);
    tcase_add_test(values, test_patch_sections);
    tcase_add_test(values, test_patch_dump_shape);
    suite_add_tcase(s, values);
    TCase *io = tcase_create("io");
    tcase_add_test(io, test_inplace_fit_and_padding);
    tcase_add_test(io, test_inplace_crash_recovery);
    tcase_add_test(io, test_journal_torn_and_foreign);
    tcase_add_test(io, test_journal_proves_its_file);
    tcase_add_test(io, test_edit_lock);
    tcase_add_test(io, test_rewrite_replaces_input);
    suite_add_tcase(s, io);
    return s;
}

int main(void) {
    return run_suite(edit_suite());
}
