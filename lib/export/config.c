/*
 * config.c - config.json of an export: the class and model_type of the
 * architecture's rules (rules.c), the hyperparameters from their GGUF keys
 * under the names convert reads them by, the rope scaling (linear and yarn
 * from their keys; llama3 found back from the rope_freqs tensor), the special
 * token ids, tied embeddings and the dtype.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/rope.h"
#include "convert/vocab.h"
#include "export/export_internal.h"

void gk_exp_format_float(double v, char *buf, size_t size) {
    float want = (float)v;
    if (fabsf(want) < 1e15f && want == (float)(int64_t)want) {   /* the range first: the cast needs it */
        snprintf(buf, size, "%.1f", (double)want);
        return;
    }
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, size, "%.*g", prec, (double)want);
        if (strtof(buf, NULL) == want) break;
    }
    if (strpbrk(buf, ".eEn") == NULL && strlen(buf) + 3 <= size) strcat(buf, ".0");
}

typedef struct cfg {
    const gk_model *m;
    const char *arch;
    cJSON *root;
    bool ok;
} cfg;

static bool key_uint(const cfg *c, const char *key, uint64_t *v) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", c->arch, key);
    return gk_kv_get_uint(c->m, k, v) == GK_OK;
}

static bool key_float(const cfg *c, const char *key, double *v) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", c->arch, key);
    return gk_kv_get_float(c->m, k, v) == GK_OK;
}

static void put_int(cfg *c, cJSON *o, const char *name, uint64_t v) {
    c->ok = c->ok && cJSON_AddNumberToObject(o, name, (double)v);
}

static void put_float(cfg *c, cJSON *o, const char *name, double v) {
    char buf[48];
    gk_exp_format_float(v, buf, sizeof buf);
    c->ok = c->ok && cJSON_AddRawToObject(o, name, buf);
}

/* {arch}.KEY as config.json's NAME, when the GGUF has it. */
static void copy_uint(cfg *c, const char *key, const char *name) {
    uint64_t v;
    if (key_uint(c, key, &v)) put_int(c, c->root, name, v);
}

static void copy_float(cfg *c, cJSON *o, const char *key, const char *name) {
    double v;
    if (key_float(c, key, &v)) put_float(c, o, name, v);
}

/* The llama3 parameters whose factors are the rope_freqs tensor's, bit for
 * bit, among the values models use; false when none are. */
static gk_status llama3_fit(cfg *c, const gk_exp_source *in, gk_conv_llama3 *r, bool *found, gk_error *err) {
    *found = false;
    int64_t ti = gk_tensor_find(c->m, "rope_freqs.weight");
    if (ti < 0) return GK_OK;
    const gk_tensor *t = gk_tensor_at(c->m, (size_t)ti);
    uint64_t n = t->ne[0], dim = 0, heads = 0, embd = 0;
    if (!key_uint(c, "rope.dimension_count", &dim) && !key_uint(c, "attention.key_length", &dim) &&
        key_uint(c, "embedding_length", &embd) && key_uint(c, "attention.head_count", &heads) && heads)
        dim = embd / heads;
    if (t->type != GK_TYPE_F32 || t->n_dims != 1 || dim == 0 || n != (dim + 1) / 2 || n > 65536)
        return gk_error_set(err, GK_E_UNSUPPORTED, t->file_offset,
                            "tensor 'rope_freqs.weight': not the F32 llama3 rope factors of the model's head size");
    float *have = malloc(2 * n * sizeof *have), *mine = have + n;
    if (have == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = gk_exp_read(in, (size_t)ti, 0, have, n * sizeof *have, err);
    if (gk_model_big_endian(c->m))
        for (uint64_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &have[i], 4);
            u = __builtin_bswap32(u);
            memcpy(&have[i], &u, 4);
        }
    double base = 10000.0, factor = 0;
    key_float(c, "rope.freq_base", &base);
    for (uint64_t i = 0; i < n; i++)
        if (have[i] > factor) factor = have[i];
    uint64_t ctx = 0;
    key_uint(c, "context_length", &ctx);
    static const double lows[] = { 1, 2, 0.5, 4 }, highs[] = { 4, 2, 8, 16, 32, 1 };
    double ctxs[] = { 8192, 4096, 16384, 32768, 2048, 65536, 131072, 1024, 512, 256, 128, 262144,
                      (double)ctx, factor > 0 ? (double)(uint64_t)((double)ctx / factor) : 0 };
    for (size_t a = 0; s == GK_OK && !*found && a < sizeof lows / sizeof lows[0]; a++)
        for (size_t b = 0; !*found && b < sizeof highs / sizeof highs[0]; b++)
            for (size_t k = 0; !*found && k < sizeof ctxs / sizeof ctxs[0]; k++) {
                if (highs[b] <= lows[a] || ctxs[k] <= 0) continue;
                *r = (gk_conv_llama3){ base, factor, lows[a], highs[b], ctxs[k], (int64_t)dim };
                gk_conv_llama3_factors(r, mine);
                *found = memcmp(mine, have, n * sizeof *have) == 0;
            }
    free(have);
    if (s == GK_OK && !*found)
        return gk_error_set(err, GK_E_UNSUPPORTED, t->file_offset,
                            "tensor 'rope_freqs.weight': no llama3 rope scaling (factor, low/high frequency "
                            "factor, original context) gives these factors");
    return s;
}

