/*
 * manifest.c - hash manifests (the text gguf-hash and ggufkit hash print) and
 * the check of a model's digests against one (hash --check).
 *
 * A line is "KIND HEX NAME" separated by blanks, NAME being FILE (the whole
 * model) or FILE:TENSOR; lines of other shapes are skipped, and the first line
 * of a kind and name is the one that counts, as in gguf-hash. Unlike it, a uuid
 * line is checked against the manifest's uuid lines, and a tensor the manifest
 * lists for the model but the model lacks fails the check.
 *
 * A NAME holding blanks, control bytes or backslashes is escaped, as sha256sum
 * escapes names: the line starts with a backslash and NAME holds \\, \s, \t,
 * \n, \r and \xHH (gk_manifest_name_escape), so every name ggufkit writes reads
 * back; ordinary names keep llama-gguf-hash's format.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggufkit.h"
#include "io/inputs.h"
#include "util/chars.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/strset.h"

#define LINE_MAX_BYTES (64u << 10)

typedef struct entry {
    int kind;
    char *hex;
    char *name;
} entry;

struct gk_manifest {
    entry *entries;
    size_t n, cap;
    gk_hashmap table;          /* key_hash of kind and name -> position in entries */
    unsigned kinds;
};

static uint64_t key_hash(int kind, const char *name) {
    return gk_fnv1a(GK_FNV1A_BASIS ^ (uint64_t)kind, name, strlen(name));
}

static const entry *find(const gk_manifest *m, int kind, const char *name) {
    uint64_t h = key_hash(kind, name);
    size_t cur = 0, at;
    while (gk_hashmap_next(&m->table, h, &cur, &at)) {
        const entry *e = &m->entries[at];
        if (e->kind == kind && strcmp(e->name, name) == 0) return e;
    }
    return NULL;
}

static bool build_table(gk_manifest *m) {
    for (size_t k = 0; k < m->n; k++) {
        const entry *e = &m->entries[k];
        if (find(m, e->kind, e->name)) continue;   /* the first line counts */
        if (!gk_hashmap_add(&m->table, key_hash(e->kind, e->name), k)) return false;
    }
    return true;
}

/* Splits the next blank-separated token off *p (NUL-terminating it). */
static char *token(char **p) {
    char *s = *p;
    while (*s && isspace((unsigned char)*s)) s++;
    if (*s == '\0') return NULL;
    char *t = s;
    while (*s && !isspace((unsigned char)*s)) s++;
    if (*s) *s++ = '\0';
    *p = s;
    return t;
}

/* A blank or control byte, or the escape character: escaped in a NAME. */
static bool needs_escape(unsigned char c) { return c <= 0x20 || c == 0x7F || c == '\\' || isspace(c); }

char *gk_manifest_name_escape(const char *name, bool *escaped) {
    size_t len = strlen(name), n = 0;
    *escaped = false;
    for (size_t i = 0; i < len; i++) *escaped |= needs_escape((unsigned char)name[i]);
    char *out = malloc(4 * len + 1);
    if (out == NULL) return NULL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!needs_escape(c)) {
            out[n++] = (char)c;
            continue;
        }
        out[n++] = '\\';
        switch (c) {
        case '\\': out[n++] = '\\'; break;
        case ' ': out[n++] = 's'; break;
        case '\t': out[n++] = 't'; break;
        case '\n': out[n++] = 'n'; break;
        case '\r': out[n++] = 'r'; break;
        default: n += (size_t)snprintf(out + n, 4, "x%02x", c); break;
        }
    }
    out[n] = '\0';
    return out;
}

/* Undoes gk_manifest_name_escape in place. @return : false on a bad escape. */
static bool unescape(char *s) {
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r != '\\') {
            *w++ = *r;
            continue;
        }
        switch (*++r) {
        case '\\': *w++ = '\\'; break;
        case 's': *w++ = ' '; break;
        case 't': *w++ = '\t'; break;
        case 'n': *w++ = '\n'; break;
        case 'r': *w++ = '\r'; break;
        case 'x': {
            int hi = gk_hex_digit(r[1]), lo = hi < 0 ? -1 : gk_hex_digit(r[2]);
            if (lo < 0 || (hi == 0 && lo == 0)) return false;
            *w++ = (char)(hi << 4 | lo);
            r += 2;
            break;
        }
        default: return false;
        }
    }
    *w = '\0';
    return true;
}

static bool add_line(gk_manifest *m, char *line) {
    bool escaped = line[0] == '\\';
    char *p = line + escaped, *kind = token(&p), *hex = token(&p), *name = token(&p);
    if (escaped && name && !unescape(name)) return true;   /* not a line this format makes: skipped */
    int k = gk_hash_kind_lookup(kind);
    if (k < 0) return true;
    m->kinds |= GK_HASH_BIT(k);   /* a known kind counts even on a line without a hash */
    if (hex == NULL || name == NULL) return true;
    if (!GK_GROW(m->entries, m->cap, m->n + 1, 64)) return false;
    entry *e = &m->entries[m->n];
    e->kind = k;
    e->hex = strdup(hex);
    e->name = strdup(name);
    if (e->hex == NULL || e->name == NULL) {
        free(e->hex);
        free(e->name);
        return false;
    }
    m->n++;
    return true;
}

void gk_manifest_free(gk_manifest *m) {
    if (m == NULL) return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->entries[i].hex);
        free(m->entries[i].name);
    }
    free(m->entries);
    gk_hashmap_free(&m->table);
    free(m);
}

