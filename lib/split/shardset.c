/*
 * shardset.c - finding, checking and merging a shard set.
 *
 * Any shard leads to its set: its split.no and split.count must agree with its
 * name PREFIX-%05d-of-%05d.gguf (shardname.c), which gives PREFIX and so every
 * sibling. Shards may be stored compressed (PREFIX-%05d-of-%05d.gguf.zst): a
 * sibling is looked for with the given shard's tail first, then the others, so
 * a set is the same set whichever of its shards are compressed. The
 * whole set is checked before anyone uses it (every shard present and valid,
 * split.no in sequence, one split.count and split.tensors.count that the tensors
 * add up to, no tensor twice, one alignment, byte order and version). Merging
 * writes the first shard's metadata without the split.* keys and every shard's
 * tensors in set order through the pipeline.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/file.h"
#include "meta/model.h"
#include "split/shardname.h"
#include "util/strset.h"
#include "util/opts.h"

struct gk_split_set {
    char *prefix;
    const char *tail;         /* the given shard's name after ".gguf": "" or ".zst" */
    gk_file **files;
    size_t n;
    uint64_t n_tensors;
    uint64_t tensor_bytes;
};

/* Reads an integer split key as an unsigned number. */
static gk_status split_key(const gk_model *m, const char *key, uint64_t *out) {
    int64_t v;
    gk_status s = gk_kv_get_int(m, key, &v);
    if (s == GK_OK && v < 0) return GK_E_TYPE_MISMATCH;
    if (s == GK_OK) *out = (uint64_t)v;
    return s;
}

