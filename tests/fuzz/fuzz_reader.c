/*
 * fuzz_reader.c - libFuzzer harness for the reader and the header writer.
 *
 * Every input is parsed from memory. A file the reader accepts is walked (every
 * key, value and tensor), its header is written back with the one writer, and
 * the written header must read back to the same model: what was read is written
 * identically. Every input is also opened as a preview (GK_OPEN_PREVIEW), which
 * must reach the same verdict: the same status, offset, message and warnings.
 * Build with -Dfuzz=true and clang (scripts/fuzz does both).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"

static void walk_value(const gk_value *v, uint64_t *sink) {
    *sink += (uint64_t)v->type;
    if (v->type == GK_V_STR) *sink += v->s.len;
    if (v->type == GK_V_ARR && v->arr.elem == GK_V_ARR)
        for (uint64_t i = 0; i < v->arr.n; i++) walk_value(&((const gk_value *)v->arr.data)[i], sink);
}

static bool same_models(const gk_model *a, const gk_model *b) {
    if (gk_kv_count(a) != gk_kv_count(b) || gk_tensor_count(a) != gk_tensor_count(b)) return false;
    for (size_t i = 0; i < gk_kv_count(a); i++) {
        const gk_kv *x = gk_kv_at(a, i), *y = gk_kv_at(b, i);
        if (x->key.len != y->key.len || memcmp(x->key.ptr, y->key.ptr, x->key.len) != 0) return false;
        if (x->value.type != y->value.type) return false;
    }
    for (size_t i = 0; i < gk_tensor_count(a); i++) {
        const gk_tensor *x = gk_tensor_at(a, i), *y = gk_tensor_at(b, i);
        if (x->type != y->type || x->offset != y->offset || x->n_dims != y->n_dims ||
            memcmp(x->ne, y->ne, sizeof x->ne) != 0 || strcmp(x->name.ptr, y->name.ptr) != 0)
            return false;
    }
    return true;
}

/* A preview of the same bytes agrees with the full read: status, error, warnings. */
static void check_preview(const uint8_t *data, size_t size, gk_status full, const gk_error *full_err,
                          const gk_file *full_file) {
    gk_file *p = NULL;
    gk_error err;
    gk_status st = gk_open_memory(data, size, GK_OPEN_LENIENT | GK_OPEN_PREVIEW, &p, &err);
    if (st != full) abort();
    if (st != GK_OK) {
        if (err.offset != full_err->offset || strcmp(err.message, full_err->message) != 0) abort();
        return;
    }
    if (gk_file_warning_count(p) != gk_file_warning_count(full_file)) abort();
    for (size_t i = 0; i < gk_file_warning_count(p); i++)
        if (strcmp(gk_file_warning_at(p, i)->message, gk_file_warning_at(full_file, i)->message) != 0 ||
            gk_file_warning_at(p, i)->offset != gk_file_warning_at(full_file, i)->offset)
            abort();
    if (!same_models(gk_file_model(p), gk_file_model((gk_file *)full_file))) abort();
    gk_close(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gk_file *f = NULL;
    gk_error err;
    gk_status st = gk_open_memory(data, size, GK_OPEN_LENIENT, &f, &err);
    check_preview(data, size, st, &err, f);
    if (st != GK_OK) {
        if (err.code == GK_OK || err.message[0] == '\0') abort();   /* every failure explains itself */
        return 0;
    }
    gk_model *m = gk_file_model(f);
    uint64_t sink = 0;
    for (size_t i = 0; i < gk_kv_count(m); i++) walk_value(&gk_kv_at(m, i)->value, &sink);
    if (gk_model_version(m) == 1) gk_model_set_version(m, 3, NULL);
    uint8_t *hdr;
    size_t len;
    if (gk_header_serialize(m, &hdr, &len, &err) == GK_OK) {
        /* The written header alone (tensor data absent) reads back leniently. */
        gk_file *g = NULL;
        if (gk_open_memory(hdr, len, GK_OPEN_LENIENT, &g, &err) != GK_OK) abort();
        if (!same_models(m, gk_file_model(g))) abort();
        gk_close(g);
        free(hdr);
    }
    gk_close(f);
    return (int)(sink & 0);
}
