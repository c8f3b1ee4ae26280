/*
 * show.c - how the readable listings (dump, diff) print metadata values and
 * tensor types: arrays summarized by their first elements, strings quoted with
 * escapes and cut, floats as the shortest text that reads back (type labels and
 * that float text are the library's, lib/meta/text.c).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

/* Elements shown of an array in the readable listing. */
#define SUMMARY_ELEMS 6
_Static_assert(SUMMARY_ELEMS <= GK_PREVIEW_ELEMS, "a preview holds what the listing shows");
/* Bytes of a string shown before it is cut, for scalar values and array elements. */
#define SCALAR_STR_MAX 160
#define ELEM_STR_MAX 48

/* Length of the longest prefix of s[0..n) that is at most max bytes and does
 * not end inside a UTF-8 sequence. */
static uint64_t utf8_cut(const char *s, uint64_t n, uint64_t max) {
    if (n <= max) return n;
    uint64_t cut = max;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    return cut;
}

/* Prints s[0..n) quoted, with backslash escapes for quotes, backslashes,
 * control bytes and bytes that are not UTF-8, cut after max bytes ("..."
 * follows the closing quote then). @return : true if the string was cut. */
bool cmd_print_quoted(FILE *out, const char *s, uint64_t n, uint64_t max) {
    uint64_t shown = utf8_cut(s, n, max);
    fputc('"', out);
    for (uint64_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t len = gk_utf8_char_len(s + i, shown - i);
            if (len) fwrite(s + i, 1, len, out);
            else fprintf(out, "\\x%02x", c);
            i += len ? len - 1 : 0;
            continue;
        }
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (c < 0x20 || c == 0x7F) fprintf(out, "\\x%02x", c);
            else fputc(c, out);
        }
    }
    fputc('"', out);
    if (shown < n) fputs("...", out);
    return shown < n;
}

static void print_summary(FILE *out, const gk_value *v);

/* Prints element i of a packed array of type elem (nested arrays recurse; the
 * reader bounds their depth at GK_MAX_ARRAY_DEPTH). */
void cmd_print_element(FILE *out, gk_vtype elem, const void *data, uint64_t i) {
    char num[40];
    switch (elem) {
    case GK_V_U8: fprintf(out, "%u", ((const uint8_t *)data)[i]); break;
    case GK_V_I8: fprintf(out, "%d", ((const int8_t *)data)[i]); break;
    case GK_V_U16: fprintf(out, "%u", ((const uint16_t *)data)[i]); break;
    case GK_V_I16: fprintf(out, "%d", ((const int16_t *)data)[i]); break;
    case GK_V_U32: fprintf(out, "%" PRIu32, ((const uint32_t *)data)[i]); break;
    case GK_V_I32: fprintf(out, "%" PRId32, ((const int32_t *)data)[i]); break;
    case GK_V_U64: fprintf(out, "%" PRIu64, ((const uint64_t *)data)[i]); break;
    case GK_V_I64: fprintf(out, "%" PRId64, ((const int64_t *)data)[i]); break;
    case GK_V_F32:
        gk_format_double(num, sizeof num, (double)((const float *)data)[i]);
        fputs(num, out);
        break;
    case GK_V_F64:
        gk_format_double(num, sizeof num, ((const double *)data)[i]);
        fputs(num, out);
        break;
    case GK_V_BOOL: fputs(((const uint8_t *)data)[i] ? "true" : "false", out); break;
    case GK_V_STR: {
        const gk_str *s = &((const gk_str *)data)[i];
        cmd_print_quoted(out, s->ptr, s->len, ELEM_STR_MAX);
        break;
    }
    case GK_V_ARR: print_summary(out, &((const gk_value *)data)[i]); break;
    default: fputs("?", out); break;
    }
}

/* Prints the first elements of an array: [a, b, c, ...]. */
static void print_summary(FILE *out, const gk_value *v) {
    uint64_t n = v->arr.n, held = n - v->arr.n_unread;   /* a preview holds GK_PREVIEW_ELEMS */
    uint64_t shown = held < SUMMARY_ELEMS ? held : SUMMARY_ELEMS;
    fputc('[', out);
    for (uint64_t i = 0; i < shown; i++) {
        if (i) fputs(", ", out);
        cmd_print_element(out, v->arr.elem, v->arr.data, i);
    }
    if (shown < n) fputs(shown ? ", ..." : "...", out);
    fputc(']', out);
}

/* Prints a scalar or an array summary for the readable listing. */
void cmd_print_value(FILE *out, const gk_value *v) {
    char num[40];
    switch (v->type) {
    case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64:
        fprintf(out, "%" PRIu64, v->u);
        break;
    case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64:
        fprintf(out, "%" PRId64, v->i);
        break;
    case GK_V_F32: case GK_V_F64:
        gk_format_double(num, sizeof num, v->f);
        fputs(num, out);
        break;
    case GK_V_BOOL: fputs(v->b ? "true" : "false", out); break;
    case GK_V_STR:
        if (cmd_print_quoted(out, v->s.ptr, v->s.len, SCALAR_STR_MAX))
            fprintf(out, " (%" PRIu64 " bytes)", v->s.len);
        break;
    case GK_V_ARR:
        fprintf(out, "%" PRIu64 " element%s ", v->arr.n, v->arr.n == 1 ? "" : "s");
        print_summary(out, v);
        break;
    default: fputs("?", out); break;
    }
}

/* Name of tensor type id, also for ids the table does not know. */
const char *cmd_tensor_type_name(uint32_t id, char *buf, size_t size) {
    const gk_type_info *t = gk_type_get(id);
    if (t) return t->name;
    const char *old = gk_type_retired_name(id);
    if (old) return old;
    snprintf(buf, size, "unknown type %" PRIu32, id);
    return buf;
}

void cmd_shape_text(char *buf, size_t size, const gk_tensor *t) {
    size_t pos = 0;
    buf[pos++] = '[';
    for (uint32_t d = 0; d < t->n_dims && d < GK_MAX_DIMS; d++) {
        int w = snprintf(buf + pos, size - pos, "%s%" PRIu64, d ? ", " : "", t->ne[d]);
        if (w > 0) pos += (size_t)w;
        if (pos >= size) pos = size - 1;
    }
    snprintf(buf + pos, size - pos, "]");
}
