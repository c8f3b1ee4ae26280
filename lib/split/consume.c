/*
 * consume.c - a merge that removes each shard once its bytes are safe in the
 * merged file (`merge --delete-splits`), for disks without room for two copies,
 * and that loses nothing when it is killed or the disk fills at any moment.
 *
 * The merged file grows under a work name beside the destination (DEST plus
 * ".ggufkit-merge"), and a small state file (DEST plus ".ggufkit-merge-state",
 * replaced atomically) records the set (its absolute PREFIX and count), the
 * digest of the merged header, the final size, each shard's identity (size and
 * the digest of its header bytes) and how many shards are done. The order of
 * the work is what makes it safe:
 *   1. the whole set is checked, the state written (0 done), the work file
 *      created with the merged header and made durable;
 *   2. per shard: its tensors copied into the work file, fdatasync, the state
 *      rewritten with one more shard done, then the shard removed (folder fsync);
 *   3. the work file cut to its final size, made durable, renamed to DEST, and
 *      the state removed.
 * So at any moment every shard not yet removed is on disk, and the bytes of
 * every removed one are durable in the work file. Running the same command
 * again reads the state and finishes: it checks the work file's header against
 * the recorded digest and every shard still present against its identity,
 * removes shards that were done but not yet removed, and goes on with the rest.
 * A shard that does not match what was recorded is never removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/file.h"
#include "io/hooked.h"
#include "meta/model.h"
#include "split/shardname.h"
#include "util/byteorder.h"
#include "io/digest.h"
#include "util/opts.h"

#define STATE_MAGIC "GKMERGE1"
#define DIGEST_LEN 32
#define COPY_BUF (4u << 20)

/* What identifies a shard: its size and the digest of its header bytes. */
typedef struct shard_id {
    uint64_t size;
    uint64_t head_len;
    uint8_t head[DIGEST_LEN];
} shard_id;

typedef struct merge_state {
    uint64_t n;                /* shards in the set */
    uint64_t done;             /* shards whose bytes are durable in the work file */
    uint64_t header_len;       /* bytes of the merged header (up to the data section) */
    uint64_t final_size;
    uint8_t header[DIGEST_LEN];
    char *prefix;              /* absolute PREFIX of the shard names */
    shard_id *shards;
} merge_state;

typedef struct consume {
    const char *dest;
    char *work;                /* DEST.ggufkit-merge */
    char *state_path;          /* DEST.ggufkit-merge-state */
    const gk_write_opts *opts;
    uint64_t total, copied;    /* progress: tensor bytes of the set, and copied */
} consume;

/* ------------------------------------------------------------------------ */
/* Small file tools                                                         */
/* ------------------------------------------------------------------------ */

static char *joined(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 1);
    if (p) {
        memcpy(p, a, la);
        memcpy(p + la, b, lb + 1);
    }
    return p;
}

static char *dir_of(const char *path) {
    char *copy = strdup(path);
    char *d = copy ? strdup(dirname(copy)) : NULL;
    free(copy);
    return d;
}

static gk_status io_error(gk_error *err, const char *what, const char *path) {
    return gk_error_set(err, GK_E_IO, -1, "%s: %s: %s", path, what, strerror(errno));
}

