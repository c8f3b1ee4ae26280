/*
 * repack.c - `ggufkit repack`: rewrites a file through the writer. Without
 * options a canonically laid-out file comes back byte for byte; --alignment N
 * re-lays the data section with the tensor bytes unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit repack [--alignment N] [--reserve BYTES] [--no-clone] [--force] IN OUT\n\n"
    "Rewrites IN to OUT through ggufkit's writer, keeping the version (2 or 3; v1\n"
    "becomes 3), byte order, metadata order and tensor bytes. Tensor data is laid\n"
    "out in directory order, each tensor at the next aligned offset.\n"
    "  --alignment N  set general.alignment to N (a power of two, at most 2^30) and\n"
    "                 re-lay the data\n"
    "  --reserve BYTES  leave BYTES of room in the header (a ggufkit.padding pair) for\n"
    "                 later `ggufkit edit --in-place` edits; 0 leaves none (and drops\n"
    "                 a pair IN has)\n"
    "  --no-clone     copy the tensor bytes even where the filesystem could share them\n"
    "                 with IN's (XFS with reflink, btrfs: there OUT clones them, its header\n"
    "                 padded with a ggufkit.padding pair to keep them block-aligned)\n"
    "  --force        replace OUT if it exists\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

int cmd_repack(int argc, char **argv) {
    uint64_t alignment = 0, reserve = 0;
    bool force = false, has_reserve = false, no_clone = false;
    const char *paths[2];
    int n_paths = 0;
    enum { OPT_ALIGNMENT = 1, OPT_RESERVE, OPT_FORCE, OPT_NO_CLONE };
    static const cmd_option options[] = {
        { OPT_ALIGNMENT, "--alignment", NULL, CMD_OPT_VALUE, "N" },
        { OPT_RESERVE, "--reserve", NULL, CMD_OPT_VALUE, "BYTES" },
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { OPT_NO_CLONE, "--no-clone", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "repack", options, 0, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *a = p.value;
        if (id == CMD_OPTS_EXIT) return p.rc;
        if (id == OPT_ALIGNMENT) {
            if (!cmd_parse_u64(a, &alignment) || alignment == 0 ||
                (alignment & (alignment - 1)) != 0 || alignment > (1u << 30))
                return cmd_usage_error("repack", "--alignment needs a power of two from 1 to 1073741824 (2^30)%s",
                                       alignment > (1u << 30) && (alignment & (alignment - 1)) == 0
                                           ? ": larger alignments are refused"
                                           : "");
        } else if (id == OPT_RESERVE) {
            if (!cmd_parse_size(a, &reserve) || reserve > (1ULL << 32))
                return cmd_usage_error("repack", "--reserve needs a size in bytes (at most 4G)");
            has_reserve = true;
        } else if (id == OPT_FORCE) {
            force = true;
        } else if (id == OPT_NO_CLONE) {
            no_clone = true;
        } else if (n_paths < 2) {
            paths[n_paths++] = a;
        } else {
            return cmd_usage_error("repack", "too many arguments");
        }
    }
    if (n_paths != 2) return cmd_usage_error("repack", "need IN and OUT");

    gk_file *in;
    gk_error err;
    /* Refused before IN is read, whatever it holds (gk_rewrite refuses it too). */
    if (gk_same_file(paths[0], paths[1])) {
        gk_error_set(&err, GK_E_SAME_FILE, -1, "refusing to overwrite the input");
        return cmd_report(paths[1], &err);
    }
    if (gk_open(paths[0], GK_OPEN_DEFAULT, &in, &err) != GK_OK) return cmd_report(paths[0], &err);
    gk_model *out = gk_model_clone(gk_file_model(in));
    int rc = GK_EXIT_FAIL;
    if (out == NULL) {
        gk_error_set(&err, GK_E_NOMEM, -1, "out of memory");
        cmd_report(paths[0], &err);
        goto done;
    }
    if (alignment != 0) {
        bool absent = gk_kv_find(out, "general.alignment") < 0;
        if (!(absent && alignment == GK_DEFAULT_ALIGNMENT) &&
            gk_kv_set_u32(out, "general.alignment", (uint32_t)alignment, &err) != GK_OK) {
            cmd_report(paths[1], &err);
            goto done;
        }
    }
    /* --reserve 0: no room, so no pair (one IN had is dropped), not an empty one */
    if (has_reserve && reserve == 0) gk_kv_delete(out, GK_PADDING_KEY);
    if (has_reserve && reserve > 0 && gk_model_set_padding(out, reserve, &err) != GK_OK) {
        cmd_report(paths[1], &err);
        goto done;
    }
    cmd_catch_interrupts();
    cmd_progress bar;
    cmd_progress_start(&bar, "repack", 0);
    gk_write_stats stats = { 0 };
    bar.stats = &stats;
    gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .sink_flags = force ? GK_SINK_OVERWRITE : 0, .progress = cmd_write_progress,
                           .progress_ctx = &bar, .clone = no_clone ? GK_CLONE_NEVER : GK_CLONE_PAD,
                           .stats = &stats };
    gk_status st = gk_rewrite(in, out, paths[1], &opts, &err);   /* v1 becomes v3, the end padded as IN's */
    cmd_progress_finish(&bar);
    if (st == GK_OK) cmd_clone_summary(&stats);
    if (st != GK_OK) {
        cmd_report(paths[1], &err);
        goto done;
    }
    rc = GK_EXIT_OK;
done:
    gk_model_free(out);
    gk_close(in);
    return rc;
}
