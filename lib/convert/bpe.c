/*
 * bpe.c - tokenizer.json's BPE vocabulary, added tokens and merges as GGUF
 * tokenizer keys (bpe.h). tokenizer.json is read whole (cJSON); the tokens
 * are indexed by text and the merges by their pair for the digest's encoder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/bpe.h"
#include "convert/bpe_pre.h"
#include "convert/hfjson.h"
#include "convert/vocab.h"
#include "util/grow.h"
#include "util/hashmap.h"

/* GGUF token types */
enum { TT_NORMAL = 1, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5 };

typedef struct entry {
    const char *text;
    size_t len;
    int64_t id;
    bool added;                 /* the text is an added token's (get_added_vocab) */
} entry;

typedef struct merge {
    const char *a, *b;
    size_t na, nb;
} merge;

typedef struct bpe {
    entry *ents;                /* the model's vocab, then the added tokens */
    size_t n_ents, cap_ents;
    gk_hashmap by_text;         /* text -> last entry with it */
    merge *merges;
    size_t n_merges;
    gk_hashmap by_pair;         /* pair -> rank */
    char *path;                 /* dir/tokenizer.json, for messages */
} bpe;

static gk_status nomem(gk_error *err) { return gk_error_set(err, GK_E_NOMEM, -1, "out of memory"); }

/* An error about tokenizer.json: err gets the message and names the file;
 * the expression's value is st. */
#define bad(err, b, st, ...) (gk_error_set((err), (st), -1, __VA_ARGS__), gk_error_about((err), (b)->path), (st))

static uint64_t text_hash(const char *t, size_t n) { return gk_fnv1a(GK_FNV1A_BASIS, t, n); }

static int64_t find_entry(const bpe *b, const char *t, size_t n) {
    size_t cur = 0, at;
    int64_t found = -1;
    while (gk_hashmap_next(&b->by_text, text_hash(t, n), &cur, &at))
        if (b->ents[at].len == n && memcmp(b->ents[at].text, t, n) == 0) found = (int64_t)at;
    return found;
}

/* Adds or updates (the later id wins, as a Python dict does) text's entry. */
static gk_status put_entry(bpe *b, const char *t, int64_t id, bool added, gk_error *err) {
    size_t n = strlen(t);
    int64_t at = find_entry(b, t, n);
    if (at >= 0) {
        b->ents[at].id = id;
        b->ents[at].added |= added;
        return GK_OK;
    }
    if (!GK_GROW(b->ents, b->cap_ents, b->n_ents + 1, 1024)) return nomem(err);
    if (!gk_hashmap_add(&b->by_text, text_hash(t, n), b->n_ents)) return nomem(err);
    b->ents[b->n_ents++] = (entry){ t, n, id, added };
    return GK_OK;
}

static uint64_t pair_hash(const char *a, size_t na, const char *c, size_t nc) {
    uint64_t h = gk_fnv1a(GK_FNV1A_BASIS, a, na);
    h = gk_fnv1a(h, "\xff", 1);   /* a byte no UTF-8 text holds */
    return gk_fnv1a(h, c, nc);
}

static int64_t model_lookup(const gk_bpe_model *m, const char *t, size_t n) {
    const bpe *b = m->ctx;
    int64_t at = find_entry(b, t, n);
    return at < 0 ? -1 : b->ents[at].id;
}

static int64_t model_rank(const gk_bpe_model *m, const char *a, size_t na, const char *c, size_t nc) {
    const bpe *b = m->ctx;
    size_t cur = 0, at;
    int64_t best = -1;
    while (gk_hashmap_next(&b->by_pair, pair_hash(a, na, c, nc), &cur, &at)) {
        const merge *g = &b->merges[at];
        if (g->na == na && g->nb == nc && memcmp(g->a, a, na) == 0 && memcmp(g->b, c, nc) == 0 &&
            (best < 0 || (int64_t)at < best))
            best = (int64_t)at;
    }
    return best;
}

