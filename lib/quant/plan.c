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

/* ------------------------------------------------------------------------ */
/* Targets: llama-quantize's names, file type numbers and base types        */
/* ------------------------------------------------------------------------ */

static const gk_quant_target targets[] = {
    { "Q4_0", 2, GK_TYPE_Q4_0, false, false },
    { "Q4_1", 3, GK_TYPE_Q4_1, false, false },
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
    for (size_t i = 0; i < N_TARGETS; i++)   /* first row of a number: the canonical name */
        if (!targets[i].is_copy && targets[i].ftype == n && strcmp(targets[i].name, "Q3_K") &&
            strcmp(targets[i].name, "Q4_K") && strcmp(targets[i].name, "Q5_K"))
            return &targets[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Eligibility and fallbacks                                                */
/* ------------------------------------------------------------------------ */

/* Name fragments of 2-D weights llama-quantize leaves alone. */
static const char *const never_quantized[] = {
    "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "ssm_conv1d.weight",
    "shortconv.conv.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
    "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
    "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
    "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight", "attn_rel_b.weight",
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
    case GK_TYPE_TQ1_0: case GK_TYPE_TQ2_0: to = GK_TYPE_Q4_0; break;
    case GK_TYPE_IQ2_XXS: case GK_TYPE_IQ2_XS: case GK_TYPE_IQ2_S: case GK_TYPE_IQ3_XXS:
    case GK_TYPE_IQ3_S: case GK_TYPE_IQ1_S: case GK_TYPE_IQ1_M: case GK_TYPE_Q2_K:
    case GK_TYPE_Q3_K: case GK_TYPE_IQ4_XS: to = GK_TYPE_IQ4_NL; break;
    case GK_TYPE_Q4_K: to = GK_TYPE_Q5_0; break;
    case GK_TYPE_Q5_K: to = GK_TYPE_Q5_1; break;
    case GK_TYPE_Q6_K: to = GK_TYPE_Q8_0; break;
    default: to = GK_TYPE_F16; break;
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

static bool is_int_vtype(gk_vtype t) {
    return t == GK_V_U8 || t == GK_V_I8 || t == GK_V_U16 || t == GK_V_I16 || t == GK_V_U32 ||
           t == GK_V_I32 || t == GK_V_U64 || t == GK_V_I64;
}

/* Whether integer x fits value type t. */
static bool int_fits(gk_vtype t, int64_t x) {
    switch (t) {
    case GK_V_U8: return x >= 0 && x <= UINT8_MAX;
    case GK_V_I8: return x >= INT8_MIN && x <= INT8_MAX;
    case GK_V_U16: return x >= 0 && x <= UINT16_MAX;
    case GK_V_I16: return x >= INT16_MIN && x <= INT16_MAX;
    case GK_V_U32: return x >= 0 && x <= (int64_t)UINT32_MAX;
    case GK_V_I32: return x >= INT32_MIN && x <= INT32_MAX;
    case GK_V_U64: return x >= 0;
    default: return true;
    }
}

gk_status gk_kv_override_apply(gk_model *m, const gk_kv_override *o, gk_error *err) {
    const gk_value *old = gk_kv_get(m, o->key);
    gk_vtype have = old ? old->type : GK_V_COUNT;
    gk_value v = { 0 };
    switch (o->kind) {
    case GK_OVR_INT:
        v.type = is_int_vtype(have) ? have : (o->i >= INT32_MIN && o->i <= INT32_MAX) ? GK_V_I32 : GK_V_I64;
        if (!int_fits(v.type, o->i))
            return gk_error_set(err, GK_E_ARG, -1, "override %s: %lld does not fit the key's type %s", o->key,
                                (long long)o->i, gk_vtype_short_name(v.type));
        if (v.type == GK_V_U8 || v.type == GK_V_U16 || v.type == GK_V_U32 || v.type == GK_V_U64) v.u = (uint64_t)o->i;
        else v.i = o->i;
        break;
    case GK_OVR_U32: /* |i| cut to 32 bits, whatever the key held */
        v.type = GK_V_U32;
        v.u = (uint32_t)(o->i < 0 ? -(uint64_t)o->i : (uint64_t)o->i);
        break;
    case GK_OVR_FLOAT:
        v.type = have == GK_V_F64 ? GK_V_F64 : GK_V_F32;
        v.f = v.type == GK_V_F32 ? (double)(float)o->f : o->f;
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

/* The type one tensor gets before the fallback, as llama-quantize picks it:
 * base type, the mixing rules (quantized targets without --pure), the
 * --tensor-type patterns (when the rules' choice fits the rows), then the
 * --token-embedding-type / --output-tensor-type options. */
static gk_status choose_type(choose_ctx *c, const gk_tensor *t, gk_quant_entry *e, gk_error *err) {
    const gk_quant_opts *o = c->o;
    const char *name = t->name.ptr;
    bool eligible = !o->target->is_copy && gk_quant_eligible(name, t->n_dims) &&
                    !(o->leave_output && strcmp(name, "output.weight") == 0);
    e->wanted = t->type;
    e->pattern = -1;
    if (!eligible) {
        e->why |= GK_QWHY_KEPT;
        return GK_OK;
    }
    uint32_t type = o->target->base_type;
    if (!o->pure && is_quantized_type(type)) {
        uint32_t mixed;
        const gk_mix_query q = { c->ftype, type, name, t->ne[0], o->output_type, o->token_embd_type,
                                 o->has_imatrix };
        gk_status st = gk_quant_mix_type(c->mm, &c->st, &q, &mixed, err);
        if (st != GK_OK) return st;
        if (mixed != type) e->why |= GK_QWHY_MIXED;
        type = mixed;
        if (gk_quant_fallback(type, t->ne[0]) == type) {
            for (size_t k = 0; k < o->n_tensor_rules; k++) {
                if (regexec(&c->rx[k], name, 0, NULL, 0) == 0) {
                    type = o->tensor_rules[k].type;
                    e->pattern = (int)k;
                }
            }
            if (e->pattern >= 0) e->why |= GK_QWHY_PATTERN;
        }
    }
    if (o->token_embd_type >= 0 && strcmp(name, "token_embd.weight") == 0) {
        type = (uint32_t)o->token_embd_type;
        e->why |= GK_QWHY_OPTION;
    }
    if (o->output_type >= 0 && strcmp(name, "output.weight") == 0) {
        type = (uint32_t)o->output_type;
        e->why |= GK_QWHY_OPTION;
    }
    if (e->why & GK_QWHY_OPTION) e->why &= ~(unsigned)(GK_QWHY_MIXED | GK_QWHY_PATTERN);
    e->wanted = type;
    return GK_OK;
}

/* Checks that the conversion e asks for can be done, and counts it. */
static gk_status check_entry(gk_quant_plan *plan, const gk_quant_opts *o, uint32_t ftype,
                             const gk_tensor *t, gk_quant_entry *e, gk_error *err) {
    e->to = gk_quant_fallback(e->wanted, t->ne[0]);
    if (e->to != e->wanted) {
        if (o->no_fallback)
            return gk_error_set(err, GK_E_ROW_BLOCK, -1,
                                "%s: rows of %llu are not whole %s blocks (fallback to %s refused by --no-fallback)",
                                t->name.ptr, (unsigned long long)t->ne[0], gk_type_get(e->wanted)->name,
                                gk_type_get(e->to)->name);
        e->why |= GK_QWHY_FALLBACK;
        plan->n_fallbacks++;
    }
    if (e->to == e->from) return GK_OK;
    const gk_type_info *from = gk_type_get(e->from), *to = gk_type_get(e->to);
    if (is_quantized_type(e->from) && !o->allow_requantize)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "%s: requantizing from type %s is disabled (use --allow-requantize)",
                            t->name.ptr, from->name);
    if (from->dequantize == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot convert from %s", t->name.ptr, from->name);
    if (gk_quant_imatrix_required(e->to, ftype, t->name.ptr) && !o->has_imatrix)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "%s: %s needs an importance matrix for this tensor (llama-quantize refuses "
                            "very low-bit types without one)", t->name.ptr, to->name);
    if (to->quantize == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot quantize to %s%s", t->name.ptr,
                            to->name, to->needs_imatrix ? " without an importance matrix" : "");
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

static gk_status compile_rules(const gk_quant_opts *o, regex_t **out, gk_error *err) {
    *out = NULL;
    if (o->n_tensor_rules == 0) return GK_OK;
    regex_t *rx = calloc(o->n_tensor_rules, sizeof *rx);
    if (rx == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t k = 0; k < o->n_tensor_rules; k++) {
        int rc = regcomp(&rx[k], o->tensor_rules[k].pattern, REG_EXTENDED | REG_NOSUB);
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

gk_status gk_quant_plan_build_inputs(const gk_model *const *inputs, size_t n_inputs,
                                     const gk_quant_opts *o, gk_quant_plan *plan, gk_error *err) {
    memset(plan, 0, sizeof *plan);
    if (n_inputs == 0 || o == NULL || o->target == NULL)
        return gk_error_set(err, GK_E_ARG, -1, "no input or no target");
    size_t n = 0;
    for (size_t k = 0; k < n_inputs; k++) n += gk_tensor_count(inputs[k]);
    src_ref *order = malloc((n ? n : 1) * sizeof *order);
    size_t n_outs = o->keep_split ? n_inputs : 1;
    plan->entries = calloc(n ? n : 1, sizeof *plan->entries);
    plan->outs = calloc(n_outs, sizeof *plan->outs);
    regex_t *rx = NULL;
    gk_status st = GK_OK;
    if (order == NULL || plan->entries == NULL || plan->outs == NULL) {
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
            order[m++] = (src_ref){ k, i, gk_tensor_at(inputs[k], i) };
    qsort(order, n, sizeof *order, cmp_loader_order);
    uint32_t ftype = o->target->is_copy ? input_ftype(inputs[0], order, n) : o->target->ftype;
    if (o->keep_split) qsort(order, n, sizeof *order, cmp_file_order);

    /* The rules read the model as llama.cpp's loader sees it: overrides applied. */
    if ((st = set_metadata(plan->out, ftype, o, err)) != GK_OK) goto done;
    gk_mix_model mm;
    {
        const gk_model **views = malloc(n_inputs * sizeof *views);
        if (views == NULL) {
            st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            goto done;
        }
        for (size_t k = 0; k < n_inputs; k++) views[k] = inputs[k];
        gk_model *meta = gk_model_clone(inputs[0]);
        if (meta == NULL) {
            free(views);
            st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            goto done;
        }
        for (size_t k = 0; k < o->n_overrides && st == GK_OK; k++) st = gk_kv_override_apply(meta, &o->overrides[k], err);
        views[0] = meta;
        if (st == GK_OK) gk_mix_model_init(&mm, views, n_inputs);
        gk_model_free(meta);
        free(views);
        if (st != GK_OK) goto done;
    }
    if ((st = compile_rules(o, &rx, err)) != GK_OK) goto done;
    choose_ctx c = { .o = o, .mm = &mm, .rx = rx, .ftype = ftype };
    for (size_t k = 0; k < n && st == GK_OK; k++) {
        const gk_tensor *t = order[k].t;
        gk_quant_entry *e = &plan->entries[k];
        e->src_tensor = order[k].index;
        e->src_input = order[k].input;
        e->out_file = o->keep_split ? order[k].input : 0;
        e->from = t->type;
        if ((st = choose_type(&c, t, e, err)) != GK_OK) break;
        if ((st = check_entry(plan, o, ftype, t, e, err)) != GK_OK) break;
        st = gk_tensor_add(plan->outs[e->out_file], t->name.ptr, e->to, t->n_dims, t->ne, err);
    }
    if (st == GK_OK && n_outs > 1) st = set_split_keys(plan, n, err);
    if (st == GK_OK) plan->n_entries = n;
done:
    free_rules(rx, o ? o->n_tensor_rules : 0);
    free(order);
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
