/*
 * file.c - the gk_file handle: opening a GGUF file by path, by descriptor or in
 * memory, and routing a path to the stream behind it (a .gguf.zst, an
 * ARCHIVE::MEMBER; a bare archive is refused with its GGUF members named); the
 * header lock and the journal check of a plain file; reads of its bytes and
 * tensor data; its warnings; closing. The header itself is parsed by
 * format/read.c (gk_file_parse_header).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/http.h"
#include "format/journal.h"
#include "format/file.h"
#include "io/inputs.h"
#include "io/lock.h"
#include "io/source.h"
#include "util/grow.h"

/* ------------------------------------------------------------------------ */
/* Source access                                                            */
/* ------------------------------------------------------------------------ */

gk_status gk_file_source_read(gk_file *f, uint64_t off, void *buf, size_t len, gk_error *err) {
    if (f->stream) return gk_source_read(f->stream, off, buf, len, err);
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(f->fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return gk_error_set(err, GK_E_IO, (int64_t)off, "read failed: %s", strerror(errno));
        }
        if (n == 0)
            return gk_error_set(err, GK_E_TRUNCATED, (int64_t)off,
                                "file ended early (it shrank while being read?)");
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return GK_OK;
}

gk_status gk_file_read(gk_file *f, uint64_t off, void *buf, size_t len, gk_error *err) {
    gk_status st = GK_OK;
    if (off > f->size || len > f->size - off)
        st = gk_error_set(err, GK_E_TRUNCATED, (int64_t)off, "read of %zu bytes runs past end of file (%llu bytes)",
                          len, (unsigned long long)f->size);
    else if (f->mem)
        memcpy(buf, f->mem + off, len);
    else
        st = gk_file_source_read(f, off, buf, len, err);
    if (st != GK_OK) gk_error_about(err, f->path);   /* the caller may be writing another file */
    return st;
}

gk_status gk_file_tensor_read(gk_file *f, size_t i, uint64_t start, void *buf, size_t len,
                              gk_error *err) {
    const gk_tensor *t = gk_tensor_at(f->model, i);
    if (t == NULL) return gk_error_set(err, GK_E_ARG, -1, "tensor index %zu out of range", i);
    if (start > t->nbytes || len > t->nbytes - start)
        return gk_error_set(err, GK_E_ARG, -1, "%s: read past the tensor's %llu bytes",
                            t->name.ptr, (unsigned long long)t->nbytes);
    if (f->tensor_read) return f->tensor_read(f->tensor_read_ctx, i, start, buf, len, err);
    return gk_file_read(f, f->data_offset + t->offset + start, buf, len, err);
}

bool gk_file_tensor_borrow(gk_file *f, size_t i, uint64_t start, size_t len, const uint8_t **data, size_t *avail,
                           const void **lease) {
    const gk_tensor *t = gk_tensor_at(f->model, i);
    if (t == NULL || f->tensor_read || len == 0 || start > t->nbytes || len > t->nbytes - start) return false;
    uint64_t off = f->data_offset + t->offset + start;
    if (off > f->size || len > f->size - off) return false;   /* the read reports it */
    if (f->mem) {
        *data = f->mem + off;
        *avail = len;
        *lease = NULL;
        return true;
    }
    return f->stream && gk_source_borrow(f->stream, off, len, data, avail, lease);
}

void gk_file_release(gk_file *f, const void *lease) {
    if (lease && f->stream) gk_source_release(f->stream, lease);
}

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

gk_status gk_file_virtual(const char *path, gk_model *model, gk_tensor_read_fn read, void *ctx,
                          gk_file **out, gk_error *err) {
    *out = NULL;
    gk_file *f = calloc(1, sizeof *f);
    char *p = strdup(path ? path : "");
    if (f == NULL || p == NULL) {
        free(f);
        free(p);
        gk_model_free(model);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    f->path = p;
    f->fd = -1;
    f->lock_fd = -1;
    f->model = model;
    f->tensor_read = read;
    f->tensor_read_ctx = ctx;
    *out = f;
    return GK_OK;
}

void gk_file_add_warning(gk_file *f, gk_rule rule, int64_t offset, const char *fmt, ...) {
    if (f->n_warnings >= 4096) return;   /* enough to tell the story */
    if (!GK_GROW(f->warnings, f->cap_warnings, f->n_warnings + 1, 8)) return;
    gk_warning *w = &f->warnings[f->n_warnings++];
    w->rule = rule;
    w->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->message, sizeof w->message, fmt, ap);
    va_end(ap);
}

