/*
 * edit.c - `ggufkit edit`: metadata edits (set, delete, rename, special tokens,
 * JSON patches) applied in order in one pass, written in place when the new
 * header fits before the data section (journaled, crash-safe), as a new file
 * (-o, atomic) otherwise.
 *
 * An in-place edit (and a rewrite replacing FILE) holds FILE's edit lock from
 * reading its header to the end, waiting --wait seconds for another editor.
 *
 * GGUFKIT_FAULT_AFTER_WRITES=N (tests only) makes an in-place write, a recovery
 * or a discard exit with status 137 after N low-level writes, truncates, fsyncs
 * and unlinks, as a crash would; `ggufkit edit --recover` (or any edit) on the
 * file then recovers it. A journal that does not belong to the file (stale: the
 * file was replaced since) is refused everywhere; --discard-journal removes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit edit [OPERATION]... (-o OUT | --in-place[=auto]) [OPTION]... FILE\n\n"
    "Edits FILE's metadata. Operations apply in the order given, in one pass:\n"
    "  --set KEY=VALUE          an existing key keeps its type (VALUE parsed as it); a new\n"
    "                           key takes its well-known type, else true/false -> bool,\n"
    "                           integers -> u32 (i32, u64, i64 when needed), decimals -> f32,\n"
    "                           anything else -> str\n"
    "  --set KEY:TYPE=VALUE     TYPE: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str, json\n"
    "                           (a JSON value: --set 'x.list:json=[\"a\",\"b\"]'), array[T]\n"
    "  --set-file KEY=PATH      a string read from a file (chat templates)\n"
    "  --delete KEY             also a glob: --delete 'tokenizer.ggml.merges*'; a key that\n"
    "                           is KEY exactly is deleted alone (--delete 'x*y' deletes the\n"
    "                           key x*y only, when there is one); \\ escapes a glob\n"
    "                           character ('x\\*y' never matches xzy)\n"
    "  --rename OLD=NEW\n"
    "  --special-token NAME=TEXT    tokenizer.ggml.NAME_token_id = the id of TEXT in the\n"
    "                               vocabulary (NAME: bos eos eot eom unknown padding sep cls\n"
    "                               mask fim_pre fim_suf fim_mid fim_pad fim_rep fim_sep)\n"
    "  --special-token-id NAME=ID   the same with the id (must be inside the vocabulary)\n"
    "  --patch FILE.json|-      {\"set\": {K: V | {\"type\": T, \"value\": V}}, \"delete\": [K...],\n"
    "                           \"rename\": {OLD: NEW}}, or `ggufkit dump --json` output\n"
    "Output (one of):\n"
    "  -o OUT                   write a new file (atomic; tensor bytes copied unchanged)\n"
    "  --in-place               rewrite FILE's header where it is; fails (exit 1) when the new\n"
    "                           header does not fit before the data section\n"
    "  --in-place=auto          in place when it fits, else rewrite FILE (atomic replace; a\n"
    "                           compressed FILE stays compressed)\n"
    "A FILE that is a symbolic link: the file it names is edited, the link stays. A\n"
    "member of an archive (ARCHIVE::MEMBER) is only read: write it out with -o OUT.\n"
    "An edit that changes nothing writes nothing (\"unchanged\").\n"
    "Options:\n"
    "  --reserve BYTES          leave BYTES of room (a ggufkit.padding pair) in a written\n"
    "                           file for later in-place edits (500K, 1M: decimal units);\n"
    "                           0 leaves none (and drops a pair the file has)\n"
    "  --dry-run                print the metadata diff and whether the edit fits in place;\n"
    "                           with -o, exit 1 as the edit would when OUT exists (without\n"
    "                           --force) or is one of the inputs\n"
    "  --force                  allow refused edits (layout keys general.alignment, split.*,\n"
    "                           GGUF.*; key names against the spec; types contradicting a\n"
    "                           well-known key's) and replace an existing OUT\n"
    "  --wait SECONDS           wait that long for another process editing FILE (default 5)\n"
    "  --no-clone               copy the tensor bytes of a written file even where the\n"
    "                           filesystem could share them with FILE's (XFS with reflink,\n"
    "                           btrfs: there a written file clones them, its header padded\n"
    "                           with a ggufkit.padding pair to keep them block-aligned)\n"
    "  --recover                only recover FILE from an interrupted in-place edit's journal\n"
    "                           (with --force: also a journal of an older ggufkit, which names\n"
    "                           the file by inode only and cannot prove that it belongs to it)\n"
    "  --discard-journal        only remove FILE.ggufkit-journal when it does not belong to\n"
    "                           FILE (stale: FILE was replaced since the edit was interrupted),\n"
    "                           is incomplete, or its edit changed nothing; FILE is not written\n"
    "A journal left by an interrupted in-place edit (FILE.ggufkit-journal) is recovered first;\n"
    "read-only commands (info, dump, verify, index) refuse such a file and say so. A journal\n"
    "is applied only to the bytes it was written for (FILE's size, the edited range holding\n"
    "the old or the new header bytes, digests of the rest); a stale one is refused and left\n"
    "with FILE as they are, until --discard-journal removes it.\n"
    "Exit status: 0 done, 1 refused or failed, 2 usage error.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

typedef struct edit_args {
    gk_edit *ops;
    const char *path;
    const char *out;
    bool in_place, in_place_auto, dry_run, force, has_reserve, recover_only, discard_only, no_clone;
    uint64_t reserve;
    unsigned wait_ms;
} edit_args;

/* Splits "A=B" at the first '='. @return : false when there is none. */
static bool split_eq(const char *arg, char **left, const char **right) {
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg) return false;
    *left = strndup(arg, (size_t)(eq - arg));
    *right = eq + 1;
    return *left != NULL;
}

