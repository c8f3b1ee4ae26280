/*
 * bpe.c - tokenizer.json for a GGUF's BPE vocabulary (tokenizer.ggml.model
 * "gpt2"): the byte-level BPE model (normal tokens as its vocab, the merges
 * as "a b" strings), control and user-defined tokens as added tokens, and the
 * normalizer, pre-tokenizer and post-processor of tokenizer.ggml.pre as the
 * Hugging Face tokenizer of that family spells them, so that the reference's
 * check-text digest names the same family again. Only the families in the
 * table below are written; for any other the caller writes no tokenizer.json
 * (a wrong pre-tokenizer would split text wrongly).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"

/* One pre-tokenizer step: 'S' a Split on regex arg (Isolated, not inverted),
 * 'D' Digits (arg "1": individual digits), 'B' ByteLevel (arg: its
 * add_prefix_space, trim_offsets and use_regex as 't'/'f'); 0 ends the list. */
typedef struct step {
    char kind;
    const char *arg;
} step;

enum { BOS_NONE, BOS_TEMPLATE, BOS_CLASS };

/* tokenizer.ggml.pre -> the structure of its family's tokenizer.json. */
static const struct family {
    const char *pre;
    const char *normalizer;   /* NULL: null; "NFC"; "": an empty Sequence */
    bool sequence;            /* the steps in a Sequence (else the one step) */
    step steps[7];
    const char *post;         /* the ByteLevel post-processor's flags */
    /* how encoding adds BOS (when the GGUF's add_bos_token is true):
     * BOS_TEMPLATE a TemplateProcessing after the ByteLevel post-processor,
     * BOS_CLASS the LlamaTokenizerFast class of tokenizer_config.json */
    int bos;
} families[] = {
    /* openai-community/gpt2 */
    { "gpt-2", NULL, false, { { 'B', "ftt" } }, "ftt", BOS_NONE },
    /* EleutherAI/gpt-neox-20b, also mosaicml/mpt-7b's and OLMo's ("olmo" and
     * "mpt" share one check-text digest) */
    { "mpt", "NFC", false, { { 'B', "ftt" } }, "ftt", BOS_NONE },
    { "olmo", "NFC", false, { { 'B', "ftt" } }, "ftt", BOS_NONE },
    /* deepseek-ai/deepseek-coder-*-base */
    { "deepseek-coder", "", true,
      { { 'S', "[\r\n]" }, { 'S', "\\s?\\p{L}+" }, { 'S', "\\s?\\p{P}+" },
        { 'S', "[\xe4\xb8\x80-\xe9\xbe\xa5\xe0\xa0\x80-\xe4\xb8\x80\xea\xb0\x80-\xed\x9f\xbf]+" }, { 'D', "1" },
        { 'B', "ftf" } },
      "tft", BOS_CLASS },
    /* meta-llama/Meta-Llama-3-8B */
    { "llama-bpe", NULL, true,
      { { 'S', "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
               "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
        { 'B', "ftf" } },
      "tft", BOS_TEMPLATE },
    /* Qwen/Qwen2-7B */
    { "qwen2", "NFC", true,
      { { 'S', "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
               "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
        { 'B', "fff" } },
      "fff", BOS_NONE },
};

static const struct family *family_of(const char *pre) {
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].pre, pre) == 0) return &families[i];
    return NULL;
}

bool gk_exp_bpe_known(const char *pre, const char **tokenizer_class) {
    const struct family *f = family_of(pre);
    if (tokenizer_class) *tokenizer_class = f && f->bos == BOS_CLASS ? "LlamaTokenizerFast" : "PreTrainedTokenizerFast";
    return f != NULL;
}

