/*
 * parse.c - the index's worker side: turns one path into small summaries of the
 * GGUF files it holds (a plain file, a .gguf.zst, or every GGUF member of an
 * archive), ready for the database writer. Only headers are read (gk_open);
 * arrays are kept as JSON of their first elements unless asked for in full.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "io/http.h"
#include "index/index_internal.h"
#include "split/shardname.h"
#include "io/source.h"
#include "util/byteorder.h"
#include "util/chars.h"
#include "util/hashmap.h"
#include "shared/json.h"
#include "meta/value.h"   /* gk_value_held, gk_format_double, gk_utf8_repair */
#include "util/grow.h"

/* ------------------------------------------------------------------------ */
/* Values as text                                                           */
/* ------------------------------------------------------------------------ */

/* A cJSON string of a metadata string (s[len] is NUL, as the library's are).
 * cJSON strings end at NUL and must be UTF-8: each NUL byte and each byte that
 * starts no well-formed character becomes U+FFFD. */
static cJSON *json_str(const gk_str *s) {
    if (gk_utf8_valid(s->ptr, s->len) && memchr(s->ptr, '\0', s->len) == NULL) return cJSON_CreateString(s->ptr);
    char *fixed = gk_utf8_repair(s->ptr, s->len, GK_UTF8_REPAIR_BYTES, NULL);
    if (fixed == NULL) return NULL;
    cJSON *item = cJSON_CreateString(fixed);
    free(fixed);
    return item;
}

static cJSON *json_value(const gk_value *v, unsigned head);

/* Element i of a packed array of type elem as a cJSON item. */
static cJSON *json_element(gk_vtype elem, const void *data, uint64_t i, unsigned head) {
    switch (elem) {
    case GK_V_U8: return gk_json_u64(((const uint8_t *)data)[i]);
    case GK_V_I8: return gk_json_i64(((const int8_t *)data)[i]);
    case GK_V_U16: return gk_json_u64(((const uint16_t *)data)[i]);
    case GK_V_I16: return gk_json_i64(((const int16_t *)data)[i]);
    case GK_V_U32: return gk_json_u64(((const uint32_t *)data)[i]);
    case GK_V_I32: return gk_json_i64(((const int32_t *)data)[i]);
    case GK_V_U64: return gk_json_u64(((const uint64_t *)data)[i]);
    case GK_V_I64: return gk_json_i64(((const int64_t *)data)[i]);
    case GK_V_F32: return gk_json_double((double)((const float *)data)[i]);
    case GK_V_F64: return gk_json_double(((const double *)data)[i]);
    case GK_V_BOOL: return cJSON_CreateBool(((const uint8_t *)data)[i] != 0);
    case GK_V_STR: return json_str(&((const gk_str *)data)[i]);
    case GK_V_ARR: return json_value(&((const gk_value *)data)[i], head);
    default: return NULL;
    }
}

/* Any value as a cJSON item; arrays cut to head elements (0: all). */
static cJSON *json_value(const gk_value *v, unsigned head) {
    switch (v->type) {
    case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64: return gk_json_u64(v->u);
    case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64: return gk_json_i64(v->i);
    case GK_V_F32: case GK_V_F64: return gk_json_double(v->f);
    case GK_V_BOOL: return cJSON_CreateBool(v->b);
    case GK_V_STR: return json_str(&v->s);
    case GK_V_ARR: {
        cJSON *list = cJSON_CreateArray();
        uint64_t n = head && v->arr.n > head ? head : v->arr.n;
        if (n > gk_value_held(v)) n = gk_value_held(v);   /* what a preview holds */
        for (uint64_t i = 0; list != NULL && i < n; i++) {
            cJSON *item = json_element(v->arr.elem, v->arr.data, i, head);
            if (item == NULL || !cJSON_AddItemToArray(list, item)) {
                cJSON_Delete(item);
                cJSON_Delete(list);
                return NULL;
            }
        }
        return list;
    }
    default: return NULL;
    }
}

