/*
 * dump.c - `ggufkit dump`: lists a file's header facts, every key/value pair and
 * every tensor directory entry.
 *
 * The default output is for people: one line per pair and per tensor, arrays
 * summarized by type, length and their first elements. `--json` writes the layout
 * of llama.cpp's `gguf_dump.py --json` (pseudo keys GGUF.version, GGUF.tensor_count
 * and GGUF.kv_count first; offsets are where each field starts in the file), with
 * array values only under `--json-array`, as the reference does. Numbers are
 * exact: 64-bit integers as integers, floats as the shortest text that reads back
 * as the same double, NaN and infinities as Python's json writes them (NaN,
 * Infinity). Where the reference fails or flattens, we differ on purpose: arrays
 * of arrays come out as nested lists, and ill-formed UTF-8 in a string value
 * (which the reference cannot decode) comes out with U+FFFD in its place.
 *
 * The JSON is streamed: small fields go through cJSON one entry at a time, array
 * values element by element, so a 250k-token vocabulary is never held twice.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "options.h"
#include "json.h"

typedef struct dump_opts {
    bool json;
    bool json_array;
    bool no_tensors;
    const char *path;
} dump_opts;

static void print_help(void) {
    fputs(
            "usage: ggufkit dump [--json] [--json-array] [--no-tensors] FILE\n"
            "\n"
            "List the header, every metadata key/value pair and every tensor of a GGUF file.\n"
            "\n"
            "options:\n"
            "  --json        write JSON in the layout of llama.cpp's gguf_dump.py --json\n"
            "                (array values are left out unless --json-array is given)\n"
            "  --json-array  with --json, include the values of arrays\n"
            "  --no-tensors  leave out the tensor directory\n"
            "  -h, --help    show this help\n"
            "\n"
            "The readable listing shows each pair's index, key, type and value (strings\n"
            "quoted and escaped, arrays as type, length and first elements) and each\n"
            "tensor's index, name, type, shape, data offset and size in bytes.\n"
            "\n"
            "Warnings about the file (what llama.cpp or the gguf python reader would refuse)\n"
            "go to stderr and do not fail the dump. Tensor data that is misplaced (past the\n"
            "end of the file, as in a partial download; misaligned; overlapping) is listed,\n"
            "then reported on stderr and fails the dump, since llama.cpp refuses such a file.\n"
            "So is a tensor of a type ggufkit does not know: listed as \"unknown type N\"\n"
            "with its size unknown, since its data cannot be laid out.\n"
            "A partial download inside a container (.gguf.zst, ARCHIVE::MEMBER) fails the\n"
            "same way: a container that may be cut short is read to its end to find its\n"
            "real length.\n"
            CMD_STREAM_HELP
            "Exit status: 0 success, 1 the header is not valid GGUF, tensor data is\n"
            "misplaced or a tensor type is unknown (the error names the byte offset), 2\n"
            "usage error.\n", stdout);
}

/* ------------------------------------------------------------------------ */
/* Readable listing                                                         */
/* ------------------------------------------------------------------------ */