/* Reads a whole file (or stdin for "-"). @return : malloc'ed bytes or NULL. */
static char *slurp(const char *path, size_t *len) {
    /* An input: recorded, so that no output replaces it; a FIFO does not block. */
    FILE *fp = stdin;
    if (strcmp(path, "-") == 0) {
        gk_inputs_add(path, NULL);   /* standard input redirected from a file */
    } else {
        int fd = gk_inputs_open(path);
        if (fd < 0 || (fp = fdopen(fd, "rb")) == NULL) {
            int e = errno;
            if (fd >= 0) close(fd);
            errno = e;
            return NULL;
        }
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0) break;
    }
    bool failed = ferror(fp);
    if (fp != stdin) fclose(fp);
    if (failed) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static int add_set(edit_args *a, const char *arg, gk_error *err) {
    char *left;
    const char *value;
    if (!split_eq(arg, &left, &value)) return cmd_usage_error("edit", "--set needs KEY=VALUE (got '%s')", arg);
    char *colon = strrchr(left, ':');
    const char *type = NULL;
    if (colon) {
        *colon = '\0';
        type = colon + 1;
    }
    gk_status st = gk_edit_add_set(a->ops, left, type, value, strlen(value), err);
    free(left);
    return st == GK_OK ? -1 : cmd_usage_error("edit", "%s", err->message);
}

static int add_set_file(edit_args *a, const char *arg, gk_error *err) {
    char *key;
    const char *path;
    if (!split_eq(arg, &key, &path)) return cmd_usage_error("edit", "--set-file needs KEY=PATH (got '%s')", arg);
    size_t len;
    char *text = slurp(path, &len);
    if (text == NULL) {
        fprintf(stderr, "ggufkit: %s: cannot read: %s\n", path, strerror(errno));
        free(key);
        return GK_EXIT_FAIL;
    }
    gk_status st = gk_edit_add_set(a->ops, key, "str", text, len, err);
    free(text);
    free(key);
    if (st != GK_OK) return cmd_report(path, err);
    return -1;
}