char *ix_value_text(const gk_value *v, unsigned head, size_t *len) {
    char buf[48];
    const char *text = buf;
    size_t n;
    switch (v->type) {
    case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64:
        snprintf(buf, sizeof buf, "%" PRIu64, v->u);
        break;
    case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64:
        snprintf(buf, sizeof buf, "%" PRId64, v->i);
        break;
    case GK_V_F32: case GK_V_F64: gk_format_double(buf, sizeof buf, v->f); break;
    case GK_V_BOOL: text = v->b ? "true" : "false"; break;
    case GK_V_STR: {
        char *copy = malloc(v->s.len + 1);
        if (copy == NULL) return NULL;
        memcpy(copy, v->s.ptr, v->s.len);
        copy[v->s.len] = '\0';
        *len = v->s.len;
        return copy;
    }
    case GK_V_ARR: {
        cJSON *item = json_value(v, head);
        char *json = item ? cJSON_PrintUnformatted(item) : NULL;
        cJSON_Delete(item);
        if (json == NULL) return NULL;
        *len = strlen(json);
        /* cJSON allocates with malloc unless hooks say otherwise: copy to be sure. */
        char *copy = strdup(json);
        cJSON_free(json);
        return copy;
    }
    default: text = ""; break;
    }
    n = strlen(text);
    char *copy = strdup(text);
    if (copy) *len = n;
    return copy;
}

/* ------------------------------------------------------------------------ */
/* Shard names                                                              */
/* ------------------------------------------------------------------------ */

/* The shard name read by split/shardname.c, after a final ".zst" (a compressed
 * shard keeps its set's name). */
char *ix_shard_prefix(const char *name, int64_t no, int64_t count) {
    if (no < 0 || count < 1 || no >= count) return NULL;
    return gk_shard_path_prefix(name, (uint64_t)no, (uint64_t)count, NULL);
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                     */
/* ------------------------------------------------------------------------ */

static void row_clear(ix_row *row) {
    free(row->member);
    free(row->error);
    free(row->architecture);
    free(row->name);
    free(row->file_type);
    free(row->quantized_by);
    free(row->source_hint);
    free(row->imatrix_file);
    free(row->imatrix_dataset);
    free(row->base_model);
    free(row->group_key);
    for (size_t i = 0; i < row->n_warnings; i++) free(row->warnings[i]);
    free(row->warnings);
    for (size_t i = 0; i < row->n_kvs; i++) {
        free(row->kvs[i].key);
        free(row->kvs[i].value);
    }
    free(row->kvs);
    for (size_t i = 0; i < row->n_tensor_rows; i++) free(row->tensors[i].name);
    free(row->tensors);
}

void ix_result_free(ix_result *r) {
    if (r == NULL) return;
    for (size_t i = 0; i < r->n_rows; i++) row_clear(&r->rows[i]);
    free(r->rows);
    free(r);
}

/* A malloc'ed copy of string key's value, or NULL when absent or not a string. */
static char *str_key(const gk_model *m, const char *key) {
    gk_str s;
    if (gk_kv_get_str(m, key, &s) != GK_OK) return NULL;
    return strndup(s.ptr, s.len);
}

/* The first present of the string keys, or NULL. */
static char *first_str_key(const gk_model *m, const char *const *keys, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char *s = str_key(m, keys[i]);
        if (s) return s;
    }
    return NULL;
}

static int64_t int_key(const gk_model *m, const char *key) {
    int64_t v;
    return gk_kv_get_int(m, key, &v) == GK_OK ? v : -1;
}

/* A hash of a tensor's name and shape (not its type): equal for the same
 * network stored at any precision. */
static uint64_t tensor_shape_hash(const gk_tensor *t) {
    uint64_t h = gk_fnv1a(GK_FNV1A_BASIS, t->name.ptr, t->name.len);
    h = gk_fnv1a(h, "", 1);
    for (uint32_t d = 0; d < t->n_dims && d < GK_MAX_DIMS; d++) {
        uint8_t le[8];
        gk_store_le64(le, (uint64_t)t->ne[d]);
        h = gk_fnv1a(h, le, 8);
    }
    return h;
}

