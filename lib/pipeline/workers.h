/*
 * workers.h - a pool of helper threads kept for a whole write, which share the
 * pieces of one batch of work at a time with the thread that posted it.
 */
#ifndef GK_PIPELINE_WORKERS_H
#define GK_PIPELINE_WORKERS_H

#include <stdint.h>

#include "ggufkit.h"

/* Does piece number piece of a batch; ctx is the batch's. */
typedef void (*gk_piece_fn)(void *ctx, int64_t piece);

typedef struct gk_workers gk_workers;

/** gk_workers_start() : a pool of up to helpers threads (fewer if the system
 *  refuses some: every batch still gets done, by the poster if by nobody else).
 *  @return : GK_OK with *out set, or GK_E_NOMEM. */
gk_status gk_workers_start(int helpers, gk_workers **out, gk_error *err);

/** gk_workers_post() : offers pieces 0..npieces-1 of fn to the helpers, which
 *  start on them at once; the batch before must have been joined. */
void gk_workers_post(gk_workers *w, gk_piece_fn fn, void *ctx, int64_t npieces);

/** gk_workers_join() : does the posted batch's pieces nobody has taken yet on
 *  the calling thread, then waits until every piece is done; their results are
 *  then visible to the caller. */
void gk_workers_join(gk_workers *w);

/** gk_workers_stop() : ends the helper threads and frees w (NULL is fine). */
void gk_workers_stop(gk_workers *w);

/** gk_default_threads() : @return : the number of online cores (at least 1): the
 *  thread count every `threads <= 0` option means (pipeline.c). */
int gk_default_threads(void);

#endif
