/*
 * split.c - cutting a model into a llama-gguf-split shard set: the plan (which
 * tensors go to which shard, decided as the reference decides), each shard's
 * model (metadata in the first, split.* keys in all) and the writing of the
 * whole set, all shards or none (pipeline/outputs.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/file.h"
#include "meta/model.h"
#include "util/grow.h"
#include "util/opts.h"

/* ------------------------------------------------------------------------ */
/* The plan                                                                 */
/* ------------------------------------------------------------------------ */

/* Appends an empty shard starting at tensor `first`. */
static gk_status open_shard(gk_split_plan *plan, size_t *cap, size_t first, gk_error *err) {
    if (plan->n_shards >= GK_SPLIT_MAX_SHARDS)
        return gk_error_set(err, GK_E_ARG, -1, "more than %d shards (split.count is a u16): raise the limit",
                            GK_SPLIT_MAX_SHARDS);
    if (!GK_GROW(plan->shards, *cap, plan->n_shards + 1, 8)) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    plan->shards[plan->n_shards++] = (gk_split_shard){ .first_tensor = first };
    return GK_OK;
}

/* Whether tensor i starts a new shard, given the padded bytes the current shard
 * would hold with it. A shard never closes empty: a tensor larger than the size
 * limit gets a shard of its own (the reference aborts there). */
static bool starts_shard(const gk_split_opts *o, const gk_split_shard *cur, size_t i,
                         uint64_t bytes_with_it) {
    if (cur->n_tensors == 0) return false;
    if (o->max_bytes) return bytes_with_it > o->max_bytes;
    return i > 0 && i % o->max_tensors == 0;
}

/* The exact size of shard k's file as gk_write_model writes it (pad_end on). */
static gk_status shard_file_bytes(const gk_model *in, const gk_split_plan *plan, size_t k, uint64_t *out,
                                  gk_error *err) {
    gk_model *m;
    gk_status s = gk_split_shard_model(in, plan, k, &m, err);
    if (s != GK_OK) return s;
    uint64_t align = gk_model_alignment(m);
    uint64_t data = gk_model_layout(m);
    uint64_t start = gk_model_data_start(m);
    *out = start + gk_align_up(data, align);   /* pad_end: a tensorless shard ends padded too */
    gk_model_free(m);
    return GK_OK;
}

gk_status gk_split_plan_build(const gk_model *in, const gk_split_opts *opts, gk_split_plan *plan,
                              gk_error *err) {
    memset(plan, 0, sizeof *plan);
    gk_status sc = GK_OPTS_CHECK(opts, gk_split_opts, err);
    if (sc != GK_OK) return sc;
    if ((opts->max_tensors == 0) == (opts->max_bytes == 0))
        return gk_error_set(err, GK_E_ARG, -1, "give exactly one of a tensor limit and a size limit");
    uint64_t align = gk_model_alignment(in);
    size_t cap = 0;
    gk_status s = open_shard(plan, &cap, 0, err);
    if (s == GK_OK && opts->no_tensor_first_split) s = open_shard(plan, &cap, 0, err);
    for (size_t i = 0; i < in->n_tensors && s == GK_OK; i++) {
        uint64_t padded = gk_align_up(in->tensors[i].nbytes, align);
        gk_split_shard *cur = &plan->shards[plan->n_shards - 1];
        if (starts_shard(opts, cur, i, cur->tensor_bytes + padded)) {
            s = open_shard(plan, &cap, i, err);
            if (s != GK_OK) break;
            cur = &plan->shards[plan->n_shards - 1];
        }
        cur->n_tensors++;
        cur->tensor_bytes += padded;
    }
    for (size_t k = 0; k < plan->n_shards && s == GK_OK; k++)
        s = shard_file_bytes(in, plan, k, &plan->shards[k].file_bytes, err);
    if (s != GK_OK) gk_split_plan_free(plan);
    return s;
}

void gk_split_plan_free(gk_split_plan *plan) {
    if (plan == NULL) return;
    free(plan->shards);
    plan->shards = NULL;
    plan->n_shards = 0;
}

/* ------------------------------------------------------------------------ */
/* Shard models                                                             */
/* ------------------------------------------------------------------------ */