/* Fills the kv rows of row from m. @return : false when out of memory. */
static bool fill_kvs(ix_row *row, const gk_model *m, const ix_parse_opts *o, size_t *mem) {
    size_t n = gk_kv_count(m);
    row->kvs = calloc(n ? n : 1, sizeof *row->kvs);
    if (row->kvs == NULL) return false;
    for (size_t i = 0; i < n; i++) {
        const gk_kv *kv = gk_kv_at(m, i);
        ix_kv *out = &row->kvs[row->n_kvs++];
        out->key = strndup(kv->key.ptr, kv->key.len);
        out->type = gk_vtype_name(kv->value.type);
        out->value = ix_value_text(&kv->value, o->full_arrays ? 0 : o->array_head, &out->value_len);
        out->offset = kv->file_offset;
        out->array_len = -1;
        if (out->key == NULL || out->value == NULL) return false;
        *mem += out->value_len + kv->key.len + sizeof *out + 16;
        const gk_value *v = &kv->value;
        switch (v->type) {
        case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64:
            if (v->u <= (uint64_t)INT64_MAX) {
                out->num_kind = 1;
                out->num_i = (int64_t)v->u;
            } else {
                out->num_kind = 2;
                out->num_f = (double)v->u;
            }
            break;
        case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64:
            out->num_kind = 1;
            out->num_i = v->i;
            break;
        case GK_V_F32: case GK_V_F64:
            out->num_kind = isfinite(v->f) ? 2 : 0;
            out->num_f = v->f;
            break;
        case GK_V_BOOL:
            out->num_kind = 1;
            out->num_i = v->b;
            break;
        case GK_V_ARR:
            out->array_type = gk_vtype_name(v->arr.elem);
            out->array_len = (int64_t)v->arr.n;
            break;
        default: break;
        }
    }
    return true;
}

/* Fills the tensor rows, parameter count, tensor bytes and shape signature. */
static bool fill_tensors(ix_row *row, const gk_model *m, size_t *mem) {
    size_t n = gk_tensor_count(m);
    row->tensors = calloc(n ? n : 1, sizeof *row->tensors);
    if (row->tensors == NULL) return false;
    uint64_t sig = 0;
    for (size_t i = 0; i < n; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        ix_tensor *out = &row->tensors[row->n_tensor_rows++];
        out->name = strndup(t->name.ptr, t->name.len);
        if (out->name == NULL) return false;
        const gk_type_info *ti = gk_type_get(t->type);
        if (ti) snprintf(out->type, sizeof out->type, "%s", ti->name);
        else snprintf(out->type, sizeof out->type, "%u", t->type);
        out->type_id = t->type;
        out->n_dims = t->n_dims;
        for (int d = 0; d < GK_MAX_DIMS; d++) out->ne[d] = t->ne[d];
        out->n_elements = gk_tensor_elements(t, NULL);
        out->offset = t->offset;
        out->nbytes = t->nbytes;
        out->info_offset = t->file_offset;
        row->n_params += out->n_elements;
        row->tensor_bytes += t->nbytes;
        sig ^= tensor_shape_hash(t);
        *mem += t->name.len + sizeof *out + 16;
    }
    row->shape_sig = (int64_t)sig;
    return true;
}

/* The key that puts shards of one set into one model: "split:" CONTAINER "::"
 * PREFIX "#" COUNT when the name follows the shard naming, else the file itself. */
static char *group_key(const char *path, const char *member, int64_t no, int64_t count) {
    char *key = NULL;
    const char *name = member ? member : path;
    char *prefix = count >= 1 ? ix_shard_prefix(name, no, count) : NULL;
    int rc;
    if (prefix)
        rc = asprintf(&key, "split:%s::%s#%" PRId64, member ? path : "", prefix, count);
    else
        rc = asprintf(&key, "file:%s::%s", path, member ? member : "");
    free(prefix);
    return rc < 0 ? NULL : key;
}