/* An error about the shard at path (named in err->file, not in the message). */
static gk_status shard_error(gk_error *err, gk_status code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static gk_status shard_error(gk_error *err, gk_status code, const char *path, const char *fmt, ...) {
    char msg[GK_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gk_error_set(err, code, -1, "%s", msg);
    gk_error_about(err, path);
    return code;
}

bool gk_model_is_shard(const gk_model *m) {
    uint64_t count;
    return split_key(m, GK_SPLIT_KEY_COUNT, &count) == GK_OK && count >= 1;
}

/* Reads split.no, split.count and split.tensors.count of shard `path`. */
static gk_status shard_keys(const gk_model *m, const char *path, uint64_t *no, uint64_t *count,
                            uint64_t *tensors, gk_error *err) {
    static const char *const keys[3] = { GK_SPLIT_KEY_NO, GK_SPLIT_KEY_COUNT, GK_SPLIT_KEY_TENSORS };
    uint64_t *outs[3] = { no, count, tensors };
    for (int i = 0; i < 3; i++) {
        gk_status s = split_key(m, keys[i], outs[i]);
        if (s == GK_E_NOT_FOUND)
            return shard_error(err, GK_E_NOT_FOUND, path, "not a shard (no %s)", keys[i]);
        if (s != GK_OK)
            return shard_error(err, GK_E_CORRUPT, path, "%s is not a non-negative integer", keys[i]);
    }
    if (*count == 0)   /* the reference's mark on a merged file */
        return shard_error(err, GK_E_NOT_FOUND, path, "not a shard (split.count 0)");
    if (*count > GK_SPLIT_MAX_SHARDS)
        return shard_error(err, GK_E_CORRUPT, path, "split.count %llu is not a shard count",
                            (unsigned long long)*count);
    if (*no >= *count)
        return shard_error(err, GK_E_CORRUPT, path, "split.no %llu is not below split.count %llu",
                            (unsigned long long)*no, (unsigned long long)*count);
    return GK_OK;
}

void gk_split_set_close(gk_split_set *set) {
    if (set == NULL) return;
    for (size_t k = 0; k < set->n; k++) gk_close(set->files[k]);
    free(set->files);
    free(set->prefix);
    free(set);
}

/* Opens shard k and checks it against the first shard read (ref). */
static gk_status open_sibling(gk_split_set *set, size_t k, unsigned flags, const gk_model *ref,
                              uint64_t ref_tensors, gk_error *err) {
    char *path = gk_shard_path(set->prefix, k, set->n, set->tail);
    if (path == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    /* missing with the given shard's tail: another stored form of it, if there */
    for (size_t i = 0; access(path, F_OK) != 0 && gk_shard_tail_at(i); i++) {
        if (strcmp(gk_shard_tail_at(i), set->tail) == 0) continue;
        char *alt = gk_shard_path(set->prefix, k, set->n, gk_shard_tail_at(i));
        if (alt == NULL) {
            free(path);
            return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
        if (access(alt, F_OK) == 0) {
            free(path);
            path = alt;
            break;
        }
        free(alt);
    }
    gk_status s = gk_open(path, flags, &set->files[k], err);
    if (s != GK_OK) {
        if (s == GK_E_IO && access(path, F_OK) != 0) {
            s = shard_error(err, GK_E_NOT_FOUND, path, "shard %zu of %zu is missing", k + 1, set->n);
        } else {
            gk_error_about(err, path);
        }
        free(path);
        return s;
    }
    const gk_model *m = set->files[k]->model;
    uint64_t no, count, tensors;
    s = shard_keys(m, path, &no, &count, &tensors, err);
    if (s == GK_E_NOT_FOUND) s = err->code = GK_E_CORRUPT;   /* a sibling that is no shard breaks the set */
    if (s == GK_OK && (no != k || count != set->n))
        s = shard_error(err, GK_E_CORRUPT, path, "says it is shard %llu of %llu, its name says %zu of %zu", (unsigned long long)no + 1, (unsigned long long)count, k + 1, set->n);
    if (s == GK_OK && tensors != ref_tensors)
        s = shard_error(err, GK_E_CORRUPT, path,
                        "split.tensors.count %llu, other shards say %llu (a shard of another set?)",
                        (unsigned long long)tensors, (unsigned long long)ref_tensors);
    if (s == GK_OK && gk_model_alignment(m) != gk_model_alignment(ref))
        s = shard_error(err, GK_E_CORRUPT, path, "alignment %u, other shards %u",
                         gk_model_alignment(m), gk_model_alignment(ref));
    if (s == GK_OK && m->big_endian != ref->big_endian)
        s = shard_error(err, GK_E_CORRUPT, path, "%s-endian, other shards %s-endian",
                         m->big_endian ? "big" : "little", ref->big_endian ? "big" : "little");
    if (s == GK_OK && m->version != ref->version)
        s = shard_error(err, GK_E_CORRUPT, path, "GGUF version %u, other shards %u", m->version,
                         ref->version);
    free(path);
    return s;
}

/* Counts the set's tensors and refuses a tensor name seen twice. */
static gk_status check_tensors(gk_split_set *set, uint64_t expected, gk_error *err) {
    gk_strset seen = { 0 };
    gk_status s = GK_OK;
    for (size_t k = 0; k < set->n && s == GK_OK; k++) {
        const gk_model *m = set->files[k]->model;
        for (size_t i = 0; i < m->n_tensors && s == GK_OK; i++) {
            const gk_tensor *t = &m->tensors[i];
            int r = gk_strset_insert(&seen, t->name.ptr, t->name.len);
            if (r < 0) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            else if (r == 0)
                s = shard_error(err, GK_E_CORRUPT, set->files[k]->path, "tensor '%s' is also in an earlier shard", t->name.ptr);
            set->n_tensors++;
            set->tensor_bytes += t->nbytes;
        }
    }
    gk_strset_free(&seen);
    if (s == GK_OK && set->n_tensors != expected)
        s = gk_error_set(err, GK_E_CORRUPT, -1, "the %zu shards hold %llu tensors, split.tensors.count says %llu",
                         set->n, (unsigned long long)set->n_tensors, (unsigned long long)expected);
    return s;
}

gk_status gk_split_set_open(const char *shard_path, unsigned flags, gk_split_set **out, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    *out = NULL;
    gk_file *given;
    gk_status s = gk_open(shard_path, flags, &given, err);
    if (s != GK_OK) {
        gk_error_about(err, shard_path);
        return s;
    }
    uint64_t no, count, tensors;
    s = shard_keys(given->model, shard_path, &no, &count, &tensors, err);
    gk_split_set *set = NULL;
    if (s == GK_OK) {
        set = calloc(1, sizeof *set);
        if (set) set->files = calloc((size_t)count, sizeof *set->files);
        if (set == NULL || set->files == NULL) {
            free(set);
            set = NULL;
            s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        }
    }
    if (s == GK_OK) {
        set->n = (size_t)count;
        set->prefix = gk_shard_path_prefix(shard_path, no, count, &set->tail);
        if (set->prefix == NULL)
            s = shard_error(err, GK_E_CORRUPT, shard_path,
                            "shard %llu of %llu must be named PREFIX-%05llu-of-%05llu.gguf (or .gguf.zst)",
                            (unsigned long long)no + 1, (unsigned long long)count, (unsigned long long)no + 1,
                            (unsigned long long)count);
    }
    for (size_t k = 0; k < (set ? set->n : 0) && s == GK_OK; k++)
        s = open_sibling(set, k, flags, given->model, tensors, err);
    if (s == GK_OK) s = check_tensors(set, tensors, err);
    gk_close(given);
    if (s != GK_OK) {
        gk_split_set_close(set);
        return s;
    }
    *out = set;
    return GK_OK;
}

void gk_split_set_release(gk_split_set *set, gk_file ***out, size_t *n) {
    *out = set->files;
    *n = set->n;
    set->files = NULL;
    set->n = 0;
    gk_split_set_close(set);
}

size_t gk_split_set_count(const gk_split_set *set) { return set->n; }

gk_file *gk_split_set_file(gk_split_set *set, size_t k) { return k < set->n ? set->files[k] : NULL; }

const char *gk_split_set_prefix(const gk_split_set *set) { return set->prefix; }

uint64_t gk_split_set_tensor_count(const gk_split_set *set) { return set->n_tensors; }

uint64_t gk_split_set_tensor_bytes(const gk_split_set *set) { return set->tensor_bytes; }

/* ------------------------------------------------------------------------ */
/* Merging                                                                  */
/* ------------------------------------------------------------------------ */

gk_status gk_split_set_merged(gk_split_set *set, gk_model **out_model, gk_step **out_steps,
                              gk_error *err) {
    *out_model = NULL;
    *out_steps = NULL;
    gk_model *m = gk_model_clone(set->files[0]->model);
    gk_step *steps = calloc(set->n_tensors + 1, sizeof *steps);
    if (m == NULL || steps == NULL) {
        gk_model_free(m);
        free(steps);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    m->version = 3;   /* as llama-gguf-split --merge writes */
    gk_kv_delete(m, GK_SPLIT_KEY_NO);
    gk_kv_delete(m, GK_SPLIT_KEY_COUNT);
    gk_kv_delete(m, GK_SPLIT_KEY_TENSORS);
    gk_tensor_clear(m);
    gk_status s = GK_OK;
    size_t at = 0;
    for (size_t k = 0; k < set->n && s == GK_OK; k++) {
        const gk_model *sm = set->files[k]->model;
        for (size_t i = 0; i < sm->n_tensors && s == GK_OK; i++) {
            const gk_tensor *t = &sm->tensors[i];
            /* names are unique across the set (checked), so append without a search */
            gk_tensor copy = *t;
            copy.name.ptr = strndup(t->name.ptr, t->name.len);
            copy.offset = 0;
            copy.file_offset = -1;
            if (copy.name.ptr == NULL || gk_model_append_tensor_owned(m, &copy) != GK_OK) {
                free((void *)copy.name.ptr);
                s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
                break;
            }
            steps[at++] = (gk_step){ set->files[k], i, NULL };
        }
    }
    if (s != GK_OK) {
        gk_model_free(m);
        free(steps);
        return s;
    }
    *out_model = m;
    *out_steps = steps;
    return GK_OK;
}

gk_status gk_merge_write(gk_split_set *set, const char *dest, const gk_write_opts *opts, gk_error *err) {
    gk_error local;
    if (err == NULL) err = &local;
    gk_error_clear(err);
    for (size_t k = 0; k < set->n; k++)
        if (gk_same_file(set->files[k]->path, dest))
            return gk_error_set(err, GK_E_SAME_FILE, -1, "%s: refusing to overwrite an input shard", dest);
    gk_model *m;
    gk_step *steps;
    gk_status s = gk_split_set_merged(set, &m, &steps, err);
    if (s != GK_OK) return s;
    gk_write_opts o = { GK_OPTS_INIT(gk_write_opts) };
    if (opts) o = *opts;
    o.pad_end = true;
    s = gk_write_model(dest, m, steps, &o, err);
    gk_model_free(m);
    free(steps);
    return s;
}
