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
} gk_source_kind;

/** gk_source_sniff() : classifies the file at path by its magic bytes.
 *  @return : the kind (PLAIN when the file cannot be read: gk_open reports that). */
gk_source_kind gk_source_sniff(const char *path);

/** gk_source_open_zstd() : opens a zstd-compressed file and learns its decompressed
 *  size (from the frame header, or by decompressing once when it is not recorded). */
gk_status gk_source_open_zstd(const char *path, gk_source **out, uint64_t *size, gk_error *err);

/** gk_source_open_member() : opens member `member` of the archive at path. */
gk_status gk_source_open_member(const char *path, const char *member, gk_source **out,
                                uint64_t *size, gk_error *err);

/** gk_source_read() : reads exactly len bytes at offset off of the decompressed data.
 *  @return : GK_OK, GK_E_TRUNCATED when the data ends first, GK_E_IO otherwise. */
gk_status gk_source_read(gk_source *s, uint64_t off, void *buf, size_t len, gk_error *err);

/** gk_source_get_kind() : @return : GK_SOURCE_ZSTD or GK_SOURCE_ARCHIVE (a member). */
gk_source_kind gk_source_get_kind(const gk_source *s);

/** gk_source_close() : releases a source (NULL accepted). */
void gk_source_close(gk_source *s);

#endif