/* Fills the derived columns (architecture, context length, source hints ...). */
static bool fill_derived(ix_row *row, const gk_model *m) {
    static const char *const source_keys[] = {
        "general.source.huggingface.repository", "general.source.repo_url", "general.source.url",
        "general.base_model.0.repo_url", "general.base_model.0.name",
    };
    row->architecture = str_key(m, "general.architecture");
    row->name = str_key(m, "general.name");
    row->quantized_by = str_key(m, "general.quantized_by");
    row->source_hint = first_str_key(m, source_keys, sizeof source_keys / sizeof source_keys[0]);
    row->base_model = str_key(m, "general.base_model.0.name");
    row->imatrix_file = str_key(m, "quantize.imatrix.file");
    row->imatrix_dataset = str_key(m, "quantize.imatrix.dataset");
    row->file_type_id = int_key(m, "general.file_type");
    if (row->file_type_id >= 0 && row->file_type_id <= UINT32_MAX) {
        const char *ft = gk_ftype_name((uint32_t)row->file_type_id);
        if (ft && (row->file_type = strdup(ft)) == NULL) return false;
    }
    row->context_length = -1;
    if (row->architecture) {
        char key[160];
        snprintf(key, sizeof key, "%s.context_length", row->architecture);
        row->context_length = int_key(m, key);
    }
    row->has_chat_template = gk_kv_find(m, "tokenizer.chat_template") >= 0;
    row->split_no = int_key(m, GK_SPLIT_KEY_NO);
    row->split_count = int_key(m, GK_SPLIT_KEY_COUNT);
    if (row->split_count < 1) row->split_no = row->split_count = -1;
    return true;
}

/* index --hash: the tensors' and the model's xxh64 (what `ggufkit hash` prints),
 * and for a big-endian file the tensors' xxh64 as `hash --canonical` prints them.
 * Data that cannot be read makes the row a broken one. @return : false when out of memory. */
static bool fill_hashes(ix_row *row, gk_file *f) {
    gk_hash_opts ho = { GK_OPTS_INIT(gk_hash_opts), .kinds = GK_HASH_BIT(GK_HASH_XXH64) };
    gk_hash_result hr;
    gk_error err;
    gk_status st = gk_hash_file(f, &ho, &hr, &err);
    if (st == GK_E_NOMEM) return false;
    if (st != GK_OK) {
        int rc = err.offset >= 0 ? asprintf(&row->error, "offset %" PRId64 ": tensor data: %s", err.offset, err.message)
                                 : asprintf(&row->error, "tensor data: %s", err.message);
        if (rc < 0) row->error = NULL;
        row->error_code = gk_status_name(st);
        row->error_offset = err.offset;
        return rc >= 0;
    }
    for (size_t i = 0; i < hr.n_tensors && i < row->n_tensor_rows; i++) {
        gk_hash_hex(GK_HASH_XXH64, &hr.tensors[i][GK_HASH_XXH64], row->tensors[i].xxh64);
        memcpy(row->tensors[i].xxh64_canonical, row->tensors[i].xxh64, sizeof row->tensors[i].xxh64);
    }
    gk_hash_hex(GK_HASH_XXH64, &hr.model[GK_HASH_XXH64], row->content_xxh64);
    gk_hash_result_free(&hr);
    if (!gk_model_big_endian(gk_file_model(f))) return true;
    /* A big-endian file: its little-endian form's digests too (a second read),
     * so that same_weights groups it with its little-endian original, as diff
     * and hash --canonical see them. A type that cannot be swapped leaves them
     * unknown (NULL): the file is not broken for that. */
    ho.canonical = true;
    st = gk_hash_file(f, &ho, &hr, &err);
    if (st == GK_E_NOMEM) return false;
    for (size_t i = 0; i < row->n_tensor_rows; i++)
        if (st == GK_OK && i < hr.n_tensors)
            gk_hash_hex(GK_HASH_XXH64, &hr.tensors[i][GK_HASH_XXH64], row->tensors[i].xxh64_canonical);
        else
            row->tensors[i].xxh64_canonical[0] = '\0';
    if (st == GK_OK) gk_hash_result_free(&hr);
    return true;
}

