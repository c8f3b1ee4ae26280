/*
 * naming.c - model id heuristics and size labels, as gguf-py's metadata.py and
 * utility.py define them (see naming.h). Character classes are ASCII: a
 * non-ASCII byte counts as neither a letter nor a digit.
 */
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/naming.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_alpha(char c) { return is_lower(c) || is_upper(c); }
static bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }

/* Python's str.islower(): some cased letter, none upper case. */
static bool py_islower(const char *s, size_t n) {
    bool cased = false;
    for (size_t i = 0; i < n; i++) {
        if (is_upper(s[i])) return false;
        if (is_lower(s[i])) cased = true;
    }
    return cased;
}

/* ^(v\d+(?:\.\d+)*|\d.*)$ : a version or anything starting with a digit. */
static bool looks_versioned(const char *s, size_t n) {
    if (n > 0 && is_digit(s[0])) return true;
    if (n < 2 || s[0] != 'v' || !is_digit(s[1])) return false;
    size_t i = 1;
    while (i < n) {
        while (i < n && is_digit(s[i])) i++;
        if (i == n) return true;
        if (s[i] != '.' || i + 1 >= n || !is_digit(s[i + 1])) return false;
        i++;
    }
    return true;
}

char *gk_conv_title(const char *s) {
    size_t n = strlen(s);
    char *out = malloc(n + 1), *o = out;
    if (out == NULL) return NULL;
    const char *p = s;
    bool first = true;
    for (;;) {
        while (*p == ' ' || *p == '-' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') p++;
        if (*p == '\0') break;
        const char *w = p;
        while (*p && !(*p == ' ' || *p == '-' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v'))
            p++;
        size_t wn = (size_t)(p - w);
        if (!first) *o++ = ' ';
        first = false;
        bool title = py_islower(w, wn) && !looks_versioned(w, wn);
        bool prev_cased = false;
        for (size_t i = 0; i < wn; i++) {
            char c = w[i];
            if (title && is_alpha(c)) c = prev_cased ? (char)tolower((unsigned char)c) : (char)toupper((unsigned char)c);
            prev_cased = is_alpha(w[i]);
            *o++ = c;
        }
    }
    *o = '\0';
    return out;
}

/* Case-insensitive fullmatch of (v|iter)?\d+([.]\d+)* */
static bool is_version(const char *s) {
    if (strncasecmp(s, "iter", 4) == 0 && is_digit(s[4])) s += 4;
    else if ((s[0] == 'v' || s[0] == 'V') && is_digit(s[1])) s += 1;
    if (!is_digit(*s)) return false;
    for (;;) {
        while (is_digit(*s)) s++;
        if (*s == '\0') return true;
        if (*s != '.' || !is_digit(s[1])) return false;
        s++;
    }
}

/* Case-insensitive fullmatch of i?q\d(_\w)*|b?fp?(16|32) */
static bool is_quant_type(const char *s) {
    const char *p = s;
    if (*p == 'i' || *p == 'I') p++;
    if ((*p == 'q' || *p == 'Q') && is_digit(p[1])) {
        p += 2;
        for (;;) {
            if (*p == '\0') return true;
            if (*p != '_' || !is_word(p[1])) break;
            p += 2;
            /* (_\w)* : each repeat is exactly "_" and one word character */
        }
    }
    p = s;
    if (*p == 'b' || *p == 'B') p++;
    if (*p != 'f' && *p != 'F') return false;
    p++;
    if (*p == 'p' || *p == 'P') p++;
    return strcmp(p, "16") == 0 || strcmp(p, "32") == 0;
}

/* Case-insensitive fullmatch of
 * (([A]|\d+[x])?\d+([._]\d+)?[KMBT][\d]?|small|mini|medium|large|x?xl) */
static bool is_size(const char *s) {
    static const char *const words[] = { "small", "mini", "medium", "large", "xl", "xxl" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcasecmp(s, words[i]) == 0) return true;
    /* The optional prefix makes the match ambiguous: try each way. */
    const char *starts[3] = { s, NULL, NULL };
    if (s[0] == 'a' || s[0] == 'A') starts[1] = s + 1;
    const char *q = s;
    while (is_digit(*q)) q++;
    if (q > s && (*q == 'x' || *q == 'X')) starts[2] = q + 1;
    for (int k = 0; k < 3; k++) {
        const char *p = starts[k];
        if (p == NULL || !is_digit(*p)) continue;
        while (is_digit(*p)) p++;
        /* ([._]\d+)? then [KMBT] then \d? : backtracking over the digits is not
         * needed, since [KMBT] is not a digit. */
        const char *r = p;
        if ((*r == '.' || *r == '_') && is_digit(r[1])) {
            r++;
            while (is_digit(*r)) r++;
            if (strchr("KMBTkmbt", *r) && *r && (r[1] == '\0' || (is_digit(r[1]) && r[2] == '\0'))) return true;
        }
        if (*p && strchr("KMBTkmbt", *p) && (p[1] == '\0' || (is_digit(p[1]) && p[2] == '\0'))) return true;
    }
    return false;
}

enum { T_BASENAME = 1, T_SIZE = 2, T_FINETUNE = 4, T_VERSION = 8, T_TYPE = 16 };

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Joins the parts with any of the types in mask (and, for exclude, none of
 * those), with '-'; dedup drops repeats. NULL when none (or out of memory). */
static char *join(char **parts, const int *types, size_t n, int mask, int exclude, bool dedup) {
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += strlen(parts[i]) + 1;
    char *out = malloc(len + 1);
    if (out == NULL) return NULL;
    out[0] = '\0';
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        if (!(types[i] & mask) || (types[i] & exclude)) continue;
        bool seen = false;
        for (size_t j = 0; dedup && j < i; j++)
            if ((types[j] & mask) && !(types[j] & exclude) && strcmp(parts[j], parts[i]) == 0) seen = true;
        if (seen) continue;
        if (any) strcat(out, "-");
        strcat(out, parts[i]);
        any = true;
    }
    if (!any) {
        free(out);
        return NULL;
    }
    return out;
}

void gk_conv_id_free(gk_conv_id *id) {
    free(id->name);
    free(id->organization);
    free(id->basename);
    free(id->finetune);
    free(id->version);
    free(id->size_label);
    memset(id, 0, sizeof *id);
}

int gk_conv_parse_id(const char *model_id, int64_t total_params, gk_conv_id *out) {
    memset(out, 0, sizeof *out);
    if (model_id == NULL) return 0;
    if (strchr(model_id, ' ')) {
        out->name = gk_conv_title(model_id);   /* a sentence: a plain name */
        return out->name ? 0 : -1;
    }
    const char *slash = strchr(model_id, '/');
    const char *full = slash ? slash + 1 : model_id;
    char *org = NULL;
    if (slash && model_id[0] != '.') {   /* "/x" gives an empty organization */
        org = dup_n(model_id, (size_t)(slash - model_id));
        if (org == NULL) return -1;
    }
    /* Parts: split on '-', empty ones dropped; each with room to grow by one. */
    size_t n_max = 1;
    for (const char *c = full; *c; c++) n_max += *c == '-';
    char **parts = calloc(n_max, sizeof *parts);
    int *types = calloc(n_max, sizeof *types);
    size_t n = 0;
    int rc = -1;
    if (parts == NULL || types == NULL) goto done;
    for (const char *p = full;;) {
        const char *e = strchr(p, '-');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0) {
            if ((parts[n] = malloc(len + 2)) == NULL) goto done;
            memcpy(parts[n], p, len);
            parts[n][len] = '\0';
            n++;
        }
        if (e == NULL) break;
        p = e + 1;
    }
    for (size_t i = 0; i < n; i++) {
        char *part = parts[i];
        if (is_version(part)) {
            types[i] |= T_VERSION;
        } else if (is_quant_type(part)) {
            types[i] |= T_TYPE;
            for (char *c = part; *c; c++) *c = (char)toupper((unsigned char)*c);
        } else if (i > 0 && is_size(part)) {
            for (char *c = part; *c; c++) if (*c == '_') *c = '.';
            size_t len = strlen(part);
            if (is_digit(part[len - 1]) && len >= 2) {   /* bloom-7b1 -> 7.1b */
                char last = part[len - 1], unit = part[len - 2];
                part[len - 2] = '.';
                part[len - 1] = last;
                part[len] = unit;
                part[len + 1] = '\0';
                len++;
            }
            if (len > 1 && is_digit(part[len - 2]) && strchr("kmbt", part[len - 1]) && part[len - 1])
                part[len - 1] = (char)toupper((unsigned char)part[len - 1]);
            if (total_params != 0) {
                /* float(part[:-1]) * 1000 ** " KMBT".find(part[-1]); a part that
                 * is not a number is used as it is. */
                char *endp;
                char num[64];
                bool ok = len - 1 < sizeof num && len > 1;
                if (ok) {
                    memcpy(num, part, len - 1);
                    num[len - 1] = '\0';
                    for (size_t k = 0; k < len - 1; k++)
                        if (!(is_digit(num[k]) || num[k] == '.')) ok = false;
                }
                double v = ok ? strtod(num, &endp) : 0;
                if (ok && *endp == '\0') {
                    const char *units = " KMBT";
                    const char *u = strchr(units, part[len - 1]);
                    int e = u ? (int)(u - units) : -1;
                    double label = v * pow(1000.0, e);
                    bool small = total_params < 0 && label < (double)(-total_params / 8);
                    bool far = total_params > 0 && fabs(label - (double)total_params) > (double)(7 * total_params / 8);
                    if (small || far) {
                        types[i] |= T_FINETUNE;   /* a context length, likely */
                        part[len - 1] = (char)tolower((unsigned char)part[len - 1]);
                    }
                }
            }
            if (types[i] == 0) types[i] |= T_SIZE;
        } else if (i > 0 && (strcasecmp(part, "chat") == 0 || strcasecmp(part, "instruct") == 0 ||
                             strcasecmp(part, "vision") == 0 || strcasecmp(part, "lora") == 0)) {
            types[i] |= (total_params < 0 && strcasecmp(part, "lora") == 0) ? T_TYPE : T_FINETUNE;
        }
    }
    /* Word sizes ("small") give way to a numeric one. */
    bool numeric = false;
    for (size_t i = 0; i < n; i++)
        if (types[i] & T_SIZE)
            for (const char *c = parts[i]; *c; c++) numeric |= is_digit(*c);
    if (numeric)
        for (size_t i = 0; i < n; i++) {
            if (!(types[i] & T_SIZE)) continue;
            bool alpha = parts[i][0] != '\0';
            for (const char *c = parts[i]; *c; c++) alpha &= is_alpha(*c);
            if (alpha) types[i] &= ~T_SIZE;
        }
    bool at_start = true;
    for (size_t i = 0; i < n; i++) {
        if (at_start && ((types[i] == 0 && is_alpha(parts[i][0])) || (types[i] & T_VERSION))) {
            types[i] |= T_BASENAME;
        } else {
            at_start = false;
            if (types[i] == 0) types[i] |= T_FINETUNE;
        }
    }
    for (size_t i = n; i-- > 0;) {
        if ((types[i] & T_BASENAME) && types[i] != T_BASENAME) types[i] &= ~T_BASENAME;
        else break;
    }
    out->basename = join(parts, types, n, T_BASENAME, 0, false);
    out->size_label = join(parts, types, n, T_SIZE, 0, true);
    out->finetune = join(parts, types, n, T_FINETUNE, 0, false);
    out->version = join(parts, types, n, T_VERSION, T_BASENAME, false);
    if (out->size_label == NULL && out->finetune == NULL && out->version == NULL) {
        free(out->basename);
        out->basename = NULL;
    }
    out->name = gk_conv_title(full);
    if (org) out->organization = gk_conv_title(org);
    rc = out->name ? 0 : -1;
done:
    for (size_t i = 0; parts && i < n; i++) free(parts[i]);
    free(parts);
    free(types);
    free(org);
    if (rc != 0) gk_conv_id_free(out);
    return rc;
}

/* utility.py model_weight_count_rounded_notation with min_digits 2. */
static void notation(uint64_t count, char *buf, size_t size) {
    double c = (double)count, scaled;
    const char *suffix;
    if (c > 1e12) { scaled = c * 1e-12; suffix = "T"; }
    else if (c > 1e9) { scaled = c * 1e-9; suffix = "B"; }
    else if (c > 1e6) { scaled = c * 1e-6; suffix = "M"; }
    else { scaled = c * 1e-3; suffix = "K"; }
    /* Python's round(): half to even */
    double r = nearbyint(scaled);
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", r);
    const char *d = digits;
    while (*d == '0') d++;
    int fix = 2 - (int)strlen(d);
    if (fix < 0) fix = 0;
    snprintf(buf, size, "%.*f%s", fix, scaled, suffix);
}

void gk_conv_size_label(uint64_t total, uint64_t shared, uint64_t expert_params, uint64_t expert_count,
                        char *buf, size_t size) {
    if (expert_count > 0) {
        char inner[64];
        notation(shared + expert_params, inner, sizeof inner);
        snprintf(buf, size, "%llux%s", (unsigned long long)expert_count, inner);
    } else {
        notation(total, buf, size);
    }
}
