/*
 * diff_plot.c - the picture of `ggufkit diff --plot`, drawn with cairo: relative
 * RMSE per layer (x: the N of blk.N.*, y: log scale shared by all panels), one
 * line per tensor kind (attn_q, ffn_down, ...: the name after blk.N. without
 * ".weight"), one panel per compared file, a legend on the right. Kinds whose
 * tensors are all identical cannot sit on a log scale; the legend lists them
 * apart. A tensor whose relative RMSE is infinite or not a number (a NaN or an
 * infinity on one side, or errors against an all-zero reference) is off any
 * scale too: it gets a pure red square at the top of the plot, in its layer's
 * column, and its kind is listed under "non-finite". The bytes go through an
 * atomic sink like every other output.
 */
#include <cairo.h>
#include <cairo-svg.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_plot.h"
#include "dynlib.h"

/* The cairo functions drawn with (and fontconfig's FcFini, which cairo brings
 * in), reached through K: cairo and its dozen libraries are opened when a
 * picture is first drawn (shared/dynlib.h), not by every command at start-up. */
#define CAIRO_FUNCS(X) \
    X(cairo_arc) X(cairo_clip) X(cairo_close_path) X(cairo_create) X(cairo_debug_reset_static_data) \
    X(cairo_destroy) X(cairo_fill) X(cairo_image_surface_create) X(cairo_line_to) X(cairo_move_to) \
    X(cairo_paint) X(cairo_rectangle) X(cairo_restore) X(cairo_rotate) X(cairo_save) \
    X(cairo_select_font_face) X(cairo_set_dash) X(cairo_set_font_size) X(cairo_set_line_join) \
    X(cairo_set_line_width) X(cairo_set_source_rgb) X(cairo_show_text) X(cairo_status) \
    X(cairo_status_to_string) X(cairo_stroke) X(cairo_surface_destroy) X(cairo_surface_finish) \
    X(cairo_surface_status) X(cairo_surface_write_to_png_stream) \
    X(cairo_svg_surface_create_for_stream) X(cairo_text_extents) X(cairo_translate) X(FcFini)
static struct { CAIRO_FUNCS(GK_DYNLIB_SLOT) } K;
static const char *const cairo_symbols[] = {CAIRO_FUNCS(GK_DYNLIB_NAME) NULL};
static const char *const cairo_sonames[] = {"libcairo.so.2", "libcairo.so", NULL};
static gk_dynlib cairo_lib = GK_DYNLIB_INIT("libcairo", cairo_sonames, cairo_symbols, &K);

#define MAX_KINDS 24
#define KIND_LEN 48

/* Panel geometry (pixels, relative to the panel's top left). */
#define PLOT_LEFT 90
#define PLOT_RIGHT (DIFF_PLOT_WIDTH - 190)
#define PLOT_TOP 40
#define PLOT_BOTTOM (DIFF_PLOT_PANEL_HEIGHT - 50)
#define X_PAD 12

/* Tableau-like palette: distinct hues that stay apart when printed. */
static const double palette[][3] = {
    { 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 }, { 0.84, 0.15, 0.16 },
    { 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 }, { 0.89, 0.47, 0.76 }, { 0.50, 0.50, 0.50 },
    { 0.74, 0.74, 0.13 }, { 0.09, 0.75, 0.81 },
};
#define N_COLORS (sizeof palette / sizeof palette[0])

/* The marks of non-finite errors: a colour nothing else uses (tests count it). */
#define NONFINITE_R 1.0
#define NONFINITE_G 0.0
#define NONFINITE_B 0.0
#define NONFINITE_SIDE 10

/* Tensor kinds, in first-seen order. */
typedef struct name_list {
    char names[MAX_KINDS][KIND_LEN];
    size_t n;
    bool overflow;            /* more than MAX_KINDS were offered */
} name_list;

