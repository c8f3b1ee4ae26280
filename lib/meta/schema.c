/*
 * schema.c - model-family conventions for `ggufkit verify --schema`.
 *
 * The GGUF container can be perfectly valid and still hold a model llama.cpp
 * cannot load: a missing hyperparameter, a tokenizer whose arrays disagree, a
 * layer without its attention weights, a weight whose shape does not follow
 * from the hyperparameters. These checks look for that, following what
 * llama.cpp's loader (build 4748) requires of LLaMA-family models.
 *
 * Severity: an error is something llama.cpp refuses to load (a required key
 * missing or of the wrong type - its loader wants UINT32 / FLOAT32 exactly -,
 * a value that makes the model meaningless, a required tensor missing, a shape
 * that disagrees, a blk index past block_count); a warning is something odd
 * that still loads (an out-of-range special token id, which llama.cpp replaces
 * by its default, a rope dimension count that is odd, ...).
 *
 * What is checked for which file:
 *   - every file: general.architecture (a string) and the keys every
 *     architecture in llama.cpp has: ARCH.context_length, ARCH.embedding_length,
 *     ARCH.block_count; the tokenizer arrays (element types, scores and
 *     token_type as long as tokens, merges present for a "gpt2" tokenizer) and
 *     the special token ids (in range of the vocabulary).
 *   - LLaMA-like architectures (llama_like_archs below): also the attention and
 *     feed-forward hyperparameters, and the tensor directory: token_embd,
 *     output_norm, output (optional: tied embeddings), every layer's attention
 *     (attn_q/k/v or fused attn_qkv), attn_output, norms and feed-forward
 *     (ffn_gate/up/down, a fused gate+up ffn_up, or the MoE ffn_*_exps set), with
 *     their shapes. Tensor names the rules do not know are accepted silently.
 *   - other architectures: the generic part only, and one warning
 *     "no tensor rules for architecture X".
 *   - a file without tensors (a vocab-only file as written by llama.cpp's
 *     converter with --vocab-only, like the golden real/ files): one warning that
 *     it is vocab-only; the keys and tokenizer are still checked (llama.cpp reads
 *     the hyperparameters even for vocab-only loads), the tensor checks are not.
 *   - a shard of a split model (split.count > 1): shards after the first carry
 *     no model metadata, so they get one warning and no key checks; in every
 *     shard, tensors present are checked for names and shapes (when the
 *     hyperparameters are at hand) but missing tensors are not reported, as they
 *     live in other shards.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"
#include "meta/keys.h"    /* gk_special_token_key */
#include "meta/value.h"   /* gk_vtype_is_integer */
#include "util/grow.h"

#define MAX_LAYERS 65536          /* more blocks than any real model: refuse to enumerate */
#define MAX_MISSING_REPORTED 24   /* missing tensors named one by one, then summarized */

/* Architectures whose tensors follow the LLaMA layout in llama.cpp. */
static const char *const llama_like_archs[] = {
    "llama", "mistral", "baichuan", "internlm2", "qwen2", "qwen2moe", "qwen3", "qwen3moe",
    "granite", "granitemoe", "minicpm", "xverse", "phi3", "gemma", "gemma2", "gemma3",
};

/* The findings gathered so far. */
typedef struct findings {
    gk_finding *items;
    size_t n, cap;
    bool nomem;
} findings;

/* A hyperparameter that may be one number or one number per layer. */
typedef struct layered {
    bool known;               /* present (or defaulted) and valid */
    uint64_t scalar;
    const gk_value *arr;      /* per-layer array (U32 or I32), or NULL */
} layered;

/* Everything the tensor rules need, gathered from the metadata. */
typedef struct hparams {
    char arch[64];
    bool llama_like;
    uint64_t n_embd, n_layer, n_vocab, n_rot, n_expert, n_ff_exp;
    uint64_t head_k, head_v;  /* fixed per-head sizes (attention.key_length/value_length), 0 if absent */
    layered n_head, n_head_kv, n_ff;
    bool split_shard;         /* one shard of a split model: tensors elsewhere */
} hparams;

