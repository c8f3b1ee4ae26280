/*
 * patch.c - JSON patch documents for metadata edits.
 *
 * Two shapes are read:
 *   {"set": {KEY: VALUE | {"type": T, "value": V}}, "delete": [PATTERN...],
 *    "rename": {OLD: NEW}}                       (sections in document order)
 *   `ggufkit dump --json` output, or its "metadata" object: every
 *    KEY: {"type": "UINT32", "value": V, "array_types": [...], ...} is a set.
 * In both, the dump's pseudo keys GGUF.version, GGUF.tensor_count and
 * GGUF.kv_count are skipped, and so is a pair without "value" (an array dumped
 * without --json-array: it stays as it is).
 */
#include <stdio.h>
#include <string.h>

#include "edit/edit_internal.h"

static bool is_pseudo_key(const char *key) {
    return strcmp(key, "GGUF.version") == 0 || strcmp(key, "GGUF.tensor_count") == 0 ||
           strcmp(key, "GGUF.kv_count") == 0;
}

/* The type of a descriptor {"type": T, "array_types": [...]} as a chain. */
static gk_status descriptor_type(const cJSON *desc, const char *key, type_spec *ts, gk_error *err) {
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(desc, "type");
    ts->kind = TS_NONE;
    if (type == NULL) return GK_OK;
    if (!cJSON_IsString(type) || !edit_type_parse(type->valuestring, ts))
        return gk_error_set(err, GK_E_ARG, -1, "%s: unknown \"type\"", key);
    const cJSON *arr_types = cJSON_GetObjectItemCaseSensitive(desc, "array_types");
    if (arr_types == NULL) return GK_OK;
    if (!cJSON_IsArray(arr_types) || ts->kind != TS_CHAIN || ts->depth != 1 || ts->chain[0] != GK_V_ARR)
        return gk_error_set(err, GK_E_ARG, -1, "%s: \"array_types\" goes with type ARRAY", key);
    const cJSON *t;
    cJSON_ArrayForEach(t, arr_types) {
        type_spec one;
        if (!cJSON_IsString(t) || !edit_type_parse(t->valuestring, &one) || one.kind != TS_CHAIN ||
            ts->depth + one.depth > TYPE_CHAIN_MAX)
            return gk_error_set(err, GK_E_ARG, -1, "%s: bad \"array_types\"", key);
        for (int i = 0; i < one.depth; i++) ts->chain[ts->depth++] = one.chain[i];
        if (one.chain[0] != GK_V_ARR) break;
    }
    return GK_OK;
}

/* One member of a set map (or of a dump's metadata object). */
static gk_status add_set_member(gk_edit *e, const json_doc *doc, const cJSON *member, bool dump_shape,
                                gk_error *err) {
    const char *key = member->string;
    if (is_pseudo_key(key)) return GK_OK;
    type_spec ts = { .kind = TS_NONE };
    const cJSON *value = member;
    if (dump_shape && !(cJSON_IsObject(member) && cJSON_GetObjectItemCaseSensitive(member, "type")))
        return gk_error_set(err, GK_E_ARG, -1, "%s: a dump entry {\"type\": ..., \"value\": ...} expected "
                            "(or a patch with \"set\", \"delete\", \"rename\")", key);
    if (cJSON_IsObject(member)) {
        gk_status st = descriptor_type(member, key, &ts, err);
        if (st != GK_OK) return st;
        value = cJSON_GetObjectItemCaseSensitive(member, "value");
        if (value == NULL) {
            if (dump_shape || cJSON_GetObjectItemCaseSensitive(member, "array_types")) return GK_OK;
            return gk_error_set(err, GK_E_ARG, -1, "%s: {\"type\", \"value\"} expected", key);
        }
    }
    return edit_add_set_json(e, key, doc, value, &ts, err);
}

static gk_status add_set_map(gk_edit *e, const json_doc *doc, const cJSON *map, bool dump_shape, gk_error *err) {
    if (!cJSON_IsObject(map)) return gk_error_set(err, GK_E_ARG, -1, "patch: \"set\" must be an object");
    const cJSON *member;
    cJSON_ArrayForEach(member, map) {
        gk_status st = add_set_member(e, doc, member, dump_shape, err);
        if (st != GK_OK) return st;
    }
    return GK_OK;
}

static gk_status add_deletes(gk_edit *e, const cJSON *list, gk_error *err) {
    if (cJSON_IsString(list)) return gk_edit_add_delete(e, list->valuestring, err);
    if (!cJSON_IsArray(list)) return gk_error_set(err, GK_E_ARG, -1, "patch: \"delete\" must be a list of keys");
    const cJSON *k;
    cJSON_ArrayForEach(k, list) {
        if (!cJSON_IsString(k)) return gk_error_set(err, GK_E_ARG, -1, "patch: \"delete\" must be a list of keys");
        gk_status st = gk_edit_add_delete(e, k->valuestring, err);
        if (st != GK_OK) return st;
    }
    return GK_OK;
}

static gk_status add_renames(gk_edit *e, const cJSON *map, gk_error *err) {
    if (!cJSON_IsObject(map)) return gk_error_set(err, GK_E_ARG, -1, "patch: \"rename\" must be an object {OLD: NEW}");
    const cJSON *m;
    cJSON_ArrayForEach(m, map) {
        if (!cJSON_IsString(m)) return gk_error_set(err, GK_E_ARG, -1, "patch: rename %s: the new name must be a string", m->string);
        gk_status st = gk_edit_add_rename(e, m->string, m->valuestring, err);
        if (st != GK_OK) return st;
    }
    return GK_OK;
}

/* A patch object: set / delete / rename sections in document order. */
static gk_status add_sections(gk_edit *e, const json_doc *doc, const cJSON *root, gk_error *err) {
    const cJSON *section;
    cJSON_ArrayForEach(section, root) {
        gk_status st;
        if (strcmp(section->string, "set") == 0) st = add_set_map(e, doc, section, false, err);
        else if (strcmp(section->string, "delete") == 0) st = add_deletes(e, section, err);
        else if (strcmp(section->string, "rename") == 0) st = add_renames(e, section, err);
        else st = gk_error_set(err, GK_E_ARG, -1, "patch: unknown section \"%s\" (set, delete, rename)", section->string);
        if (st != GK_OK) return st;
    }
    return GK_OK;
}

gk_status gk_edit_add_patch(gk_edit *e, const char *json, size_t len, gk_error *err) {
    json_doc parsed;
    gk_status st = edit_json_parse(json, len, &parsed, err);
    if (st != GK_OK) return st;
    if (!cJSON_IsObject(parsed.root)) {
        edit_json_free(&parsed);
        return gk_error_set(err, GK_E_ARG, -1, "patch: a JSON object expected");
    }
    const json_doc *doc = edit_adopt_doc(e, &parsed);
    if (doc == NULL) {
        edit_json_free(&parsed);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    const cJSON *root = doc->root;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
    if (cJSON_IsObject(meta)) return add_set_map(e, doc, meta, true, err);
    if (cJSON_GetObjectItemCaseSensitive(root, "set") || cJSON_GetObjectItemCaseSensitive(root, "delete") ||
        cJSON_GetObjectItemCaseSensitive(root, "rename") || root->child == NULL)
        return add_sections(e, doc, root, err);
    return add_set_map(e, doc, root, true, err);
}
