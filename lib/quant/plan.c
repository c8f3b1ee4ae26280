/*
 * plan.c - decides, tensor by tensor, what `quantize` writes, the way
 * llama-quantize decides it: which tensors are eligible, which type each gets,
 * the fallbacks for rows that are not whole blocks, the order tensors are
 * written in, and the metadata the output carries (--override-kv included),
 * for one input or a shard set (--keep-split: one output per shard).
 * The per-tensor mixing rules themselves are in mix.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>

#include "meta/model.h"
#include "quant/mix.h"
#include "quant/overrides.h"
#include "util/opts.h"

/* ------------------------------------------------------------------------ */
/* Targets: llama-quantize's names, file type numbers and base types        */
/* ------------------------------------------------------------------------ */

static const gk_quant_target targets[] = {   /* llama-quantize's list, in its order */
    { "Q1_0", 40, GK_TYPE_Q1_0, false, false },
    { "Q2_0", 41, GK_TYPE_Q2_0, false, false },
    { "Q4_0", 2, GK_TYPE_Q4_0, false, false },
    { "Q4_1", 3, GK_TYPE_Q4_1, false, false },
    { "MXFP4_MOE", 38, GK_TYPE_MXFP4, true, false },
    { "Q5_0", 8, GK_TYPE_Q5_0, false, false },
    { "Q5_1", 9, GK_TYPE_Q5_1, false, false },
    { "IQ2_XXS", 19, GK_TYPE_IQ2_XXS, true, false },
    { "IQ2_XS", 20, GK_TYPE_IQ2_XS, true, false },
    { "IQ2_S", 28, GK_TYPE_IQ2_XS, true, false },
    { "IQ2_M", 29, GK_TYPE_IQ2_S, true, false },
    { "IQ1_S", 24, GK_TYPE_IQ1_S, true, false },
    { "IQ1_M", 31, GK_TYPE_IQ1_M, true, false },
    { "TQ1_0", 36, GK_TYPE_TQ1_0, false, false },
    { "TQ2_0", 37, GK_TYPE_TQ2_0, false, false },
    { "Q2_K", 10, GK_TYPE_Q2_K, true, false },
    { "Q2_K_S", 21, GK_TYPE_Q2_K, true, false },
    { "IQ3_XXS", 23, GK_TYPE_IQ3_XXS, true, false },
    { "IQ3_S", 26, GK_TYPE_IQ3_S, true, false },
    { "IQ3_M", 27, GK_TYPE_IQ3_S, true, false },
    { "Q3_K", 12, GK_TYPE_Q3_K, true, false },       /* alias of Q3_K_M */
    { "IQ3_XS", 22, GK_TYPE_IQ3_S, true, false },
    { "Q3_K_S", 11, GK_TYPE_Q3_K, true, false },
    { "Q3_K_M", 12, GK_TYPE_Q3_K, true, false },
    { "Q3_K_L", 13, GK_TYPE_Q3_K, true, false },
    { "IQ4_NL", 25, GK_TYPE_IQ4_NL, true, false },
    { "IQ4_XS", 30, GK_TYPE_IQ4_XS, true, false },
    { "Q4_K", 15, GK_TYPE_Q4_K, true, false },       /* alias of Q4_K_M */
    { "Q4_K_S", 14, GK_TYPE_Q4_K, true, false },
    { "Q4_K_M", 15, GK_TYPE_Q4_K, true, false },
    { "Q5_K", 17, GK_TYPE_Q5_K, true, false },       /* alias of Q5_K_M */
    { "Q5_K_S", 16, GK_TYPE_Q5_K, true, false },
    { "Q5_K_M", 17, GK_TYPE_Q5_K, true, false },
    { "Q6_K", 18, GK_TYPE_Q6_K, true, false },
    { "Q8_0", 7, GK_TYPE_Q8_0, false, false },
    { "F16", 1, GK_TYPE_F16, false, false },
    { "BF16", 32, GK_TYPE_BF16, false, false },
    { "F32", 0, GK_TYPE_F32, false, false },
    { "COPY", 0, GK_TYPE_F32, false, true },
};

#define N_TARGETS (sizeof targets / sizeof targets[0])

size_t gk_quant_target_count(void) { return N_TARGETS; }

const gk_quant_target *gk_quant_target_at(size_t i) { return i < N_TARGETS ? &targets[i] : NULL; }

