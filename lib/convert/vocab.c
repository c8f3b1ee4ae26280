/*
 * vocab.c - the SentencePiece vocabulary and special tokens of a converted
 * model, in the reference's key order (vocab.h).
 */
#include <dirent.h>
#include <stdint.h>
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

bool gk_conv_looks_special(const char *t) {
    size_t n = strlen(t);
    if (strcmp(t, "<pad>") == 0 || strcmp(t, "<mask>") == 0 || strcmp(t, "<2mass>") == 0 || strcmp(t, "[@BOS@]") == 0)
        return true;
    if (n >= 4 && strncmp(t, "<|", 2) == 0 && strcmp(t + n - 2, "|>") == 0) return true;
    /* "<｜" and "｜>": the fullwidth bar is EF BD 9C */
    if (n >= 8 && memcmp(t, "<\xef\xbd\x9c", 4) == 0 && memcmp(t + n - 4, "\xef\xbd\x9c>", 4) == 0) return true;
    if (n >= 8 && strncmp(t, "<unused", 7) == 0 && t[n - 1] == '>') return true;
    return false;
}

char *gk_conv_unescape_spaces(const char *s) {
    char *out = malloc(strlen(s) + 1), *o = out;
    if (out == NULL) return NULL;
    while (*s) {
        if (s[0] == '\xe2' && s[1] == '\x96' && s[2] == '\x81') {   /* stops at the NUL */
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
        if (is_special || gk_conv_looks_special(content->valuestring)) {
            s = set_token(v, (size_t)id, content->valuestring, -1000.0f, TT_CONTROL, err);
        } else {
            char *t = gk_conv_unescape_spaces(content->valuestring);
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

/* The special token types, the two the post-processor may add at the end. */
enum { ST_BOS, ST_EOS, ST_UNK, ST_SEP, ST_PAD, ST_CLS, ST_MASK, ST_EOT, ST_EOM, N_SPECIAL };
static const char *const special_types[N_SPECIAL] = { "bos", "eos", "unk", "sep", "pad", "cls", "mask", "eot", "eom" };
/* The writer's key for each (cls has none: the reference skips it). */
static const char *const special_keys[N_SPECIAL] = {
    "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id", "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.seperator_token_id", "tokenizer.ggml.padding_token_id", NULL, "tokenizer.ggml.mask_token_id",
    "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id",
};
static const char *const add_keys[N_SPECIAL] = {
    "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token", NULL, "tokenizer.ggml.add_sep_token",
    NULL, NULL, NULL, NULL, NULL,
};
_Static_assert((int)N_SPECIAL == (int)GK_CONV_N_SPECIAL, "one count of special token kinds");

const char *gk_conv_special_type(int i) { return special_types[i]; }

const char *gk_conv_special_key(int i) { return special_keys[i]; }

/* A Python value taken from JSON: None, a string, or anything else (compared
 * by identity, as the reference never compares those with each other). */
typedef struct pyv {
    int kind;                  /* 0 None, 1 str, 2 other */
    const char *s;
    const cJSON *j;
} pyv;

static pyv pyv_of(const cJSON *j) {
    if (j == NULL || cJSON_IsNull(j)) return (pyv){ 0, NULL, NULL };
    if (cJSON_IsString(j)) return (pyv){ 1, j->valuestring, j };
    return (pyv){ 2, NULL, j };
}

static bool truthy(pyv v) {
    if (v.kind == 0) return false;
    if (v.kind == 1) return v.s[0] != '\0';
    if (cJSON_IsObject(v.j) || cJSON_IsArray(v.j)) return v.j->child != NULL;
    if (cJSON_IsNumber(v.j)) return v.j->valuedouble != 0;
    return cJSON_IsTrue(v.j);
}

static bool pyv_eq(pyv a, pyv b) {
    if (a.kind != b.kind) return false;
    if (a.kind == 0) return true;
    if (a.kind == 1) return strcmp(a.s, b.s) == 0;
    return a.j == b.j;
}

/* tokenizer_config.json with the entries SpecialVocab writes into it. */
typedef struct tconf {
    const cJSON *tc;           /* NULL when missing */
    bool set[N_SPECIAL];
    pyv over[N_SPECIAL];       /* "{typ}_token" overrides */
} tconf;

static bool tconf_truthy(const tconf *t) { return t->tc && cJSON_IsObject(t->tc) && t->tc->child; }

static pyv tconf_token(const tconf *t, int typ) {
    if (t->set[typ]) return t->over[typ];
    char key[32];
    snprintf(key, sizeof key, "%s_token", special_types[typ]);
    return pyv_of(t->tc ? cJSON_GetObjectItemCaseSensitive(t->tc, key) : NULL);
}

static void tconf_put(tconf *t, int typ, pyv v) {
    t->set[typ] = true;
    t->over[typ] = v;
}

typedef struct special {
    int order[N_SPECIAL];      /* types in the order their ids were set */
    int64_t id[N_SPECIAL];     /* -1: unset */
    int n_set;
    int add_order[N_SPECIAL];
    int add[N_SPECIAL];        /* -1 unset, 0/1 */
    int n_add;
    bool has_type[N_SPECIAL];  /* the types looked at (eot, eom added by the post-processor) */
    int lower, strip;          /* normalizer flags: -1 unset */
} special;

static void set_add(special *sp, int typ, bool v) {
    if (sp->add[typ] < 0) sp->add_order[sp->n_add++] = typ;
    sp->add[typ] = v;
}

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

/* SpecialVocab._parse_normalizer */
static void parse_normalizer(special *sp, const cJSON *n) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(n, "type");
    const char *t = cJSON_IsString(type) ? type->valuestring : "";
    if (strcmp(t, "Lowercase") == 0) {
        sp->lower = 1;
    } else if (strcmp(t, "StripAccents") == 0) {
        sp->strip = 1;
    } else if (strcmp(t, "BertNormalizer") == 0) {
        const cJSON *l = cJSON_GetObjectItemCaseSensitive(n, "lowercase");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(n, "strip_accents");
        if (cJSON_IsBool(l)) sp->lower = cJSON_IsTrue(l);
        if (cJSON_IsBool(a)) sp->strip = cJSON_IsTrue(a);
    } else if (strcmp(t, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers");
        for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e; e = e->next) parse_normalizer(sp, e);
    }
}

/* .get('SpecialToken', {}).get('id') / .get('Sequence', {}).get('id') of a template piece */
static pyv piece_id(const cJSON *piece, const char *kind) {
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(piece, kind);
    return pyv_of(k ? cJSON_GetObjectItemCaseSensitive(k, "id") : NULL);
}

static bool is_str(pyv v, const char *s) { return v.kind == 1 && strcmp(v.s, s) == 0; }

/* The post-processor's say on add_bos/add_eos/add_sep and the special
 * tokens (SpecialVocab._try_load_from_tokenizer_json). */
static void post_processor(special *sp, tconf *tcf, const cJSON *post) {
    pyv bos = tconf_token(tcf, ST_BOS), cls = tconf_token(tcf, ST_CLS), eos = tconf_token(tcf, ST_EOS),
        sep = tconf_token(tcf, ST_SEP);
    const bool has_tc = tconf_truthy(tcf);
    if (!truthy(bos) && truthy(cls) && has_tc) tconf_put(tcf, ST_BOS, bos = cls);
    if (!truthy(eos) && truthy(sep) && has_tc) tconf_put(tcf, ST_EOS, eos = sep);
    if (!truthy(pyv_of(post))) return;
    const cJSON *procs = cJSON_GetObjectItemCaseSensitive(post, "processors");
    const cJSON *one[1] = { post };
    size_t n = procs ? (size_t)cJSON_GetArraySize(procs) : 1;
    for (size_t i = 0; i < n; i++) {
        const cJSON *proc = procs ? cJSON_GetArrayItem(procs, (int)i) : one[0];
        pyv type = pyv_of(cJSON_GetObjectItemCaseSensitive(proc, "type"));
        if (is_str(type, "RobertaProcessing")) {
            set_add(sp, ST_BOS, true);
            set_add(sp, ST_EOS, true);
            set_add(sp, ST_SEP, true);
            if (!truthy(cls) && has_tc) {
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(proc, "cls");
                tconf_put(tcf, ST_CLS, cls = c ? pyv_of(cJSON_GetArrayItem(c, 0)) : bos);
            }
            if (!truthy(sep) && has_tc) {
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(proc, "sep");
                tconf_put(tcf, ST_SEP, sep = c ? pyv_of(cJSON_GetArrayItem(c, 0)) : eos);
            }
            continue;
        }
        if (!is_str(type, "TemplateProcessing")) continue;
        const cJSON *single = cJSON_GetObjectItemCaseSensitive(proc, "single");
        const cJSON *pair = cJSON_GetObjectItemCaseSensitive(proc, "pair");
        int n_single = cJSON_IsArray(single) ? cJSON_GetArraySize(single) : 0;
        int n_pair = cJSON_IsArray(pair) ? cJSON_GetArraySize(pair) : 0;
        pyv first = { 0 }, last = { 0 };
        if (n_single > 1) {
            first = piece_id(cJSON_GetArrayItem(single, 0), "SpecialToken");
            if (truthy(first)) {
                if (!has_tc) {
                    bos = first;
                } else if (!pyv_eq(first, bos) && !pyv_eq(first, cls)) {
                    if (!truthy(bos)) tconf_put(tcf, ST_BOS, bos = first);
                    if (!truthy(cls)) tconf_put(tcf, ST_CLS, cls = first);
                }
                set_add(sp, ST_BOS, pyv_eq(first, bos) || pyv_eq(first, cls));
            }
            last = piece_id(cJSON_GetArrayItem(single, n_single - 1), "SpecialToken");
            if (truthy(last)) {
                if (!has_tc) {
                    eos = last;
                } else if (!pyv_eq(last, eos)) {
                    if (!sp->has_type[ST_EOT]) {
                        sp->has_type[ST_EOT] = true;
                        tconf_put(tcf, ST_EOT, eos);
                    } else if (!sp->has_type[ST_EOM]) {
                        sp->has_type[ST_EOM] = true;
                        tconf_put(tcf, ST_EOM, eos);
                    }
                    tconf_put(tcf, ST_EOS, eos = last);
                }
                set_add(sp, ST_EOS, pyv_eq(last, eos));
            }
        }
        if (n_pair > 0) {
            int lo = truthy(first) && pyv_eq(piece_id(cJSON_GetArrayItem(pair, 0), "SpecialToken"), first) ? 1 : 0;
            int hi = truthy(last) && pyv_eq(piece_id(cJSON_GetArrayItem(pair, n_pair - 1), "SpecialToken"), last)
                         ? n_pair - 1
                         : n_pair;
            if (hi > lo) {
                pyv a = piece_id(cJSON_GetArrayItem(pair, lo), "Sequence");
                pyv b = piece_id(cJSON_GetArrayItem(pair, hi - 1), "Sequence");
                /* the middle: pair[lo + 1 .. hi - 1) */
                if (is_str(a, "A") && is_str(b, "B") && hi - 1 > lo + 1) {
                    bool add_sep = false;
                    pyv entry = piece_id(cJSON_GetArrayItem(pair, lo + 1), "SpecialToken");
                    if (truthy(entry) && (pyv_eq(entry, sep) || pyv_eq(entry, eos)) && !truthy(last)) add_sep = true;
                    if (hi - 1 - (lo + 1) == 2) {
                        pyv entry2 = piece_id(cJSON_GetArrayItem(pair, lo + 2), "SpecialToken");
                        if (truthy(entry2) && (pyv_eq(entry2, sep) || pyv_eq(entry2, eos))) add_sep = true;
                    }
                    set_add(sp, ST_SEP, add_sep);
                    if (add_sep && !truthy(sep) && has_tc) tconf_put(tcf, ST_SEP, eos);
                }
            }
        }
    }
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

/* The chat template: tokenizer_config.json's, else chat_template.jinja's,
 * else chat_template.json's. *have false: none (or null). */
static gk_status chat_template(const char *dir, const cJSON *tc, char **template, bool *have, gk_error *err) {
    *template = NULL;
    *have = false;
    gk_status s = GK_OK;
    char *alt = NULL;
    bool have_alt = false;
    if (gk_hf_exists(dir, "chat_template.jinja")) {
        s = gk_hf_text_load(dir, "chat_template.jinja", true, &alt, err);
        have_alt = s == GK_OK;
        if (s == GK_OK && has_additional_templates(dir))
            s = about(gk_error_set(err, GK_E_UNSUPPORTED, -1,
                                   "named chat templates (additional_chat_templates/*.jinja) are not supported yet"),
                      err, dir, "additional_chat_templates");
    } else if (gk_hf_exists(dir, "chat_template.json")) {
        cJSON *cj;
        s = gk_hf_json_load(dir, "chat_template.json", true, &cj, err);
        const cJSON *t = cj ? cJSON_GetObjectItemCaseSensitive(cj, "chat_template") : NULL;
        if (s == GK_OK && cJSON_IsString(t)) {
            alt = strdup(t->valuestring);
            have_alt = true;
        } else if (s == GK_OK && t && !cJSON_IsNull(t)) {
            s = about(gk_error_set(err, GK_E_UNSUPPORTED, -1, "a chat_template that is not a string is not supported yet"),
                      err, dir, "chat_template.json");
        }
        cJSON_Delete(cj);
    }
    const cJSON *ct = cJSON_GetObjectItemCaseSensitive(tc, "chat_template");
    if (s == GK_OK && ct != NULL) {
        free(alt);
        alt = NULL;
        have_alt = false;
        if (cJSON_IsString(ct)) {
            alt = strdup(ct->valuestring);
            have_alt = true;
        } else if (!cJSON_IsNull(ct)) {
            s = about(gk_error_set(err, GK_E_UNSUPPORTED, -1, "a chat_template that is not a string is not supported yet"),
                      err, dir, "tokenizer_config.json");
        }
    }
    if (s == GK_OK && have_alt && alt == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s != GK_OK) {
        free(alt);
        return s;
    }
    *template = alt;
    *have = have_alt;
    return GK_OK;
}

/* One gguf.SpecialVocab and its add_to_gguf. codellama: the second one
 * LlamaModel.set_vocab makes for a vocab_size of 32016, of the types prefix,
 * suffix, middle and eot (only eot has a key), with eot 32010 unless set. */
static gk_status special_vocab(gk_model *m, const char *dir, const cJSON *config, const cJSON *tc, size_t n_vocab,
                               bool codellama, const gk_value *merges, const cJSON *parsed, gk_error *err) {
    special sp = { .lower = -1, .strip = -1 };
    for (int i = 0; i < N_SPECIAL; i++)
        sp.id[i] = -1, sp.add[i] = -1, sp.has_type[i] = codellama ? i == ST_EOT : i < ST_EOT;
    tconf tcf = { .tc = tc };
    cJSON *own = NULL;
    gk_status s = parsed ? GK_OK : gk_hf_json_load(dir, "tokenizer.json", false, &own, err);
    const cJSON *tok = parsed ? parsed : own;
    if (s != GK_OK) return s;
    const cJSON *added = NULL;
    if (tok) {   /* post_processor only for a non-empty object (Python's `if tokenizer:`) */
        const cJSON *norm = cJSON_GetObjectItemCaseSensitive(tok, "normalizer");
        if (truthy(pyv_of(norm))) parse_normalizer(&sp, norm);
        added = cJSON_GetObjectItemCaseSensitive(tok, "added_tokens");
        if (truthy(pyv_of(tok))) post_processor(&sp, &tcf, cJSON_GetObjectItemCaseSensitive(tok, "post_processor"));
    }
    char *template = NULL;
    bool have_template = false;
    if (tconf_truthy(&tcf)) {
        s = chat_template(dir, tc, &template, &have_template, err);
        for (int t = 0; t < N_SPECIAL && s == GK_OK; t++) {
            if (!sp.has_type[t]) continue;
            char key[32];
            snprintf(key, sizeof key, "add_%s_token", special_types[t]);
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(tc, key);
            if (cJSON_IsBool(a)) set_add(&sp, t, cJSON_IsTrue(a));
            pyv e = tconf_token(&tcf, t);
            const char *content = NULL;
            if (e.kind == 1) content = e.s;
            else if (e.kind == 2 && cJSON_IsObject(e.j) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e.j, "content")))
                content = cJSON_GetObjectItemCaseSensitive(e.j, "content")->valuestring;
            if (content == NULL || !cJSON_IsArray(added)) continue;
            for (const cJSON *at = added->child; at; at = at->next) {
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(at, "content");
                if (cJSON_IsString(c) && strcmp(c->valuestring, content) == 0) {
                    s = set_special(&sp, t, cJSON_GetObjectItemCaseSensitive(at, "id"), n_vocab, err);
                    break;
                }
            }
        }
    }
    cJSON_Delete(own);
    if (s != GK_OK) {
        free(template);
        return s;
    }
    /* config.json's {typ}_token_id, at its root or in text_config */
    const cJSON *text_config = cJSON_GetObjectItemCaseSensitive(config, "text_config");
    for (int t = 0; t < N_SPECIAL && s == GK_OK; t++) {
        if (!sp.has_type[t]) continue;
        char key[32];
        snprintf(key, sizeof key, "%s_token_id", special_types[t]);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(config, key);
        if ((id == NULL || cJSON_IsNull(id)) && text_config) id = cJSON_GetObjectItemCaseSensitive(text_config, key);
        s = set_special(&sp, t, id, n_vocab, err);
    }
    if (s != GK_OK) gk_error_about(err, "config.json");
    /* add_to_gguf: the merges first */
    if (s == GK_OK && merges && merges->arr.n > 0) s = gk_kv_set(m, "tokenizer.ggml.merges", merges, err);
    if (s == GK_OK && codellama && sp.id[ST_EOT] < 0) {
        sp.id[ST_EOT] = 32010;
        sp.order[sp.n_set++] = ST_EOT;
    }
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
    gk_value b = { .type = GK_V_BOOL };
    if (s == GK_OK && sp.lower >= 0) {
        b.b = sp.lower != 0;
        s = gk_kv_set(m, "tokenizer.ggml.normalizer.lowercase", &b, err);
    }
    if (s == GK_OK && sp.strip >= 0) {
        b.b = sp.strip != 0;
        s = gk_kv_set(m, "tokenizer.ggml.normalizer.strip_accents", &b, err);
    }
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
    if (s == GK_OK) s = special_vocab(m, dir, config, tc, v.n, false, NULL, NULL, err);
    cJSON_Delete(tc);
    vocab_free(&v);
    return s;
}

gk_status gk_conv_vocab_codellama(gk_model *m, const char *dir, const cJSON *config, gk_error *err) {
    cJSON *tc = NULL;
    gk_status s = gk_hf_json_load(dir, "tokenizer_config.json", false, &tc, err);
    if (s == GK_OK) s = special_vocab(m, dir, config, tc, SIZE_MAX, true, NULL, NULL, err);
    cJSON_Delete(tc);
    return s;
}

gk_status gk_conv_vocab_llama_put(gk_model *m, const char *dir, const cJSON *config, const cJSON *tc,
                                  const cJSON *tokenizer, char **tokens, float *scores, int32_t *types, size_t n,
                                  gk_error *err) {
    vocab v = { tokens, scores, types, n };
    gk_status s = put_arrays(m, &v, err);
    if (s == GK_OK) s = special_vocab(m, dir, config, tc, n, false, NULL, tokenizer, err);
    return s;
}

gk_status gk_conv_vocab_special(gk_model *m, const char *dir, const cJSON *config, const cJSON *tc,
                                const cJSON *tokenizer, const gk_value *merges, gk_error *err) {
    return special_vocab(m, dir, config, tc, SIZE_MAX, false, merges, tokenizer, err);
}
