/*
 * journal.c - the journal of an in-place header write, and recovery from it.
 *
 * Before an in-place edit touches FILE it writes FILE.ggufkit-journal:
 *
 *   magic "GGUFKJ01" | ino u64 | old_size u64 | new_size u64 | off u64 | len u64
 *   | the old bytes of FILE[off, off + len) | SHA-256 of everything before
 *
 * (numbers little-endian), fsyncs it and the folder, and only then writes the new
 * bytes. A journal that is complete (length and checksum agree) therefore always
 * holds the bytes to put back; one that is not was cut short before FILE was
 * touched and is simply removed. Recovery restores FILE[off, off + len), truncates
 * FILE to old_size, fsyncs, then removes the journal: the file is the old version.
 *
 * Only the holder of FILE's edit lock (io/lock.h) recovers, so a journal is never
 * taken from a live editor: gk_journal_recover takes the lock, and
 * gk_open_exclusive (the open of every in-place edit and of a rewrite that
 * replaces FILE) takes it, recovers, and keeps it until gk_close.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "edit/journal.h"
#include "format/file.h"
#include "hash/digest.h"
#include "io/lock.h"
#include "io/source.h"

#define JOURNAL_MAGIC "GGUFKJ01"
#define JOURNAL_HEAD 48
#define JOURNAL_SUM 32        /* SHA-256 of head and old bytes */

static gk_status interrupted(gk_error *err, const char *what) {
    return gk_error_set(err, GK_E_INTERRUPTED, -1, "stopped before %s", what);
}

char *journal_path(const char *path) {
    size_t n = strlen(path) + sizeof GK_JOURNAL_SUFFIX;
    char *j = malloc(n);
    if (j) snprintf(j, n, "%s%s", path, GK_JOURNAL_SUFFIX);
    return j;
}

static void put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

gk_status journal_write(io_ctx *io, const char *jpath, const journal_info *info, gk_error *err) {
    uint8_t head[JOURNAL_HEAD];
    memcpy(head, JOURNAL_MAGIC, 8);
    put_le64(head + 8, info->ino);
    put_le64(head + 16, info->old_size);
    put_le64(head + 24, info->new_size);
    put_le64(head + 32, info->off);
    put_le64(head + 40, info->len);
    gk_hash_value sum;
    gk_digest h;
    if (gk_digest_init(&h, GK_HASH_SHA256, err) != GK_OK) return err->code;
    gk_digest_update(&h, head, sizeof head);
    gk_digest_update(&h, info->old, info->len);
    gk_digest_final(&h, &sum);
    gk_digest_free(&h);

    int fd = open(jpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return gk_error_set(err, GK_E_EXISTS, -1, "%s: a journal of an interrupted edit is there (recover first)", jpath);
        return gk_error_set(err, GK_E_IO, -1, "%s: cannot create the journal: %s", jpath, strerror(errno));
    }
    gk_status st = io_pwrite_all(io, fd, head, sizeof head, 0, "journal write", err);
    if (st == GK_OK) st = io_pwrite_all(io, fd, info->old, info->len, JOURNAL_HEAD, "journal write", err);
    if (st == GK_OK) st = io_pwrite_all(io, fd, sum.bytes, JOURNAL_SUM, JOURNAL_HEAD + info->len, "journal write", err);
    if (st == GK_OK && !io_step(io, "journal fsync")) st = interrupted(err, "journal fsync");
    if (st == GK_OK && fdatasync(fd) != 0) st = gk_error_set(err, GK_E_IO, -1, "%s: fsync failed: %s", jpath, strerror(errno));
    close(fd);
    if (st == GK_OK) st = io_fsync_dir(io, jpath, err);
    if (st != GK_OK && st != GK_E_INTERRUPTED) unlink(jpath);   /* the file is untouched */
    return st;
}

