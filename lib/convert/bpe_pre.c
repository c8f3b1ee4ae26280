/*
 * bpe_pre.c - the check-text digest of a Hugging Face BPE tokenizer
 * (bpe_pre.h). The encoder follows the tokenizers library's order: added
 * tokens are cut out first (leftmost, longest), the rest is normalized,
 * split by the pre-tokenizer steps (Split, ByteLevel, Digits, Punctuation,
 * Sequence; regexes on PCRE2 with UTF and Unicode properties, whose line
 * anchors behave as the Oniguruma syntax the library uses), each piece is
 * merged by rank, and the post-processor adds its special tokens.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/bpe_pre.h"
#include "io/digest.h"
#include "util/grow.h"

/* The reference's check text (get_vocab_base_pre), as UTF-8. */
static const char check_text[] =
    "\x0a \x0a\x0a \x0a\x0a\x0a \x09 \x09\x09 \x09\x0a  \x0a   \x0a    \x0a     \x0a\xf0\x9f\x9a\x80 "
    "(normal) \xf0\x9f\x98\xb6\xe2\x80\x8d\xf0\x9f\x8c\xab\xef\xb8\x8f (multiple emojis concatenated)"
    " \xe2\x9c\x85 \xf0\x9f\xa6\x99\xf0\x9f\xa6\x99 3 33 333 3333 33333 333333 3333333 33333333 3.3 3"
    "..3 3...3 \xe1\x9e\x80\xe1\x9e\xb6\xe1\x9e\x93\xe1\x9f\x8b\xe1\x9e\x8f\xe1\x9f\x82\xe1\x9e\x96\xe1"
    "\x9e\xb7\xe1\x9e\x9f\xe1\x9f\x81\xe1\x9e\x9f\xe1\x9e\xa2\xe1\x9e\xb6\xe1\x9e\x85\xf0\x9f\x98\x81"
    " \x3f\xe6\x88\x91\xe6\x83\xb3\xe5\x9c\xa8""apple\xe5\xb7\xa5\xe4\xbd\x9c""1314151\xe5\xa4\xa9\xef"
    "\xbd\x9e ------======= \xd0\xbd\xd0\xb5\xd1\x89\xd0\xbe \xd0\xbd\xd0\xb0 \xd0\x91\xd1\x8a\xd0\xbb"
    "\xd0\xb3\xd0\xb0\xd1\x80\xd1\x81\xd0\xba\xd0\xb8 ''''''```````\x22\x22\x22\x22......!!!!!!\x3f\x3f"
    "\x3f\x3f\x3f\x3f I've been 'told he's there, 'RE you sure\x3f 'M not sure I'll make it, 'D you l"
    "ike some tea\x3f We'Ve a'lL";

/* The byte-level pre-tokenizer's own split (GPT-2's pattern). */
static const char gpt2_pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

typedef struct piece {
    char *s;
    size_t n;
} piece;

typedef struct plist {
    piece *p;
    size_t n, cap;
} plist;

typedef struct ids {
    int64_t *v;
    size_t n, cap;
} ids;

static void plist_free(plist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->p[i].s);
    free(l->p);
    *l = (plist){ 0 };
}

static gk_status nomem(gk_error *err) { return gk_error_set(err, GK_E_NOMEM, -1, "out of memory"); }

/* Appends a copy of a (na bytes) followed by b (nb bytes). */
static gk_status plist_push2(plist *l, const char *a, size_t na, const char *b, size_t nb, gk_error *err) {
    if (!GK_GROW(l->p, l->cap, l->n + 1, 16)) return nomem(err);
    char *s = malloc(na + nb + 1);
    if (s == NULL) return nomem(err);
    if (na) memcpy(s, a, na);
    if (nb) memcpy(s + na, b, nb);
    s[na + nb] = '\0';
    l->p[l->n++] = (piece){ s, na + nb };
    return GK_OK;
}

static gk_status plist_push(plist *l, const char *a, size_t na, gk_error *err) {
    return plist_push2(l, a, na, NULL, 0, err);
}

static gk_status ids_push(ids *v, int64_t id, gk_error *err) {
    if (!GK_GROW(v->v, v->cap, v->n + 1, 64)) return nomem(err);
    v->v[v->n++] = id;
    return GK_OK;
}

static size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4; }