static void add(findings *fs, bool is_error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Appends one finding; remembers an allocation failure instead of reporting it. */
static void add(findings *fs, bool is_error, const char *fmt, ...) {
    if (fs->nomem) return;
    if (!GK_GROW(fs->items, fs->cap, fs->n + 1, 16)) {
        fs->nomem = true;
        return;
    }
    gk_finding *f = &fs->items[fs->n++];
    f->is_error = is_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
}

#define ERROR(...) add(fs, true, __VA_ARGS__)
#define WARN(...) add(fs, false, __VA_ARGS__)

static const char *vtype_label(const gk_value *v) {
    const char *n = gk_vtype_name(v->type);
    return n ? n : "?";
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                     */
/* ------------------------------------------------------------------------ */

/* Reads ARCH.suffix as a UINT32. Absent: an error when required. Present with
 * another type: an error (llama.cpp's loader demands the exact type).
 * @return : true when *out holds the value. */
static bool get_u32(findings *fs, const gk_model *m, const hparams *hp, const char *suffix,
                    bool required, uint64_t *out) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", hp->arch, suffix);
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL) {
        if (required) ERROR("%s: missing (required for architecture '%s')", key, hp->arch);
        return false;
    }
    if (v->type != GK_V_U32) {
        if (gk_vtype_is_integer(v->type))
            ERROR("%s: type %s, expected UINT32 (llama.cpp refuses other integer types)", key,
                  vtype_label(v));
        else
            ERROR("%s: type %s, expected UINT32", key, vtype_label(v));
        return false;
    }
    *out = v->u;
    return true;
}

/* Reads ARCH.suffix as a FLOAT32 into *out. @return : true when present and F32. */
static bool get_f32(findings *fs, const gk_model *m, const hparams *hp, const char *suffix,
                    bool required, double *out) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", hp->arch, suffix);
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL) {
        if (required) ERROR("%s: missing (required for architecture '%s')", key, hp->arch);
        return false;
    }
    if (v->type != GK_V_F32) {
        ERROR("%s: type %s, expected FLOAT32", key, vtype_label(v));
        return false;
    }
    *out = v->f;
    return true;
}

/* Element il of a per-layer U32/I32 array. */
static int64_t layer_elem(const gk_value *arr, uint64_t il) {
    if (arr->arr.elem == GK_V_U32) return ((const uint32_t *)arr->arr.data)[il];
    return ((const int32_t *)arr->arr.data)[il];
}

/* The value of a layered hyperparameter for layer il (0 when unknown). */
static uint64_t at_layer(const layered *l, uint64_t il) {
    if (!l->known) return 0;
    if (l->arr == NULL) return l->scalar;
    if (il >= l->arr->arr.n) return 0;
    int64_t v = layer_elem(l->arr, il);
    return v > 0 ? (uint64_t)v : 0;
}

/* Reads a hyperparameter that llama.cpp accepts as a UINT32 or as a per-layer
 * array of INT32/UINT32 with block_count entries; every value must be positive
 * unless allow_zero. */
static void get_layered(findings *fs, const gk_model *m, const hparams *hp, const char *suffix,
                        bool required, bool allow_zero, layered *out) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", hp->arch, suffix);
    memset(out, 0, sizeof *out);
    const gk_value *v = gk_kv_get(m, key);
    if (v != NULL && v->type == GK_V_ARR) {
        if (v->arr.elem != GK_V_U32 && v->arr.elem != GK_V_I32) {
            ERROR("%s: array of %s, expected UINT32 or an array of INT32/UINT32", key,
                  gk_vtype_name(v->arr.elem) ? gk_vtype_name(v->arr.elem) : "?");
            return;
        }
        if (hp->n_layer != 0 && v->arr.n != hp->n_layer) {
            ERROR("%s: per-layer array has %llu entries, expected %llu (block_count)", key,
                  (unsigned long long)v->arr.n, (unsigned long long)hp->n_layer);
            return;
        }
        for (uint64_t i = 0; i < v->arr.n; i++) {
            int64_t e = layer_elem(v, i);
            if (e < 0 || (e == 0 && !allow_zero)) {
                ERROR("%s: layer %llu has %lld, expected a positive value", key,
                      (unsigned long long)i, (long long)e);
                return;
            }
        }
        out->known = true;
        out->arr = v;
        return;
    }
    uint64_t x;
    if (!get_u32(fs, m, hp, suffix, required, &x)) return;
    if (x == 0 && !allow_zero) {
        ERROR("%s: is 0, expected a positive value", key);
        return;
    }
    out->known = true;
    out->scalar = x;
}

