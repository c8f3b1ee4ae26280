/*
 * source.c - zstd streams and archive members as forward-reading byte sources.
 *
 * A source delivers its decompressed bytes in order. gk_source_read() skips
 * forward by decompressing into scratch space, and restarts from the beginning
 * when asked for bytes behind its position. Sizes come from the container when
 * it records them (the sum of the zstd frames' recorded sizes, found by walking
 * frame and block headers; an archive entry), otherwise from one full pass, so
 * the reader can check counts against the bytes that remain. A zstd stream
 * behind a URL is sized lazily: a lower bound that grows as checks need it
 * (gk_source_extend), the exact size only when asked (gk_source_settle).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#define ZSTD_STATIC_LINKING_ONLY   /* ZSTD_getFrameHeader */
#include <zstd.h>
#include <zstd_errors.h>

#include "io/archive_load.h"
#include "io/http.h"
#include "io/inputs.h"
#include "io/source.h"
#include "util/byteorder.h"
#include "util/grow.h"

#define SCRATCH_BYTES (256 * 1024)
#define LAZY_STEP ((uint64_t)256 << 10)   /* gk_source_extend decodes at most this far past need */
#define HIST_MAX ((size_t)64 << 20)     /* the most a lazy stream keeps of its header's bytes */
#define ARCHIVE_CALL_BYTES (16 * 1024)   /* bytes asked of libarchive at a time */

struct gk_source {
    gk_source_kind kind;
    char *path;
    char *member;
    uint64_t pos;              /* decompressed bytes delivered so far */
    uint8_t *scratch;
    /* zstd */
    int fd;
    ZSTD_DStream *ds;
    uint8_t *in_buf;
    size_t in_cap;
    ZSTD_inBuffer in;
    size_t last_ret;           /* last ZSTD_decompressStream result: 0 at a frame end */
    /* remote: the file itself (kind HTTP) or the compressed bytes of a zstd stream */
    gk_http *http;
    uint64_t raw_pos;          /* compressed bytes read from http so far */
    uint64_t raw_size;         /* the remote file's size */
    /* archive */
    const gk_archive_api *ar_api;
    struct archive *ar;
    /* a full pass (measure) that ended before the recorded size */
    uint64_t recorded;         /* the size the container records, or UINT64_MAX */
    char ended[GK_MESSAGE_MAX];
    bool cut_seen;             /* zstd: its frame headers show the file ends inside a frame */
    uint64_t measured;         /* the bytes the last full pass counted */
    /* lazy sizing (a zstd stream behind a URL): the size is not known yet, only
     * that at least `known` bytes exist (recorded by a frame header, or
     * decompressed already); gk_source_extend and gk_source_settle learn more */
    bool lazy;
    uint64_t known;
    /* while a lazy stream's header is read: every byte decompressed so far
     * (hist_len == pos), so that a read behind the stream's position (after
     * gk_source_extend decoded ahead) needs no restart, which would fetch the
     * compressed bytes again; dropped once reads go past it after the header
     * (gk_source_header_done), or when it would pass HIST_MAX */
    uint8_t *hist;
    size_t hist_len, hist_cap;
    bool hist_frozen;          /* the header is read: kept for the first read behind, no longer grown */
};

static const uint8_t zstd_magic[4] = { 0x28, 0xB5, 0x2F, 0xFD };

int gk_zstd_window_log_max(void) {
    const char *e = getenv("GGUFKIT_ZSTD_WINDOW_LOG_MAX");
    char *end;
    ZSTD_bounds b = ZSTD_dParam_getBounds(ZSTD_d_windowLogMax);
    long v = e && *e ? strtol(e, &end, 10) : -1;
    if (v < b.lowerBound || v > b.upperBound || (e && *e && *end != '\0')) v = b.upperBound;
    return (int)v;
}

/* Lets dc decode frames up to the window limit (zstd's own default is 2^27). */
static void allow_window(ZSTD_DCtx *dc) {
    ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, gk_zstd_window_log_max());
}

/* A zstd error as a message; a window over the limit says how to raise it. */
static gk_status zstd_error(gk_error *err, int64_t at, size_t ret) {
    if (ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge)
        return gk_error_set(err, GK_E_UNSUPPORTED, at,
                            "zstd: the stream's window is larger than 2^%d bytes, the limit "
                            "(GGUFKIT_ZSTD_WINDOW_LOG_MAX; at most %d)",
                            gk_zstd_window_log_max(), ZSTD_dParam_getBounds(ZSTD_d_windowLogMax).upperBound);
    return gk_error_set(err, GK_E_CORRUPT, at, "zstd: %s", ZSTD_getErrorName(ret));
}

/* ------------------------------------------------------------------------ */
/* zstd                                                                     */
/* ------------------------------------------------------------------------ */

