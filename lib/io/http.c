/*
 * http.c - the ranged HTTP reader of http.h, on libcurl (loaded on first use).
 *
 * One request is one curl_easy_perform on the handle the file keeps, so the
 * connection is reused. Redirects are followed here, not by libcurl, so that
 * which headers go where is decided in one place: the caller's headers and the
 * token go to the URL's own host (scheme, host and port) only. The file's
 * final URL (after redirects) is used for the requests that follow; when it
 * stops working (a signed link that expired) the next attempt starts from the
 * URL given again.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ggufkit_version.h"
#include "io/curl_load.h"
#include "io/http.h"
#include "io/http_parse.h"
#include "io/ring.h"
#include "util/grow.h"

#define FIRST_WINDOW ((size_t)1 << 20)
#define GRID ((uint64_t)2000000)          /* header reads: requests cover whole chunks of this grid */
#define HINT_MAX (32 * GRID)              /* ... and at most this many bytes each */
#define MAX_WINDOW ((size_t)4 << 20)        /* the largest window the reader fetches itself */
/* The read-ahead stream's ring: 16 slots of 1 MiB. With 4 slots of 4 MiB,
 * `hash` of a 2.2 GB model over loopback took 1.02 s of CPU (median of 9 runs,
 * 2026-12-04) against 0.90 s with 1 MiB: a 1 MiB slot, copied out to the
 * reader soon after it fills, is still in the processor's cache. 512 KiB and
 * 256 KiB slots were no better (0.92 s, 0.95 s). */
#define SLOT_BYTES ((size_t)1 << 20)
#define STREAM_SLOTS 16
#define MAX_LENT 16                       /* windows lent out at once (gk_http_borrow) */
#define MAX_REDIRECTS 10
#define ERROR_BODY_MAX (64 * 1024)        /* bytes of an error page read before hanging up */
#define NO_RANGE_SKIP_MAX ((uint64_t)64 << 20)   /* a server without ranges: bytes skipped at most */
#define WHY_MAX 300
#define PROGRESS_BYTES ((size_t)256 << 10)    /* an attempt that brought this much restarts the retry count */

/* ------------------------------------------------------------------------ */
/* Process-wide settings and counters                                        */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t settings_lock = PTHREAD_MUTEX_INITIALIZER;
static char **extra_headers;     /* "Name: value", from gk_remote_header */
static size_t n_extra, cap_extra;
static uint64_t stat_requests, stat_bytes;

gk_status gk_remote_header(const char *line, gk_error *err) {
    const char *colon = line ? strchr(line, ':') : NULL;
    if (colon == NULL || colon == line || strpbrk(line, "\r\n") != NULL)
        return gk_error_set(err, GK_E_ARG, -1, "a header is 'Name: value' on one line");
    pthread_mutex_lock(&settings_lock);
    bool grown = GK_GROW(extra_headers, cap_extra, n_extra + 1, 4);
    char *copy = strdup(line);
    if (!grown || copy == NULL) {
        free(copy);
        pthread_mutex_unlock(&settings_lock);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    extra_headers[n_extra++] = copy;
    pthread_mutex_unlock(&settings_lock);
    return GK_OK;
}

void gk_remote_stats(uint64_t *requests, uint64_t *bytes) {
    if (requests) *requests = __atomic_load_n(&stat_requests, __ATOMIC_RELAXED);
    if (bytes) *bytes = __atomic_load_n(&stat_bytes, __ATOMIC_RELAXED);
}

bool gk_http_is_url(const char *path) {
    return path && (strncasecmp(path, "http://", 7) == 0 || strncasecmp(path, "https://", 8) == 0 ||
                    strncmp(path, "hf://", 5) == 0);
}

static long env_long(const char *name, long def, long lo, long hi) {
    const char *v = getenv(name);
    char *end;
    long n = v && *v ? strtol(v, &end, 10) : def;
    if (v && *v && (*end != '\0' || n < lo || n > hi)) n = def;
    return n;
}

/* ------------------------------------------------------------------------ */
/* The file                                                                  */
/* ------------------------------------------------------------------------ */

struct gk_http {
    pthread_mutex_t lock;
    const gk_curl_api *C;
    CURL *curl;
    char *url;                 /* the URL to start from (hf:// resolved) */
    char *final;               /* where the last redirect led, or NULL */
    bool token_sent;           /* an Authorization header went with the requests */
    struct curl_slist *own_headers;    /* for the URL's own host */
    struct curl_slist *other_headers;  /* for any other host */
    uint64_t size;
    char etag[GK_HTTP_TAG_MAX], modified[GK_HTTP_TAG_MAX];
    bool known;                /* size and identity learnt */
    bool no_ranges;            /* the server answered a ranged request with the whole file */
    char ctype[64];            /* the first answer's Content-Type */
    uint8_t *cache;            /* bytes [cache_off, cache_off + cache_len) */
    size_t cache_cap, cache_len;
    uint64_t cache_off;
    /* the window before it: two readers may take turns a little apart (a
     * pipeline's chunk reader ahead, its copies of small tensors behind) */
    uint8_t *prev;
    size_t prev_cap, prev_len;
    uint64_t prev_off;
    bool header;               /* reading the header: misses fetch grid chunks, no more than needed */
    uint64_t hint_end;         /* the header reader will read at least up to here */
    size_t window;             /* the next miss's request size (tensor data) */
    unsigned streak;           /* forward misses in a row at the largest window */
    /* read-ahead: once reads go forward in full windows (from the second one
     * on: a long header alone fetches nothing more), a thread on a handle of
     * its own fetches the rest of the file in one request, into a ring of
     * slots the reader takes in turn; the request waits (the server with it)
     * while the ring is full. Never two requests at once on h's state: the
     * reader stops and joins the thread before any request of its own. */
    CURL *curl_ahead;
    pthread_t ahead_thread;
    bool ahead_running;
    gk_ring *ring;
    uint64_t ahead_off;
    long connect_s, stall_s, retries, backoff_ms;
    /* windows lent out (gk_http_borrow): a buffer on loan is never written,
     * resized or handed to the ring; when the reader would, the buffer
     * becomes the loans' alone (orphan) and is freed at the last release */
    const uint8_t *lent[MAX_LENT];
    unsigned lent_refs[MAX_LENT];
    bool lent_orphan[MAX_LENT];
};

/* One request's state, filled by libcurl's callbacks. */
typedef struct req {
    gk_http *h;
    gk_http_head head;
    uint64_t off;              /* first byte asked for */
    uint8_t *dst;              /* where the bytes go, or NULL: into ring */
    gk_ring *ring;
    size_t want, got;          /* bytes asked for, bytes stored */
    uint64_t skip;             /* a whole-file answer: bytes before off still to pass */
    bool started;              /* the body's first bytes were checked */
    bool enough;               /* we hung up: we had every byte asked for */
    gk_status fail;            /* a check failed in a callback (GK_OK: none) */
    char why[WHY_MAX];
    uint8_t peek[256];         /* the first bytes of an error page */
    size_t n_peek, error_body;
    int64_t last_data_ms;      /* when bytes last came (or the request started) */
    bool stalled;              /* we hung up: nothing came for the stall timeout */
    bool stopped;              /* we hung up: the ring's reader stopped the stream */
} req;

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Called by libcurl about once a second and as data moves: a transfer that
 * brings nothing for the stall timeout is abandoned (then retried). */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    req *r = ctx;
    if (r->ring && gk_ring_stopping(r->ring)) {
        r->stopped = true;
        return 1;
    }
    if (now_ms() - r->last_data_ms <= r->h->stall_s * 1000) return 0;
    r->stalled = true;
    return 1;
}

