/*
 * source.h - byte sources that are not plain files: a zstd stream and a member
 * of an archive. Both are read front to back; a read behind the current
 * position restarts the stream (correct, and rare: the reader and pipeline read
 * in increasing offset order wherever they can).
 */
#ifndef GK_IO_SOURCE_H
#define GK_IO_SOURCE_H

#include "ggufkit.h"

typedef struct gk_source gk_source;

/* What a path names, judged by its first bytes (and "::" for archive members). */
typedef enum gk_source_kind {
    GK_SOURCE_PLAIN = 0,    /* a GGUF file (or anything that is neither of the others) */
    GK_SOURCE_ZSTD,         /* a zstd stream (.gguf.zst) */
    GK_SOURCE_ARCHIVE,      /* an archive libarchive can read */
    GK_SOURCE_HTTP,         /* a file on an HTTP(S) server (io/http.h), read with Range requests */
} gk_source_kind;

/** gk_source_sniff() : classifies the file at path by its magic bytes.
 *  @return : the kind (PLAIN when the file cannot be read: gk_open reports that). */
gk_source_kind gk_source_sniff(const char *path);

/* The magic a file starts with, as gk_source_sniff_magic saw it. */
typedef enum gk_source_magic {
    GK_MAGIC_OTHER = 0,   /* neither (or fewer than 4 bytes, or unreadable) */
    GK_MAGIC_GGUF,        /* "GGUF", in either byte order */
    GK_MAGIC_ZSTD,        /* a zstd frame (of a GGUF file or of an archive) */
} gk_source_magic;

/** gk_source_sniff_magic() : gk_source_sniff, also telling in *magic (when not
 *  NULL) which magic the file starts with: a PLAIN file may be a GGUF file or
 *  anything else, an ARCHIVE a zstd-compressed one or not. @return : the kind. */
gk_source_kind gk_source_sniff_magic(const char *path, gk_source_magic *magic);

/** gk_source_zstd_first_bytes() : decompresses the first 4 bytes of the zstd file
 *  at path (as much of it as that takes: a first block may be large).
 *  @return : true when four bytes came out. */
bool gk_source_zstd_first_bytes(const char *path, uint8_t first[4]);

/** gk_source_zstd_check_frames() : walks the frame and block headers of the zstd
 *  file at path (seeking from one to the next: nothing is decompressed) to find
 *  out whether it is whole. @return : GK_OK, GK_E_TRUNCATED (the file ends inside
 *  a frame: it was cut short), GK_E_CORRUPT, GK_E_IO; the offset is in the
 *  compressed file. */
gk_status gk_source_zstd_check_frames(const char *path, gk_error *err);

/** gk_zstd_window_log_max() : @return : log2 of the largest zstd window a reader
 *  accepts: GGUFKIT_ZSTD_WINDOW_LOG_MAX when set to a valid value (10..31 on a
 *  64-bit build), else the format's maximum (2^31 bytes). Decoding a stream
 *  takes about its window in memory, whatever the size of the file. */
int gk_zstd_window_log_max(void);

/** gk_source_open_zstd() : opens a zstd-compressed file and learns its decompressed
 *  size (from the frame header, or by decompressing once when it is not recorded). */
gk_status gk_source_open_zstd(const char *path, gk_source **out, uint64_t *size, gk_error *err);

/** gk_source_open_member() : opens member `member` of the archive at path. */
gk_status gk_source_open_member(const char *path, const char *member, gk_source **out,
                                uint64_t *size, gk_error *err);

/** gk_source_open_url() : opens the file at an http(s):// or hf:// URL
 *  (io/http.h): read in place when it is a GGUF file (or anything else: the
 *  reader judges it), as a stream when it is a zstd file. Such a stream is
 *  sized lazily (gk_source_size_provisional): *size is only a lower bound (its
 *  first frame's recorded size, or 0 when that records none), since the exact
 *  size costs a read of the whole compressed file.
 *  @return : as gk_http_open, or a zstd error. */
gk_status gk_source_open_url(const char *url, gk_source **out, uint64_t *size, gk_error *err);

/** gk_source_size_provisional() : @return : true while s's size is a lower
 *  bound, not its size: a zstd stream behind a URL, until gk_source_settle
 *  (or a check that found it shorter than asked) sized it. */
bool gk_source_size_provisional(const gk_source *s);

