/*
 * value.c - metadata value types: names, sizes, deep copy, release, comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "meta/value.h"

static const struct {
    const char *name;
    const char *short_name;
    size_t file_size;
    size_t mem_size;
} vtype_facts[GK_V_COUNT] = {
    [GK_V_U8] = { "UINT8", "u8", 1, 1 },
    [GK_V_I8] = { "INT8", "i8", 1, 1 },
    [GK_V_U16] = { "UINT16", "u16", 2, 2 },
    [GK_V_I16] = { "INT16", "i16", 2, 2 },
    [GK_V_U32] = { "UINT32", "u32", 4, 4 },
    [GK_V_I32] = { "INT32", "i32", 4, 4 },
    [GK_V_F32] = { "FLOAT32", "f32", 4, 4 },
    [GK_V_BOOL] = { "BOOL", "bool", 1, 1 },
    [GK_V_STR] = { "STRING", "str", 0, sizeof(gk_str) },
    [GK_V_ARR] = { "ARRAY", "arr", 0, sizeof(gk_value) },
    [GK_V_U64] = { "UINT64", "u64", 8, 8 },
    [GK_V_I64] = { "INT64", "i64", 8, 8 },
    [GK_V_F64] = { "FLOAT64", "f64", 8, 8 },
};

const char *gk_vtype_name(gk_vtype t) {
    return (unsigned)t < GK_V_COUNT ? vtype_facts[t].name : NULL;
}

const char *gk_vtype_short_name(gk_vtype t) {
    return (unsigned)t < GK_V_COUNT ? vtype_facts[t].short_name : NULL;
}

size_t gk_vtype_size(gk_vtype t) {
    return (unsigned)t < GK_V_COUNT ? vtype_facts[t].file_size : 0;
}

size_t gk_vtype_elem_size(gk_vtype t) {
    return (unsigned)t < GK_V_COUNT ? vtype_facts[t].mem_size : 0;
}

gk_str *gk_str_array_pack(const gk_str *items, uint64_t n) {
    size_t bytes = 0;
    for (uint64_t i = 0; i < n; i++) bytes += items[i].len + 1;
    if (n > (SIZE_MAX - bytes) / sizeof(gk_str)) return NULL;
    gk_str *out = malloc(n * sizeof(gk_str) + bytes + 1);
    if (out == NULL) return NULL;
    char *pool = (char *)(out + n);
    for (uint64_t i = 0; i < n; i++) {
        memcpy(pool, items[i].ptr, items[i].len);
        pool[items[i].len] = '\0';
        out[i].ptr = pool;
        out[i].len = items[i].len;
        pool += items[i].len + 1;
    }
    return out;
}

gk_status gk_value_copy(gk_value *dst, const gk_value *src) {
    *dst = *src;
    if (src->type == GK_V_STR) {
        char *p = malloc(src->s.len + 1);
        if (p == NULL) return GK_E_NOMEM;
        if (src->s.len) memcpy(p, src->s.ptr, src->s.len);
        p[src->s.len] = '\0';
        dst->s.ptr = p;
        return GK_OK;
    }
    if (src->type != GK_V_ARR) return GK_OK;
    uint64_t n = gk_value_held(src);   /* a preview's copy is a preview */
    dst->arr.data = NULL;
    if (src->arr.elem == GK_V_STR) {
        if (n == 0) return GK_OK;
        dst->arr.data = gk_str_array_pack(src->arr.data, n);
        return dst->arr.data ? GK_OK : GK_E_NOMEM;
    }
    size_t es = gk_vtype_elem_size(src->arr.elem);
    if (n == 0 || es == 0) return GK_OK;
    if (n > SIZE_MAX / es) return GK_E_NOMEM;
    void *block = malloc(n * es);
    if (block == NULL) return GK_E_NOMEM;
    if (src->arr.elem != GK_V_ARR) {
        memcpy(block, src->arr.data, n * es);
        dst->arr.data = block;
        return GK_OK;
    }
    gk_value *out = block;
    const gk_value *in = src->arr.data;
    for (uint64_t i = 0; i < n; i++) {
        if (gk_value_copy(&out[i], &in[i]) != GK_OK) {
            for (uint64_t j = 0; j < i; j++) gk_value_free(&out[j]);
            free(block);
            return GK_E_NOMEM;
        }
    }
    dst->arr.data = block;
    return GK_OK;
}

void gk_value_free(gk_value *v) {
    if (v->type == GK_V_STR) {
        free((void *)v->s.ptr);
    } else if (v->type == GK_V_ARR) {
        if (v->arr.elem == GK_V_ARR) {
            gk_value *items = (gk_value *)v->arr.data;
            for (uint64_t i = 0; items && i < gk_value_held(v); i++) gk_value_free(&items[i]);
        }
        free((void *)v->arr.data);
    }
    memset(v, 0, sizeof *v);
}

/* Element i of packed array data of type elem equals element j of other? */
static bool elem_equal(gk_vtype elem, const void *a, const void *b, uint64_t i) {
    if (elem == GK_V_STR) {
        const gk_str *x = &((const gk_str *)a)[i], *y = &((const gk_str *)b)[i];
        return x->len == y->len && (x->len == 0 || memcmp(x->ptr, y->ptr, x->len) == 0);
    }
    if (elem == GK_V_ARR) return gk_value_equal(&((const gk_value *)a)[i], &((const gk_value *)b)[i]);
    size_t es = gk_vtype_elem_size(elem);
    return memcmp((const uint8_t *)a + i * es, (const uint8_t *)b + i * es, es) == 0;
}

uint64_t gk_value_first_diff(const gk_value *a, const gk_value *b) {
    if (a->type != GK_V_ARR || b->type != GK_V_ARR) return gk_value_equal(a, b) ? UINT64_MAX : 0;
    if (a->arr.elem != b->arr.elem) return 0;
    uint64_t ha = gk_value_held(a), hb = gk_value_held(b);
    uint64_t n = ha < hb ? ha : hb;
    for (uint64_t i = 0; i < n; i++)
        if (!elem_equal(a->arr.elem, a->arr.data, b->arr.data, i)) return i;
    return a->arr.n == b->arr.n && ha == a->arr.n && hb == b->arr.n ? UINT64_MAX : n;
}

bool gk_value_equal(const gk_value *a, const gk_value *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64: return a->u == b->u;
    case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64: return a->i == b->i;
    case GK_V_F32: {
        /* the float the file holds: a value set from a double that rounds to
         * the same float writes the same bytes */
        float x = (float)a->f, y = (float)b->f;
        return memcmp(&x, &y, sizeof x) == 0;
    }
    case GK_V_F64: return memcmp(&a->f, &b->f, sizeof a->f) == 0;
    case GK_V_BOOL: return a->b == b->b;
    case GK_V_STR: return a->s.len == b->s.len && (a->s.len == 0 || memcmp(a->s.ptr, b->s.ptr, a->s.len) == 0);
    case GK_V_ARR: return gk_value_first_diff(a, b) == UINT64_MAX;
    default: return false;
    }
}
