/*
 * tensors.c - the safetensors files of an export: each file's header (an
 * 8-byte length, then JSON naming dtype, shape and data_offsets of each
 * tensor, padded with spaces so the data starts 8-aligned), then its tensors
 * streamed one chunk at a time from the GGUF: read, byte-swapped from a
 * big-endian file, dequantized (or copied when the type is kept), the rows of
 * Q/K put back in the checkpoint's order; and model.safetensors.index.json
 * when there are several files.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "util/grow.h"

/* Elements converted at a time (rows of a permuted tensor: one head group). */
#define CHUNK_ELEMS (1u << 20)

static const char *st_dtype(uint32_t t) { return t == GK_TYPE_F32 ? "F32" : t == GK_TYPE_F16 ? "F16" : "BF16"; }

static gk_status nomem(gk_error *err) { return gk_error_set(err, GK_E_NOMEM, -1, "out of memory"); }

/* The header of shard k: its JSON, padded. */
static gk_status header(const gk_exp_plan *p, uint32_t k, char **out, size_t *len, gk_error *err) {
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(root, "__metadata__");
    bool ok = root && meta && cJSON_AddStringToObject(meta, "format", "pt");
    for (size_t i = 0; ok && i < p->n; i++) {
        const gk_exp_tensor *x = &p->t[i];
        if (x->shard != k) continue;
        cJSON *t = cJSON_AddObjectToObject(root, x->name), *shape, *offs;
        ok = t && cJSON_AddStringToObject(t, "dtype", st_dtype(x->dtype)) &&
             (shape = cJSON_AddArrayToObject(t, "shape")) && (offs = cJSON_AddArrayToObject(t, "data_offsets"));
        for (uint32_t d = 0; ok && d < x->n_dims; d++) ok = cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)x->shape[d]));
        ok = ok && cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)x->offset)) &&
             cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(x->offset + x->bytes)));
    }
    char *json = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (json == NULL) return nomem(err);
    size_t n = strlen(json), padded = (n + 7) & ~(size_t)7;
    char *buf = malloc(8 + padded);
    if (buf == NULL) {
        free(json);
        return nomem(err);
    }
    for (int b = 0; b < 8; b++) buf[b] = (char)(((uint64_t)padded >> (8 * b)) & 0xff);
    memcpy(buf + 8, json, n);
    memset(buf + 8 + n, ' ', padded - n);
    free(json);
    *out = buf;
    *len = 8 + padded;
    return GK_OK;
}

typedef struct stream {
    const gk_exp_source *in;
    const gk_model *m;
    uint8_t *src, *dst;
    float *f32;
    size_t cap_src, cap_dst, cap_f32;
    gk_progress_fn progress;
    void *ctx;
    uint64_t done, total;
} stream;

/* Converts n elements of type `type` at st->src into od at st->dst. */
static void convert_elems(stream *st, uint32_t type, uint32_t od, uint64_t n) {
    const gk_type_info *ti = gk_type_get(type);
    if (type == od) {
        memcpy(st->dst, st->src, gk_type_row_bytes(type, n));
    } else if (od == GK_TYPE_F32) {
        ti->dequantize(st->src, (float *)st->dst, (int64_t)n);
    } else {
        ti->dequantize(st->src, st->f32, (int64_t)n);
        gk_type_get(od)->quantize(st->f32, st->dst, 1, (int64_t)n, NULL);
    }
}

