/*
 * text.c - values as text, shared by the library and the command: the type
 * label of a value in its two spellings (u32, array[str] in edit's messages;
 * UINT32, [STRING] in the listings). The shortest text of a double is
 * util/numtext.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/value.h"

/* "u32", "array[str]", "array[array[i32]]": each level is cut to 79 bytes
 * before the next wraps it. */
static void label_short(const gk_value *v, char *buf, size_t size) {
    if (v->type != GK_V_ARR) {
        snprintf(buf, size, "%s", gk_vtype_short_name(v->type) ? gk_vtype_short_name(v->type) : "?");
        return;
    }
    char inner[80];
    if (v->arr.elem == GK_V_ARR && v->arr.n > 0) label_short(&((const gk_value *)v->arr.data)[0], inner, sizeof inner);
    else snprintf(inner, sizeof inner, "%s", v->arr.elem == GK_V_ARR ? "array" : gk_vtype_short_name(v->arr.elem));
    snprintf(buf, size, "array[%s]", inner);
}

/* "UINT32", "[STRING]", "[[INT32]]". */
static void label_name(const gk_value *v, char *buf, size_t size) {
    int depth = 0;
    const gk_value *cur = v;
    gk_vtype leaf = v->type;
    while (leaf == GK_V_ARR && depth < GK_MAX_ARRAY_DEPTH + 1) {
        depth++;
        leaf = cur->arr.elem;
        if (leaf == GK_V_ARR) {
            if (cur->arr.n == 0) break;
            cur = &((const gk_value *)cur->arr.data)[0];
        }
    }
    const char *name = gk_vtype_name(leaf);
    size_t pos = 0;
    for (int i = 0; i < depth && pos + 1 < size; i++) buf[pos++] = '[';
    int w = snprintf(buf + pos, size - pos, "%s", name ? name : "?");
    pos = w < 0 ? pos : pos + (size_t)w;
    for (int i = 0; i < depth && pos + 1 < size; i++) buf[pos++] = ']';
    buf[pos < size ? pos : size - 1] = '\0';
}

void gk_value_type_label(const gk_value *v, gk_label_style style, char *buf, size_t size) {
    if (style == GK_LABEL_SHORT) label_short(v, buf, size);
    else label_name(v, buf, size);
}