static void hist_drop(gk_source *s) {
    free(s->hist);
    s->hist = NULL;
    s->hist_len = s->hist_cap = 0;
    s->hist_frozen = false;
}

static gk_status zstd_start(gk_source *s, gk_error *err) {
    hist_drop(s);   /* a restart: the bytes come again */
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    s->raw_pos = 0;
    gk_status opened = s->http ? GK_OK : input_open(s->path, &s->fd, err);
    if (opened != GK_OK) return opened;
    if (s->ds == NULL && (s->ds = ZSTD_createDStream()) == NULL)
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    ZSTD_initDStream(s->ds);
    allow_window(s->ds);
    s->in_cap = ZSTD_DStreamInSize();
    if (s->in_buf == NULL && (s->in_buf = malloc(s->in_cap)) == NULL)
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    s->in = (ZSTD_inBuffer){ s->in_buf, 0, 0 };
    s->last_ret = 0;
    s->pos = 0;
    return GK_OK;
}

static gk_status zstd_pull(gk_source *s, void *dst, size_t len, size_t *got, gk_error *err) {
    ZSTD_outBuffer out = { dst, len, 0 };
    gk_error_clear(err);
    while (out.pos < out.size) {
        if (s->in.pos == s->in.size) {
            ssize_t n;
            if (s->http) {   /* the compressed bytes from the server, in order */
                size_t got;
                gk_status st = gk_http_read_some(s->http, s->raw_pos, s->in_buf, s->in_cap, 0, &got, err);
                if (st != GK_OK) break;
                s->raw_pos += got;
                n = (ssize_t)got;
            } else {
                n = read(s->fd, s->in_buf, s->in_cap);
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                gk_error_set(err, GK_E_IO, -1, "read failed: %s", strerror(errno));
                break;
            }
            if (n == 0) {
                if (s->last_ret != 0)
                    gk_error_set(err, GK_E_TRUNCATED, (int64_t)(s->pos + out.pos),
                                 "zstd stream ends inside a frame (compressed file truncated)");
                break;
            }
            s->in = (ZSTD_inBuffer){ s->in_buf, (size_t)n, 0 };
        }
        size_t ret = ZSTD_decompressStream(s->ds, &out, &s->in);
        if (ZSTD_isError(ret)) {
            zstd_error(err, (int64_t)(s->pos + out.pos), ret);
            break;
        }
        s->last_ret = ret;
    }
    *got = out.pos;   /* what came out before an error counts too */
    if (s->hist && s->hist_len == s->pos && s->hist_frozen) {
        hist_drop(s);   /* the reads have gone past the header's bytes */
    } else if (s->hist && s->hist_len == s->pos) {   /* kept while the header is read */
        if (out.pos > HIST_MAX - s->hist_len || !GK_GROW(s->hist, s->hist_cap, s->hist_len + out.pos, 1 << 20))
            hist_drop(s);
        else
            memcpy(s->hist + s->hist_len, dst, out.pos), s->hist_len += out.pos;
    }
    s->pos += out.pos;
    return err->code;
}

