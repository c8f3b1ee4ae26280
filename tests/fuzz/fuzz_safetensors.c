/*
 * fuzz_safetensors.c - libFuzzer harness for the safetensors reader
 * (lib/convert/safetensors.c).
 *
 * The input is a whole safetensors file, put in a memory file and opened by
 * path. An accepted file must keep the reader's promises: every tensor's bytes
 * inside the file, the ranges tiling the data without gap or overlap, each
 * range the size its dtype and shape give, names unique and found by name; and
 * the first and last bytes of every tensor must read. A refusal must explain
 * itself (a code, a message and the file named).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "convert/safetensors.h"

static void check_accepted(gk_st_file *f, uint64_t size) {
    uint64_t at = 0, data_start = 0;
    for (size_t i = 0; i < gk_st_count(f); i++) {
        const gk_st_tensor *t = gk_st_at(f, i);
        if (i == 0) data_start = t->offset;
        if (t->offset != data_start + at || t->offset + t->nbytes > size) abort();
        uint64_t elems = 1;
        for (uint32_t d = 0; d < t->n_dims; d++) elems *= t->shape[d];
        if (elems * gk_st_dtype_size(t->dtype) != t->nbytes) abort();
        if (gk_st_find(f, t->name) != t) abort();
        at += t->nbytes;
        uint8_t buf[16];
        gk_error err;
        size_t n = t->nbytes < sizeof buf ? (size_t)t->nbytes : sizeof buf;
        if (gk_st_read(f, t, 0, buf, n, &err) != GK_OK) abort();
        if (gk_st_read(f, t, t->nbytes - n, buf, n, &err) != GK_OK) abort();
    }
    if (gk_st_count(f) > 0 && data_start + at != size) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int fd = memfd_create("fuzz.safetensors", 0);
    if (fd < 0) return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    gk_st_file *f = NULL;
    gk_error err;
    gk_status s = gk_st_open(path, &f, &err);
    if (s == GK_OK) {
        check_accepted(f, size);
        gk_st_close(f);
    } else if (f != NULL || err.message[0] == '\0' || err.code != s) {
        abort();
    }
    close(fd);
    return 0;
}
