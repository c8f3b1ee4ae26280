/*
 * convert.c - plans a conversion as the reference converter makes it
 * (convert_hf_to_gguf.py, conversion/base.py and llama.py): the metadata in
 * the order its writer receives it, then the tensors in the order it emits
 * them (generated ones first, then the checkpoint's by part and name, experts
 * merged when a layer's last one arrives), each with the type its rules give
 * (see convert.h). The bytes come from a virtual source (source.h) that the
 * pipeline reads like a GGUF input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "convert/arch.h"
#include "convert/checkpoint.h"
#include "ggufkit.h"
#include "convert/hfjson.h"
#include "convert/meta.h"
#include "convert/modelcard.h"
#include "convert/rope.h"
#include "convert/sampling.h"
#include "convert/source.h"
#include "convert/bpe.h"
#include "convert/vocab.h"
#include "util/grow.h"
#include "util/opts.h"

struct gk_convert {
    gk_model *out;
    gk_step *steps;
    gk_file *src;
    gk_conv_source *source;
    gk_ckpt *ckpt;
};

const char *gk_convert_supported(void) { return gk_conv_arch_list(); }
gk_model *gk_convert_model(gk_convert *c) { return c->out; }
const gk_step *gk_convert_steps(const gk_convert *c) { return c->steps; }

void gk_convert_free(gk_convert *c) {
    if (c == NULL) return;
    gk_model_free(c->out);
    free(c->steps);
    gk_close(c->src);
    gk_conv_source_free(c->source);
    gk_ckpt_close(c->ckpt);
    free(c);
}

/* ------------------------------------------------------------------------ */
/* config.json                                                              */
/* ------------------------------------------------------------------------ */

/* The hyperparameters: config.json with text_config's keys over its own. */
typedef struct hparams {
    const cJSON *root, *text;
} hparams;

static const cJSON *hp_get(const hparams *h, const char *key) {
    const cJSON *v = h->text ? cJSON_GetObjectItemCaseSensitive(h->text, key) : NULL;
    return v ? v : cJSON_GetObjectItemCaseSensitive(h->root, key);
}

/* find_hparam: the first of keys present (its value may be null). */
static const cJSON *hp_find(const hparams *h, const char *const *keys, const char **found) {
    for (; *keys; keys++) {
        const cJSON *v = hp_get(h, *keys);
        if (v) {
            if (found) *found = *keys;
            return v;
        }
    }
    return NULL;
}

static gk_status config_error(gk_error *err, const char *dir, gk_status code, const char *fmt, const char *what) {
    gk_error_set(err, code, -1, fmt, what);
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    gk_error_about(err, path);
    return code;
}

/* An integer hyperparameter from keys; *v = -1 when absent or null and not
 * required. */
static gk_status hp_int(const hparams *h, const char *dir, const char *const *keys, bool required, int64_t *v,
                        gk_error *err) {
    const char *key = keys[0];
    const cJSON *j = hp_find(h, keys, &key);
    *v = -1;
    if (j == NULL || cJSON_IsNull(j)) {
        if (!required) return GK_OK;
        char list[256] = "";
        for (const char *const *k = keys; *k; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", k == keys ? "" : " or ", *k);
        return config_error(err, dir, GK_E_NOT_FOUND, "%s is missing (or null)", list);
    }
    if (!gk_hf_is_int(j) || j->valuedouble < 0 || j->valuedouble > 4294967295.0)
        return config_error(err, dir, GK_E_CORRUPT, "'%s' is not an unsigned 32-bit integer", key);
    *v = (int64_t)j->valuedouble;
    return GK_OK;
}

static gk_status put_u32(gk_model *m, const char *arch, const char *key, int64_t v, gk_error *err) {
    char k[128];
    snprintf(k, sizeof k, key, arch);
    return gk_kv_set_u32(m, k, (uint32_t)v, err);
}

static gk_status put_f32(gk_model *m, const char *arch, const char *key, double v, gk_error *err) {
    char k[128];
    snprintf(k, sizeof k, key, arch);
    gk_value val = { .type = GK_V_F32, .f = (double)(float)v };
    return gk_kv_set(m, k, &val, err);
}

static gk_status put_str(gk_model *m, const char *arch, const char *key, const char *v, gk_error *err) {
    char k[128];
    snprintf(k, sizeof k, key, arch);
    return gk_kv_set_str(m, k, v, err);
}

static gk_status put_bool(gk_model *m, const char *key, bool b, gk_error *err) {
    gk_value val = { .type = GK_V_BOOL, .b = b };
    return gk_kv_set(m, key, &val, err);
}

/* The rope parameters (TextModel.__init__): rope_parameters or rope_scaling,
 * its "full_attention" part when it has one, else the object itself with the
 * global values mirrored into it where it lacks them. */
typedef struct rope {
    const cJSON *params;       /* the object, or NULL */
    bool mirror;
    const cJSON *theta, *orig_ctx;   /* the mirrored values */
} rope;

static const cJSON *rope_get(const rope *r, const char *key) {
    const cJSON *v = r->params ? cJSON_GetObjectItemCaseSensitive(r->params, key) : NULL;
    if (v || !r->mirror) return v;
    if (strcmp(key, "rope_theta") == 0) return r->theta;
    if (strcmp(key, "rope_type") == 0) return r->params ? cJSON_GetObjectItemCaseSensitive(r->params, "type") : NULL;
    if (strcmp(key, "original_max_position_embeddings") == 0) return r->orig_ctx;
    return NULL;
}

static bool is_number(const cJSON *j) { return j && cJSON_IsNumber(j); }

/* ------------------------------------------------------------------------ */
/* The plan                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct planner {
    const char *dir;
    const gk_convert_opts *o;
    const gk_conv_arch *arch;
    hparams hp;
    rope rp;
    cJSON *card;               /* README.md's front matter, or NULL */
    gk_convert *c;
    gk_model *presented;
    int64_t n_head, n_kv_head, n_experts;
    /* expert slices waiting for their layer's last: (bid, which, expert) */
    struct pending { int64_t bid, expert; int which; const gk_ckpt_tensor *t; } *pending;
    size_t n_pending, cap_pending;
    /* parameter counts, as GGUFWriter.get_total_parameter_count */
    uint64_t total, shared, expert_params, expert_sum, n_expert_tensors;
} planner;

