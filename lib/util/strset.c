/*
 * strset.c - open-addressing hash set of borrowed byte strings (FNV-1a).
 */
#include <stdlib.h>
#include <string.h>

#include "util/strset.h"

static uint64_t hash_bytes(const char *s, uint64_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (uint64_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void place(const char **ptrs, uint64_t *lens, size_t cap, const char *s, uint64_t len) {
    size_t i = (size_t)hash_bytes(s, len) & (cap - 1);
    while (ptrs[i] != NULL) i = (i + 1) & (cap - 1);
    ptrs[i] = s;
    lens[i] = len;
}

static int grow(gk_strset *set) {
    size_t cap = set->cap ? set->cap * 2 : 64;
    const char **ptrs = calloc(cap, sizeof *ptrs);
    uint64_t *lens = calloc(cap, sizeof *lens);
    if (ptrs == NULL || lens == NULL) {
        free(ptrs);
        free(lens);
        return -1;
    }
    for (size_t i = 0; i < set->cap; i++)
        if (set->ptrs[i] != NULL) place(ptrs, lens, cap, set->ptrs[i], set->lens[i]);
    free(set->ptrs);
    free(set->lens);
    set->ptrs = ptrs;
    set->lens = lens;
    set->cap = cap;
    return 0;
}

int gk_strset_insert(gk_strset *set, const char *s, uint64_t len) {
    if ((set->count + 1) * 2 > set->cap && grow(set) != 0) return -1;
    size_t i = (size_t)hash_bytes(s, len) & (set->cap - 1);
    while (set->ptrs[i] != NULL) {
        if (set->lens[i] == len && memcmp(set->ptrs[i], s, len) == 0) return 0;
        i = (i + 1) & (set->cap - 1);
    }
    set->ptrs[i] = s;
    set->lens[i] = len;
    set->count++;
    return 1;
}

void gk_strset_free(gk_strset *set) {
    free(set->ptrs);
    free(set->lens);
    memset(set, 0, sizeof *set);
}
