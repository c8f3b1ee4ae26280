/*
 * input.c - a model opened for comparison: a single file, or the whole shard set
 * a shard belongs to, seen as one merged model whose tensors each say which
 * opened file and which of its directory entries hold their bytes.
 */
#include <stdlib.h>

#include "diff/diff_internal.h"
#include "format/file.h"

gk_status gk_diff_input_open(const char *path, gk_diff_input **out, gk_error *err) {
    *out = NULL;
    gk_diff_input *in = calloc(1, sizeof *in);
    if (in == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_file *f;
    gk_status s = gk_open(path, GK_OPEN_DEFAULT, &f, err);
    if (s != GK_OK) {
        free(in);
        return s;
    }
    if (!gk_model_is_shard(f->model)) {
        in->file = f;
        in->model = f->model;
        in->size = f->size;
        in->steps = calloc(f->model->n_tensors + 1, sizeof *in->steps);
        if (in->steps == NULL) {
            gk_diff_input_close(in);
            return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
        for (size_t i = 0; i < f->model->n_tensors; i++) in->steps[i] = (gk_step){ f, i, NULL };
        *out = in;
        return GK_OK;
    }
    gk_close(f);
    if ((s = gk_split_set_open(path, GK_OPEN_DEFAULT, &in->set, err)) != GK_OK ||
        (s = gk_split_set_merged(in->set, &in->merged, &in->steps, err)) != GK_OK) {
        gk_diff_input_close(in);
        return s;
    }
    in->model = in->merged;
    for (size_t k = 0; k < gk_split_set_count(in->set); k++)
        in->size += gk_file_size(gk_split_set_file(in->set, k));
    *out = in;
    return GK_OK;
}

void gk_diff_input_close(gk_diff_input *in) {
    if (in == NULL) return;
    gk_close(in->file);
    gk_model_free(in->merged);
    gk_split_set_close(in->set);
    free(in->steps);
    free(in);
}

const gk_model *gk_diff_input_model(const gk_diff_input *in) { return in->model; }

uint64_t gk_diff_input_size(const gk_diff_input *in) { return in->size; }

size_t gk_diff_input_shards(const gk_diff_input *in) {
    return in->set ? gk_split_set_count(in->set) : 1;
}
