/*
 * meta.c - the typed metadata difference of two models: keys removed and
 * changed in the reference's order, then keys added in the other's order.
 * Values are compared by the library's value helpers (gk_value_equal,
 * gk_value_first_diff); the pseudo keys GGUF.* are never reported.
 */
#include <stdlib.h>
#include <string.h>

#include "diff/diff_internal.h"
#include "util/grow.h"

static bool ignored(const gk_str *key) { return key->len >= 5 && memcmp(key->ptr, "GGUF.", 5) == 0; }

static gk_status push(gk_diff_result *res, size_t *cap, gk_meta_change c, gk_error *err) {
    if (!GK_GROW(res->meta, *cap, res->n_meta + 1, 16)) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    res->meta[res->n_meta++] = c;
    return GK_OK;
}

gk_status diff_metadata(const gk_model *ref, const gk_model *other, gk_diff_result *res,
                        gk_error *err) {
    size_t cap = 0;
    gk_status s = GK_OK;
    for (size_t i = 0; i < ref->n_kv && s == GK_OK; i++) {
        const gk_kv *a = &ref->kvs[i];
        if (ignored(&a->key)) continue;
        const gk_value *b = gk_kv_get(other, a->key.ptr);
        if (b == NULL)
            s = push(res, &cap, (gk_meta_change){ GK_META_REMOVED, a->key.ptr, &a->value, NULL, 0 }, err);
        else if (!gk_value_equal(&a->value, b)) {
            uint64_t first = a->value.type == GK_V_ARR && b->type == GK_V_ARR ? gk_value_first_diff(&a->value, b) : 0;
            s = push(res, &cap, (gk_meta_change){ GK_META_CHANGED, a->key.ptr, &a->value, b, first }, err);
        }
    }
    for (size_t i = 0; i < other->n_kv && s == GK_OK; i++) {
        const gk_kv *b = &other->kvs[i];
        if (!ignored(&b->key) && gk_kv_find(ref, b->key.ptr) < 0)
            s = push(res, &cap, (gk_meta_change){ GK_META_ADDED, b->key.ptr, NULL, &b->value, 0 }, err);
    }
    return s;
}