const gk_quant_target *gk_quant_target_lookup(const char *name) {
    if (name == NULL || *name == '\0') return NULL;
    for (size_t i = 0; i < N_TARGETS; i++)
        if (strcasecmp(targets[i].name, name) == 0) return &targets[i];
    char *end;
    unsigned long n = strtoul(name, &end, 10);
    if (*end != '\0') return NULL;
    for (size_t i = 0; i < N_TARGETS; i++)   /* first row of a number, as llama-quantize: 12 is "Q3_K" */
        if (!targets[i].is_copy && targets[i].ftype == n) return &targets[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Eligibility and fallbacks                                                */
/* ------------------------------------------------------------------------ */

/* Name fragments of 2-D weights llama-quantize leaves alone (norms, routers,
 * small convolution, RWKV, relative-position, multimodal and codebook tensors). */
static const char *const never_quantized[] = {
    "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
    "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
    "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
    "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
    "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
    "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd",
    "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook",
    "mm.a.code_embd",
};

bool gk_quant_eligible(const char *name, uint32_t n_dims) {
    size_t len = strlen(name);
    if (n_dims < 2 || len < 6 || strcmp(name + len - 6, "weight") != 0) return false;
    for (size_t i = 0; i < sizeof never_quantized / sizeof never_quantized[0]; i++)
        if (strstr(name, never_quantized[i])) return false;
    return strcmp(name, "position_embd.weight") != 0 && strcmp(name, "token_types.weight") != 0;
}

uint32_t gk_quant_fallback(uint32_t type, uint64_t n) {
    const gk_type_info *t = gk_type_get(type);
    if (t == NULL || n % t->block_elems == 0) return type;
    uint32_t to;
    switch (type) {
    case GK_TYPE_IQ1_S: case GK_TYPE_IQ1_M: case GK_TYPE_IQ2_XXS: case GK_TYPE_IQ2_XS:
    case GK_TYPE_IQ2_S: case GK_TYPE_IQ3_XXS: case GK_TYPE_IQ3_S: case GK_TYPE_IQ4_XS:
        to = GK_TYPE_IQ4_NL; break;
    case GK_TYPE_Q2_0: case GK_TYPE_Q2_K: case GK_TYPE_Q3_K: case GK_TYPE_TQ1_0: case GK_TYPE_TQ2_0:
        to = GK_TYPE_Q4_0; break;
    case GK_TYPE_Q4_K: to = GK_TYPE_Q5_0; break;
    case GK_TYPE_Q5_K: to = GK_TYPE_Q5_1; break;
    case GK_TYPE_Q6_K: to = GK_TYPE_Q8_0; break;
    default:
        /* a 32-element block type has nothing smaller to go to: F16 below; the
         * release defines no fallback for larger blocks (Q1_0, NVFP4) */
        if (t->block_elems > 32) return GK_TYPE_COUNT;
        to = type;
        break;
    }
    return n % gk_type_get(to)->block_elems == 0 ? to : GK_TYPE_F16;
}

/* ------------------------------------------------------------------------ */
/* --override-kv                                                            */
/* ------------------------------------------------------------------------ */

gk_status gk_kv_override_parse(const char *arg, gk_kv_override *o, gk_error *err) {
    memset(o, 0, sizeof *o);
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg || (size_t)(eq - arg) >= sizeof o->key)
        return gk_error_set(err, GK_E_ARG, -1, "malformed override '%s' (KEY=TYPE:VALUE, key under 128 bytes)", arg);
    memcpy(o->key, arg, (size_t)(eq - arg));
    const char *v = eq + 1;
    char *end;
    if (strncmp(v, "int:", 4) == 0) {
        o->kind = GK_OVR_INT;
        errno = 0;
        o->i = strtoll(v + 4, &end, 10);
        if (v[4] == '\0' || *end != '\0' || errno == ERANGE)
            return gk_error_set(err, GK_E_ARG, -1, "override '%s': '%s' is not an integer", arg, v + 4);
    } else if (strncmp(v, "float:", 6) == 0) {
        o->kind = GK_OVR_FLOAT;
        o->f = strtod(v + 6, &end);
        if (v[6] == '\0' || *end != '\0')
            return gk_error_set(err, GK_E_ARG, -1, "override '%s': '%s' is not a number", arg, v + 6);
    } else if (strncmp(v, "bool:", 5) == 0) {
        o->kind = GK_OVR_BOOL;
        if (strcmp(v + 5, "true") == 0) o->b = true;
        else if (strcmp(v + 5, "false") != 0)
            return gk_error_set(err, GK_E_ARG, -1, "override '%s': a bool is true or false", arg);
    } else if (strncmp(v, "str:", 4) == 0) {
        o->kind = GK_OVR_STR;
        if (strlen(v + 4) >= sizeof o->s)
            return gk_error_set(err, GK_E_ARG, -1, "override '%s': the string exceeds 127 bytes", arg);
        strcpy(o->s, v + 4);
    } else {
        return gk_error_set(err, GK_E_ARG, -1, "override '%s': TYPE is int, float, bool or str", arg);
    }
    return GK_OK;
}

gk_status gk_kv_override_apply(gk_model *m, const gk_kv_override *o, gk_error *err) {
    gk_value v = { 0 };
    switch (o->kind) {
    case GK_OVR_INT:   /* the release writes every int override so */
    case GK_OVR_U32:   /* |i| cut to 32 bits, whatever the key held */
        v.type = GK_V_U32;
        v.u = (uint32_t)(o->i < 0 ? -(uint64_t)o->i : (uint64_t)o->i);
        break;
    case GK_OVR_FLOAT:
        v.type = GK_V_F32;
        v.f = (double)(float)o->f;
        break;
    case GK_OVR_BOOL:
        v.type = GK_V_BOOL;
        v.b = o->b;
        break;
    case GK_OVR_STR:
        v.type = GK_V_STR;
        v.s.ptr = o->s;
        v.s.len = strlen(o->s);
        break;
    }
    gk_error why;
    if (gk_layout_value_check(o->key, &v, &why) != GK_OK)
        return gk_error_set(err, why.code, -1, "override %s", why.message);
    return gk_kv_set_last(m, o->key, &v, err);
}

/* ------------------------------------------------------------------------ */
/* Plan                                                                     */
/* ------------------------------------------------------------------------ */

/* Layer number of "blk.N.<rest>", -1 for other names (the loader's order key). */
static long layer_of(const char *name) {
    int layer = -1;
    if (sscanf(name, "blk.%d.", &layer) != 1) return -1;
    return layer;
}

/* A tensor of the input set: which input, which tensor. */
typedef struct src_ref {
    size_t input, index;
    const gk_tensor *t;
    const char *name;         /* its name in the output (--prune-layers renumbers) */
} src_ref;

/* llama.cpp's weights map order: layer number, then name. */
static int cmp_loader_order(const void *a, const void *b) {
    const gk_tensor *x = ((const src_ref *)a)->t, *y = ((const src_ref *)b)->t;
    long lx = layer_of(x->name.ptr), ly = layer_of(y->name.ptr);
    if (lx != ly) return lx < ly ? -1 : 1;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = memcmp(x->name.ptr, y->name.ptr, n);
    if (c != 0) return c;
    return x->name.len < y->name.len ? -1 : x->name.len > y->name.len;
}

/* --keep-split order: shard, then position in the shard's data. */
static int cmp_file_order(const void *a, const void *b) {
    const src_ref *x = a, *y = b;
    if (x->input != y->input) return x->input < y->input ? -1 : 1;
    if (x->t->offset != y->t->offset) return x->t->offset < y->t->offset ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static bool is_quantized_type(uint32_t type) {
    const gk_type_info *t = gk_type_get(type);
    return t && t->quantized;
}

/* What choose_type needs besides the tensor. */
typedef struct choose_ctx {
    const gk_quant_opts *o;
    const gk_mix_model *mm;
    gk_mix_state st;
    regex_t *rx;              /* compiled tensor rules */
    uint32_t ftype;
} choose_ctx;

/* The first --tensor-type rule whose pattern is found in name, or -1. */
static int first_rule(const choose_ctx *c, const char *name) {
    for (size_t k = 0; k < c->o->n_tensor_rules; k++)
        if (regexec(&c->rx[k], name, 0, NULL, 0) == 0) return (int)k;
    return -1;
}

/* The type one tensor (called `name` in the output) gets, as llama-quantize
 * picks it: not eligible, kept; --token-embedding-type / --output-tensor-type
 * for the embeddings / output.weight (as given, no fallback); otherwise, for a
 * quantized target, the first matching --tensor-type rule, or (without --pure)
 * the mixing rules, which alone advance their counters; then the fallback for
 * rows that are not whole blocks. */
static gk_status choose_type(choose_ctx *c, const gk_tensor *t, const char *name, gk_quant_entry *e,
                             gk_error *err) {
    const gk_quant_opts *o = c->o;
    bool eligible = !o->target->is_copy && gk_quant_eligible(name, t->n_dims) &&
                    !(o->leave_output && strcmp(name, "output.weight") == 0);
    e->wanted = e->to = t->type;
    e->pattern = -1;
    if (!eligible) {
        e->why |= GK_QWHY_KEPT;
        return GK_OK;
    }
    const gk_mix_kind kind = gk_mix_kind_of(name);
    /* per_layer_token_embd follows --token-embedding-type unless a rule names it */
    if (o->token_embd_type >= 0 && kind == GK_MIX_TOKEN_EMBD &&
        !(strcmp(name, "per_layer_token_embd.weight") == 0 && first_rule(c, name) >= 0)) {
        e->wanted = e->to = (uint32_t)o->token_embd_type;
        e->why |= GK_QWHY_OPTION;
        return GK_OK;
    }
    if (o->output_type >= 0 && kind == GK_MIX_OUTPUT) {
        e->wanted = e->to = (uint32_t)o->output_type;
        e->why |= GK_QWHY_OPTION;
        return GK_OK;
    }
    uint32_t type = o->target->base_type;
    if (is_quantized_type(type)) {
        e->pattern = first_rule(c, name);
        if (e->pattern >= 0) {
            type = o->tensor_rules[e->pattern].type;
            e->why |= GK_QWHY_PATTERN;
        } else if (!o->pure) {
            uint32_t mixed;
            const gk_mix_query q = { c->ftype, type, name, t->ne[0], o->output_type, o->token_embd_type,
                                     o->has_imatrix, t->n_dims > 2 ? t->ne[2] : 1 };
            gk_status st = gk_quant_mix_type(c->mm, &c->st, &q, &mixed, err);
            if (st != GK_OK) return st;
            if (mixed != type) e->why |= GK_QWHY_MIXED;
            type = mixed;
        }
        e->wanted = type;
        e->to = gk_quant_fallback(type, t->ne[0]);
        if (e->to == GK_TYPE_COUNT)
            return gk_error_set(err, GK_E_ROW_BLOCK, -1,
                                "%s: rows of %llu are not whole %s blocks (%u), and %s has no fallback type",
                                name, (unsigned long long)t->ne[0], gk_type_get(type)->name,
                                gk_type_get(type)->block_elems, gk_type_get(type)->name);
        if (e->to != e->wanted && o->no_fallback)
            return gk_error_set(err, GK_E_ROW_BLOCK, -1,
                                "%s: rows of %llu are not whole %s blocks (fallback to %s refused by --no-fallback)",
                                name, (unsigned long long)t->ne[0], gk_type_get(e->wanted)->name,
                                gk_type_get(e->to)->name);
    } else {
        e->wanted = e->to = type;
    }
    return GK_OK;
}

/* First pass over a tensor, as llama-quantize's preliminary loop: rows that the
 * chosen type cannot hold, and the importance matrix it needs. */
static gk_status check_first(gk_quant_plan *plan, const gk_quant_opts *o, uint32_t ftype, const gk_tensor *t,
                             const char *name, gk_quant_entry *e, gk_error *err) {
    if (e->why & GK_QWHY_KEPT) return GK_OK;
    if (e->to != e->wanted) {
        e->why |= GK_QWHY_FALLBACK;
        plan->n_fallbacks++;
    }
    const gk_type_info *to = gk_type_get(e->to);
    if (to == NULL) return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: unknown type %u", name, e->to);
    if (to->block_elems > 1 && t->ne[0] % to->block_elems != 0)   /* an option's type: no fallback */
        return gk_error_set(err, GK_E_ROW_BLOCK, -1, "%s: rows of %llu are not whole %s blocks (%u)", name,
                            (unsigned long long)t->ne[0], to->name, to->block_elems);
    if (!o->has_imatrix && gk_quant_imatrix_required(e->to, ftype, name)) {
        if (!o->plan_only)
            return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                                "%s: this quantization needs an importance matrix (--imatrix): "
                                "the tensor's type would be %s", name, to->name);
        e->why |= GK_QWHY_NEEDS_IMATRIX;
        plan->n_need_imatrix++;
    }
    return GK_OK;
}

/* Second pass: checks that the conversion e asks for can be done, and counts it. */
static gk_status check_second(gk_quant_plan *plan, const gk_quant_opts *o, const char *name,
                              gk_quant_entry *e, gk_error *err) {
    if (e->to == e->from) return GK_OK;
    const gk_type_info *from = gk_type_get(e->from), *to = gk_type_get(e->to);
    if (!o->plan_only) {
        if (is_quantized_type(e->from) && !o->allow_requantize)
            return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                                "%s: requantizing from type %s is disabled (use --allow-requantize)",
                                name, from->name);
        if (from->dequantize == NULL)
            return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot convert from %s", name, from->name);
        if (to->quantize == NULL)
            return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot quantize to %s%s", name, to->name,
                                to->needs_imatrix ? " without an importance matrix"
                                : to->dequantize == NULL ? " (this build has no kernels for it)" : "");
        /* exempt from the release's check (embeddings, output.weight), yet its quantizer
         * has no way without weights: the release aborts, ggufkit refuses */
        if (gk_quant_weights_mandatory(e->to) && !o->has_imatrix)
            return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                                "%s: cannot quantize to %s without an importance matrix (--imatrix)", name,
                                to->name);
    } else if (to->quantize == NULL) {
        e->why |= GK_QWHY_NO_KERNEL;
    }
    plan->n_converted++;
    if (is_quantized_type(e->from)) plan->n_requantized++;
    return GK_OK;
}

