/*
 * safetensors.c - the safetensors reader (safetensors.h): the header length,
 * the JSON directory (cJSON), and the checks that make every later read safe:
 * known dtypes, shapes whose element count times the dtype size is the byte
 * range, ranges that tile the data section exactly, no name twice. Errors name
 * the file, the tensor and the absolute byte offset of what is wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "convert/safetensors.h"
#include "io/inputs.h"
#include "util/byteorder.h"

struct gk_st_file {
    char *path;
    int fd;                    /* -1 for a parsed header */
    uint64_t size;
    uint64_t data_start;       /* 8 + header length */
    gk_st_tensor *tensors;     /* by offset */
    size_t n;
    gk_st_tensor **by_name;    /* sorted by name */
    char **meta;               /* key, value, key, value ... */
    size_t n_meta;
};

static const struct {
    const char *name;
    uint32_t size;
} dtypes[GK_ST_DTYPE_COUNT] = {
    [GK_ST_BOOL] = { "BOOL", 1 },       [GK_ST_U8] = { "U8", 1 },     [GK_ST_I8] = { "I8", 1 },
    [GK_ST_F8_E5M2] = { "F8_E5M2", 1 }, [GK_ST_F8_E4M3] = { "F8_E4M3", 1 },
    [GK_ST_I16] = { "I16", 2 },         [GK_ST_U16] = { "U16", 2 },   [GK_ST_F16] = { "F16", 2 },
    [GK_ST_BF16] = { "BF16", 2 },       [GK_ST_I32] = { "I32", 4 },   [GK_ST_U32] = { "U32", 4 },
    [GK_ST_F32] = { "F32", 4 },         [GK_ST_F64] = { "F64", 8 },   [GK_ST_I64] = { "I64", 8 },
    [GK_ST_U64] = { "U64", 8 },
};

const char *gk_st_dtype_name(gk_st_dtype d) { return (unsigned)d < GK_ST_DTYPE_COUNT ? dtypes[d].name : NULL; }

uint32_t gk_st_dtype_size(gk_st_dtype d) { return (unsigned)d < GK_ST_DTYPE_COUNT ? dtypes[d].size : 0; }

/* The largest integer a JSON number (a double) holds exactly. */
#define EXACT_MAX 9007199254740992.0

/* ------------------------------------------------------------------------ */
/* One tensor entry                                                         */
/* ------------------------------------------------------------------------ */

/* An error about the file (err->file) at an absolute offset. */
static gk_status st_error(gk_error *err, gk_status code, const char *path, int64_t at, const char *msg,
                          const char *name) {
    if (name) gk_error_set(err, code, at, "tensor '%s': %s", name, msg);
    else gk_error_set(err, code, at, "%s", msg);
    gk_error_about(err, path);
    return code;
}

/* Reads a JSON number that must be a whole number in [0, EXACT_MAX]. */
static bool whole(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return false;
    double v = j->valuedouble;
    if (!(v >= 0.0) || v > EXACT_MAX || v != (double)(uint64_t)v) return false;
    *out = (uint64_t)v;
    return true;
}

static gk_status parse_dtype(const cJSON *j, gk_st_dtype *out, char *msg, size_t size) {
    if (!cJSON_IsString(j)) {
        snprintf(msg, size, "dtype is not a string");
        return GK_E_CORRUPT;
    }
    for (int d = 0; d < GK_ST_DTYPE_COUNT; d++)
        if (strcmp(j->valuestring, dtypes[d].name) == 0) {
            *out = (gk_st_dtype)d;
            return GK_OK;
        }
    snprintf(msg, size, "unknown dtype \"%.40s\"", j->valuestring);
    return GK_E_UNSUPPORTED;
}

