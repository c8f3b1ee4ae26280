/*
 * pipeline.c - executes a write plan: the output model's header, then every
 * output tensor's bytes taken from an opened input, copied, byte-swapped or
 * converted through F32, in bounded row chunks, published atomically.
 *
 * Tensors that pass unchanged go straight from the input into the sink's write
 * buffers (gk_sink_copy_from), byte swaps likewise (gk_sink_copy_swapped).
 * Conversions read a chunk of whole rows and cut it into pieces of rows, which
 * the threads of a pool kept for the whole write take one at a time (each
 * dequantizes its rows to F32, unless they are F32 already, and quantizes them
 * to the output type); the result is appended. The bytes do not depend on the
 * thread count or on who took which piece, because every row is converted alone. While the helpers
 * start on a chunk, the calling thread appends the previous chunk's output and
 * reads the next chunk (two sets of buffers), then takes the pieces still
 * left; the sink's writer thread takes the bytes to the disk meanwhile.
 *
 * Unchanged tensors clone where the output's filesystem can share the input's
 * blocks (the sink probes it): with GK_CLONE_PAD the header is first padded so
 * the data section keeps its input's position modulo the block size (layout.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/file.h"
#include "io/sink_set.h"
#include "meta/model.h"
#include "pipeline/pipeline.h"
#include "pipeline/readahead.h"
#include "pipeline/workers.h"
#include "util/opts.h"

#define CHUNK_F32_BYTES (2u << 20)   /* F32 working set of one chunk (of two in flight), all threads */
#define SWAP_CHUNK_BYTES (4u << 20)
#define MAX_THREADS 64

int gk_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > MAX_THREADS ? MAX_THREADS : (int)n);
}

typedef struct progress {
    const gk_write_opts *opts;
    uint64_t done, total;
    const gk_sink *sink;
    gk_write_stats base;      /* *opts->stats as this write found it */
} progress;

/* Brings opts->stats up to date with the sink. */
static void count(progress *p) {
    if (p->opts->stats == NULL || p->sink == NULL) return;
    uint64_t cloned = gk_sink_bytes_cloned(p->sink);
    p->opts->stats->cloned = p->base.cloned + cloned;
    p->opts->stats->copied = p->base.copied + gk_sink_offset(p->sink) - cloned;
}

static gk_status advance(progress *p, uint64_t bytes, gk_error *err) {
    p->done += bytes;
    count(p);
    if (p->opts->progress && !p->opts->progress(p->opts->progress_ctx, p->done, p->total))
        return gk_error_set(err, GK_E_INTERRUPTED, -1, "interrupted");
    return GK_OK;
}

/* A failed copy from src's descriptor: the input ending early (it shrank, or
 * the sink's reads found less than its size) is about src, not the output. */
static gk_status from_input(gk_status s, const gk_file *src, gk_error *err) {
    if (s == GK_E_TRUNCATED && err->file[0] == '\0') gk_error_about(err, gk_file_path(src));
    return s;
}

/* Reads len bytes of a tensor's data (a failure names src: gk_file_read). */
static gk_status read_tensor_bytes(gk_file *src, size_t ti, uint64_t start, void *buf, size_t len,
                                   gk_error *err) {
    return gk_file_tensor_read(src, ti, start, buf, len, err);
}

/* ------------------------------------------------------------------------ */
/* Copy and byte swap                                                       */
/* ------------------------------------------------------------------------ */