/* Sets the three split keys last, in the order the reference leaves them. */
static gk_status set_split_keys(gk_model *m, size_t k, size_t n, uint64_t n_tensors, gk_error *err) {
    gk_value no = { .type = GK_V_U16, .u = k };
    gk_value tensors = { .type = GK_V_I32, .i = (int64_t)n_tensors };
    gk_value count = { .type = GK_V_U16, .u = n };
    gk_status s = gk_kv_set_last(m, GK_SPLIT_KEY_NO, &no, err);
    if (s == GK_OK) s = gk_kv_set_last(m, GK_SPLIT_KEY_TENSORS, &tensors, err);
    if (s == GK_OK) s = gk_kv_set_last(m, GK_SPLIT_KEY_COUNT, &count, err);
    return s;
}

gk_status gk_split_shard_model(const gk_model *in, const gk_split_plan *plan, size_t k,
                               gk_model **out, gk_error *err) {
    *out = NULL;
    if (k >= plan->n_shards) return gk_error_set(err, GK_E_ARG, -1, "shard %zu out of range", k);
    if (in->n_tensors > INT32_MAX)
        return gk_error_set(err, GK_E_ARG, -1, "%zu tensors do not fit split.tensors.count (i32)", in->n_tensors);
    gk_model *m = k == 0 ? gk_model_clone(in) : gk_model_new();
    if (m == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    m->version = 3;   /* llama-gguf-split writes v3 whatever it read (v2 differs only there) */
    m->big_endian = in->big_endian;
    gk_tensor_clear(m);
    gk_status s = GK_OK;
    uint32_t align = gk_model_alignment(in);
    if (k > 0 && align != GK_DEFAULT_ALIGNMENT) s = gk_kv_set_u32(m, "general.alignment", align, err);
    if (s == GK_OK) s = set_split_keys(m, k, plan->n_shards, in->n_tensors, err);
    const gk_split_shard *sh = &plan->shards[k];
    for (size_t i = sh->first_tensor; i < sh->first_tensor + sh->n_tensors && s == GK_OK; i++) {
        const gk_tensor *t = &in->tensors[i];
        s = gk_tensor_add(m, t->name.ptr, t->type, t->n_dims, t->ne, err);
    }
    if (s != GK_OK) {
        gk_model_free(m);
        return s;
    }
    *out = m;
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* Writing the set                                                          */
/* ------------------------------------------------------------------------ */

/* The shards' models and steps, as gk_write_outputs takes them. */
static gk_status shard_outputs(gk_file *in, const char *prefix, const gk_split_plan *plan, gk_output *outs,
                               gk_error *err) {
    gk_status s = GK_OK;
    for (size_t k = 0; k < plan->n_shards && s == GK_OK; k++) {
        const gk_split_shard *sh = &plan->shards[k];
        gk_step *steps = calloc(sh->n_tensors + 1, sizeof *steps);
        outs[k].steps = steps;
        outs[k].path = gk_split_path(prefix, k, plan->n_shards);
        if (steps == NULL || outs[k].path == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        else s = gk_split_shard_model(in->model, plan, k, &outs[k].model, err);
        for (size_t j = 0; s == GK_OK && j < sh->n_tensors; j++) steps[j] = (gk_step){ in, sh->first_tensor + j, NULL };
    }
    return s;
}

gk_status gk_split_write(gk_file *in, const char *prefix, const gk_split_plan *plan,
                         const gk_write_opts *opts, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    size_t n = plan->n_shards;
    gk_output *outs = calloc(n ? n : 1, sizeof *outs);
    if (outs == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = shard_outputs(in, prefix, plan, outs, err);
    gk_write_opts shard_opts = { GK_OPTS_INIT(gk_write_opts) };
    if (opts) shard_opts = *opts;
    shard_opts.pad_end = true;
    gk_outputs_failure at;
    bool written = false;   /* the error is gk_write_outputs's: said in split's words */
    if (s == GK_OK) written = (s = gk_write_outputs(outs, n, &in, 1, &shard_opts, &at, err)) != GK_OK;
    if (written) {
        char msg[GK_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "%s", err->message);
        if (!at.checking)
            gk_error_set(err, s, err->offset, "shard %zu of %zu: %s", at.output + 1, n, msg);
        else if (s == GK_E_SAME_FILE)
            gk_error_set(err, s, -1, "%s: refusing to overwrite the input", outs[at.output].path);
        else
            gk_error_set(err, s, -1, "%s; nothing written", msg);
    }
    for (size_t k = 0; k < n; k++) {
        free((char *)outs[k].path);
        free((gk_step *)outs[k].steps);
        gk_model_free(outs[k].model);
    }
    free(outs);
    return s;
}
