/*
 * mix.c - per-tensor type mixing: the type llama-quantize gives each tensor of a
 * preset (Q4_K_M, IQ3_XS, MXFP4_MOE ...) by its kind, its layer position and the
 * model's shape, as llama.cpp's llama_tensor_get_type_impl decides it in the
 * September 2026 release (v0.4.0). Tensors are first sorted into kinds by name
 * (gk_mix_kind_of); the rules live in one function, gk_quant_mix_type, a chain
 * of tests on the kind and the file type; the facts they read come from
 * gk_mix_model_init. Architectures llama.cpp does not know get the same rules
 * by tensor name. Also which tensors need an importance matrix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"
#include "quant/mix.h"

/* llama.cpp's file type numbers (enum llama_ftype) the rules name. */
enum {
    FT_Q4_0 = 2, FT_Q5_0 = 8, FT_Q2_K = 10, FT_Q3_K_S = 11, FT_Q3_K_M = 12, FT_Q3_K_L = 13,
    FT_Q4_K_S = 14, FT_Q4_K_M = 15, FT_Q5_K_M = 17, FT_IQ2_XXS = 19, FT_IQ2_XS = 20,
    FT_Q2_K_S = 21, FT_IQ3_XS = 22, FT_IQ3_XXS = 23, FT_IQ1_S = 24, FT_IQ4_NL = 25,
    FT_IQ3_S = 26, FT_IQ3_M = 27, FT_IQ2_S = 28, FT_IQ2_M = 29, FT_IQ4_XS = 30, FT_IQ1_M = 31,
    FT_TQ1_0 = 36, FT_TQ2_0 = 37, FT_MXFP4_MOE = 38, FT_Q2_0 = 41,
};

/* ------------------------------------------------------------------------ */
/* Model facts                                                              */
/* ------------------------------------------------------------------------ */

/* Reads "ARCH.suffix" as an unsigned integer; an array gives its first element. */
static bool arch_uint(const gk_model *m, const char *arch, const char *suffix, uint64_t *out) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    if (gk_kv_get_uint(m, key, out) == GK_OK) return true;
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL || v->type != GK_V_ARR || v->arr.n == 0) return false;
    switch (v->arr.elem) {
    case GK_V_U32: *out = ((const uint32_t *)v->arr.data)[0]; return true;
    case GK_V_I32: *out = (uint64_t)(((const int32_t *)v->arr.data)[0] < 0 ? 0 : ((const int32_t *)v->arr.data)[0]); return true;
    case GK_V_U16: *out = ((const uint16_t *)v->arr.data)[0]; return true;
    case GK_V_U64: *out = ((const uint64_t *)v->arr.data)[0]; return true;
    default: return false;
    }
}

static bool name_has(const char *name, const char *part) { return strstr(name, part) != NULL; }

/* The model sizes llama.cpp calls "70B" (it gives attn_v more bits). */
static bool model_is_70b(const gk_mix_model *mm) {
    if (mm->n_layer != 80) return false;
    if (strcmp(mm->arch, "llama") == 0) return mm->n_expert != 8 && mm->n_head != mm->n_head_kv;
    return strcmp(mm->arch, "qwen2") == 0 || strcmp(mm->arch, "deci") == 0;
}

