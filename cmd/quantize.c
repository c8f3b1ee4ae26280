/*
 * quantize.c - `ggufkit quantize`: a drop-in for llama-quantize. Converts a
 * model's eligible tensors to a target (a plain type, or a preset that mixes
 * types per tensor as llama.cpp does), with llama-quantize's options, streamed
 * through worker threads; --dry-run prints the plan (text or JSON) without
 * reading tensor data.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cmd.h"
#include "options.h"

#define MAX_RULES 256

static const char *const usage =
    "usage: ggufkit quantize [options] IN [OUT] TYPE [THREADS]\n\n"
    "Quantizes IN's eligible tensors (names ending in 'weight', 2+ dimensions, not\n"
    "norms) to TYPE and writes OUT, laid out as llama-quantize lays it out.\n"
    "TYPE is a llama-quantize name or number (Q4_0, q8_0, Q4_K_M, 15, F16, COPY ...).\n"
    "Presets (Q4_K_M, IQ3_XS, ...) choose a type per tensor by name and layer as\n"
    "llama-quantize does; without OUT the output is ggml-model-TYPE.gguf beside IN.\n"
    "IN may be the first shard of a set (NAME-00001-of-0000N.gguf): all shards are read.\n"
    "THREADS 0 (or less) means all cores.\n"
    "  --pure                     every eligible tensor gets TYPE's base type (no mixing;\n"
    "                             --tensor-type still applies)\n"
    "  --allow-requantize         accept inputs that are already quantized\n"
    "  --no-fallback              refuse rows that are not whole blocks instead of\n"
    "                             falling back to a compatible type\n"
    "  --leave-output-tensor      keep output.weight unchanged\n"
    "  --output-tensor-type T     type for output.weight\n"
    "  --token-embedding-type T   type for token_embd.weight\n"
    "  --tensor-type PATTERN=T    tensors whose name matches PATTERN (a regular\n"
    "                             expression, searched; lowercased as llama-quantize does)\n"
    "                             get T; the first matching option wins, and the tensors\n"
    "                             it sets do not count in the per-layer mixing (repeatable)\n"
    "  --tensor-type-file FILE    PATTERN=T options read from FILE, separated by spaces\n"
    "                             or newlines\n"
    "  --prune-layers L0,L1,...   drop these layers' tensors, renumber the rest and set\n"
    "                             ARCH.block_count (importance-matrix entries follow)\n"
    "  --override-kv KEY=TYPE:V   set metadata KEY (TYPE int, float, bool, str) as\n"
    "                             llama-quantize does: an int as UINT32 of its magnitude, a\n"
    "                             float as FLOAT32, whatever the key held (repeatable)\n"
    "  --imatrix FILE             importance matrix (llama-imatrix output, legacy or GGUF)\n"
    "                             for every quantizer that takes weights; recorded in\n"
    "                             quantize.imatrix.* (the path exactly as given)\n"
    "  --include-weights NAME     use matrix entries whose name contains NAME only (repeatable)\n"
    "  --exclude-weights NAME     ignore matrix entries whose name contains NAME (repeatable;\n"
    "                             not together with --include-weights)\n"
    "  --keep-split               quantize a shard set shard by shard: OUT-00001-of-0000N.gguf ...\n"
    "                             (a final .gguf of OUT is dropped first, as llama-quantize does)\n"
    "  -t, --threads N            worker threads (default and 0: all cores)\n"
    "  --max-buffer-size MiB      accepted as llama-quantize accepts it (a positive number);\n"
    "                             ggufkit streams every tensor in small chunks anyway\n"
    "  --dry-run                  print the per-tensor plan, the sizes and whether an\n"
    "                             importance matrix would be needed; write nothing. Then\n"
    "                             check the outputs as the real run does: an OUT that exists\n"
    "                             (without --force), or that is one of the inputs, is reported\n"
    "                             and the dry run exits 1, as the real run would\n"
    "  --json                     with --dry-run: the plan as JSON\n"
    "  --force                    replace OUT if it exists\n"
    "  --list-types               print the accepted TYPE names (and which lack kernels)\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

/* Everything the command line says. */
typedef struct quant_args {
    gk_quant_opts qo;
    gk_quant_tensor_rule rules[MAX_RULES];
    char *rule_text[MAX_RULES];       /* "pattern=TYPE" as given, for messages */
    size_t n_rules;
    gk_kv_override *overrides;
    size_t n_overrides;
    uint32_t *prune;                   /* --prune-layers, sorted, without repeats */
    size_t n_prune;
    int64_t threads;                   /* 0: all cores */
    bool dry_run, json, force;
    const char *in, *out;
    char *out_owned;
    const char *imatrix_path;          /* --imatrix, as given */
    const char *include[MAX_RULES];    /* --include-weights */
    size_t n_include;
    const char *exclude[MAX_RULES];    /* --exclude-weights */
    size_t n_exclude;
    gk_imatrix *im;                    /* the matrix after filtering, NULL without one */
} quant_args;

static int parse_tensor_type(const char *s, int32_t *out) {
    const gk_type_info *t = gk_type_lookup(s);
    if (t == NULL) return cmd_usage_error("quantize", "unknown tensor type '%s'", s);
    *out = (int32_t)t->id;
    return GK_EXIT_OK;
}

/* Whether a target's tensors can be produced by the kernels in the table. */
static bool target_has_kernels(const gk_quant_target *t) {
    if (t->is_copy) return true;
    const gk_type_info *ti = gk_type_get(t->base_type);
    return ti && ti->quantize != NULL;
}

