/*
 * stage.c - appends an output file's bytes through two aligned buffers and a
 * writer thread, with O_DIRECT where the filesystem takes it (see stage.h).
 *
 * The filling side (the caller's thread) owns the slot it fills; a full slot
 * belongs to the writer until the writer marks it empty again. Slots are
 * written in the order they were filled, each at its own file offset. With
 * O_DIRECT, every write starts at a multiple of DIO_ALIGN from an aligned
 * buffer and is a whole number of DIO_ALIGN blocks, except the file's last
 * piece, which finish writes after turning O_DIRECT off. A write that O_DIRECT
 * refuses (EINVAL), or a short one, turns it off too, and the rest is written
 * normally: O_DIRECT is a way to write faster, never a reason to fail.
 *
 * A slot is handed over when it holds `limit` bytes; the limit starts at
 * STAGE_FIRST and doubles with every hand-off up to STAGE_BYTES, so that a
 * small file is written in small pieces as it goes (and touches little
 * memory), and a large one in large writes. The writer thread starts with the
 * first full slot (smaller hand-offs are written by the caller). Every
 * FLUSH_EVERY bytes it asks a flusher thread for an fdatasync, which runs while
 * the writer writes the next slots and the caller fills them, so that the
 * commit's fsync is short and nobody waits for the flushes on the way.
 *
 * A clone (gk_stage_clone_from) writes the staged bytes first, waits for the
 * writer, and opens a run: bytes of the source still to be shared, from a
 * block-aligned output offset on. The run grows while what follows continues
 * it: the next clone from the same place of the same file, or bytes (the
 * alignment padding between tensors) that equal the source's next bytes, read
 * back to compare. Anything else, and the finish, settles the run: one
 * FICLONERANGE for its whole blocks, a copy of the partial block at its end;
 * the next slot starts after it. A model's unchanged data section is then one
 * clone, not one per tensor with copies at both ends of each. A stage allowed
 * to clone writes through the page cache: what it still writes is a few pages
 * (headers, the partial blocks around clones), and a direct write of each
 * would wait for the disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/clone.h"
#include "io/stage.h"

#define STAGE_BYTES (8u << 20)   /* one slot; a multiple of DIO_ALIGN */
#define STAGE_FIRST (256u << 10) /* the first hand-off; a multiple of DIO_ALIGN */
#define DIO_ALIGN 4096           /* alignment of direct writes: address, offset, length */
#define SLOT_ALIGN (2u << 20)    /* slots start on a huge-page boundary (a multiple of DIO_ALIGN) */
#define RUN_MATCH_MAX 4096       /* longest write compared with a run's source to extend it */
#define FLUSH_EVERY (64u << 20)  /* the writer makes its writes durable after this many bytes */

typedef struct slot {
    uint8_t *data;
    size_t len;                  /* bytes staged */
    uint64_t at;                 /* file offset of data[0] */
    bool full;                   /* handed to the writer, not yet written */
} slot;

struct gk_stage {
    int fd;
    const char *name;
    bool kernel_copy;            /* written normally: copies use copy_file_range */
    uint64_t clone_block;        /* blocks are shared in this size; 0: never */
    uint64_t cloned;             /* bytes appended by sharing blocks */
    struct {                     /* the clone run not yet made; while len > 0 the */
        int fd;                  /* current slot is empty and starts at dst */
        uint64_t src, dst, len;
    } run;
    slot slots[2];
    int cur;                     /* the slot being filled */
    size_t limit;                /* hand-off size now: STAGE_FIRST .. STAGE_BYTES */
    pthread_t thread, flusher;
    bool started, flusher_started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool quit, abandon;
    bool flush_asked, flushing;  /* an fdatasync waiting for the flusher, running */
    uint64_t flush_at;           /* offset of the slot whose write asked for it */
    int error;                   /* errno of the first failed write, or 0 */
    uint64_t error_at;
};

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* Turns O_DIRECT off on fd. @return : true if it was on. */
static bool drop_direct(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || !(fl & O_DIRECT)) return false;
    return fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0;
}

/* Writes len bytes at file offset at. @return : 0, or the errno of the
 * failure with *fail_at set to where it happened. */
static int write_all(int fd, const uint8_t *p, size_t len, uint64_t at, uint64_t *fail_at) {
    while (len > 0) {
        ssize_t n = pwrite(fd, p, len, (off_t)at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EINVAL && drop_direct(fd)) continue;   /* refused: write normally */
        if (n <= 0) {
            *fail_at = at;
            return n < 0 ? errno : EIO;
        }
        p += n;
        len -= (size_t)n;
        at += (uint64_t)n;
        if (len > 0 && (size_t)n % DIO_ALIGN != 0) drop_direct(fd);   /* the rest is not aligned */
    }
    return 0;
}

