/*
 * info.c - `ggufkit info`: a short summary of a GGUF file.
 *
 * Container facts (version, byte order, alignment, counts, data offset, file
 * size), what the model says it is (general.architecture, general.name,
 * general.file_type with its llama-quantize name), the parameter count (the sum of
 * all tensors' elements) and how the tensor bytes split by tensor type. `--json`
 * gives the same facts for programs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "options.h"
#include "json.h"

/* Tensors and bytes of one tensor type. A type ggufkit does not know has a row
 * of its own (its bytes unknown) for the first UNKNOWN_ROWS such ids; the ids
 * after them share the row of key OTHER_UNKNOWN. */
#define UNKNOWN_ROWS 8
#define OTHER_UNKNOWN UINT64_MAX
typedef struct type_usage {
    uint64_t type;              /* the type id, or OTHER_UNKNOWN */
    uint64_t tensors;
    uint64_t bytes;             /* 0 for an unknown type */
} type_usage;

/* Everything info reports, gathered once for both output forms. */
typedef struct info_facts {
    gk_file_facts file;
    gk_str arch, name;          /* ptr NULL when absent or not a string */
    bool has_ftype;
    uint64_t ftype;
    uint64_t params;
    bool params_overflow;       /* the sum does not fit 64 bits */
    uint64_t tensor_bytes;      /* of the tensors whose type is known */
    uint64_t unknown_size;      /* tensors of an unknown type: their size is unknown */
    type_usage usage[GK_TYPE_COUNT + UNKNOWN_ROWS + 1];
    size_t n_usage, n_unknown_rows;
    size_t n_warnings;
} info_facts;

static void print_help(void) {
    fputs(
            "usage: ggufkit info [--json] FILE\n"
            "\n"
            "Summarize a GGUF file: version, byte order, alignment, key/value and tensor\n"
            "counts, data offset, file size, architecture, name, file type (general.file_type\n"
            "and its llama-quantize name), parameter count and the bytes of each tensor type.\n"
            "\n"
            "options:\n"
            "  --json      write the same facts as one JSON object\n"
            "  -h, --help  show this help\n"
            "\n"
            "The reader's warnings (what llama.cpp or the gguf python reader would refuse)\n"
            "are listed too; they do not fail info. Tensor data that is misplaced (past the\n"
            "end of the file, as in a partial download; misaligned; overlapping) is listed\n"
            "and then fails info, since llama.cpp refuses to load such a file. So is a\n"
            "tensor of a type ggufkit does not know (a fork's or a newer ggml's): its row\n"
            "says \"unknown type N\", its bytes are unknown, and the data cannot be laid out.\n"
            "and then fails info, since llama.cpp refuses to load such a file. A partial\n"
            "download inside a container (.gguf.zst, ARCHIVE::MEMBER) fails the same way:\n"
            "a container that may be cut short is read to its end to find its real length.\n"
            CMD_STREAM_HELP
            "Exit status: 0 success, 1 the header is not valid GGUF, tensor data is\n"
            "misplaced or a tensor type is unknown (the error names the byte offset), 2\n"
            "usage error.\n", stdout);
}

/* A string value of key, or {NULL, 0} when absent or of another type. */
static gk_str string_key(const gk_model *m, const char *key) {
    gk_str s = { NULL, 0 };
    if (gk_kv_get_str(m, key, &s) != GK_OK) s.ptr = NULL;
    return s;
}

/* Adds a tensor to its type's row (rows keep first-seen order). */
static void count_type(info_facts *fx, uint32_t type, uint64_t bytes) {
    const bool known = gk_type_get(type) != NULL;
    for (size_t i = 0; i < fx->n_usage; i++)
        if (fx->usage[i].type == type) {
            fx->usage[i].tensors++;
            fx->usage[i].bytes += bytes;
            return;
        }
    uint64_t key = type;
    if (!known && fx->n_unknown_rows == UNKNOWN_ROWS) {
        key = OTHER_UNKNOWN;
        for (size_t i = 0; i < fx->n_usage; i++)
            if (fx->usage[i].type == key) {
                fx->usage[i].tensors++;
                return;
            }
    } else if (!known) {
        fx->n_unknown_rows++;
    }
    if (fx->n_usage < sizeof fx->usage / sizeof fx->usage[0])
        fx->usage[fx->n_usage++] = (type_usage){ key, 1, bytes };
}

