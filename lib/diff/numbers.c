/*
 * numbers.c - the numeric comparison of one tensor present on both sides with
 * the same shape.
 *
 * When both sides have one type, their bytes are compared first (the other's
 * blocks byte-swapped into the reference's order when the files differ in byte
 * order); equal bytes make the tensor identical without dequantizing. Otherwise
 * both sides are read in chunks of whole pieces, dequantized to F32 through the
 * type table's kernels and compared. A piece is a run of at most PIECE_ELEMS
 * elements inside one row, fixed by the shape alone; worker threads take
 * contiguous runs of pieces, and the per-piece sums (double) are added in piece
 * order, so the numbers do not depend on the thread count. Memory is bounded by
 * CHUNK_ELEMS whatever the tensor's size.
 *
 * Non-finite values (NaN, +-inf) are counted per side and kept out of the sums;
 * an element that differs with a non-finite side makes rmse, max_abs_err and
 * rel_rmse +inf and cosine NaN: such a tensor ranks worst in a fixed way.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_internal.h"

#define CHUNK_ELEMS (1u << 20)    /* elements per chunk and side: 4 MiB of F32 each */
#define PIECE_ELEMS 16384u        /* a multiple of every block size (all divide 256) */
#define MAX_THREADS 64

typedef struct side {
    gk_file *f;
    size_t ti;
    const gk_type_info *type;
    bool swap;                    /* file byte order is not the host's */
    uint8_t *raw;                 /* the chunk's bytes as read */
    float *f32;                   /* the chunk dequantized */
} side;

typedef struct piece_sum {
    double sq_err, sq_ref, sq_oth, dot, max_abs;
    uint64_t n_diff;
    uint64_t nonfinite_ref, nonfinite_oth;   /* NaN or +-inf on that side */
    uint64_t nonfinite_diff;                 /* differing elements with a non-finite side */
} piece_sum;

/* The pieces of a tensor: ppr per row, each PIECE_ELEMS long but the row's last. */
typedef struct geometry {
    uint64_t ne0, rows, ppr, n_pieces;
} geometry;

static uint64_t piece_start(const geometry *g, uint64_t p) {
    return p / g->ppr * g->ne0 + p % g->ppr * PIECE_ELEMS;
}

static uint64_t piece_len(const geometry *g, uint64_t p) {
    uint64_t col = p % g->ppr * PIECE_ELEMS;
    return g->ne0 - col < PIECE_ELEMS ? g->ne0 - col : PIECE_ELEMS;
}

/* Byte offset of element e (a multiple of the type's block size). */
static uint64_t elem_bytes(const gk_type_info *t, uint64_t e) { return e / t->block_elems * t->block_bytes; }

typedef struct job {
    const geometry *g;
    side *a, *b;
    uint64_t chunk_start;         /* first element of the chunk */
    uint64_t p0, p1;              /* pieces of this job */
    piece_sum *sums;              /* one per piece of the job */
} job;

static void prepare(side *s, uint64_t lo, uint64_t n) {
    uint8_t *raw = s->raw + elem_bytes(s->type, lo);
    if (s->swap) s->type->byteswap(raw, (int64_t)(n / s->type->block_elems));
    s->type->dequantize(raw, s->f32 + lo, (int64_t)n);
}

static void *compare_pieces(void *arg) {
    job *j = arg;
    if (j->p0 == j->p1) return NULL;
    uint64_t lo = piece_start(j->g, j->p0) - j->chunk_start;
    uint64_t hi = piece_start(j->g, j->p1 - 1) + piece_len(j->g, j->p1 - 1) - j->chunk_start;
    prepare(j->a, lo, hi - lo);
    prepare(j->b, lo, hi - lo);
    for (uint64_t p = j->p0; p < j->p1; p++) {
        uint64_t at = piece_start(j->g, p) - j->chunk_start, n = piece_len(j->g, p);
        const float *x = j->a->f32 + at, *y = j->b->f32 + at;
        piece_sum s = { 0 };
        for (uint64_t i = 0; i < n; i++) {
            bool differ = x[i] != y[i] && !(isnan(x[i]) && isnan(y[i]));
            bool fx = isfinite(x[i]), fy = isfinite(y[i]);
            if (differ) s.n_diff++;
            if (!fx || !fy) {
                /* The sums hold finite pairs only; a non-finite pair that
                 * differs makes the errors infinite (compare_values). */
                s.nonfinite_ref += !fx;
                s.nonfinite_oth += !fy;
                s.nonfinite_diff += differ;
                continue;
            }
            double r = x[i], o = y[i], e = o - r, ae = fabs(e);
            s.sq_err += e * e;
            s.sq_ref += r * r;
            s.sq_oth += o * o;
            s.dot += r * o;
            if (ae > s.max_abs) s.max_abs = ae;
        }
        j->sums[p - j->p0] = s;
    }
    return NULL;
}

typedef struct run {
    gk_diff_input *in[2];
    side sd[2];
    geometry g;
    uint64_t pieces_per_chunk;
    const gk_diff_opts *opts;
    int threads;
    uint64_t *done, total;
} run;

