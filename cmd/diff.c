/*
 * diff.c - `ggufkit diff`: what changed between a reference model and one or
 * more others, and what a quantization costs, tensor by tensor.
 *
 * Every input is opened first (nothing is printed when one cannot be read),
 * every comparison is run through the library (gk_diff_run), and only then is
 * the report printed: readable text, or JSON with --json (cmd/diff_json.c,
 * docs/diff.md), and the picture with --plot (cmd/diff_plot.c).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"
#include "diff_plot.h"
#include "diff_report.h"

static const char *const usage =
    "usage: ggufkit diff [--json] [--plot FILE] [--force] [--threads N] REFERENCE OTHER...\n\n"
    "Compares each OTHER model with REFERENCE: layout facts (version, byte order,\n"
    "alignment), metadata keys added, removed and changed (typed; GGUF.* ignored), the\n"
    "tensor directory, and the numbers of every tensor both have with the same shape:\n"
    "both sides dequantized to F32 and compared (RMSE, max abs error, RMSE relative to\n"
    "the reference's RMS, cosine similarity, differing elements, first differing row).\n"
    "Tensors of one type with the same bytes are identical without dequantizing.\n"
    "Inputs are anything ggufkit reads: either byte order, a shard of a set (the whole\n"
    "set is compared), .gguf.zst, ARCHIVE::MEMBER. With several OTHER files a closing\n"
    "table ranks them by relative RMSE (averaged over tensors weighted by elements;\n"
    "a NaN or infinity on one side only makes the errors infinite: ranked worst).\n"
    "  --json          one JSON document (schema: docs/diff.md)\n"
    "  --plot FILE     draw relative error per layer, one line per tensor kind and one\n"
    "                  panel per OTHER file, as PNG (or SVG when FILE ends in .svg)\n"
    "  --force         replace FILE if it exists\n"
    "  --threads N     worker threads (default: all cores)\n"
    "Exit status: 0 everything compared is identical, 1 something differs (or an input\n"
    "cannot be read), 2 usage error.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { fputs(usage, stdout); }

typedef struct diff_args {
    bool json, force;
    const char *plot;
    int threads;
    const char **paths;
    size_t n_paths;
} diff_args;

static const char *verdict_text(gk_diff_verdict v) {
    return v == GK_DIFF_IDENTICAL ? "identical"
           : v == GK_DIFF_SAME_WEIGHTS ? "same weights, different metadata" : "differs";
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

static void print_num(FILE *out, double v) {
    if (isnan(v)) fprintf(out, "  %10s", "nan");
    else if (isinf(v)) fprintf(out, "  %10s", v > 0 ? "inf" : "-inf");
    else fprintf(out, "  %10.4g", v);
}

/* "UINT32 5", or for a long array "[STRING] 32000 elements". */
static void print_typed(FILE *out, const gk_value *v) {
    char label[64];
    gk_value_type_label(v, GK_LABEL_NAME, label, sizeof label);
    fprintf(out, "%s ", label);
    if (v->type == GK_V_ARR && v->arr.n > DIFF_SHORT_ARRAY)
        fprintf(out, "%" PRIu64 " elements", v->arr.n);
    else
        cmd_print_value(out, v);
}

static void print_metadata(FILE *out, const gk_diff_result *r) {
    size_t counts[3] = { 0 };
    for (size_t i = 0; i < r->n_meta; i++) counts[r->meta[i].kind]++;
    fprintf(out, "metadata: %zu changed, %zu added, %zu removed\n", counts[GK_META_CHANGED],
            counts[GK_META_ADDED], counts[GK_META_REMOVED]);
    for (size_t i = 0; i < r->n_meta; i++) {
        const gk_meta_change *c = &r->meta[i];
        fprintf(out, "  %c ", c->kind == GK_META_ADDED ? '+' : c->kind == GK_META_REMOVED ? '-' : '~');
        bool plain = true;
        for (const char *p = c->key; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7F || *p == '"') plain = false;
        if (plain) fputs(c->key, out);
        else cmd_print_quoted(out, c->key, strlen(c->key), 200);
        fputs(": ", out);
        if (c->ref) print_typed(out, c->ref);
        if (c->kind == GK_META_CHANGED) fputs(" -> ", out);
        if (c->other) print_typed(out, c->other);
        const gk_value *a = c->ref, *b = c->other;
        if (c->kind == GK_META_CHANGED && a->type == GK_V_ARR && b->type == GK_V_ARR && a->arr.elem == b->arr.elem) {
            uint64_t k = c->first_diff;
            fprintf(out, "; first difference at index %" PRIu64, k);
            if (k < a->arr.n && k < b->arr.n && a->arr.elem != GK_V_ARR) {
                fputs(": ", out);
                cmd_print_element(out, a->arr.elem, a->arr.data, k);
                fputs(" -> ", out);
                cmd_print_element(out, b->arr.elem, b->arr.data, k);
            }
        }
        fputc('\n', out);
    }
}

