/*
 * hooked.c - low-level I/O that asks a test hook before each step (the crash
 * tests of in-place edits stop a write there): chunked pwrite, folder fsync;
 * and gk_test_control, which installs such a hook for the stable entry points.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/hooked.h"

#define IO_CHUNK (1u << 20)

/* The process's test hook (gk_test_control): set before any edit starts. */
static io_ctx test_hook;

gk_status gk_test_control(int op, ...) {
    va_list ap;
    va_start(ap, op);
    gk_status st = GK_OK;
    if (op == GK_TEST_IO_HOOK) {
        test_hook.hook = va_arg(ap, gk_io_hook);
        test_hook.ctx = va_arg(ap, void *);
    } else {
        st = GK_E_ARG;
    }
    va_end(ap);
    return st;
}

io_ctx io_test_hook(void) { return test_hook; }

bool io_step(io_ctx *io, const char *what) {
    return io == NULL || io->hook == NULL || io->hook(io->ctx, what);
}

gk_status io_interrupted(gk_error *err, const char *what) {
    return gk_error_set(err, GK_E_INTERRUPTED, -1, "stopped before %s", what);
}

gk_status io_pwrite_all(io_ctx *io, int fd, const void *buf, size_t len, uint64_t off, const char *what,
                        gk_error *err) {
    const uint8_t *p = buf;
    while (len > 0) {
        size_t chunk = len > IO_CHUNK ? IO_CHUNK : len;
        if (!io_step(io, what)) return io_interrupted(err, what);
        size_t done = 0;
        while (done < chunk) {
            ssize_t n = pwrite(fd, p + done, chunk - done, (off_t)(off + done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return gk_error_set(err, GK_E_IO, (int64_t)(off + done), "%s: write failed: %s", what, strerror(errno));
            done += (size_t)n;
        }
        p += chunk;
        off += chunk;
        len -= chunk;
    }
    return GK_OK;
}

gk_status io_fsync_dir(io_ctx *io, const char *path, gk_error *err) {
    char *copy = strdup(path);
    if (copy == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (!io_step(io, "folder fsync")) {
        free(copy);
        return io_interrupted(err, "folder fsync");
    }
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    gk_status st = GK_OK;
    if (dfd < 0 || fsync(dfd) != 0)
        st = gk_error_set(err, GK_E_IO, -1, "%s: cannot fsync its folder: %s", path, strerror(errno));
    if (dfd >= 0) close(dfd);
    free(copy);
    return st;
}

