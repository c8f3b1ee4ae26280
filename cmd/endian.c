/*
 * endian.c - `ggufkit endian`: writes a copy of a file in the other byte order
 * (header, metadata and the tensor data of every type the type table can swap),
 * never in place.
 */
#include <string.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit endian --to big|little|native [--force] IN OUT\n\n"
    "Writes IN to OUT in the chosen byte order: header, metadata and tensor data (each\n"
    "type through its byte-swap kernel; a type without one is an error that names it).\n"
    "The data is laid out canonically (each tensor at the next aligned offset, padded\n"
    "at the end as IN is), so converting a canonical file there and back gives it back\n"
    "byte for byte. A file already in that order is copied. IN is never changed.\n"
    "  --to ORDER  big, little, or native (this machine's order)\n"
    "  --force     replace OUT if it exists (never IN)\n"
    "OUT is written atomically: it is complete or absent.\n"
    "Exit status: 0 success, 1 failure, 2 usage error.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

static bool host_is_big(void) {
    const uint16_t probe = 1;
    return *(const uint8_t *)&probe == 0;
}

int cmd_endian(int argc, char **argv) {
    int to = -1;   /* 1 big, 0 little */
    bool force = false;
    const char *paths[2];
    int n_paths = 0;
    enum { OPT_TO = 1, OPT_FORCE };
    static const cmd_option options[] = {
        { OPT_TO, "--to", NULL, CMD_OPT_VALUE, "big|little|native" },
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "endian", options, 0, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *a = p.value;
        if (id == CMD_OPTS_EXIT) {
            return p.rc;
        } else if (id == OPT_TO) {
            const char *v = a;
            if (strcmp(v, "big") == 0) to = 1;
            else if (strcmp(v, "little") == 0) to = 0;
            else if (strcmp(v, "native") == 0) to = host_is_big();
            else return cmd_usage_error("endian", "--to needs big, little or native");
        } else if (id == OPT_FORCE) {
            force = true;
        } else if (n_paths < 2) {
            paths[n_paths++] = a;
        } else {
            return cmd_usage_error("endian", "too many arguments");
        }
    }
    if (to < 0) return cmd_usage_error("endian", "missing --to big|little|native");
    if (n_paths != 2) return cmd_usage_error("endian", "need IN and OUT");

    gk_file *in;
    gk_error err;
    if (gk_open(paths[0], GK_OPEN_DEFAULT, &in, &err) != GK_OK) return cmd_report(paths[0], &err);
    if (gk_model_big_endian(gk_file_model(in)) == (to == 1))
        fprintf(stderr, "ggufkit endian: %s is already %s-endian: copying it\n", paths[0], to ? "big" : "little");
    cmd_catch_interrupts();
    cmd_progress bar;
    cmd_progress_start(&bar, "endian", 0);
    gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .sink_flags = force ? GK_SINK_OVERWRITE : 0, .progress = cmd_write_progress,
                           .progress_ctx = &bar };
    gk_status st = gk_endian_convert(in, paths[1], to == 1, &opts, &err);
    cmd_progress_finish(&bar);
    int rc = st == GK_OK ? GK_EXIT_OK : cmd_report(st == GK_E_UNSUPPORTED ? paths[0] : NULL, &err);
    gk_close(in);
    return rc;
}
