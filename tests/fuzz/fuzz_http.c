/*
 * fuzz_http.c - libFuzzer harness for the HTTP response header parsing of
 * lib/io/http_parse.c, what ggufkit trusts of a remote server's answer.
 *
 * The input is a response header: lines split at LF, each fed to
 * gk_http_head_line as the transport feeds them. What it keeps must hold
 * together: a status of 100-999 or -1, a range whose start is not past its end
 * nor its end past the total, bounded NUL-terminated strings. The whole input
 * also goes to gk_http_parse_content_range (the same invariants on what it
 * accepts) and gk_http_looks_html.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/http_parse.h"

static void check_head(const gk_http_head *h) {
    if (h->status != 0 && h->status != -1 && (h->status < 100 || h->status > 999)) abort();
    if (h->has_range && (h->range_end < h->range_start ||
                         (h->range_total != UINT64_MAX && h->range_end >= h->range_total)))
        abort();
    if (h->has_range && (h->bad_range || h->range_unsatisfied)) abort();
    if (memchr(h->etag, 0, sizeof h->etag) == NULL || memchr(h->last_modified, 0, sizeof h->last_modified) == NULL ||
        memchr(h->content_type, 0, sizeof h->content_type) == NULL)
        abort();
    if (h->retry_after < -1 || h->retry_after >= 86400) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gk_http_head h;
    gk_http_head_reset(&h);
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        /* the line on its own copy: the parser must not read past len */
        char *line = malloc(len ? len : 1);
        if (line == NULL) return 0;
        memcpy(line, p, len);
        gk_http_head_line(&h, line, len);
        free(line);
        check_head(&h);
        p += len;
    }
    char *copy = malloc(size ? size : 1);
    if (copy == NULL) return 0;
    memcpy(copy, data, size);
    uint64_t a = 7, b = 7, t = 7;
    int r = gk_http_parse_content_range(copy, size, &a, &b, &t);
    if (r == 1 && (b < a || (t != UINT64_MAX && b >= t))) abort();
    if (r < 0 || r > 2) abort();
    (void)gk_http_looks_html((const uint8_t *)copy, size);
    free(copy);
    return 0;
}