/* @return : true when both URLs have the same scheme, host and port. */
static bool same_origin(const char *a, const char *b) {
    const char *ea = strstr(a, "://"), *eb = strstr(b, "://");
    if (ea == NULL || eb == NULL) return false;
    size_t la = strcspn(ea + 3, "/?#"), lb = strcspn(eb + 3, "/?#");
    return ea - a == eb - b && strncasecmp(a, b, (size_t)(ea - a)) == 0 && la == lb &&
           strncasecmp(ea + 3, eb + 3, la) == 0;
}

/* hf://OWNER/REPO/PATH[@REV] -> ENDPOINT/OWNER/REPO/resolve/REV/PATH; other URLs copied. */
static char *resolve_url(const char *url, bool *hub, gk_error *err) {
    *hub = false;
    if (strncmp(url, "hf://", 5) != 0) {
        const char *ep = getenv("HF_ENDPOINT");
        *hub = same_origin(url, ep && *ep ? ep : "https://huggingface.co");
        char *u = strdup(url);
        if (u == NULL) gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        return u;
    }
    const char *p = url + 5, *s1 = strchr(p, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    if (s1 == NULL || s2 == NULL || s1 == p || s2 == s1 + 1 || s2[1] == '\0') {
        gk_error_set(err, GK_E_ARG, -1, "an hf:// URL is hf://OWNER/REPO/PATH[@REVISION]");
        return NULL;
    }
    const char *path = s2 + 1, *at = strrchr(path, '@');
    if (at && strchr(at, '/')) at = NULL;   /* an @ inside a folder name */
    size_t path_len = at ? (size_t)(at - path) : strlen(path);
    const char *rev = at && at[1] ? at + 1 : "main";
    const char *ep = getenv("HF_ENDPOINT");
    if (ep == NULL || *ep == '\0') ep = "https://huggingface.co";
    size_t ep_len = strlen(ep);
    while (ep_len > 0 && ep[ep_len - 1] == '/') ep_len--;
    size_t n = ep_len + (size_t)(s2 - p) + strlen(rev) + path_len + 16;
    char *u = malloc(n);
    if (u == NULL) {
        gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        return NULL;
    }
    snprintf(u, n, "%.*s/%.*s/resolve/%s/%.*s", (int)ep_len, ep, (int)(s2 - p), p, rev, (int)path_len, path);
    *hub = true;
    return u;
}

/* Builds the two header lists: with the caller's headers and the token (own
 * host), and without (any other host). */
static bool make_headers(gk_http *h, bool hub) {
    const gk_curl_api *C = h->C;
    struct curl_slist *own = NULL, *other = NULL, *t;
    bool ok = true, auth = false;
    pthread_mutex_lock(&settings_lock);
    for (size_t i = 0; i < n_extra && ok; i++) {
        if (strncasecmp(extra_headers[i], "authorization:", 14) == 0) auth = true;
        ok = (t = C->curl_slist_append(own, extra_headers[i])) != NULL;
        if (ok) own = t;
    }
    pthread_mutex_unlock(&settings_lock);
    const char *token = getenv("HF_TOKEN");
    if (ok && hub && !auth && token && *token) {
        size_t n = strlen(token) + 32;
        char *line = malloc(n);
        ok = line != NULL;
        if (ok) {
            snprintf(line, n, "Authorization: Bearer %s", token);
            ok = (t = C->curl_slist_append(own, line)) != NULL;
            if (ok) own = t;
            memset(line, 0, n);
            free(line);
            auth = true;
        }
    }
    /* No Accept-Encoding: the bytes of the file itself, never recompressed. */
    if (ok) ok = (t = C->curl_slist_append(own, "Accept-Encoding: identity")) != NULL && (own = t);
    if (ok) ok = (t = C->curl_slist_append(other, "Accept-Encoding: identity")) != NULL && (other = t);
    h->own_headers = own;
    h->other_headers = other;
    h->token_sent = auth;
    return ok;
}

/* ------------------------------------------------------------------------ */
/* One request                                                               */
/* ------------------------------------------------------------------------ */

static size_t on_header(char *line, size_t size, size_t n, void *ctx) {
    req *r = ctx;
    gk_http_head_line(&r->head, line, size * n);
    return size * n;
}

/* The checks made when a 2xx body starts: the range is the one asked for, the
 * file is the one read before. @return : false (r->fail set) to hang up. */
static bool check_start(req *r) {
    gk_http *h = r->h;
    gk_http_head *hd = &r->head;
    uint64_t total;
    if (hd->status == 206) {
        if (!hd->has_range) {
            r->fail = GK_E_IO;
            snprintf(r->why, sizeof r->why, "the server answered 206 without a%s Content-Range",
                     hd->bad_range ? " readable" : "");
            return false;
        }
        if (hd->range_start != r->off) {
            r->fail = GK_E_IO;
            snprintf(r->why, sizeof r->why,
                     "the server sent bytes %llu-%llu for a request of bytes from %llu (wrong Content-Range)",
                     (unsigned long long)hd->range_start, (unsigned long long)hd->range_end,
                     (unsigned long long)r->off);
            return false;
        }
        total = hd->range_total;
    } else {   /* 200: the whole file */
        total = hd->has_length ? hd->length : UINT64_MAX;
        if (r->off > 0 && r->off > NO_RANGE_SKIP_MAX) {
            r->fail = GK_E_UNSUPPORTED;
            snprintf(r->why, sizeof r->why,
                     "the server does not answer Range requests (it sends the whole file): reading at byte "
                     "%llu would download everything before it; download the file first",
                     (unsigned long long)r->off);
            return false;
        }
        h->no_ranges = true;
        r->skip = r->off;
    }
    if (!h->known) {   /* the first answer: what the file is */
        if (total == UINT64_MAX) {
            r->fail = GK_E_UNSUPPORTED;
            snprintf(r->why, sizeof r->why, "the server does not say how large the file is");
            return false;
        }
        h->size = total;
        snprintf(h->etag, sizeof h->etag, "%s", hd->etag);
        snprintf(h->modified, sizeof h->modified, "%s", hd->last_modified);
        snprintf(h->ctype, sizeof h->ctype, "%s", hd->content_type);
        h->known = true;
    }
    if (r->off + r->want > h->size) r->want = r->off < h->size ? (size_t)(h->size - r->off) : 0;
    const char *changed = NULL;
    if (h->etag[0] && hd->etag[0] && strcmp(h->etag, hd->etag) != 0) changed = "its ETag";
    else if (total != UINT64_MAX && total != h->size) changed = "its size";
    else if (!h->etag[0] && h->modified[0] && hd->last_modified[0] && strcmp(h->modified, hd->last_modified) != 0)
        changed = "its Last-Modified date";
    if (changed) {
        r->fail = GK_E_IO;
        snprintf(r->why, sizeof r->why,
                 "the file changed on the server while being read (%s is not what it was): nothing read "
                 "from it can be trusted; run the command again", changed);
        return false;
    }
    return true;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx) {
    req *r = ctx;
    size_t len = size * n;
    __atomic_add_fetch(&stat_bytes, len, __ATOMIC_RELAXED);
    r->last_data_ms = now_ms();
    if (r->head.status < 200 || r->head.status > 299) {   /* a redirect's or an error's page */
        size_t keep = sizeof r->peek - r->n_peek < len ? sizeof r->peek - r->n_peek : len;
        memcpy(r->peek + r->n_peek, data, keep);
        r->n_peek += keep;
        r->error_body += len;
        return r->error_body > ERROR_BODY_MAX ? 0 : len;
    }
    if (!r->started) {
        r->started = true;
        if (!check_start(r)) return 0;
    }
    size_t at = 0;
    if (r->skip > 0) {
        at = r->skip < len ? (size_t)r->skip : len;
        r->skip -= at;
    }
    size_t take = len - at < r->want - r->got ? len - at : r->want - r->got;
    if (r->ring == NULL) {
        memcpy(r->dst + r->got, data + at, take);
    } else {
        if (!gk_ring_put(r->ring, (const uint8_t *)data + at, take)) {
            r->stopped = true;
            return 0;
        }
        r->last_data_ms = now_ms();   /* waiting for room in the ring is not a stall */
    }
    r->got += take;
    if (at + take < len) {   /* more than asked for (a server without ranges): hang up */
        r->enough = true;
        return 0;
    }
    return len;
}

/* The request's outcome when it did not deliver its bytes: retry it or not. */
typedef enum outcome { DONE, RETRY, FAIL } outcome;

/* Describes a failed HTTP status in err. */
static gk_status status_error(gk_http *h, const req *r, gk_error *err) {
    long st = r->head.status;
    int64_t at = (int64_t)r->off;
    if (st == 401 || st == 403)
        return gk_error_set(err, GK_E_IO, -1, "HTTP %ld (%s): %s", st, st == 401 ? "unauthorized" : "forbidden",
                            h->token_sent ? "the server refused the token sent (HF_TOKEN or --header "
                                            "'Authorization: ...'): check that it grants access to this file"
                                          : "the file needs a token: set HF_TOKEN, or pass --header "
                                            "'Authorization: Bearer TOKEN'");
    if (st == 404 || st == 410)
        return gk_error_set(err, GK_E_NOT_FOUND, -1, "HTTP %ld: no such file on the server", st);
    if (st == 416)
        return gk_error_set(err, GK_E_IO, at,
                            "HTTP 416 (range not satisfiable) for bytes from %llu: the server's file is %s",
                            (unsigned long long)r->off,
                            r->head.range_unsatisfied && r->head.range_total != UINT64_MAX ? "shorter" : "not what it was");
    if (st >= 300 && st < 400) return gk_error_set(err, GK_E_IO, -1, "HTTP %ld: a redirect without a Location", st);
    if (st <= 0) return gk_error_set(err, GK_E_IO, at, "the server's answer is not HTTP");
    return gk_error_set(err, GK_E_IO, at, "HTTP %ld from the server", st);
}

static void pause_ms(long ms) {
    if (ms <= 0) return;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {}
}

/* One attempt at bytes [off, off + want) into dst (or ring, when dst is
 * NULL), following redirects. *got gets the bytes stored (kept even when it
 * fails). */
static outcome attempt(gk_http *h, CURL *c, uint64_t off, uint8_t *dst, gk_ring *ring, size_t want, size_t *got,
                       long *wait_ms, gk_error *err) {
    const gk_curl_api *C = h->C;
    req r = { .h = h, .off = off, .dst = dst, .ring = dst ? NULL : ring, .want = want };
    *got = 0;
    *wait_ms = -1;
    char range[64];
    snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)off, (unsigned long long)(off + want - 1));
    char *url = strdup(h->final ? h->final : h->url);
    if (url == NULL) {
        gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        return FAIL;
    }
    outcome out = FAIL;
    for (int hops = 0;; hops++) {
        if (hops > MAX_REDIRECTS) {
            gk_error_set(err, GK_E_IO, -1, "too many redirects (more than %d): a redirect loop?", MAX_REDIRECTS);
            break;
        }
        gk_http_head_reset(&r.head);
        r.started = r.enough = false;
        r.n_peek = r.error_body = 0;
        r.got = 0;
        r.fail = GK_OK;
        r.stalled = r.stopped = false;
        r.last_data_ms = now_ms();
        C->curl_easy_setopt(c, CURLOPT_XFERINFODATA, &r);
        C->curl_easy_setopt(c, CURLOPT_URL, url);
        C->curl_easy_setopt(c, CURLOPT_HTTPHEADER, same_origin(url, h->url) ? h->own_headers : h->other_headers);
        C->curl_easy_setopt(c, CURLOPT_RANGE, range);
        C->curl_easy_setopt(c, CURLOPT_HEADERDATA, &r);
        C->curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
        __atomic_add_fetch(&stat_requests, 1, __ATOMIC_RELAXED);
        CURLcode rc = C->curl_easy_perform(c);
        long st = r.head.status;
        if (rc == CURLE_OK && st >= 200 && st < 300 && !r.started) {   /* an empty body: checked all the same */
            r.started = true;
            check_start(&r);
        }
        *got = r.got;
        if (r.fail != GK_OK) {
            gk_error_set(err, r.fail, (int64_t)off, "%s", r.why);
            break;
        }
        if (r.stopped) {
            gk_error_set(err, GK_E_IO, (int64_t)(off + r.got), "the read-ahead was stopped");
            break;
        }
        if (rc == CURLE_OK && st >= 300 && st < 400 && st != 304) {
            char *next = NULL;
            if (C->curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &next) != CURLE_OK || next == NULL) {
                status_error(h, &r, err);
                break;
            }
            char *copy = strdup(next);
            if (copy == NULL) {
                gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
                break;
            }
            free(url);
            url = copy;
            continue;
        }
        if (st == 416 && !h->known && r.head.range_unsatisfied && r.head.range_total == 0) {
            h->known = true;   /* an empty file */
            h->size = 0;
            out = DONE;
            break;
        }
        bool delivered = r.got == r.want;
        if (st >= 200 && st < 300 && delivered && (rc == CURLE_OK || r.enough)) {
            if (h->final == NULL || strcmp(h->final, url) != 0) {
                free(h->final);
                h->final = url;
                url = NULL;
            }
            out = DONE;
            break;
        }
        if (rc != CURLE_OK && !(st >= 300)) {   /* the network, or a body cut short */
            switch (rc) {
            case CURLE_COULDNT_RESOLVE_HOST:
            case CURLE_UNSUPPORTED_PROTOCOL:
            case CURLE_URL_MALFORMAT:
            case CURLE_PEER_FAILED_VERIFICATION:
            case CURLE_SSL_CONNECT_ERROR:
            case CURLE_SSL_CERTPROBLEM:
            case CURLE_SSL_CACERT_BADFILE:
                gk_error_set(err, GK_E_IO, -1, "%s", C->curl_easy_strerror(rc));
                break;
            case CURLE_OPERATION_TIMEDOUT:
            case CURLE_ABORTED_BY_CALLBACK:
                if (r.stalled || rc == CURLE_ABORTED_BY_CALLBACK)
                    gk_error_set(err, GK_E_IO, (int64_t)(off + r.got), "the server stalled (no data for %ld s)",
                                 h->stall_s);
                else
                    gk_error_set(err, GK_E_IO, (int64_t)(off + r.got), "no connection within %ld s", h->connect_s);
                out = RETRY;
                break;
            case CURLE_PARTIAL_FILE:
                gk_error_set(err, GK_E_IO, (int64_t)(off + r.got),
                             "the body ended after %zu of the %zu bytes promised (short body, or the connection "
                             "broke)", r.got, r.want);
                out = RETRY;
                break;
            default:
                gk_error_set(err, GK_E_IO, (int64_t)(off + r.got), "%s%s", C->curl_easy_strerror(rc),
                             r.got > 0 || r.started ? " (the connection broke mid-stream)" : "");
                out = RETRY;
            }
            break;
        }
        if (st >= 200 && st < 300) {   /* it ended early without an error */
            if (r.head.status == 200 && r.head.has_length && off + want > r.head.length)
                gk_error_set(err, GK_E_IO, (int64_t)(off + r.got), "the server's file is shorter than it was");
            else
                gk_error_set(err, GK_E_IO, (int64_t)(off + r.got),
                             "the body ended after %zu of the %zu bytes asked for (short body)", r.got, want);
            out = RETRY;
            break;
        }
        status_error(h, &r, err);
        if (st == 429 || st >= 500) {
            out = RETRY;
            if (r.head.retry_after >= 0) *wait_ms = r.head.retry_after * 1000;
        } else if ((st == 401 || st == 403 || st == 404 || st == 410) && h->final && strcmp(url, h->url) != 0) {
            /* a redirect's target that worked before (a signed link) may have expired */
            free(h->final);
            h->final = NULL;
            out = RETRY;
        } else if (gk_http_looks_html(r.peek, r.n_peek) && st != 401 && st != 403) {
            size_t len = strlen(err->message);
            snprintf(err->message + len, sizeof err->message - len, " (an HTML error page)");
        }
        break;
    }
    free(url);
    return out;
}

