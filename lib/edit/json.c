/*
 * json.c - JSON for metadata edits: documents parsed by cJSON with every number
 * and string also kept exactly as written (cJSON holds numbers as doubles, which
 * cannot carry 64-bit integers, and strings as C strings, which end at \u0000),
 * and the conversion of JSON values and of command-line text to typed metadata
 * values.
 *
 * Exactness works by a second, lexical pass over the text: it lists the scalar
 * value tokens (strings that are not object keys, and numbers) in document
 * order, which is the order of a pre-order walk of cJSON's tree. Each string or
 * number item's valueint is then set to its token's index.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "edit/edit_internal.h"
#include "util/chars.h"
#include "util/grow.h"

/* ------------------------------------------------------------------------ */
/* Lexical pass                                                             */
/* ------------------------------------------------------------------------ */

typedef struct tok_list {
    json_tok *items;
    size_t n, cap;
} tok_list;

static bool tok_push(tok_list *l, char *bytes, size_t len, bool is_string) {
    if (!GK_GROW(l->items, l->cap, l->n + 1, 64)) return false;
    l->items[l->n++] = (json_tok){ bytes, len, is_string };
    return true;
}

static bool read_hex4(const char *p, const char *end, uint32_t *out) {
    if (end - p < 4) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int d = gk_hex_digit(p[i]);
        if (d < 0) return false;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return true;
}

static size_t put_utf8(char *dst, uint32_t cp) {
    if (cp < 0x80) { dst[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | cp >> 6);
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | cp >> 12);
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | cp >> 18);
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes the string token starting at the quote *p; advances *p past the closing
 * quote. @return : malloc'ed bytes (NUL terminated) or NULL (bad escape, NOMEM). */
static char *decode_string(const char **p, const char *end, size_t *len) {
    const char *s = *p + 1;
    const char *q = s;
    while (q < end && *q != '"') q += (*q == '\\' && q + 1 < end) ? 2 : 1;
    if (q >= end) return NULL;
    char *out = malloc((size_t)(q - s) + 1);
    if (out == NULL) return NULL;
    size_t n = 0;
    while (s < q) {
        if (*s != '\\') {
            out[n++] = *s++;
            continue;
        }
        char c = s[1];
        s += 2;
        switch (c) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            uint32_t cp, lo;
            if (!read_hex4(s, q, &cp)) goto bad;
            s += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (q - s < 6 || s[0] != '\\' || s[1] != 'u' || !read_hex4(s + 2, q, &lo) ||
                    lo < 0xDC00 || lo > 0xDFFF)
                    goto bad;
                s += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                goto bad;
            }
            n += put_utf8(out + n, cp);   /* never longer than the 6+ escape bytes */
            break;
        }
        default: goto bad;
        }
    }
    out[n] = '\0';
    *len = n;
    *p = q + 1;
    return out;
bad:
    free(out);
    return NULL;
}

