/*
 * verify.c - `ggufkit verify`: full validation of one or more files, one line per
 * finding, each naming whose rule it breaks (the GGUF spec, llama.cpp's loader,
 * the gguf python reader, or model conventions with --schema).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit verify [--schema] [--data] [--strict] [--json] FILE...\n\n"
    "Validates every byte of each file's header, metadata and tensor directory and the\n"
    "placement of tensor data, against the bytes really there: a compressed file or an\n"
    "archive member (ARCHIVE::MEMBER) is read to its end for that. Prints one line per\n"
    "finding:\n"
    "  FILE: offset N: error|warning: message (rule: GGUF spec | llama.cpp loader | gguf python reader)\n"
    "A file that cannot be read (missing, unreadable, a journal of an interrupted edit beside\n"
    "it) names no rule: \"FILE: error: message (not checked: ...)\"; in JSON its rule is null.\n"
    "  --schema   also check LLaMA-family conventions (required keys, tokenizer arrays,\n"
    "             tensor names and shapes)\n"
    "  --data     also read every tensor: its byte span must be its type times its shape,\n"
    "             F32/F16/BF16/F64 values and the scale fields of quantized blocks finite\n"
    "             (and in range where the format bounds them); each finding names the\n"
    "             tensor, the block or element and the byte offset\n"
    "  --strict   warnings fail too: a file valid by the spec that llama.cpp's loader\n"
    "             refuses (an array of arrays, tensor data not laid out back to back in\n"
    "             directory order, a 64-byte tensor name, ...) or that another reader\n"
    "             cannot decode is then invalid\n"
    "  --json     print the findings as JSON (a reader error carries its \"code\",\n"
    "             e.g. \"truncated\", \"duplicate-key\")\n"
    CMD_STREAM_HELP
    "Exit status 1 when any file is invalid (warnings alone do not fail without --strict).\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

/* A rule of NO_RULE: the error is not a finding about the file's bytes (it could
 * not be opened or read, a journal is beside it, ...): no rule is named. */
#define NO_RULE (-1)

/* The rule a reader error breaks, or NO_RULE when it is about the surroundings. */
static int error_rule(const gk_error *err) {
    return err->code >= GK_E_MAGIC && err->code <= GK_E_CORRUPT ? (int)err->rule : NO_RULE;
}

static void print_finding(const char *path, int64_t offset, const char *level, int rule, const char *msg) {
    printf("%s: ", path);
    if (offset >= 0) printf("offset %lld: ", (long long)offset);
    if (rule == NO_RULE) printf("%s: %s (not checked: no rule broken, the file could not be read)\n", level, msg);
    else printf("%s: %s (rule: %s)\n", level, msg, cmd_rule_name((gk_rule)rule));
}

/* code: the gk_status_name() of a reader error, or NULL (warnings, schema findings). */
static void add_json_finding(cJSON *list, int64_t offset, const char *level, int rule,
                             const char *code, const char *msg) {
    cJSON *o = cJSON_CreateObject();
    if (code) cJSON_AddStringToObject(o, "code", code);
    if (offset >= 0) cJSON_AddNumberToObject(o, "offset", (double)offset);
    else cJSON_AddNullToObject(o, "offset");
    cJSON_AddStringToObject(o, "level", level);
    if (rule == NO_RULE) cJSON_AddNullToObject(o, "rule");
    else cJSON_AddStringToObject(o, "rule", cmd_rule_name((gk_rule)rule));
    cJSON_AddStringToObject(o, "message", msg);
    cJSON_AddItemToArray(list, o);
}

/* Where the findings of verify --data go. */
typedef struct data_out {
    const char *path;
    cJSON *list;               /* JSON findings, or NULL for text */
    const gk_model *m;
    size_t n_warnings;
} data_out;

