/*
 * inplace.c - writing edited metadata back: in place when the new header fits
 * before the data section (a padding pair absorbs the difference), as a whole
 * new file otherwise.
 *
 * In place: the data section must not move, so the new header plus its
 * alignment padding must end exactly at the old data offset. The new header
 * either fits in the alignment slack by itself, or gets a GK_PADDING_KEY pair sized
 * so the header ends within one alignment of the data offset: an array of zero
 * UINT8 when there are 39 bytes for it, a short string or a scalar below that. A
 * header that already ends there (no change, or a change within the alignment
 * slack) keeps its pair as it is, and a pair the edit deleted is not put back, so
 * an edit that changes nothing changes no byte. Only the bytes that differ are
 * rewritten, under the journal (format/journal.c) and the exclusive header lock
 * (io/lock.h), by a process holding the file's edit lock (gk_open_exclusive). A
 * file without tensors has nothing to keep in place: its header may grow or shrink.
 * A whole new file is written by the pipeline's gk_rewrite.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/journal.h"
#include "format/file.h"
#include "io/lock.h"
#include "io/source.h"

/* Bytes of the padding pair around its value: key length, key, value type. */
#define PAIR_BASE (8u + (unsigned)sizeof GK_PADDING_KEY - 1u + 4u)

/* Sets the padding pair so that it takes exactly `bytes` bytes in the header:
 * an array of zero UINT8 when there is room for one (39 bytes and more), else a
 * string of spaces (35-38), else the widest unsigned scalar that fits (28, 29,
 * 31 bytes). @return : false when no form takes exactly that many bytes. */
static bool set_padding_exact(gk_model *m, uint64_t bytes, gk_error *err, gk_status *st) {
    *st = GK_OK;
    if (bytes >= GK_PADDING_OVERHEAD) {
        *st = gk_model_set_padding(m, bytes - GK_PADDING_OVERHEAD, err);
        return true;
    }
    gk_value v = { .type = GK_V_U8 };
    char spaces[8] = "        ";
    if (bytes >= PAIR_BASE + 8) {
        v.type = GK_V_STR;
        v.s.ptr = spaces;
        v.s.len = bytes - PAIR_BASE - 8;
    } else if (bytes == PAIR_BASE + 4) {
        v.type = GK_V_U32;
    } else if (bytes == PAIR_BASE + 2) {
        v.type = GK_V_U16;
    } else if (bytes != PAIR_BASE + 1) {
        return false;
    }
    *st = gk_kv_set(m, GK_PADDING_KEY, &v, err);
    return true;
}

/* The pair size (a form set_padding_exact can make) that leaves the header within
 * one alignment of the data section when `slack` bytes are free; 0 when none does. */
static uint64_t padding_pair_for(uint64_t slack, uint64_t align) {
    if (slack >= GK_PADDING_OVERHEAD || slack >= PAIR_BASE + 8) return slack;
    const uint64_t scalars[] = { PAIR_BASE + 4, PAIR_BASE + 2, PAIR_BASE + 1 };
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
        if (scalars[i] <= slack && slack - scalars[i] < align) return scalars[i];
    return 0;
}

/* The bytes a padding pair of value v takes in the header (0 for the forms that
 * ggufkit does not write: arrays of strings or arrays). */
static uint64_t pair_bytes(const gk_value *v) {
    if (v->type == GK_V_STR) return PAIR_BASE + 8 + v->s.len;
    if (v->type != GK_V_ARR) return PAIR_BASE + gk_vtype_size(v->type);
    if (v->arr.elem == GK_V_STR || v->arr.elem == GK_V_ARR) return 0;
    return GK_PADDING_OVERHEAD + v->arr.n * gk_vtype_size(v->arr.elem);
}

static bool tensors_aligned(const gk_model *m, uint64_t data_offset, uint64_t align) {
    if (data_offset % align != 0) return false;
    for (size_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].offset % align != 0) return false;
    return true;
}

