/*
 * options.h - the one command-line parser of every subcommand (cmd/options.c).
 *
 * A subcommand describes its options in a table (cmd_option rows ending with a
 * row of id 0) and walks its arguments with cmd_opts_next, which returns the id
 * of each option met, CMD_OPTS_ARG for a positional argument, and stops at the
 * end, at -h/--help, or at a usage error it has already printed. Long options
 * take their value as `--opt=VALUE` or `--opt VALUE`; short ones as `-o VALUE`.
 * An unknown option is refused with the nearest valid spelling ("did you mean
 * --split-max-size?"); a flag given a value and a valued option without one are
 * refused too. All of these are usage errors (exit status 2).
 *
 * With GGUFKIT_LIST_OPTIONS set in the environment, the first cmd_opts_next
 * prints the table instead (one option a line: long name, short name, "flag",
 * "value" or "optional", the value's placeholder; "-" for an empty field) and
 * stops with exit status 0: the CLI tests compare it with the --help text.
 */
#ifndef GK_CMD_OPTIONS_H
#define GK_CMD_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* What an option takes. */
typedef enum cmd_opt_kind {
    CMD_OPT_FLAG,       /* nothing: `--opt=X` is refused */
    CMD_OPT_VALUE,      /* one value: `--opt=X` or `--opt X` (`-o X` for a short name) */
    CMD_OPT_OPTIONAL    /* a value only after '=': `--opt` or `--opt=X` */
} cmd_opt_kind;

/* One row of a subcommand's table. */
typedef struct cmd_option {
    int id;                    /* > 0: what cmd_opts_next returns for it; 0 ends the table */
    const char *name;          /* "--split-max-size"; NULL when only the short name exists */
    const char *short_name;    /* "-t", or NULL */
    cmd_opt_kind kind;
    const char *placeholder;   /* the value's name in messages: "SIZE", "PATTERN=TYPE" */
} cmd_option;

/* How a subcommand reads its arguments (cmd_optspec.flags). */
enum {
    CMD_OPTS_DASHDASH = 1u << 0,         /* `--` ends the options (else it is an unknown option) */
    CMD_OPTS_STOP_AT_ARG = 1u << 1,      /* options come first: the first positional ends them */
    CMD_OPTS_NUMBERS_ARE_ARGS = 1u << 2  /* "-5" is a positional (a number), not an option */
};

/* A subcommand's options. */
typedef struct cmd_optspec {
    const char *cmd;           /* "split" (messages say "ggufkit split: ..."); NULL for the command itself */
    const cmd_option *options; /* rows ending with id 0; -h and --help are always known */
    unsigned flags;            /* CMD_OPTS_* */
    void (*help)(void);        /* prints the help to standard output; when set, -h and
                                  --help end the walk: CMD_OPTS_EXIT with rc 0 */
} cmd_optspec;

/* The walk over one command line. */
typedef struct cmd_opts {
    const cmd_optspec *spec;
    int argc;
    char **argv;
    int next;                  /* index of the next argument to read */
    bool options_done;         /* past `--` (or the first positional with CMD_OPTS_STOP_AT_ARG) */
    const char *value;         /* the option's value (NULL for a flag, or an optional value left out),
                                  or the positional argument */
    const char *name;          /* the option's table name ("--threads", also when met as -t) */
    int rc;                    /* the exit status when cmd_opts_next returns CMD_OPTS_EXIT */
    bool started;              /* the first call (which may list the table) is past */
} cmd_opts;

/* What cmd_opts_next returns besides an option's id. */
enum {
    CMD_OPTS_END = 0,          /* no argument left */
    CMD_OPTS_ARG = -1,         /* a positional argument, in value */
    CMD_OPTS_HELP = -2,        /* -h or --help with no help function in the spec: the
                                  caller prints its help and exits 0 */
    CMD_OPTS_EXIT = -3         /* stop with exit status rc (a usage error was printed, or the table) */
};

/** cmd_remote_stats_wanted() : @return : true when --stats was given (every
 *  subcommand takes --stats and --header 'NAME: VALUE' for remote inputs). */
bool cmd_remote_stats_wanted(void);

/** cmd_opts_init() : starts a walk over argv[1..argc-1] (argv[0] is the subcommand's name). */
void cmd_opts_init(cmd_opts *p, const cmd_optspec *spec, int argc, char **argv);

/** cmd_opts_next() : reads the next argument. @return : an option's id (its value in
 *  p->value), CMD_OPTS_ARG, CMD_OPTS_END, CMD_OPTS_HELP, or CMD_OPTS_EXIT (p->rc). */
int cmd_opts_next(cmd_opts *p);

/** cmd_opts_nearest() : the option of spec nearest to the unknown word arg (its part
 *  before any '='), by edit distance, when one is close enough to be a typo.
 *  @return : its name as the table spells it, or NULL. */
const char *cmd_opts_nearest(const cmd_optspec *spec, const char *arg);

/** cmd_opts_list() : prints spec's table on out as GGUFKIT_LIST_OPTIONS does. */
void cmd_opts_list(const cmd_optspec *spec, FILE *out);

#endif