static cJSON *byte_level(const char *flags) {
    cJSON *b = cJSON_CreateObject();
    if (b && cJSON_AddStringToObject(b, "type", "ByteLevel") &&
        cJSON_AddBoolToObject(b, "add_prefix_space", flags[0] == 't') &&
        cJSON_AddBoolToObject(b, "trim_offsets", flags[1] == 't') &&
        cJSON_AddBoolToObject(b, "use_regex", flags[2] == 't'))
        return b;
    cJSON_Delete(b);
    return NULL;
}

static cJSON *pre_step(const step *st) {
    if (st->kind == 'B') return byte_level(st->arg);
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    if (ok && st->kind == 'D') {
        ok = cJSON_AddStringToObject(o, "type", "Digits") &&
             cJSON_AddBoolToObject(o, "individual_digits", strcmp(st->arg, "1") == 0);
    } else if (ok) {
        cJSON *pat = cJSON_AddObjectToObject(o, "pattern");
        ok = pat && cJSON_AddStringToObject(o, "type", "Split") && cJSON_AddStringToObject(pat, "Regex", st->arg) &&
             cJSON_AddStringToObject(o, "behavior", "Isolated") && cJSON_AddBoolToObject(o, "invert", false);
    }
    if (ok) return o;
    cJSON_Delete(o);
    return NULL;
}

static cJSON *pre_tokenizer(const struct family *f) {
    if (!f->sequence) return pre_step(&f->steps[0]);
    cJSON *seq = cJSON_CreateObject(), *list = seq ? cJSON_AddArrayToObject(seq, "pretokenizers") : NULL;
    bool ok = list && cJSON_AddStringToObject(seq, "type", "Sequence");
    for (const step *st = f->steps; ok && st->kind; st++) ok = cJSON_AddItemToArray(list, pre_step(st));
    if (ok) return seq;
    cJSON_Delete(seq);
    return NULL;
}

static cJSON *normalizer(const struct family *f) {
    if (f->normalizer == NULL) return cJSON_CreateNull();
    cJSON *n = cJSON_CreateObject();
    bool ok = n != NULL;
    if (ok && f->normalizer[0]) ok = cJSON_AddStringToObject(n, "type", f->normalizer) != NULL;
    else if (ok) ok = cJSON_AddStringToObject(n, "type", "Sequence") && cJSON_AddArrayToObject(n, "normalizers");
    if (ok) return n;
    cJSON_Delete(n);
    return NULL;
}

/* {"SpecialToken"|"Sequence": {"id": id, "type_id": type_id}} into list. */
static bool template_piece(cJSON *list, const char *kind, const char *id, int type_id) {
    cJSON *e = cJSON_CreateObject(), *in = e ? cJSON_AddObjectToObject(e, kind) : NULL;
    bool ok = in && cJSON_AddStringToObject(in, "id", id) && cJSON_AddNumberToObject(in, "type_id", type_id);
    if (ok) return cJSON_AddItemToArray(list, e);
    cJSON_Delete(e);
    return false;
}

/* The TemplateProcessing that puts token bos (id) first; with pair, also
 * before the second sequence (the reference reads add_sep_token false from
 * that pair, so it is written only when the GGUF says so). */
static cJSON *bos_template(const char *bos, uint64_t id, bool pair) {
    cJSON *t = cJSON_CreateObject(), *single = t ? cJSON_AddArrayToObject(t, "single") : NULL;
    bool ok = single && cJSON_AddStringToObject(t, "type", "TemplateProcessing") &&
              template_piece(single, "SpecialToken", bos, 0) && template_piece(single, "Sequence", "A", 0);
    cJSON *p = ok && pair ? cJSON_AddArrayToObject(t, "pair") : NULL;
    if (ok && pair)
        ok = p && template_piece(p, "SpecialToken", bos, 0) && template_piece(p, "Sequence", "A", 0) &&
             template_piece(p, "SpecialToken", bos, 1) && template_piece(p, "Sequence", "B", 1);
    cJSON *sp = ok ? cJSON_AddObjectToObject(t, "special_tokens") : NULL;
    cJSON *e = sp ? cJSON_AddObjectToObject(sp, bos) : NULL;
    cJSON *ids = e ? cJSON_AddArrayToObject(e, "ids") : NULL, *toks = ids ? cJSON_AddArrayToObject(e, "tokens") : NULL;
    ok = toks && cJSON_AddStringToObject(e, "id", bos) && cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)id)) &&
         cJSON_AddItemToArray(toks, cJSON_CreateString(bos));
    if (ok) return t;
    cJSON_Delete(t);
    return NULL;
}