/* llama.cpp's file type guess from the most common tensor type (loader order),
 * marked "guessed" (1024); general.file_type wins when present. */
static uint32_t input_ftype(const gk_model *first, const src_ref *order, size_t n) {
    uint64_t ft;
    if (gk_kv_get_uint(first, "general.file_type", &ft) == GK_OK) return (uint32_t)ft;
    static const struct { uint32_t type, ftype; } by_type[] = {
        { GK_TYPE_F32, 0 }, { GK_TYPE_F16, 1 }, { GK_TYPE_BF16, 32 }, { GK_TYPE_Q4_0, 2 },
        { GK_TYPE_Q4_1, 3 }, { GK_TYPE_Q5_0, 8 }, { GK_TYPE_Q5_1, 9 }, { GK_TYPE_Q8_0, 7 },
        { GK_TYPE_Q2_K, 10 }, { GK_TYPE_Q3_K, 12 }, { GK_TYPE_Q4_K, 15 }, { GK_TYPE_Q5_K, 17 },
        { GK_TYPE_Q6_K, 18 }, { GK_TYPE_TQ1_0, 36 }, { GK_TYPE_TQ2_0, 37 }, { GK_TYPE_IQ2_XXS, 19 },
        { GK_TYPE_IQ2_XS, 20 }, { GK_TYPE_IQ2_S, 28 }, { GK_TYPE_IQ3_XXS, 23 }, { GK_TYPE_IQ1_S, 24 },
        { GK_TYPE_IQ1_M, 31 }, { GK_TYPE_IQ4_NL, 25 }, { GK_TYPE_IQ4_XS, 30 }, { GK_TYPE_IQ3_S, 26 },
        { GK_TYPE_NVFP4, 39 }, { GK_TYPE_Q1_0, 40 }, { GK_TYPE_Q2_0, 41 },
    };
    uint32_t count[GK_TYPE_COUNT] = { 0 }, best = 0, best_type = GK_TYPE_F32;
    for (size_t i = 0; i < n; i++) {
        uint32_t ty = order[i].t->type;
        if (ty >= GK_TYPE_COUNT) continue;
        if (++count[ty] > best) {
            best = count[ty];
            best_type = ty;
        }
    }
    uint32_t guess = 0;
    for (size_t i = 0; i < sizeof by_type / sizeof by_type[0]; i++)
        if (by_type[i].type == best_type) guess = by_type[i].ftype;
    return guess | 1024u;
}