/* Reads the bytes of pieces [p0, p1) of both sides into their raw buffers. */
static gk_status read_chunk(run *r, uint64_t p0, uint64_t p1, gk_error *err) {
    uint64_t e0 = piece_start(&r->g, p0), e1 = piece_start(&r->g, p1 - 1) + piece_len(&r->g, p1 - 1);
    for (int k = 0; k < 2; k++) {
        side *s = &r->sd[k];
        uint64_t off = elem_bytes(s->type, e0), len = elem_bytes(s->type, e1) - off;
        gk_status st = gk_file_tensor_read(s->f, s->ti, off, s->raw, (size_t)len, err);
        if (st != GK_OK) {
            char msg[GK_MESSAGE_MAX];
            snprintf(msg, sizeof msg, "%s", err->message);
            gk_error_set(err, st, err->offset, "tensor %s: %s", gk_tensor_at(gk_file_model(s->f), s->ti)->name.ptr,
                         msg);
            gk_error_about(err, gk_file_path(s->f));
            return st;
        }
        *r->done += len;
    }
    if (r->opts->progress && !r->opts->progress(r->opts->progress_ctx, *r->done, r->total))
        return gk_error_set(err, GK_E_INTERRUPTED, -1, "interrupted");
    return GK_OK;
}

/* Byte comparison of the whole tensor (one type on both sides). */
static gk_status same_bytes(run *r, bool *same, gk_error *err) {
    *same = true;
    bool swap = r->sd[0].swap != r->sd[1].swap;
    const gk_type_info *t = r->sd[0].type;
    for (uint64_t p0 = 0; p0 < r->g.n_pieces && *same; p0 += r->pieces_per_chunk) {
        uint64_t p1 = p0 + r->pieces_per_chunk < r->g.n_pieces ? p0 + r->pieces_per_chunk : r->g.n_pieces;
        gk_status s = read_chunk(r, p0, p1, err);
        if (s != GK_OK) return s;
        uint64_t e0 = piece_start(&r->g, p0), e1 = piece_start(&r->g, p1 - 1) + piece_len(&r->g, p1 - 1);
        uint64_t len = elem_bytes(t, e1) - elem_bytes(t, e0);
        if (swap) t->byteswap(r->sd[1].raw, (int64_t)(len / t->block_bytes));
        *same = memcmp(r->sd[0].raw, r->sd[1].raw, (size_t)len) == 0;
    }
    return GK_OK;
}

/* Dequantizes and compares every chunk, adding the piece sums in order. */
static gk_status compare_values(run *r, piece_sum *sums, gk_tensor_diff *d, gk_error *err) {
    piece_sum tot = { 0 };
    d->first_diff_row = -1;
    for (uint64_t p0 = 0; p0 < r->g.n_pieces; p0 += r->pieces_per_chunk) {
        uint64_t p1 = p0 + r->pieces_per_chunk < r->g.n_pieces ? p0 + r->pieces_per_chunk : r->g.n_pieces;
        gk_status s = read_chunk(r, p0, p1, err);
        if (s != GK_OK) return s;
        uint64_t np = p1 - p0;
        int nt = (uint64_t)r->threads > np ? (int)np : r->threads;
        job jobs[MAX_THREADS];
        pthread_t tids[MAX_THREADS];
        bool started[MAX_THREADS] = { false };
        uint64_t per = np / (uint64_t)nt, extra = np % (uint64_t)nt, at = p0;
        for (int k = 0; k < nt; k++) {
            uint64_t n = per + ((uint64_t)k < extra ? 1 : 0);
            jobs[k] = (job){ &r->g, &r->sd[0], &r->sd[1], piece_start(&r->g, p0), at, at + n, sums + (at - p0) };
            at += n;
            if (k > 0) started[k] = pthread_create(&tids[k], NULL, compare_pieces, &jobs[k]) == 0;
            if (k > 0 && !started[k]) compare_pieces(&jobs[k]);
        }
        compare_pieces(&jobs[0]);
        for (int k = 1; k < nt; k++)
            if (started[k]) pthread_join(tids[k], NULL);
        for (uint64_t p = 0; p < np; p++) {
            const piece_sum *q = &sums[p];
            tot.sq_err += q->sq_err;
            tot.sq_ref += q->sq_ref;
            tot.sq_oth += q->sq_oth;
            tot.dot += q->dot;
            if (q->max_abs > tot.max_abs) tot.max_abs = q->max_abs;
            if (q->n_diff && d->first_diff_row < 0) d->first_diff_row = (int64_t)((p0 + p) / r->g.ppr);
            tot.n_diff += q->n_diff;
            tot.nonfinite_ref += q->nonfinite_ref;
            tot.nonfinite_oth += q->nonfinite_oth;
            tot.nonfinite_diff += q->nonfinite_diff;
        }
    }
    double n = (double)d->n;
    d->n_diff = tot.n_diff;
    d->kind = tot.n_diff ? GK_TDIFF_DIFFERENT : GK_TDIFF_SAME_VALUES;
    d->rmse = n > 0 ? sqrt(tot.sq_err / n) : 0;
    d->max_abs_err = tot.max_abs;
    d->ref_rms = n > 0 ? sqrt(tot.sq_ref / n) : 0;
    d->rel_rmse = d->ref_rms > 0 ? d->rmse / d->ref_rms : (d->rmse > 0 ? INFINITY : 0);
    if (tot.sq_ref == 0 && tot.sq_oth == 0) d->cosine = 1;
    else if (tot.sq_ref == 0 || tot.sq_oth == 0) d->cosine = 0;
    else d->cosine = tot.dot / sqrt(tot.sq_ref * tot.sq_oth);
    d->n_nonfinite_ref = tot.nonfinite_ref;
    d->n_nonfinite_other = tot.nonfinite_oth;
    d->n_nonfinite_diff = tot.nonfinite_diff;
    if (tot.nonfinite_diff) {
        /* A NaN or an infinity on one side only (or infinities of opposite
         * signs): the error there is not a number, so the tensor is as bad as
         * it gets, whatever the order of the sides or where the value sits. */
        d->rmse = d->max_abs_err = d->rel_rmse = INFINITY;
        d->cosine = NAN;
    }
    return GK_OK;
}

