/*
 * scan.h - reads the data of a list of tensors front to back in large chunks
 * and hands every chunk to one or more consumers that run in threads of their
 * own, side by side: the reading and each consumer's work overlap, and several
 * consumers (one per digest, say) share the cores. Memory is a fixed ring of
 * chunk buffers whatever the model size. Hashing and data checks use it.
 */
#ifndef GK_PIPELINE_SCAN_H
#define GK_PIPELINE_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggufkit.h"

/* One tensor to read: tensor `tensor` of file f. */
typedef struct gk_scan_item {
    gk_file *f;
    size_t tensor;
} gk_scan_item;

/* A piece of one tensor's data: bytes [start, start + len) of item `item`, a
 * whole number of the tensor type's blocks. A tensor of zero bytes comes as one
 * chunk of length 0. Every item's chunks arrive in order, items in list order. */
typedef struct gk_scan_chunk {
    size_t item;
    uint64_t start;
    const uint8_t *data;
    size_t len;
    bool first, last;          /* the tensor's first / last chunk */
    uint64_t file_offset;      /* where data starts in the item's file */
} gk_scan_chunk;

/* A consumer: returns GK_OK, or an error that stops the scan. */
typedef gk_status (*gk_scan_fn)(void *ctx, const gk_scan_chunk *c, gk_error *err);

typedef struct gk_scan_opts {
    bool to_little;            /* blocks of big-endian files are byte-swapped to little-endian first */
    size_t chunk_bytes;        /* bytes per chunk (0: 1 MiB) */
    gk_progress_fn progress;   /* bytes read so far of all items; may be NULL */
    void *progress_ctx;
} gk_scan_opts;

/** gk_scan_run() : reads every item's data and calls each of the n_fns
 *  consumers fns[k](ctxs[k], chunk) on every chunk; consumer k sees the chunks
 *  in order, in a thread of its own (so consumers share nothing unless they lock).
 *  @return : GK_OK, the first error of a read or a consumer, GK_E_UNSUPPORTED (a
 *            big-endian type without a byte-swap kernel, with to_little),
 *            GK_E_INTERRUPTED (progress returned false), GK_E_NOMEM. */
gk_status gk_scan_run(const gk_scan_item *items, size_t n_items, const gk_scan_fn *fns,
                      void *const *ctxs, size_t n_fns, const gk_scan_opts *opts, gk_error *err);

#endif
