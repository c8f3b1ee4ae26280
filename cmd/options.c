/*
 * options.c - the table-driven option parser every subcommand uses (see
 * options.h): `--opt=VALUE` and `--opt VALUE`, short names, `--`, and usage
 * errors that name the nearest valid option.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"

void cmd_opts_init(cmd_opts *p, const cmd_optspec *spec, int argc, char **argv) {
    memset(p, 0, sizeof *p);
    p->spec = spec;
    p->argc = argc;
    p->argv = argv;
    p->next = 1;
}

/* "ggufkit split: message" and the hint to use --help; the walk stops with 2. */
static int usage(cmd_opts *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage(cmd_opts *p, const char *fmt, ...) {
    const char *cmd = p->spec->cmd;
    va_list ap;
    fprintf(stderr, "ggufkit%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see `ggufkit%s%s --help`)\n", cmd ? " " : "", cmd ? cmd : "");
    p->rc = GK_EXIT_USAGE;
    return CMD_OPTS_EXIT;
}

void cmd_opts_list(const cmd_optspec *spec, FILE *out) {
    static const char *const kinds[] = { "flag", "value", "optional" };
    for (const cmd_option *o = spec->options; o && o->id; o++)
        fprintf(out, "%s\t%s\t%s\t%s\n", o->name ? o->name : "-", o->short_name ? o->short_name : "-",
                kinds[o->kind], o->placeholder ? o->placeholder : "-");
}

/* The row named word (its first n bytes, the whole of a name), or NULL. */
static const cmd_option *find(const cmd_optspec *spec, const char *word, size_t n) {
    for (const cmd_option *o = spec->options; o && o->id; o++) {
        if (o->name && strlen(o->name) == n && strncmp(o->name, word, n) == 0) return o;
        if (o->short_name && strlen(o->short_name) == n && strncmp(o->short_name, word, n) == 0) return o;
    }
    return NULL;
}

/* Edit distance of a[0..na) and b[0..nb), a swap of two neighbours counting as
 * one edit; words longer than 63 bytes count as far from everything. */
static size_t distance(const char *a, size_t na, const char *b, size_t nb) {
    enum { MAX = 64 };
    if (na >= MAX || nb >= MAX) return (size_t)-1;
    size_t d[MAX][MAX];
    for (size_t i = 0; i <= na; i++) d[i][0] = i;
    for (size_t j = 0; j <= nb; j++) d[0][j] = j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

/* The word without its leading dashes. */
static const char *body(const char *s, size_t *n) {
    size_t k = 0;
    while (k < *n && s[k] == '-') k++;
    *n -= k;
    return s + k;
}

const char *cmd_opts_nearest(const cmd_optspec *spec, const char *arg) {
    size_t n = strcspn(arg, "=");
    const char *w = body(arg, &n);
    if (n < 2) return NULL;   /* "-x": too short to guess from */
    /* a typo: at most one edit in 4 letters, and never more than 3 */
    size_t limit = n / 4 + 1 < 3 ? n / 4 + 1 : 3;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (const cmd_option *o = spec->options; o && o->id; o++) {
        const char *names[2] = { o->name, o->short_name };
        for (int k = 0; k < 2; k++) {
            if (names[k] == NULL) continue;
            size_t m = strlen(names[k]);
            const char *v = body(names[k], &m);
            if (m < 2) continue;
            size_t d = distance(w, n, v, m);
            if (d < best_d) best_d = d, best = o->name ? o->name : o->short_name;
        }
    }
    if (best == NULL && distance(w, n, "help", 4) <= limit) best = "--help";
    return best;
}

/* A word that is a (negative) number: a positional with CMD_OPTS_NUMBERS_ARE_ARGS. */
static bool is_number(const char *s) {
    if (*s == '-' || *s == '+') s++;
    if (!isdigit((unsigned char)*s)) return false;
    while (isdigit((unsigned char)*s)) s++;
    return *s == '\0';
}

/* -h or --help: the spec's help printed (the walk ends, status 0), else left
 * to the caller. */
static int help(cmd_opts *p) {
    if (p->spec->help == NULL) return CMD_OPTS_HELP;
    p->spec->help();
    p->rc = 0;
    return CMD_OPTS_EXIT;
}

static int unknown(cmd_opts *p, const char *arg) {
    const char *near = cmd_opts_nearest(p->spec, arg);
    if (near) return usage(p, "unknown option '%s' (did you mean %s?)", arg, near);
    return usage(p, "unknown option '%s'", arg);
}

/* The options of remote reading, which every subcommand takes without listing
 * them in its table: --header 'Name: value' (sent to the URL's host) and
 * --stats (requests and bytes fetched, on standard error at the end). */
static bool stats_wanted;

bool cmd_remote_stats_wanted(void) { return stats_wanted; }

/* @return : 1 when arg was a remote option (taken), 0 when not, or CMD_OPTS_EXIT. */
static int remote_option(cmd_opts *p, const char *arg, size_t n, const char *eq) {
    if (p->spec->cmd == NULL) return 0;
    if (n == 7 && strncmp(arg, "--stats", 7) == 0) {
        if (eq) return usage(p, "option '--stats' takes no value (got '%s')", arg);
        stats_wanted = true;
        return 1;
    }
    if (n != 8 || strncmp(arg, "--header", 8) != 0) return 0;
    const char *v = eq;
    if (v == NULL && p->next >= p->argc) return usage(p, "option '--header' needs a value: --header 'NAME: VALUE'");
    if (v == NULL) v = p->argv[p->next++];
    gk_error err;
    if (gk_remote_header(v, &err) != GK_OK) return usage(p, "--header: %s", err.message);
    return 1;
}

/* Reads an option word arg (p->next is past it): its row, its value. */
static int option(cmd_opts *p, const char *arg) {
    bool is_long = arg[1] == '-';
    size_t n = is_long ? strcspn(arg, "=") : strlen(arg);
    const cmd_option *o = find(p->spec, arg, n);
    const char *eq = arg[n] == '=' ? arg + n + 1 : NULL;
    if (o == NULL) {
        if (strcmp(arg, "-h") == 0) return help(p);
        if (n == 6 && strncmp(arg, "--help", 6) == 0) {
            if (eq) return usage(p, "option '--help' takes no value (got '%s')", arg);
            return help(p);
        }
        int taken = is_long ? remote_option(p, arg, n, eq) : 0;
        if (taken == 1) return cmd_opts_next(p);
        if (taken != 0) return taken;
        return unknown(p, arg);
    }
    p->name = o->name ? o->name : o->short_name;
    p->value = eq;
    switch (o->kind) {
    case CMD_OPT_FLAG:
        if (eq) return usage(p, "option '%s' takes no value (got '%s')", p->name, arg);
        break;
    case CMD_OPT_OPTIONAL:
        break;
    case CMD_OPT_VALUE:
        if (eq) break;
        if (p->next >= p->argc)
            return usage(p, "option '%s' needs a value: %s %s", p->name, p->name,
                         o->placeholder ? o->placeholder : "VALUE");
        p->value = p->argv[p->next++];
        break;
    }
    return o->id;
}

int cmd_opts_next(cmd_opts *p) {
    if (!p->started) {
        p->started = true;
        if (getenv("GGUFKIT_LIST_OPTIONS")) {
            cmd_opts_list(p->spec, stdout);
            p->rc = GK_EXIT_OK;
            return CMD_OPTS_EXIT;
        }
    }
    p->value = NULL;
    p->name = NULL;
    if (p->next >= p->argc) return CMD_OPTS_END;
    const char *arg = p->argv[p->next++];
    bool looks_like_option = arg[0] == '-' && arg[1] != '\0' &&
                             !((p->spec->flags & CMD_OPTS_NUMBERS_ARE_ARGS) && is_number(arg));
    if (p->options_done || !looks_like_option) {
        if (p->spec->flags & CMD_OPTS_STOP_AT_ARG) p->options_done = true;
        p->value = arg;
        return CMD_OPTS_ARG;
    }
    if (strcmp(arg, "--") == 0) {
        if (!(p->spec->flags & CMD_OPTS_DASHDASH)) return usage(p, "unknown option '--'");
        p->options_done = true;
        return cmd_opts_next(p);
    }
    return option(p, arg);
}
