/*
 * hash.c - per-tensor and whole-model digests of a file or a shard set
 * (ggufkit hash, index --hash). The tensors are read once by the scanner
 * (pipeline/scan.h); every digest stream (each kind, per tensor and for the whole
 * model) is a consumer of its own, so several digests share the cores.
 */
#include <stdlib.h>
#include <string.h>

#include "io/digest.h"
#include "pipeline/scan.h"
#include "util/opts.h"

/* One digest stream: a kind, over each tensor alone or over all of them. */
typedef struct stream {
    gk_digest d;
    bool per_tensor;
    gk_hash_result *r;
} stream;

static gk_status consume(void *ctx, const gk_scan_chunk *c, gk_error *err) {
    (void)err;
    stream *s = ctx;
    if (s->per_tensor && c->first && c->item > 0) gk_digest_reset(&s->d);
    gk_digest_update(&s->d, c->data, c->len);
    if (s->per_tensor && c->last) gk_digest_final(&s->d, &s->r->tensors[c->item][s->d.kind]);
    return GK_OK;
}

void gk_hash_result_free(gk_hash_result *r) {
    if (r == NULL) return;
    free(r->names);
    free(r->tensors);
    memset(r, 0, sizeof *r);
}

/* Hashes the items (files[k]'s tensors, for k < n_files, in order). */
static gk_status hash_files(gk_file *const *files, size_t n_files, const gk_hash_opts *opts,
                            gk_hash_result *out, gk_error *err) {
    static const gk_hash_opts defaults = { GK_OPTS_INIT(gk_hash_opts) };
    const gk_hash_opts *o = opts ? opts : &defaults;
    memset(out, 0, sizeof *out);
    gk_status sc = GK_OPTS_CHECK(o, gk_hash_opts, err);
    if (sc != GK_OK) return sc;
    out->kinds = o->kinds ? o->kinds & (GK_HASH_BIT(GK_HASH_KINDS) - 1) : GK_HASH_BIT(GK_HASH_XXH64);
    size_t n = 0;
    for (size_t k = 0; k < n_files; k++) n += gk_tensor_count(gk_file_model(files[k]));
    gk_scan_item *items = calloc(n ? n : 1, sizeof *items);
    out->names = calloc(n ? n : 1, sizeof *out->names);
    out->tensors = o->no_tensors ? NULL : calloc(n ? n : 1, sizeof *out->tensors);
    stream streams[2 * GK_HASH_KINDS];
    gk_scan_fn fns[2 * GK_HASH_KINDS];
    void *ctxs[2 * GK_HASH_KINDS];
    size_t n_streams = 0;
    gk_status st = GK_OK;
    if (items == NULL || out->names == NULL || (!o->no_tensors && out->tensors == NULL))
        st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t k = 0, i = 0; st == GK_OK && k < n_files; k++) {
        const gk_model *m = gk_file_model(files[k]);
        for (size_t t = 0; t < gk_tensor_count(m); t++, i++) {
            items[i] = (gk_scan_item){ files[k], t };
            out->names[i] = gk_tensor_at(m, t)->name.ptr;
            out->bytes += gk_tensor_at(m, t)->nbytes;
        }
    }
    for (int kind = 0; st == GK_OK && kind < GK_HASH_KINDS; kind++) {
        if (!(out->kinds & GK_HASH_BIT(kind))) continue;
        for (int per = 0; per < 2 && st == GK_OK; per++) {
            if (per && (o->no_tensors || kind == GK_HASH_UUID)) continue;
            stream *s = &streams[n_streams];
            s->per_tensor = per;
            s->r = out;
            if ((st = gk_digest_init(&s->d, kind, err)) != GK_OK) break;
            fns[n_streams] = consume;
            ctxs[n_streams] = s;
            n_streams++;
        }
    }
    if (st == GK_OK) {
        gk_scan_opts so = { .to_little = o->canonical, .progress = o->progress, .progress_ctx = o->progress_ctx };
        st = gk_scan_run(items, n, fns, ctxs, n_streams, &so, err);
    }
    for (size_t k = 0; k < n_streams; k++) {
        if (st == GK_OK && !streams[k].per_tensor) gk_digest_final(&streams[k].d, &out->model[streams[k].d.kind]);
        gk_digest_free(&streams[k].d);
    }
    free(items);
    out->n_tensors = n;
    if (st != GK_OK) gk_hash_result_free(out);
    return st;
}

gk_status gk_hash_file(gk_file *f, const gk_hash_opts *opts, gk_hash_result *out, gk_error *err) {
    return hash_files(&f, 1, opts, out, err);
}

gk_status gk_hash_set(gk_split_set *set, const gk_hash_opts *opts, gk_hash_result *out, gk_error *err) {
    size_t n = gk_split_set_count(set);
    gk_file **files = calloc(n ? n : 1, sizeof *files);
    if (files == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t k = 0; k < n; k++) files[k] = gk_split_set_file(set, k);
    gk_status st = hash_files(files, n, opts, out, err);
    free(files);
    return st;
}

gk_status gk_hash_lines(const gk_hash_result *r, bool no_tensors, gk_hash_line **out, size_t *n,
                        gk_error *err) {
    *out = NULL;
    *n = 0;
    size_t per = 0, cap;
    for (int k = 0; k < GK_HASH_UUID; k++) per += (r->kinds >> k) & 1;
    cap = (no_tensors || r->tensors == NULL ? 0 : r->n_tensors * per) + GK_HASH_KINDS;
    gk_hash_line *lines = calloc(cap, sizeof *lines);
    if (lines == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    size_t used = 0;
    for (size_t t = 0; !no_tensors && r->tensors && t < r->n_tensors; t++)
        for (int k = 0; k < GK_HASH_UUID; k++)
            if (r->kinds & GK_HASH_BIT(k)) lines[used++] = (gk_hash_line){ k, (int64_t)t, GK_VERDICT_NONE };
    for (int k = 0; k < GK_HASH_KINDS; k++)
        if (r->kinds & GK_HASH_BIT(k)) lines[used++] = (gk_hash_line){ k, -1, GK_VERDICT_NONE };
    *out = lines;
    *n = used;
    return GK_OK;
}
