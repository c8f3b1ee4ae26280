/*
 * ring.c - the slot ring of ring.h. The producer copies into the slot after
 * the full ones without holding the lock (the consumer touches full slots
 * only); counts and flags change under the lock, and each change that someone
 * may wait for is broadcast.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/ring.h"

typedef struct slot {
    uint8_t *buf;
    size_t cap, len;
    uint64_t off;
} slot;

struct gk_ring {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    slot *slots;
    size_t n_slots, slot_bytes;
    size_t head;          /* the oldest full slot */
    size_t n_full;        /* full slots, from head on */
    size_t fill;          /* bytes in the producer's slot (the one after the full ones) */
    uint64_t next_off;    /* file offset of the producer's slot's first byte */
    bool ended, stopped;
};

gk_ring *gk_ring_new(size_t n_slots, size_t slot_bytes) {
    gk_ring *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    r->slots = calloc(n_slots, sizeof *r->slots);
    if (r->slots == NULL) {
        free(r);
        return NULL;
    }
    r->n_slots = n_slots;
    r->slot_bytes = slot_bytes;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    return r;
}

void gk_ring_free(gk_ring *r) {
    if (r == NULL) return;
    for (size_t i = 0; i < r->n_slots; i++) free(r->slots[i].buf);
    free(r->slots);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void gk_ring_reset(gk_ring *r, uint64_t start) {
    pthread_mutex_lock(&r->lock);
    r->head = r->n_full = r->fill = 0;
    r->next_off = start;
    r->ended = r->stopped = false;
    pthread_mutex_unlock(&r->lock);
}

/* Publishes the producer's slot with its r->fill bytes. Under the lock. */
static void publish(gk_ring *r) {
    slot *s = &r->slots[(r->head + r->n_full) % r->n_slots];
    s->off = r->next_off;
    s->len = r->fill;
    r->next_off += r->fill;
    r->fill = 0;
    r->n_full++;
    pthread_cond_broadcast(&r->changed);
}

bool gk_ring_put(gk_ring *r, const uint8_t *data, size_t n) {
    pthread_mutex_lock(&r->lock);
    while (n > 0) {
        while (r->n_full == r->n_slots && !r->stopped) pthread_cond_wait(&r->changed, &r->lock);
        if (r->stopped) break;
        slot *s = &r->slots[(r->head + r->n_full) % r->n_slots];
        if (s->cap < r->slot_bytes) {   /* r->fill is 0 here: nothing to keep */
            free(s->buf);
            s->cap = 0;
            if ((s->buf = malloc(r->slot_bytes)) == NULL) {
                r->ended = true;
                pthread_cond_broadcast(&r->changed);
                break;
            }
            s->cap = r->slot_bytes;
        }
        size_t take = r->slot_bytes - r->fill < n ? r->slot_bytes - r->fill : n;
        size_t at = r->fill;
        pthread_mutex_unlock(&r->lock);
        memcpy(s->buf + at, data, take);
        pthread_mutex_lock(&r->lock);
        r->fill += take;
        data += take;
        n -= take;
        if (r->fill == r->slot_bytes) publish(r);
    }
    pthread_mutex_unlock(&r->lock);
    return n == 0;
}

void gk_ring_finish(gk_ring *r, bool ok) {
    pthread_mutex_lock(&r->lock);
    if (ok && r->fill > 0 && !r->stopped) publish(r);   /* a slot is free: the producer was filling it */
    r->ended = true;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

bool gk_ring_stopping(gk_ring *r) {
    pthread_mutex_lock(&r->lock);
    bool stopped = r->stopped;
    pthread_mutex_unlock(&r->lock);
    return stopped;
}

bool gk_ring_take(gk_ring *r, uint8_t **buf, size_t *cap, uint64_t *off, size_t *len) {
    pthread_mutex_lock(&r->lock);
    while (r->n_full == 0 && !r->ended && !r->stopped) pthread_cond_wait(&r->changed, &r->lock);
    if (r->n_full == 0 || r->stopped) {
        pthread_mutex_unlock(&r->lock);
        return false;
    }
    slot *s = &r->slots[r->head];
    uint8_t *mine = *buf;
    size_t mine_cap = *cap;
    if (mine_cap > 2 * r->slot_bytes) {   /* a large buffer (a long header's) is not kept for slots */
        free(mine);
        mine = NULL;
        mine_cap = 0;
    }
    *buf = s->buf;
    *cap = s->cap;
    *off = s->off;
    *len = s->len;
    s->buf = mine;
    s->cap = mine_cap;
    r->head = (r->head + 1) % r->n_slots;
    r->n_full--;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return true;
}

void gk_ring_stop(gk_ring *r) {
    pthread_mutex_lock(&r->lock);
    r->stopped = true;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}
