/*
 * check_mix.c - unit tests of llama-quantize's per-tensor type mixing
 * (lib/quant/mix.c) and of the plan built on it (lib/quant/plan.c), case by
 * case against llama.cpp's September 2026 rules (v0.4.0), on llama-shaped
 * models built in memory: 32 layers, GQA 8, 8 experts, 80-layer 70B, tied
 * embeddings, falcon, fused qkv, MXFP4_MOE experts, unknown architectures. Also
 * --tensor-type patterns (first match, outside the counters, under --pure),
 * --prune-layers, --override-kv, fallbacks, the per-tensor importance-matrix
 * refusals, and (when GGUFKIT_GOLDEN is set) the type choices of every golden
 * preset, odd-row, MoE and importance-matrix file.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check_util.h"
#include "ggufkit.h"
#include "quant/mix.h"
#include "split/shardname.h"

/* ---- models built in memory ------------------------------------------------ */

typedef struct shape {
    const char *arch;
    unsigned n_layer, n_head, n_head_kv, n_expert;
    bool tied;            /* no output.weight */
    bool qkv;             /* fused attn_qkv instead of q/k/v */
    bool no_block_count;  /* leave ARCH.block_count out */
    uint64_t ne0;         /* row length of the weights (256 unless set) */
} shape;

static void add2(gk_model *m, const char *name, uint64_t ne0, uint64_t ne1) {
    uint64_t ne[2] = { ne0, ne1 };
    ck_assert_int_eq(gk_tensor_add(m, name, GK_TYPE_F32, 2, ne, NULL), GK_OK);
}

static void add1(gk_model *m, const char *name, uint64_t ne0) {
    uint64_t ne[1] = { ne0 };
    ck_assert_int_eq(gk_tensor_add(m, name, GK_TYPE_F32, 1, ne, NULL), GK_OK);
}

static gk_model *build(const shape *s) {
    gk_model *m = gk_model_new();
    ck_assert_ptr_nonnull(m);
    char key[128], name[128];
    uint64_t ne0 = s->ne0 ? s->ne0 : 256;
    gk_kv_set_str(m, "general.architecture", s->arch, NULL);
    if (!s->no_block_count) {
        snprintf(key, sizeof key, "%s.block_count", s->arch);
        gk_kv_set_u32(m, key, s->n_layer, NULL);
    }
    snprintf(key, sizeof key, "%s.attention.head_count", s->arch);
    gk_kv_set_u32(m, key, s->n_head, NULL);
    snprintf(key, sizeof key, "%s.attention.head_count_kv", s->arch);
    gk_kv_set_u32(m, key, s->n_head_kv, NULL);
    if (s->n_expert) {
        snprintf(key, sizeof key, "%s.expert_count", s->arch);
        gk_kv_set_u32(m, key, s->n_expert, NULL);
    }
    add2(m, "token_embd.weight", ne0, 64);
    add1(m, "output_norm.weight", ne0);
    if (!s->tied) add2(m, "output.weight", ne0, 64);
    static const char *const attn[] = { "attn_q", "attn_k", "attn_v", "attn_output" };
    static const char *const ffn[] = { "ffn_gate", "ffn_down", "ffn_up" };
    for (unsigned l = 0; l < s->n_layer; l++) {
        snprintf(name, sizeof name, "blk.%u.attn_norm.weight", l);
        add1(m, name, ne0);
        snprintf(name, sizeof name, "blk.%u.ffn_norm.weight", l);
        add1(m, name, ne0);
        if (s->qkv) {
            snprintf(name, sizeof name, "blk.%u.attn_qkv.weight", l);
            add2(m, name, ne0, 8);
            snprintf(name, sizeof name, "blk.%u.attn_output.weight", l);
            add2(m, name, ne0, 8);
        } else {
            for (size_t k = 0; k < 4; k++) {
                snprintf(name, sizeof name, "blk.%u.%s.weight", l, attn[k]);
                add2(m, name, ne0, 8);
            }
        }
        for (size_t k = 0; k < 3; k++) {
            snprintf(name, sizeof name, s->n_expert ? "blk.%u.%s_exps.weight" : "blk.%u.%s.weight", l, ffn[k]);
            add2(m, name, ne0, 8);
        }
        if (s->n_expert) {
            snprintf(name, sizeof name, "blk.%u.ffn_gate_inp.weight", l);
            add2(m, name, ne0, s->n_expert);
        }
    }
    return m;
}

/* A built plan and lookups by tensor name. */
typedef struct planned {
    gk_model *in;
    gk_quant_plan plan;
} planned;

static gk_quant_opts opts_for(const char *target) {
    gk_quant_opts o = { GK_OPTS_INIT(gk_quant_opts), .target = gk_quant_target_lookup(target), .output_type = -1, .token_embd_type = -1 };
    ck_assert_msg(o.target != NULL, "unknown target %s", target);
    return o;
}

/* Plans the model for a target; kernels may be missing for some types, so the
 * types are read from the mixing rules the way the plan applies them. */
static gk_status plan_with(planned *p, const shape *s, const gk_quant_opts *o, gk_error *err) {
    p->in = build(s);
    return gk_quant_plan_build(p->in, o, &p->plan, err);
}

static void planned_free(planned *p) {
    gk_quant_plan_free(&p->plan);
    gk_model_free(p->in);
}

static uint32_t type_in_plan(const planned *p, const char *name) {
    int64_t i = gk_tensor_find(p->plan.out, name);
    ck_assert_msg(i >= 0, "tensor %s not in plan", name);
    return gk_tensor_at(p->plan.out, (size_t)i)->type;
}

/* The types the rules give every tensor of a model, by name, in loader order:
 * calls gk_quant_mix_type directly (no kernels needed). */
typedef struct mixed {
    gk_model *m;
    uint32_t *type;     /* by tensor index of m */
} mixed;

static long layer_key(const char *n) {
    int l = -1;
    return sscanf(n, "blk.%d.", &l) == 1 ? l : -1;
}

static const gk_model *sort_model;
static int by_loader(const void *a, const void *b) {
    const char *x = gk_tensor_at(sort_model, *(const size_t *)a)->name.ptr;
    const char *y = gk_tensor_at(sort_model, *(const size_t *)b)->name.ptr;
    long lx = layer_key(x), ly = layer_key(y);
    if (lx != ly) return lx < ly ? -1 : 1;
    return strcmp(x, y);
}

static mixed mix_all(const shape *s, const char *target, bool imatrix, int32_t output_type) {
    mixed r = { build(s), NULL };
    size_t n = gk_tensor_count(r.m);
    r.type = calloc(n, sizeof *r.type);
    size_t *order = calloc(n, sizeof *order);
    for (size_t i = 0; i < n; i++) order[i] = i;
    sort_model = r.m;
    qsort(order, n, sizeof *order, by_loader);
    const gk_model *views[1] = { r.m };
    gk_mix_model mm;
    gk_mix_model_init(&mm, views, 1);
    gk_mix_state st = { 0 };
    const gk_quant_target *t = gk_quant_target_lookup(target);
    ck_assert_ptr_nonnull(t);
    for (size_t k = 0; k < n; k++) {
        const gk_tensor *ti = gk_tensor_at(r.m, order[k]);
        if (!gk_quant_eligible(ti->name.ptr, ti->n_dims)) {
            r.type[order[k]] = ti->type;
            continue;
        }
        gk_error err;
        uint32_t ty;
        const gk_mix_query q = { t->ftype, t->base_type, ti->name.ptr, ti->ne[0], output_type, -1, imatrix,
                                 ti->n_dims > 2 ? ti->ne[2] : 1 };
        ck_assert_int_eq(gk_quant_mix_type(&mm, &st, &q, &ty, &err), GK_OK);
        r.type[order[k]] = gk_quant_fallback(ty, ti->ne[0]);
    }
    free(order);
    return r;
}

static uint32_t mixed_type(const mixed *r, const char *name) {
    int64_t i = gk_tensor_find(r->m, name);
    ck_assert_msg(i >= 0, "no tensor %s", name);
    return r->type[i];
}

static uint32_t layer_type(const mixed *r, unsigned layer, const char *what) {
    char name[128];
    snprintf(name, sizeof name, "blk.%u.%s", layer, what);
    return mixed_type(r, name);
}

static void mixed_free(mixed *r) {
    gk_model_free(r->m);
    free(r->type);
}

static const char *tn(uint32_t t) { return gk_type_get(t)->name; }

#define ASSERT_TYPE(got, want, what)                                                                \
    ck_assert_msg((got) == (want), "%s: got %s, want %s", (what), tn(got), tn(want))

