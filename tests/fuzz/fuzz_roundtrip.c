/*
 * fuzz_roundtrip.c - libFuzzer harness: read -> write -> read of whole files.
 *
 * An input the reader accepts (strict mode, tensor data included) is written
 * back through the pipeline (gk_write_model, every tensor copied from the
 * memory source, padded at the end as the input is) to a temporary file, which
 * must open again with the same metadata, tensors and tensor bytes. When the
 * input was laid out canonically (its header re-serializes to the same bytes and
 * the data sits where gk_model_layout puts it, with zero bytes between and after
 * the tensors), the written file must equal the input byte for byte (up to its
 * padded end: trailing bytes after that are not part of the model). A write failure must explain itself.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ggufkit.h"

static char dir[64];

/* Removes the (by then empty) private folder when the fuzzer exits. */
static void remove_dir(void) { rmdir(dir); }

static uint8_t *slurp(const char *path, size_t *n) {
    struct stat sb;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &sb) != 0) abort();
    uint8_t *p = malloc((size_t)sb.st_size + 1);
    if (p == NULL) abort();
    size_t got = 0;
    while (got < (size_t)sb.st_size) {
        ssize_t r = read(fd, p + got, (size_t)sb.st_size - got);
        if (r <= 0) abort();
        got += (size_t)r;
    }
    close(fd);
    *n = got;
    return p;
}

static void same_models(const gk_model *a, const gk_model *b) {
    if (gk_kv_count(a) != gk_kv_count(b) || gk_tensor_count(a) != gk_tensor_count(b)) abort();
    if (gk_model_big_endian(a) != gk_model_big_endian(b)) abort();
    for (size_t i = 0; i < gk_kv_count(a); i++) {
        const gk_kv *x = gk_kv_at(a, i), *y = gk_kv_at(b, i);
        if (x->key.len != y->key.len || memcmp(x->key.ptr, y->key.ptr, x->key.len) != 0) abort();
        if (x->value.type != y->value.type) abort();
    }
    for (size_t i = 0; i < gk_tensor_count(a); i++) {
        const gk_tensor *x = gk_tensor_at(a, i), *y = gk_tensor_at(b, i);
        if (x->type != y->type || x->n_dims != y->n_dims || x->nbytes != y->nbytes ||
            memcmp(x->ne, y->ne, sizeof x->ne) != 0 || strcmp(x->name.ptr, y->name.ptr) != 0)
            abort();
    }
}

/* Tensor i's bytes in both files are equal. */
static void same_data(gk_file *f, gk_file *g, size_t i) {
    const gk_tensor *t = gk_tensor_at(gk_file_model(f), i);
    if (t->nbytes == 0) return;
    uint8_t *a = malloc((size_t)t->nbytes), *b = malloc((size_t)t->nbytes);
    gk_error err;
    if (a == NULL || b == NULL) abort();
    if (gk_file_tensor_read(f, i, 0, a, (size_t)t->nbytes, &err) != GK_OK) abort();
    if (gk_file_tensor_read(g, i, 0, b, (size_t)t->nbytes, &err) != GK_OK) abort();
    if (memcmp(a, b, (size_t)t->nbytes) != 0) abort();
    free(a);
    free(b);
}

/* The input's header re-serializes identically and its tensors sit where the
 * canonical layout puts them. */
static bool is_canonical(gk_file *f, const uint8_t *data, size_t size) {
    gk_model *m = gk_model_clone(gk_file_model(f));
    if (m == NULL) return false;
    uint64_t offsets[1024];
    size_t nt = gk_tensor_count(m);
    bool ok = nt <= 1024 && gk_model_version(m) != 1;
    for (size_t i = 0; ok && i < nt; i++) offsets[i] = gk_tensor_at(m, i)->offset;
    if (ok) gk_model_layout(m);
    for (size_t i = 0; ok && i < nt; i++) ok = gk_tensor_at(m, i)->offset == offsets[i];
    uint8_t *hdr = NULL;
    size_t len = 0;
    gk_error err;
    if (ok) ok = gk_header_serialize(m, &hdr, &len, &err) == GK_OK;
    if (ok) ok = len <= size && memcmp(hdr, data, len) == 0 && len == gk_file_data_offset(f);
    free(hdr);
    gk_model_free(m);
    return ok;
}

/* Some byte in [from, to) of the input outside every tensor's data is not zero
 * (the writer pads with zeros, so such bytes cannot come back). */
static bool nonzero_gap(gk_file *f, const uint8_t *data, uint64_t from, uint64_t to) {
    const gk_model *m = gk_file_model(f);
    uint64_t base = gk_file_data_offset(f);
    for (uint64_t at = from; at < to; at++) {
        if (data[at] == 0) continue;
        bool inside = false;
        for (size_t i = 0; i < gk_tensor_count(m) && !inside; i++) {
            const gk_tensor *t = gk_tensor_at(m, i);
            inside = at >= base + t->offset && at - (base + t->offset) < t->nbytes;
        }
        if (!inside) return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/fuzz_roundtrip.XXXXXX");
        if (mkdtemp(dir) == NULL) abort();
        atexit(remove_dir);
    }
    gk_file *f = NULL;
    gk_error err;
    if (gk_open_memory(data, size, GK_OPEN_DEFAULT, &f, &err) != GK_OK) {
        if (err.code == GK_OK || err.message[0] == '\0') abort();
        return 0;
    }
    gk_model *in = gk_file_model(f);
    gk_model *out = gk_model_clone(in);
    size_t nt = gk_tensor_count(in);
    gk_step *steps = calloc(nt + 1, sizeof *steps);
    if (out == NULL || steps == NULL) abort();
    bool v1 = gk_model_version(out) == 1;
    if (v1) gk_model_set_version(out, 3, NULL);
    for (size_t i = 0; i < nt; i++) steps[i] = (gk_step){ f, i, NULL };
    char path[128];
    snprintf(path, sizeof path, "%s/out.gguf", dir);
    unlink(path);
    gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .sink_flags = GK_SINK_OVERWRITE, .pad_end = gk_file_pads_end(f), .threads = 1 };
    gk_status st = gk_write_model(path, out, steps, &opts, &err);
    if (st != GK_OK) {
        if (err.code == GK_OK || err.message[0] == '\0') abort();
        if (access(path, F_OK) == 0) abort();   /* a failed write leaves nothing */
    } else {
        gk_file *g = NULL;
        if (gk_open(path, GK_OPEN_DEFAULT, &g, &err) != GK_OK) abort();
        same_models(in, gk_file_model(g));
        for (size_t i = 0; i < nt; i++) same_data(f, g, i);
        if (!v1 && is_canonical(f, data, size)) {
            size_t n;
            uint8_t *back = slurp(path, &n);
            /* Trailing bytes past the padded end are not part of the model;
             * non-zero bytes between or after tensors are not canonical. An
             * input whose last tensor ends unpadded comes back padded: zeros,
             * fewer than the alignment. */
            size_t common = n < size ? n : size;
            if (n > size) {
                if (n - size >= gk_model_alignment(gk_file_model(f))) abort();
                for (size_t k = size; k < n; k++)
                    if (back[k] != 0) abort();
            }
            if (memcmp(back, data, common) != 0 && !nonzero_gap(f, data, gk_file_data_offset(f), common))
                abort();
            free(back);
        }
        gk_close(g);
        unlink(path);
    }
    free(steps);
    gk_model_free(out);
    gk_close(f);
    return 0;
}