/* The type the reference writes a tensor in.
 *
 * Its values are then rounded by the pipeline's own converters, which give the
 * reference's bytes: numpy's astype(float16) and gguf-py's BF16 are round to
 * nearest even (BF16 quieting NaNs as ggml does), and gguf-py's Q8_0 (quants.py)
 * takes d = max|x| / 127, id = 1/d (0 for d = 0) in float32, rounds x * id half
 * away from zero (np_roundf: floor(a) + floor(2 (a - floor(a))), signed) and
 * stores d as float16 to nearest even: the operations and rounding of ggml's
 * quantize_row_q8_0_ref, value for value, for finite input (golden q8_0 files
 * match). They part only on NaN: numpy keeps a NaN's payload in float16 where
 * ggml's conversion gives 0x7E00, and a block holding NaN or infinity. */
static uint32_t tensor_type(const planner *p, const char *name, uint32_t n_dims, uint64_t ne0) {
    if (gk_conv_stays_f32(name, n_dims)) return GK_TYPE_F32;
    uint32_t t = p->o->out_type;
    if (t == GK_TYPE_Q8_0 && ne0 % 32 != 0) return GK_TYPE_F16;   /* its QuantError fallback */
    return t;
}

/* The type a tensor is presented in to the pipeline, whose own converters
 * then make the output type: the parts' 16-bit dtype as it is stored (one
 * read, no widening here: the pipeline's workers widen it, in parallel) where
 * that gives the same bytes, else F32. Same bytes: F16 or BF16 become F32
 * exactly either way (the F32 conversion, and the F32 plan of a quantize
 * target); F16 stays F16 and feeds Q8_0 as it is. Not BF16 kept as BF16: the
 * reference quiets a signalling NaN on the way (the pipeline does, from F32),
 * a straight copy would not. `common` is the dtype every part shares, or
 * GK_ST_DTYPE_COUNT for computed values or parts of mixed dtypes. */
static uint32_t presented_type(gk_st_dtype common, uint32_t type) {
    if (common == GK_ST_F16 && (type == GK_TYPE_F16 || type == GK_TYPE_Q8_0 || type == GK_TYPE_F32)) return GK_TYPE_F16;
    if (common == GK_ST_BF16 && type == GK_TYPE_F32) return GK_TYPE_BF16;
    return GK_TYPE_F32;
}

/* Adds one output tensor (and its presented twin and feed). */
static gk_status emit(planner *p, const char *name, uint32_t n_dims, const uint64_t *ne, gk_conv_feed *feed,
                      gk_st_dtype common, gk_error *err) {
    uint32_t type = tensor_type(p, name, n_dims, ne[0]);
    feed->type = presented_type(common, type);
    gk_status s = gk_tensor_add(p->c->out, name, type, n_dims, ne, err);
    if (s == GK_OK) s = gk_tensor_add(p->presented, name, feed->type, n_dims, ne, err);
    if (s != GK_OK) {
        free(feed->parts);
        free(feed->mem);
        return s;
    }
    uint64_t size = 1;
    for (uint32_t d = 0; d < n_dims; d++) size *= ne[d];
    if (strstr(name, "_exps.") && n_dims >= 3) {
        uint64_t count = strstr(name, ".bias") ? ne[1] : ne[2];
        p->expert_params += size / count;
        p->expert_sum += count;
        p->n_expert_tensors++;
    } else {
        p->shared += size;
    }
    p->total += size;
    return gk_conv_source_add(p->c->source, feed, err);
}

static bool float_dtype(gk_st_dtype d) {
    return d == GK_ST_F32 || d == GK_ST_F16 || d == GK_ST_BF16 || d == GK_ST_F64;
}

static gk_status tensor_error(gk_error *err, const gk_ckpt_tensor *ct, gk_status code, const char *fmt,
                              const char *what) {
    gk_error_set(err, code, (int64_t)ct->t->offset, fmt, ct->t->name, what);
    gk_error_about(err, gk_st_path(ct->part));
    return code;
}

/* The reference's llama3 rope factors (LlamaModel.generate_extra_tensors),
 * in float32 as torch computes them: a Python number divided by a tensor is
 * the tensor's reciprocal times the number. */