/* Lists the value tokens of text (already known to be valid JSON). */
static bool scan_tokens(const char *text, size_t len, tok_list *l) {
    const char *p = text, *end = text + len;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            size_t n;
            char *bytes = decode_string(&p, end, &n);
            if (bytes == NULL) return false;
            const char *after = p;
            while (after < end && isspace((unsigned char)*after)) after++;
            if (after < end && *after == ':') {
                free(bytes);   /* an object key */
                continue;
            }
            if (!tok_push(l, bytes, n, true)) {
                free(bytes);
                return false;
            }
        } else if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I') {
            /* numbers, and the NaN / Infinity / -Infinity that Python's json writes */
            const char *s = p;
            while (p < end && (isalnum((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.')) p++;
            char *bytes = strndup(s, (size_t)(p - s));
            if (bytes == NULL || !tok_push(l, bytes, (size_t)(p - s), false)) {
                free(bytes);
                return false;
            }
        } else {
            p++;
        }
    }
    return true;
}

/* Gives every string and number item its token index, in pre-order. */
static bool assign_tokens(cJSON *item, size_t *next, size_t n) {
    for (; item; item = item->next) {
        if (cJSON_IsString(item) || cJSON_IsNumber(item)) {
            if (*next >= n) return false;
            item->valueint = (int)(*next)++;
        }
        if (item->child && !assign_tokens(item->child, next, n)) return false;
    }
    return true;
}

/* A copy of text where the bare words NaN, Infinity and -Infinity (outside
 * strings) read "0" followed by spaces, which cJSON accepts; the lexical pass
 * still sees the words. @return : the copy, or NULL when there is none to make
 * (*nomem tells an allocation failure). */
static char *mask_special_numbers(const char *text, size_t len, bool *nomem) {
    *nomem = false;
    if (memmem(text, len, "NaN", 3) == NULL && memmem(text, len, "Infinity", 8) == NULL) return NULL;
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        *nomem = true;
        return NULL;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = copy[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
            continue;
        }
        size_t n = 0;
        if (len - i >= 3 && memcmp(copy + i, "NaN", 3) == 0) n = 3;
        else if (len - i >= 8 && memcmp(copy + i, "Infinity", 8) == 0) n = 8;
        if (n == 0) continue;
        copy[i] = '0';
        memset(copy + i + 1, ' ', n - 1);
        i += n - 1;
    }
    return copy;
}

gk_status edit_json_parse(const char *text, size_t len, json_doc *doc, gk_error *err) {
    memset(doc, 0, sizeof *doc);
    const char *end = NULL;
    bool nomem;
    char *masked = mask_special_numbers(text, len, &nomem);
    if (nomem) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    doc->root = cJSON_ParseWithLengthOpts(masked ? masked : text, len, &end, false);
    if (doc->root == NULL) {
        const char *at = cJSON_GetErrorPtr();
        const char *base = masked ? masked : text;
        long pos = at && at >= base && at <= base + len ? (long)(at - base) : -1;
        free(masked);
        return gk_error_set(err, GK_E_ARG, -1, "not valid JSON (near byte %ld)", pos);
    }
    const char *base = masked ? masked : text;
    size_t used = end && end >= base && end <= base + len ? (size_t)(end - base) : len;
    while (used < len && isspace((unsigned char)base[used])) used++;
    free(masked);
    if (used != len) {
        cJSON_Delete(doc->root);
        doc->root = NULL;
        return gk_error_set(err, GK_E_ARG, -1, "not valid JSON (text after the value, at byte %zu)", used);
    }
    tok_list l = { 0 };
    size_t next = 0;
    bool ok = scan_tokens(text, len, &l);
    if (ok && l.n > (size_t)INT32_MAX) ok = false;
    doc->toks = l.items;
    doc->n_toks = l.n;
    if (ok) ok = assign_tokens(doc->root, &next, l.n) && next == l.n;
    if (!ok) {
        edit_json_free(doc);
        return gk_error_set(err, GK_E_ARG, -1, "JSON text could not be read exactly (bad string escape?)");
    }
    return GK_OK;
}

void edit_json_free(json_doc *doc) {
    cJSON_Delete(doc->root);
    for (size_t i = 0; i < doc->n_toks; i++) free(doc->toks[i].bytes);
    free(doc->toks);
    memset(doc, 0, sizeof *doc);
}

const json_tok *edit_json_tok(const json_doc *doc, const cJSON *item) {
    if (!(cJSON_IsString(item) || cJSON_IsNumber(item))) return NULL;
    if (item->valueint < 0 || (size_t)item->valueint >= doc->n_toks) return NULL;
    return &doc->toks[item->valueint];
}

/* ------------------------------------------------------------------------ */
/* Type names                                                               */
/* ------------------------------------------------------------------------ */