/* Reads the architecture name. @return : false when absent or not a string. */
static bool read_arch(findings *fs, const gk_model *m, hparams *hp) {
    const gk_value *v = gk_kv_get(m, "general.architecture");
    if (v == NULL) {
        ERROR("general.architecture: missing (every model names its architecture)");
        return false;
    }
    if (v->type != GK_V_STR) {
        ERROR("general.architecture: type %s, expected STRING", vtype_label(v));
        return false;
    }
    if (v->s.len == 0 || v->s.len >= sizeof hp->arch || memchr(v->s.ptr, '\0', v->s.len)) {
        ERROR("general.architecture: \"%.*s\" is not a usable architecture name",
              (int)(v->s.len > 60 ? 60 : v->s.len), v->s.ptr);
        return false;
    }
    memcpy(hp->arch, v->s.ptr, v->s.len);
    hp->arch[v->s.len] = '\0';
    for (size_t i = 0; i < sizeof llama_like_archs / sizeof llama_like_archs[0]; i++)
        if (strcmp(hp->arch, llama_like_archs[i]) == 0) hp->llama_like = true;
    return true;
}

/* The keys every architecture has. */
static void check_generic_keys(findings *fs, const gk_model *m, hparams *hp) {
    uint64_t x;
    if (get_u32(fs, m, hp, "context_length", true, &x) && x == 0)
        ERROR("%s.context_length: is 0, expected a positive value", hp->arch);
    if (get_u32(fs, m, hp, "embedding_length", true, &x)) {
        if (x == 0) ERROR("%s.embedding_length: is 0, expected a positive value", hp->arch);
        else hp->n_embd = x;
    }
    if (get_u32(fs, m, hp, "block_count", true, &x)) {
        if (x == 0) ERROR("%s.block_count: is 0, expected a positive value", hp->arch);
        else if (x > MAX_LAYERS)
            ERROR("%s.block_count: %llu layers is implausible (at most %d checked)", hp->arch,
                  (unsigned long long)x, MAX_LAYERS);
        else hp->n_layer = x;
    }
}

/* Attention head counts: positive, dividing the embedding (unless the head size
 * is given), head_count_kv dividing head_count, layer by layer. */
static void check_heads(findings *fs, const hparams *hp) {
    if (!hp->n_head.known) return;
    uint64_t layers = hp->n_layer ? hp->n_layer : 1;
    for (uint64_t il = 0; il < layers; il++) {
        uint64_t nh = at_layer(&hp->n_head, il), nkv = at_layer(&hp->n_head_kv, il);
        if (nh == 0) continue;
        if (hp->head_k == 0 && hp->n_embd != 0 && hp->n_embd % nh != 0) {
            ERROR("%s.attention.head_count: %llu does not divide %s.embedding_length %llu%s",
                  hp->arch, (unsigned long long)nh, hp->arch, (unsigned long long)hp->n_embd,
                  hp->n_head.arr ? " (first such layer reported)" : "");
            return;
        }
        if (nkv != 0 && nh % nkv != 0) {
            ERROR("%s.attention.head_count_kv: %llu does not divide head_count %llu (layer %llu)",
                  hp->arch, (unsigned long long)nkv, (unsigned long long)nh, (unsigned long long)il);
            return;
        }
    }
}

/* Per-head key size for rope checks: attention.key_length or n_embd / n_head. */
static uint64_t head_dim_k(const hparams *hp, uint64_t il) {
    if (hp->head_k) return hp->head_k;
    uint64_t nh = at_layer(&hp->n_head, il);
    return nh && hp->n_embd ? hp->n_embd / nh : 0;
}

