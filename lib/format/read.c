/*
 * read.c - the parser: reads and validates a GGUF header (magic, version, byte
 * order, every key/value pair, the tensor directory and the placement of tensor
 * data) of an opened gk_file into its model. Opening the file, and the routing
 * of compressed files and archive members, is format/file.c's.
 *
 * The parser reads through a small window over the source (a pread'd buffer, or
 * the whole buffer for memory sources), so it never reads tensor data and never
 * trusts a count: every count and length is checked against the bytes that remain
 * before anything is allocated. Each failure names what was being read and the
 * byte offset where it starts. What the spec allows but a popular reader refuses
 * (or the reverse) becomes a warning on the file, not an error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "format/file.h"
#include "io/source.h"
#include "types/fp16.h"
#include "util/strset.h"
#include "util/grow.h"

#define WINDOW_BYTES (64 * 1024)
#define CTX_MAX 200

typedef struct reader {
    gk_file *f;
    gk_error *err;
    unsigned flags;
    const uint8_t *win;        /* bytes [win_start, win_start + win_len) of the source */
    uint64_t win_start;
    size_t win_len;
    uint8_t *buf;              /* window storage for file sources */
    uint64_t pos;              /* absolute read position */
    bool swap;                 /* file byte order differs from the host's */
    uint32_t version;
    char ctx[CTX_MAX];         /* what is being read: "key 'x'", "tensor 'y'" */
    int64_t elem;              /* array element being read, or -1 */
    uint64_t strings_at;       /* where the string array being read starts */
    bool lazy;                 /* the size is a lower bound (gk_source_size_provisional) */
} reader;

static uint64_t remaining(const reader *r) { return r->f->size - r->pos; }

/* For a lazily sized stream (a .gguf.zst behind a URL), makes the size known
 * as far as n bytes past the read position when they exist, so that a check
 * against remaining() fails only where the file really is shorter (with the
 * size a local file would have). @return : GK_OK, or what stopped the source. */
static gk_status learn(reader *r, uint64_t n) {
    if (!r->lazy || n <= remaining(r)) return GK_OK;
    uint64_t want = UINT64_MAX - r->pos < n ? UINT64_MAX : r->pos + n;
    gk_status st = gk_source_extend(r->f->stream, want, &r->f->size, r->err);
    r->lazy = gk_source_size_provisional(r->f->stream);
    return st;
}