/* The metadata of output 0: the first input's pairs, file type keys, no
 * split keys, then the overrides. */
static gk_status set_metadata(gk_model *out, uint32_t ftype, const gk_quant_opts *o, gk_error *err) {
    gk_value v = { .type = GK_V_U32, .u = 2 };
    gk_status st = gk_kv_set_last(out, "general.quantization_version", &v, err);
    v.u = ftype;
    if (st == GK_OK) st = gk_kv_set_last(out, "general.file_type", &v, err);
    gk_kv_delete(out, "split.no");
    gk_kv_delete(out, "split.count");
    gk_kv_delete(out, "split.tensors.count");
    for (size_t k = 0; k < o->n_overrides && st == GK_OK; k++) st = gk_kv_override_apply(out, &o->overrides[k], err);
    return st;
}

/* split.no / split.count / split.tensors.count on every output of a kept split. */
static gk_status set_split_keys(gk_quant_plan *plan, uint64_t n_tensors, gk_error *err) {
    gk_status st = GK_OK;
    for (size_t k = 0; k < plan->n_outs && st == GK_OK; k++) {
        gk_value v = { .type = GK_V_U16, .u = k };
        st = gk_kv_set_last(plan->outs[k], "split.no", &v, err);
        v.u = plan->n_outs;
        if (st == GK_OK) st = gk_kv_set_last(plan->outs[k], "split.count", &v, err);
        v = (gk_value){ .type = GK_V_I32, .i = (int64_t)n_tensors };
        if (st == GK_OK) st = gk_kv_set_last(plan->outs[k], "split.tensors.count", &v, err);
    }
    return st;
}

