/*
 * readahead.h - a reader thread that reads a stream of items (a tensor's
 * chunks) in order into a small ring of buffers, ahead of the thread that
 * converts them, so that reading and converting overlap.
 */
#ifndef GK_PIPELINE_READAHEAD_H
#define GK_PIPELINE_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggufkit.h"

#define GK_READAHEAD_META 64   /* bytes of description an item may carry */

/* Reads the stream's next item into buf and describes it in meta; sets *done
 * (and reads nothing) when the stream has no more. Called on the reader
 * thread, one call at a time, in order. */
typedef gk_status (*gk_read_next_fn)(void *ctx, uint8_t *buf, void *meta, bool *done, gk_error *err);

typedef struct gk_readahead gk_readahead;

/** gk_readahead_create() : a reader with no stream yet (its thread starts with
 *  the first stream; if it cannot, next() reads on the caller's thread).
 *  @return : GK_OK with *out set, or GK_E_NOMEM. */
gk_status gk_readahead_create(gk_readahead **out, gk_error *err);

/** gk_readahead_begin() : starts reading the stream of fn (items of at most
 *  item_bytes). The stream before must have been ended.
 *  @return : GK_OK, or GK_E_NOMEM (no stream then). */
gk_status gk_readahead_begin(gk_readahead *r, gk_read_next_fn fn, void *ctx, size_t item_bytes,
                             gk_error *err);

/** gk_readahead_next() : the stream's next item, waited for: *buf and *meta
 *  point into a buffer that stays the caller's until gk_readahead_release;
 *  *buf is NULL at the end of the stream. At most two items are held at once.
 *  @return : GK_OK, or the read's error (the stream then ends there). */
gk_status gk_readahead_next(gk_readahead *r, uint8_t **buf, void **meta, gk_error *err);

/** gk_readahead_release() : gives back the oldest item next() returned. */
void gk_readahead_release(gk_readahead *r);

/** gk_readahead_end() : stops the stream where it is (items read ahead are
 *  dropped) and waits until the reader is idle. */
void gk_readahead_end(gk_readahead *r);

/** gk_readahead_free() : ends the reader thread and frees r (NULL is fine). */
void gk_readahead_free(gk_readahead *r);

#endif