static void print_layout(FILE *out, const gk_diff_layout *l) {
    if (l->version[0] != l->version[1])
        fprintf(out, "layout: version %" PRIu32 " -> %" PRIu32 "\n", l->version[0], l->version[1]);
    if (l->big_endian[0] != l->big_endian[1])
        fprintf(out, "layout: byte order %s -> %s\n", l->big_endian[0] ? "big-endian" : "little-endian",
                l->big_endian[1] ? "big-endian" : "little-endian");
    if (l->alignment[0] != l->alignment[1])
        fprintf(out, "layout: alignment %" PRIu32 " -> %" PRIu32 "\n", l->alignment[0], l->alignment[1]);
}

static void print_tensors(FILE *out, const gk_diff_result *r) {
    size_t counts[6] = { 0 }, namew = 4;
    for (size_t i = 0; i < r->n_tensors; i++) {
        counts[r->tensors[i].kind]++;
        size_t len = strlen(r->tensors[i].name);
        if (len > namew) namew = len;
    }
    if (namew > 40) namew = 40;
    fprintf(out, "tensors: %zu identical, %zu same values, %zu different, %zu other shape, %zu only in reference, "
                 "%zu only in other\n",
            counts[GK_TDIFF_IDENTICAL], counts[GK_TDIFF_SAME_VALUES], counts[GK_TDIFF_DIFFERENT],
            counts[GK_TDIFF_SHAPE], counts[GK_TDIFF_ONLY_REF], counts[GK_TDIFF_ONLY_OTHER]);
    fprintf(out, "  %-*s  %-18s  %-20s  %10s  %10s  %10s  %10s  %10s  %s\n", (int)namew, "name", "type",
            "shape", "rmse", "max_abs", "rel_rmse", "cosine", "n_diff", "first_row");
    for (size_t i = 0; i < r->n_tensors; i++) {
        const gk_tensor_diff *d = &r->tensors[i];
        char types[64], ta[24], tb[24], shape[160], sa[64], sb[64];
        const gk_tensor *x = d->ref ? d->ref : d->other;
        cmd_shape_text(sa, sizeof sa, x);
        if (d->ref && d->other) {
            const char *na = cmd_tensor_type_name(d->ref->type, ta, sizeof ta);
            const char *nb = cmd_tensor_type_name(d->other->type, tb, sizeof tb);
            if (d->ref->type == d->other->type) snprintf(types, sizeof types, "%s", na);
            else snprintf(types, sizeof types, "%s -> %s", na, nb);
            cmd_shape_text(sb, sizeof sb, d->other);
            if (strcmp(sa, sb) == 0) snprintf(shape, sizeof shape, "%s", sa);
            else snprintf(shape, sizeof shape, "%s -> %s", sa, sb);
        } else {
            snprintf(types, sizeof types, "%s", cmd_tensor_type_name(x->type, ta, sizeof ta));
            snprintf(shape, sizeof shape, "%s", sa);
        }
        fprintf(out, "  %-*s  %-18s  %-20s", (int)namew, d->name, types, shape);
        if (d->kind == GK_TDIFF_IDENTICAL) fputs("  identical", out);
        else if (d->kind == GK_TDIFF_SHAPE) fputs("  other shape: not compared", out);
        else if (d->kind == GK_TDIFF_ONLY_REF) fputs("  only in reference", out);
        else if (d->kind == GK_TDIFF_ONLY_OTHER) fputs("  only in other", out);
        else {
            print_num(out, d->rmse);
            print_num(out, d->max_abs_err);
            print_num(out, d->rel_rmse);
            if (isnan(d->cosine)) fprintf(out, "  %10s", "nan");
            else fprintf(out, "  %10.6f", d->cosine);
            fprintf(out, "  %10" PRIu64, d->n_diff);
            if (d->first_diff_row >= 0) fprintf(out, "  %" PRId64, d->first_diff_row);
            else fputs("  -", out);
            if (d->n_nonfinite_ref || d->n_nonfinite_other)
                fprintf(out, "  non-finite: %" PRIu64 " in reference, %" PRIu64 " in other, %" PRIu64 " differ",
                        d->n_nonfinite_ref, d->n_nonfinite_other, d->n_nonfinite_diff);
        }
        fputc('\n', out);
    }
}