static int add_token(edit_args *a, const char *arg, bool by_id, gk_error *err) {
    char *name;
    const char *value;
    if (!split_eq(arg, &name, &value))
        return cmd_usage_error("edit", "%s needs NAME=%s", by_id ? "--special-token-id" : "--special-token",
                               by_id ? "ID" : "TEXT");
    gk_status st;
    uint64_t id;
    if (by_id && !cmd_parse_u64(value, &id)) {
        free(name);
        return cmd_usage_error("edit", "--special-token-id: '%s' is not a token id", value);
    }
    st = by_id ? gk_edit_add_special_token_id(a->ops, name, id, err) : gk_edit_add_special_token(a->ops, name, value, err);
    free(name);
    return st == GK_OK ? -1 : cmd_usage_error("edit", "%s", err->message);
}

static int add_patch(edit_args *a, const char *path, gk_error *err) {
    size_t len;
    char *text = slurp(path, &len);
    if (text == NULL) {
        fprintf(stderr, "ggufkit: %s: cannot read: %s\n", path, strerror(errno));
        return GK_EXIT_FAIL;
    }
    gk_status st = gk_edit_add_patch(a->ops, text, len, err);
    free(text);
    return st == GK_OK ? -1 : cmd_report(path, err);
}

/* Reads the command line. @return : -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, edit_args *a, gk_error *err) {
    enum { OPT_SET = 1, OPT_SET_FILE, OPT_DELETE, OPT_RENAME, OPT_TOKEN, OPT_TOKEN_ID, OPT_PATCH, OPT_OUT,
           OPT_RESERVE, OPT_WAIT, OPT_IN_PLACE, OPT_RECOVER, OPT_DISCARD, OPT_DRY_RUN, OPT_FORCE, OPT_NO_CLONE };
    static const cmd_option options[] = {
        { OPT_SET, "--set", NULL, CMD_OPT_VALUE, "KEY=[TYPE:]VALUE" },
        { OPT_SET_FILE, "--set-file", NULL, CMD_OPT_VALUE, "KEY=PATH" },
        { OPT_DELETE, "--delete", NULL, CMD_OPT_VALUE, "KEY" },
        { OPT_RENAME, "--rename", NULL, CMD_OPT_VALUE, "OLD=NEW" },
        { OPT_TOKEN, "--special-token", NULL, CMD_OPT_VALUE, "NAME=TEXT" },
        { OPT_TOKEN_ID, "--special-token-id", NULL, CMD_OPT_VALUE, "NAME=ID" },
        { OPT_PATCH, "--patch", NULL, CMD_OPT_VALUE, "FILE" },
        { OPT_OUT, NULL, "-o", CMD_OPT_VALUE, "OUT" },
        { OPT_RESERVE, "--reserve", NULL, CMD_OPT_VALUE, "BYTES" },
        { OPT_WAIT, "--wait", NULL, CMD_OPT_VALUE, "SECONDS" },
        { OPT_IN_PLACE, "--in-place", NULL, CMD_OPT_OPTIONAL, "auto" },
        { OPT_RECOVER, "--recover", NULL, CMD_OPT_FLAG, NULL },
        { OPT_DISCARD, "--discard-journal", NULL, CMD_OPT_FLAG, NULL },
        { OPT_DRY_RUN, "--dry-run", NULL, CMD_OPT_FLAG, NULL },
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { OPT_NO_CLONE, "--no-clone", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "edit", options, 0, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *v = p.value;
        int rc = -1;
        switch (id) {
        case CMD_OPTS_EXIT: return p.rc;
        case OPT_SET: rc = add_set(a, v, err); break;
        case OPT_SET_FILE: rc = add_set_file(a, v, err); break;
        case OPT_DELETE:
            if (gk_edit_add_delete(a->ops, v, err) != GK_OK) rc = cmd_usage_error("edit", "%s", err->message);
            break;
        case OPT_RENAME: {
            char *old;
            const char *new_key;
            if (!split_eq(v, &old, &new_key)) return cmd_usage_error("edit", "--rename needs OLD=NEW");
            if (gk_edit_add_rename(a->ops, old, new_key, err) != GK_OK) rc = cmd_usage_error("edit", "%s", err->message);
            free(old);
            break;
        }
        case OPT_TOKEN: rc = add_token(a, v, false, err); break;
        case OPT_TOKEN_ID: rc = add_token(a, v, true, err); break;
        case OPT_PATCH: rc = add_patch(a, v, err); break;
        case OPT_OUT: a->out = v; break;
        case OPT_WAIT: {
            uint64_t secs;
            if (!cmd_parse_u64(v, &secs) || secs > 86400)
                return cmd_usage_error("edit", "--wait needs whole seconds (at most 86400)");
            a->wait_ms = (unsigned)secs * 1000u;
            break;
        }
        case OPT_RESERVE:
            if (!cmd_parse_size(v, &a->reserve) || a->reserve > (1ULL << 32))
                return cmd_usage_error("edit", "--reserve needs a size in bytes (at most 4G)");
            a->has_reserve = true;
            break;
        case OPT_IN_PLACE:
            if (v != NULL && strcmp(v, "auto") != 0)
                return cmd_usage_error("edit", "--in-place takes no value but auto (--in-place=auto), not '%s'", v);
            a->in_place = true;
            if (v != NULL) a->in_place_auto = true;
            break;
        case OPT_RECOVER: a->recover_only = true; break;
        case OPT_DISCARD: a->discard_only = true; break;
        case OPT_DRY_RUN: a->dry_run = true; break;
        case OPT_FORCE: a->force = true; break;
        case OPT_NO_CLONE: a->no_clone = true; break;
        default:
            if (a->path != NULL)
                return cmd_usage_error("edit", "one FILE only (got '%s' and '%s')", a->path, v);
            a->path = v;
        }
        if (rc >= 0) return rc;
    }
    if (a->path == NULL) return cmd_usage_error("edit", "missing FILE");
    if (a->out && a->in_place) return cmd_usage_error("edit", "-o and --in-place exclude each other");
    if ((a->recover_only || a->discard_only) && (a->out || a->in_place || a->dry_run || gk_edit_count(a->ops) > 0))
        return cmd_usage_error("edit", "%s takes no operation and no output",
                               a->recover_only ? "--recover" : "--discard-journal");
    if (a->recover_only && a->discard_only)
        return cmd_usage_error("edit", "--recover and --discard-journal exclude each other");
    if (!a->out && !a->in_place && !a->dry_run && !a->recover_only && !a->discard_only)
        return cmd_usage_error("edit", "say where the result goes: -o OUT or --in-place (or --dry-run)");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Dry run: the metadata diff                                               */
