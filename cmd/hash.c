/*
 * hash.c - `ggufkit hash`: per-tensor and whole-model digests as llama.cpp's
 * llama-gguf-hash prints them (same lines, order and values), a manifest
 * check, and what it cannot do: big-endian files (--canonical), shard sets
 * (--set), compressed files and archive members, several files, --json.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit hash [--xxh64] [--sha1] [--sha256] [--all] [--uuid] [--no-layer]\n"
    "                    [--check MANIFEST] [--canonical] [--set] [--json] FILE...\n\n"
    "Prints the digest of every tensor's data and of all tensor data in file order (the\n"
    "model's identity: metadata edits do not change it), as llama-gguf-hash does:\n"
    "  KIND      HEX  FILE:TENSOR      and      KIND      HEX  FILE\n"
    "  --xxh64 --sha1 --sha256   digests to compute (default: xxh64)\n"
    "  --all          xxh64, sha1 and sha256\n"
    "  --uuid         the model's UUIDv5 (llama.cpp's namespace)\n"
    "  --no-layer     whole-model lines only\n"
    "  -c, --check MANIFEST   compare with a manifest (this command's or llama-gguf-hash's\n"
    "                 output): each line ends in Ok, Mismatch or Not Found; without a digest\n"
    "                 option the strongest in the manifest is used. Exit 1 on a mismatch, a\n"
    "                 tensor missing from the manifest or from the file.\n"
    "  --canonical    hash big-endian files as their little-endian form (a model and its\n"
    "                 byte-swapped copy then have one identity); default: bytes as stored\n"
    "  --set          a shard names its whole set, hashed as one model (equal to the merged\n"
    "                 file's model lines)\n"
    "  --json         print the digests (and verdicts) as JSON\n"
    "A name (FILE or FILE:TENSOR) holding a blank, a control byte or a backslash is\n"
    "escaped as sha256sum escapes names, so that --check reads every line back: the line\n"
    "starts with a backslash, and in the name \\\\ is a backslash, \\s a space, \\t a tab,\n"
    "\\n a newline, \\r a carriage return, \\xHH another blank or control byte. Other\n"
    "names are printed as they are (llama-gguf-hash's lines).\n"
    "FILE may be a .gguf.zst or ARCHIVE::MEMBER. Exit status: 0 success, 1 failure, 2 usage.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

typedef struct hash_cli {
    gk_hash_opts opts;
    bool set, json;
    const char *manifest_path;
    gk_manifest *manifest;
    cJSON *jfiles;
    bool all_passed;
} hash_cli;

static const char *verdict_name(gk_verdict v) {
    return v == GK_VERDICT_OK ? "Ok" : v == GK_VERDICT_MISMATCH ? "Mismatch" : "Not Found";
}

/* Prints (or adds to JSON) the lines of one hashed model. */
/* "KIND  HEX  NAME" without its newline (HEX NULL: "KIND  NAME"), NAME being
 * label or label:tensor, escaped when it must be (gk_manifest_name_escape: the
 * line then starts with a backslash) so that --check reads every line back. */
static void print_line(const char *kind, const char *hex, const char *label, const char *tensor) {
    size_t need = strlen(label) + (tensor ? strlen(tensor) + 2 : 1);
    char *name = malloc(need), *field = NULL;
    bool escaped = false;
    if (name) {
        snprintf(name, need, "%s%s%s", label, tensor ? ":" : "", tensor ? tensor : "");
        field = gk_manifest_name_escape(name, &escaped);
    }
    const char *shown = field ? field : label;   /* out of memory: the label as it is */
    if (hex) printf("%s%-8s  %s  %s", escaped ? "\\" : "", kind, hex, shown);
    else printf("%s%-8s  %s", escaped ? "\\" : "", kind, shown);
    free(field);
    free(name);
}

