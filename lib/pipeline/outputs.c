/*
 * outputs.c - one write of several files, all of them or none: every name is
 * checked before anything is written (no output over an input, none over an
 * existing file unless told), then each output is written through
 * the pipeline in order and committed together (io/sink_set.h: one fsync of
 * the folder, and on a journalling filesystem about one of the files, per
 * batch), and when one fails the ones this call published are removed again.
 * Shard sets (split, quantize --keep-split) are written here.
 */
#include <unistd.h>

#include "format/file.h"
#include "io/sink_set.h"
#include "pipeline/pipeline.h"
#include "util/opts.h"

/* Files waiting for their commit at most (each holds a file descriptor). */
#define COMMIT_BATCH 32

/* Progress of one output seen as progress of them all. */
typedef struct all_progress {
    const gk_write_opts *outer;
    uint64_t before;   /* input bytes of the outputs already written */
    uint64_t total;    /* input bytes of all outputs */
} all_progress;

static bool output_progress(void *ctx, uint64_t done, uint64_t total) {
    (void)total;
    all_progress *p = ctx;
    return p->outer->progress(p->outer->progress_ctx, p->before + done, p->total);
}

/* Input bytes of output o's tensors (the pipeline's progress unit). */
static uint64_t input_bytes(const gk_output *o) {
    uint64_t sum = 0;
    size_t n = gk_tensor_count(o->model);
    for (size_t i = 0; i < n; i++) {
        const gk_tensor *t = gk_tensor_at(o->steps[i].src->model, o->steps[i].src_tensor);
        if (t) sum += t->nbytes;
    }
    return sum;
}

/* Refuses a name that is an input, or exists (without GK_SINK_OVERWRITE). */
static gk_status check_names(const gk_output *outs, size_t n, gk_file *const *inputs, size_t n_inputs,
                             unsigned flags, gk_outputs_failure *where, gk_error *err) {
    for (size_t k = 0; k < n; k++) {
        where->output = k;
        for (size_t j = 0; j < n_inputs; j++) {
            const char *p = inputs[j]->path;
            if (p && p[0] && gk_same_file(p, outs[k].path))
                return gk_error_set(err, GK_E_SAME_FILE, -1, "%s: refusing to overwrite an input", outs[k].path);
        }
        gk_error why;
        if (!gk_sink_dest_ok(outs[k].path, flags, &why)) return gk_error_set(err, why.code, -1, "%s", why.message);
    }
    return GK_OK;
}

gk_status gk_write_outputs(const gk_output *outs, size_t n, gk_file *const *inputs, size_t n_inputs,
                           const gk_write_opts *opts, gk_outputs_failure *failure, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    gk_outputs_failure where_local;
    gk_outputs_failure *where = failure ? failure : &where_local;
    *where = (gk_outputs_failure){ .output = n, .checking = true };
    gk_write_opts defaults = { GK_OPTS_INIT(gk_write_opts) };
    if (opts == NULL) opts = &defaults;
    gk_status s = GK_OPTS_CHECK(opts, gk_write_opts, err);
    if (s != GK_OK) return s;
    s = check_names(outs, n, inputs, n_inputs, opts->sink_flags, where, err);
    if (s != GK_OK) return s;
    *where = (gk_outputs_failure){ .output = n, .checking = false };

    all_progress ap = { .outer = opts };
    for (size_t k = 0; k < n; k++) ap.total += input_bytes(&outs[k]);
    gk_write_opts each = *opts;
    if (opts->progress) {
        each.progress = output_progress;
        each.progress_ctx = &ap;
    }
    size_t published = 0;
    gk_sink *batch[COMMIT_BATCH];
    size_t n_batch = 0;
    for (size_t k = 0; k < n && s == GK_OK; k++) {
        s = gk_write_model_uncommitted(outs[k].path, outs[k].model, outs[k].steps, &each, &batch[n_batch], err);
        if (s != GK_OK) {
            where->output = k;
            break;
        }
        n_batch++;
        ap.before += input_bytes(&outs[k]);
        if (n_batch == COMMIT_BATCH || k + 1 == n) {
            size_t linked;
            s = gk_sink_commit_set(batch, n_batch, &linked, err);
            if (s != GK_OK) where->output = published + linked;
            published += linked;
            n_batch = 0;
        }
    }
    for (size_t j = 0; j < n_batch; j++) gk_sink_abort(batch[j]);   /* written, never committed */
    if (s != GK_OK)   /* all or none: take back what this call published */
        for (size_t k = 0; k < published; k++) unlink(outs[k].path);
    return s;
}