typedef struct plot_data {
    name_list kinds;          /* the kinds drawn: a positive value somewhere */
    unsigned n_layers;
    double lo, hi;            /* log10 range of the y axis */
} plot_data;

/* "blk.12.attn_q.weight" -> layer 12, kind "attn_q". */
static bool parse_name(const char *name, unsigned *layer, char *kind) {
    if (strncmp(name, "blk.", 4) != 0) return false;
    char *end;
    unsigned long n = strtoul(name + 4, &end, 10);
    if (end == name + 4 || *end != '.' || n > 100000) return false;
    const char *rest = end + 1;
    size_t len = strlen(rest);
    if (len > 7 && strcmp(rest + len - 7, ".weight") == 0) len -= 7;
    if (len == 0 || len >= KIND_LEN) return false;
    memcpy(kind, rest, len);
    kind[len] = '\0';
    *layer = (unsigned)n;
    return true;
}

/* @return : the index of name in l (added when add and there is room), or -1. */
static int name_index(name_list *l, const char *name, bool add) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->names[i], name) == 0) return (int)i;
    if (!add) return -1;
    if (l->n == MAX_KINDS) {
        l->overflow = true;
        return -1;
    }
    snprintf(l->names[l->n], KIND_LEN, "%s", name);
    return (int)l->n++;
}

static bool plottable(const gk_tensor_diff *d) {
    return d->kind == GK_TDIFF_IDENTICAL || d->kind == GK_TDIFF_SAME_VALUES || d->kind == GK_TDIFF_DIFFERENT;
}

/* Kinds with a positive finite value somewhere (in first-seen order), layers, y range. */
static void gather(plot_data *pd, const gk_diff_result *res, size_t n) {
    memset(pd, 0, sizeof *pd);
    double mn = INFINITY, mx = 0;
    char kind[KIND_LEN];
    unsigned layer;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < res[k].n_tensors; i++) {
            const gk_tensor_diff *d = &res[k].tensors[i];
            if (!plottable(d) || !parse_name(d->name, &layer, kind)) continue;
            if (layer + 1 > pd->n_layers) pd->n_layers = layer + 1;
            if (!(d->rel_rmse > 0) || !isfinite(d->rel_rmse)) continue;
            name_index(&pd->kinds, kind, true);
            if (d->rel_rmse < mn) mn = d->rel_rmse;
            if (d->rel_rmse > mx) mx = d->rel_rmse;
        }
    if (mx == 0) {
        pd->lo = -4;
        pd->hi = 0;
        return;
    }
    pd->lo = floor(log10(mn));
    pd->hi = ceil(log10(mx));
    if (pd->hi <= pd->lo) pd->hi = pd->lo + 1;
}

static double x_of(const plot_data *pd, double layer) {
    double span = pd->n_layers > 1 ? (double)(pd->n_layers - 1) : 1;
    return PLOT_LEFT + X_PAD + layer / span * (PLOT_RIGHT - PLOT_LEFT - 2 * X_PAD);
}

static double y_of(const plot_data *pd, double v) {
    double t = (log10(v) - pd->lo) / (pd->hi - pd->lo);
    return PLOT_BOTTOM - t * (PLOT_BOTTOM - PLOT_TOP);
}

static void text_at(cairo_t *cr, double x, double y, const char *s, double align_x, double align_y) {
    cairo_text_extents_t e;
    K.cairo_text_extents(cr, s, &e);
    K.cairo_move_to(cr, x - e.width * align_x - e.x_bearing, y - e.height * align_y - e.y_bearing);
    K.cairo_show_text(cr, s);
}

