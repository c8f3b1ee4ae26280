/*
 * edit.c - metadata edits: the queued operations (set, delete, rename, special
 * tokens), the rules that refuse dangerous ones (layout keys, key names against
 * the spec, types that contradict what llama.cpp expects of a well-known key),
 * and gk_edit_apply, which runs them in order over a model.
 *
 * Values given as text or JSON are converted only when applied, so a key set
 * by an earlier edit, or renamed, is seen with its new type by the later ones.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit/edit_internal.h"
#include "meta/keys.h"
#include "meta/model.h"
#include "util/grow.h"

typedef enum op_kind {
    OP_SET_TEXT,     /* a: key; text/len; type */
    OP_SET_VALUE,    /* a: key; value */
    OP_SET_JSON,     /* a: key; doc/item; type */
    OP_DELETE,       /* a: pattern */
    OP_RENAME,       /* a: old key; b: new key */
    OP_TOKEN_TEXT,   /* a: the *_token_id key; b: token text */
    OP_TOKEN_ID,     /* a: the *_token_id key; id */
} op_kind;

typedef struct edit_op {
    op_kind kind;
    char *a, *b;
    char *text;
    size_t len;
    type_spec type;
    gk_value value;
    const json_doc *doc;
    const cJSON *item;
    uint64_t id;
} edit_op;

struct gk_edit {
    edit_op *ops;
    size_t n, cap;
    json_doc **docs;
    size_t n_docs, cap_docs;
};

gk_edit *gk_edit_new(void) { return calloc(1, sizeof(gk_edit)); }

void gk_edit_free(gk_edit *e) {
    if (e == NULL) return;
    for (size_t i = 0; i < e->n; i++) {
        free(e->ops[i].a);
        free(e->ops[i].b);
        free(e->ops[i].text);
        gk_value_free(&e->ops[i].value);
    }
    for (size_t i = 0; i < e->n_docs; i++) {
        edit_json_free(e->docs[i]);
        free(e->docs[i]);
    }
    free(e->docs);
    free(e->ops);
    free(e);
}

size_t gk_edit_count(const gk_edit *e) { return e->n; }

/* Appends a zeroed op; @return : it, or NULL when out of memory. */
static edit_op *push_op(gk_edit *e, op_kind kind) {
    if (!GK_GROW(e->ops, e->cap, e->n + 1, 16)) return NULL;
    edit_op *op = &e->ops[e->n++];
    memset(op, 0, sizeof *op);
    op->kind = kind;
    return op;
}

/* Undoes the last push_op after a failed allocation. */
static gk_status pop_nomem(gk_edit *e, gk_error *err) {
    edit_op *op = &e->ops[--e->n];
    free(op->a);
    free(op->b);
    free(op->text);
    gk_value_free(&op->value);
    return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
}

const json_doc *edit_adopt_doc(gk_edit *e, json_doc *doc) {
    if (!GK_GROW(e->docs, e->cap_docs, e->n_docs + 1, 4)) return NULL;
    json_doc *kept = malloc(sizeof *kept);
    if (kept == NULL) return NULL;
    *kept = *doc;
    memset(doc, 0, sizeof *doc);
    e->docs[e->n_docs++] = kept;
    return kept;
}