gk_status gk_inplace_fit(gk_file *f, gk_model *m, gk_inplace_plan *out, gk_error *err) {
    memset(out, 0, sizeof *out);
    if (m->version != 2 && m->version != 3) {
        snprintf(out->reason, sizeof out->reason, "a GGUF v%u header cannot be written (a rewrite makes it v3)", m->version);
        return GK_OK;
    }
    if (f->fd < 0 || f->mem != NULL || f->stream != NULL) {
        snprintf(out->reason, sizeof out->reason, "%s",
                 f->stream == NULL                                    ? "not a file (in memory)"
                 : gk_source_is_remote(f->stream)                     ? "a remote file cannot be edited in place"
                 : gk_source_get_kind(f->stream) == GK_SOURCE_ARCHIVE ? "a member of an archive cannot be edited in place"
                                                                      : "a compressed file cannot be edited in place");
        return GK_OK;
    }
    if (m->n_tensors != f->model->n_tensors) return gk_error_set(err, GK_E_ARG, -1, "the edited model has other tensors");
    if (m->n_tensors == 0) {
        out->fits = true;
        out->needed = gk_model_header_size(m);
        out->room = f->size;
        out->new_size = gk_file_pads_end(f) ? gk_model_data_start(m) : out->needed;
        return GK_OK;
    }
    uint64_t data = f->data_offset, align = gk_model_alignment(m);
    out->room = data;
    out->new_size = f->size;
    const gk_value *had = gk_kv_get(m, GK_PADDING_KEY);
    if (align == gk_model_alignment(f->model) && gk_align_up(gk_model_header_size(m), align) == data) {
        /* Ends where the data starts as it is: nothing to adjust. */
        out->fits = true;
        out->needed = gk_model_header_size(m) - (had ? pair_bytes(had) : 0);
        out->padded = had != NULL && pair_bytes(had) > 0;
        out->padding = out->padded ? data - out->needed : 0;
        return GK_OK;
    }
    bool deleted = had == NULL && gk_kv_get(f->model, GK_PADDING_KEY) != NULL;
    if (!tensors_aligned(m, data, align)) {
        out->needed = gk_model_header_size(m);
        snprintf(out->reason, sizeof out->reason, "the data is not laid out for alignment %llu", (unsigned long long)align);
        return GK_OK;
    }
    /* Measure with an empty padding pair in its place (kept, or appended). */
    gk_value saved;
    memset(&saved, 0, sizeof saved);
    if (had && gk_value_copy(&saved, had) != GK_OK) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status st = gk_model_set_padding(m, 0, err);
    if (st != GK_OK) {
        gk_value_free(&saved);
        return st;
    }
    uint64_t with_pad = gk_model_header_size(m);
    uint64_t bare = with_pad - GK_PADDING_OVERHEAD;
    out->needed = bare;
    if (gk_align_up(bare, align) == data) {
        gk_kv_delete(m, GK_PADDING_KEY);
        out->fits = true;
    } else if (!deleted && bare <= data && padding_pair_for(data - bare, align) != 0) {
        uint64_t pair = padding_pair_for(data - bare, align);
        out->fits = true;
        out->padded = true;
        out->padding = data - bare;
        set_padding_exact(m, pair, err, &st);
    } else {
        if (had) st = gk_kv_set(m, GK_PADDING_KEY, &saved, err);
        else gk_kv_delete(m, GK_PADDING_KEY);
        if (deleted)
            snprintf(out->reason, sizeof out->reason,
                     "without %s (deleted) the header ends at %llu, not where the data section starts (%llu)",
                     GK_PADDING_KEY, (unsigned long long)gk_align_up(bare, align), (unsigned long long)data);
        else if (bare > data)
            snprintf(out->reason, sizeof out->reason,
                     "the new header needs %llu bytes, %llu are available before the data section",
                     (unsigned long long)bare, (unsigned long long)data);
        else
            snprintf(out->reason, sizeof out->reason,
                     "the new header leaves %llu bytes before the data section: more than the alignment "
                     "(%llu), fewer than a padding pair takes (%u)",
                     (unsigned long long)(data - bare), (unsigned long long)align, GK_PADDING_OVERHEAD);
    }
    gk_value_free(&saved);
    return st;
}

/* Reads len bytes at 0 of fd. */
static gk_status read_region(int fd, uint8_t *buf, size_t len, const char *path, gk_error *err) {
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return gk_error_set(err, GK_E_IO, (int64_t)got, "%s: read failed: %s", path, n == 0 ? "file shrank" : strerror(errno));
        got += (size_t)n;
    }
    return GK_OK;
}

/* The bytes that differ: [*lo, *old_hi) of the old, [*lo, *new_hi) of the new. */
static void diff_range(const uint8_t *a, size_t an, const uint8_t *b, size_t bn, size_t *lo, size_t *old_hi,
                       size_t *new_hi) {
    size_t common = an < bn ? an : bn, i = 0;
    while (i < common && a[i] == b[i]) i++;
    *lo = i;
    if (an != bn) {
        *old_hi = an;
        *new_hi = bn;
        return;
    }
    size_t hi = an;
    while (hi > i && a[hi - 1] == b[hi - 1]) hi--;
    *old_hi = *new_hi = hi;
}

static gk_status write_new(io_ctx *io, int fd, const char *path, const uint8_t *bytes, size_t lo, size_t hi,
                           uint64_t old_size, uint64_t new_size, gk_error *err) {
    gk_status st = io_pwrite_all(io, fd, bytes + lo, hi - lo, lo, "header write", err);
    if (st == GK_OK && new_size != old_size) {
        if (!io_step(io, "truncate")) return gk_error_set(err, GK_E_INTERRUPTED, -1, "stopped before truncate");
        if (ftruncate(fd, (off_t)new_size) != 0) return gk_error_set(err, GK_E_IO, -1, "%s: truncate failed: %s", path, strerror(errno));
    }
    if (st == GK_OK && !io_step(io, "fsync")) return gk_error_set(err, GK_E_INTERRUPTED, -1, "stopped before fsync");
    if (st == GK_OK && fdatasync(fd) != 0) return gk_error_set(err, GK_E_IO, -1, "%s: fsync failed: %s", path, strerror(errno));
    return st;
}

