/*
 * grow.h - growable arrays: the one grow-by-doubling reallocation of the
 * library. An array is a pointer and a capacity in elements; before writing
 * element n, GK_GROW(arr, cap, n + 1, FIRST) makes room:
 *
 *     if (!GK_GROW(list->items, list->cap, list->n + 1, 16)) return nomem(err);
 *     list->items[list->n++] = item;
 */
#ifndef GK_UTIL_GROW_H
#define GK_UTIL_GROW_H

#include <stdbool.h>
#include <stddef.h>

/** gk_grow() : makes the array *pp (a pointer to its first element; *cap
 *  elements of elem bytes) hold at least need elements. When it is too small
 *  its capacity doubles (starting from first when it is 0) until need fits, and
 *  it is reallocated; elements past the old capacity are not initialised.
 *  @return : true, or false when out of memory or the size would overflow
 *            (*pp and *cap are then unchanged, the array still valid). */
bool gk_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t first);

/** GK_GROW() : gk_grow for the array arr (any pointer lvalue) with capacity
 *  cap (a size_t lvalue). */
#define GK_GROW(arr, cap, need, first) gk_grow(&(arr), &(cap), (need), sizeof *(arr), (first))

#endif