/* Fetches bytes [off, off + want) into dst (or ring, when dst is NULL),
 * retrying transient failures and resuming after the bytes already delivered;
 * fewer (*got) only when the file ends first (the first request learns where). */
static gk_status fetch_into(gk_http *h, CURL *c, uint64_t off, uint8_t *dst, gk_ring *ring, size_t want,
                            size_t *got_all, gk_error *err) {
    size_t done = 0;
    *got_all = 0;
    long tries = 0;
    while (done < want) {
        size_t got;
        long wait_ms;
        outcome o = attempt(h, c, off + done, dst ? dst + done : NULL, ring, want - done, &got, &wait_ms, err);
        done += got;
        *got_all = done;
        if (o == DONE) break;
        if (o == FAIL) return err->code;
        if (got >= PROGRESS_BYTES) tries = 0;   /* real progress: the count starts again */
        if (tries >= h->retries) {
            size_t len = strlen(err->message);
            snprintf(err->message + len, sizeof err->message - len, "; gave up after %ld retries", tries);
            return err->code;
        }
        long pause = h->backoff_ms << (tries < 10 ? tries : 10);
        if (pause > 30000) pause = 30000;
        if (wait_ms >= 0) pause = wait_ms < 30000 ? wait_ms : 30000;
        tries++;
        if (ring == NULL) {
            pause_ms(pause);
        } else {   /* in steps, so that a stopped stream does not wait it out */
            for (long left = pause; left > 0 && !gk_ring_stopping(ring); left -= 50) pause_ms(left < 50 ? left : 50);
            if (gk_ring_stopping(ring)) return gk_error_set(err, GK_E_IO, -1, "the read-ahead was stopped");
        }
        if (h->known && off + want > h->size) want = (size_t)(h->size - off);
    }
    gk_error_clear(err);
    return GK_OK;
}

