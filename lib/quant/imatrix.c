/*
 * imatrix.c - importance matrices as llama-quantize reads them.
 *
 * Two file forms:
 *  - legacy binary (llama-imatrix until mid 2025): i32 entry count, then per entry
 *    i32 name length, the name, i32 ncall, i32 nval, f32 values[nval]; optionally
 *    i32 chunk count, i32 length and the dataset name. Values are sums over ncall
 *    calls and are divided by ncall (in float) when ncall > 0.
 *  - GGUF: tensors NAME.in_sum2 ([ne0, ne1] F32 sums) and NAME.counts (ne1 F32
 *    counts), keys imatrix.datasets (string array), imatrix.chunk_count and
 *    imatrix.chunk_size. As today's llama-quantize: the sums split into one run
 *    of sums/counts values per count (any shape whose size the count number
 *    divides), each count is rounded to an integer, and a run's values are
 *    sum / count, or 1 for a count of 0 (an expert never reached in calibration).
 * The file's first four bytes decide the form. llama-quantize also refuses a
 * matrix holding a non-finite value; so does this reader (naming the entry).
 * For a 3-D expert tensor an entry holds ne[0]*ne[2] values, ne[0] per expert.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ggufkit.h"
#include "io/inputs.h"
#include "util/byteorder.h"
#include "util/grow.h"

/* llama-quantize copies the dataset name and the path into 128-byte fields. */
#define IMATRIX_META_MAX 127

typedef struct {
    char *name;
    float *values;
    size_t n;
} imatrix_entry;

struct gk_imatrix {
    imatrix_entry *entries;
    size_t n, cap;
    char *dataset;       /* NULL when the file names none */
    int32_t chunks;      /* chunk count recorded (0 when absent) */
    bool is_gguf;
};

/* ------------------------------------------------------------------------- */
/* Entry table                                                               */

/* Index of the entry named name, or -1. */
static int64_t entry_index(const gk_imatrix *im, const char *name) {
    for (size_t i = 0; i < im->n; i++)
        if (strcmp(im->entries[i].name, name) == 0) return (int64_t)i;
    return -1;
}

/* Adds (or, for a repeated name, replaces as llama-quantize's map does) an entry;
 * takes ownership of name and values. */
static gk_status entry_put(gk_imatrix *im, char *name, float *values, size_t n, gk_error *err) {
    int64_t at = entry_index(im, name);
    if (at >= 0) {
        free(im->entries[at].values);
        free(name);
        im->entries[at].values = values;
        im->entries[at].n = n;
        return GK_OK;
    }
    if (!GK_GROW(im->entries, im->cap, im->n + 1, 64)) {
        free(name);
        free(values);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory reading the importance matrix");
    }
    im->entries[im->n++] = (imatrix_entry){ name, values, n };
    return GK_OK;
}

/* Removes entry i, keeping the order of the others. */
static void entry_remove(gk_imatrix *im, size_t i) {
    free(im->entries[i].name);
    free(im->entries[i].values);
    memmove(&im->entries[i], &im->entries[i + 1], (im->n - i - 1) * sizeof im->entries[0]);
    im->n--;
}

/* Refuses a non-finite value (llama-quantize's check before quantizing). */
static gk_status check_finite(const char *name, const float *v, size_t n, int64_t offset,
                              gk_error *err) {
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            return gk_error_set(err, GK_E_CORRUPT, offset,
                                "importance matrix entry '%s' holds a non-finite value (%g) at "
                                "index %zu", name, (double)v[i], i);
    }
    return GK_OK;
}

/* ------------------------------------------------------------------------- */
/* Legacy binary form                                                        */

typedef struct {
    const uint8_t *p;
    size_t size, pos;
    const char *path;
} byte_reader;

/* Reads a little-endian i32, or reports where the file ends. */
static gk_status read_i32(byte_reader *r, int32_t *out, const char *what, gk_error *err) {
    if (r->size - r->pos < 4)
        return gk_error_set(err, GK_E_TRUNCATED, (int64_t)r->pos,
                            "%s: importance matrix ends inside %s", r->path, what);
    const uint8_t *b = r->p + r->pos;
    *out = (int32_t)gk_load_le32(b);
    r->pos += 4;
    return GK_OK;
}