static const char *jstr(const cJSON *o, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

static gk_status unsupported(gk_error *err, const char *what, const char *type) {
    gk_error_set(err, GK_E_UNSUPPORTED, -1, "tokenizer.json: %s '%s' is not implemented", what, type ? type : "?");
    return GK_E_UNSUPPORTED;
}

/* ------------------------------------------------------------------------ */
/* Split steps                                                              */
/* ------------------------------------------------------------------------ */

enum { B_REMOVED, B_ISOLATED, B_PREV, B_NEXT, B_CONTIGUOUS };

static int behavior_of(const char *b) {
    if (b == NULL) return B_ISOLATED;
    if (strcmp(b, "Removed") == 0) return B_REMOVED;
    if (strcmp(b, "Isolated") == 0) return B_ISOLATED;
    if (strcmp(b, "MergedWithPrevious") == 0) return B_PREV;
    if (strcmp(b, "MergedWithNext") == 0) return B_NEXT;
    if (strcmp(b, "Contiguous") == 0) return B_CONTIGUOUS;
    return -1;
}

typedef struct span {
    size_t a, b;
    bool match;
} span;

/* Splits every piece of *l by the matches of code, as behavior says. */
static gk_status split_by(plist *l, pcre2_code *code, int behavior, bool invert, gk_error *err) {
    plist out = { 0 };
    span *sp = NULL;
    size_t cap = 0;
    gk_status s = GK_OK;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    if (md == NULL) return nomem(err);
    for (size_t i = 0; i < l->n && s == GK_OK; i++) {
        const char *t = l->p[i].s;
        size_t n = l->p[i].n, ns = 0, last = 0, off = 0;
        while (off <= n && s == GK_OK) {
            int rc = pcre2_match(code, (PCRE2_SPTR)t, n, off, 0, md, NULL);
            if (rc == PCRE2_ERROR_NOMATCH) break;
            if (rc < 0) {   /* a match or depth limit, say: no silent half split */
                PCRE2_UCHAR msg[160];
                pcre2_get_error_message(rc, msg, sizeof msg);
                s = gk_error_set(err, GK_E_UNSUPPORTED, -1, "tokenizer.json: a pre_tokenizer regex failed: %s",
                                 (const char *)msg);
                break;
            }
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            size_t ma = ov[0], mb = ov[1];
            if (mb == ma) {   /* empty matches split nothing */
                if (ma >= n) break;
                off = ma + utf8_len((unsigned char)t[ma]);
                continue;
            }
            if (!GK_GROW(sp, cap, ns + 2, 16)) s = nomem(err);
            if (s != GK_OK) break;
            if (ma > last) sp[ns++] = (span){ last, ma, false };
            sp[ns++] = (span){ ma, mb, true };
            last = off = mb;
        }
        if (s == GK_OK && last < n) {
            if (!GK_GROW(sp, cap, ns + 1, 16)) s = nomem(err);
            else sp[ns++] = (span){ last, n, false };
        }
        if (invert)
            for (size_t k = 0; k < ns; k++) sp[k].match = !sp[k].match;
        /* the pending piece for MergedWithNext / Contiguous */
        size_t pa = 0, pb = 0;
        bool pending = false;
        for (size_t k = 0; k < ns && s == GK_OK; k++) {
            span x = sp[k];
            switch (behavior) {
            case B_REMOVED:
                if (!x.match) s = plist_push(&out, t + x.a, x.b - x.a, err);
                break;
            case B_ISOLATED:
                s = plist_push(&out, t + x.a, x.b - x.a, err);
                break;
            case B_PREV:
                if (x.match && k > 0) {   /* the last piece grows by the match */
                    piece pr = out.p[--out.n];
                    s = plist_push2(&out, pr.s, pr.n, t + x.a, x.b - x.a, err);
                    if (s == GK_OK) free(pr.s);
                    else out.p[out.n++] = pr;
                } else {
                    s = plist_push(&out, t + x.a, x.b - x.a, err);
                }
                break;
            case B_NEXT:
            case B_CONTIGUOUS:   /* matches gather until a non-match ... */
                if (x.match) {
                    if (!pending) pa = x.a;
                    pending = true, pb = x.b;
                    break;
                }
                if (behavior == B_NEXT) {   /* ... which they join */
                    s = plist_push(&out, t + (pending ? pa : x.a), x.b - (pending ? pa : x.a), err);
                } else {   /* ... before which they are one piece */
                    if (pending) s = plist_push(&out, t + pa, pb - pa, err);
                    if (s == GK_OK) s = plist_push(&out, t + x.a, x.b - x.a, err);
                }
                pending = false;
                break;
            }
        }
        if (s == GK_OK && pending) s = plist_push(&out, t + pa, pb - pa, err);
    }
    pcre2_match_data_free(md);
    free(sp);
    if (s != GK_OK) {
        plist_free(&out);
        return s;
    }
    plist_free(l);
    *l = out;
    return GK_OK;
}

static gk_status split_pattern(plist *l, const char *pattern, bool literal, int behavior, bool invert, gk_error *err) {
    int ec;
    PCRE2_SIZE eo;
    uint32_t flags = PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | (literal ? PCRE2_LITERAL : 0);
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, flags, &ec, &eo, NULL);
    if (code == NULL) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return gk_error_set(err, GK_E_CORRUPT, -1, "tokenizer.json: pre_tokenizer regex '%s' does not compile at %zu: %s",
                            pattern, (size_t)eo, (const char *)msg);
    }
    gk_status s = split_by(l, code, behavior, invert, err);
    pcre2_code_free(code);
    return s;
}