static void list_types(void) {
    printf("kernels: %s (GGUFKIT_KERNELS=scalar|avx2|avx512 to choose)\n", gk_kernels_name());
    for (size_t k = 0; k < gk_quant_target_count(); k++) {
        const gk_quant_target *t = gk_quant_target_at(k);
        printf("%-9s %2u  %-8s%s\n", t->name, t->ftype, t->is_copy ? "copy" : gk_type_get(t->base_type)->name,
               target_has_kernels(t) ? "" : "  (no kernels yet)");
    }
    /* tensor types (also those no target is named after, as NVFP4) this build cannot convert */
    bool any = false;
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *ti = gk_type_get(id);
        if (ti == NULL || !ti->quantized || (ti->quantize != NULL && ti->dequantize != NULL) || id == GK_TYPE_Q8_1 ||
            id == GK_TYPE_Q8_K)
            continue;
        printf("%s %s%s", any ? "" : "tensor types without kernels:", ti->name,
               ti->dequantize == NULL ? "" : "(no quantizer)");
        any = true;
    }
    if (any) printf("\n");
}

/* --tensor-type PATTERN=TYPE, checked as llama-quantize checks it. */
static int add_tensor_rule(quant_args *a, const char *arg) {
    const char *eq = strchr(arg, '=');
    if (eq == NULL) return cmd_usage_error("quantize", "--tensor-type '%s': expected PATTERN=TYPE", arg);
    if (eq == arg) return cmd_usage_error("quantize", "--tensor-type '%s': missing tensor name pattern", arg);
    if (eq[1] == '\0') return cmd_usage_error("quantize", "--tensor-type '%s': missing type", arg);
    if (a->n_rules >= MAX_RULES) return cmd_usage_error("quantize", "too many --tensor-type options");
    const gk_type_info *t = gk_type_lookup(eq + 1);
    if (t == NULL) return cmd_usage_error("quantize", "--tensor-type '%s': unknown type '%s'", arg, eq + 1);
    char *pat = strndup(arg, (size_t)(eq - arg));
    char *text = strdup(arg);
    if (pat == NULL || text == NULL) {
        free(pat);
        free(text);
        return cmd_usage_error("quantize", "out of memory");
    }
    for (char *p = pat; *p; p++) *p = (char)tolower((unsigned char)*p);
    regex_t rx;
    int rc = regcomp(&rx, pat, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[128];
        regerror(rc, &rx, msg, sizeof msg);
        free(pat);
        free(text);
        return cmd_usage_error("quantize", "--tensor-type '%s': bad pattern: %s", arg, msg);
    }
    regfree(&rx);
    a->rules[a->n_rules] = (gk_quant_tensor_rule){ pat, t->id };
    a->rule_text[a->n_rules++] = text;
    return GK_EXIT_OK;
}

/* --tensor-type-file FILE: PATTERN=TYPE words separated by white space. */
static int add_tensor_rules_file(quant_args *a, const char *path) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return cmd_usage_error("quantize", "--tensor-type-file %s: %s", path, strerror(errno));
    char word[4096];
    int rc = GK_EXIT_OK;
    while (rc == GK_EXIT_OK && fscanf(f, "%4095s", word) == 1) {
        if (strlen(word) == sizeof word - 1) {
            rc = cmd_usage_error("quantize", "--tensor-type-file %s: a word of 4095 bytes or more", path);
            break;
        }
        rc = add_tensor_rule(a, word);
    }
    if (rc == GK_EXIT_OK && ferror(f)) rc = cmd_usage_error("quantize", "--tensor-type-file %s: read error", path);
    fclose(f);
    return rc;
}

static int cmp_u32(const void *x, const void *y) {
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* --prune-layers L0,L1,...: non-negative layer numbers, kept sorted and unique. */
static int add_prune_layers(quant_args *a, const char *arg) {
    const char *p = arg;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[32];
        uint64_t v;
        if (len == 0 || len >= sizeof item)
            return cmd_usage_error("quantize", "--prune-layers '%s': invalid layer id '%.*s'", arg, (int)len, p);
        memcpy(item, p, len);
        item[len] = '\0';
        if (!isdigit((unsigned char)item[0]) || !cmd_parse_u64(item, &v) || v > UINT32_MAX)
            return cmd_usage_error("quantize", "--prune-layers '%s': invalid layer id '%s'", arg, item);
        uint32_t *grown = realloc(a->prune, (a->n_prune + 1) * sizeof *grown);
        if (grown == NULL) return cmd_usage_error("quantize", "out of memory");
        a->prune = grown;
        a->prune[a->n_prune++] = (uint32_t)v;
        if (comma == NULL) break;
        p = comma + 1;
    }
    qsort(a->prune, a->n_prune, sizeof *a->prune, cmp_u32);
    size_t m = 0;
    for (size_t k = 0; k < a->n_prune; k++)
        if (m == 0 || a->prune[m - 1] != a->prune[k]) a->prune[m++] = a->prune[k];
    a->n_prune = m;
    return GK_EXIT_OK;
}

/* A thread count as llama-quantize reads it (a decimal integer; 0 or less
 * means all cores, as does any count above INT_MAX). */
static bool parse_threads(const char *s, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0') return false;
    if (errno == ERANGE || v > INT_MAX) v = v < 0 ? 0 : INT_MAX;
    *out = v <= 0 ? 0 : v;
    return true;
}

