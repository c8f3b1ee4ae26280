/*
 * rewrite.c - "rewrite this file as that model": every whole-file rewrite of one
 * input (repack, endian, edit -o and edit's replacement of its file) comes here.
 * The output model keeps the input's tensors in the input's order, so each
 * output tensor's bytes come from the input tensor of the same index (copied,
 * or byte-swapped when the model's order differs); v1 is written as v3; the end
 * is padded as the input's is; the input is never the destination, except when
 * it is replaced on purpose under its edit lock. Published atomically by
 * gk_write_model.
 */
#include <stdlib.h>

#include "format/file.h"
#include "meta/model.h"
#include "util/opts.h"

gk_status gk_rewrite(gk_file *f, gk_model *m, const char *dest, const gk_write_opts *opts, gk_error *err) {
    if (m->n_tensors != f->model->n_tensors) return gk_error_set(err, GK_E_ARG, -1, "the edited model has other tensors");
    if (m->version == 1) m->version = 3;
    gk_step *steps = calloc(m->n_tensors + 1, sizeof *steps);
    if (steps == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; i < m->n_tensors; i++) steps[i] = (gk_step){ f, i, NULL };
    gk_write_opts o = { GK_OPTS_INIT(gk_write_opts) };
    if (opts) o = *opts;
    o.pad_end = gk_file_pads_end(f);
    gk_status st;
    if (dest) {
        if (f->path && f->path[0] && gk_same_file(f->path, dest)) {
            free(steps);
            return gk_error_set(err, GK_E_SAME_FILE, -1, "%s: refusing to overwrite the input", dest);
        }
        st = gk_write_model(dest, m, steps, &o, err);
        free(steps);
        return st;
    }
    /* Replace the input: under its edit lock (held since its header was read, so
     * no in-place edit came between), a new file is renamed over it, mode kept. */
    if (!f->edit_locked) {
        free(steps);
        return gk_error_set(err, GK_E_ARG, -1, "%s: not opened to be replaced (gk_open_exclusive)", f->path);
    }
    o.sink_flags |= GK_SINK_OVERWRITE | GK_SINK_REPLACE_HELD;
    if (f->stream != NULL) o.sink_flags |= GK_SINK_ZSTD;   /* archives are refused before: a .zst stays one */
    st = gk_write_model(f->path, m, steps, &o, err);
    free(steps);
    return st;
}
