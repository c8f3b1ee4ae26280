/*
 * util.c - reporting, number parsing and the terminal progress bar shared by
 * the subcommands.
 */
#include <ctype.h>
#include <inttypes.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cmd.h"

int cmd_report(const char *path, const gk_error *err) {
    if (err->file[0]) path = err->file;   /* the library knows better which file */
    /* a message that already starts with the path ("OUT: exists ...") names it once */
    size_t lp = path ? strlen(path) : 0;
    if (lp && strncmp(err->message, path, lp) == 0 && err->message[lp] == ':') path = NULL;
    fprintf(stderr, "ggufkit: ");
    if (path && *path) fprintf(stderr, "%s: ", path);
    if (err->offset >= 0) fprintf(stderr, "offset %lld: ", (long long)err->offset);
    fprintf(stderr, "%s\n", err->message[0] ? err->message : gk_status_name(err->code));
    return GK_EXIT_FAIL;
}

const char *cmd_error_text(const gk_error *err, char *buf, size_t size) {
    char at[32] = "";
    if (err->offset >= 0) snprintf(at, sizeof at, "offset %lld: ", (long long)err->offset);
    snprintf(buf, size, "%s%s%s%s", err->file, err->file[0] ? ": " : "", at,
             err->message[0] ? err->message : gk_status_name(err->code));
    return buf;
}

int cmd_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "ggufkit %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see `ggufkit %s --help`)\n", cmd);
    return GK_EXIT_USAGE;
}

const char *cmd_rule_name(gk_rule rule) {
    switch (rule) {
    case GK_RULE_SPEC: return "GGUF spec";
    case GK_RULE_LLAMACPP: return "llama.cpp loader";
    case GK_RULE_PYTHON: return "gguf python reader";
    case GK_RULE_SCHEMA: return "model schema";
    }
    return "?";
}

void cmd_print_warnings(const char *path, const gk_file *f) {
    size_t n = gk_file_warning_count(f);
    for (size_t i = 0; i < n; i++) {
        const gk_warning *w = gk_file_warning_at(f, i);
        fprintf(stderr, "ggufkit: ");
        if (path && *path) fprintf(stderr, "%s: ", path);
        fprintf(stderr, "warning: ");
        if (w->offset >= 0) fprintf(stderr, "offset %lld: ", (long long)w->offset);
        fprintf(stderr, "%s (rule: %s)\n", w->message, cmd_rule_name(w->rule));
    }
}

bool cmd_parse_u64(const char *s, uint64_t *out) {
    if (s == NULL || *s == '\0' || *s == '-' || isspace((unsigned char)*s)) return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *end != '\0') return false;
    *out = v;
    return true;
}

bool cmd_parse_size(const char *s, uint64_t *out) {
    if (s == NULL || !isdigit((unsigned char)*s)) return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0) return false;
    uint64_t unit = 1;
    if (*end == 'K' || *end == 'k') unit = 1000ULL, end++;
    else if (*end == 'M' || *end == 'm') unit = 1000ULL * 1000, end++;
    else if (*end == 'G' || *end == 'g') unit = 1000ULL * 1000 * 1000, end++;
    if (*end != '\0' || (v != 0 && unit > UINT64_MAX / v)) return false;
    *out = v * unit;
    return true;
}

double cmd_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void cmd_progress_start(cmd_progress *p, const char *label, uint64_t total) {
    memset(p, 0, sizeof *p);
    p->active = isatty(STDERR_FILENO) && getenv("GGUFKIT_NO_PROGRESS") == NULL;
    p->label = label;
    p->total = total;
    p->start = cmd_now();
}

static void draw(cmd_progress *p, double now) {
    const int width = 30;
    double frac = p->total ? (double)p->done / (double)p->total : 1.0;
    if (frac > 1.0) frac = 1.0;
    int fill = (int)(frac * width);
    double elapsed = now - p->start;
    double rate = elapsed > 0 ? (double)p->done / elapsed / 1e6 : 0.0;
    double eta = (rate > 0 && p->total > p->done) ? (double)(p->total - p->done) / 1e6 / rate : 0.0;
    fprintf(stderr, "\r%-10s [", p->label);
    for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %5.1f%% %8.1f MB/s ETA %4.0fs ", frac * 100.0, rate, eta);
    if (p->stats && p->stats->cloned > 0)
        fprintf(stderr, "cloned %.1f MB, copied %.1f MB ", (double)p->stats->cloned / 1e6,
                (double)p->stats->copied / 1e6);
    fflush(stderr);
    p->last_draw = now;
}