static gk_status one_tensor(stream *st, const gk_exp_tensor *x, gk_sink *out, gk_error *err) {
    const gk_tensor *t = gk_tensor_at(st->m, x->src);
    const gk_type_info *ti = gk_type_get(t->type);
    uint64_t row = x->perm_groups ? x->width : t->ne[0];
    uint64_t n_rows = row ? x->elems / row : 0;
    uint64_t unit = x->perm_groups ? x->rows / x->perm_groups : (CHUNK_ELEMS / row ? CHUNK_ELEMS / row : 1);
    uint64_t row_in = gk_type_row_bytes(t->type, row), row_out = row * (x->dtype == GK_TYPE_F32 ? 4 : 2);
    bool swap = gk_model_big_endian(st->m) && t->type != GK_TYPE_I8;
    for (uint64_t r = 0; r < n_rows; r += unit) {
        uint64_t c = n_rows - r < unit ? n_rows - r : unit;
        size_t in_bytes = (size_t)(c * row_in), out_bytes = (size_t)(c * row_out), elems = (size_t)(c * row);
        if (!GK_GROW(st->src, st->cap_src, in_bytes, 1) || !GK_GROW(st->dst, st->cap_dst, out_bytes, 1) ||
            !GK_GROW(st->f32, st->cap_f32, elems, 1))
            return nomem(err);
        gk_status s = gk_exp_read(st->in, x->src, x->src_start + r * row_in, st->src, in_bytes, err);
        if (s != GK_OK) return s;
        if (swap && ti->byteswap) ti->byteswap(st->src, (int64_t)(elems / ti->block_elems));
        convert_elems(st, t->type, x->dtype, elems);
        if (x->perm_groups == 0) {
            s = gk_sink_write(out, st->dst, out_bytes, err);
        } else {
            /* checkpoint row h*hd + s*hd/2 + i is GGUF row h*hd + 2*i + s */
            uint64_t half = c / 2;
            for (uint64_t j = 0; j < c && s == GK_OK; j++) {
                uint64_t g = (j % half) * 2 + j / half;
                s = gk_sink_write(out, st->dst + g * row_out, (size_t)row_out, err);
            }
        }
        if (s != GK_OK) return s;
        st->done += out_bytes;
        if (st->progress && !st->progress(st->ctx, st->done, st->total))
            return gk_error_set(err, GK_E_INTERRUPTED, -1, "interrupted");
    }
    return GK_OK;
}

static gk_status index_file(const gk_exp_plan *p, gk_exp_folder *f, gk_error *err) {
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(root, "metadata");
    cJSON *map = cJSON_AddObjectToObject(root, "weight_map");
    bool ok = root && meta && map && cJSON_AddNumberToObject(meta, "total_size", (double)p->total_bytes);
    char name[64];
    for (size_t i = 0; ok && i < p->n; i++) {
        gk_exp_shard_name(p, p->t[i].shard, name, sizeof name);
        ok = cJSON_AddStringToObject(map, p->t[i].name, name) != NULL;
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL) return nomem(err);
    gk_status s = gk_exp_folder_write_text(f, "model.safetensors.index.json", text, err);
    free(text);
    return s;
}

gk_status gk_exp_read(const gk_exp_source *src, size_t i, uint64_t start, void *buf, size_t len, gk_error *err) {
    return gk_file_tensor_read(src->steps[i].src, src->steps[i].src_tensor, start, buf, len, err);
}

gk_status gk_exp_shards(const gk_exp_source *in, const gk_exp_plan *p, gk_exp_folder *f, gk_progress_fn progress, void *ctx,
                        gk_error *err) {
    stream st = { .in = in, .m = in->m, .progress = progress, .ctx = ctx, .total = p->total_bytes };
    gk_status s = GK_OK;
    for (uint32_t k = 0; k < p->n_shards && s == GK_OK; k++) {
        char name[64], path[4096];
        gk_exp_shard_name(p, k, name, sizeof name);
        gk_exp_folder_path(f, name, path, sizeof path);
        char *head = NULL;
        size_t head_len = 0;
        gk_sink *out = NULL;
        s = header(p, k, &head, &head_len, err);
        if (s == GK_OK) s = gk_sink_open(path, GK_SINK_DEFAULT, &out, err);
        if (s == GK_OK) s = gk_sink_write(out, head, head_len, err);
        free(head);
        for (size_t i = 0; i < p->n && s == GK_OK; i++)
            if (p->t[i].shard == k) s = one_tensor(&st, &p->t[i], out, err);
        if (s == GK_OK) s = gk_sink_commit(out, err);   /* frees out */
        else gk_sink_abort(out);
        if (s != GK_OK && (err->file[0] == '\0' || strncmp(err->file, path, strlen(path) - strlen(name)) == 0)) {
            /* an output's error names the file as it will be called, not its
             * temporary place (an input's keeps the input's name) */
            gk_exp_folder_final_path(f, name, path, sizeof path);
            gk_error_about(err, path);
        }
    }
    if (s == GK_OK && p->n_shards > 1) s = index_file(p, f, err);
    free(st.src);
    free(st.dst);
    free(st.f32);
    return s;
}
