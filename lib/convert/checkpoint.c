/*
 * checkpoint.c - a checkpoint folder's safetensors parts as one set of tensors
 * (checkpoint.h): which parts (the index's shards, else model*.safetensors by
 * name), each opened and checked, then the set's own checks and the name index.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "convert/checkpoint.h"
#include "io/inputs.h"
#include "util/grow.h"

#define INDEX_NAME "model.safetensors.index.json"
#define INDEX_MAX (256u << 20)

struct gk_ckpt {
    gk_st_file **parts;
    size_t n_parts;
    gk_ckpt_tensor *tensors;   /* conversion order */
    size_t n;
    gk_ckpt_tensor **by_name;
};

static char *path_in(const char *dir, const char *name) {
    size_t ld = strlen(dir), ln = strlen(name);
    char *p = malloc(ld + ln + 2);
    if (p) {
        memcpy(p, dir, ld);
        p[ld] = '/';
        memcpy(p + ld + 1, name, ln + 1);
    }
    return p;
}

static gk_status about(gk_error *err, gk_status code, const char *path) {
    gk_error_about(err, path);
    return code;
}

static int by_string(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* ------------------------------------------------------------------------ */
/* Which parts                                                              */
/* ------------------------------------------------------------------------ */

/* A string list kept sorted and without repeats. */
typedef struct names {
    char **v;
    size_t n, cap;
} names;

static void names_free(names *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static bool names_add(names *l, const char *s) {
    if (!GK_GROW(l->v, l->cap, l->n + 1, 16)) return false;
    if ((l->v[l->n] = strdup(s)) == NULL) return false;
    l->n++;
    return true;
}

static void names_sort_unique(names *l) {
    if (l->n == 0) return;   /* qsort of NULL, even of nothing, is undefined */
    qsort(l->v, l->n, sizeof *l->v, by_string);
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (w > 0 && strcmp(l->v[w - 1], l->v[i]) == 0) free(l->v[i]);
        else l->v[w++] = l->v[i];
    }
    l->n = w;
}

/* The files model*.safetensors of dir, by name. */
static gk_status list_parts(const char *dir, names *parts, gk_error *err) {
    DIR *d = opendir(dir);
    if (d == NULL) return about(err, gk_error_set(err, GK_E_NOT_FOUND, -1, "cannot open the folder: %s", strerror(errno)), dir);
    gk_status s = GK_OK;
    for (struct dirent *e; s == GK_OK && (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n >= 17 && strncmp(e->d_name, "model", 5) == 0 && strcmp(e->d_name + n - 12, ".safetensors") == 0 &&
            !names_add(parts, e->d_name))
            s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    closedir(d);
    if (s == GK_OK && parts->n == 0)
        s = about(err, gk_error_set(err, GK_E_NOT_FOUND, -1, "no model*.safetensors file in the folder"), dir);
    names_sort_unique(parts);
    return s;
}

/* The shard file names of the index's weight_map, and its tensor names. */
static gk_status read_index(const char *path, names *parts, names *tensors, names *owner, gk_error *err) {
    char *text;
    size_t len = 0;
    gk_status s = input_read_whole(path, INDEX_MAX, &text, &len, err);
    if (s != GK_OK) return s;
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(map)) {
        const char *at = cJSON_GetErrorPtr();
        int64_t off = root == NULL && at && at >= text && at <= text + len ? at - text : -1;
        s = about(err, gk_error_set(err, GK_E_CORRUPT, off, root ? "no \"weight_map\" object" : "not valid JSON"), path);
    }
    for (const cJSON *e = map ? map->child : NULL; e && s == GK_OK; e = e->next) {
        const char *file = cJSON_IsString(e) ? e->valuestring : NULL;
        if (file == NULL || file[0] == '\0' || strchr(file, '/') || strcmp(file, "..") == 0 || strcmp(file, ".") == 0)
            s = about(err, gk_error_set(err, GK_E_CORRUPT, -1, "weight_map: tensor '%s': the shard is not a file name in "
                                                               "the folder", e->string ? e->string : "?"), path);
        else if (!names_add(parts, file) || !names_add(tensors, e->string) || !names_add(owner, file))
            s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    cJSON_Delete(root);
    free(text);
    names_sort_unique(parts);
    return s;
}

/* ------------------------------------------------------------------------ */
/* The set                                                                  */
/* ------------------------------------------------------------------------ */

static int by_tensor_name(const void *a, const void *b) {
    return strcmp((*(gk_ckpt_tensor *const *)a)->t->name, (*(gk_ckpt_tensor *const *)b)->t->name);
}

/* Collects every part's tensors in conversion order and indexes them by name. */
static gk_status gather(gk_ckpt *c, gk_error *err) {
    size_t n = 0;
    for (size_t p = 0; p < c->n_parts; p++) n += gk_st_count(c->parts[p]);
    c->tensors = malloc((n ? n : 1) * sizeof *c->tensors);
    c->by_name = malloc((n ? n : 1) * sizeof *c->by_name);
    if (c->tensors == NULL || c->by_name == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t p = 0; p < c->n_parts; p++)
        for (size_t i = 0; i < gk_st_count(c->parts[p]); i++)
            c->tensors[c->n++] = (gk_ckpt_tensor){ gk_st_sorted(c->parts[p], i), c->parts[p] };
    for (size_t i = 0; i < c->n; i++) c->by_name[i] = &c->tensors[i];
    qsort(c->by_name, c->n, sizeof *c->by_name, by_tensor_name);
    for (size_t i = 1; i < c->n; i++)
        if (strcmp(c->by_name[i - 1]->t->name, c->by_name[i]->t->name) == 0)
            return about(err, gk_error_set(err, GK_E_CORRUPT, -1, "tensor '%s' is in two files: %s and %s",
                                           c->by_name[i]->t->name, gk_st_path(c->by_name[i - 1]->part),
                                           gk_st_path(c->by_name[i]->part)), gk_st_path(c->by_name[i]->part));
    return GK_OK;
}

/* The index's tensors (names, with their shard in owner) against the parts'. */
static gk_status check_against_index(gk_ckpt *c, const names *tensors, const names *owner, const char *index,
                                     gk_error *err) {
    for (size_t i = 0; i < tensors->n; i++)
        if (gk_ckpt_find(c, tensors->v[i]) == NULL)
            return about(err, gk_error_set(err, GK_E_CORRUPT, -1, "the index maps tensor '%s' to %s, which does not "
                                                                  "hold it", tensors->v[i], owner->v[i]), index);
    names sorted = { 0 };
    gk_status s = GK_OK;
    for (size_t i = 0; i < tensors->n && s == GK_OK; i++)
        if (!names_add(&sorted, tensors->v[i])) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    names_sort_unique(&sorted);
    for (size_t i = 0; i < c->n && s == GK_OK; i++) {
        const char *name = c->tensors[i].t->name;
        if (bsearch(&name, sorted.v, sorted.n, sizeof *sorted.v, by_string) == NULL)
            s = about(err, gk_error_set(err, GK_E_CORRUPT, -1, "tensor '%s' of %s is not in the index", name,
                                        gk_st_path(c->tensors[i].part)), index);
    }
    names_free(&sorted);
    return s;
}

gk_status gk_ckpt_open(const char *dir, gk_ckpt **out, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    *out = NULL;
    gk_ckpt *c = calloc(1, sizeof *c);
    char *index = path_in(dir, INDEX_NAME);
    if (c == NULL || index == NULL) {
        free(c);
        free(index);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    names parts = { 0 }, tensors = { 0 }, owner = { 0 };
    struct stat sb;
    bool indexed = stat(index, &sb) == 0;
    gk_status s = indexed ? read_index(index, &parts, &tensors, &owner, err) : list_parts(dir, &parts, err);
    if (s == GK_OK && parts.n == 0)
        s = about(err, gk_error_set(err, GK_E_CORRUPT, -1, "the index names no shard"), index);
    if (s == GK_OK && (c->parts = calloc(parts.n, sizeof *c->parts)) == NULL)
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; i < parts.n && s == GK_OK; i++, c->n_parts++) {
        char *p = path_in(dir, parts.v[i]);
        s = p ? gk_st_open(p, &c->parts[i], err) : gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        if (s == GK_E_NOT_FOUND && indexed)
            s = about(err, gk_error_set(err, GK_E_NOT_FOUND, -1, "the index names shard %s, which is missing",
                                        parts.v[i]), p);
        free(p);
    }
    if (s == GK_OK) s = gather(c, err);
    if (s == GK_OK && indexed) s = check_against_index(c, &tensors, &owner, index, err);
    names_free(&parts);
    names_free(&tensors);
    names_free(&owner);
    free(index);
    if (s != GK_OK) {
        gk_ckpt_close(c);
        return s;
    }
    *out = c;
    return GK_OK;
}

size_t gk_ckpt_count(const gk_ckpt *c) { return c->n; }

const gk_ckpt_tensor *gk_ckpt_at(const gk_ckpt *c, size_t i) { return i < c->n ? &c->tensors[i] : NULL; }

const gk_ckpt_tensor *gk_ckpt_find(const gk_ckpt *c, const char *name) {
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(name, c->by_name[mid]->t->name);
        if (r == 0) return c->by_name[mid];
        if (r < 0) hi = mid;
        else lo = mid + 1;
    }
    return NULL;
}

size_t gk_ckpt_part_count(const gk_ckpt *c) { return c->n_parts; }

gk_st_file *gk_ckpt_part(const gk_ckpt *c, size_t i) { return i < c->n_parts ? c->parts[i] : NULL; }

void gk_ckpt_close(gk_ckpt *c) {
    if (c == NULL) return;
    for (size_t i = 0; i < c->n_parts; i++) gk_st_close(c->parts[i]);
    free(c->parts);
    free(c->tensors);
    free(c->by_name);
    free(c);
}