/* Shortens a path to its last component for titles. */
static const char *base_name(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void draw_axes(cairo_t *cr, const plot_data *pd) {
    /* grid and y ticks: every decade, with 2 and 5 between when there are few */
    K.cairo_set_font_size(cr, 11);
    int decades = (int)(pd->hi - pd->lo);
    for (int e = (int)pd->lo; e <= (int)pd->hi; e++) {
        for (int m = 1; m <= 9; m++) {
            double v = m * pow(10, e);
            if (log10(v) > pd->hi + 1e-9) break;
            bool major = m == 1, minor_label = decades <= 2 && (m == 2 || m == 5);
            double y = floor(y_of(pd, v)) + 0.5;
            K.cairo_set_source_rgb(cr, major ? 0.82 : 0.93, major ? 0.82 : 0.93, major ? 0.82 : 0.93);
            K.cairo_set_line_width(cr, 1);
            K.cairo_move_to(cr, PLOT_LEFT + 1, y);
            K.cairo_line_to(cr, PLOT_RIGHT - 1, y);
            K.cairo_stroke(cr);
            if (major || minor_label) {
                char buf[32];
                snprintf(buf, sizeof buf, "%g", v);
                K.cairo_set_source_rgb(cr, 0, 0, 0);
                text_at(cr, PLOT_LEFT - 8, y, buf, 1.0, 0.5);
            }
        }
    }
    /* x ticks: every layer when few, else a round step */
    unsigned step = 1;
    while (pd->n_layers / step > 24) step = step == 1 ? 2 : step == 2 ? 5 : step * 2;
    for (unsigned l = 0; l < (pd->n_layers ? pd->n_layers : 1); l += step) {
        double x = floor(x_of(pd, l)) + 0.5;
        K.cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
        K.cairo_move_to(cr, x, PLOT_BOTTOM);
        K.cairo_line_to(cr, x, PLOT_BOTTOM + 5);
        K.cairo_stroke(cr);
        char buf[16];
        snprintf(buf, sizeof buf, "%u", l);
        K.cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, x, PLOT_BOTTOM + 8, buf, 0.5, 0.0);
    }
    /* axis labels */
    K.cairo_set_font_size(cr, 12);
    text_at(cr, (PLOT_LEFT + PLOT_RIGHT) / 2.0, PLOT_BOTTOM + 26, "layer", 0.5, 0.0);
    K.cairo_save(cr);
    K.cairo_translate(cr, 22, (PLOT_TOP + PLOT_BOTTOM) / 2.0);
    K.cairo_rotate(cr, -M_PI / 2);
    text_at(cr, 0, 0, "relative RMSE (log scale)", 0.5, 0.5);
    K.cairo_restore(cr);
    /* the frame, in a colour nothing else uses (tests count panels by it) */
    K.cairo_set_source_rgb(cr, 64 / 255.0, 64 / 255.0, 64 / 255.0);
    K.cairo_rectangle(cr, PLOT_LEFT + 0.5, PLOT_TOP + 0.5, PLOT_RIGHT - PLOT_LEFT - 1, PLOT_BOTTOM - PLOT_TOP - 1);
    K.cairo_stroke(cr);
}

/* Colour and dash of kind k's line: the palette, then dashed once it repeats. */
static void kind_style(cairo_t *cr, size_t k) {
    const double *c = palette[k % N_COLORS];
    static const double dash[2] = { 6, 3 };
    K.cairo_set_source_rgb(cr, c[0], c[1], c[2]);
    K.cairo_set_line_width(cr, 2);
    K.cairo_set_dash(cr, dash, k >= N_COLORS ? 2 : 0, 0);
}

/* Kind k's marker at (x, y): circle, square, triangle, diamond, cross in turn,
 * so that kinds whose lines coincide stay apart. */