static bool exists(const char *path) {
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* SHA-256 of the first len bytes of fd. */
static gk_status digest_head(int fd, uint64_t len, uint8_t out[DIGEST_LEN], const char *path, gk_error *err) {
    gk_digest d;
    gk_status s = gk_digest_init(&d, GK_HASH_SHA256, err);
    if (s != GK_OK) return s;
    uint8_t *buf = malloc(COPY_BUF);
    if (buf == NULL) {
        gk_digest_free(&d);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    for (uint64_t off = 0; off < len && s == GK_OK;) {
        size_t want = len - off < COPY_BUF ? (size_t)(len - off) : COPY_BUF;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got <= 0) s = got < 0 ? io_error(err, "read", path) : gk_error_set(err, GK_E_TRUNCATED, (int64_t)off, "%s: ends early", path);
        else {
            gk_digest_update(&d, buf, (size_t)got);
            off += (uint64_t)got;
        }
    }
    free(buf);
    if (s == GK_OK) {
        gk_hash_value v;
        gk_digest_final(&d, &v);
        memcpy(out, v.bytes, DIGEST_LEN);
    }
    gk_digest_free(&d);
    return s;
}

/* Copies len bytes from in_fd at in_off to out_fd at out_off (copy_file_range,
 * which may share blocks, else reads and writes). */
static gk_status copy_range(int out_fd, uint64_t out_off, int in_fd, uint64_t in_off, uint64_t len,
                            const char *in_path, const char *out_path, gk_error *err) {
    bool plain = false;
    uint8_t *buf = NULL;
    gk_status s = GK_OK;
    while (len > 0 && s == GK_OK) {
        size_t want = len < COPY_BUF ? (size_t)len : COPY_BUF;
        ssize_t got = -1;
        if (!plain) {
            loff_t io = (loff_t)in_off, oo = (loff_t)out_off;
            got = copy_file_range(in_fd, &io, out_fd, &oo, want, 0);
            if (got < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
                            errno == EBADF)) {
                plain = true;
                continue;
            }
            if (got < 0) return io_error(err, "copy", out_path);
        } else {
            if (buf == NULL && (buf = malloc(COPY_BUF)) == NULL)
                return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            got = pread(in_fd, buf, want, (off_t)in_off);
            if (got < 0) s = io_error(err, "read", in_path);
            else if (got > 0) s = io_pwrite_all(NULL, out_fd, buf, (size_t)got, out_off, out_path, err);
        }
        if (s == GK_OK && got == 0)
            s = gk_error_set(err, GK_E_TRUNCATED, (int64_t)in_off, "%s: ends early", in_path);
        if (s == GK_OK) {
            in_off += (uint64_t)got;
            out_off += (uint64_t)got;
            len -= (uint64_t)got;
        }
    }
    free(buf);
    return s;
}

/* ------------------------------------------------------------------------ */
/* The state file                                                           */
/* ------------------------------------------------------------------------ */

static size_t state_size(uint64_t n, size_t prefix_len) {
    return 8 + 5 * 8 + DIGEST_LEN + prefix_len + (size_t)n * (16 + DIGEST_LEN);
}

static void state_free(merge_state *st) {
    free(st->prefix);
    free(st->shards);
    memset(st, 0, sizeof *st);
}

