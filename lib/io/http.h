/*
 * http.h - a file on an HTTP(S) server read with Range requests: the remote
 * half of the source layer (io/source.h wraps it as a gk_source).
 *
 * Reads go through one window of cached bytes. While the header is read,
 * requests cover whole chunks of a 2,000,000-byte grid (the first: bytes 0 to
 * 1999999), each from the chunk that holds the missed byte through the chunk
 * that holds the last byte the reader is certain to read (gk_http_hint): a
 * header's bytes are fetched once, and no more of the file than the header's
 * last chunk. After it (gk_http_header_done), a miss fetches a window that
 * doubles while reads go forward (1, 2, 4 MiB) and starts small again after a
 * jump back; once the windows are full size, a thread streams the rest of the
 * file in one request into a ring of 16 slots of 1 MiB (io/ring.h) that the reader
 * takes in turn, and a jump elsewhere stops it. The window before the current
 * one is kept for a second reader a little behind. Memory stays bounded: two
 * windows and the ring's slots, 24 MiB, plus the windows on loan to a
 * scanner (gk_http_borrow): those holding its chunks in flight, at most
 * 12 MiB more for hash's eight chunks of 1 MiB (8 MiB of chunks and the
 * rest of a 4 MiB window before them). Every
 * response is checked against the file's identity (ETag, else size and
 * Last-Modified), so a file replaced mid-read fails instead of mixing two
 * versions. Transient failures (no connection, a stall, a dropped stream, 429,
 * 5xx, a short body) are retried with backoff, resuming at the byte where the
 * last attempt stopped.
 *
 * URLs: http://, https://, and hf://OWNER/REPO/PATH[@REVISION], which means
 * $HF_ENDPOINT (default https://huggingface.co)/OWNER/REPO/resolve/REVISION/PATH
 * with REVISION "main" by default. HF_TOKEN is sent as a bearer token to the
 * hub's host only; extra headers (gk_remote_header) to the URL's own host
 * only: never to another host a redirect leads to.
 *
 * Tuning for tests (environment, whole numbers): GGUFKIT_HTTP_CONNECT_TIMEOUT
 * and GGUFKIT_HTTP_STALL_TIMEOUT (seconds, default 30 and 60),
 * GGUFKIT_HTTP_RETRIES (default 5), GGUFKIT_HTTP_BACKOFF_MS (first pause,
 * doubled each retry; default 500).
 */
#ifndef GK_IO_HTTP_H
#define GK_IO_HTTP_H

#include "ggufkit.h"

typedef struct gk_http gk_http;

/** gk_http_is_url() : @return : true when path starts with http://, https:// or hf://. */
bool gk_http_is_url(const char *path);

/** gk_http_open() : opens the file at url with a first ranged request (its
 *  bytes stay cached) that learns its size and identity. A page of HTML where a
 *  file was expected is refused here.
 *  @return : GK_OK with *out and *size set; GK_E_NOT_FOUND (404, 410),
 *            GK_E_IO (any other failure: the message says what the server or
 *            the network did), GK_E_UNSUPPORTED (no libcurl, a URL it cannot
 *            read), GK_E_NOMEM. */
gk_status gk_http_open(const char *url, gk_http **out, uint64_t *size, gk_error *err);

/** gk_http_probe() : one request for the first byte of the file at url: its
 *  size and identity (as gk_http_identity), nothing more.
 *  @return : as gk_http_open. */
gk_status gk_http_probe(const char *url, uint64_t *size, char *identity, size_t identity_size, gk_error *err);

/** gk_http_read_some() : reads up to len bytes at off, at least min (fewer than
 *  len only at the end of the file). @return : GK_OK with *got set;
 *  GK_E_TRUNCATED when the file ends before min bytes; GK_E_IO (the message
 *  names what failed; err's offset is the file offset). Thread-safe. */
gk_status gk_http_read_some(gk_http *h, uint64_t off, void *buf, size_t len, size_t min, size_t *got,
                            gk_error *err);

/** gk_http_borrow() : lends the reader's own copy of the bytes at off, where
 *  tensor data is read forward and the read-ahead already holds them: *data
 *  points at them and *avail (1 to len) says how many follow there; they stay
 *  valid and unchanged until gk_http_release(h, *lease). The stream goes on
 *  meanwhile (a window on loan is replaced, never reused). Thread-safe.
 *  @return : false when the bytes are not at hand that way (read them). */
bool gk_http_borrow(gk_http *h, uint64_t off, size_t len, const uint8_t **data, size_t *avail,
                    const void **lease);

/** gk_http_release() : returns a loan of gk_http_borrow (NULL: nothing). */
void gk_http_release(gk_http *h, const void *lease);

/** gk_http_hint() : tells h that the header reader will read at least the len
 *  bytes at off (it knows from the counts and lengths read so far): the next
 *  miss fetches through them (and through every earlier hint) in one request.
 *  Ignored once the header is read. */
void gk_http_hint(gk_http *h, uint64_t off, uint64_t len);

/** gk_http_header_done() : the header is read: misses from now on fetch the
 *  growing windows of tensor data, then the read-ahead stream. */
void gk_http_header_done(gk_http *h);

/** gk_http_identity() : writes the file's identity as the server gave it
 *  ("etag:VALUE" or "modified:VALUE", "" when the server gives neither) to buf. */
void gk_http_identity(const gk_http *h, char *buf, size_t size);

/** gk_http_close() : releases h (NULL accepted). */
void gk_http_close(gk_http *h);

#endif