static void marker(cairo_t *cr, size_t k, double x, double y) {
    const double r = 3.2;
    switch (k % 5) {
    case 0: K.cairo_arc(cr, x, y, r, 0, 2 * M_PI); break;
    case 1: K.cairo_rectangle(cr, x - r, y - r, 2 * r, 2 * r); break;
    case 2:
        K.cairo_move_to(cr, x, y - r - 1);
        K.cairo_line_to(cr, x + r + 1, y + r);
        K.cairo_line_to(cr, x - r - 1, y + r);
        K.cairo_close_path(cr);
        break;
    case 3:
        K.cairo_move_to(cr, x, y - r - 1);
        K.cairo_line_to(cr, x + r + 1, y);
        K.cairo_line_to(cr, x, y + r + 1);
        K.cairo_line_to(cr, x - r - 1, y);
        K.cairo_close_path(cr);
        break;
    default:
        K.cairo_move_to(cr, x - r, y - r);
        K.cairo_line_to(cr, x + r, y + r);
        K.cairo_move_to(cr, x + r, y - r);
        K.cairo_line_to(cr, x - r, y + r);
        K.cairo_stroke(cr);
        return;
    }
    if (k % 2) {   /* every other kind hollow (not filled: what lies below shows) */
        K.cairo_set_line_width(cr, 1.5);
        K.cairo_set_dash(cr, NULL, 0, 0);
        K.cairo_stroke(cr);
        K.cairo_set_line_width(cr, 2);
    } else {
        K.cairo_fill(cr);
    }
}

/* A red square, pixel aligned, centred on column x at the top of the plot. */
static void nonfinite_mark(cairo_t *cr, double x, double y) {
    K.cairo_set_source_rgb(cr, NONFINITE_R, NONFINITE_G, NONFINITE_B);
    K.cairo_rectangle(cr, floor(x) - NONFINITE_SIDE / 2, floor(y), NONFINITE_SIDE, NONFINITE_SIDE);
    K.cairo_fill(cr);
}