static int add_override(quant_args *a, const char *arg) {
    gk_kv_override o;
    gk_error err;
    if (gk_kv_override_parse(arg, &o, &err) != GK_OK)
        return cmd_usage_error("quantize", "--override-kv: %s", err.message);
    gk_kv_override *grown = realloc(a->overrides, (a->n_overrides + 1) * sizeof *grown);
    if (grown == NULL) return cmd_usage_error("quantize", "out of memory");
    a->overrides = grown;
    a->overrides[a->n_overrides++] = o;
    return GK_EXIT_OK;
}

static void free_args(quant_args *a) {
    for (size_t k = 0; k < a->n_rules; k++) {
        free((char *)a->rules[k].pattern);
        free(a->rule_text[k]);
    }
    free(a->overrides);
    free(a->prune);
    free(a->out_owned);
    gk_imatrix_free(a->im);
}

/* llama-quantize's name when OUT is left out: ggml-model-TYPE.gguf beside IN. */
static char *default_output(const char *in, const char *type_name, bool keep_split) {
    const char *slash = strrchr(in, '/');
    size_t dir = slash ? (size_t)(slash - in + 1) : 0;
    size_t n = dir + strlen(type_name) + 32;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%.*sggml-model-%s%s", (int)dir, in, type_name, keep_split ? "" : ".gguf");
    return out;
}

/* Options that contradict each other or the target: usage errors. */
static int check_conflicts(const quant_args *a) {
    const gk_quant_opts *q = &a->qo;
    const char *tn = q->target->name;
    if (q->leave_output && q->output_type >= 0)
        return cmd_usage_error("quantize", "--leave-output-tensor and --output-tensor-type conflict");
    if (a->json && !a->dry_run) return cmd_usage_error("quantize", "--json needs --dry-run");
    if (q->target->is_copy && (q->output_type >= 0 || q->token_embd_type >= 0 || a->n_rules || q->leave_output))
        return cmd_usage_error("quantize", "COPY keeps every tensor as it is: --output-tensor-type, "
                               "--token-embedding-type, --tensor-type and --leave-output-tensor do not apply");
    if (a->n_rules && !gk_type_get(q->target->base_type)->quantized)
        return cmd_usage_error("quantize", "--tensor-type does not apply to %s (llama-quantize applies it "
                               "only to quantized targets)", tn);
    return GK_EXIT_OK;
}

