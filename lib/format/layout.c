/*
 * layout.c - where an output's data section starts when its unchanged tensors
 * are to share blocks with their inputs (cloning, io/clone.h): a tensor clones
 * when its input offset and its output offset are congruent modulo the
 * filesystem block, so the output's data section should start at the residue
 * that makes the most unchanged bytes congruent; the header is then padded
 * (GK_PADDING_KEY, a pair every reader skips) to start it there. The padding
 * pair itself (gk_model_set_padding) is set here too: in-place edits reserve
 * header room with it.
 */
#include <stdlib.h>
#include <string.h>

#include "format/file.h"
#include "meta/model.h"
#include "util/grow.h"

gk_status gk_model_set_padding(gk_model *m, uint64_t n, gk_error *err) {
    gk_value v = { .type = GK_V_ARR };
    v.arr.elem = GK_V_U8;
    v.arr.n = n;
    void *zeros = NULL;
    if (n > 0 && (zeros = calloc(1, (size_t)n)) == NULL)
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory for %llu bytes of padding", (unsigned long long)n);
    v.arr.data = zeros;
    gk_status st = gk_kv_set(m, GK_PADDING_KEY, &v, err);
    free(zeros);
    return st;
}

gk_status gk_model_pad_to_residue(gk_model *m, uint64_t block, uint64_t residue, bool *done, gk_error *err) {
    *done = false;
    uint64_t align = gk_model_alignment(m);
    if (block == 0 || residue >= block) return GK_OK;
    if (gk_model_data_start(m) % block == residue) {
        *done = true;
        return GK_OK;
    }
    if (block % align != 0 || residue % align != 0) return GK_OK;   /* no padding gets there */
    const gk_value *had = gk_kv_get(m, GK_PADDING_KEY);
    uint64_t keep = had && had->type == GK_V_ARR && had->arr.elem == GK_V_U8 ? had->arr.n : 0;
    gk_status st = gk_model_set_padding(m, keep, err);   /* the pair in its place, as large as before */
    if (st != GK_OK) return st;
    uint64_t start = gk_model_data_start(m);
    uint64_t more = (residue + block - start % block) % block;   /* a multiple of align */
    if (more > 0 && (st = gk_model_set_padding(m, keep + more, err)) != GK_OK) return st;
    *done = gk_model_data_start(m) % block == residue;
    return GK_OK;
}

/* Whether output tensor i's bytes are copied unchanged from a plain file. */
static bool copied_from_file(const gk_model *out, size_t i, const gk_step *st, const gk_tensor **in) {
    const gk_file *f = st->src;
    *in = gk_tensor_at(f->model, st->src_tensor);
    return *in != NULL && f->fd >= 0 && f->mem == NULL && f->stream == NULL &&
           (*in)->type == out->tensors[i].type && f->model->big_endian == out->big_endian;
}

gk_status gk_layout_clone_residue(const gk_model *out, const gk_step *steps, uint64_t block,
                                  gk_clone_layout *best, gk_error *err) {
    memset(best, 0, sizeof *best);
    if (block == 0) return GK_OK;
    typedef struct group { uint64_t residue, bytes; gk_file *src; } group;
    group *g = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < out->n_tensors; i++) {
        const gk_tensor *in;
        if (!copied_from_file(out, i, &steps[i], &in) || in->nbytes < block) continue;
        uint64_t from = steps[i].src->data_offset + in->offset, to = out->tensors[i].offset;
        uint64_t r = (from % block + block - to % block) % block;
        size_t k = 0;
        while (k < n && g[k].residue != r) k++;
        if (k == n) {
            if (!GK_GROW(g, cap, n + 1, 8)) {
                free(g);
                return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            }
            g[n++] = (group){ r, 0, steps[i].src };
        }
        g[k].bytes += in->nbytes;
    }
    for (size_t k = 0; k < n; k++)
        if (g[k].bytes > best->bytes) *best = (gk_clone_layout){ g[k].residue, g[k].bytes, g[k].src };
    free(g);
    return GK_OK;
}