static const struct {
    const char *short_name, *long_name;
    gk_vtype type;
} type_names[] = {
    { "u8", "uint8", GK_V_U8 },     { "i8", "int8", GK_V_I8 },       { "u16", "uint16", GK_V_U16 },
    { "i16", "int16", GK_V_I16 },   { "u32", "uint32", GK_V_U32 },   { "i32", "int32", GK_V_I32 },
    { "u64", "uint64", GK_V_U64 },  { "i64", "int64", GK_V_I64 },    { "f32", "float32", GK_V_F32 },
    { "f64", "float64", GK_V_F64 }, { "bool", "boolean", GK_V_BOOL }, { "str", "string", GK_V_STR },
};

static bool scalar_type_name(const char *name, size_t n, gk_vtype *out) {
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
        const char *a = type_names[i].short_name, *b = type_names[i].long_name;
        if ((strlen(a) == n && strncasecmp(a, name, n) == 0) || (strlen(b) == n && strncasecmp(b, name, n) == 0)) {
            *out = type_names[i].type;
            return true;
        }
    }
    return false;
}

bool edit_type_parse(const char *name, type_spec *out) {
    memset(out, 0, sizeof *out);
    if (strcasecmp(name, "json") == 0) {
        out->kind = TS_JSON;
        return true;
    }
    out->kind = TS_CHAIN;
    const char *p = name;
    size_t n = strlen(name);
    /* array[array[...[T]...]] */
    while (n > 7 && strncasecmp(p, "array[", 6) == 0 && p[n - 1] == ']') {
        if (out->depth >= TYPE_CHAIN_MAX - 1) return false;
        out->chain[out->depth++] = GK_V_ARR;
        p += 6;
        n -= 7;
    }
    if (n == 5 && strncasecmp(p, "array", 5) == 0) {
        if (out->depth >= TYPE_CHAIN_MAX - 1) return false;
        out->chain[out->depth++] = GK_V_ARR;   /* element type inferred */
        return true;
    }
    gk_vtype t;
    if (!scalar_type_name(p, n, &t)) return false;
    out->chain[out->depth++] = t;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Scalars from text                                                        */
/* ------------------------------------------------------------------------ */

static bool is_unsigned_type(gk_vtype t) {
    return t == GK_V_U8 || t == GK_V_U16 || t == GK_V_U32 || t == GK_V_U64;
}

/* Bounds of an integer type. */
static void int_bounds(gk_vtype t, int64_t *lo, uint64_t *hi) {
    switch (t) {
    case GK_V_U8: *lo = 0; *hi = UINT8_MAX; break;
    case GK_V_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case GK_V_U16: *lo = 0; *hi = UINT16_MAX; break;
    case GK_V_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case GK_V_U32: *lo = 0; *hi = UINT32_MAX; break;
    case GK_V_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case GK_V_U64: *lo = 0; *hi = UINT64_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

/* Reads an integer: optional sign, then decimal digits or 0x and hex digits.
 * @return : 0 when the text is not one, 1 with *neg and *mag set, 2 when its
 *           magnitude does not fit 64 bits. */
static int read_integer(const char *s, size_t n, bool *neg, uint64_t *mag) {
    size_t i = 0;
    *neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) *neg = s[i++] == '-';
    if (i >= n) return 0;
    unsigned base = 10;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        i += 2;
    }
    uint64_t v = 0;
    bool overflow = false;
    for (; i < n; i++) {
        int d = base == 16 ? gk_hex_digit(s[i]) : (s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);
        if (d < 0) return 0;
        if (v > (UINT64_MAX - (uint64_t)d) / base) overflow = true;
        v = v * base + (uint64_t)d;
    }
    *mag = v;
    return overflow ? 2 : 1;
}

/* Parses s as an integer of type t into out. *parsed tells whether s was an
 * integer at all. @return : true when it is one and fits t. */
static bool integer_in_range(const char *s, size_t n, gk_vtype t, gk_value *out, bool *parsed) {
    bool neg;
    uint64_t mag = 0;
    int r = read_integer(s, n, &neg, &mag);
    *parsed = r != 0;
    if (r != 1) return false;
    int64_t lo;
    uint64_t hi;
    int_bounds(t, &lo, &hi);
    out->type = t;
    if (neg && mag != 0) {
        if (is_unsigned_type(t)) return false;
        if (mag > (uint64_t)INT64_MAX + 1) return false;
        int64_t v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        if (v < lo) return false;
        out->i = v;
        return true;
    }
    if (mag > hi) return false;
    if (is_unsigned_type(t)) out->u = mag;
    else out->i = (int64_t)mag;
    return true;
}

/* A decimal number with a fraction or exponent (or a plain integer). */
static bool looks_decimal(const char *s, size_t n) {
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    while (i < n && isdigit((unsigned char)s[i])) i++, digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && isdigit((unsigned char)s[i])) i++, digits++;
    }
    if (digits == 0) return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+')) i++;
        size_t ed = 0;
        while (i < n && isdigit((unsigned char)s[i])) i++, ed++;
        if (ed == 0) return false;
    }
    return i == n;
}