/* fetch_into dst. */
static gk_status fetch_some(gk_http *h, CURL *c, uint64_t off, uint8_t *dst, size_t want, size_t *got_all,
                            gk_error *err) {
    return fetch_into(h, c, off, dst, NULL, want, got_all, err);
}

/* fetch_some for bytes known to be in the file: all of them or an error. */
static gk_status fetch(gk_http *h, CURL *c, uint64_t off, uint8_t *dst, size_t want, gk_error *err) {
    size_t got;
    gk_status st = fetch_some(h, c, off, dst, want, &got, err);
    if (st == GK_OK && got < want)
        return gk_error_set(err, GK_E_IO, (int64_t)(off + got), "the server's file is shorter than it was");
    return st;
}

/* ------------------------------------------------------------------------ */
/* Open, read, close                                                         */
/* ------------------------------------------------------------------------ */

/* @return : the index of buf among the lent windows, or -1. */
static int lent_index(const gk_http *h, const uint8_t *buf) {
    if (buf == NULL) return -1;
    for (int i = 0; i < MAX_LENT; i++)
        if (h->lent_refs[i] > 0 && h->lent[i] == buf) return i;
    return -1;
}

/* Called before the reader writes to, resizes or hands on its buffer *buf:
 * when the buffer is on loan, it is left to the loans (freed at the last
 * release) and the reader goes on with none. */
