/*
 * fault_preload.c - an LD_PRELOAD shim that injects I/O faults into ggufkit, for
 * the command-line fault and crash tests (tests/cli/test_faults.sh,
 * test_crash_safety.sh). Inert unless its environment variables are set. Every
 * fault lands at a point of the work (a byte count or a step), never at a
 * moment, so a test behaves the same on any disk at any speed.
 *
 * Failing I/O:
 *   GK_FAULT_READ_PATH=SUBSTR   reads from a file whose path contains SUBSTR ...
 *   GK_FAULT_READ_AFTER=N       ... succeed for N bytes in all, then fail
 *   GK_FAULT_READ_MODE=eio|eof  failing reads return -1/EIO (default) or 0 (the
 *                               file seems to end: a short read)
 *   GK_FAULT_WRITE_PATH=SUBSTR  writes to a file whose path contains SUBSTR ...
 *   GK_FAULT_WRITE_AFTER=N      ... succeed for N bytes in all (default: no
 *                               limit), then fail with
 *   GK_FAULT_WRITE_ERRNO=N      errno N (default ENOSPC; the first failing write
 *                               is short when it straddles the limit)
 *   GK_FAULT_DIRECT_EINVAL=1    writes to such a file fail with EINVAL while it
 *                               is open with O_DIRECT (a filesystem that takes
 *                               the flag but not the writes)
 *   GK_FAULT_FSYNC_PATH=SUBSTR  fsync of such a file fails with EIO
 *   GK_FAULT_DLOPEN=SUBSTR      dlopen of a library whose name contains SUBSTR
 *                               fails (a machine without the optional library)
 *   GK_FAULT_NO_TMPFILE=1       open and openat with O_TMPFILE fail with
 *                               EOPNOTSUPP (a filesystem without unnamed files)
 *   GK_FAULT_CLONE_AFTER=N      FICLONERANGE works N times in all, then is
 *                               refused with EOPNOTSUPP (a filesystem that takes
 *                               the first clones, the probe's, but not the rest)
 *
 * Events (one trigger, one action, fired once):
 *   GK_FAULT_TRIGGER=read:N     when a read would deliver byte N (counted from 0
 *                               over all reads of the trigger files) ...
 *                   write:N     when a write would carry byte N of all bytes
 *                               written to the trigger files ...
 *                   step:K      before the K-th step (from 1): a write or pwrite,
 *                               fsync, fdatasync, ftruncate, copy_file_range,
 *                               rename, link, unlink, or an open that creates,
 *                               on any file but stdin, stdout and stderr ...
 *   GK_FAULT_TRIGGER_PATH=SUBSTR  the trigger files for read:/write: (default:
 *                               every file but stdin, stdout and stderr);
 *                               copy_file_range from or to them fails with EXDEV
 *                               so the bytes go through read and write
 *   GK_FAULT_ACTION=kill        ... SIGKILL (a write: / step: trigger first
 *                               writes the bytes before byte N, a torn write)
 *                   int|term    ... SIGINT or SIGTERM to the process, then the
 *                               call goes on
 *                   truncate:S  ... the file being read is truncated to S bytes,
 *                               then the read goes on (an input that shrinks)
 *   GK_FAULT_COUNT_OUT=FILE     at exit, writes "steps S\nwritten W\nread R\n":
 *                               the steps, and the bytes written to and read from
 *                               the trigger files, of the run (to pick triggers)
 *
 * Paths are those of /proc/self/fd. pread, read, write, pwrite, fsync,
 * fdatasync, ftruncate, copy_file_range, open, openat, rename, renameat,
 * renameat2, link, linkat, unlink, unlinkat, dlopen and ioctl are wrapped;
 * copy_file_range between files of which one is watched fails with EXDEV, so the
 * caller falls back to reads and writes, which are. Counters are atomic: the
 * writer thread and the workers share them.
 */
/* pread and pread64 (open and open64, ...) are all defined here: no 64-bit redirection. */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/fs.h>

/* The next definition of name (libc's), looked up once. */
#define REAL(name) static __typeof__(&name) real_##name; \
    if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

/* ------------------------------------------------------------------------ */
/* Which files                                                              */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* Events: a trigger (a byte read or written, a step) and its action        */
/* ------------------------------------------------------------------------ */

