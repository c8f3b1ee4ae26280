/*
 * sink.c - output files published atomically.
 *
 * Bytes go to a file created unnamed (O_TMPFILE) in the destination's folder, so
 * that a kill at any moment leaves nothing behind; where the filesystem refuses
 * O_TMPFILE, to a hidden temporary file there (same folder, so the final rename
 * cannot cross filesystems). Commit fsyncs the file and links it in as the
 * destination (linkat refuses an existing one), or, to replace one (asked for),
 * links it under a temporary name and renames that over the destination while
 * holding the destination's edit lock (io/lock.h): the replacement then never
 * lands in the middle of an in-place edit, and keeps the replaced file's mode.
 * Then it fsyncs the folder; abort, or any failure, discards the file. The
 * destination is therefore either untouched or complete. A destination ending in ".zst" is
 * compressed on the fly (zstd); offsets then count the uncompressed bytes.
 * The file's bytes go through a stage (stage.c): aligned buffers written by a
 * thread of their own, bypassing the page cache where the filesystem allows.
 * A destination that is a symbolic link stands for the file it names: that
 * file is replaced (temporary file in its folder), the link stays a link.
 * A destination that is an input of this process (io/inputs.c: the file, a link
 * to it, a hard link) is refused, with or without GK_SINK_OVERWRITE.
 * Where the temporary file can share blocks with an input (gk_sink_clone_probe:
 * XFS with reflink, btrfs, ...), copies from that input clone their whole
 * blocks (io/clone.h) instead of copying them; the bytes are the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "ggufkit.h"
#include "io/clone.h"
#include "io/lock.h"
#include "io/sink_set.h"
#include "io/stage.h"

#define COPY_CHUNK (4u << 20)

struct gk_sink {
    char *dest;
    char *tmp;                 /* the named temporary file, or NULL */
    bool unnamed;              /* fd is an O_TMPFILE file: nothing to remove */
    char *dir;
    int fd;
    gk_stage *stage;           /* the file's bytes on their way to the disk; NULL once finished */
    uint64_t cloned;           /* the stage's cloned bytes, kept when it is released */
    unsigned flags;
    uint64_t offset;           /* uncompressed bytes written */
    ZSTD_CCtx *zc;             /* set when compressing */
    uint8_t *zbuf;
    size_t zcap;
};

bool gk_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static char *dir_of(const char *path) {
    char *copy = strdup(path);
    if (copy == NULL) return NULL;
    char *d = strdup(dirname(copy));
    free(copy);
    return d;
}

