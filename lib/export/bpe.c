/*
 * bpe.c - tokenizer.json for a GGUF's BPE vocabulary (tokenizer.ggml.model
 * "gpt2"): the byte-level BPE model (normal tokens as its vocab, the merges
 * as "a b" strings), control and user-defined tokens as added tokens, and the
 * pre-tokenizer of tokenizer.ggml.pre as the Hugging Face tokenizer that
 * family came with spells it (the split regex, then byte-level mapping).
 * Only the families in the table below are written; for any other the caller
 * writes no tokenizer.json (a wrong pre-tokenizer would split text wrongly).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"

/* tokenizer.ggml.pre -> the split regex of its tokenizer.json (NULL: the
 * byte-level pre-tokenizer's own GPT-2 regex). */
static const struct { const char *pre, *regex; } families[] = {
    { "gpt-2", NULL },
    { "default", NULL },
    { "llama-bpe", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                   "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
    { "qwen2", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
               "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
};

bool gk_exp_bpe_known(const char *pre) {
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].pre, pre) == 0) return true;
    return false;
}

static cJSON *byte_level(bool use_regex) {
    cJSON *b = cJSON_CreateObject();
    if (b && cJSON_AddStringToObject(b, "type", "ByteLevel") && cJSON_AddBoolToObject(b, "add_prefix_space", false) &&
        cJSON_AddBoolToObject(b, "trim_offsets", false) && cJSON_AddBoolToObject(b, "use_regex", use_regex))
        return b;
    cJSON_Delete(b);
    return NULL;
}

static cJSON *pre_tokenizer(const char *regex) {
    if (regex == NULL) return byte_level(true);
    cJSON *seq = cJSON_CreateObject(), *list = seq ? cJSON_AddArrayToObject(seq, "pretokenizers") : NULL;
    cJSON *split = cJSON_CreateObject(), *pat = split ? cJSON_AddObjectToObject(split, "pattern") : NULL;
    bool ok = list && pat && cJSON_AddStringToObject(seq, "type", "Sequence") &&
              cJSON_AddStringToObject(split, "type", "Split") && cJSON_AddStringToObject(pat, "Regex", regex) &&
              cJSON_AddStringToObject(split, "behavior", "Isolated") && cJSON_AddBoolToObject(split, "invert", false);
    if (ok) {
        ok = cJSON_AddItemToArray(list, split);
        split = NULL;
    }
    if (ok) ok = cJSON_AddItemToArray(list, byte_level(false)) && cJSON_GetArraySize(list) == 2;
    cJSON_Delete(split);
    if (ok) return seq;
    cJSON_Delete(seq);
    return NULL;
}

gk_status gk_exp_bpe(const gk_model *m, const char *pre, gk_exp_folder *f, gk_error *err) {
    const gk_value *tv = gk_kv_get(m, "tokenizer.ggml.tokens"), *ty = gk_kv_get(m, "tokenizer.ggml.token_type");
    const gk_value *mv = gk_kv_get(m, "tokenizer.ggml.merges");
    const gk_str *tokens = tv->arr.data;
    const int32_t *types = ty && ty->type == GK_V_ARR && ty->arr.elem == GK_V_I32 ? ty->arr.data : NULL;
    const char *regex = NULL;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].pre, pre) == 0) regex = families[i].regex;
    if (mv && (mv->type != GK_V_ARR || mv->arr.elem != GK_V_STR))
        return gk_error_set(err, GK_E_CORRUPT, -1, "tokenizer.ggml.merges is not an array of strings");
    cJSON *root = cJSON_CreateObject();
    bool ok = root && cJSON_AddStringToObject(root, "version", "1.0") && cJSON_AddNullToObject(root, "truncation") &&
              cJSON_AddNullToObject(root, "padding");
    cJSON *added = ok ? cJSON_AddArrayToObject(root, "added_tokens") : NULL;
    ok = added && cJSON_AddNullToObject(root, "normalizer");
    if (ok) ok = cJSON_AddItemToObject(root, "pre_tokenizer", pre_tokenizer(regex));
    if (ok) ok = cJSON_AddItemToObject(root, "post_processor", byte_level(false));
    if (ok) ok = cJSON_AddItemToObject(root, "decoder", byte_level(false));
    cJSON *model = ok ? cJSON_AddObjectToObject(root, "model") : NULL;
    ok = model && cJSON_AddStringToObject(model, "type", "BPE") && cJSON_AddNullToObject(model, "dropout") &&
         cJSON_AddNullToObject(model, "unk_token") && cJSON_AddStringToObject(model, "continuing_subword_prefix", "") &&
         cJSON_AddStringToObject(model, "end_of_word_suffix", "") && cJSON_AddBoolToObject(model, "fuse_unk", false) &&
         cJSON_AddBoolToObject(model, "byte_fallback", false) && cJSON_AddBoolToObject(model, "ignore_merges", false);
    cJSON *vocab = ok ? cJSON_AddObjectToObject(model, "vocab") : NULL;
    cJSON *merges = vocab ? cJSON_AddArrayToObject(model, "merges") : NULL;
    ok = merges != NULL;
    for (uint64_t i = 0; ok && i < tv->arr.n; i++) {
        int32_t t = types ? types[i] : 1;
        if (t == 3 || t == 4) {
            cJSON *a = cJSON_CreateObject();
            ok = a && cJSON_AddItemToArray(added, a) && cJSON_AddNumberToObject(a, "id", (double)i) &&
                 cJSON_AddStringToObject(a, "content", tokens[i].ptr) && cJSON_AddBoolToObject(a, "single_word", false) &&
                 cJSON_AddBoolToObject(a, "lstrip", false) && cJSON_AddBoolToObject(a, "rstrip", false) &&
                 cJSON_AddBoolToObject(a, "normalized", t == 4) && cJSON_AddBoolToObject(a, "special", t == 3);
        } else if (!(t == 5 && strncmp(tokens[i].ptr, "[PAD", 4) == 0)) {   /* the converter's padding: none */
            ok = cJSON_AddNumberToObject(vocab, tokens[i].ptr, (double)i) != NULL;
        }
    }
    const gk_str *ms = mv ? mv->arr.data : NULL;
    for (uint64_t i = 0; ok && mv && i < mv->arr.n; i++) ok = cJSON_AddItemToArray(merges, cJSON_CreateString(ms[i].ptr));
    char *text = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = gk_exp_folder_write_text(f, "tokenizer.json", text, err);
    free(text);
    return s;
}