static bool is_special_float(const char *s) {
    const char *p = s + (*s == '-' || *s == '+');
    return strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0 || strcasecmp(p, "nan") == 0;
}

gk_status edit_scalar_from_text(gk_vtype t, const char *text, size_t n, const char *key,
                                gk_value *out, gk_error *err) {
    memset(out, 0, sizeof *out);
    out->type = t;
    if (t == GK_V_STR) {
        if (!gk_utf8_valid(text, n)) return gk_error_set(err, GK_E_ARG, -1, "%s: value is not valid UTF-8", key);
        char *p = malloc(n + 1);
        if (p == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        memcpy(p, text, n);
        p[n] = '\0';
        out->s.ptr = p;
        out->s.len = n;
        return GK_OK;
    }
    char buf[128];
    if (n == 0 || n >= sizeof buf || memchr(text, '\0', n))
        return gk_error_set(err, GK_E_ARG, -1, "%s: '%.*s' is not a %s", key, (int)(n < 64 ? n : 64), text,
                            gk_vtype_short_name(t));
    memcpy(buf, text, n);
    buf[n] = '\0';
    if (t == GK_V_BOOL) {
        if (strcmp(buf, "true") == 0 || strcmp(buf, "1") == 0) out->b = true;
        else if (strcmp(buf, "false") == 0 || strcmp(buf, "0") == 0) out->b = false;
        else return gk_error_set(err, GK_E_ARG, -1, "%s: '%s' is not a bool (true or false)", key, buf);
        return GK_OK;
    }
    if (gk_vtype_is_integer(t)) {
        bool parsed;
        if (integer_in_range(buf, n, t, out, &parsed)) return GK_OK;
        out->type = t;
        return gk_error_set(err, GK_E_ARG, -1, parsed ? "%s: %s does not fit %s" : "%s: '%s' is not an integer (%s)",
                            key, buf, gk_vtype_short_name(t));
    }
    if (t == GK_V_F32 || t == GK_V_F64) {
        if (!looks_decimal(buf, n) && !is_special_float(buf))
            return gk_error_set(err, GK_E_ARG, -1, "%s: '%s' is not a number (%s)", key, buf, gk_vtype_short_name(t));
        errno = 0;
        char *end;
        double d;
        if (t == GK_V_F32) {
            float f = strtof(buf, &end);
            d = (double)f;
        } else {
            d = strtod(buf, &end);
        }
        if (*end != '\0') return gk_error_set(err, GK_E_ARG, -1, "%s: '%s' is not a number", key, buf);
        if (errno == ERANGE && isinf(d))
            return gk_error_set(err, GK_E_ARG, -1, "%s: %s does not fit %s", key, buf, gk_vtype_short_name(t));
        out->f = d;
        return GK_OK;
    }
    return gk_error_set(err, GK_E_ARG, -1, "%s: a %s cannot be given as text", key,
                        gk_vtype_short_name(t) ? gk_vtype_short_name(t) : "?");
}

/* The integer type a number of this text gets when inferred. */
static gk_vtype infer_integer(const char *s, size_t n) {
    static const gk_vtype order[] = { GK_V_U32, GK_V_I32, GK_V_U64, GK_V_I64 };
    for (size_t i = 0; i < 4; i++) {
        gk_value v;
        bool parsed;
        if (integer_in_range(s, n, order[i], &v, &parsed)) return order[i];
        if (!parsed) break;
    }
    return GK_V_COUNT;
}

gk_vtype edit_infer_text(const char *text, size_t n) {
    if ((n == 4 && memcmp(text, "true", 4) == 0) || (n == 5 && memcmp(text, "false", 5) == 0)) return GK_V_BOOL;
    char buf[128];
    if (n == 0 || n >= sizeof buf) return GK_V_STR;
    memcpy(buf, text, n);
    buf[n] = '\0';
    bool neg;
    uint64_t mag;
    /* Decimal integers only: "0x1f" stays a string unless a type is given. */
    if (read_integer(buf, n, &neg, &mag) != 0 && !(n > 2 && (strstr(buf, "0x") || strstr(buf, "0X")))) {
        gk_vtype t = infer_integer(buf, n);
        return t == GK_V_COUNT ? GK_V_STR : t;
    }
    if (looks_decimal(buf, n)) return GK_V_F32;
    return GK_V_STR;
}

/* ------------------------------------------------------------------------ */
/* Values from JSON                                                         */
/* ------------------------------------------------------------------------ */

enum { J_STR, J_BOOL, J_INT, J_FLOAT, J_ARR, J_OTHER };

static int json_kind(const json_doc *doc, const cJSON *j) {
    if (cJSON_IsString(j)) return J_STR;
    if (cJSON_IsBool(j)) return J_BOOL;
    if (cJSON_IsArray(j)) return J_ARR;
    if (cJSON_IsNumber(j)) {
        const json_tok *t = edit_json_tok(doc, j);
        if (t == NULL) return J_OTHER;
        return strpbrk(t->bytes, ".eENI") ? J_FLOAT : J_INT;
    }
    return J_OTHER;
}

/* Infers a scalar type for one JSON value. @return : GK_V_COUNT when none fits. */
static gk_vtype infer_json_scalar(const json_doc *doc, const cJSON *j) {
    switch (json_kind(doc, j)) {
    case J_STR: return GK_V_STR;
    case J_BOOL: return GK_V_BOOL;
    case J_FLOAT: return GK_V_F32;
    case J_INT: {
        const json_tok *t = edit_json_tok(doc, j);
        return infer_integer(t->bytes, t->len);
    }
    case J_ARR: return GK_V_ARR;
    default: return GK_V_COUNT;
    }
}

/* The element type of a JSON array when none is given: all strings, all bools,
 * all numbers (F32 when any has a fraction; else the first integer type of u32,
 * i32, u64, i64 that holds all) or all arrays. */
static gk_status infer_elem(const json_doc *doc, const cJSON *arr, const char *key, gk_vtype *out,
                            gk_error *err) {
    int kind = -1;
    bool any_float = false;
    static const gk_vtype order[] = { GK_V_U32, GK_V_I32, GK_V_U64, GK_V_I64 };
    bool fits[4] = { true, true, true, true };
    const cJSON *j;
    if (cJSON_GetArraySize(arr) == 0)
        return gk_error_set(err, GK_E_ARG, -1, "%s: an empty array needs a type (array[T])", key);
    cJSON_ArrayForEach(j, arr) {
        int k = json_kind(doc, j);
        if (k == J_OTHER) return gk_error_set(err, GK_E_ARG, -1, "%s: arrays hold strings, numbers, bools or arrays", key);
        int cat = (k == J_INT || k == J_FLOAT) ? J_INT : k;
        if (kind >= 0 && cat != kind)
            return gk_error_set(err, GK_E_ARG, -1, "%s: array elements of different kinds (give array[T])", key);
        kind = cat;
        if (k == J_FLOAT) any_float = true;
        if (k == J_INT) {
            const json_tok *t = edit_json_tok(doc, j);
            for (int i = 0; i < 4; i++) {
                gk_value v;
                bool parsed;
                if (fits[i] && !integer_in_range(t->bytes, t->len, order[i], &v, &parsed)) fits[i] = false;
            }
        }
    }
    if (kind == J_STR) *out = GK_V_STR;
    else if (kind == J_BOOL) *out = GK_V_BOOL;
    else if (kind == J_ARR) *out = GK_V_ARR;
    else if (any_float) *out = GK_V_F32;
    else {
        *out = GK_V_COUNT;
        for (int i = 0; i < 4 && *out == GK_V_COUNT; i++)
            if (fits[i]) *out = order[i];
        if (*out == GK_V_COUNT) return gk_error_set(err, GK_E_ARG, -1, "%s: integers out of the 64-bit range", key);
    }
    return GK_OK;
}

/* Converts a JSON scalar to type t (strings are parsed for numbers and bools). */
static gk_status scalar_from_json(const json_doc *doc, const cJSON *j, gk_vtype t, const char *key,
                                  gk_value *out, gk_error *err) {
    const json_tok *tok = edit_json_tok(doc, j);
    if (t == GK_V_BOOL && cJSON_IsBool(j)) {
        memset(out, 0, sizeof *out);
        out->type = GK_V_BOOL;
        out->b = cJSON_IsTrue(j);
        return GK_OK;
    }
    if (t == GK_V_STR && !cJSON_IsString(j))
        return gk_error_set(err, GK_E_ARG, -1, "%s: expected a string", key);
    if (tok == NULL)
        return gk_error_set(err, GK_E_ARG, -1, "%s: expected a %s value", key, gk_vtype_short_name(t));
    if (cJSON_IsNumber(j) && gk_vtype_is_integer(t) && strpbrk(tok->bytes, ".eENI"))
        return gk_error_set(err, GK_E_ARG, -1, "%s: %s is not an integer (%s)", key, tok->bytes, gk_vtype_short_name(t));
    if (cJSON_IsNumber(j) && t == GK_V_BOOL)
        return gk_error_set(err, GK_E_ARG, -1, "%s: expected true or false", key);
    return edit_scalar_from_text(t, tok->bytes, tok->len, key, out, err);
}

/* Stores scalar v as element i of a packed array of type t. */
static void store_elem(void *data, gk_vtype t, uint64_t i, const gk_value *v) {
    switch (t) {
    case GK_V_U8: ((uint8_t *)data)[i] = (uint8_t)v->u; break;
    case GK_V_I8: ((int8_t *)data)[i] = (int8_t)v->i; break;
    case GK_V_U16: ((uint16_t *)data)[i] = (uint16_t)v->u; break;
    case GK_V_I16: ((int16_t *)data)[i] = (int16_t)v->i; break;
    case GK_V_U32: ((uint32_t *)data)[i] = (uint32_t)v->u; break;
    case GK_V_I32: ((int32_t *)data)[i] = (int32_t)v->i; break;
    case GK_V_U64: ((uint64_t *)data)[i] = v->u; break;
    case GK_V_I64: ((int64_t *)data)[i] = v->i; break;
    case GK_V_F32: ((float *)data)[i] = (float)v->f; break;
    case GK_V_F64: ((double *)data)[i] = v->f; break;
    case GK_V_BOOL: ((uint8_t *)data)[i] = v->b ? 1 : 0; break;
    default: break;
    }
}

static gk_status array_from_json(const json_doc *doc, const cJSON *j, const gk_vtype *chain, int depth,
                                 const gk_value *tmpl, const char *key, int level, gk_value *out,
                                 gk_error *err) {
    if (!cJSON_IsArray(j)) return gk_error_set(err, GK_E_ARG, -1, "%s: expected a JSON array", key);
    if (level >= GK_MAX_ARRAY_DEPTH)
        return gk_error_set(err, GK_E_NESTING, -1, "%s: arrays nested deeper than %d levels", key, GK_MAX_ARRAY_DEPTH);
    gk_vtype elem;
    const gk_value *tmpl_arr = tmpl && tmpl->type == GK_V_ARR ? tmpl : NULL;
    if (depth > 1) elem = chain[1];
    else if (tmpl_arr) elem = tmpl_arr->arr.elem;
    else {
        gk_status st = infer_elem(doc, j, key, &elem, err);
        if (st != GK_OK) return st;
    }
    if (tmpl_arr && tmpl_arr->arr.elem != elem) tmpl_arr = NULL;
    uint64_t n = (uint64_t)cJSON_GetArraySize(j);
    memset(out, 0, sizeof *out);
    out->type = GK_V_ARR;
    out->arr.elem = elem;
    if (n == 0) return GK_OK;
    gk_status st = GK_OK;
    if (elem == GK_V_STR) {
        gk_str *items = calloc(n, sizeof *items);
        if (items == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        uint64_t i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, j) {
            const json_tok *t = edit_json_tok(doc, e);
            if (!cJSON_IsString(e) || t == NULL) {
                st = gk_error_set(err, GK_E_ARG, -1, "%s: element %llu is not a string", key, (unsigned long long)i);
                break;
            }
            if (!gk_utf8_valid(t->bytes, t->len)) {
                st = gk_error_set(err, GK_E_ARG, -1, "%s: element %llu is not valid UTF-8", key, (unsigned long long)i);
                break;
            }
            items[i++] = (gk_str){ t->bytes, t->len };
        }
        if (st == GK_OK) {
            out->arr.data = gk_str_array_pack(items, n);
            if (out->arr.data == NULL) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            else out->arr.n = n;
        }
        free(items);
        return st;
    }
    size_t es = gk_vtype_elem_size(elem);
    if (es == 0) return gk_error_set(err, GK_E_ARG, -1, "%s: bad element type", key);
    void *data = calloc(n, es);
    if (data == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    uint64_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j) {
        if (elem == GK_V_ARR) {
            const gk_value *inner_tmpl = NULL;
            if (tmpl_arr && tmpl_arr->arr.n > 0) {
                const gk_value *items = tmpl_arr->arr.data;
                inner_tmpl = &items[i < tmpl_arr->arr.n ? i : 0];
            }
            gk_vtype sub = GK_V_ARR;
            st = array_from_json(doc, e, depth > 1 ? chain + 1 : &sub, depth > 1 ? depth - 1 : 1, inner_tmpl,
                                 key, level + 1, &((gk_value *)data)[i], err);
        } else {
            gk_value v;
            st = scalar_from_json(doc, e, elem, key, &v, err);
            if (st == GK_OK) store_elem(data, elem, i, &v);
        }
        if (st != GK_OK) break;
        i++;
    }
    out->arr.data = data;
    out->arr.n = i;
    if (st != GK_OK) gk_value_free(out);
    return st;
}

gk_status edit_value_from_json(const json_doc *doc, const cJSON *item, const gk_vtype *chain,
                               int depth, const gk_value *tmpl, const char *key, gk_value *out,
                               gk_error *err) {
    memset(out, 0, sizeof *out);
    gk_vtype t;
    if (depth > 0) t = chain[0];
    else if (tmpl) t = tmpl->type;
    else {
        t = infer_json_scalar(doc, item);
        if (t == GK_V_COUNT)
            return gk_error_set(err, GK_E_ARG, -1, "%s: cannot infer a type (null, object, or an integer out of range)", key);
    }
    if (tmpl && tmpl->type != t) tmpl = NULL;
    if (t == GK_V_ARR) {
        gk_vtype arr_only = GK_V_ARR;
        return array_from_json(doc, item, depth > 0 ? chain : &arr_only, depth > 0 ? depth : 1, tmpl, key, 0, out, err);
    }
    if (cJSON_IsArray(item)) return gk_error_set(err, GK_E_ARG, -1, "%s: an array given for a %s", key, gk_vtype_short_name(t));
    return scalar_from_json(doc, item, t, key, out, err);
}
