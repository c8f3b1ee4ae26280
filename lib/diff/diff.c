/*
 * diff.c - gk_diff_run: compares a model with a reference. Layout facts and
 * metadata first (meta.c), then the tensor directory by name, then the numbers
 * of every tensor both have with the same shape (numbers.c), and the verdict.
 *
 * Tensors are reported in the reference's directory order, but read in the
 * order of a side that is a stream (a .zst file or an archive member), so that
 * its stream never has to restart when the other file orders its tensors
 * differently.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_internal.h"
#include "pipeline/workers.h"
#include "format/file.h"
#include "util/opts.h"

static bool same_shape(const gk_tensor *a, const gk_tensor *b) {
    return memcmp(a->ne, b->ne, sizeof a->ne) == 0;
}

static bool is_stream(const gk_diff_input *in) {
    for (size_t i = 0; i < in->model->n_tensors; i++)
        if (in->steps[i].src->fd < 0 && in->steps[i].src->mem == NULL) return true;
    return false;
}

/* Where tensor i's bytes lie in the order a reader of in meets them. */
typedef struct read_pos {
    size_t file;              /* ordinal of the holding file within the input */
    uint64_t offset;
} read_pos;

typedef struct order_item {
    read_pos pos;
    size_t entry;             /* index in res->tensors */
} order_item;

static int order_cmp(const void *pa, const void *pb) {
    const order_item *a = pa, *b = pb;
    if (a->pos.file != b->pos.file) return a->pos.file < b->pos.file ? -1 : 1;
    if (a->pos.offset != b->pos.offset) return a->pos.offset < b->pos.offset ? -1 : 1;
    return a->entry < b->entry ? -1 : a->entry > b->entry;
}

/* The reading position of every tensor of in (files numbered in step order). */
static read_pos *positions(const gk_diff_input *in) {
    size_t n = in->model->n_tensors, file = 0;
    read_pos *pos = calloc(n + 1, sizeof *pos);
    for (size_t i = 0; pos && i < n; i++) {
        const gk_step *st = &in->steps[i];
        if (i > 0 && st->src != in->steps[i - 1].src) file++;
        pos[i] = (read_pos){ file, gk_tensor_at(st->src->model, st->src_tensor)->offset };
    }
    return pos;
}

/* Fills res->tensors with the directory comparison (no numbers yet). */
static gk_status diff_directory(const gk_model *a, const gk_model *b, gk_diff_result *res, gk_error *err) {
    res->tensors = calloc(a->n_tensors + b->n_tensors + 1, sizeof *res->tensors);
    if (res->tensors == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; i < a->n_tensors; i++) {
        const gk_tensor *t = &a->tensors[i];
        int64_t j = gk_tensor_find(b, t->name.ptr);
        const gk_tensor *u = j >= 0 ? &b->tensors[j] : NULL;
        gk_tensor_diff_kind kind = u == NULL ? GK_TDIFF_ONLY_REF : same_shape(t, u) ? GK_TDIFF_DIFFERENT : GK_TDIFF_SHAPE;
        res->tensors[res->n_tensors++] = (gk_tensor_diff){ .name = t->name.ptr, .kind = kind, .ref = t,
                                                           .other = u, .first_diff_row = -1 };
    }
    for (size_t j = 0; j < b->n_tensors; j++)
        if (gk_tensor_find(a, b->tensors[j].name.ptr) < 0)
            res->tensors[res->n_tensors++] = (gk_tensor_diff){ .name = b->tensors[j].name.ptr,
                                                               .kind = GK_TDIFF_ONLY_OTHER,
                                                               .other = &b->tensors[j],
                                                               .first_diff_row = -1 };
    return GK_OK;
}

static gk_diff_verdict verdict(const gk_diff_result *res) {
    const gk_diff_layout *l = &res->layout;
    bool same = res->n_meta == 0 && l->version[0] == l->version[1] && l->big_endian[0] == l->big_endian[1] &&
                l->alignment[0] == l->alignment[1];
    for (size_t i = 0; i < res->n_tensors; i++) {
        const gk_tensor_diff *d = &res->tensors[i];
        if (d->kind != GK_TDIFF_IDENTICAL && d->kind != GK_TDIFF_SAME_VALUES) return GK_DIFF_DIFFERS;
        if (d->kind != GK_TDIFF_IDENTICAL || d->ref->type != d->other->type || d->ref->n_dims != d->other->n_dims)
            same = false;
    }
    return same ? GK_DIFF_IDENTICAL : GK_DIFF_SAME_WEIGHTS;
}

gk_status gk_diff_run(gk_diff_input *ref, gk_diff_input *other, const gk_diff_opts *opts,
                      gk_diff_result *res, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    memset(res, 0, sizeof *res);
    gk_diff_opts defaults = { GK_OPTS_INIT(gk_diff_opts) };
    if (opts == NULL) opts = &defaults;
    gk_status sc = GK_OPTS_CHECK(opts, gk_diff_opts, err);
    if (sc != GK_OK) return sc;
    int threads = opts->threads > 0 ? opts->threads : gk_default_threads();
    if (threads > 64) threads = 64;
    const gk_model *a = ref->model, *b = other->model;
    res->layout = (gk_diff_layout){ { a->version, b->version }, { a->big_endian, b->big_endian },
                                    { gk_model_alignment(a), gk_model_alignment(b) } };
    gk_status s = diff_metadata(a, b, res, err);
    if (s == GK_OK) s = diff_directory(a, b, res, err);
    /* The tensors to compare, in reading order. */
    order_item *order = NULL;
    size_t n_order = 0;
    uint64_t total = 0, done = 0;
    if (s == GK_OK && (order = calloc(res->n_tensors + 1, sizeof *order)) == NULL)
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    const gk_diff_input *by = is_stream(ref) || !is_stream(other) ? ref : other;
    read_pos *pos = s == GK_OK ? positions(by) : NULL;
    if (s == GK_OK && pos == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; s == GK_OK && i < res->n_tensors; i++) {
        gk_tensor_diff *d = &res->tensors[i];
        if (d->kind != GK_TDIFF_DIFFERENT) continue;
        size_t k = by == ref ? (size_t)(d->ref - a->tensors) : (size_t)(d->other - b->tensors);
        order[n_order++] = (order_item){ pos[k], i };
        total += d->ref->nbytes + d->other->nbytes;
    }
    free(pos);
    if (s == GK_OK) qsort(order, n_order, sizeof *order, order_cmp);
    double weighted = 0;
    for (size_t k = 0; s == GK_OK && k < n_order; k++) {
        gk_tensor_diff *d = &res->tensors[order[k].entry];
        s = diff_tensor_numbers(ref, (size_t)(d->ref - a->tensors), other, (size_t)(d->other - b->tensors), opts,
                                threads, &done, total, d, err);
        if (s == GK_OK) {
            res->n_compared_elems += d->n;
            res->n_nonfinite_diff += d->n_nonfinite_diff;
            weighted += (double)d->n * d->rel_rmse;
        }
    }
    free(order);
    if (s != GK_OK) {
        gk_diff_result_free(res);
        return s;
    }
    res->rel_rmse_weighted = res->n_compared_elems ? weighted / (double)res->n_compared_elems : 0;
    res->verdict = verdict(res);
    return GK_OK;
}

void gk_diff_result_free(gk_diff_result *res) {
    free(res->meta);
    free(res->tensors);
    res->meta = NULL;
    res->tensors = NULL;
    res->n_meta = res->n_tensors = 0;
}
