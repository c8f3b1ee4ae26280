/*
 * grow.c - gk_grow: capacity doubling with overflow checks, then one realloc.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

bool gk_grow(void *pp, size_t *cap, size_t need, size_t elem, size_t first) {
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : (first ? first : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2) return false;
        n *= 2;
    }
    if (elem != 0 && n > SIZE_MAX / elem) return false;
    void *old;
    memcpy(&old, pp, sizeof old);
    size_t bytes = n * elem;
    void *p = realloc(old, bytes > 0 ? bytes : 1);
    if (p == NULL) return false;
    memcpy(pp, &p, sizeof p);
    *cap = n;
    return true;
}
