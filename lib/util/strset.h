/*
 * strset.h - a small growable hash set of byte strings, used to find duplicate
 * keys and tensor names in one pass. Strings are borrowed, not copied. It is
 * util/hashmap.h's map over an array of the strings.
 */
#ifndef GK_UTIL_STRSET_H
#define GK_UTIL_STRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

typedef struct gk_strset_item {
    const char *ptr;
    uint64_t len;
} gk_strset_item;

typedef struct gk_strset {
    gk_strset_item *items;
    size_t count, cap;
    gk_hashmap map;     /* FNV-1a of the bytes -> position in items */
} gk_strset;            /* zero-initialised: an empty set */

/** gk_strset_insert() : adds (s, len) unless present.
 *  @return : 1 if added, 0 if it was already present, -1 when out of memory. */
int gk_strset_insert(gk_strset *set, const char *s, uint64_t len);

/** gk_strset_free() : releases the set's tables (not the strings). */
void gk_strset_free(gk_strset *set);

#endif