static gk_status rope_freqs(planner *p, gk_error *err) {
    if (!p->arch->llama) return GK_OK;
    const cJSON *type = rope_get(&p->rp, "rope_type");
    if (!cJSON_IsString(type) || strcasecmp(type->valuestring, "llama3") != 0) return GK_OK;
    const cJSON *b = rope_get(&p->rp, "rope_theta");
    double base = is_number(b) ? b->valuedouble : 10000.0;
    int64_t dim, hidden;
    static const char *const k_head_dim[] = { "head_dim", NULL }, *const k_hidden[] = { "hidden_size", NULL },
                             *const k_heads[] = { "num_attention_heads", NULL };
    gk_status s = hp_int(&p->hp, p->dir, k_head_dim, false, &dim, err);
    if (s == GK_OK && dim < 0) {
        int64_t heads;
        s = hp_int(&p->hp, p->dir, k_hidden, true, &hidden, err);
        if (s == GK_OK) s = hp_int(&p->hp, p->dir, k_heads, true, &heads, err);
        if (s == GK_OK && heads == 0) return config_error(err, p->dir, GK_E_CORRUPT, "'%s' is 0", "num_attention_heads");
        if (s == GK_OK) dim = hidden / heads;
    }
    if (s != GK_OK) return s;
    const cJSON *j;
    double factor = is_number(j = rope_get(&p->rp, "factor")) ? j->valuedouble : 8.0;
    double low = is_number(j = rope_get(&p->rp, "low_freq_factor")) ? j->valuedouble : 1.0;
    double high = is_number(j = rope_get(&p->rp, "high_freq_factor")) ? j->valuedouble : 4.0;
    double old_ctx = is_number(j = rope_get(&p->rp, "original_max_position_embeddings")) ? j->valuedouble : 8192;
    uint64_t n = (uint64_t)(dim + 1) / 2;
    float *f = malloc((n ? n : 1) * sizeof *f);
    if (f == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_conv_llama3 r = { base, factor, low, high, old_ctx, dim };
    gk_conv_llama3_factors(&r, f);
    gk_conv_feed feed = { .mem = f, .rows = n, .width = 1 };
    uint64_t ne[1] = { n };
    return emit(p, "rope_freqs.weight", 1, ne, &feed, GK_ST_DTYPE_COUNT, err);
}

/* A checkpoint tensor's GGUF dimensions (reversed) and row layout. */
static gk_status shape_of(const gk_ckpt_tensor *ct, uint64_t *ne, uint32_t *n_dims, uint64_t *rows, uint64_t *width,
                          gk_error *err) {
    const gk_st_tensor *t = ct->t;
    if (t->n_dims == 0 || t->n_dims > 4)
        return tensor_error(err, ct, GK_E_UNSUPPORTED, "tensor '%s': %s dimensions (GGUF holds 1 to 4)",
                            t->n_dims == 0 ? "no" : "more than 4");
    *n_dims = t->n_dims;
    for (uint32_t d = 0; d < 4; d++) ne[d] = d < t->n_dims ? t->shape[t->n_dims - 1 - d] : 1;
    *rows = t->shape[0];
    *width = 1;
    for (uint32_t d = 1; d < t->n_dims; d++) *width *= t->shape[d];
    return GK_OK;
}

static gk_status plain_tensor(planner *p, const gk_ckpt_tensor *ct, const gk_conv_name *nm, gk_error *err) {
    uint64_t ne[4], rows, width;
    uint32_t n_dims;
    gk_status s = shape_of(ct, ne, &n_dims, &rows, &width, err);
    if (s != GK_OK) return s;
    if (rows == 0 || width == 0)
        return tensor_error(err, ct, GK_E_UNSUPPORTED, "tensor '%s': %s", "has no elements");
    uint32_t groups = 0;
    if (nm->permute) {
        groups = (uint32_t)(nm->permute == 1 || p->n_kv_head == p->n_head ? p->n_head : p->n_kv_head);
        if (groups == 0 || rows % ((uint64_t)groups * 2) != 0) {
            char what[96];
            snprintf(what, sizeof what, "%llu rows do not split into %u heads of two halves",
                     (unsigned long long)rows, groups);
            return tensor_error(err, ct, GK_E_CORRUPT, "tensor '%s': %s", what);
        }
    }
    gk_conv_feed feed = { .parts = malloc(sizeof *feed.parts), .n_parts = 1, .rows = rows, .width = width,
                          .perm_groups = groups };
    if (feed.parts == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    feed.parts[0] = ct;
    return emit(p, nm->gguf, n_dims, ne, &feed, ct->t->dtype, err);
}

/* A layer's experts all arrived: gate, down and up, each stacked over the
 * experts, in the architecture's order. */
static gk_status merge_experts(planner *p, int64_t bid, gk_error *err) {
    static const char *const names[3] = { "ffn_gate_exps", "ffn_down_exps", "ffn_up_exps" };
    const gk_conv_moe *moe = p->arch->moe;
    for (int k = 0; k < 3; k++) {
        int which = moe->order[k];
        gk_conv_feed feed = { .parts = calloc((size_t)p->n_experts, sizeof *feed.parts), .n_parts = (size_t)p->n_experts };
        if (feed.parts == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        for (size_t i = 0; i < p->n_pending; i++) {
            struct pending *q = &p->pending[i];
            if (q->bid == bid && q->which == which && q->expert < p->n_experts) feed.parts[q->expert] = q->t;
        }
        for (int64_t x = 0; x < p->n_experts; x++)
            if (feed.parts[x] == NULL) {
                free(feed.parts);
                return gk_error_set(err, GK_E_CORRUPT, -1,
                                    "model.layers.%lld.%s%lld.%s.weight is missing (layer %lld "
                                    "has %lld experts in config.json)",
                                    (long long)bid, moe->prefix, (long long)x, moe->parts[which], (long long)bid,
                                    (long long)p->n_experts);
            }
        const gk_ckpt_tensor *first = feed.parts[0];
        uint64_t ne[4], rows, width;
        uint32_t n_dims;
        gk_status s = shape_of(first, ne, &n_dims, &rows, &width, err);
        gk_st_dtype common = first->t->dtype;
        for (int64_t x = 0; x < p->n_experts && s == GK_OK; x++) {
            const gk_st_tensor *t = feed.parts[x]->t;
            if (t->dtype != common) common = GK_ST_DTYPE_COUNT;
            bool same = t->n_dims == first->t->n_dims;
            for (uint32_t d = 0; same && d < t->n_dims; d++) same = t->shape[d] == first->t->shape[d];
            if (!same) s = tensor_error(err, feed.parts[x], GK_E_CORRUPT, "tensor '%s': %s", "its shape differs from expert 0's");
        }
        if (s == GK_OK && n_dims != 2)
            s = tensor_error(err, first, GK_E_UNSUPPORTED, "tensor '%s': %s", "an expert's weight is not 2-D");
        if (s != GK_OK) {
            free(feed.parts);
            return s;
        }
        ne[2] = (uint64_t)p->n_experts;
        feed.rows = rows;
        feed.width = width;
        char name[96];
        snprintf(name, sizeof name, "blk.%lld.%s.weight", (long long)bid, names[which]);
        if ((s = emit(p, name, 3, ne, &feed, common, err)) != GK_OK) return s;
    }
    /* Drop the layer's slices. */
    size_t k = 0;
    for (size_t i = 0; i < p->n_pending; i++)
        if (p->pending[i].bid != bid) p->pending[k++] = p->pending[i];
    p->n_pending = k;
    return GK_OK;
}

/* Qwen2MoeModel: gate_up_proj [E, 2 n_ff, n_embd] split on its middle
 * dimension into ffn_gate_exps and ffn_up_exps, each read as row blocks. */
static gk_status gate_up_tensor(planner *p, const gk_ckpt_tensor *ct, const gk_conv_name *nm, gk_error *err) {
    const gk_st_tensor *t = ct->t;
    if (t->n_dims != 3 || t->shape[1] % 2 != 0 || t->shape[0] == 0 || t->shape[1] == 0 || t->shape[2] == 0)
        return tensor_error(err, ct, GK_E_CORRUPT, "tensor '%s': %s", "is not [experts, 2 x n_ff, n_embd]");
    uint64_t n_ff = t->shape[1] / 2, ne[4] = { t->shape[2], n_ff, t->shape[0], 1 };
    for (int k = 0; k < 2; k++) {
        gk_conv_feed feed = { .parts = malloc(t->shape[0] * sizeof *feed.parts), .n_parts = t->shape[0], .rows = n_ff,
                              .width = t->shape[2], .part_rows = 2 * n_ff, .row0 = k ? n_ff : 0 };
        if (feed.parts == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        for (uint64_t x = 0; x < t->shape[0]; x++) feed.parts[x] = ct;
        char name[96];
        snprintf(name, sizeof name, "blk.%lld.%s.weight", (long long)nm->bid, k ? "ffn_up_exps" : "ffn_gate_exps");
        gk_status s = emit(p, name, 3, ne, &feed, t->dtype, err);
        if (s != GK_OK) return s;
    }
    return GK_OK;
}

static gk_status expert_tensor(planner *p, const gk_ckpt_tensor *ct, const gk_conv_name *nm, gk_error *err) {
    if (p->n_experts < 0) {
        const char *const *k = p->arch->moe->count_keys;
        gk_status s = hp_int(&p->hp, p->dir, k, true, &p->n_experts, err);
        if (s != GK_OK) return s;
    }
    if (!GK_GROW(p->pending, p->cap_pending, p->n_pending + 1, 64))
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    p->pending[p->n_pending++] = (struct pending){ nm->bid, nm->expert, nm->which, ct };
    size_t count = 0;
    for (size_t i = 0; i < p->n_pending; i++) count += p->pending[i].bid == nm->bid;
    return count >= (size_t)p->n_experts * 3 ? merge_experts(p, nm->bid, err) : GK_OK;
}

/* TextModel.filter_tensors: multimodal parts are left out. */
static bool multimodal(const char *n) {
    static const char *const prefixes[] = { "mlp", "vit.", "vpm.", "siglip2.", "conformer.", "merger.", "resampler.",
                                            "sound_encoder.", "sound_projection.", "speech_embeddings." };
    static const char *const parts[] = { "visual.", "vision.", "audio.", "talker.", "vision_", "audio_", "token2wav.",
                                         "code2wav.", "projector.", "pre_mm_projector_norm", "image_newline",
                                         "view_seperator", "patch_embed", "patch_embedding", "patch_merger.",
                                         "patch_merge_mlp.", "model.connector." };
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0) return true;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr(n, parts[i])) return true;
    return false;
}

/* Removes every occurrence of what from s (in place). */
static void remove_all(char *s, const char *what) {
    size_t n = strlen(what);
    for (char *at; (at = strstr(s, what)) != NULL;) memmove(at, at + n, strlen(at + n) + 1);
}

static gk_status plan_tensors(planner *p, gk_error *err) {
    gk_status s = rope_freqs(p, err);
    gk_ckpt *ck = p->c->ckpt;
    for (size_t i = 0; i < gk_ckpt_count(ck) && s == GK_OK; i++) {
        const gk_ckpt_tensor *ct = gk_ckpt_at(ck, i);
        char name[512];
        snprintf(name, sizeof name, "%s", ct->t->name);
        remove_all(name, "text_model.");        /* LlamaModel.filter_tensors (SmolVLM) */
        if (multimodal(name)) continue;
        remove_all(name, "language_model.");    /* ModelBase.filter_tensors */
        gk_conv_name nm;
        if (!gk_conv_map_name(p->arch, name, &nm))
            return tensor_error(err, ct, GK_E_UNSUPPORTED, "tensor '%s' has no GGUF name for %s", p->arch->hf_name);
        if (nm.role == GK_ROLE_SKIP) continue;
        if (!float_dtype(ct->t->dtype))
            return tensor_error(err, ct, GK_E_UNSUPPORTED, "tensor '%s': dtype %s is not converted (F16, BF16, F32, F64 are)",
                                gk_st_dtype_name(ct->t->dtype));
        s = nm.role == GK_ROLE_EXPERT    ? expert_tensor(p, ct, &nm, err)
            : nm.role == GK_ROLE_GATE_UP ? gate_up_tensor(p, ct, &nm, err)
                                         : plain_tensor(p, ct, &nm, err);
    }
    if (s == GK_OK && p->n_pending > 0) {
        const gk_ckpt_tensor *ct = p->pending[0].t;
        return tensor_error(err, ct, GK_E_CORRUPT, "tensor '%s': %s", "its layer's other experts are missing");
    }
    return s;
}

/* ------------------------------------------------------------------------ */
/* Metadata                                                                 */
/* ------------------------------------------------------------------------ */

/* general.sampling.* from generation_config.json (Metadata.load). */
static gk_status sampling(planner *p, gk_model *m, gk_error *err) {
    cJSON *g = NULL;
    gk_error ignored;
    if (gk_hf_json_load(p->dir, "generation_config.json", false, &g, &ignored) != GK_OK || g == NULL) return GK_OK;
    gk_status s = GK_OK;
    const gk_conv_sampling *k;
    for (size_t i = 0; (k = gk_conv_sampling_at(i)) != NULL && s == GK_OK; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, k->json);
        if (v == NULL && k->alt) v = cJSON_GetObjectItemCaseSensitive(g, k->alt);
        if (v == NULL || cJSON_IsNull(v)) continue;
        bool ok = k->kind == 's' ? cJSON_IsString(v) : k->kind == 'i' ? gk_hf_is_int(v) : cJSON_IsNumber(v);
        if (!ok) {
            gk_error_set(err, GK_E_UNSUPPORTED, -1, "'%s' is not a %s", k->json,
                         k->kind == 's' ? "string" : k->kind == 'i' ? "integer" : "number");
            char path[4096];
            snprintf(path, sizeof path, "%s/generation_config.json", p->dir);
            gk_error_about(err, path);
            s = err->code;
            break;
        }
        gk_value val = { 0 };
        if (k->kind == 's') {
            s = gk_kv_set_str(m, k->key, v->valuestring, err);
            continue;
        }
        if (k->kind == 'i') val.type = GK_V_I32, val.i = (int64_t)v->valuedouble;
        else val.type = GK_V_F32, val.f = (double)(float)v->valuedouble;
        s = gk_kv_set(m, k->key, &val, err);
    }
    cJSON_Delete(g);
    return s;
}

/* general.*: ModelBase.prepare_metadata and Metadata.set_gguf_meta_model. */
static gk_status general(planner *p, gk_model *m, gk_error *err) {
    gk_status s = gk_kv_set_str(m, "general.architecture", p->arch->gguf_arch, err);
    if (s == GK_OK) s = gk_kv_set_str(m, "general.type", "model", err);
    if (s == GK_OK) s = sampling(p, m, err);
    if (s != GK_OK) return s;
    gk_conv_counts counts = { p->total, p->shared, p->expert_params,
                              p->n_expert_tensors ? p->expert_sum / p->n_expert_tensors : 0 };
    return gk_conv_general(m, p->dir, p->hp.root, p->card, &counts, err);
}

static uint32_t file_type(uint32_t out_type) {
    switch (out_type) {
    case GK_TYPE_F16: return 1;
    case GK_TYPE_BF16: return 32;
    case GK_TYPE_Q8_0: return 7;
    default: return 0;
    }
}

/* TextModel.set_gguf_parameters, then LlamaModel's additions. */
static gk_status hyperparameters(planner *p, gk_model *m, gk_error *err) {
    const char *a = p->arch->gguf_arch;
    const hparams *h = &p->hp;
    int64_t v;
    static const char *const k_blocks[] = { "n_layers", "num_hidden_layers", "n_layer", "num_layers", NULL };
    static const char *const k_ctx[] = { "max_position_embeddings", "n_ctx", "n_positions", "max_length",
                                         "max_sequence_length", "model_max_length", NULL };
    static const char *const k_embd[] = { "hidden_size", "n_embd", "dim", NULL };
    static const char *const k_ff[] = { "prefix_dense_intermediate_size", "dense_intermediate_size",
                                        "intermediate_size", "n_inner", "hidden_dim", NULL };
    static const char *const k_head[] = { "num_attention_heads", "n_head", "n_heads", NULL };
    static const char *const k_kv[] = { "num_key_value_heads", "n_kv_heads", NULL };
    static const char *const k_rms[] = { "rms_norm_eps", "norm_eps", NULL };
    static const char *const k_ln[] = { "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon", NULL };
    static const char *const k_exp[] = { "num_local_experts", "num_experts", "n_routed_experts", NULL };
    static const char *const k_used[] = { "num_experts_per_tok", "num_experts_per_token", "top_k_experts", NULL };
    static const char *const k_group[] = { "n_group", NULL }, *const k_topk[] = { "topk_group", NULL };
    static const char *const k_score[] = { "score_function", "scoring_func", "score_func", "moe_router_activation",
                                           "moe_router_activation_func", "expert_selection_fn", NULL };
    static const char *const k_head_dim[] = { "head_dim", NULL }, *const k_vocab[] = { "vocab_size", NULL };
    gk_status s = hp_int(h, p->dir, k_blocks, true, &v, err);
    if (s == GK_OK) s = put_u32(m, a, "%s.block_count", v, err);
    struct { const char *const *keys, *key; } ints[] = {
        { k_ctx, "%s.context_length" }, { k_embd, "%s.embedding_length" }, { k_ff, "%s.feed_forward_length" },
        { k_head, "%s.attention.head_count" }, { k_kv, "%s.attention.head_count_kv" },
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0] && s == GK_OK; i++) {
        s = hp_int(h, p->dir, ints[i].keys, false, &v, err);
        if (s == GK_OK && v >= 0) s = put_u32(m, a, ints[i].key, v, err);
    }
    const cJSON *causal = hp_get(h, "is_causal");
    if (s == GK_OK && cJSON_IsFalse(causal)) {
        char k[128];
        snprintf(k, sizeof k, "%s.attention.causal", a);
        s = put_bool(m, k, false, err);
    }
    const cJSON *type = rope_get(&p->rp, "rope_type");
    if (s == GK_OK && type && !cJSON_IsNull(type)) {
        if (!cJSON_IsString(type)) return config_error(err, p->dir, GK_E_CORRUPT, "'%s' is not a string", "rope_type");
        const char *t = type->valuestring;
        const cJSON *factor = rope_get(&p->rp, "factor");
        bool has_factor = factor && !cJSON_IsNull(factor);
        if (has_factor && !is_number(factor))
            return config_error(err, p->dir, GK_E_CORRUPT, "'%s' is not a number", "factor");
        if (strcmp(t, "linear") == 0 && has_factor) {
            s = put_str(m, a, "%s.rope.scaling.type", "linear", err);
            if (s == GK_OK) s = put_f32(m, a, "%s.rope.scaling.factor", factor->valuedouble, err);
        } else if (strcmp(t, "yarn") == 0 && has_factor) {
            s = put_str(m, a, "%s.rope.scaling.type", "yarn", err);
            if (s == GK_OK) s = put_f32(m, a, "%s.rope.scaling.factor", factor->valuedouble, err);
            const cJSON *orig = rope_get(&p->rp, "original_max_position_embeddings");
            if (s == GK_OK && !gk_hf_is_int(orig))
                return config_error(err, p->dir, GK_E_NOT_FOUND, "yarn rope scaling needs an integer '%s'",
                                    "original_max_position_embeddings");
            if (s == GK_OK) s = put_u32(m, a, "%s.rope.scaling.original_context_length", (int64_t)orig->valuedouble, err);
            const cJSON *x;
            if (s == GK_OK && is_number(x = rope_get(&p->rp, "extrapolation_factor")))
                s = put_f32(m, a, "%s.rope.scaling.yarn_ext_factor", x->valuedouble, err);
            x = rope_get(&p->rp, "attention_factor");
            if (x == NULL) x = rope_get(&p->rp, "attn_factor");
            if (s == GK_OK && is_number(x)) s = put_f32(m, a, "%s.rope.scaling.yarn_attn_factor", x->valuedouble, err);
            if (s == GK_OK && is_number(x = rope_get(&p->rp, "beta_fast")))
                s = put_f32(m, a, "%s.rope.scaling.yarn_beta_fast", x->valuedouble, err);
            if (s == GK_OK && is_number(x = rope_get(&p->rp, "beta_slow")))
                s = put_f32(m, a, "%s.rope.scaling.yarn_beta_slow", x->valuedouble, err);
        } else if (strcmp(t, "su") == 0 || strcmp(t, "longrope") == 0) {
            s = put_str(m, a, "%s.rope.scaling.type", "longrope", err);
        }
        /* "dynamic", "llama3" (rope_freqs) and unknown types write nothing. */
    }
    if (s == GK_OK && p->rp.params && cJSON_GetObjectItemCaseSensitive(p->rp.params, "mrope_section"))
        return config_error(err, p->dir, GK_E_UNSUPPORTED, "'%s' (multi-section rope) is not supported", "mrope_section");
    const cJSON *theta = rope_get(&p->rp, "rope_theta");
    if (s == GK_OK && theta && !cJSON_IsNull(theta)) {
        if (!is_number(theta)) return config_error(err, p->dir, GK_E_CORRUPT, "'%s' is not a number", "rope_theta");
        s = put_f32(m, a, "%s.rope.freq_base", theta->valuedouble, err);
    }
    static const char *const k_local[] = { "local_rope_theta", "rope_local_theta", "rope_theta_local", "swa_rope_theta",
                                           "rope_local_base_freq", NULL };
    const cJSON *local = p->rp.mirror ? hp_find(h, k_local, NULL) : NULL;
    if (s == GK_OK && is_number(local)) s = put_f32(m, a, "%s.rope.freq_base_swa", local->valuedouble, err);
    const cJSON *eps = hp_find(h, k_rms, NULL);
    if (s == GK_OK && is_number(eps)) s = put_f32(m, a, "%s.attention.layer_norm_rms_epsilon", eps->valuedouble, err);
    eps = hp_find(h, k_ln, NULL);
    if (s == GK_OK && is_number(eps)) s = put_f32(m, a, "%s.attention.layer_norm_epsilon", eps->valuedouble, err);
    if (s == GK_OK) s = hp_int(h, p->dir, k_exp, false, &v, err);
    if (s == GK_OK && v >= 0) s = put_u32(m, a, "%s.expert_count", v, err);
    if (s == GK_OK) s = hp_int(h, p->dir, k_used, false, &v, err);
    if (s == GK_OK && v >= 0) s = put_u32(m, a, "%s.expert_used_count", v, err);
    if (s == GK_OK) s = hp_int(h, p->dir, k_group, false, &v, err);
    if (s == GK_OK && v >= 0) s = put_u32(m, a, "%s.expert_group_count", v, err);
    if (s == GK_OK) s = hp_int(h, p->dir, k_topk, false, &v, err);
    if (s == GK_OK && v >= 0) s = put_u32(m, a, "%s.expert_group_used_count", v, err);
    const cJSON *score = hp_find(h, k_score, NULL);
    if (s == GK_OK && score && !cJSON_IsNull(score)) {
        const char *f = cJSON_IsString(score) ? score->valuestring : "";
        int64_t g = strcmp(f, "softmax") == 0 ? 1 : strcmp(f, "sigmoid") == 0 ? 2 : strcmp(f, "sqrtsoftplus") == 0 ? 4 : 0;
        if (g == 0) return config_error(err, p->dir, GK_E_UNSUPPORTED, "expert gating function '%s' is not supported", f);
        s = put_u32(m, a, "%s.expert_gating_func", g, err);
    }
    int64_t head_dim;
    if (s == GK_OK) s = hp_int(h, p->dir, k_head_dim, false, &head_dim, err);
    if (s == GK_OK && head_dim >= 0) {
        s = put_u32(m, a, "%s.attention.key_length", head_dim, err);
        if (s == GK_OK) s = put_u32(m, a, "%s.attention.value_length", head_dim, err);
    }
    if (s == GK_OK) s = gk_kv_set_u32(m, "general.file_type", file_type(p->o->out_type), err);
    if (s == GK_OK && p->arch->qwen2_moe) {
        /* Qwen2MoeModel.set_gguf_parameters */
        static const char *const k_eff[] = { "moe_intermediate_size", NULL };
        static const char *const k_sff[] = { "shared_expert_intermediate_size", NULL };
        s = hp_int(h, p->dir, k_eff, false, &v, err);
        if (s == GK_OK && v >= 0) s = put_u32(m, a, "%s.expert_feed_forward_length", v, err);
        if (s == GK_OK) s = hp_int(h, p->dir, k_sff, false, &v, err);
        if (s == GK_OK && v >= 0) s = put_u32(m, a, "%s.expert_shared_feed_forward_length", v, err);
        if (s == GK_OK) s = gk_kv_set_u32(m, "general.quantization_version", 2, err);
        return s;
    }
    if (s == GK_OK && !p->arch->llama) {
        /* Qwen2Model: _try_set_pooling_type (a sentence-transformers folder) */
        if (gk_hf_exists(p->dir, "modules.json")) {
            gk_error_set(err, GK_E_UNSUPPORTED, -1, "sentence-transformers pooling (modules.json) is not supported yet");
            char path[4096];
            snprintf(path, sizeof path, "%s/modules.json", p->dir);
            gk_error_about(err, path);
            return GK_E_UNSUPPORTED;
        }
        return gk_kv_set_u32(m, "general.quantization_version", 2, err);
    }
    /* LlamaModel */
    if (s == GK_OK) s = hp_int(h, p->dir, k_vocab, true, &v, err);
    if (s == GK_OK) s = put_u32(m, a, "%s.vocab_size", v, err);
    if (s == GK_OK && head_dim < 0) {
        int64_t hidden, heads;
        static const char *const k_hidden[] = { "hidden_size", NULL }, *const k_heads[] = { "num_attention_heads", NULL };
        s = hp_int(h, p->dir, k_hidden, true, &hidden, err);
        if (s == GK_OK) s = hp_int(h, p->dir, k_heads, true, &heads, err);
        if (s == GK_OK && heads == 0) return config_error(err, p->dir, GK_E_CORRUPT, "'%s' is 0", "num_attention_heads");
        head_dim = hidden / (heads > 0 ? heads : 1);
    }
    if (s == GK_OK) s = put_u32(m, a, "%s.rope.dimension_count", head_dim, err);
    if (s == GK_OK) s = gk_kv_set_u32(m, "general.quantization_version", 2, err);
    return s;
}