static bool on_data_finding(void *ctx, const gk_data_finding *d) {
    data_out *o = ctx;
    const char *level = d->is_error ? "error" : "warning";
    if (!d->is_error) o->n_warnings++;
    if (o->list == NULL) {
        print_finding(o->path, d->offset, level, GK_RULE_LLAMACPP, d->message);
        return true;
    }
    add_json_finding(o->list, d->offset, level, GK_RULE_LLAMACPP, NULL, d->message);
    cJSON *last = cJSON_GetArrayItem(o->list, cJSON_GetArraySize(o->list) - 1);
    cJSON_AddStringToObject(last, "tensor", gk_tensor_at(o->m, d->tensor)->name.ptr);
    if (d->block >= 0) cJSON_AddNumberToObject(last, "block", (double)d->block);
    return true;
}

/* verify --data on an opened file. @return : true when no error (with strict: no
 * warning either) was found. */
static bool verify_data(const char *path, gk_file *f, cJSON *jlist, bool strict) {
    data_out o = { path, jlist, gk_file_model(f), 0 };
    cmd_progress bar;
    cmd_progress_start(&bar, "verify", 0);
    size_t n_errors = 0;
    gk_error err;
    gk_status st = gk_verify_data(f, on_data_finding, &o, cmd_write_progress, &bar, &n_errors, &err);
    cmd_progress_finish(&bar);
    if (st != GK_OK) {
        if (jlist) add_json_finding(jlist, err.offset, "error", error_rule(&err), gk_status_name(err.code), err.message);
        else print_finding(path, err.offset, "error", error_rule(&err), err.message);
        return false;
    }
    return n_errors == 0 && !(strict && o.n_warnings > 0);
}

/* Set when a file named is this command's standard output (redirected onto
 * it): nothing more is printed there. */
static bool stdout_is_input;

/* Verifies one file; @return : true when it is valid. */
static bool verify_one(const char *path, bool schema, bool data, bool strict, cJSON *json_files) {
    gk_file *f = NULL;
    gk_error err;
    /* The schema reads tokenizer arrays whole; the reader's own checks need no array kept. */
    /* Streams are measured: their data is checked against the bytes really there. */
    gk_status st = gk_open(path, (schema ? GK_OPEN_DEFAULT : GK_OPEN_PREVIEW) | GK_OPEN_MEASURE, &f, &err);
    cJSON *jf = NULL, *jlist = NULL;
    if (json_files) {
        jf = cJSON_CreateObject();
        cJSON_AddStringToObject(jf, "file", path);
        jlist = cJSON_AddArrayToObject(jf, "findings");
        cJSON_AddItemToArray(json_files, jf);
    }
    bool ok = st == GK_OK;
    if (st == GK_E_SAME_FILE) {
        /* The file is this command's standard output: not a word into it. */
        cmd_report(path, &err);
        stdout_is_input = true;
        if (jf) cJSON_DetachItemViaPointer(json_files, jf), cJSON_Delete(jf);
        return false;
    }
    if (!ok) {
        if (jlist) add_json_finding(jlist, err.offset, "error", error_rule(&err), gk_status_name(err.code), err.message);
        else print_finding(path, err.offset, "error", error_rule(&err), err.message);
    } else {
        for (size_t i = 0; i < gk_file_warning_count(f); i++) {
            const gk_warning *w = gk_file_warning_at(f, i);
            if (jlist) add_json_finding(jlist, w->offset, "warning", w->rule, NULL, w->message);
            else print_finding(path, w->offset, "warning", w->rule, w->message);
        }
        if (strict && gk_file_warning_count(f) > 0) ok = false;
        if (schema) {
            gk_finding *findings = NULL;
            size_t n = 0;
            gk_schema_check(gk_file_model(f), &findings, &n);
            for (size_t i = 0; i < n; i++) {
                const char *level = findings[i].is_error ? "error" : "warning";
                if (findings[i].is_error || strict) ok = false;
                if (jlist) add_json_finding(jlist, -1, level, GK_RULE_SCHEMA, NULL, findings[i].message);
                else print_finding(path, -1, level, GK_RULE_SCHEMA, findings[i].message);
            }
            gk_findings_free(findings);
        }
        if (data && !verify_data(path, f, jlist, strict)) ok = false;
        if (gk_model_is_shard(gk_file_model(f))) {
            /* A shard is only loadable with its whole set: check the set too. */
            gk_split_set *set = NULL;
            gk_error serr;
            char msg[GK_ERROR_FILE_MAX + GK_MESSAGE_MAX + 64], text[GK_ERROR_FILE_MAX + GK_MESSAGE_MAX];
            if (gk_split_set_open(path, GK_OPEN_DEFAULT, &set, &serr) != GK_OK) {
                ok = false;
                snprintf(msg, sizeof msg, "shard set: %s", cmd_error_text(&serr, text, sizeof text));
                if (jlist) add_json_finding(jlist, -1, "error", GK_RULE_LLAMACPP, gk_status_name(serr.code), msg);
                else print_finding(path, -1, "error", GK_RULE_LLAMACPP, msg);
            } else if (jlist == NULL) {
                printf("%s: shard set %s: complete, %zu shards, %llu tensors\n", path,
                       gk_split_set_prefix(set), gk_split_set_count(set),
                       (unsigned long long)gk_split_set_tensor_count(set));
            }
            gk_split_set_close(set);
        }
    }
    if (jf) cJSON_AddBoolToObject(jf, "valid", ok);
    else if (ok) printf("%s: ok\n", path);
    else if (strict && st == GK_OK && gk_file_warning_count(f) > 0)
        printf("%s: not ok under --strict (%zu warning%s)\n", path, gk_file_warning_count(f),
               gk_file_warning_count(f) == 1 ? "" : "s");
    gk_close(f);
    return ok;
}

