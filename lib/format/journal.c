/*
 * journal.c - the journal of an in-place header write, and recovery from it.
 *
 * Before an in-place edit touches FILE it writes FILE.ggufkit-journal (format 2):
 *
 *   magic "GGUFKJ02" | ino u64 | dev u64 | old_size u64 | new_size u64 | off u64
 *   | old_len u64 | new_len u64 | prefix digest [32] | rest digest [32]
 *   | the old bytes FILE[off, off + old_len) | the new bytes of that range (new_len)
 *   | SHA-256 of everything before
 *
 * (numbers little-endian; digests SHA-256: the prefix digest of FILE[0, off),
 * which the write leaves alone, the rest digest of a sample of the other bytes it
 * leaves alone, [off + max(old_len, new_len), min(old_size, new_size)): all of
 * them up to 4 MiB, else 16 pieces of 256 KiB spread from its first byte to its
 * last). It fsyncs the journal and the folder, and only then writes the new
 * bytes. A journal that is complete (length and checksum agree) therefore always
 * holds the bytes to put back; one that is not was cut short before FILE was
 * touched and is simply removed.
 *
 * A journal proves that it belongs to the file it finds beside it by the bytes:
 * the file's size is its old or new size (or between them: a truncate pending),
 * its first off bytes and its sampled rest have the recorded digests, and every
 * byte of the changing range is the old one or the new one (a write or a restore
 * cut short leaves a mix). Then recovery restores FILE[off, off + old_len),
 * truncates FILE to old_size, fsyncs, and removes the journal: the file is the
 * old version. A journal that does not match is stale (FILE was replaced, by cp
 * over it or by another file under its name): nothing is written, the journal
 * stays, and gk_journal_discard removes it. The inode is recorded but proves
 * nothing (cp keeps it, a file system reuses it).
 *
 * Format 1 ("GGUFKJ01", written before: ino, old_size, new_size, off, len, old
 * bytes, SHA-256) records neither the new bytes nor any digest. Such a journal
 * is removed when the file holds exactly its old bytes; one of another inode or
 * size is stale; any other is applied only when asked (gk_journal_recover_force).
 *
 * Only the holder of FILE's edit lock recovers, so a journal is never
 * taken from a live editor: gk_journal_recover takes the lock, and
 * gk_open_exclusive (the open of every in-place edit and of a rewrite that
 * replaces FILE) takes it, recovers, and keeps it until gk_close.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/http.h"
#include "format/file.h"
#include "format/journal.h"
#include "io/lock.h"
#include "io/source.h"
#include "util/byteorder.h"
#include "io/digest.h"

#define MAGIC_V1 "GGUFKJ01"
#define MAGIC_V2 "GGUFKJ02"
#define HEAD_V1 48
#define HEAD_V2 128
#define SUM 32                       /* SHA-256 of head and bytes */
#define REST_WHOLE (4u << 20)        /* a rest up to this size is digested whole */
#define REST_PIECE (256u << 10)      /* else this much at each of REST_PIECES places */
#define REST_PIECES 16
#define JOURNAL_MAX (1ull << 32)     /* a larger "journal" is not one of ours */

/* How a recovery treats the journal it finds. */
typedef enum mode { MODE_RECOVER, MODE_FORCE, MODE_DISCARD } mode;

char *journal_path(const char *path) {
    size_t n = strlen(path) + sizeof GK_JOURNAL_SUFFIX;
    char *j = malloc(n);
    if (j) snprintf(j, n, "%s%s", path, GK_JOURNAL_SUFFIX);
    return j;
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Reads len bytes of fd at off into buf. @return : false on a short read. */
static bool read_at(int fd, uint8_t *buf, size_t len, uint64_t off) {
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += (size_t)n;
    }
    return true;
}

/* Feeds fd's bytes [off, off + len) to d. @return : false on a short read. */
static bool digest_range(gk_digest *d, int fd, uint64_t off, uint64_t len, uint8_t *buf, size_t cap) {
    while (len > 0) {
        size_t n = len < cap ? (size_t)len : cap;
        if (!read_at(fd, buf, n, off)) return false;
        gk_digest_update(d, buf, n);
        off += n;
        len -= n;
    }
    return true;
}

