/*
 * folder.c - an export's output folder, published whole: every file is
 * written into a hidden temporary folder beside the destination
 * (.NAME.ggufkit-XXXXXX), each file fsynced as its sink commits, then the
 * folder is fsynced and renamed into place. A destination that exists must
 * be an empty folder, or with --force a folder holding no input: it is then
 * swapped with the new one in one step (renameat2 RENAME_EXCHANGE) and the
 * old one removed. So the destination is at every moment the old folder or
 * the complete new one; a failure removes the temporary folder, and only a
 * kill can leave it behind (hidden, with its PID-free random name).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "export/export_internal.h"

struct gk_exp_folder {
    char *dest, *tmp, *parent;
    bool replace;
};

static gk_status io_error(gk_error *err, const char *path, const char *what) {
    int e = errno;
    gk_error_set(err, GK_E_IO, -1, "%s: %s", what, strerror(e));
    gk_error_about(err, path);
    return GK_E_IO;
}

/* A random number for temporary names (getrandom, else the clock and PID). */
static uint32_t random_u32(void) {
    uint32_t v;
    if (getrandom(&v, sizeof v, 0) == (ssize_t)sizeof v) return v;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 16);
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *path) { nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static bool empty_dir(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return false;
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return false;
    }
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(d)) != NULL;)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

static gk_status fsync_path(const char *path, gk_error *err) {
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0 || fsync(fd) != 0) {
        gk_status s = io_error(err, path, "cannot sync the folder");
        if (fd >= 0) close(fd);
        return s;
    }
    close(fd);
    return GK_OK;
}

gk_status gk_exp_folder_begin(const char *dest, const char *const *inputs, size_t n_inputs, bool force,
                              gk_exp_folder **out, gk_error *err) {
    *out = NULL;
    struct stat sb;
    bool replace = false;
    if (lstat(dest, &sb) == 0) {
        if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode)) {
            gk_error_set(err, GK_E_ARG, -1, "exists and is not a folder (export writes a folder; %s)",
                         S_ISLNK(sb.st_mode) ? "a symbolic link is not replaced" : "give a new name");
            gk_error_about(err, dest);
            return GK_E_ARG;
        }
        if (!empty_dir(dest)) {
            if (!force) {
                gk_error_set(err, GK_E_EXISTS, -1, "the folder exists and is not empty (--force replaces it)");
                gk_error_about(err, dest);
                return GK_E_EXISTS;
            }
            replace = true;
        }
        char rd[PATH_MAX], ri[PATH_MAX];
        size_t n;
        for (size_t i = 0; i < n_inputs && realpath(dest, rd); i++)
            if (realpath(inputs[i], ri) && (n = strlen(rd), strncmp(ri, rd, n) == 0) && (ri[n] == '/' || n == 1)) {
                gk_error_set(err, GK_E_SAME_FILE, -1, "the output folder holds the input %s", inputs[i]);
                gk_error_about(err, dest);
                return GK_E_SAME_FILE;
            }
    } else if (errno != ENOENT) {
        return io_error(err, dest, "cannot look at the output folder");
    }
    gk_exp_folder *f = calloc(1, sizeof *f);
    char *copy = strdup(dest), *copy2 = strdup(dest);
    if (f == NULL || copy == NULL || copy2 == NULL) {
        free(f), free(copy), free(copy2);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    const char *base = basename(copy2);
    f->dest = strdup(dest);
    f->parent = strdup(dirname(copy));
    size_t tn = strlen(f->parent ? f->parent : "") + strlen(base) + 32;
    f->tmp = malloc(tn);
    f->replace = replace;
    gk_status s = GK_OK;
    if (f->dest == NULL || f->parent == NULL || f->tmp == NULL) {
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    } else if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strcmp(base, "/") == 0) {
        s = gk_error_set(err, GK_E_ARG, -1, "give the output folder a name (not '%s')", base);
        gk_error_about(err, dest);
    } else {
        /* mkdir, not mkdtemp: the folder gets the umask's permissions, as any */
        int rc = -1;
        for (int tries = 0; rc != 0 && tries < 100; tries++) {
            static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
            char tag[7];
            for (int i = 0; i < 6; i++) tag[i] = abc[(unsigned)random_u32() % (sizeof abc - 1)];
            tag[6] = '\0';
            snprintf(f->tmp, tn, "%s/.%s.ggufkit-%s", f->parent, base, tag);
            rc = mkdir(f->tmp, 0777);
            if (rc != 0 && errno != EEXIST) break;
        }
        if (rc != 0) s = io_error(err, f->parent, "cannot make a temporary folder in the output's folder");
    }
    free(copy);
    free(copy2);
    if (s != GK_OK) {
        if (f->tmp) f->tmp[0] = '\0';
        gk_exp_folder_abort(f);
        return s;
    }
    *out = f;
    return GK_OK;
}

void gk_exp_folder_path(const gk_exp_folder *f, const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s", f->tmp, name);
}

void gk_exp_folder_final_path(const gk_exp_folder *f, const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s", f->dest, name);
}

/* Writes name from data (len bytes), then tail (a string, or NULL). */
static gk_status write_file(gk_exp_folder *f, const char *name, const void *data, size_t len, const char *tail,
                            gk_error *err) {
    char path[4096];
    gk_exp_folder_path(f, name, path, sizeof path);
    gk_sink *s;
    gk_status st = gk_sink_open(path, GK_SINK_BUFFERED, &s, err);
    if (st == GK_OK) st = gk_sink_write(s, data, len, err);
    if (st == GK_OK && tail) st = gk_sink_write(s, tail, strlen(tail), err);
    if (st == GK_OK) st = gk_sink_commit(s, err);
    else gk_sink_abort(s);
    if (st != GK_OK && (err->file[0] == '\0' || strncmp(err->file, f->tmp, strlen(f->tmp)) == 0)) {
        gk_exp_folder_final_path(f, name, path, sizeof path);
        gk_error_about(err, path);
    }
    return st;
}

gk_status gk_exp_folder_write(gk_exp_folder *f, const char *name, const void *data, size_t len, gk_error *err) {
    return write_file(f, name, data, len, NULL, err);
}

gk_status gk_exp_folder_write_text(gk_exp_folder *f, const char *name, const char *text, gk_error *err) {
    return write_file(f, name, text, strlen(text), "\n", err);
}

gk_status gk_exp_folder_publish(gk_exp_folder *f, gk_error *err) {
    gk_status s = fsync_path(f->tmp, err);
    if (s == GK_OK && !f->replace) {
        if (rename(f->tmp, f->dest) != 0) {
            if (errno == ENOTEMPTY || errno == EEXIST) {
                gk_error_set(err, GK_E_EXISTS, -1, "the folder appeared while the export ran (--force replaces it)");
                gk_error_about(err, f->dest);
                s = GK_E_EXISTS;
            } else {
                s = io_error(err, f->dest, "cannot move the new folder into place");
            }
        }
    } else if (s == GK_OK) {
        if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->dest, RENAME_EXCHANGE) != 0)
            s = io_error(err, f->dest, "cannot swap the new folder with the old one");
        else
            remove_tree(f->tmp);   /* the old folder, now under the temporary name */
    }
    if (s == GK_OK) {
        f->tmp[0] = '\0';
        s = fsync_path(f->parent, err);
    }
    gk_exp_folder_abort(f);
    return s;
}

void gk_exp_folder_abort(gk_exp_folder *f) {
    if (f == NULL) return;
    if (f->tmp && f->tmp[0]) remove_tree(f->tmp);
    free(f->dest);
    free(f->tmp);
    free(f->parent);
    free(f);
}
