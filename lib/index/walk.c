/*
 * walk.c - the index's directory walk: every regular file under the given
 * paths, with its size and modification time, folders in name order.
 * Symbolic links met inside folders are not followed (no loops, no file seen
 * twice); a path given by the caller is followed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/index_internal.h"

static int64_t mtime_ns_of(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* Appends path (taken over) with its stat facts. */
static bool push(ix_found_list *list, char *path, const struct stat *st) {
    if (list->n == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 256;
        ix_found *grown = realloc(list->items, cap * sizeof *grown);
        if (grown == NULL) {
            free(path);
            return false;
        }
        list->items = grown;
        list->cap = cap;
    }
    list->items[list->n++] = (ix_found){ path, (uint64_t)st->st_size, mtime_ns_of(st) };
    return true;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entry names of folder dir (without . and ..), sorted; NULL on failure
 * (an unreadable folder is skipped by the caller). */
static char **list_folder(const char *dir, size_t *n, bool *nomem) {
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            char **grown = realloc(names, cap * sizeof *grown);
            if (grown == NULL) goto oom;
            names = grown;
        }
        if ((names[*n] = strdup(e->d_name)) == NULL) goto oom;
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(names, *n, sizeof *names, compare_names);
    return names;
oom:
    *nomem = true;
    for (size_t i = 0; i < *n; i++) free(names[i]);
    free(names);
    closedir(d);
    *n = 0;
    return NULL;
}

/* Walks folder dir. @return : false when out of memory. */
static bool walk_folder(const char *dir, ix_found_list *list, int depth) {
    if (depth > 256) return true;
    size_t n;
    bool nomem = false;
    char **names = list_folder(dir, &n, &nomem);
    bool ok = !nomem;
    for (size_t i = 0; i < n; i++) {
        char *child = NULL;
        struct stat st;
        if (ok && asprintf(&child, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]) < 0) {
            child = NULL;
            ok = false;
        }
        if (ok && lstat(child, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                ok = walk_folder(child, list, depth + 1);
            } else if (S_ISREG(st.st_mode)) {
                ok = push(list, child, &st);
                child = NULL;
            }
        }
        free(child);
        free(names[i]);
    }
    free(names);
    return ok;
}

gk_status ix_walk(const char *path, ix_found_list *list, gk_error *err) {
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
        ok = walk_folder(abs, list, 0);
        free(abs);
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