static void dump_text(FILE *out, gk_file *f, const dump_opts *o) {
    const gk_model *m = gk_file_model(f);
    size_t nkv = gk_kv_count(m), nt = gk_tensor_count(m);
    fprintf(out, "file:        %s\n", o->path);
    fprintf(out, "version:     %" PRIu32 "\n", gk_model_version(m));
    fprintf(out, "byte order:  %s\n", gk_model_big_endian(m) ? "big-endian" : "little-endian");
    fprintf(out, "alignment:   %" PRIu32 "\n", gk_model_alignment(m));
    fprintf(out, "kv pairs:    %zu\n", nkv);
    fprintf(out, "tensors:     %zu\n", nt);
    fprintf(out, "data offset: %" PRIu64 "\n", gk_file_data_offset(f));
    fprintf(out, "file size:   %" PRIu64 "\n", gk_file_size(f));

    /* Width of the key column: the longest key, within reason. */
    size_t keyw = 3;
    for (size_t i = 0; i < nkv; i++) {
        size_t len = gk_kv_at(m, i)->key.len;
        if (len > keyw) keyw = len;
    }
    if (keyw > 48) keyw = 48;
    /* Width of the type column: the longest label ("[[INT32]]"). */
    size_t typew = 4;
    for (size_t i = 0; i < nkv; i++) {
        char label[64];
        gk_value_type_label(&gk_kv_at(m, i)->value, GK_LABEL_NAME, label, sizeof label);
        if (strlen(label) > typew) typew = strlen(label);
    }

    fprintf(out, "\nmetadata (%zu):\n", nkv);
    fprintf(out, "  %5s  %-*s  %-*s  %s\n", "index", (int)keyw, "key", (int)typew, "type", "value");
    for (size_t i = 0; i < nkv; i++) {
        const gk_kv *kv = gk_kv_at(m, i);
        char label[64];
        gk_value_type_label(&kv->value, GK_LABEL_NAME, label, sizeof label);
        fprintf(out, "  %5zu  ", i);
        /* Keys are valid UTF-8 but may hold control bytes: escape those only. */
        bool plain = true;
        for (uint64_t j = 0; j < kv->key.len; j++) {
            unsigned char c = (unsigned char)kv->key.ptr[j];
            if (c < 0x20 || c == 0x7F) plain = false;
        }
        if (plain) fprintf(out, "%-*.*s", (int)keyw, (int)kv->key.len, kv->key.ptr);
        else cmd_print_quoted(out, kv->key.ptr, kv->key.len, UINT64_MAX);
        fprintf(out, "  %-*s  ", (int)typew, label);
        cmd_print_value(out, &kv->value);
        fputc('\n', out);
    }
    if (o->no_tensors) return;

    size_t namew = 4;
    for (size_t i = 0; i < nt; i++) {
        size_t len = gk_tensor_at(m, i)->name.len;
        if (len > namew) namew = len;
    }
    if (namew > 48) namew = 48;
    size_t ttypew = 8;   /* "unknown type 99" is wider than every known name */
    for (size_t i = 0; i < nt; i++) {
        char tbuf[24];
        size_t len = strlen(cmd_tensor_type_name(gk_tensor_at(m, i)->type, tbuf, sizeof tbuf));
        if (len > ttypew) ttypew = len;
    }
    uint64_t data_off = gk_file_data_offset(f);
    fprintf(out, "\ntensors (%zu):\n", nt);
    fprintf(out, "  %5s  %-*s  %-*s  %-26s  %12s  %12s  %12s\n", "index", (int)namew, "name", (int)ttypew, "type",
            "shape", "offset", "file offset", "bytes");
    for (size_t i = 0; i < nt; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        char tbuf[24], shape[128];
        cmd_shape_text(shape, sizeof shape, t);
        fprintf(out, "  %5zu  ", i);
        bool plain = true;
        for (uint64_t j = 0; j < t->name.len; j++) {
            unsigned char c = (unsigned char)t->name.ptr[j];
            if (c < 0x20 || c == 0x7F) plain = false;
        }
        if (plain) fprintf(out, "%-*.*s", (int)namew, (int)t->name.len, t->name.ptr);
        else cmd_print_quoted(out, t->name.ptr, t->name.len, UINT64_MAX);
        fprintf(out, "  %-*s  %-26s  %12" PRIu64 "  %12" PRIu64 "  ", (int)ttypew,
                cmd_tensor_type_name(t->type, tbuf, sizeof tbuf), shape, t->offset, data_off + t->offset);
        /* a type ggufkit does not know has no block geometry: its size is unknown */
        if (gk_type_get(t->type)) fprintf(out, "%12" PRIu64 "\n", t->nbytes);
        else fprintf(out, "%12s\n", "unknown");
    }
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

/* Writes v in decimal: what printf's %llu writes, without its cost per call
 * (vocabularies hold 100k+ integers). The JSON writer is the only user of its
 * stream, so it uses the unlocked stdio calls throughout. */
static void put_u64(FILE *out, uint64_t v) {
    char buf[24], *p = buf + sizeof buf;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    fwrite_unlocked(p, 1, (size_t)(buf + sizeof buf - p), out);
}

static void put_i64(FILE *out, int64_t v) {
    if (v < 0) {
        putc_unlocked('-', out);
        put_u64(out, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(out, (uint64_t)v);
    }
}

/* Where values are streamed to, with scratch space for cJSON's string printing. */
typedef struct json_writer {
    FILE *out;
    bool utf8_checked;   /* every string of the file is known to be UTF-8 */
    char *buf;
    size_t cap;
} json_writer;

/* Prints item unformatted and deletes it. @return : false when out of memory. */
static bool write_item(json_writer *w, cJSON *item) {
    char *text = item ? cJSON_PrintUnformatted(item) : NULL;
    cJSON_Delete(item);
    if (text == NULL) return false;
    fputs_unlocked(text, w->out);
    cJSON_free(text);
    return true;
}

/* Whether a short string of valid UTF-8 holds nothing cJSON would escape (a
 * control byte, a quote, a backslash): its JSON is then its bytes between
 * quotes, which is what most tokens of a vocabulary are. */
static bool plain(const char *s, uint64_t n) {
    if (n > 256) return false;
    for (uint64_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\') return false;
    }
    return true;
}

/* Writes n bytes at s as a JSON string through cJSON, which escapes it from a
 * node that borrows the bytes, into a reused buffer: no allocation per string,
 * which matters for vocabularies of 250k tokens. */
static bool write_escaped(json_writer *w, const char *s, uint64_t n) {
    /* cJSON's worst case is 6 bytes per input byte (\u001f), plus quotes and
     * the slack its documentation asks for. */
    if (n > (INT32_MAX - 64) / 6 || memchr(s, '\0', n) != NULL || (!w->utf8_checked && !gk_utf8_valid(s, n)))
        return write_item(w, cmd_json_string(s, n));
    size_t need = 6 * (size_t)n + 64;
    if (need > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < need) cap *= 2;
        char *grown = realloc(w->buf, cap);
        if (grown == NULL) return false;
        w->buf = grown;
        w->cap = cap;
    }
    cJSON node;
    memset(&node, 0, sizeof node);
    node.type = cJSON_String;
    node.valuestring = (char *)s;   /* NUL-terminated at n: the library's strings are */
    if (!cJSON_PrintPreallocated(&node, w->buf, (int)w->cap, false)) return false;
    fputs_unlocked(w->buf, w->out);
    return true;
}

/* Writes n bytes at s as a JSON string: a plain one as it is, others escaped. */
static bool write_string(json_writer *w, const char *s, uint64_t n) {
    if (!w->utf8_checked || !plain(s, n)) return write_escaped(w, s, n);
    putc_unlocked('"', w->out);
    fwrite_unlocked(s, 1, (size_t)n, w->out);
    putc_unlocked('"', w->out);
    return true;
}

/* Writes a whole array of strings: runs of plain ones are gathered in a local
 * buffer and written together, the others are escaped one by one. */
static bool write_string_array(json_writer *w, const gk_str *items, uint64_t n) {
    char run[16384];
    size_t used = 0;
    putc_unlocked('[', w->out);
    for (uint64_t i = 0; i < n; i++) {
        const gk_str *t = &items[i];
        bool simple = w->utf8_checked && plain(t->ptr, t->len);
        if (!simple || used + t->len + 3 > sizeof run) {
            fwrite_unlocked(run, 1, used, w->out);
            used = 0;
        }
        if (simple) {
            if (i) run[used++] = ',';
            run[used++] = '"';
            memcpy(run + used, t->ptr, (size_t)t->len);
            used += (size_t)t->len;
            run[used++] = '"';
        } else {
            if (i) putc_unlocked(',', w->out);
            if (!write_escaped(w, t->ptr, t->len)) return false;
        }
    }
    fwrite_unlocked(run, 1, used, w->out);
    putc_unlocked(']', w->out);
    return true;
}

static bool write_value(json_writer *w, const gk_value *v);

/* Writes element i of a packed array of type elem. */
static bool write_element(json_writer *w, gk_vtype elem, const void *data, uint64_t i) {
    char num[40];
    switch (elem) {
    case GK_V_U8: put_u64(w->out, ((const uint8_t *)data)[i]); return true;
    case GK_V_I8: put_i64(w->out, ((const int8_t *)data)[i]); return true;
    case GK_V_U16: put_u64(w->out, ((const uint16_t *)data)[i]); return true;
    case GK_V_I16: put_i64(w->out, ((const int16_t *)data)[i]); return true;
    case GK_V_U32: put_u64(w->out, ((const uint32_t *)data)[i]); return true;
    case GK_V_I32: put_i64(w->out, ((const int32_t *)data)[i]); return true;
    case GK_V_U64: put_u64(w->out, ((const uint64_t *)data)[i]); return true;
    case GK_V_I64: put_i64(w->out, ((const int64_t *)data)[i]); return true;
    case GK_V_F32:
        gk_format_double(num, sizeof num, (double)((const float *)data)[i]);
        fputs_unlocked(num, w->out);
        return true;
    case GK_V_F64:
        gk_format_double(num, sizeof num, ((const double *)data)[i]);
        fputs_unlocked(num, w->out);
        return true;
    case GK_V_BOOL: return write_item(w, cJSON_CreateBool(((const uint8_t *)data)[i] != 0));
    case GK_V_STR: {
        const gk_str *s = &((const gk_str *)data)[i];
        return write_string(w, s->ptr, s->len);
    }
    case GK_V_ARR: return write_value(w, &((const gk_value *)data)[i]);
    default: return false;
    }
}

/* Writes any value: numbers exactly (64-bit integers as integers, floats as the
 * shortest text that reads back as the same double), arrays element by element
 * (arrays of arrays as nested lists). @return : false when out of memory. */
static bool write_value(json_writer *w, const gk_value *v) {
    char num[40];
    switch (v->type) {
    case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64:
        put_u64(w->out, v->u);
        return true;
    case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64:
        put_i64(w->out, v->i);
        return true;
    case GK_V_F32: case GK_V_F64:
        gk_format_double(num, sizeof num, v->f);
        fputs_unlocked(num, w->out);
        return true;
    case GK_V_BOOL: return write_item(w, cJSON_CreateBool(v->b));
    case GK_V_STR: return write_string(w, v->s.ptr, v->s.len);
    case GK_V_ARR:
        if (v->arr.elem == GK_V_STR) return write_string_array(w, v->arr.data, v->arr.n);
        putc_unlocked('[', w->out);
        for (uint64_t i = 0; i < v->arr.n; i++) {
            if (i) putc_unlocked(',', w->out);
            if (!write_element(w, v->arr.elem, v->arr.data, i)) return false;
        }
        putc_unlocked(']', w->out);
        return true;
    default: return false;
    }
}

/* The reference's array_types: the element type, then (for arrays of arrays)
 * the element types of the first element, and so on; an empty array adds
 * nothing. */
static bool add_array_types(cJSON *list, const gk_value *v) {
    for (int depth = 0; v->type == GK_V_ARR && v->arr.n > 0 && depth <= GK_MAX_ARRAY_DEPTH; depth++) {
        const char *name = gk_vtype_name(v->arr.elem);
        if (!cJSON_AddItemToArray(list, cJSON_CreateString(name ? name : "UNKNOWN"))) return false;
        if (v->arr.elem != GK_V_ARR) break;
        v = &((const gk_value *)v->arr.data)[0];
    }
    return true;
}

/* Writes one metadata entry `"key":{"index":..,"type":..,"offset":..,
 * ["array_types":..,] ["value":..]}`, with a leading comma unless first. The
 * small fields go through a cJSON object; the value is streamed after them. */
static bool write_field(json_writer *w, bool *first, const char *key, uint64_t key_len,
                        size_t index, int64_t offset, const gk_value *v, bool with_array_values) {
    const char *tname = gk_vtype_name(v->type);
    cJSON *obj = cJSON_CreateObject();
    bool ok = obj != NULL && cJSON_AddItemToObject(obj, "index", gk_json_u64(index)) &&
              cJSON_AddItemToObject(obj, "type", cJSON_CreateString(tname ? tname : "UNKNOWN")) &&
              cJSON_AddItemToObject(obj, "offset", gk_json_i64(offset));
    if (ok && v->type == GK_V_ARR) {
        cJSON *types = cJSON_CreateArray();
        ok = types != NULL && add_array_types(types, v) && cJSON_AddItemToObject(obj, "array_types", types);
        if (!ok) cJSON_Delete(types);
    }
    char *head = ok ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    if (head == NULL) return false;

    if (!*first) fputc(',', w->out);
    *first = false;
    ok = write_string(w, key, key_len);
    fputc(':', w->out);
    if (ok && (v->type != GK_V_ARR || with_array_values)) {
        /* head is "{...}": reopen it for the value. */
        fwrite(head, 1, strlen(head) - 1, w->out);
        fputs(",\"value\":", w->out);
        ok = write_value(w, v);
        fputc('}', w->out);
    } else if (ok) {
        fputs(head, w->out);
    }
    cJSON_free(head);
    return ok;
}

/* Writes `"name":item` (with a leading comma unless first) and frees item.
 * @return : false when out of memory. */
static bool write_member(json_writer *w, bool *first, const char *name, uint64_t name_len,
                         cJSON *item) {
    if (item == NULL) return false;
    if (!*first) fputc(',', w->out);
    *first = false;
    if (!write_string(w, name, name_len)) {
        cJSON_Delete(item);
        return false;
    }
    fputc(':', w->out);
    return write_item(w, item);
}

/* One tensor directory entry: {index, shape, type, offset}. */
static cJSON *json_tensor(size_t index, const gk_tensor *t) {
    char tbuf[24];
    cJSON *obj = cJSON_CreateObject();
    cJSON *shape = cJSON_CreateArray();
    bool ok = obj != NULL && shape != NULL;
    for (uint32_t d = 0; ok && d < t->n_dims && d < GK_MAX_DIMS; d++)
        ok = cJSON_AddItemToArray(shape, gk_json_u64(t->ne[d]));
    ok = ok && cJSON_AddItemToObject(obj, "index", gk_json_u64(index));
    if (ok) ok = cJSON_AddItemToObject(obj, "shape", shape);
    else cJSON_Delete(shape);
    ok = ok &&
         cJSON_AddItemToObject(obj, "type", cJSON_CreateString(cmd_tensor_type_name(t->type, tbuf, sizeof tbuf))) &&
         cJSON_AddItemToObject(obj, "offset", gk_json_i64(t->file_offset));
    if (!ok) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

/* Writes the whole document; @return : false when out of memory. */
static bool dump_json(FILE *out, gk_file *f, const dump_opts *o) {
    const gk_model *m = gk_file_model(f);
    size_t nkv = gk_kv_count(m), nt = gk_tensor_count(m);
    uint32_t version = gk_model_version(m);
    /* v1 stores the counts as u32, later versions as u64. */
    gk_vtype count_type = version == 1 ? GK_V_U32 : GK_V_U64;
    int64_t count_size = version == 1 ? 4 : 8;
    json_writer w = { out, gk_file_strings_utf8(f), NULL, 0 };

    bool first = true;
    fputc('{', out);
    bool ok = write_member(&w, &first, "filename", 8, cmd_json_string(o->path, strlen(o->path))) &&
              write_member(&w, &first, "endian", 6,
                           cJSON_CreateString(gk_model_big_endian(m) ? "BIG" : "LITTLE"));

    /* The header's fields come first, as pseudo keys. */
    const gk_value v_version = { .type = GK_V_U32, .u = version };
    const gk_value v_tensors = { .type = count_type, .u = nt };
    const gk_value v_kvs = { .type = count_type, .u = nkv };
    bool mfirst = true;
    if (ok) fputs(",\"metadata\":{", out);
    ok = ok && write_field(&w, &mfirst, "GGUF.version", 12, 0, 4, &v_version, false) &&
         write_field(&w, &mfirst, "GGUF.tensor_count", 17, 1, 8, &v_tensors, false) &&
         write_field(&w, &mfirst, "GGUF.kv_count", 13, 2, 8 + count_size, &v_kvs, false);
    for (size_t i = 0; ok && i < nkv; i++) {
        const gk_kv *kv = gk_kv_at(m, i);
        ok = write_field(&w, &mfirst, kv->key.ptr, kv->key.len, i + 3, kv->file_offset, &kv->value,
                         o->json_array);
    }
    if (ok) fputs("},\"tensors\":{", out);

    bool tfirst = true;
    for (size_t i = 0; ok && !o->no_tensors && i < nt; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        ok = write_member(&w, &tfirst, t->name.ptr, t->name.len, json_tensor(i, t));
    }
    if (ok) fputs("}}\n", out);
    free(w.buf);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Command                                                                  */
/* ------------------------------------------------------------------------ */

/* Reads the command line into o. @return : -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, dump_opts *o) {
    enum { OPT_JSON = 1, OPT_JSON_ARRAY, OPT_NO_TENSORS };
    static const cmd_option options[] = {
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { OPT_JSON_ARRAY, "--json-array", NULL, CMD_OPT_FLAG, NULL },
        { OPT_NO_TENSORS, "--no-tensors", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "dump", options, CMD_OPTS_DASHDASH, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        switch (id) {
        case CMD_OPTS_EXIT: return p.rc;
        case OPT_JSON: o->json = true; break;
        case OPT_JSON_ARRAY: o->json_array = true; break;
        case OPT_NO_TENSORS: o->no_tensors = true; break;
        default:
            if (o->path != NULL)
                return cmd_usage_error("dump", "one FILE only (got '%s' and '%s')", o->path, p.value);
            o->path = p.value;
        }
    }
    if (o->path == NULL) return cmd_usage_error("dump", "missing FILE");
    if (o->json_array && !o->json) return cmd_usage_error("dump", "--json-array needs --json");
    return -1;
}

int cmd_dump(int argc, char **argv) {
    dump_opts o = { 0 };
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;

    gk_error err;
    gk_error_clear(&err);
    gk_file *f = NULL;
    /* A misplaced data section does not hide the header listed here; it is
     * reported on stderr after the listing, and the exit status is 1. */
    gk_error placement;
    /* The readable listing shows the first elements of an array, JSON all of them. */
    int open_rc = cmd_open_listing(o.path, o.json ? GK_OPEN_DEFAULT : GK_OPEN_PREVIEW, &f, &placement);
    if (f == NULL) return open_rc;
    cmd_print_warnings(o.path, f);

    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    rc = GK_EXIT_OK;
    if (o.json) {
        if (!dump_json(stdout, f, &o)) {
            fflush(stdout);
            gk_error_set(&err, GK_E_NOMEM, -1, "out of memory while writing JSON");
            rc = cmd_report(o.path, &err);
        }
    } else {
        dump_text(stdout, f, &o);
        cmd_split_info_text(stdout, o.path, gk_file_model(f));   /* a shard: report its set */
    }
    gk_close(f);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ggufkit dump: error writing the output\n");
        rc = GK_EXIT_FAIL;
    }
    if (open_rc != GK_EXIT_OK) rc = cmd_report(o.path, &placement);
    return rc;
}