gk_status gk_manifest_load(const char *path, gk_manifest **out, gk_error *err) {
    *out = NULL;
    int fd = gk_inputs_open(path);   /* recorded: no output may replace the manifest */
    FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (fp == NULL) {
        if (fd >= 0) close(fd);
        return gk_error_set(err, GK_E_IO, -1, "cannot open manifest %s", path);
    }
    gk_manifest *m = calloc(1, sizeof *m);
    char *line = malloc(LINE_MAX_BYTES + 2);
    gk_status st = m && line ? GK_OK : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    uint64_t offset = 0;
    while (st == GK_OK && fgets(line, LINE_MAX_BYTES + 2, fp)) {
        size_t len = strlen(line);
        if (len > LINE_MAX_BYTES && line[len - 1] != '\n')
            st = gk_error_set(err, GK_E_CORRUPT, (int64_t)offset, "manifest %s: line longer than %u bytes",
                              path, LINE_MAX_BYTES);
        else if (!add_line(m, line))
            st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        offset += len;
    }
    if (st == GK_OK && ferror(fp)) st = gk_error_set(err, GK_E_IO, -1, "cannot read manifest %s", path);
    fclose(fp);
    free(line);
    if (st == GK_OK && m->kinds == 0)
        st = gk_error_set(err, GK_E_NOT_FOUND, -1, "manifest %s has no line of a known hash kind", path);
    if (st == GK_OK && !build_table(m)) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (st != GK_OK) {
        gk_manifest_free(m);
        return st;
    }
    *out = m;
    return GK_OK;
}

unsigned gk_manifest_kinds(const gk_manifest *m) { return m->kinds; }

gk_hash_kind gk_manifest_strongest(const gk_manifest *m) {
    static const gk_hash_kind order[GK_HASH_KINDS] = { GK_HASH_SHA256, GK_HASH_SHA1, GK_HASH_XXH64, GK_HASH_UUID };
    for (int i = 0; i < GK_HASH_KINDS; i++)
        if (m->kinds & GK_HASH_BIT(order[i])) return order[i];
    return GK_HASH_XXH64;
}

/* "label:tensor" in buf (malloc'ed when it does not fit). */
static char *line_name(const char *label, const char *tensor, char *buf, size_t size) {
    if (tensor == NULL) return (char *)label;
    size_t need = strlen(label) + strlen(tensor) + 2;
    char *p = need <= size ? buf : malloc(need);
    if (p) snprintf(p, need, "%s:%s", label, tensor);
    return p;
}

gk_status gk_hash_check(const gk_manifest *m, const char *label, const gk_hash_result *r,
                        gk_hash_line *lines, size_t n, gk_check_summary *s, gk_error *err) {
    memset(s, 0, sizeof *s);
    size_t tensor_not_found = 0;
    char buf[512];
    for (size_t i = 0; i < n; i++) {
        gk_hash_line *l = &lines[i];
        const gk_hash_value *v = l->tensor < 0 ? &r->model[l->kind] : &r->tensors[l->tensor][l->kind];
        char *name = line_name(label, l->tensor < 0 ? NULL : r->names[l->tensor], buf, sizeof buf);
        if (name == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        const entry *e = find(m, l->kind, name);
        if (name != buf && name != label) free(name);
        char hex[GK_HASH_HEX_MAX];
        gk_hash_hex(l->kind, v, hex);
        l->verdict = e == NULL ? GK_VERDICT_NOT_FOUND : strcmp(e->hex, hex) == 0 ? GK_VERDICT_OK : GK_VERDICT_MISMATCH;
        if (l->verdict == GK_VERDICT_OK) s->ok++;
        else if (l->verdict == GK_VERDICT_MISMATCH) s->mismatch++;
        else {
            s->not_found++;
            if (l->tensor >= 0) tensor_not_found++;
        }
    }
    /* Tensor entries of this model that name no tensor of it. */
    gk_strset names = { 0 };
    size_t label_len = strlen(label), has_tensor_entries = 0, cap_absent = 0;
    gk_status st = GK_OK;
    for (size_t t = 0; t < r->n_tensors && st == GK_OK; t++)
        if (gk_strset_insert(&names, r->names[t], strlen(r->names[t])) < 0) st = GK_E_NOMEM;
    for (size_t k = 0; k < m->n && st == GK_OK; k++) {
        const char *nm = m->entries[k].name;
        if (strncmp(nm, label, label_len) != 0 || nm[label_len] != ':') continue;
        has_tensor_entries++;
        int added = gk_strset_insert(&names, nm + label_len + 1, strlen(nm + label_len + 1));
        if (added < 0) st = GK_E_NOMEM;
        if (added != 1) continue;
        if (!GK_GROW(s->absent, cap_absent, s->n_absent + 1, 8)) st = GK_E_NOMEM;
        else s->absent[s->n_absent++] = nm;
    }
    gk_strset_free(&names);
    if (st != GK_OK) {
        free(s->absent);
        s->absent = NULL;
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    s->nothing_found = s->ok + s->mismatch == 0;
    s->passed = !s->nothing_found && s->mismatch == 0 && s->n_absent == 0 &&
                (tensor_not_found == 0 || has_tensor_entries == 0);
    return GK_OK;
}

void gk_check_summary_free(gk_check_summary *s) {
    free(s->absent);
    s->absent = NULL;
    s->n_absent = 0;
}
