/*
 * model.c - the in-memory model: ordered key/value pairs and the tensor
 * directory, with typed getters, setters and the canonical data layout.
 */
#include <stdlib.h>
#include <string.h>

#include "meta/model.h"
#include "util/grow.h"

gk_model *gk_model_new(void) {
    gk_model *m = calloc(1, sizeof *m);
    if (m) m->version = 3;
    return m;
}

void gk_model_free(gk_model *m) {
    if (m == NULL) return;
    for (size_t i = 0; i < m->n_kv; i++) {
        free((void *)m->kvs[i].key.ptr);
        gk_value_free(&m->kvs[i].value);
    }
    for (size_t i = 0; i < m->n_tensors; i++) free((void *)m->tensors[i].name.ptr);
    free(m->kvs);
    free(m->tensors);
    free(m);
}

static char *dup_bytes(const char *s, uint64_t len) {
    char *p = malloc(len + 1);
    if (p == NULL) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

gk_model *gk_model_clone(const gk_model *src) {
    gk_model *m = gk_model_new();
    if (m == NULL) return NULL;
    m->version = src->version;
    m->big_endian = src->big_endian;
    for (size_t i = 0; i < src->n_kv; i++) {
        const gk_kv *kv = &src->kvs[i];
        char *key = dup_bytes(kv->key.ptr, kv->key.len);
        gk_value v;
        if (key == NULL || gk_value_copy(&v, &kv->value) != GK_OK) {
            free(key);
            gk_model_free(m);
            return NULL;
        }
        if (gk_model_append_kv_owned(m, key, kv->key.len, &v, kv->file_offset) != GK_OK) {
            free(key);
            gk_value_free(&v);
            gk_model_free(m);
            return NULL;
        }
    }
    for (size_t i = 0; i < src->n_tensors; i++) {
        gk_tensor t = src->tensors[i];
        t.name.ptr = dup_bytes(t.name.ptr, t.name.len);
        if (t.name.ptr == NULL || gk_model_append_tensor_owned(m, &t) != GK_OK) {
            free((void *)t.name.ptr);
            gk_model_free(m);
            return NULL;
        }
    }
    return m;
}

uint32_t gk_model_version(const gk_model *m) { return m->version; }

gk_status gk_model_set_version(gk_model *m, uint32_t version, gk_error *err) {
    if (version != 2 && version != 3)
        return gk_error_set(err, GK_E_ARG, -1, "cannot write GGUF version %u (only 2 and 3)", version);
    m->version = version;
    return GK_OK;
}

bool gk_model_big_endian(const gk_model *m) { return m->big_endian; }
void gk_model_set_big_endian(gk_model *m, bool big) { m->big_endian = big; }

uint32_t gk_model_alignment(const gk_model *m) {
    const gk_value *v = gk_kv_get(m, "general.alignment");
    if (v && v->type == GK_V_U32 && v->u != 0 && v->u % 8 == 0) return (uint32_t)v->u;
    if (v && v->type == GK_V_U32 && v->u != 0 && (v->u & (v->u - 1)) == 0) return (uint32_t)v->u;
    return GK_DEFAULT_ALIGNMENT;
}

gk_status gk_layout_value_check(const char *key, const gk_value *v, gk_error *err) {
    if (strcmp(key, "general.alignment") == 0) {
        if (v->type == GK_V_U32 && v->u != 0 && (v->u & (v->u - 1)) == 0 && v->u <= GK_MAX_WRITE_ALIGNMENT)
            return GK_OK;
        return gk_error_set(err, GK_E_ALIGN_VALUE, -1, "%s: must be a u32 power of two (at most %u), not %s", key,
                            GK_MAX_WRITE_ALIGNMENT, v->type == GK_V_U32 ? "that value" : gk_vtype_name(v->type));
    }
    gk_vtype want = strcmp(key, GK_SPLIT_KEY_NO) == 0 || strcmp(key, GK_SPLIT_KEY_COUNT) == 0 ? GK_V_U16
                    : strcmp(key, GK_SPLIT_KEY_TENSORS) == 0                                 ? GK_V_I32
                                                                                             : GK_V_COUNT;
    if (want != GK_V_COUNT && v->type != want)
        return gk_error_set(err, GK_E_ARG, -1, "%s: describes the shard layout and must be %s, not %s", key,
                            gk_vtype_name(want), gk_vtype_name(v->type));
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* Key/value pairs                                                          */
/* ------------------------------------------------------------------------ */

size_t gk_kv_count(const gk_model *m) { return m->n_kv; }

const gk_kv *gk_kv_at(const gk_model *m, size_t i) { return i < m->n_kv ? &m->kvs[i] : NULL; }

int64_t gk_kv_find(const gk_model *m, const char *key) {
    size_t len = strlen(key);
    for (size_t i = 0; i < m->n_kv; i++)
        if (m->kvs[i].key.len == len && memcmp(m->kvs[i].key.ptr, key, len) == 0) return (int64_t)i;
    return -1;
}

const gk_value *gk_kv_get(const gk_model *m, const char *key) {
    int64_t i = gk_kv_find(m, key);
    return i < 0 ? NULL : &m->kvs[i].value;
}

static bool is_unsigned(gk_vtype t) {
    return t == GK_V_U8 || t == GK_V_U16 || t == GK_V_U32 || t == GK_V_U64;
}
static bool is_signed(gk_vtype t) {
    return t == GK_V_I8 || t == GK_V_I16 || t == GK_V_I32 || t == GK_V_I64;
}

gk_status gk_kv_get_uint(const gk_model *m, const char *key, uint64_t *out) {
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL) return GK_E_NOT_FOUND;
    if (is_unsigned(v->type)) { *out = v->u; return GK_OK; }
    if (is_signed(v->type) && v->i >= 0) { *out = (uint64_t)v->i; return GK_OK; }
    return GK_E_TYPE_MISMATCH;
}

gk_status gk_kv_get_int(const gk_model *m, const char *key, int64_t *out) {
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL) return GK_E_NOT_FOUND;
    if (is_signed(v->type)) { *out = v->i; return GK_OK; }
    if (is_unsigned(v->type) && v->u <= INT64_MAX) { *out = (int64_t)v->u; return GK_OK; }
    return GK_E_TYPE_MISMATCH;
}