/* A total order that does not depend on the order of the arguments: relative
 * RMSE (NaN taken as +inf, the worst), then more non-finite differences worse,
 * then size, then the path. */
static int rank_cmp(const void *pa, const void *pb) {
    const diff_rank *a = pa, *b = pb;
    double ra = isnan(a->rel) ? INFINITY : a->rel, rb = isnan(b->rel) ? INFINITY : b->rel;
    if (ra != rb) return ra < rb ? -1 : 1;
    if (a->nonfinite != b->nonfinite) return a->nonfinite < b->nonfinite ? -1 : 1;
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    int c = strcmp(a->path, b->path);
    if (c != 0) return c;
    return a->k < b->k ? -1 : a->k > b->k;
}

static diff_rank *ranking(const diff_args *a, gk_diff_input **in, const gk_diff_result *res, size_t n) {
    diff_rank *items = calloc(n + 1, sizeof *items);
    if (items == NULL) return NULL;
    for (size_t k = 0; k < n; k++)
        items[k] = (diff_rank){ k, res[k].rel_rmse_weighted, gk_diff_input_size(in[k + 1]), res[k].n_nonfinite_diff,
                                a->paths[k + 1] };
    qsort(items, n, sizeof *items, rank_cmp);
    return items;
}


static void print_text(FILE *out, const diff_args *a, gk_diff_input **in, const gk_diff_result *res,
                       const diff_rank *rank) {
    fprintf(out, "reference: %s (%" PRIu64 " bytes, %zu tensors)\n", a->paths[0], gk_diff_input_size(in[0]),
            gk_tensor_count(gk_diff_input_model(in[0])));
    size_t n = a->n_paths - 1;
    for (size_t k = 0; k < n; k++) {
        const gk_diff_result *r = &res[k];
        fprintf(out, "\n== %s (%" PRIu64 " bytes)\n", a->paths[k + 1], gk_diff_input_size(in[k + 1]));
        print_layout(out, &r->layout);
        print_metadata(out, r);
        print_tensors(out, r);
        fprintf(out, "relative RMSE (weighted by elements): %.6g over %" PRIu64 " elements\n",
                r->rel_rmse_weighted, r->n_compared_elems);
        if (r->n_nonfinite_diff)
            fprintf(out, "non-finite: %" PRIu64 " differing element%s NaN or infinite on one side "
                         "(errors infinite: ranked worst)\n",
                    r->n_nonfinite_diff, r->n_nonfinite_diff == 1 ? " is" : "s are");
        fprintf(out, "verdict: %s: %s\n", a->paths[k + 1], verdict_text(r->verdict));
    }
    if (n < 2) return;
    fprintf(out, "\nranking (relative RMSE weighted by elements, then non-finite differences, size, name):\n");
    fprintf(out, "  %4s  %12s  %8s  %12s  %10s  %-32s  %s\n", "rank", "bytes", "bits/w", "rel_rmse", "nonfinite",
            "verdict", "file");
    for (size_t i = 0; i < n; i++) {
        size_t k = rank[i].k;
        fprintf(out, "  %4zu  %12" PRIu64 "  %8.3f  %12.6g  %10" PRIu64 "  %-32s  %s\n", i + 1, rank[i].size,
                diff_bits_per_weight(in[k + 1]), res[k].rel_rmse_weighted, res[k].n_nonfinite_diff,
                verdict_text(res[k].verdict), a->paths[k + 1]);
    }
}

/* ------------------------------------------------------------------------ */
/* Command                                                                  */
/* ------------------------------------------------------------------------ */