/* The digests of the bytes the write leaves alone: fd's [0, off) into prefix,
 * the sample of [rest_start, rest_end) into rest (see the top of the file).
 * @return : GK_OK, GK_E_IO (*short_read: the file is shorter), GK_E_NOMEM. */
static gk_status unchanged_sums(int fd, const journal_info *info, uint8_t prefix[SUM], uint8_t rest[SUM],
                                bool *short_read, gk_error *err) {
    *short_read = false;
    uint64_t start = info->off + max_u64(info->old_len, info->new_len);
    uint64_t end = min_u64(info->old_size, info->new_size);
    if (end < start) end = start;
    size_t cap = 1u << 20;
    uint8_t *buf = malloc(cap);
    gk_digest d = { 0 };
    gk_status st = buf ? gk_digest_init(&d, GK_HASH_SHA256, err) : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (st != GK_OK) {
        free(buf);
        return st;
    }
    gk_hash_value v;
    bool ok = digest_range(&d, fd, 0, info->off, buf, cap);
    gk_digest_final(&d, &v);
    memcpy(prefix, v.bytes, SUM);
    gk_digest_reset(&d);
    uint8_t bounds[16];
    gk_store_le64(bounds, start);
    gk_store_le64(bounds + 8, end);
    gk_digest_update(&d, bounds, sizeof bounds);
    uint64_t len = end - start;
    if (len <= REST_WHOLE) {
        ok = ok && digest_range(&d, fd, start, len, buf, cap);
    } else {
        for (unsigned k = 0; k < REST_PIECES && ok; k++)
            ok = digest_range(&d, fd, start + k * ((len - REST_PIECE) / (REST_PIECES - 1)), REST_PIECE, buf, cap);
    }
    gk_digest_final(&d, &v);
    memcpy(rest, v.bytes, SUM);
    gk_digest_free(&d);
    free(buf);
    if (!ok) {
        *short_read = true;
        return gk_error_set(err, GK_E_IO, -1, "read failed: %s", errno ? strerror(errno) : "file shorter than expected");
    }
    return GK_OK;
}