/* Reads a whole (small) file. @return : malloc'ed bytes, or NULL with errno. */
static uint8_t *read_all(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat sb;
    uint8_t *buf = NULL;
    if (fstat(fd, &sb) == 0 && (buf = malloc((size_t)sb.st_size + 1)) != NULL) {
        size_t got = 0;
        while (got < (size_t)sb.st_size) {
            ssize_t n = pread(fd, buf + got, (size_t)sb.st_size - got, (off_t)got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += (size_t)n;
        }
        *len = got;
    }
    close(fd);
    return buf;
}

/* Whether buf is a complete journal (*complete), and then its contents in *info.
 * @return : GK_OK, or an error when its checksum cannot be computed (the SHA-256
 *           library cannot be loaded): the journal must then be left alone. */
static gk_status journal_parse(const uint8_t *buf, size_t len, journal_info *info, bool *complete, gk_error *err) {
    *complete = false;
    if (len < JOURNAL_HEAD + JOURNAL_SUM || memcmp(buf, JOURNAL_MAGIC, 8) != 0) return GK_OK;
    info->ino = get_le64(buf + 8);
    info->old_size = get_le64(buf + 16);
    info->new_size = get_le64(buf + 24);
    info->off = get_le64(buf + 32);
    uint64_t n = get_le64(buf + 40);
    if (n != len - JOURNAL_HEAD - JOURNAL_SUM) return GK_OK;
    gk_hash_value sum;
    gk_status st = gk_digest_once(GK_HASH_SHA256, buf, JOURNAL_HEAD + (size_t)n, &sum, err);
    if (st != GK_OK) return st;
    if (memcmp(sum.bytes, buf + JOURNAL_HEAD + n, JOURNAL_SUM) != 0) return GK_OK;
    info->len = (size_t)n;
    info->old = buf + JOURNAL_HEAD;
    *complete = info->off + n <= info->old_size;
    return GK_OK;
}

/* Removes the journal and fsyncs its folder. */
static gk_status remove_journal(io_ctx *io, const char *jpath, gk_error *err) {
    if (!io_step(io, "journal unlink")) return interrupted(err, "journal unlink");
    if (unlink(jpath) != 0 && errno != ENOENT)
        return gk_error_set(err, GK_E_IO, -1, "%s: cannot remove: %s", jpath, strerror(errno));
    return io_fsync_dir(io, jpath, err);
}

/* @return : true when the file already holds the journal's old bytes and size. */
static bool file_matches(int fd, const struct stat *sb, const journal_info *info) {
    if ((uint64_t)sb->st_size != info->old_size) return false;
    uint8_t *cur = malloc(info->len ? info->len : 1);
    if (cur == NULL) return false;
    ssize_t n = info->len ? pread(fd, cur, info->len, (off_t)info->off) : 0;
    bool same = n == (ssize_t)info->len && memcmp(cur, info->old, info->len) == 0;
    free(cur);
    return same;
}

/* Puts the journal's old bytes back into fd (the file at path, edit lock held). */
static gk_status restore(io_ctx *io, int fd, const char *path, const journal_info *info, gk_recovery *what,
                         gk_error *err) {
    struct stat sb;
    gk_status st = GK_OK;
    if (fstat(fd, &sb) != 0) {
        st = gk_error_set(err, GK_E_IO, -1, "%s: %s", path, strerror(errno));
    } else if ((uint64_t)sb.st_ino != info->ino) {
        st = gk_error_set(err, GK_E_CORRUPT, -1, "%s%s belongs to another file (inode %llu, not %llu): left alone", path,
                          GK_JOURNAL_SUFFIX, (unsigned long long)info->ino, (unsigned long long)sb.st_ino);
    } else if (file_matches(fd, &sb, info)) {
        *what = GK_RECOVERY_UNTOUCHED;
    } else {
        *what = GK_RECOVERY_RESTORED;
        st = io_pwrite_all(io, fd, info->old, info->len, info->off, "restore write", err);
        if (st == GK_OK && (uint64_t)sb.st_size != info->old_size) {
            if (!io_step(io, "restore truncate")) st = interrupted(err, "restore truncate");
            else if (ftruncate(fd, (off_t)info->old_size) != 0)
                st = gk_error_set(err, GK_E_IO, -1, "%s: truncate failed: %s", path, strerror(errno));
        }
        if (st == GK_OK && !io_step(io, "restore fsync")) st = interrupted(err, "restore fsync");
        if (st == GK_OK && fsync(fd) != 0) st = gk_error_set(err, GK_E_IO, -1, "%s: fsync failed: %s", path, strerror(errno));
    }
    return st;
}

/* Recovers path's journal, if there is one, through fd, which holds the edit
 * lock: no live process is in the middle of an edit, so the journal is one
 * whose editor is gone. Readers are kept out while the header is put back. */
static gk_status recover_locked(io_ctx *io, int fd, const char *path, gk_recovery *what, gk_error *err) {
    *what = GK_RECOVERY_NONE;
    char *jpath = journal_path(path);
    if (jpath == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    struct stat sb;
    if (lstat(jpath, &sb) != 0) {
        free(jpath);
        return GK_OK;
    }
    gk_status st = gk_lock_take(fd, GK_LOCK_HEADER, true, GK_LOCK_READ_WAIT_MS, err);
    size_t len = 0;
    uint8_t *buf = st == GK_OK ? read_all(jpath, &len) : NULL;
    journal_info info;
    bool complete = false;
    if (st != GK_OK) {
        /* reported */
    } else if (buf == NULL) {
        st = gk_error_set(err, GK_E_IO, -1, "%s: cannot read: %s", jpath, strerror(errno));
    } else if ((st = journal_parse(buf, len, &info, &complete, err)) != GK_OK) {
        /* reported: the journal stays for a run that can check it */
    } else if (!complete) {
        *what = GK_RECOVERY_TORN;
        st = remove_journal(io, jpath, err);
    } else {
        st = restore(io, fd, path, &info, what, err);
        if (st == GK_OK) st = remove_journal(io, jpath, err);
    }
    gk_lock_drop(fd, GK_LOCK_HEADER);
    free(buf);
    free(jpath);
    return st;
}

gk_status gk_journal_recover(const char *path, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                             void *hook_ctx, gk_error *err) {
    io_ctx io = { hook, hook_ctx };
    *what = GK_RECOVERY_NONE;
    char *jpath = journal_path(path);
    if (jpath == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    struct stat sb;
    bool there = lstat(jpath, &sb) == 0;
    free(jpath);
    if (!there) return GK_OK;   /* nothing to do: no need to open the file for writing */
    int fd;
    gk_status st = gk_lock_open(path, wait_ms, &fd, err);
    if (st == GK_E_NOT_FOUND) return gk_error_set(err, GK_E_NOT_FOUND, -1, "%s: a journal is there but the file is gone", path);
    if (st != GK_OK) return st;
    st = recover_locked(&io, fd, path, what, err);
    close(fd);
    return st;
}

gk_status gk_open_exclusive(const char *path, unsigned flags, unsigned wait_ms, gk_recovery *recovered,
                            gk_file **out, gk_error *err) {
    gk_recovery what = GK_RECOVERY_NONE;
    *out = NULL;
    if (recovered) *recovered = GK_RECOVERY_NONE;
    int fd;
    gk_status st = gk_lock_open(path, wait_ms, &fd, err);
    if (st == GK_E_NOT_FOUND && strstr(path, "::"))
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "a member of an archive cannot be edited in place or replaced (write it out with -o OUT)");
    if (st != GK_OK) return st;
    st = recover_locked(NULL, fd, path, &what, err);
    if (recovered) *recovered = what;
    if (st != GK_OK) {
        close(fd);
        return st;
    }
    if (gk_source_sniff(path) == GK_SOURCE_PLAIN) {
        st = gk_file_open_fd(fd, path, flags, out, err);   /* reads through the locked fd */
    } else if ((st = gk_open(path, flags, out, err)) == GK_OK) {
        (*out)->lock_fd = fd;                               /* a stream: the lock stays beside it */
    } else {
        close(fd);
    }
    if (st == GK_OK) (*out)->edit_locked = true;
    return st;
}
