/*
 * scan.c - the chunked tensor reader of scan.h: the calling thread reads
 * chunks into a ring of SLOTS buffers; each consumer thread takes the chunks
 * in sequence; a slot is refilled once every consumer is done with it. Where
 * the file already holds a chunk's bytes in memory of its own (a remote
 * file's read-ahead), the slot borrows them instead of copying.
 *
 * Why one reader and a ring rather than hashing from an mmap of the file, or a
 * reader per consumer (measured on the 2.2 GB tinyllama F16, 2 cores, issue 19):
 * two xxh64 passes from a whole-file mapping took 0.81-0.93 s of CPU against
 * 0.48-0.51 s with 256 KiB preads (page faults, and a 2.1 GB RSS), and each
 * consumer reading the file itself copied it once per consumer for no gain in
 * wall time; nor did 256 or 512 KiB chunks, more slots, or running consumer 0
 * in the reading thread. The floor of `hash` is its whole-model digest: one
 * sequential xxh64 pass over all the data, which no split can share out.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format/file.h"
#include "pipeline/scan.h"

#define SLOTS 8
#define DEFAULT_CHUNK (1u << 20)
#define MAX_CONSUMERS 16

typedef struct slot {
    uint8_t *buf;
    const void *lease;         /* the chunk's bytes are lent by lease_file (not in buf), or NULL */
    gk_file *lease_file;
    gk_scan_chunk chunk;
    uint64_t seq;              /* sequence number of the chunk it holds */
    size_t pending;            /* consumers that have not finished it yet */
} slot;

typedef struct scan {
    pthread_mutex_t lock;
    pthread_cond_t filled, freed;
    slot slots[SLOTS];
    uint64_t produced;         /* chunks made available so far */
    bool ended;                /* the reader made its last chunk */
    bool failed;               /* someone failed: everyone stops */
    gk_error err;              /* the first failure */
    const gk_scan_fn *fns;
    void *const *ctxs;
} scan;

typedef struct consumer {
    scan *s;
    size_t k;
} consumer;

static void fail(scan *s, const gk_error *err) {
    pthread_mutex_lock(&s->lock);
    if (!s->failed) {
        s->failed = true;
        s->err = *err;
    }
    pthread_cond_broadcast(&s->filled);
    pthread_cond_broadcast(&s->freed);
    pthread_mutex_unlock(&s->lock);
}

static void *consumer_main(void *arg) {
    consumer *c = arg;
    scan *s = c->s;
    for (uint64_t next = 0;; next++) {
        pthread_mutex_lock(&s->lock);
        while (!s->failed && s->produced <= next && !s->ended) pthread_cond_wait(&s->filled, &s->lock);
        bool stop = s->failed || s->produced <= next;
        pthread_mutex_unlock(&s->lock);
        if (stop) return NULL;
        slot *sl = &s->slots[next % SLOTS];
        gk_error err;
        gk_error_clear(&err);
        if (s->fns[c->k](s->ctxs[c->k], &sl->chunk, &err) != GK_OK) {
            fail(s, &err);
            return NULL;
        }
        pthread_mutex_lock(&s->lock);
        if (--sl->pending == 0) pthread_cond_broadcast(&s->freed);
        pthread_mutex_unlock(&s->lock);
    }
}

/* Returns the loan a slot's last chunk was made of, if any (its consumers are done). */
static void give_back(slot *sl) {
    if (sl->lease) gk_file_release(sl->lease_file, sl->lease);
    sl->lease = NULL;
    sl->lease_file = NULL;
}

/* Waits for the slot of chunk seq to be free. @return : false when the scan failed. */
static bool take_slot(scan *s, uint64_t seq) {
    slot *sl = &s->slots[seq % SLOTS];
    pthread_mutex_lock(&s->lock);
    while (!s->failed && sl->pending > 0) pthread_cond_wait(&s->freed, &s->lock);
    bool ok = !s->failed;
    pthread_mutex_unlock(&s->lock);
    if (ok) give_back(sl);
    return ok;
}

/* Where the next chunk of item i comes from: bytes [at, at + *n) of its
 * tensor, lent by the file where it holds them already (a remote file's
 * read-ahead: no copy), else read into sl->buf. A loan may be shorter, a
 * whole number of blocks; where fewer than a block are at hand, one block is
 * read (it straddles two of the file's buffers). @return : the bytes, or
 * NULL on a read error (in *err). */
static const uint8_t *fill_slot(slot *sl, gk_file *f, size_t tensor, uint64_t at, size_t *n, size_t block,
                                bool may_borrow, gk_error *err) {
    const uint8_t *p;
    size_t avail;
    const void *lease;
    if (may_borrow && gk_file_tensor_borrow(f, tensor, at, *n, &p, &avail, &lease)) {
        if (avail >= block) {
            if (avail < *n) *n = avail / block * block;
            sl->lease = lease;
            sl->lease_file = f;
            return p;
        }
        gk_file_release(f, lease);
        *n = block;
    }
    return gk_file_tensor_read(f, tensor, at, sl->buf, *n, err) == GK_OK ? sl->buf : NULL;
}

static void publish(scan *s, uint64_t seq, size_t n_fns) {
    pthread_mutex_lock(&s->lock);
    s->slots[seq % SLOTS].seq = seq;
    s->slots[seq % SLOTS].pending = n_fns;
    s->produced = seq + 1;
    pthread_cond_broadcast(&s->filled);
    pthread_mutex_unlock(&s->lock);
}

