/*
 * diff_internal.h - what the diff modules share: the layout of gk_diff_input and
 * the entry points of the metadata and tensor comparisons.
 */
#ifndef GK_DIFF_INTERNAL_H
#define GK_DIFF_INTERNAL_H

#include "ggufkit.h"
#include "meta/model.h"

struct gk_diff_input {
    gk_file *file;            /* a single file, or NULL for a shard set */
    gk_split_set *set;        /* the shard set, or NULL */
    gk_model *merged;         /* the set's merged model (owned), or NULL */
    const gk_model *model;    /* what is compared: file's model or merged */
    gk_step *steps;           /* per tensor of model: the file and entry holding its bytes */
    uint64_t size;
};

/** diff_metadata() : fills res->meta / res->n_meta with the typed metadata
 *  differences of other against ref (GGUF.* skipped). @return : GK_OK or GK_E_NOMEM. */
gk_status diff_metadata(const gk_model *ref, const gk_model *other, gk_diff_result *res,
                        gk_error *err);

/** diff_tensor_numbers() : compares the bytes, or the F32 values, of tensor
 *  entry d (both sides present, same shape) and fills its numbers and kind.
 *  done accumulates the bytes read for progress. */
gk_status diff_tensor_numbers(gk_diff_input *ref, size_t ri, gk_diff_input *other, size_t oi,
                              const gk_diff_opts *opts, int threads, uint64_t *done,
                              uint64_t total, gk_tensor_diff *d, gk_error *err);

#endif
