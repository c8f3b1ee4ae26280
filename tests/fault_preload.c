/*
 * fault_preload.c - an LD_PRELOAD shim that injects I/O faults into ggufkit, for
 * the command-line fault tests (tests/cli/test_faults.sh). Inert unless its
 * environment variables are set:
 *
 *   GK_FAULT_READ_PATH=SUBSTR   reads from a file whose path contains SUBSTR ...
 *   GK_FAULT_READ_AFTER=N       ... succeed for N bytes in all, then fail
 *   GK_FAULT_READ_MODE=eio|eof  failing reads return -1/EIO (default) or 0 (the
 *                               file seems to end: a short read)
 *   GK_FAULT_WRITE_PATH=SUBSTR  writes to a file whose path contains SUBSTR ...
 *   GK_FAULT_WRITE_AFTER=N      ... succeed for N bytes in all (default: no
 *                               limit), then fail with
 *   GK_FAULT_WRITE_ERRNO=N      errno N (default ENOSPC; the first failing write
 *                               is short when it straddles the limit)
 *   GK_FAULT_WRITE_DELAY_MS=N   each such write first sleeps N ms for every MiB
 *                               it carries, at least once (widens the window in
 *                               which a test signals the writer, whatever size
 *                               the writes have)
 *   GK_FAULT_DIRECT_EINVAL=1    writes to such a file fail with EINVAL while it
 *                               is open with O_DIRECT (a filesystem that takes
 *                               the flag but not the writes)
 *   GK_FAULT_FSYNC_PATH=SUBSTR  fsync of such a file fails with EIO
 *   GK_FAULT_DLOPEN=SUBSTR      dlopen of a library whose name contains SUBSTR
 *                               fails (a machine without the optional library)
 *
 * Paths are those of /proc/self/fd. pread, read, write, pwrite, fsync,
 * fdatasync and dlopen are wrapped; copy_file_range between files of which one is watched
 * fails with EXDEV, so the caller falls back to reads and writes, which are.
 */
/* pread and pread64 are both defined here: no 64-bit redirection. */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static unsigned long long read_done, written;

/* The path of fd contains the substring named by env (which is set). */
static int fd_matches(int fd, const char *env) {
    const char *want = getenv(env);
    if (want == NULL || *want == '\0' || fd < 0) return 0;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return 0;
    path[n] = '\0';
    return strstr(path, want) != NULL;
}

static unsigned long long env_u64(const char *name, unsigned long long def) {
    const char *v = getenv(name);
    return v && *v ? strtoull(v, NULL, 0) : def;
}

/* How many of len bytes a watched read may deliver; -1: fail (errno set) / 0: EOF. */
static ssize_t read_budget(size_t len) {
    unsigned long long limit = env_u64("GK_FAULT_READ_AFTER", 0);
    if (read_done >= limit) {
        const char *mode = getenv("GK_FAULT_READ_MODE");
        if (mode && strcmp(mode, "eof") == 0) return 0;
        errno = EIO;
        return -1;
    }
    unsigned long long left = limit - read_done;
    return (ssize_t)(len < left ? len : left);
}

/* A watched fd open with O_DIRECT while GK_FAULT_DIRECT_EINVAL is set. */
static int direct_refused(int fd) {
    if (env_u64("GK_FAULT_DIRECT_EINVAL", 0) == 0) return 0;
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_DIRECT) != 0;
}

static ssize_t write_budget(size_t len) {
    unsigned long long delay = env_u64("GK_FAULT_WRITE_DELAY_MS", 0);
    if (delay) usleep((useconds_t)(delay * 1000 * (1 + (len > 0 ? (len - 1) >> 20 : 0))));
    unsigned long long limit = env_u64("GK_FAULT_WRITE_AFTER", ~0ULL);
    if (written >= limit) {
        errno = (int)env_u64("GK_FAULT_WRITE_ERRNO", ENOSPC);
        return -1;
    }
    unsigned long long left = limit - written;
    return (ssize_t)(len < left ? len : left);
}

/* The next definition of name (libc's), looked up once. */
#define REAL(name) static __typeof__(&name) real_##name; \
    if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

ssize_t pread64(int fd, void *buf, size_t len, off_t off) {
    REAL(pread64);
    if (fd_matches(fd, "GK_FAULT_READ_PATH")) {
        ssize_t b = read_budget(len);
        if (b <= 0) return b;
        ssize_t n = real_pread64(fd, buf, (size_t)b, off);
        if (n > 0) read_done += (unsigned long long)n;
        return n;
    }
    return real_pread64(fd, buf, len, off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off) { return pread64(fd, buf, len, off); }

ssize_t read(int fd, void *buf, size_t len) {
    REAL(read);
    if (fd_matches(fd, "GK_FAULT_READ_PATH")) {
        ssize_t b = read_budget(len);
        if (b <= 0) return b;
        ssize_t n = real_read(fd, buf, (size_t)b);
        if (n > 0) read_done += (unsigned long long)n;
        return n;
    }
    return real_read(fd, buf, len);
}

ssize_t write(int fd, const void *buf, size_t len) {
    REAL(write);
    if (fd_matches(fd, "GK_FAULT_WRITE_PATH")) {
        if (direct_refused(fd)) {
            errno = EINVAL;
            return -1;
        }
        ssize_t b = write_budget(len);
        if (b < 0) return b;
        ssize_t n = real_write(fd, buf, (size_t)b);
        if (n > 0) written += (unsigned long long)n;
        return n;
    }
    return real_write(fd, buf, len);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off) {
    REAL(pwrite64);
    if (fd_matches(fd, "GK_FAULT_WRITE_PATH")) {
        if (direct_refused(fd)) {
            errno = EINVAL;
            return -1;
        }
        ssize_t b = write_budget(len);
        if (b < 0) return b;
        ssize_t n = real_pwrite64(fd, buf, (size_t)b, off);
        if (n > 0) written += (unsigned long long)n;
        return n;
    }
    return real_pwrite64(fd, buf, len, off);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off) { return pwrite64(fd, buf, len, off); }

ssize_t copy_file_range(int in, loff_t *in_off, int out, loff_t *out_off, size_t len, unsigned flags) {
    REAL(copy_file_range);
    if (fd_matches(in, "GK_FAULT_READ_PATH") || fd_matches(out, "GK_FAULT_WRITE_PATH")) {
        errno = EXDEV;
        return -1;
    }
    return real_copy_file_range(in, in_off, out, out_off, len, flags);
}

int fsync(int fd) {
    REAL(fsync);
    if (fd_matches(fd, "GK_FAULT_FSYNC_PATH")) {
        errno = EIO;
        return -1;
    }
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync);
    if (fd_matches(fd, "GK_FAULT_FSYNC_PATH")) {
        errno = EIO;
        return -1;
    }
    return real_fdatasync(fd);
}

void *dlopen(const char *file, int mode) {
    REAL(dlopen);
    const char *want = getenv("GK_FAULT_DLOPEN");
    if (file && want && *want && strstr(file, want)) return NULL;
    return real_dlopen(file, mode);
}
