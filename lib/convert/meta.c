/*
 * meta.c - general.* keys from the model card, config.json and the folder's
 * name, in set_gguf_meta_model's order (meta.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/meta.h"
#include "convert/naming.h"

/* Metadata's string fields, in set_gguf_meta_model's order of writing. */
enum {
    F_NAME, F_AUTHOR, F_VERSION, F_ORGANIZATION, F_FINETUNE, F_BASENAME, F_DESCRIPTION, F_SIZE_LABEL,
    F_LICENSE_NAME, F_LICENSE_LINK, F_SOURCE_URL, F_SOURCE_DOI, F_SOURCE_UUID, F_SOURCE_REPO_URL, N_FIELDS
};
static const char *const field_keys[N_FIELDS] = {
    "general.name", "general.author", "general.version", "general.organization", "general.finetune",
    "general.basename", "general.description", "general.size_label", "general.license.name",
    "general.license.link", "general.source.url", "general.source.doi", "general.source.uuid",
    "general.source.repo_url",
};
/* The model card's own name of each field (the first the reader takes). */
static const char *const card_keys[N_FIELDS] = {
    "name", "author", "version", "organization", "finetune", "basename", "description", "size_label",
    "license_name", "license_link", "url", "doi", "uuid", "repo_url",
};
/* The fields of a base_model or dataset entry (general.KIND.N.FIELD). */
static const char *const entry_fields[] = { "name", "author", "version", "organization", "description",
                                            "url", "doi", "uuid", "repo_url" };

const char *gk_conv_card_field(size_t i, const char **gguf) {
    if (i >= N_FIELDS) return NULL;
    *gguf = field_keys[i];
    return card_keys[i];
}

const char *gk_conv_entry_field(size_t i) {
    return i < sizeof entry_fields / sizeof entry_fields[0] ? entry_fields[i] : NULL;
}

typedef struct meta {
    const cJSON *f[N_FIELDS];     /* the value the field holds (any JSON: checked when written) */
    char *own[N_FIELDS];          /* strings made here */
    const cJSON *license;
    cJSON *base_models, *datasets;   /* arrays of objects, or NULL */
    cJSON *tags, *languages;         /* arrays, or NULL */
    const char *card_path;
} meta;

static bool unset(const meta *m, int f) { return (m->f[f] == NULL || cJSON_IsNull(m->f[f])) && m->own[f] == NULL; }

/* use_model_card_metadata */
static void from_card(meta *m, const cJSON *card, int f, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(card, key);
    if (v && unset(m, f)) m->f[f] = v;
}