static gk_status write_error(const gk_stage *s, int e, uint64_t at, gk_error *err) {
    return gk_error_set(err, GK_E_IO, (int64_t)at, "%s: write failed: %s", s->name, strerror(e));
}

/* The flusher thread: makes the file's writes durable (fdatasync) when the
 * writer asks, while the writer goes on writing the next slots and the caller
 * filling them, so that the commit's fsync has only the last few slots to wait
 * for. A failure is a write error at the offset the request names (the kernel
 * reports it to one fsync only); a file that cannot be synced (EINVAL) is left
 * to the commit. */
static void *flusher_main(void *arg) {
    gk_stage *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->flush_asked && !s->quit) pthread_cond_wait(&s->cv, &s->mu);
        if (!s->flush_asked) break;
        const uint64_t at = s->flush_at;
        s->flush_asked = false;
        s->flushing = true;
        const bool skip = s->error != 0 || s->abandon;
        pthread_mutex_unlock(&s->mu);
        const int e = !skip && fdatasync(s->fd) != 0 && errno != EINVAL && errno != EINTR ? errno : 0;
        pthread_mutex_lock(&s->mu);
        if (e != 0 && s->error == 0) {
            s->error = e;
            s->error_at = at;
        }
        s->flushing = false;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Starts a thread with every signal blocked in it, so that signals meant for
 * the command (SIGINT, SIGTERM) reach its main thread. @return : whether it runs. */
static bool start_thread(pthread_t *t, void *(*fn)(void *), gk_stage *s) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const bool ok = pthread_create(t, NULL, fn, s) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

/* Asks the flusher (started on the first request) for an fdatasync covering
 * what was written up to the slot at file offset at. Without a flusher (no
 * thread to be had) the commit's fsync alone makes the file durable. Called by
 * the writer with s->mu held. */
static void ask_flush(gk_stage *s, uint64_t at) {
    if (!s->flusher_started) s->flusher_started = start_thread(&s->flusher, flusher_main, s);
    if (!s->flusher_started) return;
    s->flush_asked = true;
    s->flush_at = at;
}

/* The writer thread: writes full slots in order until told to quit. */
static void *writer_main(void *arg) {
    gk_stage *s = arg;
    int k = 0;
    uint64_t unflushed = 0;   /* bytes written since the last fdatasync */
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->slots[k].full && !s->quit) pthread_cond_wait(&s->cv, &s->mu);
        if (!s->slots[k].full) break;
        slot *sl = &s->slots[k];
        bool skip = s->error != 0 || s->abandon;
        pthread_mutex_unlock(&s->mu);
        uint64_t fail_at = 0;
        int e = skip ? 0 : write_all(s->fd, sl->data, sl->len, sl->at, &fail_at);
        unflushed += skip ? 0 : sl->len;
        const bool flush = e == 0 && unflushed >= FLUSH_EVERY;
        if (flush) unflushed = 0;
        pthread_mutex_lock(&s->mu);
        if (e != 0 && s->error == 0) {
            s->error = e;
            s->error_at = fail_at;
        }
        if (flush) ask_flush(s, sl->at);
        sl->full = false;
        pthread_cond_broadcast(&s->cv);
        k ^= 1;
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void start_writer(gk_stage *s) { s->started = start_thread(&s->thread, writer_main, s); }

/* Waits until the writer holds no slot and no flush is asked for or running.
 * @return : the first write or flush error. */
static gk_status wait_idle(gk_stage *s, gk_error *err) {
    if (!s->started) return GK_OK;
    pthread_mutex_lock(&s->mu);
    while (s->slots[0].full || s->slots[1].full || s->flush_asked || s->flushing)
        pthread_cond_wait(&s->cv, &s->mu);
    int e = s->error;
    uint64_t at = s->error_at;
    pthread_mutex_unlock(&s->mu);
    return e ? write_error(s, e, at, err) : GK_OK;
}

/* Hands the current slot to the writer and moves on to the other one once the
 * writer has emptied it. Until a first full slot (STAGE_FIRST bytes) the
 * writer is not started and a slot is written here: a small file (a shard's
 * header before its clone) is not worth a thread. So is everything when no
 * thread could be started. */