gk_mix_kind gk_mix_kind_of(const char *name) {
    if (strcmp(name, "output.weight") == 0) return GK_MIX_OUTPUT;
    if (strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0)
        return GK_MIX_TOKEN_EMBD;
    static const struct { const char *part; gk_mix_kind kind; } parts[] = {
        { "attn_qkv.weight", GK_MIX_ATTN_QKV }, { "attn_kv_b.weight", GK_MIX_ATTN_KV_B },
        { "attn_v.weight", GK_MIX_ATTN_V },     { "attn_k.weight", GK_MIX_ATTN_K },
        { "attn_q.weight", GK_MIX_ATTN_Q },     { "attn_output.weight", GK_MIX_ATTN_OUTPUT },
        { "ffn_up", GK_MIX_FFN_UP },            { "ffn_gate", GK_MIX_FFN_GATE },
        { "ffn_down", GK_MIX_FFN_DOWN },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (name_has(name, parts[i].part)) return parts[i].kind;
    return GK_MIX_OTHER;
}

/* attn_v and the tensors the rules treat as it (fused qkv, MLA's kv_b). */
static bool kind_is_attn_v(gk_mix_kind k) {
    return k == GK_MIX_ATTN_V || k == GK_MIX_ATTN_QKV || k == GK_MIX_ATTN_KV_B;
}

void gk_mix_model_init_meta(gk_mix_model *mm, const gk_model *m) {
    memset(mm, 0, sizeof *mm);
    gk_str arch;
    if (gk_kv_get_str(m, "general.architecture", &arch) == GK_OK && arch.len < sizeof mm->arch)
        memcpy(mm->arch, arch.ptr, arch.len);
    uint64_t v;
    mm->n_layer_known = arch_uint(m, mm->arch, "block_count", &v);
    mm->n_layer = mm->n_layer_known ? (uint32_t)v : 0;
    mm->n_head = arch_uint(m, mm->arch, "attention.head_count", &v) ? (uint32_t)v : 0;
    mm->n_head_kv = arch_uint(m, mm->arch, "attention.head_count_kv", &v) ? (uint32_t)v : mm->n_head;
    mm->n_gqa = mm->n_head_kv ? mm->n_head / mm->n_head_kv : 0;
    mm->n_expert = arch_uint(m, mm->arch, "expert_count", &v) ? (uint32_t)v : 0;
    mm->is_falcon = strcmp(mm->arch, "falcon") == 0;
    mm->is_bailingmoe3 = strcmp(mm->arch, "bailingmoe3") == 0;
    mm->is_70b = model_is_70b(mm);
}

void gk_mix_model_add_name(gk_mix_model *mm, const char *name) {
    int layer;
    if (!mm->n_layer_known && sscanf(name, "blk.%d.", &layer) == 1 && layer >= 0 && (uint32_t)layer + 1 > mm->n_layer) {
        mm->n_layer = (uint32_t)layer + 1;
        mm->is_70b = model_is_70b(mm);
    }
    gk_mix_kind k = gk_mix_kind_of(name);
    if (kind_is_attn_v(k)) mm->n_attention_wv++;
    else if (k == GK_MIX_OUTPUT) mm->has_output = true;
}

void gk_mix_model_init(gk_mix_model *mm, const gk_model *const *models, size_t n_models) {
    gk_mix_model_init_meta(mm, models[0]);
    for (size_t k = 0; k < n_models; k++)
        for (size_t i = 0; i < gk_tensor_count(models[k]); i++)
            gk_mix_model_add_name(mm, gk_tensor_at(models[k], i)->name.ptr);
}

/* ------------------------------------------------------------------------ */
/* The rules                                                                */
/* ------------------------------------------------------------------------ */

/* llama.cpp's "use_more_bits": the first and last eighth of the layers and
 * every third layer in between. */
static bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

/* The layer a feed-forward tensor belongs to: its position among its kind, or
 * (mixture of experts, where experts come in any order) the N of "blk.N.". */
static gk_status layer_of(const gk_mix_model *mm, int counter, const char *name, int *i_layer,
                          gk_error *err) {
    *i_layer = counter;
    if (mm->n_expert <= 1) return GK_OK;
    if (sscanf(name, "blk.%d.", i_layer) != 1)
        return gk_error_set(err, GK_E_CORRUPT, -1, "%s: cannot tell the layer of this expert tensor", name);
    if (*i_layer < 0 || *i_layer >= (int)mm->n_layer)
        return gk_error_set(err, GK_E_CORRUPT, -1, "%s: layer %d outside [0, %u)", name, *i_layer, mm->n_layer);
    return GK_OK;
}

static bool ftype_in(uint32_t ftype, const uint32_t *set, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (set[i] == ftype) return true;
    return false;
}
#define FTYPE_IN(ft, ...) ftype_in((ft), (const uint32_t[]){ __VA_ARGS__ }, \
                                   sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t))

static uint32_t block_elems(uint32_t type) {
    const gk_type_info *t = gk_type_get(type);
    return t ? t->block_elems : 1;
}

