/*
 * split.c - `ggufkit split`: cuts a model into a llama-gguf-split shard set
 * (PREFIX-00001-of-0000N.gguf ...), by tensor count or by size, all shards or
 * none.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit split (--split-max-tensors N | --split-max-size SIZE)\n"
    "                     [--no-tensor-first-split] [--clone | --no-clone] [--dry-run]\n"
    "                     IN OUT_PREFIX\n\n"
    "Splits IN into OUT_PREFIX-00001-of-0000N.gguf ... OUT_PREFIX-0000N-of-0000N.gguf the\n"
    "way llama-gguf-split does (same keys split.no, split.count, split.tensors.count,\n"
    "same cut points, byte-identical shards for alignment 32). The first shard holds\n"
    "all metadata; each shard holds a run of the tensors in file order.\n"
    "  --split-max-tensors N    at most N tensors per shard\n"
    "  --split-max-size SIZE    at most SIZE bytes of tensor data per shard (each tensor\n"
    "                           counted padded to the alignment); K, M, G are decimal\n"
    "                           units (500M = 500000000). A tensor larger than SIZE gets\n"
    "                           a shard of its own.\n"
    "  --no-tensor-first-split  the first shard holds the metadata only\n"
    "  --clone                  where the filesystem can share IN's blocks (XFS with reflink,\n"
    "                           btrfs), pad each shard's header (a ggufkit.padding pair) so\n"
    "                           its tensors clone instead of being copied (no disk space, no\n"
    "                           time); the shards then differ from llama-gguf-split's by that\n"
    "                           pair, and `merge` clones them back. Without it, tensors clone\n"
    "                           only where llama-gguf-split's layout happens to allow it\n"
    "  --no-clone               copy every tensor byte\n"
    "  --dry-run                print the plan (\"plan: N shards ...\"), write nothing\n"
    "Shards are GGUF v3, as llama-gguf-split writes them: a v1 or v2 input gives v3\n"
    "shards (v2 and v3 differ only in the version field), and merging them gives v3.\n"
    "The shard table is printed once the set is written (\"wrote N shards ...\").\n"
    "Existing shard names are refused before anything is written; when writing fails\n"
    "the shards already written are removed and no table is printed. `ggufkit merge` joins a set again.\n"
    "Exit status: 0 success, 1 failure, 2 usage error.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

/* ------------------------------------------------------------------------ */
/* ggufkit split                                                            */
/* ------------------------------------------------------------------------ */

/* The shard table: after the set is written ("wrote ..."), or as a plan under
 * --dry-run; a failed write prints none (nothing is left of the set). */
static void print_plan(const char *prefix, const gk_model *m, const gk_split_plan *plan, bool written) {
    printf("%s%zu shards, %zu tensors%s\n", written ? "wrote " : "plan: ", plan->n_shards, gk_tensor_count(m),
           written ? "" : " (dry run: nothing written)");
    for (size_t k = 0; k < plan->n_shards; k++) {
        const gk_split_shard *sh = &plan->shards[k];
        char *path = gk_split_path(prefix, k, plan->n_shards);
        uint64_t bytes = sh->file_bytes;   /* written: the file's own size (--clone may pad it) */
        struct stat sb;
        if (written && path && stat(path, &sb) == 0) bytes = (uint64_t)sb.st_size;
        printf("  %s  %6zu tensors  %14" PRIu64 " bytes\n", path ? path : "?", sh->n_tensors, bytes);
        free(path);
    }
}

int cmd_split(int argc, char **argv) {
    gk_split_opts so = { GK_OPTS_INIT(gk_split_opts) };
    bool dry_run = false;
    unsigned clone = GK_CLONE_AUTO;
    const char *paths[2];
    int n_paths = 0;
    enum { OPT_MAX_TENSORS = 1, OPT_MAX_SIZE, OPT_NO_TENSOR_FIRST, OPT_DRY_RUN, OPT_CLONE, OPT_NO_CLONE };
    static const cmd_option options[] = {
        { OPT_MAX_TENSORS, "--split-max-tensors", NULL, CMD_OPT_VALUE, "N" },
        { OPT_MAX_SIZE, "--split-max-size", NULL, CMD_OPT_VALUE, "SIZE" },
        { OPT_NO_TENSOR_FIRST, "--no-tensor-first-split", NULL, CMD_OPT_FLAG, NULL },
        { OPT_DRY_RUN, "--dry-run", NULL, CMD_OPT_FLAG, NULL },
        { OPT_CLONE, "--clone", NULL, CMD_OPT_FLAG, NULL },
        { OPT_NO_CLONE, "--no-clone", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "split", options, 0, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *a = p.value;
        if (id == CMD_OPTS_EXIT) {
            return p.rc;
        } else if (id == OPT_MAX_TENSORS) {
            if (!cmd_parse_u64(a, &so.max_tensors) || so.max_tensors == 0)
                return cmd_usage_error("split", "--split-max-tensors needs a positive number");
        } else if (id == OPT_MAX_SIZE) {
            if (!cmd_parse_size(a, &so.max_bytes) || so.max_bytes == 0)
                return cmd_usage_error("split", "--split-max-size needs a positive size (e.g. 500M, 2G)");
        } else if (id == OPT_NO_TENSOR_FIRST) {
            so.no_tensor_first_split = true;
        } else if (id == OPT_DRY_RUN) {
            dry_run = true;
        } else if (id == OPT_CLONE || id == OPT_NO_CLONE) {
            unsigned want = id == OPT_CLONE ? GK_CLONE_PAD : GK_CLONE_NEVER;
            if (clone != GK_CLONE_AUTO && clone != want)
                return cmd_usage_error("split", "--clone and --no-clone exclude each other");
            clone = want;
        } else if (n_paths < 2) {
            paths[n_paths++] = a;
        } else {
            return cmd_usage_error("split", "too many arguments");
        }
    }
    if ((so.max_tensors == 0) == (so.max_bytes == 0))
        return cmd_usage_error("split", "give one of --split-max-tensors and --split-max-size");
    if (n_paths != 2) return cmd_usage_error("split", "need IN and OUT_PREFIX");

    gk_file *in;
    gk_error err;
    if (gk_open(paths[0], GK_OPEN_DEFAULT, &in, &err) != GK_OK) return cmd_report(paths[0], &err);
    gk_split_plan plan;
    if (gk_split_plan_build(gk_file_model(in), &so, &plan, &err) != GK_OK) {
        gk_close(in);
        return cmd_report(paths[0], &err);
    }
    int rc = GK_EXIT_OK;
    if (dry_run) {
        print_plan(paths[1], gk_file_model(in), &plan, false);
        if (clone == GK_CLONE_PAD)
            printf("sizes are llama-gguf-split's: where the shards' filesystem clones, --clone adds a\n"
                   "ggufkit.padding pair to each header (at most one filesystem block and the pair)\n");
    } else {
        cmd_catch_interrupts();
        cmd_progress bar;
        cmd_progress_start(&bar, "split", 0);
        gk_write_stats stats = { 0 };
        bar.stats = &stats;
        gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .progress = cmd_write_progress, .progress_ctx = &bar, .clone = clone,
                               .stats = &stats };
        gk_status st = gk_split_write(in, paths[1], &plan, &opts, &err);
        cmd_progress_finish(&bar);
        if (st != GK_OK) {
            rc = cmd_report(NULL, &err);
        } else {
            print_plan(paths[1], gk_file_model(in), &plan, true);
            cmd_clone_summary(&stats);
        }
    }
    gk_split_plan_free(&plan);
    gk_close(in);
    return rc;
}