static gk_status rope_scaling(cfg *c, const gk_exp_source *in, const gk_exp_plan *p, gk_error *err) {
    char k[128];
    snprintf(k, sizeof k, "%s.rope.scaling.type", c->arch);
    gk_str type = { 0 };
    bool has_type = gk_kv_get_str(c->m, k, &type) == GK_OK;
    gk_conv_llama3 r;
    bool l3 = false;
    if (p->conv->llama) {
        gk_status s = llama3_fit(c, in, &r, &l3, err);
        if (s != GK_OK) return s;
    }
    if (!l3 && !(has_type && (strcmp(type.ptr, "linear") == 0 || strcmp(type.ptr, "yarn") == 0))) return GK_OK;
    cJSON *rs = cJSON_AddObjectToObject(c->root, "rope_scaling");
    c->ok = c->ok && rs;
    if (!c->ok) return GK_OK;
    if (l3) {
        c->ok = cJSON_AddStringToObject(rs, "rope_type", "llama3") != NULL;
        put_float(c, rs, "factor", r.factor);
        put_float(c, rs, "low_freq_factor", r.low);
        put_float(c, rs, "high_freq_factor", r.high);
        put_int(c, rs, "original_max_position_embeddings", (uint64_t)r.old_ctx);
        return GK_OK;
    }
    c->ok = cJSON_AddStringToObject(rs, "rope_type", type.ptr) != NULL;
    copy_float(c, rs, "rope.scaling.factor", "factor");
    uint64_t orig;
    if (strcmp(type.ptr, "yarn") == 0) {
        if (key_uint(c, "rope.scaling.original_context_length", &orig))
            put_int(c, rs, "original_max_position_embeddings", orig);
        copy_float(c, rs, "rope.scaling.yarn_ext_factor", "extrapolation_factor");
        copy_float(c, rs, "rope.scaling.yarn_attn_factor", "attention_factor");
        copy_float(c, rs, "rope.scaling.yarn_beta_fast", "beta_fast");
        copy_float(c, rs, "rope.scaling.yarn_beta_slow", "beta_slow");
    }
    return GK_OK;
}

static const char *torch_dtype(uint32_t t) {
    return t == GK_TYPE_F32 ? "float32" : t == GK_TYPE_F16 ? "float16" : "bfloat16";
}