gk_status gk_kv_get_float(const gk_model *m, const char *key, double *out) {
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL) return GK_E_NOT_FOUND;
    if (v->type == GK_V_F32 || v->type == GK_V_F64) { *out = v->f; return GK_OK; }
    if (is_signed(v->type)) { *out = (double)v->i; return GK_OK; }
    if (is_unsigned(v->type)) { *out = (double)v->u; return GK_OK; }
    return GK_E_TYPE_MISMATCH;
}

gk_status gk_kv_get_str(const gk_model *m, const char *key, gk_str *out) {
    const gk_value *v = gk_kv_get(m, key);
    if (v == NULL) return GK_E_NOT_FOUND;
    if (v->type != GK_V_STR) return GK_E_TYPE_MISMATCH;
    *out = v->s;
    return GK_OK;
}

gk_status gk_model_append_kv_owned(gk_model *m, char *key, uint64_t key_len, gk_value *value,
                                   int64_t file_offset) {
    if (!GK_GROW(m->kvs, m->cap_kv, m->n_kv + 1, 16)) return GK_E_NOMEM;
    gk_kv *kv = &m->kvs[m->n_kv++];
    kv->key.ptr = key;
    kv->key.len = key_len;
    kv->value = *value;
    kv->file_offset = file_offset;
    return GK_OK;
}

static gk_status check_new_value(const gk_value *v, gk_error *err) {
    if ((unsigned)v->type >= GK_V_COUNT)
        return gk_error_set(err, GK_E_ARG, -1, "unknown value type %d", (int)v->type);
    if (v->type == GK_V_ARR && (unsigned)v->arr.elem >= GK_V_COUNT)
        return gk_error_set(err, GK_E_ARG, -1, "unknown array element type %d", (int)v->arr.elem);
    return GK_OK;
}

