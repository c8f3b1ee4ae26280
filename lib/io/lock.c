/*
 * lock.c - bounded waits for the one-byte open-file-description locks of
 * lock.h, and opening a file under its edit lock.
 *
 * F_OFD_SETLK is polled (1 ms, doubling up to 16 ms) rather than waited on
 * with F_OFD_SETLKW, because a blocking wait can only be bounded with a signal,
 * which a library must not use. EINVAL, ENOLCK and EOPNOTSUPP mean that the
 * filesystem (or kernel) has no such locks: the caller goes on unlocked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/lock.h"

static int set_lock(int fd, gk_lock_byte byte, short type) {
    struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)byte, .l_len = 1 };
    return fcntl(fd, F_OFD_SETLK, &fl);
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Polls until the lock is taken or the deadline passes. @return : 0, or the errno. */
static int take_until(int fd, gk_lock_byte byte, bool exclusive, uint64_t deadline) {
    unsigned pause_us = 1000;
    for (;;) {
        if (set_lock(fd, byte, exclusive ? F_WRLCK : F_RDLCK) == 0) return 0;
        int e = errno;
        if (e == EINVAL || e == ENOLCK || e == EOPNOTSUPP) return 0;   /* no locks here */
        if (e != EAGAIN && e != EACCES && e != EINTR) return e;
        if (now_ms() >= deadline) return EAGAIN;
        struct timespec ts = { 0, (long)pause_us * 1000 };
        nanosleep(&ts, NULL);
        if (pause_us < 16000) pause_us *= 2;
    }
}

static gk_status lock_error(int e, gk_lock_byte byte, unsigned wait_ms, gk_error *err) {
    if (e != EAGAIN) return gk_error_set(err, GK_E_IO, -1, "cannot lock: %s", strerror(e));
    return gk_error_set(err, GK_E_LOCKED, -1, "%s by another process (waited %u.%03u s)",
                        byte == GK_LOCK_EDIT ? "being edited or replaced" : "header being rewritten",
                        wait_ms / 1000, wait_ms % 1000);
}

gk_status gk_lock_take(int fd, gk_lock_byte byte, bool exclusive, unsigned wait_ms, gk_error *err) {
    int e = take_until(fd, byte, exclusive, now_ms() + wait_ms);
    return e ? lock_error(e, byte, wait_ms, err) : GK_OK;
}

void gk_lock_drop(int fd, gk_lock_byte byte) { set_lock(fd, byte, F_UNLCK); }

gk_status gk_lock_open(const char *path, unsigned wait_ms, int *fd, gk_error *err) {
    uint64_t deadline = now_ms() + wait_ms;
    *fd = -1;
    for (;;) {
        int f = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (f < 0) {
            int e = errno;
            if (e == ENOENT) return gk_error_set(err, GK_E_NOT_FOUND, -1, "%s", strerror(e));
            return gk_error_set(err, GK_E_IO, -1, "cannot open for writing: %s", strerror(e));
        }
        struct stat a, b;
        if (fstat(f, &a) != 0 || !S_ISREG(a.st_mode)) {
            close(f);
            return gk_error_set(err, GK_E_ARG, -1, "not a regular file");
        }
        int e = take_until(f, GK_LOCK_EDIT, true, deadline);
        if (e) {
            close(f);
            return lock_error(e, GK_LOCK_EDIT, wait_ms, err);
        }
        /* The holder before us may have replaced the file: lock the one path names now. */
        if (stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
            *fd = f;
            return GK_OK;
        }
        close(f);
        if (now_ms() >= deadline) return lock_error(EAGAIN, GK_LOCK_EDIT, wait_ms, err);
    }
}