/* A --tensor-type pattern (ECMAScript, as std::regex reads it) in POSIX extended
 * form: the class escapes \d \w \s and their negations become bracket
 * expressions (inside a bracket, their ranges); the rest is the same language
 * for the patterns people write. @return : a malloc'ed string or NULL. */
static char *posix_pattern(const char *p) {
    size_t n = strlen(p);
    char *out = malloc(n * 16 + 1), *o = out;
    if (out == NULL) return NULL;
    bool in_bracket = false;
    for (size_t i = 0; i < n; i++) {
        char ch = p[i];
        if (ch == '\\' && i + 1 < n) {
            const char *inner = NULL;
            bool neg = false;
            switch (p[i + 1]) {
            case 'd': inner = "0-9"; break;
            case 'D': inner = "0-9"; neg = true; break;
            case 'w': inner = "A-Za-z0-9_"; break;
            case 'W': inner = "A-Za-z0-9_"; neg = true; break;
            case 's': inner = "[:space:]"; break;
            case 'S': inner = "[:space:]"; neg = true; break;
            default: break;
            }
            if (inner != NULL && (in_bracket ? !neg : true)) {
                o += sprintf(o, in_bracket ? "%s" : neg ? "[^%s]" : "[%s]", inner);
                i++;
                continue;
            }
            *o++ = ch;
            *o++ = p[++i];
            continue;
        }
        if (!in_bracket && ch == '[') {
            in_bracket = true;
            *o++ = ch;
            if (p[i + 1] == '^') *o++ = p[++i];
            if (p[i + 1] == ']') *o++ = p[++i];
            continue;
        }
        if (in_bracket && ch == '[' && p[i + 1] == ':') {   /* [:class:] */
            const char *end = strstr(p + i + 2, ":]");
            if (end) {
                size_t len = (size_t)(end + 2 - (p + i));
                memcpy(o, p + i, len);
                o += len;
                i += len - 1;
                continue;
            }
        }
        if (in_bracket && ch == ']') in_bracket = false;
        *o++ = ch;
    }
    *o = '\0';
    return out;
}