static int parse_args(int argc, char **argv, quant_args *a, bool *done) {
    const char *pos[4];
    int n_pos = 0, rc;
    int64_t opt_threads = -1;
    *done = false;
    enum { OPT_LIST_TYPES = 1, OPT_PURE, OPT_ALLOW_REQUANTIZE, OPT_NO_FALLBACK, OPT_LEAVE_OUTPUT, OPT_KEEP_SPLIT,
           OPT_DRY_RUN, OPT_JSON, OPT_FORCE, OPT_OUTPUT_TYPE, OPT_EMBD_TYPE, OPT_TENSOR_TYPE, OPT_TENSOR_TYPE_FILE,
           OPT_PRUNE_LAYERS, OPT_OVERRIDE_KV, OPT_THREADS, OPT_MAX_BUFFER, OPT_IMATRIX, OPT_INCLUDE, OPT_EXCLUDE };
    static const cmd_option options[] = {
        { OPT_LIST_TYPES, "--list-types", NULL, CMD_OPT_FLAG, NULL },
        { OPT_PURE, "--pure", NULL, CMD_OPT_FLAG, NULL },
        { OPT_ALLOW_REQUANTIZE, "--allow-requantize", NULL, CMD_OPT_FLAG, NULL },
        { OPT_NO_FALLBACK, "--no-fallback", NULL, CMD_OPT_FLAG, NULL },
        { OPT_LEAVE_OUTPUT, "--leave-output-tensor", NULL, CMD_OPT_FLAG, NULL },
        { OPT_KEEP_SPLIT, "--keep-split", NULL, CMD_OPT_FLAG, NULL },
        { OPT_DRY_RUN, "--dry-run", NULL, CMD_OPT_FLAG, NULL },
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { OPT_OUTPUT_TYPE, "--output-tensor-type", NULL, CMD_OPT_VALUE, "TYPE" },
        { OPT_EMBD_TYPE, "--token-embedding-type", NULL, CMD_OPT_VALUE, "TYPE" },
        { OPT_TENSOR_TYPE, "--tensor-type", NULL, CMD_OPT_VALUE, "PATTERN=TYPE" },
        { OPT_TENSOR_TYPE_FILE, "--tensor-type-file", NULL, CMD_OPT_VALUE, "FILE" },
        { OPT_PRUNE_LAYERS, "--prune-layers", NULL, CMD_OPT_VALUE, "L0,L1,..." },
        { OPT_OVERRIDE_KV, "--override-kv", NULL, CMD_OPT_VALUE, "KEY=TYPE:VALUE" },
        { OPT_THREADS, "--threads", "-t", CMD_OPT_VALUE, "N" },
        { OPT_MAX_BUFFER, "--max-buffer-size", NULL, CMD_OPT_VALUE, "MiB" },
        { OPT_IMATRIX, "--imatrix", NULL, CMD_OPT_VALUE, "FILE" },
        { OPT_INCLUDE, "--include-weights", NULL, CMD_OPT_VALUE, "NAME" },
        { OPT_EXCLUDE, "--exclude-weights", NULL, CMD_OPT_VALUE, "NAME" },
        { 0 },
    };
    static const cmd_optspec spec = { "quantize", options, CMD_OPTS_NUMBERS_ARE_ARGS, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *v = p.value;
        rc = GK_EXIT_OK;
        switch (id) {
        case CMD_OPTS_EXIT: *done = p.rc == GK_EXIT_OK; return p.rc;
        case OPT_LIST_TYPES: list_types(); *done = true; return GK_EXIT_OK;
        case OPT_PURE: a->qo.pure = true; break;
        case OPT_ALLOW_REQUANTIZE: a->qo.allow_requantize = true; break;
        case OPT_NO_FALLBACK: a->qo.no_fallback = true; break;
        case OPT_LEAVE_OUTPUT: a->qo.leave_output = true; break;
        case OPT_KEEP_SPLIT: a->qo.keep_split = true; break;
        case OPT_DRY_RUN: a->dry_run = true; break;
        case OPT_JSON: a->json = true; break;
        case OPT_FORCE: a->force = true; break;
        case OPT_OUTPUT_TYPE: rc = parse_tensor_type(v, &a->qo.output_type); break;
        case OPT_EMBD_TYPE: rc = parse_tensor_type(v, &a->qo.token_embd_type); break;
        case OPT_TENSOR_TYPE: rc = add_tensor_rule(a, v); break;
        case OPT_TENSOR_TYPE_FILE:
            gk_inputs_add(v, NULL);   /* a side input: no output may replace it (io/inputs.c) */
            rc = add_tensor_rules_file(a, v);
            break;
        case OPT_PRUNE_LAYERS: rc = add_prune_layers(a, v); break;
        case OPT_OVERRIDE_KV: rc = add_override(a, v); break;
        case OPT_THREADS:
            if (!parse_threads(v, &opt_threads))
                return cmd_usage_error("quantize", "--threads needs a number (0: all cores)");
            break;
        case OPT_MAX_BUFFER: {
            uint64_t mib;
            if (!cmd_parse_u64(v, &mib) || mib == 0 || mib > INT_MAX)
                return cmd_usage_error("quantize", "invalid --max-buffer-size '%s' (a positive number of MiB)", v);
            break;
        }
        case OPT_IMATRIX:
            gk_inputs_add(v, NULL);   /* a side input, as the type file */
            a->imatrix_path = v;
            break;
        case OPT_INCLUDE: case OPT_EXCLUDE: {
            bool inc = id == OPT_INCLUDE;
            size_t *n = inc ? &a->n_include : &a->n_exclude;
            if (*n >= MAX_RULES) return cmd_usage_error("quantize", "too many %s options", p.name);
            (inc ? a->include : a->exclude)[(*n)++] = v;
            break;
        }
        default:
            if (n_pos >= 4) return cmd_usage_error("quantize", "too many arguments");
            pos[n_pos++] = v;
        }
        if (rc != GK_EXIT_OK) return rc;
    }
    if (n_pos < 2) return cmd_usage_error("quantize", "need IN [OUT] TYPE");
    if (a->n_include && a->n_exclude)
        return cmd_usage_error("quantize", "only one of --include-weights and --exclude-weights can be used");
    a->in = pos[0];
    /* As llama-quantize: when the second argument is a type, OUT was left out. */
    int type_at = 2;
    const gk_quant_target *second = gk_quant_target_lookup(pos[1]);
    int64_t tmp;
    if (second && (n_pos == 2 || (n_pos == 3 && parse_threads(pos[2], &tmp)))) type_at = 1;
    if (type_at == 2 && n_pos < 3) return cmd_usage_error("quantize", "need IN [OUT] TYPE");
    a->qo.target = gk_quant_target_lookup(pos[type_at]);
    if (a->qo.target == NULL)
        return cmd_usage_error("quantize", "unknown type '%s' (see --list-types)", pos[type_at]);
    if (n_pos > type_at + 2) return cmd_usage_error("quantize", "too many arguments");
    if (n_pos == type_at + 2) {
        if (!parse_threads(pos[type_at + 1], &a->threads))
            return cmd_usage_error("quantize", "THREADS '%s' is not a number (0: all cores)", pos[type_at + 1]);
        if (opt_threads >= 0 && opt_threads != a->threads)
            return cmd_usage_error("quantize", "--threads %lld and THREADS %lld conflict",
                                   (long long)opt_threads, (long long)a->threads);
    } else {
        a->threads = opt_threads < 0 ? 0 : opt_threads;
    }
    if (type_at == 2) {
        a->out = pos[1];
    } else {
        a->out = a->out_owned = default_output(a->in, a->qo.target->name, a->qo.keep_split);
        if (a->out == NULL) return cmd_usage_error("quantize", "out of memory");
    }
    a->qo.tensor_rules = a->rules;
    a->qo.n_tensor_rules = a->n_rules;
    a->qo.overrides = a->overrides;
    a->qo.n_overrides = a->n_overrides;
    a->qo.prune_layers = a->prune;
    a->qo.n_prune_layers = a->n_prune;
    a->qo.plan_only = a->dry_run;
    return check_conflicts(a);
}

/* ------------------------------------------------------------------------ */
/* Output names                                                             */
/* ------------------------------------------------------------------------ */

/* The path of output k: OUT, or with --keep-split PREFIX-0000k-of-0000n.gguf where
 * PREFIX is OUT without a final ".gguf", as llama-quantize names them. */
static char *output_path(const quant_args *a, size_t k, size_t n) {
    if (!a->qo.keep_split) return strdup(a->out);
    size_t plen = strlen(a->out);
    if (plen > 5 && strcmp(a->out + plen - 5, ".gguf") == 0) plen -= 5;
    char *prefix = strndup(a->out, plen);
    char *p = prefix ? gk_split_path(prefix, k, n) : NULL;
    free(prefix);
    return p;
}

