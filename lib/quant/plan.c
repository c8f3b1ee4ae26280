/*
 * plan.c - decides, tensor by tensor, what `quantize` writes, the way
 * llama-quantize decides it: which tensors are eligible, which type each gets,
 * the fallbacks for rows that are not whole blocks, the order tensors are
 * written in, and the metadata the output carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "meta/model.h"

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
/* Plan                                                                     */
/* ------------------------------------------------------------------------ */

/* Layer number of "blk.N.<rest>", -1 for other names (the loader's order key). */
static long layer_of(const char *name) {
    int layer = -1;
    if (sscanf(name, "blk.%d.", &layer) != 1) return -1;
    return layer;
}

static int cmp_loader_order(const void *a, const void *b) {
    const gk_tensor *x = *(const gk_tensor *const *)a, *y = *(const gk_tensor *const *)b;
    long lx = layer_of(x->name.ptr), ly = layer_of(y->name.ptr);
    if (lx != ly) return lx < ly ? -1 : 1;
    size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = memcmp(x->name.ptr, y->name.ptr, n);
    if (c != 0) return c;
    return x->name.len < y->name.len ? -1 : x->name.len > y->name.len;
}

static bool is_quantized_type(uint32_t type) {
    const gk_type_info *t = gk_type_get(type);
    return t && t->quantized;
}

static bool is_quantized_type(uint32_t type);

/* The type one tensor gets. */
static gk_status choose_type(const gk_tensor *t, const gk_quant_opts *o, uint32_t *wanted,
                             gk_error *err) {
    const char *name = t->name.ptr;
    bool eligible = !o->target->is_copy && gk_quant_eligible(name, t->n_dims) &&
                    !(o->leave_output && strcmp(name, "output.weight") == 0);
    *wanted = t->type;
    if (!eligible) return GK_OK;
    uint32_t type = o->target->base_type;
    if (!o->pure && is_quantized_type(type))
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "%s: llama-quantize mixes types per tensor for quantized targets; that "
                            "mixing is not implemented yet, so pass --pure (every eligible tensor "
                            "gets %s)", o->target->name, gk_type_get(type)->name);
    if (o->token_embd_type >= 0 && strcmp(name, "token_embd.weight") == 0) type = (uint32_t)o->token_embd_type;
    if (o->output_type >= 0 && strcmp(name, "output.weight") == 0) type = (uint32_t)o->output_type;
    *wanted = type;
    return GK_OK;
}

static void set_ftype_keys(gk_model *out, uint32_t ftype, gk_error *err) {
    gk_value v = { .type = GK_V_U32, .u = 2 };
    gk_kv_set_last(out, "general.quantization_version", &v, err);
    v.u = ftype;
    gk_kv_set_last(out, "general.file_type", &v, err);
    gk_kv_delete(out, "split.no");
    gk_kv_delete(out, "split.count");
    gk_kv_delete(out, "split.tensors.count");
}

gk_status gk_quant_plan_build(const gk_model *in, const gk_quant_opts *o, gk_quant_plan *plan,
                              gk_error *err) {
    memset(plan, 0, sizeof *plan);
    size_t n = in->n_tensors;
    const gk_tensor **order = malloc((n ? n : 1) * sizeof *order);
    plan->entries = calloc(n ? n : 1, sizeof *plan->entries);
    plan->out = gk_model_clone(in);
    if (order == NULL || plan->entries == NULL || plan->out == NULL) {
        free(order);
        gk_quant_plan_free(plan);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    if (plan->out->version == 1) plan->out->version = 3;
    for (size_t i = 0; i < n; i++) order[i] = &in->tensors[i];
    qsort(order, n, sizeof *order, cmp_loader_order);
    /* Rebuild the output directory in loader order. */
    gk_tensor_clear(plan->out);
    gk_status st = GK_OK;
    for (size_t k = 0; k < n && st == GK_OK; k++) {
        const gk_tensor *t = order[k];
        gk_quant_entry *e = &plan->entries[k];
        e->src_tensor = (size_t)(t - in->tensors);
        e->from = t->type;
        st = choose_type(t, o, &e->wanted, err);
        if (st != GK_OK) break;
        e->to = gk_quant_fallback(e->wanted, t->ne[0]);
        if (e->to != e->wanted) {
            if (o->no_fallback) {
                st = gk_error_set(err, GK_E_ROW_BLOCK, -1,
                                  "%s: rows of %llu are not whole %s blocks (fallback to %s refused by --no-fallback)",
                                  t->name.ptr, (unsigned long long)t->ne[0], gk_type_get(e->wanted)->name,
                                  gk_type_get(e->to)->name);
                break;
            }
            plan->n_fallbacks++;
        }
        if (e->to != e->from) {
            const gk_type_info *from = gk_type_get(e->from), *to = gk_type_get(e->to);
            if (is_quantized_type(e->from) && !o->allow_requantize) {
                st = gk_error_set(err, GK_E_UNSUPPORTED, -1,
                                  "%s: requantizing from type %s is disabled (use --allow-requantize)",
                                  t->name.ptr, from->name);
                break;
            }
            if (from->dequantize == NULL) {
                st = gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot convert from %s", t->name.ptr, from->name);
                break;
            }
            if (to->quantize == NULL) {
                st = gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot quantize to %s%s", t->name.ptr,
                                  to->name, to->needs_imatrix ? " without an importance matrix" : "");
                break;
            }
            plan->n_converted++;
            if (is_quantized_type(e->from)) plan->n_requantized++;
        }
        st = gk_tensor_add(plan->out, t->name.ptr, e->to, t->n_dims, t->ne, err);
    }
    free(order);
    if (st == GK_OK) {
        plan->n_entries = n;
        uint64_t ftype = o->target->ftype;
        if (o->target->is_copy && gk_kv_get_uint(in, "general.file_type", &ftype) != GK_OK) ftype = 0;
        set_ftype_keys(plan->out, (uint32_t)ftype, err);
    } else {
        gk_quant_plan_free(plan);
    }
    return st;
}

void gk_quant_plan_free(gk_quant_plan *plan) {
    gk_model_free(plan->out);
    free(plan->entries);
    memset(plan, 0, sizeof *plan);
}
