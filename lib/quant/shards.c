/*
 * shards.c - llama-quantize's input: one model, or the shard set whose first
 * shard it is (PREFIX-00001-of-00003.gguf ...), as llama.cpp's loader takes it.
 * The set itself is opened and checked by gk_split_set_open, its names made and
 * read by split/shardname.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"

/* Opens a model or the whole shard set it begins (see ggufkit.h): a set is
 * opened and checked by gk_split_set_open, as merge and verify open it, so that
 * every command says the same about a set that is incomplete or inconsistent. */
gk_status gk_quant_open_inputs(const char *path, unsigned flags, gk_file ***files, size_t *n,
                               gk_error *err) {
    *files = NULL;
    *n = 0;
    gk_file *first;
    gk_status st = gk_open(path, flags, &first, err);
    if (st != GK_OK) return st;
    uint64_t count = 1, no = 0;
    const gk_model *m0 = gk_file_model(first);
    if (gk_kv_get_uint(m0, "split.count", &count) != GK_OK || count < 1) count = 1;
    if (count > 1 && gk_kv_get_uint(m0, "split.no", &no) == GK_OK && no != 0) {
        gk_close(first);
        return gk_error_set(err, GK_E_ARG, -1, "%s is shard %llu of %llu: give the first shard", path,
                            (unsigned long long)no + 1, (unsigned long long)count);
    }
    if (count > 1) {
        gk_close(first);
        gk_split_set *set;
        if ((st = gk_split_set_open(path, flags, &set, err)) != GK_OK) return st;
        gk_split_set_release(set, files, n);
        return GK_OK;
    }
    if ((*files = malloc(sizeof **files)) == NULL) {
        gk_close(first);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    (*files)[0] = first;
    *n = 1;
    return GK_OK;
}