static bool more_bits(unsigned i, unsigned n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

static const shape llama32 = { "llama", 32, 32, 32, 0, false, false, false, 0 };
static const shape llama32_gqa8 = { "llama", 32, 64, 8, 0, false, false, false, 0 };
static const shape llama32_moe8 = { "llama", 32, 32, 8, 8, false, false, false, 0 };

/* ---- layer-position rules ------------------------------------------------- */

START_TEST(q4_k_m_use_more_bits_positions) {
    mixed r = mix_all(&llama32, "Q4_K_M", false, -1);
    /* first and last eighth, and every third layer between (i - 4) % 3 == 2. */
    static const unsigned six[] = { 0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31 };
    for (unsigned l = 0; l < 32; l++) {
        bool want6 = false;
        for (size_t k = 0; k < sizeof six / sizeof six[0]; k++) want6 |= six[k] == l;
        ck_assert_int_eq(more_bits(l, 32), want6);
        char what[64];
        snprintf(what, sizeof what, "layer %u attn_v", l);
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), want6 ? GK_TYPE_Q6_K : GK_TYPE_Q4_K, what);
        snprintf(what, sizeof what, "layer %u ffn_down", l);
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), want6 ? GK_TYPE_Q6_K : GK_TYPE_Q4_K, what);
        ASSERT_TYPE(layer_type(&r, l, "attn_q.weight"), GK_TYPE_Q4_K, "attn_q");
        ASSERT_TYPE(layer_type(&r, l, "attn_output.weight"), GK_TYPE_Q4_K, "attn_output");
        ASSERT_TYPE(layer_type(&r, l, "ffn_gate.weight"), GK_TYPE_Q4_K, "ffn_gate");
    }
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q6_K, "output");
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q4_K, "token_embd");
    ASSERT_TYPE(mixed_type(&r, "output_norm.weight"), GK_TYPE_F32, "norm");
    mixed_free(&r);
}
END_TEST

START_TEST(q5_k_m_positions) {
    mixed r = mix_all(&llama32, "Q5_K_M", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        uint32_t want = more_bits(l, 32) ? GK_TYPE_Q6_K : GK_TYPE_Q5_K;
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), want, "attn_v");
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), want, "ffn_down");
        ASSERT_TYPE(layer_type(&r, l, "attn_k.weight"), GK_TYPE_Q5_K, "attn_k");
    }
    mixed_free(&r);
}
END_TEST

START_TEST(q4_k_s_first_layers) {
    mixed r = mix_all(&llama32, "Q4_K_S", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), l < 4 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K, "attn_v");
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), l < 32 / 8 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K, "ffn_down");
    }
    mixed_free(&r);
}
END_TEST

START_TEST(q3_k_m_and_falcon) {
    mixed r = mix_all(&llama32, "Q3_K_M", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), l < 2 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K, "attn_v");
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), l < 2 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K, "ffn_down");
        ASSERT_TYPE(layer_type(&r, l, "attn_output.weight"), GK_TYPE_Q4_K, "attn_output");
        ASSERT_TYPE(layer_type(&r, l, "ffn_up.weight"), GK_TYPE_Q3_K, "ffn_up");
    }
    mixed_free(&r);
    shape falcon = llama32;
    falcon.arch = "falcon";
    r = mix_all(&falcon, "Q3_K_M", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        uint32_t want = l < 2 ? GK_TYPE_Q5_K : more_bits(l, 32) ? GK_TYPE_Q4_K : GK_TYPE_Q3_K;
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), want, "falcon ffn_down");
        ASSERT_TYPE(layer_type(&r, l, "attn_output.weight"), GK_TYPE_Q3_K, "falcon attn_output");
    }
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q8_0, "falcon output");
    mixed_free(&r);
    r = mix_all(&falcon, "Q4_K_M", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        uint32_t want = l < 2 ? GK_TYPE_Q6_K : more_bits(l, 32) ? GK_TYPE_Q5_K : GK_TYPE_Q4_K;
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), want, "falcon Q4_K_M ffn_down");
    }
    mixed_free(&r);
}
END_TEST

START_TEST(q3_k_l_and_q2_k) {
    mixed r = mix_all(&llama32, "Q3_K_L", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), GK_TYPE_Q5_K, "attn_v");
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), GK_TYPE_Q5_K, "ffn_down");
        ASSERT_TYPE(layer_type(&r, l, "attn_output.weight"), GK_TYPE_Q5_K, "attn_output");
        ASSERT_TYPE(layer_type(&r, l, "attn_q.weight"), GK_TYPE_Q3_K, "attn_q");
    }
    mixed_free(&r);
    r = mix_all(&llama32, "Q2_K", false, -1);
    ASSERT_TYPE(layer_type(&r, 5, "attn_v.weight"), GK_TYPE_Q3_K, "Q2_K attn_v");
    ASSERT_TYPE(layer_type(&r, 5, "ffn_down.weight"), GK_TYPE_Q3_K, "Q2_K ffn_down");
    ASSERT_TYPE(layer_type(&r, 5, "attn_output.weight"), GK_TYPE_Q3_K, "Q2_K attn_output");
    ASSERT_TYPE(layer_type(&r, 5, "ffn_up.weight"), GK_TYPE_Q2_K, "Q2_K ffn_up");
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q2_K, "Q2_K token_embd");
    mixed_free(&r);
    r = mix_all(&llama32_gqa8, "Q2_K", false, -1);
    ASSERT_TYPE(layer_type(&r, 5, "attn_v.weight"), GK_TYPE_Q4_K, "Q2_K GQA attn_v");
    mixed_free(&r);
}
END_TEST

START_TEST(iq3_xs_middle_layers) {
    mixed r = mix_all(&llama32, "IQ3_XS", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        uint32_t mid = l >= 4 && l < 28 ? GK_TYPE_IQ3_XXS : GK_TYPE_IQ3_S;
        ASSERT_TYPE(layer_type(&r, l, "ffn_gate.weight"), mid, "ffn_gate");
        ASSERT_TYPE(layer_type(&r, l, "ffn_up.weight"), mid, "ffn_up");
        ASSERT_TYPE(layer_type(&r, l, "attn_k.weight"), GK_TYPE_IQ3_XXS, "attn_k");
        ASSERT_TYPE(layer_type(&r, l, "attn_q.weight"), GK_TYPE_IQ3_XXS, "attn_q");
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), GK_TYPE_IQ3_S, "attn_v");
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), GK_TYPE_IQ3_S, "ffn_down");
    }
    mixed_free(&r);
    r = mix_all(&llama32_gqa8, "IQ3_XS", false, -1);
    ASSERT_TYPE(layer_type(&r, 3, "attn_v.weight"), GK_TYPE_Q4_K, "IQ3_XS GQA attn_v");
    mixed_free(&r);
}
END_TEST

START_TEST(iq3_xxs_imatrix_dependence) {
    mixed r = mix_all(&llama32, "IQ3_XXS", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_IQ3_S, "attn_v without imatrix");
    ASSERT_TYPE(layer_type(&r, 3, "ffn_down.weight"), GK_TYPE_Q4_K, "ffn_down first eighth");
    ASSERT_TYPE(layer_type(&r, 4, "ffn_down.weight"), GK_TYPE_Q3_K, "ffn_down after");
    ASSERT_TYPE(layer_type(&r, 4, "attn_k.weight"), GK_TYPE_IQ2_S, "attn_k");
    ASSERT_TYPE(layer_type(&r, 4, "attn_output.weight"), GK_TYPE_IQ3_S, "attn_output");
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_IQ3_S, "token_embd");
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q5_K, "output");
    mixed_free(&r);
    r = mix_all(&llama32, "IQ3_XXS", true, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_IQ3_XXS, "attn_v with imatrix");
    ASSERT_TYPE(layer_type(&r, 3, "ffn_down.weight"), GK_TYPE_IQ3_XXS, "ffn_down with imatrix");
    mixed_free(&r);
}
END_TEST

START_TEST(iq3_m_and_iq4) {
    mixed r = mix_all(&llama32, "IQ3_M", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), GK_TYPE_Q4_K, "IQ3_M attn_v");
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), l < 4 ? GK_TYPE_Q4_K : GK_TYPE_IQ3_S, "IQ3_M ffn_down");
        ASSERT_TYPE(layer_type(&r, l, "attn_output.weight"), GK_TYPE_Q4_K, "IQ3_M attn_output");
    }
    mixed_free(&r);
    r = mix_all(&llama32, "IQ4_XS", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        ASSERT_TYPE(layer_type(&r, l, "ffn_down.weight"), l < 4 ? GK_TYPE_Q5_K : GK_TYPE_IQ4_XS, "IQ4_XS ffn_down");
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), GK_TYPE_IQ4_XS, "IQ4_XS attn_v");
    }
    mixed_free(&r);
    r = mix_all(&llama32_gqa8, "IQ4_NL", true, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_Q5_K, "IQ4_NL GQA attn_v");
    ASSERT_TYPE(layer_type(&r, 0, "ffn_down.weight"), GK_TYPE_IQ4_NL, "IQ4_NL ffn_down with imatrix");
    mixed_free(&r);
}
END_TEST

START_TEST(legacy_types_with_imatrix) {
    mixed r = mix_all(&llama32, "Q4_0", true, -1);
    ASSERT_TYPE(layer_type(&r, 3, "ffn_down.weight"), GK_TYPE_Q4_1, "Q4_0 ffn_down first eighth");
    ASSERT_TYPE(layer_type(&r, 4, "ffn_down.weight"), GK_TYPE_Q4_0, "Q4_0 ffn_down");
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q6_K, "Q4_0 output");
    mixed_free(&r);
    r = mix_all(&llama32, "Q5_0", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "ffn_down.weight"), GK_TYPE_Q5_0, "Q5_0 without imatrix");
    mixed_free(&r);
    r = mix_all(&llama32, "Q8_0", false, -1);
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q8_0, "Q8_0 output stays");
    mixed_free(&r);
    r = mix_all(&llama32, "TQ2_0", false, -1);
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q4_K, "TQ2_0 token_embd");
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q6_K, "TQ2_0 output");
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_TQ2_0, "TQ2_0 attn_v");
    mixed_free(&r);
}
END_TEST

