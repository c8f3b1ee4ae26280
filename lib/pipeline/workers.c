/*
 * workers.c - the helper pool of workers.h.
 *
 * A batch is a piece function, its context and a piece count. Helpers sleep
 * until a batch is posted, then take piece numbers from an atomic counter
 * until none is left, as does the poster when it joins; a piece is done by
 * exactly one thread, and which one does not matter to the result. The pool
 * counts the helpers inside a batch: a join returns when that count is zero
 * and every piece is taken, and a post waits for it too, so that a helper late
 * for one batch never takes a number of the next one with the old function.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pipeline/workers.h"

struct gk_workers {
    pthread_mutex_t mu;
    pthread_cond_t posted;       /* a batch was posted, or quit was set */
    pthread_cond_t left;         /* a helper left a batch */
    uint64_t batch;              /* how many batches were posted */
    gk_piece_fn fn;
    void *ctx;
    int64_t npieces;
    atomic_int_fast64_t next;    /* the next piece number to take */
    int inside;                  /* helpers working on the current batch */
    bool quit;
    int helpers;                 /* threads started */
    pthread_t tids[];
};

/* Takes and does pieces of the batch (fn, ctx, n) until none is left. */
static void take_pieces(gk_workers *w, gk_piece_fn fn, void *ctx, int64_t n) {
    for (int64_t p; (p = atomic_fetch_add(&w->next, 1)) < n;) fn(ctx, p);
}

static void *helper_main(void *arg) {
    gk_workers *w = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->quit && w->batch == seen) pthread_cond_wait(&w->posted, &w->mu);
        if (w->quit) break;
        seen = w->batch;
        gk_piece_fn fn = w->fn;
        void *ctx = w->ctx;
        int64_t n = w->npieces;
        w->inside++;
        pthread_mutex_unlock(&w->mu);
        take_pieces(w, fn, ctx, n);
        pthread_mutex_lock(&w->mu);
        if (--w->inside == 0) pthread_cond_broadcast(&w->left);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

gk_status gk_workers_start(int helpers, gk_workers **out, gk_error *err) {
    if (helpers < 0) helpers = 0;
    gk_workers *w = calloc(1, sizeof *w + (size_t)helpers * sizeof(pthread_t));
    if (w == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->posted, NULL);
    pthread_cond_init(&w->left, NULL);
    atomic_init(&w->next, 0);
    while (w->helpers < helpers && pthread_create(&w->tids[w->helpers], NULL, helper_main, w) == 0)
        w->helpers++;
    *out = w;
    return GK_OK;
}

/* Waits (mu held) until no helper is inside a batch. */
static void wait_outside(gk_workers *w) {
    while (w->inside > 0) pthread_cond_wait(&w->left, &w->mu);
}

void gk_workers_post(gk_workers *w, gk_piece_fn fn, void *ctx, int64_t npieces) {
    pthread_mutex_lock(&w->mu);
    wait_outside(w);
    w->fn = fn;
    w->ctx = ctx;
    w->npieces = npieces;
    atomic_store(&w->next, 0);
    w->batch++;
    if (w->helpers > 0) pthread_cond_broadcast(&w->posted);
    pthread_mutex_unlock(&w->mu);
}

void gk_workers_join(gk_workers *w) {
    pthread_mutex_lock(&w->mu);
    gk_piece_fn fn = w->fn;
    void *ctx = w->ctx;
    int64_t n = w->npieces;
    pthread_mutex_unlock(&w->mu);
    take_pieces(w, fn, ctx, n);
    pthread_mutex_lock(&w->mu);
    wait_outside(w);
    pthread_mutex_unlock(&w->mu);
}

void gk_workers_stop(gk_workers *w) {
    if (w == NULL) return;
    pthread_mutex_lock(&w->mu);
    w->quit = true;
    pthread_cond_broadcast(&w->posted);
    pthread_mutex_unlock(&w->mu);
    for (int k = 0; k < w->helpers; k++) pthread_join(w->tids[k], NULL);
    pthread_cond_destroy(&w->left);
    pthread_cond_destroy(&w->posted);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