/* output.weight (and token_embd.weight of a model without one). */
/* output.weight (and the embeddings of a model without one). */
static uint32_t output_rule(const gk_mix_model *mm, uint32_t ftype, uint32_t type, uint64_t ne0,
                            int32_t output_type) {
    if (output_type >= 0) return (uint32_t)output_type;
    if (ftype == FT_MXFP4_MOE) return GK_TYPE_Q8_0;
    if (mm->is_falcon || ne0 % block_elems(type) != 0) return GK_TYPE_Q8_0;
    if (FTYPE_IN(ftype, FT_IQ2_XXS, FT_IQ2_XS, FT_IQ3_XXS, FT_IQ1_S, FT_IQ2_S, FT_IQ2_M, FT_IQ1_M))
        return GK_TYPE_Q5_K;
    return type != GK_TYPE_Q8_0 ? GK_TYPE_Q6_K : type;
}

/* The embeddings of a model with its own output.weight. */
static uint32_t token_embd_rule(uint32_t ftype, uint32_t type, int32_t token_embd_type) {
    if (token_embd_type >= 0) return (uint32_t)token_embd_type;
    if (FTYPE_IN(ftype, FT_IQ2_XXS, FT_IQ2_XS, FT_IQ1_S, FT_IQ1_M)) return GK_TYPE_Q2_K;
    if (FTYPE_IN(ftype, FT_IQ2_S, FT_IQ2_M, FT_IQ3_XXS)) return GK_TYPE_IQ3_S;
    if (FTYPE_IN(ftype, FT_TQ1_0, FT_TQ2_0, FT_Q2_0)) return GK_TYPE_Q4_K;
    return type;
}

/* MXFP4_MOE: expert tensors (3-D) get MXFP4, everything else Q8_0. In
 * bailingmoe3 only the up/gate/down experts count (its MLA projections are 3-D too). */
static uint32_t mxfp4_moe_rule(const gk_mix_model *mm, gk_mix_kind kind, uint64_t ne2) {
    bool expert_role = kind == GK_MIX_FFN_UP || kind == GK_MIX_FFN_GATE || kind == GK_MIX_FFN_DOWN;
    if (ne2 > 1 && (!mm->is_bailingmoe3 || expert_role)) return GK_TYPE_MXFP4;
    return GK_TYPE_Q8_0;
}