/* ---- model shape rules ---------------------------------------------------- */

START_TEST(gqa_rules) {
    mixed r = mix_all(&llama32_gqa8, "IQ4_XS", false, -1);
    ASSERT_TYPE(layer_type(&r, 9, "attn_v.weight"), GK_TYPE_Q5_K, "IQ4_XS GQA 8 attn_v");
    mixed_free(&r);
    r = mix_all(&llama32_gqa8, "IQ3_S", false, -1);
    ASSERT_TYPE(layer_type(&r, 9, "attn_v.weight"), GK_TYPE_Q4_K, "IQ3_S GQA attn_v");
    mixed_free(&r);
    shape gqa2 = llama32;
    gqa2.n_head_kv = 16;   /* n_gqa 2: below the threshold of 4 */
    r = mix_all(&gqa2, "IQ3_S", false, -1);
    ASSERT_TYPE(layer_type(&r, 9, "attn_v.weight"), GK_TYPE_IQ3_S, "IQ3_S GQA 2 attn_v");
    mixed_free(&r);
    r = mix_all(&llama32_gqa8, "IQ2_XXS", true, -1);
    ASSERT_TYPE(layer_type(&r, 9, "attn_v.weight"), GK_TYPE_Q4_K, "IQ2_XXS GQA attn_v");
    mixed_free(&r);
}
END_TEST

START_TEST(moe_eight_experts) {
    mixed r = mix_all(&llama32_moe8, "Q4_K_M", false, -1);
    for (unsigned l = 0; l < 32; l++) {
        ASSERT_TYPE(layer_type(&r, l, "attn_v.weight"), GK_TYPE_Q8_0, "MoE attn_v");
        ASSERT_TYPE(layer_type(&r, l, "attn_k.weight"), GK_TYPE_Q8_0, "MoE attn_k");
        ASSERT_TYPE(layer_type(&r, l, "attn_output.weight"), GK_TYPE_Q5_K, "MoE attn_output");
        ASSERT_TYPE(layer_type(&r, l, "ffn_down_exps.weight"), more_bits(l, 32) ? GK_TYPE_Q6_K : GK_TYPE_Q4_K,
                    "MoE ffn_down_exps");
        ASSERT_TYPE(layer_type(&r, l, "ffn_gate_inp.weight"), GK_TYPE_F32, "router kept");
    }
    mixed_free(&r);
    r = mix_all(&llama32_moe8, "IQ3_M", false, -1);
    for (unsigned l = 0; l < 32; l++)
        ASSERT_TYPE(layer_type(&r, l, "ffn_down_exps.weight"),
                    l < 4 || more_bits(l, 32) ? GK_TYPE_Q4_K : GK_TYPE_IQ3_S, "MoE IQ3_M ffn_down");
    mixed_free(&r);
    r = mix_all(&llama32_moe8, "IQ2_XS", true, -1);
    ASSERT_TYPE(layer_type(&r, 7, "attn_v.weight"), GK_TYPE_Q4_K, "MoE IQ2_XS attn_v");
    ASSERT_TYPE(layer_type(&r, 7, "attn_k.weight"), GK_TYPE_Q4_K, "MoE IQ2_XS attn_k");
    ASSERT_TYPE(layer_type(&r, 7, "attn_output.weight"), GK_TYPE_Q5_K, "MoE IQ2_XS attn_output");
    mixed_free(&r);
    shape moe4 = llama32_moe8;
    moe4.n_expert = 4;
    r = mix_all(&moe4, "Q4_K_M", false, -1);
    ASSERT_TYPE(layer_type(&r, 7, "attn_v.weight"), GK_TYPE_Q4_K, "4 experts: no Q8_0");
    mixed_free(&r);
}
END_TEST

START_TEST(moe_needs_layer_numbers) {
    gk_model *m = build(&llama32_moe8);
    const gk_model *views[1] = { m };
    gk_mix_model mm;
    gk_mix_model_init(&mm, views, 1);
    gk_mix_state st = { 0 };
    uint32_t ty;
    gk_error err;
    const gk_mix_query q1 = { 15, GK_TYPE_Q4_K, "ffn_down_exps.weight", 256, -1, -1, false, 1 };
    ck_assert_int_eq(gk_quant_mix_type(&mm, &st, &q1, &ty, &err), GK_E_CORRUPT);
    const gk_mix_query q2 = { 15, GK_TYPE_Q4_K, "blk.40.ffn_down_exps.weight", 256, -1, -1, false, 1 };
    ck_assert_int_eq(gk_quant_mix_type(&mm, &st, &q2, &ty, &err), GK_E_CORRUPT);
    gk_model_free(m);
}
END_TEST

START_TEST(seventy_b_attn_v) {
    shape s70 = { "llama", 80, 64, 8, 0, false, false, false, 0 };
    mixed r = mix_all(&s70, "Q3_K_S", false, -1);
    ASSERT_TYPE(layer_type(&r, 40, "attn_v.weight"), GK_TYPE_Q5_K, "70B Q3_K_S attn_v");
    ASSERT_TYPE(layer_type(&r, 40, "attn_q.weight"), GK_TYPE_Q3_K, "70B Q3_K_S attn_q");
    mixed_free(&r);
    shape s65 = { "llama", 80, 64, 64, 0, false, false, false, 0 };   /* 65B: no GQA */
    r = mix_all(&s65, "Q3_K_S", false, -1);
    ASSERT_TYPE(layer_type(&r, 40, "attn_v.weight"), GK_TYPE_Q3_K, "65B Q3_K_S attn_v");
    mixed_free(&r);
}
END_TEST

START_TEST(tied_embeddings_take_output_rules) {
    shape tied = llama32;
    tied.tied = true;
    mixed r = mix_all(&tied, "Q4_K_M", false, -1);
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q6_K, "tied token_embd");
    mixed_free(&r);
    r = mix_all(&tied, "Q4_K_M", false, GK_TYPE_Q8_0);
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q8_0, "tied token_embd, --output-tensor-type");
    mixed_free(&r);
    r = mix_all(&tied, "IQ2_XXS", true, -1);
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q5_K, "tied token_embd IQ2_XXS");
    mixed_free(&r);
}
END_TEST

/* Since the release sorts tensors into categories, a fused attn_qkv takes
 * attn_v's rules (and counter); its own old branch (Q5_K for Q4_K_M ...) is
 * unreachable. */
START_TEST(fused_qkv) {
    shape s = llama32;
    s.qkv = true;
    mixed r = mix_all(&s, "Q4_K_M", false, -1);
    for (unsigned l = 0; l < 32; l++)
        ASSERT_TYPE(layer_type(&r, l, "attn_qkv.weight"), more_bits(l, 32) ? GK_TYPE_Q6_K : GK_TYPE_Q4_K,
                    "Q4_K_M qkv as attn_v");
    mixed_free(&r);
    r = mix_all(&s, "Q5_K_M", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_qkv.weight"), GK_TYPE_Q6_K, "Q5_K_M qkv layer 0");
    ASSERT_TYPE(layer_type(&r, 4, "attn_qkv.weight"), GK_TYPE_Q5_K, "Q5_K_M qkv layer 4");
    mixed_free(&r);
    r = mix_all(&s, "Q3_K_L", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_qkv.weight"), GK_TYPE_Q5_K, "Q3_K_L qkv as attn_v");
    mixed_free(&r);
    r = mix_all(&s, "Q3_K_M", false, -1);
    ASSERT_TYPE(layer_type(&r, 1, "attn_qkv.weight"), GK_TYPE_Q5_K, "Q3_K_M qkv layer 1");
    ASSERT_TYPE(layer_type(&r, 2, "attn_qkv.weight"), GK_TYPE_Q4_K, "Q3_K_M qkv layer 2");
    mixed_free(&r);
    gk_model *m = build(&s);
    const gk_model *views[1] = { m };
    gk_mix_model mm;
    gk_mix_model_init(&mm, views, 1);
    ck_assert_int_eq(mm.n_attention_wv, 32);   /* qkv tensors count as attn_v */
    gk_model_free(m);
}
END_TEST

START_TEST(model_facts) {
    gk_model *m = build(&llama32_gqa8);
    const gk_model *views[1] = { m };
    gk_mix_model mm;
    gk_mix_model_init(&mm, views, 1);
    ck_assert_uint_eq(mm.n_layer, 32);
    ck_assert_uint_eq(mm.n_gqa, 8);
    ck_assert_int_eq(mm.n_attention_wv, 32);
    ck_assert(mm.has_output);
    ck_assert(!mm.is_70b);
    gk_model_free(m);
    shape unknown = { "mystery", 8, 4, 4, 0, false, false, true, 0 };
    m = build(&unknown);
    views[0] = m;
    gk_mix_model_init(&mm, views, 1);
    ck_assert_uint_eq(mm.n_layer, 8);   /* from the highest blk.N */
    gk_model_free(m);
    mixed r = mix_all(&unknown, "Q4_K_M", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_Q6_K, "unknown arch attn_v layer 0");
    ASSERT_TYPE(layer_type(&r, 1, "attn_v.weight"), GK_TYPE_Q4_K, "unknown arch attn_v layer 1");
    ASSERT_TYPE(layer_type(&r, 7, "ffn_down.weight"), GK_TYPE_Q6_K, "unknown arch ffn_down layer 7");
    mixed_free(&r);
}
END_TEST

START_TEST(importance_matrix_presets) {
    mixed r = mix_all(&llama32, "IQ1_S", true, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_Q2_K, "IQ1_S attn_v");
    ASSERT_TYPE(layer_type(&r, 3, "ffn_down.weight"), GK_TYPE_Q2_K, "IQ1_S ffn_down first eighth");
    ASSERT_TYPE(layer_type(&r, 4, "ffn_down.weight"), GK_TYPE_IQ1_S, "IQ1_S ffn_down");
    ASSERT_TYPE(layer_type(&r, 4, "attn_output.weight"), GK_TYPE_IQ2_XXS, "IQ1_S attn_output");
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q2_K, "IQ1_S token_embd");
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q5_K, "IQ1_S output");
    mixed_free(&r);
    r = mix_all(&llama32, "IQ2_M", true, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_IQ3_S, "IQ2_M attn_v");
    ASSERT_TYPE(layer_type(&r, 0, "ffn_down.weight"), GK_TYPE_IQ3_S, "IQ2_M ffn_down");
    ASSERT_TYPE(layer_type(&r, 9, "ffn_down.weight"), GK_TYPE_IQ2_S, "IQ2_M ffn_down later");
    ASSERT_TYPE(layer_type(&r, 9, "attn_q.weight"), GK_TYPE_IQ2_S, "IQ2_M attn_q");
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_IQ3_S, "IQ2_M token_embd");
    mixed_free(&r);
    r = mix_all(&llama32_gqa8, "Q2_K_S", true, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_Q4_K, "Q2_K_S GQA attn_v");
    ASSERT_TYPE(layer_type(&r, 0, "ffn_down.weight"), GK_TYPE_Q4_K, "Q2_K_S ffn_down first eighth");
    ASSERT_TYPE(layer_type(&r, 4, "ffn_down.weight"), GK_TYPE_Q2_K, "Q2_K_S ffn_down");
    mixed_free(&r);
    ck_assert(gk_quant_imatrix_required(GK_TYPE_IQ2_XXS, 19, "blk.0.attn_q.weight"));
    ck_assert(!gk_quant_imatrix_required(GK_TYPE_IQ1_M, 31, "token_embd.weight"));
    ck_assert(gk_quant_imatrix_required(GK_TYPE_IQ1_M, 31, "blk.0.attn_q.weight"));
    ck_assert(gk_quant_imatrix_required(GK_TYPE_Q2_K, 21, "blk.0.attn_q.weight"));
    ck_assert(!gk_quant_imatrix_required(GK_TYPE_Q2_K, 21, "token_embd.weight"));
    ck_assert(!gk_quant_imatrix_required(GK_TYPE_Q2_K, 10, "blk.0.attn_q.weight"));
}
END_TEST

