/*
 * check_schema.c - unit tests of the model conventions (lib/meta/schema.c).
 *
 * Each test builds a small llama-shaped model in memory (2 layers, n_embd 64,
 * 4 heads, 2 KV heads, n_ff 128, 32 tokens), breaks one thing and checks that
 * gk_schema_check reports it with the right severity and names what is wrong.
 * No files or golden data needed.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"

#define N_EMBD 64
#define N_FF 128
#define N_HEAD 4
#define N_HEAD_KV 2
#define N_LAYER 2
#define N_VOCAB 32

static void set_u32(gk_model *m, const char *key, uint32_t v) {
    ck_assert_int_eq(gk_kv_set_u32(m, key, v, NULL), GK_OK);
}

static void set_f32(gk_model *m, const char *key, float v) {
    gk_value val = { .type = GK_V_F32, .f = v };
    ck_assert_int_eq(gk_kv_set(m, key, &val, NULL), GK_OK);
}

static void set_value(gk_model *m, const char *key, gk_value v) {
    ck_assert_int_eq(gk_kv_set(m, key, &v, NULL), GK_OK);
}

static void add_tensor(gk_model *m, const char *name, uint32_t type, uint32_t n_dims, uint64_t a,
                       uint64_t b, uint64_t c) {
    uint64_t ne[3] = { a, b, c };
    ck_assert_int_eq(gk_tensor_add(m, name, type, n_dims, ne, NULL), GK_OK);
}

static gk_str token_strs[N_VOCAB];
static char token_text[N_VOCAB][16];
static float token_scores[N_VOCAB];
static int32_t token_types[N_VOCAB];

/* Metadata of the test model (no tensors). */
static gk_model *model_keys(void) {
    gk_model *m = gk_model_new();
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(gk_kv_set_str(m, "general.architecture", "llama", NULL), GK_OK);
    set_u32(m, "llama.context_length", 512);
    set_u32(m, "llama.embedding_length", N_EMBD);
    set_u32(m, "llama.block_count", N_LAYER);
    set_u32(m, "llama.feed_forward_length", N_FF);
    set_u32(m, "llama.rope.dimension_count", N_EMBD / N_HEAD);
    set_u32(m, "llama.attention.head_count", N_HEAD);
    set_u32(m, "llama.attention.head_count_kv", N_HEAD_KV);
    set_f32(m, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    set_f32(m, "llama.rope.freq_base", 10000.0f);
    ck_assert_int_eq(gk_kv_set_str(m, "tokenizer.ggml.model", "llama", NULL), GK_OK);
    for (int i = 0; i < N_VOCAB; i++) {
        snprintf(token_text[i], sizeof token_text[i], "t%d", i);
        token_strs[i].ptr = token_text[i];
        token_strs[i].len = strlen(token_text[i]);
        token_scores[i] = -(float)i;
        token_types[i] = 1;
    }
    gk_value tok = { .type = GK_V_ARR, .arr = { GK_V_STR, N_VOCAB, token_strs } };
    gk_value sc = { .type = GK_V_ARR, .arr = { GK_V_F32, N_VOCAB, token_scores } };
    gk_value tt = { .type = GK_V_ARR, .arr = { GK_V_I32, N_VOCAB, token_types } };
    set_value(m, "tokenizer.ggml.tokens", tok);
    set_value(m, "tokenizer.ggml.scores", sc);
    set_value(m, "tokenizer.ggml.token_type", tt);
    set_u32(m, "tokenizer.ggml.bos_token_id", 1);
    set_u32(m, "tokenizer.ggml.eos_token_id", 2);
    return m;
}

/* Adds the tensors of layer il. */
static void add_layer(gk_model *m, int il, uint32_t type) {
    char name[64];
    const uint64_t kv = N_EMBD / N_HEAD * N_HEAD_KV;
#define T(part, nd, a, b) (snprintf(name, sizeof name, "blk.%d." part ".weight", il), add_tensor(m, name, type, nd, a, b, 1))
    T("attn_norm", 1, N_EMBD, 1);
    T("attn_q", 2, N_EMBD, N_EMBD);
    T("attn_k", 2, N_EMBD, kv);
    T("attn_v", 2, N_EMBD, kv);
    T("attn_output", 2, N_EMBD, N_EMBD);
    T("ffn_norm", 1, N_EMBD, 1);
    T("ffn_gate", 2, N_EMBD, N_FF);
    T("ffn_up", 2, N_EMBD, N_FF);
    T("ffn_down", 2, N_FF, N_EMBD);
#undef T
}

/* The complete, valid test model: weights of type wtype, norms F32. */
static gk_model *model_full(uint32_t wtype) {
    gk_model *m = model_keys();
    add_tensor(m, "token_embd.weight", wtype, 2, N_EMBD, N_VOCAB, 1);
    for (int il = 0; il < N_LAYER; il++) add_layer(m, il, wtype);
    add_tensor(m, "output_norm.weight", GK_TYPE_F32, 1, N_EMBD, 1, 1);
    add_tensor(m, "output.weight", wtype, 2, N_EMBD, N_VOCAB, 1);
    return m;
}

/* Findings of m, owned by the test. */
typedef struct result {
    gk_finding *f;
    size_t n;
} result;

static result check(const gk_model *m) {
    result r;
    ck_assert_int_eq(gk_schema_check(m, &r.f, &r.n), GK_OK);
    return r;
}

static size_t count_level(const result *r, bool errors) {
    size_t c = 0;
    for (size_t i = 0; i < r->n; i++) c += r->f[i].is_error == errors;
    return c;
}

/* Asserts one finding of the given level contains every fragment. */
static void expect(const result *r, bool is_error, int nfrag, ...) {
    for (size_t i = 0; i < r->n; i++) {
        if (r->f[i].is_error != is_error) continue;
        va_list ap;
        va_start(ap, nfrag);
        bool all = true;
        for (int k = 0; k < nfrag; k++)
            if (strstr(r->f[i].message, va_arg(ap, const char *)) == NULL) all = false;
        va_end(ap);
        if (all) return;
    }
    for (size_t i = 0; i < r->n; i++)
        fprintf(stderr, "  finding: %s: %s\n", r->f[i].is_error ? "error" : "warning", r->f[i].message);
    ck_abort_msg("no %s finding with the expected text (%zu findings)", is_error ? "error" : "warning", r->n);
}

/* Checks m expecting exactly n_err errors, with one containing the fragments. */
#define EXPECT_ERROR(m, n_err, ...)                                                            \
    do {                                                                                       \
        result r_ = check(m);                                                                  \
        expect(&r_, true, sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *), __VA_ARGS__); \
        ck_assert_uint_eq(count_level(&r_, true), n_err);                                       \
        gk_findings_free(r_.f);                                                                \
    } while (0)