/* The hyperparameters of LLaMA-like architectures. */
static void check_llama_keys(findings *fs, const gk_model *m, hparams *hp) {
    uint64_t x;
    double eps, base;
    get_layered(fs, m, hp, "feed_forward_length", true, false, &hp->n_ff);
    get_layered(fs, m, hp, "attention.head_count", true, false, &hp->n_head);
    char key[160];
    snprintf(key, sizeof key, "%s.attention.head_count_kv", hp->arch);
    if (gk_kv_get(m, key) != NULL) get_layered(fs, m, hp, "attention.head_count_kv", false, false, &hp->n_head_kv);
    else hp->n_head_kv = hp->n_head;   /* default: no grouped-query attention */
    if (get_u32(fs, m, hp, "attention.key_length", false, &x)) {
        if (x == 0) ERROR("%s.attention.key_length: is 0, expected a positive value", hp->arch);
        else hp->head_k = x;
    }
    if (get_u32(fs, m, hp, "attention.value_length", false, &x)) {
        if (x == 0) ERROR("%s.attention.value_length: is 0, expected a positive value", hp->arch);
        else hp->head_v = x;
    }
    if (hp->head_v == 0) hp->head_v = hp->head_k;
    check_heads(fs, hp);

    if (get_f32(fs, m, hp, "attention.layer_norm_rms_epsilon", true, &eps)) {
        if (!(eps > 0) || isinf(eps))
            ERROR("%s.attention.layer_norm_rms_epsilon: %g, expected a small positive number",
                  hp->arch, eps);
        else if (eps > 0.01)
            WARN("%s.attention.layer_norm_rms_epsilon: %g is unusually large (typical: 1e-6 .. 1e-5)",
                 hp->arch, eps);
    }
    if (get_u32(fs, m, hp, "rope.dimension_count", false, &x)) {
        uint64_t hd = head_dim_k(hp, 0);
        if (x == 0)
            ERROR("%s.rope.dimension_count: is 0, expected a positive value", hp->arch);
        else if (hd != 0 && x > hd)
            ERROR("%s.rope.dimension_count: %llu is larger than the head size %llu", hp->arch,
                  (unsigned long long)x, (unsigned long long)hd);
        else if (hd != 0 && x != hd && strcmp(hp->arch, "llama") == 0)
            ERROR("%s.rope.dimension_count: %llu, expected the head size %llu (llama.cpp requires "
                  "them equal for llama)", hp->arch, (unsigned long long)x, (unsigned long long)hd);
        else if (x % 2 != 0)
            WARN("%s.rope.dimension_count: %llu is odd (rotary embeddings rotate pairs)", hp->arch,
                 (unsigned long long)x);
        hp->n_rot = x;
    } else {
        hp->n_rot = head_dim_k(hp, 0);
    }
    if (get_f32(fs, m, hp, "rope.freq_base", false, &base) && (!(base > 0) || isinf(base)))
        ERROR("%s.rope.freq_base: %g, expected a positive number", hp->arch, base);
    if (get_u32(fs, m, hp, "expert_count", false, &x)) hp->n_expert = x;
    uint64_t used;
    if (get_u32(fs, m, hp, "expert_used_count", false, &used) && hp->n_expert != 0 &&
        (used == 0 || used > hp->n_expert))
        ERROR("%s.expert_used_count: %llu, expected 1 .. expert_count %llu", hp->arch,
              (unsigned long long)used, (unsigned long long)hp->n_expert);
    if (get_u32(fs, m, hp, "expert_feed_forward_length", false, &x)) hp->n_ff_exp = x;
    uint64_t vs;
    if (get_u32(fs, m, hp, "vocab_size", false, &vs) && hp->n_vocab != 0 && vs != hp->n_vocab)
        WARN("%s.vocab_size: %llu, but tokenizer.ggml.tokens has %llu entries", hp->arch,
             (unsigned long long)vs, (unsigned long long)hp->n_vocab);
    if (hp->n_vocab == 0 && vs != 0) hp->n_vocab = vs;
}

/* ------------------------------------------------------------------------ */
/* Tokenizer                                                                */
/* ------------------------------------------------------------------------ */

/* An optional tokenizer array: must be an array of elem. @return : it, or NULL. */
static const gk_value *tokenizer_array(findings *fs, const gk_model *m, const char *key,
                                       gk_vtype elem) {
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL) return NULL;
    if (v->type != GK_V_ARR) {
        ERROR("%s: type %s, expected an array of %s", key, vtype_label(v), gk_vtype_name(elem));
        return NULL;
    }
    if (v->arr.elem != elem) {
        ERROR("%s: array of %s, expected an array of %s", key,
              gk_vtype_name(v->arr.elem) ? gk_vtype_name(v->arr.elem) : "?", gk_vtype_name(elem));
        return NULL;
    }
    return v;
}