/* ---- the plan: fallbacks, options, patterns, metadata ----------------------- */

START_TEST(fallback_rows) {
    shape odd = llama32;
    odd.n_layer = 2;
    odd.ne0 = 320;   /* whole 32-blocks, not whole 256-blocks */
    mixed r = mix_all(&odd, "Q4_K_M", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_q.weight"), GK_TYPE_Q5_0, "Q4_K -> Q5_0");
    ASSERT_TYPE(layer_type(&r, 1, "attn_v.weight"), GK_TYPE_Q8_0, "Q6_K -> Q8_0");
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q8_0, "output with odd rows -> Q8_0");
    mixed_free(&r);
    r = mix_all(&odd, "Q3_K_S", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_q.weight"), GK_TYPE_Q4_0, "Q3_K -> Q4_0");
    mixed_free(&r);
    r = mix_all(&odd, "Q5_K_S", false, -1);
    ASSERT_TYPE(layer_type(&r, 0, "attn_q.weight"), GK_TYPE_Q5_1, "Q5_K -> Q5_1");
    mixed_free(&r);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q4_K, 100), GK_TYPE_F16);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_TQ1_0, 320), GK_TYPE_Q4_0);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q4_K, 512), GK_TYPE_Q4_K);
    /* the September 2026 table */
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q2_K, 96), GK_TYPE_Q4_0);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q3_K, 96), GK_TYPE_Q4_0);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q2_0, 96), GK_TYPE_Q4_0);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_TQ2_0, 96), GK_TYPE_Q4_0);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q5_K, 96), GK_TYPE_Q5_1);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q6_K, 96), GK_TYPE_Q8_0);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_IQ3_XXS, 96), GK_TYPE_IQ4_NL);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_IQ4_XS, 96), GK_TYPE_IQ4_NL);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_IQ2_S, 100), GK_TYPE_F16);    /* IQ4_NL does not fit either */
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q8_0, 100), GK_TYPE_F16);     /* 32-blocks: F16 */
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_MXFP4, 100), GK_TYPE_F16);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q1_0, 96), GK_TYPE_COUNT);    /* no fallback: refused */
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_NVFP4, 96), GK_TYPE_COUNT);
    ck_assert_uint_eq(gk_quant_fallback(GK_TYPE_Q1_0, 256), GK_TYPE_Q1_0);
}
END_TEST

START_TEST(plan_options_and_patterns) {
    shape s = llama32;
    s.n_layer = 8;
    gk_quant_opts o = opts_for("Q4_K_M");
    gk_quant_tensor_rule rules[] = { { "attn_(q|k)", GK_TYPE_Q8_0 }, { "blk\\.1\\.attn_q", GK_TYPE_Q5_K },
                                     { "^token_embd", GK_TYPE_Q8_0 } };
    o.tensor_rules = rules;
    o.n_tensor_rules = 3;
    o.token_embd_type = GK_TYPE_Q6_K;
    planned p;
    gk_error err;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_q.weight"), GK_TYPE_Q8_0, "pattern");
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_k.weight"), GK_TYPE_Q8_0, "pattern");
    ASSERT_TYPE(type_in_plan(&p, "blk.1.attn_q.weight"), GK_TYPE_Q8_0, "first pattern wins");
    ASSERT_TYPE(type_in_plan(&p, "blk.1.attn_output.weight"), GK_TYPE_Q4_K, "no match");
    ASSERT_TYPE(type_in_plan(&p, "token_embd.weight"), GK_TYPE_Q6_K, "--token-embedding-type beats patterns");
    ck_assert_int_eq(p.plan.entries[0].why & GK_QWHY_PATTERN, 0);
    planned_free(&p);

    /* A pattern applies first; its type then takes the fallback. */
    s.ne0 = 320;
    gk_quant_tensor_rule wide[] = { { "attn_q", GK_TYPE_Q8_0 }, { "attn_k", GK_TYPE_Q6_K } };
    o = opts_for("Q4_K_M");
    o.tensor_rules = wide;
    o.n_tensor_rules = 2;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_q.weight"), GK_TYPE_Q8_0, "pattern on rows of 320");
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_k.weight"), GK_TYPE_Q8_0, "pattern's Q6_K falls back to Q8_0");
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_output.weight"), GK_TYPE_Q5_0, "rules' Q4_K falls back to Q5_0");
    ck_assert_uint_gt(p.plan.n_fallbacks, 0);
    planned_free(&p);
    o.no_fallback = true;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_E_ROW_BLOCK);
    gk_model_free(p.in);
}
END_TEST

START_TEST(plan_pure_leave_output_copy) {
    shape s = llama32;
    s.n_layer = 4;
    gk_quant_opts o = opts_for("Q4_K_M");
    o.pure = true;
    o.leave_output = true;
    planned p;
    gk_error err;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_v.weight"), GK_TYPE_Q4_K, "pure attn_v");
    ASSERT_TYPE(type_in_plan(&p, "output.weight"), GK_TYPE_F32, "--leave-output-tensor");
    ASSERT_TYPE(type_in_plan(&p, "token_embd.weight"), GK_TYPE_Q4_K, "pure token_embd");
    uint64_t ft = 0;
    ck_assert_int_eq(gk_kv_get_uint(p.plan.out, "general.file_type", &ft), GK_OK);
    ck_assert_uint_eq(ft, 15);
    planned_free(&p);
    o = opts_for("COPY");
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ck_assert_uint_eq(p.plan.n_converted, 0);
    ck_assert_int_eq(gk_kv_get_uint(p.plan.out, "general.file_type", &ft), GK_OK);
    ck_assert_uint_eq(ft, 0 | 1024);   /* guessed from the F32 tensors */
    planned_free(&p);
    o = opts_for("F16");
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_v.weight"), GK_TYPE_F16, "F16 target does not mix");
    ASSERT_TYPE(type_in_plan(&p, "output.weight"), GK_TYPE_F16, "F16 output");
    planned_free(&p);
}
END_TEST

START_TEST(plan_loader_order) {
    shape s = llama32;
    s.n_layer = 12;
    gk_quant_opts o = opts_for("F16");
    planned p;
    gk_error err;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    /* layer -1 names first (sorted), then blk.0 ... blk.11 numerically. */
    ck_assert_str_eq(gk_tensor_at(p.plan.out, 0)->name.ptr, "output.weight");
    ck_assert_str_eq(gk_tensor_at(p.plan.out, 3)->name.ptr, "blk.0.attn_k.weight");
    long last = -1;
    for (size_t i = 0; i < gk_tensor_count(p.plan.out); i++) {
        long l = layer_key(gk_tensor_at(p.plan.out, i)->name.ptr);
        ck_assert_int_ge(l, last);
        last = l;
    }
    planned_free(&p);
}
END_TEST