static gk_status open_common(gk_file *f, unsigned flags, gk_file **out, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    gk_status st = gk_file_parse_header(f, flags, err);
    if (st != GK_OK) {
        gk_close(f);
        return st;
    }
    *out = f;
    return GK_OK;
}

/* Splits "ARCHIVE::MEMBER" when the part before "::" is an existing file. */
static bool split_member(const char *path, char **archive, const char **member) {
    for (const char *sep = strstr(path, "::"); sep; sep = strstr(sep + 1, "::")) {
        char *head = strndup(path, (size_t)(sep - path));
        struct stat sb;
        if (head && stat(head, &sb) == 0 && S_ISREG(sb.st_mode)) {
            *archive = head;
            *member = sep + 2;
            return true;
        }
        free(head);
    }
    return false;
}

bool gk_path_is_archive(const char *path) { return gk_source_sniff(path) == GK_SOURCE_ARCHIVE; }

static bool collect_member(void *ctx, const char *member, uint64_t size) {
    (void)size;
    char *names = ctx;
    size_t len = strlen(names);
    if (len + strlen(member) + 3 < 256) snprintf(names + len, 256 - len, "%s%s", len ? ", " : "", member);
    return true;
}

/* With GK_OPEN_MEASURE, sizes a stream by its real length; with GK_OPEN_WHOLE, only
 * when a cheap check finds the container may be cut. Either way, a stream found
 * shorter than its container records (when measured) gets a warning. */
static gk_status stream_length(gk_file *f, unsigned flags, gk_status st, gk_error *err) {
    if (st == GK_OK && (flags & GK_OPEN_MEASURE)) st = gk_source_measure(f->stream, &f->size, err);
    else if (st == GK_OK && (flags & GK_OPEN_WHOLE)) st = gk_source_check_whole(f->stream, &f->size, err);
    char msg[GK_MESSAGE_MAX];
    if (st == GK_OK && gk_source_short(f->stream, msg, sizeof msg))
        gk_file_add_warning(f, GK_RULE_SPEC, (int64_t)f->size, "%s", msg);
    return st;
}

/* Opens the stream behind a compressed file or an archive member, if path names one. */
static gk_status open_stream(gk_file *f, const char *path, unsigned flags, bool *is_stream, gk_error *err) {
    char *archive = NULL;
    const char *member = NULL;
    *is_stream = true;
    if (gk_http_is_url(path))
        return stream_length(f, flags, gk_source_open_url(path, &f->stream, &f->size, err), err);
    if (split_member(path, &archive, &member)) {
        gk_status st = gk_source_open_member(archive, member, &f->stream, &f->size, err);
        free(archive);
        return stream_length(f, flags, st, err);
    }
    switch (gk_source_sniff(path)) {
    case GK_SOURCE_ZSTD: return stream_length(f, flags, gk_source_open_zstd(path, &f->stream, &f->size, err), err);
    case GK_SOURCE_ARCHIVE: {
        char names[256] = "";
        gk_archive_list(path, collect_member, names, NULL);
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "this is an archive: name a member as ARCHIVE::MEMBER (GGUF members: %s)",
                            names[0] ? names : "none");
    }
    default: *is_stream = false; return GK_OK;
    }
}

