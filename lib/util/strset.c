/*
 * strset.c - the hash set of borrowed byte strings: the strings in an array,
 * indexed by the library's hash map (FNV-1a).
 */
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/strset.h"

int gk_strset_insert(gk_strset *set, const char *s, uint64_t len) {
    uint64_t h = gk_fnv1a(GK_FNV1A_BASIS, s, (size_t)len);
    size_t cur = 0, at;
    while (gk_hashmap_next(&set->map, h, &cur, &at))
        if (set->items[at].len == len && memcmp(set->items[at].ptr, s, (size_t)len) == 0) return 0;
    if (!GK_GROW(set->items, set->cap, set->count + 1, 32)) return -1;
    if (!gk_hashmap_add(&set->map, h, set->count)) return -1;
    set->items[set->count++] = (gk_strset_item){ s, len };
    return 1;
}

void gk_strset_free(gk_strset *set) {
    free(set->items);
    gk_hashmap_free(&set->map);
    memset(set, 0, sizeof *set);
}