gk_status gk_inplace_write(gk_file *f, const gk_model *m, bool *changed, gk_error *err) {
    io_ctx t = io_test_hook();
    return gk_inplace_write_hooked(f, m, t.hook, t.ctx, changed, err);
}

gk_status gk_inplace_write_hooked(gk_file *f, const gk_model *m, gk_io_hook hook, void *hook_ctx, bool *changed,
                                  gk_error *err) {
    io_ctx io = { hook, hook_ctx };
    if (changed) *changed = false;
    if (f->fd < 0 || f->mem != NULL || f->stream != NULL)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: not a plain file: cannot edit in place", f->path);
    uint8_t *hdr;
    size_t hdr_len;
    gk_status st = gk_header_serialize(m, &hdr, &hdr_len, err);
    if (st != GK_OK) return st;
    uint64_t old_size = f->size, region, new_len;
    if (m->n_tensors > 0) {
        if (hdr_len != f->data_offset) {
            free(hdr);
            return gk_error_set(err, GK_E_ARG, -1, "%s: the new header (%zu bytes with padding) does not end at the data section (%llu)",
                                f->path, hdr_len, (unsigned long long)f->data_offset);
        }
        region = new_len = hdr_len;
    } else {
        region = old_size;
        new_len = gk_file_pads_end(f) ? hdr_len : gk_model_header_size(m);
    }
    uint64_t new_size = m->n_tensors > 0 ? old_size : new_len;
    uint8_t *old = malloc(region ? (size_t)region : 1);
    char *jpath = journal_path(f->path);
    int fd = f->fd;
    bool header_locked = false;
    if (old == NULL || jpath == NULL) {
        st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        goto done;
    }
    if (!f->edit_locked || f->lock_fd >= 0) {
        st = gk_error_set(err, GK_E_ARG, -1, "%s: not opened for an in-place edit (gk_open_exclusive)", f->path);
        goto done;
    }
    struct stat a;
    if (fstat(fd, &a) != 0 || !S_ISREG(a.st_mode) || (uint64_t)a.st_size != old_size) {
        st = gk_error_set(err, GK_E_IO, -1, "%s: the file changed since it was read", f->path);
        goto done;
    }
    /* Readers wait while the header changes: they see it before or after. */
    st = gk_lock_take(fd, GK_LOCK_HEADER, true, GK_LOCK_READ_WAIT_MS, err);
    if (st != GK_OK) goto done;
    header_locked = true;
    st = read_region(fd, old, (size_t)region, f->path, err);
    if (st != GK_OK) goto done;
    size_t lo, old_hi, new_hi;
    diff_range(old, (size_t)region, hdr, (size_t)new_len, &lo, &old_hi, &new_hi);
    if (lo == old_hi && lo == new_hi) goto done;   /* nothing changes */
    journal_info info = { .version = 2, .ino = (uint64_t)a.st_ino, .dev = (uint64_t)a.st_dev,
                          .old_size = old_size, .new_size = new_size, .off = lo, .old = old + lo,
                          .old_len = old_hi - lo, .new_bytes = hdr + lo, .new_len = new_hi - lo };
    st = journal_write(&io, jpath, fd, &info, err);
    if (st != GK_OK) goto done;
    if (changed) *changed = true;
    st = write_new(&io, fd, f->path, hdr, lo, new_hi, old_size, new_size, err);
    if (st != GK_OK) goto done;   /* the journal stays: recovery puts the old bytes back */
    if (!io_step(&io, "journal unlink")) {
        st = gk_error_set(err, GK_E_INTERRUPTED, -1, "stopped before journal unlink");
        goto done;
    }
    if (unlink(jpath) != 0) {
        st = gk_error_set(err, GK_E_IO, -1, "%s: cannot remove: %s", jpath, strerror(errno));
        goto done;
    }
    st = io_fsync_dir(&io, jpath, err);
done:
    if (header_locked) gk_lock_drop(fd, GK_LOCK_HEADER);
    free(jpath);
    free(old);
    free(hdr);
    return st;
}

gk_status gk_edit_replace_check(const gk_file *f, gk_error *err) {
    if (f->mem != NULL || f->path == NULL || f->path[0] == '\0')
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "a model in memory has no file to replace (name an output)");
    if (f->stream != NULL && gk_source_get_kind(f->stream) == GK_SOURCE_ARCHIVE)
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "a member of an archive cannot be edited in place or replaced (write it out with -o OUT)");
    if (gk_source_is_remote(f->stream))
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "a remote file cannot be edited in place or replaced: outputs stay local "
                            "(write it out with -o OUT)");
    return GK_OK;
}

gk_status gk_edit_rewrite(gk_file *f, gk_model *m, const char *dest, const gk_write_opts *opts,
                          gk_error *err) {
    gk_status ok = dest ? GK_OK : gk_edit_replace_check(f, err);
    if (ok != GK_OK) return ok;
    return gk_rewrite(f, m, dest, opts, err);
}