static void emit(hash_cli *c, const char *label, const gk_hash_result *r, const gk_hash_line *lines,
                 size_t n, const gk_check_summary *sum) {
    cJSON *jf = NULL, *jt = NULL, *jm = NULL;
    if (c->json) {
        jf = cJSON_CreateObject();
        cJSON_AddStringToObject(jf, "file", label);
        jt = c->opts.no_tensors ? NULL : cJSON_AddArrayToObject(jf, "tensors");
        jm = cJSON_AddObjectToObject(jf, "model");
        cJSON_AddItemToArray(c->jfiles, jf);
        for (size_t t = 0; jt && t < r->n_tensors; t++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", r->names[t]);
            cJSON_AddItemToArray(jt, o);
        }
    }
    for (size_t i = 0; i < n; i++) {
        const gk_hash_line *l = &lines[i];
        const gk_hash_value *v = l->tensor < 0 ? &r->model[l->kind] : &r->tensors[l->tensor][l->kind];
        char hex[GK_HASH_HEX_MAX];
        gk_hash_hex(l->kind, v, hex);
        const char *kind = gk_hash_kind_name(l->kind);
        if (c->json) {
            cJSON *o = l->tensor < 0 ? jm : cJSON_GetArrayItem(jt, (int)l->tensor);
            cJSON_AddStringToObject(o, kind, hex);
            if (sum) {
                cJSON *vo = cJSON_GetObjectItemCaseSensitive(o, "verdict");
                if (vo == NULL) vo = cJSON_AddObjectToObject(o, "verdict");
                cJSON_AddStringToObject(vo, kind, verdict_name(l->verdict));
            }
            continue;
        }
        print_line(kind, hex, label, l->tensor < 0 ? NULL : r->names[l->tensor]);
        if (sum) printf("  -  %s", verdict_name(l->verdict));
        putchar('\n');
    }
    if (sum == NULL) return;
    for (size_t i = 0; i < sum->n_absent; i++) {
        if (c->json) {
            cJSON *a = cJSON_GetObjectItemCaseSensitive(jf, "absent");
            if (a == NULL) a = cJSON_AddArrayToObject(jf, "absent");
            cJSON_AddItemToArray(a, cJSON_CreateString(sum->absent[i]));
        } else {
            print_line("tensor", NULL, sum->absent[i], NULL);
            fputs("  -  Missing From File\n", stdout);
        }
    }
    if (jf) cJSON_AddBoolToObject(jf, "passed", sum->passed);
}

/* Hashes one FILE argument. @return : false on failure (reported). */
static bool hash_one(hash_cli *c, const char *path) {
    gk_file *f = NULL;
    gk_split_set *set = NULL;
    gk_error err;
    if (gk_open(path, GK_OPEN_DEFAULT, &f, &err) != GK_OK) {
        cmd_report(path, &err);
        return false;
    }
    if (c->set && gk_model_is_shard(gk_file_model(f)) &&
        gk_split_set_open(path, GK_OPEN_DEFAULT, &set, &err) != GK_OK) {
        cmd_report(path, &err);
        gk_close(f);
        return false;
    }
    cmd_progress bar;
    cmd_progress_start(&bar, "hash", 0);
    gk_hash_opts o = c->opts;
    o.progress = cmd_write_progress;
    o.progress_ctx = &bar;
    gk_hash_result r;
    gk_status st = set ? gk_hash_set(set, &o, &r, &err) : gk_hash_file(f, &o, &r, &err);
    cmd_progress_finish(&bar);
    gk_hash_line *lines = NULL;
    size_t n = 0;
    gk_check_summary sum = { 0 };
    if (st == GK_OK) st = gk_hash_lines(&r, o.no_tensors, &lines, &n, &err);
    if (st == GK_OK && c->manifest) st = gk_hash_check(c->manifest, path, &r, lines, n, &sum, &err);
    bool ok = st == GK_OK;
    if (ok) {
        emit(c, path, &r, lines, n, c->manifest ? &sum : NULL);
        if (c->manifest && !sum.passed) c->all_passed = false;
    } else {
        cmd_report(path, &err);
    }
    gk_check_summary_free(&sum);
    free(lines);
    gk_hash_result_free(&r);
    gk_split_set_close(set);
    gk_close(f);
    return ok;
}

/* The header line of a check: the manifest and the kinds it holds, strongest first. */
static void print_manifest_header(const hash_cli *c) {
    static const gk_hash_kind order[GK_HASH_KINDS] = { GK_HASH_SHA256, GK_HASH_SHA1, GK_HASH_XXH64, GK_HASH_UUID };
    printf("manifest  %s", c->manifest_path);
    for (int i = 0; i < GK_HASH_KINDS; i++)
        if (gk_manifest_kinds(c->manifest) & GK_HASH_BIT(order[i])) printf("  %s", gk_hash_kind_name(order[i]));
    putchar('\n');
}

