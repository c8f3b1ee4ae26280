/*
 * hooked.h - low-level I/O that asks a test hook (gk_io_hook) before each step:
 * what an in-place write and its recovery use, so a test can stop them anywhere.
 */
#ifndef GK_IO_HOOKED_H
#define GK_IO_HOOKED_H

#include "ggufkit.h"

/* The test hook of one in-place write or recovery. */
typedef struct io_ctx {
    gk_io_hook hook;
    void *ctx;
} io_ctx;

/** io_test_hook() : the hook gk_test_control(GK_TEST_IO_HOOK, ...) installed
 *  for the stable in-place writer and recoveries. @return : it, or an io_ctx of
 *  NULLs when none was. */
io_ctx io_test_hook(void);

/** io_step() : asks the hook before an operation. @return : false to stop now. */
bool io_step(io_ctx *io, const char *what);

/** io_pwrite_all() : writes len bytes at off, in chunks (one hook call each).
 *  @return : GK_OK, GK_E_IO, GK_E_INTERRUPTED. */
gk_status io_pwrite_all(io_ctx *io, int fd, const void *buf, size_t len, uint64_t off, const char *what,
                        gk_error *err);

/** io_interrupted() : sets err to GK_E_INTERRUPTED, "stopped before WHAT".
 *  @return : GK_E_INTERRUPTED. */
gk_status io_interrupted(gk_error *err, const char *what);

/** io_fsync_dir() : fsyncs the folder holding path (one hook call). */
gk_status io_fsync_dir(io_ctx *io, const char *path, gk_error *err);

#endif
