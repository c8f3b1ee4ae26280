/*
 * journal.h - the edit module's crash-safety helper: the journal that holds a
 * header's old bytes while an in-place write runs (its hooked I/O is io/hooked.h).
 */
#ifndef GK_EDIT_JOURNAL_H
#define GK_EDIT_JOURNAL_H

#include "ggufkit.h"
#include "io/hooked.h"

/** journal_path() : @return : malloc'ed PATH.ggufkit-journal, or NULL. */
char *journal_path(const char *path);

/* What a journal records: the file's identity and size before the write, the
 * size after, and the old bytes of [off, off + len). */
typedef struct journal_info {
    uint64_t ino;
    uint64_t old_size, new_size;
    uint64_t off;
    const uint8_t *old;
    size_t len;
} journal_info;

/** journal_write() : creates jpath (refused when it exists) holding info, its
 *  length and SHA-256, fsyncs it and its folder. @return : GK_OK, GK_E_EXISTS,
 *  GK_E_IO, GK_E_INTERRUPTED. */
gk_status journal_write(io_ctx *io, const char *jpath, const journal_info *info, gk_error *err);

#endif