/* tokenizer.json's model.vocab and added_tokens. */
static gk_status load_tokens(bpe *b, const cJSON *tok, gk_error *err) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(tok, "model");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (!cJSON_IsObject(model))
        return bad(err, b, GK_E_CORRUPT, "key 'model' is missing or not an object");
    if (type && !(cJSON_IsString(type) && strcmp(type->valuestring, "BPE") == 0))
        return bad(err, b, GK_E_UNSUPPORTED,
                   "model.type is '%s': only BPE tokenizer.json vocabularies are supported (and tokenizer.model)",
                   cJSON_IsString(type) ? type->valuestring : "(not a string)");
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!cJSON_IsObject(vocab)) return bad(err, b, GK_E_CORRUPT, "model.vocab is missing or not an object");
    gk_status s = GK_OK;
    for (const cJSON *e = vocab->child; e && s == GK_OK; e = e->next) {
        if (!gk_hf_is_int(e) || e->valuedouble < 0 || e->valuedouble > 0x7fffffff)
            return bad(err, b, GK_E_CORRUPT, "model.vocab: token '%s' has no valid id", e->string);
        s = put_entry(b, e->string, (int64_t)e->valuedouble, false, err);
    }
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(tok, "added_tokens");
    if (added && !cJSON_IsArray(added)) return bad(err, b, GK_E_CORRUPT, "added_tokens is not a list");
    long long i = 0;
    for (const cJSON *e = added ? added->child : NULL; e && s == GK_OK; e = e->next, i++) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(e, "content");
        if (!gk_hf_is_int(id) || id->valuedouble < 0 || id->valuedouble > 0x7fffffff || !cJSON_IsString(content))
            return bad(err, b, GK_E_CORRUPT, "added_tokens[%lld] has no valid id and content", i);
        s = put_entry(b, content->valuestring, (int64_t)id->valuedouble, true, err);
    }
    return s;
}

/* model.merges, in either format, checked as the tokenizers library checks
 * them (both parts and their join are tokens); *out the "a b" strings the
 * reference writes. */
static gk_status load_merges(bpe *b, const cJSON *tok, gk_value *out, gk_error *err) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tok, "model"), "merges");
    *out = (gk_value){ .type = GK_V_ARR, .arr.elem = GK_V_STR };
    if (list == NULL) return GK_OK;
    if (!cJSON_IsArray(list)) return bad(err, b, GK_E_CORRUPT, "model.merges is not a list");
    size_t n = (size_t)cJSON_GetArraySize(list);
    b->merges = calloc(n ? n : 1, sizeof *b->merges);
    gk_str *strs = calloc(n ? n : 1, sizeof *strs);
    if (b->merges == NULL || strs == NULL) {
        free(strs);
        return nomem(err);
    }
    out->arr.data = strs;
    bool pairs = cJSON_IsArray(list->child);
    gk_status s = GK_OK;
    size_t i = 0;
    for (const cJSON *e = list->child; e && s == GK_OK; e = e->next, i++) {
        merge g;
        char *text;
        if (!pairs && cJSON_IsString(e)) {
            const char *sp = strchr(e->valuestring, ' ');
            if (sp == NULL || strchr(sp + 1, ' ') != NULL)
                return bad(err, b, GK_E_CORRUPT, "model.merges[%zu] is not two tokens parted by one space", i);
            g = (merge){ e->valuestring, sp + 1, (size_t)(sp - e->valuestring), strlen(sp + 1) };
            text = strdup(e->valuestring);
        } else if (pairs && cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(e->child) &&
                   cJSON_IsString(e->child->next)) {
            const char *a = e->child->valuestring, *c = e->child->next->valuestring;
            g = (merge){ a, c, strlen(a), strlen(c) };
            /* a space inside a part is written as U+0120 (C4 A0) */
            text = malloc(2 * (g.na + g.nb) + 2);
            if (text) {
                size_t k = 0;
                for (const char *p = a; *p; p++) k += *p == ' ' ? (memcpy(text + k, "\xc4\xa0", 2), 2) : (text[k] = *p, 1);
                text[k++] = ' ';
                for (const char *p = c; *p; p++) k += *p == ' ' ? (memcpy(text + k, "\xc4\xa0", 2), 2) : (text[k] = *p, 1);
                text[k] = '\0';
            }
        } else {
            return bad(err, b, GK_E_CORRUPT, "model.merges[%zu] is neither \"a b\" nor [\"a\", \"b\"] like the first", i);
        }
        if (text == NULL) return nomem(err);
        strs[i] = (gk_str){ text, strlen(text) };
        out->arr.n = i + 1;
        char *joined = malloc(g.na + g.nb + 1);
        if (joined == NULL) return nomem(err);
        memcpy(joined, g.a, g.na);
        memcpy(joined + g.na, g.b, g.nb);
        bool known = find_entry(b, g.a, g.na) >= 0 && find_entry(b, g.b, g.nb) >= 0 && find_entry(b, joined, g.na + g.nb) >= 0;
        free(joined);
        if (!known)
            return bad(err, b, GK_E_CORRUPT, "model.merges[%zu] ('%s') joins tokens that model.vocab lacks", i, text);
        b->merges[i] = g;
        if (!gk_hashmap_add(&b->by_pair, pair_hash(g.a, g.na, g.b, g.nb), i)) return nomem(err);
        b->n_merges = i + 1;
    }
    return s;
}