/* use_array_model_card_metadata: a string is appended, a list's items too. */
static gk_status card_array(cJSON **arr, const cJSON *card, const char *key, gk_error *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(card, key);
    if (v == NULL || cJSON_IsNull(v)) return GK_OK;
    if (*arr == NULL && (*arr = cJSON_CreateArray()) == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (cJSON_IsString(v)) {
        cJSON_AddItemToArray(*arr, cJSON_Duplicate(v, true));
    } else if (cJSON_IsArray(v)) {
        for (const cJSON *e = v->child; e; e = e->next) cJSON_AddItemToArray(*arr, cJSON_Duplicate(e, true));
    }
    return GK_OK;
}

/* "https?://huggingface.co/ORG/NAME" (the dot matches any character, as in
 * the reference's pattern): the ORG/NAME part, or NULL. */
static const char *hf_url_id(const char *url) {
    const char *p = strncmp(url, "https://", 8) == 0 ? url + 8 : strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;
    if (p == NULL || strncmp(p, "huggingface", 11) != 0 || p[11] == '\0' || strncmp(p + 12, "co/", 3) != 0) return NULL;
    p += 15;
    const char *slash = strchr(p, '/');
    if (slash == NULL || slash == p || slash[1] == '\0' || strchr(slash + 1, '/')) return NULL;
    return p;
}

static void add_str(cJSON *o, const char *key, const char *v) { cJSON_AddItemToObject(o, key, cJSON_CreateString(v)); }

/* The base_model / datasets entries: an id or URL becomes name, organization,
 * version and repo_url; an object is taken as it is; anything else an empty
 * entry. */
static gk_status card_entries(cJSON **out, const cJSON *card, const char *const keys[3], int64_t total,
                              gk_error *err) {
    const cJSON *v = NULL;
    bool present = false;
    for (int i = 0; i < 3; i++) present |= cJSON_GetObjectItemCaseSensitive(card, keys[i]) != NULL;
    if (!present) return GK_OK;
    for (int i = 0; i < 3 && v == NULL; i++) v = cJSON_GetObjectItemCaseSensitive(card, keys[i]);
    if ((*out = cJSON_CreateArray()) == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    cJSON *one = NULL;
    const cJSON *list = NULL;
    if (cJSON_IsString(v)) {
        one = cJSON_CreateArray();
        cJSON_AddItemToArray(one, cJSON_CreateString(v->valuestring));
        list = one;
    } else if (cJSON_IsArray(v)) {
        list = v;
    }
    for (const cJSON *e = list ? list->child : NULL; e; e = e->next) {
        cJSON *entry = cJSON_IsObject(e) ? cJSON_Duplicate(e, true) : cJSON_CreateObject();
        if (cJSON_IsString(e)) {
            const char *id = e->valuestring;
            bool url = strncmp(id, "http://", 7) == 0 || strncmp(id, "https://", 8) == 0 || strncmp(id, "ssh://", 6) == 0;
            if (url) {
                add_str(entry, "repo_url", id);
                id = strstr(id, "huggingface.co") ? hf_url_id(id) : NULL;
            }
            gk_conv_id c;
            if (id && gk_conv_parse_id(id, total, &c) == 0) {
                if (c.name) add_str(entry, "name", c.name);
                if (c.organization) add_str(entry, "organization", c.organization);
                if (c.version) add_str(entry, "version", c.version);
                if (!url && c.organization) {
                    /* the parts as given, not title-cased */
                    const char *slash = strchr(id, '/');
                    char repo[1024];
                    snprintf(repo, sizeof repo, "https://huggingface.co/%.*s/%s", (int)(slash - id), id, slash + 1);
                    add_str(entry, "repo_url", repo);
                }
                gk_conv_id_free(&c);
            }
        }
        cJSON_AddItemToArray(*out, entry);
    }
    cJSON_Delete(one);
    return GK_OK;
}

static gk_status not_a_string(const meta *m, const char *what, gk_error *err) {
    gk_error_set(err, GK_E_UNSUPPORTED, -1,
                 "model card: '%s' is not a string (the reference converter fails on it); --ignore-model-card "
                 "converts without the card",
                 what);
    if (m->card_path) gk_error_about(err, m->card_path);
    return GK_E_UNSUPPORTED;
}

static gk_status put_field(gk_model *out, const meta *m, int f, gk_error *err) {
    if (m->own[f]) return gk_kv_set_str(out, field_keys[f], m->own[f], err);
    if (unset(m, f)) return GK_OK;
    if (!cJSON_IsString(m->f[f])) return not_a_string(m, field_keys[f], err);
    return gk_kv_set_str(out, field_keys[f], m->f[f]->valuestring, err);
}

/* general.base_model.N.* or general.dataset.N.* */
static gk_status put_entries(gk_model *out, const meta *m, const cJSON *arr, const char *kind, gk_error *err) {
    char key[160];
    snprintf(key, sizeof key, "general.%s.count", kind);
    gk_status s = gk_kv_set_u32(out, key, (uint32_t)cJSON_GetArraySize(arr), err);
    int i = 0;
    for (const cJSON *e = arr->child; e && s == GK_OK; e = e->next, i++)
        for (size_t k = 0; k < sizeof entry_fields / sizeof entry_fields[0] && s == GK_OK; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, entry_fields[k]);
            if (v == NULL) continue;
            snprintf(key, sizeof key, "general.%s.%d.%s", kind, i, entry_fields[k]);
            s = cJSON_IsString(v) ? gk_kv_set_str(out, key, v->valuestring, err) : not_a_string(m, key, err);
        }
    return s;
}

static gk_status put_str_array(gk_model *out, const meta *m, const cJSON *arr, const char *key, gk_error *err) {
    size_t n = (size_t)cJSON_GetArraySize(arr);
    if (n == 0) return GK_OK;   /* GGUFWriter.add_array writes no empty array */
    gk_str *v = malloc(n * sizeof *v);
    if (v == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    size_t i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e)) {
            free(v);
            return not_a_string(m, key, err);
        }
        v[i] = (gk_str){ e->valuestring, strlen(e->valuestring) };
    }
    gk_value val = { .type = GK_V_ARR, .arr = { .elem = GK_V_STR, .n = n, .data = v } };
    gk_status s = gk_kv_set(out, key, &val, err);
    free(v);
    return s;
}