START_TEST(refusals) {
    shape s = llama32;
    s.n_layer = 2;
    planned p;
    gk_error err;
    gk_quant_opts o = opts_for("IQ2_XXS");
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_E_UNSUPPORTED);   /* needs an importance matrix */
    ck_assert_ptr_nonnull(strstr(err.message, "importance"));
    gk_model_free(p.in);
    o = opts_for("Q2_K_S");
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_E_UNSUPPORTED);
    gk_model_free(p.in);
    /* Requantizing is refused without allow_requantize. */
    gk_model *m = build(&s);
    ck_assert_int_eq(gk_tensor_set_type(m, (size_t)gk_tensor_find(m, "blk.0.attn_q.weight"), GK_TYPE_Q8_0, NULL), GK_OK);
    o = opts_for("Q4_0");
    gk_quant_plan plan;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.message, "requantiz"));
    o.allow_requantize = true;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ck_assert_uint_eq(plan.n_requantized, 1);
    gk_quant_plan_free(&plan);
    gk_model_free(m);
}
END_TEST

START_TEST(override_kv) {
    gk_kv_override ov;
    gk_error err;
    ck_assert_int_eq(gk_kv_override_parse("a.b=int:42", &ov, &err), GK_OK);
    ck_assert_int_eq(ov.kind, GK_OVR_INT);
    ck_assert_int_eq(ov.i, 42);
    ck_assert_int_eq(gk_kv_override_parse("a.b=float:0.5", &ov, &err), GK_OK);
    ck_assert(ov.f == 0.5);
    ck_assert_int_eq(gk_kv_override_parse("a.b=bool:false", &ov, &err), GK_OK);
    ck_assert_int_eq(gk_kv_override_parse("a.b=str:hello=x", &ov, &err), GK_OK);
    ck_assert_str_eq(ov.s, "hello=x");
    ck_assert_int_eq(gk_kv_override_parse("a.b=bool:yes", &ov, &err), GK_E_ARG);
    ck_assert_int_eq(gk_kv_override_parse("a.b=int:12x", &ov, &err), GK_E_ARG);
    ck_assert_int_eq(gk_kv_override_parse("a.b=double:1", &ov, &err), GK_E_ARG);
    ck_assert_int_eq(gk_kv_override_parse("=int:1", &ov, &err), GK_E_ARG);
    ck_assert_int_eq(gk_kv_override_parse("novalue", &ov, &err), GK_E_ARG);

    shape s = llama32;
    s.n_layer = 2;
    gk_kv_override ovs[3];
    ck_assert_int_eq(gk_kv_override_parse("llama.block_count=int:3", &ovs[0], &err), GK_OK);
    ck_assert_int_eq(gk_kv_override_parse("new.key=int:-5", &ovs[1], &err), GK_OK);
    ck_assert_int_eq(gk_kv_override_parse("general.architecture=str:llama", &ovs[2], &err), GK_OK);
    gk_quant_opts o = opts_for("F16");
    o.overrides = ovs;
    o.n_overrides = 3;
    planned p;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    size_t n = gk_kv_count(p.plan.out);
    /* file type keys, then the overrides in order, at the end. */
    ck_assert_str_eq(gk_kv_at(p.plan.out, n - 5)->key.ptr, "general.quantization_version");
    ck_assert_str_eq(gk_kv_at(p.plan.out, n - 4)->key.ptr, "general.file_type");
    ck_assert_str_eq(gk_kv_at(p.plan.out, n - 3)->key.ptr, "llama.block_count");
    ck_assert_int_eq(gk_kv_at(p.plan.out, n - 3)->value.type, GK_V_U32);
    ck_assert_uint_eq(gk_kv_at(p.plan.out, n - 3)->value.u, 3);
    /* every int override is UINT32 of its magnitude (the September 2026 rule) */
    ck_assert_str_eq(gk_kv_at(p.plan.out, n - 2)->key.ptr, "new.key");
    ck_assert_int_eq(gk_kv_at(p.plan.out, n - 2)->value.type, GK_V_U32);
    ck_assert_uint_eq(gk_kv_at(p.plan.out, n - 2)->value.u, 5);
    planned_free(&p);
    /* a negative int into the u32 key: its magnitude, not a refusal */
    ck_assert_int_eq(gk_kv_override_parse("llama.block_count=int:-1", &ovs[0], &err), GK_OK);
    o.n_overrides = 1;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    n = gk_kv_count(p.plan.out);
    ck_assert_int_eq(gk_kv_at(p.plan.out, n - 1)->value.type, GK_V_U32);
    ck_assert_uint_eq(gk_kv_at(p.plan.out, n - 1)->value.u, 1);
    planned_free(&p);
    /* The rules see the overridden value: 16 experts is not 8 ... */
    shape moe = llama32_moe8;
    moe.n_layer = 2;
    ck_assert_int_eq(gk_kv_override_parse("llama.expert_count=int:16", &ovs[0], &err), GK_OK);
    o = opts_for("Q4_K_M");
    o.overrides = ovs;
    o.n_overrides = 1;
    ck_assert_int_eq(plan_with(&p, &moe, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_k.weight"), GK_TYPE_Q4_K, "override changes n_expert");
    planned_free(&p);
}
END_TEST

START_TEST(keep_split_outputs) {
    shape s = llama32;
    s.n_layer = 2;
    gk_model *a = build(&s), *b = gk_model_new();
    /* Move layer 1 into a second shard. */
    gk_model *whole = build(&s);
    gk_tensor_clear(a);
    for (size_t i = 0; i < gk_tensor_count(whole); i++) {
        const gk_tensor *t = gk_tensor_at(whole, i);
        gk_model *dst = strncmp(t->name.ptr, "blk.1.", 6) == 0 ? b : a;
        ck_assert_int_eq(gk_tensor_add(dst, t->name.ptr, t->type, t->n_dims, t->ne, NULL), GK_OK);
    }
    gk_model_layout(a);
    gk_model_layout(b);
    const gk_model *ins[2] = { a, b };
    gk_quant_opts o = opts_for("Q4_K_M");
    o.keep_split = true;
    gk_quant_plan plan;
    gk_error err;
    ck_assert_int_eq(gk_quant_plan_build_inputs(ins, 2, &o, &plan, &err), GK_OK);
    ck_assert_uint_eq(plan.n_outs, 2);
    ck_assert_uint_eq(gk_tensor_count(plan.outs[0]), gk_tensor_count(a));
    ck_assert_uint_eq(gk_tensor_count(plan.outs[1]), gk_tensor_count(b));
    ck_assert_uint_eq(gk_kv_count(plan.outs[1]), 3);
    ck_assert_str_eq(gk_kv_at(plan.outs[1], 0)->key.ptr, "split.no");
    uint64_t v;
    ck_assert_int_eq(gk_kv_get_uint(plan.outs[1], "split.no", &v), GK_OK);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(gk_kv_get_uint(plan.outs[0], "split.tensors.count", &v), GK_OK);
    ck_assert_uint_eq(v, gk_tensor_count(whole));
    /* The rules count over the whole set: layer 1's attn_v is the last (Q6_K). */
    int64_t i = gk_tensor_find(plan.outs[1], "blk.1.attn_v.weight");
    ck_assert_int_ge(i, 0);
    ASSERT_TYPE(gk_tensor_at(plan.outs[1], (size_t)i)->type, GK_TYPE_Q6_K, "shard 2 attn_v");
    gk_quant_plan_free(&plan);
    o.keep_split = false;
    ck_assert_int_eq(gk_quant_plan_build_inputs(ins, 2, &o, &plan, &err), GK_OK);
    ck_assert_uint_eq(plan.n_outs, 1);
    ck_assert_uint_eq(gk_tensor_count(plan.out), gk_tensor_count(whole));
    ck_assert_int_lt(gk_kv_find(plan.out, "split.no"), 0);
    gk_quant_plan_free(&plan);
    char path[64];
    ck_assert(gk_shard_name_format(path, sizeof path, "out", 1, 3));
    ck_assert_str_eq(path, "out-00002-of-00003.gguf");
    ck_assert(!gk_shard_name_format(path, 8, "out", 1, 3));
    gk_model_free(a);
    gk_model_free(b);
    gk_model_free(whole);
}
END_TEST

/* ---- September 2026 additions --------------------------------------------- */

/* A MoE model whose experts are 3-D (ne2 = experts), as converters write them. */
static gk_model *build_moe3d(const char *arch, unsigned n_layer, unsigned n_expert) {
    gk_model *m = gk_model_new();
    char key[128], name[128];
    gk_kv_set_str(m, "general.architecture", arch, NULL);
    snprintf(key, sizeof key, "%s.block_count", arch);
    gk_kv_set_u32(m, key, n_layer, NULL);
    snprintf(key, sizeof key, "%s.expert_count", arch);
    gk_kv_set_u32(m, key, n_expert, NULL);
    add2(m, "token_embd.weight", 256, 64);
    add2(m, "output.weight", 256, 64);
    for (unsigned l = 0; l < n_layer; l++) {
        static const char *const attn[] = { "attn_q", "attn_k", "attn_v", "attn_output" };
        for (size_t k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "blk.%u.%s.weight", l, attn[k]);
            add2(m, name, 256, 8);
        }
        static const char *const ffn[] = { "ffn_gate_exps", "ffn_down_exps", "ffn_up_exps", "attn_kv_proj" };
        for (size_t k = 0; k < 4; k++) {
            uint64_t ne[3] = { 256, 8, n_expert };
            snprintf(name, sizeof name, "blk.%u.%s.weight", l, ffn[k]);
            ck_assert_int_eq(gk_tensor_add(m, name, GK_TYPE_F32, 3, ne, NULL), GK_OK);
        }
        snprintf(name, sizeof name, "blk.%u.ffn_gate_inp.weight", l);
        add2(m, name, 256, n_expert);
    }
    return m;
}

static uint32_t plan_type(const gk_quant_plan *plan, const char *name) {
    int64_t i = gk_tensor_find(plan->out, name);
    ck_assert_msg(i >= 0, "tensor %s not in plan", name);
    return gk_tensor_at(plan->out, (size_t)i)->type;
}

START_TEST(mxfp4_moe_preset) {
    gk_model *m = build_moe3d("llama", 2, 4);
    gk_quant_opts o = opts_for("MXFP4_MOE");
    ck_assert_uint_eq(o.target->ftype, 38);
    ck_assert_uint_eq(o.target->base_type, GK_TYPE_MXFP4);
    gk_quant_plan plan;
    gk_error err;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ASSERT_TYPE(plan_type(&plan, "blk.0.ffn_down_exps.weight"), GK_TYPE_MXFP4, "3-D expert -> MXFP4");
    ASSERT_TYPE(plan_type(&plan, "blk.1.attn_kv_proj.weight"), GK_TYPE_MXFP4, "any 3-D tensor (llama)");
    ASSERT_TYPE(plan_type(&plan, "blk.0.attn_v.weight"), GK_TYPE_Q8_0, "2-D -> Q8_0");
    ASSERT_TYPE(plan_type(&plan, "token_embd.weight"), GK_TYPE_Q8_0, "token_embd -> Q8_0");
    ASSERT_TYPE(plan_type(&plan, "output.weight"), GK_TYPE_Q8_0, "output -> Q8_0");
    ASSERT_TYPE(plan_type(&plan, "blk.0.ffn_gate_inp.weight"), GK_TYPE_F32, "router kept");
    gk_quant_plan_free(&plan);
    o.pure = true;   /* --pure: everything MXFP4 */
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ASSERT_TYPE(plan_type(&plan, "blk.0.attn_v.weight"), GK_TYPE_MXFP4, "--pure 2-D");
    ASSERT_TYPE(plan_type(&plan, "output.weight"), GK_TYPE_MXFP4, "--pure output");
    gk_quant_plan_free(&plan);
    gk_model_free(m);
    /* bailingmoe3: only the up/gate/down experts are MXFP4 */
    m = build_moe3d("bailingmoe3", 2, 4);
    o.pure = false;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ASSERT_TYPE(plan_type(&plan, "blk.0.ffn_up_exps.weight"), GK_TYPE_MXFP4, "bailingmoe3 expert");
    ASSERT_TYPE(plan_type(&plan, "blk.0.attn_kv_proj.weight"), GK_TYPE_Q8_0, "bailingmoe3 3-D projection");
    gk_quant_plan_free(&plan);
    gk_model_free(m);
}
END_TEST

START_TEST(q1_0_q2_0_presets) {
    const gk_quant_target *q1 = gk_quant_target_lookup("q1_0"), *q2 = gk_quant_target_lookup("41");
    ck_assert(q1 && q1->ftype == 40 && q1->base_type == GK_TYPE_Q1_0);
    ck_assert(q2 && strcmp(q2->name, "Q2_0") == 0 && q2->base_type == GK_TYPE_Q2_0);
    ck_assert_str_eq(gk_ftype_name(40), "Q1_0");
    ck_assert_str_eq(gk_ftype_name(41), "Q2_0");
    ck_assert_str_eq(gk_ftype_name(38), "MXFP4_MOE");
    mixed r = mix_all(&llama32, "Q2_0", false, -1);
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q4_K, "Q2_0 token_embd");
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q6_K, "Q2_0 output");
    ASSERT_TYPE(layer_type(&r, 0, "attn_v.weight"), GK_TYPE_Q2_0, "Q2_0 attn_v");
    mixed_free(&r);
    r = mix_all(&llama32, "Q1_0", false, -1);
    ASSERT_TYPE(mixed_type(&r, "token_embd.weight"), GK_TYPE_Q1_0, "Q1_0 token_embd");
    ASSERT_TYPE(mixed_type(&r, "output.weight"), GK_TYPE_Q6_K, "Q1_0 output");
    mixed_free(&r);
    /* Q1_0 has no fallback: rows of 96 are refused, naming the tensor */
    shape odd = llama32;
    odd.n_layer = 1;
    odd.ne0 = 96;
    gk_quant_opts o = opts_for("Q1_0");
    o.plan_only = true;
    planned p;
    gk_error err;
    ck_assert_int_eq(plan_with(&p, &odd, &o, &err), GK_E_ROW_BLOCK);
    ck_assert_ptr_nonnull(strstr(err.message, "no fallback"));
    gk_model_free(p.in);
    o = opts_for("Q2_0");   /* Q2_0 falls back to Q4_0 */
    o.plan_only = true;
    ck_assert_int_eq(plan_with(&p, &odd, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_q.weight"), GK_TYPE_Q4_0, "Q2_0 -> Q4_0");
    ASSERT_TYPE(type_in_plan(&p, "output.weight"), GK_TYPE_Q8_0, "odd output -> Q8_0");
    planned_free(&p);
}
END_TEST

START_TEST(kinds_and_eligibility) {
    ck_assert_int_eq(gk_mix_kind_of("per_layer_token_embd.weight"), GK_MIX_TOKEN_EMBD);
    ck_assert_int_eq(gk_mix_kind_of("blk.3.attn_kv_b.weight"), GK_MIX_ATTN_KV_B);
    ck_assert_int_eq(gk_mix_kind_of("blk.3.attn_qkv.weight"), GK_MIX_ATTN_QKV);
    ck_assert_int_eq(gk_mix_kind_of("blk.3.ffn_up_shexp.weight"), GK_MIX_FFN_UP);
    ck_assert_int_eq(gk_mix_kind_of("blk.3.ffn_gate_exps.weight"), GK_MIX_FFN_GATE);
    ck_assert_int_eq(gk_mix_kind_of("output.weight"), GK_MIX_OUTPUT);
    ck_assert_int_eq(gk_mix_kind_of("blk.0.output.weight"), GK_MIX_OTHER);
    static const char *const kept[] = {
        "blk.0.altup_proj.weight", "blk.0.laurel_l.weight", "per_layer_model_proj.weight",
        "blk.0.indexer.k_proj.weight", "blk.0.ssm_conv1d.weight", "v.position_embd.weight",
        "v.blk.0.attn.rel_pos_h.weight", "v.patch_embd.weight", "mm.patch_merger.weight",
        "a.rvq.codebook.0.weight", "mm.a.code_embd.weight", "sam.neck.0.weight", "sam.pos_embd.weight",
        "blk.0.ffn_gate_tid2eid.weight", "position_embd.weight", "token_types.weight",
    };
    for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++)
        ck_assert_msg(!gk_quant_eligible(kept[k], 2), "%s should be left alone", kept[k]);
    ck_assert(gk_quant_eligible("blk.0.attn_kv_b.weight", 2));
    ck_assert(gk_quant_eligible("per_layer_token_embd.weight", 2));
    /* attn_kv_b takes attn_v's rules; per_layer_token_embd the embedding's */
    gk_model *m = gk_model_new();
    gk_kv_set_str(m, "general.architecture", "deepseek2", NULL);
    gk_kv_set_u32(m, "deepseek2.block_count", 8, NULL);
    add2(m, "token_embd.weight", 256, 64);
    add2(m, "per_layer_token_embd.weight", 256, 64);
    add2(m, "output.weight", 256, 64);
    char name[64];
    for (unsigned l = 0; l < 8; l++) {
        snprintf(name, sizeof name, "blk.%u.attn_kv_b.weight", l);
        add2(m, name, 256, 8);
    }
    gk_quant_opts o = opts_for("Q4_K_M");
    gk_quant_plan plan;
    gk_error err;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ASSERT_TYPE(plan_type(&plan, "blk.0.attn_kv_b.weight"), GK_TYPE_Q6_K, "kv_b layer 0");
    ASSERT_TYPE(plan_type(&plan, "blk.1.attn_kv_b.weight"), GK_TYPE_Q4_K, "kv_b layer 1");
    gk_quant_plan_free(&plan);
    o = opts_for("IQ3_XXS");
    o.has_imatrix = true;
    o.plan_only = true;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ASSERT_TYPE(plan_type(&plan, "per_layer_token_embd.weight"), GK_TYPE_IQ3_S, "per_layer_token_embd");
    gk_quant_plan_free(&plan);
    /* --token-embedding-type sets both embeddings, unless a rule names the per-layer one */
    o = opts_for("Q4_K_M");
    o.token_embd_type = GK_TYPE_Q8_0;
    gk_quant_tensor_rule rule[] = { { "per_layer", GK_TYPE_Q5_K }, { "token_embd", GK_TYPE_Q6_K } };
    o.tensor_rules = rule;
    o.n_tensor_rules = 2;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ASSERT_TYPE(plan_type(&plan, "token_embd.weight"), GK_TYPE_Q8_0, "token_embd option beats rule");
    ASSERT_TYPE(plan_type(&plan, "per_layer_token_embd.weight"), GK_TYPE_Q5_K, "rule names per_layer");
    gk_quant_plan_free(&plan);
    o.n_tensor_rules = 0;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_OK);
    ASSERT_TYPE(plan_type(&plan, "per_layer_token_embd.weight"), GK_TYPE_Q8_0, "per_layer follows the option");
    gk_quant_plan_free(&plan);
    gk_model_free(m);
}
END_TEST

