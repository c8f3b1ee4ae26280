/*
 * bpe.c - tokenizer.json's BPE vocabulary, added tokens and merges as GGUF
 * tokenizer keys (bpe.h). tokenizer.json is read whole (cJSON); the tokens
 * are indexed by text and the merges by their pair for the digest's encoder.
 * Also the SentencePiece-style kind (gguf.LlamaHfVocab), from the same token
 * index. The reference asks transformers' AutoTokenizer; its answers are taken
 * here from the JSON files:
 *  - vocab_size: the number of model.vocab entries;
 *  - get_added_vocab(): tokenizer.json's added_tokens, then the texts of
 *    tokenizer_config.json's added_tokens_decoder not among them, with the
 *    id its key gives (transformers would give a new token the next free id;
 *    the same when the file's ids are contiguous, as saved tokenizers have);
 *  - all_special_tokens: bos/eos/unk/sep/pad/cls/mask_token and
 *    additional_special_tokens of tokenizer_config.json and
 *    special_tokens_map.json, and the added tokens flagged special; a text no
 *    token has is skipped (the reference fails on it).
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
    size_t n_model;             /* the first n_model entries: model.vocab's texts */
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
    b->n_model = b->n_ents;
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

/* Opens dir's tokenizer.json (b->path names it) and tokenizer_config.json
 * (*tc, or NULL), and indexes the tokens. */
static gk_status open_tokenizer(bpe *b, const char *dir, cJSON **tok, cJSON **tc, gk_error *err) {
    size_t plen = strlen(dir) + 32;
    b->path = malloc(plen);
    if (b->path == NULL) return nomem(err);
    snprintf(b->path, plen, "%s/tokenizer.json", dir);
    gk_status s = gk_hf_json_load(dir, "tokenizer.json", true, tok, err);
    if (s == GK_OK) s = gk_hf_json_load(dir, "tokenizer_config.json", false, tc, err);
    if (s == GK_OK && !cJSON_IsObject(*tok)) s = bad(err, b, GK_E_CORRUPT, "not a JSON object");
    if (s == GK_OK) s = load_tokens(b, *tok, err);
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
    gk_status s = open_tokenizer(&b, dir, &tok, &tc, err);
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

/* ------------------------------------------------------------------------ */
/* gguf.LlamaHfVocab: a SentencePiece-style tokenizer.json                   */
/* ------------------------------------------------------------------------ */

bool gk_conv_is_llama_hf(const cJSON *tok) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(tok, "model");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(model, "type");
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(model, "byte_fallback");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tok, "decoder"), "type");
    /* a Llama 3 tokenizer (ignore_merges, no byte fallback) and any other go
     * the GPT-2 route; byte_fallback true excludes the first already */
    return cJSON_IsString(type) && strcmp(type->valuestring, "BPE") == 0 && cJSON_IsTrue(fb) &&
           cJSON_IsString(dec) && strcmp(dec->valuestring, "Sequence") == 0;
}

/* A special token's text as tokenizer_config.json or special_tokens_map.json
 * holds it: a string or an object with a "content" string. */
static const char *token_text(const cJSON *j) {
    if (cJSON_IsString(j)) return j->valuestring;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "content");
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

/* all_special_tokens: the named special tokens and additional_special_tokens
 * of a tokenizer_config.json / special_tokens_map.json object, each given to
 * mark(ctx, text). */
static void each_special(const cJSON *j, void (*mark)(void *, const char *), void *ctx) {
    static const char *const names[] = { "bos_token", "eos_token", "unk_token", "sep_token",
                                         "pad_token", "cls_token", "mask_token" };
    if (!cJSON_IsObject(j)) return;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *t = token_text(cJSON_GetObjectItemCaseSensitive(j, names[i]));
        if (t) mark(ctx, t);
    }
    const cJSON *more = cJSON_GetObjectItemCaseSensitive(j, "additional_special_tokens");
    for (const cJSON *e = cJSON_IsArray(more) ? more->child : NULL; e; e = e->next) {
        const char *t = token_text(e);
        if (t) mark(ctx, t);
    }
}

typedef struct added_tok {
    const char *text;
    int64_t id;
    bool special;
} added_tok;

