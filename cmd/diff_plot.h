/*
 * diff_plot.h - the picture `ggufkit diff --plot` draws (cmd/diff_plot.c).
 */
#ifndef GK_CMD_DIFF_PLOT_H
#define GK_CMD_DIFF_PLOT_H

#include "ggufkit.h"

/* Geometry of the picture: a title band, then one panel per compared file. */
#define DIFF_PLOT_WIDTH 1000
#define DIFF_PLOT_TITLE_HEIGHT 50
#define DIFF_PLOT_PANEL_HEIGHT 340

/** diff_plot_write() : draws the relative RMSE of every blk.N.KIND tensor per
 *  layer N, one line per KIND, one panel per result (titled with labels[k]), and
 *  publishes it atomically at path: PNG, or SVG when path ends in ".svg"
 *  (DIFF_PLOT_WIDTH x TITLE + n * PANEL pixels, or points for SVG).
 *  sink_flags as for gk_sink_open. @return : GK_OK or an error (err filled). */
gk_status diff_plot_write(const char *path, unsigned sink_flags, const char *ref_label,
                          const char *const *labels, const gk_diff_result *results, size_t n,
                          gk_error *err);

#endif