/* Reads one GGUF (path, or "path::member") into a new row of r. */
/* A new empty row of r for path (member NULL for the file itself). @return : NULL when out of memory. */
static ix_row *new_row(ix_result *r, const char *member) {
    if (!GK_GROW(r->rows, r->cap_rows, r->n_rows + 1, 1)) return NULL;
    ix_row *row = &r->rows[r->n_rows++];
    memset(row, 0, sizeof *row);
    row->file_type_id = row->context_length = row->split_no = row->split_count = -1;
    row->error_offset = -1;
    if (member && (row->member = strdup(member)) == NULL) return NULL;
    return row;
}

/* Makes row a broken file's: err's message (with its offset) and status. @return : false when out of memory. */
static bool set_error(ix_row *row, const char *path, const char *member, const gk_error *err) {
    int rc = err->offset >= 0 ? asprintf(&row->error, "offset %" PRId64 ": %s", err->offset, err->message)
                              : asprintf(&row->error, "%s", err->message);
    if (rc < 0) {
        row->error = NULL;
        return false;
    }
    row->error_code = gk_status_name(err->code);
    row->error_offset = err->offset;
    row->group_key = group_key(path, member, -1, -1);
    return row->group_key != NULL;
}

static bool parse_one(ix_result *r, const char *path, const char *member, const ix_parse_opts *o) {
    ix_row *row = new_row(r, member);
    if (row == NULL) return false;

    char *full = NULL;
    if (member && asprintf(&full, "%s::%s", path, member) < 0) return false;
    gk_file *f = NULL;
    gk_error err;
    gk_error_clear(&err);
    r->headers_read++;
    /* Arrays are stored cut to their first elements unless asked whole: a
     * preview then reads them without keeping them. */
    unsigned flags = !o->full_arrays && o->array_head > 0 && o->array_head <= GK_PREVIEW_ELEMS ? GK_OPEN_PREVIEW
                                                                                            : GK_OPEN_DEFAULT;
    gk_status st = gk_open(full ? full : path, flags, &f, &err);
    free(full);
    r->mem_bytes += sizeof *row + 256;
    if (st != GK_OK) return set_error(row, path, member, &err);
    const gk_model *m = gk_file_model(f);
    row->data_size = gk_file_size(f);
    gk_file_facts_of(f, &row->facts);
    bool ok = fill_derived(row, m) && fill_kvs(row, m, o, &r->mem_bytes) &&
              fill_tensors(row, m, &r->mem_bytes);
    size_t nw = gk_file_warning_count(f);
    if (ok && nw > 0) {
        row->warnings = calloc(nw, sizeof *row->warnings);
        ok = row->warnings != NULL;
        for (size_t i = 0; ok && i < nw; i++) {
            const gk_warning *w = gk_file_warning_at(f, i);
            int rc = w->offset >= 0 ? asprintf(&row->warnings[i], "offset %" PRId64 ": %s", w->offset, w->message)
                                    : asprintf(&row->warnings[i], "%s", w->message);
            ok = rc >= 0;
            if (ok) row->n_warnings++;
        }
    }
    if (ok && o->hash) ok = fill_hashes(row, f);
    if (ok) ok = (row->group_key = group_key(path, member, row->split_no, row->split_count)) != NULL;
    gk_close(f);
    return ok;
}

/* Member names collected from gk_archive_list. */
typedef struct member_list {
    char **names;
    size_t n, cap;
    bool nomem;
} member_list;