START_TEST(imatrix_required_per_tensor) {
    ck_assert(gk_quant_imatrix_required(GK_TYPE_IQ3_XXS, 23, "blk.0.ffn_up.weight"));
    ck_assert(gk_quant_imatrix_required(GK_TYPE_IQ3_XXS, 22, "blk.0.attn_q.weight"));
    ck_assert(!gk_quant_imatrix_required(GK_TYPE_IQ2_XXS, 19, "output.weight"));
    ck_assert(!gk_quant_imatrix_required(GK_TYPE_IQ2_XXS, 19, "per_layer_token_embd.weight"));
    ck_assert(!gk_quant_imatrix_required(GK_TYPE_Q2_K, 21, "output.weight"));
    ck_assert(!gk_quant_imatrix_required(GK_TYPE_IQ3_S, 26, "blk.0.ffn_up.weight"));
    shape s = llama32;
    s.n_layer = 2;
    planned p;
    gk_error err;
    /* IQ3_XXS and IQ3_XS without a matrix: refused, naming the first tensor */
    gk_quant_opts o = opts_for("IQ3_XXS");
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_E_UNSUPPORTED);
    ck_assert_msg(strstr(err.message, "blk.0.attn_k.weight") && strstr(err.message, "IQ2_S"), "%s", err.message);
    gk_model_free(p.in);
    o = opts_for("IQ3_XS");
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_E_UNSUPPORTED);
    ck_assert_msg(strstr(err.message, "blk.0.attn_k.weight") && strstr(err.message, "IQ3_XXS"), "%s", err.message);
    gk_model_free(p.in);
    /* --dry-run: marked and counted, not refused */
    o.plan_only = true;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ck_assert_uint_eq(p.plan.n_need_imatrix, 6);   /* attn_q and attn_k of both layers, ffn_gate/up of layer 0 */
    for (size_t i = 0; i < p.plan.n_entries; i++) {
        const char *nm = gk_tensor_at(p.plan.out, i)->name.ptr;
        bool need = (p.plan.entries[i].why & GK_QWHY_NEEDS_IMATRIX) != 0;
        ck_assert_msg(need == (p.plan.entries[i].to == GK_TYPE_IQ3_XXS), "%s", nm);
    }
    planned_free(&p);
    /* a rule that avoids every very low-bit type makes the preset possible */
    gk_quant_tensor_rule rule[] = { { "attn_(q|k)|ffn", GK_TYPE_Q4_K } };
    o = opts_for("IQ3_XS");
    o.tensor_rules = rule;
    o.n_tensor_rules = 1;
    o.plan_only = true;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ck_assert_uint_eq(p.plan.n_need_imatrix, 0);
    planned_free(&p);
    /* the preliminary pass (matrix) refuses before the writing pass (requantize) */
    gk_model *m = build(&s);
    ck_assert_int_eq(gk_tensor_set_type(m, (size_t)gk_tensor_find(m, "token_embd.weight"), GK_TYPE_Q8_0, NULL), GK_OK);
    o = opts_for("IQ2_XXS");
    gk_quant_plan plan;
    ck_assert_int_eq(gk_quant_plan_build(m, &o, &plan, &err), GK_E_UNSUPPORTED);
    ck_assert_msg(strstr(err.message, "importance matrix") != NULL, "%s", err.message);
    gk_model_free(m);
}
END_TEST