/* LlamaModel.set_vocab's second try, gguf.LlamaHfVocab: *taken tells whether
 * dir's tokenizer.json is the SentencePiece-style kind (else GPT-2 BPE). */
static gk_status llama_hf_kind(const char *dir, bool *taken, gk_error *err) {
    cJSON *tok;
    gk_status s = gk_hf_json_load(dir, "tokenizer.json", true, &tok, err);
    if (s != GK_OK) return s;
    *taken = gk_conv_is_llama_hf(tok);
    cJSON_Delete(tok);
    return GK_OK;
}

/* LlamaModel.set_vocab (Qwen2Model.set_vocab: SentencePiece, else GPT-2 BPE). */
static gk_status vocabulary(planner *p, gk_model *m, gk_error *err) {
    cJSON *tc = NULL;
    gk_status s = p->arch->llama ? gk_hf_json_load(p->dir, "tokenizer_config.json", false, &tc, err) : GK_OK;
    if (s != GK_OK) return s;
    if (p->arch->llama && gk_hf_exists(p->dir, "tekken.json") && !gk_hf_exists(p->dir, "tokenizer.json"))
        s = GK_E_UNSUPPORTED;
    const cJSON *cls = tc ? cJSON_GetObjectItemCaseSensitive(tc, "tokenizer_class") : NULL;
    if (cJSON_IsString(cls) && strcmp(cls->valuestring, "HybridDNATokenizer") == 0) s = GK_E_UNSUPPORTED;
    if (s != GK_OK) {
        cJSON_Delete(tc);
        return gk_error_set(err, s, -1, "%s: this tokenizer (Mistral tekken or HybridDNA) is not supported yet", p->dir);
    }
    const cJSON *prefix = tc ? cJSON_GetObjectItemCaseSensitive(tc, "add_prefix_space") : NULL;
    if (prefix && cJSON_IsBool(prefix)) s = put_bool(m, "tokenizer.ggml.add_space_prefix", cJSON_IsTrue(prefix), err);
    cJSON_Delete(tc);
    if (s != GK_OK) return s;
    /* TextModel.set_vocab (Qwen3-MoE): the GPT-2 BPE route whatever else is there */
    if (p->arch->qwen2_moe || !gk_hf_exists(p->dir, "tokenizer.model")) {
        if (!gk_hf_exists(p->dir, "tokenizer.json")) {
            gk_error_set(err, GK_E_NOT_FOUND, -1, "no tokenizer: neither tokenizer.model nor tokenizer.json");
            gk_error_about(err, p->dir);
            return GK_E_NOT_FOUND;
        }
        bool llama_hf = false;
        if (p->arch->llama && (s = llama_hf_kind(p->dir, &llama_hf, err)) != GK_OK) return s;
        static const char *const k_size[] = { "vocab_size", NULL };
        const cJSON *vs = hp_find(&p->hp, k_size, NULL);
        int64_t vocab_size = gk_hf_is_int(vs) && vs->valuedouble >= 0 ? (int64_t)vs->valuedouble : -1;
        if (llama_hf) s = gk_conv_vocab_llama_hf(m, p->dir, p->hp.root, vocab_size, err);
        else s = gk_conv_vocab_bpe(m, p->dir, p->hp.root, vocab_size, p->o->vocab_pre, err);
    } else {
        static const char *const k_vocab[] = { "vocab_size_per_layer_input", "vocab_size", NULL };
        const cJSON *vs = hp_find(&p->hp, k_vocab, NULL);
        int64_t vocab_size = gk_hf_is_int(vs) && vs->valuedouble > 0 ? (int64_t)vs->valuedouble : -1;
        s = gk_conv_vocab_spm(m, p->dir, p->hp.root, vocab_size, err);
    }
    if (s != GK_OK || !p->arch->llama) return s;
    /* LlamaModel.set_vocab's two special cases of config.json's vocab_size */
    static const char *const k_size[] = { "vocab_size", NULL };
    const cJSON *cv = hp_find(&p->hp, k_size, NULL);
    double size = cv == NULL ? 32000 : cJSON_IsNumber(cv) ? cv->valuedouble : -1;
    if (size == 32016) s = gk_conv_vocab_codellama(m, p->dir, p->hp.root, err);
    if (size == 49152) s = put_bool(m, "tokenizer.ggml.add_bos_token", false, err);
    return s;
}