enum { TRIG_NONE, TRIG_READ, TRIG_WRITE, TRIG_STEP };

static int trig_kind = -1;              /* -1: GK_FAULT_TRIGGER not parsed yet */
static unsigned long long trig_at;
static int fired;
static unsigned long long ev_read, ev_written, ev_steps;

/* The trigger, parsed on first use (a race parses twice, to the same values). */
static int trigger(void) {
    int k = __atomic_load_n(&trig_kind, __ATOMIC_ACQUIRE);
    if (k >= 0) return k;
    const char *t = getenv("GK_FAULT_TRIGGER");
    k = TRIG_NONE;
    if (t && strncmp(t, "read:", 5) == 0) k = TRIG_READ, trig_at = strtoull(t + 5, NULL, 0);
    else if (t && strncmp(t, "write:", 6) == 0) k = TRIG_WRITE, trig_at = strtoull(t + 6, NULL, 0);
    else if (t && strncmp(t, "step:", 5) == 0) k = TRIG_STEP, trig_at = strtoull(t + 5, NULL, 0);
    __atomic_store_n(&trig_kind, k, __ATOMIC_RELEASE);
    return k;
}

/* A file whose bytes count for read: and write: triggers. */
static int trigger_file(int fd) {
    const char *want = getenv("GK_FAULT_TRIGGER_PATH");
    if (want == NULL || *want == '\0') return fd > 2;
    return fd_matches(fd, "GK_FAULT_TRIGGER_PATH");
}

static int action_is(const char *name) {
    const char *a = getenv("GK_FAULT_ACTION");
    if (a == NULL || *a == '\0') a = "kill";
    return strcmp(a, name) == 0;
}

/* Carries out GK_FAULT_ACTION once; fd is the file being read or written. */
static void fire(int fd) {
    if (__atomic_exchange_n(&fired, 1, __ATOMIC_SEQ_CST)) return;
    const char *a = getenv("GK_FAULT_ACTION");
    if (a && strcmp(a, "int") == 0) {
        kill(getpid(), SIGINT);
    } else if (a && strcmp(a, "term") == 0) {
        kill(getpid(), SIGTERM);
    } else if (a && strncmp(a, "truncate:", 9) == 0) {
        char link[64], path[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        if (n > 0) {
            path[n] = '\0';
            if (truncate(path, (off_t)strtoull(a + 9, NULL, 0)) != 0) _exit(99);
        }
    } else {
        raise(SIGKILL);
        _exit(137);
    }
}

/* Counts one step; fires before the step that is the trigger. */
static void step(void) {
    unsigned long long k = __atomic_add_fetch(&ev_steps, 1, __ATOMIC_SEQ_CST);
    if (trigger() == TRIG_STEP && k == trig_at) fire(-1);
}

/* Before a read of len bytes from fd: fires when it would deliver byte trig_at. */
static void before_read(int fd, size_t len) {
    if (trigger() == TRIG_READ && trigger_file(fd) &&
        __atomic_load_n(&ev_read, __ATOMIC_SEQ_CST) + len > trig_at)
        fire(fd);
}

static void after_read(int fd, ssize_t n) {
    if (n > 0 && trigger_file(fd)) __atomic_add_fetch(&ev_read, (unsigned long long)n, __ATOMIC_SEQ_CST);
}

/* Before a write of len bytes to fd: the bytes that may go before the trigger
 * fires (len when it does not fire in this write). A kill first writes them
 * (through write_part), a torn write. */
static size_t before_write(int fd, size_t len) {
    if (trigger() != TRIG_WRITE || !trigger_file(fd)) return len;
    unsigned long long done = __atomic_load_n(&ev_written, __ATOMIC_SEQ_CST);
    if (done + len <= trig_at) return len;
    return trig_at > done ? (size_t)(trig_at - done) : 0;
}

static void after_write(int fd, ssize_t n) {
    if (n > 0 && trigger_file(fd)) __atomic_add_fetch(&ev_written, (unsigned long long)n, __ATOMIC_SEQ_CST);
}

/* At exit: the counts of this run, for a test to choose its triggers. */
__attribute__((destructor)) static void write_counts(void) {
    const char *out = getenv("GK_FAULT_COUNT_OUT");
    if (out == NULL || *out == '\0') return;
    char line[160];
    int n = snprintf(line, sizeof line, "steps %llu\nwritten %llu\nread %llu\n",
                     __atomic_load_n(&ev_steps, __ATOMIC_SEQ_CST),
                     __atomic_load_n(&ev_written, __ATOMIC_SEQ_CST),
                     __atomic_load_n(&ev_read, __ATOMIC_SEQ_CST));
    FILE *fp = fopen(out, "w");
    if (fp == NULL) return;
    fwrite(line, 1, (size_t)n, fp);
    fclose(fp);
}

/* ------------------------------------------------------------------------ */
/* Failing reads and writes                                                 */
/* ------------------------------------------------------------------------ */

static unsigned long long read_done, written;

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
    unsigned long long limit = env_u64("GK_FAULT_WRITE_AFTER", ~0ULL);
    if (written >= limit) {
        errno = (int)env_u64("GK_FAULT_WRITE_ERRNO", ENOSPC);
        return -1;
    }
    unsigned long long left = limit - written;
    return (ssize_t)(len < left ? len : left);
}