static gk_status hand_off(gk_stage *s, gk_error *err) {
    slot *sl = &s->slots[s->cur];
    if (sl->len == 0) return GK_OK;
    uint64_t next_at = sl->at + sl->len;
    if (s->limit < STAGE_BYTES) s->limit *= 2;
    if (!s->started && sl->len >= STAGE_FIRST) start_writer(s);
    if (!s->started) {
        uint64_t fail_at = 0;
        int e = write_all(s->fd, sl->data, sl->len, sl->at, &fail_at);
        if (e != 0) return write_error(s, e, fail_at, err);
        sl->len = 0;
        sl->at = next_at;
        return GK_OK;
    }
    int next = s->cur ^ 1;
    pthread_mutex_lock(&s->mu);
    sl->full = true;
    pthread_cond_broadcast(&s->cv);
    while (s->slots[next].full) pthread_cond_wait(&s->cv, &s->mu);
    int e = s->error;
    uint64_t at = s->error_at;
    pthread_mutex_unlock(&s->mu);
    if (e != 0) return write_error(s, e, at, err);
    s->cur = next;
    s->slots[next].len = 0;
    s->slots[next].at = next_at;
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* Clone runs                                                               */
/* ------------------------------------------------------------------------ */

static gk_status read_copy(gk_stage *s, int src_fd, uint64_t off, uint64_t len, gk_error *err);

/* Makes the pending run: its whole blocks shared, the rest copied; a refusal
 * turns cloning off for the rest of the stage and copies the whole run. */
static gk_status settle(gk_stage *s, gk_error *err) {
    if (s->run.len == 0) return GK_OK;
    const int fd = s->run.fd;
    const uint64_t src = s->run.src, dst = s->run.dst, len = s->run.len;
    const uint64_t whole = len / s->clone_block * s->clone_block;
    s->run.len = 0;
    slot *sl = &s->slots[s->cur];   /* empty, at dst */
    int e = gk_clone_range(fd, src, s->fd, dst, whole);
    if (e != 0 && gk_clone_refused(e)) {
        s->clone_block = 0;   /* these files do not share blocks after all: copy */
        return gk_stage_copy_from(s, fd, src, len, err);
    }
    if (e != 0)
        return gk_error_set(err, GK_E_IO, (int64_t)dst, "%s: clone of %llu bytes failed: %s", s->name,
                            (unsigned long long)whole, strerror(e));
    sl->at += whole;
    s->cloned += whole;
    return read_copy(s, fd, src + whole, len - whole, err);
}

/* @return : true when the len bytes at p (zeros for NULL) are the run's
 *           source's next bytes, and the run now holds them too. */
static bool run_extends(gk_stage *s, const void *p, size_t len) {
    if (s->run.len == 0 || len > RUN_MATCH_MAX) return false;
    if (len == 0) return true;
    uint8_t next[RUN_MATCH_MAX];
    const uint8_t *want = p;
    ssize_t n;
    do n = pread(s->run.fd, next, len, (off_t)(s->run.src + s->run.len));
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)len) return false;
    for (size_t i = 0; i < len; i++)
        if (next[i] != (want ? want[i] : 0)) return false;
    s->run.len += len;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Public                                                                   */
/* ------------------------------------------------------------------------ */

/* A slot's buffer: STAGE_BYTES mapped on their own, starting on a SLOT_ALIGN
 * boundary. Not from malloc: an aligned block carved from the heap leaves a
 * hole the next one (aligned again) does not fit, so the heap grew by a slot
 * pair for every file a set writes (a shard set's peak memory grew with its
 * shard count); a mapping goes back to the system when freed. NULL when out of memory. */
static uint8_t *slot_alloc(void) {
    size_t len = STAGE_BYTES + SLOT_ALIGN;
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    uintptr_t at = ((uintptr_t)p + SLOT_ALIGN - 1) & ~(uintptr_t)(SLOT_ALIGN - 1);
    size_t head = (size_t)(at - (uintptr_t)p), tail = len - head - STAGE_BYTES;
    if (head) munmap(p, head);
    if (tail) munmap((uint8_t *)at + STAGE_BYTES, tail);
    return (uint8_t *)at;
}

static void slot_free(uint8_t *data) {
    if (data) munmap(data, STAGE_BYTES);
}