/* Byte b as the byte-level alphabet's character (GPT-2's byte map), UTF-8. */
static size_t byte_char(unsigned b, char out[2]) {
    unsigned cp;
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) {
        cp = b;
    } else {
        /* the others in byte order from U+0100: 0..32, then 127..160, then 173 */
        cp = 256 + (b <= 32 ? b : b <= 160 ? b - 94 : 67);
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    out[0] = (char)(0xc0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
}

static gk_status byte_level(plist *l, const cJSON *step, bool *byte_mapped, gk_error *err) {
    const cJSON *aps = cJSON_GetObjectItemCaseSensitive(step, "add_prefix_space");
    const cJSON *ur = cJSON_GetObjectItemCaseSensitive(step, "use_regex");
    gk_status s = GK_OK;
    if (cJSON_IsTrue(aps)) {
        for (size_t i = 0; i < l->n && s == GK_OK; i++) {
            if (l->p[i].n > 0 && l->p[i].s[0] == ' ') continue;
            plist one = { 0 };
            s = plist_push2(&one, " ", 1, l->p[i].s, l->p[i].n, err);
            if (s == GK_OK) {
                free(l->p[i].s);
                l->p[i] = one.p[0];
                free(one.p);
            }
        }
    }
    if (s == GK_OK && (ur == NULL || cJSON_IsTrue(ur))) s = split_pattern(l, gpt2_pattern, false, B_ISOLATED, false, err);
    for (size_t i = 0; i < l->n && s == GK_OK; i++) {
        char *m = malloc(2 * l->p[i].n + 1);
        if (m == NULL) return nomem(err);
        size_t k = 0;
        for (size_t j = 0; j < l->p[i].n; j++) k += byte_char((unsigned char)l->p[i].s[j], m + k);
        m[k] = '\0';
        free(l->p[i].s);
        l->p[i] = (piece){ m, k };
    }
    *byte_mapped = true;
    return s;
}

static gk_status pre_step(plist *l, const cJSON *step, bool *byte_mapped, gk_error *err) {
    const char *type = jstr(step, "type");
    if (type == NULL) return unsupported(err, "pre_tokenizer", "(no type)");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(step, "pretokenizers");
        gk_status s = GK_OK;
        for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e && s == GK_OK; e = e->next)
            s = pre_step(l, e, byte_mapped, err);
        return s;
    }
    if (strcmp(type, "ByteLevel") == 0) return byte_level(l, step, byte_mapped, err);
    if (strcmp(type, "Split") == 0) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(step, "pattern");
        const char *re = jstr(pat, "Regex"), *lit = jstr(pat, "String");
        int b = behavior_of(jstr(step, "behavior"));
        if ((re == NULL && lit == NULL) || b < 0) return unsupported(err, "Split pre_tokenizer with pattern/behavior", jstr(step, "behavior"));
        return split_pattern(l, re ? re : lit, re == NULL, b, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(step, "invert")), err);
    }
    if (strcmp(type, "Digits") == 0) {
        bool one = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(step, "individual_digits"));
        return split_pattern(l, one ? "\\p{N}" : "\\p{N}+", false, B_ISOLATED, false, err);
    }
    if (strcmp(type, "Punctuation") == 0) {
        int b = behavior_of(jstr(step, "behavior"));
        if (b < 0) return unsupported(err, "Punctuation behavior", jstr(step, "behavior"));
        return split_pattern(l, "[\\p{P}!-/:-@\\[-`{-~]", false, b, false, err);
    }
    return unsupported(err, "pre_tokenizer", type);
}

