/*
 * keys.c - the vocabulary of well-known metadata keys, one table for the whole
 * library: the type llama.cpp (or the spec) expects of each (edit refuses a
 * value of another type unless forced, gk_key_expected_type) and which are the
 * special token ids (verify --schema checks them against the vocabulary, edit
 * sets them by token text).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/keys.h"
#include "util/chars.h"

/* Well-known keys. A pattern "*.rest" stands for any one-segment prefix (the
 * architecture). or_array: llama.cpp also takes one value per layer.
 * special_token: one of the special token ids (gk_special_token_key). */
typedef struct known_key {
    const char *pattern;
    gk_vtype type, elem;
    bool or_array;
    bool special_token;
} known_key;

#define S(p) { p, GK_V_STR, GK_V_COUNT, false, false }
#define U32(p) { p, GK_V_U32, GK_V_COUNT, false, false }
#define U32L(p) { p, GK_V_U32, GK_V_COUNT, true, false }
#define F32(p) { p, GK_V_F32, GK_V_COUNT, false, false }
#define B(p) { p, GK_V_BOOL, GK_V_COUNT, false, false }
#define ARR(p, e) { p, GK_V_ARR, e, false, false }
#define TOK(p) { p, GK_V_U32, GK_V_COUNT, false, true }

static const known_key known_keys[] = {
    S("general.architecture"), U32("general.quantization_version"), U32("general.alignment"),
    U32("general.file_type"), S("general.name"), S("general.author"), S("general.version"),
    S("general.organization"), S("general.finetune"), S("general.basename"), S("general.description"),
    S("general.quantized_by"), S("general.size_label"), S("general.license"), S("general.license.name"),
    S("general.license.link"), S("general.url"), S("general.doi"), S("general.uuid"), S("general.repo_url"),
    S("general.source.url"), S("general.source.doi"), S("general.source.uuid"), S("general.source.repo_url"),
    S("general.source.huggingface.repository"), S("general.type"), U32("general.base_model.count"),
    U32("general.dataset.count"), ARR("general.tags", GK_V_STR), ARR("general.languages", GK_V_STR),
    ARR("general.datasets", GK_V_STR),
    U32("*.vocab_size"), U32("*.context_length"), U32("*.embedding_length"), U32("*.block_count"),
    U32("*.leading_dense_block_count"), U32L("*.feed_forward_length"), U32("*.expert_feed_forward_length"),
    U32("*.expert_shared_feed_forward_length"), B("*.use_parallel_residual"), S("*.tensor_data_layout"),
    U32("*.expert_count"), U32("*.expert_used_count"), U32("*.expert_shared_count"),
    F32("*.expert_weights_scale"), B("*.expert_weights_norm"), U32("*.pooling_type"), F32("*.logit_scale"),
    U32("*.decoder_start_token_id"), F32("*.attn_logit_softcapping"), F32("*.final_logit_softcapping"),
    F32("*.residual_scale"), F32("*.embedding_scale"),
    U32L("*.attention.head_count"), U32L("*.attention.head_count_kv"), F32("*.attention.max_alibi_bias"),
    F32("*.attention.clamp_kqv"), U32("*.attention.key_length"), U32("*.attention.value_length"),
    F32("*.attention.layer_norm_epsilon"), F32("*.attention.layer_norm_rms_epsilon"), B("*.attention.causal"),
    U32("*.attention.q_lora_rank"), U32("*.attention.kv_lora_rank"), U32("*.attention.relative_buckets_count"),
    U32("*.attention.sliding_window"), F32("*.attention.scale"),
    U32("*.rope.dimension_count"), F32("*.rope.freq_base"), F32("*.rope.scale_linear"), S("*.rope.scaling.type"),
    F32("*.rope.scaling.factor"), F32("*.rope.scaling.attn_factor"), U32("*.rope.scaling.original_context_length"),
    B("*.rope.scaling.finetuned"), F32("*.rope.scaling.yarn_log_multiplier"),
    U32("*.ssm.conv_kernel"), U32("*.ssm.inner_size"), U32("*.ssm.state_size"), U32("*.ssm.time_step_rank"),
    S("tokenizer.ggml.model"), S("tokenizer.ggml.pre"), ARR("tokenizer.ggml.tokens", GK_V_STR),
    ARR("tokenizer.ggml.token_type", GK_V_I32), U32("tokenizer.ggml.token_type_count"),
    ARR("tokenizer.ggml.scores", GK_V_F32), ARR("tokenizer.ggml.merges", GK_V_STR),
    B("tokenizer.ggml.add_bos_token"), B("tokenizer.ggml.add_eos_token"), B("tokenizer.ggml.add_space_prefix"),
    B("tokenizer.ggml.remove_extra_whitespaces"), ARR("tokenizer.ggml.precompiled_charsmap", GK_V_U8),
    S("tokenizer.huggingface.json"), S("tokenizer.rwkv.world"), S("tokenizer.chat_template"),
    /* the special token ids, in llama.cpp's order (it spells the separator "seperator") */
    TOK("tokenizer.ggml.bos_token_id"), TOK("tokenizer.ggml.eos_token_id"),
    TOK("tokenizer.ggml.eot_token_id"), TOK("tokenizer.ggml.eom_token_id"),
    TOK("tokenizer.ggml.unknown_token_id"), TOK("tokenizer.ggml.padding_token_id"),
    TOK("tokenizer.ggml.seperator_token_id"), TOK("tokenizer.ggml.sep_token_id"),
    TOK("tokenizer.ggml.cls_token_id"), TOK("tokenizer.ggml.mask_token_id"),
    TOK("tokenizer.ggml.fim_pre_token_id"), TOK("tokenizer.ggml.fim_suf_token_id"),
    TOK("tokenizer.ggml.fim_mid_token_id"), TOK("tokenizer.ggml.fim_pad_token_id"),
    TOK("tokenizer.ggml.fim_rep_token_id"), TOK("tokenizer.ggml.fim_sep_token_id"),
    U32("split.no"), U32("split.count"), { "split.tensors.count", GK_V_I32, GK_V_COUNT, false, false },
};