static gk_status set_kv(gk_model *m, const char *key, const gk_value *value, bool move_last,
                        gk_error *err) {
    size_t len = strlen(key);
    if (len == 0) return gk_error_set(err, GK_E_EMPTY_KEY, -1, "empty key");
    if (!gk_utf8_valid(key, len))
        return gk_error_set(err, GK_E_UTF8, -1, "key is not valid UTF-8");
    gk_status st = check_new_value(value, err);
    if (st != GK_OK) return st;
    gk_value copy;
    if (gk_value_copy(&copy, value) != GK_OK)
        return gk_error_set(err, GK_E_NOMEM, -1, "%s: out of memory", key);
    int64_t i = gk_kv_find(m, key);
    if (i >= 0 && !move_last) {
        gk_value_free(&m->kvs[i].value);
        m->kvs[i].value = copy;
        return GK_OK;
    }
    if (i >= 0) gk_kv_delete(m, key);
    char *k = dup_bytes(key, len);
    if (k == NULL || gk_model_append_kv_owned(m, k, len, &copy, -1) != GK_OK) {
        free(k);
        gk_value_free(&copy);
        return gk_error_set(err, GK_E_NOMEM, -1, "%s: out of memory", key);
    }
    return GK_OK;
}

gk_status gk_kv_set(gk_model *m, const char *key, const gk_value *value, gk_error *err) {
    return set_kv(m, key, value, false, err);
}

gk_status gk_kv_set_last(gk_model *m, const char *key, const gk_value *value, gk_error *err) {
    return set_kv(m, key, value, true, err);
}

gk_status gk_kv_set_u32(gk_model *m, const char *key, uint32_t v, gk_error *err) {
    gk_value val = { .type = GK_V_U32, .u = v };
    return gk_kv_set(m, key, &val, err);
}

gk_status gk_kv_set_str(gk_model *m, const char *key, const char *v, gk_error *err) {
    gk_value val = { .type = GK_V_STR, .s = { v, strlen(v) } };
    return gk_kv_set(m, key, &val, err);
}

gk_status gk_kv_delete(gk_model *m, const char *key) {
    int64_t i = gk_kv_find(m, key);
    if (i < 0) return GK_E_NOT_FOUND;
    free((void *)m->kvs[i].key.ptr);
    gk_value_free(&m->kvs[i].value);
    memmove(&m->kvs[i], &m->kvs[i + 1], (m->n_kv - (size_t)i - 1) * sizeof *m->kvs);
    m->n_kv--;
    return GK_OK;
}

gk_status gk_kv_rename(gk_model *m, const char *old_key, const char *new_key, gk_error *err) {
    int64_t i = gk_kv_find(m, old_key);
    if (i < 0) return gk_error_set(err, GK_E_NOT_FOUND, -1, "no key '%s'", old_key);
    if (strcmp(old_key, new_key) == 0) return GK_OK;
    if (gk_kv_find(m, new_key) >= 0)
        return gk_error_set(err, GK_E_EXISTS, -1, "key '%s' already exists", new_key);
    size_t len = strlen(new_key);
    if (len == 0) return gk_error_set(err, GK_E_EMPTY_KEY, -1, "empty key");
    if (!gk_utf8_valid(new_key, len)) return gk_error_set(err, GK_E_UTF8, -1, "key is not valid UTF-8");
    char *k = dup_bytes(new_key, len);
    if (k == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    free((void *)m->kvs[i].key.ptr);
    m->kvs[i].key.ptr = k;
    m->kvs[i].key.len = len;
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* Tensors                                                                  */
/* ------------------------------------------------------------------------ */

size_t gk_tensor_count(const gk_model *m) { return m->n_tensors; }

const gk_tensor *gk_tensor_at(const gk_model *m, size_t i) {
    return i < m->n_tensors ? &m->tensors[i] : NULL;
}

int64_t gk_tensor_find(const gk_model *m, const char *name) {
    size_t len = strlen(name);
    for (size_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].name.len == len && memcmp(m->tensors[i].name.ptr, name, len) == 0)
            return (int64_t)i;
    return -1;
}

uint64_t gk_tensor_elements(const gk_tensor *t, bool *overflow) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < t->n_dims && d < GK_MAX_DIMS; d++) {
        if (overflow && t->ne[d] != 0 && n > UINT64_MAX / t->ne[d]) *overflow = true;
        n *= t->ne[d];
    }
    return n;
}