gk_status gk_stage_open(int fd, const char *name, bool direct, gk_stage **out, gk_error *err) {
    *out = NULL;
    gk_stage *s = calloc(1, sizeof *s);
    if (s == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    s->fd = fd;
    s->name = name;
    s->limit = STAGE_FIRST;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    for (int k = 0; k < 2; k++) {
        s->slots[k].data = slot_alloc();
        if (s->slots[k].data == NULL) {
            gk_stage_free(s);
            return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
        /* Huge pages where the system gives them on request: a slot then costs a
         * few page faults instead of one per 4 KiB (each a costly trap on some
         * virtual machines), and a header that fills a tenth of it, one. */
        madvise(s->slots[k].data, STAGE_BYTES, MADV_HUGEPAGE);
    }
    int fl = fcntl(fd, F_GETFL);
    s->kernel_copy = !direct || fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT) != 0;
    *out = s;
    return GK_OK;
}

gk_status gk_stage_write(gk_stage *s, const void *buf, size_t len, gk_error *err) {
    if (run_extends(s, buf, len)) return GK_OK;
    gk_status st0 = settle(s, err);
    if (st0 != GK_OK) return st0;
    const uint8_t *p = buf;
    while (len > 0) {
        slot *sl = &s->slots[s->cur];
        size_t n = s->limit - sl->len;
        if (n > len) n = len;
        memcpy(sl->data + sl->len, p, n);
        sl->len += n;
        p += n;
        len -= n;
        if (sl->len == s->limit) {
            gk_status st = hand_off(s, err);
            if (st != GK_OK) return st;
        }
    }
    return GK_OK;
}

gk_status gk_stage_zeros(gk_stage *s, uint64_t n, gk_error *err) {
    if (n <= RUN_MATCH_MAX && run_extends(s, NULL, (size_t)n)) return GK_OK;
    gk_status st0 = settle(s, err);
    if (st0 != GK_OK) return st0;
    while (n > 0) {
        slot *sl = &s->slots[s->cur];
        size_t k = s->limit - sl->len;
        if (k > n) k = (size_t)n;
        memset(sl->data + sl->len, 0, k);
        sl->len += k;
        n -= k;
        if (sl->len == s->limit) {
            gk_status st = hand_off(s, err);
            if (st != GK_OK) return st;
        }
    }
    return GK_OK;
}

gk_status gk_pread_exact(int src_fd, void *buf, size_t len, uint64_t off, gk_error *err) {
    uint8_t *dst = buf;
    while (len > 0) {
        ssize_t n = pread(src_fd, dst, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return gk_error_set(err, GK_E_IO, (int64_t)off, "read failed: %s", strerror(errno));
        if (n == 0)
            return gk_error_set(err, GK_E_TRUNCATED, (int64_t)off,
                                "input ended early (it shrank while being copied?)");
        dst += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return GK_OK;
}

/* Copies in the kernel (copy_file_range) once the staged bytes are written.
 * @return : GK_OK; *done says how many bytes went, fewer than len when the
 *           kernel will not copy these files (the caller reads the rest). */
static gk_status kernel_copy(gk_stage *s, int src_fd, uint64_t off, uint64_t len, uint64_t *done,
                             gk_error *err) {
    *done = 0;
    gk_status st = hand_off(s, err);
    if (st == GK_OK) st = wait_idle(s, err);
    if (st != GK_OK) return st;
    slot *sl = &s->slots[s->cur];
    while (*done < len) {
        loff_t in_off = (loff_t)(off + *done), out_off = (loff_t)sl->at;
        size_t chunk = len - *done > STAGE_BYTES ? STAGE_BYTES : (size_t)(len - *done);
        ssize_t n = copy_file_range(src_fd, &in_off, s->fd, &out_off, chunk, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;   /* not supported here, or the source ends: reads say which */
        *done += (uint64_t)n;
        sl->at += (uint64_t)n;
    }
    return GK_OK;
}

/* Reads len bytes of src_fd at off into the slots. */
static gk_status read_copy(gk_stage *s, int src_fd, uint64_t off, uint64_t len, gk_error *err) {
    while (len > 0) {
        slot *sl = &s->slots[s->cur];
        size_t n = s->limit - sl->len;
        if (n > len) n = (size_t)len;
        gk_status st = gk_pread_exact(src_fd, sl->data + sl->len, n, off, err);
        if (st != GK_OK) return st;
        sl->len += n;
        off += n;
        len -= n;
        if (sl->len == s->limit && (st = hand_off(s, err)) != GK_OK) return st;
    }
    return GK_OK;
}

gk_status gk_stage_copy_from(gk_stage *s, int src_fd, uint64_t off, uint64_t len, gk_error *err) {
    gk_status st0 = settle(s, err);
    if (st0 != GK_OK) return st0;
    if (s->kernel_copy) {
        uint64_t done;
        gk_status st = kernel_copy(s, src_fd, off, len, &done, err);
        if (st != GK_OK) return st;
        off += done;
        len -= done;
    }
    return read_copy(s, src_fd, off, len, err);
}

void gk_stage_clone_allow(gk_stage *s, uint64_t block) {
    s->clone_block = block;
    /* What is left to write are headers and the partial blocks around clones:
     * a few pages, each of which would be a synchronous direct write. */
    if (block > 0 && !s->kernel_copy) {
        drop_direct(s->fd);
        s->kernel_copy = true;
    }
}

gk_status gk_stage_settle(gk_stage *s, gk_error *err) { return settle(s, err); }

uint64_t gk_stage_cloned(const gk_stage *s) {
    return s->cloned + (s->run.len > 0 ? s->run.len / s->clone_block * s->clone_block : 0);
}

gk_status gk_stage_clone_from(gk_stage *s, int src_fd, uint64_t off, uint64_t len, gk_error *err) {
    if (s->run.len > 0 && src_fd == s->run.fd && off == s->run.src + s->run.len) {
        s->run.len += len;
        return GK_OK;
    }
    gk_status st = settle(s, err);
    if (st != GK_OK) return st;
    const uint64_t b = s->clone_block;
    const slot *sl = &s->slots[s->cur];
    uint64_t dst = sl->at + sl->len;
    if (b == 0 || off % b != dst % b) return gk_stage_copy_from(s, src_fd, off, len, err);
    uint64_t head = (b - dst % b) % b;
    if (head >= len || (len - head) / b == 0) return read_copy(s, src_fd, off, len, err);
    st = read_copy(s, src_fd, off, head, err);
    if (st == GK_OK) st = hand_off(s, err);
    if (st == GK_OK) st = wait_idle(s, err);
    if (st != GK_OK) return st;
    /* The current slot is empty now, at dst + head: the run starts there. */
    s->run.fd = src_fd;
    s->run.src = off + head;
    s->run.dst = s->slots[s->cur].at;
    s->run.len = len - head;
    return GK_OK;
}

gk_status gk_stage_copy_swapped(gk_stage *s, int src_fd, uint64_t off, uint64_t len, size_t block_bytes,
                                gk_byteswap_fn swap, gk_error *err) {
    if (block_bytes == 0 || len % block_bytes != 0)
        return gk_error_set(err, GK_E_ARG, (int64_t)off, "byte swap of %llu bytes: not whole blocks of %zu",
                            (unsigned long long)len, block_bytes);
    gk_status st0 = settle(s, err);
    if (st0 != GK_OK) return st0;
    uint8_t *one = NULL;   /* a block that straddles two slots goes through here */
    gk_status st = GK_OK;
    while (len > 0 && st == GK_OK) {
        slot *sl = &s->slots[s->cur];
        size_t n = (s->limit - sl->len) / block_bytes * block_bytes;
        if (n > len) n = (size_t)len;
        if (n == 0) {
            if (one == NULL && (one = malloc(block_bytes)) == NULL)
                return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            st = gk_pread_exact(src_fd, one, block_bytes, off, err);
            if (st == GK_OK) {
                swap(one, 1);
                st = gk_stage_write(s, one, block_bytes, err);
            }
            n = block_bytes;
        } else if ((st = gk_pread_exact(src_fd, sl->data + sl->len, n, off, err)) == GK_OK) {
            swap(sl->data + sl->len, (int64_t)(n / block_bytes));
            sl->len += n;
            if (sl->len == s->limit) st = hand_off(s, err);
        }
        off += n;
        len -= n;
    }
    free(one);
    return st;
}

gk_status gk_stage_finish(gk_stage *s, gk_error *err) {
    gk_status st = settle(s, err);
    if (st == GK_OK) st = wait_idle(s, err);
    if (st != GK_OK) return st;
    slot *sl = &s->slots[s->cur];
    size_t whole = sl->len / DIO_ALIGN * DIO_ALIGN;
    uint64_t fail_at = 0;
    int e = write_all(s->fd, sl->data, whole, sl->at, &fail_at);
    if (e == 0 && whole < sl->len) {
        drop_direct(s->fd);   /* the last piece is not a whole block */
        e = write_all(s->fd, sl->data + whole, sl->len - whole, sl->at + whole, &fail_at);
    }
    if (e != 0) return write_error(s, e, fail_at, err);
    sl->at += sl->len;
    sl->len = 0;
    return GK_OK;
}

void gk_stage_free(gk_stage *s) {
    if (s == NULL) return;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->quit = true;
        s->abandon = true;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        if (s->flusher_started) pthread_join(s->flusher, NULL);
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    slot_free(s->slots[0].data);
    slot_free(s->slots[1].data);
    free(s);
}