gk_status gk_quant_mix_type(const gk_mix_model *mm, gk_mix_state *st, const gk_mix_query *q,
                            uint32_t *out, gk_error *err) {
    const uint32_t ftype = q->ftype, base_type = q->base_type;
    const char *name = q->name;
    const bool has_imatrix = q->has_imatrix;
    const gk_mix_kind kind = gk_mix_kind_of(name);
    uint32_t t = base_type;
    const int gqa = (int)mm->n_gqa, nexp = (int)mm->n_expert, n_layer = (int)mm->n_layer;
    const bool falcon = mm->is_falcon;
    const bool iq2_s_or_m = FTYPE_IN(ftype, FT_IQ2_S, FT_IQ2_M);
    int il;
    gk_status s;

    if (kind == GK_MIX_OUTPUT || (!mm->has_output && kind == GK_MIX_TOKEN_EMBD)) {
        t = output_rule(mm, ftype, t, q->ne0, q->output_type);
    } else if (ftype == FT_MXFP4_MOE) {
        t = mxfp4_moe_rule(mm, kind, q->ne2);
    } else if (kind == GK_MIX_TOKEN_EMBD) {
        t = token_embd_rule(ftype, t, q->token_embd_type);
    } else if (FTYPE_IN(ftype, FT_IQ2_XXS, FT_IQ2_XS, FT_IQ1_S, FT_IQ2_S, FT_IQ2_M, FT_IQ1_M)) {
        /* The importance-matrix presets have their own short list. */
        if (kind_is_attn_v(kind)) {
            if (gqa >= 4 || nexp >= 4) t = GK_TYPE_Q4_K;
            else t = iq2_s_or_m ? GK_TYPE_IQ3_S : GK_TYPE_Q2_K;
            st->i_attention_wv++;
        } else if (nexp == 8 && kind == GK_MIX_ATTN_K) {
            t = GK_TYPE_Q4_K;
        } else if (kind == GK_MIX_FFN_DOWN) {
            if (st->i_ffn_down < n_layer / 8) t = iq2_s_or_m ? GK_TYPE_IQ3_S : GK_TYPE_Q2_K;
            st->i_ffn_down++;
        } else if (kind == GK_MIX_ATTN_OUTPUT) {
            if (nexp == 8) t = GK_TYPE_Q5_K;
            else if (FTYPE_IN(ftype, FT_IQ1_S, FT_IQ1_M)) t = GK_TYPE_IQ2_XXS;
            else if (iq2_s_or_m) t = GK_TYPE_IQ3_S;
        }
    } else if (kind_is_attn_v(kind)) {
        /* attn_qkv and attn_kv_b take attn_v's rules (and its counter). */
        const int i = st->i_attention_wv, n = mm->n_attention_wv;
        if (ftype == FT_Q2_K) t = gqa >= 4 ? GK_TYPE_Q4_K : GK_TYPE_Q3_K;
        else if (ftype == FT_Q2_K_S && gqa >= 4) t = GK_TYPE_Q4_K;
        else if (ftype == FT_IQ3_XXS) t = gqa >= 4 ? GK_TYPE_Q4_K : !has_imatrix ? GK_TYPE_IQ3_S : GK_TYPE_IQ3_XXS;
        else if (FTYPE_IN(ftype, FT_IQ3_XS, FT_IQ3_S) && gqa >= 4) t = GK_TYPE_Q4_K;
        else if (ftype == FT_IQ3_M) t = GK_TYPE_Q4_K;
        else if (ftype == FT_Q3_K_M) t = i < 2 ? GK_TYPE_Q5_K : GK_TYPE_Q4_K;
        else if (ftype == FT_Q3_K_L) t = GK_TYPE_Q5_K;
        else if (FTYPE_IN(ftype, FT_IQ4_NL, FT_IQ4_XS) && gqa >= 4) t = GK_TYPE_Q5_K;
        else if (FTYPE_IN(ftype, FT_Q4_K_M, FT_Q5_K_M) && use_more_bits(i, n)) t = GK_TYPE_Q6_K;
        else if (ftype == FT_Q4_K_S && i < 4) t = GK_TYPE_Q5_K;
        /* 70B: eight heads share attn_v, so it is small; give it more bits. */
        if (mm->is_70b && (t == GK_TYPE_Q3_K || t == GK_TYPE_Q4_K)) t = GK_TYPE_Q5_K;
        if (nexp == 8) t = GK_TYPE_Q8_0;
        st->i_attention_wv++;
    } else if (kind == GK_MIX_ATTN_K) {
        if (nexp == 8) t = GK_TYPE_Q8_0;
        else if (ftype == FT_IQ3_XS) t = GK_TYPE_IQ3_XXS;
        else if (ftype == FT_IQ3_XXS) t = GK_TYPE_IQ2_S;
    } else if (kind == GK_MIX_ATTN_Q) {
        if (ftype == FT_IQ3_XS) t = GK_TYPE_IQ3_XXS;
        else if (ftype == FT_IQ3_XXS) t = GK_TYPE_IQ2_S;
    } else if (kind == GK_MIX_FFN_DOWN) {
        if ((s = layer_of(mm, st->i_ffn_down, name, &il, err)) != GK_OK) return s;
        const bool more = use_more_bits(il, n_layer);
        if (ftype == FT_Q2_K) t = GK_TYPE_Q3_K;
        else if (ftype == FT_Q2_K_S) { if (il < n_layer / 8) t = GK_TYPE_Q4_K; }
        else if (ftype == FT_IQ3_XXS && !has_imatrix) t = il < n_layer / 8 ? GK_TYPE_Q4_K : GK_TYPE_Q3_K;
        else if (ftype == FT_Q3_K_M)
            t = il < n_layer / 16 ? GK_TYPE_Q5_K : (!falcon || more) ? GK_TYPE_Q4_K : GK_TYPE_Q3_K;
        else if (ftype == FT_IQ3_M && (il < n_layer / 8 || (nexp == 8 && more))) t = GK_TYPE_Q4_K;
        else if (ftype == FT_Q3_K_L) t = falcon ? GK_TYPE_Q4_K : GK_TYPE_Q5_K;
        else if (ftype == FT_Q4_K_M) {
            if (falcon) t = il < n_layer / 16 ? GK_TYPE_Q6_K : more ? GK_TYPE_Q5_K : GK_TYPE_Q4_K;
            else if (more) t = GK_TYPE_Q6_K;
        }
        else if (il < n_layer / 8 && FTYPE_IN(ftype, FT_IQ4_NL, FT_IQ4_XS) && !has_imatrix) t = GK_TYPE_Q5_K;
        else if (ftype == FT_Q5_K_M && more) t = GK_TYPE_Q6_K;
        else if (ftype == FT_Q4_K_S && !falcon && il < n_layer / 8) t = GK_TYPE_Q5_K;
        else if (FTYPE_IN(ftype, FT_Q4_0, FT_Q5_0) && has_imatrix && il < n_layer / 8)
            t = ftype == FT_Q4_0 ? GK_TYPE_Q4_1 : GK_TYPE_Q5_1;
        st->i_ffn_down++;
    } else if (kind == GK_MIX_ATTN_OUTPUT) {
        if (falcon) {
            if (ftype == FT_Q3_K_L) t = GK_TYPE_Q4_K;
        } else if (nexp == 8) {
            if (FTYPE_IN(ftype, FT_Q2_K, FT_IQ3_XS, FT_IQ3_XXS, FT_Q3_K_S, FT_Q3_K_M, FT_IQ4_NL,
                         FT_Q4_K_S, FT_Q4_K_M, FT_IQ3_S, FT_IQ3_M, FT_IQ4_XS))
                t = GK_TYPE_Q5_K;
        } else {
            if (ftype == FT_Q2_K) t = GK_TYPE_Q3_K;
            else if (ftype == FT_IQ3_XXS) t = GK_TYPE_IQ3_S;
            else if (ftype == FT_Q3_K_M) t = GK_TYPE_Q4_K;
            else if (ftype == FT_Q3_K_L) t = GK_TYPE_Q5_K;
            else if (ftype == FT_IQ3_M) t = GK_TYPE_Q4_K;
        }
    } else if (kind == GK_MIX_FFN_GATE || kind == GK_MIX_FFN_UP) {
        int *counter = kind == GK_MIX_FFN_GATE ? &st->i_ffn_gate : &st->i_ffn_up;
        if ((s = layer_of(mm, *counter, name, &il, err)) != GK_OK) return s;
        if (ftype == FT_IQ3_XS && il >= n_layer / 8 && il < 7 * n_layer / 8) t = GK_TYPE_IQ3_XXS;
        (*counter)++;
    }
    /* The release's own branch for attn_qkv (Q4_K / Q5_K / Q6_K by preset) comes
     * after attn_v's, which takes attn_qkv first: it is never reached. */
    *out = t;
    return GK_OK;
}

bool gk_quant_imatrix_required(uint32_t type, uint32_t ftype, const char *name) {
    const gk_mix_kind kind = gk_mix_kind_of(name);
    if (kind == GK_MIX_TOKEN_EMBD || kind == GK_MIX_OUTPUT) return false;
    switch (type) {
    case GK_TYPE_IQ3_XXS: case GK_TYPE_IQ2_XXS: case GK_TYPE_IQ2_XS: case GK_TYPE_IQ2_S:
    case GK_TYPE_IQ1_M: case GK_TYPE_IQ1_S:
        return true;
    case GK_TYPE_Q2_K:
        return ftype == FT_Q2_K_S;   /* K-quants need none, but a Q2_K_S file's Q2_K tensors do */
    default:
        return false;
    }
}

bool gk_quant_weights_mandatory(uint32_t type) {
    return type == GK_TYPE_IQ2_XXS || type == GK_TYPE_IQ2_XS || type == GK_TYPE_IQ1_S;
}