/* ------------------------------------------------------------------------ */
/* Reads                                                                    */
/* ------------------------------------------------------------------------ */

ssize_t pread64(int fd, void *buf, size_t len, off_t off) {
    REAL(pread64);
    before_read(fd, len);
    ssize_t n;
    if (fd_matches(fd, "GK_FAULT_READ_PATH")) {
        ssize_t b = read_budget(len);
        if (b <= 0) return b;
        n = real_pread64(fd, buf, (size_t)b, off);
        if (n > 0) read_done += (unsigned long long)n;
    } else {
        n = real_pread64(fd, buf, len, off);
    }
    after_read(fd, n);
    return n;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off) { return pread64(fd, buf, len, off); }

ssize_t read(int fd, void *buf, size_t len) {
    REAL(read);
    before_read(fd, len);
    ssize_t n;
    if (fd_matches(fd, "GK_FAULT_READ_PATH")) {
        ssize_t b = read_budget(len);
        if (b <= 0) return b;
        n = real_read(fd, buf, (size_t)b);
        if (n > 0) read_done += (unsigned long long)n;
    } else {
        n = real_read(fd, buf, len);
    }
    after_read(fd, n);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Writes                                                                   */
/* ------------------------------------------------------------------------ */

/* One write or pwrite (off < 0: write) after the failure rules. */
static ssize_t do_write(int fd, const void *buf, size_t len, off_t off) {
    REAL(write);
    REAL(pwrite64);
    if (fd_matches(fd, "GK_FAULT_WRITE_PATH")) {
        if (direct_refused(fd)) {
            errno = EINVAL;
            return -1;
        }
        ssize_t b = write_budget(len);
        if (b < 0) return b;
        len = (size_t)b;
    }
    ssize_t n = off < 0 ? real_write(fd, buf, len) : real_pwrite64(fd, buf, len, off);
    if (n > 0 && fd_matches(fd, "GK_FAULT_WRITE_PATH")) written += (unsigned long long)n;
    after_write(fd, n);
    return n;
}

/* A write with its events: a step, and a write: trigger inside it. */
static ssize_t evented_write(int fd, const void *buf, size_t len, off_t off) {
    if (fd > 2) step();
    size_t before = before_write(fd, len);
    if (before < len) {
        if (!action_is("kill")) {
            fire(fd);
            return do_write(fd, buf, len, off);
        }
        if (before > 0) (void)do_write(fd, buf, before, off);
        fire(fd);
    }
    return do_write(fd, buf, len, off);
}

ssize_t write(int fd, const void *buf, size_t len) { return evented_write(fd, buf, len, -1); }

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off) {
    if (off < 0) {
        errno = EINVAL;
        return -1;
    }
    return evented_write(fd, buf, len, off);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off) { return pwrite64(fd, buf, len, off); }