/* ------------------------------------------------------------------------ */

static void print_str(const char *s, uint64_t n, uint64_t max) {
    putchar('"');
    for (uint64_t i = 0; i < n && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') fputs("\\n", stdout);
        else if (c < 0x20 || c == 0x7F) printf("\\x%02x", c);
        else putchar(c);
    }
    putchar('"');
    if (n > max) printf("... (%" PRIu64 " bytes)", n);
}

static void print_scalar(const gk_value *v) {
    switch (v->type) {
    case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64: printf("%" PRIu64, v->u); break;
    case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64: printf("%" PRId64, v->i); break;
    case GK_V_F32: case GK_V_F64: printf("%.9g", v->f); break;
    case GK_V_BOOL: fputs(v->b ? "true" : "false", stdout); break;
    case GK_V_STR: print_str(v->s.ptr, v->s.len, 80); break;
    case GK_V_ARR: printf("[%" PRIu64 " element%s]", v->arr.n, v->arr.n == 1 ? "" : "s"); break;
    default: fputs("?", stdout);
    }
}

static void print_pair(char sign, const gk_kv *kv) {
    char type[96];
    gk_value_type_label(&kv->value, GK_LABEL_SHORT, type, sizeof type);
    printf("%c %s (%s) = ", sign, kv->key.ptr, type);
    print_scalar(&kv->value);
    putchar('\n');
}

