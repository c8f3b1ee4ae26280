/*
 * inputs.c - the set of files this process has read, so that no output replaces
 * one of them, `--force` or not.
 *
 * Every file a command reads is an input: models and every shard of a set (each
 * gk_open records its file), importance matrices, patches, templates, manifests,
 * type files (recorded by whoever reads them, through input_open or
 * gk_inputs_add). A file is known by device and inode, taken after following
 * links, so a link, a hard link or another spelling of an input's path is that
 * input. Every output is checked against the set when its sink is opened
 * (gk_sink_dest_ok): a destination that is an input, or a link to one, is
 * refused (GK_E_SAME_FILE) unless it is the one file an in-place rewrite
 * replaces on purpose (GK_SINK_REPLACE_HELD). The set lives as long as the
 * process (a command's inputs stay inputs until it ends); gk_inputs_clear
 * empties it.
 *
 * The command's standard output, when redirected to a file, is an output too
 * (gk_inputs_forbid_fd): such a file is refused as an input (`ggufkit dump
 * m.gguf >>m.gguf`).
 *
 * The set is an array indexed by the library's hash map, under a mutex (index
 * parses headers in several threads and may read many thousands of files).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/inputs.h"
#include "util/grow.h"
#include "util/hashmap.h"

typedef struct input {
    dev_t dev;
    ino_t ino;
    char *path;
} input;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static input *items;
static size_t n_items, cap;
static gk_hashmap map;   /* hash_of(dev, ino) -> position in items */

/* Files this process writes through a descriptor it was given (the command's
 * standard output redirected to a file): never read as an input. */
#define MAX_FORBIDDEN 4
typedef struct written {
    dev_t dev;
    ino_t ino;
    const char *what;
} written;
static written forbidden[MAX_FORBIDDEN];
static size_t n_forbidden;

void gk_inputs_forbid_fd(int fd, const char *what) {
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return;
    pthread_mutex_lock(&lock);
    if (n_forbidden < MAX_FORBIDDEN) forbidden[n_forbidden++] = (written){ sb.st_dev, sb.st_ino, what };
    pthread_mutex_unlock(&lock);
}

/* @return : what the file of sb is written as (standard output...), or NULL. */
static const char *forbidden_as(const struct stat *sb) {
    const char *what = NULL;
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < n_forbidden && what == NULL; k++)
        if (forbidden[k].dev == sb->st_dev && forbidden[k].ino == sb->st_ino) what = forbidden[k].what;
    pthread_mutex_unlock(&lock);
    return what;
}

static uint64_t hash_of(dev_t dev, ino_t ino) {
    uint64_t key[2] = { (uint64_t)dev, (uint64_t)ino };
    return gk_fnv1a(GK_FNV1A_BASIS, key, sizeof key);
}

/* The entry of (dev, ino), or NULL; lock held. */
static input *find(dev_t dev, ino_t ino) {
    size_t cur = 0, at;
    while (gk_hashmap_next(&map, hash_of(dev, ino), &cur, &at))
        if (items[at].dev == dev && items[at].ino == ino) return &items[at];
    return NULL;
}

static void add_stat(const struct stat *sb, const char *path) {
    pthread_mutex_lock(&lock);
    if (find(sb->st_dev, sb->st_ino) == NULL && GK_GROW(items, cap, n_items + 1, 64)) {
        char *p = strdup(path && *path ? path : "(input)");
        if (p && gk_hashmap_add(&map, hash_of(sb->st_dev, sb->st_ino), n_items))
            items[n_items++] = (input){ sb->st_dev, sb->st_ino, p };
        else
            free(p);
    }
    pthread_mutex_unlock(&lock);
}

void inputs_add_fd(int fd, const char *path) {
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && !S_ISDIR(sb.st_mode)) add_stat(&sb, path);
}

gk_status gk_inputs_add(const char *path, gk_error *err) {
    (void)err;
    struct stat sb;
    if (path == NULL || strcmp(path, "-") == 0) {
        /* standard input: an input when it is a file (`< FILE`) */
        if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode)) add_stat(&sb, "standard input");
        return GK_OK;
    }
    const char *sep = strstr(path, "::");
    if (sep && stat(path, &sb) != 0) {
        /* ARCHIVE::MEMBER: the archive is the file read */
        char *archive = strndup(path, (size_t)(sep - path));
        if (archive && stat(archive, &sb) == 0 && !S_ISDIR(sb.st_mode)) add_stat(&sb, archive);
        free(archive);
        return GK_OK;
    }
    if (stat(path, &sb) == 0 && !S_ISDIR(sb.st_mode)) add_stat(&sb, path);
    return GK_OK;   /* a file that is not there is reported by the read itself */
}