/* Writes st to the state file: a temporary beside it, fsynced, renamed over it. */
static gk_status state_write(const consume *c, const merge_state *st, gk_error *err) {
    size_t plen = strlen(st->prefix), size = state_size(st->n, plen);
    uint8_t *buf = calloc(1, size), *p = buf;
    if (buf == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    memcpy(p, STATE_MAGIC, 8), p += 8;
    gk_store_le64(p, st->n), p += 8;
    gk_store_le64(p, st->done), p += 8;
    gk_store_le64(p, st->header_len), p += 8;
    gk_store_le64(p, st->final_size), p += 8;
    memcpy(p, st->header, DIGEST_LEN), p += DIGEST_LEN;
    gk_store_le64(p, plen), p += 8;
    memcpy(p, st->prefix, plen), p += plen;
    for (uint64_t k = 0; k < st->n; k++) {
        gk_store_le64(p, st->shards[k].size), p += 8;
        gk_store_le64(p, st->shards[k].head_len), p += 8;
        memcpy(p, st->shards[k].head, DIGEST_LEN), p += DIGEST_LEN;
    }
    char *tmp = joined(c->state_path, ".tmp");
    gk_status s = GK_OK;
    int fd = tmp ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
    if (tmp == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    else if (fd < 0) s = io_error(err, "cannot create", tmp);
    else if ((s = io_pwrite_all(NULL, fd, buf, size, 0, tmp, err)) == GK_OK && fsync(fd) != 0) s = io_error(err, "fsync", tmp);
    if (fd >= 0) close(fd);
    if (s == GK_OK && rename(tmp, c->state_path) != 0) s = io_error(err, "rename", tmp);
    if (s != GK_OK && tmp) unlink(tmp);
    if (s == GK_OK) s = io_fsync_dir(NULL, c->state_path, err);
    free(tmp);
    free(buf);
    return s;
}

/* Reads the state file; GK_E_NOT_FOUND when there is none. */
static gk_status state_read(const consume *c, merge_state *st, gk_error *err) {
    memset(st, 0, sizeof *st);
    int fd = open(c->state_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return GK_E_NOT_FOUND;
    if (fd < 0) return io_error(err, "cannot open", c->state_path);
    struct stat sb;
    uint8_t *buf = NULL;
    gk_status s = GK_OK;
    if (fstat(fd, &sb) != 0 || sb.st_size < (off_t)state_size(0, 0) || sb.st_size > (64 << 20))
        s = gk_error_set(err, GK_E_CORRUPT, -1, "%s: not a merge state file", c->state_path);
    else if ((buf = malloc((size_t)sb.st_size)) == NULL)
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    else if (pread(fd, buf, (size_t)sb.st_size, 0) != sb.st_size)
        s = io_error(err, "read", c->state_path);
    close(fd);
    const uint8_t *p = buf;
    size_t size = (size_t)sb.st_size;
    if (s == GK_OK && memcmp(p, STATE_MAGIC, 8) != 0)
        s = gk_error_set(err, GK_E_CORRUPT, 0, "%s: not a merge state file", c->state_path);
    if (s == GK_OK) {
        st->n = gk_load_le64(p + 8);
        st->done = gk_load_le64(p + 16);
        st->header_len = gk_load_le64(p + 24);
        st->final_size = gk_load_le64(p + 32);
        memcpy(st->header, p + 40, DIGEST_LEN);
        uint64_t plen = gk_load_le64(p + 40 + DIGEST_LEN);
        if (st->n == 0 || st->n > 99999 || st->done > st->n || plen == 0 || plen > 4096 ||
            state_size(st->n, (size_t)plen) != size)
            s = gk_error_set(err, GK_E_CORRUPT, -1, "%s: merge state file is damaged", c->state_path);
        else {
            p += 48 + DIGEST_LEN;
            st->prefix = strndup((const char *)p, (size_t)plen);
            st->shards = calloc((size_t)st->n, sizeof *st->shards);
            p += plen;
            if (st->prefix == NULL || st->shards == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            for (uint64_t k = 0; k < st->n && s == GK_OK; k++, p += 16 + DIGEST_LEN) {
                st->shards[k].size = gk_load_le64(p);
                st->shards[k].head_len = gk_load_le64(p + 8);
                memcpy(st->shards[k].head, p + 16, DIGEST_LEN);
            }
        }
    }
    free(buf);
    if (s != GK_OK) state_free(st);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Shards                                                                   */
/* ------------------------------------------------------------------------ */

/* The absolute PREFIX and count of the shard named by path. */
static gk_status shard_prefix(const char *path, char **prefix, uint64_t *n, gk_error *err) {
    char *rel;
    uint64_t k;
    if (!gk_shard_name_parse(path, &rel, &k, n))
        return gk_error_set(err, GK_E_ARG, -1, "%s: not a shard name (PREFIX-00001-of-00003.gguf)", path);
    char *d = dir_of(rel), *abs = d ? realpath(d, NULL) : NULL;
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    *prefix = abs ? malloc(strlen(abs) + strlen(base) + 2) : NULL;
    if (*prefix) sprintf(*prefix, "%s/%s", abs, base);
    gk_status s = *prefix ? GK_OK
                          : abs || d == NULL ? gk_error_set(err, GK_E_NOMEM, -1, "out of memory")
                                             : io_error(err, "folder not found", path);
    free(d);
    free(abs);
    free(rel);
    return s;
}

/* Identity of the shard at path, over its first head_len bytes. */
static gk_status shard_identity(const char *path, uint64_t head_len, shard_id *id, gk_error *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return io_error(err, "cannot open", path);
    struct stat sb;
    gk_status s = GK_OK;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        s = gk_error_set(err, GK_E_ARG, -1, "%s: not a regular file", path);
    id->size = (uint64_t)sb.st_size;
    id->head_len = head_len;
    if (s == GK_OK) s = head_len <= id->size ? digest_head(fd, head_len, id->head, path, err)
                                              : gk_error_set(err, GK_E_TRUNCATED, -1, "%s: too short", path);
    close(fd);
    return s;
}

/* GK_OK when the shard at path is the one st recorded as shard k. */
static gk_status shard_matches(const merge_state *st, uint64_t k, const char *path, gk_error *err) {
    shard_id id;
    gk_status s = shard_identity(path, st->shards[k].head_len, &id, err);
    if (s == GK_OK && (id.size != st->shards[k].size || memcmp(id.head, st->shards[k].head, DIGEST_LEN) != 0))
        s = gk_error_set(err, GK_E_CORRUPT, -1,
                         "%s: is not the shard this merge started with (it was replaced); nothing was removed",
                         path);
    return s;
}

/* ------------------------------------------------------------------------ */
/* The work                                                                 */
/* ------------------------------------------------------------------------ */

/* Copies every tensor of shard f into the work file at its place in out. */
static gk_status copy_shard(consume *c, int work_fd, const gk_model *out, uint64_t header_len, gk_file *f,
                            gk_error *err) {
    const gk_model *sm = gk_file_model(f);
    for (size_t i = 0; i < sm->n_tensors; i++) {
        const gk_tensor *t = &sm->tensors[i];
        int64_t o = gk_tensor_find(out, t->name.ptr);
        const gk_tensor *ot = o >= 0 ? gk_tensor_at(out, (size_t)o) : NULL;
        if (ot == NULL || ot->type != t->type || ot->nbytes != t->nbytes)
            return gk_error_set(err, GK_E_CORRUPT, -1, "%s: tensor '%s' is not where the merged header has it",
                                f->path, t->name.ptr);
        gk_status s = copy_range(work_fd, header_len + ot->offset, f->fd, f->data_offset + t->offset,
                                 t->nbytes, f->path, c->work, err);
        if (s != GK_OK) return s;
        c->copied += t->nbytes;
        if (c->opts->stats) c->opts->stats->copied += t->nbytes;
        if (c->opts->progress && !c->opts->progress(c->opts->progress_ctx, c->copied, c->total))
            return gk_error_set(err, GK_E_INTERRUPTED, -1,
                                "interrupted: the shards merged so far are in %s; run the same command again to "
                                "finish", c->work);
    }
    return GK_OK;
}

/* Links the finished work file in as the destination and forgets the state. */
static gk_status publish(consume *c, gk_error *err) {
    bool replace = c->opts->sink_flags & GK_SINK_OVERWRITE;
    /* a run killed between linking and unlinking left both names (rename
     * between two names of one file does nothing) */
    bool linked = gk_same_file(c->work, c->dest);
    if (!linked && !replace && link(c->work, c->dest) != 0) return io_error(err, "cannot create", c->dest);
    if ((linked || !replace) && unlink(c->work) != 0) return io_error(err, "cannot remove", c->work);
    if (!linked && replace && rename(c->work, c->dest) != 0)
        return io_error(err, "cannot rename to the destination", c->work);
    gk_status s = io_fsync_dir(NULL, c->dest, err);
    if (s == GK_OK && unlink(c->state_path) != 0) s = io_error(err, "cannot remove", c->state_path);
    return s == GK_OK ? io_fsync_dir(NULL, c->state_path, err) : s;
}

/* The merged header held by the work file (checked against the state), parsed. */
static gk_status work_header(consume *c, int fd, const merge_state *st, uint8_t **bytes, gk_file **hf,
                             gk_error *err) {
    *bytes = NULL;
    *hf = NULL;
    uint8_t digest[DIGEST_LEN];
    gk_status s = digest_head(fd, st->header_len, digest, c->work, err);
    if (s == GK_OK && memcmp(digest, st->header, DIGEST_LEN) != 0)
        s = gk_error_set(err, GK_E_CORRUPT, 0, "%s: its header is not the one this merge wrote", c->work);
    if (s == GK_OK && (*bytes = malloc((size_t)st->header_len)) == NULL)
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s == GK_OK && pread(fd, *bytes, (size_t)st->header_len, 0) != (ssize_t)st->header_len)
        s = io_error(err, "read", c->work);
    if (s == GK_OK) s = gk_open_memory(*bytes, (size_t)st->header_len, GK_OPEN_LENIENT, hf, err);
    if (s != GK_OK) {
        free(*bytes);
        *bytes = NULL;
    }
    return s;
}

/* Opens every shard not yet done, each checked against its identity. */
static gk_status open_rest(const merge_state *st, gk_file **files, uint64_t *total, gk_error *err) {
    for (uint64_t k = st->done; k < st->n; k++) {
        char *path = gk_shard_name(st->prefix, k, st->n);
        gk_status s = path ? shard_matches(st, k, path, err) : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        if (s == GK_OK) s = gk_open(path, GK_OPEN_DEFAULT, &files[k], err);
        if (s == GK_OK && files[k]->fd < 0)
            s = gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: --delete-splits needs plain shard files", path);
        if (s == GK_OK) {
            const gk_model *m = gk_file_model(files[k]);
            for (size_t i = 0; i < m->n_tensors; i++) *total += m->tensors[i].nbytes;
        }
        free(path);
        if (s != GK_OK) return s;
    }
    return GK_OK;
}

/* Removes shard k (its bytes are durable in the work file). */
static gk_status remove_shard(const merge_state *st, uint64_t k, gk_error *err) {
    char *path = gk_shard_name(st->prefix, k, st->n);
    if (path == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = GK_OK;
    if (exists(path)) s = shard_matches(st, k, path, err);
    if (s == GK_OK && unlink(path) != 0 && errno != ENOENT) s = io_error(err, "cannot remove", path);
    if (s == GK_OK) s = io_fsync_dir(NULL, path, err);
    free(path);
    return s;
}

/* Goes on with the merge st describes, from its first shard not done. */
static gk_status finish(consume *c, merge_state *st, gk_error *err) {
    if (st->done == st->n && !exists(c->work)) {
        /* killed after the rename: the destination must be what was written */
        int fd = open(c->dest, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        uint8_t digest[DIGEST_LEN];
        gk_status s = fd < 0 ? io_error(err, "cannot open", c->dest)
                             : digest_head(fd, st->header_len, digest, c->dest, err);
        if (fd >= 0) close(fd);
        if (s == GK_OK && memcmp(digest, st->header, DIGEST_LEN) != 0)
            s = gk_error_set(err, GK_E_CORRUPT, -1, "%s: is not the merged file this merge wrote", c->dest);
        if (s == GK_OK && unlink(c->state_path) != 0) s = io_error(err, "cannot remove", c->state_path);
        if (s == GK_OK) s = io_fsync_dir(NULL, c->state_path, err);
        return s;
    }
    int fd = open(c->work, O_RDWR | O_CLOEXEC);
    if (fd < 0) return io_error(err, "cannot open the merge's work file", c->work);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return gk_error_set(err, GK_E_LOCKED, -1, "%s: another merge into %s is running", c->work, c->dest);
    }
    uint8_t *hbytes = NULL;
    gk_file *hf = NULL;
    gk_file **files = calloc((size_t)st->n, sizeof *files);
    gk_status s = files ? work_header(c, fd, st, &hbytes, &hf, err) : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s == GK_OK) {
        s = open_rest(st, files, &c->total, err);
        for (uint64_t k = 0; k < st->done && s == GK_OK; k++) s = remove_shard(st, k, err);
        for (uint64_t k = st->done; k < st->n && s == GK_OK; k++) {
            s = copy_shard(c, fd, gk_file_model(hf), st->header_len, files[k], err);
            if (s == GK_OK && fdatasync(fd) != 0) s = io_error(err, "fdatasync", c->work);
            if (s == GK_OK) {
                st->done = k + 1;
                s = state_write(c, st, err);
            }
            gk_close(files[k]);
            files[k] = NULL;
            if (s == GK_OK) s = remove_shard(st, k, err);
        }
        gk_close(hf);
        free(hbytes);
    }
    for (uint64_t k = 0; files && k < st->n; k++) gk_close(files[k]);
    free(files);
    if (s == GK_OK && (ftruncate(fd, (off_t)st->final_size) != 0 || fdatasync(fd) != 0))
        s = io_error(err, "cannot finish", c->work);
    close(fd);
    return s == GK_OK ? publish(c, err) : s;
}

/* Removes the work and state files of a merge that removed no shard yet
 * (unless another merge holds the work file). */
static gk_status forget(consume *c, gk_error *err) {
    int fd = open(c->work, O_RDWR | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return gk_error_set(err, GK_E_LOCKED, -1, "%s: another merge into %s is running", c->work, c->dest);
    }
    if (fd >= 0) {
        unlink(c->work);
        close(fd);
    }
    if (unlink(c->state_path) != 0 && errno != ENOENT) return io_error(err, "cannot remove", c->state_path);
    return io_fsync_dir(NULL, c->state_path, err);
}

/* Checks the whole set, records the state and creates the work file. */
static gk_status start(consume *c, const char *shard_path, merge_state *st, gk_error *err) {
    gk_split_set *set;
    gk_status s = gk_split_set_open(shard_path, GK_OPEN_DEFAULT, &set, err);
    if (s != GK_OK) return s;
    size_t n = gk_split_set_count(set);
    for (size_t k = 0; k < n && s == GK_OK; k++) {
        gk_file *f = gk_split_set_file(set, k);
        if (gk_same_file(f->path, c->dest)) s = gk_error_set(err, GK_E_SAME_FILE, -1, "%s: refusing to overwrite an input shard", c->dest);
        else if (f->fd < 0) s = gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s: --delete-splits needs plain shard files", f->path);
    }
    gk_error why;
    if (s == GK_OK && !gk_sink_dest_ok(c->dest, c->opts->sink_flags, &why))
        s = gk_error_set(err, why.code, -1, "%s", why.message);
    if (s == GK_OK && exists(c->work))
        s = gk_error_set(err, GK_E_EXISTS, -1, "%s: exists without a merge state: remove it first", c->work);
    gk_model *m = NULL;
    gk_step *steps = NULL;
    uint8_t *header = NULL;
    size_t header_len = 0;
    if (s == GK_OK) s = gk_split_set_merged(set, &m, &steps, err);
    if (s == GK_OK) {
        gk_model_layout(m);
        s = gk_header_serialize(m, &header, &header_len, err);
    }
    if (s == GK_OK) s = shard_prefix(shard_path, &st->prefix, &st->n, err);
    if (s == GK_OK && (st->shards = calloc(n, sizeof *st->shards)) == NULL)
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t k = 0; k < n && s == GK_OK; k++) {
        gk_file *f = gk_split_set_file(set, k);
        s = shard_identity(f->path, gk_model_data_start(gk_file_model(f)), &st->shards[k], err);
    }
    if (s == GK_OK) {
        st->header_len = header_len;
        uint64_t end = header_len;
        if (m->n_tensors > 0) {
            const gk_tensor *last = &m->tensors[m->n_tensors - 1];
            end = gk_align_up(header_len + last->offset + last->nbytes, gk_model_alignment(m));
        }
        st->final_size = end;
        gk_digest d;
        gk_hash_value v;
        if ((s = gk_digest_init(&d, GK_HASH_SHA256, err)) == GK_OK) {
            gk_digest_update(&d, header, header_len);
            gk_digest_final(&d, &v);
            gk_digest_free(&d);
            memcpy(st->header, v.bytes, DIGEST_LEN);
        }
    }
    gk_split_set_close(set);
    gk_model_free(m);
    free(steps);
    if (s == GK_OK) s = state_write(c, st, err);
    int fd = -1;
    if (s == GK_OK && (fd = open(c->work, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0)
        s = io_error(err, "cannot create", c->work);
    if (s == GK_OK && (s = io_pwrite_all(NULL, fd, header, header_len, 0, c->work, err)) == GK_OK && fdatasync(fd) != 0)
        s = io_error(err, "fdatasync", c->work);
    if (fd >= 0) close(fd);
    if (s != GK_OK && fd >= 0) unlink(c->work);
    if (s != GK_OK && exists(c->state_path) && !exists(c->work)) unlink(c->state_path);
    free(header);
    return s;
}

gk_status gk_merge_consume(const char *shard_path, const char *dest, const gk_write_opts *opts, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    gk_write_opts none = { GK_OPTS_INIT(gk_write_opts) };
    gk_status sc = GK_OPTS_CHECK(opts, gk_write_opts, err);
    if (sc != GK_OK) return sc;
    consume c = { .dest = dest, .opts = opts ? opts : &none };
    c.work = joined(dest, ".ggufkit-merge");
    c.state_path = joined(dest, ".ggufkit-merge-state");
    merge_state st;
    gk_status s = c.work && c.state_path ? state_read(&c, &st, err)
                                                  : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s == GK_OK && st.done == 0) {
        /* nothing was removed yet: every shard is there, start over */
        s = forget(&c, err);
        state_free(&st);
        if (s == GK_OK) s = GK_E_NOT_FOUND;
    }
    if (s == GK_E_NOT_FOUND && !exists(shard_path) && exists(dest)) {
        s = gk_error_set(err, GK_E_NOT_FOUND, -1,
                         "%s: no such shard, and no merge into %s is pending (it exists: a finished merge?)",
                         shard_path, dest);
    } else if (s == GK_E_NOT_FOUND) {
        gk_error_clear(err);
        s = start(&c, shard_path, &st, err);
    } else if (s == GK_OK) {
        /* an unfinished merge into dest: it must be of the same set */
        char *prefix = NULL;
        uint64_t n = 0;
        s = shard_prefix(shard_path, &prefix, &n, err);
        if (s == GK_OK && (n != st.n || strcmp(prefix, st.prefix) != 0))
            s = gk_error_set(err, GK_E_EXISTS, -1,
                             "%s: an unfinished merge of another set (%s-*-of-%05llu.gguf) is pending here; finish "
                             "it with that set's name, or remove %s and %s",
                             dest, st.prefix, (unsigned long long)st.n, c.work, c.state_path);
        free(prefix);
    }
    if (s == GK_OK) s = finish(&c, &st, err);
    state_free(&st);
    free(c.work);
    free(c.state_path);
    return s;
}
