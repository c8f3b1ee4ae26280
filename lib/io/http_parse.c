/*
 * http_parse.c - the response header lines ggufkit reads (http_parse.h). The
 * values come from a server that may be broken or hostile: every number is
 * checked for overflow, every copy is bounded.
 */
#include <string.h>
#include <strings.h>

#include "io/http_parse.h"

void gk_http_head_reset(gk_http_head *h) {
    memset(h, 0, sizeof *h);
    h->retry_after = -1;
    h->range_total = UINT64_MAX;
}

/* Skips blanks from *p up to end. */
static const char *skip_blanks(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* Reads a decimal number at *pp (advanced past it); @return : false when there
 * is no digit or it overflows 64 bits. */
static bool read_u64(const char **pp, const char *end, uint64_t *v) {
    const char *p = *pp;
    uint64_t n = 0;
    if (p >= end || *p < '0' || *p > '9') return false;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (n > (UINT64_MAX - d) / 10) return false;
        n = n * 10 + d;
    }
    *pp = p;
    *v = n;
    return true;
}

int gk_http_parse_content_range(const char *v, size_t len, uint64_t *start, uint64_t *end, uint64_t *total) {
    const char *p = v, *e = v + len;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) e--;
    p = skip_blanks(p, e);
    if (e - p < 6 || strncasecmp(p, "bytes", 5) != 0) return 0;
    p = skip_blanks(p + 5, e);
    if (p < e && *p == '=') p = skip_blanks(p + 1, e);   /* "bytes=" seen in the wild */
    bool unsatisfied = false;
    uint64_t a = 0, b = 0, t = UINT64_MAX;
    if (p < e && *p == '*') {
        unsatisfied = true;
        p++;
    } else {
        if (!read_u64(&p, e, &a)) return 0;
        if (p >= e || *p != '-') return 0;
        p++;
        if (!read_u64(&p, e, &b)) return 0;
    }
    if (p >= e || *p != '/') return 0;
    p++;
    if (p < e && *p == '*') {
        if (unsatisfied) return 0;
        p++;
    } else if (!read_u64(&p, e, &t)) {
        return 0;
    }
    if (p != e) return 0;
    if (unsatisfied) {
        *total = t;
        return 2;
    }
    if (b < a || (t != UINT64_MAX && b >= t)) return 0;
    *start = a;
    *end = b;
    *total = t;
    return 1;
}

/* Copies the value [p, e) into dst (size n), cut to fit. */
static void copy_value(char *dst, size_t n, const char *p, const char *e) {
    size_t len = (size_t)(e - p);
    if (len >= n) len = n - 1;
    memcpy(dst, p, len);
    dst[len] = '\0';
}

/* The status of a line "HTTP/1.1 206 Partial Content" (or "HTTP/2 200"). */
static bool status_line(gk_http_head *h, const char *p, const char *e) {
    if (e - p < 5 || strncmp(p, "HTTP/", 5) != 0) return false;
    p += 5;
    while (p < e && *p != ' ') p++;
    p = skip_blanks(p, e);
    uint64_t code;
    gk_http_head_reset(h);
    if (read_u64(&p, e, &code) && code >= 100 && code <= 999) h->status = (long)code;
    else h->status = -1;   /* a status line we cannot read: treated as a failure */
    return true;
}

void gk_http_head_line(gk_http_head *h, const char *line, size_t len) {
    const char *p = line, *e = line + len;
    while (e > p && (e[-1] == '\r' || e[-1] == '\n')) e--;
    if (status_line(h, p, e)) return;
    const char *colon = memchr(p, ':', (size_t)(e - p));
    if (colon == NULL) return;
    size_t name_len = (size_t)(colon - p);
    const char *v = skip_blanks(colon + 1, e);
    const char *ve = e;
    while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
#define IS(name) (name_len == sizeof(name) - 1 && strncasecmp(p, name, name_len) == 0)
    if (IS("content-range")) {
        int r = gk_http_parse_content_range(v, (size_t)(ve - v), &h->range_start, &h->range_end, &h->range_total);
        h->has_range = r == 1;
        h->range_unsatisfied = r == 2;
        h->bad_range = r == 0;
    } else if (IS("content-length")) {
        uint64_t n;
        const char *q = v;
        if (read_u64(&q, ve, &n) && q == ve) {
            h->has_length = true;
            h->length = n;
        }
    } else if (IS("etag")) {
        copy_value(h->etag, sizeof h->etag, v, ve);
    } else if (IS("last-modified")) {
        copy_value(h->last_modified, sizeof h->last_modified, v, ve);
    } else if (IS("content-type")) {
        copy_value(h->content_type, sizeof h->content_type, v, ve);
    } else if (IS("retry-after")) {
        uint64_t n;
        const char *q = v;
        h->retry_after = read_u64(&q, ve, &n) && q == ve && n < 86400 ? (long)n : -1;
    }
#undef IS
}

bool gk_http_looks_html(const uint8_t *p, size_t len) {
    static const char *const starts[] = { "<!doctype", "<html", "<?xml", "<head", "<body", "<!--" };
    size_t i = 0;
    if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) i = 3;   /* a byte-order mark */
    while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n')) i++;
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
        size_t n = strlen(starts[k]);
        if (len - i >= n && strncasecmp((const char *)p + i, starts[k], n) == 0) return true;
    }
    return false;
}
