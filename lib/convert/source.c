/*
 * source.c - reads of a conversion's tensors, made on demand (source.h).
 *
 * A read asks for a byte range of a presented tensor. The range is cut into
 * runs of elements whose source is contiguous in one checkpoint tensor (a run
 * ends at a row whose permuted source row does not follow the last one, at a
 * part's end, and, for values that are widened, at the scratch buffer's size);
 * each run is read with one positional read, straight into the caller's buffer
 * when the values are presented as they are stored (F16, BF16, F32), else into
 * the scratch and widened from there into the caller's buffer. The rows of a
 * Q/K-permuted head are read together and put in place from the scratch.
 * (Reads through a mapping of the file were measured, issue 34: no faster on
 * a 1.1 GB checkpoint, and a file cut short underneath would fault.)
 * Conversions are the exact ones torch and numpy make before the writer
 * rounds: F16 and BF16 widen exactly, F64 narrows to nearest.
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

/* Bytes per presented value (F16, BF16, F32: plain types, from the type table). */
static uint64_t presented_size(const gk_conv_feed *f) {
    return gk_type_get(f->type)->block_bytes;
}

/* Whether values of dtype d are presented as they are stored (else widened to F32). */
static bool stored_as_presented(const gk_conv_feed *f, gk_st_dtype d) {
    return (f->type == GK_TYPE_F16 && d == GK_ST_F16) || (f->type == GK_TYPE_BF16 && d == GK_ST_BF16) ||
           (f->type == GK_TYPE_F32 && d == GK_ST_F32);
}

/* Converts n source values of dtype d at src to F32 at dst (which need not
 * be aligned). The dtype is tested once per run, not per value (the 16-bit
 * loop's test is loop-invariant: the compiler takes it out), so that each
 * loop vectorizes. */
static void widen(gk_st_dtype d, const uint8_t *src, uint8_t *dst, uint64_t n) {
    switch (d) {
    case GK_ST_BF16:
    case GK_ST_F16:
        if ((uintptr_t)dst % sizeof(float) == 0) {   /* the type table's kernel (SIMD where the CPU has it) */
            gk_type_get(d == GK_ST_BF16 ? GK_TYPE_BF16 : GK_TYPE_F16)->dequantize(src, (float *)(void *)dst, (int64_t)n);
            break;
        }
        for (uint64_t i = 0; i < n; i++) {   /* an unaligned buffer */
            uint16_t h;
            memcpy(&h, src + i * 2, 2);
            const float v = d == GK_ST_BF16 ? gk_bf16_to_fp32(h) : gk_fp16_to_fp32(h);
            memcpy(dst + i * 4, &v, 4);
        }
        break;
    default:   /* F64, narrowed to nearest */
        for (uint64_t i = 0; i < n; i++) {
            double x;
            memcpy(&x, src + i * 8, 8);
            const float v = (float)x;
            memcpy(dst + i * 4, &v, 4);
        }
        break;
    }
}

/* Whole rows of a Q/K-permuted part, from presented row prow on (at most
 * max_rows, inside one head): the source rows they interleave are read with
 * one read into the scratch (as many as it holds) and each row is put in its
 * place, rather than one read per row. *done gets the rows made; 0 when fewer
 * than two fit, and the caller reads row by row. */
static gk_status read_permuted(gk_conv_source *s, const gk_conv_feed *f, const gk_ckpt_tensor *ct,
                               uint64_t base, uint64_t prow, uint64_t max_rows, uint8_t *out,
                               uint64_t *done, gk_error *err) {
    const uint32_t ssz = dtype_size(ct->t->dtype);
    const uint64_t esz = presented_size(f);
    const bool as_is = stored_as_presented(f, ct->t->dtype);
    const uint64_t row_bytes = f->width * ssz, cap = SCRATCH_BYTES / row_bytes;
    const uint64_t per = f->rows / f->perm_groups;
    uint64_t k = per - prow % per, lo = UINT64_MAX, hi = 0, i;
    if (k > max_rows) k = max_rows;
    for (i = 0; i < k; i++) {   /* the window of source rows grows with each row */
        const uint64_t r = source_row(f, prow + i);
        const uint64_t nlo = r < lo ? r : lo, nhi = r + 1 > hi ? r + 1 : hi;
        if (nhi - nlo > cap) break;
        lo = nlo;
        hi = nhi;
    }
    *done = 0;
    if (i < 2) return GK_OK;
    k = i;
    gk_status st = gk_st_read(ct->part, ct->t, (base + lo) * row_bytes, s->scratch,
                              (size_t)((hi - lo) * row_bytes), err);
    if (st != GK_OK) return st;
    for (i = 0; i < k; i++) {
        const uint8_t *src = s->scratch + (source_row(f, prow + i) - lo) * row_bytes;
        uint8_t *dst = out + i * f->width * esz;
        if (as_is)
            memcpy(dst, src, (size_t)row_bytes);
        else
            widen(ct->t->dtype, src, dst, f->width);
    }
    *done = k;
    return GK_OK;
}

static gk_status read_feed(void *ctx, size_t ti, uint64_t start, void *buf, size_t len, gk_error *err) {
    gk_conv_source *s = ctx;
    if (ti >= s->n) return gk_error_set(err, GK_E_ARG, -1, "tensor %zu out of range", ti);
    const gk_conv_feed *f = &s->feeds[ti];
    const uint64_t esz = presented_size(f);
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
        if (f->perm_groups && col == 0 && n >= 2 * f->width) {
            uint64_t k;
            gk_status st = read_permuted(s, f, ct, base, prow, n / f->width, out, &k, err);
            if (st != GK_OK) return st;
            if (k > 0) {
                out += k * f->width * esz;
                e += k * f->width;
                n -= k * f->width;
                continue;
            }
        }
        uint64_t take = f->width - col;
        if (take > n) take = n;
        /* Values presented as they are stored (F16, BF16 or F32) are read
         * straight into the caller's buffer; others go through the scratch and
         * widen to F32. */
        const bool as_is = stored_as_presented(f, ct->t->dtype);
        const uint64_t fit = as_is ? n : SCRATCH_BYTES / ssz;
        if (take > fit) take = fit;
        if (col == 0 && take == f->width) {
            /* Whole rows: extend while the next row's source follows. */
            uint64_t k = 1;
            while (prow + k < f->rows && source_row(f, prow + k) == srow + k && (k + 1) * f->width <= n &&
                   (k + 1) * f->width <= fit)
                k++;
            take = k * f->width;
        }
        gk_status st = gk_st_read(ct->part, ct->t, ((base + srow) * f->width + col) * ssz,
                                  as_is ? out : s->scratch, (size_t)(take * ssz), err);
        if (st != GK_OK) return st;
        if (!as_is) widen(ct->t->dtype, s->scratch, out, take);
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
