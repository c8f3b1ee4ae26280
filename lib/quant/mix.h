/*
 * mix.h - the internals of quantization plans that the tests reach directly:
 * the per-tensor type mixing rules (mix.c, llama.cpp's llama_tensor_get_type)
 * and the eligibility and fallback rules of plan.c. Not part of the public
 * interface: library users get all of it through gk_quant_plan_build; the
 * shared library does not export these (the tests link the static library).
 */
#ifndef GK_QUANT_MIX_H
#define GK_QUANT_MIX_H

#include "ggufkit.h"

/** gk_quant_eligible() : @return : true when llama-quantize would quantize the tensor
 *  (name ends in "weight", 2+ dimensions, not a norm, not one of the excluded kinds). */
bool gk_quant_eligible(const char *name, uint32_t n_dims);

/** gk_quant_fallback() : @return : the type llama-quantize falls back to when a row of
 *  n elements is not a whole number of `type`'s blocks (F16 when even the fallback
 *  does not fit, and for 32-element block types without one), `type` itself when
 *  the row fits, or GK_TYPE_COUNT when the release defines no fallback for `type`
 *  (Q1_0, NVFP4: it refuses the tensor). */
uint32_t gk_quant_fallback(uint32_t type, uint64_t n);

/* The tensor kinds the rules tell apart (llama.cpp's tensor categories), by name. */
typedef enum gk_mix_kind {
    GK_MIX_TOKEN_EMBD, GK_MIX_ATTN_Q, GK_MIX_ATTN_V, GK_MIX_ATTN_K, GK_MIX_ATTN_QKV,
    GK_MIX_ATTN_KV_B, GK_MIX_ATTN_OUTPUT, GK_MIX_FFN_UP, GK_MIX_FFN_GATE, GK_MIX_FFN_DOWN,
    GK_MIX_OUTPUT, GK_MIX_OTHER
} gk_mix_kind;

/** gk_mix_kind_of() : @return : the kind of the tensor called name (output.weight,
 *  token_embd.weight and per_layer_token_embd.weight by whole name, the others by
 *  the first of attn_qkv, attn_kv_b, attn_v, attn_k, attn_q, attn_output
 *  (".weight"), ffn_up, ffn_gate, ffn_down found in it). */
gk_mix_kind gk_mix_kind_of(const char *name);

/** gk_quant_weights_mandatory() : @return : true for the types whose reference
 *  quantizer cannot run without importance weights (IQ2_XXS, IQ2_XS, IQ1_S: ggml
 *  asserts), even where llama-quantize's own check exempts the tensor. */
bool gk_quant_weights_mandatory(uint32_t type);

/* ---- Per-tensor type mixing (llama.cpp's llama_tensor_get_type) ---- */

/* What the mixing rules know of a model (llama.cpp's hparams and counts). */
typedef struct gk_mix_model {
    char arch[64];            /* general.architecture ("" when absent) */
    uint32_t n_layer;         /* ARCH.block_count (or 1 + the highest blk.N) */
    bool n_layer_known;       /* n_layer came from ARCH.block_count */
    uint32_t n_head, n_head_kv;   /* of layer 0 */
    uint32_t n_gqa;           /* n_head / n_head_kv, 0 when n_head_kv is 0 */
    uint32_t n_expert;        /* ARCH.expert_count, 0 when absent */
    bool is_falcon;           /* arch "falcon" */
    bool is_70b;              /* llama.cpp's model type 70B (llama/qwen2/deci, 80 layers) */
    bool is_bailingmoe3;      /* arch "bailingmoe3" (MXFP4_MOE tells its experts by name) */
    bool has_output;          /* output.weight exists (else the embeddings take its rules) */
    int n_attention_wv;       /* tensors of kind attn_v, attn_qkv or attn_kv_b */
} gk_mix_model;

/* Counters the rules advance as tensors pass in processing order. */
typedef struct gk_mix_state {
    int i_attention_wv, i_ffn_down, i_ffn_gate, i_ffn_up;
} gk_mix_state;

/* One question to the mixing rules: a tensor of a target, and the user's
 * choices the rules themselves consult. */
typedef struct gk_mix_query {
    uint32_t ftype;            /* the target's file type (llama.cpp's number) */
    uint32_t base_type;        /* the target's base type (gk_type id) */
    const char *name;          /* the tensor's name */
    uint64_t ne0;              /* its row length */
    int32_t output_type;       /* --output-tensor-type, or -1 when unset */
    int32_t token_embd_type;   /* --token-embedding-type, or -1 when unset */
    bool has_imatrix;          /* importance data will be supplied */
    uint64_t ne2;              /* its third dimension (experts); 0 or 1 for 2-D tensors */
} gk_mix_query;

/** gk_mix_model_init() : reads the facts the rules need from m's metadata and
 *  the tensor names of the n_models models (a shard set; metadata from models[0]). */
void gk_mix_model_init(gk_mix_model *mm, const gk_model *const *models, size_t n_models);

/** gk_mix_model_init_meta() : the metadata part of gk_mix_model_init (no tensor
 *  counted yet; the layer count falls back to 1 + the highest blk.N added). */
void gk_mix_model_init_meta(gk_mix_model *mm, const gk_model *meta);

/** gk_mix_model_add_name() : counts one tensor of the model as it will be
 *  written (after --prune-layers renumbering). */
void gk_mix_model_add_name(gk_mix_model *mm, const char *name);

/** gk_quant_mix_type() : the type llama-quantize's rules choose for the tensor
 *  q->name (row length q->ne0) of a target with file type q->ftype and base type
 *  q->base_type, before the fallback for rows that are not whole blocks.
 *  Advances st. @return : GK_OK, or GK_E_CORRUPT when a mixture-of-experts
 *  tensor has no valid layer number in its name. */
gk_status gk_quant_mix_type(const gk_mix_model *mm, gk_mix_state *st, const gk_mix_query *q,
                            uint32_t *out, gk_error *err);

#endif /* GK_QUANT_MIX_H */