gk_status gk_exp_config(const gk_exp_source *in, const gk_exp_plan *p, char **out, gk_error *err) {
    *out = NULL;
    const gk_model *m = in->m;
    gk_str arch;
    gk_kv_get_str(m, "general.architecture", &arch);
    cfg c = { m, arch.ptr, cJSON_CreateObject(), true };
    c.ok = c.root != NULL;
    uint64_t experts = 0, v;
    key_uint(&c, "expert_count", &experts);
    bool moe = experts > 0;
    static const char *const required[] = { "block_count", "embedding_length", "attention.head_count" };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!key_uint(&c, required[i], &v)) {
            cJSON_Delete(c.root);
            return gk_error_set(err, GK_E_NOT_FOUND, -1, "key %s.%s is missing: config.json needs it", arch.ptr,
                                required[i]);
        }
    cJSON *list = cJSON_AddArrayToObject(c.root, "architectures");
    c.ok = c.ok && list && cJSON_AddItemToArray(list, cJSON_CreateString(p->conv->hf_name)) &&
           cJSON_AddStringToObject(c.root, "model_type", moe ? p->arch->moe_model_type : p->arch->model_type);
    /* vocab_size: the key, else the embedding's rows, else the tokens */
    int64_t emb = gk_tensor_find(m, "token_embd.weight");
    const gk_value *tokens = gk_kv_get(m, "tokenizer.ggml.tokens");
    if (key_uint(&c, "vocab_size", &v)) put_int(&c, c.root, "vocab_size", v);
    else if (emb >= 0) put_int(&c, c.root, "vocab_size", gk_tensor_at(m, (size_t)emb)->ne[1]);
    else if (tokens && tokens->type == GK_V_ARR) put_int(&c, c.root, "vocab_size", tokens->arr.n);
    copy_uint(&c, "embedding_length", "hidden_size");
    copy_uint(&c, "feed_forward_length", "intermediate_size");
    copy_uint(&c, "block_count", "num_hidden_layers");
    copy_uint(&c, "attention.head_count", "num_attention_heads");
    if (key_uint(&c, "attention.head_count_kv", &v)) put_int(&c, c.root, "num_key_value_heads", v);
    else copy_uint(&c, "attention.head_count", "num_key_value_heads");
    copy_uint(&c, "attention.key_length", "head_dim");
    copy_uint(&c, "context_length", "max_position_embeddings");
    copy_float(&c, c.root, "attention.layer_norm_rms_epsilon", "rms_norm_eps");
    copy_float(&c, c.root, "rope.freq_base", "rope_theta");
    gk_status s = rope_scaling(&c, in, p, err);
    if (moe && p->arch->expert_count_key) put_int(&c, c.root, p->arch->expert_count_key, experts);
    if (moe) copy_uint(&c, "expert_used_count", "num_experts_per_tok");
    if (moe) copy_uint(&c, "expert_feed_forward_length", "moe_intermediate_size");
    for (int i = 0; i < GK_CONV_N_SPECIAL; i++) {   /* the ids convert reads back from config.json */
        const char *key = gk_conv_special_key(i);
        char name[32];
        snprintf(name, sizeof name, "%s_token_id", gk_conv_special_type(i));
        if (key && gk_kv_get_uint(m, key, &v) == GK_OK) put_int(&c, c.root, name, v);
    }
    c.ok = c.ok && cJSON_AddStringToObject(c.root, "hidden_act", "silu") &&
           cJSON_AddBoolToObject(c.root, "tie_word_embeddings", p->tied) &&
           cJSON_AddStringToObject(c.root, "torch_dtype", torch_dtype(p->main_dtype));
    if (p->conv->llama)
        c.ok = c.ok && cJSON_AddBoolToObject(c.root, "attention_bias", gk_tensor_find(m, "blk.0.attn_q.bias") >= 0);
    char *text = s == GK_OK && c.ok ? cJSON_Print(c.root) : NULL;
    cJSON_Delete(c.root);
    if (s != GK_OK) return s;
    if (text == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    *out = text;
    return GK_OK;
}