/* The output's vocabulary and its embedding must agree (llama.cpp refuses the
 * model otherwise; the reference writes it all the same). */
static gk_status check_embedding(planner *p, gk_error *err) {
    gk_model *m = p->c->out;
    int64_t ti = gk_tensor_find(m, "token_embd.weight");
    const gk_value *tokens = gk_kv_get(m, "tokenizer.ggml.tokens");
    if (ti < 0 || tokens == NULL) return GK_OK;
    const gk_tensor *t = gk_tensor_at(m, (size_t)ti);
    if (t->ne[1] == tokens->arr.n) return GK_OK;
    gk_error_set(err, GK_E_CORRUPT, -1,
                 "the vocabulary has %llu tokens (config.json vocab_size, the tokenizer) but "
                 "model.embed_tokens.weight has %llu rows",
                 (unsigned long long)tokens->arr.n, (unsigned long long)t->ne[1]);
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", p->dir);
    gk_error_about(err, path);
    return GK_E_CORRUPT;
}

/* True when a string holds needle, ignoring ASCII case. */
static bool has_lower(const char *s, const char *needle) {
    for (size_t n = strlen(needle); *s; s++)
        if (strncasecmp(s, needle, n) == 0) return true;
    return false;
}

/* Qwen3Model._is_qwen3_reranker: the README's title or a name says so. */
static bool is_reranker(const char *dir, const cJSON *config) {
    char *readme = NULL;
    gk_error ignored;
    bool yes = false;
    if (gk_hf_text_load(dir, "README.md", false, &readme, &ignored) == GK_OK && readme)
        yes = has_lower(readme, "# qwen3-reranker") || has_lower(readme, "# qwen3-vl-reranker");
    free(readme);
    const char *hints[4] = { dir, NULL, NULL, NULL };
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(config, "_name_or_path");
    hints[1] = cJSON_IsString(j) ? j->valuestring : NULL;
    j = cJSON_GetObjectItemCaseSensitive(config, "model_type");
    hints[2] = cJSON_IsString(j) ? j->valuestring : NULL;
    j = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(config, "architectures"), 0);
    hints[3] = cJSON_IsString(j) ? j->valuestring : NULL;
    for (int i = 0; i < 4; i++)
        if (hints[i] && (has_lower(hints[i], "qwen3-reranker") || has_lower(hints[i], "qwen3-vl-reranker"))) yes = true;
    if (hints[3] && has_lower(hints[3], "sequenceclassification")) yes = true;
    return yes;
}