#undef S
#undef U32
#undef U32L
#undef F32
#undef B
#undef ARR
#undef TOK

static bool pattern_matches(const char *pattern, const char *key) {
    if (pattern[0] != '*') return strcmp(pattern, key) == 0;
    const char *dot = strchr(key, '.');
    return dot != NULL && dot != key && strcmp(dot, pattern + 1) == 0;
}

/* Special token names and the key suffix llama.cpp reads for each. */
static const struct {
    const char *name, *key;
} token_names[] = {
    { "bos", "bos" },         { "eos", "eos" },         { "eot", "eot" },         { "eom", "eom" },
    { "unknown", "unknown" }, { "unk", "unknown" },     { "padding", "padding" }, { "pad", "padding" },
    { "sep", "seperator" },   { "seperator", "seperator" }, { "separator", "seperator" },
    { "cls", "cls" },         { "mask", "mask" },       { "fim_pre", "fim_pre" }, { "fim_suf", "fim_suf" },
    { "fim_mid", "fim_mid" }, { "fim_pad", "fim_pad" }, { "fim_rep", "fim_rep" }, { "fim_sep", "fim_sep" },
    { "prefix", "prefix" },   { "suffix", "suffix" },   { "middle", "middle" },
};

char *gk_special_token_key_named(const char *name) {
    for (size_t i = 0; i < sizeof token_names / sizeof token_names[0]; i++) {
        if (strcmp(name, token_names[i].name) != 0) continue;
        size_t n = strlen(token_names[i].key) + 32;
        char *key = malloc(n);
        if (key) snprintf(key, n, "tokenizer.ggml.%s_token_id", token_names[i].key);
        return key;
    }
    return NULL;
}

const char *gk_special_token_key(size_t i) {
    for (size_t k = 0; k < sizeof known_keys / sizeof known_keys[0]; k++)
        if (known_keys[k].special_token && i-- == 0) return known_keys[k].pattern;
    return NULL;
}

bool gk_key_expected_type(const char *key, gk_vtype *type, gk_vtype *elem, bool *or_array) {
    *elem = GK_V_COUNT;
    *or_array = false;
    for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++) {
        if (!pattern_matches(known_keys[i].pattern, key)) continue;
        *type = known_keys[i].type;
        *elem = known_keys[i].elem;
        *or_array = known_keys[i].or_array;
        return true;
    }
    if (strncmp(key, "tokenizer.ggml.", 15) == 0 && gk_has_suffix(key, "_token_id")) {
        *type = GK_V_U32;
        return true;
    }
    if (strncmp(key, "tokenizer.chat_template.", 24) == 0 && key[24] != '\0') {
        *type = GK_V_STR;
        return true;
    }
    if (strncmp(key, "general.base_model.", 19) == 0 || strncmp(key, "general.dataset.", 16) == 0) {
        /* general.base_model.N.name and friends: strings */
        static const char *const fields[] = { ".name", ".author", ".version", ".organization", ".description",
                                              ".url", ".doi", ".uuid", ".repo_url" };
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            if (gk_has_suffix(key, fields[i])) {
                *type = GK_V_STR;
                return true;
            }
    }
    return false;
}