/* Fills the unset name fields from a model id. */
static gk_status from_id(meta *m, const char *model_id, int64_t total, gk_error *err) {
    gk_conv_id id;
    if (gk_conv_parse_id(model_id, total, &id) != 0) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    char **src[] = { &id.name, &id.organization, &id.basename, &id.finetune, &id.version, &id.size_label };
    const int dst[] = { F_NAME, F_ORGANIZATION, F_BASENAME, F_FINETUNE, F_VERSION, F_SIZE_LABEL };
    for (int i = 0; i < 6; i++)
        if (*src[i] && unset(m, dst[i])) {
            m->own[dst[i]] = *src[i];
            *src[i] = NULL;
        }
    gk_conv_id_free(&id);
    return GK_OK;
}

/* The folder's name as pathlib gives it ("a/b/" -> "b", "." -> ""). */
static char *dir_name(const char *dir) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/') b--;
    char *s = malloc(n - b + 1);
    if (s == NULL) return NULL;
    memcpy(s, dir + b, n - b);
    s[n - b] = '\0';
    if (strcmp(s, ".") == 0) s[0] = '\0';
    return s;
}

gk_status gk_conv_general(gk_model *out, const char *dir, const cJSON *config, const cJSON *card,
                          const gk_conv_counts *counts, gk_error *err) {
    meta m = { 0 };
    char card_path[4096];
    snprintf(card_path, sizeof card_path, "%s/README.md", dir);
    m.card_path = card_path;
    const int64_t total = (int64_t)counts->total;
    gk_status s = GK_OK;
    if (card) {
        /* each field's own name first (the reader keeps the first it finds;
         * license_name and license_link have no other name), then the aliases */
        for (int f = 0; f < N_FIELDS; f++) from_card(&m, card, f, card_keys[f]);
        static const struct { int f; const char *key; } direct[] = {
            { F_NAME, "model_name" }, { F_AUTHOR, "model_author" }, { F_VERSION, "model_version" },
            { F_ORGANIZATION, "model_organization" }, { F_DESCRIPTION, "model_description" },
            { F_FINETUNE, "model_finetune" }, { F_BASENAME, "model_basename" }, { F_SIZE_LABEL, "model_size_label" },
            { F_SOURCE_URL, "model_url" }, { F_SOURCE_DOI, "model_doi" }, { F_SOURCE_UUID, "model_uuid" },
            { F_SOURCE_REPO_URL, "model_repo_url" },
            { F_NAME, "model_name" }, { F_AUTHOR, "model_creator" }, { F_BASENAME, "model_type" },
        };
        for (size_t i = 0; i < sizeof direct / sizeof direct[0]; i++) from_card(&m, card, direct[i].f, direct[i].key);
        static const char *const base_keys[3] = { "base_model", "base_models", "base_model_sources" };
        static const char *const data_keys[3] = { "datasets", "dataset", "dataset_sources" };
        s = card_entries(&m.base_models, card, base_keys, total, err);
        if (s == GK_OK) s = card_entries(&m.datasets, card, data_keys, total, err);
        m.license = cJSON_GetObjectItemCaseSensitive(card, "license");
        if (s == GK_OK) s = card_array(&m.tags, card, "tags", err);
        if (s == GK_OK) s = card_array(&m.tags, card, "pipeline_tag", err);
        if (s == GK_OK) s = card_array(&m.languages, card, "languages", err);
        if (s == GK_OK) s = card_array(&m.languages, card, "language", err);
    }
    /* config.json's _name_or_path, when it is a model id and not a path */
    const cJSON *nop = cJSON_GetObjectItemCaseSensitive(config, "_name_or_path");
    if (s == GK_OK && cJSON_IsString(nop)) {
        int slashes = 0;
        for (const char *c = nop->valuestring; *c; c++) slashes += *c == '/';
        if (slashes <= 1) s = from_id(&m, nop->valuestring, total, err);
    }
    char *folder = s == GK_OK ? dir_name(dir) : NULL;
    if (s == GK_OK && folder == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s == GK_OK) s = from_id(&m, folder, total, err);
    if (s == GK_OK && unset(&m, F_NAME)) {
        m.own[F_NAME] = folder;
        folder = NULL;
    }
    free(folder);
    if (s == GK_OK && unset(&m, F_SIZE_LABEL) && counts->total > 0) {
        char label[64];
        gk_conv_size_label(counts->total, counts->shared, counts->expert_params, counts->expert_count, label,
                           sizeof label);
        if ((m.own[F_SIZE_LABEL] = strdup(label)) == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    /* set_gguf_meta_model's order */
    for (int f = F_NAME; f <= F_SIZE_LABEL && s == GK_OK; f++) s = put_field(out, &m, f, err);
    if (s == GK_OK && m.license && !cJSON_IsNull(m.license)) {
        if (cJSON_IsString(m.license)) {
            s = gk_kv_set_str(out, "general.license", m.license->valuestring, err);
        } else if (cJSON_IsArray(m.license)) {   /* ",".join(list) */
            size_t len = 1;
            for (const cJSON *e = m.license->child; e && s == GK_OK; e = e->next) {
                if (!cJSON_IsString(e)) s = not_a_string(&m, "general.license", err);
                else len += strlen(e->valuestring) + 1;
            }
            char *joined = s == GK_OK ? calloc(1, len) : NULL;
            if (s == GK_OK && joined == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            for (const cJSON *e = m.license->child; e && s == GK_OK; e = e->next) {
                if (e != m.license->child) strcat(joined, ",");
                strcat(joined, e->valuestring);
            }
            if (s == GK_OK) s = gk_kv_set_str(out, "general.license", joined, err);
            free(joined);
        } else {
            s = not_a_string(&m, "general.license", err);
        }
    }
    for (int f = F_LICENSE_NAME; f < N_FIELDS && s == GK_OK; f++) s = put_field(out, &m, f, err);
    if (s == GK_OK && m.base_models) s = put_entries(out, &m, m.base_models, "base_model", err);
    if (s == GK_OK && m.datasets) s = put_entries(out, &m, m.datasets, "dataset", err);
    if (s == GK_OK && m.tags) s = put_str_array(out, &m, m.tags, "general.tags", err);
    if (s == GK_OK && m.languages) s = put_str_array(out, &m, m.languages, "general.languages", err);
    for (int f = 0; f < N_FIELDS; f++) free(m.own[f]);
    cJSON_Delete(m.base_models);
    cJSON_Delete(m.datasets);
    cJSON_Delete(m.tags);
    cJSON_Delete(m.languages);
    return s;
}