/* Sorts rows by bytes, largest first (ties by type id). */
static int usage_cmp(const void *a, const void *b) {
    const type_usage *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return x->type < y->type ? -1 : x->type > y->type;
}

static void gather(gk_file *f, info_facts *fx) {
    const gk_model *m = gk_file_model(f);
    memset(fx, 0, sizeof *fx);
    gk_file_facts_of(f, &fx->file);
    fx->arch = string_key(m, "general.architecture");
    fx->name = string_key(m, "general.name");
    fx->has_ftype = gk_kv_get_uint(m, "general.file_type", &fx->ftype) == GK_OK;
    fx->n_warnings = gk_file_warning_count(f);
    for (size_t i = 0; i < fx->file.n_tensors; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        uint64_t elems = gk_tensor_elements(t, &fx->params_overflow);
        if (fx->params > UINT64_MAX - elems) fx->params_overflow = true;
        fx->params += elems;
        fx->tensor_bytes += t->nbytes;
        if (gk_type_get(t->type) == NULL) fx->unknown_size++;
        count_type(fx, t->type, t->nbytes);
    }
    qsort(fx->usage, fx->n_usage, sizeof fx->usage[0], usage_cmp);
}

/* "1.23 M"-style short form of a count (decimal units). */
static void short_count(char *buf, size_t size, uint64_t n) {
    static const char *units[] = { "", "K", "M", "B", "T" };
    double v = (double)n;
    int u = 0;
    while (v >= 1000.0 && u < 4) {
        v /= 1000.0;
        u++;
    }
    if (u == 0) snprintf(buf, size, "%" PRIu64, n);
    else snprintf(buf, size, "%.2f%s", v, units[u]);
}

/* "6.02 MiB"-style short form of a byte count (binary units). */
static void short_bytes(char *buf, size_t size, uint64_t n) {
    static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)n;
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        u++;
    }
    if (u == 0) snprintf(buf, size, "%" PRIu64 " B", n);
    else snprintf(buf, size, "%.2f %s", v, units[u]);
}

/* The row's type name: "Q4_K", "unknown type 99", "other unknown types". buf: 24 bytes. */
static const char *usage_name(uint64_t key, char buf[24]) {
    if (key == OTHER_UNKNOWN) return "other unknown types";
    return cmd_tensor_type_name((uint32_t)key, buf, 24);
}

static bool usage_known(const type_usage *u) {
    return u->type != OTHER_UNKNOWN && gk_type_get((uint32_t)u->type) != NULL;
}

static double share_of(uint64_t part, uint64_t whole) {
    return whole ? (double)part / (double)whole : 0.0;
}

/* Prints a string value bare, control bytes escaped; "-" when absent. */
static void print_gk_str(FILE *out, gk_str s) {
    if (s.ptr == NULL) {
        fputs("-", out);
        return;
    }
    for (uint64_t i = 0; i < s.len; i++) {
        unsigned char c = (unsigned char)s.ptr[i];
        if (c == '\n') fputs("\\n", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c < 0x20 || c == 0x7F) fprintf(out, "\\x%02x", c);
        else fputc(c, out);
    }
}