gk_status gk_edit_add_set(gk_edit *e, const char *key, const char *type, const char *text, size_t len,
                          gk_error *err) {
    type_spec ts = { .kind = TS_NONE };
    if (type && !edit_type_parse(type, &ts))
        return gk_error_set(err, GK_E_ARG, -1,
                            "%s: unknown type '%s' (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str json array[T])",
                            key, type);
    edit_op *op = push_op(e, OP_SET_TEXT);
    if (op == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    op->type = ts;
    op->a = strdup(key);
    op->text = malloc(len + 1);
    if (op->a == NULL || op->text == NULL) return pop_nomem(e, err);
    memcpy(op->text, text, len);
    op->text[len] = '\0';
    op->len = len;
    return GK_OK;
}

gk_status gk_edit_add_set_value(gk_edit *e, const char *key, const gk_value *v, gk_error *err) {
    edit_op *op = push_op(e, OP_SET_VALUE);
    if (op == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    op->a = strdup(key);
    if (op->a == NULL || gk_value_copy(&op->value, v) != GK_OK) return pop_nomem(e, err);
    return GK_OK;
}

gk_status edit_add_set_json(gk_edit *e, const char *key, const json_doc *doc, const cJSON *item,
                            const type_spec *type, gk_error *err) {
    edit_op *op = push_op(e, OP_SET_JSON);
    if (op == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    op->a = strdup(key);
    if (op->a == NULL) return pop_nomem(e, err);
    op->doc = doc;
    op->item = item;
    op->type = *type;
    return GK_OK;
}

gk_status gk_edit_add_delete(gk_edit *e, const char *pattern, gk_error *err) {
    if (*pattern == '\0') return gk_error_set(err, GK_E_ARG, -1, "empty key to delete");
    edit_op *op = push_op(e, OP_DELETE);
    if (op == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    op->a = strdup(pattern);
    return op->a ? GK_OK : pop_nomem(e, err);
}

gk_status gk_edit_add_rename(gk_edit *e, const char *old_key, const char *new_key, gk_error *err) {
    if (*old_key == '\0' || *new_key == '\0') return gk_error_set(err, GK_E_ARG, -1, "rename needs OLD=NEW");
    edit_op *op = push_op(e, OP_RENAME);
    if (op == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    op->a = strdup(old_key);
    op->b = strdup(new_key);
    return op->a && op->b ? GK_OK : pop_nomem(e, err);
}

static gk_status add_token(gk_edit *e, op_kind kind, const char *name, const char *text, uint64_t id,
                           gk_error *err) {
    char *key = gk_special_token_key_named(name);
    if (key == NULL)
        return gk_error_set(err, GK_E_ARG, -1,
                            "unknown special token '%s' (bos eos eot eom unknown padding sep cls mask "
                            "fim_pre fim_suf fim_mid fim_pad fim_rep fim_sep)", name);
    edit_op *op = push_op(e, kind);
    if (op == NULL) {
        free(key);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    op->a = key;
    op->id = id;
    if (text && (op->b = strdup(text)) == NULL) return pop_nomem(e, err);
    return GK_OK;
}

gk_status gk_edit_add_special_token(gk_edit *e, const char *name, const char *text, gk_error *err) {
    return add_token(e, OP_TOKEN_TEXT, name, text, 0, err);
}

gk_status gk_edit_add_special_token_id(gk_edit *e, const char *name, uint64_t id, gk_error *err) {
    return add_token(e, OP_TOKEN_ID, name, NULL, id, err);
}

/* ------------------------------------------------------------------------ */
/* Rules                                                                    */
/* ------------------------------------------------------------------------ */

bool gk_key_name_valid(const char *key) {
    size_t n = strlen(key);
    if (n == 0 || n > 65535) return false;
    size_t seg = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = key[i];
        if (c == '.' || c == '\0') {
            if (seg == 0) return false;
            seg = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
            seg++;
        } else {
            return false;
        }
    }
    return true;
}

/* Keys that decide the file's layout or are not metadata at all. */
static bool is_layout_key(const char *key) {
    return strcmp(key, "general.alignment") == 0 || strncmp(key, "split.", 6) == 0 ||
           strncmp(key, "GGUF.", 5) == 0;
}

static gk_status refuse(gk_edit_result *res, gk_error *err, const char *fmt, const char *key) {
    res->refused = true;
    return gk_error_set(err, GK_E_ARG, -1, fmt, key);
}

/* Refuses writing key (set, or rename to it) unless forced. */
static gk_status check_writable(const gk_model *m, const char *key, bool force, gk_edit_result *res,
                                gk_error *err) {
    if (force) return GK_OK;
    if (strcmp(key, "general.alignment") == 0)
        return refuse(res, err, "%s: decides the data layout; change it with `ggufkit repack --alignment`", key);
    if (is_layout_key(key)) return refuse(res, err, "%s: split and GGUF keys describe the file's layout", key);
    if (strcmp(key, GK_PADDING_KEY) == 0)
        return refuse(res, err, "%s: is managed by ggufkit (use --reserve)", key);
    if (gk_kv_find(m, key) < 0 && !gk_key_name_valid(key))
        return refuse(res, err,
                      "%s: key names are ASCII lower_snake_case segments separated by dots, at most 65535 bytes",
                      key);
    return GK_OK;
}

static bool type_matches(const gk_value *v, gk_vtype type, gk_vtype elem, bool or_array) {
    if (v->type == type && (type != GK_V_ARR || v->arr.elem == elem)) return true;
    return or_array && v->type == GK_V_ARR && v->arr.elem == type;
}

/* Refuses a value whose type contradicts the well-known key's, unless forced. */
static gk_status check_type(const char *key, const gk_value *v, bool force, gk_edit_result *res,
                            gk_error *err) {
    gk_vtype type, elem;
    bool or_array;
    if (force || !gk_key_expected_type(key, &type, &elem, &or_array)) return GK_OK;
    if (type_matches(v, type, elem, or_array)) return GK_OK;
    char got[64];
    gk_value_type_label(v, GK_LABEL_SHORT, got, sizeof got);
    gk_value want = { .type = type };
    want.arr.elem = elem;
    char expected[64];
    gk_value_type_label(&want, GK_LABEL_SHORT, expected, sizeof expected);
    res->refused = true;
    return gk_error_set(err, GK_E_TYPE_MISMATCH, -1, "%s: llama.cpp expects %s%s, not %s", key, expected,
                        or_array ? " (or one per layer)" : "", got);
}

/* ------------------------------------------------------------------------ */
/* Applying                                                                 */
/* ------------------------------------------------------------------------ */

/* The type chain a well-known key expects: [T] or [ARR, E]. @return : its depth, 0 if unknown. */
static int known_chain(const char *key, gk_vtype chain[TYPE_CHAIN_MAX]) {
    gk_vtype type, elem;
    bool or_array;
    if (!gk_key_expected_type(key, &type, &elem, &or_array)) return 0;
    chain[0] = type;
    if (type != GK_V_ARR) return 1;
    chain[1] = elem;
    return 2;
}

/* Builds the value of a set from JSON item (doc given, or parsed from text). */
static gk_status value_from_json_op(const json_doc *doc, const cJSON *item, const type_spec *ts,
                                    const char *key, const gk_value *old, gk_value *out, gk_error *err) {
    gk_vtype chain[TYPE_CHAIN_MAX];
    if (ts->kind == TS_CHAIN) return edit_value_from_json(doc, item, ts->chain, ts->depth, old, key, out, err);
    if (ts->kind == TS_NONE && old) return edit_value_from_json(doc, item, NULL, 0, old, key, out, err);
    int depth = known_chain(key, chain);
    return edit_value_from_json(doc, item, chain, depth, NULL, key, out, err);
}

static gk_status value_from_text_json(const edit_op *op, const type_spec *ts, const gk_value *old,
                                      gk_value *out, gk_error *err) {
    json_doc doc;
    gk_error local;
    gk_status st = edit_json_parse(op->text, op->len, &doc, &local);
    if (st != GK_OK) return gk_error_set(err, st, -1, "%s: %s", op->a, local.message);
    st = value_from_json_op(&doc, doc.root, ts, op->a, old, out, err);
    edit_json_free(&doc);
    return st;
}

static gk_status value_from_text(const edit_op *op, const gk_value *old, gk_value *out, gk_error *err) {
    const type_spec *ts = &op->type;
    if (ts->kind == TS_JSON) return value_from_text_json(op, ts, old, out, err);
    if (ts->kind == TS_CHAIN) {
        if (ts->chain[0] == GK_V_ARR) return value_from_text_json(op, ts, old, out, err);
        return edit_scalar_from_text(ts->chain[0], op->text, op->len, op->a, out, err);
    }
    if (old) {
        if (old->type == GK_V_ARR) return value_from_text_json(op, ts, old, out, err);
        return edit_scalar_from_text(old->type, op->text, op->len, op->a, out, err);
    }
    gk_vtype chain[TYPE_CHAIN_MAX];
    if (known_chain(op->a, chain) > 0) {
        type_spec known = { .kind = TS_CHAIN };
        known.depth = known_chain(op->a, known.chain);
        if (known.chain[0] == GK_V_ARR) return value_from_text_json(op, &known, NULL, out, err);
        return edit_scalar_from_text(known.chain[0], op->text, op->len, op->a, out, err);
    }
    return edit_scalar_from_text(edit_infer_text(op->text, op->len), op->text, op->len, op->a, out, err);
}

static gk_status apply_set(gk_model *m, const edit_op *op, bool force, gk_edit_result *res, gk_error *err) {
    const gk_value *old = gk_kv_get(m, op->a);
    gk_value v;
    memset(&v, 0, sizeof v);
    gk_status st;
    if (op->kind == OP_SET_VALUE) st = gk_value_copy(&v, &op->value) == GK_OK ? GK_OK : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    else if (op->kind == OP_SET_TEXT) st = value_from_text(op, old, &v, err);
    else st = value_from_json_op(op->doc, op->item, &op->type, op->a, old, &v, err);
    /* Setting a value it already has changes nothing, so nothing is refused
     * (a dump of a shard patched back onto it, split.* included). */
    if (st == GK_OK && old && gk_value_equal(old, &v)) {
        gk_value_free(&v);
        return GK_OK;
    }
    if (st == GK_OK) st = check_writable(m, op->a, force, res, err);
    if (st == GK_OK) st = check_type(op->a, &v, force, res, err);
    if (st == GK_OK) st = gk_layout_value_check(op->a, &v, err);
    if (st == GK_OK) st = gk_kv_set(m, op->a, &v, err);
    if (st == GK_OK) res->n_set++;
    gk_value_free(&v);
    return st;
}

/* A key that is the pattern itself is deleted alone: a literal key holding glob
 * characters ("x*y") never takes others ("xzy") with it. Otherwise the pattern is
 * an fnmatch(3) glob, where a backslash escapes the next character ("x\*y"
 * matches only the key "x*y"). */
static gk_status apply_delete(gk_model *m, const char *pattern, bool force, gk_edit_result *res, gk_error *err) {
    bool glob = strpbrk(pattern, "*?[\\") != NULL && gk_kv_find(m, pattern) < 0;
    size_t n = gk_kv_count(m), found = 0;
    char **names = calloc(n + 1, sizeof *names);
    if (names == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status st = GK_OK;
    for (size_t i = 0; i < n && st == GK_OK; i++) {
        const char *key = gk_kv_at(m, i)->key.ptr;
        if (!(strcmp(key, pattern) == 0 || (glob && fnmatch(pattern, key, 0) == 0))) continue;
        if (!force && is_layout_key(key)) {
            res->refused = true;
            st = gk_error_set(err, GK_E_ARG, -1, "%s: deleting '%s' would change the file's layout", pattern, key);
        } else if ((names[found++] = strdup(key)) == NULL) {
            st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
    }
    if (st == GK_OK && found == 0) st = gk_error_set(err, GK_E_NOT_FOUND, -1, "%s: no such key", pattern);
    for (size_t i = 0; st == GK_OK && i < found; i++) {
        gk_kv_delete(m, names[i]);
        res->n_deleted++;
    }
    for (size_t i = 0; i < found; i++) free(names[i]);
    free(names);
    return st;
}

static gk_status apply_rename(gk_model *m, const edit_op *op, bool force, gk_edit_result *res, gk_error *err) {
    if (gk_kv_find(m, op->a) < 0) return gk_error_set(err, GK_E_NOT_FOUND, -1, "%s: no such key", op->a);
    if (!force && (is_layout_key(op->a) || strcmp(op->a, GK_PADDING_KEY) == 0))
        return refuse(res, err, "%s: cannot be renamed (it describes the file's layout)", op->a);
    if (strcmp(op->a, op->b) == 0) return GK_OK;
    if (gk_kv_find(m, op->b) >= 0) return gk_error_set(err, GK_E_EXISTS, -1, "%s: key already exists", op->b);
    gk_status st = check_writable(m, op->b, force, res, err);
    if (st == GK_OK) st = check_type(op->b, gk_kv_get(m, op->a), force, res, err);
    if (st == GK_OK) st = gk_layout_value_check(op->b, gk_kv_get(m, op->a), err);
    if (st == GK_OK) st = gk_kv_rename(m, op->a, op->b, err);
    if (st == GK_OK) res->n_renamed++;
    return st;
}

static gk_status apply_token(gk_model *m, const edit_op *op, bool force, gk_edit_result *res, gk_error *err) {
    const gk_value *tokens = gk_kv_get(m, "tokenizer.ggml.tokens");
    if (tokens == NULL || tokens->type != GK_V_ARR || tokens->arr.elem != GK_V_STR)
        return gk_error_set(err, GK_E_NOT_FOUND, -1, "%s: the file has no vocabulary (tokenizer.ggml.tokens)", op->a);
    uint64_t id = op->id;
    if (op->kind == OP_TOKEN_TEXT) {
        const gk_str *items = tokens->arr.data;
        size_t len = strlen(op->b);
        for (id = 0; id < tokens->arr.n; id++)
            if (items[id].len == len && memcmp(items[id].ptr, op->b, len) == 0) break;
        if (id == tokens->arr.n)
            return gk_error_set(err, GK_E_NOT_FOUND, -1, "%s: token \"%s\" is not in the vocabulary", op->a, op->b);
    } else if (id >= tokens->arr.n) {
        return gk_error_set(err, GK_E_ARG, -1, "%s: id %llu is outside the vocabulary (%llu tokens)", op->a,
                            (unsigned long long)id, (unsigned long long)tokens->arr.n);
    }
    gk_status st = check_writable(m, op->a, force, res, err);
    if (st != GK_OK) return st;
    gk_value v = { .type = GK_V_U32, .u = id };
    st = gk_kv_set(m, op->a, &v, err);
    if (st == GK_OK) res->n_set++;
    return st;
}

gk_status gk_edit_apply(const gk_edit *e, gk_model *m, unsigned flags, gk_edit_result *res, gk_error *err) {
    gk_edit_result local;
    if (res == NULL) res = &local;
    memset(res, 0, sizeof *res);
    bool force = (flags & GK_EDIT_FORCE) != 0;
    for (size_t i = 0; i < e->n; i++) {
        const edit_op *op = &e->ops[i];
        gk_status st;
        switch (op->kind) {
        case OP_SET_TEXT:
        case OP_SET_VALUE:
        case OP_SET_JSON: st = apply_set(m, op, force, res, err); break;
        case OP_DELETE: st = apply_delete(m, op->a, force, res, err); break;
        case OP_RENAME: st = apply_rename(m, op, force, res, err); break;
        default: st = apply_token(m, op, force, res, err); break;
        }
        if (st != GK_OK) return st;
    }
    return GK_OK;
}
