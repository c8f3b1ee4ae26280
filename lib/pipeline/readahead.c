/*
 * readahead.c - the reader of readahead.h.
 *
 * A ring of DEPTH slots. The reader thread fills them in order, each with one
 * item (or the stream's end, or its error), and waits while all are full; the
 * consumer takes them in the same order and gives them back. A stream is one
 * begin..end; the thread and the buffers stay for the next one (fresh memory
 * is dear: see pipeline.c's scratch). Item i lives in slot i % DEPTH. Without
 * a thread, next() calls the read function itself.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/readahead.h"

#define DEPTH 3

typedef struct slot {
    uint8_t *buf;
    _Alignas(16) unsigned char meta[GK_READAHEAD_META];
    bool done;               /* the stream's end: no item */
    gk_status status;        /* the read's result */
    gk_error err;
} slot;

struct gk_readahead {
    pthread_mutex_t mu;
    pthread_cond_t changed;  /* a slot was filled or given back, a stream began or ended */
    slot slots[DEPTH];
    size_t cap;              /* bytes of each slot's buffer */
    gk_read_next_fn fn;
    void *ctx;
    bool streaming;          /* a stream began and has not ended */
    bool reading;            /* the reader is inside fn */
    bool stopped;            /* the reader has read the stream's last slot */
    uint64_t filled, taken, released;   /* items, counted from the stream's start */
    bool threaded, quit;
    pthread_t tid;
};

/* Reads the next item into s (outside the lock). */
static void read_into(gk_read_next_fn fn, void *ctx, slot *s) {
    s->done = false;
    gk_error_clear(&s->err);
    s->status = fn(ctx, s->buf, s->meta, &s->done, &s->err);
}

static void *reader_main(void *arg) {
    gk_readahead *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->quit && (!r->streaming || r->stopped || r->filled - r->released >= DEPTH))
            pthread_cond_wait(&r->changed, &r->mu);
        if (r->quit) break;
        slot *s = &r->slots[r->filled % DEPTH];
        r->reading = true;
        pthread_mutex_unlock(&r->mu);
        read_into(r->fn, r->ctx, s);
        pthread_mutex_lock(&r->mu);
        r->reading = false;
        r->filled++;
        if (s->done || s->status != GK_OK) r->stopped = true;
        pthread_cond_broadcast(&r->changed);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

gk_status gk_readahead_create(gk_readahead **out, gk_error *err) {
    gk_readahead *r = calloc(1, sizeof *r);
    if (r == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->changed, NULL);
    *out = r;
    return GK_OK;
}

gk_status gk_readahead_begin(gk_readahead *r, gk_read_next_fn fn, void *ctx, size_t item_bytes,
                             gk_error *err) {
    if (item_bytes > r->cap) {
        for (int k = 0; k < DEPTH; k++) {
            free(r->slots[k].buf);
            r->slots[k].buf = NULL;
        }
        r->cap = 0;
        for (int k = 0; k < DEPTH; k++)
            if ((r->slots[k].buf = malloc(item_bytes ? item_bytes : 1)) == NULL)
                return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        r->cap = item_bytes;
    }
    pthread_mutex_lock(&r->mu);
    r->fn = fn;
    r->ctx = ctx;
    r->filled = r->taken = r->released = 0;
    r->stopped = false;
    r->streaming = true;
    if (!r->threaded) r->threaded = pthread_create(&r->tid, NULL, reader_main, r) == 0;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->mu);
    return GK_OK;
}

gk_status gk_readahead_next(gk_readahead *r, uint8_t **buf, void **meta, gk_error *err) {
    slot *s = &r->slots[r->taken % DEPTH];
    *buf = NULL;
    *meta = NULL;
    if (!r->threaded) {
        if (r->stopped) return GK_OK;
        read_into(r->fn, r->ctx, s);
        r->filled++;
        if (s->done || s->status != GK_OK) r->stopped = true;
    } else {
        pthread_mutex_lock(&r->mu);
        while (r->filled == r->taken && !r->stopped) pthread_cond_wait(&r->changed, &r->mu);
        const bool none = r->filled == r->taken;
        pthread_mutex_unlock(&r->mu);
        if (none) return GK_OK;   /* taken past the end already */
    }
    if (s->status != GK_OK) {
        if (err) *err = s->err;
        return s->status;
    }
    if (s->done) return GK_OK;
    r->taken++;
    *buf = s->buf;
    *meta = s->meta;
    return GK_OK;
}

void gk_readahead_release(gk_readahead *r) {
    pthread_mutex_lock(&r->mu);
    if (r->released < r->taken) r->released++;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->mu);
}

void gk_readahead_end(gk_readahead *r) {
    pthread_mutex_lock(&r->mu);
    r->streaming = false;
    while (r->reading) pthread_cond_wait(&r->changed, &r->mu);
    pthread_mutex_unlock(&r->mu);
}

void gk_readahead_free(gk_readahead *r) {
    if (r == NULL) return;
    pthread_mutex_lock(&r->mu);
    r->quit = true;
    r->streaming = false;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->mu);
    if (r->threaded) pthread_join(r->tid, NULL);
    for (int k = 0; k < DEPTH; k++) free(r->slots[k].buf);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->mu);
    free(r);
}