/* Prints the pairs removed, changed and added (the padding pair aside).
 * @return : the number of lines printed. */
static size_t print_diff(const gk_model *before, const gk_model *after) {
    size_t lines = 0;
    for (size_t i = 0; i < gk_kv_count(before); i++) {
        const gk_kv *kv = gk_kv_at(before, i);
        if (strcmp(kv->key.ptr, GK_PADDING_KEY) == 0) continue;
        int64_t j = gk_kv_find(after, kv->key.ptr);
        if (j >= 0 && gk_value_equal(&kv->value, &gk_kv_at(after, (size_t)j)->value)) continue;
        print_pair('-', kv);
        lines++;
        if (j >= 0) {
            print_pair('+', gk_kv_at(after, (size_t)j));
            lines++;
        }
    }
    for (size_t i = 0; i < gk_kv_count(after); i++) {
        const gk_kv *kv = gk_kv_at(after, i);
        if (strcmp(kv->key.ptr, GK_PADDING_KEY) == 0 || gk_kv_find(before, kv->key.ptr) >= 0) continue;
        print_pair('+', kv);
        lines++;
    }
    if (lines == 0) puts("(no metadata change)");
    return lines;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct fault_ctx {
    long after;   /* exit before operation number `after` (0-based), or -1 */
    long done;
} fault_ctx;

static bool fault_hook(void *ctx, const char *what) {
    fault_ctx *fc = ctx;
    (void)what;
    if (fc->after >= 0 && fc->done >= fc->after) _exit(137);
    fc->done++;
    return true;
}

/* Reports what recovering path's journal did. */
static void report_recovery(const char *path, gk_recovery what) {
    if (what == GK_RECOVERY_RESTORED)
        fprintf(stderr, "ggufkit: %s: an interrupted edit was undone (old header restored from the journal)\n", path);
    else if (what == GK_RECOVERY_UNTOUCHED)
        fprintf(stderr, "ggufkit: %s: removed the journal of an interrupted edit (the file was not changed)\n", path);
    else if (what == GK_RECOVERY_TORN)
        fprintf(stderr, "ggufkit: %s: removed an incomplete journal (the file was not changed)\n", path);
    else if (what == GK_RECOVERY_DISCARDED)
        fprintf(stderr, "ggufkit: %s: removed a stale journal (it did not belong to this file; the file was not changed)\n",
                path);
}

/* cmd_report, and for a lock waited on in vain, what to do about it. */
static int report_wait(const char *path, const gk_error *err) {
    cmd_report(path, err);
    if (err->code == GK_E_LOCKED) fprintf(stderr, "ggufkit: --wait SECONDS waits longer\n");
    return GK_EXIT_FAIL;
}

/* Installs the fault hook of GGUFKIT_FAULT_AFTER_WRITES (tests only) for the
 * library's in-place writer and recoveries, or none: *fc set. */
static void fault_from_env(fault_ctx *fc) {
    fc->after = -1;
    fc->done = 0;
    const char *fault = getenv("GGUFKIT_FAULT_AFTER_WRITES");
    bool on = fault != NULL && *fault != '\0';
    if (on) fc->after = strtol(fault, NULL, 10);
    gk_test_control(GK_TEST_IO_HOOK, on ? fault_hook : NULL, on ? (void *)fc : NULL);
}

/* What to do with a journal: recover (force: also an unproven one), or discard. */
typedef enum journal_job { JOB_RECOVER, JOB_RECOVER_FORCE, JOB_DISCARD } journal_job;

/* Recovers an interrupted in-place edit of path (or discards its stale
 * journal), reporting what was done. */
static bool recover(const char *path, unsigned wait_ms, journal_job job, gk_recovery *what) {
    gk_error err;
    fault_ctx fc;
    fault_from_env(&fc);
    gk_status st = job == JOB_DISCARD ? gk_journal_discard(path, wait_ms, what, &err)
                   : job == JOB_RECOVER_FORCE ? gk_journal_recover_force(path, wait_ms, what, &err)
                                              : gk_journal_recover(path, wait_ms, what, &err);
    gk_test_control(GK_TEST_IO_HOOK, NULL, NULL);   /* fc ends here */
    if (st != GK_OK) {
        report_wait(path, &err);
        return false;
    }
    report_recovery(path, *what);
    return true;
}

/* Opens the input: under its edit lock when it is to be changed (recovering a
 * journal first), else as any reader does (after recovering a journal). */
static int open_input(const edit_args *a, gk_file **f) {
    gk_error err;
    gk_recovery what;
    gk_status st;
    if (a->in_place && !a->dry_run) {
        st = gk_open_exclusive(a->path, GK_OPEN_DEFAULT, a->wait_ms, &what, f, &err);
        report_recovery(a->path, what);
    } else {
        if (!recover(a->path, a->wait_ms, JOB_RECOVER, &what)) return GK_EXIT_FAIL;
        st = gk_open(a->path, GK_OPEN_DEFAULT, f, &err);
    }
    return st == GK_OK ? -1 : report_wait(a->path, &err);
}

static int rewrite(gk_file *f, gk_model *m, const edit_args *a, const char *dest) {
    gk_error err;
    /* --reserve 0: no room, so no pair (one the file had is dropped), not an empty one */
    if (a->has_reserve && a->reserve == 0) gk_kv_delete(m, GK_PADDING_KEY);
    if (a->has_reserve && a->reserve > 0 && gk_model_set_padding(m, a->reserve, &err) != GK_OK)
        return cmd_report(a->path, &err);
    if (dest == NULL && gk_edit_replace_check(f, &err) != GK_OK) return cmd_report(a->path, &err);
    if (a->dry_run) {
        printf("would write %s: a new file (header %" PRIu64 " bytes)\n", dest ? dest : a->path,
               gk_model_data_start(m));
        /* As the real run would: an OUT that exists (without --force) or is an input fails. */
        if (dest && !gk_sink_dest_ok(dest, a->force ? GK_SINK_OVERWRITE : GK_SINK_DEFAULT, &err)) {
            fprintf(stderr, "ggufkit: %s\nggufkit edit: --dry-run: the edit would fail here (nothing written)\n",
                    err.message);
            return GK_EXIT_FAIL;
        }
        return GK_EXIT_OK;
    }
    cmd_progress bar;
    cmd_progress_start(&bar, "edit", 0);
    gk_write_stats stats = { 0 };
    bar.stats = &stats;
    gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .sink_flags = a->force ? GK_SINK_OVERWRITE : 0, .progress = cmd_write_progress,
                           .progress_ctx = &bar, .clone = a->no_clone ? GK_CLONE_NEVER : GK_CLONE_PAD,
                           .stats = &stats };
    /* A padding pair the edit deleted is not put back to make the tensors clone. */
    if (!a->no_clone && gk_kv_get(gk_file_model(f), GK_PADDING_KEY) && !gk_kv_get(m, GK_PADDING_KEY))
        opts.clone = GK_CLONE_AUTO;
    gk_status st = gk_edit_rewrite(f, m, dest, &opts, &err);
    cmd_progress_finish(&bar);
    if (st == GK_OK) cmd_clone_summary(&stats);
    if (st != GK_OK) {
        if (st == GK_E_SAME_FILE && dest && gk_same_file(dest, a->path))
            fprintf(stderr, "ggufkit: use --in-place to edit FILE itself\n");
        return cmd_report(dest ? dest : a->path, &err);
    }
    return GK_EXIT_OK;
}