static void free_merge_strs(gk_value *v) {
    gk_str *strs = (gk_str *)v->arr.data;
    for (size_t i = 0; strs && i < v->arr.n; i++) free((char *)strs[i].ptr);
    free(strs);
}

/* The tokenizers library's byte-level decoding of one token: every character
 * back to its byte when all are of the byte alphabet, else the text as is. */
static char *byte_decode(const char *t) {
    size_t n = strlen(t);
    char *out = malloc(n + 1);
    if (out == NULL) return NULL;
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)t; *p;) {
        unsigned cp;
        if (*p < 0x80) cp = *p++;
        else if ((*p & 0xe0) == 0xc0 && p[1]) cp = ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu), p += 2;
        else { k = (size_t)-1; break; }
        int byte = -1;
        if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255)) byte = (int)cp;
        else if (cp >= 256 && cp <= 256 + 32) byte = (int)(cp - 256);
        else if (cp >= 256 + 33 && cp <= 256 + 66) byte = (int)(cp - 256 + 94);
        else if (cp == 256 + 67) byte = 173;
        if (byte < 0) { k = (size_t)-1; break; }
        out[k++] = (char)byte;
    }
    if (k == (size_t)-1) {
        memcpy(out, t, n + 1);
        return out;
    }
    out[k] = '\0';
    /* Python decodes the bytes with errors="replace" */
    char *text = gk_utf8_repair(out, k, GK_UTF8_REPAIR_MAXIMAL, NULL);
    free(out);
    return text;
}

static bool decoder_is_byte_level(const cJSON *tok) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(tok, "decoder");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(d, "type");
    return cJSON_IsString(t) && strcmp(t->valuestring, "ByteLevel") == 0;
}

