/*
 * shards.c - names and discovery of shard sets (PREFIX-00001-of-00003.gguf ...),
 * as llama.cpp's loader finds the siblings of a first shard: split.count in the
 * first file, the prefix cut from its name, each sibling's split.no checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"

/* The shard name as llama.cpp forms it. */
bool gk_quant_shard_path(char *buf, size_t size, const char *prefix, unsigned idx, unsigned count) {
    int n = snprintf(buf, size, "%s-%05u-of-%05u.gguf", prefix, idx + 1, count);
    return n > 0 && (size_t)n < size;
}

/* The prefix of path when it ends in the shard suffix of idx/count. */
static bool shard_prefix(char *buf, size_t size, const char *path, unsigned idx, unsigned count) {
    char suffix[64];
    int n = snprintf(suffix, sizeof suffix, "-%05u-of-%05u.gguf", idx + 1, count);
    size_t len = strlen(path);
    if (n <= 0 || (size_t)n > len || strcmp(path + len - (size_t)n, suffix) != 0) return false;
    size_t plen = len - (size_t)n;
    if (plen + 1 > size) return false;
    memcpy(buf, path, plen);
    buf[plen] = '\0';
    return true;
}

/* Closes the first n handles and frees the array. */
static void close_all(gk_file **files, size_t n) {
    for (size_t i = 0; i < n; i++) gk_close(files[i]);
    free(files);
}

/* Opens a model or the whole shard set it begins (see ggufkit.h). */
gk_status gk_quant_open_inputs(const char *path, unsigned flags, gk_file ***files, size_t *n,
                               gk_error *err) {
    *files = NULL;
    *n = 0;
    gk_file *first;
    gk_status st = gk_open(path, flags, &first, err);
    if (st != GK_OK) return st;
    uint64_t count = 1, no = 0, total = 0;
    const gk_model *m0 = gk_file_model(first);
    if (gk_kv_get_uint(m0, "split.count", &count) != GK_OK || count < 1) count = 1;
    gk_file **list = calloc(count, sizeof *list);
    if (list == NULL) {
        gk_close(first);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    list[0] = first;
    if (count == 1) {
        *files = list;
        *n = 1;
        return GK_OK;
    }
    if (gk_kv_get_uint(m0, "split.no", &no) == GK_OK && no != 0) {
        close_all(list, 1);
        return gk_error_set(err, GK_E_ARG, -1, "%s is shard %llu of %llu: give the first shard", path,
                            (unsigned long long)no + 1, (unsigned long long)count);
    }
    size_t plen = strlen(path) + 1;
    char *prefix = malloc(plen), *sib = malloc(plen + 32);
    if (prefix == NULL || sib == NULL) {
        free(prefix);
        free(sib);
        close_all(list, 1);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    if (!shard_prefix(prefix, plen, path, 0, (unsigned)count)) {
        st = gk_error_set(err, GK_E_ARG, -1, "%s: split.count is %llu but the name does not end in -00001-of-%05llu.gguf",
                          path, (unsigned long long)count, (unsigned long long)count);
        goto fail;
    }
    size_t have = 1;
    for (unsigned k = 1; k < count; k++) {
        gk_quant_shard_path(sib, plen + 32, prefix, k, (unsigned)count);
        if ((st = gk_open(sib, flags, &list[k], err)) != GK_OK) {
            close_all(list, have);
            list = NULL;
            break;
        }
        have++;
        if (gk_kv_get_uint(gk_file_model(list[k]), "split.no", &no) != GK_OK || no != k) {
            st = gk_error_set(err, GK_E_CORRUPT, -1, "%s: split.no is not %u", sib, k);
            close_all(list, have);
            list = NULL;
            break;
        }
    }
    if (list != NULL) {
        uint64_t found = 0;
        for (size_t k = 0; k < count; k++) found += gk_tensor_count(gk_file_model(list[k]));
        if (gk_kv_get_uint(m0, "split.tensors.count", &total) == GK_OK && total != found) {
            st = gk_error_set(err, GK_E_CORRUPT, -1, "%s: split.tensors.count says %llu tensors, the shards hold %llu",
                              path, (unsigned long long)total, (unsigned long long)found);
            close_all(list, count);
            list = NULL;
        }
    }
    free(prefix);
    free(sib);
    if (list == NULL) return st;
    *files = list;
    *n = count;
    return GK_OK;
fail:
    free(prefix);
    free(sib);
    close_all(list, 1);
    return st;
}
