/*
 * hfjson.c - reading a Hugging Face folder's JSON and text files (hfjson.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert/hfjson.h"
#include "io/inputs.h"

#define TEXT_MAX (64u << 20)

static char *join_path(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

bool gk_hf_exists(const char *dir, const char *name) {
    char *p = join_path(dir, name);
    struct stat st;
    bool ok = p && stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return ok;
}

/* name in dir read whole (an input); a missing file that is not required
 * gives *out NULL and GK_OK. */
static gk_status read_all(const char *dir, const char *name, bool required, char **out, size_t *len,
                          gk_error *err) {
    *out = NULL;
    char *path = join_path(dir, name);
    if (path == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_status s = input_read_whole(path, TEXT_MAX, out, len, err);
    free(path);
    if (s == GK_E_NOT_FOUND && !required) {
        gk_error_clear(err);
        return GK_OK;
    }
    return s;
}

gk_status gk_hf_json_load(const char *dir, const char *name, bool required, cJSON **out, gk_error *err) {
    *out = NULL;
    char *text;
    size_t len;
    gk_status s = read_all(dir, name, required, &text, &len, err);
    if (s != GK_OK || text == NULL) return s;
    /* Python reads the file as UTF-8 and refuses it otherwise */
    for (size_t i = 0; i < len;) {
        size_t k = gk_utf8_char_len(text + i, len - i);
        if (k == 0) {
            free(text);
            gk_error_set(err, GK_E_CORRUPT, (int64_t)i, "not valid UTF-8");
            char *path = join_path(dir, name);
            gk_error_about(err, path ? path : name);
            free(path);
            return GK_E_CORRUPT;
        }
        i += k;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len + 1, &end, true);
    if (j == NULL) {
        int64_t at = end ? (int64_t)(end - text) : -1;
        s = gk_error_set(err, GK_E_CORRUPT, at, "not valid JSON");
        char *path = join_path(dir, name);
        gk_error_about(err, path ? path : name);
        free(path);
    }
    free(text);
    *out = j;
    return s;
}

gk_status gk_hf_text_load(const char *dir, const char *name, bool required, char **out, gk_error *err) {
    size_t len;
    gk_status s = read_all(dir, name, required, out, &len, err);
    if (s != GK_OK || *out == NULL) return s;
    char *r = *out, *w = *out;
    for (size_t i = 0; i < len; i++) {
        if (r[i] == '\r') {
            *w++ = '\n';
            if (i + 1 < len && r[i + 1] == '\n') i++;
        } else {
            *w++ = r[i];
        }
    }
    *w = '\0';
    return GK_OK;
}

bool gk_hf_is_int(const cJSON *j) {
    if (!cJSON_IsNumber(j)) return false;
    double d = j->valuedouble;
    return isfinite(d) && d == floor(d) && fabs(d) < 9.2e18;
}