void gk_inputs_clear(void) {
    pthread_mutex_lock(&lock);
    for (size_t k = 0; k < n_items; k++) free(items[k].path);
    free(items);
    items = NULL;
    n_items = cap = 0;
    gk_hashmap_free(&map);
    pthread_mutex_unlock(&lock);
}

gk_status gk_inputs_check_output(const char *dest, gk_error *err) {
    struct stat sb;
    if (dest == NULL || stat(dest, &sb) != 0) return GK_OK;   /* nothing there (a dangling link is refused by the sink) */
    pthread_mutex_lock(&lock);
    input *in = find(sb.st_dev, sb.st_ino);
    char which[PATH_MAX];
    if (in) {
        strncpy(which, in->path, sizeof which - 1);
        which[sizeof which - 1] = '\0';
    }
    pthread_mutex_unlock(&lock);
    if (in == NULL) return GK_OK;
    struct stat lsb;
    bool link = lstat(dest, &lsb) == 0 && S_ISLNK(lsb.st_mode);
    if (strcmp(which, dest) == 0)
        return gk_error_set(err, GK_E_SAME_FILE, -1,
                            "%s: is an input of this command: refusing to overwrite it (--force or not)", dest);
    return gk_error_set(err, GK_E_SAME_FILE, -1,
                        "%s: %s the input %s: refusing to overwrite it (--force or not)", dest,
                        link ? "is a link to" : "is the same file as", which);
}

gk_status input_open(const char *path, int *out, gk_error *err) {
    *out = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return gk_error_set(err, GK_E_IO, -1, "cannot open: %s", strerror(errno));
    struct stat sb;
    gk_status st = GK_OK;
    if (fstat(fd, &sb) != 0)
        st = gk_error_set(err, GK_E_IO, -1, "cannot read: %s", strerror(errno));
    else if (S_ISDIR(sb.st_mode))
        st = gk_error_set(err, GK_E_IO, -1, "cannot read: %s", strerror(EISDIR));
    else if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode))
        st = gk_error_set(err, GK_E_UNSUPPORTED, -1,
                          "is a %s, not a file: ggufkit reads seekable files (save the stream to a file first)",
                          S_ISFIFO(sb.st_mode) ? "pipe (FIFO)" : S_ISSOCK(sb.st_mode) ? "socket" : "character device");
    const char *as = st == GK_OK ? forbidden_as(&sb) : NULL;
    if (as)
        st = gk_error_set(err, GK_E_SAME_FILE, -1,
                          "is also this command's %s (redirected to it): refusing to read a file it writes", as);
    if (st != GK_OK) {
        close(fd);
        return st;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    add_stat(&sb, path);
    *out = fd;
    return GK_OK;
}

int gk_inputs_open(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || S_ISDIR(sb.st_mode) || forbidden_as(&sb)) {
        int e = S_ISDIR(sb.st_mode) ? EISDIR : forbidden_as(&sb) ? EBUSY : errno;
        close(fd);
        errno = e;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (S_ISREG(sb.st_mode)) add_stat(&sb, path);
    return fd;
}

gk_status input_read_whole(const char *path, size_t max, char **out, size_t *len, gk_error *err) {
    *out = NULL;
    *len = 0;
    int fd = gk_inputs_open(path);
    if (fd < 0) {
        gk_status code = gk_error_set(err, errno == ENOENT ? GK_E_NOT_FOUND : GK_E_IO, -1, "cannot open: %s",
                                      strerror(errno));
        gk_error_about(err, path);
        return code;
    }
    size_t cap = 0, n = 0;
    char *buf = NULL;
    gk_status st = GK_OK;
    for (;;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : 64 * 1024;
            if (want > max + 1) want = max + 1;
            char *b = want > cap ? realloc(buf, want + 1) : NULL;
            if (b == NULL) {
                st = want > cap ? gk_error_set(err, GK_E_NOMEM, -1, "out of memory")
                                : gk_error_set(err, GK_E_UNSUPPORTED, -1, "larger than %zu bytes", max);
                break;
            }
            buf = b;
            cap = want;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            st = gk_error_set(err, GK_E_IO, -1, "cannot read: %s", strerror(errno));
            break;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n > max) {
            st = gk_error_set(err, GK_E_UNSUPPORTED, -1, "larger than %zu bytes", max);
            break;
        }
    }
    close(fd);
    if (st != GK_OK) {
        free(buf);
        gk_error_about(err, path);
        return st;
    }
    if (buf == NULL && (buf = malloc(1)) == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return GK_OK;
}