/* ------------------------------------------------------------------------ */
/* BPE                                                                      */
/* ------------------------------------------------------------------------ */

static gk_status bpe_piece(const gk_bpe_model *m, const cJSON *model, const piece *p, ids *out, gk_error *err) {
    if (p->n == 0) return GK_OK;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "ignore_merges"))) {
        int64_t id = m->lookup(m, p->s, p->n);
        if (id >= 0) return ids_push(out, id, err);
    }
    /* symbols as (offset, length) into p->s */
    size_t n = 0, *off = malloc((p->n + 1) * sizeof *off), *len = malloc((p->n + 1) * sizeof *len);
    if (off == NULL || len == NULL) {
        free(off), free(len);
        return nomem(err);
    }
    for (size_t i = 0; i < p->n;) {
        size_t k = utf8_len((unsigned char)p->s[i]);
        if (i + k > p->n) k = p->n - i;
        off[n] = i, len[n++] = k;
        i += k;
    }
    for (;;) {
        int64_t best = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < n; i++) {
            int64_t r = m->rank(m, p->s + off[i], len[i], p->s + off[i + 1], len[i + 1]);
            if (r >= 0 && (best < 0 || r < best)) best = r, at = i;
        }
        if (best < 0) break;
        len[at] += len[at + 1];
        memmove(off + at + 1, off + at + 2, (n - at - 2) * sizeof *off);
        memmove(len + at + 1, len + at + 2, (n - at - 2) * sizeof *len);
        n--;
    }
    const char *unk = jstr(model, "unk_token");
    bool fallback = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "byte_fallback"));
    bool fuse = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "fuse_unk"));
    int64_t unk_id = unk ? m->lookup(m, unk, strlen(unk)) : -1;
    gk_status s = GK_OK;
    bool last_unk = false;
    for (size_t i = 0; i < n && s == GK_OK; i++) {
        int64_t id = m->lookup(m, p->s + off[i], len[i]);
        if (id >= 0) {
            s = ids_push(out, id, err);
            last_unk = false;
            continue;
        }
        if (fallback) {
            bool all = true;
            int64_t bid[4];
            for (size_t j = 0; j < len[i] && j < 4 && all; j++) {
                char name[8];
                snprintf(name, sizeof name, "<0x%02X>", (unsigned char)p->s[off[i] + j]);
                bid[j] = m->lookup(m, name, strlen(name));
                all = bid[j] >= 0;
            }
            if (all) {
                for (size_t j = 0; j < len[i] && s == GK_OK; j++) s = ids_push(out, bid[j], err);
                last_unk = false;
                continue;
            }
        }
        if (unk_id >= 0 && !(fuse && last_unk)) s = ids_push(out, unk_id, err);
        last_unk = unk_id >= 0;
    }
    free(off), free(len);
    return s;
}

/* ------------------------------------------------------------------------ */
/* The whole encode                                                         */
/* ------------------------------------------------------------------------ */

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* The longest added token at text[i]: its id, or -1; *b is where the text
 * after it starts (past the spaces an rstrip token takes), *lstrip whether it
 * takes the spaces before it. */
static int64_t added_at(const cJSON *added, const char *t, size_t n, size_t i, bool *lstrip, size_t *b) {
    int64_t best = -1;
    size_t best_len = 0;
    for (const cJSON *e = added ? added->child : NULL; e; e = e->next) {
        const char *c = jstr(e, "content");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        size_t k = c ? strlen(c) : 0;
        if (k == 0 || k <= best_len || i + k > n || memcmp(t + i, c, k) != 0 || !cJSON_IsNumber(id)) continue;
        best = (int64_t)id->valuedouble, best_len = k;
        size_t hi = i + k;
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "rstrip")))
            while (hi < n && is_space(t[hi])) hi++;
        *b = hi;
        *lstrip = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "lstrip"));
    }
    return best;
}

