/*
 * diff_json.c - the JSON report of `ggufkit diff --json` (schema: docs/diff.md):
 * exact numbers (64-bit integers verbatim, doubles as the shortest text that
 * reads back, non-finite ones as null), metadata values whole for scalars and
 * short arrays.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "json.h"
#include "diff_report.h"

/* A finite double exactly, else null (JSON has no infinities). */
static cJSON *json_double(double d) {
    if (!isfinite(d)) return cJSON_CreateNull();
    return gk_json_double(d);
}

static cJSON *json_value(const gk_value *v);

static cJSON *json_element(gk_vtype elem, const void *data, uint64_t i) {
    char buf[24];
    switch (elem) {
    case GK_V_U8: return gk_json_u64(((const uint8_t *)data)[i]);
    case GK_V_U16: return gk_json_u64(((const uint16_t *)data)[i]);
    case GK_V_U32: return gk_json_u64(((const uint32_t *)data)[i]);
    case GK_V_U64: return gk_json_u64(((const uint64_t *)data)[i]);
    case GK_V_I8: snprintf(buf, sizeof buf, "%d", ((const int8_t *)data)[i]); break;
    case GK_V_I16: snprintf(buf, sizeof buf, "%d", ((const int16_t *)data)[i]); break;
    case GK_V_I32: snprintf(buf, sizeof buf, "%" PRId32, ((const int32_t *)data)[i]); break;
    case GK_V_I64: snprintf(buf, sizeof buf, "%" PRId64, ((const int64_t *)data)[i]); break;
    case GK_V_F32: return json_double(((const float *)data)[i]);
    case GK_V_F64: return json_double(((const double *)data)[i]);
    case GK_V_BOOL: return cJSON_CreateBool(((const uint8_t *)data)[i] != 0);
    case GK_V_STR: return cmd_json_string(((const gk_str *)data)[i].ptr, ((const gk_str *)data)[i].len);
    case GK_V_ARR: return json_value(&((const gk_value *)data)[i]);
    default: return cJSON_CreateNull();
    }
    return cJSON_CreateRaw(buf);
}

/* A scalar as a JSON value; an array whole when short, else null. */
static cJSON *json_value(const gk_value *v) {
    switch (v->type) {
    case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64: return gk_json_u64(v->u);
    case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64: return gk_json_i64(v->i);
    case GK_V_F32: case GK_V_F64: return json_double(v->f);
    case GK_V_BOOL: return cJSON_CreateBool(v->b);
    case GK_V_STR: return cmd_json_string(v->s.ptr, v->s.len);
    case GK_V_ARR: {
        if (v->arr.n > DIFF_SHORT_ARRAY) return cJSON_CreateNull();
        cJSON *list = cJSON_CreateArray();
        for (uint64_t i = 0; list && i < v->arr.n; i++) cJSON_AddItemToArray(list, json_element(v->arr.elem, v->arr.data, i));
        return list;
    }
    default: return cJSON_CreateNull();
    }
}

/* Adds "type_SIDE", "value_SIDE" and, for arrays, "length_SIDE". */
static void json_side(cJSON *o, const char *side, const gk_value *v) {
    char key[32], label[64];
    gk_value_type_label(v, GK_LABEL_NAME, label, sizeof label);
    snprintf(key, sizeof key, "type_%s", side);
    cJSON_AddStringToObject(o, key, label);
    snprintf(key, sizeof key, "value_%s", side);
    cJSON_AddItemToObject(o, key, json_value(v));
    if (v->type == GK_V_ARR) {
        snprintf(key, sizeof key, "length_%s", side);
        cJSON_AddItemToObject(o, key, gk_json_u64(v->arr.n));
    }
}

