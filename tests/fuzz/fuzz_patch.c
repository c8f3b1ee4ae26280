/*
 * fuzz_patch.c - libFuzzer harness for edit's JSON patch parser.
 *
 * The input is a patch document for gk_edit_add_patch (lib/edit/patch.c, over
 * the JSON reader of lib/edit/json.c). An accepted patch is applied to a small
 * model (metadata of every kind, a token list, one tensor), once as given and
 * once with GK_EDIT_FORCE, each on its own clone. The edited model must still
 * serialize and read back with the same pairs: edits never produce a header
 * the reader refuses. Every failure must explain itself (code and message).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"

static gk_model *base_model(void) {
    gk_model *m = gk_model_new();
    if (m == NULL) return NULL;
    gk_kv_set_str(m, "general.architecture", "llama", NULL);
    gk_kv_set_str(m, "general.name", "fuzz", NULL);
    gk_kv_set_u32(m, "llama.context_length", 2048, NULL);
    gk_kv_set_u32(m, "llama.block_count", 1, NULL);
    static const gk_str tokens[4] = { { "<s>", 3 }, { "</s>", 4 }, { "a", 1 }, { "b", 1 } };
    gk_value arr = { .type = GK_V_ARR, .arr = { GK_V_STR, 4, tokens } };
    gk_kv_set(m, "tokenizer.ggml.tokens", &arr, NULL);
    static const float scores[4] = { 0.0f, -1.0f, -2.5f, 3.0f };
    gk_value sc = { .type = GK_V_ARR, .arr = { GK_V_F32, 4, scores } };
    gk_kv_set(m, "tokenizer.ggml.scores", &sc, NULL);
    gk_value f = { .type = GK_V_F32, .f = 1e-5 };
    gk_kv_set(m, "llama.attention.layer_norm_rms_epsilon", &f, NULL);
    gk_value b = { .type = GK_V_BOOL, .b = true };
    gk_kv_set(m, "tokenizer.ggml.add_bos_token", &b, NULL);
    uint64_t ne[2] = { 32, 2 };
    gk_tensor_add(m, "blk.0.attn_q.weight", GK_TYPE_F32, 2, ne, NULL);
    gk_model_layout(m);
    return m;
}

static void check_failure(gk_status st, const gk_error *err) {
    if (st == GK_OK) return;
    if (err->code == GK_OK || err->message[0] == '\0') abort();
}

/* The edited model writes a header that reads back to the same keys. */
static void check_written(const gk_model *m) {
    uint8_t *hdr;
    size_t len;
    gk_error err;
    if (gk_header_serialize(m, &hdr, &len, &err) != GK_OK) {
        check_failure(GK_E_ARG, &err);
        return;
    }
    gk_file *g = NULL;
    if (gk_open_memory(hdr, len, GK_OPEN_LENIENT, &g, &err) != GK_OK) abort();
    const gk_model *r = gk_file_model(g);
    if (gk_kv_count(r) != gk_kv_count(m) || gk_tensor_count(r) != gk_tensor_count(m)) abort();
    for (size_t i = 0; i < gk_kv_count(m); i++) {
        const gk_kv *x = gk_kv_at(m, i), *y = gk_kv_at(r, i);
        if (x->key.len != y->key.len || memcmp(x->key.ptr, y->key.ptr, x->key.len) != 0) abort();
        if (x->value.type != y->value.type) abort();
    }
    gk_close(g);
    free(hdr);
}

static void apply_once(const gk_edit *e, const gk_model *base, unsigned flags) {
    gk_model *m = gk_model_clone(base);
    if (m == NULL) return;
    gk_edit_result res;
    gk_error err;
    memset(&res, 0, sizeof res);
    gk_status st = gk_edit_apply(e, m, flags, &res, &err);
    check_failure(st, &err);
    if (st == GK_OK) check_written(m);
    gk_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static gk_model *base;
    if (base == NULL && (base = base_model()) == NULL) return 0;
    gk_edit *e = gk_edit_new();
    if (e == NULL) return 0;
    gk_error err;
    gk_status st = gk_edit_add_patch(e, (const char *)data, size, &err);
    check_failure(st, &err);
    if (st == GK_OK && gk_edit_count(e) < 256) {
        apply_once(e, base, GK_EDIT_DEFAULT);
        apply_once(e, base, GK_EDIT_FORCE);
    }
    gk_edit_free(e);
    return 0;
}