START_TEST(patterns_first_match_and_counters) {
    shape s = llama32;
    s.n_layer = 8;
    gk_quant_opts o = opts_for("Q4_K_M");
    gk_quant_tensor_rule rules[] = { { "blk\\d*\\.0\\.(attn_v|ffn_down)", GK_TYPE_Q8_0 }, { "attn_v", GK_TYPE_Q5_K } };
    o.tensor_rules = rules;
    o.n_tensor_rules = 1;
    planned p;
    gk_error err;
    /* (\d as std::regex reads it) */
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_v.weight"), GK_TYPE_Q8_0, "rule on layer 0");
    /* layer 1 takes layer 0's place in the counters: use_more_bits(0, 8) -> Q6_K */
    ASSERT_TYPE(type_in_plan(&p, "blk.1.attn_v.weight"), GK_TYPE_Q6_K, "attn_v counter not advanced");
    ASSERT_TYPE(type_in_plan(&p, "blk.1.ffn_down.weight"), GK_TYPE_Q6_K, "ffn_down counter not advanced");
    ASSERT_TYPE(type_in_plan(&p, "blk.3.attn_v.weight"), GK_TYPE_Q4_K, "layer 3 counts as 2");
    ASSERT_TYPE(type_in_plan(&p, "blk.4.attn_v.weight"), GK_TYPE_Q6_K, "layer 4 counts as 3");
    planned_free(&p);
    o.n_tensor_rules = 2;   /* first match wins over the later, broader rule */
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.0.attn_v.weight"), GK_TYPE_Q8_0, "first rule");
    ASSERT_TYPE(type_in_plan(&p, "blk.5.attn_v.weight"), GK_TYPE_Q5_K, "second rule");
    planned_free(&p);
    o.pure = true;   /* rules apply under --pure too */
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ASSERT_TYPE(type_in_plan(&p, "blk.5.attn_v.weight"), GK_TYPE_Q5_K, "--pure with a rule");
    ASSERT_TYPE(type_in_plan(&p, "blk.5.attn_q.weight"), GK_TYPE_Q4_K, "--pure without");
    ASSERT_TYPE(type_in_plan(&p, "output.weight"), GK_TYPE_Q4_K, "--pure output");
    planned_free(&p);
    /* the options' types are taken as given: rows that do not fit are refused */
    s.ne0 = 320;
    o = opts_for("Q4_K_M");
    o.output_type = GK_TYPE_Q4_K;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_E_ROW_BLOCK);
    ck_assert_ptr_nonnull(strstr(err.message, "output.weight"));
    gk_model_free(p.in);
}
END_TEST

START_TEST(prune_layers) {
    shape s = llama32;
    s.n_layer = 5;
    gk_quant_opts o = opts_for("Q4_K_M");
    const uint32_t prune[] = { 3, 1 };
    o.prune_layers = prune;
    o.n_prune_layers = 2;
    planned p;
    gk_error err;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ck_assert_uint_eq(p.plan.n_pruned, 2 * 9);
    ck_assert_uint_eq(gk_tensor_count(p.plan.out), gk_tensor_count(p.in) - 18);
    /* 0 stays, 2 -> 1, 4 -> 2 */
    ck_assert_int_ge(gk_tensor_find(p.plan.out, "blk.2.ffn_up.weight"), 0);
    ck_assert_int_lt(gk_tensor_find(p.plan.out, "blk.3.ffn_up.weight"), 0);
    for (size_t i = 0; i < p.plan.n_entries; i++) {
        const char *out = gk_tensor_at(p.plan.out, i)->name.ptr;
        const char *in = gk_tensor_at(p.in, p.plan.entries[i].src_tensor)->name.ptr;
        int lo = -1, li = -1;
        sscanf(out, "blk.%d.", &lo);
        sscanf(in, "blk.%d.", &li);
        ck_assert_int_eq(lo, li == 2 ? 1 : li == 4 ? 2 : li);
        ck_assert_str_eq(strchr(out, 'w') ? strrchr(out, '.') : out, strchr(in, 'w') ? strrchr(in, '.') : in);
        ck_assert_uint_eq(p.plan.entries[i].out_tensor, i);
    }
    size_t n = gk_kv_count(p.plan.out);
    ck_assert_str_eq(gk_kv_at(p.plan.out, n - 1)->key.ptr, "llama.block_count");
    ck_assert_int_eq(gk_kv_at(p.plan.out, n - 1)->value.type, GK_V_U32);
    ck_assert_uint_eq(gk_kv_at(p.plan.out, n - 1)->value.u, 3);
    /* the rules still see 5 layers (the input's block count), and count the kept attn_v */
    ASSERT_TYPE(type_in_plan(&p, "blk.2.attn_v.weight"), GK_TYPE_Q6_K, "last kept attn_v");
    planned_free(&p);
    /* pruning the first layer renumbers from 0 */
    const uint32_t first[] = { 0 };
    o.prune_layers = first;
    o.n_prune_layers = 1;
    ck_assert_int_eq(plan_with(&p, &s, &o, &err), GK_OK);
    ck_assert_int_ge(gk_tensor_find(p.plan.out, "blk.3.attn_q.weight"), 0);
    ck_assert_int_lt(gk_tensor_find(p.plan.out, "blk.4.attn_q.weight"), 0);
    planned_free(&p);
}
END_TEST

/* ---- golden: every preset's plan, and what the release refused -------------- */

/* Checks the plan of `target` (pure or not) for golden file `want` of folder
 * against its MANIFEST entry. @return : tensors compared. */