static cJSON *json_metadata(const gk_diff_result *r) {
    cJSON *o = cJSON_CreateObject();
    cJSON *lists[3] = { cJSON_AddArrayToObject(o, "added"), cJSON_AddArrayToObject(o, "removed"),
                        cJSON_AddArrayToObject(o, "changed") };
    for (size_t i = 0; i < r->n_meta; i++) {
        const gk_meta_change *c = &r->meta[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "key", cmd_json_string(c->key, strlen(c->key)));
        if (c->ref) json_side(e, "ref", c->ref);
        if (c->other) json_side(e, "other", c->other);
        if (c->kind == GK_META_CHANGED && c->ref->type == GK_V_ARR && c->other->type == GK_V_ARR &&
            c->ref->arr.elem == c->other->arr.elem) {
            uint64_t k = c->first_diff;
            cJSON_AddItemToObject(e, "first_diff_index", gk_json_u64(k));
            if (k < c->ref->arr.n && k < c->other->arr.n) {
                cJSON_AddItemToObject(e, "at_first_diff_ref", json_element(c->ref->arr.elem, c->ref->arr.data, k));
                cJSON_AddItemToObject(e, "at_first_diff_other",
                                      json_element(c->other->arr.elem, c->other->arr.data, k));
            }
        }
        cJSON_AddItemToArray(lists[c->kind], e);
    }
    return o;
}

static cJSON *json_shape(const gk_tensor *t) {
    cJSON *list = cJSON_CreateArray();
    for (uint32_t d = 0; list && t && d < t->n_dims; d++) cJSON_AddItemToArray(list, gk_json_u64(t->ne[d]));
    return t ? list : (cJSON_Delete(list), cJSON_CreateNull());
}

static cJSON *json_type(const gk_tensor *t) {
    char buf[24];
    return t ? cJSON_CreateString(cmd_tensor_type_name(t->type, buf, sizeof buf)) : cJSON_CreateNull();
}

static cJSON *json_tensor(const gk_tensor_diff *d) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "name", cmd_json_string(d->name, strlen(d->name)));
    cJSON_AddStringToObject(o, "status", diff_kind_id(d->kind));
    cJSON_AddItemToObject(o, "type_ref", json_type(d->ref));
    cJSON_AddItemToObject(o, "type_other", json_type(d->other));
    cJSON_AddItemToObject(o, "shape_ref", json_shape(d->ref));
    cJSON_AddItemToObject(o, "shape_other", json_shape(d->other));
    bool num = diff_has_numbers(d), deq = num && d->kind != GK_TDIFF_IDENTICAL;
    cJSON_AddItemToObject(o, "n_elements", num ? gk_json_u64(d->n) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "rmse", num ? json_double(d->rmse) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "max_abs_err", num ? json_double(d->max_abs_err) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "rel_rmse", num ? json_double(d->rel_rmse) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "cosine", num ? json_double(d->cosine) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "ref_rms", deq ? json_double(d->ref_rms) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "n_diff", num ? gk_json_u64(d->n_diff) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "n_nonfinite_ref", deq ? gk_json_u64(d->n_nonfinite_ref) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "n_nonfinite_other", deq ? gk_json_u64(d->n_nonfinite_other) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "n_nonfinite_diff", num ? gk_json_u64(d->n_nonfinite_diff) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "first_diff_row",
                          num && d->first_diff_row >= 0 ? gk_json_u64((uint64_t)d->first_diff_row) : cJSON_CreateNull());
    return o;
}

static cJSON *json_input(const char *path, const gk_diff_input *in) {
    const gk_model *m = gk_diff_input_model(in);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "path", cmd_json_string(path, strlen(path)));
    cJSON_AddItemToObject(o, "size", gk_json_u64(gk_diff_input_size(in)));
    cJSON_AddItemToObject(o, "shards", gk_json_u64(gk_diff_input_shards(in)));
    cJSON_AddItemToObject(o, "version", gk_json_u64(gk_model_version(m)));
    cJSON_AddStringToObject(o, "byte_order", gk_model_big_endian(m) ? "big" : "little");
    cJSON_AddItemToObject(o, "alignment", gk_json_u64(gk_model_alignment(m)));
    cJSON_AddItemToObject(o, "n_tensors", gk_json_u64(gk_tensor_count(m)));
    cJSON_AddItemToObject(o, "tensor_bytes", gk_json_u64(diff_tensor_bytes(m)));
    cJSON_AddItemToObject(o, "bits_per_weight", json_double(diff_bits_per_weight(in)));
    return o;
}

