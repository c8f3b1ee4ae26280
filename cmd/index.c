/*
 * index.c - `ggufkit index`: catalogue the GGUF files under some folders in a
 * SQLite database (gk_index_run); print what the run did, as one line or JSON.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit index [--db PATH] [--jobs N] [--full-arrays] [--prune] [--hash] [--json]\n"
    "                     [--urls FILE] PATH...\n\n"
    "Records the header of every GGUF file under each PATH (folders are walked\n"
    "recursively) in a SQLite database: plain .gguf files (any file starting with the\n"
    "GGUF magic), .gguf.zst streams, and each GGUF member of a tar / tar.gz / tar.xz /\n"
    "tar.zst / zip / 7z archive. Tensor data is read only with --hash. Tables files, kv,\n"
    "tensors, models (shard sets grouped), views model_summary, quant_mix and\n"
    "same_weights: see docs/index.md.\n\n"
    "A file whose size and modification time are unchanged since the last run is not\n"
    "read again; a broken file is recorded with the reader's error and the run goes on\n"
    "(an archive or .gguf.zst cut short is broken too). Folders are walked at any depth;\n"
    "a path left out (a folder that cannot be read, a path longer than PATH_MAX) is\n"
    "reported on stderr, with why.\n\n"
    "A PATH may be a URL (http(s)://... or hf://OWNER/REPO/PATH[@REVISION]): its header\n"
    "is fetched with Range requests, several URLs at a time; a URL whose size and ETag\n"
    "(or Last-Modified) are unchanged since the last run costs one small request.\n\n"
    "options:\n"
    "  --db PATH       the database (default ./ggufkit.sqlite; created when missing)\n"
    "  -j, --jobs N    parse headers in N threads (default: all cores)\n"
    "  --full-arrays   store metadata arrays whole (default: their first 8 elements)\n"
    "  --prune         remove the rows of files that no longer exist\n"
    "  --hash          also read the tensor data: each tensor's xxh64, the file's content\n"
    "                  hash (`ggufkit hash`'s model line) and each model's weight digest,\n"
    "                  so the view same_weights finds files holding the same weights;\n"
    "                  files recorded without them are read again\n"
    "  --json          print the counts as JSON instead of a one-line summary\n"
    "  --urls FILE     also index the URLs (or paths) listed in FILE, one a line\n"
    "                  (blank lines and lines starting with # are skipped)\n"
    "  -h, --help      show this help\n\n"
    "Exit status: 0 success (broken files are data, not failures), 1 the database\n"
    "cannot be written or a PATH does not exist, 2 usage error.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

typedef struct index_args {
    const char *db;
    int jobs;
    bool full_arrays, prune, json, hash;
    const char **paths;
    size_t n_paths;
    const char *urls;          /* --urls FILE */
    char *urls_text;           /* its contents: the lines paths point into */
} index_args;

/* Reads the command line. @return : -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, index_args *a) {
    enum { OPT_DB = 1, OPT_JOBS, OPT_FULL_ARRAYS, OPT_HASH, OPT_PRUNE, OPT_JSON, OPT_URLS };
    static const cmd_option options[] = {
        { OPT_DB, "--db", NULL, CMD_OPT_VALUE, "PATH" },
        { OPT_JOBS, "--jobs", "-j", CMD_OPT_VALUE, "N" },
        { OPT_FULL_ARRAYS, "--full-arrays", NULL, CMD_OPT_FLAG, NULL },
        { OPT_PRUNE, "--prune", NULL, CMD_OPT_FLAG, NULL },
        { OPT_HASH, "--hash", NULL, CMD_OPT_FLAG, NULL },
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { OPT_URLS, "--urls", NULL, CMD_OPT_VALUE, "FILE" },
        { 0 },
    };
    static const cmd_optspec spec = { "index", options, CMD_OPTS_DASHDASH, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *v = p.value;
        uint64_t n;
        switch (id) {
        case CMD_OPTS_EXIT: return p.rc;
        case OPT_DB:
            if (*v == '\0') return cmd_usage_error("index", "--db needs a PATH");
            a->db = v;
            break;
        case OPT_JOBS:
            if (!cmd_parse_u64(v, &n) || n < 1 || n > 1024)
                return cmd_usage_error("index", "--jobs needs a number from 1 to 1024");
            a->jobs = (int)n;
            break;
        case OPT_FULL_ARRAYS: a->full_arrays = true; break;
        case OPT_HASH: a->hash = true; break;
        case OPT_PRUNE: a->prune = true; break;
        case OPT_JSON: a->json = true; break;
        case OPT_URLS: a->urls = v; break;
        default: a->paths[a->n_paths++] = v;
        }
    }
    if (a->n_paths == 0 && a->urls == NULL) return cmd_usage_error("index", "missing PATH");
    return -1;
}

/* Appends the lines of the --urls file to a->paths. @return : -1 to go on, else an exit code. */
static int read_urls(index_args *a) {
    int fd = gk_inputs_open(a->urls);
    if (fd < 0) {
        fprintf(stderr, "ggufkit: %s: cannot open: %s\n", a->urls, strerror(errno));
        return GK_EXIT_FAIL;
    }
    size_t len = 0, cap = 0;
    char *text = NULL;
    for (;;) {
        if (len + 1 >= cap) {
            char *t = realloc(text, cap = cap ? cap * 2 : 4096);
            if (t == NULL) break;
            text = t;
        }
        ssize_t n = read(fd, text + len, cap - len - 1);
        if (n <= 0) break;
        len += (size_t)n;
    }
    close(fd);
    if (text == NULL) return GK_EXIT_FAIL;
    text[len] = '\0';
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    const char **grown = realloc(a->paths, (a->n_paths + lines + 1) * sizeof *grown);
    if (grown == NULL) {
        free(text);
        return GK_EXIT_FAIL;
    }
    a->paths = grown;
    a->urls_text = text;
    for (char *line = strtok(text, "\r\n"); line; line = strtok(NULL, "\r\n")) {
        while (*line == ' ' || *line == '\t') line++;
        if (*line && *line != '#') a->paths[a->n_paths++] = line;
    }
    return -1;
}