static void check_tokenizer(findings *fs, const gk_model *m, hparams *hp, bool has_tensors) {
    const gk_value *tokens = tokenizer_array(fs, m, "tokenizer.ggml.tokens", GK_V_STR);
    const gk_value *scores = tokenizer_array(fs, m, "tokenizer.ggml.scores", GK_V_F32);
    const gk_value *types = tokenizer_array(fs, m, "tokenizer.ggml.token_type", GK_V_I32);
    const gk_value *merges = tokenizer_array(fs, m, "tokenizer.ggml.merges", GK_V_STR);
    gk_str model = { 0 };
    const gk_value *mv = gk_kv_get(m, "tokenizer.ggml.model");
    if (mv != NULL && mv->type != GK_V_STR)
        ERROR("tokenizer.ggml.model: type %s, expected STRING", vtype_label(mv));
    else if (mv != NULL)
        model = mv->s;
    bool no_vocab = model.ptr && (strcmp(model.ptr, "none") == 0 || strcmp(model.ptr, "no_vocab") == 0);

    if (tokens == NULL) {
        if (gk_kv_get(m, "tokenizer.ggml.tokens") == NULL && !no_vocab && has_tensors && hp->llama_like)
            WARN("tokenizer.ggml.tokens: missing (the model has no vocabulary; llama.cpp needs one "
                 "unless tokenizer.ggml.model is \"none\")");
    } else {
        uint64_t n = tokens->arr.n;
        if (n == 0) ERROR("tokenizer.ggml.tokens: empty array");
        hp->n_vocab = n;
        if (scores && scores->arr.n != n)
            ERROR("tokenizer.ggml.scores: %llu entries, expected %llu (one per token)",
                  (unsigned long long)scores->arr.n, (unsigned long long)n);
        if (types && types->arr.n != n)
            ERROR("tokenizer.ggml.token_type: %llu entries, expected %llu (one per token)",
                  (unsigned long long)types->arr.n, (unsigned long long)n);
        if (model.ptr && strcmp(model.ptr, "gpt2") == 0 && merges == NULL &&
            gk_kv_get(m, "tokenizer.ggml.merges") == NULL)
            ERROR("tokenizer.ggml.merges: missing (required by the \"gpt2\" BPE tokenizer)");
        if (model.ptr == NULL && mv == NULL)
            WARN("tokenizer.ggml.model: missing while tokenizer.ggml.tokens is present");
    }
    if (merges) {
        const gk_str *items = merges->arr.data;
        for (uint64_t i = 0; i < merges->arr.n; i++) {
            if (memchr(items[i].ptr, ' ', items[i].len) == NULL) {
                WARN("tokenizer.ggml.merges: entry %llu \"%.*s\" has no space between its two parts",
                     (unsigned long long)i, (int)(items[i].len > 40 ? 40 : items[i].len), items[i].ptr);
                break;
            }
        }
    }
    const char *key;
    for (size_t k = 0; (key = gk_special_token_key(k)) != NULL; k++) {
        const gk_value *v = gk_kv_get(m, key);
        if (v == NULL) continue;
        if (v->type != GK_V_U32) {
            ERROR("%s: type %s, expected UINT32", key, vtype_label(v));
            continue;
        }
        if (tokens != NULL && v->u >= tokens->arr.n)
            WARN("%s: %llu is out of range: the vocabulary has %llu tokens (llama.cpp ignores it)",
                 key, (unsigned long long)v->u, (unsigned long long)tokens->arr.n);
    }
}

/* ------------------------------------------------------------------------ */
/* Tensors                                                                  */
/* ------------------------------------------------------------------------ */

/* The per-layer tensors the rules know (name "blk.N.<part>.weight"). */
enum part {
    P_ATTN_NORM, P_ATTN_Q, P_ATTN_K, P_ATTN_V, P_ATTN_QKV, P_ATTN_OUT, P_FFN_NORM, P_FFN_GATE,
    P_FFN_UP, P_FFN_DOWN, P_FFN_GATE_INP, P_FFN_GATE_EXPS, P_FFN_UP_EXPS, P_FFN_DOWN_EXPS,
    P_COUNT
};

static const char *const part_names[P_COUNT] = {
    "attn_norm", "attn_q", "attn_k", "attn_v", "attn_qkv", "attn_output", "ffn_norm", "ffn_gate",
    "ffn_up", "ffn_down", "ffn_gate_inp", "ffn_gate_exps", "ffn_up_exps", "ffn_down_exps",
};