/* Reads exactly len bytes at off. @return : false at the end of the file or on an error. */
static bool pread_all(int fd, void *buf, size_t len, uint64_t off) {
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = pread(fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return true;
}

/* A compressed file being walked: a local file, or a URL read through buf in
 * large ranged reads (a frame's block headers lie at most 128 KiB apart, so
 * small reads would each cost a request). */
#define WALK_READ ((size_t)16 << 20)
typedef struct {
    int fd;
    gk_http *http;
    uint64_t size;
    uint8_t *buf;              /* URL: WALK_READ bytes, holding [buf_off, buf_off + buf_len) */
    uint64_t buf_off;
    size_t buf_len;
} raw_file;

/* Reads exactly len bytes (at most 32) at off of f. */
static gk_status raw_read(raw_file *f, void *buf, size_t len, uint64_t off, gk_error *err) {
    if (f->http == NULL) {
        if (pread_all(f->fd, buf, len, off)) return GK_OK;
        return gk_error_set(err, GK_E_IO, (int64_t)off, "read failed at compressed byte %llu", (unsigned long long)off);
    }
    if (off < f->buf_off || off + len > f->buf_off + f->buf_len) {
        if (f->buf == NULL && (f->buf = malloc(WALK_READ)) == NULL)
            return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        size_t want = f->size - off < WALK_READ ? (size_t)(f->size - off) : WALK_READ;
        f->buf_len = 0;
        /* The first read takes what the open's request brought (the frame
         * header may say to stop there); later ones fetch want in one request. */
        bool first = f->buf_len == 0 && f->buf_off == 0;
        gk_status st = gk_http_read_some(f->http, off, f->buf, want, first && len < want ? len : want, &f->buf_len, err);
        if (st != GK_OK) return st;
        f->buf_off = off;
        if (f->buf_len < len) return gk_error_set(err, GK_E_TRUNCATED, (int64_t)off, "data ends early");
    }
    memcpy(buf, f->buf + (off - f->buf_off), len);
    return GK_OK;
}

/* True when the n bytes at h open a zstd file: a zstd frame, or a skippable
 * frame (pzstd puts one before each frame, holding its compressed size). */
static bool zstd_opening(const uint8_t *h, size_t n) {
    return n >= 4 && (memcmp(h, zstd_magic, 4) == 0 || (gk_load_le32(h) & 0xFFFFFFF0u) == 0x184D2A50u);
}

/* Walks the frames of the zstd file f of size bytes by their headers (nothing
 * decompressed): *content gets the sum of the frames' recorded sizes, or
 * UINT64_MAX when one does not record it (with stop_unknown, the walk ends
 * there: the caller counts the bytes another way). The walk also stops, with
 * *partial set (when not NULL), as soon as the frames' recorded sizes reach
 * enough: *content is then a lower bound. @return : GK_OK, GK_E_TRUNCATED (the
 * file ends inside a frame), GK_E_CORRUPT, GK_E_IO. */
static gk_status walk_frames(raw_file *f, bool stop_unknown, uint64_t enough, bool *partial, uint64_t *content,
                             gk_error *err) {
    uint64_t at = 0, size = f->size;
    *content = 0;
    if (partial) *partial = false;
    while (at < size) {
        uint8_t head[ZSTD_FRAMEHEADERSIZE_MAX];
        size_t n = size - at < sizeof head ? (size_t)(size - at) : sizeof head;
        gk_status rs = raw_read(f, head, n, at, err);
        if (rs != GK_OK) return rs;
        uint32_t magic = gk_load_le32(head);
        if (n >= 8 && (magic & 0xFFFFFFF0u) == 0x184D2A50u) {   /* a skippable frame: magic, size, bytes */
            at += 8 + gk_load_le32(head + 4);
            continue;
        }
        ZSTD_frameHeader fh;
        size_t hs = ZSTD_getFrameHeader(&fh, head, n);
        if (ZSTD_isError(hs)) return gk_error_set(err, GK_E_CORRUPT, -1, "zstd: not a zstd frame at compressed byte %llu",
                                                  (unsigned long long)at);
        if (hs > 0) break;   /* the file ends inside a frame header */
        if (fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN || *content == UINT64_MAX) {
            *content = UINT64_MAX;
            if (stop_unknown) return GK_OK;
        } else *content += fh.frameContentSize;
        if (partial && *content != UINT64_MAX && *content >= enough) {
            *partial = true;
            return GK_OK;
        }
        at += fh.headerSize;
        for (bool last = false; !last && at < size;) {   /* block headers: 3 bytes each */
            uint8_t b[3];
            if (at + 3 > size) {
                at = size + 1;
                break;
            }
            gk_status rb = raw_read(f, b, 3, at, err);
            if (rb != GK_OK) return rb;
            uint32_t bh = gk_load_le24(b);
            unsigned type = (bh >> 1) & 3;
            last = bh & 1;
            if (type == 3) return gk_error_set(err, GK_E_CORRUPT, -1, "zstd: reserved block type at compressed byte %llu",
                                               (unsigned long long)at);
            at += 3 + (type == 1 ? 1 : bh >> 3);   /* an RLE block holds one byte */
            if (!last && at == size) at = size + 1;   /* more blocks to come */
        }
        if (fh.checksumFlag) at += 4;
        if (at > size) break;
    }
    if (at > size || (at < size))
        return gk_error_set(err, GK_E_TRUNCATED, -1,
                            "zstd stream ends inside a frame (compressed file truncated: %llu bytes, more needed)",
                            (unsigned long long)size);
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* Archives                                                                 */
/* ------------------------------------------------------------------------ */

/* Opens path with libarchive; on failure, why gets libarchive's reason. */
static struct archive *archive_open_path(const gk_archive_api *A, const char *path, char why[GK_MESSAGE_MAX]) {
    struct archive *a = A->archive_read_new();
    snprintf(why, GK_MESSAGE_MAX, "out of memory");
    if (a == NULL) return NULL;
    A->archive_read_support_filter_all(a);
    A->archive_read_support_format_all(a);
    int fd;   /* a FIFO would block libarchive's open: refused first */
    gk_error oerr;
    if (input_open(path, &fd, &oerr) != GK_OK) {
        snprintf(why, GK_MESSAGE_MAX, "%s", oerr.message);
        A->archive_read_free(a);
        return NULL;
    }
    close(fd);
    if (A->archive_read_open_filename(a, path, 64 * 1024) != ARCHIVE_OK) {
        const char *e = A->archive_error_string(a);
        snprintf(why, GK_MESSAGE_MAX, "%s", e ? e : "unknown error");
        A->archive_read_free(a);
        return NULL;
    }
    return a;
}

/* Positions s->ar at the member's data; *size gets its recorded size, or -1. */
static gk_status archive_seek_member(gk_source *s, int64_t *size, gk_error *err);

static gk_status archive_start(gk_source *s, gk_error *err) {
    int64_t size;
    return archive_seek_member(s, &size, err);
}

static gk_status archive_seek_member(gk_source *s, int64_t *size, gk_error *err) {
    const gk_archive_api *A = s->ar_api;
    if (s->ar) A->archive_read_free(s->ar);
    s->pos = 0;
    char why[GK_MESSAGE_MAX];
    s->ar = archive_open_path(A, s->path, why);
    if (s->ar == NULL) return gk_error_set(err, GK_E_CORRUPT, -1, "cannot read as an archive: %s", why);
    struct archive_entry *e;
    int rc;
    while ((rc = A->archive_read_next_header(s->ar, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
        const char *name = A->archive_entry_pathname(e);
        if (name && strcmp(name, s->member) == 0) {
            *size = A->archive_entry_size_is_set(e) ? (int64_t)A->archive_entry_size(e) : -1;
            return GK_OK;
        }
    }
    if (rc != ARCHIVE_EOF)
        return gk_error_set(err, GK_E_CORRUPT, -1, "archive: %s", A->archive_error_string(s->ar));
    return gk_error_set(err, GK_E_NOT_FOUND, -1, "archive has no member '%s'", s->member);
}

static gk_status archive_pull(gk_source *s, void *dst, size_t len, size_t *got, gk_error *err) {
    size_t done = 0;
    gk_error_clear(err);
    while (done < len) {
        /* In small calls: one that meets damage loses what it had copied. */
        size_t ask = len - done < ARCHIVE_CALL_BYTES ? len - done : ARCHIVE_CALL_BYTES;
        la_ssize_t n = s->ar_api->archive_read_data(s->ar, (uint8_t *)dst + done, ask);
        if (n < 0) {
            gk_error_set(err, GK_E_CORRUPT, (int64_t)(s->pos + done), "archive: %s", s->ar_api->archive_error_string(s->ar));
            break;
        }
        if (n == 0) break;
        done += (size_t)n;
    }
    *got = done;   /* what came out before an error counts too */
    s->pos += done;
    return err->code;
}

/* ------------------------------------------------------------------------ */
/* Common                                                                   */
/* ------------------------------------------------------------------------ */

static gk_status restart(gk_source *s, gk_error *err) {
    return s->kind == GK_SOURCE_ZSTD ? zstd_start(s, err) : archive_start(s, err);
}

/* Decompresses up to len bytes into dst: *got < len only where the data ends or
 * an error stops it (then returned, with *got the bytes that came before). */
static gk_status pull(gk_source *s, void *dst, size_t len, size_t *got, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    return s->kind == GK_SOURCE_ZSTD ? zstd_pull(s, dst, len, got, err) : archive_pull(s, dst, len, got, err);
}

/* Counts the decompressed bytes with one full pass, then restarts. A container
 * that cannot deliver more (it is cut short or damaged there) ends the count:
 * its bytes so far are the data, and s->ended says why it stopped. */
static gk_status measure(gk_source *s, uint64_t *size, gk_error *err) {
    size_t got;
    gk_error e;
    hist_drop(s);   /* a full pass: not kept */
    if (s->pos != 0 && restart(s, err) != GK_OK) return err->code;
    do {
        gk_status st = pull(s, s->scratch, SCRATCH_BYTES, &got, &e);
        if (st == GK_E_TRUNCATED || st == GK_E_CORRUPT) {   /* s->pos counts what came before */
            snprintf(s->ended, sizeof s->ended, "%s", e.message);
            break;
        }
        if (st != GK_OK) {
            *err = e;
            return st;
        }
    } while (got == SCRATCH_BYTES);
    *size = s->measured = s->pos;
    return restart(s, err);
}

/* Whether the archive holds all of the member's recorded bytes: its data skipped
 * (libarchive seeks over it in an uncompressed archive, decompresses through it
 * otherwise) and the next header read. A failure there may be the member's or a
 * later one's: the caller measures to tell. @return : true when surely whole. */
static bool archive_member_whole(gk_source *s) {
    const gk_archive_api *A = s->ar_api;
    if (s->pos != 0) return false;
    if (A->archive_read_data_skip(s->ar) != ARCHIVE_OK) return false;
    struct archive_entry *e;
    int rc = A->archive_read_next_header(s->ar, &e);
    return rc == ARCHIVE_OK || rc == ARCHIVE_WARN || rc == ARCHIVE_EOF;
}

gk_status gk_source_check_whole(gk_source *s, uint64_t *size, gk_error *err) {
    if (s->kind == GK_SOURCE_HTTP) return GK_OK;   /* the server gave the size */
    if (s->lazy) return GK_OK;   /* a URL's stream: not checked (that would read all of it) */
    if (s->ended[0] != '\0') return GK_OK;   /* measured already, short */
    bool whole;
    if (s->kind == GK_SOURCE_ZSTD) {
        whole = !s->cut_seen;
    } else {
        if (s->recorded == UINT64_MAX) return GK_OK;   /* measured when opened */
        if (s->pos != 0 && restart(s, err) != GK_OK) return err->code;
        whole = archive_member_whole(s);
        gk_status st = restart(s, err);
        if (st != GK_OK) return st;
    }
    return whole ? GK_OK : gk_source_measure(s, size, err);
}

gk_status gk_source_measure(gk_source *s, uint64_t *size, gk_error *err) {
    if (s->kind == GK_SOURCE_HTTP) {   /* the server gave the size: nothing to count */
        *size = s->recorded;
        return GK_OK;
    }
    uint64_t real, recorded;
    gk_status st = measure(s, &real, err);
    /* A lazily sized stream read whole is sized; one that ended early gets
     * its recorded size (the frames walked) for the warning. */
    if (st == GK_OK && s->lazy && s->ended[0] == '\0') s->lazy = false;
    if (st == GK_OK && s->lazy) st = gk_source_settle(s, &recorded, err);
    if (st == GK_OK) *size = real < s->recorded ? real : s->recorded;
    return st;
}

bool gk_source_short(const gk_source *s, char *msg, size_t size) {
    if (s->ended[0] == '\0') return false;
    if (s->recorded != UINT64_MAX)
        snprintf(msg, size, "the data ends after %llu of the %llu bytes its container records (%s)",
                 (unsigned long long)s->measured, (unsigned long long)s->recorded, s->ended);
    else
        snprintf(msg, size, "the data ends after %llu bytes (%s)", (unsigned long long)s->measured, s->ended);
    return true;
}

void gk_source_hint(gk_source *s, uint64_t off, uint64_t len) {
    if (s && s->kind == GK_SOURCE_HTTP) gk_http_hint(s->http, off, len);
}

void gk_source_header_done(gk_source *s) {
    if (s) s->hist_frozen = true;   /* the first data read may start behind the stream */
    if (s && s->http) gk_http_header_done(s->http);   /* also a .zst stream's compressed bytes */
}

gk_status gk_source_read(gk_source *s, uint64_t off, void *buf, size_t len, gk_error *err) {
    size_t got;
    return gk_source_read_some(s, off, buf, len, len, &got, err);
}

static gk_status read_some(gk_source *s, uint64_t off, void *buf, size_t len, size_t min, size_t *got,
                           gk_error *err);

bool gk_source_borrow(gk_source *s, uint64_t off, size_t len, const uint8_t **data, size_t *avail,
                      const void **lease) {
    return s->kind == GK_SOURCE_HTTP && gk_http_borrow(s->http, off, len, data, avail, lease);
}

void gk_source_release(gk_source *s, const void *lease) {
    if (lease != NULL && s->kind == GK_SOURCE_HTTP) gk_http_release(s->http, lease);
}

gk_status gk_source_read_some(gk_source *s, uint64_t off, void *buf, size_t len, size_t min, size_t *got,
                              gk_error *err) {
    gk_status st = read_some(s, off, buf, len, min, got, err);
    if (s->lazy && s->pos > s->known) s->known = s->pos;   /* bytes that came out exist */
    return st;
}

static gk_status read_some(gk_source *s, uint64_t off, void *buf, size_t len, size_t min, size_t *got,
                           gk_error *err) {
    gk_status st;
    size_t kept = 0;   /* bytes from the header's bytes kept (s->hist) */
    *got = 0;
    if (s->kind == GK_SOURCE_HTTP) return gk_http_read_some(s->http, off, buf, len, min, got, err);
    if (s->hist && off < s->pos && s->hist_len == s->pos) {   /* behind: no restart */
        kept = s->pos - off < len ? (size_t)(s->pos - off) : len;
        memcpy(buf, s->hist + off, kept);
        if (kept == len) {
            *got = len;
            return GK_OK;
        }
    } else if (off < s->pos && (st = restart(s, err)) != GK_OK) {
        return st;
    }
    while (s->pos < off) {
        uint64_t gap = off - s->pos;
        size_t n = gap > SCRATCH_BYTES ? SCRATCH_BYTES : (size_t)gap, got;
        if ((st = pull(s, s->scratch, n, &got, err)) != GK_OK) return st;
        if (got < n) return gk_error_set(err, GK_E_TRUNCATED, (int64_t)s->pos, "data ends early");
    }
    st = pull(s, (uint8_t *)buf + kept, len - kept, got, err);
    *got += kept;
    if (*got >= min) return GK_OK;   /* enough, even if the data ends (or breaks) after it */
    if (st != GK_OK) return st;
    return gk_error_set(err, GK_E_TRUNCATED, (int64_t)(off + *got), "data ends early (%zu of %zu bytes)", *got,
                        len);
}

static gk_source *source_new(gk_source_kind kind, const char *path, const char *member) {
    gk_source *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->kind = kind;
    s->fd = -1;
    s->recorded = UINT64_MAX;
    s->path = strdup(path);
    s->member = member ? strdup(member) : NULL;
    s->scratch = malloc(SCRATCH_BYTES);
    if (s->path == NULL || s->scratch == NULL || (member && s->member == NULL)) {
        gk_source_close(s);
        return NULL;
    }
    return s;
}

/* The size of a zstd source from walk_frames' result: the frames' recorded sum
 * (a cut file keeps its record: GK_OPEN_MEASURE or gk_source_check_whole finds
 * the rest), else one full pass counts the bytes. */
static gk_status size_from_walk(gk_source *s, gk_status walked, uint64_t content, uint64_t *size, gk_error *err) {
    if ((walked == GK_OK || walked == GK_E_TRUNCATED) && content != UINT64_MAX) {
        *size = s->recorded = content;
        s->cut_seen = walked == GK_E_TRUNCATED;
        return GK_OK;
    }
    return measure(s, size, err);
}

/* Hands out s when st is GK_OK, else closes it. @return : st. */
static gk_status open_done(gk_source *s, gk_status st, gk_source **out) {
    if (st != GK_OK) gk_source_close(s);
    else *out = s;
    return st;
}

gk_status gk_source_open_zstd(const char *path, gk_source **out, uint64_t *size, gk_error *err) {
    *out = NULL;
    gk_source *s = source_new(GK_SOURCE_ZSTD, path, NULL);
    if (s == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status st = zstd_start(s, err);
    if (st == GK_OK) {
        /* The size is the sum of every frame's (pzstd and concatenated files have
         * several), when they all record one; else one pass counts the bytes. */
        uint8_t head[4];
        uint64_t content = UINT64_MAX;
        gk_error walk_err;
        struct stat sb;
        raw_file f = { .fd = s->fd };
        gk_status walked = GK_E_IO;
        if (fstat(s->fd, &sb) != 0) gk_error_set(&walk_err, GK_E_IO, -1, "cannot stat: %s", strerror(errno));
        else f.size = (uint64_t)sb.st_size, walked = walk_frames(&f, false, UINT64_MAX, NULL, &content, &walk_err);
        if (pread(s->fd, head, 4, 0) == 4 && !zstd_opening(head, 4))
            st = gk_error_set(err, GK_E_CORRUPT, 0, "not a zstd stream");
        else
            st = size_from_walk(s, walked, content, size, err);
    }
    return open_done(s, st, out);
}

gk_status gk_source_open_member(const char *path, const char *member, gk_source **out,
                                uint64_t *size, gk_error *err) {
    *out = NULL;
    const gk_archive_api *A = gk_archive_api_load(err);
    if (A == NULL) return GK_E_UNSUPPORTED;
    gk_source *s = source_new(GK_SOURCE_ARCHIVE, path, member);
    if (s == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    s->ar_api = A;
    int64_t recorded;
    gk_status st = archive_seek_member(s, &recorded, err);
    if (st == GK_OK && recorded >= 0) *size = s->recorded = (uint64_t)recorded;
    else if (st == GK_OK) st = measure(s, size, err);
    return open_done(s, st, out);
}

void gk_source_close(gk_source *s) {
    if (s == NULL) return;
    if (s->fd >= 0) close(s->fd);
    if (s->ds) ZSTD_freeDStream(s->ds);
    if (s->ar) s->ar_api->archive_read_free(s->ar);
    gk_http_close(s->http);
    free(s->hist);
    free(s->in_buf);
    free(s->scratch);
    free(s->path);
    free(s->member);
    free(s);
}

/* ------------------------------------------------------------------------ */
/* Classification and listing                                               */
/* ------------------------------------------------------------------------ */

static bool is_gguf_magic(const uint8_t *p) {
    return memcmp(p, "GGUF", 4) == 0 || memcmp(p, "FUGG", 4) == 0;
}

bool gk_source_zstd_first_bytes(const char *path, uint8_t first[4]) {
    int fd;
    if (input_open(path, &fd, NULL) != GK_OK) return false;
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    if (dc) allow_window(dc);
    uint8_t buf[16384];
    ZSTD_outBuffer out = { first, 4, 0 };
    uint64_t fed = 0;
    while (dc && out.pos < 4 && fed < (64u << 20)) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        fed += (uint64_t)n;
        ZSTD_inBuffer in = { buf, (size_t)n, 0 };
        while (in.pos < in.size && out.pos < 4)
            if (ZSTD_isError(ZSTD_decompressStream(dc, &out, &in))) goto done;
    }
done:
    ZSTD_freeDCtx(dc);
    close(fd);
    return out.pos == 4;
}

gk_status gk_source_zstd_check_frames(const char *path, gk_error *err) {
    int fd;
    gk_status opened = input_open(path, &fd, err);
    if (opened != GK_OK) return opened;
    uint64_t content;
    struct stat sb;
    raw_file f = { .fd = fd };
    gk_status st = GK_E_IO;
    if (fstat(fd, &sb) != 0) gk_error_set(err, GK_E_IO, -1, "cannot stat: %s", strerror(errno));
    else f.size = (uint64_t)sb.st_size, st = walk_frames(&f, false, UINT64_MAX, NULL, &content, err);
    close(fd);
    return st;
}

gk_source_kind gk_source_sniff(const char *path) { return gk_source_sniff_magic(path, NULL); }

gk_source_kind gk_source_sniff_magic(const char *path, gk_source_magic *magic) {
    gk_source_magic seen;
    if (magic == NULL) magic = &seen;
    *magic = GK_MAGIC_OTHER;
    int fd;
    if (input_open(path, &fd, NULL) != GK_OK) return GK_SOURCE_PLAIN;   /* the open proper says why */
    uint8_t h[512];
    ssize_t n = pread(fd, h, sizeof h, 0);
    close(fd);
    if (n < 4) return GK_SOURCE_PLAIN;
    if (is_gguf_magic(h)) {
        *magic = GK_MAGIC_GGUF;
        return GK_SOURCE_PLAIN;
    }
    if (zstd_opening(h, (size_t)n)) {
        *magic = GK_MAGIC_ZSTD;
        /* A zstd stream of a GGUF file, or a .tar.zst: look at what it holds. */
        uint8_t first[4];
        return gk_source_zstd_first_bytes(path, first) && !is_gguf_magic(first) ? GK_SOURCE_ARCHIVE : GK_SOURCE_ZSTD;
    }
    static const struct { size_t off, len; const char *magic; } archives[] = {
        { 0, 2, "\x1f\x8b" }, { 0, 6, "\xfd" "7zXZ\0" }, { 0, 3, "BZh" }, { 0, 4, "PK\x03\x04" },
        { 0, 6, "7z\xbc\xaf\x27\x1c" }, { 257, 5, "ustar" },
    };
    for (size_t i = 0; i < sizeof archives / sizeof archives[0]; i++)
        if ((size_t)n >= archives[i].off + archives[i].len &&
            memcmp(h + archives[i].off, archives[i].magic, archives[i].len) == 0)
            return GK_SOURCE_ARCHIVE;
    return GK_SOURCE_PLAIN;
}

gk_status gk_archive_list(const char *path, gk_member_fn fn, void *ctx, gk_error *err) {
    const gk_archive_api *A = gk_archive_api_load(err);
    if (A == NULL) return GK_E_UNSUPPORTED;
    char why[GK_MESSAGE_MAX];
    struct archive *a = archive_open_path(A, path, why);
    if (a == NULL) return gk_error_set(err, GK_E_CORRUPT, -1, "cannot read as an archive: %s", why);
    struct archive_entry *e;
    int rc;
    gk_status st = GK_OK;
    while ((rc = A->archive_read_next_header(a, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
        /* A member without a name (a damaged zip can have one) cannot be named
         * as ARCHIVE::MEMBER: it is not listed. */
        if (A->archive_entry_filetype(e) != AE_IFREG || A->archive_entry_pathname(e) == NULL) continue;
        uint8_t magic[4];
        la_ssize_t n = A->archive_read_data(a, magic, sizeof magic);
        if (n == 4 && is_gguf_magic(magic)) {
            uint64_t size = A->archive_entry_size_is_set(e) ? (uint64_t)A->archive_entry_size(e) : 0;
            if (!fn(ctx, A->archive_entry_pathname(e), size)) break;
        }
    }
    if (rc != ARCHIVE_EOF && rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
        st = gk_error_set(err, GK_E_CORRUPT, -1, "archive: %s", A->archive_error_string(a));
    A->archive_read_free(a);
    return st;
}

gk_source_kind gk_source_get_kind(const gk_source *s) { return s->kind; }

bool gk_source_is_remote(const gk_source *s) { return s != NULL && s->http != NULL; }

void gk_source_identity(const gk_source *s, char *buf, size_t size) {
    if (s && s->http) gk_http_identity(s->http, buf, size);
    else if (size) buf[0] = '\0';
}

/* ------------------------------------------------------------------------ */
/* Remote files                                                             */
/* ------------------------------------------------------------------------ */

/* Sizes the zstd stream behind s's URL by walking its frame and block headers
 * (ranged reads of 16 MiB, nothing decompressed). With enough below UINT64_MAX
 * the walk stops as soon as the frames' recorded sizes reach it, or at a frame
 * that records none (pzstd's): the source is then sized lazily (s->lazy),
 * knowing only that s->known bytes exist, and *size is that lower bound. Else,
 * or when the walk ends first, the size is size_from_walk's, exact. */
static gk_status remote_size(gk_source *s, uint64_t enough, uint64_t *size, gk_error *err) {
    uint64_t content = UINT64_MAX;
    bool partial;
    gk_error walk_err;
    raw_file f = { .fd = -1, .http = s->http, .size = s->raw_size };
    gk_status walked = walk_frames(&f, true, enough, &partial, &content, &walk_err);
    free(f.buf);
    if (walked == GK_E_IO || walked == GK_E_NOT_FOUND) return (*err = walk_err).code;
    if (enough != UINT64_MAX && walked == GK_OK && (partial || content == UINT64_MAX)) {
        if (!s->lazy && s->pos == 0 && (s->hist = malloc(1 << 20)) != NULL) s->hist_cap = 1 << 20;
        s->lazy = true;
        if (partial && content > s->known) s->known = content;
        *size = s->known;
        return GK_OK;
    }
    s->lazy = false;
    hist_drop(s);
    return size_from_walk(s, walked, content, size, err);
}

gk_status gk_source_extend(gk_source *s, uint64_t want, uint64_t *size, gk_error *err) {
    if (!s->lazy) return GK_OK;
    if (want > s->known) {
        /* Decompress on from where the stream stands, a little past want (the
         * known size doubles, by at most LAZY_STEP) so that the next checks do
         * not each come back; a later read behind it is served from the
         * header's bytes kept (s->hist), or restarts the stream. */
        uint64_t step = s->known < LAZY_STEP ? s->known : LAZY_STEP;
        uint64_t target = UINT64_MAX - s->known < step ? UINT64_MAX : s->known + step;
        if (target < want) target = want;
        while (s->pos < target) {
            size_t n = target - s->pos > SCRATCH_BYTES ? SCRATCH_BYTES : (size_t)(target - s->pos), got;
            gk_error e;
            gk_status st = pull(s, s->scratch, n, &got, &e);
            if (s->pos > s->known) s->known = s->pos;
            if (st != GK_OK && st != GK_E_TRUNCATED && st != GK_E_CORRUPT) {   /* the network, memory */
                *err = e;
                return st;
            }
            if (st != GK_OK || got < n) break;   /* the stream ends or breaks first */
        }
        /* Fewer bytes than asked: the exact size, as a local file gets it. */
        if (s->known < want) return gk_source_settle(s, size, err);
    }
    if (s->known > *size) *size = s->known;
    return GK_OK;
}

gk_status gk_source_settle(gk_source *s, uint64_t *size, gk_error *err) {
    if (!s->lazy) return GK_OK;
    return remote_size(s, UINT64_MAX, size, err);
}

bool gk_source_size_provisional(const gk_source *s) { return s != NULL && s->lazy; }

gk_status gk_source_open_url(const char *url, gk_source **out, uint64_t *size, gk_error *err) {
    *out = NULL;
    gk_http *h;
    uint64_t file_size;
    gk_status st = gk_http_open(url, &h, &file_size, err);
    if (st != GK_OK) return st;
    uint8_t head[ZSTD_FRAMEHEADERSIZE_MAX];
    size_t got = 0;
    st = gk_http_read_some(h, 0, head, sizeof head, 0, &got, err);
    bool zstd = st == GK_OK && zstd_opening(head, got);
    gk_source *s = st == GK_OK ? source_new(zstd ? GK_SOURCE_ZSTD : GK_SOURCE_HTTP, url, NULL) : NULL;
    if (st == GK_OK && s == NULL) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (st != GK_OK) {
        gk_http_close(h);
        return st;
    }
    s->http = h;
    s->raw_size = file_size;
    if (!zstd) {
        *size = s->recorded = file_size;
    } else if ((st = zstd_start(s, err)) == GK_OK) {
        /* The size of a local file is the sum of every frame's recorded size,
         * but where a frame ends is known only from its block headers, so the
         * sum costs a read of the whole compressed file. A URL's stream is
         * sized lazily instead: its first frame's recorded size (none for
         * pzstd's) is only a lower bound (more frames may follow), and
         * gk_source_extend learns more, by decompressing, when a check of the
         * header reader needs it; the exact size (gk_source_settle) is the
         * walk of every frame, when a command needs the end. */
        st = remote_size(s, 1, size, err);
    }
    return open_done(s, st, out);
}