gk_status gk_open(const char *path, unsigned flags, gk_file **out, gk_error *err) {
    *out = NULL;
    gk_file *f = calloc(1, sizeof *f);
    if (f == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    f->fd = f->lock_fd = -1;
    f->path = strdup(path);
    if (f->path == NULL) {
        free(f);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    bool is_stream;
    gk_status st = open_stream(f, path, flags, &is_stream, err);
    if (st != GK_OK || is_stream) {
        if (st != GK_OK) {
            gk_close(f);
            return st;
        }
        return open_common(f, flags, out, err);
    }
    int fd;
    st = input_open(path, &fd, err);   /* a FIFO is refused before it can block */
    gk_close(f);
    if (st != GK_OK) return st;
    return gk_file_open_fd(fd, path, flags, out, err);
}

gk_status gk_file_open_fd(int fd, const char *path, unsigned flags, gk_file **out, gk_error *err) {
    *out = NULL;
    gk_file *f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(path)) == NULL) {
        free(f);
        close(fd);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    f->fd = fd;
    f->lock_fd = -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || S_ISDIR(sb.st_mode)) {
        int e = S_ISDIR(sb.st_mode) ? EISDIR : errno;
        gk_close(f);
        return gk_error_set(err, GK_E_IO, -1, "cannot read: %s", strerror(e));
    }
    if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode)) {
        /* A pipe has no size to check counts against, and the reader seeks. */
        gk_close(f);
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "is a pipe or device, not a file: ggufkit reads seekable files "
                            "(save the stream to a file first)");
    }
    f->size = (uint64_t)sb.st_size;
    inputs_add_fd(fd, path);
    if (!S_ISREG(sb.st_mode)) return open_common(f, flags, out, err);
    /* The header is read under the shared header lock: an in-place write is
     * either wholly before or wholly after. A journal seen under it has no
     * live editor (one writes and removes it under the exclusive lock). */
    gk_status st = gk_lock_take(fd, GK_LOCK_HEADER, false, GK_LOCK_READ_WAIT_MS, err);
    if (st == GK_OK) {
        bool there;
        journal_verdict v;
        char why[256];
        gk_error jerr;
        if (journal_judge(fd, path, &there, &v, why, sizeof why, &jerr) != GK_OK)
            st = gk_error_set(err, GK_E_JOURNAL, -1,
                              "the journal of an interrupted in-place edit lies beside this file (%s%s) and "
                              "cannot be checked (%s); `ggufkit edit --recover %s` deals with it",
                              path, GK_JOURNAL_SUFFIX, jerr.message, path);
        else if (there)
            st = journal_refusal(path, v, why, err);
    }
    if (st != GK_OK) {
        gk_close(f);
        return st;
    }
    st = open_common(f, flags, out, err);
    if (st == GK_OK) gk_lock_drop(fd, GK_LOCK_HEADER);
    return st;
}

gk_status gk_open_memory(const void *data, size_t size, unsigned flags, gk_file **out, gk_error *err) {
    *out = NULL;
    gk_file *f = calloc(1, sizeof *f);
    if (f == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    f->fd = f->lock_fd = -1;
    f->mem = data ? data : (const uint8_t *)"";
    f->size = size;
    f->path = strdup("");
    return open_common(f, flags, out, err);
}

void gk_close(gk_file *f) {
    if (f == NULL) return;
    if (f->fd >= 0) close(f->fd);
    if (f->lock_fd >= 0) close(f->lock_fd);
    gk_source_close(f->stream);
    gk_model_free(f->model);
    free(f->warnings);
    free(f->path);
    free(f);
}

bool gk_file_pads_end(gk_file *f) {
    gk_model *m = gk_file_model(f);
    uint64_t align = gk_model_alignment(m);
    uint64_t end = gk_file_header_end(f);
    for (size_t i = 0; i < gk_tensor_count(m); i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        uint64_t e = gk_file_data_offset(f) + t->offset + t->nbytes;
        if (e > end) end = e;
    }
    uint64_t padded = gk_align_up(end, align);
    gk_error err;   /* a lazily sized stream (a URL's .gguf.zst): are those bytes there? */
    if (padded != end && f->stream && gk_source_extend(f->stream, padded, &f->size, &err) != GK_OK) return false;
    return padded != end && gk_file_size(f) >= padded;
}

gk_model *gk_file_model(gk_file *f) { return f->model; }
const char *gk_file_path(const gk_file *f) { return f->path ? f->path : ""; }
uint64_t gk_file_size(const gk_file *f) { return f->size; }
uint64_t gk_file_header_end(const gk_file *f) { return f->header_end; }
uint64_t gk_file_data_offset(const gk_file *f) { return f->data_offset; }

void gk_file_facts_of(const gk_file *f, gk_file_facts *out) {
    const gk_model *m = f->model;
    *out = (gk_file_facts){
        .version = gk_model_version(m),
        .big_endian = gk_model_big_endian(m),
        .alignment = gk_model_alignment(m),
        .n_kv = gk_kv_count(m),
        .n_tensors = gk_tensor_count(m),
        .data_offset = f->data_offset,
        .file_size = gk_file_size(f),
    };
}
int gk_file_fd(const gk_file *f) { return f->fd; }
size_t gk_file_warning_count(const gk_file *f) { return f->n_warnings; }
bool gk_file_strings_utf8(const gk_file *f) { return !f->bad_utf8; }
const gk_warning *gk_file_warning_at(const gk_file *f, size_t i) {
    return i < f->n_warnings ? &f->warnings[i] : NULL;
}