static gk_status fail(reader *r, gk_status code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Makes n bytes at the read position available; n <= WINDOW_BYTES. A lazily
 * sized stream proves them by reading them (no check ahead), and is sized
 * exactly only when they are not there. */
static gk_status need(reader *r, size_t n, const uint8_t **out, const char *what) {
    if (!r->lazy && n > remaining(r))
        return fail(r, GK_E_TRUNCATED, r->pos, "%s: file ends inside it (%zu bytes needed, %llu left)",
                    what, n, (unsigned long long)remaining(r));
    if (r->pos < r->win_start || r->pos + n > r->win_start + r->win_len) {
        size_t len = WINDOW_BYTES;
        if (!r->lazy && len > remaining(r)) len = (size_t)remaining(r);
        /* A stream cut short may hold the header whole but not the window's end. */
        gk_status st = r->f->stream ? gk_source_read_some(r->f->stream, r->pos, r->buf, len, n, &len, r->err)
                                    : gk_file_source_read(r->f, r->pos, r->buf, len, r->err);
        if (r->lazy) {   /* what came out exists; what did not may be a cut file: sized exactly */
            gk_status ls = st == GK_OK ? gk_source_extend(r->f->stream, 0, &r->f->size, r->err)
                                       : learn(r, n);
            if (ls != GK_OK) return ls;
            if (st != GK_OK && n > remaining(r))
                return fail(r, GK_E_TRUNCATED, r->pos, "%s: file ends inside it (%zu bytes needed, %llu left)",
                            what, n, (unsigned long long)remaining(r));
        }
        if (st != GK_OK) return st;
        r->win = r->buf;
        r->win_start = r->pos;
        r->win_len = len;
    }
    *out = r->win + (r->pos - r->win_start);
    r->pos += n;
    return GK_OK;
}

/* Tells the source that at least the len bytes from the read position will be
 * read next (a remote source fetches them in one request); bytes already in
 * the window need no telling. */
static void hint(reader *r, uint64_t len) {
    if (r->f->stream && r->pos + len > r->win_start + r->win_len) gk_source_hint(r->f->stream, r->pos, len);
}

/* The hint for strings i..n-1 of the array being read: each takes its length
 * field, and (a guess, not a certainty) three quarters of the average length
 * of the strings before it, so that a long vocabulary takes a few requests
 * instead of one per grid chunk. Later tokens of a vocabulary are rarely
 * shorter than the first ones: the guess stays inside the array. */
static void hint_strings(reader *r, uint64_t i, uint64_t n, size_t cb) {
    uint64_t per = cb;
    if (i > 0 && r->pos > r->strings_at) {
        uint64_t avg = (r->pos - r->strings_at) / i;
        if (avg > cb) per += (avg - cb) * 3 / 4;
    }
    if (per > remaining(r) / (n - i)) per = remaining(r) / (n - i);
    hint(r, (n - i) * per);
}

/* Copies n bytes (any size) from the read position into dst. */
static gk_status read_into(reader *r, void *dst, uint64_t n, const char *what) {
    uint8_t *p = dst;
    hint(r, n);
    while (n > 0) {
        size_t chunk = n > WINDOW_BYTES ? WINDOW_BYTES : (size_t)n;
        const uint8_t *src = NULL;
        gk_status st = need(r, chunk, &src, what);
        if (st != GK_OK) return st;
        memcpy(p, src, chunk);
        p += chunk;
        n -= chunk;
    }
    return GK_OK;
}

static gk_status rd_u32(reader *r, uint32_t *v, const char *what) {
    const uint8_t *p = NULL;
    gk_status st = need(r, 4, &p, what);
    if (st != GK_OK) return st;
    memcpy(v, p, 4);
    if (r->swap) *v = gk_bswap32(*v);
    return GK_OK;
}

static gk_status rd_u64(reader *r, uint64_t *v, const char *what) {
    const uint8_t *p = NULL;
    gk_status st = need(r, 8, &p, what);
    if (st != GK_OK) return st;
    memcpy(v, p, 8);
    if (r->swap) *v = gk_bswap64(*v);
    return GK_OK;
}

/* A count or length: 32 bits in GGUF v1, 64 bits after. */
static gk_status rd_count(reader *r, uint64_t *v, const char *what) {
    if (r->version == 1) {
        uint32_t c = 0;
        gk_status st = rd_u32(r, &c, what);
        *v = c;
        return st;
    }
    return rd_u64(r, v, what);
}

static size_t count_bytes(const reader *r) { return r->version == 1 ? 4 : 8; }

static gk_status fail(reader *r, gk_status code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static gk_status fail(reader *r, gk_status code, uint64_t offset, const char *fmt, ...) {
    char msg[GK_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->ctx[0] && r->elem >= 0)
        return gk_error_set(r->err, code, (int64_t)offset, "%s: element %lld: %s", r->ctx,
                            (long long)r->elem, msg);
    if (r->ctx[0]) return gk_error_set(r->err, code, (int64_t)offset, "%s: %s", r->ctx, msg);
    return gk_error_set(r->err, code, (int64_t)offset, "%s", msg);
}

static void set_ctx(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_ctx(reader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->ctx, sizeof r->ctx, fmt, ap);
    va_end(ap);
}

/* Checks that n items of at least min_bytes each fit in what remains. */
static gk_status check_count(reader *r, uint64_t n, uint64_t min_bytes, uint64_t at,
                             const char *what) {
    gk_status st = min_bytes == 0 ? GK_OK : learn(r, n > UINT64_MAX / min_bytes ? UINT64_MAX : n * min_bytes);
    if (st != GK_OK) return st;
    if (min_bytes > 0 && n > remaining(r) / min_bytes)
        return fail(r, GK_E_COUNT, at,
                    "%s %llu needs at least %llu bytes per item but only %llu bytes remain",
                    what, (unsigned long long)n, (unsigned long long)min_bytes,
                    (unsigned long long)remaining(r));
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* Strings and values                                                       */
/* ------------------------------------------------------------------------ */

/* Reads a string's length and checks it against the remaining bytes. */
static gk_status rd_str_len(reader *r, uint64_t *len, const char *what) {
    uint64_t at = r->pos;
    gk_status st = rd_count(r, len, what);
    if (st == GK_OK) st = learn(r, *len);
    if (st != GK_OK) return st;
    if (*len > remaining(r))
        return fail(r, GK_E_COUNT, at, "%s length %llu runs past end of file (%llu bytes left)",
                    what, (unsigned long long)*len, (unsigned long long)remaining(r));
    if (*len >= SIZE_MAX / 2) return fail(r, GK_E_STRING_TOO_LONG, at, "%s too long", what);
    return GK_OK;
}

/* Reads a string into a new NUL-terminated allocation. */
static gk_status rd_str(reader *r, gk_str *out, const char *what) {
    uint64_t len;
    gk_status st = rd_str_len(r, &len, what);
    if (st != GK_OK) return st;
    char *p = malloc(len + 1);
    if (p == NULL) return fail(r, GK_E_NOMEM, r->pos, "out of memory for %s", what);
    st = read_into(r, p, len, what);
    if (st != GK_OK) {
        free(p);
        return st;
    }
    p[len] = '\0';
    out->ptr = p;
    out->len = len;
    return GK_OK;
}

static void warn_bad_utf8(reader *r, uint64_t at, const char *what) {
    r->f->bad_utf8 = true;
    gk_file_add_warning(r->f, GK_RULE_PYTHON, (int64_t)at,
                        "%s: %s is not valid UTF-8 (the gguf python reader cannot decode it)",
                        r->ctx, what);
}

/* The warning for element k of a string array (its length at offset at). */
static void warn_bad_element(reader *r, uint64_t at, uint64_t k) {
    char what[40];
    snprintf(what, sizeof what, "element %llu", (unsigned long long)k);
    warn_bad_utf8(r, at, what);
}

static gk_status rd_value(reader *r, gk_vtype type, gk_value *out, int depth);

/* Reads a scalar of type t (not STR/ARR) into out. */
static gk_status rd_scalar(reader *r, gk_vtype t, gk_value *out) {
    const uint8_t *p = NULL;
    size_t n = gk_vtype_size(t);
    uint64_t at = r->pos;
    gk_status st = need(r, n, &p, gk_vtype_name(t));
    if (st != GK_OK) return st;
    uint8_t b[8];
    memcpy(b, p, n);
    if (r->swap) {
        for (size_t i = 0; i < n / 2; i++) {
            uint8_t tmp = b[i];
            b[i] = b[n - 1 - i];
            b[n - 1 - i] = tmp;
        }
    }
    out->type = t;
    switch (t) {
    case GK_V_U8: out->u = b[0]; break;
    case GK_V_I8: out->i = (int8_t)b[0]; break;
    case GK_V_U16: { uint16_t v; memcpy(&v, b, 2); out->u = v; break; }
    case GK_V_I16: { int16_t v; memcpy(&v, b, 2); out->i = v; break; }
    case GK_V_U32: { uint32_t v; memcpy(&v, b, 4); out->u = v; break; }
    case GK_V_I32: { int32_t v; memcpy(&v, b, 4); out->i = v; break; }
    case GK_V_U64: { uint64_t v; memcpy(&v, b, 8); out->u = v; break; }
    case GK_V_I64: { int64_t v; memcpy(&v, b, 8); out->i = v; break; }
    case GK_V_F32: { float v; memcpy(&v, b, 4); out->f = v; break; }
    case GK_V_F64: { double v; memcpy(&v, b, 8); out->f = v; break; }
    case GK_V_BOOL:
        if (b[0] > 1) return fail(r, GK_E_BOOL, at, "bool value %u is neither 0 nor 1", b[0]);
        out->b = b[0] != 0;
        break;
    default: return fail(r, GK_E_VALUE_TYPE, at, "internal: not a scalar type %d", (int)t);
    }
    return GK_OK;
}

/* Array of numbers or bools: one packed block, swapped to host order. */
static gk_status rd_number_array(reader *r, gk_vtype elem, uint64_t n, gk_value *out) {
    size_t es = gk_vtype_size(elem);
    uint64_t at = r->pos;
    uint8_t *data = NULL;
    if (n > 0) {
        data = malloc(n * es);
        if (data == NULL) return fail(r, GK_E_NOMEM, at, "out of memory for %llu elements", (unsigned long long)n);
        gk_status st = read_into(r, data, n * es, "array elements");
        if (st != GK_OK) {
            free(data);
            return st;
        }
    }
    if (r->swap && es > 1) {
        for (uint64_t i = 0; i < n; i++) {
            uint8_t *e = data + i * es;
            for (size_t k = 0; k < es / 2; k++) {
                uint8_t tmp = e[k];
                e[k] = e[es - 1 - k];
                e[es - 1 - k] = tmp;
            }
        }
    }
    if (elem == GK_V_BOOL) {
        for (uint64_t i = 0; i < n; i++) {
            if (data[i] > 1) {
                gk_status st = fail(r, GK_E_BOOL, at + i, "element %llu: bool value %u is neither 0 nor 1",
                                    (unsigned long long)i, data[i]);
                free(data);
                return st;
            }
        }
    }
    out->arr.data = data;
    return GK_OK;
}

/* The fast path of rd_string_array: takes strings i, i+1, ... while each one
 * (length and bytes) lies wholly inside the read window and fits the block's
 * capacity, the usual case for vocabularies of short tokens; the general path
 * reads the others and reports every failure. Without keep, only the bytes are
 * gathered (for their UTF-8 check), no entries. cb (length bytes), swap and
 * keep are constants in each expansion, so the loop carries no test of them.
 * @return : the next index. */
static inline __attribute__((always_inline)) uint64_t
take_strings(const uint8_t **pp, const uint8_t *end, uint8_t *block, size_t cap, size_t *used_io,
             uint64_t i, uint64_t n, const size_t cb, const bool swap, const bool keep) {
    const uint8_t *p = *pp;
    gk_str *items = (gk_str *)block;
    char *bytes = (char *)block;
    size_t used = *used_io;
    while (i < n && (size_t)(end - p) >= cb) {
        uint64_t len;
        if (cb == 8) {
            memcpy(&len, p, 8);
            if (swap) len = gk_bswap64(len);
        } else {
            uint32_t l32;
            memcpy(&l32, p, 4);
            len = swap ? gk_bswap32(l32) : l32;
        }
        uint64_t avail = (uint64_t)(end - p) - cb;
        if (len > avail || len + 1 > cap - used) break;
        if (len < 16 && avail >= 16 && cap - used >= 16)
            memcpy(bytes + used, p + cb, 16);   /* a short token: one fixed-size copy, its tail overwritten later */
        else
            memcpy(bytes + used, p + cb, (size_t)len);
        bytes[used + len] = '\0';
        if (keep) {
            items[i].ptr = (const char *)(uintptr_t)used;   /* an offset into block */
            items[i].len = len;
        }
        used += (size_t)len + 1;
        p += cb + len;
        i++;
    }
    *pp = p;
    *used_io = used;
    return i;
}

/* take_strings over the read window; keep is a constant at each call site. */
static inline __attribute__((always_inline)) uint64_t
take_window_strings(reader *r, uint8_t *block, size_t cap, size_t *used_io, uint64_t i, uint64_t n, const bool keep) {
    uint64_t win_end = r->win_start + r->win_len;
    if (r->pos < r->win_start || r->pos > win_end) return i;
    const uint8_t *p = r->win + (r->pos - r->win_start), *end = r->win + r->win_len;
    if (r->version == 1)
        i = take_strings(&p, end, block, cap, used_io, i, n, 4, r->swap, keep);
    else if (r->swap)
        i = take_strings(&p, end, block, cap, used_io, i, n, 8, true, keep);
    else
        i = take_strings(&p, end, block, cap, used_io, i, n, 8, false, keep);
    r->pos = r->win_start + (uint64_t)(p - r->win);
    return i;
}

/* Asks the kernel to map the whole pages of [p, p + len) at once, cheaper than
 * a fault on each first write; only worth it for large ranges. */
static void prefault(void *p, size_t len) {
#ifdef MADV_POPULATE_WRITE
    const uintptr_t page = 4096;
    if (len < 16 * page) return;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)len;
#endif
}

/* Array of strings, read straight into the single-block form: gk_str[n] at the
 * front, the bytes after it. The block grows as it fills, so entries hold
 * offsets into it until it stops moving. */
static gk_status rd_string_array(reader *r, uint64_t n, gk_value *out) {
    if (n == 0) return GK_OK;
    size_t cb = count_bytes(r);
    size_t head = (size_t)n * sizeof(gk_str), used = head;
    size_t cap = head + 4096;
    uint8_t *block = malloc(cap);
    if (block == NULL) return fail(r, GK_E_NOMEM, r->pos, "out of memory for %llu strings", (unsigned long long)n);
    prefault(block, head);
    gk_status st = GK_OK;
    uint64_t first_at = r->pos;
    r->strings_at = first_at;
    for (uint64_t i = 0; i < n; i++) {
        i = take_window_strings(r, block, cap, &used, i, n, true);
        if (i == n) break;
        uint64_t at = r->pos, len;
        r->elem = (int64_t)i;
        hint_strings(r, i, n, cb);   /* past the window: what the strings left take */
        if ((st = rd_str_len(r, &len, "string")) != GK_OK) break;
        if (used + len + 1 < used || !GK_GROW(block, cap, used + len + 1, 0)) {
            st = fail(r, GK_E_NOMEM, at, "out of memory");
            break;
        }
        char *dst = (char *)block + used;
        if ((st = read_into(r, dst, len, "string")) != GK_OK) break;
        dst[len] = '\0';
        gk_str *items = (gk_str *)block;
        items[i].ptr = (const char *)(uintptr_t)used;   /* an offset until the end */
        items[i].len = len;
        used += len + 1;
    }
    r->elem = -1;
    if (st != GK_OK) {
        free(block);
        return st;
    }
    gk_str *items = (gk_str *)block;
    for (uint64_t i = 0; i < n; i++) items[i].ptr = (const char *)block + (uintptr_t)items[i].ptr;
    const char *bytes = (const char *)block + head;
    /* The strings stand one after another with a NUL after each: the bytes are
     * valid UTF-8 as a whole exactly when every string is. Only a bad block is
     * searched for its first bad string, whose offset the warning gives. */
    if (!gk_utf8_valid(bytes, used - head)) {
        uint64_t at = first_at;
        for (uint64_t i = 0; i < n; i++) {
            if (!gk_utf8_valid(items[i].ptr, items[i].len)) {
                warn_bad_element(r, at, i);
                break;
            }
            at += cb + items[i].len;
        }
    }
    out->arr.data = block;
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* Previews: elements read and validated, not kept                          */
/* ------------------------------------------------------------------------ */

#define PREVIEW_SCRATCH (64 * 1024)

/* Finds the first string of count strings from file offset at (element first
 * on) that is not UTF-8, and warns of it as rd_string_array would; the read
 * position is kept. Runs only when the strings' bytes as a whole were bad. */
static void warn_first_bad_string(reader *r, char *scratch, uint64_t first, uint64_t count, uint64_t at) {
    uint64_t saved = r->pos;
    gk_error ignored, *err = r->err;
    r->err = &ignored;   /* the strings were read once already */
    r->pos = at;
    for (uint64_t k = first; k < first + count; k++) {
        uint64_t s_at = r->pos, len;
        if (rd_str_len(r, &len, "string") != GK_OK || len >= PREVIEW_SCRATCH ||
            read_into(r, scratch, len, "string") != GK_OK)
            break;
        if (!gk_utf8_valid(scratch, len)) {
            warn_bad_element(r, s_at, k);
            break;
        }
    }
    r->err = err;
    r->pos = saved;
}

/* Reads strings i..n-1 of an array for a preview: each length is checked and
 * each string's bytes checked as UTF-8, as rd_string_array does, but nothing is
 * kept. The bytes are gathered in a reused scratch block, checked a block at a
 * time; a string longer than the block is checked on its own. An array gets one
 * warning at most, as in a full read: none here if its first elements had it. */
static gk_status skip_strings(reader *r, uint64_t i, uint64_t n, bool warned) {
    char *scratch = malloc(PREVIEW_SCRATCH);
    if (scratch == NULL) return fail(r, GK_E_NOMEM, r->pos, "out of memory");
    gk_status st = GK_OK;
    size_t used = 0;
    uint64_t chunk_first = i, chunk_at = r->pos;
    for (;;) {
        i = take_window_strings(r, (uint8_t *)scratch, PREVIEW_SCRATCH, &used, i, n, false);
        uint64_t at = r->pos, len = 0;
        bool more = i < n;
        if (more) {
            r->elem = (int64_t)i;
            hint_strings(r, i, n, count_bytes(r));
            if ((st = rd_str_len(r, &len, "string")) != GK_OK) break;
        }
        if (!more || used + len + 1 > PREVIEW_SCRATCH) {
            if (!warned && used > 0 && !gk_utf8_valid(scratch, used)) {
                warn_first_bad_string(r, scratch, chunk_first, i - chunk_first, chunk_at);
                warned = true;
            }
            used = 0;
            chunk_first = i;
            chunk_at = at;
        }
        if (!more) break;
        if (len + 1 > PREVIEW_SCRATCH) {
            char *one = malloc((size_t)len);
            if (one == NULL) { st = fail(r, GK_E_NOMEM, at, "out of memory for a %llu-byte string", (unsigned long long)len); break; }
            st = read_into(r, one, len, "string");
            if (st == GK_OK && !warned && !gk_utf8_valid(one, len)) {
                warn_bad_element(r, at, i);
                warned = true;
            }
            free(one);
            if (st != GK_OK) break;
            chunk_first = i + 1;
            chunk_at = r->pos;
        } else {
            if ((st = read_into(r, scratch + used, len, "string")) != GK_OK) break;
            scratch[used + len] = '\0';
            used += (size_t)len + 1;
        }
        i++;
    }
    r->elem = -1;
    free(scratch);
    return st;
}

/* Reads elements i..n-1 of an array of numbers or bools for a preview (element
 * 0 at offset at0): bools are checked as rd_number_array checks them. */
static gk_status skip_numbers(reader *r, gk_vtype elem, uint64_t i, uint64_t n, uint64_t at0) {
    size_t es = gk_vtype_size(elem);
    uint64_t left = (n - i) * es;   /* check_count ensured it fits */
    while (left > 0) {
        size_t chunk = left > WINDOW_BYTES ? WINDOW_BYTES : (size_t)left;
        uint64_t at = r->pos;
        const uint8_t *p = NULL;
        gk_status st = need(r, chunk, &p, "array elements");
        if (st != GK_OK) return st;
        if (elem == GK_V_BOOL) {
            for (size_t k = 0; k < chunk; k++)
                if (p[k] > 1)
                    return fail(r, GK_E_BOOL, at + k, "element %llu: bool value %u is neither 0 nor 1",
                                (unsigned long long)(at + k - at0), p[k]);
        }
        left -= chunk;
    }
    return GK_OK;
}

static gk_status rd_array(reader *r, gk_value *out, int depth) {
    uint64_t at = r->pos;
    if (depth >= GK_MAX_ARRAY_DEPTH)
        return fail(r, GK_E_NESTING, at, "arrays nested deeper than %d levels", GK_MAX_ARRAY_DEPTH);
    uint32_t elem;
    gk_status st = rd_u32(r, &elem, "array element type");
    if (st != GK_OK) return st;
    if (elem >= GK_V_COUNT)
        return fail(r, GK_E_VALUE_TYPE, at, "unknown array element type %u", elem);
    uint64_t count_at = r->pos, n;
    st = rd_count(r, &n, "array length");
    if (st != GK_OK) return st;
    uint64_t min_bytes = elem == GK_V_STR ? count_bytes(r)
                       : elem == GK_V_ARR ? 4 + count_bytes(r)
                                          : gk_vtype_size((gk_vtype)elem);
    st = check_count(r, n, min_bytes, count_at, "array length");
    if (st != GK_OK) return st;
    hint(r, n * min_bytes);   /* check_count: no overflow */
    out->type = GK_V_ARR;
    out->arr.elem = (gk_vtype)elem;
    out->arr.n = n;
    out->arr.data = NULL;
    out->arr.n_unread = 0;
    if (elem != GK_V_ARR && depth == 0 && (r->flags & GK_OPEN_PREVIEW) && n > GK_PREVIEW_ELEMS) {
        uint64_t elems_at = r->pos;
        size_t warnings_before = r->f->n_warnings;
        st = elem == GK_V_STR ? rd_string_array(r, GK_PREVIEW_ELEMS, out)
                              : rd_number_array(r, (gk_vtype)elem, GK_PREVIEW_ELEMS, out);
        if (st == GK_OK)
            st = elem == GK_V_STR ? skip_strings(r, GK_PREVIEW_ELEMS, n, r->f->n_warnings != warnings_before)
                                  : skip_numbers(r, (gk_vtype)elem, GK_PREVIEW_ELEMS, n, elems_at);
        if (st != GK_OK) {
            free((void *)out->arr.data);
            out->arr.data = NULL;
            return st;
        }
        out->arr.n_unread = n - GK_PREVIEW_ELEMS;
        return GK_OK;
    }
    if (elem == GK_V_STR) return rd_string_array(r, n, out);
    if (elem != GK_V_ARR) return rd_number_array(r, (gk_vtype)elem, n, out);

    if (depth == 0)
        gk_file_add_warning(r->f, GK_RULE_LLAMACPP, (int64_t)at,
                            "%s: array of arrays (allowed by the spec; llama.cpp refuses to load it)",
                            r->ctx);
    gk_value *items = n ? calloc(n, sizeof *items) : NULL;
    if (n && items == NULL) return fail(r, GK_E_NOMEM, at, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        st = rd_array(r, &items[i], depth + 1);
        if (st != GK_OK) {
            items[i].type = GK_V_ARR;
            for (uint64_t j = 0; j <= i; j++) gk_value_free(&items[j]);
            free(items);
            return st;
        }
    }
    out->arr.data = items;
    return GK_OK;
}

static gk_status rd_value(reader *r, gk_vtype type, gk_value *out, int depth) {
    memset(out, 0, sizeof *out);
    if (type == GK_V_STR) {
        out->type = GK_V_STR;
        uint64_t at = r->pos;
        gk_status st = rd_str(r, &out->s, "string value");
        if (st == GK_OK && !gk_utf8_valid(out->s.ptr, out->s.len)) warn_bad_utf8(r, at, "string value");
        return st;
    }
    if (type == GK_V_ARR) return rd_array(r, out, depth);
    return rd_scalar(r, type, out);
}

/* ------------------------------------------------------------------------ */
/* Header, metadata, tensor directory                                       */
/* ------------------------------------------------------------------------ */

/* The fewest bytes a tensor's entry in the directory takes: a one-byte name,
 * no dimensions, the type and the offset. */
static uint64_t tensor_info_min(const reader *r) { return count_bytes(r) + 1 + 4 + 4 + 8; }

static gk_status rd_preamble(reader *r, uint64_t *n_tensors, uint64_t *n_kv) {
    const uint8_t *p = NULL;
    gk_status ls = learn(r, 4);
    if (ls != GK_OK) return ls;
    if (remaining(r) < 4)
        return gk_error_set(r->err, GK_E_MAGIC, 0, "not a GGUF file: shorter than the 4-byte magic");
    gk_status st = need(r, 4, &p, "magic");
    if (st != GK_OK) return st;   /* a read error, or a source that ends early */
    bool reversed = memcmp(p, "FUGG", 4) == 0;
    if (!reversed && memcmp(p, "GGUF", 4) != 0)
        return gk_error_set(r->err, GK_E_MAGIC, 0,
                            "not a GGUF file: magic is %02x %02x %02x %02x, expected \"GGUF\"",
                            p[0], p[1], p[2], p[3]);
    uint32_t raw;
    st = need(r, 4, &p, "version");
    if (st != GK_OK) return st;
    memcpy(&raw, p, 4);
    r->swap = reversed || (raw & 0xFFFF) == 0;
    uint32_t version = r->swap ? gk_bswap32(raw) : raw;
    if (version < 1 || version > 3)
        return gk_error_set(r->err, GK_E_VERSION, 4, "unsupported GGUF version %u%s (known: 1, 2, 3)", version,
                            r->swap && !reversed ? ", read in the opposite byte order" : "");
    r->version = version;
    if (reversed)
        gk_file_add_warning(r->f, GK_RULE_LLAMACPP, 0,
                            "magic written as \"FUGG\" (a byte-swapped u32, as old gguf-py did); "
                            "llama.cpp and current gguf-py refuse it");
    const uint16_t probe = 1;
    bool host_little = *(const uint8_t *)&probe == 1;
    r->f->model->version = version;
    r->f->model->big_endian = host_little ? r->swap : !r->swap;

    uint64_t at = r->pos;
    st = rd_count(r, n_tensors, "tensor count");
    if (st != GK_OK) return st;
    uint64_t at_kv = r->pos;
    st = rd_count(r, n_kv, "metadata count");
    if (st != GK_OK) return st;
    st = check_count(r, *n_kv, count_bytes(r) + 1 + 4 + 1, at_kv, "metadata count");
    if (st != GK_OK) return st;
    return check_count(r, *n_tensors, tensor_info_min(r), at, "tensor count");
}

static gk_status rd_kv(reader *r, uint64_t index, gk_strset *seen) {
    uint64_t start = r->pos;
    set_ctx(r, "metadata pair %llu", (unsigned long long)index);
    gk_str key;
    gk_status st = rd_str(r, &key, "key");
    if (st != GK_OK) return st;
    char *kp = (char *)key.ptr;
    if (key.len == 0) {
        free(kp);
        return fail(r, GK_E_EMPTY_KEY, start, "empty key");
    }
    if (!gk_utf8_valid(key.ptr, key.len) || memchr(key.ptr, '\0', key.len)) {
        free(kp);
        return fail(r, GK_E_UTF8, start, "key is not valid UTF-8 text");
    }
    set_ctx(r, "%.*s", (int)(key.len > 120 ? 120 : key.len), key.ptr);
    int added = gk_strset_insert(seen, key.ptr, key.len);
    if (added <= 0) {
        free(kp);
        return added < 0 ? fail(r, GK_E_NOMEM, start, "out of memory")
                         : fail(r, GK_E_DUP_KEY, start, "duplicate key (first defined earlier)");
    }
    uint64_t type_at = r->pos;
    uint32_t type;
    st = rd_u32(r, &type, "value type");
    if (st != GK_OK) { free(kp); return st; }
    if (type >= GK_V_COUNT) {
        free(kp);
        return fail(r, GK_E_VALUE_TYPE, type_at, "unknown value type %u", type);
    }
    gk_value v;
    st = rd_value(r, (gk_vtype)type, &v, 0);
    if (st != GK_OK) {
        gk_value_free(&v);
        free(kp);
        return st;
    }
    if (gk_model_append_kv_owned(r->f->model, kp, key.len, &v, (int64_t)start) != GK_OK) {
        gk_value_free(&v);
        free(kp);
        return fail(r, GK_E_NOMEM, start, "out of memory");
    }
    return GK_OK;
}

/* general.alignment: must be a u32, non-zero, a power of two or a multiple of 8. */
static gk_status check_alignment(reader *r) {
    int64_t i = gk_kv_find(r->f->model, "general.alignment");
    r->ctx[0] = '\0';
    if (i < 0) return GK_OK;
    const gk_kv *kv = gk_kv_at(r->f->model, (size_t)i);
    uint64_t at = (uint64_t)kv->file_offset;
    if (kv->value.type != GK_V_U32)
        return fail(r, GK_E_ALIGN_TYPE, at, "general.alignment is %s, must be UINT32",
                    gk_vtype_name(kv->value.type));
    uint64_t a = kv->value.u;
    bool pow2 = a != 0 && (a & (a - 1)) == 0;
    if (a == 0) return fail(r, GK_E_ALIGN_VALUE, at, "general.alignment is 0");
    if (!pow2 && a % 8 != 0)
        return fail(r, GK_E_ALIGN_VALUE, at,
                    "general.alignment %llu is neither a power of two nor a multiple of 8",
                    (unsigned long long)a);
    if (!pow2)
        gk_file_add_warning(r->f, GK_RULE_LLAMACPP, (int64_t)at,
                            "general.alignment %llu is a multiple of 8 but not a power of two "
                            "(llama.cpp refuses it)", (unsigned long long)a);
    else if (a < 8)
        gk_file_add_warning(r->f, GK_RULE_SPEC, (int64_t)at,
                            "general.alignment %llu is not a multiple of 8 as the spec asks "
                            "(llama.cpp accepts it)", (unsigned long long)a);
    return GK_OK;
}

static gk_status rd_tensor_info(reader *r, uint64_t index, gk_strset *seen) {
    uint64_t start = r->pos;
    set_ctx(r, "tensor %llu", (unsigned long long)index);
    gk_tensor t = { .file_offset = (int64_t)start };
    gk_status st = rd_str(r, &t.name, "name");
    if (st != GK_OK) return st;
    char *np = (char *)t.name.ptr;
#define BAIL(expr) do { gk_status s_ = (expr); free(np); return s_; } while (0)
    if (t.name.len == 0) BAIL(fail(r, GK_E_EMPTY_NAME, start, "empty tensor name"));
    if (!gk_utf8_valid(t.name.ptr, t.name.len) || memchr(t.name.ptr, '\0', t.name.len))
        BAIL(fail(r, GK_E_UTF8, start, "tensor name is not valid UTF-8 text"));
    set_ctx(r, "tensor '%.*s'", (int)(t.name.len > 120 ? 120 : t.name.len), t.name.ptr);
    int added = gk_strset_insert(seen, t.name.ptr, t.name.len);
    if (added < 0) BAIL(fail(r, GK_E_NOMEM, start, "out of memory"));
    if (added == 0) BAIL(fail(r, GK_E_DUP_TENSOR, start, "duplicate tensor name"));
    if (t.name.len > GK_MAX_TENSOR_NAME)
        BAIL(fail(r, GK_E_STRING_TOO_LONG, start, "name is %llu bytes; the spec allows at most %d",
                  (unsigned long long)t.name.len, GK_MAX_TENSOR_NAME));
    if (t.name.len == GK_MAX_TENSOR_NAME)
        gk_file_add_warning(r->f, GK_RULE_LLAMACPP, (int64_t)start,
                            "%s: name is %d bytes; ggml refuses names of %d bytes or more (at most %d)", r->ctx,
                            GK_MAX_TENSOR_NAME, GK_MAX_TENSOR_NAME, GK_MAX_TENSOR_NAME - 1);
    uint64_t dims_at = r->pos;
    st = rd_u32(r, &t.n_dims, "dimension count");
    if (st != GK_OK) BAIL(st);
    if (t.n_dims > GK_MAX_DIMS)
        BAIL(fail(r, GK_E_NDIMS, dims_at, "%u dimensions (at most %d)", t.n_dims, GK_MAX_DIMS));
    if (t.n_dims == 0)
        gk_file_add_warning(r->f, GK_RULE_SPEC, (int64_t)dims_at,
                            "%s: zero dimensions (a scalar)", r->ctx);
    for (int d = 0; d < GK_MAX_DIMS; d++) t.ne[d] = 1;
    for (uint32_t d = 0; d < t.n_dims; d++) {
        uint64_t at = r->pos;
        st = rd_count(r, &t.ne[d], "dimension");
        if (st != GK_OK) BAIL(st);
        if ((int64_t)t.ne[d] < 0)
            BAIL(fail(r, GK_E_DIM, at, "dimension %u is %lld (negative)", d, (long long)(int64_t)t.ne[d]));
    }
    uint64_t elems = 1;
    for (int d = 0; d < GK_MAX_DIMS; d++) {
        if (t.ne[d] != 0 && elems > (uint64_t)INT64_MAX / t.ne[d])
            BAIL(fail(r, GK_E_DIM_OVERFLOW, dims_at, "element count overflows 64 bits"));
        elems *= t.ne[d];
    }
    uint64_t type_at = r->pos;
    st = rd_u32(r, &t.type, "type");
    if (st != GK_OK) BAIL(st);
    if (gk_type_is_retired(t.type))
        BAIL(fail(r, GK_E_TENSOR_TYPE_RETIRED, type_at,
                  "tensor type %u (%s) was removed from ggml; convert the model again", t.type,
                  gk_type_retired_name(t.type)));
    const gk_type_info *ti = gk_type_get(t.type);
    if (ti == NULL) {
        /* A fork's or a newer ggml's type: the header still reads, but without the
         * block geometry the tensor's size, and so the data's layout, is unknown.
         * A lenient open keeps the tensor (nbytes 0) with a warning. */
        char msg[GK_MESSAGE_MAX];
        snprintf(msg, sizeof msg,
                 "%s: unknown tensor type %u: its size is unknown, so the tensor data cannot be laid out",
                 r->ctx, t.type);
        if (!(r->flags & GK_OPEN_LENIENT)) BAIL(gk_error_set(r->err, GK_E_TENSOR_TYPE, (int64_t)type_at, "%s", msg));
        gk_file_add_warning(r->f, GK_RULE_SPEC, (int64_t)type_at, "%s", msg);
        t.nbytes = 0;
    } else {
        if (t.ne[0] % ti->block_elems != 0)
            BAIL(fail(r, GK_E_ROW_BLOCK, dims_at, "row length %llu is not a multiple of %s's block of %u",
                      (unsigned long long)t.ne[0], ti->name, ti->block_elems));
        if (gk_tensor_nbytes(t.type, t.ne, &t.nbytes) != GK_OK)
            BAIL(fail(r, GK_E_DIM_OVERFLOW, dims_at, "byte size overflows 64 bits"));
    }
    st = rd_u64(r, &t.offset, "data offset");
    if (st != GK_OK) BAIL(st);
    if (gk_model_append_tensor_owned(r->f->model, &t) != GK_OK) BAIL(fail(r, GK_E_NOMEM, start, "out of memory"));
#undef BAIL
    return GK_OK;
}

static int cmp_by_offset(const void *a, const void *b) {
    const gk_tensor *x = *(const gk_tensor *const *)a, *y = *(const gk_tensor *const *)b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return 0;
}

/* A data-placement problem: an error, or a warning when reading leniently. */
static gk_status placement(reader *r, gk_status code, uint64_t at, const char *msg) {
    if (r->flags & GK_OPEN_LENIENT) {
        gk_file_add_warning(r->f, GK_RULE_SPEC, (int64_t)at, "%s", msg);
        return GK_OK;
    }
    return gk_error_set(r->err, code, (int64_t)at, "%s", msg);
}

/*
 * ggml's reader (gguf_init_from_file) adds up the tensors' padded sizes in
 * directory order and refuses the file unless each tensor's data offset equals
 * that running sum: the data of tensor i must start exactly where tensor i-1's
 * ends, rounded up to the alignment. The spec allows any placement (a gap,
 * another order), so such a file is valid but llama.cpp will not load it: one
 * warning, at the first tensor where ggml stops.
 */
static gk_status check_ggml_layout(reader *r) {
    const gk_model *m = r->f->model;
    uint64_t align = gk_model_alignment(m), expected = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const gk_tensor *t = &m->tensors[i];
        if (t->offset != expected) {
            const char *why = i == 0 ? "the first tensor's data must start at data offset 0"
                              : t->offset < expected ? "its data lies before the end of the previous tensor's"
                                                     : "a gap follows the previous tensor's data";
            gk_file_add_warning(r->f, GK_RULE_LLAMACPP, t->file_offset,
                                "tensor '%s' has data offset %llu, ggml expects %llu (%s; ggml requires "
                                "each tensor's data to follow the previous one's in directory order, "
                                "padded to the alignment): valid by the spec, but llama.cpp refuses to load "
                                "the file; `ggufkit repack` lays it out again",
                                t->name.ptr, (unsigned long long)t->offset, (unsigned long long)expected, why);
            return GK_OK;
        }
        /* past a tensor of unknown type (size unknown) ggml's sums cannot be followed */
        if (gk_type_get(t->type) == NULL) return GK_OK;
        uint64_t padded = gk_align_up(t->nbytes, align);
        if (padded < t->nbytes || UINT64_MAX - expected < padded) return GK_OK;
        expected += padded;
    }
    return GK_OK;
}

static gk_status check_placement(reader *r) {
    gk_model *m = r->f->model;
    uint64_t align = gk_model_alignment(m);
    char msg[GK_MESSAGE_MAX];
    gk_status st;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const gk_tensor *t = &m->tensors[i];
        uint64_t at = (uint64_t)t->file_offset;
        if (t->offset % align != 0) {
            snprintf(msg, sizeof msg, "tensor '%s': data offset %llu is not a multiple of the alignment %llu",
                     t->name.ptr, (unsigned long long)t->offset, (unsigned long long)align);
            if ((st = placement(r, GK_E_OFFSET_ALIGN, at, msg)) != GK_OK) return st;
        }
        uint64_t begin = r->f->data_offset + t->offset;
        if (r->lazy && t->offset <= UINT64_MAX - r->f->data_offset && t->nbytes <= UINT64_MAX - begin) {
            /* A lazily sized stream is not read this far to check the extent
             * (that is a download): its size is taken to reach the data's end,
             * and a read of data that is not there fails then. */
            if (begin + t->nbytes > r->f->size) r->f->size = begin + t->nbytes;
            continue;
        }
        if (t->offset > r->f->size || begin > r->f->size || t->nbytes > r->f->size - begin) {
            snprintf(msg, sizeof msg,
                     "tensor '%s': its %llu bytes at data offset %llu (the data section starts at "
                     "%llu) run past the end of the file (%llu bytes)",
                     t->name.ptr, (unsigned long long)t->nbytes, (unsigned long long)t->offset,
                     (unsigned long long)r->f->data_offset, (unsigned long long)r->f->size);
            if ((st = placement(r, GK_E_DATA_EOF, at, msg)) != GK_OK) return st;
        }
    }
    if ((st = check_ggml_layout(r)) != GK_OK) return st;
    if (m->n_tensors < 2) return GK_OK;
    const gk_tensor **order = malloc(m->n_tensors * sizeof *order);
    if (order == NULL) return gk_error_set(r->err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; i < m->n_tensors; i++) order[i] = &m->tensors[i];
    qsort(order, m->n_tensors, sizeof *order, cmp_by_offset);
    st = GK_OK;
    for (size_t i = 0; i + 1 < m->n_tensors && st == GK_OK; i++) {
        const gk_tensor *a = order[i], *b = order[i + 1];
        if (a->nbytes > 0 && b->nbytes > 0 && a->offset + a->nbytes > b->offset) {
            snprintf(msg, sizeof msg, "tensors '%s' and '%s' overlap: [%llu, %llu) and [%llu, %llu)",
                     a->name.ptr, b->name.ptr, (unsigned long long)a->offset,
                     (unsigned long long)(a->offset + a->nbytes), (unsigned long long)b->offset,
                     (unsigned long long)(b->offset + b->nbytes));
            st = placement(r, GK_E_OVERLAP, (uint64_t)b->file_offset, msg);
        }
    }
    free(order);
    return st;
}

static gk_status parse(reader *r) {
    uint64_t n_tensors = 0, n_kv = 0;
    gk_status st = rd_preamble(r, &n_tensors, &n_kv);
    if (st != GK_OK) return st;
    gk_strset seen = { 0 };
    for (uint64_t i = 0; i < n_kv && st == GK_OK; i++) st = rd_kv(r, i, &seen);
    gk_strset_free(&seen);
    if (st != GK_OK) return st;
    if ((st = check_alignment(r)) != GK_OK) return st;
    hint(r, n_tensors * tensor_info_min(r));   /* the directory: checked to fit by rd_preamble */
    for (uint64_t i = 0; i < n_tensors && st == GK_OK; i++) st = rd_tensor_info(r, i, &seen);
    gk_strset_free(&seen);
    if (st != GK_OK) return st;
    r->ctx[0] = '\0';
    r->f->header_end = r->pos;
    r->f->data_offset = gk_align_up(r->pos, gk_model_alignment(r->f->model));
    return check_placement(r);
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                              */
/* ------------------------------------------------------------------------ */

gk_status gk_file_parse_header(gk_file *f, unsigned flags, gk_error *err) {
    f->model = gk_model_new();
    reader r = { .f = f, .err = err, .flags = flags, .elem = -1 };
    r.lazy = f->stream && gk_source_size_provisional(f->stream);
    if (f->model == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (f->mem) {
        r.win = f->mem;
        r.win_len = (size_t)f->size;
    } else if ((r.buf = malloc(WINDOW_BYTES)) == NULL) {
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    gk_status st = parse(&r);
    if (f->stream) gk_source_header_done(f->stream);
    free(r.buf);
    return st;
}