/* Reads every chunk in turn (the calling thread's part). */
static void produce(scan *s, const gk_scan_item *items, size_t n_items, size_t n_fns,
                    const gk_scan_opts *o, size_t chunk_bytes) {
    uint64_t total = 0, done = 0, seq = 0;
    gk_error err;
    gk_error_clear(&err);
    for (size_t i = 0; i < n_items; i++) {
        const gk_tensor *t = gk_tensor_at(gk_file_model(items[i].f), items[i].tensor);
        total += t ? t->nbytes : 0;
        if (items[i].f->fd >= 0 && (i == 0 || items[i - 1].f != items[i].f))
            posix_fadvise(items[i].f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    for (size_t i = 0; i < n_items; i++) {
        gk_file *f = items[i].f;
        const gk_tensor *t = gk_tensor_at(gk_file_model(f), items[i].tensor);
        if (t == NULL) {
            gk_error_set(&err, GK_E_ARG, -1, "tensor index %zu out of range", items[i].tensor);
            fail(s, &err);
            return;
        }
        const gk_type_info *ti = gk_type_get(t->type);
        size_t block = ti ? ti->block_bytes : 1;
        bool swap = o->to_little && gk_model_big_endian(gk_file_model(f)) && block > 1;
        if (swap && ti->byteswap == NULL) {
            gk_error_set(&err, GK_E_UNSUPPORTED, t->file_offset, "%s: no byte-swap kernel for %s",
                         t->name.ptr, ti->name);
            fail(s, &err);
            return;
        }
        size_t per = chunk_bytes / block * block;
        uint64_t at = 0;
        do {
            size_t n = (size_t)(t->nbytes - at < per ? t->nbytes - at : per);
            if (!take_slot(s, seq)) return;
            slot *sl = &s->slots[seq % SLOTS];
            const uint8_t *data = sl->buf;
            if (n > 0 && (data = fill_slot(sl, f, items[i].tensor, at, &n, block, !swap, &err)) == NULL) {
                fail(s, &err);
                return;
            }
            if (swap && n > 0) ti->byteswap(sl->buf, (int64_t)(n / block));
            sl->chunk = (gk_scan_chunk){ .item = i, .start = at, .data = data, .len = n,
                                         .first = at == 0, .last = at + n == t->nbytes,
                                         .file_offset = f->data_offset + t->offset + at };
            publish(s, seq++, n_fns);
            at += n;
            done += n;
            if (o->progress && !o->progress(o->progress_ctx, done, total)) {
                gk_error_set(&err, GK_E_INTERRUPTED, -1, "interrupted");
                fail(s, &err);
                return;
            }
        } while (at < t->nbytes);
    }
    pthread_mutex_lock(&s->lock);
    s->ended = true;
    pthread_cond_broadcast(&s->filled);
    pthread_mutex_unlock(&s->lock);
}

gk_status gk_scan_run(const gk_scan_item *items, size_t n_items, const gk_scan_fn *fns,
                      void *const *ctxs, size_t n_fns, const gk_scan_opts *opts, gk_error *err) {
    static const gk_scan_opts defaults = { 0 };
    const gk_scan_opts *o = opts ? opts : &defaults;
    if (n_fns == 0 || n_fns > MAX_CONSUMERS)
        return gk_error_set(err, GK_E_ARG, -1, "scan: %zu consumers (1 to %d)", n_fns, MAX_CONSUMERS);
    size_t chunk_bytes = o->chunk_bytes ? o->chunk_bytes : DEFAULT_CHUNK;
    uint64_t largest = 0;   /* small models need no large buffers (each first touch costs) */
    for (size_t i = 0; i < n_items; i++) {
        const gk_tensor *t = gk_tensor_at(gk_file_model(items[i].f), items[i].tensor);
        if (t && t->nbytes > largest) largest = t->nbytes;
    }
    if (largest < chunk_bytes) chunk_bytes = (size_t)largest;
    if (chunk_bytes < 4096) chunk_bytes = 4096;   /* holds at least one block of any type */
    scan s = { .fns = fns, .ctxs = ctxs };
    gk_error_clear(&s.err);
    for (int i = 0; i < SLOTS; i++) {
        s.slots[i].buf = malloc(chunk_bytes);
        if (s.slots[i].buf == NULL) {
            for (int j = 0; j < i; j++) free(s.slots[j].buf);
            return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
    }
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.filled, NULL);
    pthread_cond_init(&s.freed, NULL);
    pthread_t threads[MAX_CONSUMERS];
    consumer cons[MAX_CONSUMERS];
    size_t started = 0;
    for (; started < n_fns; started++) {
        cons[started] = (consumer){ &s, started };
        if (pthread_create(&threads[started], NULL, consumer_main, &cons[started]) != 0) break;
    }
    if (started < n_fns) {
        gk_error e;
        gk_error_set(&e, GK_E_NOMEM, -1, "cannot start a thread");
        fail(&s, &e);
    } else {
        produce(&s, items, n_items, n_fns, o, chunk_bytes);
    }
    for (size_t k = 0; k < started; k++) pthread_join(threads[k], NULL);
    for (int i = 0; i < SLOTS; i++) give_back(&s.slots[i]);
    pthread_mutex_destroy(&s.lock);
    pthread_cond_destroy(&s.filled);
    pthread_cond_destroy(&s.freed);
    for (int i = 0; i < SLOTS; i++) free(s.slots[i].buf);
    if (s.failed) {
        if (err) *err = s.err;
        return s.err.code;
    }
    return GK_OK;
}