#define EXPECT_WARNING_ONLY(m, ...)                                                            \
    do {                                                                                       \
        result r_ = check(m);                                                                  \
        expect(&r_, false, sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(const char *), __VA_ARGS__); \
        ck_assert_uint_eq(count_level(&r_, true), 0);                                           \
        gk_findings_free(r_.f);                                                                \
    } while (0)

/* ------------------------------------------------------------------------ */

START_TEST(valid_model_is_clean) {
    uint32_t types[] = { GK_TYPE_F32, GK_TYPE_F16, GK_TYPE_Q8_0, GK_TYPE_Q4_0 };
    for (size_t k = 0; k < 4; k++) {
        gk_model *m = model_full(types[k]);
        result r = check(m);
        for (size_t i = 0; i < r.n; i++) fprintf(stderr, "unexpected: %s\n", r.f[i].message);
        ck_assert_uint_eq(r.n, 0);
        gk_findings_free(r.f);
        gk_model_free(m);
    }
}
END_TEST

START_TEST(tied_output_is_fine) {
    gk_model *m = model_keys();
    add_tensor(m, "token_embd.weight", GK_TYPE_F16, 2, N_EMBD, N_VOCAB, 1);
    for (int il = 0; il < N_LAYER; il++) add_layer(m, il, GK_TYPE_F16);
    add_tensor(m, "output_norm.weight", GK_TYPE_F32, 1, N_EMBD, 1, 1);
    result r = check(m);
    ck_assert_uint_eq(r.n, 0);
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

START_TEST(missing_architecture) {
    gk_model *m = model_full(GK_TYPE_F32);
    gk_kv_delete(m, "general.architecture");
    EXPECT_ERROR(m, 1, "general.architecture", "missing");
    ck_assert_int_eq(gk_kv_set_u32(m, "general.architecture", 5, NULL), GK_OK);
    EXPECT_ERROR(m, 1, "general.architecture", "UINT32", "expected STRING");
    gk_model_free(m);
}
END_TEST

START_TEST(missing_required_keys) {
    const char *keys[] = { "llama.context_length", "llama.embedding_length", "llama.block_count",
                           "llama.feed_forward_length", "llama.attention.head_count",
                           "llama.attention.layer_norm_rms_epsilon" };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        gk_model *m = model_full(GK_TYPE_F32);
        gk_kv_delete(m, keys[k]);
        result r = check(m);
        expect(&r, true, 2, keys[k], "missing");
        gk_findings_free(r.f);
        gk_model_free(m);
    }
}
END_TEST