gk_status gk_convert_plan(const char *dir, const gk_convert_opts *o, gk_convert **out, gk_error *err) {
    *out = NULL;
    if (o == NULL) return gk_error_set(err, GK_E_ARG, -1, "no options");
    gk_status sc = GK_OPTS_CHECK(o, gk_convert_opts, err);
    if (sc != GK_OK) return sc;
    if (o->out_type != GK_TYPE_F32 && o->out_type != GK_TYPE_F16 && o->out_type != GK_TYPE_BF16 &&
        o->out_type != GK_TYPE_Q8_0)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "output type must be F32, F16, BF16 or Q8_0");
    cJSON *config;
    gk_status s = gk_hf_json_load(dir, "config.json", true, &config, err);
    if (s != GK_OK) return s;
    planner p = { .dir = dir, .o = o, .n_experts = -1 };
    p.hp.root = config;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(config, "text_config");
    p.hp.text = cJSON_IsObject(tc) ? tc : NULL;
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(config, "architectures");
    const cJSON *a0 = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
    if (!cJSON_IsString(a0)) {
        cJSON_Delete(config);
        return config_error(err, dir, GK_E_NOT_FOUND, "no '%s' list naming the model class", "architectures");
    }
    p.arch = gk_conv_arch_find(a0->valuestring);
    if (p.arch == NULL) {
        gk_error_set(err, GK_E_UNSUPPORTED, -1, "architecture %s is not supported (supported: %s)", a0->valuestring,
                     gk_conv_arch_list());
        char path[4096];
        snprintf(path, sizeof path, "%s/config.json", dir);
        gk_error_about(err, path);
        cJSON_Delete(config);
        return GK_E_UNSUPPORTED;
    }
    if (p.arch->qk_norm && !p.arch->qwen2_moe && is_reranker(dir, config)) {
        gk_error_set(err, GK_E_UNSUPPORTED, -1, "a Qwen3 reranker (its yes/no classifier head) is not supported yet");
        gk_error_about(err, dir);
        cJSON_Delete(config);
        return GK_E_UNSUPPORTED;
    }
    if (!o->ignore_model_card && (s = gk_conv_model_card(dir, &p.card, err)) != GK_OK) {
        cJSON_Delete(config);
        return s;
    }
    /* rope_parameters / rope_scaling */
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(config, "rope_parameters");
    if (rp == NULL) rp = cJSON_GetObjectItemCaseSensitive(config, "rope_scaling");
    if (p.hp.text && (cJSON_GetObjectItemCaseSensitive(p.hp.text, "rope_parameters") ||
                      cJSON_GetObjectItemCaseSensitive(p.hp.text, "rope_scaling"))) {
        rp = cJSON_GetObjectItemCaseSensitive(p.hp.text, "rope_parameters");
        if (rp == NULL) rp = cJSON_GetObjectItemCaseSensitive(p.hp.text, "rope_scaling");
    }
    p.rp.params = cJSON_IsObject(rp) ? rp : NULL;
    const cJSON *full = p.rp.params ? cJSON_GetObjectItemCaseSensitive(p.rp.params, "full_attention") : NULL;
    const cJSON *sliding = p.rp.params ? cJSON_GetObjectItemCaseSensitive(p.rp.params, "sliding_attention") : NULL;
    if (full || sliding) {
        if (full) p.rp.params = cJSON_IsObject(full) ? full : NULL;
    } else {
        static const char *const k_theta[] = { "global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta",
                                               "rotary_emb_base", NULL };
        static const char *const k_orig[] = { "original_max_position_embeddings", NULL };
        p.rp.mirror = true;
        p.rp.theta = hp_find(&p.hp, k_theta, NULL);
        p.rp.orig_ctx = hp_find(&p.hp, k_orig, NULL);
    }
    gk_convert *c = calloc(1, sizeof *c);
    p.c = c;
    if (c == NULL || (c->out = gk_model_new()) == NULL || (p.presented = gk_model_new()) == NULL ||
        (c->source = gk_conv_source_new()) == NULL) {
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        goto fail;
    }
    if (!o->vocab_only) {
        static const char *const k_head[] = { "n_heads", "num_attention_heads", NULL };
        static const char *const k_kv[] = { "n_kv_heads", "num_key_value_heads", NULL };
        s = hp_int(&p.hp, dir, k_head, true, &p.n_head, err);
        if (s == GK_OK) s = hp_int(&p.hp, dir, k_kv, true, &p.n_kv_head, err);
        if (s == GK_OK) s = gk_ckpt_open(dir, &c->ckpt, err);
        if (s == GK_OK) s = plan_tensors(&p, err);
        if (s != GK_OK) goto fail;
    }
    /* The metadata, in the writer's order; the tensors were added above. */
    s = general(&p, c->out, err);
    if (s == GK_OK) s = hyperparameters(&p, c->out, err);
    if (s == GK_OK) s = vocabulary(&p, c->out, err);
    if (s == GK_OK) s = check_embedding(&p, err);
    if (s != GK_OK) goto fail;
    size_t n = gk_tensor_count(c->out);
    c->steps = calloc(n ? n : 1, sizeof *c->steps);
    if (c->steps == NULL) {
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        goto fail;
    }
    s = gk_conv_source_file(c->source, dir, p.presented, &c->src, err);
    p.presented = NULL;
    if (s != GK_OK) goto fail;
    for (size_t i = 0; i < n; i++) c->steps[i] = (gk_step){ c->src, i, NULL };
    free(p.pending);
    cJSON_Delete(p.card);
    cJSON_Delete(config);
    *out = c;
    return GK_OK;
fail:
    free(p.pending);
    cJSON_Delete(p.card);
    gk_model_free(p.presented);
    gk_convert_free(c);
    cJSON_Delete(config);
    return s;
}
