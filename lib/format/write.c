/*
 * write.c - the one GGUF header writer: serializes magic, version, counts, every
 * key/value pair and the tensor directory of a model, in its version (2 or 3)
 * and byte order, padded with zeros up to the aligned start of the data section.
 *
 * Sizes are computed by the same code that writes (a counting pass), so the
 * header size the planner uses and the bytes the writer emits cannot disagree.
 * Every header is read back by the reader before it is handed out, so no writer
 * (rewrites, in-place edits, synth) can publish a header that `verify` refuses.
 */
#include <stdlib.h>
#include <string.h>

#include "format/file.h"
#include "types/fp16.h"

typedef struct out_buf {
    uint8_t *data;      /* NULL in a counting pass */
    size_t len;
    bool swap;          /* write in the byte order opposite to the host's */
} out_buf;

static void put(out_buf *o, const void *p, size_t n) {
    if (o->data) memcpy(o->data + o->len, p, n);
    o->len += n;
}

/* Writes an n-byte number given in host order, swapped when needed. */
static void put_num(out_buf *o, const void *p, size_t n) {
    if (o->data == NULL) {
        o->len += n;
        return;
    }
    uint8_t *dst = o->data + o->len;
    const uint8_t *src = p;
    if (o->swap)
        for (size_t i = 0; i < n; i++) dst[i] = src[n - 1 - i];
    else
        memcpy(dst, src, n);
    o->len += n;
}

static void put_u32(out_buf *o, uint32_t v) { put_num(o, &v, 4); }
static void put_u64(out_buf *o, uint64_t v) { put_num(o, &v, 8); }

static void put_str(out_buf *o, gk_str s) {
    put_u64(o, s.len);
    put(o, s.ptr, s.len);
}

/* A scalar value as stored in the file. */
static void put_scalar(out_buf *o, gk_vtype t, const gk_value *v) {
    switch (t) {
    case GK_V_U8: { uint8_t x = (uint8_t)v->u; put(o, &x, 1); break; }
    case GK_V_I8: { int8_t x = (int8_t)v->i; put(o, &x, 1); break; }
    case GK_V_U16: { uint16_t x = (uint16_t)v->u; put_num(o, &x, 2); break; }
    case GK_V_I16: { int16_t x = (int16_t)v->i; put_num(o, &x, 2); break; }
    case GK_V_U32: { uint32_t x = (uint32_t)v->u; put_num(o, &x, 4); break; }
    case GK_V_I32: { int32_t x = (int32_t)v->i; put_num(o, &x, 4); break; }
    case GK_V_U64: put_num(o, &v->u, 8); break;
    case GK_V_I64: put_num(o, &v->i, 8); break;
    case GK_V_F32: { float x = (float)v->f; put_num(o, &x, 4); break; }
    case GK_V_F64: put_num(o, &v->f, 8); break;
    case GK_V_BOOL: { uint8_t x = v->b ? 1 : 0; put(o, &x, 1); break; }
    default: break;
    }
}

/* Lays out an array: its count, then the elements held (all of them, but in a
 * preview, which gk_header_serialize refuses). */
static void put_array(out_buf *o, const gk_value *v) {
    put_u32(o, (uint32_t)v->arr.elem);
    put_u64(o, v->arr.n);
    uint64_t held = gk_value_held(v);
    if (held == 0) return;
    if (v->arr.elem == GK_V_STR) {
        const gk_str *items = v->arr.data;
        for (uint64_t i = 0; i < held; i++) put_str(o, items[i]);
    } else if (v->arr.elem == GK_V_ARR) {
        const gk_value *items = v->arr.data;
        for (uint64_t i = 0; i < held; i++) put_array(o, &items[i]);
    } else {
        size_t es = gk_vtype_size(v->arr.elem);
        if (!o->swap || es == 1) {
            put(o, v->arr.data, held * es);
        } else {
            const uint8_t *p = v->arr.data;
            for (uint64_t i = 0; i < held; i++) put_num(o, p + i * es, es);
        }
    }
}

static void put_value(out_buf *o, const gk_value *v) {
    if (v->type == GK_V_STR) put_str(o, v->s);
    else if (v->type == GK_V_ARR) put_array(o, v);
    else put_scalar(o, v->type, v);
}

static bool host_is_little(void) {
    const uint16_t probe = 1;
    return *(const uint8_t *)&probe == 1;
}

static void put_header(out_buf *o, const gk_model *m) {
    put(o, "GGUF", 4);
    put_u32(o, m->version);
    put_u64(o, m->n_tensors);
    put_u64(o, m->n_kv);
    for (size_t i = 0; i < m->n_kv; i++) {
        put_str(o, m->kvs[i].key);
        put_u32(o, (uint32_t)m->kvs[i].value.type);
        put_value(o, &m->kvs[i].value);
    }
    for (size_t i = 0; i < m->n_tensors; i++) {
        const gk_tensor *t = &m->tensors[i];
        put_str(o, t->name);
        put_u32(o, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++) put_u64(o, t->ne[d]);
        put_u32(o, t->type);
        put_u64(o, t->offset);
    }
}

uint64_t gk_model_header_size(const gk_model *m) {
    out_buf o = { 0 };
    put_header(&o, m);
    return o.len;
}

uint64_t gk_model_data_start(const gk_model *m) {
    return gk_align_up(gk_model_header_size(m), gk_model_alignment(m));
}

gk_status gk_header_serialize(const gk_model *m, uint8_t **out, size_t *out_len, gk_error *err) {
    *out = NULL;
    *out_len = 0;
    if (m->version != 2 && m->version != 3)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "cannot write GGUF version %u (set version 2 or 3)", m->version);
    for (size_t i = 0; i < m->n_kv; i++)
        if (m->kvs[i].value.type == GK_V_ARR && m->kvs[i].value.arr.n_unread > 0)
            return gk_error_set(err, GK_E_ARG, -1,
                                "cannot write a preview: '%s' holds %llu of its %llu elements "
                                "(open without GK_OPEN_PREVIEW)", m->kvs[i].key.ptr,
                                (unsigned long long)gk_value_held(&m->kvs[i].value),
                                (unsigned long long)m->kvs[i].value.arr.n);
    for (size_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].n_dims > GK_MAX_DIMS)
            return gk_error_set(err, GK_E_NDIMS, -1, "tensor '%s' has %u dimensions",
                                m->tensors[i].name.ptr, m->tensors[i].n_dims);
    uint64_t size = gk_model_header_size(m);
    uint64_t align = gk_model_alignment(m);
    if (align > GK_MAX_WRITE_ALIGNMENT)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "general.alignment %llu is larger than the %u bytes ggufkit writes",
                            (unsigned long long)align, GK_MAX_WRITE_ALIGNMENT);
    uint64_t padded = gk_align_up(size, align);
    if (padded > SIZE_MAX) return gk_error_set(err, GK_E_NOMEM, -1, "header too large");
    out_buf o = { .data = calloc(1, (size_t)padded ? (size_t)padded : 1),
                  .swap = m->big_endian == host_is_little() };
    if (o.data == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory for the header");
    put_header(&o, m);
    /* Read back as any reader will (data placement aside: the data is not here). */
    gk_file *back;
    gk_error why;
    if (gk_open_memory(o.data, (size_t)padded, GK_OPEN_LENIENT | GK_OPEN_PREVIEW, &back, &why) != GK_OK) {
        free(o.data);
        return gk_error_set(err, why.code, -1, "refusing to write a header ggufkit's reader rejects: %s",
                            why.message);
    }
    gk_close(back);
    *out = o.data;
    *out_len = (size_t)padded;
    return GK_OK;
}