static int write_in_place(gk_file *f, gk_model *m, const edit_args *a) {
    gk_error err;
    gk_inplace_plan plan;
    if (gk_inplace_fit(f, m, &plan, &err) != GK_OK) return cmd_report(a->path, &err);
    if (!plan.fits) {
        if (a->in_place_auto) {
            if (a->dry_run) printf("in place: no (%s)\n", plan.reason);
            int rc = rewrite(f, m, a, NULL);
            if (rc == GK_EXIT_OK && !a->dry_run) printf("%s: rewritten: %s\n", a->path, plan.reason);
            return rc;
        }
        if (a->dry_run) {
            printf("in place: no (%s)\n", plan.reason);
            return GK_EXIT_OK;
        }
        fprintf(stderr, "ggufkit: %s: the edit does not fit in place: %s (use %s)\n", a->path, plan.reason,
                gk_edit_replace_check(f, &err) == GK_OK ? "--in-place=auto or -o OUT" : "-o OUT");
        return GK_EXIT_FAIL;
    }
    if (a->dry_run) {
        printf("in place: yes (header %" PRIu64 " of %" PRIu64 " bytes", plan.needed, plan.room);
        if (plan.padded) printf(", %s holds %" PRIu64 " bytes", GK_PADDING_KEY, plan.padding);
        printf(")\n");
        return GK_EXIT_OK;
    }
    fault_ctx fc;
    fault_from_env(&fc);
    bool changed;
    gk_status st = gk_inplace_write(f, m, &changed, &err);
    gk_test_control(GK_TEST_IO_HOOK, NULL, NULL);   /* fc ends here */
    if (st != GK_OK) return cmd_report(a->path, &err);
    printf("%s: %s\n", a->path, changed ? "edited in place" : "unchanged");
    return GK_EXIT_OK;
}