static int golden_plan(const char *g, const char *folder, const char *input, const char *want, const char *target,
                       bool pure, cJSON *man) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", g, folder, input);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open(path, GK_OPEN_DEFAULT, &f, &err), GK_OK);
    gk_quant_opts o = opts_for(target);
    o.pure = pure;
    o.plan_only = true;   /* Q1_0 / Q2_0 kernels may be missing: types only */
    gk_quant_plan plan;
    ck_assert_msg(gk_quant_plan_build(gk_file_model(f), &o, &plan, &err) == GK_OK, "%s: %s", want, err.message);
    cJSON *tensors = cJSON_GetObjectItem(cJSON_GetObjectItem(man, want), "tensors");
    ck_assert_msg(tensors != NULL, "%s not in the manifest", want);
    ck_assert_int_eq(cJSON_GetArraySize(tensors), (int)gk_tensor_count(plan.out));
    for (size_t i = 0; i < gk_tensor_count(plan.out); i++) {
        const gk_tensor *t = gk_tensor_at(plan.out, i);
        const char *ty = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(tensors, t->name.ptr), "type"));
        ck_assert_msg(ty && strcmp(ty, tn(t->type)) == 0, "%s %s: plan gives %s, golden has %s", want,
                      t->name.ptr, tn(t->type), ty ? ty : "?");
    }
    int n = (int)gk_tensor_count(plan.out);
    gk_quant_plan_free(&plan);
    gk_close(f);
    return n;
}

START_TEST(golden_preset_plans) {
    const char *g = golden_dir("odd/MANIFEST.json");
    if (g == NULL) {
        printf("SKIPPED: golden parity (no golden data at %s)\n", getenv("GGUFKIT_GOLDEN") ? getenv("GGUFKIT_GOLDEN") : "(GGUFKIT_GOLDEN unset)");
        return;
    }
    static const struct { const char *folder, *input; } sets[] = {
        { "syn1", "syn1-f32.gguf" }, { "odd", "odd-f16.gguf" }, { "moe", "moe-f16.gguf" } };
    int files = 0, tensors = 0;
    for (size_t k = 0; k < 3; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/MANIFEST.json", g, sets[k].folder);
        char *text = read_text_file(path);
        ck_assert_ptr_nonnull(text);
        cJSON *man = cJSON_Parse(text);
        free(text);
        ck_assert_ptr_nonnull(man);
        const cJSON *it;
        cJSON_ArrayForEach(it, man) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "%s-", sets[k].folder);
            const char *name = it->string, *stem = name + strlen(prefix);
            bool pure = strncmp(stem, "pure-", 5) == 0;
            if (strncmp(name, prefix, strlen(prefix)) != 0 || (!pure && strncmp(stem, "preset-", 7) != 0)) continue;
            char target[32];
            snprintf(target, sizeof target, "%.*s", (int)(strlen(stem) - (pure ? 5 : 7) - 5), stem + (pure ? 5 : 7));
            tensors += golden_plan(g, sets[k].folder, sets[k].input, name, target, pure, man);
            files++;
        }
        cJSON_Delete(man);
    }
    printf("golden plans: %d files, %d tensors agree\n", files, tensors);
    ck_assert_int_ge(files, 23 + 13 + 10);
    /* REFERENCE-FAILED: what the release refused, refused here too */
    char path[4096];
    gk_file *f;
    gk_error err;
    gk_quant_plan plan;
    snprintf(path, sizeof path, "%s/odd/odd-f16.gguf", g);
    ck_assert_int_eq(gk_open(path, GK_OPEN_DEFAULT, &f, &err), GK_OK);
    gk_quant_opts o = opts_for("Q1_0");
    o.plan_only = true;
    ck_assert_int_eq(gk_quant_plan_build(gk_file_model(f), &o, &plan, &err), GK_E_ROW_BLOCK);
    ck_assert_msg(strstr(err.message, "extra.odd_rows.weight") && strstr(err.message, "no fallback"), "%s", err.message);
    gk_close(f);
    snprintf(path, sizeof path, "%s/syn1/syn1-f32.gguf", g);
    ck_assert_int_eq(gk_open(path, GK_OPEN_DEFAULT, &f, &err), GK_OK);
    o = opts_for("IQ3_XXS");
    ck_assert_int_eq(gk_quant_plan_build(gk_file_model(f), &o, &plan, &err), GK_E_UNSUPPORTED);
    ck_assert_msg(strstr(err.message, "importance matrix") && strstr(err.message, "blk.0.attn_k.weight"), "%s",
                  err.message);
    gk_close(f);
}
END_TEST

/* ---- golden: the imatrix presets' type choices ------------------------------ */

START_TEST(golden_imatrix_preset_types) {
    const char *g = golden_dir("imatrix/MANIFEST.json");
    if (g == NULL) {
        printf("SKIPPED: golden parity (no golden data at %s)\n", getenv("GGUFKIT_GOLDEN") ? getenv("GGUFKIT_GOLDEN") : "(GGUFKIT_GOLDEN unset)");
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/imatrix/MANIFEST.json", g);
    char *text = read_text_file(path);
    ck_assert_ptr_nonnull(text);
    cJSON *man = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(man);
    snprintf(path, sizeof path, "%s/syn1/syn1-f32.gguf", g);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open(path, GK_OPEN_DEFAULT, &f, &err), GK_OK);
    const gk_model *in = gk_file_model(f);
    static const char *const presets[] = { "IQ1_M", "IQ1_S", "IQ2_M", "IQ2_S", "IQ2_XS", "IQ2_XXS",
                                           "IQ3_XXS", "IQ4_XS", "Q2_K_S", "Q4_0", "Q4_K_M" };
    int checked = 0;
    for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) {
        char file[64];
        snprintf(file, sizeof file, "syn1-imat-%s.gguf", presets[k]);
        cJSON *tensors = cJSON_GetObjectItem(cJSON_GetObjectItem(man, file), "tensors");
        ck_assert_msg(tensors != NULL, "%s not in the manifest", file);
        gk_quant_opts o = opts_for(presets[k]);
        o.has_imatrix = true;
        /* The plan refuses types without kernels; use the rules directly in loader order. */
        const gk_model *views[1] = { in };
        gk_mix_model mm;
        gk_mix_model_init(&mm, views, 1);
        gk_mix_state st = { 0 };
        gk_quant_plan order;
        gk_quant_opts f16 = opts_for("F16");
        ck_assert_int_eq(gk_quant_plan_build(in, &f16, &order, &err), GK_OK);   /* for the loader order */
        for (size_t i = 0; i < gk_tensor_count(order.out); i++) {
            const gk_tensor *t = gk_tensor_at(order.out, i);
            uint32_t ty = GK_TYPE_F32;
            if (gk_quant_eligible(t->name.ptr, t->n_dims)) {
                const gk_mix_query q = { o.target->ftype, o.target->base_type, t->name.ptr, t->ne[0], -1, -1, true, 1 };
                ck_assert_int_eq(gk_quant_mix_type(&mm, &st, &q, &ty, &err), GK_OK);
                ty = gk_quant_fallback(ty, t->ne[0]);
            }
            const char *want = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(tensors, t->name.ptr), "type"));
            ck_assert_msg(want && strcmp(want, tn(ty)) == 0, "%s %s: rules give %s, golden has %s", presets[k],
                          t->name.ptr, tn(ty), want ? want : "?");
            checked++;
        }
        gk_quant_plan_free(&order);
    }
    ck_assert_int_eq(checked, 11 * 21);
    gk_close(f);
    cJSON_Delete(man);
}
END_TEST

static Suite *mix_suite(void) {
    Suite *s = suite_create("mix");
    TCase *rules = tcase_create("rules");
    tcase_add_test(rules, q4_k_m_use_more_bits_positions);
    tcase_add_test(rules, q5_k_m_positions);
    tcase_add_test(rules, q4_k_s_first_layers);
    tcase_add_test(rules, q3_k_m_and_falcon);
    tcase_add_test(rules, q3_k_l_and_q2_k);
    tcase_add_test(rules, iq3_xs_middle_layers);
    tcase_add_test(rules, iq3_xxs_imatrix_dependence);
    tcase_add_test(rules, iq3_m_and_iq4);
    tcase_add_test(rules, legacy_types_with_imatrix);
    tcase_add_test(rules, gqa_rules);
    tcase_add_test(rules, moe_eight_experts);
    tcase_add_test(rules, moe_needs_layer_numbers);
    tcase_add_test(rules, seventy_b_attn_v);
    tcase_add_test(rules, tied_embeddings_take_output_rules);
    tcase_add_test(rules, fused_qkv);
    tcase_add_test(rules, model_facts);
    tcase_add_test(rules, importance_matrix_presets);
    tcase_add_test(rules, fallback_rows);
    tcase_add_test(rules, mxfp4_moe_preset);
    tcase_add_test(rules, q1_0_q2_0_presets);
    tcase_add_test(rules, kinds_and_eligibility);
    tcase_add_test(rules, imatrix_required_per_tensor);
    suite_add_tcase(s, rules);
    TCase *plan = tcase_create("plan");
    tcase_add_test(plan, plan_options_and_patterns);
    tcase_add_test(plan, plan_pure_leave_output_copy);
    tcase_add_test(plan, plan_loader_order);
    tcase_add_test(plan, refusals);
    tcase_add_test(plan, override_kv);
    tcase_add_test(plan, keep_split_outputs);
    tcase_add_test(plan, patterns_first_match_and_counters);
    tcase_add_test(plan, prune_layers);
    suite_add_tcase(s, plan);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, golden_imatrix_preset_types);
    tcase_add_test(golden, golden_preset_plans);
    suite_add_tcase(s, golden);
    return s;
}

int main(void) {
    return run_suite(mix_suite());
}
