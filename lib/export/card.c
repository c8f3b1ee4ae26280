/*
 * card.c - README.md of an export: a model card whose YAML front matter
 * holds the GGUF's general.* naming and provenance keys under the names the
 * converter's model-card reader takes them from (name, basename, finetune,
 * size_label, license, tags, language, base_model and datasets entries ...),
 * so converting the folder again gives the same keys. Every string is
 * written double-quoted with JSON's escapes, which YAML reads as written
 * (a plain "no" or "1.0" would turn into a bool or a number). Written only
 * when the GGUF has such keys.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/meta.h"
#include "export/export_internal.h"
#include "util/grow.h"

typedef struct text {
    char *s;
    size_t n, cap;
    bool ok;
} text;

static void put(text *t, const char *s) {
    size_t k = strlen(s);
    if (!t->ok || !GK_GROW(t->s, t->cap, t->n + k + 1, 4096)) {
        t->ok = false;
        return;
    }
    memcpy(t->s + t->n, s, k + 1);
    t->n += k;
}

/* s as a double-quoted scalar */
static void put_quoted(text *t, const char *s) {
    cJSON *j = cJSON_CreateString(s);
    char *q = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (q == NULL) t->ok = false;
    else put(t, q);
    free(q);
}

static bool put_scalar(text *t, const gk_model *m, const char *key, const char *name, const char *indent) {
    gk_str v;
    if (gk_kv_get_str(m, key, &v) != GK_OK) return false;
    put(t, indent);
    put(t, name);
    put(t, ": ");
    put_quoted(t, v.ptr);
    put(t, "\n");
    return true;
}

static bool put_list(text *t, const gk_model *m, const char *key, const char *name) {
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL || v->type != GK_V_ARR || v->arr.elem != GK_V_STR || v->arr.n == 0) return false;
    put(t, name);
    put(t, ":\n");
    for (uint64_t i = 0; i < v->arr.n; i++) {
        put(t, "- ");
        put_quoted(t, ((const gk_str *)v->arr.data)[i].ptr);
        put(t, "\n");
    }
    return true;
}

/* general.KIND.count entries as a list of mappings under name */
static bool put_entries(text *t, const gk_model *m, const char *kind, const char *name) {
    char key[160];
    uint64_t count;
    snprintf(key, sizeof key, "general.%s.count", kind);
    if (gk_kv_get_uint(m, key, &count) != GK_OK || count == 0 || count > 10000) return false;
    put(t, name);
    put(t, ":\n");
    for (uint64_t i = 0; i < count; i++) {
        bool any = false;
        const char *field;
        for (size_t k = 0; (field = gk_conv_entry_field(k)) != NULL; k++) {
            snprintf(key, sizeof key, "general.%s.%llu.%s", kind, (unsigned long long)i, field);
            if (!any) {
                gk_str v;
                if (gk_kv_get_str(m, key, &v) != GK_OK) continue;
                put(t, "- ");
                any = put_scalar(t, m, key, field, "");
            } else {
                put_scalar(t, m, key, field, "  ");
            }
        }
        if (!any) put(t, "- {}\n");
    }
    return true;
}

gk_status gk_exp_card(const gk_model *m, gk_exp_folder *f, bool *written, gk_error *err) {
    *written = false;
    text t = { .ok = true };
    put(&t, "---\n");
    bool any = false;
    const char *gguf, *name;
    for (size_t i = 0; (name = gk_conv_card_field(i, &gguf)) != NULL; i++) any |= put_scalar(&t, m, gguf, name, "");
    any |= put_scalar(&t, m, "general.license", "license", "");
    any |= put_entries(&t, m, "base_model", "base_model");
    any |= put_entries(&t, m, "dataset", "datasets");
    any |= put_list(&t, m, "general.tags", "tags");
    any |= put_list(&t, m, "general.languages", "language");
    put(&t, "---\n\nExported from GGUF by ggufkit export.\n");
    gk_status s = GK_OK;
    if (!t.ok) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    else if (any) s = gk_exp_folder_write(f, "README.md", t.s, t.n, err);
    *written = any && s == GK_OK;
    free(t.s);
    return s;
}