/* ------------------------------------------------------------------------ */
/* The plan, printed                                                        */
/* ------------------------------------------------------------------------ */

static double bits_per_weight(uint32_t type) {
    const gk_type_info *t = gk_type_get(type);
    return t ? 8.0 * t->block_bytes / t->block_elems : 0.0;
}

static const gk_tensor *entry_input(gk_file **inputs, const gk_quant_entry *e) {
    return gk_tensor_at(gk_file_model(inputs[e->src_input]), e->src_tensor);
}

/* The entry's name in its output (--prune-layers renumbers layers). */
static const char *entry_name(const gk_quant_plan *plan, const gk_quant_entry *e) {
    return gk_tensor_at(plan->outs[e->out_file], e->out_tensor)->name.ptr;
}

/* A short account of why the entry has its type. */
static void entry_note(const quant_args *a, const gk_quant_entry *e, const gk_tensor *t, char *buf, size_t n) {
    buf[0] = '\0';
    size_t used = 0;
#define NOTE(...) (used += (size_t)snprintf(buf + used, used < n ? n - used : 0, __VA_ARGS__))
    if (e->why & GK_QWHY_KEPT) NOTE("kept");
    else if (e->to == e->from) NOTE("unchanged");
    if (e->why & GK_QWHY_MIXED) NOTE("%srule", used ? ", " : "");
    if (e->why & GK_QWHY_PATTERN) NOTE("%s--tensor-type %s", used ? ", " : "", a->rule_text[e->pattern]);
    if (e->why & GK_QWHY_OPTION) NOTE("%soption", used ? ", " : "");
    if (e->why & GK_QWHY_FALLBACK)
        NOTE("%sFALLBACK: rows of %llu are not whole %s blocks", used ? ", " : "",
             (unsigned long long)t->ne[0], gk_type_get(e->wanted)->name);
    if (e->why & GK_QWHY_NEEDS_IMATRIX) NOTE("%sNEEDS AN IMPORTANCE MATRIX", used ? ", " : "");
    if (e->why & GK_QWHY_NO_KERNEL) NOTE("%sno kernel in this build", used ? ", " : "");
#undef NOTE
}

typedef struct plan_totals {
    uint64_t elements, bytes_in, bytes_out;
} plan_totals;

/* Bytes tensor e takes in its output type. */
static uint64_t entry_out_bytes(gk_file **inputs, const gk_quant_entry *e) {
    const gk_tensor *ti = entry_input(inputs, e);
    return gk_type_row_bytes(e->to, ti->ne[0]) * (gk_tensor_elements(ti, NULL) / ti->ne[0]);
}

static plan_totals totals_of(gk_file **inputs, const gk_quant_plan *plan) {
    plan_totals s = { 0 };
    for (size_t i = 0; i < plan->n_entries; i++) {
        const gk_tensor *ti = entry_input(inputs, &plan->entries[i]);
        s.elements += gk_tensor_elements(ti, NULL);
        s.bytes_in += ti->nbytes;
        s.bytes_out += entry_out_bytes(inputs, &plan->entries[i]);
    }
    return s;
}

static void print_plan_text(const quant_args *a, gk_file **inputs, const gk_quant_plan *plan) {
    uint64_t ftype = a->qo.target->ftype;
    gk_kv_get_uint(plan->out, "general.file_type", &ftype);
    printf("target %s (file type %llu)%s\n", a->qo.target->name, (unsigned long long)ftype,
           a->qo.pure ? ", --pure" : "");
    printf("%-36s %-8s    %-8s %6s %13s %13s  %s\n", "tensor", "from", "to", "bpw", "bytes in", "bytes out", "note");
    size_t shown_file = (size_t)-1;
    for (size_t i = 0; i < plan->n_entries; i++) {
        const gk_quant_entry *e = &plan->entries[i];
        if (plan->n_outs > 1 && e->out_file != shown_file) {
            char *p = output_path(a, e->out_file, plan->n_outs);
            printf("-- %s\n", p ? p : "?");
            free(p);
            shown_file = e->out_file;
        }
        const gk_tensor *ti = entry_input(inputs, e);
        uint64_t out_bytes = entry_out_bytes(inputs, e);
        char note[256];
        entry_note(a, e, ti, note, sizeof note);
        printf("%-36s %-8s -> %-8s %6.2f %13llu %13llu  %s\n", entry_name(plan, e), gk_type_get(e->from)->name,
               gk_type_get(e->to)->name, bits_per_weight(e->to), (unsigned long long)ti->nbytes,
               (unsigned long long)out_bytes, note);
    }
    plan_totals s = totals_of(inputs, plan);
    printf("\n%zu tensors, %zu converted, %zu fallbacks, %zu requantized", plan->n_entries,
           plan->n_converted, plan->n_fallbacks, plan->n_requantized);
    if (plan->n_pruned) printf(", %zu pruned", plan->n_pruned);
    printf("\n");
    printf("tensor data: %.2f MiB -> %.2f MiB (%.2f -> %.2f bits per weight)\n", s.bytes_in / 1048576.0,
           s.bytes_out / 1048576.0, s.elements ? 8.0 * s.bytes_in / s.elements : 0.0,
           s.elements ? 8.0 * s.bytes_out / s.elements : 0.0);
    for (size_t k = 0; k < plan->n_outs; k++) {
        char *p = output_path(a, k, plan->n_outs);
        printf("output: %s (%zu tensors)\n", p ? p : "?", gk_tensor_count(plan->outs[k]));
        free(p);
    }
    if (plan->n_need_imatrix)
        printf("WARNING: quantizing for real will require an importance matrix (--imatrix): "
               "%zu tensor%s need one\n", plan->n_need_imatrix, plan->n_need_imatrix == 1 ? "" : "s");
    else
        printf("importance matrix: %s\n", a->qo.has_imatrix ? "given" : "not needed");
}