static int parse_args(int argc, char **argv, diff_args *a) {
    a->paths = calloc((size_t)argc + 1, sizeof *a->paths);
    if (a->paths == NULL) return GK_EXIT_FAIL;
    enum { OPT_JSON = 1, OPT_PLOT, OPT_FORCE, OPT_THREADS };
    static const cmd_option options[] = {
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { OPT_PLOT, "--plot", NULL, CMD_OPT_VALUE, "FILE" },
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { OPT_THREADS, "--threads", NULL, CMD_OPT_VALUE, "N" },
        { 0 },
    };
    static const cmd_optspec spec = { "diff", options, CMD_OPTS_DASHDASH, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *s = p.value;
        switch (id) {
        case CMD_OPTS_EXIT: return p.rc == GK_EXIT_OK ? -1 : p.rc;
        case OPT_JSON: a->json = true; break;
        case OPT_FORCE: a->force = true; break;
        case OPT_PLOT: {
            a->plot = s;
            size_t len = strlen(a->plot);
            bool png = len > 4 && strcmp(a->plot + len - 4, ".png") == 0;
            bool svg = len > 4 && strcmp(a->plot + len - 4, ".svg") == 0;
            if (!png && !svg) return cmd_usage_error("diff", "--plot FILE must end in .png or .svg (got '%s')", a->plot);
            break;
        }
        case OPT_THREADS: {
            uint64_t v;
            if (!cmd_parse_u64(s, &v) || v < 1 || v > 64)
                return cmd_usage_error("diff", "--threads needs a number from 1 to 64");
            a->threads = (int)v;
            break;
        }
        default: a->paths[a->n_paths++] = s;
        }
    }
    if (a->n_paths < 2) return cmd_usage_error("diff", "need REFERENCE and at least one OTHER file");
    return GK_EXIT_OK;
}

int cmd_diff(int argc, char **argv) {
    diff_args a = { 0 };
    int rc = parse_args(argc, argv, &a);
    if (rc != GK_EXIT_OK) {
        free(a.paths);
        return rc < 0 ? GK_EXIT_OK : rc;
    }
    gk_error err;
    unsigned sink_flags = a.force ? GK_SINK_OVERWRITE : 0;
    if (a.plot && !gk_sink_dest_ok(a.plot, sink_flags, &err)) {
        free(a.paths);
        return cmd_report(a.plot, &err);
    }
    size_t n = a.n_paths - 1;
    gk_diff_input **in = calloc(a.n_paths, sizeof *in);
    gk_diff_result *res = calloc(n, sizeof *res);
    if (in == NULL || res == NULL) {
        free(in);
        free(res);
        free(a.paths);
        fputs("ggufkit: out of memory\n", stderr);
        return GK_EXIT_FAIL;
    }
    rc = GK_EXIT_OK;
    for (size_t k = 0; k < a.n_paths && rc == GK_EXIT_OK; k++)
        if (gk_diff_input_open(a.paths[k], &in[k], &err) != GK_OK) rc = cmd_report(a.paths[k], &err);
    cmd_catch_interrupts();
    size_t done = 0;
    for (; done < n && rc == GK_EXIT_OK; done++) {
        cmd_progress bar;
        cmd_progress_start(&bar, "diff", 0);
        gk_diff_opts opts = { GK_OPTS_INIT(gk_diff_opts), .threads = a.threads, .progress = cmd_write_progress, .progress_ctx = &bar };
        gk_status s = gk_diff_run(in[0], in[done + 1], &opts, &res[done], &err);
        cmd_progress_finish(&bar);
        if (s != GK_OK) rc = cmd_report(NULL, &err);
    }
    diff_rank *rank = rc == GK_EXIT_OK ? ranking(&a, in, res, n) : NULL;
    if (rc == GK_EXIT_OK && rank == NULL) rc = GK_EXIT_FAIL;
    if (rc == GK_EXIT_OK && a.plot) {
        const char **labels = calloc(n + 1, sizeof *labels);
        if (labels == NULL) rc = GK_EXIT_FAIL;
        for (size_t k = 0; labels && k < n; k++) labels[k] = a.paths[k + 1];
        if (labels && diff_plot_write(a.plot, sink_flags, a.paths[0], labels, res, n, &err) != GK_OK)
            rc = cmd_report(a.plot, &err);
        free(labels);
    }
    if (rc == GK_EXIT_OK) {
        if (a.json) {
            if (!diff_print_json(stdout, a.paths, a.n_paths, in, res, rank)) rc = GK_EXIT_FAIL;
        } else {
            print_text(stdout, &a, in, res, rank);
        }
        for (size_t k = 0; k < n && rc == GK_EXIT_OK; k++)
            if (res[k].verdict != GK_DIFF_IDENTICAL) rc = GK_EXIT_FAIL;
    }
    free(rank);
    for (size_t k = 0; k < done; k++) gk_diff_result_free(&res[k]);
    for (size_t k = 0; k < a.n_paths; k++) gk_diff_input_close(in[k]);
    free(res);
    free(in);
    free(a.paths);
    return rc;
}