ssize_t copy_file_range(int in, loff_t *in_off, int out, loff_t *out_off, size_t len, unsigned flags) {
    REAL(copy_file_range);
    step();
    const char *tp = getenv("GK_FAULT_TRIGGER_PATH");
    int watched_trigger = tp && *tp && (fd_matches(in, "GK_FAULT_TRIGGER_PATH") ||
                                        fd_matches(out, "GK_FAULT_TRIGGER_PATH"));
    if (fd_matches(in, "GK_FAULT_READ_PATH") || fd_matches(out, "GK_FAULT_WRITE_PATH") ||
        watched_trigger) {
        errno = EXDEV;
        return -1;
    }
    size_t before = before_write(out, len);
    if (before < len) {
        if (before > 0 && action_is("kill")) {
            ssize_t n = real_copy_file_range(in, in_off, out, out_off, before, flags);
            after_write(out, n);
        }
        fire(out);
    }
    ssize_t n = real_copy_file_range(in, in_off, out, out_off, len, flags);
    after_write(out, n);
    return n;
}

/* ------------------------------------------------------------------------ */
/* Other steps                                                              */
/* ------------------------------------------------------------------------ */

int fsync(int fd) {
    REAL(fsync);
    step();
    if (fd_matches(fd, "GK_FAULT_FSYNC_PATH")) {
        errno = EIO;
        return -1;
    }
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync);
    step();
    if (fd_matches(fd, "GK_FAULT_FSYNC_PATH")) {
        errno = EIO;
        return -1;
    }
    return real_fdatasync(fd);
}

int ftruncate64(int fd, off_t len) {
    REAL(ftruncate64);
    step();
    return real_ftruncate64(fd, len);
}

int ftruncate(int fd, off_t len) { return ftruncate64(fd, len); }

/* An open that creates a file (O_CREAT or O_TMPFILE) is a step. */
static int creates(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

/* An O_TMPFILE open refused by GK_FAULT_NO_TMPFILE (errno set). */
static int tmpfile_refused(int flags) {
    if ((flags & O_TMPFILE) != O_TMPFILE || env_u64("GK_FAULT_NO_TMPFILE", 0) == 0) return 0;
    errno = EOPNOTSUPP;
    return 1;
}

static mode_t mode_arg(int flags, va_list ap) {
    return creates(flags) ? (mode_t)va_arg(ap, int) : 0;
}

int open64(const char *path, int flags, ...) {
    REAL(open64);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (tmpfile_refused(flags)) return -1;
    if (creates(flags)) step();
    return real_open64(path, flags, mode);
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return open64(path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    REAL(openat64);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (tmpfile_refused(flags)) return -1;
    if (creates(flags)) step();
    return real_openat64(dirfd, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return openat64(dirfd, path, flags, mode);
}

int rename(const char *a, const char *b) {
    REAL(rename);
    step();
    return real_rename(a, b);
}

int renameat(int da, const char *a, int db, const char *b) {
    REAL(renameat);
    step();
    return real_renameat(da, a, db, b);
}

int renameat2(int da, const char *a, int db, const char *b, unsigned flags) {
    REAL(renameat2);
    step();
    return real_renameat2(da, a, db, b, flags);
}

int link(const char *a, const char *b) {
    REAL(link);
    step();
    return real_link(a, b);
}

int linkat(int da, const char *a, int db, const char *b, int flags) {
    REAL(linkat);
    step();
    return real_linkat(da, a, db, b, flags);
}

int unlink(const char *path) {
    REAL(unlink);
    step();
    return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
    REAL(unlinkat);
    step();
    return real_unlinkat(dirfd, path, flags);
}

/* ------------------------------------------------------------------------ */
/* Libraries                                                                */
/* ------------------------------------------------------------------------ */

void *dlopen(const char *file, int mode) {
    REAL(dlopen);
    const char *want = getenv("GK_FAULT_DLOPEN");
    if (file && want && *want && strstr(file, want)) return NULL;
    return real_dlopen(file, mode);
}

/* ------------------------------------------------------------------------ */
/* Clones                                                                   */
/* ------------------------------------------------------------------------ */

static unsigned long long clones;

int ioctl(int fd, unsigned long req, ...) {
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    REAL(ioctl);
#ifdef FICLONERANGE
    if (req == FICLONERANGE && getenv("GK_FAULT_CLONE_AFTER") &&
        __atomic_add_fetch(&clones, 1, __ATOMIC_SEQ_CST) > env_u64("GK_FAULT_CLONE_AFTER", 0)) {
        errno = EOPNOTSUPP;
        return -1;
    }
#endif
    return real_ioctl(fd, req, arg);
}
