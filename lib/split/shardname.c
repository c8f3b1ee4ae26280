/*
 * shardname.c - shard file names (PREFIX-00002-of-00003.gguf): made for a set
 * that is written or opened, read back to find a shard's PREFIX. Every module
 * that names shards (split, merge, quantize --keep-split, the index) goes
 * through here, so they cannot disagree about a name. A shard may be stored
 * compressed, its name then ending in ".gguf.zst": the tail after ".gguf" is
 * set apart when a name is read and put back when a sibling's is made.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"
#include "split/shardname.h"

/* The part after PREFIX: "-%05d-of-%05d.gguf" of shard k (0-based) of n. */
static int suffix_of(char *buf, size_t size, uint64_t k, uint64_t n) {
    return snprintf(buf, size, "-%05" PRIu64 "-of-%05" PRIu64 ".gguf", k + 1, n);
}

bool gk_shard_name_format(char *buf, size_t size, const char *prefix, uint64_t k, uint64_t n) {
    int n_out = snprintf(buf, size, "%s-%05" PRIu64 "-of-%05" PRIu64 ".gguf", prefix, k + 1, n);
    return n_out > 0 && (size_t)n_out < size;
}

char *gk_shard_name(const char *prefix, uint64_t k, uint64_t n) {
    size_t len = strlen(prefix) + 64;
    char *p = malloc(len);
    if (p && !gk_shard_name_format(p, len, prefix, k, n)) {
        free(p);
        p = NULL;
    }
    return p;
}

char *gk_shard_name_prefix(const char *name, size_t len, uint64_t k, uint64_t n) {
    char suffix[64];
    int ls = suffix_of(suffix, sizeof suffix, k, n);
    if (ls <= 0 || len <= (size_t)ls || memcmp(name + len - (size_t)ls, suffix, (size_t)ls) != 0) return NULL;
    return strndup(name, len - (size_t)ls);
}

char *gk_split_path(const char *prefix, size_t k, size_t n) { return gk_shard_name(prefix, k, n); }

bool gk_shard_name_parse(const char *path, char **prefix, uint64_t *k, uint64_t *n) {
    *prefix = NULL;
    size_t len = strlen(path);
    const char *tail = ".gguf";
    if (len < 5 || strcmp(path + len - 5, tail) != 0) return false;
    const char *of = NULL;
    for (const char *p = path; (p = strstr(p, "-of-")) != NULL; p++) of = p;
    if (of == NULL) return false;
    unsigned long long kk, nn;
    int used = 0;
    const char *dash = of;
    while (dash > path && dash[-1] != '-') dash--;
    if (dash == path || sscanf(dash, "%5llu-of-%5llu.gguf%n", &kk, &nn, &used) != 2 || (size_t)used != strlen(dash))
        return false;
    if (kk < 1 || kk > nn) return false;
    *k = kk - 1;
    *n = nn;
    *prefix = gk_shard_name_prefix(path, len, *k, *n);
    return *prefix != NULL;
}

/* The tails a stored shard's name may have after ".gguf" (compressed copies a
 * reader opens as such); "" first. */
static const char *const tails[] = { "", ".zst" };
#define N_TAILS (sizeof tails / sizeof tails[0])

const char *gk_shard_tail(const char *name, size_t len) {
    for (size_t i = N_TAILS; i-- > 1;) {
        size_t lt = strlen(tails[i]);
        if (len > lt && memcmp(name + len - lt, tails[i], lt) == 0) return tails[i];
    }
    return tails[0];
}

const char *gk_shard_tail_at(size_t i) { return i < N_TAILS ? tails[i] : NULL; }

char *gk_shard_path_prefix(const char *path, uint64_t k, uint64_t n, const char **tail) {
    size_t len = strlen(path);
    const char *t = gk_shard_tail(path, len);
    if (tail) *tail = t;
    return gk_shard_name_prefix(path, len - strlen(t), k, n);
}

char *gk_shard_path(const char *prefix, uint64_t k, uint64_t n, const char *tail) {
    size_t len = strlen(prefix) + strlen(tail) + 64;
    char *p = malloc(len);
    if (p && !gk_shard_name_format(p, len, prefix, k, n)) {
        free(p);
        return NULL;
    }
    if (p) strcat(p, tail);
    return p;
}