static bool flag_is(const gk_model *m, const char *key, bool want) {
    bool b;
    return gk_exp_kv_bool(m, key, &b) && b == want;
}

/* The family's post-processor; for BOS_TEMPLATE with the GGUF's add_bos_token
 * true and a BOS token, followed by the template adding it. */
static cJSON *post_processor(const gk_model *m, const struct family *f, const gk_str *tokens, uint64_t n) {
    uint64_t bos;
    if (f->bos != BOS_TEMPLATE || !flag_is(m, "tokenizer.ggml.add_bos_token", true) ||
        gk_kv_get_uint(m, "tokenizer.ggml.bos_token_id", &bos) != GK_OK || bos >= n)
        return byte_level(f->post);
    /* the pair part only where the reader takes add_sep_token false from it:
     * with EOS spelled as BOS it would read true and a separator token */
    uint64_t eos;
    bool pair = flag_is(m, "tokenizer.ggml.add_sep_token", false) &&
                !(gk_kv_get_uint(m, "tokenizer.ggml.eos_token_id", &eos) == GK_OK && eos < n &&
                  strcmp(tokens[eos].ptr, tokens[bos].ptr) == 0);
    cJSON *seq = cJSON_CreateObject(), *list = seq ? cJSON_AddArrayToObject(seq, "processors") : NULL;
    bool ok = list && cJSON_AddStringToObject(seq, "type", "Sequence") &&
              cJSON_AddItemToArray(list, byte_level(f->post)) &&
              cJSON_AddItemToArray(list, bos_template(tokens[bos].ptr, bos, pair));
    if (ok && cJSON_GetArraySize(list) == 2) return seq;
    cJSON_Delete(seq);
    return NULL;
}

gk_status gk_exp_bpe(const gk_model *m, const char *pre, gk_exp_folder *f, gk_error *err) {
    const gk_value *tv = gk_kv_get(m, "tokenizer.ggml.tokens"), *ty = gk_kv_get(m, "tokenizer.ggml.token_type");
    const gk_value *mv = gk_kv_get(m, "tokenizer.ggml.merges");
    const gk_str *tokens = tv->arr.data;
    const int32_t *types = ty && ty->type == GK_V_ARR && ty->arr.elem == GK_V_I32 ? ty->arr.data : NULL;
    const struct family *fam = family_of(pre);
    if (fam == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "tokenizer.ggml.pre '%s' is not a family export knows", pre);
    if (mv && (mv->type != GK_V_ARR || mv->arr.elem != GK_V_STR))
        return gk_error_set(err, GK_E_CORRUPT, -1, "tokenizer.ggml.merges is not an array of strings");
    cJSON *root = cJSON_CreateObject();
    bool ok = root && cJSON_AddStringToObject(root, "version", "1.0") && cJSON_AddNullToObject(root, "truncation") &&
              cJSON_AddNullToObject(root, "padding");
    cJSON *added = ok ? cJSON_AddArrayToObject(root, "added_tokens") : NULL;
    ok = added && cJSON_AddItemToObject(root, "normalizer", normalizer(fam));
    if (ok) ok = cJSON_AddItemToObject(root, "pre_tokenizer", pre_tokenizer(fam));
    if (ok) ok = cJSON_AddItemToObject(root, "post_processor", post_processor(m, fam, tokens, tv->arr.n));
    if (ok) ok = cJSON_AddItemToObject(root, "decoder", byte_level("fff"));
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
