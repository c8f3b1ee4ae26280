/*
 * merge.c - `ggufkit merge`: joins a llama-gguf-split shard set back into one
 * file, after checking the whole set, without the split.* keys.
 */
#include <inttypes.h>
#include <string.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit merge [--no-clone] [--force] [--delete-splits] SHARD OUT\n\n"
    "Merges the shard set SHARD belongs to (any shard of it; the others are found by\n"
    "name, PREFIX-%05d-of-%05d.gguf, each possibly stored compressed as .gguf.zst)\n"
    "into OUT: the first shard's metadata without the\n"
    "split.* keys, then every shard's tensors in order. The whole set is checked first:\n"
    "every shard present and valid, split.no in sequence, split.count and\n"
    "split.tensors.count agreeing with the shards, no tensor twice, one alignment, byte\n"
    "order and version. Merging the shards of a file `ggufkit split` made gives that\n"
    "file back byte for byte when it was laid out canonically as GGUF v3. What else\n"
    "comes back: a v1 or v2 file as v3 (the version field), and a file whose last\n"
    "tensor was not padded to the alignment with that tensor padded with zeros (up to\n"
    "alignment-1 bytes: every ggufkit output ends so, as ggml's reader expects).\n"
    "  --force   replace OUT if it exists (never one of the shards)\n"
    "  --no-clone  copy the tensor bytes even where the filesystem could share them with\n"
    "            the shards' (XFS with reflink, btrfs: there OUT clones them, its header\n"
    "            padded with a ggufkit.padding pair to keep them block-aligned; the shards\n"
    "            of `split --clone` then clone whole)\n"
    "  --delete-splits  remove each shard as soon as its bytes are safely in OUT, for a\n"
    "            disk without room for two copies (peak: the set plus its largest shard).\n"
    "            OUT grows as OUT.ggufkit-merge beside a state file\n"
    "            OUT.ggufkit-merge-state. Nothing is lost: after a kill, a full disk or any\n"
    "            other failure, every shard not yet removed is intact, the bytes of the\n"
    "            removed ones are in OUT.ggufkit-merge, and running the same command\n"
    "            again (with any shard's name) finishes the merge. A shard that was\n"
    "            replaced meanwhile is never removed. On filesystems that clone (XFS\n"
    "            with reflink, btrfs) a plain merge already shares the shards' blocks\n"
    "            and takes no room: there, merge first and remove the shards after.\n"
    "OUT is written atomically: it is complete or absent.\n"
    "Exit status: 0 success, 1 failure (bad set, write error), 2 usage error.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

/* merge --delete-splits: each shard removed once its bytes are safe in OUT. */
static int merge_consuming(const char *shard, const char *out, bool force, gk_error *err) {
    cmd_catch_interrupts();
    cmd_progress bar;
    cmd_progress_start(&bar, "merge", 0);
    gk_write_stats stats = { 0 };
    bar.stats = &stats;
    gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .sink_flags = force ? GK_SINK_OVERWRITE : 0, .progress = cmd_write_progress,
                           .progress_ctx = &bar, .stats = &stats };
    gk_status st = gk_merge_consume(shard, out, &opts, err);
    cmd_progress_finish(&bar);
    if (st != GK_OK) return cmd_report(NULL, err);
    fprintf(stderr, "merged into %s; the shards were removed\n", out);
    return GK_EXIT_OK;
}

int cmd_merge(int argc, char **argv) {
    bool force = false, no_clone = false, delete_splits = false;
    const char *paths[2];
    int n_paths = 0;
    enum { OPT_FORCE = 1, OPT_NO_CLONE, OPT_DELETE_SPLITS };
    static const cmd_option options[] = {
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { OPT_NO_CLONE, "--no-clone", NULL, CMD_OPT_FLAG, NULL },
        { OPT_DELETE_SPLITS, "--delete-splits", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "merge", options, 0, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *a = p.value;
        if (id == CMD_OPTS_EXIT) {
            return p.rc;
        } else if (id == OPT_FORCE) {
            force = true;
        } else if (id == OPT_NO_CLONE) {
            no_clone = true;
        } else if (id == OPT_DELETE_SPLITS) {
            delete_splits = true;
        } else if (n_paths < 2) {
            paths[n_paths++] = a;
        } else {
            return cmd_usage_error("merge", "too many arguments");
        }
    }
    if (n_paths != 2) return cmd_usage_error("merge", "need SHARD and OUT");

    gk_error err;
    if (delete_splits) return merge_consuming(paths[0], paths[1], force, &err);
    gk_split_set *set;
    if (gk_split_set_open(paths[0], GK_OPEN_DEFAULT, &set, &err) != GK_OK) return cmd_report(NULL, &err);
    cmd_catch_interrupts();
    cmd_progress bar;
    cmd_progress_start(&bar, "merge", gk_split_set_tensor_bytes(set));
    gk_write_stats stats = { 0 };
    bar.stats = &stats;
    gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .sink_flags = force ? GK_SINK_OVERWRITE : 0, .progress = cmd_write_progress,
                           .progress_ctx = &bar, .clone = no_clone ? GK_CLONE_NEVER : GK_CLONE_PAD,
                           .stats = &stats };
    gk_status st = gk_merge_write(set, paths[1], &opts, &err);
    cmd_progress_finish(&bar);
    int rc = GK_EXIT_OK;
    if (st != GK_OK) rc = cmd_report(NULL, &err);
    else {
        fprintf(stderr, "merged %zu shards, %" PRIu64 " tensors into %s\n", gk_split_set_count(set),
                gk_split_set_tensor_count(set), paths[1]);
        cmd_clone_summary(&stats);
    }
    gk_split_set_close(set);
    return rc;
}