int cmd_edit(int argc, char **argv) {
    gk_error err;
    gk_error_clear(&err);
    edit_args a = { .ops = gk_edit_new(), .wait_ms = GK_EDIT_WAIT_MS };
    if (a.ops == NULL) {
        fprintf(stderr, "ggufkit: out of memory\n");
        return GK_EXIT_FAIL;
    }
    int rc = parse_args(argc, argv, &a, &err);
    if (rc >= 0) {
        gk_edit_free(a.ops);
        return rc;
    }
    rc = GK_EXIT_FAIL;
    gk_file *f = NULL;
    gk_model *m = NULL;
    /* SIGINT/SIGTERM: a rewrite stops cleanly (nothing left behind); an in-place
     * write, which is short, runs to its end. */
    cmd_catch_interrupts();
    if (a.recover_only || a.discard_only) {
        gk_recovery what;
        journal_job job = a.discard_only ? JOB_DISCARD : a.force ? JOB_RECOVER_FORCE : JOB_RECOVER;
        if (recover(a.path, a.wait_ms, job, &what)) {
            if (what == GK_RECOVERY_NONE)
                printf("%s: %s\n", a.path, a.discard_only ? "no journal to discard" : "no interrupted edit to recover");
            rc = GK_EXIT_OK;
        }
        goto done;
    }
    if ((rc = open_input(&a, &f)) >= 0) goto done;
    rc = GK_EXIT_FAIL;
    m = gk_model_clone(gk_file_model(f));
    if (m == NULL) {
        fprintf(stderr, "ggufkit: out of memory\n");
        goto done;
    }
    gk_edit_result res;
    if (gk_edit_apply(a.ops, m, a.force ? GK_EDIT_FORCE : 0, &res, &err) != GK_OK) {
        cmd_report(a.path, &err);
        if (res.refused) fprintf(stderr, "ggufkit: refused (--force overrides)\n");
        goto done;
    }
    if (a.dry_run) print_diff(gk_file_model(f), m);
    if (a.out) rc = rewrite(f, m, &a, a.out);
    else if (a.in_place) rc = write_in_place(f, m, &a);
    else {
        a.in_place_auto = false;
        a.dry_run = true;
        rc = write_in_place(f, m, &a);
    }
done:
    gk_model_free(m);
    gk_close(f);
    gk_edit_free(a.ops);
    return rc;
}