static cJSON *json_shape(const gk_tensor *t) {
    cJSON *arr = cJSON_CreateArray();
    for (uint32_t d = 0; arr && d < t->n_dims; d++) cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)t->ne[d]));
    return arr;
}

static int print_plan_json(const quant_args *a, gk_file **inputs, size_t n_inputs, const gk_quant_plan *plan) {
    cJSON *root = cJSON_CreateObject();
    if (root == NULL) return GK_EXIT_FAIL;
    cJSON *ins = cJSON_AddArrayToObject(root, "inputs");
    for (size_t k = 0; k < n_inputs; k++) cJSON_AddItemToArray(ins, cJSON_CreateString(gk_file_path(inputs[k])));
    cJSON_AddStringToObject(root, "target", a->qo.target->name);
    uint64_t ftype = a->qo.target->ftype;
    gk_kv_get_uint(plan->out, "general.file_type", &ftype);
    cJSON_AddNumberToObject(root, "file_type", (double)ftype);
    cJSON_AddBoolToObject(root, "pure", a->qo.pure);
    cJSON_AddBoolToObject(root, "keep_split", a->qo.keep_split);
    cJSON *outs = cJSON_AddArrayToObject(root, "outputs");
    for (size_t k = 0; k < plan->n_outs; k++) {
        cJSON *o = cJSON_CreateObject();
        char *p = output_path(a, k, plan->n_outs);
        cJSON_AddStringToObject(o, "path", p ? p : "");
        free(p);
        cJSON_AddNumberToObject(o, "tensors", (double)gk_tensor_count(plan->outs[k]));
        cJSON_AddNumberToObject(o, "kv_pairs", (double)gk_kv_count(plan->outs[k]));
        cJSON_AddItemToArray(outs, o);
    }
    cJSON *tensors = cJSON_AddArrayToObject(root, "tensors");
    for (size_t i = 0; i < plan->n_entries; i++) {
        const gk_quant_entry *e = &plan->entries[i];
        const gk_tensor *ti = entry_input(inputs, e);
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", entry_name(plan, e));
        if (strcmp(entry_name(plan, e), ti->name.ptr) != 0) cJSON_AddStringToObject(t, "input_name", ti->name.ptr);
        cJSON_AddItemToObject(t, "shape", json_shape(ti));
        cJSON_AddStringToObject(t, "from", gk_type_get(e->from)->name);
        cJSON_AddStringToObject(t, "to", gk_type_get(e->to)->name);
        cJSON_AddStringToObject(t, "wanted", gk_type_get(e->wanted)->name);
        cJSON_AddNumberToObject(t, "bpw", bits_per_weight(e->to));
        cJSON_AddNumberToObject(t, "bytes_in", (double)ti->nbytes);
        cJSON_AddNumberToObject(t, "bytes_out", (double)entry_out_bytes(inputs, e));
        cJSON_AddNumberToObject(t, "input", (double)e->src_input);
        cJSON_AddNumberToObject(t, "output", (double)e->out_file);
        cJSON_AddBoolToObject(t, "converted", e->to != e->from);
        cJSON_AddBoolToObject(t, "fallback", (e->why & GK_QWHY_FALLBACK) != 0);
        cJSON_AddBoolToObject(t, "kept", (e->why & GK_QWHY_KEPT) != 0);
        cJSON_AddBoolToObject(t, "rule", (e->why & GK_QWHY_MIXED) != 0);
        cJSON_AddBoolToObject(t, "option", (e->why & GK_QWHY_OPTION) != 0);
        cJSON_AddBoolToObject(t, "needs_imatrix", (e->why & GK_QWHY_NEEDS_IMATRIX) != 0);
        cJSON_AddBoolToObject(t, "kernel", (e->why & GK_QWHY_NO_KERNEL) == 0);
        if (e->why & GK_QWHY_PATTERN) cJSON_AddStringToObject(t, "tensor_type", a->rule_text[e->pattern]);
        else cJSON_AddNullToObject(t, "tensor_type");
        cJSON_AddItemToArray(tensors, t);
    }
    plan_totals s = totals_of(inputs, plan);
    cJSON *tot = cJSON_AddObjectToObject(root, "totals");
    cJSON_AddNumberToObject(tot, "tensors", (double)plan->n_entries);
    cJSON_AddNumberToObject(tot, "converted", (double)plan->n_converted);
    cJSON_AddNumberToObject(tot, "fallbacks", (double)plan->n_fallbacks);
    cJSON_AddNumberToObject(tot, "requantized", (double)plan->n_requantized);
    cJSON_AddNumberToObject(tot, "pruned", (double)plan->n_pruned);
    cJSON_AddBoolToObject(tot, "needs_imatrix", plan->n_need_imatrix > 0);
    cJSON_AddNumberToObject(tot, "elements", (double)s.elements);
    cJSON_AddNumberToObject(tot, "bytes_in", (double)s.bytes_in);
    cJSON_AddNumberToObject(tot, "bytes_out", (double)s.bytes_out);
    cJSON_AddNumberToObject(tot, "bpw_in", s.elements ? 8.0 * s.bytes_in / s.elements : 0.0);
    cJSON_AddNumberToObject(tot, "bpw_out", s.elements ? 8.0 * s.bytes_out / s.elements : 0.0);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL) return GK_EXIT_FAIL;
    puts(text);
    free(text);
    return GK_EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* Refuses up front an output that exists (without --force), is an input (a
 * model, a shard, the matrix, a type file: any file read, io/inputs.c) or is not
 * a regular file; the dry run checks the same, so it fails as the real run would. */