bool gk_sink_dest_ok(const char *dest, unsigned flags, gk_error *err) {
    struct stat sb;
    if (lstat(dest, &sb) != 0) return true;
    /* No output replaces an input, whatever the flags, but the file an in-place
     * rewrite replaces on purpose. */
    if (!(flags & GK_SINK_REPLACE_HELD) && gk_inputs_check_output(dest, err) != GK_OK) return false;
    /* A device, fifo, socket or folder (also behind a link) is never replaced:
     * the rename would put a regular file in its place. */
    if (stat(dest, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        gk_error_set(err, GK_E_ARG, -1, "%s: exists and is not a regular file (ggufkit writes files; name one)",
                     dest);
        return false;
    }
    if (!(flags & GK_SINK_OVERWRITE)) {
        gk_error_set(err, GK_E_EXISTS, -1, "%s: already exists (use --force to replace it)", dest);
        return false;
    }
    return true;
}

/* The file a destination names: dest itself, or what the link dest points to.
 * @return : a malloc'ed path, or NULL with err set. */
static char *followed(const char *dest, gk_error *err) {
    struct stat sb;
    if (lstat(dest, &sb) != 0 || !S_ISLNK(sb.st_mode)) {
        char *p = strdup(dest);
        if (p == NULL) gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        return p;
    }
    char *p = realpath(dest, NULL);
    if (p == NULL)
        gk_error_set(err, GK_E_ARG, -1, "%s: a symbolic link to nothing (%s): name the file to write",
                     dest, strerror(errno));
    return p;
}

gk_status gk_sink_open(const char *dest, unsigned flags, gk_sink **out, gk_error *err) {
    *out = NULL;
    gk_error why;
    if (!gk_sink_dest_ok(dest, flags, &why)) return gk_error_set(err, why.code, -1, "%s", why.message);
    char *target = followed(dest, &why);
    if (target == NULL) return gk_error_set(err, why.code, -1, "%s", why.message);
    gk_sink *s = calloc(1, sizeof *s);
    if (s == NULL) {
        free(target);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    s->flags = flags;
    s->fd = -1;
    s->dest = target;
    dest = target;
    s->dir = dir_of(dest);
    char *copy = strdup(dest);
    if (s->dest == NULL || s->dir == NULL || copy == NULL) {
        free(copy);
        gk_sink_abort(s);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    const char *base = basename(copy);
    size_t n = strlen(s->dir) + strlen(base) + 32;
    s->tmp = malloc(n);
    if (s->tmp == NULL) {
        free(copy);
        gk_sink_abort(s);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    snprintf(s->tmp, n, "%s/.%s.ggufkit-XXXXXX", s->dir, base);
    free(copy);
    s->fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (s->fd >= 0) {
        s->unnamed = true;
    } else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
        s->fd = mkostemp(s->tmp, O_CLOEXEC);   /* no O_TMPFILE here: a named temporary file */
    }
    if (s->fd < 0) {
        int e = errno;
        gk_error_set(err, GK_E_IO, -1, "%s: cannot create a file in %s: %s", dest, s->dir, strerror(e));
        free(s->tmp);
        s->tmp = NULL;   /* nothing was created: nothing to remove */
        gk_sink_abort(s);
        return GK_E_IO;
    }
    fchmod(s->fd, 0644);
    if (gk_stage_open(s->fd, s->dest, !(flags & GK_SINK_BUFFERED), &s->stage, err) != GK_OK) {
        gk_sink_abort(s);
        return GK_E_NOMEM;
    }
    size_t dl = strlen(dest);
    if ((flags & GK_SINK_ZSTD) || (dl > 4 && strcmp(dest + dl - 4, ".zst") == 0)) {
        int level = (int)((flags >> 8) & 0xff);
        s->zc = ZSTD_createCCtx();
        s->zcap = ZSTD_CStreamOutSize();
        s->zbuf = malloc(s->zcap);
        if (s->zc == NULL || s->zbuf == NULL) {
            gk_sink_abort(s);
            return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
        ZSTD_CCtx_setParameter(s->zc, ZSTD_c_compressionLevel, level ? level : 3);
        ZSTD_CCtx_setParameter(s->zc, ZSTD_c_checksumFlag, 1);
    }
    *out = s;
    return GK_OK;
}

static gk_status write_raw(gk_sink *s, const void *buf, size_t len, gk_error *err) {
    return gk_stage_write(s->stage, buf, len, err);
}

/* Feeds bytes to the compressor (mode ZSTD_e_continue) or flushes it (ZSTD_e_end). */
static gk_status compress(gk_sink *s, const void *buf, size_t len, ZSTD_EndDirective mode, gk_error *err) {
    ZSTD_inBuffer in = { buf, len, 0 };
    for (;;) {
        ZSTD_outBuffer out = { s->zbuf, s->zcap, 0 };
        size_t left = ZSTD_compressStream2(s->zc, &out, &in, mode);
        if (ZSTD_isError(left))
            return gk_error_set(err, GK_E_IO, -1, "%s: zstd: %s", s->dest, ZSTD_getErrorName(left));
        gk_status st = write_raw(s, s->zbuf, out.pos, err);
        if (st != GK_OK) return st;
        if (mode == ZSTD_e_end ? left == 0 : in.pos == in.size) return GK_OK;
    }
}

gk_status gk_sink_write(gk_sink *s, const void *buf, size_t len, gk_error *err) {
    gk_status st = s->zc ? compress(s, buf, len, ZSTD_e_continue, err) : write_raw(s, buf, len, err);
    if (st == GK_OK) s->offset += len;
    return st;
}

gk_status gk_sink_write_zeros(gk_sink *s, uint64_t n, gk_error *err) {
    if (s->zc == NULL) {
        gk_status st = gk_stage_zeros(s->stage, n, err);
        if (st == GK_OK) s->offset += n;
        return st;
    }
    static const uint8_t zeros[4096];
    while (n > 0) {
        size_t chunk = n > sizeof zeros ? sizeof zeros : (size_t)n;
        gk_status st = gk_sink_write(s, zeros, chunk, err);
        if (st != GK_OK) return st;
        n -= chunk;
    }
    return GK_OK;
}

static gk_status copy_buffered(gk_sink *s, int fd, uint64_t off, uint64_t len, gk_error *err) {
    size_t cap = len < COPY_CHUNK ? (size_t)len : COPY_CHUNK;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (buf == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status st = GK_OK;
    while (len > 0 && st == GK_OK) {
        size_t chunk = len > cap ? cap : (size_t)len;
        st = gk_pread_exact(fd, buf, chunk, off, err);
        if (st == GK_OK) st = gk_sink_write(s, buf, chunk, err);
        off += chunk;
        len -= chunk;
    }
    free(buf);
    return st;
}

uint64_t gk_sink_clone_probe(gk_sink *s, int fd) {
    if (s->zc || (s->flags & GK_SINK_NO_CLONE) || s->offset != 0) return 0;
    uint64_t block = gk_clone_probe(fd, s->fd);
    gk_stage_clone_allow(s->stage, block);
    return block;
}

gk_status gk_sink_settle(gk_sink *s, gk_error *err) { return s->zc ? GK_OK : gk_stage_settle(s->stage, err); }

uint64_t gk_sink_bytes_cloned(const gk_sink *s) { return s->stage ? gk_stage_cloned(s->stage) : s->cloned; }

gk_status gk_sink_copy_from(gk_sink *s, int fd, uint64_t off, uint64_t len, gk_error *err) {
    if (s->zc) return copy_buffered(s, fd, off, len, err);
    gk_status st = gk_stage_clone_from(s->stage, fd, off, len, err);
    if (st == GK_OK) s->offset += len;
    return st;
}

gk_status gk_sink_copy_swapped(gk_sink *s, int fd, uint64_t off, uint64_t len, size_t block_bytes,
                               gk_byteswap_fn swap, gk_error *err) {
    if (s->zc == NULL) {
        gk_status st = gk_stage_copy_swapped(s->stage, fd, off, len, block_bytes, swap, err);
        if (st == GK_OK) s->offset += len;
        return st;
    }
    if (block_bytes == 0 || len % block_bytes != 0)
        return gk_error_set(err, GK_E_ARG, (int64_t)off, "byte swap of %llu bytes: not whole blocks of %zu",
                            (unsigned long long)len, block_bytes);
    size_t per = COPY_CHUNK / block_bytes * block_bytes;
    if (per == 0) per = block_bytes;
    uint8_t *buf = malloc(per);
    if (buf == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status st = GK_OK;
    while (len > 0 && st == GK_OK) {
        size_t n = len < per ? (size_t)len : per;
        st = gk_pread_exact(fd, buf, n, off, err);
        if (st != GK_OK) break;
        swap(buf, (int64_t)(n / block_bytes));
        st = gk_sink_write(s, buf, n, err);
        off += n;
        len -= n;
    }
    free(buf);
    return st;
}

uint64_t gk_sink_offset(const gk_sink *s) { return s->offset; }

/* Links the unnamed file open at fd in as `to` (EEXIST when it exists). */
static int link_unnamed(int fd, const char *to) {
    if (linkat(fd, "", AT_FDCWD, to, AT_EMPTY_PATH) == 0) return 0;
    if (errno == EEXIST) return -1;
    char proc[64];   /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; this does not */
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW);
}

/* Gives the unnamed file a fresh temporary name beside dest (s->tmp), to be
 * renamed over dest at once. @return : 0, or -1 with errno. */
static int link_temporary(gk_sink *s) {
    size_t n = strlen(s->tmp);
    for (unsigned k = 0; k < 100; k++) {
        snprintf(s->tmp + n - 6, 7, "%06x", (unsigned)((getpid() * 2654435761u + k * 40503u) & 0xffffff));
        if (link_unnamed(s->fd, s->tmp) == 0) {
            s->unnamed = false;   /* named now: abort removes it */
            return 0;
        }
        if (errno != EEXIST) return -1;
    }
    return -1;
}

/* Takes the edit lock of an existing dest (unless the caller holds it), so that
 * no in-place edit of it is under way, and gives the output dest's mode.
 * *lock_fd is -1 when nothing needed locking (no such file, or one we may not
 * write to, which no editor of ours writes either). */
static gk_status lock_replaced(gk_sink *s, int *lock_fd, gk_error *err) {
    *lock_fd = -1;
    struct stat sb;
    if (s->flags & GK_SINK_REPLACE_HELD) {
        if (stat(s->dest, &sb) == 0) fchmod(s->fd, sb.st_mode & 07777);
        return GK_OK;
    }
    gk_error why;
    gk_status st = gk_lock_open(s->dest, GK_EDIT_WAIT_MS, lock_fd, &why);
    if (st == GK_E_NOT_FOUND || st == GK_E_IO) return GK_OK;
    if (st != GK_OK) return gk_error_set(err, st, -1, "%s: %s", s->dest, why.message);
    if (fstat(*lock_fd, &sb) == 0) fchmod(s->fd, sb.st_mode & 07777);
    return GK_OK;
}

/* Puts the complete, fsynced file in place. @return : 0, or -1 with errno. */
static int publish(gk_sink *s) {
    bool replace = s->flags & GK_SINK_OVERWRITE;
    if (s->unnamed) {
        if (link_unnamed(s->fd, s->dest) == 0) return 0;
        if (errno != EEXIST || !replace || link_temporary(s) != 0) return -1;
        return rename(s->tmp, s->dest);
    }
    if (replace) return rename(s->tmp, s->dest);
    int rc = renameat2(AT_FDCWD, s->tmp, AT_FDCWD, s->dest, RENAME_NOREPLACE);
    if (rc != 0 && errno == EINVAL) {
        /* Filesystem without RENAME_NOREPLACE: check, then rename. */
        struct stat sb;
        if (lstat(s->dest, &sb) == 0) errno = EEXIST;
        else rc = rename(s->tmp, s->dest);
    }
    return rc;
}

gk_status gk_sink_finish(gk_sink *s, gk_error *err) {
    if (s->stage == NULL) return GK_OK;
    gk_status st = s->zc ? compress(s, NULL, 0, ZSTD_e_end, err) : GK_OK;
    if (st == GK_OK) st = gk_stage_finish(s->stage, err);
    if (st != GK_OK) return st;
    s->cloned = gk_stage_cloned(s->stage);
    gk_stage_free(s->stage);
    s->stage = NULL;
    return GK_OK;
}

/* Fsyncs s and links it into place (the folder is not fsynced); frees s.
 * @return : GK_OK or the failure (s discarded). */
static gk_status commit_file(gk_sink *s, gk_error *err) {
    int lock_fd = -1;
    gk_status st = gk_sink_finish(s, err);
    if (st == GK_OK && (s->flags & GK_SINK_OVERWRITE)) st = lock_replaced(s, &lock_fd, err);
    if (st != GK_OK) {
        /* reported */
    } else if (fsync(s->fd) != 0) {
        st = gk_error_set(err, GK_E_IO, -1, "%s: fsync failed: %s", s->dest, strerror(errno));
    } else if (publish(s) != 0) {
        st = errno == EEXIST ? gk_error_set(err, GK_E_EXISTS, -1, "%s: already exists", s->dest)
                             : gk_error_set(err, GK_E_IO, -1, "%s: cannot put in place: %s", s->dest,
                                            strerror(errno));
    } else {
        free(s->tmp);
        s->tmp = NULL;  /* published: nothing to remove */
    }
    if (lock_fd >= 0) close(lock_fd);
    gk_sink_abort(s);
    return st;
}

/* Fsyncs folder dir (a failure there is not reported: the files are in place). */
static void sync_folder(const char *dir) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

gk_status gk_sink_commit(gk_sink *s, gk_error *err) {
    size_t published;
    return gk_sink_commit_set(&s, 1, &published, err);
}

gk_status gk_sink_commit_set(gk_sink **sinks, size_t n, size_t *published, gk_error *err) {
    *published = 0;
    gk_status st = GK_OK;
    char **dirs = calloc(n ? n : 1, sizeof *dirs);   /* each published sink's folder, taken over */
    size_t n_dirs = 0;
    if (dirs == NULL) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    /* Every file is finished before the first fsync: that fsync then carries the
     * metadata of all of them to the log, and the later ones find little to do. */
    for (size_t k = 0; k < n && st == GK_OK; k++) st = gk_sink_finish(sinks[k], err);
    size_t k = 0;
    for (; k < n && st == GK_OK; k++) {
        char *dir = sinks[k]->dir;
        sinks[k]->dir = NULL;
        st = commit_file(sinks[k], err);
        if (st != GK_OK) {
            free(dir);
            k++;
            break;
        }
        (*published)++;
        bool seen = false;
        for (size_t j = 0; j < n_dirs && !seen; j++) seen = strcmp(dirs[j], dir) == 0;
        if (seen) free(dir);
        else dirs[n_dirs++] = dir;
    }
    for (; k < n; k++) gk_sink_abort(sinks[k]);
    for (size_t j = 0; j < n_dirs; j++) {
        sync_folder(dirs[j]);
        free(dirs[j]);
    }
    free(dirs);
    return st;
}

void gk_sink_abort(gk_sink *s) {
    if (s == NULL) return;
    gk_stage_free(s->stage);
    if (s->fd >= 0) close(s->fd);
    if (s->tmp && !s->unnamed) unlink(s->tmp);
    ZSTD_freeCCtx(s->zc);
    free(s->zbuf);
    free(s->tmp);
    free(s->dest);
    free(s->dir);
    free(s);
}