static gk_status check_normalizer(const cJSON *n, gk_error *err) {
    if (n == NULL || cJSON_IsNull(n)) return GK_OK;
    const char *type = jstr(n, "type");
    if (type && strcmp(type, "NFC") == 0) return GK_OK;   /* the check text is in NFC already */
    if (type && strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers");
        gk_status s = GK_OK;
        for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e && s == GK_OK; e = e->next)
            s = check_normalizer(e, err);
        return s;
    }
    return unsupported(err, "normalizer", type);
}

/* A special token's ids from a TemplateProcessing's special_tokens map. */
static gk_status template_special(const gk_bpe_model *m, const cJSON *proc, const char *name, ids *out, gk_error *err) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(proc, "special_tokens"), name);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(st, "ids");
    if (!cJSON_IsArray(list)) {
        int64_t id = m->lookup(m, name, strlen(name));
        return id >= 0 ? ids_push(out, id, err) : GK_OK;
    }
    gk_status s = GK_OK;
    for (const cJSON *e = list->child; e && s == GK_OK; e = e->next)
        if (cJSON_IsNumber(e)) s = ids_push(out, (int64_t)e->valuedouble, err);
    return s;
}

/* A [text, id] pair of RobertaProcessing / BertProcessing. */
static gk_status pair_id(const cJSON *pair, ids *out, gk_error *err) {
    const cJSON *id = cJSON_GetArrayItem(pair, 1);
    return cJSON_IsNumber(id) ? ids_push(out, (int64_t)id->valuedouble, err) : GK_OK;
}

static gk_status post_process(const gk_bpe_model *m, const cJSON *proc, ids *v, gk_error *err) {
    const char *type = jstr(proc, "type");
    if (proc == NULL || cJSON_IsNull(proc) || type == NULL) return GK_OK;
    if (strcmp(type, "ByteLevel") == 0) return GK_OK;
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(proc, "processors");
        gk_status s = GK_OK;
        for (const cJSON *e = cJSON_IsArray(list) ? list->child : NULL; e && s == GK_OK; e = e->next)
            s = post_process(m, e, v, err);
        return s;
    }
    ids out = { 0 };
    gk_status s = GK_OK;
    if (strcmp(type, "TemplateProcessing") == 0) {
        const cJSON *single = cJSON_GetObjectItemCaseSensitive(proc, "single");
        for (const cJSON *e = cJSON_IsArray(single) ? single->child : NULL; e && s == GK_OK; e = e->next) {
            const cJSON *sp = cJSON_GetObjectItemCaseSensitive(e, "SpecialToken");
            if (sp) {
                s = template_special(m, proc, jstr(sp, "id") ? jstr(sp, "id") : "", &out, err);
            } else {
                for (size_t i = 0; i < v->n && s == GK_OK; i++) s = ids_push(&out, v->v[i], err);
            }
        }
    } else if (strcmp(type, "RobertaProcessing") == 0 || strcmp(type, "BertProcessing") == 0) {
        s = pair_id(cJSON_GetObjectItemCaseSensitive(proc, "cls"), &out, err);
        for (size_t i = 0; i < v->n && s == GK_OK; i++) s = ids_push(&out, v->v[i], err);
        if (s == GK_OK) s = pair_id(cJSON_GetObjectItemCaseSensitive(proc, "sep"), &out, err);
    } else {
        s = unsupported(err, "post_processor", type);
    }
    if (s != GK_OK) {
        free(out.v);
        return s;
    }
    free(v->v);
    *v = out;
    return GK_OK;
}

/* The text of tokenizer_config.json's token entry key (a string or an
 * object with a content). */
static const char *config_token(const cJSON *tc, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(tc, key);
    if (cJSON_IsString(j)) return j->valuestring;
    return jstr(j, "content");
}

/* transformers' Llama tokenizer classes rebuild the post-processor from
 * add_bos_token (default true) and add_eos_token (default false). */
