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

/* One supported Hugging Face architecture. */
typedef struct gk_conv_arch {
    const char *hf_name;       /* config.json "architectures"[0] */
    const char *gguf_arch;     /* general.architecture */
    bool permute_qk;           /* Q/K rows regrouped for ggml's rope (LlamaModel.undo_permute) */
    bool moe_experts;          /* block_sparse_moe.experts.E.wN merged into 3-D tensors */
    bool qk_norm;              /* q_norm / k_norm per layer (Qwen3) */
    bool llama;                /* LlamaModel: {arch}.vocab_size, rope.dimension_count,
                                * llama3 rope_freqs, tokenizer_config's add_prefix_space */
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
} gk_conv_role;

typedef struct gk_conv_name {
    gk_conv_role role;
    char gguf[96];             /* the GGUF name (of the merged tensor for an expert) */
    int64_t bid;               /* block number, or -1 */
    int64_t expert;            /* the expert's number, or -1 */
    int which;                 /* expert tensors: 0 w1 (gate), 1 w2 (down), 2 w3 (up) */
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
