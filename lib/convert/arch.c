/*
 * arch.c - the architecture table and the checkpoint-to-GGUF tensor names of
 * the Llama family (Llama, Mistral, Mixtral) and Qwen2/Qwen3/Qwen3-MoE, with the
 * rules of which tensors stay F32. See arch.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/arch.h"

/* LlamaModel.modify_tensors: block_sparse_moe.experts.E.w1/w2/w3, written
 * w1, w2, w3 once a layer's last arrived. */
static const gk_conv_moe mixtral_moe = {
    "block_sparse_moe.experts.", { "w1", "w2", "w3" }, "block_sparse_moe.gate", { 0, 1, 2 },
    { "num_local_experts", NULL, NULL }, true, NULL, NULL,
};
/* Qwen2MoeModel.modify_tensors: mlp.experts.E.{gate,down,up}_proj, written
 * down, gate, up; or the experts already stacked (down_proj, gate_up_proj);
 * QWEN3MOE has no dense feed-forward tensors. */
static const gk_conv_moe qwen_moe = {
    "mlp.experts.", { "gate_proj", "down_proj", "up_proj" }, "mlp.gate", { 1, 0, 2 },
    { "num_local_experts", "num_experts", NULL }, false, "mlp.experts.down_proj", "mlp.experts.gate_up_proj",
};

/* The Llama family shares one class in the reference (LlamaModel): experts
 * are merged for any of them that has block_sparse_moe tensors. */
static const gk_conv_arch archs[] = {
    { "LlamaForCausalLM", "llama", true, &mixtral_moe, false, true, false },
    { "LLaMAForCausalLM", "llama", true, &mixtral_moe, false, true, false },
    { "MistralForCausalLM", "llama", true, &mixtral_moe, false, true, false },
    { "MixtralForCausalLM", "llama", true, &mixtral_moe, false, true, false },
    /* Qwen2Model / Qwen3Model / Qwen3MoeModel (TextModel's rules, no
     * permutation); checked by reading conversion/qwen.py, no golden output. */
    { "Qwen2ForCausalLM", "qwen2", false, NULL, false, false, false },
    { "Qwen3ForCausalLM", "qwen3", false, NULL, true, false, false },
    { "Qwen3MoeForCausalLM", "qwen3moe", false, &qwen_moe, true, false, true },
};

const gk_conv_arch *gk_conv_arch_find(const char *hf_name) {
    for (size_t i = 0; hf_name && i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].hf_name, hf_name) == 0) return &archs[i];
    return NULL;
}

const char *gk_conv_arch_list(void) {
    return "LlamaForCausalLM, LLaMAForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, "
           "Qwen3ForCausalLM, Qwen3MoeForCausalLM";
}

/* Names outside the blocks. */
static const struct { const char *hf, *gguf; } globals[] = {
    { "model.embed_tokens", "token_embd" },
    { "lm_head", "output" },
    { "model.norm", "output_norm" },
};

/* Names inside block N, after "model.layers.N.". permute: 1 Q, 2 K; only:
 * 2 with q/k norms (Qwen3), 3 where dense feed-forward layers exist. */
static const struct { const char *hf, *gguf; int permute, only; } blocks[] = {
    { "input_layernorm", "attn_norm", 0, 0 },
    { "self_attn.q_proj", "attn_q", 1, 0 },
    { "self_attn.k_proj", "attn_k", 2, 0 },
    { "self_attn.v_proj", "attn_v", 0, 0 },
    { "self_attn.o_proj", "attn_output", 0, 0 },
    { "post_attention_layernorm", "ffn_norm", 0, 0 },
    { "mlp.gate_proj", "ffn_gate", 0, 3 },
    { "mlp.up_proj", "ffn_up", 0, 3 },
    { "mlp.down_proj", "ffn_down", 0, 3 },
    { "self_attn.q_norm", "attn_q_norm", 0, 2 },
    { "self_attn.k_norm", "attn_k_norm", 0, 2 },
};

/* Merged expert tensors: gate, down, up. */
static const char *const expert_names[3] = { "ffn_gate_exps", "ffn_down_exps", "ffn_up_exps" };

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* Reads a decimal number at *p (digits only), advancing past it. */
static bool read_number(const char **p, int64_t *out) {
    const char *s = *p;
    if (*s < '0' || *s > '9') return false;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9') {
        if (v > 100000000) return false;
        v = v * 10 + (*s++ - '0');
    }
    *p = s;
    *out = v;
    return true;
}

/* The stacked experts' tensors (Qwen2MoeModel): "model.layers.N." then the
 * name, with ".weight" or without. */
static bool fused_experts(const gk_conv_moe *moe, const char *name, gk_conv_name *out) {
    const char *p = name;
    if (moe == NULL || moe->fused_down == NULL || strncmp(p, "model.layers.", 13) != 0) return false;
    p += 13;
    if (!read_number(&p, &out->bid) || *p++ != '.') return false;
    for (int k = 0; k < 2; k++) {
        const char *f = k ? moe->fused_gate_up : moe->fused_down;
        size_t n = strlen(f);
        if (strncmp(p, f, n) != 0 || (p[n] != '\0' && strcmp(p + n, ".weight") != 0)) continue;
        out->role = k ? GK_ROLE_GATE_UP : GK_ROLE_PLAIN;
        snprintf(out->gguf, sizeof out->gguf, "blk.%lld.%s.weight", (long long)out->bid,
                 expert_names[k ? 0 : 1]);
        return true;
    }
    return false;
}