typedef struct hf_state {
    bpe *b;
    bool *special_id;          /* id -> in all_special_ids (n_all entries) */
    size_t n_all;
} hf_state;

static void mark_special(void *ctx, const char *t) {
    hf_state *h = ctx;
    int64_t at = find_entry(h->b, t, strlen(t));
    /* a special token no id has is skipped (the reference fails on it) */
    if (at >= 0 && (size_t)h->b->ents[at].id < h->n_all) h->special_id[h->b->ents[at].id] = true;
}

static int cmp_added(const void *x, const void *y) {
    const added_tok *a = x, *c = y;
    return a->id < c->id ? -1 : a->id > c->id;
}

/* get_added_vocab(): tokenizer.json's added_tokens, then those of
 * tokenizer_config.json's added_tokens_decoder whose text is not among them
 * (the tokenizer library keeps the first registration of a text); the ones
 * with an id >= base kept, by id. */
static gk_status added_vocab(bpe *b, const char *dir, const cJSON *tok, const cJSON *tc, size_t base, added_tok **out,
                             size_t *n_out, gk_error *err) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(tok, "added_tokens");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(tc, "added_tokens_decoder");
    size_t cap = (size_t)(cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0) + (size_t)(cJSON_IsObject(d) ? cJSON_GetArraySize(d) : 0);
    added_tok *v = calloc(cap ? cap : 1, sizeof *v);
    if (v == NULL) return nomem(err);
    size_t n = 0;
    for (const cJSON *e = cJSON_IsArray(a) ? a->child : NULL; e; e = e->next) {   /* checked in load_tokens */
        added_tok t = { cJSON_GetObjectItemCaseSensitive(e, "content")->valuestring,
                        (int64_t)cJSON_GetObjectItemCaseSensitive(e, "id")->valuedouble,
                        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "special")) };
        size_t i = 0;   /* a text twice: the later id wins, as in a dict */
        while (i < n && strcmp(v[i].text, t.text) != 0) i++;
        v[i] = t;
        n += i == n;
    }
    for (const cJSON *e = cJSON_IsObject(d) ? d->child : NULL; e; e = e->next) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "content");
        char *end;
        long long id = strtoll(e->string, &end, 10);
        if (!cJSON_IsString(c) || *e->string == '\0' || *end != '\0' || id < 0 || id > 0x7fffffff) {
            free(v);
            gk_error_set(err, GK_E_CORRUPT, -1, "added_tokens_decoder['%s'] has no valid id and content", e->string);
            char path[4096];
            snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
            gk_error_about(err, path);
            return GK_E_CORRUPT;
        }
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++) dup = strcmp(v[i].text, c->valuestring) == 0;
        if (dup) continue;
        if (put_entry(b, c->valuestring, id, true, err) != GK_OK) {
            free(v);
            return GK_E_NOMEM;
        }
        v[n++] = (added_tok){ c->valuestring, id, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "special")) };
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if ((size_t)v[i].id >= base) v[k++] = v[i];
    qsort(v, k, sizeof *v, cmp_added);
    *out = v;
    *n_out = k;
    return GK_OK;
}

static bool is_byte_token(const char *t) {
    static const char hex[] = "0123456789abcdefABCDEF";
    return strlen(t) == 6 && strncmp(t, "<0x", 3) == 0 && t[5] == '>' && t[3] && strchr(hex, t[3]) && t[4] &&
           strchr(hex, t[4]);
}