START_TEST(optional_keys_may_be_absent) {
    gk_model *m = model_full(GK_TYPE_F32);
    gk_kv_delete(m, "llama.rope.dimension_count");
    gk_kv_delete(m, "llama.rope.freq_base");
    /* without head_count_kv the default is head_count: attn_k/v then must be n_embd wide */
    gk_kv_delete(m, "llama.attention.head_count_kv");
    EXPECT_ERROR(m, 4, "blk.0.attn_k.weight", "[64, 32]", "expected [64, 64]");
    set_u32(m, "llama.attention.head_count_kv", N_HEAD_KV);
    result r = check(m);
    ck_assert_uint_eq(r.n, 0);
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

START_TEST(wrong_key_types) {
    gk_model *m = model_full(GK_TYPE_F32);
    gk_value v = { .type = GK_V_U64, .u = 512 };
    set_value(m, "llama.context_length", v);
    EXPECT_ERROR(m, 1, "llama.context_length", "UINT64", "expected UINT32");
    set_u32(m, "llama.context_length", 512);
    gk_value d = { .type = GK_V_F64, .f = 1e-5 };
    set_value(m, "llama.attention.layer_norm_rms_epsilon", d);
    EXPECT_ERROR(m, 1, "layer_norm_rms_epsilon", "FLOAT64", "expected FLOAT32");
    set_f32(m, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    ck_assert_int_eq(gk_kv_set_str(m, "llama.block_count", "2", NULL), GK_OK);
    result r = check(m);
    expect(&r, true, 3, "llama.block_count", "STRING", "expected UINT32");
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

START_TEST(insensible_values) {
    gk_model *m = model_full(GK_TYPE_F32);
    set_u32(m, "llama.attention.head_count", 5);
    result r = check(m);
    expect(&r, true, 3, "head_count", "5 does not divide", "64");
    gk_findings_free(r.f);
    set_u32(m, "llama.attention.head_count", N_HEAD);
    set_u32(m, "llama.attention.head_count_kv", 3);
    r = check(m);
    expect(&r, true, 2, "head_count_kv", "3 does not divide head_count 4");
    gk_findings_free(r.f);
    set_u32(m, "llama.attention.head_count_kv", N_HEAD_KV);
    set_u32(m, "llama.context_length", 0);
    EXPECT_ERROR(m, 1, "llama.context_length", "is 0");
    set_u32(m, "llama.context_length", 512);
    set_f32(m, "llama.attention.layer_norm_rms_epsilon", -1.0f);
    EXPECT_ERROR(m, 1, "layer_norm_rms_epsilon", "positive");
    set_f32(m, "llama.attention.layer_norm_rms_epsilon", 0.5f);
    EXPECT_WARNING_ONLY(m, "layer_norm_rms_epsilon", "unusually large");
    set_f32(m, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    set_f32(m, "llama.rope.freq_base", 0.0f);
    EXPECT_ERROR(m, 1, "rope.freq_base", "positive");
    set_f32(m, "llama.rope.freq_base", 10000.0f);
    set_u32(m, "llama.rope.dimension_count", 8);
    EXPECT_ERROR(m, 1, "rope.dimension_count", "8, expected the head size 16");
    set_u32(m, "llama.rope.dimension_count", 32);
    EXPECT_ERROR(m, 1, "rope.dimension_count", "32 is larger than the head size 16");
    gk_model_free(m);
}
END_TEST

START_TEST(per_layer_head_counts) {
    gk_model *m = model_full(GK_TYPE_F32);
    uint32_t heads[N_LAYER] = { N_HEAD, N_HEAD };
    gk_value v = { .type = GK_V_ARR, .arr = { GK_V_U32, N_LAYER, heads } };
    set_value(m, "llama.attention.head_count", v);
    result r = check(m);
    ck_assert_uint_eq(r.n, 0);
    gk_findings_free(r.f);
    v.arr.n = 3;
    uint32_t three[3] = { 4, 4, 4 };
    v.arr.data = three;
    set_value(m, "llama.attention.head_count", v);
    r = check(m);
    expect(&r, true, 3, "head_count", "3 entries", "expected 2");
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

START_TEST(tokenizer_lengths) {
    gk_model *m = model_full(GK_TYPE_F32);
    gk_value sc = { .type = GK_V_ARR, .arr = { GK_V_F32, N_VOCAB - 1, token_scores } };
    set_value(m, "tokenizer.ggml.scores", sc);
    EXPECT_ERROR(m, 1, "tokenizer.ggml.scores", "31 entries", "expected 32");
    sc.arr.n = N_VOCAB;
    set_value(m, "tokenizer.ggml.scores", sc);
    gk_value tt = { .type = GK_V_ARR, .arr = { GK_V_I32, N_VOCAB + 1, token_types } };
    int32_t more[N_VOCAB + 1] = { 0 };
    tt.arr.data = more;
    set_value(m, "tokenizer.ggml.token_type", tt);
    EXPECT_ERROR(m, 1, "tokenizer.ggml.token_type", "33 entries", "expected 32");
    tt.arr.elem = GK_V_U8;
    set_value(m, "tokenizer.ggml.token_type", tt);
    EXPECT_ERROR(m, 1, "tokenizer.ggml.token_type", "UINT8", "INT32");
    gk_model_free(m);
}
END_TEST

START_TEST(tokenizer_merges) {
    gk_model *m = model_full(GK_TYPE_F32);
    ck_assert_int_eq(gk_kv_set_str(m, "tokenizer.ggml.model", "gpt2", NULL), GK_OK);
    EXPECT_ERROR(m, 1, "tokenizer.ggml.merges", "missing");
    gk_str merges[2] = { { "t 1", 3 }, { "t2", 2 } };
    gk_value v = { .type = GK_V_ARR, .arr = { GK_V_STR, 2, merges } };
    set_value(m, "tokenizer.ggml.merges", v);
    EXPECT_WARNING_ONLY(m, "tokenizer.ggml.merges", "entry 1", "no space");
    gk_model_free(m);
}
END_TEST

START_TEST(special_token_ids) {
    gk_model *m = model_full(GK_TYPE_F32);
    set_u32(m, "tokenizer.ggml.eos_token_id", N_VOCAB);
    EXPECT_WARNING_ONLY(m, "tokenizer.ggml.eos_token_id", "32 is out of range", "32 tokens");
    set_u32(m, "tokenizer.ggml.eos_token_id", 2);
    set_u32(m, "tokenizer.ggml.seperator_token_id", 1000);
    EXPECT_WARNING_ONLY(m, "tokenizer.ggml.seperator_token_id", "1000");
    gk_kv_delete(m, "tokenizer.ggml.seperator_token_id");
    const char *names[] = { "eot", "unknown", "padding", "mask", "bos" };
    for (size_t k = 0; k < 5; k++) {
        char key[64];
        snprintf(key, sizeof key, "tokenizer.ggml.%s_token_id", names[k]);
        set_u32(m, key, N_VOCAB + 5);
        EXPECT_WARNING_ONLY(m, key, "out of range");
        set_u32(m, key, 0);
    }
    gk_value i = { .type = GK_V_I32, .i = 1 };
    set_value(m, "tokenizer.ggml.bos_token_id", i);
    EXPECT_ERROR(m, 1, "tokenizer.ggml.bos_token_id", "INT32", "expected UINT32");
    gk_model_free(m);
}
END_TEST

START_TEST(missing_tensors) {
    gk_model *m = model_keys();
    add_tensor(m, "token_embd.weight", GK_TYPE_F32, 2, N_EMBD, N_VOCAB, 1);
    add_layer(m, 0, GK_TYPE_F32);
    /* layer 1 and output_norm missing */
    result r = check(m);
    expect(&r, true, 2, "output_norm.weight", "missing");
    expect(&r, true, 2, "blk.1.attn_q.weight", "missing");
    expect(&r, true, 2, "blk.1.ffn_down.weight", "missing");
    ck_assert_uint_eq(count_level(&r, true), 10);   /* output_norm + 9 per layer */
    gk_findings_free(r.f);
    gk_model_free(m);

    m = model_keys();
    add_layer(m, 0, GK_TYPE_F32);
    add_layer(m, 1, GK_TYPE_F32);
    add_tensor(m, "output_norm.weight", GK_TYPE_F32, 1, N_EMBD, 1, 1);
    EXPECT_ERROR(m, 1, "token_embd.weight", "missing");
    gk_model_free(m);
}
END_TEST

START_TEST(many_missing_are_summarized) {
    gk_model *m = model_keys();
    set_u32(m, "llama.block_count", 100);
    add_tensor(m, "token_embd.weight", GK_TYPE_F32, 2, N_EMBD, N_VOCAB, 1);
    result r = check(m);
    expect(&r, true, 2, "more required tensors missing", "901 in all");
    ck_assert_uint_le(r.n, 30);
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

START_TEST(layer_index_past_block_count) {
    gk_model *m = model_full(GK_TYPE_F32);
    add_tensor(m, "blk.2.attn_norm.weight", GK_TYPE_F32, 1, N_EMBD, 1, 1);
    EXPECT_ERROR(m, 1, "blk.2.attn_norm.weight", "layer 2", "block_count is 2");
    gk_model_free(m);
}
END_TEST

START_TEST(unknown_names_are_accepted) {
    gk_model *m = model_full(GK_TYPE_F32);
    add_tensor(m, "blk.0.attn_q.bias", GK_TYPE_F32, 1, N_EMBD, 1, 1);
    add_tensor(m, "blk.1.something_new.weight", GK_TYPE_F32, 1, 7, 1, 1);
    add_tensor(m, "rope_freqs.weight", GK_TYPE_F32, 1, N_EMBD / N_HEAD / 2, 1, 1);
    add_tensor(m, "my.extra", GK_TYPE_F32, 1, 3, 1, 1);
    result r = check(m);
    ck_assert_uint_eq(r.n, 0);
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

START_TEST(wrong_shapes) {
    struct { const char *name; uint32_t nd; uint64_t a, b; const char *frag; } cases[] = {
        { "token_embd.weight", 2, N_EMBD, N_VOCAB + 1, "expected [64, 32]" },
        { "output.weight", 2, N_EMBD + 32, N_VOCAB, "expected [64, 32]" },
        { "output_norm.weight", 1, N_EMBD * 2, 1, "expected [64]" },
        { "blk.0.attn_norm.weight", 2, N_EMBD, 2, "expected [64]" },
        { "blk.1.attn_q.weight", 2, N_EMBD, 32, "expected [64, 64]" },
        { "blk.0.attn_k.weight", 2, N_EMBD, N_EMBD, "expected [64, 32]" },
        { "blk.0.attn_v.weight", 2, 32, N_EMBD, "expected [64, 32]" },
        { "blk.0.attn_output.weight", 2, N_EMBD, 32, "expected [64, 64]" },
        { "blk.0.ffn_gate.weight", 2, N_EMBD, 64, "expected [64, 128]" },
        { "blk.0.ffn_up.weight", 2, N_FF, N_EMBD, "expected [64, 128]" },
        { "blk.1.ffn_down.weight", 2, N_EMBD, N_FF, "expected [128, 64]" },
        { "blk.1.ffn_norm.weight", 1, N_FF, 1, "expected [64]" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gk_model *full = model_full(GK_TYPE_F32);
        /* rebuild without the tensor under test, then add it with the wrong shape */
        gk_model *m = model_keys();
        for (size_t i = 0; i < gk_tensor_count(full); i++) {
            const gk_tensor *t = gk_tensor_at(full, i);
            if (strcmp(t->name.ptr, cases[k].name) == 0)
                add_tensor(m, t->name.ptr, t->type, cases[k].nd, cases[k].a, cases[k].b, 1);
            else
                ck_assert_int_eq(gk_tensor_add(m, t->name.ptr, t->type, t->n_dims, t->ne, NULL), GK_OK);
        }
        result r = check(m);
        expect(&r, true, 2, cases[k].name, cases[k].frag);
        ck_assert_uint_eq(count_level(&r, true), 1);
        gk_findings_free(r.f);
        gk_model_free(m);
        gk_model_free(full);
    }
}
END_TEST

START_TEST(fused_and_moe_variants) {
    /* phi3-style: fused qkv and fused gate+up */
    gk_model *m = model_keys();
    const uint64_t kv = N_EMBD / N_HEAD * N_HEAD_KV;
    add_tensor(m, "token_embd.weight", GK_TYPE_F32, 2, N_EMBD, N_VOCAB, 1);
    for (int il = 0; il < N_LAYER; il++) {
        char n[64];
        snprintf(n, sizeof n, "blk.%d.attn_norm.weight", il); add_tensor(m, n, 0, 1, N_EMBD, 1, 1);
        snprintf(n, sizeof n, "blk.%d.attn_qkv.weight", il); add_tensor(m, n, 0, 2, N_EMBD, N_EMBD + 2 * kv, 1);
        snprintf(n, sizeof n, "blk.%d.attn_output.weight", il); add_tensor(m, n, 0, 2, N_EMBD, N_EMBD, 1);
        snprintf(n, sizeof n, "blk.%d.ffn_norm.weight", il); add_tensor(m, n, 0, 1, N_EMBD, 1, 1);
        snprintf(n, sizeof n, "blk.%d.ffn_up.weight", il); add_tensor(m, n, 0, 2, N_EMBD, 2 * N_FF, 1);
        snprintf(n, sizeof n, "blk.%d.ffn_down.weight", il); add_tensor(m, n, 0, 2, N_FF, N_EMBD, 1);
    }
    add_tensor(m, "output_norm.weight", 0, 1, N_EMBD, 1, 1);
    ck_assert_int_eq(gk_kv_set_str(m, "general.architecture", "phi3", NULL), GK_OK);
    ck_assert_int_eq(gk_kv_rename(m, "llama.context_length", "phi3.context_length", NULL), GK_OK);
    const char *suffixes[] = { "embedding_length", "block_count", "feed_forward_length",
                               "rope.dimension_count", "attention.head_count",
                               "attention.head_count_kv", "attention.layer_norm_rms_epsilon",
                               "rope.freq_base" };
    for (size_t k = 0; k < 8; k++) {
        char a[96], b[96];
        snprintf(a, sizeof a, "llama.%s", suffixes[k]);
        snprintf(b, sizeof b, "phi3.%s", suffixes[k]);
        ck_assert_int_eq(gk_kv_rename(m, a, b, NULL), GK_OK);
    }
    result r = check(m);
    for (size_t i = 0; i < r.n; i++) fprintf(stderr, "unexpected: %s\n", r.f[i].message);
    ck_assert_uint_eq(r.n, 0);
    gk_findings_free(r.f);
    gk_model_free(m);

    /* MoE: 4 experts */
    m = model_keys();
    set_u32(m, "llama.expert_count", 4);
    set_u32(m, "llama.expert_used_count", 2);
    add_tensor(m, "token_embd.weight", GK_TYPE_F32, 2, N_EMBD, N_VOCAB, 1);
    for (int il = 0; il < N_LAYER; il++) {
        char n[64];
        snprintf(n, sizeof n, "blk.%d.attn_norm.weight", il); add_tensor(m, n, 0, 1, N_EMBD, 1, 1);
        snprintf(n, sizeof n, "blk.%d.attn_q.weight", il); add_tensor(m, n, 0, 2, N_EMBD, N_EMBD, 1);
        snprintf(n, sizeof n, "blk.%d.attn_k.weight", il); add_tensor(m, n, 0, 2, N_EMBD, kv, 1);
        snprintf(n, sizeof n, "blk.%d.attn_v.weight", il); add_tensor(m, n, 0, 2, N_EMBD, kv, 1);
        snprintf(n, sizeof n, "blk.%d.attn_output.weight", il); add_tensor(m, n, 0, 2, N_EMBD, N_EMBD, 1);
        snprintf(n, sizeof n, "blk.%d.ffn_norm.weight", il); add_tensor(m, n, 0, 1, N_EMBD, 1, 1);
        snprintf(n, sizeof n, "blk.%d.ffn_gate_inp.weight", il); add_tensor(m, n, 0, 2, N_EMBD, 4, 1);
        snprintf(n, sizeof n, "blk.%d.ffn_gate_exps.weight", il); add_tensor(m, n, 0, 3, N_EMBD, N_FF, 4);
        snprintf(n, sizeof n, "blk.%d.ffn_up_exps.weight", il); add_tensor(m, n, 0, 3, N_EMBD, N_FF, 4);
        if (il == 0) { snprintf(n, sizeof n, "blk.%d.ffn_down_exps.weight", il); add_tensor(m, n, 0, 3, N_FF, N_EMBD, 4); }
        else { snprintf(n, sizeof n, "blk.%d.ffn_down_exps.weight", il); add_tensor(m, n, 0, 3, N_FF, N_EMBD, 3); }
    }
    add_tensor(m, "output_norm.weight", 0, 1, N_EMBD, 1, 1);
    EXPECT_ERROR(m, 1, "blk.1.ffn_down_exps.weight", "[128, 64, 3]", "expected [128, 64, 4]");
    gk_model_free(m);
}
END_TEST

START_TEST(other_architecture_generic_only) {
    gk_model *m = gk_model_new();
    ck_assert_int_eq(gk_kv_set_str(m, "general.architecture", "gpt2", NULL), GK_OK);
    set_u32(m, "gpt2.context_length", 1024);
    set_u32(m, "gpt2.embedding_length", 64);
    set_u32(m, "gpt2.block_count", 1);
    add_tensor(m, "token_embd.weight", GK_TYPE_F32, 2, 64, 10, 1);
    add_tensor(m, "blk.0.whatever.weight", GK_TYPE_F32, 2, 3, 3, 1);
    result r = check(m);
    ck_assert_uint_eq(r.n, 1);
    expect(&r, false, 2, "no tensor rules for architecture gpt2", "generic");
    gk_findings_free(r.f);
    gk_kv_delete(m, "gpt2.block_count");
    EXPECT_ERROR(m, 1, "gpt2.block_count", "missing");
    gk_model_free(m);
}
END_TEST

START_TEST(vocab_only_is_a_warning) {
    gk_model *m = model_keys();
    result r = check(m);
    ck_assert_uint_eq(r.n, 1);
    expect(&r, false, 1, "vocab-only");
    gk_findings_free(r.f);
    gk_kv_delete(m, "llama.embedding_length");
    EXPECT_ERROR(m, 1, "llama.embedding_length", "missing");
    gk_model_free(m);
}
END_TEST

START_TEST(split_shards) {
    gk_model *m = gk_model_new();
    gk_value no = { .type = GK_V_U16, .u = 1 }, cnt = { .type = GK_V_U16, .u = 3 };
    set_value(m, "split.no", no);
    set_value(m, "split.count", cnt);
    add_tensor(m, "blk.0.ffn_up.weight", GK_TYPE_F32, 2, 8, 8, 1);
    EXPECT_WARNING_ONLY(m, "split shard 2 of 3");
    gk_model_free(m);

    /* the first shard: keys checked, present tensors checked, missing ones not */
    m = model_keys();
    no.u = 0;
    set_value(m, "split.no", no);
    set_value(m, "split.count", cnt);
    add_tensor(m, "token_embd.weight", GK_TYPE_F32, 2, N_EMBD, N_VOCAB, 1);
    add_tensor(m, "blk.0.attn_norm.weight", GK_TYPE_F32, 1, N_EMBD, 1, 1);
    EXPECT_WARNING_ONLY(m, "split shard 1 of 3");
    add_tensor(m, "blk.0.attn_q.weight", GK_TYPE_F32, 2, N_EMBD, 8, 1);
    EXPECT_ERROR(m, 1, "blk.0.attn_q.weight", "expected [64, 64]");
    gk_model_free(m);
}
END_TEST

START_TEST(key_length_overrides_head_size) {
    gk_model *m = model_full(GK_TYPE_F32);
    /* head_count 5 does not divide 64, but an explicit head size makes that fine;
     * q is then n_head * key_length wide */
    set_u32(m, "llama.attention.key_length", 16);
    set_u32(m, "llama.attention.value_length", 16);
    set_u32(m, "llama.attention.head_count", 4);
    result r = check(m);
    ck_assert_uint_eq(r.n, 0);
    gk_findings_free(r.f);
    set_u32(m, "llama.attention.key_length", 32);
    set_u32(m, "llama.rope.dimension_count", 32);
    r = check(m);
    expect(&r, true, 2, "blk.0.attn_q.weight", "expected [64, 128]");
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

START_TEST(vocab_size_disagreement) {
    gk_model *m = model_full(GK_TYPE_F32);
    set_u32(m, "llama.vocab_size", N_VOCAB);
    result r = check(m);
    ck_assert_uint_eq(r.n, 0);
    gk_findings_free(r.f);
    set_u32(m, "llama.vocab_size", 1000);
    EXPECT_WARNING_ONLY(m, "llama.vocab_size", "1000", "32 entries");
    /* without a token list, vocab_size sets the expected embedding rows */
    gk_kv_delete(m, "tokenizer.ggml.tokens");
    gk_kv_delete(m, "tokenizer.ggml.scores");
    gk_kv_delete(m, "tokenizer.ggml.token_type");
    r = check(m);
    expect(&r, true, 2, "token_embd.weight", "expected [64, 1000]");
    expect(&r, false, 2, "tokenizer.ggml.tokens", "missing");
    gk_findings_free(r.f);
    gk_model_free(m);
}
END_TEST

static Suite *schema_suite(void) {
    Suite *s = suite_create("schema");
    TCase *tc = tcase_create("conventions");
    tcase_add_test(tc, valid_model_is_clean);
    tcase_add_test(tc, tied_output_is_fine);
    tcase_add_test(tc, missing_architecture);
    tcase_add_test(tc, missing_required_keys);
    tcase_add_test(tc, optional_keys_may_be_absent);
    tcase_add_test(tc, wrong_key_types);
    tcase_add_test(tc, insensible_values);
    tcase_add_test(tc, per_layer_head_counts);
    tcase_add_test(tc, tokenizer_lengths);
    tcase_add_test(tc, tokenizer_merges);
    tcase_add_test(tc, special_token_ids);
    tcase_add_test(tc, missing_tensors);
    tcase_add_test(tc, many_missing_are_summarized);
    tcase_add_test(tc, layer_index_past_block_count);
    tcase_add_test(tc, unknown_names_are_accepted);
    tcase_add_test(tc, wrong_shapes);
    tcase_add_test(tc, fused_and_moe_variants);
    tcase_add_test(tc, other_architecture_generic_only);
    tcase_add_test(tc, vocab_only_is_a_warning);
    tcase_add_test(tc, split_shards);
    tcase_add_test(tc, key_length_overrides_head_size);
    tcase_add_test(tc, vocab_size_disagreement);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(schema_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
