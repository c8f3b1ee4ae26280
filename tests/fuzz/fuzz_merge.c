/*
 * fuzz_merge.c - libFuzzer harness for shard-set validation (gk_split_set_open).
 *
 * gk_split_set_open works on paths, so the input is cut into shard files in a
 * private temporary folder: byte 0 picks the shard count (2 or 3) and which
 * shard path is opened; the rest is cut at the GGUF magics it holds (a
 * concatenation of shards, as the seed corpus provides) or, without enough
 * magics, into equal parts. Every shard is written as PREFIX-0000k-of-0000n.gguf.
 * An accepted set must agree with itself (counts, tensors, byte totals) and
 * build its merged model; every refusal must explain itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggufkit.h"

static char dir[64];

/* Removes the (by then empty) private folder when the fuzzer exits. */
static void remove_dir(void) { rmdir(dir); }

static bool write_file(const char *path, const uint8_t *p, size_t n) {
    FILE *fp = fopen(path, "wb");
    if (fp == NULL) return false;
    bool ok = n == 0 || fwrite(p, 1, n, fp) == n;
    return fclose(fp) == 0 && ok;
}

/* Cut points: at GGUF magics after the start when there are enough, else even. */
static void cut(const uint8_t *p, size_t n, size_t count, size_t *starts) {
    size_t found = 1;
    starts[0] = 0;
    for (size_t i = 4; i + 4 <= n && found < count; i++)
        if (memcmp(p + i, "GGUF", 4) == 0) starts[found++] = i;
    if (found < count)
        for (size_t k = 0; k < count; k++) starts[k] = n * k / count;
    starts[count] = n;
}

static void check_set(gk_split_set *set, size_t count) {
    if (gk_split_set_count(set) != count) abort();
    uint64_t tensors = 0, bytes = 0;
    for (size_t k = 0; k < count; k++) {
        gk_file *f = gk_split_set_file(set, k);
        if (f == NULL) abort();
        const gk_model *m = gk_file_model(f);
        tensors += gk_tensor_count(m);
        for (size_t i = 0; i < gk_tensor_count(m); i++) bytes += gk_tensor_at(m, i)->nbytes;
    }
    if (tensors != gk_split_set_tensor_count(set)) abort();
    (void)bytes;
    gk_model *merged = NULL;
    gk_step *steps = NULL;
    gk_error err;
    gk_status st = gk_split_set_merged(set, &merged, &steps, &err);
    if (st == GK_OK) {
        if (gk_tensor_count(merged) != tensors) abort();
        if (gk_kv_find(merged, GK_SPLIT_KEY_COUNT) >= 0) abort();
        uint8_t *hdr;
        size_t len;
        if (gk_header_serialize(merged, &hdr, &len, &err) == GK_OK) free(hdr);
    } else if (err.message[0] == '\0') {
        abort();
    }
    gk_model_free(merged);
    free(steps);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/fuzz_merge.XXXXXX");
        if (mkdtemp(dir) == NULL) abort();
        atexit(remove_dir);
    }
    size_t count = 2 + (data[0] & 1);
    size_t pick = (data[0] >> 1) % count;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    size_t starts[4];
    cut(p, n, count, starts);
    char paths[3][128];
    for (size_t k = 0; k < count; k++) {
        snprintf(paths[k], sizeof paths[k], "%s/m-%05zu-of-%05zu.gguf", dir, k + 1, count);
        if (!write_file(paths[k], p + starts[k], starts[k + 1] - starts[k])) abort();
    }
    gk_split_set *set = NULL;
    gk_error err;
    gk_status st = gk_split_set_open(paths[pick], GK_OPEN_DEFAULT, &set, &err);
    if (st == GK_OK) {
        check_set(set, count);
        gk_split_set_close(set);
    } else if (err.code == GK_OK || err.message[0] == '\0') {
        abort();
    }
    for (size_t k = 0; k < count; k++) unlink(paths[k]);
    return 0;
}