static void disown_if_lent(gk_http *h, uint8_t **buf, size_t *cap) {
    int i = lent_index(h, *buf);
    if (i < 0) return;
    h->lent_orphan[i] = true;
    *buf = NULL;
    *cap = 0;
}

/* Makes room for n cached bytes. */
static bool cache_room(gk_http *h, size_t n) {
    disown_if_lent(h, &h->cache, &h->cache_cap);
    return GK_GROW(h->cache, h->cache_cap, n, FIRST_WINDOW);
}

/* Sets what every request of c shares. */
static void setup_handle(gk_http *h, CURL *c) {
    const gk_curl_api *C = h->C;
    char agent[64];
    snprintf(agent, sizeof agent, "ggufkit/%s", GK_VERSION_STRING);
    C->curl_easy_setopt(c, CURLOPT_USERAGENT, agent);
    C->curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    C->curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    C->curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    C->curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    C->curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, h->connect_s);
    C->curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    C->curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    C->curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    C->curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    C->curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    C->curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 512L * 1024);
}

/* A handle for url with its settings, before any request. */
static gk_status http_new(const char *url, gk_http **out, gk_error *err) {
    *out = NULL;
    const gk_curl_api *C = gk_curl_api_load(err);
    if (C == NULL) return GK_E_UNSUPPORTED;
    gk_http *h = calloc(1, sizeof *h);
    if (h == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    pthread_mutex_init(&h->lock, NULL);
    h->C = C;
    h->window = FIRST_WINDOW;
    h->header = true;
    h->connect_s = env_long("GGUFKIT_HTTP_CONNECT_TIMEOUT", 30, 1, 3600);
    h->stall_s = env_long("GGUFKIT_HTTP_STALL_TIMEOUT", 60, 1, 3600);
    h->retries = env_long("GGUFKIT_HTTP_RETRIES", 5, 0, 100);
    h->backoff_ms = env_long("GGUFKIT_HTTP_BACKOFF_MS", 500, 0, 60000);
    bool hub;
    gk_status st = GK_OK;
    h->url = resolve_url(url, &hub, err);
    if (h->url == NULL) st = err->code;
    else if ((h->curl = C->curl_easy_init()) == NULL || !make_headers(h, hub))
        st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (st != GK_OK) {
        gk_http_close(h);
        return st;
    }
    setup_handle(h, h->curl);
    *out = h;
    return GK_OK;
}

gk_status gk_http_probe(const char *url, uint64_t *size, char *identity, size_t identity_size, gk_error *err) {
    gk_http *h;
    gk_status st = http_new(url, &h, err);
    if (st != GK_OK) return st;
    uint8_t byte;
    size_t got;
    st = fetch_some(h, h->curl, 0, &byte, 1, &got, err);
    if (st == GK_OK) {
        *size = h->size;
        gk_http_identity(h, identity, identity_size);
    }
    gk_http_close(h);
    return st;
}

gk_status gk_http_open(const char *url, gk_http **out, uint64_t *size, gk_error *err) {
    gk_http *h;
    gk_status st = http_new(url, &h, err);
    if (st != GK_OK) return st;
    if (!cache_room(h, GRID)) {
        gk_http_close(h);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    /* The first request: its answer gives the size and identity. */
    size_t got = 0;
    st = fetch_some(h, h->curl, 0, h->cache, GRID, &got, err);
    /* A page where a file was expected (a login or error page with a 200): by its
     * bytes, or by its type unless it starts as a model does (a server that
     * labels every file text/html still serves the file). */
    bool model_magic = got >= 4 && (memcmp(h->cache, "GGUF", 4) == 0 || memcmp(h->cache, "FUGG", 4) == 0 ||
                                    memcmp(h->cache, "\x28\xb5\x2f\xfd", 4) == 0);
    if (st == GK_OK && (gk_http_looks_html(h->cache, got) ||
                        (strncasecmp(h->ctype, "text/html", 9) == 0 && !model_magic)))
        st = gk_error_set(err, GK_E_MAGIC, 0, "the server sent a web page (%s), not a model file",
                          h->ctype[0] ? h->ctype : "HTML");
    if (st != GK_OK) {
        gk_http_close(h);
        return st;
    }
    h->cache_off = 0;
    h->cache_len = got;
    *size = h->size;
    *out = h;
    return GK_OK;
}

/* A header read missed the cache at at, needing at least need bytes there:
 * fetches the grid chunks from the one holding at (or from the cache's end,
 * when that lies inside it) through the one holding the last byte needed or
 * hinted (gk_http_hint), in one request: never a byte the reader will not read
 * but for the rest of the last chunk. */
static gk_status header_miss(gk_http *h, uint64_t at, size_t need, gk_error *err) {
    uint64_t start = at / GRID * GRID, cache_end = h->cache_off + h->cache_len;
    if (h->cache_len > 0 && start < cache_end && cache_end <= at) start = cache_end;
    uint64_t end = at + need > h->hint_end ? at + need : h->hint_end;
    if (end - start > HINT_MAX && at + need - start <= HINT_MAX) end = start + HINT_MAX;
    end = (end + GRID - 1) / GRID * GRID;
    if (end > h->size) end = h->size;
    if (end - start > SIZE_MAX / 2 || !cache_room(h, (size_t)(end - start)))
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    h->cache_len = 0;   /* no read-ahead runs while the header is read */
    gk_status st = fetch(h, h->curl, start, h->cache, (size_t)(end - start), err);
    if (st != GK_OK) return st;
    h->cache_off = start;
    h->cache_len = (size_t)(end - start);
    return GK_OK;
}

void gk_http_hint(gk_http *h, uint64_t off, uint64_t len) {
    pthread_mutex_lock(&h->lock);
    if (h->header && off + len > h->hint_end) h->hint_end = off + len;   /* every hint holds: the farthest */
    pthread_mutex_unlock(&h->lock);
}

void gk_http_header_done(gk_http *h) {
    pthread_mutex_lock(&h->lock);
    h->header = false;
    h->hint_end = 0;
    pthread_mutex_unlock(&h->lock);
}

/* Copies to dst what the cached windows hold of [at, at + n), up to where
 * neither holds the next byte. @return : the bytes copied. */
static size_t copy_cached(gk_http *h, uint64_t at, uint8_t *dst, size_t n) {
    size_t done = 0;
    while (done < n) {
        const uint8_t *src;
        uint64_t base, len;
        if (at >= h->cache_off && at - h->cache_off < h->cache_len) {
            src = h->cache, base = h->cache_off, len = h->cache_len;
        } else if (at >= h->prev_off && at - h->prev_off < h->prev_len) {
            src = h->prev, base = h->prev_off, len = h->prev_len;
        } else {
            break;
        }
        size_t k = base + len - at < n - done ? (size_t)(base + len - at) : n - done;
        memcpy(dst + done, src + (at - base), k);
        done += k;
        at += k;
    }
    return done;
}

/* Makes the cached window the previous one; the cache is left empty (with
 * the old previous window's buffer, for reuse, unless it is on loan). */
static void retire_cache(gk_http *h) {
    uint8_t *b = h->prev;
    size_t cap = h->prev_cap;
    h->prev = h->cache;
    h->prev_cap = h->cache_cap;
    h->prev_off = h->cache_off;
    h->prev_len = h->cache_len;
    h->cache = b;
    h->cache_cap = cap;
    h->cache_off = h->cache_off + h->cache_len;
    h->cache_len = 0;
    disown_if_lent(h, &h->cache, &h->cache_cap);
}

/* The read-ahead thread: the rest of the file from h->ahead_off, into h->ring. */
static void *ahead_main(void *arg) {
    gk_http *h = arg;
    gk_error err;
    size_t got;
    gk_status st = fetch_into(h, h->curl_ahead, h->ahead_off, NULL, h->ring, (size_t)(h->size - h->ahead_off), &got,
                              &err);
    gk_ring_finish(h->ring, st == GK_OK && got == h->size - h->ahead_off);
    return NULL;
}

/* Stops the read-ahead, if any, and waits for its thread. */
static void ahead_stop(gk_http *h) {
    if (!h->ahead_running) return;
    gk_ring_stop(h->ring);
    pthread_join(h->ahead_thread, NULL);
    h->ahead_running = false;
}

/* Starts streaming the bytes after the cached window (when there are any).
 * A failure here only means the reader fetches them itself. */
static void ahead_start(gk_http *h) {
    uint64_t next = h->cache_off + h->cache_len;
    if (h->ahead_running || next >= h->size || h->no_ranges) return;
    if (h->curl_ahead == NULL) {
        if ((h->curl_ahead = h->C->curl_easy_init()) == NULL) return;
        setup_handle(h, h->curl_ahead);
    }
    if (h->ring == NULL && (h->ring = gk_ring_new(STREAM_SLOTS, SLOT_BYTES)) == NULL) return;
    gk_ring_reset(h->ring, next);
    h->ahead_off = next;
    h->ahead_running = pthread_create(&h->ahead_thread, NULL, ahead_main, h) == 0;
}

/* Retires the cached window and makes the stream's next slot the cached one.
 * @return : false when the stream has ended (the cache is then empty). */
static bool next_slot(gk_http *h) {
    uint64_t off;
    size_t len;
    retire_cache(h);
    if (!gk_ring_take(h->ring, &h->cache, &h->cache_cap, &off, &len)) return false;
    h->cache_off = off;
    h->cache_len = len;
    return true;
}

/* Copies what the read-ahead brings for [*at, *at + *rest) into *p, taking
 * slots (each becomes the cached window) while the reads go forward: a gap
 * up to a window is passed over, a read behind the window or farther ahead
 * leaves the rest to the caller (after stopping the stream). */
static void take_ahead(gk_http *h, uint8_t **p, uint64_t *at, size_t *rest) {
    while (*rest > 0 && h->ahead_running) {
        size_t n = copy_cached(h, *at, *p, *rest);
        *p += n;
        *at += n;
        *rest -= n;
        if (n > 0) continue;
        uint64_t end = h->cache_off + h->cache_len;
        if (*at < end || *at - end > MAX_WINDOW || !next_slot(h)) break;
    }
    if (*rest > 0) ahead_stop(h);
}

gk_status gk_http_read_some(gk_http *h, uint64_t off, void *buf, size_t len, size_t min, size_t *got,
                            gk_error *err) {
    *got = 0;
    uint8_t *p = buf;
    gk_status st = GK_OK;
    pthread_mutex_lock(&h->lock);
    uint64_t avail = off < h->size ? h->size - off : 0;
    if (len > avail) len = (size_t)avail;
    *got = copy_cached(h, off, p, len);   /* the cached part */
    uint64_t cache_end = h->cache_off + h->cache_len;
    size_t rest = len - *got;
    uint64_t at = off + *got;
    if (h->header && rest > 0 && (*got < min || *got == 0)) {
        st = header_miss(h, at, min > *got ? min - *got : 1, err);
        if (st == GK_OK) *got += copy_cached(h, at, p + *got, rest);   /* the cache now holds at */
    } else if (!h->header && rest > 0) {
        /* Forward from the window's end (a small gap allowed): the window grows. */
        if (at >= cache_end && at - cache_end <= h->window) {
            h->streak = h->window == MAX_WINDOW ? h->streak + 1 : 0;
            h->window = h->window * 2 < MAX_WINDOW ? h->window * 2 : MAX_WINDOW;
        } else {
            h->window = FIRST_WINDOW;
            h->streak = 0;
        }
        uint8_t *q = p + *got;
        take_ahead(h, &q, &at, &rest);
        *got = (size_t)(q - p);
        if (rest == 0) {
            /* all of it came from the read-ahead */
        } else if (rest >= MAX_WINDOW) {   /* a large read goes straight to the caller */
            retire_cache(h);
            st = fetch(h, h->curl, at, p + *got, rest, err);
            if (st == GK_OK) {
                *got += rest;
                h->cache_off = at + rest;   /* an empty window where the read ended: the stream starts there */
            }
        } else {
            size_t w = rest > h->window ? rest : h->window;
            if (w > h->size - at) w = (size_t)(h->size - at);
            retire_cache(h);
            if (!cache_room(h, w)) {
                st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            } else {
                st = fetch(h, h->curl, at, h->cache, w, err);
                if (st == GK_OK) {
                    h->cache_off = at;
                    h->cache_len = w;
                    *got += copy_cached(h, at, p + *got, rest);
                }
            }
        }
        /* Going forward in full windows: stream what follows meanwhile. */
        if (st == GK_OK && h->streak >= 1) ahead_start(h);
    }
    pthread_mutex_unlock(&h->lock);
    if (st != GK_OK) return st;
    if (*got < min)
        return gk_error_set(err, GK_E_TRUNCATED, (int64_t)(off + *got), "data ends early (%zu of %zu bytes)", *got, min);
    return GK_OK;
}

bool gk_http_borrow(gk_http *h, uint64_t off, size_t len, const uint8_t **data, size_t *avail,
                    const void **lease) {
    bool ok = false;
    pthread_mutex_lock(&h->lock);
    if (!h->header && len > 0) {
        /* the window ends where off starts: the stream's next slot holds it */
        if (off == h->cache_off + h->cache_len && h->ahead_running && !next_slot(h)) ahead_stop(h);
        int i = lent_index(h, h->cache);   /* a window lent again, or a free entry */
        for (int k = 0; k < MAX_LENT && i < 0; k++)
            if (h->lent_refs[k] == 0) i = k;
        if (i >= 0 && off >= h->cache_off && off - h->cache_off < h->cache_len) {
            uint64_t left = h->cache_off + h->cache_len - off;
            *data = h->cache + (off - h->cache_off);
            *avail = left < len ? (size_t)left : len;
            *lease = h->cache;
            if (h->lent_refs[i]++ == 0) {
                h->lent[i] = h->cache;
                h->lent_orphan[i] = false;
            }
            ok = true;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return ok;
}

void gk_http_release(gk_http *h, const void *lease) {
    if (lease == NULL) return;
    pthread_mutex_lock(&h->lock);
    int i = lent_index(h, lease);
    if (i >= 0 && --h->lent_refs[i] == 0) {
        if (h->lent_orphan[i]) free((void *)h->lent[i]);
        h->lent[i] = NULL;
        h->lent_orphan[i] = false;
    }
    pthread_mutex_unlock(&h->lock);
}

void gk_http_identity(const gk_http *h, char *buf, size_t size) {
    if (h->etag[0]) snprintf(buf, size, "etag:%s", h->etag);
    else if (h->modified[0]) snprintf(buf, size, "modified:%s", h->modified);
    else if (size) buf[0] = '\0';
}

void gk_http_close(gk_http *h) {
    if (h == NULL) return;
    ahead_stop(h);
    if (h->curl_ahead) h->C->curl_easy_cleanup(h->curl_ahead);
    gk_ring_free(h->ring);
    if (h->curl) h->C->curl_easy_cleanup(h->curl);
    if (h->own_headers) h->C->curl_slist_free_all(h->own_headers);
    if (h->other_headers) h->C->curl_slist_free_all(h->other_headers);
    pthread_mutex_destroy(&h->lock);
    for (int i = 0; i < MAX_LENT; i++)   /* loans left unreturned (a caller's bug): not leaked */
        if (h->lent_refs[i] > 0 && h->lent_orphan[i]) free((void *)h->lent[i]);
    free(h->cache);
    free(h->prev);
    free(h->url);
    free(h->final);
    free(h);
}
