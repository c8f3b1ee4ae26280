/*
 * arch.h - the architectures `convert` knows, as tables: which Hugging Face
 * class names map to which GGUF architecture, how checkpoint tensor names map
 * to GGUF names (the reference's tensor_mapping.py entries these models use),
 * which tensors have their Q/K rows permuted, how experts are merged, and
 * which tensors stay F32 whatever the output type (the reference's rules in
 * ModelBase.prepare_tensors).
 */
#ifndef GK_CONVERT_ARCH_H
#define GK_CONVERT_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How an architecture's experts are named and merged into 3-D tensors. */
typedef struct gk_conv_moe {
    const char *prefix;        /* after "model.layers.N.", before the expert's number */
    const char *parts[3];      /* the expert's gate, down and up weights, after "E." */
    const char *router;        /* the router's name in the block (ffn_gate_inp) */
    int order[3];              /* the merged tensors' order of output (0 gate, 1 down, 2 up) */
    const char *count_keys[3]; /* config.json's expert count, the first present */
    bool dense_mlp;            /* plain mlp.{gate,up,down}_proj layers are allowed too */
    const char *fused_down;    /* all experts in one 3-D tensor [E, n_embd, n_ff] (".weight" or not), or NULL */
    const char *fused_gate_up; /* gate and up in one [E, 2 n_ff, n_embd], split on rows, or NULL */
} gk_conv_moe;

/* One supported Hugging Face architecture. */
typedef struct gk_conv_arch {
    const char *hf_name;       /* config.json "architectures"[0] */
    const char *gguf_arch;     /* general.architecture */
    bool permute_qk;           /* Q/K rows regrouped for ggml's rope (LlamaModel.undo_permute) */
    const gk_conv_moe *moe;    /* the experts, merged into 3-D tensors; NULL: none */
    bool qk_norm;              /* q_norm / k_norm per layer (Qwen3) */
    bool llama;                /* LlamaModel: {arch}.vocab_size, rope.dimension_count,
                                * llama3 rope_freqs, tokenizer_config's add_prefix_space */
    bool qwen2_moe;            /* Qwen2MoeModel (Qwen3-MoE): tokenizer.json only (TextModel.set_vocab),
                                * expert feed-forward lengths, no pooling or reranker checks */
} gk_conv_arch;

/** gk_conv_arch_find() : @return : the entry for hf_name, or NULL. */
const gk_conv_arch *gk_conv_arch_find(const char *hf_name);

/** gk_conv_arch_list() : @return : the supported class names, ", "-separated. */
const char *gk_conv_arch_list(void);

/* What a checkpoint tensor becomes. */
typedef enum gk_conv_role {
    GK_ROLE_PLAIN = 0,         /* one GGUF tensor */
    GK_ROLE_SKIP,              /* dropped (rotary_emb.inv_freq ...) */
    GK_ROLE_EXPERT,            /* one expert's slice of a merged tensor */
    GK_ROLE_GATE_UP,           /* all experts' gate and up in one tensor (gguf: the gate's name) */
} gk_conv_role;

typedef struct gk_conv_name {
    gk_conv_role role;
    char gguf[96];             /* the GGUF name (of the merged tensor for an expert) */
    int64_t bid;               /* block number, or -1 */
    int64_t expert;            /* the expert's number, or -1 */
    int which;                 /* expert tensors: 0 gate (w1), 1 down (w2), 2 up (w3) */
    int permute;               /* 0 none, 1 Q (n_head groups), 2 K (n_head_kv groups) */
} gk_conv_name;

/** gk_conv_map_name() : maps checkpoint tensor name under arch a.
 *  @return : true, or false when the name has no GGUF counterpart (the
 *  reference refuses such a tensor: "Can not map tensor"). */
bool gk_conv_map_name(const gk_conv_arch *a, const char *name, gk_conv_name *out);

/** gk_conv_unmap_name() : the inverse of gk_conv_map_name under arch a (for
 *  export): the checkpoint name of GGUF tensor gguf into hf (n bytes); for a
 *  merged expert tensor (out->role GK_ROLE_EXPERT) the name of expert number
 *  `expert`'s slice. out is what gk_conv_map_name gives for that name.
 *  @return : false when gguf has no checkpoint name under a. */
bool gk_conv_unmap_name(const gk_conv_arch *a, const char *gguf, int64_t expert, char *hf, size_t n,
                        gk_conv_name *out);

/** gk_conv_stays_f32() : the reference keeps a tensor F32 whatever the output
 *  type when it has at most one dimension, its name ends in "_norm.weight", it
 *  is an expert router (ffn_gate_inp) or its name does not end in ".weight".
 *  @return : true for those. */
bool gk_conv_stays_f32(const char *gguf_name, uint32_t n_dims);

#endif