/* Fills t from its JSON object e (offsets still relative to the data). */
static gk_status parse_entry(const cJSON *e, gk_st_tensor *t, char *msg, size_t size) {
    if (!cJSON_IsObject(e)) return snprintf(msg, size, "entry is not an object"), GK_E_CORRUPT;
    gk_status s = parse_dtype(cJSON_GetObjectItemCaseSensitive(e, "dtype"), &t->dtype, msg, size);
    if (s != GK_OK) return s;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsArray(shape)) return snprintf(msg, size, "shape is not an array"), GK_E_CORRUPT;
    int nd = cJSON_GetArraySize(shape);
    if (nd > GK_ST_MAX_DIMS) return snprintf(msg, size, "%d dimensions (at most %d)", nd, GK_ST_MAX_DIMS), GK_E_CORRUPT;
    t->n_dims = (uint32_t)nd;
    uint64_t elems = 1;
    int i = 0;
    for (const cJSON *d = shape->child; d; d = d->next, i++) {
        if (!whole(d, &t->shape[i])) return snprintf(msg, size, "dimension %d is not a whole number", i), GK_E_CORRUPT;
        if (t->shape[i] != 0 && elems > UINT64_MAX / t->shape[i])
            return snprintf(msg, size, "shape overflows"), GK_E_CORRUPT;
        elems *= t->shape[i];
    }
    uint64_t esize = dtypes[t->dtype].size;
    if (elems > UINT64_MAX / esize) return snprintf(msg, size, "shape overflows"), GK_E_CORRUPT;
    uint64_t begin, end;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || !whole(offs->child, &begin) ||
        !whole(offs->child->next, &end))
        return snprintf(msg, size, "data_offsets is not a pair of whole numbers"), GK_E_CORRUPT;
    if (end < begin) return snprintf(msg, size, "data_offsets end %llu before begin %llu",
                                     (unsigned long long)end, (unsigned long long)begin), GK_E_CORRUPT;
    t->offset = begin;
    t->nbytes = end - begin;
    if (t->nbytes != elems * esize)
        return snprintf(msg, size, "shape and dtype make %llu bytes but data_offsets give %llu",
                        (unsigned long long)(elems * esize), (unsigned long long)t->nbytes), GK_E_CORRUPT;
    return GK_OK;
}

/* ------------------------------------------------------------------------ */
/* The directory                                                            */
/* ------------------------------------------------------------------------ */