static bool llama_class(const cJSON *tc, bool *bos, bool *eos) {
    const char *cls = jstr(tc, "tokenizer_class");
    if (cls == NULL || (strcmp(cls, "LlamaTokenizer") != 0 && strcmp(cls, "LlamaTokenizerFast") != 0 &&
                        strcmp(cls, "CodeLlamaTokenizer") != 0 && strcmp(cls, "CodeLlamaTokenizerFast") != 0))
        return false;
    const cJSON *ab = cJSON_GetObjectItemCaseSensitive(tc, "add_bos_token");
    const cJSON *ae = cJSON_GetObjectItemCaseSensitive(tc, "add_eos_token");
    *bos = ab == NULL || !cJSON_IsBool(ab) || cJSON_IsTrue(ab);
    *eos = cJSON_IsTrue(ae);
    return true;
}

static gk_status encode(const gk_bpe_model *m, const char *t, size_t n, ids *v, gk_error *err) {
    const cJSON *tok = m->tokenizer, *model = cJSON_GetObjectItemCaseSensitive(tok, "model");
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(tok, "added_tokens");
    gk_status s = check_normalizer(cJSON_GetObjectItemCaseSensitive(tok, "normalizer"), err);
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(tok, "pre_tokenizer");
    size_t seg = 0;
    for (size_t i = 0; i <= n && s == GK_OK;) {
        size_t b = 0;
        bool lstrip = false;
        int64_t id = i < n ? added_at(cJSON_IsArray(added) ? added : NULL, t, n, i, &lstrip, &b) : -1;
        if (id < 0 && i < n) {
            i++;
            continue;
        }
        size_t end = i;
        if (id >= 0 && lstrip)   /* the spaces before go with the token */
            while (end > seg && is_space(t[end - 1])) end--;
        if (end > seg) {   /* the text before: pre-tokenized and merged */
            plist l = { 0 };
            bool mapped = false;
            s = plist_push(&l, t + seg, end - seg, err);
            if (s == GK_OK && pre && !cJSON_IsNull(pre)) s = pre_step(&l, pre, &mapped, err);
            for (size_t k = 0; k < l.n && s == GK_OK; k++) s = bpe_piece(m, model, &l.p[k], v, err);
            plist_free(&l);
        }
        if (id < 0) break;
        if (s == GK_OK) s = ids_push(v, id, err);
        i = seg = b;
    }
    if (s != GK_OK) return s;
    bool bos, eos;
    if (m->tconfig && llama_class(m->tconfig, &bos, &eos)) {
        const char *bt = config_token(m->tconfig, "bos_token"), *et = config_token(m->tconfig, "eos_token");
        int64_t bi = bt ? m->lookup(m, bt, strlen(bt)) : -1, ei = et ? m->lookup(m, et, strlen(et)) : -1;
        ids out = { 0 };
        if (bos && bi >= 0) s = ids_push(&out, bi, err);
        for (size_t i = 0; i < v->n && s == GK_OK; i++) s = ids_push(&out, v->v[i], err);
        if (s == GK_OK && eos && ei >= 0) s = ids_push(&out, ei, err);
        free(v->v);
        *v = out;
        return s;
    }
    return post_process(m, cJSON_GetObjectItemCaseSensitive(tok, "post_processor"), v, err);
}

gk_status gk_bpe_encode(const gk_bpe_model *m, const char *text, size_t n, int64_t **out, size_t *n_out,
                        gk_error *err) {
    ids v = { 0 };
    gk_status s = encode(m, text, n, &v, err);
    if (s != GK_OK) {
        free(v.v);
        return s;
    }
    *out = v.v;
    *n_out = v.n;
    return GK_OK;
}

gk_status gk_bpe_pre_digest(const gk_bpe_model *m, char hex[65], gk_error *err) {
    ids v = { 0 };
    gk_status s = encode(m, check_text, sizeof check_text - 1, &v, err);
    char *text = NULL;
    if (s == GK_OK) {
        text = malloc(v.n * 22 + 3);
        if (text == NULL) s = nomem(err);
    }
    if (s == GK_OK) {
        size_t k = 0;
        text[k++] = '[';
        for (size_t i = 0; i < v.n; i++) k += (size_t)sprintf(text + k, i ? ", %lld" : "%lld", (long long)v.v[i]);
        text[k++] = ']';
        gk_hash_value h;
        s = gk_digest_once(GK_HASH_SHA256, text, k, &h, err);
        for (size_t i = 0; i < 32 && s == GK_OK; i++) sprintf(hex + 2 * i, "%02x", h.bytes[i]);
    }
    free(text);
    free(v.v);
    return s;
}