static bool collect_member(void *ctx, const char *member, uint64_t size) {
    (void)size;
    member_list *l = ctx;
    if (!GK_GROW(l->names, l->cap, l->n + 1, 8)) {
        l->nomem = true;
        return false;
    }
    if ((l->names[l->n] = strdup(member)) == NULL) {
        l->nomem = true;
        return false;
    }
    l->n++;
    return true;
}

/* The first four bytes of the file, or fewer (0 when it cannot be read). */
/* Indexes every GGUF member of the archive at path into r. An archive that
 * cannot be listed to its end (cut short, damaged, not readable at all) is
 * broken, whatever it still shows: it gets a row of its own (member NULL) with
 * the error, as a cut GGUF or .gguf.zst does, beside the rows of the members
 * found before the damage. @return : false when out of memory. */
static bool parse_archive(ix_result *r, const char *path, const ix_parse_opts *o) {
    member_list l = { 0 };
    gk_error err;
    gk_error_clear(&err);
    gk_status listed = gk_archive_list(path, collect_member, &l, &err);
    r->headers_read++;
    bool ok = !l.nomem;
    if (ok && listed != GK_OK && listed != GK_E_UNSUPPORTED) {
        ix_row *row = new_row(r, NULL);
        ok = row != NULL && set_error(row, path, NULL, &err);
    }
    for (size_t i = 0; ok && i < l.n; i++) ok = parse_one(r, path, l.names[i], o);
    for (size_t i = 0; i < l.n; i++) free(l.names[i]);
    free(l.names);
    if (ok && r->n_rows == 0) r->not_gguf = true;
    return ok;
}

/* A .gguf.zst: its header, as any GGUF's; but a compressed file cut short is
 * broken whatever its first frames hold (its frames are walked, nothing is
 * decompressed: the index never reads tensor data). @return : false when out of memory. */
static bool parse_zstd(ix_result *r, const char *path, const ix_parse_opts *o) {
    gk_error err;
    if (gk_source_zstd_check_frames(path, &err) == GK_OK || err.code == GK_E_IO) return parse_one(r, path, NULL, o);
    r->headers_read++;
    ix_row *row = new_row(r, NULL);
    return row != NULL && set_error(row, path, NULL, &err);
}

/* A name that says archive (a tar, compressed or not, a zip, a 7z). */
static bool named_archive(const char *path) {
    static const char *const suffixes[] = { ".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.zst", ".tar.bz2", ".zip", ".7z" };
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (gk_has_suffix(path, suffixes[i])) return true;
    return false;
}

ix_result *ix_parse_path(const char *path, const ix_parse_opts *o) {
    ix_result *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    if (gk_http_is_url(path)) {   /* a remote GGUF or .gguf.zst: gk_open reads either */
        if (!parse_one(r, path, NULL, o)) {
            ix_result_free(r);
            return NULL;
        }
        return r;
    }
    gk_source_magic magic;
    gk_source_kind kind = gk_source_sniff_magic(path, &magic);
    bool named_gguf = gk_has_suffix(path, ".gguf") || gk_has_suffix(path, ".gguf.zst");
    bool ok = true;
    if (magic == GK_MAGIC_GGUF) {
        ok = parse_one(r, path, NULL, o);
    } else if (magic == GK_MAGIC_ZSTD) {
        /* a zstd stream of a GGUF file, or of an archive (.tar.zst) */
        if (kind == GK_SOURCE_ARCHIVE) ok = parse_archive(r, path, o);
        else ok = parse_zstd(r, path, o);
        if (ok && r->not_gguf && named_gguf) {
            r->not_gguf = false;
            ok = parse_zstd(r, path, o);
        }
    } else if (kind == GK_SOURCE_ARCHIVE) {
        ok = parse_archive(r, path, o);
    } else if (named_gguf) {
        ok = parse_one(r, path, NULL, o);   /* broken: the reader says why */
    } else if (named_archive(path)) {
        ok = parse_archive(r, path, o);     /* broken too (cut inside its first header) */
    } else {
        r->not_gguf = true;
    }
    if (!ok) {
        ix_result_free(r);
        return NULL;
    }
    return r;
}