/** gk_source_extend() : for a provisional size, makes sure that want bytes
 *  exist (decompressing on as far as needed, a little more), or, when the
 *  stream holds fewer, sizes it exactly (gk_source_settle). *size gets the
 *  larger of itself and what s now knows; nothing happens to a source whose
 *  size is exact. @return : GK_OK (also when fewer than want exist: the caller
 *  compares *size), or the error that stopped it (network, memory). */
gk_status gk_source_extend(gk_source *s, uint64_t want, uint64_t *size, gk_error *err);

/** gk_source_settle() : sizes a provisionally sized source exactly, as a local
 *  .gguf.zst is sized (its frames walked: a read of the whole compressed
 *  file; or one pass when a frame records no size); *size gets it. A no-op for
 *  other sources. @return : GK_OK, or an error that stopped it. */
gk_status gk_source_settle(gk_source *s, uint64_t *size, gk_error *err);

/** gk_source_is_remote() : @return : true when s reads from a server (a GGUF
 *  file or a zstd stream behind a URL). */
bool gk_source_is_remote(const gk_source *s);

/** gk_source_identity() : the remote file's identity as gk_http_identity gives
 *  it ("" for a local source). */
void gk_source_identity(const gk_source *s, char *buf, size_t size);

/** gk_source_measure() : reads the source to its end to learn how many bytes it
 *  really holds, which can be fewer than its container records (an archive or a
 *  zstd stream cut short). @return : GK_OK with *size the real length (never more
 *  than the recorded one), or an error that stopped the count (I/O, memory). */
gk_status gk_source_measure(gk_source *s, uint64_t *size, gk_error *err);

/** gk_source_check_whole() : finds out, as cheaply as the container allows,
 *  whether it holds every byte it records (not for a provisionally sized
 *  stream: that would read all of it, so it is left to the reads of data): a zstd file by its frame headers
 *  (walked when opened, nothing decompressed), an archive member by skipping its
 *  data (a seek in an uncompressed tar; compressed archives are decompressed
 *  through) and reading the next header. When it may not, the source is
 *  measured (gk_source_measure): *size gets the real length and gk_source_short
 *  says why it ended. @return : GK_OK (also for a cut container: the caller
 *  checks the data against *size), or an error that stopped the check. */
gk_status gk_source_check_whole(gk_source *s, uint64_t *size, gk_error *err);

/** gk_source_short() : after a measurement that ended early (the container is cut
 *  short or damaged there), writes what happened to msg. @return : true if so. */
bool gk_source_short(const gk_source *s, char *msg, size_t size);

/** gk_source_read() : reads exactly len bytes at offset off of the decompressed data.
 *  @return : GK_OK, GK_E_TRUNCATED when the data ends first, GK_E_IO otherwise. */
gk_status gk_source_read(gk_source *s, uint64_t off, void *buf, size_t len, gk_error *err);

/** gk_source_get_kind() : @return : GK_SOURCE_ZSTD, GK_SOURCE_ARCHIVE (a member) or
 *  GK_SOURCE_HTTP (a file behind a URL read in place; a .zst behind one is ZSTD). */
gk_source_kind gk_source_get_kind(const gk_source *s);

/** gk_source_read_some() : reads up to len bytes at offset off, at least min.
 *  @return : GK_OK with *got bytes (min or more: fewer than len where the data
 *            ends or breaks off), else as gk_source_read. */
gk_status gk_source_read_some(gk_source *s, uint64_t off, void *buf, size_t len, size_t min, size_t *got,
                              gk_error *err);

/** gk_source_borrow() : lends the source's own copy of the bytes at off,
 *  where it has one without a copy (a file behind a URL read forward:
 *  gk_http_borrow): *data, *avail bytes of them (1 to len), valid until
 *  gk_source_release(s, *lease). @return : false otherwise (read them). */
bool gk_source_borrow(gk_source *s, uint64_t off, size_t len, const uint8_t **data, size_t *avail,
                      const void **lease);

/** gk_source_release() : returns a loan of gk_source_borrow (NULL: nothing). */
void gk_source_release(gk_source *s, const void *lease);

/** gk_source_hint() : tells s that the header reader will read at least the
 *  len bytes at off next, so that a file behind a URL fetches them in one
 *  request (gk_http_hint). A no-op for every other source. */
void gk_source_hint(gk_source *s, uint64_t off, uint64_t len);

/** gk_source_header_done() : the header is read; what follows is tensor data
 *  (gk_http_header_done for a remote source, a no-op for others). */
void gk_source_header_done(gk_source *s);

/** gk_source_close() : releases a source (NULL accepted). */
void gk_source_close(gk_source *s);

#endif