gk_status gk_conv_vocab_bpe(gk_model *m, const char *dir, const cJSON *config, int64_t vocab_size,
                            const char *vocab_pre, gk_error *err) {
    bpe b = { 0 };
    cJSON *tok = NULL, *tc = NULL;
    gk_value merges = { 0 };
    char **tokens = NULL;
    int32_t *types = NULL;
    size_t n = 0;
    size_t plen = strlen(dir) + 32;
    b.path = malloc(plen);
    if (b.path == NULL) return nomem(err);
    snprintf(b.path, plen, "%s/tokenizer.json", dir);
    gk_status s = gk_hf_json_load(dir, "tokenizer.json", true, &tok, err);
    if (s == GK_OK) s = gk_hf_json_load(dir, "tokenizer_config.json", false, &tc, err);
    if (s == GK_OK && !cJSON_IsObject(tok)) s = bad(err, &b, GK_E_CORRUPT, "not a JSON object");
    if (s == GK_OK) s = load_tokens(&b, tok, err);
    if (s == GK_OK) s = load_merges(&b, tok, &merges, err);
    /* the ids: reverse_vocab (the later text wins an id) */
    int64_t max_id = -1;
    for (size_t i = 0; s == GK_OK && i < b.n_ents; i++)
        if (b.ents[i].id > max_id) max_id = b.ents[i].id;
    if (s == GK_OK) {
        n = vocab_size >= 0 ? (size_t)vocab_size : b.n_ents;
        if (max_id >= (int64_t)n) {
            gk_error_set(err, GK_E_CORRUPT, -1,
                         "token id %lld is not below the vocabulary size %zu (%s): the tokenizer is larger than the model",
                         (long long)max_id, n, vocab_size >= 0 ? "config.json's vocab_size" : "the tokenizer's token count");
            gk_error_about(err, b.path);
            s = GK_E_CORRUPT;
        }
    }
    const char *pre = vocab_pre;
    char digest[65] = "";
    if (s == GK_OK && pre == NULL) {
        gk_bpe_model bm = { tok, tc, model_lookup, model_rank, &b };
        gk_error why;
        gk_status ds = gk_bpe_pre_digest(&bm, digest, &why);
        if (ds == GK_E_NOMEM) s = nomem(err);
        else if (ds == GK_OK) pre = gk_bpe_pre_lookup(digest);
        if (s == GK_OK && pre == NULL) {
            if (ds == GK_OK)
                gk_error_set(err, GK_E_UNSUPPORTED, -1,
                             "the pre-tokenizer is not one the reference knows (check-text digest %s); "
                             "name it with --vocab-pre NAME",
                             digest);
            else
                gk_error_set(err, GK_E_UNSUPPORTED, -1, "the pre-tokenizer cannot be identified (%s); name it with --vocab-pre NAME",
                             why.message);
            gk_error_about(err, b.path);
            s = GK_E_UNSUPPORTED;
        }
    }
    /* the merges as pairs are no longer needed (their text is in merges) */
    free(b.merges);
    b.merges = NULL;
    gk_hashmap_free(&b.by_pair);
    if (tok) cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(tok, "model"), "merges");
    if (s == GK_OK) {
        tokens = calloc(n ? n : 1, sizeof *tokens);
        types = calloc(n ? n : 1, sizeof *types);
        if (tokens == NULL || types == NULL) s = nomem(err);
    }
    /* reverse_vocab: id -> entry, the later text of an id winning; info: id ->
     * its added token (added_tokens_decoder) */
    const entry **rev = s == GK_OK ? calloc(n ? n : 1, sizeof *rev) : NULL;
    const cJSON **info_of = s == GK_OK ? calloc(n ? n : 1, sizeof *info_of) : NULL;
    if (s == GK_OK && (rev == NULL || info_of == NULL)) s = nomem(err);
    for (size_t i = 0; s == GK_OK && i < b.n_ents; i++) rev[b.ents[i].id] = &b.ents[i];
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(tok, "added_tokens");
    for (const cJSON *e = s == GK_OK && added ? added->child : NULL; e; e = e->next) {
        size_t id = (size_t)cJSON_GetObjectItemCaseSensitive(e, "id")->valuedouble;   /* checked in load_tokens */
        if (id < n) info_of[id] = e;   /* (an id a later token of the same text took is no token's) */
    }
    bool byte_level = tok && decoder_is_byte_level(tok);
    for (size_t i = 0; s == GK_OK && i < n; i++) {
        char buf[32];
        const char *t = rev[i] ? rev[i]->text : NULL;
        int32_t type = TT_NORMAL;
        char *own = NULL;
        if (t == NULL) {
            snprintf(buf, sizeof buf, "[PAD%zu]", i);
            t = buf, type = TT_UNUSED;
        } else {
            /* an added token: its text is an added token's, and the decoder's
             * entry is the one for this id */
            const cJSON *info = info_of[i];
            if (rev[i]->added && info) {
                const cJSON *norm = cJSON_GetObjectItemCaseSensitive(info, "normalized");
                bool special = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(info, "special"));
                /* normalized defaults to the opposite of special */
                bool normalized = cJSON_IsBool(norm) ? cJSON_IsTrue(norm) : !special;
                if (!normalized && byte_level) {
                    own = byte_decode(t);
                    if (own == NULL) s = nomem(err);
                    else t = own;
                }
                if (s == GK_OK && (special || gk_conv_looks_special(t))) {
                    type = TT_CONTROL;
                } else if (s == GK_OK) {
                    char *u = gk_conv_unescape_spaces(t);
                    free(own);
                    own = u, t = u, type = TT_USER_DEFINED;
                    if (u == NULL) s = nomem(err);
                }
            }
        }
        if (s == GK_OK && (tokens[i] = strdup(t)) == NULL) s = nomem(err);
        types[i] = type;
        free(own);
    }
    free(rev);
    free(info_of);
    /* nor the index of the texts, nor model.vocab (the tokens are copies) */
    free(b.ents);
    b.ents = NULL;
    gk_hashmap_free(&b.by_text);
    if (tok) cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(tok, "model"), "vocab");
    if (s == GK_OK) s = gk_kv_set_str(m, "tokenizer.ggml.model", "gpt2", err);
    if (s == GK_OK) s = gk_kv_set_str(m, "tokenizer.ggml.pre", pre, err);
    if (s == GK_OK && n > 0) {
        gk_str *strs = malloc(n * sizeof *strs);
        if (strs == NULL) s = nomem(err);
        for (size_t i = 0; s == GK_OK && i < n; i++) strs[i] = (gk_str){ tokens[i], strlen(tokens[i]) };
        gk_value v = { .type = GK_V_ARR, .arr.elem = GK_V_STR, .arr.n = n, .arr.data = strs };
        if (s == GK_OK) s = gk_kv_set(m, "tokenizer.ggml.tokens", &v, err);
        v.arr.elem = GK_V_I32, v.arr.data = types;
        if (s == GK_OK) s = gk_kv_set(m, "tokenizer.ggml.token_type", &v, err);
        free(strs);
    }
    for (size_t i = 0; tokens && i < n; i++) free(tokens[i]);
    free(tokens);
    tokens = NULL;
    if (s == GK_OK) s = gk_conv_vocab_special(m, dir, config, tc, tok, &merges, err);
    for (size_t i = 0; tokens && i < n; i++) free(tokens[i]);
    free(tokens);
    free(types);
    free_merge_strs(&merges);
    free(b.ents);
    free(b.merges);
    gk_hashmap_free(&b.by_text);
    gk_hashmap_free(&b.by_pair);
    free(b.path);
    cJSON_Delete(tok);
    cJSON_Delete(tc);
    return s;
}