/* Copies len bytes as a NUL-terminated string. */
static gk_status read_bytes_str(byte_reader *r, int32_t len, char **out, const char *what,
                                gk_error *err) {
    if (len < 0)
        return gk_error_set(err, GK_E_CORRUPT, (int64_t)r->pos - 4,
                            "%s: importance matrix %s has negative length %d", r->path, what, len);
    if (r->size - r->pos < (size_t)len)
        return gk_error_set(err, GK_E_TRUNCATED, (int64_t)r->pos,
                            "%s: importance matrix ends inside %s (%d bytes announced, %zu left)",
                            r->path, what, len, r->size - r->pos);
    char *s = malloc((size_t)len + 1);
    if (s == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    memcpy(s, r->p + r->pos, (size_t)len);
    s[len] = '\0';
    r->pos += (size_t)len;
    *out = s;
    return GK_OK;
}

/* Parses the legacy form held in r into im. */
static gk_status parse_legacy(byte_reader *r, gk_imatrix *im, gk_error *err) {
    int32_t n_entries = 0;
    gk_status st = read_i32(r, &n_entries, "the entry count", err);
    if (st != GK_OK) return st;
    if (n_entries < 1)
        return gk_error_set(err, GK_E_CORRUPT, 0, "%s: importance matrix has no entries (count %d)",
                            r->path, n_entries);
    for (int32_t i = 0; i < n_entries; i++) {
        int64_t entry_at = (int64_t)r->pos;
        int32_t len = 0, ncall = 0, nval = 0;
        char *name = NULL;
        if ((st = read_i32(r, &len, "an entry name length", err)) != GK_OK) return st;
        if ((st = read_bytes_str(r, len, &name, "an entry name", err)) != GK_OK) return st;
        if ((st = read_i32(r, &ncall, "an entry call count", err)) != GK_OK ||
            (st = read_i32(r, &nval, "an entry value count", err)) != GK_OK) {
            free(name);
            return st;
        }
        if (nval < 1) {
            free(name);
            return gk_error_set(err, GK_E_CORRUPT, (int64_t)r->pos - 4,
                                "%s: importance matrix entry %d has %d values", r->path, i + 1, nval);
        }
        if ((r->size - r->pos) / 4 < (size_t)nval) {
            gk_error_set(err, GK_E_TRUNCATED, (int64_t)r->pos,
                         "%s: importance matrix ends inside the %d values of entry '%s'", r->path,
                         nval, name);
            free(name);
            return GK_E_TRUNCATED;
        }
        float *v = malloc((size_t)nval * sizeof *v);
        if (v == NULL) {
            free(name);
            return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
        for (int32_t k = 0; k < nval; k++) {
            const uint8_t *b = r->p + r->pos + 4 * (size_t)k;
            uint32_t bits = gk_load_le32(b);
            memcpy(&v[k], &bits, sizeof bits);
            if (ncall > 0) v[k] /= ncall;
        }
        r->pos += 4 * (size_t)nval;
        if ((st = check_finite(name, v, (size_t)nval, entry_at, err)) != GK_OK) {
            free(name);
            free(v);
            return st;
        }
        if ((st = entry_put(im, name, v, (size_t)nval, err)) != GK_OK) return st;
    }
    if (r->pos < r->size) {
        int32_t last_call = 0, dlen = 0;
        if ((st = read_i32(r, &last_call, "the chunk count", err)) != GK_OK ||
            (st = read_i32(r, &dlen, "the dataset name length", err)) != GK_OK ||
            (st = read_bytes_str(r, dlen, &im->dataset, "the dataset name", err)) != GK_OK)
            return st;
        im->chunks = last_call;
        if (dlen == 0) { /* the release records a dataset only for a name of 1+ bytes */
            free(im->dataset);
            im->dataset = NULL;
        }
        if (r->pos != r->size)
            return gk_error_set(err, GK_E_CORRUPT, (int64_t)r->pos,
                                "%s: %zu unexpected bytes after the importance matrix's dataset name",
                                r->path, r->size - r->pos);
    }
    return GK_OK;
}

/* Reads a whole (small) file into memory. */
static gk_status slurp(const char *path, uint8_t **data, size_t *size, gk_error *err) {
    int fd = gk_inputs_open(path);   /* recorded: no output may replace the matrix */
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (f == NULL) {
        int e = errno;
        if (fd >= 0) close(fd);
        return gk_error_set(err, GK_E_IO, -1, "%s: cannot open: %s", path, strerror(e));
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (!GK_GROW(buf, cap, cap + 1, 0)) {
            free(buf);
            buf = NULL;
            break;
        }
    }
    bool failed = ferror(f) != 0;
    fclose(f);
    if (buf == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "%s: out of memory", path);
    if (failed) {
        free(buf);
        return gk_error_set(err, GK_E_IO, -1, "%s: read error", path);
    }
    *data = buf;
    *size = n;
    return GK_OK;
}

/* ------------------------------------------------------------------------- */
/* GGUF form                                                                 */

/* The tensor name without suffix when it ends in suffix (a malloc'ed copy). */
static char *strip_suffix(const gk_str *name, const char *suffix) {
    size_t ls = strlen(suffix);
    if (name->len <= ls || memcmp(name->ptr + name->len - ls, suffix, ls) != 0) return NULL;
    return strndup(name->ptr, name->len - ls);
}

/* Reads tensor i of f as host floats (it must be F32). */
static gk_status read_f32_tensor(gk_file *f, size_t i, const gk_tensor *t, float **out,
                                 gk_error *err) {
    char name[160];
    snprintf(name, sizeof name, "%.*s", (int)t->name.len, t->name.ptr);
    if (t->type != GK_TYPE_F32)
        return gk_error_set(err, GK_E_CORRUPT, t->file_offset,
                            "importance matrix tensor '%s' is not F32", name);
    size_t n = (size_t)(t->nbytes / 4);
    float *v = malloc(n ? n * sizeof *v : 1);
    if (v == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status st = gk_file_tensor_read(f, i, 0, v, n * 4, err);
    if (st != GK_OK) {
        free(v);
        return st;
    }
    if (gk_model_big_endian(gk_file_model(f))) {
        for (size_t k = 0; k < n; k++) {
            uint32_t bits;
            memcpy(&bits, &v[k], 4);
            bits = gk_bswap32(bits);
            memcpy(&v[k], &bits, 4);
        }
    }
    *out = v;
    return GK_OK;
}

/* Tensor index in m of NAME + suffix, or -1. */
static int64_t find_with_suffix(const gk_model *m, const char *base, const char *suffix) {
    char name[512];
    if ((size_t)snprintf(name, sizeof name, "%s%s", base, suffix) >= sizeof name) return -1;
    return gk_tensor_find(m, name);
}

/* Builds the entry `base` from its in_sum2 and counts tensors. */
static gk_status gguf_entry(gk_file *f, gk_imatrix *im, char *base, size_t isum, size_t icnt,
                            gk_error *err) {
    const gk_model *m = gk_file_model(f);
    const gk_tensor *ts = gk_tensor_at(m, isum), *tc = gk_tensor_at(m, icnt);
    uint64_t nsums = ts->ne[0] * ts->ne[1] * ts->ne[2] * ts->ne[3];
    uint64_t ncounts = tc->ne[0] * tc->ne[1] * tc->ne[2] * tc->ne[3];
    /* the sums split evenly into one run per count, whatever their shape (the
     * release's reader takes ne0 = sums / counts) */
    if (ncounts == 0 || nsums % ncounts != 0) {
        gk_error_set(err, GK_E_CORRUPT, tc->file_offset,
                     "importance matrix entry '%s': %llu counts do not divide its %llu sums", base,
                     (unsigned long long)ncounts, (unsigned long long)nsums);
        free(base);
        return GK_E_CORRUPT;
    }
    const uint64_t ne0 = nsums / ncounts, ne1 = ncounts;
    float *sums = NULL, *counts = NULL;
    gk_status st = read_f32_tensor(f, isum, ts, &sums, err);
    if (st == GK_OK) st = read_f32_tensor(f, icnt, tc, &counts, err);
    if (st != GK_OK) {
        free(sums);
        free(base);
        return st;
    }
    for (uint64_t j = 0; j < ne1; j++) {
        if (!isfinite(counts[j])) {
            gk_error_set(err, GK_E_CORRUPT, tc->file_offset + (int64_t)(4 * j),
                         "importance matrix entry '%s': count %llu is not finite", base,
                         (unsigned long long)j);
            free(sums);
            free(counts);
            free(base);
            return GK_E_CORRUPT;
        }
        /* counts are whole token numbers: the release rounds them to integers */
        const float count = (float)llroundf(counts[j]);
        for (uint64_t i = 0; i < ne0; i++) {
            float *e = &sums[j * ne0 + i];
            *e = count > 0.0f ? *e / count : 1.0f;
        }
    }
    free(counts);
    if ((st = check_finite(base, sums, (size_t)(ne0 * ne1), ts->file_offset, err)) != GK_OK) {
        free(sums);
        free(base);
        return st;
    }
    return entry_put(im, base, sums, (size_t)(ne0 * ne1), err);
}

/* Orders entry names (the reference walks an ordered map). */
static int compare_names(const void *a, const void *b) {
    return strcmp(((const imatrix_entry *)a)->name, ((const imatrix_entry *)b)->name);
}

/* Reads the GGUF form from path into im. */
static gk_status parse_gguf(const char *path, gk_imatrix *im, gk_error *err) {
    gk_file *f = NULL;
    gk_status st = gk_open(path, GK_OPEN_DEFAULT, &f, err);
    if (st != GK_OK) return st;
    const gk_model *m = gk_file_model(f);
    const gk_value *datasets = gk_kv_get(m, "imatrix.datasets");
    uint64_t chunk_count = 0, chunk_size = 0;
    if (datasets == NULL || gk_kv_get_uint(m, "imatrix.chunk_count", &chunk_count) != GK_OK ||
        gk_kv_get_uint(m, "imatrix.chunk_size", &chunk_size) != GK_OK) {
        gk_close(f);
        return gk_error_set(err, GK_E_CORRUPT, -1,
                            "%s: GGUF importance matrix lacks imatrix.datasets, imatrix.chunk_count "
                            "or imatrix.chunk_size", path);
    }
    if (datasets->type != GK_V_ARR || datasets->arr.elem != GK_V_STR) {
        gk_close(f);
        return gk_error_set(err, GK_E_CORRUPT, -1, "%s: imatrix.datasets is not an array of strings",
                            path);
    }
    if (datasets->arr.n > 0) {
        const gk_str *s0 = datasets->arr.data;
        im->dataset = strndup(s0->ptr, s0->len);
        if (im->dataset == NULL) st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    im->chunks = (int32_t)chunk_count;
    size_t nt = gk_tensor_count(m);
    if (st == GK_OK && nt == 0)
        st = gk_error_set(err, GK_E_CORRUPT, -1, "%s: importance matrix has no tensors", path);
    for (size_t i = 0; st == GK_OK && i < nt; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        char *base = strip_suffix(&t->name, ".in_sum2");
        if (base != NULL) {
            int64_t ic = find_with_suffix(m, base, ".counts");
            if (ic < 0) {
                st = gk_error_set(err, GK_E_CORRUPT, t->file_offset,
                                  "%s: importance matrix has sums but no counts for '%s'", path, base);
                free(base);
                break;
            }
            st = gguf_entry(f, im, base, i, (size_t)ic, err);
            continue;
        }
        base = strip_suffix(&t->name, ".counts");
        if (base != NULL) {
            if (find_with_suffix(m, base, ".in_sum2") < 0)
                st = gk_error_set(err, GK_E_CORRUPT, t->file_offset,
                                  "%s: importance matrix has counts but no sums for '%s'", path, base);
            free(base);
        }
    }
    gk_close(f);
    if (st == GK_OK && im->n > 1) qsort(im->entries, im->n, sizeof im->entries[0], compare_names);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Public API                                                                */

/** gk_imatrix_load() : reads the importance matrix at path (legacy binary or GGUF,
 *  decided by the magic), with values as llama-quantize uses them.
 *  @return : GK_OK and *out set, or an error (truncated, inconsistent, non-finite
 *            values) with err filled (offset where known). */
gk_status gk_imatrix_load(const char *path, gk_imatrix **out, gk_error *err) {
    *out = NULL;
    gk_imatrix *im = calloc(1, sizeof *im);
    if (im == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    uint8_t *data = NULL;
    size_t size = 0;
    gk_status st = slurp(path, &data, &size, err);
    if (st == GK_OK) {
        if (size >= 4 && memcmp(data, "GGUF", 4) == 0) {
            free(data);
            data = NULL;
            im->is_gguf = true;
            st = parse_gguf(path, im, err);
        } else {
            byte_reader r = { data, size, 0, path };
            st = parse_legacy(&r, im, err);
        }
    }
    free(data);
    if (st != GK_OK) {
        gk_imatrix_free(im);
        return st;
    }
    *out = im;
    return GK_OK;
}

/** gk_imatrix_free() : releases a matrix (NULL accepted). */
void gk_imatrix_free(gk_imatrix *im) {
    if (im == NULL) return;
    for (size_t i = 0; i < im->n; i++) {
        free(im->entries[i].name);
        free(im->entries[i].values);
    }
    free(im->entries);
    free(im->dataset);
    free(im);
}

/** gk_imatrix_count() : @return : number of entries. */
size_t gk_imatrix_count(const gk_imatrix *im) { return im->n; }

/** gk_imatrix_entry() : entry i's name, values and value count (*n). @return : the
 *  name, or NULL when i is out of range. */
const char *gk_imatrix_entry(const gk_imatrix *im, size_t i, const float **values, size_t *n) {
    if (i >= im->n) return NULL;
    if (values) *values = im->entries[i].values;
    if (n) *n = im->entries[i].n;
    return im->entries[i].name;
}

/** gk_imatrix_find() : @return : the values of the entry named name (count in *n),
 *  or NULL. */
const float *gk_imatrix_find(const gk_imatrix *im, const char *name, size_t *n) {
    int64_t i = entry_index(im, name);
    if (i < 0) return NULL;
    if (n) *n = im->entries[i].n;
    return im->entries[i].values;
}

/** gk_imatrix_dataset() : @return : the calibration dataset's name, or NULL when
 *  the file records none. */
const char *gk_imatrix_dataset(const gk_imatrix *im) { return im->dataset; }

/** gk_imatrix_chunks() : @return : the chunk count the file records (0 if none). */
int32_t gk_imatrix_chunks(const gk_imatrix *im) { return im->chunks; }

/** gk_imatrix_is_gguf() : @return : true when the matrix was read from the GGUF form. */
bool gk_imatrix_is_gguf(const gk_imatrix *im) { return im->is_gguf; }

/** gk_imatrix_filter() : llama-quantize's --exclude-weights / --include-weights:
 *  drops entries whose name contains any exclude string, then (when include is
 *  non-empty) keeps only entries whose name contains an include string. */
void gk_imatrix_filter(gk_imatrix *im, const char *const *include, size_t n_include,
                       const char *const *exclude, size_t n_exclude) {
    for (size_t k = 0; k < n_exclude; k++) {
        for (size_t i = 0; i < im->n;) {
            if (strstr(im->entries[i].name, exclude[k]) != NULL) entry_remove(im, i);
            else i++;
        }
    }
    if (n_include == 0) return;
    for (size_t i = 0; i < im->n;) {
        bool keep = false;
        for (size_t k = 0; k < n_include && !keep; k++)
            keep = strstr(im->entries[i].name, include[k]) != NULL;
        if (keep) i++;
        else entry_remove(im, i);
    }
}

/* Values the reference expects for tensor t: ne[0] * ne[2]. */
static uint64_t expected_values(const gk_tensor *t) { return t->ne[0] * t->ne[2]; }

/** gk_imatrix_for_tensor() : @return : the weights for tensor t (ne[0] values per
 *  expert slice, ne[0]*ne[2] in all), or NULL when the matrix has no entry for it
 *  or the entry's length differs (llama-quantize then quantizes without one for
 *  token_embd.weight and refuses otherwise: see gk_imatrix_check_model). */
const float *gk_imatrix_for_tensor(const gk_imatrix *im, const gk_tensor *t) {
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)t->name.len, t->name.ptr);
    size_t n = 0;
    const float *v = gk_imatrix_find(im, name, &n);
    if (v == NULL || n != expected_values(t)) return NULL;
    return v;
}

/** gk_imatrix_check_model() : refuses a matrix made for another model (the
 *  n_models models of a shard set, or one): an entry that names no tensor of
 *  them, or whose length is not ne[0]*ne[2] of its tensor (token_embd.weight
 *  excepted: llama-quantize ignores that mismatch).
 *  @return : GK_OK, or GK_E_ARG naming the entry / tensor. */
gk_status gk_imatrix_check_model(const gk_imatrix *im, const gk_model *const *models,
                                 size_t n_models, gk_error *err) {
    for (size_t i = 0; i < im->n; i++) {
        const imatrix_entry *e = &im->entries[i];
        const gk_tensor *t = NULL;
        for (size_t k = 0; k < n_models && t == NULL; k++) {
            int64_t ti = gk_tensor_find(models[k], e->name);
            if (ti >= 0) t = gk_tensor_at(models[k], (size_t)ti);
        }
        if (t == NULL)
            return gk_error_set(err, GK_E_ARG, -1,
                                "importance matrix entry '%s' names no tensor of the model "
                                "(matrix made for another model?)", e->name);
        if (e->n != expected_values(t) && strcmp(e->name, "token_embd.weight") != 0)
            return gk_error_set(err, GK_E_ARG, -1,
                                "importance matrix has %zu values for tensor '%s', which needs "
                                "%llu (ne[0] x ne[2])", e->n, e->name,
                                (unsigned long long)expected_values(t));
    }
    return GK_OK;
}

/* Copies at most IMATRIX_META_MAX bytes of src into an override's string field,
 * as llama-quantize's strncpy into a 128-byte field does. */
static void copy_meta_string(char *dst, const char *src) {
    size_t n = strnlen(src, IMATRIX_META_MAX);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/** gk_imatrix_overrides() : the metadata llama-quantize records for a matrix, as
 *  --override-kv pairs to apply after the user's (it passes them the same way):
 *  quantize.imatrix.file (path exactly as given, at most 127 bytes),
 *  quantize.imatrix.dataset (when recorded, at most 127 bytes),
 *  quantize.imatrix.entries_count (entries after filtering) and
 *  quantize.imatrix.chunks_count (when above 0), the counts as UINT32 (the
 *  release's writer makes every integer it records so).
 *  @return : the number of pairs written to out (2 to 4). */
size_t gk_imatrix_overrides(const gk_imatrix *im, const char *path, gk_kv_override out[4]) {
    size_t n = 0;
    memset(out, 0, 4 * sizeof *out);
    snprintf(out[n].key, sizeof out[n].key, "quantize.imatrix.file");
    out[n].kind = GK_OVR_STR;
    copy_meta_string(out[n++].s, path);
    if (im->dataset != NULL) { /* a GGUF matrix's first dataset, even "" */
        snprintf(out[n].key, sizeof out[n].key, "quantize.imatrix.dataset");
        out[n].kind = GK_OVR_STR;
        copy_meta_string(out[n++].s, im->dataset);
    }
    snprintf(out[n].key, sizeof out[n].key, "quantize.imatrix.entries_count");
    out[n].kind = GK_OVR_U32;
    out[n++].i = (int64_t)im->n;
    if (im->chunks > 0) {
        snprintf(out[n].key, sizeof out[n].key, "quantize.imatrix.chunks_count");
        out[n].kind = GK_OVR_U32;
        out[n++].i = im->chunks;
    }
    return n;
}