gk_status gk_tensor_nbytes(uint32_t type, const uint64_t ne[GK_MAX_DIMS], uint64_t *out) {
    const gk_type_info *t = gk_type_get(type);
    if (t == NULL) return GK_E_TENSOR_TYPE;
    if (ne[0] % t->block_elems != 0) return GK_E_ROW_BLOCK;
    uint64_t bytes = ne[0] / t->block_elems;
    if (bytes != 0 && t->block_bytes > UINT64_MAX / bytes) return GK_E_DIM_OVERFLOW;
    bytes *= t->block_bytes;
    for (int d = 1; d < GK_MAX_DIMS; d++) {
        if (ne[d] != 0 && bytes > UINT64_MAX / ne[d]) return GK_E_DIM_OVERFLOW;
        bytes *= ne[d];
    }
    if (bytes > (uint64_t)INT64_MAX) return GK_E_DIM_OVERFLOW;
    *out = bytes;
    return GK_OK;
}

gk_status gk_model_append_tensor_owned(gk_model *m, const gk_tensor *t) {
    if (!GK_GROW(m->tensors, m->cap_tensors, m->n_tensors + 1, 64)) return GK_E_NOMEM;
    m->tensors[m->n_tensors++] = *t;
    return GK_OK;
}

gk_status gk_tensor_add(gk_model *m, const char *name, uint32_t type, uint32_t n_dims,
                        const uint64_t *ne, gk_error *err) {
    size_t len = strlen(name);
    if (len == 0) return gk_error_set(err, GK_E_EMPTY_NAME, -1, "empty tensor name");
    if (gk_tensor_find(m, name) >= 0)
        return gk_error_set(err, GK_E_EXISTS, -1, "tensor '%s' already exists", name);
    if (n_dims > GK_MAX_DIMS)
        return gk_error_set(err, GK_E_NDIMS, -1, "%s: %u dimensions (at most %d)", name, n_dims, GK_MAX_DIMS);
    gk_tensor t = { .n_dims = n_dims, .type = type, .file_offset = -1 };
    for (int d = 0; d < GK_MAX_DIMS; d++) t.ne[d] = (uint32_t)d < n_dims ? ne[d] : 1;
    gk_status st = gk_tensor_nbytes(type, t.ne, &t.nbytes);
    if (st != GK_OK)
        return gk_error_set(err, st, -1, "%s: %s for type %u with row length %llu", name,
                            gk_status_name(st), type, (unsigned long long)t.ne[0]);
    char *n = dup_bytes(name, len);
    if (n == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    t.name.ptr = n;
    t.name.len = len;
    if (gk_model_append_tensor_owned(m, &t) != GK_OK) {
        free(n);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    return GK_OK;
}

gk_status gk_tensor_set_type(gk_model *m, size_t i, uint32_t type, gk_error *err) {
    if (i >= m->n_tensors) return gk_error_set(err, GK_E_ARG, -1, "tensor index %zu out of range", i);
    gk_tensor *t = &m->tensors[i];
    uint64_t nbytes;
    gk_status st = gk_tensor_nbytes(type, t->ne, &nbytes);
    if (st != GK_OK)
        return gk_error_set(err, st, -1, "%s: cannot be type %u (%s)", t->name.ptr, type, gk_status_name(st));
    t->type = type;
    t->nbytes = nbytes;
    return GK_OK;
}

void gk_tensor_set_offset(gk_model *m, size_t i, uint64_t offset) {
    if (i < m->n_tensors) m->tensors[i].offset = offset;
}

void gk_tensor_clear(gk_model *m) {
    for (size_t i = 0; i < m->n_tensors; i++) free((void *)m->tensors[i].name.ptr);
    m->n_tensors = 0;
}

uint64_t gk_model_layout(gk_model *m) {
    uint64_t align = gk_model_alignment(m);
    uint64_t off = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        off = gk_align_up(off, align);
        m->tensors[i].offset = off;
        off += m->tensors[i].nbytes;
    }
    return off;
}