static void info_text(FILE *out, const char *path, gk_file *f, const info_facts *fx) {
    char a[32], b[32];
    fprintf(out, "file:          %s\n", path);
    fprintf(out, "version:       %" PRIu32 "\n", fx->file.version);
    fprintf(out, "byte order:    %s\n", fx->file.big_endian ? "big-endian" : "little-endian");
    fprintf(out, "alignment:     %" PRIu32 "\n", fx->file.alignment);
    fprintf(out, "kv pairs:      %zu\n", fx->file.n_kv);
    fprintf(out, "tensors:       %zu\n", fx->file.n_tensors);
    fprintf(out, "data offset:   %" PRIu64 "\n", fx->file.data_offset);
    short_bytes(a, sizeof a, fx->file.file_size);
    fprintf(out, "file size:     %" PRIu64 " (%s)\n", fx->file.file_size, a);
    fputs("architecture:  ", out);
    print_gk_str(out, fx->arch);
    fputs("\nname:          ", out);
    print_gk_str(out, fx->name);
    fputs("\nfile type:     ", out);
    if (fx->has_ftype) {
        const char *n = fx->ftype <= UINT32_MAX ? gk_ftype_name((uint32_t)fx->ftype) : NULL;
        fprintf(out, "%" PRIu64 " (%s)\n", fx->ftype, n ? n : "unknown");
    } else {
        fputs("-\n", out);
    }
    short_count(a, sizeof a, fx->params);
    if (fx->params_overflow) fputs("parameters:    more than 2^64\n", out);
    else if (fx->params < 1000) fprintf(out, "parameters:    %" PRIu64 "\n", fx->params);
    else fprintf(out, "parameters:    %" PRIu64 " (%s)\n", fx->params, a);
    short_bytes(b, sizeof b, fx->tensor_bytes);
    if (fx->tensor_bytes < 1024) fprintf(out, "tensor bytes:  %" PRIu64, fx->tensor_bytes);
    else fprintf(out, "tensor bytes:  %" PRIu64 " (%s)", fx->tensor_bytes, b);
    if (fx->unknown_size > 0)
        fprintf(out, " + %" PRIu64 " tensor%s of unknown type and size", fx->unknown_size,
                fx->unknown_size == 1 ? "" : "s");
    fputc('\n', out);
    if (fx->n_usage > 0) {
        int typew = 8;   /* "unknown type 99" is wider than every known name */
        for (size_t i = 0; i < fx->n_usage; i++) {
            char nbuf[24];
            int len = (int)strlen(usage_name(fx->usage[i].type, nbuf));
            if (len > typew) typew = len;
        }
        fprintf(out, "\n  %-*s  %8s  %14s  %7s\n", typew, "type", "tensors", "bytes", "share");
        for (size_t i = 0; i < fx->n_usage; i++) {
            const type_usage *u = &fx->usage[i];
            char nbuf[24];
            fprintf(out, "  %-*s  %8" PRIu64 "  ", typew, usage_name(u->type, nbuf), u->tensors);
            if (usage_known(u))
                fprintf(out, "%14" PRIu64 "  %6.2f%%\n", u->bytes, 100.0 * share_of(u->bytes, fx->tensor_bytes));
            else
                fprintf(out, "%14s  %7s\n", "unknown", "-");
        }
    }
    if (fx->n_warnings == 0) return;
    fprintf(out, "\nwarnings (%zu):\n", fx->n_warnings);
    for (size_t i = 0; i < fx->n_warnings; i++) {
        const gk_warning *w = gk_file_warning_at(f, i);
        if (w->offset >= 0) fprintf(out, "  offset %" PRId64 ": ", w->offset);
        else fputs("  ", out);
        fprintf(out, "%s (rule: %s)\n", w->message, cmd_rule_name(w->rule));
    }
}

static cJSON *json_opt_str(gk_str s) {
    return s.ptr ? cmd_json_string(s.ptr, s.len) : cJSON_CreateNull();
}

/* Attaches item to o under key, or deletes it when an earlier step failed or
 * this one fails (so every item made is either attached or freed). */
static void put(cJSON *o, const char *key, cJSON *item, bool *ok) {
    if (*ok && item != NULL && cJSON_AddItemToObject(o, key, item)) return;
    cJSON_Delete(item);
    *ok = false;
}

static cJSON *ftype_json(const info_facts *fx) {
    if (!fx->has_ftype) return cJSON_CreateNull();
    const char *n = fx->ftype <= UINT32_MAX ? gk_ftype_name((uint32_t)fx->ftype) : NULL;
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    put(o, "id", gk_json_u64(fx->ftype), &ok);
    put(o, "name", n ? cJSON_CreateString(n) : cJSON_CreateNull(), &ok);
    if (!ok) cJSON_Delete(o);
    return ok ? o : NULL;
}

static cJSON *usage_json(const info_facts *fx) {
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; list && i < fx->n_usage; i++) {
        const type_usage *u = &fx->usage[i];
        cJSON *row = cJSON_CreateObject();
        bool ok = row != NULL;
        char nbuf[24];
        const bool known = usage_known(u);
        put(row, "type", cJSON_CreateString(usage_name(u->type, nbuf)), &ok);
        put(row, "tensors", gk_json_u64(u->tensors), &ok);
        /* an unknown type's size is unknown: null */
        put(row, "bytes", known ? gk_json_u64(u->bytes) : cJSON_CreateNull(), &ok);
        put(row, "share", known ? cJSON_CreateNumber(share_of(u->bytes, fx->tensor_bytes)) : cJSON_CreateNull(),
            &ok);
        if (!ok || !cJSON_AddItemToArray(list, row)) {
            cJSON_Delete(row);
            cJSON_Delete(list);
            list = NULL;
        }
    }
    return list;
}