static cJSON *json_layout(const gk_diff_layout *l) {
    cJSON *list = cJSON_CreateArray();
    const char *orders[2] = { "little", "big" };
    if (l->version[0] != l->version[1]) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "field", "version");
        cJSON_AddItemToObject(e, "ref", gk_json_u64(l->version[0]));
        cJSON_AddItemToObject(e, "other", gk_json_u64(l->version[1]));
        cJSON_AddItemToArray(list, e);
    }
    if (l->big_endian[0] != l->big_endian[1]) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "field", "byte_order");
        cJSON_AddStringToObject(e, "ref", orders[l->big_endian[0]]);
        cJSON_AddStringToObject(e, "other", orders[l->big_endian[1]]);
        cJSON_AddItemToArray(list, e);
    }
    if (l->alignment[0] != l->alignment[1]) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "field", "alignment");
        cJSON_AddItemToObject(e, "ref", gk_json_u64(l->alignment[0]));
        cJSON_AddItemToObject(e, "other", gk_json_u64(l->alignment[1]));
        cJSON_AddItemToArray(list, e);
    }
    return list;
}

static cJSON *json_file(const char *path, const gk_diff_input *in, const gk_diff_result *r) {
    cJSON *o = json_input(path, in);
    cJSON_AddStringToObject(o, "verdict", diff_verdict_id(r->verdict));
    cJSON_AddItemToObject(o, "layout", json_layout(&r->layout));
    cJSON_AddItemToObject(o, "metadata", json_metadata(r));
    cJSON *list = cJSON_AddArrayToObject(o, "tensors");
    for (size_t i = 0; i < r->n_tensors; i++) cJSON_AddItemToArray(list, json_tensor(&r->tensors[i]));
    cJSON *sum = cJSON_AddObjectToObject(o, "summary");
    size_t counts[6] = { 0 };
    for (size_t i = 0; i < r->n_tensors; i++) counts[r->tensors[i].kind]++;
    for (int k = 0; k < 6; k++) cJSON_AddItemToObject(sum, diff_kind_id((gk_tensor_diff_kind)k), gk_json_u64(counts[k]));
    cJSON_AddItemToObject(sum, "elements_compared", gk_json_u64(r->n_compared_elems));
    cJSON_AddItemToObject(sum, "rel_rmse_weighted", json_double(r->rel_rmse_weighted));
    cJSON_AddItemToObject(sum, "n_nonfinite_diff", gk_json_u64(r->n_nonfinite_diff));
    return o;
}

bool diff_print_json(FILE *out, const char *const *paths, size_t n_paths, gk_diff_input **in,
                     const gk_diff_result *res, const diff_rank *rank) {
    size_t n = n_paths - 1;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "reference", json_input(paths[0], in[0]));
    cJSON *files = cJSON_AddArrayToObject(root, "files");
    for (size_t k = 0; k < n; k++) cJSON_AddItemToArray(files, json_file(paths[k + 1], in[k + 1], &res[k]));
    /* The first (in the usual case, the only) OTHER file's findings at the top too. */
    cJSON *first = cJSON_GetArrayItem(files, 0);
    cJSON_AddItemToObject(root, "metadata", cJSON_Duplicate(cJSON_GetObjectItem(first, "metadata"), true));
    cJSON_AddItemToObject(root, "tensors", cJSON_Duplicate(cJSON_GetObjectItem(first, "tensors"), true));
    cJSON *list = cJSON_AddArrayToObject(root, "ranking");
    for (size_t i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToObject(e, "rank", gk_json_u64(i + 1));
        cJSON_AddItemToObject(e, "path", cmd_json_string(paths[rank[i].k + 1], strlen(paths[rank[i].k + 1])));
        cJSON_AddItemToObject(e, "size", gk_json_u64(rank[i].size));
        cJSON_AddItemToObject(e, "rel_rmse_weighted", json_double(rank[i].rel));
        cJSON_AddItemToObject(e, "n_nonfinite_diff", gk_json_u64(rank[i].nonfinite));
        cJSON_AddStringToObject(e, "verdict", diff_verdict_id(res[rank[i].k].verdict));
        cJSON_AddItemToArray(list, e);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (text == NULL) return false;
    fputs(text, out);
    fputc('\n', out);
    free(text);
    return true;
}