/* A JSON number item of a count. */
static bool add_count(cJSON *obj, const char *name, uint64_t v) {
    return cJSON_AddNumberToObject(obj, name, (double)v) != NULL;
}

/* Prints the counts as one JSON object. @return : false when out of memory. */
static bool print_json(const index_args *a, const gk_index_stats *s, double seconds) {
    cJSON *obj = cJSON_CreateObject();
    bool ok = obj != NULL && cJSON_AddStringToObject(obj, "db", a->db) != NULL &&
              add_count(obj, "files_seen", s->files_seen) && add_count(obj, "added", s->added) &&
              add_count(obj, "updated", s->updated) && add_count(obj, "unchanged", s->unchanged) &&
              add_count(obj, "broken", s->broken) && add_count(obj, "removed", s->removed) &&
              add_count(obj, "vanished", s->vanished) && add_count(obj, "headers_read", s->headers_read) &&
              add_count(obj, "not_gguf", s->not_gguf) && add_count(obj, "rows", s->rows) &&
              add_count(obj, "models", s->models) && add_count(obj, "left_out", s->left_out) &&
              cJSON_AddNumberToObject(obj, "seconds", (double)(int64_t)(seconds * 1000) / 1000.0) != NULL;
    char *text = ok ? cJSON_Print(obj) : NULL;
    cJSON_Delete(obj);
    if (text == NULL) return false;
    puts(text);
    cJSON_free(text);
    return true;
}

/* A path the walk left out: one line on stderr. */
static void report_left_out(void *ctx, const char *path, const char *why) {
    (void)ctx;
    fprintf(stderr, "ggufkit: %s: left out: %s\n", path, why);
}

int cmd_index(int argc, char **argv) {
    index_args a = { .db = "ggufkit.sqlite" };
    a.paths = calloc((size_t)argc + 1, sizeof *a.paths);
    if (a.paths == NULL) {
        fprintf(stderr, "ggufkit index: out of memory\n");
        return GK_EXIT_FAIL;
    }
    int rc = parse_args(argc, argv, &a);
    if (rc < 0 && a.urls) rc = read_urls(&a);
    if (rc >= 0) {
        free(a.paths);
        free(a.urls_text);
        return rc;
    }
    cmd_catch_interrupts();
    cmd_progress bar;
    cmd_progress_start(&bar, "index", 0);
    gk_index_opts opts = { GK_OPTS_INIT(gk_index_opts),
        .jobs = a.jobs, .full_arrays = a.full_arrays, .prune = a.prune, .hash = a.hash,
        .progress = cmd_write_progress, .progress_ctx = &bar, .left_out = report_left_out,
    };
    gk_index_stats stats;
    gk_error err;
    gk_error_clear(&err);
    double start = cmd_now();
    gk_status st = gk_index_run(a.db, a.paths, a.n_paths, &opts, &stats, &err);
    double seconds = cmd_now() - start;
    cmd_progress_finish(&bar);
    rc = GK_EXIT_OK;
    if (st != GK_OK) {
        rc = cmd_report(NULL, &err);
    } else if (a.json) {
        if (!print_json(&a, &stats, seconds)) {
            fprintf(stderr, "ggufkit index: out of memory\n");
            rc = GK_EXIT_FAIL;
        }
    } else {
        printf("%s: %llu added, %llu updated, %llu unchanged, %llu broken, %llu removed",
               a.db, (unsigned long long)stats.added, (unsigned long long)stats.updated,
               (unsigned long long)stats.unchanged, (unsigned long long)stats.broken,
               (unsigned long long)stats.removed);
        if (stats.vanished && !a.prune)
            printf(", %llu vanished (kept; --prune removes them)", (unsigned long long)stats.vanished);
        if (stats.left_out) printf(", %llu paths left out (see above)", (unsigned long long)stats.left_out);
        printf("; %llu files, %llu models in the index (%.2fs)\n", (unsigned long long)stats.rows,
               (unsigned long long)stats.models, seconds);
    }
    free(a.paths);
    free(a.urls_text);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ggufkit index: error writing the output\n");
        rc = GK_EXIT_FAIL;
    }
    return rc;
}
