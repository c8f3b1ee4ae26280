/*
 * modelcard.c - a model card's front matter through libyaml's document
 * loader into cJSON, with PyYAML's YAML 1.1 resolution of plain scalars
 * (modelcard.h). Aliases are resolved by libyaml (the node is shared).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "convert/hfjson.h"
#include "convert/modelcard.h"

#define TAG_STR "tag:yaml.org,2002:str"

/* The implicit types of PyYAML's Resolver for plain scalars (other than str). */
static const char *const patterns[] = {
    /* int */
    "^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$",
    /* float */
    "^([-+]?([0-9][0-9_]*)\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9][0-9_]*([eE][-+][0-9]+)?|"
    "[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$",
    /* timestamp */
    "^([0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
    "(\\.[0-9]*)?([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)$",
};

typedef struct loader {
    yaml_document_t *doc;
    regex_t re[3];
    int depth;
} loader;

static cJSON *scalar(loader *l, yaml_node_t *n) {
    const char *v = (const char *)n->data.scalar.value;
    bool is_str_tag = n->tag && strcmp((const char *)n->tag, TAG_STR) == 0;
    if (!is_str_tag) return cJSON_CreateRaw("0");   /* an explicit tag: not a string */
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return cJSON_CreateString(v);
    static const char *const bools[] = { "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
                                         "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF" };
    for (int i = 0; i < 18; i++)
        if (strcmp(v, bools[i]) == 0) return cJSON_CreateBool(i < 9);
    if (v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
        strcmp(v, "NULL") == 0)
        return cJSON_CreateNull();
    if (strcmp(v, "<<") == 0 || strcmp(v, "=") == 0) return cJSON_CreateRaw("0");
    for (int i = 0; i < 3; i++)
        if (regexec(&l->re[i], v, 0, NULL, 0) == 0) return cJSON_CreateRaw("0");
    return cJSON_CreateString(v);
}

static gk_status convert_node(loader *l, yaml_node_t *n, cJSON **out, gk_error *err) {
    *out = NULL;
    if (++l->depth > 64) return gk_error_set(err, GK_E_UNSUPPORTED, -1, "nested more than 64 deep");
    gk_status s = GK_OK;
    if (n->type == YAML_SCALAR_NODE) {
        *out = scalar(l, n);
    } else if (n->type == YAML_SEQUENCE_NODE) {
        *out = cJSON_CreateArray();
        for (yaml_node_item_t *it = n->data.sequence.items.start; *out && it < n->data.sequence.items.top && s == GK_OK;
             it++) {
            cJSON *c;
            s = convert_node(l, yaml_document_get_node(l->doc, *it), &c, err);
            if (s == GK_OK) cJSON_AddItemToArray(*out, c);
        }
    } else if (n->type == YAML_MAPPING_NODE) {
        *out = cJSON_CreateObject();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; *out && p < n->data.mapping.pairs.top && s == GK_OK; p++) {
            yaml_node_t *k = yaml_document_get_node(l->doc, p->key);
            if (k == NULL || k->type != YAML_SCALAR_NODE) {
                s = gk_error_set(err, GK_E_UNSUPPORTED, -1, "line %zu: a mapping key that is not a scalar",
                                 k ? k->start_mark.line + 1 : 0);
                break;
            }
            cJSON *c;
            s = convert_node(l, yaml_document_get_node(l->doc, p->value), &c, err);
            const char *key = (const char *)k->data.scalar.value;
            if (s == GK_OK) {
                if (cJSON_GetObjectItemCaseSensitive(*out, key)) cJSON_ReplaceItemInObjectCaseSensitive(*out, key, c);
                else cJSON_AddItemToObject(*out, key, c);
            }
        }
    }
    l->depth--;
    if (s == GK_OK && *out == NULL) s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s != GK_OK) {
        cJSON_Delete(*out);
        *out = NULL;
    }
    return s;
}

/* The front matter as load_model_card cuts it, or NULL (none). */
static char *front_matter(const char *text) {
    const char *p = text;
    const char *line_end = strchr(p, '\n');
    size_t first = line_end ? (size_t)(line_end - p) : strlen(p);
    if (first != 3 || strncmp(p, "---", 3) != 0) return NULL;
    size_t cap = strlen(text) * 2 + 8;   /* room for the fixes */
    char *out = malloc(cap), *o = out;
    if (out == NULL) return NULL;
    p = line_end ? line_end + 1 : p + first;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 3 && strncmp(p, "---", 3) == 0) break;
        memcpy(o, p, n);
        o += n;
        *o++ = '\n';
        if (e == NULL) break;
        p = e + 1;
    }
    *o = '\0';
    /* "- no\n" -> "- \"no\"\n", then each tab -> two spaces */
    char *fixed = malloc(cap * 2), *f = fixed;
    if (fixed == NULL) {
        free(out);
        return NULL;
    }
    for (const char *c = out; *c;) {
        if (strncmp(c, "- no\n", 5) == 0) {
            memcpy(f, "- \"no\"\n", 7);
            f += 7;
            c += 5;
        } else if (*c == '\t') {
            *f++ = ' ';
            *f++ = ' ';
            c++;
        } else {
            *f++ = *c++;
        }
    }
    *f = '\0';
    free(out);
    return fixed;
}

gk_status gk_conv_model_card_text(const char *text, const char *path, cJSON **card, gk_error *err) {
    *card = NULL;
    char *yaml = front_matter(text);
    if (yaml == NULL) return GK_OK;
    gk_status s = GK_OK;
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        free(yaml);
        return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, strlen(yaml));
    if (!yaml_parser_load(&parser, &doc)) {
        s = gk_error_set(err, GK_E_CORRUPT, -1, "model card front matter, line %zu: %s",
                         parser.problem_mark.line + 2, parser.problem ? parser.problem : "not YAML");
        gk_error_about(err, path);
        yaml_parser_delete(&parser);
        free(yaml);
        return s;
    }
    loader l = { .doc = &doc };
    for (int i = 0; i < 3; i++) regcomp(&l.re[i], patterns[i], REG_EXTENDED | REG_NOSUB);
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && root->type == YAML_MAPPING_NODE) {
        s = convert_node(&l, root, card, err);
        if (s != GK_OK) gk_error_about(err, path);
    }
    for (int i = 0; i < 3; i++) regfree(&l.re[i]);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    free(yaml);
    return s;
}

gk_status gk_conv_model_card(const char *dir, cJSON **card, gk_error *err) {
    *card = NULL;
    char *text = NULL;
    gk_status s = gk_hf_text_load(dir, "README.md", false, &text, err);
    if (s != GK_OK || text == NULL) return s;
    char path[4096];
    snprintf(path, sizeof path, "%s/README.md", dir);
    s = gk_conv_model_card_text(text, path, card, err);
    free(text);
    return s;
}
