/*
 * hashmap.h - the library's one hash map and its one hash function.
 *
 * The map is an index: it maps a 64-bit hash to the positions (size_t) of the
 * items that have it, and the items stay in the caller's own array. A lookup
 * walks the positions stored under a hash and the caller compares its items
 * with the key; so one map serves any key (a string, a string and a kind...)
 * without callbacks. Open addressing with linear probing, a power-of-two table
 * at most half full; nothing is ever removed.
 *
 * Typical use, for items[] keyed by name:
 *
 *     uint64_t h = gk_fnv1a(GK_FNV1A_BASIS, name, strlen(name));
 *     size_t cur = 0, at;
 *     while (gk_hashmap_next(&map, h, &cur, &at))
 *         if (strcmp(items[at].name, name) == 0) return &items[at];
 *     ... append the item at position n, then gk_hashmap_add(&map, h, n) ...
 */
#ifndef GK_UTIL_HASHMAP_H
#define GK_UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* FNV-1a, 64 bits: the offset basis to start from. */
#define GK_FNV1A_BASIS 0xcbf29ce484222325ULL

/** gk_fnv1a() : @return : h (GK_FNV1A_BASIS to start, or an earlier result to
 *  go on) extended by FNV-1a over the n bytes at p. */
static inline uint64_t gk_fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

typedef struct gk_hashmap_slot {
    uint64_t hash;
    size_t at1;          /* the item's position + 1; 0: empty */
} gk_hashmap_slot;

typedef struct gk_hashmap {
    gk_hashmap_slot *slots;
    size_t cap;          /* power of two, 0 when empty */
    size_t count;
} gk_hashmap;            /* zero-initialised: an empty map */

/** gk_hashmap_next() : walks the positions stored under hash h. Start with
 *  *cursor = 0 and call again while it returns true.
 *  @return : true with *at the next position stored under h, false when there
 *            is none left. */
bool gk_hashmap_next(const gk_hashmap *m, uint64_t h, size_t *cursor, size_t *at);

/** gk_hashmap_add() : stores position at under hash h (a second position under
 *  the same hash is kept beside the first, in no promised order: look the key
 *  up first to keep one item per key, as every user does).
 *  @return : true, or false when out of memory (the map is unchanged). */
bool gk_hashmap_add(gk_hashmap *m, uint64_t h, size_t at);

/** gk_hashmap_free() : releases the table; the map is empty again. */
void gk_hashmap_free(gk_hashmap *m);

#endif