gk_status gk_conv_vocab_llama_hf(gk_model *m, const char *dir, const cJSON *config, int64_t vocab_size,
                                 gk_error *err) {
    enum { TT_BYTE = 6 };
    bpe b = { 0 };
    cJSON *tok = NULL, *tc = NULL, *map = NULL;
    added_tok *added = NULL;
    size_t n_added = 0, base = 0, n = 0;
    char **tokens = NULL;
    float *scores = NULL;
    int32_t *types = NULL;
    hf_state h = { &b, NULL, 0 };
    gk_status s = open_tokenizer(&b, dir, &tok, &tc, err);
    if (s == GK_OK) s = gk_hf_json_load(dir, "special_tokens_map.json", false, &map, err);
    /* tokenizer.vocab_size: the model's own vocabulary, without added tokens */
    if (s == GK_OK) base = b.n_model;   /* (a text twice in the JSON object counts once) */
    if (s == GK_OK) s = added_vocab(&b, dir, tok, tc, base, &added, &n_added, err);
    n = base + n_added;
    if (s == GK_OK && vocab_size >= 0 && n > (size_t)vocab_size) {
        gk_error_set(err, GK_E_CORRUPT, -1, "the tokenizer has %zu tokens, more than config.json's vocab_size %lld", n,
                     (long long)vocab_size);
        gk_error_about(err, b.path);
        s = GK_E_CORRUPT;
    }
    /* reverse_vocab over get_vocab() (the later text of an id wins); the
     * special ids: all_special_tokens' ids and the added tokens marked special */
    int64_t max_id = -1;
    for (size_t i = 0; s == GK_OK && i < b.n_ents; i++)
        if (b.ents[i].id > max_id) max_id = b.ents[i].id;
    for (size_t i = 0; s == GK_OK && i < n_added; i++)
        if (added[i].id > max_id) max_id = added[i].id;
    /* The id-indexed tables below are sized by the largest id: one far past
     * both the tokenizer's count and vocab_size (which no token list can
     * reach, and which would size them by the input's say) is refused first.
     * "Far": an id just past them gets the gap's own message below. */
    const int64_t id_limit = (vocab_size > (int64_t)n ? vocab_size : (int64_t)n) + (int64_t)n + 1;
    if (s == GK_OK && max_id >= id_limit)
        s = bad(err, &b, GK_E_CORRUPT, "token id %lld is far past the tokenizer's %zu tokens and config.json's vocab_size",
                (long long)max_id, n);
    h.n_all = (size_t)(max_id + 1);
    const entry **rev = NULL;
    if (s == GK_OK) {
        rev = calloc(h.n_all ? h.n_all : 1, sizeof *rev);
        h.special_id = calloc(h.n_all ? h.n_all : 1, sizeof *h.special_id);
        tokens = calloc(n ? n : 1, sizeof *tokens);
        scores = calloc(n ? n : 1, sizeof *scores);
        types = calloc(n ? n : 1, sizeof *types);
        if (rev == NULL || h.special_id == NULL || tokens == NULL || scores == NULL || types == NULL) s = nomem(err);
    }
    for (size_t i = 0; s == GK_OK && i < b.n_ents; i++) rev[b.ents[i].id] = &b.ents[i];
    if (s == GK_OK) {
        each_special(tc, mark_special, &h);
        each_special(map, mark_special, &h);
        for (size_t i = 0; i < n_added; i++)
            if (added[i].special) h.special_id[added[i].id] = true;
    }
    for (size_t i = 0; s == GK_OK && i < base; i++) {
        if (i >= h.n_all || rev[i] == NULL) {
            s = bad(err, &b, GK_E_CORRUPT, "model.vocab: no token has id %zu (below its size %zu)", i, base);
            break;
        }
        int32_t t = is_byte_token(rev[i]->text) ? TT_BYTE : h.special_id[i] ? TT_CONTROL : TT_NORMAL;
        if ((tokens[i] = strdup(rev[i]->text)) == NULL) s = nomem(err);
        scores[i] = -1000.0f, types[i] = t;
    }
    for (size_t i = 0; s == GK_OK && i < n_added; i++) {
        if ((tokens[base + i] = strdup(added[i].text)) == NULL) s = nomem(err);
        scores[base + i] = -1000.0f;
        types[base + i] = h.special_id[added[i].id] ? TT_CONTROL : TT_USER_DEFINED;
    }
    free(rev);
    free(h.special_id);
    free(added);
    if (s == GK_OK) s = gk_conv_vocab_llama_put(m, dir, config, tc, tok, tokens, scores, types, n, err);
    for (size_t i = 0; tokens && i < n; i++) free(tokens[i]);
    free(tokens);
    free(scores);
    free(types);
    free(b.ents);
    gk_hashmap_free(&b.by_text);
    free(b.path);
    cJSON_Delete(tok);
    cJSON_Delete(tc);
    cJSON_Delete(map);
    return s;
}