bool gk_conv_map_name(const gk_conv_arch *a, const char *name, gk_conv_name *out) {
    memset(out, 0, sizeof *out);
    out->bid = out->expert = -1;
    if (fused_experts(a->moe, name, out)) return true;
    out->bid = -1;
    if (ends_with(name, ".attention.masked_bias") || ends_with(name, ".attention.bias") ||
        ends_with(name, ".rotary_emb.inv_freq")) {
        out->role = GK_ROLE_SKIP;
        return true;
    }
    /* The suffix the reference tries: ".weight", then ".bias". */
    const char *suffix = ends_with(name, ".weight") ? ".weight" : ends_with(name, ".bias") ? ".bias" : NULL;
    if (suffix == NULL) return false;
    size_t base_len = strlen(name) - strlen(suffix);
    char base[160];
    if (base_len >= sizeof base) return false;
    memcpy(base, name, base_len);
    base[base_len] = '\0';
    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++)
        if (strcmp(base, globals[i].hf) == 0) {
            snprintf(out->gguf, sizeof out->gguf, "%s%s", globals[i].gguf, suffix);
            return true;
        }
    const char *p = base;
    if (strncmp(p, "model.layers.", 13) != 0) return false;
    p += 13;
    if (!read_number(&p, &out->bid) || *p != '.') return false;
    p++;
    const gk_conv_moe *moe = a->moe;
    size_t np = moe ? strlen(moe->prefix) : 0;
    if (moe && strncmp(p, moe->prefix, np) == 0 && strcmp(suffix, ".weight") == 0) {
        p += np;
        if (!read_number(&p, &out->expert) || *p++ != '.') return false;
        out->which = -1;
        for (int w = 0; w < 3; w++)
            if (strcmp(p, moe->parts[w]) == 0) out->which = w;
        if (out->which < 0) return false;
        out->role = GK_ROLE_EXPERT;
        snprintf(out->gguf, sizeof out->gguf, "blk.%lld.%s.weight", (long long)out->bid,
                 expert_names[out->which]);
        return true;
    }
    if (moe && strcmp(p, moe->router) == 0) {
        snprintf(out->gguf, sizeof out->gguf, "blk.%lld.ffn_gate_inp%s", (long long)out->bid, suffix);
        return true;
    }
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        if (strcmp(p, blocks[i].hf) == 0) {
            if ((blocks[i].only == 2 && !a->qk_norm) || (blocks[i].only == 3 && moe && !moe->dense_mlp)) return false;
            snprintf(out->gguf, sizeof out->gguf, "blk.%lld.%s%s", (long long)out->bid, blocks[i].gguf, suffix);
            out->permute = a->permute_qk ? blocks[i].permute : 0;
            return true;
        }
    return false;
}

bool gk_conv_unmap_name(const gk_conv_arch *a, const char *gguf, int64_t expert, char *hf, size_t n,
                        gk_conv_name *out) {
    const char *suffix = ends_with(gguf, ".weight") ? ".weight" : ends_with(gguf, ".bias") ? ".bias" : NULL;
    if (suffix == NULL || n == 0) return false;
    size_t base_len = strlen(gguf) - strlen(suffix);
    char base[128];
    if (base_len >= sizeof base) return false;
    memcpy(base, gguf, base_len);
    base[base_len] = '\0';
    int w = -1;
    for (size_t i = 0; w < 0 && i < sizeof globals / sizeof globals[0]; i++)
        if (strcmp(base, globals[i].gguf) == 0) w = snprintf(hf, n, "%s%s", globals[i].hf, suffix);
    int64_t bid;
    const char *p = base;
    if (w < 0 && strncmp(p, "blk.", 4) == 0 && (p += 4, read_number(&p, &bid)) && *p++ == '.') {
        const gk_conv_moe *moe = a->moe;
        /* experts come back one 2-D tensor each (never stacked) */
        for (int k = 0; w < 0 && moe && k < 3; k++)
            if (strcmp(p, expert_names[k]) == 0 && strcmp(suffix, ".weight") == 0 && expert >= 0)
                w = snprintf(hf, n, "model.layers.%lld.%s%lld.%s.weight", (long long)bid, moe->prefix,
                             (long long)expert, moe->parts[k]);
        if (w < 0 && moe && strcmp(p, "ffn_gate_inp") == 0)
            w = snprintf(hf, n, "model.layers.%lld.%s%s", (long long)bid, moe->router, suffix);
        for (size_t i = 0; w < 0 && i < sizeof blocks / sizeof blocks[0]; i++)
            if (strcmp(p, blocks[i].gguf) == 0)
                w = snprintf(hf, n, "model.layers.%lld.%s%s", (long long)bid, blocks[i].hf, suffix);
    }
    /* the forward map decides: a name it does not send back to gguf is none */
    return w > 0 && (size_t)w < n && gk_conv_map_name(a, hf, out) && out->role != GK_ROLE_SKIP &&
           strcmp(out->gguf, gguf) == 0;
}

bool gk_conv_stays_f32(const char *gguf_name, uint32_t n_dims) {
    if (n_dims <= 1 || ends_with(gguf_name, "_norm.weight")) return true;
    if (ends_with(gguf_name, ".ffn_gate_inp.weight")) return true;
    size_t n = strlen(gguf_name);
    const char *tail = n >= 7 ? gguf_name + n - 7 : gguf_name;
    return strcmp(tail, ".weight") != 0 && strcmp(tail, ".lora_a") != 0 && strcmp(tail, ".lora_b") != 0;
}