int cmd_hash(int argc, char **argv) {
    hash_cli c = { .opts = { GK_OPTS_INIT(gk_hash_opts) }, .all_passed = true };
    /* the digest options' ids are 1 + their gk_hash_kind; the table names every kind */
    enum { OPT_XXH64 = 1 + GK_HASH_XXH64, OPT_SHA1 = 1 + GK_HASH_SHA1, OPT_SHA256 = 1 + GK_HASH_SHA256,
           OPT_UUID = 1 + GK_HASH_UUID, OPT_ALL = 1 + GK_HASH_KINDS, OPT_NO_LAYER, OPT_CANONICAL, OPT_SET,
           OPT_JSON, OPT_CHECK };
    _Static_assert(GK_HASH_KINDS == 4, "a new digest kind needs its row in hash's options");
    static const cmd_option options[] = {
        { OPT_XXH64, "--xxh64", NULL, CMD_OPT_FLAG, NULL },
        { OPT_SHA1, "--sha1", NULL, CMD_OPT_FLAG, NULL },
        { OPT_SHA256, "--sha256", NULL, CMD_OPT_FLAG, NULL },
        { OPT_UUID, "--uuid", NULL, CMD_OPT_FLAG, NULL },
        { OPT_ALL, "--all", NULL, CMD_OPT_FLAG, NULL },
        { OPT_NO_LAYER, "--no-layer", NULL, CMD_OPT_FLAG, NULL },
        { OPT_CHECK, "--check", "-c", CMD_OPT_VALUE, "MANIFEST" },
        { OPT_CANONICAL, "--canonical", NULL, CMD_OPT_FLAG, NULL },
        { OPT_SET, "--set", NULL, CMD_OPT_FLAG, NULL },
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "hash", options, CMD_OPTS_DASHDASH | CMD_OPTS_STOP_AT_ARG, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    int first = argc, id;
    while (first == argc && (id = cmd_opts_next(&p)) != CMD_OPTS_END) {
        switch (id) {
        case CMD_OPTS_EXIT: return p.rc;
        case OPT_XXH64: case OPT_SHA1: case OPT_SHA256: case OPT_UUID:
            c.opts.kinds |= GK_HASH_BIT(id - 1);
            break;
        case OPT_ALL:
            c.opts.kinds |= GK_HASH_BIT(GK_HASH_XXH64) | GK_HASH_BIT(GK_HASH_SHA1) | GK_HASH_BIT(GK_HASH_SHA256);
            break;
        case OPT_NO_LAYER: c.opts.no_tensors = true; break;
        case OPT_CANONICAL: c.opts.canonical = true; break;
        case OPT_SET: c.set = true; break;
        case OPT_JSON: c.json = true; break;
        case OPT_CHECK: c.manifest_path = p.value; break;
        default: first = p.next - 1;   /* the first FILE: the rest are files too */
        }
    }
    if (first >= argc) return cmd_usage_error("hash", "no file given");
    if (c.manifest_path) {
        gk_error err;
        if (gk_manifest_load(c.manifest_path, &c.manifest, &err) != GK_OK) return cmd_report(NULL, &err);
        if (c.opts.kinds == 0) c.opts.kinds = GK_HASH_BIT(gk_manifest_strongest(c.manifest));
        if (!c.json) print_manifest_header(&c);
    }
    if (c.opts.kinds == 0) c.opts.kinds = GK_HASH_BIT(GK_HASH_XXH64);
    cJSON *root = c.json ? cJSON_CreateObject() : NULL;
    if (root && c.manifest_path) cJSON_AddStringToObject(root, "manifest", c.manifest_path);
    c.jfiles = root ? cJSON_AddArrayToObject(root, "files") : NULL;
    bool all_ok = true;
    for (int i = first; i < argc; i++) all_ok &= hash_one(&c, argv[i]);
    bool passed = all_ok && c.all_passed;
    if (root) {
        if (c.manifest) cJSON_AddBoolToObject(root, "passed", passed);
        char *text = cJSON_Print(root);
        puts(text);
        cJSON_free(text);
        cJSON_Delete(root);
    } else if (c.manifest) {
        printf("\nVerification results for %s - %s\n", c.manifest_path, passed ? "Success" : "Failure");
    }
    gk_manifest_free(c.manifest);
    return passed ? GK_EXIT_OK : GK_EXIT_FAIL;
}