int cmd_verify(int argc, char **argv) {
    bool schema = false, json = false, data = false, strict = false;
    enum { OPT_SCHEMA = 1, OPT_JSON, OPT_DATA, OPT_STRICT };
    static const cmd_option options[] = {
        { OPT_SCHEMA, "--schema", NULL, CMD_OPT_FLAG, NULL },
        { OPT_DATA, "--data", NULL, CMD_OPT_FLAG, NULL },
        { OPT_STRICT, "--strict", NULL, CMD_OPT_FLAG, NULL },
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "verify", options, CMD_OPTS_DASHDASH | CMD_OPTS_STOP_AT_ARG, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    int first = argc, id;
    while (first == argc && (id = cmd_opts_next(&p)) != CMD_OPTS_END) {
        switch (id) {
        case CMD_OPTS_EXIT: return p.rc;
        case OPT_SCHEMA: schema = true; break;
        case OPT_JSON: json = true; break;
        case OPT_DATA: data = true; break;
        case OPT_STRICT: strict = true; break;
        default: first = p.next - 1;   /* the first FILE: the rest are files too */
        }
    }
    if (first >= argc) return cmd_usage_error("verify", "no file given");
    cJSON *root = json ? cJSON_CreateObject() : NULL;
    cJSON *files = root ? cJSON_AddArrayToObject(root, "files") : NULL;
    bool all_ok = true;
    /* A FILE that is standard output redirected onto it: verify prints its
     * findings there, so nothing is printed at all. */
    struct stat out_sb;
    if (fstat(STDOUT_FILENO, &out_sb) == 0 && S_ISREG(out_sb.st_mode))
        for (int i = first; i < argc; i++)
            if (gk_same_file(argv[i], "/dev/stdout")) {
                fprintf(stderr, "ggufkit: %s: is also this command's standard output (redirected to it): "
                                "refusing to read a file it writes\n", argv[i]);
                cJSON_Delete(root);
                return GK_EXIT_FAIL;
            }
    for (int i = first; i < argc; i++) all_ok &= verify_one(argv[i], schema, data, strict, files);
    if (root && !stdout_is_input) {
        cJSON_AddBoolToObject(root, "valid", all_ok);
        char *text = cJSON_Print(root);
        puts(text);
        cJSON_free(text);
    }
    cJSON_Delete(root);
    return all_ok ? GK_EXIT_OK : GK_EXIT_FAIL;
}
