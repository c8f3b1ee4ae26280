/*
 * diff_report.h - what the parts of `ggufkit diff`'s report share (cmd/diff.c
 * prints the text, cmd/diff_json.c the JSON, cmd/diff_facts.c holds the facts
 * both use). Calls run one way: diff.c -> diff_json.c -> diff_facts.c.
 */
#ifndef GK_CMD_DIFF_REPORT_H
#define GK_CMD_DIFF_REPORT_H

#include <stdio.h>

#include "ggufkit.h"

/* Arrays of at most this many elements are shown (and put in the JSON) whole. */
#define DIFF_SHORT_ARRAY 16

/* A file of the closing ranking: by weighted relative RMSE (NaN as +inf), then
 * non-finite differences (more is worse), size and path: the same order
 * whatever the order of the arguments. */
typedef struct diff_rank {
    size_t k;                 /* index of the OTHER file (0 = the first) */
    double rel;
    uint64_t size;
    uint64_t nonfinite;       /* the result's n_nonfinite_diff */
    const char *path;
} diff_rank;

/* cmd/diff_facts.c */

/** diff_verdict_id() : @return : "identical", "same-weights", "differs". */
const char *diff_verdict_id(gk_diff_verdict v);
/** diff_kind_id() : @return : a tensor's status as the JSON names it ("shape-differs"...). */
const char *diff_kind_id(gk_tensor_diff_kind k);
/** diff_has_numbers() : @return : true when the entry carries numbers. */
bool diff_has_numbers(const gk_tensor_diff *d);
/** diff_tensor_bytes() : @return : bytes of all of m's tensors. */
uint64_t diff_tensor_bytes(const gk_model *m);
/** diff_bits_per_weight() : @return : tensor bytes * 8 / elements of the input (0 without). */
double diff_bits_per_weight(const gk_diff_input *in);

/* cmd/diff_json.c */

/** diff_print_json() : prints the whole report of paths[0] against paths[1..]
 *  (results res, ranking rank) as one JSON document. @return : false when out of memory. */
bool diff_print_json(FILE *out, const char *const *paths, size_t n_paths, gk_diff_input **in,
                     const gk_diff_result *res, const diff_rank *rank);

#endif