/* What one layer holds: the index of each known part, or -1. */
typedef struct layer_parts {
    int64_t idx[P_COUNT];
} layer_parts;

/* Splits "blk.N.rest": @return : true with *layer and *rest set. A malformed N
 * (no digits, leading zeros, overflow) is not a layer name. */
static bool parse_blk(const char *name, uint64_t *layer, const char **rest) {
    if (strncmp(name, "blk.", 4) != 0) return false;
    const char *p = name + 4;
    if (*p < '0' || *p > '9') return false;
    if (p[0] == '0' && p[1] >= '0' && p[1] <= '9') return false;
    uint64_t n = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > UINT64_MAX / 10 - 1) return false;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    if (*p != '.') return false;
    *layer = n;
    *rest = p + 1;
    return true;
}

static int find_part(const char *rest) {
    size_t len = strlen(rest);
    if (len <= 7 || strcmp(rest + len - 7, ".weight") != 0) return -1;
    for (int p = 0; p < P_COUNT; p++)
        if (strlen(part_names[p]) == len - 7 && strncmp(rest, part_names[p], len - 7) == 0) return p;
    return -1;
}

/* Formats ne[0..n) as "[a, b, c]". Zero means "any" in an expected shape. */
static void shape_text(char *buf, size_t cap, const uint64_t *ne, int n) {
    size_t used = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < n && used < cap; d++) {
        if (ne[d] == 0) used += (size_t)snprintf(buf + used, cap - used, "%s?", d ? ", " : "");
        else used += (size_t)snprintf(buf + used, cap - used, "%s%llu", d ? ", " : "", (unsigned long long)ne[d]);
    }
    if (used < cap) snprintf(buf + used, cap - used, "]");
}

/* Compares t's shape with the expected one (n dims; 0 = any; missing dims are 1). */
static void expect_shape(findings *fs, const gk_tensor *t, int n, uint64_t e0, uint64_t e1,
                         uint64_t e2, const char *meaning) {
    uint64_t want[GK_MAX_DIMS] = { e0, e1, e2, 1 };
    for (int d = n; d < GK_MAX_DIMS; d++) want[d] = 1;
    for (int d = 0; d < GK_MAX_DIMS; d++) {
        if (want[d] != 0 && t->ne[d] != want[d]) {
            char got[96], exp[96];
            int shown = (int)(t->n_dims > (uint32_t)n ? t->n_dims : (uint32_t)n);
            shape_text(got, sizeof got, t->ne, shown);
            shape_text(exp, sizeof exp, want, n);
            ERROR("tensor '%s': shape %s, expected %s (%s)", t->name.ptr, got, exp, meaning);
            return;
        }
    }
}

/* Shape rules for one known per-layer tensor. */
static void check_layer_tensor(findings *fs, const hparams *hp, const gk_tensor *t, int part,
                               uint64_t il) {
    uint64_t E = hp->n_embd;
    uint64_t nh = at_layer(&hp->n_head, il), nkv = at_layer(&hp->n_head_kv, il);
    uint64_t ff = at_layer(&hp->n_ff, il);
    uint64_t hk = hp->head_k ? hp->head_k : (nh && E ? E / nh : 0);
    uint64_t hv = hp->head_v ? hp->head_v : hk;
    uint64_t q = nh * hk, kdim = nkv * hk, vdim = nkv * hv;
    uint64_t ffe = hp->n_ff_exp ? hp->n_ff_exp : ff;
    switch (part) {
    case P_ATTN_NORM: case P_FFN_NORM:
        expect_shape(fs, t, 1, E, 0, 0, "n_embd"); break;
    case P_ATTN_Q:
        expect_shape(fs, t, 2, E, q, 0, "n_embd, n_head * head_dim"); break;
    case P_ATTN_K:
        expect_shape(fs, t, 2, E, kdim, 0, "n_embd, n_embd_k_gqa = n_embd / n_head * n_head_kv"); break;
    case P_ATTN_V:
        expect_shape(fs, t, 2, E, vdim, 0, "n_embd, n_embd_v_gqa = n_embd / n_head * n_head_kv"); break;
    case P_ATTN_QKV:
        expect_shape(fs, t, 2, E, q && kdim && vdim ? q + kdim + vdim : 0, 0,
                     "n_embd, n_embd + 2 * n_embd_kv"); break;
    case P_ATTN_OUT:
        expect_shape(fs, t, 2, nh * hv, E, 0, "n_head * head_dim, n_embd"); break;
    case P_FFN_GATE:
        expect_shape(fs, t, 2, E, ff, 0, "n_embd, n_ff"); break;
    case P_FFN_UP:
        /* a fused gate+up (phi3) is twice as wide */
        if (ff && t->ne[1] == 2 * ff) expect_shape(fs, t, 2, E, 2 * ff, 0, "n_embd, 2 * n_ff (fused gate and up)");
        else expect_shape(fs, t, 2, E, ff, 0, "n_embd, n_ff");
        break;
    case P_FFN_DOWN:
        expect_shape(fs, t, 2, ff, E, 0, "n_ff, n_embd"); break;
    case P_FFN_GATE_INP:
        expect_shape(fs, t, 2, E, hp->n_expert, 0, "n_embd, n_expert"); break;
    case P_FFN_GATE_EXPS: case P_FFN_UP_EXPS:
        expect_shape(fs, t, 3, E, ffe, hp->n_expert, "n_embd, n_ff_exp, n_expert"); break;
    case P_FFN_DOWN_EXPS:
        expect_shape(fs, t, 3, ffe, E, hp->n_expert, "n_ff_exp, n_embd, n_expert"); break;
    default: break;
    }
}