static cJSON *warnings_json(gk_file *f) {
    cJSON *list = cJSON_CreateArray();
    size_t n = gk_file_warning_count(f);
    for (size_t i = 0; list && i < n; i++) {
        const gk_warning *w = gk_file_warning_at(f, i);
        cJSON *row = cJSON_CreateObject();
        bool ok = row != NULL;
        put(row, "rule", cJSON_CreateString(cmd_rule_name(w->rule)), &ok);
        put(row, "offset", w->offset >= 0 ? gk_json_u64((uint64_t)w->offset) : cJSON_CreateNull(), &ok);
        put(row, "message", cJSON_CreateString(w->message), &ok);
        if (!ok || !cJSON_AddItemToArray(list, row)) {
            cJSON_Delete(row);
            cJSON_Delete(list);
            list = NULL;
        }
    }
    return list;
}

/* The facts as one JSON object. @return : NULL when out of memory. */
static cJSON *info_json(const char *path, gk_file *f, const info_facts *fx) {
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    put(o, "file", cJSON_CreateString(path), &ok);
    put(o, "version", gk_json_u64(fx->file.version), &ok);
    put(o, "endian", cJSON_CreateString(fx->file.big_endian ? "BIG" : "LITTLE"), &ok);
    put(o, "alignment", gk_json_u64(fx->file.alignment), &ok);
    put(o, "kv_count", gk_json_u64(fx->file.n_kv), &ok);
    put(o, "tensor_count", gk_json_u64(fx->file.n_tensors), &ok);
    put(o, "data_offset", gk_json_u64(fx->file.data_offset), &ok);
    put(o, "file_size", gk_json_u64(fx->file.file_size), &ok);
    put(o, "architecture", json_opt_str(fx->arch), &ok);
    put(o, "name", json_opt_str(fx->name), &ok);
    put(o, "file_type", ftype_json(fx), &ok);
    put(o, "parameters", fx->params_overflow ? cJSON_CreateNull() : gk_json_u64(fx->params), &ok);
    put(o, "tensor_bytes", gk_json_u64(fx->tensor_bytes), &ok);
    put(o, "tensors_of_unknown_size", gk_json_u64(fx->unknown_size), &ok);
    put(o, "tensor_types", usage_json(fx), &ok);
    put(o, "warnings", warnings_json(f), &ok);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int cmd_info(int argc, char **argv) {
    enum { OPT_JSON = 1 };
    static const cmd_option options[] = {
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "info", options, CMD_OPTS_DASHDASH, print_help };
    bool json = false;
    const char *path = NULL;
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        if (id == CMD_OPTS_EXIT) return p.rc;
        if (id == OPT_JSON) json = true;
        else if (path == NULL) path = p.value;
        else return cmd_usage_error("info", "one FILE only (got '%s' and '%s')", path, p.value);
    }
    if (path == NULL) return cmd_usage_error("info", "missing FILE");

    gk_error err;
    gk_error_clear(&err);
    gk_file *f = NULL;
    /* A misplaced data section does not hide the header (a partial download still
     * says what it is); the problem is listed as a warning and the exit status is 1. */
    gk_error placement;
    int open_rc = cmd_open_listing(path, GK_OPEN_PREVIEW, &f, &placement);   /* no array is listed whole */
    if (f == NULL) return open_rc;
    info_facts *fx = malloc(sizeof *fx);
    if (fx == NULL) {
        gk_close(f);
        gk_error_set(&err, GK_E_NOMEM, -1, "out of memory");
        return cmd_report(path, &err);
    }
    gather(f, fx);

    int rc = GK_EXIT_OK;
    if (json) {
        cJSON *doc = info_json(path, f, fx);
        if (doc) cJSON_AddItemToObject(doc, "split", cmd_split_info_json(path, gk_file_model(f)));
        char *text = doc ? cJSON_Print(doc) : NULL;
        if (text) {
            fputs(text, stdout);
            fputc('\n', stdout);
        } else {
            gk_error_set(&err, GK_E_NOMEM, -1, "out of memory while writing JSON");
            rc = cmd_report(path, &err);
        }
        cJSON_free(text);
        cJSON_Delete(doc);
    } else {
        info_text(stdout, path, f, fx);
        cmd_split_info_text(stdout, path, gk_file_model(f));
    }
    free(fx);
    gk_close(f);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ggufkit info: error writing the output\n");
        rc = GK_EXIT_FAIL;
    }
    if (open_rc != GK_EXIT_OK) rc = cmd_report(path, &placement);
    return rc;
}