gk_status journal_write(io_ctx *io, const char *jpath, int fd, journal_info *info, gk_error *err) {
    bool short_read;
    gk_status st = unchanged_sums(fd, info, info->prefix_sum, info->rest_sum, &short_read, err);
    if (st != GK_OK) return st;
    uint8_t head[HEAD_V2];
    memcpy(head, MAGIC_V2, 8);
    gk_store_le64(head + 8, info->ino);
    gk_store_le64(head + 16, info->dev);
    gk_store_le64(head + 24, info->old_size);
    gk_store_le64(head + 32, info->new_size);
    gk_store_le64(head + 40, info->off);
    gk_store_le64(head + 48, info->old_len);
    gk_store_le64(head + 56, info->new_len);
    memcpy(head + 64, info->prefix_sum, SUM);
    memcpy(head + 96, info->rest_sum, SUM);
    gk_hash_value sum;
    gk_digest h;
    if (gk_digest_init(&h, GK_HASH_SHA256, err) != GK_OK) return err->code;
    gk_digest_update(&h, head, sizeof head);
    gk_digest_update(&h, info->old, info->old_len);
    gk_digest_update(&h, info->new_bytes, info->new_len);
    gk_digest_final(&h, &sum);
    gk_digest_free(&h);

    int jfd = open(jpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (jfd < 0) {
        if (errno == EEXIST)
            return gk_error_set(err, GK_E_EXISTS, -1, "%s: a journal of an interrupted edit is there (recover first)", jpath);
        return gk_error_set(err, GK_E_IO, -1, "%s: cannot create the journal: %s", jpath, strerror(errno));
    }
    /* Head, saved bytes (old, then new), checksum: three writes, as format 1 had. */
    uint8_t *body = malloc(info->old_len + info->new_len + 1);
    if (body == NULL) {
        close(jfd);
        unlink(jpath);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    memcpy(body, info->old, info->old_len);
    memcpy(body + info->old_len, info->new_bytes, info->new_len);
    size_t body_len = info->old_len + info->new_len;
    st = io_pwrite_all(io, jfd, head, sizeof head, 0, "journal write", err);
    if (st == GK_OK) st = io_pwrite_all(io, jfd, body, body_len, HEAD_V2, "journal write", err);
    if (st == GK_OK) st = io_pwrite_all(io, jfd, sum.bytes, SUM, HEAD_V2 + body_len, "journal write", err);
    free(body);
    if (st == GK_OK && !io_step(io, "journal fsync")) st = io_interrupted(err, "journal fsync");
    if (st == GK_OK && fdatasync(jfd) != 0) st = gk_error_set(err, GK_E_IO, -1, "%s: fsync failed: %s", jpath, strerror(errno));
    close(jfd);
    if (st == GK_OK) st = io_fsync_dir(io, jpath, err);
    if (st != GK_OK && st != GK_E_INTERRUPTED) unlink(jpath);   /* the file is untouched */
    return st;
}

/* Reads a whole (small) regular file without blocking on a special one.
 * @return : malloc'ed bytes (*len of them), or NULL with errno. */
static uint8_t *read_all(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) return NULL;
    struct stat sb;
    uint8_t *buf = NULL;
    if (fstat(fd, &sb) != 0) {
        /* errno set */
    } else if (!S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > JOURNAL_MAX) {
        errno = S_ISREG(sb.st_mode) ? EFBIG : EINVAL;
    } else if ((buf = malloc((size_t)sb.st_size + 1)) != NULL) {
        size_t got = 0;
        while (got < (size_t)sb.st_size) {
            ssize_t n = pread(fd, buf + got, (size_t)sb.st_size - got, (off_t)got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += (size_t)n;
        }
        *len = got;
    }
    int e = errno;
    close(fd);
    errno = e;
    return buf;
}

/* What a journal path that is not a regular file is, for messages; NULL for a
 * regular file. ggufkit only ever writes regular journal files. */
static const char *not_a_journal(const struct stat *sb) {
    if (S_ISREG(sb->st_mode)) return NULL;
    if (S_ISDIR(sb->st_mode)) return "a folder";
    if (S_ISLNK(sb->st_mode)) return "a symbolic link";
    if (S_ISFIFO(sb->st_mode)) return "a pipe (FIFO)";
    return "a special file";
}

/* Whether buf is a complete journal (*complete), and then its contents in *info.
 * @return : GK_OK, or an error when its checksum cannot be computed (the SHA-256
 *           library cannot be loaded): the journal must then be left alone. */
static gk_status journal_parse(const uint8_t *buf, size_t len, journal_info *info, bool *complete, gk_error *err) {
    *complete = false;
    memset(info, 0, sizeof *info);
    size_t head;
    if (len >= 8 && memcmp(buf, MAGIC_V2, 8) == 0) {
        if (len < HEAD_V2 + SUM) return GK_OK;
        info->version = 2;
        head = HEAD_V2;
        info->ino = gk_load_le64(buf + 8);
        info->dev = gk_load_le64(buf + 16);
        info->old_size = gk_load_le64(buf + 24);
        info->new_size = gk_load_le64(buf + 32);
        info->off = gk_load_le64(buf + 40);
        uint64_t o = gk_load_le64(buf + 48), n = gk_load_le64(buf + 56);
        if (o > len || n > len || o + n != len - HEAD_V2 - SUM) return GK_OK;
        info->old_len = (size_t)o;
        info->new_len = (size_t)n;
        memcpy(info->prefix_sum, buf + 64, SUM);
        memcpy(info->rest_sum, buf + 96, SUM);
    } else if (len >= 8 && memcmp(buf, MAGIC_V1, 8) == 0) {
        if (len < HEAD_V1 + SUM) return GK_OK;
        info->version = 1;
        head = HEAD_V1;
        info->ino = gk_load_le64(buf + 8);
        info->old_size = gk_load_le64(buf + 16);
        info->new_size = gk_load_le64(buf + 24);
        info->off = gk_load_le64(buf + 32);
        uint64_t o = gk_load_le64(buf + 40);
        if (o != len - HEAD_V1 - SUM) return GK_OK;
        info->old_len = (size_t)o;
    } else {
        return GK_OK;
    }
    size_t body = len - SUM;
    gk_hash_value sum;
    gk_status st = gk_digest_once(GK_HASH_SHA256, buf, body, &sum, err);
    if (st != GK_OK) return st;
    if (memcmp(sum.bytes, buf + body, SUM) != 0) return GK_OK;
    info->old = buf + head;
    info->new_bytes = buf + head + info->old_len;
    *complete = info->off + info->old_len <= info->old_size &&
                (info->version == 1 || info->off + info->new_len <= info->new_size);
    return GK_OK;
}

/* Judges a complete journal against the open file fd. */
static gk_status judge_info(int fd, const journal_info *info, journal_verdict *v, char *why, size_t n,
                            gk_error *err) {
    struct stat sb;
    if (fstat(fd, &sb) != 0) return gk_error_set(err, GK_E_IO, -1, "%s", strerror(errno));
    uint64_t cur = (uint64_t)sb.st_size;
    *v = JOURNAL_STALE;
    if (info->version == 1) {
        if ((uint64_t)sb.st_ino != info->ino) {
            snprintf(why, n, "it was written for inode %llu; this file is inode %llu",
                     (unsigned long long)info->ino, (unsigned long long)sb.st_ino);
            return GK_OK;
        }
        if (cur != info->old_size && cur != info->new_size) {
            snprintf(why, n, "this file has %llu bytes; the edited file had %llu (%llu after the edit)",
                     (unsigned long long)cur, (unsigned long long)info->old_size, (unsigned long long)info->new_size);
            return GK_OK;
        }
        *v = JOURNAL_UNPROVEN;
        if (cur != info->old_size) return GK_OK;
        uint8_t *now = malloc(info->old_len ? info->old_len : 1);
        if (now == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        if (read_at(fd, now, info->old_len, info->off) && memcmp(now, info->old, info->old_len) == 0) *v = JOURNAL_OLD;
        free(now);
        return GK_OK;
    }
    uint64_t lo = min_u64(info->old_size, info->new_size), hi = max_u64(info->old_size, info->new_size);
    if (cur < lo || cur > hi) {
        if (info->old_size == info->new_size)
            snprintf(why, n, "this file has %llu bytes; the edited file had %llu", (unsigned long long)cur,
                     (unsigned long long)info->old_size);
        else
            snprintf(why, n, "this file has %llu bytes; the edited file had %llu (%llu after the edit)",
                     (unsigned long long)cur, (unsigned long long)info->old_size, (unsigned long long)info->new_size);
        return GK_OK;
    }
    /* The changing range: each byte the old one or the new one. */
    uint64_t span = min_u64(cur, info->off + max_u64(info->old_len, info->new_len)) - info->off;
    uint8_t *now = malloc(span ? (size_t)span : 1);
    if (now == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (!read_at(fd, now, (size_t)span, info->off)) {
        free(now);
        return gk_error_set(err, GK_E_IO, -1, "read failed: %s", strerror(errno));
    }
    bool all_old = cur == info->old_size && span == info->old_len;
    for (uint64_t i = 0; i < span; i++) {
        bool is_old = i < info->old_len && now[i] == info->old[i];
        bool is_new = i < info->new_len && now[i] == info->new_bytes[i];
        if (!is_old && !is_new) {
            snprintf(why, n, "byte %llu is neither the edit's old header byte nor its new one",
                     (unsigned long long)(info->off + i));
            free(now);
            return GK_OK;
        }
        all_old = all_old && is_old;
    }
    free(now);
    uint8_t prefix[SUM], rest[SUM];
    bool short_read;
    gk_status st = unchanged_sums(fd, info, prefix, rest, &short_read, err);
    if (st != GK_OK && !short_read) return st;
    if (st != GK_OK || memcmp(prefix, info->prefix_sum, SUM) != 0) {
        snprintf(why, n, "its first %llu bytes, which the edit did not change, differ from the edited file's",
                 (unsigned long long)info->off);
        return GK_OK;
    }
    if (memcmp(rest, info->rest_sum, SUM) != 0) {
        snprintf(why, n, "its bytes after the edited range (the tensor data) differ from the edited file's");
        return GK_OK;
    }
    *v = all_old ? JOURNAL_OLD : JOURNAL_PARTLY;
    return GK_OK;
}

/* journal_judge over an already read journal (buf, len). */
static gk_status judge_buf(int fd, const uint8_t *buf, size_t len, journal_info *info, journal_verdict *v,
                           char *why, size_t n, gk_error *err) {
    bool complete;
    gk_status st = journal_parse(buf, len, info, &complete, err);
    if (st != GK_OK) return st;
    if (!complete) {
        *v = JOURNAL_TORN;
        return GK_OK;
    }
    return judge_info(fd, info, v, why, n, err);
}

gk_status journal_judge(int fd, const char *path, bool *there, journal_verdict *v, char *why, size_t n,
                        gk_error *err) {
    *there = false;
    *v = JOURNAL_TORN;
    if (n) why[0] = '\0';
    char *jpath = journal_path(path);
    if (jpath == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    struct stat sb;
    if (lstat(jpath, &sb) != 0) {
        free(jpath);
        return GK_OK;
    }
    *there = true;
    const char *odd = not_a_journal(&sb);
    if (odd) {
        *v = JOURNAL_FOREIGN;
        snprintf(why, n, "%s", odd);
        free(jpath);
        return GK_OK;
    }
    size_t len = 0;
    uint8_t *buf = read_all(jpath, &len);
    gk_status st;
    if (buf == NULL) {
        st = gk_error_set(err, GK_E_IO, -1, "%s: cannot read: %s", jpath, strerror(errno));
    } else {
        journal_info info;
        st = judge_buf(fd, buf, len, &info, v, why, n, err);
    }
    free(buf);
    free(jpath);
    return st;
}

gk_status journal_refusal(const char *path, journal_verdict v, const char *why, gk_error *err) {
    switch (v) {
    case JOURNAL_STALE:
        return gk_error_set(err, GK_E_JOURNAL, -1,
                            "%s%s is a stale journal: an interrupted in-place edit left it for a file with other "
                            "contents (%s). It does not apply to this file, which that edit did not touch; "
                            "`ggufkit edit --discard-journal %s` removes the stale journal",
                            path, GK_JOURNAL_SUFFIX, why, path);
    case JOURNAL_FOREIGN:
        return gk_error_set(err, GK_E_JOURNAL, -1,
                            "%s%s is %s, not a journal ggufkit writes (those are regular files): nothing in it "
                            "applies to this file, which is left as it is; `ggufkit edit --discard-journal %s` "
                            "removes it",
                            path, GK_JOURNAL_SUFFIX, why, path);
    case JOURNAL_UNPROVEN:
        return gk_error_set(err, GK_E_JOURNAL, -1,
                            "%s%s is the journal of an interrupted in-place edit, written by an older ggufkit "
                            "(format 1): it names the file by inode only, which cannot prove that this is the "
                            "file it was written for. If %s was not replaced since the edit was interrupted, "
                            "`ggufkit edit --recover --force %s` puts the old header back; if it was, "
                            "`ggufkit edit --discard-journal %s` removes the journal",
                            path, GK_JOURNAL_SUFFIX, path, path, path);
    case JOURNAL_OLD:
    case JOURNAL_TORN:
        return gk_error_set(err, GK_E_JOURNAL, -1,
                            "an in-place edit of this file was interrupted before it changed the file, and its "
                            "editor is gone; `ggufkit edit --recover %s` removes its journal (%s%s)",
                            path, path, GK_JOURNAL_SUFFIX);
    case JOURNAL_PARTLY:
        break;
    }
    return gk_error_set(err, GK_E_JOURNAL, -1,
                        "an in-place edit of this file was interrupted and its editor is gone: the header "
                        "may be partly written; `ggufkit edit --recover %s` puts the old header back from "
                        "the journal (%s%s)",
                        path, path, GK_JOURNAL_SUFFIX);
}

/* Removes the journal and fsyncs its folder. */
static gk_status remove_journal(io_ctx *io, const char *jpath, gk_error *err) {
    if (!io_step(io, "journal unlink")) return io_interrupted(err, "journal unlink");
    struct stat sb;
    bool folder = lstat(jpath, &sb) == 0 && S_ISDIR(sb.st_mode);
    if ((folder ? rmdir(jpath) : unlink(jpath)) != 0 && errno != ENOENT)
        return gk_error_set(err, GK_E_IO, -1, "%s: cannot remove%s: %s", jpath,
                            folder ? " (a folder that is not empty: ggufkit removes only an empty one)" : "",
                            strerror(errno));
    return io_fsync_dir(io, jpath, err);
}

/* Puts the journal's old bytes back into fd (the file at path, edit lock held). */
static gk_status restore(io_ctx *io, int fd, const char *path, const journal_info *info, gk_error *err) {
    struct stat sb;
    if (fstat(fd, &sb) != 0) return gk_error_set(err, GK_E_IO, -1, "%s: %s", path, strerror(errno));
    gk_status st = io_pwrite_all(io, fd, info->old, info->old_len, info->off, "restore write", err);
    if (st == GK_OK && (uint64_t)sb.st_size != info->old_size) {
        if (!io_step(io, "restore truncate")) st = io_interrupted(err, "restore truncate");
        else if (ftruncate(fd, (off_t)info->old_size) != 0)
            st = gk_error_set(err, GK_E_IO, -1, "%s: truncate failed: %s", path, strerror(errno));
    }
    if (st == GK_OK && !io_step(io, "restore fsync")) st = io_interrupted(err, "restore fsync");
    if (st == GK_OK && fsync(fd) != 0) st = gk_error_set(err, GK_E_IO, -1, "%s: fsync failed: %s", path, strerror(errno));
    return st;
}

/* Deals with path's journal, if there is one, through fd, which holds the edit
 * lock: no live process is in the middle of an edit, so the journal is one
 * whose editor is gone. Readers are kept out while the header is put back. */
static gk_status recover_locked(io_ctx *io, int fd, const char *path, mode how, gk_recovery *what, gk_error *err) {
    *what = GK_RECOVERY_NONE;
    char *jpath = journal_path(path);
    if (jpath == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    struct stat sb;
    if (lstat(jpath, &sb) != 0) {
        free(jpath);
        return GK_OK;
    }
    gk_status st = gk_lock_take(fd, GK_LOCK_HEADER, true, GK_LOCK_READ_WAIT_MS, err);
    const char *odd = not_a_journal(&sb);
    size_t len = 0;
    uint8_t *buf = st == GK_OK && odd == NULL ? read_all(jpath, &len) : NULL;
    journal_info info;
    journal_verdict v = JOURNAL_TORN;
    char why[256] = "";
    if (st != GK_OK) {
        /* reported */
    } else if (odd) {
        /* Not a journal ggufkit wrote: nothing to apply; discard removes it. */
        if (how == MODE_DISCARD) {
            *what = GK_RECOVERY_DISCARDED;
            st = remove_journal(io, jpath, err);
        } else {
            st = journal_refusal(path, JOURNAL_FOREIGN, odd, err);
        }
    } else if (buf == NULL) {
        st = gk_error_set(err, GK_E_IO, -1, "%s: cannot read: %s", jpath, strerror(errno));
    } else if ((st = judge_buf(fd, buf, len, &info, &v, why, sizeof why, err)) != GK_OK) {
        /* reported: the journal stays for a run that can check it */
    } else if (v == JOURNAL_TORN || v == JOURNAL_OLD) {
        *what = v == JOURNAL_TORN ? GK_RECOVERY_TORN : GK_RECOVERY_UNTOUCHED;
        st = remove_journal(io, jpath, err);
    } else if (how == MODE_DISCARD && v == JOURNAL_PARTLY) {
        st = gk_error_set(err, GK_E_JOURNAL, -1,
                          "%s is not stale: it belongs to this file, whose header the interrupted edit changed "
                          "(wholly or in part); `ggufkit edit --recover %s` puts the old header back and removes it",
                          jpath, path);
    } else if (how == MODE_DISCARD) {
        *what = GK_RECOVERY_DISCARDED;
        st = remove_journal(io, jpath, err);
    } else if (v == JOURNAL_STALE || (v == JOURNAL_UNPROVEN && how != MODE_FORCE)) {
        st = journal_refusal(path, v, why, err);
    } else {
        *what = GK_RECOVERY_RESTORED;
        st = restore(io, fd, path, &info, err);
        if (st == GK_OK) st = remove_journal(io, jpath, err);
    }
    gk_lock_drop(fd, GK_LOCK_HEADER);
    free(buf);
    free(jpath);
    return st;
}

/* gk_journal_recover and its variants: opens path under its edit lock when a
 * journal is there. */
static gk_status recover_path(const char *path, mode how, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                              void *hook_ctx, gk_error *err) {
    io_ctx io = { hook, hook_ctx };
    *what = GK_RECOVERY_NONE;
    char *jpath = journal_path(path);
    if (jpath == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    struct stat sb;
    bool there = lstat(jpath, &sb) == 0;
    if (!there) {
        free(jpath);
        return GK_OK;   /* nothing to do: no need to open the file for writing */
    }
    int fd;
    gk_status st = gk_lock_open(path, wait_ms, &fd, err);
    if (st == GK_E_NOT_FOUND && how == MODE_DISCARD) {
        /* No file: the journal can belong to nothing here. */
        st = remove_journal(&io, jpath, err);
        if (st == GK_OK) *what = GK_RECOVERY_DISCARDED;
        free(jpath);
        return st;
    }
    if (st == GK_E_NOT_FOUND)
        st = gk_error_set(err, GK_E_NOT_FOUND, -1,
                          "a journal (%s) is there but the file is gone: nothing to recover; "
                          "`ggufkit edit --discard-journal %s` removes the journal", jpath, path);
    free(jpath);
    if (st != GK_OK) return st;
    st = recover_locked(&io, fd, path, how, what, err);
    close(fd);
    return st;
}

gk_status gk_journal_recover_hooked(const char *path, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                                    void *hook_ctx, gk_error *err) {
    return recover_path(path, MODE_RECOVER, wait_ms, what, hook, hook_ctx, err);
}

gk_status gk_journal_recover_force_hooked(const char *path, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                                          void *hook_ctx, gk_error *err) {
    return recover_path(path, MODE_FORCE, wait_ms, what, hook, hook_ctx, err);
}

gk_status gk_journal_discard_hooked(const char *path, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                                    void *hook_ctx, gk_error *err) {
    return recover_path(path, MODE_DISCARD, wait_ms, what, hook, hook_ctx, err);
}

gk_status gk_journal_recover(const char *path, unsigned wait_ms, gk_recovery *what, gk_error *err) {
    io_ctx t = io_test_hook();
    return recover_path(path, MODE_RECOVER, wait_ms, what, t.hook, t.ctx, err);
}

gk_status gk_journal_recover_force(const char *path, unsigned wait_ms, gk_recovery *what, gk_error *err) {
    io_ctx t = io_test_hook();
    return recover_path(path, MODE_FORCE, wait_ms, what, t.hook, t.ctx, err);
}

gk_status gk_journal_discard(const char *path, unsigned wait_ms, gk_recovery *what, gk_error *err) {
    io_ctx t = io_test_hook();
    return recover_path(path, MODE_DISCARD, wait_ms, what, t.hook, t.ctx, err);
}

gk_status gk_open_exclusive(const char *path, unsigned flags, unsigned wait_ms, gk_recovery *recovered,
                            gk_file **out, gk_error *err) {
    gk_recovery what = GK_RECOVERY_NONE;
    *out = NULL;
    if (recovered) *recovered = GK_RECOVERY_NONE;
    int fd;
    if (gk_http_is_url(path))
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "a remote file cannot be edited in place or replaced: outputs stay local "
                            "(write it out with -o OUT)");
    gk_status st = gk_lock_open(path, wait_ms, &fd, err);
    if (st == GK_E_NOT_FOUND && strstr(path, "::"))
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "a member of an archive cannot be edited in place or replaced (write it out with -o OUT)");
    if (st != GK_OK) return st;
    st = recover_locked(NULL, fd, path, MODE_RECOVER, &what, err);
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
