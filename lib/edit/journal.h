/*
 * journal.h - the edit module's crash-safety helpers: hooked low-level I/O and
 * the journal that holds a header's old bytes while an in-place write runs.
 */
#ifndef GK_EDIT_JOURNAL_H
#define GK_EDIT_JOURNAL_H

#include "ggufkit.h"

/* The test hook of one in-place write or recovery. */
typedef struct io_ctx {
    gk_io_hook hook;
    void *ctx;
} io_ctx;

/** io_step() : asks the hook before an operation. @return : false to stop now. */
bool io_step(io_ctx *io, const char *what);

/** io_pwrite_all() : writes len bytes at off, in chunks (one hook call each).
 *  @return : GK_OK, GK_E_IO, GK_E_INTERRUPTED. */
gk_status io_pwrite_all(io_ctx *io, int fd, const void *buf, size_t len, uint64_t off, const char *what,
                        gk_error *err);

/** io_fsync_dir() : fsyncs the folder holding path (one hook call). */
gk_status io_fsync_dir(io_ctx *io, const char *path, gk_error *err);

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