static void draw_panel(cairo_t *cr, const plot_data *pd, const char *label, const gk_diff_result *r) {
    K.cairo_set_source_rgb(cr, 1, 1, 1);
    K.cairo_rectangle(cr, PLOT_LEFT, PLOT_TOP, PLOT_RIGHT - PLOT_LEFT, PLOT_BOTTOM - PLOT_TOP);
    K.cairo_fill(cr);
    draw_axes(cr, pd);
    /* per kind and layer: the value (NAN when absent or not on the scale) */
    unsigned nl = pd->n_layers ? pd->n_layers : 1;
    double *val = malloc(sizeof(double) * nl * (pd->kinds.n ? pd->kinds.n : 1));
    name_list zero = { .n = 0 };   /* kinds of this panel identical in every layer */
    name_list nonfinite = { .n = 0 };   /* kinds with a non-finite error in some layer */
    bool *nf_at = calloc((size_t)nl, sizeof *nf_at);   /* layers with one */
    if (val == NULL || nf_at == NULL) {
        free(val);
        free(nf_at);
        return;
    }
    for (size_t i = 0; i < (size_t)nl * pd->kinds.n; i++) val[i] = NAN;
    bool positive[MAX_KINDS] = { false };
    char kind[KIND_LEN];
    unsigned layer;
    for (size_t i = 0; i < r->n_tensors; i++) {
        const gk_tensor_diff *d = &r->tensors[i];
        if (!plottable(d) || !parse_name(d->name, &layer, kind)) continue;
        int k = name_index((name_list *)&pd->kinds, kind, false);
        if (k >= 0 && d->rel_rmse > 0 && isfinite(d->rel_rmse)) {
            val[(size_t)k * nl + layer] = d->rel_rmse;
            positive[k] = true;
        }
        if (d->rel_rmse == 0) name_index(&zero, kind, true);
        if (!isfinite(d->rel_rmse)) {
            name_index(&nonfinite, kind, true);
            nf_at[layer] = true;
        }
    }
    /* a kind with a value (finite or not) somewhere in this panel is not "identical" */
    for (size_t z = 0; z < zero.n;) {
        int k = name_index((name_list *)&pd->kinds, zero.names[z], false);
        if ((k >= 0 && positive[k]) || name_index(&nonfinite, zero.names[z], false) >= 0) memmove(zero.names[z], zero.names[z + 1], (--zero.n - z) * KIND_LEN);
        else z++;
    }
    /* the lines: a gap where a layer has no value */
    K.cairo_save(cr);
    K.cairo_rectangle(cr, PLOT_LEFT + 1, PLOT_TOP + 1, PLOT_RIGHT - PLOT_LEFT - 2, PLOT_BOTTOM - PLOT_TOP - 2);
    K.cairo_clip(cr);
    K.cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (size_t k = 0; k < pd->kinds.n; k++) {
        kind_style(cr, k);
        bool open = false;
        for (unsigned l = 0; l < nl; l++) {
            double v = val[k * nl + l];
            if (isnan(v)) {
                open = false;
                continue;
            }
            if (open) K.cairo_line_to(cr, x_of(pd, l), y_of(pd, v));
            else K.cairo_move_to(cr, x_of(pd, l), y_of(pd, v));
            open = true;
        }
        K.cairo_stroke(cr);
        K.cairo_set_dash(cr, NULL, 0, 0);
        for (unsigned l = 0; l < nl; l++) {
            double v = val[k * nl + l];
            if (!isnan(v)) marker(cr, k, x_of(pd, l), y_of(pd, v));
        }
    }
    for (unsigned l = 0; l < nl; l++)
        if (nf_at[l]) nonfinite_mark(cr, x_of(pd, l), PLOT_TOP + 4);
    K.cairo_restore(cr);
    free(val);
    free(nf_at);
    /* title: the file, its weighted relative RMSE, kinds that are identical */
    char title[512];
    snprintf(title, sizeof title, "%s   (relative RMSE, weighted by elements: %.4g)", base_name(label),
             r->rel_rmse_weighted);
    K.cairo_set_source_rgb(cr, 0, 0, 0);
    K.cairo_set_font_size(cr, 13);
    text_at(cr, PLOT_LEFT, PLOT_TOP - 12, title, 0.0, 1.0);
    if (pd->kinds.n == 0) {
        K.cairo_set_font_size(cr, 14);
        K.cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        text_at(cr, (PLOT_LEFT + PLOT_RIGHT) / 2.0, (PLOT_TOP + PLOT_BOTTOM) / 2.0,
                !pd->n_layers ? "no blk.N tensors"
                : nonfinite.n ? "only non-finite errors (red, at the top)" : "no layer tensor differs",
                0.5, 0.5);
    }
    /* legend */
    K.cairo_set_font_size(cr, 12);
    for (size_t k = 0; k < pd->kinds.n; k++) {
        double y = PLOT_TOP + 10 + 20.0 * (double)k;
        if (y > PLOT_BOTTOM) break;
        kind_style(cr, k);
        K.cairo_move_to(cr, PLOT_RIGHT + 16, y);
        K.cairo_line_to(cr, PLOT_RIGHT + 42, y);
        K.cairo_stroke(cr);
        K.cairo_set_dash(cr, NULL, 0, 0);
        marker(cr, k, PLOT_RIGHT + 29, y);
        K.cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, PLOT_RIGHT + 50, y, pd->kinds.names[k], 0.0, 0.5);
    }
    /* below it, the kinds with a non-finite error (first: they matter most), then
     * the kinds that are identical everywhere (nothing to draw) */
    double y = PLOT_TOP + 10 + 20.0 * (double)pd->kinds.n + 8;
    K.cairo_set_font_size(cr, 11);
    K.cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    const name_list *lists[2] = { &nonfinite, &zero };
    const char *heads[2] = { "non-finite (red, at the top):", "identical (not drawn):" };
    bool first = true;
    for (int li = 0; li < 2; li++) {
        if (lists[li]->n == 0) continue;
        if (!first) y += 8;
        first = false;
        if (y < PLOT_BOTTOM) text_at(cr, PLOT_RIGHT + 16, y, heads[li], 0.0, 0.5);
        for (size_t z = 0; z < lists[li]->n && (y += 16) < PLOT_BOTTOM; z++) {
            char item[KIND_LEN + 4];
            snprintf(item, sizeof item, "  %s", lists[li]->names[z]);
            text_at(cr, PLOT_RIGHT + 16, y, item, 0.0, 0.5);
        }
        y += 16;
    }
    y -= 16;
    if (pd->kinds.overflow && (y += 16) < PLOT_BOTTOM)
        text_at(cr, PLOT_RIGHT + 16, y, "(more kinds: not drawn)", 0.0, 0.5);
}