/* Tensors outside the layers. */
static void check_top_tensor(findings *fs, const hparams *hp, const gk_tensor *t) {
    const char *n = t->name.ptr;
    if (strcmp(n, "token_embd.weight") == 0 || strcmp(n, "output.weight") == 0)
        expect_shape(fs, t, 2, hp->n_embd, hp->n_vocab, 0, "n_embd, n_vocab");
    else if (strcmp(n, "output_norm.weight") == 0)
        expect_shape(fs, t, 1, hp->n_embd, 0, 0, "n_embd");
    else if (strcmp(n, "rope_freqs.weight") == 0)
        expect_shape(fs, t, 1, hp->n_rot / 2, 0, 0, "n_rot / 2");
}

/* Names one missing tensor (or counts it once the list grows long). */
static void missing(findings *fs, size_t *n_missing, const char *what) {
    if (++*n_missing <= MAX_MISSING_REPORTED) ERROR("%s", what);
}

/* The required tensors of one layer. */
static void check_layer_complete(findings *fs, const hparams *hp, const gk_model *m,
                                 const layer_parts *lp, uint64_t il, size_t *n_missing) {
    char msg[160];
#define HAS(p) (lp->idx[p] >= 0)
#define NEED(p)                                                                                \
    do {                                                                                       \
        if (!HAS(p)) {                                                                         \
            snprintf(msg, sizeof msg, "tensor 'blk.%llu.%s.weight': missing", (unsigned long long)il, \
                     part_names[p]);                                                           \
            missing(fs, n_missing, msg);                                                       \
        }                                                                                      \
    } while (0)
    NEED(P_ATTN_NORM);
    if (!HAS(P_ATTN_QKV)) {
        NEED(P_ATTN_Q);
        NEED(P_ATTN_K);
        NEED(P_ATTN_V);
    }
    NEED(P_ATTN_OUT);
    NEED(P_FFN_NORM);
    if (hp->n_expert > 0 || HAS(P_FFN_GATE_INP)) {
        NEED(P_FFN_GATE_INP);
        NEED(P_FFN_GATE_EXPS);
        NEED(P_FFN_UP_EXPS);
        NEED(P_FFN_DOWN_EXPS);
    } else {
        NEED(P_FFN_UP);
        NEED(P_FFN_DOWN);
        uint64_t ff = at_layer(&hp->n_ff, il);
        bool fused_up = HAS(P_FFN_UP) && ff && gk_tensor_at(m, (size_t)lp->idx[P_FFN_UP])->ne[1] == 2 * ff;
        if (!fused_up) NEED(P_FFN_GATE);
    }
#undef NEED
#undef HAS
}