static int check_outputs(const quant_args *a, size_t n_outs) {
    for (size_t k = 0; k < n_outs; k++) {
        char *p = output_path(a, k, n_outs);
        if (p == NULL) return cmd_usage_error("quantize", "output name too long");
        gk_error err;
        if (!gk_sink_dest_ok(p, a->force ? GK_SINK_OVERWRITE : GK_SINK_DEFAULT, &err)) {
            fprintf(stderr, "ggufkit: %s\n", err.message);
            if (a->dry_run) fprintf(stderr, "ggufkit quantize: --dry-run: the run would fail here (nothing written)\n");
            free(p);
            return GK_EXIT_FAIL;
        }
        free(p);
    }
    return GK_EXIT_OK;
}

static void warn_plan(gk_file **inputs, const gk_quant_plan *plan) {
    if (plan->n_requantized > 0)
        fprintf(stderr, "ggufkit quantize: warning: requantizing %zu already-quantized tensors; "
                        "quality will be lower than quantizing from F32/F16\n", plan->n_requantized);
    for (size_t i = 0; i < plan->n_entries; i++) {
        const gk_quant_entry *e = &plan->entries[i];
        if (e->why & GK_QWHY_FALLBACK)
            fprintf(stderr, "ggufkit quantize: %s: row length %llu not a multiple of %s's block, using %s\n",
                    entry_name(plan, e), (unsigned long long)entry_input(inputs, e)->ne[0],
                    gk_type_get(e->wanted)->name, gk_type_get(e->to)->name);
    }
}

/* One progress bar per output, as each output is written (the library reports
 * the bytes of all outputs together). */
typedef struct outputs_progress {
    cmd_progress bar;
    const uint64_t *ends;   /* input bytes up to the end of output k */
    size_t n, cur;
} outputs_progress;

static void next_bar(outputs_progress *p) {
    cmd_progress_finish(&p->bar);
    p->cur++;
    cmd_progress_start(&p->bar, "quantize", 0);
}

static bool outputs_progress_fn(void *ctx, uint64_t done, uint64_t total) {
    (void)total;
    outputs_progress *p = ctx;
    while (p->cur + 1 < p->n && done > p->ends[p->cur]) next_bar(p);
    uint64_t start = p->cur ? p->ends[p->cur - 1] : 0;
    return cmd_write_progress(&p->bar, done - start, p->ends[p->cur] - start);
}