void cmd_progress_update(cmd_progress *p, uint64_t done) {
    p->done = done;
    if (!p->active) return;
    double now = cmd_now();
    if (now - p->last_draw >= 0.1) draw(p, now);
}

void cmd_progress_finish(cmd_progress *p) {
    if (!p->active) return;
    fprintf(stderr, "\r%*s\r", p->stats ? 120 : 80, "");
    fflush(stderr);
}

void cmd_clone_summary(const gk_write_stats *st) {
    if (st->cloned == 0) return;
    fprintf(stderr, "cloned %" PRIu64 " bytes (shared with the input, copy-on-write), copied %" PRIu64 " bytes\n",
            st->cloned, st->copied);
}

/* cJSON strings end at the first NUL, so a string holding NUL bytes is printed
 * piece by piece by cJSON and the pieces joined with the \u0000 escape. */
/* cJSON's quoted, escaped text of the n bytes at s (no NUL among them). */
static char *json_print_piece(const char *s, uint64_t n) {
    char *piece = strndup(s, n);
    if (piece == NULL) return NULL;
    cJSON *str = cJSON_CreateString(piece);
    free(piece);
    char *printed = str ? cJSON_PrintUnformatted(str) : NULL;
    cJSON_Delete(str);
    return printed;
}

static cJSON *json_string_with_nul(const char *s, uint64_t n) {
    size_t cap = 16, len = 0;
    char *text = malloc(cap);
    if (text == NULL) return NULL;
    text[len++] = '"';
    uint64_t start = 0;
    for (;;) {
        const char *nul = memchr(s + start, '\0', n - start);
        uint64_t end = nul ? (uint64_t)(nul - s) : n;
        char *printed = json_print_piece(s + start, end - start);
        if (printed == NULL) {
            free(text);
            return NULL;
        }
        size_t plen = strlen(printed) - 2;   /* without the quotes */
        size_t need = len + plen + 8;
        if (need > cap) {
            while (cap < need) cap *= 2;
            char *grown = realloc(text, cap);
            if (grown == NULL) {
                cJSON_free(printed);
                free(text);
                return NULL;
            }
            text = grown;
        }
        memcpy(text + len, printed + 1, plen);
        len += plen;
        cJSON_free(printed);
        if (nul == NULL) break;
        memcpy(text + len, "\\u0000", 6);
        len += 6;
        start = end + 1;
    }
    text[len++] = '"';
    text[len] = '\0';
    cJSON *raw = cJSON_CreateRaw(text);
    free(text);
    return raw;
}

struct cJSON *cmd_json_string(const char *s, uint64_t n) {
    if (!gk_utf8_valid(s, n)) {
        uint64_t len;
        char *fixed = gk_utf8_repair(s, n, GK_UTF8_REPAIR_MAXIMAL, &len);
        if (fixed == NULL) return NULL;
        cJSON *item = cmd_json_string(fixed, len);
        free(fixed);
        return item;
    }
    if (memchr(s, '\0', n) == NULL) return cJSON_CreateString(s);
    return json_string_with_nul(s, n);
}

int cmd_open_listing(const char *path, unsigned flags, gk_file **f, gk_error *placement) {
    gk_error err;
    gk_error_clear(placement);
    *f = NULL;
    flags |= GK_OPEN_WHOLE;   /* a partial download in a container fails as a cut plain file does */
    if (gk_open(path, flags, f, &err) == GK_OK) return GK_EXIT_OK;
    /* problems of the data's layout (also a tensor type whose size is unknown):
     * the lenient open lists them as warnings under the header */
    bool placement_only = err.code == GK_E_OFFSET_ALIGN || err.code == GK_E_DATA_EOF ||
                          err.code == GK_E_OVERLAP || err.code == GK_E_TENSOR_TYPE;
    if (!placement_only) return cmd_report(path, &err);
    *placement = err;
    if (gk_open(path, flags | GK_OPEN_LENIENT, f, &err) != GK_OK) return cmd_report(path, &err);
    return GK_EXIT_FAIL;
}

/* Interrupts (Ctrl-C, SIGTERM, SIGHUP) stop a write through its progress callback,
 * so the pipeline aborts and removes its temporary file. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
    (void)sig;
    interrupted = 1;
}

void cmd_catch_interrupts(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

bool cmd_interrupted(void) { return interrupted != 0; }

bool cmd_write_progress(void *ctx, uint64_t done, uint64_t total) {
    cmd_progress *p = ctx;
    p->total = total;
    cmd_progress_update(p, done);
    return !interrupted;
}