static void check_tensors(findings *fs, const gk_model *m, const hparams *hp) {
    size_t nt = gk_tensor_count(m);
    layer_parts *layers = NULL;
    if (hp->n_layer > 0) {
        layers = malloc(hp->n_layer * sizeof *layers);
        if (layers == NULL) {
            fs->nomem = true;
            return;
        }
        for (uint64_t i = 0; i < hp->n_layer; i++)
            for (int p = 0; p < P_COUNT; p++) layers[i].idx[p] = -1;
    }
    bool bad_index_reported = false;
    for (size_t i = 0; i < nt; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        uint64_t il;
        const char *rest;
        if (!parse_blk(t->name.ptr, &il, &rest)) {
            if (hp->llama_like) check_top_tensor(fs, hp, t);
            continue;
        }
        if (hp->n_layer == 0) continue;   /* block_count unknown: reported already */
        if (il >= hp->n_layer) {
            if (!bad_index_reported)   /* one finding per file is enough */
                add(fs, hp->llama_like, "tensor '%s': layer %llu does not exist (%s.block_count is %llu)",
                    t->name.ptr, (unsigned long long)il, hp->arch, (unsigned long long)hp->n_layer);
            bad_index_reported = true;
            continue;
        }
        if (!hp->llama_like) continue;
        int part = find_part(rest);
        if (part < 0) continue;   /* a tensor the rules do not know: accepted */
        layers[il].idx[part] = (int64_t)i;
        check_layer_tensor(fs, hp, t, part, il);
    }
    if (hp->llama_like && !hp->split_shard) {
        size_t n_missing = 0;
        if (gk_tensor_find(m, "token_embd.weight") < 0)
            missing(fs, &n_missing, "tensor 'token_embd.weight': missing");
        if (gk_tensor_find(m, "output_norm.weight") < 0)
            missing(fs, &n_missing, "tensor 'output_norm.weight': missing");
        for (uint64_t il = 0; il < hp->n_layer; il++) check_layer_complete(fs, hp, m, &layers[il], il, &n_missing);
        if (n_missing > MAX_MISSING_REPORTED)
            ERROR("... and %llu more required tensors missing (%llu in all)",
                  (unsigned long long)(n_missing - MAX_MISSING_REPORTED), (unsigned long long)n_missing);
    }
    free(layers);
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                              */
/* ------------------------------------------------------------------------ */

/* Reads split.no / split.count (any integer type). @return : true for a shard of
 * a model split in several files; *no is its 0-based index. */
static bool split_info(const gk_model *m, uint64_t *no, uint64_t *count) {
    *no = 0;
    *count = 0;
    if (gk_kv_get_uint(m, "split.count", count) != GK_OK || *count <= 1) return false;
    if (gk_kv_get_uint(m, "split.no", no) != GK_OK) *no = 0;
    return true;
}

gk_status gk_schema_check(const gk_model *m, gk_finding **out, size_t *n) {
    findings fs_store = { 0 };
    findings *fs = &fs_store;
    hparams hp = { 0 };
    *out = NULL;
    *n = 0;
    bool has_tensors = gk_tensor_count(m) > 0;
    uint64_t split_no, split_count;
    hp.split_shard = split_info(m, &split_no, &split_count);

    if (hp.split_shard && gk_kv_get(m, "general.architecture") == NULL && split_no > 0) {
        WARN("split shard %llu of %llu: the model's metadata is in the first shard, so "
             "nothing here can be checked against it", (unsigned long long)split_no + 1,
             (unsigned long long)split_count);
    } else if (read_arch(fs, m, &hp)) {
        check_generic_keys(fs, m, &hp);
        check_tokenizer(fs, m, &hp, has_tensors);
        if (hp.llama_like) check_llama_keys(fs, m, &hp);
        else WARN("no tensor rules for architecture %s: only the generic keys were checked", hp.arch);
        if (!has_tensors)
            WARN("%s: no tensors, tensor checks skipped",
                 gk_kv_get(m, "tokenizer.ggml.tokens") ? "vocab-only file (tokenizer and hyperparameters only)"
                                                       : "file has no tensors");
        else {
            if (hp.split_shard)
                WARN("split shard %llu of %llu: tensors present were checked, missing ones were not "
                     "(they live in the other shards)", (unsigned long long)split_no + 1,
                     (unsigned long long)split_count);
            check_tensors(fs, m, &hp);
        }
    }
    if (fs->nomem) {
        free(fs->items);
        return GK_E_NOMEM;
    }
    *out = fs->items;
    *n = fs->n;
    return GK_OK;
}

void gk_findings_free(gk_finding *findings) { free(findings); }
