/*
 * source.c - reads of a conversion's tensors, made on demand (source.h).
 *
 * A read asks for a byte range of a presented tensor. The range is cut into
 * runs of elements whose source is contiguous in one checkpoint tensor (a run
 * ends at a row whose permuted source row does not follow the last one, at a
 * part's end, and at the scratch buffer's size); each run is read with one
 * positional read and converted into the caller's buffer. Conversions are the
 * exact ones torch and numpy make before the writer rounds: F16 and BF16 widen
 * exactly, F64 narrows to nearest.
 */
#include <stdlib.h>
#include <string.h>

#include "convert/source.h"
#include "format/file.h"
#include "types/fp16.h"
#include "util/grow.h"

#define SCRATCH_BYTES (1u << 20)

struct gk_conv_source {
    gk_conv_feed *feeds;
    size_t n, cap;
    uint8_t *scratch;      /* one run's source bytes: reads are one at a time */
};

gk_conv_source *gk_conv_source_new(void) {
    gk_conv_source *s = calloc(1, sizeof *s);
    if (s && (s->scratch = malloc(SCRATCH_BYTES)) == NULL) {
        free(s);
        s = NULL;
    }
    return s;
}

static void feed_free(gk_conv_feed *f) {
    free(f->parts);
    free(f->mem);
}

gk_status gk_conv_source_add(gk_conv_source *s, gk_conv_feed *feed, gk_error *err) {
    if (!GK_GROW(s->feeds, s->cap, s->n + 1, 64)) {
        feed_free(feed);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    s->feeds[s->n++] = *feed;
    return GK_OK;
}

void gk_conv_source_free(gk_conv_source *s) {
    if (s == NULL) return;
    for (size_t i = 0; i < s->n; i++) feed_free(&s->feeds[i]);
    free(s->feeds);
    free(s->scratch);
    free(s);
}

/* The source row of presented row r of a part: ggml's rope wants each head's
 * rows interleaved (first half, second half, first half ...) where Hugging
 * Face stores the halves one after the other (LlamaModel.permute). */
static uint64_t source_row(const gk_conv_feed *f, uint64_t r) {
    if (f->perm_groups == 0) return r;
    uint64_t per = f->rows / f->perm_groups, half = per / 2;
    uint64_t h = r / per, in = r % per;
    return h * per + (in % 2) * half + in / 2;
}

static uint32_t dtype_size(gk_st_dtype d) { return gk_st_dtype_size(d); }

/* Converts n source values of dtype d at src to the presented type at dst. */
static void widen(gk_st_dtype d, uint32_t type, const uint8_t *src, uint8_t *dst, uint64_t n) {
    if (type == GK_TYPE_F16) {   /* F16 kept as it is */
        memcpy(dst, src, n * 2);
        return;
    }
    float *o = (float *)(void *)dst;
    for (uint64_t i = 0; i < n; i++) {
        float v;
        switch (d) {
        case GK_ST_F32: memcpy(&v, src + i * 4, 4); break;
        case GK_ST_F16: { uint16_t h; memcpy(&h, src + i * 2, 2); v = gk_fp16_to_fp32(h); break; }
        case GK_ST_BF16: { uint16_t h; memcpy(&h, src + i * 2, 2); v = gk_bf16_to_fp32(h); break; }
        default: { double x; memcpy(&x, src + i * 8, 8); v = (float)x; break; }   /* F64 */
        }
        memcpy(&o[i], &v, 4);
    }
}

static gk_status read_feed(void *ctx, size_t ti, uint64_t start, void *buf, size_t len, gk_error *err) {
    gk_conv_source *s = ctx;
    if (ti >= s->n) return gk_error_set(err, GK_E_ARG, -1, "tensor %zu out of range", ti);
    const gk_conv_feed *f = &s->feeds[ti];
    const uint64_t esz = f->type == GK_TYPE_F16 ? 2 : 4;
    if (start % esz || len % esz)
        return gk_error_set(err, GK_E_ARG, -1, "read of a converted tensor not on an element boundary");
    uint64_t e = start / esz, n = len / esz;
    uint8_t *out = buf;
    if (f->mem) {
        memcpy(out, f->mem + e, len);
        return GK_OK;
    }
    while (n > 0) {
        const uint64_t row = e / f->width, col = e % f->width;
        const uint64_t part = row / f->rows, prow = row % f->rows;
        const gk_ckpt_tensor *ct = f->parts[part];
        const uint32_t ssz = dtype_size(ct->t->dtype);
        const uint64_t base = f->part_rows ? part * f->part_rows + f->row0 : 0;
        const uint64_t srow = source_row(f, prow);
        uint64_t take = f->width - col;
        if (take > n) take = n;
        const uint64_t fit = SCRATCH_BYTES / ssz;
        if (take > fit) take = fit;
        if (col == 0 && take == f->width) {
            /* Whole rows: extend while the next row's source follows. */
            uint64_t k = 1;
            while (prow + k < f->rows && source_row(f, prow + k) == srow + k && (k + 1) * f->width <= n &&
                   (k + 1) * f->width <= fit)
                k++;
            take = k * f->width;
        }
        gk_status st = gk_st_read(ct->part, ct->t, ((base + srow) * f->width + col) * ssz, s->scratch,
                                  (size_t)(take * ssz), err);
        if (st != GK_OK) return st;
        widen(ct->t->dtype, f->type, s->scratch, out, take);
        out += take * esz;
        e += take;
        n -= take;
    }
    return GK_OK;
}

gk_status gk_conv_source_file(gk_conv_source *s, const char *name, gk_model *model, gk_file **out,
                              gk_error *err) {
    return gk_file_virtual(name, model, read_feed, s, out, err);
}