static gk_status copy_tensor(gk_sink *sink, const gk_step *st, progress *pr, gk_error *err) {
    const gk_tensor *t = gk_tensor_at(st->src->model, st->src_tensor);
    uint64_t off = st->src->data_offset + t->offset;
    if (st->src->fd >= 0) {
        /* In slices, so progress moves and an interrupt is noticed. */
        uint64_t left = t->nbytes;
        while (left > 0) {
            uint64_t n = left > (64u << 20) ? (64u << 20) : left;
            gk_status s = gk_sink_copy_from(sink, st->src->fd, off, n, err);
            if (s != GK_OK) return from_input(s, st->src, err);
            off += n;
            left -= n;
            if ((s = advance(pr, n, err)) != GK_OK) return s;
        }
        return GK_OK;
    }
    if (st->src->mem)
        return gk_sink_write(sink, st->src->mem + off, (size_t)t->nbytes, err) == GK_OK
                   ? advance(pr, t->nbytes, err)
                   : err->code;
    /* A stream (compressed file, archive member): bounded chunks in order. */
    uint8_t *buf = malloc(SWAP_CHUNK_BYTES);
    if (buf == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = GK_OK;
    for (uint64_t at = 0; at < t->nbytes && s == GK_OK; at += SWAP_CHUNK_BYTES) {
        size_t n = (size_t)(t->nbytes - at < SWAP_CHUNK_BYTES ? t->nbytes - at : SWAP_CHUNK_BYTES);
        s = read_tensor_bytes(st->src, st->src_tensor, at, buf, n, err);
        if (s == GK_OK) s = gk_sink_write(sink, buf, n, err);
        if (s == GK_OK) s = advance(pr, n, err);
    }
    free(buf);
    return s;
}

static gk_status swap_tensor(gk_sink *sink, const gk_step *st, progress *pr, gk_error *err) {
    const gk_tensor *t = gk_tensor_at(st->src->model, st->src_tensor);
    const gk_type_info *ti = gk_type_get(t->type);
    if (ti->byteswap == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: byte order conversion of %s is not available",
                            t->name.ptr, ti->name);
    if (st->src->fd >= 0) {
        /* Read into the output's own buffers and swapped there, in slices so
         * that progress moves and an interrupt is noticed. */
        uint64_t off = st->src->data_offset + t->offset, left = t->nbytes;
        uint64_t slice = (64u << 20) / ti->block_bytes * ti->block_bytes;
        while (left > 0) {
            uint64_t n = left > slice ? slice : left;
            gk_status s = gk_sink_copy_swapped(sink, st->src->fd, off, n, ti->block_bytes, ti->byteswap, err);
            if (s != GK_OK) return from_input(s, st->src, err);
            if ((s = advance(pr, n, err)) != GK_OK) return s;
            off += n;
            left -= n;
        }
        return GK_OK;
    }
    uint64_t per = SWAP_CHUNK_BYTES / ti->block_bytes * ti->block_bytes;
    if (per == 0) per = ti->block_bytes;
    uint8_t *buf = malloc((size_t)per);
    if (buf == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = GK_OK;
    for (uint64_t at = 0; at < t->nbytes && s == GK_OK;) {
        size_t n = (size_t)(t->nbytes - at < per ? t->nbytes - at : per);
        s = read_tensor_bytes(st->src, st->src_tensor, at, buf, n, err);
        if (s != GK_OK) break;
        ti->byteswap(buf, (int64_t)(n / ti->block_bytes));
        s = gk_sink_write(sink, buf, n, err);
        if (s == GK_OK) s = advance(pr, n, err);
        at += n;
    }
    free(buf);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Conversion through F32                                                   */
/* ------------------------------------------------------------------------ */

/* One chunk of rows on its way through a conversion. */
typedef struct chunk {
    uint8_t *src;             /* rows in the source format */
    float *f32;               /* scratch */
    uint8_t *dst;             /* rows in the output format */
    int64_t row, rows;        /* first row and count */
    const float *imatrix;     /* weights for these rows, or NULL */
} chunk;

/* What a write keeps from one conversion to the next: the two sets of F32 and
 * output buffers, the reader and the helper pool (giving buffers back and
 * faulting fresh pages in for every tensor cost more than the conversion of the
 * fast types: page faults are dear under a hypervisor). */
typedef struct scratch {
    chunk bufs[2];            /* their f32 and dst; src is the reader's */
    size_t f32_cap, dst_cap;
    int threads;              /* of the write */
    gk_workers *pool;         /* threads - 1 helpers, from the first conversion on */
    gk_readahead *reader;     /* likewise */
} scratch;

static void free_bufs(scratch *sc) {
    for (int k = 0; k < 2; k++) {
        free(sc->bufs[k].f32);
        free(sc->bufs[k].dst);
    }
    memset(sc->bufs, 0, sizeof sc->bufs);
    sc->f32_cap = sc->dst_cap = 0;
}

static void scratch_free(scratch *sc) {
    free_bufs(sc);
    gk_workers_stop(sc->pool);
    sc->pool = NULL;
    gk_readahead_free(sc->reader);
    sc->reader = NULL;
}

/* Room for chunks of f32 and dst bytes in both sets; the pool and the reader. */
static gk_status scratch_reserve(scratch *sc, size_t f32, size_t dst, gk_error *err) {
    if (f32 > sc->f32_cap || dst > sc->dst_cap) {
        if (f32 < sc->f32_cap) f32 = sc->f32_cap;
        if (dst < sc->dst_cap) dst = sc->dst_cap;
        free_bufs(sc);
        for (int k = 0; k < 2; k++) {
            sc->bufs[k].f32 = malloc(f32);
            sc->bufs[k].dst = malloc(dst);
            if (sc->bufs[k].f32 == NULL || sc->bufs[k].dst == NULL) {
                free_bufs(sc);
                return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            }
        }
        sc->f32_cap = f32;
        sc->dst_cap = dst;
    }
    gk_status s = sc->pool ? GK_OK : gk_workers_start(sc->threads - 1, &sc->pool, err);
    if (s == GK_OK && sc->reader == NULL) s = gk_readahead_create(&sc->reader, err);
    return s;
}

/* One chunk's conversion, cut into pieces of whole rows for the pool. */
typedef struct chunk_work {
    const gk_type_info *from, *to;
    bool swap_in, swap_out;
    const chunk *c;
    int64_t n_per_row, piece_rows;
    uint64_t src_row, dst_row;
} chunk_work;

/* Dequantizes piece's rows of the chunk to F32 and quantizes them to the
 * output type (each row alone: the bytes do not depend on the cut); F16 rows
 * without weights go straight to a type that quantizes F16 itself, F32 rows
 * are quantized from the chunk. */
static void convert_piece(void *arg, int64_t piece) {
    const chunk_work *w = arg;
    const int64_t first = piece * w->piece_rows;
    const int64_t rows = w->c->rows - first < w->piece_rows ? w->c->rows - first : w->piece_rows;
    if (rows <= 0) return;
    const int64_t n = rows * w->n_per_row;
    uint8_t *src = w->c->src + (uint64_t)first * w->src_row;
    float *f32 = w->c->f32 + first * w->n_per_row;
    uint8_t *dst = w->c->dst + (uint64_t)first * w->dst_row;
    if (w->swap_in) w->from->byteswap(src, n / w->from->block_elems);
    if (w->from->id == GK_TYPE_F16 && w->to->quantize_from_f16 != NULL && w->c->imatrix == NULL) {
        w->to->quantize_from_f16((const uint16_t *)(const void *)src, dst, rows, w->n_per_row);
    } else if (w->from->id == GK_TYPE_F32) {
        /* F32 rows (in host order by now) are quantized where they lie: a copy
         * into the F32 scratch would give the same values. */
        w->to->quantize((const float *)(const void *)src, dst, rows, w->n_per_row, w->c->imatrix);
    } else {
        w->from->dequantize(src, f32, n);
        w->to->quantize(f32, dst, rows, w->n_per_row, w->c->imatrix);
    }
    if (w->swap_out) w->to->byteswap(dst, n / w->to->block_elems);
}

/* How a tensor's rows are cut into chunks, and the next one to read. */
typedef struct chunk_plan {
    const gk_step *st;
    const gk_tensor *t;
    int64_t nrows, chunk_rows, slice_rows, n_per_row;
    uint64_t src_row;
    int64_t next_row;         /* the reader's */
} chunk_plan;

/* Where a chunk read ahead belongs (its readahead description). */
typedef struct chunk_place {
    int64_t row, rows;
    const float *imatrix;
} chunk_place;

/* The reader's function: the next chunk of the plan into buf (as many rows as
 * fit, inside one importance-matrix slice). */
static gk_status read_chunk(void *ctx, uint8_t *buf, void *meta, bool *done, gk_error *err) {
    chunk_plan *p = ctx;
    const int64_t row = p->next_row;
    if (row >= p->nrows) {
        *done = true;
        return GK_OK;
    }
    int64_t rows = p->nrows - row < p->chunk_rows ? p->nrows - row : p->chunk_rows;
    int64_t slice_left = p->slice_rows - row % p->slice_rows;
    if (rows > slice_left) rows = slice_left;
    chunk_place *at = meta;
    at->row = row;
    at->rows = rows;
    at->imatrix = p->st->imatrix
                      ? p->st->imatrix + (row / p->slice_rows) % (int64_t)p->t->ne[2] * p->n_per_row
                      : NULL;
    p->next_row = row + rows;
    return read_tensor_bytes(p->st->src, p->st->src_tensor, (uint64_t)row * p->src_row, buf,
                             (size_t)(p->src_row * (uint64_t)rows), err);
}

/* Hands a converted chunk to the sink. */
static gk_status emit_chunk(gk_sink *sink, const chunk *c, uint64_t dst_row, uint64_t src_row,
                            progress *pr, gk_error *err) {
    gk_status s = gk_sink_write(sink, c->dst, (size_t)(dst_row * (uint64_t)c->rows), err);
    if (s == GK_OK) s = advance(pr, src_row * (uint64_t)c->rows, err);
    return s;
}

static gk_status convert_tensor(gk_sink *sink, const gk_step *st, const gk_tensor *out_t,
                                bool out_big, scratch *sc, progress *pr, gk_error *err) {
    const int threads = sc->threads;
    const gk_tensor *t = gk_tensor_at(st->src->model, st->src_tensor);
    const gk_type_info *from = gk_type_get(t->type), *to = gk_type_get(out_t->type);
    bool swap_in = st->src->model->big_endian != false;
    bool swap_out = out_big;
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1) { swap_in = !swap_in; swap_out = !swap_out; }
    if (from->dequantize == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot read %s values", t->name.ptr, from->name);
    if (to->quantize == NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: cannot quantize to %s", t->name.ptr, to->name);
    if ((swap_in && from->byteswap == NULL) || (swap_out && to->byteswap == NULL))
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: byte order conversion not available", t->name.ptr);
    int64_t n_per_row = (int64_t)t->ne[0];
    if (n_per_row == 0 || t->nbytes == 0) return GK_OK;
    if (n_per_row % to->block_elems != 0)
        return gk_error_set(err, GK_E_ROW_BLOCK, -1, "%s: row of %lld is not a whole number of %s blocks",
                            t->name.ptr, (long long)n_per_row, to->name);
    int64_t nrows = (int64_t)(t->ne[1] * t->ne[2] * t->ne[3]);
    uint64_t src_row = gk_type_row_bytes(t->type, (uint64_t)n_per_row);
    uint64_t dst_row = gk_type_row_bytes(out_t->type, (uint64_t)n_per_row);
    int64_t chunk_rows = (int64_t)(CHUNK_F32_BYTES / ((uint64_t)n_per_row * 4));
    if (chunk_rows < threads) chunk_rows = threads;
    if (chunk_rows > nrows) chunk_rows = nrows;
    /* The reader reads chunks ahead while the threads convert; two sets of F32
     * and output buffers, so that this thread hands the previous chunk's output
     * to the sink while the helpers start on the next one, then joins in. */
    gk_status s = scratch_reserve(sc, (size_t)((uint64_t)n_per_row * 4 * (uint64_t)chunk_rows),
                                  (size_t)(dst_row * (uint64_t)chunk_rows), err);
    /* With an importance matrix, a 3-D tensor (experts) has one set of weights per
     * ne[2] slice: a chunk then stays inside one slice. */
    chunk_plan plan = { st, t, nrows, chunk_rows,
                        st->imatrix && t->ne[2] > 1 ? (int64_t)t->ne[1] : nrows, n_per_row, src_row, 0 };
    if (s == GK_OK)
        s = gk_readahead_begin(sc->reader, read_chunk, &plan, (size_t)(src_row * (uint64_t)chunk_rows), err);
    if (s != GK_OK) return s;
    /* Pieces for the pool: several per thread, so that the calling thread,
     * which also hands chunks to the sink, takes fewer. */
    const int64_t pieces_wanted = threads > 1 ? (int64_t)threads * 8 : 1;
    chunk *prev = NULL;
    for (int k = 0; s == GK_OK; k ^= 1) {
        uint8_t *src;
        void *meta;
        if ((s = gk_readahead_next(sc->reader, &src, &meta, err)) != GK_OK || src == NULL) break;
        chunk *cur = &sc->bufs[k];
        const chunk_place *at = meta;
        cur->src = src;
        cur->row = at->row;
        cur->rows = at->rows;
        cur->imatrix = at->imatrix;
        const int64_t piece_rows = (cur->rows + pieces_wanted - 1) / pieces_wanted;
        chunk_work work = { from, to, swap_in, swap_out, cur, n_per_row, piece_rows, src_row, dst_row };
        gk_workers_post(sc->pool, convert_piece, &work, (cur->rows + piece_rows - 1) / piece_rows);
        if (prev != NULL) s = emit_chunk(sink, prev, dst_row, src_row, pr, err);
        gk_workers_join(sc->pool);
        gk_readahead_release(sc->reader);
        prev = cur;
    }
    if (s == GK_OK && prev != NULL) s = emit_chunk(sink, prev, dst_row, src_row, pr, err);
    gk_readahead_end(sc->reader);
    return s;
}

/* ------------------------------------------------------------------------ */
/* The whole file                                                           */
/* ------------------------------------------------------------------------ */

/* True when output tensor i is input tensor st's bytes unchanged (same type and
 * byte order): copy_tensor's case. */
static bool is_copy(const gk_model *out, const gk_step *st, size_t i) {
    const gk_tensor *it = gk_tensor_at(st->src->model, st->src_tensor);
    return it != NULL && it->type == out->tensors[i].type && st->src->model->big_endian == out->big_endian;
}

/* A failure while a clone run of src was pending: an input that ended early is src. */
static gk_status from_run(gk_status s, const gk_file *src, gk_error *err) {
    return src ? from_input(s, src, err) : s;
}

static gk_status write_tensor(gk_sink *sink, gk_model *out, size_t i, const gk_step *st,
                              scratch *sc, progress *pr, gk_error *err) {
    const gk_tensor *ot = &out->tensors[i];
    const gk_tensor *it = gk_tensor_at(st->src->model, st->src_tensor);
    if (it == NULL)
        return gk_error_set(err, GK_E_ARG, -1, "%s: source tensor %zu does not exist", ot->name.ptr,
                            st->src_tensor);
    if (it->ne[0] != ot->ne[0] || it->ne[1] != ot->ne[1] || it->ne[2] != ot->ne[2] || it->ne[3] != ot->ne[3])
        return gk_error_set(err, GK_E_ARG, -1, "%s: source tensor '%s' has other dimensions",
                            ot->name.ptr, it->name.ptr);
    if (is_copy(out, st, i)) return copy_tensor(sink, st, pr, err);
    if (it->type == ot->type) return swap_tensor(sink, st, pr, err);
    return convert_tensor(sink, st, ot, out->big_endian, sc, pr, err);
}

/* Lets the sink clone from the input most unchanged bytes come from, when its
 * filesystem can; with GK_CLONE_PAD, pads out's header so those bytes are
 * congruent (and serializes it again into *header). */
static gk_status prepare_clone(gk_sink *sink, gk_model *out, const gk_step *steps, const gk_write_opts *opts,
                               uint8_t **header, size_t *header_len, gk_error *err) {
    gk_clone_layout best;
    gk_status s = gk_layout_clone_residue(out, steps, 4096, &best, err);
    if (s != GK_OK || best.src == NULL) return s;
    /* Without padding, only a layout that makes them congruent already clones
     * (a stage that may clone writes through the page cache: not for nothing). */
    if (opts->clone != GK_CLONE_PAD && gk_model_data_start(out) % 4096 != best.residue) return GK_OK;
    uint64_t block = gk_sink_clone_probe(sink, best.src->fd);
    if (block == 0 || opts->clone != GK_CLONE_PAD) return GK_OK;
    if (block != 4096 && (s = gk_layout_clone_residue(out, steps, block, &best, err)) != GK_OK) return s;
    if (best.bytes == 0 || gk_model_data_start(out) % block == best.residue) return GK_OK;
    bool done;
    s = gk_model_pad_to_residue(out, block, best.residue, &done, err);
    if (s != GK_OK || !done) return s;
    free(*header);
    *header = NULL;
    return gk_header_serialize(out, header, header_len, err);
}

gk_status gk_write_model_uncommitted(const char *dest, gk_model *out, const gk_step *steps,
                                     const gk_write_opts *opts, gk_sink **sink_out, gk_error *err) {
    *sink_out = NULL;
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    gk_write_opts defaults = { GK_OPTS_INIT(gk_write_opts) };
    if (opts == NULL) opts = &defaults;
    gk_status checked = GK_OPTS_CHECK(opts, gk_write_opts, err);
    if (checked != GK_OK) return checked;
    int threads = opts->threads > 0 ? opts->threads : gk_default_threads();
    if (threads > MAX_THREADS) threads = MAX_THREADS;
    for (size_t i = 0; i < out->n_tensors && !(opts->sink_flags & GK_SINK_REPLACE_HELD); i++) {
        if (i > 0 && steps[i].src == steps[i - 1].src) continue;   /* checked already */
        const char *p = gk_file_path(steps[i].src);
        if (p[0] && gk_same_file(p, dest))
            return gk_error_set(err, GK_E_SAME_FILE, -1, "%s: refusing to overwrite an input", dest);
    }
    gk_model_layout(out);
    uint8_t *header;
    size_t header_len;
    gk_status s = gk_header_serialize(out, &header, &header_len, err);
    if (s != GK_OK) return s;
    gk_sink *sink;
    unsigned flags = opts->sink_flags | (opts->clone == GK_CLONE_NEVER ? GK_SINK_NO_CLONE : 0);
    s = gk_sink_open(dest, flags, &sink, err);
    if (s != GK_OK) {
        free(header);
        return s;
    }
    if (!(flags & GK_SINK_NO_CLONE)) s = prepare_clone(sink, out, steps, opts, &header, &header_len, err);
    if (s != GK_OK) {
        free(header);
        gk_sink_abort(sink);
        return s;
    }
    /* A file without tensors ends with its header; pad it only as ggml's writer does. */
    size_t write_len = out->n_tensors == 0 && !opts->pad_end ? (size_t)gk_model_header_size(out) : header_len;
    s = gk_sink_write(sink, header, write_len, err);
    free(header);
    progress pr = { .opts = opts, .sink = sink };
    if (opts->stats) pr.base = *opts->stats;
    for (size_t i = 0; i < out->n_tensors; i++) {
        const gk_tensor *it = gk_tensor_at(steps[i].src->model, steps[i].src_tensor);
        if (it) pr.total += it->nbytes;
    }
    uint64_t align = gk_model_alignment(out);
    scratch sc = { .threads = threads };
    /* The input a deferred clone run reads from (gk_sink_settle): it is settled
     * before another input's tensor or one that is not copied, so that an input
     * that shrank is named as the input. */
    const gk_file *run_src = NULL;
    for (size_t i = 0; i < out->n_tensors && s == GK_OK; i++) {
        uint64_t want = header_len + out->tensors[i].offset;
        s = from_run(gk_sink_write_zeros(sink, want - gk_sink_offset(sink), err), run_src, err);
        if (s == GK_OK && run_src && !(steps[i].src == run_src && is_copy(out, &steps[i], i)))
            s = from_run(gk_sink_settle(sink, err), run_src, err);
        if (s == GK_OK) s = write_tensor(sink, out, i, &steps[i], &sc, &pr, err);
        run_src = steps[i].src->fd >= 0 && is_copy(out, &steps[i], i) ? steps[i].src : NULL;
    }
    scratch_free(&sc);
    /* ggml's reader takes the data section as every tensor padded to the
     * alignment, the last one too, and reads all of it: the end is always padded. */
    if (s == GK_OK && out->n_tensors > 0) {
        uint64_t end = gk_sink_offset(sink);
        s = from_run(gk_sink_write_zeros(sink, gk_align_up(end, align) - end, err), run_src, err);
    }
    if (s == GK_OK) s = from_run(gk_sink_settle(sink, err), run_src, err);   /* the stats are exact now */
    count(&pr);
    if (s == GK_OK) s = gk_sink_finish(sink, err);
    if (s != GK_OK) {
        gk_sink_abort(sink);
        return s;
    }
    *sink_out = sink;
    return GK_OK;
}

gk_status gk_write_model(const char *dest, gk_model *out, const gk_step *steps,
                         const gk_write_opts *opts, gk_error *err) {
    gk_sink *sink;
    gk_status s = gk_write_model_uncommitted(dest, out, steps, opts, &sink, err);
    return s == GK_OK ? gk_sink_commit(sink, err) : s;
}