typedef struct sink_ctx {
    gk_sink *sink;
    gk_error *err;
    bool failed;
} sink_ctx;

static cairo_status_t to_sink(void *closure, const unsigned char *data, unsigned int length) {
    sink_ctx *c = closure;
    if (c->failed || gk_sink_write(c->sink, data, length, c->err) != GK_OK) {
        c->failed = true;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

gk_status diff_plot_write(const char *path, unsigned sink_flags, const char *ref_label,
                          const char *const *labels, const gk_diff_result *results, size_t n,
                          gk_error *err) {
    gk_status s = gk_dynlib_load(&cairo_lib, "diff --plot", err);
    if (s != GK_OK) return s;
    plot_data pd;
    gather(&pd, results, n);
    size_t len = strlen(path);
    bool svg = len > 4 && strcmp(path + len - 4, ".svg") == 0;
    int height = DIFF_PLOT_TITLE_HEIGHT + (int)n * DIFF_PLOT_PANEL_HEIGHT;
    sink_ctx ctx = { NULL, err, false };
    s = gk_sink_open(path, sink_flags | GK_SINK_BUFFERED, &ctx.sink, err);
    if (s != GK_OK) return s;
    cairo_surface_t *surface = svg ? K.cairo_svg_surface_create_for_stream(to_sink, &ctx, DIFF_PLOT_WIDTH, height)
                                   : K.cairo_image_surface_create(CAIRO_FORMAT_RGB24, DIFF_PLOT_WIDTH, height);
    cairo_t *cr = K.cairo_create(surface);
    K.cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    K.cairo_set_source_rgb(cr, 0.97, 0.97, 0.97);
    K.cairo_paint(cr);
    char title[512];
    snprintf(title, sizeof title, "ggufkit diff: relative RMSE per layer against %s", base_name(ref_label));
    K.cairo_set_source_rgb(cr, 0, 0, 0);
    K.cairo_set_font_size(cr, 16);
    text_at(cr, DIFF_PLOT_WIDTH / 2.0, DIFF_PLOT_TITLE_HEIGHT / 2.0, title, 0.5, 0.5);
    for (size_t k = 0; k < n; k++) {
        K.cairo_save(cr);
        K.cairo_translate(cr, 0, DIFF_PLOT_TITLE_HEIGHT + (double)k * DIFF_PLOT_PANEL_HEIGHT);
        draw_panel(cr, &pd, labels[k], &results[k]);
        K.cairo_restore(cr);
    }
    cairo_status_t cs = K.cairo_status(cr);
    K.cairo_destroy(cr);
    if (cs == CAIRO_STATUS_SUCCESS && !svg) cs = K.cairo_surface_write_to_png_stream(surface, to_sink, &ctx);
    K.cairo_surface_finish(surface);
    if (cs == CAIRO_STATUS_SUCCESS) cs = K.cairo_surface_status(surface);
    K.cairo_surface_destroy(surface);
    /* cairo keeps its fonts, and fontconfig its configuration, for later
     * drawings; there are none in this process, and a leak checker would
     * report them. */
    K.cairo_debug_reset_static_data();
    K.FcFini();
    if (ctx.failed || cs != CAIRO_STATUS_SUCCESS) {
        gk_sink_abort(ctx.sink);
        if (ctx.failed) return err->code;
        return gk_error_set(err, GK_E_IO, -1, "drawing the plot failed: %s", K.cairo_status_to_string(cs));
    }
    return gk_sink_commit(ctx.sink, err);
}
