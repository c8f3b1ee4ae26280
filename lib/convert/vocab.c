/*
 * vocab.c - the SentencePiece vocabulary and special tokens of a converted
 * model, in the reference's key order (vocab.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/hfjson.h"
#include "convert/spm.h"
#include "convert/vocab.h"

/* GGUF token types (SentencePieceTokenTypes) */
enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5, TT_BYTE = 6 };

typedef struct vocab {
    char **tokens;
    float *scores;
    int32_t *types;
    size_t n;
} vocab;

static void vocab_free(vocab *v) {
    for (size_t i = 0; v->tokens && i < v->n; i++) free(v->tokens[i]);
    free(v->tokens);
    free(v->scores);
    free(v->types);
}

static gk_status set_token(vocab *v, size_t i, const char *text, float score, int32_t type, gk_error *err) {
    char *t = strdup(text);
    if (t == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    free(v->tokens[i]);
    v->tokens[i] = t;
    v->scores[i] = score;
    v->types[i] = type;
    return GK_OK;
}

/* does_token_look_special */
static bool looks_special(const char *t) {
    size_t n = strlen(t);
    if (strcmp(t, "<pad>") == 0 || strcmp(t, "<mask>") == 0 || strcmp(t, "<2mass>") == 0 || strcmp(t, "[@BOS@]") == 0)
        return true;
    if (n >= 4 && strncmp(t, "<|", 2) == 0 && strcmp(t + n - 2, "|>") == 0) return true;
    /* "<｜" and "｜>": the fullwidth bar is EF BD 9C */
    if (n >= 8 && memcmp(t, "<\xef\xbd\x9c", 4) == 0 && memcmp(t + n - 4, "\xef\xbd\x9c>", 4) == 0) return true;
    if (n >= 8 && strncmp(t, "<unused", 7) == 0 && t[n - 1] == '>') return true;
    return false;
}

/* Replaces every U+2581 (E2 96 81) by a space. */
static char *unescape_spaces(const char *s) {
    char *out = malloc(strlen(s) + 1), *o = out;
    if (out == NULL) return NULL;
    while (*s) {
        if (memcmp(s, "\xe2\x96\x81", 3) == 0) {
            *o++ = ' ';
            s += 3;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return out;
}

static gk_status about(gk_status s, gk_error *err, const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gk_error_about(err, path);
    return s;
}

static gk_status base_vocab(vocab *v, const char *dir, int64_t vocab_size, gk_error *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.model", dir);
    gk_spm *spm;
    gk_status s = gk_spm_load(path, &spm, err);
    if (s != GK_OK) return s;
    size_t n_spm = gk_spm_count(spm);
    size_t n = vocab_size >= 0 ? (size_t)vocab_size : n_spm;
    if (n_spm > n) {
        gk_spm_free(spm);
        gk_error_set(err, GK_E_CORRUPT, -1,
                     "the tokenizer has %zu pieces, more than config.json's vocab_size %zu", n_spm, n);
        gk_error_about(err, path);
        return GK_E_CORRUPT;
    }
    v->n = n;
    v->tokens = calloc(n ? n : 1, sizeof *v->tokens);
    v->scores = calloc(n ? n : 1, sizeof *v->scores);
    v->types = calloc(n ? n : 1, sizeof *v->types);
    if (v->tokens == NULL || v->scores == NULL || v->types == NULL) {
        gk_spm_free(spm);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    for (size_t i = 0; i < n && s == GK_OK; i++) {
        if (i < n_spm) {
            int32_t k = gk_spm_kind(spm, i);
            /* The reference asks IsUnknown, IsControl, IsUnused, IsByte; any other
             * piece (user-defined ones too) is normal. */
            int32_t t = (k == TT_UNKNOWN || k == TT_CONTROL || k == TT_UNUSED || k == TT_BYTE) ? k : TT_NORMAL;
            s = set_token(v, i, gk_spm_piece(spm, i), gk_spm_score(spm, i), t, err);
        } else {
            char pad[32];
            snprintf(pad, sizeof pad, "[PAD%zu]", i);
            s = set_token(v, i, pad, -10000.0f, TT_UNUSED, err);
        }
    }
    gk_spm_free(spm);
    return s;
}

static gk_status apply_added_tokens(vocab *v, const char *dir, gk_error *err) {
    cJSON *j;
    gk_status s = gk_hf_json_load(dir, "added_tokens.json", false, &j, err);
    if (s != GK_OK || j == NULL) return s;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return about(gk_error_set(err, GK_E_CORRUPT, -1, "not a JSON object"), err, dir, "added_tokens.json");
    }
    for (cJSON *e = j->child; e && s == GK_OK; e = e->next) {
        if (!gk_hf_is_int(e) || e->valuedouble < 0) {
            s = about(gk_error_set(err, GK_E_CORRUPT, -1, "token '%s' has no valid id", e->string), err, dir,
                      "added_tokens.json");
            break;
        }
        size_t id = (size_t)e->valuedouble;
        if (id >= v->n) continue;   /* the reference ignores it, warning */
        s = set_token(v, id, e->string, -1000.0f, TT_USER_DEFINED, err);
    }
    cJSON_Delete(j);
    return s;
}

static gk_status apply_decoder(vocab *v, const cJSON *tc, const char *dir, gk_error *err) {
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(tc, "added_tokens_decoder");
    if (dec == NULL) return GK_OK;
    gk_status s = GK_OK;
    for (const cJSON *e = dec->child; e && s == GK_OK; e = e->next) {
        char *end;
        long long id = strtoll(e->string ? e->string : "", &end, 10);
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(e, "content");
        if (e->string == NULL || *end != '\0' || id < 0 || !cJSON_IsString(content))
            return about(gk_error_set(err, GK_E_CORRUPT, -1, "added_tokens_decoder entry '%s' is not an id with a content",
                                      e->string ? e->string : ""),
                         err, dir, "tokenizer_config.json");
        if ((size_t)id >= v->n) continue;
        const cJSON *special = cJSON_GetObjectItemCaseSensitive(e, "special");
        bool is_special = special && cJSON_IsTrue(special);
        if (is_special || looks_special(content->valuestring)) {
            s = set_token(v, (size_t)id, content->valuestring, -1000.0f, TT_CONTROL, err);
        } else {
            char *t = unescape_spaces(content->valuestring);
            if (t == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            s = set_token(v, (size_t)id, t, -1000.0f, TT_USER_DEFINED, err);
            free(t);
        }
    }
    return s;
}

static gk_status put_arrays(gk_model *m, const vocab *v, gk_error *err) {
    gk_str *strs = malloc((v->n ? v->n : 1) * sizeof *strs);
    if (strs == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; i < v->n; i++) strs[i] = (gk_str){ v->tokens[i], strlen(v->tokens[i]) };
    gk_value val = { .type = GK_V_ARR };
    gk_status s = gk_kv_set_str(m, "tokenizer.ggml.model", "llama", err);
    if (s == GK_OK) s = gk_kv_set_str(m, "tokenizer.ggml.pre", "default", err);
    /* An empty list is not written (GGUFWriter.add_array). */
    if (s == GK_OK && v->n > 0) {
        val.arr.elem = GK_V_STR, val.arr.n = v->n, val.arr.data = strs;
        s = gk_kv_set(m, "tokenizer.ggml.tokens", &val, err);
        val.arr.elem = GK_V_F32, val.arr.data = v->scores;
        if (s == GK_OK) s = gk_kv_set(m, "tokenizer.ggml.scores", &val, err);
        val.arr.elem = GK_V_I32, val.arr.data = v->types;
        if (s == GK_OK) s = gk_kv_set(m, "tokenizer.ggml.token_type", &val, err);
    }
    free(strs);
    return s;
}

/* ------------------------------------------------------------------------ */
/* gguf.SpecialVocab                                                        */
/* ------------------------------------------------------------------------ */

static const char *const special_types[] = { "bos", "eos", "unk", "sep", "pad", "cls", "mask" };
#define N_SPECIAL 7
/* The writer's key for each (cls has none: the reference skips it). */
static const char *const special_keys[N_SPECIAL] = {
    "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.padding_token_id", NULL, "tokenizer.ggml.mask_token_id",
};
static const char *const add_keys[N_SPECIAL] = {
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token", NULL, "tokenizer.ggml.add_sep_token",
    NULL, NULL, NULL,
};

typedef struct special {
    int order[N_SPECIAL];      /* types in the order their ids were set */
    int64_t id[N_SPECIAL];     /* -1: unset */
    int n_set;
    int add_order[N_SPECIAL];
    int add[N_SPECIAL];        /* -1 unset, 0/1 */
    int n_add;
} special;

static gk_status set_special(special *sp, int typ, const cJSON *tid, size_t n_vocab, gk_error *err) {
    if (!gk_hf_is_int(tid)) return GK_OK;
    if (tid->valuedouble < 0)
        return gk_error_set(err, GK_E_CORRUPT, -1, "invalid value for special token type %s: %lld",
                            special_types[typ], (long long)tid->valuedouble);
    if ((size_t)tid->valuedouble >= n_vocab || sp->id[typ] >= 0) return GK_OK;
    sp->id[typ] = (int64_t)tid->valuedouble;
    sp->order[sp->n_set++] = typ;
    return GK_OK;
}

/* True when dir/additional_chat_templates holds a *.jinja file. */
static bool has_additional_templates(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/additional_chat_templates", dir);
    DIR *d = opendir(path);
    if (d == NULL) return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        found = n > 6 && strcmp(e->d_name + n - 6, ".jinja") == 0;
    }
    closedir(d);
    return found;
}

static gk_status special_vocab(gk_model *m, const char *dir, const cJSON *config, const cJSON *tc, size_t n_vocab,
                               gk_error *err) {
    special sp;
    for (int i = 0; i < N_SPECIAL; i++) sp.id[i] = -1, sp.add[i] = -1;
    sp.n_set = sp.n_add = 0;
    cJSON *tok = NULL;
    gk_status s = gk_hf_json_load(dir, "tokenizer.json", false, &tok, err);
    if (s != GK_OK) return s;
    const cJSON *added = NULL;
    if (tok) {
        if (cJSON_GetObjectItemCaseSensitive(tok, "post_processor") &&
            !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(tok, "post_processor"))) {
            cJSON_Delete(tok);
            return about(gk_error_set(err, GK_E_UNSUPPORTED, -1,
                                      "a tokenizer.json post_processor (which decides add_bos/add_eos) is not "
                                      "supported yet"),
                         err, dir, "tokenizer.json");
        }
        if (cJSON_GetObjectItemCaseSensitive(tok, "normalizer") &&
            !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(tok, "normalizer"))) {
            cJSON_Delete(tok);
            return about(gk_error_set(err, GK_E_UNSUPPORTED, -1, "a tokenizer.json normalizer is not supported yet"),
                         err, dir, "tokenizer.json");
        }
        added = cJSON_GetObjectItemCaseSensitive(tok, "added_tokens");
    }
    char *template = NULL;
    bool have_template = false;
    if (tc && cJSON_IsObject(tc) && tc->child) {
        /* The chat template: tokenizer_config.json's, else chat_template.jinja,
         * else chat_template.json's. */
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(tc, "chat_template");
        if (ct && cJSON_IsString(ct)) {
            template = strdup(ct->valuestring);
            have_template = true;
        } else if (ct && !cJSON_IsNull(ct)) {
            s = about(gk_error_set(err, GK_E_UNSUPPORTED, -1, "a chat_template that is not a string is not supported yet"),
                      err, dir, "tokenizer_config.json");
        } else if (ct == NULL && gk_hf_exists(dir, "chat_template.jinja")) {
            s = gk_hf_text_load(dir, "chat_template.jinja", true, &template, err);
            have_template = s == GK_OK;
            if (s == GK_OK && has_additional_templates(dir))
                s = about(gk_error_set(err, GK_E_UNSUPPORTED, -1, "named chat templates (additional_chat_templates/*.jinja) "
                                                                  "are not supported yet"),
                          err, dir, "additional_chat_templates");
        } else if (ct == NULL && gk_hf_exists(dir, "chat_template.json")) {
            cJSON *cj;
            s = gk_hf_json_load(dir, "chat_template.json", true, &cj, err);
            const cJSON *t = cj ? cJSON_GetObjectItemCaseSensitive(cj, "chat_template") : NULL;
            if (s == GK_OK && t && cJSON_IsString(t)) {
                template = strdup(t->valuestring);
                have_template = true;
            } else if (s == GK_OK && t && !cJSON_IsNull(t)) {
                s = about(gk_error_set(err, GK_E_UNSUPPORTED, -1, "a chat_template that is not a string is not supported yet"),
                          err, dir, "chat_template.json");
            }
            cJSON_Delete(cj);
        }
        if (s == GK_OK && have_template && template == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        for (int t = 0; t < N_SPECIAL && s == GK_OK; t++) {
            char key[32];
            snprintf(key, sizeof key, "add_%s_token", special_types[t]);
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(tc, key);
            if (cJSON_IsBool(a)) {
                if (sp.add[t] < 0) sp.add_order[sp.n_add++] = t;
                sp.add[t] = cJSON_IsTrue(a);
            }
            snprintf(key, sizeof key, "%s_token", special_types[t]);
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(tc, key);
            const char *content = NULL;
            if (cJSON_IsString(e)) content = e->valuestring;
            else if (cJSON_IsObject(e) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "content")))
                content = cJSON_GetObjectItemCaseSensitive(e, "content")->valuestring;
            if (content == NULL || added == NULL) continue;
            for (const cJSON *at = added->child; at; at = at->next) {
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(at, "content");
                if (cJSON_IsString(c) && strcmp(c->valuestring, content) == 0) {
                    s = set_special(&sp, t, cJSON_GetObjectItemCaseSensitive(at, "id"), n_vocab, err);
                    break;
                }
            }
        }
    }
    cJSON_Delete(tok);
    if (s != GK_OK) {
        free(template);
        return s;
    }
    /* config.json's {typ}_token_id, at its root or in text_config */
    const cJSON *text_config = cJSON_GetObjectItemCaseSensitive(config, "text_config");
    for (int t = 0; t < N_SPECIAL && s == GK_OK; t++) {
        char key[32];
        snprintf(key, sizeof key, "%s_token_id", special_types[t]);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(config, key);
        if ((id == NULL || cJSON_IsNull(id)) && text_config) id = cJSON_GetObjectItemCaseSensitive(text_config, key);
        s = set_special(&sp, t, id, n_vocab, err);
    }
    if (s != GK_OK) gk_error_about(err, "config.json");
    for (int i = 0; i < sp.n_set && s == GK_OK; i++) {
        int t = sp.order[i];
        if (special_keys[t]) s = gk_kv_set_u32(m, special_keys[t], (uint32_t)sp.id[t], err);
    }
    for (int i = 0; i < sp.n_add && s == GK_OK; i++) {
        int t = sp.add_order[i];
        if (add_keys[t]) {
            gk_value b = { .type = GK_V_BOOL, .b = sp.add[t] != 0 };
            s = gk_kv_set(m, add_keys[t], &b, err);
        }
    }
    if (s == GK_OK && have_template) s = gk_kv_set_str(m, "tokenizer.chat_template", template, err);
    free(template);
    return s;
}

gk_status gk_conv_vocab_spm(gk_model *m, const char *dir, const cJSON *config, int64_t vocab_size,
                            gk_error *err) {
    vocab v = { 0 };
    cJSON *tc = NULL;
    gk_status s = base_vocab(&v, dir, vocab_size, err);
    if (s == GK_OK) s = apply_added_tokens(&v, dir, err);
    if (s == GK_OK) s = gk_hf_json_load(dir, "tokenizer_config.json", false, &tc, err);
    if (s == GK_OK && tc) s = apply_decoder(&v, tc, dir, err);
    if (s == GK_OK) s = put_arrays(m, &v, err);
    if (s == GK_OK) s = special_vocab(m, dir, config, tc, v.n, err);
    cJSON_Delete(tc);
    vocab_free(&v);
    return s;
}