static gk_status compile_rules(const gk_quant_opts *o, regex_t **out, gk_error *err) {
    *out = NULL;
    if (o->n_tensor_rules == 0) return GK_OK;
    regex_t *rx = calloc(o->n_tensor_rules, sizeof *rx);
    if (rx == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t k = 0; k < o->n_tensor_rules; k++) {
        char *pat = posix_pattern(o->tensor_rules[k].pattern);
        int rc = pat ? regcomp(&rx[k], pat, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;
        free(pat);
        if (rc != 0) {
            char msg[128];
            regerror(rc, &rx[k], msg, sizeof msg);
            for (size_t j = 0; j < k; j++) regfree(&rx[j]);
            free(rx);
            return gk_error_set(err, GK_E_ARG, -1, "--tensor-type pattern '%s': %s", o->tensor_rules[k].pattern, msg);
        }
    }
    *out = rx;
    return GK_OK;
}

static void free_rules(regex_t *rx, size_t n) {
    if (rx == NULL) return;
    for (size_t k = 0; k < n; k++) regfree(&rx[k]);
    free(rx);
}

/* --prune-layers: the output name of `name` (into buf), or NULL when its layer
 * is dropped. As llama-quantize, layers are met in loader order: below the
 * lowest pruned layer they keep their number, above it they are numbered on
 * from the last kept one. `map` (layer -> new number, -2 = pruned, -1 = not
 * met yet, `n_map` entries) and *next carry the state. The layer is the first
 * "blk.N." anywhere in the name. */
static const char *prune_name(const char *name, const uint32_t *prune, size_t n_prune, uint32_t lowest,
                              long *map, size_t n_map, long *next, char *buf, size_t buf_size) {
    if (n_prune == 0) return name;
    for (const char *p = strstr(name, "blk."); p != NULL; p = strstr(p + 1, "blk.")) {
        const char *d = p + 4, *e = d;
        while (*e >= '0' && *e <= '9') e++;
        if (e == d || *e != '.') continue;
        unsigned long blk = strtoul(d, NULL, 10);
        long *slot = blk < n_map ? &map[blk] : NULL;
        long to;
        if (slot && *slot != -1) {
            to = *slot;
        } else {
            bool dropped = false;
            for (size_t k = 0; k < n_prune; k++) dropped |= prune[k] == blk;
            if (dropped) to = -2;
            else if (blk < lowest) { to = (long)blk; *next = (long)blk + 1; }
            else to = (*next)++;
            if (slot) *slot = to;
        }
        if (to == -2) return NULL;
        snprintf(buf, buf_size, "%.*s%ld%s", (int)(d - name), name, to, e);
        return buf;
    }
    return name;
}

gk_status gk_quant_plan_build_inputs(const gk_model *const *inputs, size_t n_inputs,
                                     const gk_quant_opts *o, gk_quant_plan *plan, gk_error *err) {
    memset(plan, 0, sizeof *plan);
    if (n_inputs == 0 || o == NULL || o->target == NULL)
        return gk_error_set(err, GK_E_ARG, -1, "no input or no target");
    gk_status sc = GK_OPTS_CHECK(o, gk_quant_opts, err);
    if (sc != GK_OK) return sc;
    size_t n = 0;
    for (size_t k = 0; k < n_inputs; k++) n += gk_tensor_count(inputs[k]);
    src_ref *order = malloc((n ? n : 1) * sizeof *order);
    char (*names)[GK_MAX_TENSOR_NAME + 16] = malloc((n ? n : 1) * sizeof *names);
    long *layer_map = NULL;
    size_t n_map = 1;   /* 1 + the highest layer number of any "blk.N." in a name */
    for (size_t k = 0; k < n_inputs; k++)
        for (size_t i = 0; i < gk_tensor_count(inputs[k]); i++)
            for (const char *p = strstr(gk_tensor_at(inputs[k], i)->name.ptr, "blk."); p; p = strstr(p + 1, "blk.")) {
                unsigned long l = strtoul(p + 4, NULL, 10);
                if (p[4] >= '0' && p[4] <= '9' && l < (1ul << 20) && l + 1 > n_map) n_map = l + 1;
            }
    if (o && o->n_prune_layers) layer_map = malloc(n_map * sizeof *layer_map);
    size_t n_outs = o->keep_split ? n_inputs : 1;
    plan->entries = calloc(n ? n : 1, sizeof *plan->entries);
    plan->outs = calloc(n_outs, sizeof *plan->outs);
    regex_t *rx = NULL;
    gk_status st = GK_OK;
    if (order == NULL || names == NULL || (o->n_prune_layers && layer_map == NULL) || plan->entries == NULL || plan->outs == NULL) {
        st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        goto done;
    }
    plan->n_outs = n_outs;
    for (size_t k = 0; k < n_outs; k++) {
        plan->outs[k] = k == 0 ? gk_model_clone(inputs[0]) : gk_model_new();
        if (plan->outs[k] == NULL) {
            st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            goto done;
        }
        gk_tensor_clear(plan->outs[k]);
        plan->outs[k]->version = 3;   /* ggml writes version 3 */
        plan->outs[k]->big_endian = inputs[0]->big_endian;
    }
    plan->out = plan->outs[0];
    size_t m = 0;
    for (size_t k = 0; k < n_inputs; k++)
        for (size_t i = 0; i < gk_tensor_count(inputs[k]); i++)
            order[m++] = (src_ref){ k, i, gk_tensor_at(inputs[k], i), NULL };
    qsort(order, n, sizeof *order, cmp_loader_order);
    uint32_t ftype = o->target->is_copy ? input_ftype(inputs[0], order, n) : o->target->ftype;

    /* --prune-layers, in loader order: drop and renumber. */
    uint32_t lowest = UINT32_MAX;
    for (size_t k = 0; k < o->n_prune_layers; k++)
        if (o->prune_layers[k] < lowest) lowest = o->prune_layers[k];
    for (size_t k = 0; layer_map && k < n_map; k++) layer_map[k] = -1;
    long next_layer = 0;
    m = 0;
    for (size_t k = 0; k < n; k++) {
        const char *nm = prune_name(order[k].t->name.ptr, o->prune_layers, o->n_prune_layers, lowest, layer_map,
                                    n_map, &next_layer, names[m], sizeof names[m]);
        if (nm == NULL) {
            plan->n_pruned++;
            continue;
        }
        if (strlen(nm) >= GK_MAX_TENSOR_NAME + 16) {
            st = gk_error_set(err, GK_E_ARG, -1, "%s: name too long after renumbering", order[k].t->name.ptr);
            goto done;
        }
        if (nm != names[m]) snprintf(names[m], sizeof names[m], "%s", nm);
        order[m++] = order[k];
    }
    n = m;
    /* --keep-split: shard, then position in the shard (names travel along). */
    if (o->keep_split) {
        for (size_t k = 0; k < n; k++) order[k].name = names[k];
        qsort(order, n, sizeof *order, cmp_file_order);
    } else {
        for (size_t k = 0; k < n; k++) order[k].name = names[k];
    }

    /* The rules read the model as llama.cpp's loader sees it: overrides applied. */
    if ((st = set_metadata(plan->out, ftype, o, err)) != GK_OK) goto done;
    if (o->n_prune_layers > 0) {
        gk_str arch;
        char key[160];
        if (gk_kv_get_str(inputs[0], "general.architecture", &arch) != GK_OK) arch = (gk_str){ "", 0 };
        snprintf(key, sizeof key, "%.*s.block_count", (int)arch.len, arch.ptr);
        gk_value v = { .type = GK_V_U32, .u = (uint64_t)next_layer };
        if ((st = gk_kv_set_last(plan->out, key, &v, err)) != GK_OK) goto done;
    }
    gk_mix_model mm;
    {
        gk_model *meta = gk_model_clone(inputs[0]);
        if (meta == NULL) {
            st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            goto done;
        }
        for (size_t k = 0; k < o->n_overrides && st == GK_OK; k++) st = gk_kv_override_apply(meta, &o->overrides[k], err);
        if (st == GK_OK) gk_mix_model_init_meta(&mm, meta);
        gk_model_free(meta);
        if (st != GK_OK) goto done;
        for (size_t k = 0; k < n; k++) gk_mix_model_add_name(&mm, order[k].name);
    }
    if ((st = compile_rules(o, &rx, err)) != GK_OK) goto done;
    choose_ctx c = { .o = o, .mm = &mm, .rx = rx, .ftype = ftype };
    /* First pass (llama-quantize's preliminary loop): types, fallbacks, matrices. */
    for (size_t k = 0; k < n && st == GK_OK; k++) {
        const gk_tensor *t = order[k].t;
        gk_quant_entry *e = &plan->entries[k];
        e->src_tensor = order[k].index;
        e->src_input = order[k].input;
        e->out_file = o->keep_split ? order[k].input : 0;
        e->from = t->type;
        if ((st = choose_type(&c, t, order[k].name, e, err)) != GK_OK) break;
        st = check_first(plan, o, ftype, t, order[k].name, e, err);
    }
    /* Second pass (its writing loop): what the conversions need. */
    for (size_t k = 0; k < n && st == GK_OK; k++) {
        gk_quant_entry *e = &plan->entries[k];
        if ((st = check_second(plan, o, order[k].name, e, err)) != GK_OK) break;
        e->out_tensor = gk_tensor_count(plan->outs[e->out_file]);
        st = gk_tensor_add(plan->outs[e->out_file], order[k].name, e->to, order[k].t->n_dims, order[k].t->ne, err);
    }
    if (st == GK_OK && n_outs > 1) st = set_split_keys(plan, n, err);
    if (st == GK_OK) plan->n_entries = n;
done:
    free_rules(rx, o ? o->n_tensor_rules : 0);
    free(order);
    free(names);
    free(layer_map);
    if (st != GK_OK) gk_quant_plan_free(plan);
    return st;
}

gk_status gk_quant_plan_build(const gk_model *in, const gk_quant_opts *o, gk_quant_plan *plan,
                              gk_error *err) {
    gk_quant_opts one = *o;
    one.keep_split = false;
    return gk_quant_plan_build_inputs(&in, 1, &one, plan, err);
}

void gk_quant_plan_free(gk_quant_plan *plan) {
    for (size_t k = 0; k < plan->n_outs; k++) gk_model_free(plan->outs[k]);
    if (plan->outs == NULL) gk_model_free(plan->out);
    free(plan->outs);
    free(plan->entries);
    memset(plan, 0, sizeof *plan);
}