static int by_offset(const void *a, const void *b) {
    const gk_st_tensor *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

static int by_name(const void *a, const void *b) {
    return strcmp((*(gk_st_tensor *const *)a)->name, (*(gk_st_tensor *const *)b)->name);
}

/* Copies the "__metadata__" strings. */
static gk_status parse_metadata(gk_st_file *f, const cJSON *m, gk_error *err) {
    if (!cJSON_IsObject(m)) return st_error(err, GK_E_CORRUPT, f->path, 8, "__metadata__ is not an object", NULL);
    size_t n = (size_t)cJSON_GetArraySize(m);
    f->meta = calloc(2 * n + 1, sizeof *f->meta);
    if (f->meta == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (const cJSON *e = m->child; e; e = e->next) {
        if (!cJSON_IsString(e))
            return st_error(err, GK_E_CORRUPT, f->path, 8, "__metadata__ value is not a string", e->string);
        char *k = strdup(e->string), *v = strdup(e->valuestring);
        f->meta[2 * f->n_meta] = k;
        f->meta[2 * f->n_meta + 1] = v;
        f->n_meta++;
        if (k == NULL || v == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    return GK_OK;
}

/* Checks that the ranges tile the data section [0, data_size) exactly. */
static gk_status check_tiling(gk_st_file *f, uint64_t data_size, gk_error *err) {
    qsort(f->tensors, f->n, sizeof *f->tensors, by_offset);
    uint64_t at = 0;
    for (size_t i = 0; i < f->n; i++) {
        gk_st_tensor *t = &f->tensors[i];
        int64_t abs = (int64_t)(f->data_start + t->offset);
        if (t->offset > data_size || t->nbytes > data_size - t->offset)
            return st_error(err, GK_E_TRUNCATED, f->path, abs, "data runs past the end of the file", t->name);
        if (t->offset < at) return st_error(err, GK_E_CORRUPT, f->path, abs, "data overlaps the tensor before it", t->name);
        if (t->offset > at)
            return st_error(err, GK_E_CORRUPT, f->path, (int64_t)(f->data_start + at),
                            "data does not start where the tensor before it ends (a gap)", t->name);
        at = t->offset + t->nbytes;
        t->offset += f->data_start;
    }
    if (at != data_size)
        return st_error(err, GK_E_CORRUPT, f->path, (int64_t)(f->data_start + at),
                        "bytes after the last tensor's data that no tensor claims", NULL);
    return GK_OK;
}

/* Absolute offset of name's key in the header text (8 when it cannot be found,
 * e.g. written with escapes). */
static int64_t name_offset(const char *json, size_t len, const char *name) {
    size_t n = strlen(name);
    for (const char *p = json; p && (size_t)(p - json) + n + 2 <= len; p++) {
        p = memchr(p, '"', len - (size_t)(p - json));
        if (p == NULL || (size_t)(p - json) + n + 2 > len) break;
        if (memcmp(p + 1, name, n) == 0 && p[n + 1] == '"') return 8 + (p - json);
    }
    return 8;
}

/* Reads the tensor entries of root into f. */
static gk_status parse_tensors(gk_st_file *f, const cJSON *root, const char *json, size_t len, gk_error *err) {
    size_t n = (size_t)cJSON_GetArraySize(root);
    f->tensors = calloc(n ? n : 1, sizeof *f->tensors);
    if (f->tensors == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    char msg[256];
    for (const cJSON *e = root->child; e; e = e->next) {
        if (e->string == NULL) return st_error(err, GK_E_CORRUPT, f->path, 8, "entry without a name", NULL);
        if (strcmp(e->string, "__metadata__") == 0) {
            if (f->meta) return st_error(err, GK_E_CORRUPT, f->path, 8, "__metadata__ twice", NULL);
            gk_status s = parse_metadata(f, e, err);
            if (s != GK_OK) return s;
            continue;
        }
        gk_st_tensor *t = &f->tensors[f->n];
        if ((t->name = strdup(e->string)) == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        f->n++;
        if (t->name[0] == '\0') return st_error(err, GK_E_CORRUPT, f->path, 8, "a tensor with an empty name", NULL);
        gk_status s = parse_entry(e, t, msg, sizeof msg);
        if (s != GK_OK) return st_error(err, s, f->path, name_offset(json, len, t->name), msg, t->name);
    }
    return GK_OK;
}

/* Builds the name index; a name twice is an error. */
static gk_status index_names(gk_st_file *f, gk_error *err) {
    f->by_name = malloc((f->n ? f->n : 1) * sizeof *f->by_name);
    if (f->by_name == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t i = 0; i < f->n; i++) f->by_name[i] = &f->tensors[i];
    qsort(f->by_name, f->n, sizeof *f->by_name, by_name);
    for (size_t i = 1; i < f->n; i++)
        if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0)
            return st_error(err, GK_E_CORRUPT, f->path, -1, "the same tensor name twice", f->by_name[i]->name);
    return GK_OK;
}

gk_status gk_st_parse(const char *json, size_t len, uint64_t file_size, const char *path, gk_st_file **out,
                      gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    *out = NULL;
    gk_st_file *f = calloc(1, sizeof *f);
    if (f == NULL || (f->path = strdup(path ? path : "")) == NULL) {
        free(f);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    f->fd = -1;
    f->size = file_size;
    f->data_start = 8 + (uint64_t)len;
    gk_status s = GK_OK;
    const char *end = NULL;
    cJSON *root = NULL;
    if (f->data_start > file_size)
        s = st_error(err, GK_E_TRUNCATED, f->path, 0, "the header runs past the end of the file", NULL);
    else if (len == 0 || json[0] != '{')
        s = st_error(err, GK_E_CORRUPT, f->path, 8, "the header is not a JSON object", NULL);
    else if ((root = cJSON_ParseWithLengthOpts(json, len, &end, false)) == NULL || !cJSON_IsObject(root)) {
        const char *at = cJSON_GetErrorPtr();
        int64_t off = at && at >= json && at <= json + len ? 8 + (at - json) : 8;
        s = st_error(err, GK_E_CORRUPT, f->path, off, "the header is not valid JSON", NULL);
    } else {
        /* the reference writer pads the header with spaces */
        for (const char *p = end; p < json + len && s == GK_OK; p++)
            if (*p != ' ' && *p != '\0')
                s = st_error(err, GK_E_CORRUPT, f->path, 8 + (p - json), "bytes after the header's JSON object", NULL);
    }
    if (s == GK_OK) s = parse_tensors(f, root, json, len, err);
    cJSON_Delete(root);
    if (s == GK_OK) s = check_tiling(f, file_size - f->data_start, err);   /* sorts by offset */
    if (s == GK_OK) s = index_names(f, err);
    if (s != GK_OK) {
        gk_st_close(f);
        return s;
    }
    *out = f;
    return GK_OK;
}

gk_status gk_st_open(const char *path, gk_st_file **out, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    *out = NULL;
    int fd;
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        gk_error_set(err, GK_E_NOT_FOUND, -1, "cannot open: %s", strerror(ENOENT));
        gk_error_about(err, path);
        return GK_E_NOT_FOUND;
    }
    gk_status os = input_open(path, &fd, err);   /* recorded: no output may replace it */
    if (os != GK_OK) {
        gk_error_about(err, path);
        return os;
    }
    struct stat sb;
    uint8_t lenbuf[8];
    char *json = NULL;
    gk_status s = GK_OK;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        s = st_error(err, GK_E_ARG, path, -1, "not a regular file", NULL);
    else if (sb.st_size < 8 || pread(fd, lenbuf, 8, 0) != 8)
        s = st_error(err, GK_E_TRUNCATED, path, 0, "shorter than the 8-byte header length", NULL);
    uint64_t len = 0;
    if (s == GK_OK) len = gk_load_le64(lenbuf);
    if (s == GK_OK && len > GK_ST_HEADER_MAX) {
        gk_error_set(err, GK_E_CORRUPT, 0, "header length %llu is over the limit of %u bytes",
                     (unsigned long long)len, GK_ST_HEADER_MAX);
        gk_error_about(err, path);
        s = GK_E_CORRUPT;
    } else if (s == GK_OK && len > (uint64_t)sb.st_size - 8) {
        gk_error_set(err, GK_E_TRUNCATED, 0, "header length %llu runs past the end of the file (%llu bytes)",
                     (unsigned long long)len, (unsigned long long)sb.st_size);
        gk_error_about(err, path);
        s = GK_E_TRUNCATED;
    }
    if (s == GK_OK && (json = malloc(len ? (size_t)len : 1)) == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s == GK_OK && pread(fd, json, (size_t)len, 8) != (ssize_t)len) s = st_error(err, GK_E_IO, path, 8, "cannot read the header", NULL);
    gk_st_file *f = NULL;
    if (s == GK_OK) s = gk_st_parse(json, (size_t)len, (uint64_t)sb.st_size, path, &f, err);
    free(json);
    if (s != GK_OK) {
        close(fd);
        return s;
    }
    f->fd = fd;
    *out = f;
    return GK_OK;
}

size_t gk_st_count(const gk_st_file *f) { return f->n; }

const gk_st_tensor *gk_st_at(const gk_st_file *f, size_t i) { return i < f->n ? &f->tensors[i] : NULL; }

const gk_st_tensor *gk_st_sorted(const gk_st_file *f, size_t i) { return i < f->n ? f->by_name[i] : NULL; }

const gk_st_tensor *gk_st_find(const gk_st_file *f, const char *name) {
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, f->by_name[mid]->name);
        if (c == 0) return f->by_name[mid];
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return NULL;
}

const char *gk_st_metadata(const gk_st_file *f, const char *key) {
    for (size_t i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[2 * i], key) == 0) return f->meta[2 * i + 1];
    return NULL;
}

const char *gk_st_path(const gk_st_file *f) { return f->path; }

gk_status gk_st_read(gk_st_file *f, const gk_st_tensor *t, uint64_t start, void *buf, size_t len, gk_error *err) {
    if (start > t->nbytes || len > t->nbytes - start)
        return gk_error_set(err, GK_E_ARG, -1, "tensor '%s': read outside its data", t->name);
    if (f->fd < 0) return gk_error_set(err, GK_E_ARG, -1, "tensor '%s': no data behind a parsed header", t->name);
    uint8_t *p = buf;
    uint64_t off = t->offset + start;
    while (len > 0) {
        ssize_t got = pread(f->fd, p, len, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            gk_error_set(err, got < 0 ? GK_E_IO : GK_E_TRUNCATED, (int64_t)off, "tensor '%s': %s", t->name,
                         got < 0 ? strerror(errno) : "the file ends early (it shrank)");
            gk_error_about(err, f->path);
            return err->code;
        }
        p += got;
        off += (uint64_t)got;
        len -= (size_t)got;
    }
    return GK_OK;
}

void gk_st_close(gk_st_file *f) {
    if (f == NULL) return;
    if (f->fd >= 0) close(f->fd);
    for (size_t i = 0; i < f->n; i++) free(f->tensors[i].name);
    for (size_t i = 0; i < 2 * f->n_meta; i++) free(f->meta[i]);
    free(f->meta);
    free(f->tensors);
    free(f->by_name);
    free(f->path);
    free(f);
}
