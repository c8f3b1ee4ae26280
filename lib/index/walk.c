/*
 * walk.c - the index's directory walk: every regular file under the given
 * paths, with its size and modification time, folders in name order.
 * Symbolic links met inside folders are not followed (no loops, no file seen
 * twice); a path given by the caller is followed. Folders are walked at any
 * depth (a stack of their own, each opened relative to its parent's path when
 * that is longer than PATH_MAX); a path the walk must leave out (a folder it
 * cannot read, a file whose path is too long to open by name) is reported.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/http.h"
#include "index/index_internal.h"
#include "util/grow.h"

static int64_t mtime_ns_of(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* Appends path (taken over) with its stat facts. */
static bool push(ix_found_list *list, char *path, const struct stat *st) {
    if (!GK_GROW(list->items, list->cap, list->n + 1, 256)) {
        free(path);
        return false;
    }
    list->items[list->n++] = (ix_found){ path, (uint64_t)st->st_size, mtime_ns_of(st) };
    return true;
}

/* Opens folder dir, also when its path is longer than PATH_MAX (component by
 * component, each relative to the one before). Symbolic links are not followed.
 * @return : a descriptor, or -1 with errno set. */
static int open_folder(const char *dir) {
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    if (strlen(dir) < PATH_MAX) return open(dir, flags);
    int fd = open("/", flags);
    const char *p = dir;
    while (fd >= 0 && *p) {
        while (*p == '/') p++;
        size_t len = strcspn(p, "/");
        if (len == 0) break;
        char name[NAME_MAX + 1];
        if (len > NAME_MAX) {
            close(fd);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(name, p, len);
        name[len] = '\0';
        int next = openat(fd, name, flags);
        int e = errno;
        close(fd);
        errno = e;
        fd = next;
        p += len;
    }
    return fd;
}

/* The entries of folder dir (without . and ..), sorted by name, with their
 * lstat facts; NULL with *n 0 when it cannot be read (errno says why). */
typedef struct entry {
    char *name;
    struct stat st;
    bool stat_ok;
} entry;

static int compare_entries(const void *a, const void *b) {
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static entry *list_folder(const char *dir, size_t *n, bool *nomem) {
    *n = 0;
    int fd = open_folder(dir);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        int e = errno;
        if (fd >= 0) close(fd);
        errno = e;
        return NULL;
    }
    entry *items = NULL;
    size_t cap = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!GK_GROW(items, cap, *n + 1, 32)) goto oom;
        entry *it = &items[*n];
        if ((it->name = strdup(e->d_name)) == NULL) goto oom;
        it->stat_ok = fstatat(dirfd(d), e->d_name, &it->st, AT_SYMLINK_NOFOLLOW) == 0;
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(items, *n, sizeof *items, compare_entries);
    if (items == NULL) items = calloc(1, sizeof *items);   /* an empty folder, read */
    if (items == NULL) *nomem = true;
    return items;
oom:
    *nomem = true;
    for (size_t i = 0; i < *n; i++) free(items[i].name);
    free(items);
    closedir(d);
    *n = 0;
    return NULL;
}

/* One folder being walked: its entries and the next one to look at. */
typedef struct frame {
    char *dir;
    entry *items;
    size_t n, next;
} frame;

/* Tells the caller about a path the walk leaves out. */
static void left_out(const ix_walk_report *rep, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void left_out(const ix_walk_report *rep, const char *path, const char *fmt, ...) {
    if (rep == NULL || rep->fn == NULL) return;
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    rep->fn(rep->ctx, path, why);
}

/* Walks folder root depth first, entries in name order, on a stack of its own
 * (no depth limit). @return : false when out of memory. */
static bool walk_folder(char *root, ix_found_list *list, const ix_walk_report *rep) {
    frame *stack = NULL;
    size_t depth = 0, cap = 0;
    bool ok = true;
    char *dir = root;   /* a folder to open next, owned */
    while (ok && (dir != NULL || depth > 0)) {
        if (dir != NULL) {
            size_t n;
            bool nomem = false;
            entry *items = list_folder(dir, &n, &nomem);
            if (items == NULL) {
                if (!nomem) left_out(rep, dir, "folder cannot be read: %s", strerror(errno));
                ok = !nomem;
                free(dir);
                dir = NULL;
                continue;
            }
            if (!GK_GROW(stack, cap, depth + 1, 16)) {
                for (size_t i = 0; i < n; i++) free(items[i].name);
                free(items);
                free(dir);
                ok = false;
                break;
            }
            stack[depth++] = (frame){ dir, items, n, 0 };
            dir = NULL;
        }
        frame *top = &stack[depth - 1];
        if (top->next == top->n) {   /* this folder is done */
            free(top->items);
            free(top->dir);
            depth--;
            continue;
        }
        entry *it = &top->items[top->next++];
        char *child = NULL;
        size_t dl = strlen(top->dir);
        if (asprintf(&child, "%s%s%s", top->dir, top->dir[dl - 1] == '/' ? "" : "/", it->name) < 0) {
            child = NULL;
            ok = false;
        } else if (it->stat_ok && S_ISDIR(it->st.st_mode)) {
            dir = child;
            child = NULL;
        } else if (it->stat_ok && S_ISREG(it->st.st_mode)) {
            if (strlen(child) >= PATH_MAX) {
                left_out(rep, child, "its path is %zu bytes, longer than PATH_MAX (%d): files are read by name",
                         strlen(child), PATH_MAX);
            } else {
                ok = push(list, child, &it->st);
                child = NULL;
            }
        }
        free(child);
        free(it->name);
    }
    while (depth > 0) {   /* after running out of memory */
        frame *top = &stack[--depth];
        for (size_t i = top->next; i < top->n; i++) free(top->items[i].name);
        free(top->items);
        free(top->dir);
    }
    free(dir);
    free(stack);
    return ok;
}

gk_status ix_walk(const char *path, ix_found_list *list, const ix_walk_report *rep, gk_error *err) {
    if (gk_http_is_url(path)) {   /* a remote file: its size and identity come from ix_probe_urls */
        struct stat none = { 0 };
        char *copy = strdup(path);
        if (copy == NULL || !push(list, copy, &none)) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        return GK_OK;
    }
    char *abs = realpath(path, NULL);
    if (abs == NULL) {
        if (errno == ENOMEM) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        return gk_error_set(err, GK_E_NOT_FOUND, -1, "%s: %s", path, strerror(errno));
    }
    struct stat st;
    if (stat(abs, &st) != 0) {
        gk_error_set(err, GK_E_NOT_FOUND, -1, "%s: %s", path, strerror(errno));
        free(abs);
        return GK_E_NOT_FOUND;
    }
    bool ok = true;
    if (S_ISDIR(st.st_mode)) {
        ok = walk_folder(abs, list, rep);
    } else if (S_ISREG(st.st_mode)) {
        ok = push(list, abs, &st);
    } else {
        free(abs);
    }
    return ok ? GK_OK : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
}

void ix_found_list_free(ix_found_list *list) {
    for (size_t i = 0; i < list->n; i++) free(list->items[i].path);
    free(list->items);
    list->items = NULL;
    list->n = list->cap = 0;
}