static int write_outputs(const quant_args *a, gk_file **inputs, size_t n_inputs, gk_quant_plan *plan) {
    size_t n = plan->n_outs;
    gk_step *steps = calloc(plan->n_entries + 1, sizeof *steps);
    gk_output *outs = calloc(n ? n : 1, sizeof *outs);
    uint64_t *ends = calloc(n ? n : 1, sizeof *ends);
    int rc = GK_EXIT_OK;
    if (steps == NULL || outs == NULL || ends == NULL) {
        fprintf(stderr, "ggufkit: out of memory\n");
        rc = GK_EXIT_FAIL;
    }
    for (size_t k = 0, i = 0; k < n && rc == GK_EXIT_OK; k++) {
        outs[k].model = plan->outs[k];
        outs[k].steps = steps + i;
        ends[k] = k ? ends[k - 1] : 0;
        for (; i < plan->n_entries && plan->entries[i].out_file == k; i++) {
            const gk_tensor *t = entry_input(inputs, &plan->entries[i]);
            steps[i] = (gk_step){ inputs[plan->entries[i].src_input], plan->entries[i].src_tensor,
                                  a->im ? gk_imatrix_for_tensor(a->im, t) : NULL };
            ends[k] += t->nbytes;
        }
        if ((outs[k].path = output_path(a, k, n)) == NULL) rc = cmd_usage_error("quantize", "output name too long");
    }
    if (rc == GK_EXIT_OK) {
        cmd_catch_interrupts();
        outputs_progress pr = { .ends = ends, .n = n };
        cmd_progress_start(&pr.bar, "quantize", 0);
        gk_write_opts wo = { GK_OPTS_INIT(gk_write_opts), .sink_flags = a->force ? GK_SINK_OVERWRITE : 0, .pad_end = true,
                             .threads = (int)a->threads, .progress = outputs_progress_fn, .progress_ctx = &pr };
        gk_error err;
        gk_outputs_failure at;
        gk_status st = gk_write_outputs(outs, n, inputs, n_inputs, &wo, &at, &err);
        /* a bar for each output up to the one that failed, or all of them */
        while (pr.cur + 1 < (st == GK_OK ? n : at.output + 1)) next_bar(&pr);
        cmd_progress_finish(&pr.bar);
        if (st != GK_OK) rc = cmd_report(at.output < n ? outs[at.output].path : NULL, &err);
    }
    for (size_t k = 0; outs && k < n; k++) free((char *)outs[k].path);
    free(outs);
    free(ends);
    free(steps);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Importance matrix                                                        */
/* ------------------------------------------------------------------------ */

/* Loads --imatrix, applies --include/--exclude-weights, checks the matrix
 * against the inputs and appends the metadata llama-quantize records to the
 * overrides (after the user's, as it does). A matrix left empty by the filters
 * counts as none, as in llama-quantize. */
static int prepare_imatrix(quant_args *a, const gk_model *const *models, size_t n_models) {
    gk_error err;
    if (a->imatrix_path != NULL) {
        if (gk_imatrix_load(a->imatrix_path, &a->im, &err) != GK_OK) return cmd_report(a->imatrix_path, &err);
        gk_imatrix_filter(a->im, a->include, a->n_include, a->exclude, a->n_exclude);
        if (gk_imatrix_count(a->im) == 0) {
            fprintf(stderr, "ggufkit quantize: warning: %s: no entries left after --include-weights / "
                            "--exclude-weights; quantizing without an importance matrix\n", a->imatrix_path);
            gk_imatrix_free(a->im);
            a->im = NULL;
        }
    }
    /* Without a matrix the plan refuses, tensor by tensor, what needs one. */
    if (a->im == NULL) return GK_EXIT_OK;
    if (gk_imatrix_check_model(a->im, models, n_models, &err) != GK_OK) return cmd_report(a->imatrix_path, &err);
    gk_kv_override extra[4];
    size_t n_extra = gk_imatrix_overrides(a->im, a->imatrix_path, extra);
    gk_kv_override *grown = realloc(a->overrides, (a->n_overrides + n_extra) * sizeof *grown);
    if (grown == NULL) {
        fprintf(stderr, "ggufkit: out of memory\n");
        return GK_EXIT_FAIL;
    }
    memcpy(grown + a->n_overrides, extra, n_extra * sizeof *grown);
    a->overrides = grown;
    a->n_overrides += n_extra;
    a->qo.overrides = a->overrides;
    a->qo.n_overrides = a->n_overrides;
    a->qo.has_imatrix = true;
    return GK_EXIT_OK;
}

/* llama-quantize refuses, tensor by tensor, the very low-bit types for tensors
 * the matrix holds no weights for; the library refuses them all up front, named. */
static int check_imatrix_coverage(const quant_args *a, const gk_model *const *models, const gk_quant_plan *plan) {
    char text[2048];
    gk_error err;
    if (gk_quant_check_imatrix_coverage(a->qo.target, models, plan, a->im, text, sizeof text, &err) == GK_OK)
        return GK_EXIT_OK;
    fprintf(stderr, "ggufkit quantize: %s\n", text);
    return GK_EXIT_FAIL;
}

int cmd_quantize(int argc, char **argv) {
    quant_args a = { .qo = { GK_OPTS_INIT(gk_quant_opts), .output_type = -1, .token_embd_type = -1 } };
    bool done;
    int rc = parse_args(argc, argv, &a, &done);
    if (rc != GK_EXIT_OK || done) {
        free_args(&a);
        return rc;
    }
    gk_file **inputs = NULL;
    size_t n_inputs = 0;
    gk_error err;
    if (gk_quant_open_inputs(a.in, GK_OPEN_DEFAULT, &inputs, &n_inputs, &err) != GK_OK) {
        free_args(&a);
        return cmd_report(a.in, &err);
    }
    const gk_model **models = malloc(n_inputs * sizeof *models);
    gk_quant_plan plan = { 0 };
    bool have_plan = false;
    if (models == NULL) {
        gk_error_set(&err, GK_E_NOMEM, -1, "out of memory");
        rc = cmd_report(a.in, &err);
    } else {
        for (size_t k = 0; k < n_inputs; k++) models[k] = gk_file_model(inputs[k]);
        rc = prepare_imatrix(&a, models, n_inputs);
        if (rc == GK_EXIT_OK) {
            if (gk_quant_plan_build_inputs(models, n_inputs, &a.qo, &plan, &err) != GK_OK) rc = cmd_report(a.in, &err);
            else have_plan = true;
        }
    }
    char missing[2048] = "";
    if (have_plan && a.dry_run && a.im != NULL) {   /* --dry-run: a warning, not a refusal */
        gk_error cov;
        gk_quant_check_imatrix_coverage(a.qo.target, models, &plan, a.im, missing, sizeof missing, &cov);
    }
    if (have_plan && !a.dry_run && (rc = check_imatrix_coverage(&a, models, &plan)) != GK_EXIT_OK) {
        gk_quant_plan_free(&plan);
        have_plan = false;
    }
    if (have_plan) {
        if (a.dry_run) {
            if (a.json) rc = print_plan_json(&a, inputs, n_inputs, &plan);
            else print_plan_text(&a, inputs, &plan);
            if (missing[0]) {
                if (a.json) fprintf(stderr, "ggufkit quantize: warning: quantizing for real will fail: %s\n", missing);
                else printf("WARNING: quantizing for real will fail: %s\n", missing);
            }
            if (rc == GK_EXIT_OK) rc = check_outputs(&a, plan.n_outs);
        } else if ((rc = check_outputs(&a, plan.n_outs)) == GK_EXIT_OK) {
            warn_plan(inputs, &plan);
            rc = write_outputs(&a, inputs, n_inputs, &plan);
        }
        gk_quant_plan_free(&plan);
    }
    free(models);
    for (size_t k = 0; k < n_inputs; k++) gk_close(inputs[k]);
    free(inputs);
    free_args(&a);
    return rc;
}
