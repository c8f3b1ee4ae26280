/*
 * data.c - verify --data: what only the tensor data can tell. Every tensor's
 * byte span (from its offset to the next tensor's, or to the end of the file)
 * must be what its type and shape give, up to the alignment padding; every
 * value and scale field must pass its type's check (gk_type_info.check). The
 * data is read once in offset order by the scanner, in bounded memory.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/file.h"
#include "pipeline/scan.h"

#define SHOWN_PER_TENSOR 8   /* faults listed per tensor; the rest are counted */

typedef struct walk {
    gk_file *f;
    const size_t *order;       /* scan item -> tensor index */
    gk_data_finding_fn fn;
    void *ctx;
    size_t n_errors;
    uint64_t tensor_faults;    /* faults of the tensor being read */
    const gk_scan_chunk *chunk;
    bool stopped;
} walk;

static bool emit(walk *w, bool is_error, size_t tensor, int64_t block, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static bool emit(walk *w, bool is_error, size_t tensor, int64_t block, int64_t offset, const char *fmt, ...) {
    gk_data_finding d = { .is_error = is_error, .tensor = tensor, .block = block, .offset = offset };
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.message, sizeof d.message, fmt, ap);
    va_end(ap);
    if (!w->fn(w->ctx, &d)) w->stopped = true;
    return !w->stopped;
}

static bool on_fault(void *ctx, const gk_block_fault *fl) {
    walk *w = ctx;
    const gk_scan_chunk *c = w->chunk;
    size_t ti = w->order[c->item];
    const gk_tensor *t = gk_tensor_at(gk_file_model(w->f), ti);
    const gk_type_info *type = gk_type_get(t->type);
    int64_t block = (int64_t)(c->start / type->block_bytes) + fl->block;
    int64_t offset = (int64_t)(c->file_offset + (uint64_t)fl->block * type->block_bytes + fl->byte);
    w->n_errors++;
    if (++w->tensor_faults > SHOWN_PER_TENSOR) return true;
    char value[32];
    snprintf(value, sizeof value, isnan(fl->value) ? "nan" : "%g", fl->value);
    return emit(w, true, ti, block, offset, "tensor '%s' (%s): %s %lld: %s = %s: %s", t->name.ptr, type->name,
                type->quantized ? "block" : "element", (long long)block, fl->field, value, fl->why);
}

static gk_status consume(void *ctx, const gk_scan_chunk *c, gk_error *err) {
    walk *w = ctx;
    size_t ti = w->order[c->item];
    const gk_tensor *t = gk_tensor_at(gk_file_model(w->f), ti);
    const gk_type_info *type = gk_type_get(t->type);
    if (c->first) w->tensor_faults = 0;
    w->chunk = c;
    if (type && type->check && c->len > 0)
        type->check(c->data, (int64_t)(c->len / type->block_bytes), on_fault, w);
    if (c->last && w->tensor_faults > SHOWN_PER_TENSOR && !w->stopped)
        emit(w, true, ti, -1, -1, "tensor '%s': %llu more faults not listed", t->name.ptr,
             (unsigned long long)(w->tensor_faults - SHOWN_PER_TENSOR));
    return w->stopped ? gk_error_set(err, GK_E_INTERRUPTED, -1, "stopped") : GK_OK;
}

static int by_offset(const void *a, const void *b, void *model) {
    uint64_t x = gk_tensor_at(model, *(const size_t *)a)->offset;
    uint64_t y = gk_tensor_at(model, *(const size_t *)b)->offset;
    return x < y ? -1 : x > y;
}

/* Each tensor's span is its size plus less than one alignment of padding. */
static void check_spans(walk *w, const size_t *order, size_t n) {
    const gk_model *m = gk_file_model(w->f);
    uint64_t align = gk_model_alignment(m), data_size = w->f->size - w->f->data_offset;
    for (size_t k = 0; k < n && !w->stopped; k++) {
        const gk_tensor *t = gk_tensor_at(m, order[k]);
        uint64_t end = t->offset + t->nbytes;
        uint64_t next = k + 1 < n ? gk_tensor_at(m, order[k + 1])->offset : data_size;
        if (next < end || next - end < align) continue;
        const gk_type_info *type = gk_type_get(t->type);
        if (k + 1 < n) w->n_errors++;
        if (k + 1 < n)
            emit(w, true, order[k], -1, (int64_t)(w->f->data_offset + end),
                 "tensor '%s' (%s): its span to the next tensor '%s' is %llu bytes, but its type and shape "
                 "account for %llu (%llu bytes unaccounted for)", t->name.ptr, type ? type->name : "?",
                 gk_tensor_at(m, order[k + 1])->name.ptr, (unsigned long long)(next - t->offset),
                 (unsigned long long)t->nbytes, (unsigned long long)(next - end));
        else
            emit(w, false, order[k], -1, (int64_t)(w->f->data_offset + end),
                 "the file goes on for %llu bytes past the end of its last tensor '%s' (more than the "
                 "alignment padding)", (unsigned long long)(next - end), t->name.ptr);
    }
}

gk_status gk_verify_data(gk_file *f, gk_data_finding_fn fn, void *ctx, gk_progress_fn progress,
                         void *progress_ctx, size_t *n_errors, gk_error *err) {
    const gk_model *m = gk_file_model(f);
    size_t n = gk_tensor_count(m);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    gk_scan_item *items = malloc((n ? n : 1) * sizeof *items);
    if (order == NULL || items == NULL) {
        free(order);
        free(items);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    for (size_t i = 0; i < n; i++) order[i] = i;
    qsort_r(order, n, sizeof *order, by_offset, (void *)m);
    for (size_t i = 0; i < n; i++) items[i] = (gk_scan_item){ f, order[i] };
    walk w = { .f = f, .order = order, .fn = fn, .ctx = ctx };
    check_spans(&w, order, n);
    gk_status st = GK_OK;
    if (!w.stopped) {
        gk_scan_fn fns[1] = { consume };
        void *ctxs[1] = { &w };
        gk_scan_opts so = { .to_little = true, .progress = progress, .progress_ctx = progress_ctx };
        st = gk_scan_run(items, n, fns, ctxs, 1, &so, err);
        if (st == GK_E_INTERRUPTED && w.stopped) st = GK_OK;
    }
    free(order);
    free(items);
    if (n_errors) *n_errors = w.n_errors;
    return st;
}
