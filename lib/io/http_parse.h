/*
 * http_parse.h - what ggufkit reads out of an HTTP response's header lines:
 * the status, Content-Range, Content-Length, ETag, Last-Modified,
 * Content-Type, Retry-After and Location. Pure functions over bytes, with no
 * network: the transport (io/http.c) feeds them every header line it gets, and
 * the fuzz harness feeds them anything.
 */
#ifndef GK_IO_HTTP_PARSE_H
#define GK_IO_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GK_HTTP_TAG_MAX 160   /* longest ETag or Last-Modified kept (longer: cut, still compared) */

/* One response's header, as parsed so far. */
typedef struct gk_http_head {
    long status;               /* 0 until a status line is seen */
    bool has_range;            /* Content-Range: bytes START-END/TOTAL seen */
    bool range_unsatisfied;    /* Content-Range: bytes * /TOTAL (with a 416) */
    uint64_t range_start, range_end, range_total;   /* range_total UINT64_MAX when "*" */
    bool bad_range;            /* a Content-Range that does not parse */
    bool has_length;
    uint64_t length;           /* Content-Length */
    char etag[GK_HTTP_TAG_MAX];
    char last_modified[GK_HTTP_TAG_MAX];
    char content_type[64];
    long retry_after;          /* seconds, -1 when absent or not a number */
} gk_http_head;

/** gk_http_head_reset() : empties h (as before a response's status line). */
void gk_http_head_reset(gk_http_head *h);

/** gk_http_head_line() : takes one header line (len bytes, with or without its
 *  CR LF; not NUL-terminated) into h. A status line ("HTTP/x yyy ...") starts a
 *  new response: what earlier responses (redirects, 100 Continue) said is
 *  forgotten. Unknown headers and malformed values are ignored, except a
 *  Content-Range that does not parse (bad_range). */
void gk_http_head_line(gk_http_head *h, const char *line, size_t len);

/** gk_http_parse_content_range() : parses a Content-Range value ("bytes
 *  0-99/1000", "bytes * /1000", "bytes 0-99/ *" without the spaces around *).
 *  @return : 1 for a range (*start..*end inclusive, *total or UINT64_MAX for
 *            "*"), 2 for an unsatisfied-range form (*total set), 0 when it
 *            does not parse or is inconsistent (end < start, end >= total). */
int gk_http_parse_content_range(const char *v, size_t len, uint64_t *start, uint64_t *end, uint64_t *total);

/** gk_http_looks_html() : @return : true when the first len bytes of a body look
 *  like an HTML or XML page (after blanks: "<!DOCTYPE", "<html", "<?xml", "<head",
 *  "<body", any case). */
bool gk_http_looks_html(const uint8_t *p, size_t len);

#endif
