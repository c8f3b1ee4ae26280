/*
 * hashmap.c - the open-addressing index of hashmap.h: slots of (hash, position
 * + 1), probed linearly from hash & (cap - 1), doubled when half full.
 */
#include <stdlib.h>
#include <string.h>

#include "util/hashmap.h"

#define FIRST_CAP 16

bool gk_hashmap_next(const gk_hashmap *m, uint64_t h, size_t *cursor, size_t *at) {
    if (m->cap == 0) return false;
    size_t mask = m->cap - 1;
    for (;;) {
        const gk_hashmap_slot *s = &m->slots[((size_t)h + *cursor) & mask];
        if (s->at1 == 0) return false;        /* at most half full: an empty slot ends every walk */
        ++*cursor;
        if (s->hash == h) {
            *at = s->at1 - 1;
            return true;
        }
    }
}

/* Puts (h, at1) in the first empty slot of its walk in slots (cap of them). */
static void place(gk_hashmap_slot *slots, size_t cap, uint64_t h, size_t at1) {
    size_t i = (size_t)h & (cap - 1);
    while (slots[i].at1 != 0) i = (i + 1) & (cap - 1);
    slots[i].hash = h;
    slots[i].at1 = at1;
}

static bool grow(gk_hashmap *m) {
    size_t cap = m->cap ? m->cap * 2 : FIRST_CAP;
    if (cap < m->cap || cap > SIZE_MAX / sizeof(gk_hashmap_slot)) return false;
    gk_hashmap_slot *slots = calloc(cap, sizeof *slots);
    if (slots == NULL) return false;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].at1 != 0) place(slots, cap, m->slots[i].hash, m->slots[i].at1);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

bool gk_hashmap_add(gk_hashmap *m, uint64_t h, size_t at) {
    if (at == SIZE_MAX) return false;
    if ((m->count + 1) * 2 > m->cap && !grow(m)) return false;
    place(m->slots, m->cap, h, at + 1);
    m->count++;
    return true;
}

void gk_hashmap_free(gk_hashmap *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}