static gk_status check_type(const gk_tensor *t, const side *s, gk_error *err) {
    if (s->type == NULL || s->type->dequantize == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot read %s values as F32", t->name.ptr,
                            s->type ? s->type->name : "unknown-type");
    if (s->swap && s->type->byteswap == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: byte order conversion of %s is not available",
                            t->name.ptr, s->type->name);
    return GK_OK;
}

gk_status diff_tensor_numbers(gk_diff_input *ref, size_t ri, gk_diff_input *other, size_t oi,
                              const gk_diff_opts *opts, int threads, uint64_t *done,
                              uint64_t total, gk_tensor_diff *d, gk_error *err) {
    const uint16_t probe = 1;
    bool host_big = *(const uint8_t *)&probe != 1;
    run r = { .in = { ref, other }, .opts = opts, .threads = threads, .done = done, .total = total };
    const gk_tensor *ts[2] = { d->ref, d->other };
    for (int k = 0; k < 2; k++) {
        const gk_step *st = &r.in[k]->steps[k == 0 ? ri : oi];
        r.sd[k] = (side){ st->src, st->src_tensor, gk_type_get(ts[k]->type),
                          gk_model_big_endian(r.in[k]->model) != host_big, NULL, NULL };
    }
    const gk_tensor *t = d->ref;
    d->n = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    d->first_diff_row = -1;
    d->cosine = 1;
    r.g.ne0 = t->ne[0];
    if (d->n == 0) {
        d->kind = GK_TDIFF_IDENTICAL;
        return GK_OK;
    }
    r.g.rows = d->n / t->ne[0];
    r.g.ppr = (r.g.ne0 + PIECE_ELEMS - 1) / PIECE_ELEMS;
    r.g.n_pieces = r.g.rows * r.g.ppr;
    r.pieces_per_chunk = CHUNK_ELEMS / (r.g.ne0 < PIECE_ELEMS ? r.g.ne0 : PIECE_ELEMS);
    if (r.pieces_per_chunk > r.g.n_pieces) r.pieces_per_chunk = r.g.n_pieces;
    uint64_t chunk_elems = r.pieces_per_chunk * (r.g.ne0 < PIECE_ELEMS ? r.g.ne0 : PIECE_ELEMS);
    bool one_type = d->ref->type == d->other->type;
    gk_status s = GK_OK;
    piece_sum *sums = NULL;
    for (int k = 0; k < 2 && s == GK_OK; k++) {
        if (r.sd[k].type == NULL)
            s = gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: unknown type %u", t->name.ptr, ts[k]->type);
        else if (r.sd[k].swap && r.sd[k].type->byteswap == NULL)
            s = check_type(t, &r.sd[k], err);
        else if ((r.sd[k].raw = malloc((size_t)elem_bytes(r.sd[k].type, chunk_elems))) == NULL)
            s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    bool same = false;
    if (s == GK_OK && one_type) s = same_bytes(&r, &same, err);
    if (s == GK_OK && same) {
        d->kind = GK_TDIFF_IDENTICAL;
    } else if (s == GK_OK) {
        for (int k = 0; k < 2 && s == GK_OK; k++) s = check_type(t, &r.sd[k], err);
        for (int k = 0; k < 2 && s == GK_OK; k++)
            if ((r.sd[k].f32 = malloc((size_t)chunk_elems * sizeof(float))) == NULL)
                s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        if (s == GK_OK && (sums = malloc((size_t)r.pieces_per_chunk * sizeof *sums)) == NULL)
            s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        if (s == GK_OK) s = compare_values(&r, sums, d, err);
    }
    free(sums);
    for (int k = 0; k < 2; k++) {
        free(r.sd[k].raw);
        free(r.sd[k].f32);
    }
    return s;
}
