/*
 * iquants.h - internal extras of the I-quant kernels beyond kernels.h: the search
 * tables, and the pieces of the quantizers a vector kernel replaces (the IQ3 and
 * IQ2 trial loops, the neighbour and IQ1 split searches) with the drivers that
 * take them (gk_quantize_*_with); the scalar pieces stay in iquants.c as the
 * reference.
 */
#ifndef GK_TYPES_IQUANTS_H
#define GK_TYPES_IQUANTS_H

#include <stdbool.h>
#include <stdint.h>

/** gk_iq3_tables_ready() : builds the IQ3_XXS / IQ3_S quantizer search tables if
 *  needed (thread-safe, once) and reports whether both are usable. */
bool gk_iq3_tables_ready(void);

/* Entries of a 2-bit / 1-bit search map: codes 0 .. 43691 (ggml's kmap_size). */
#define GK_IQ_SEARCH_MAP_SIZE 43692

/* Search tables of one 2-bit / 1-bit grid (ggml's iq2xs_init_impl), see iq_search.c.
 * grid: points as 8 bytes of 2*l+1 (l = level 0..2); map: code of 8 two-bit levels
 * (level i in bits 2i..2i+1) -> grid index, or -(offset+1) of its neighbour list in
 * neighbours (a count, then grid indices; 8 zero entries follow the last list so
 * vector searches may read 8 entries at a time). */
typedef struct {
    int grid_size;
    const uint64_t *grid;
    const int32_t *map;
    const uint16_t *neighbours;
    const uint64_t *neighbour_points; /* grid[neighbours[i]] for each entry i (a count's
                                       * entry: 0), and 8 zero entries past the end */
} gk_iq_search;

/** gk_iq_search_get() : the search tables for IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S or
 *  IQ1_M (GK_TYPE_* id), built once on first use (thread-safe).
 *  @return : NULL for other types or when the tables could not be allocated. */
const gk_iq_search *gk_iq_search_get(uint32_t type);

/* ---- IQ3 quantizer internals shared with the vector kernels -------------- */

/* Search tables of one 3-bit grid (ggml's iq3xs_init_impl), see iquants.c. */
typedef struct {
    int grid_size;
    int nwant;                 /* distance shells kept per off-grid point */
    const uint32_t *source;    /* the packed grid as stored in iq_grids.c */
    uint32_t *grid;            /* grid points as 4 bytes of 2*l+1 */
    int *map;                  /* point code -> grid index, or -(neighbour offset + 1) */
    uint16_t *neighbours;      /* per off-grid point: count, then grid indices */
    uint32_t *neighbour_points; /* grid[neighbours[i]] for each list member i (the
                                 * entry of a count is meaningless) */
    int neighbours_cap;
    bool ready;
} gk_iq3_tables;

/* Per-32-value search state of the IQ3 quantizers (reused from block to block;
 * every group starts with levels 0, as ggml's since 2026-03). */
typedef struct {
    float weight[32], waux[32], xval[32];
    int8_t L[32], Laux[32];
    bool on_grid[8], on_grid_aux[8];
} gk_iq3_group;

/* Scale search over 2*nis+1 trial scales for the 32 magnitudes g->xval (weights
 * g->weight, neighbour weights g->waux) of largest value max: on an improvement it
 * leaves the best levels in g->L and the groups found on the grid in g->on_grid,
 * which otherwise keep the previous levels and on_grid_init. @return : the scale. */
typedef float (*gk_iq3_search_fn)(const gk_iq3_tables *t, gk_iq3_group *g, float max, int nis,
                                  bool on_grid_init);

/** gk_iq3xxs_tables(), gk_iq3s_tables() : the IQ3_XXS / IQ3_S search tables, built
 *  on first use (thread-safe). @return : NULL if unusable. */
const gk_iq3_tables *gk_iq3xxs_tables(void);
const gk_iq3_tables *gk_iq3s_tables(void);

/** gk_quantize_iq3_xxs_with(), gk_quantize_iq3_s_with() : the IQ3 quantizers with
 *  the scale search `search` (the scalar one, or a vector kernel's exact equal). */
void gk_quantize_iq3_xxs_with(gk_iq3_search_fn search, const float *src, void *dst,
                              int64_t nrows, int64_t n_per_row, const float *imatrix);
void gk_quantize_iq3_s_with(gk_iq3_search_fn search, const float *src, void *dst,
                            int64_t nrows, int64_t n_per_row, const float *imatrix);

/* ---- IQ2 quantizer internals shared with the vector kernels -------------- */

/* Nearest listed neighbour of the off-grid code `code` of 8 magnitudes xval at
 * `scale` (weighted squared error, first of equals in list order; grid point 0 for
 * an empty list); writes its levels to L. @return : its grid index. */
typedef int (*gk_iq2_neighbour_fn)(const gk_iq_search *t, int code, const float *xval,
                                   const float *weight, float scale, int8_t *L);

struct gk_iq2_state;

/* Trial loop of the 2-bit searches over ngroups groups of 8 magnitudes g->xval
 * (weights g->weight, neighbour weights g->waux, neighbour search g->neighbour):
 * trial is = -nis..nis uses the inverse scale (5 + 0.1 is) / max; on an
 * improvement the trial's levels go to g->L and its on-grid flags to g->on_grid,
 * which otherwise stay as they were. scale: the value returned when no trial
 * improves. @return : the scale. */
typedef float (*gk_iq2_search_fn)(const gk_iq_search *t, struct gk_iq2_state *g, int ngroups,
                                  int nis, float max, float scale);

/* Per-call state of the 2-bit quantizers, reused from group to group as ggml's
 * buffers are (every group starts with levels 0, as ggml's since 2026-03). */
typedef struct gk_iq2_state {
    float weight[32], waux[32], xval[32];
    int8_t L[32], Laux[32];
    bool on_grid[4], on_grid_aux[4];
    gk_iq2_search_fn search;
    gk_iq2_neighbour_fn neighbour;
} gk_iq2_state;

/** gk_quantize_iq2_xxs_with(), gk_quantize_iq2_xs_with(), gk_quantize_iq2_s_with() :
 *  the IQ2 quantizers with the trial loop `search` and the neighbour search
 *  `neighbour` (the scalar ones, or a vector kernel's exact equals). */
void gk_quantize_iq2_xxs_with(gk_iq2_search_fn search, gk_iq2_neighbour_fn neighbour, const float *src, void *dst,
                              int64_t nrows, int64_t n_per_row, const float *imatrix);
void gk_quantize_iq2_xs_with(gk_iq2_search_fn search, gk_iq2_neighbour_fn neighbour, const float *src, void *dst,
                             int64_t nrows, int64_t n_per_row, const float *imatrix);
void gk_quantize_iq2_s_with(gk_iq2_search_fn search, gk_iq2_neighbour_fn neighbour, const float *src, void *dst,
                            int64_t nrows, int64_t n_per_row, const float *imatrix);

/* ---- IQ1 quantizer internals shared with the vector kernels -------------- */

struct gk_iq1_state;

/* Exhaustive split search of one group (IQ1_S: 32 values, both delta signs;
 * IQ1_M: 16 values, 4 sign combinations) over the sorted order s->order with
 * weights s->weight: sets s->L and *choice (IQ1_S: shift +1/-1, 0 if none;
 * IQ1_M: combination, -1 if none). @return : the scale (0 if none). */
typedef float (*gk_iq1_split_fn)(struct gk_iq1_state *s, const float *xb, float max, int *choice);

/* Nearest listed neighbour of the off-grid code `code` of 8 values xval under
 * the shifted levels xg (weighted squared error at `scale`; the whole grid if no
 * listed point scores below FLT_MAX); writes its levels to L. @return : its index. */
typedef int (*gk_iq1_neighbour_fn)(const gk_iq_search *t, int code, const float *xval,
                                   const float *weight, float scale, const float *xg, int8_t *L);

/* Per-call state of the 1-bit quantizers (reused from block to block as ggml's
 * buffers are; every group sets its shift, a zero group +1 / 0 since 2026-03). */
typedef struct gk_iq1_state {
    float weight[32];
    float sumx[33], sumw[33];
    float value[32]; /* the group's values sorted ascending ... */
    int order[32];   /* ... and their positions */
    int8_t L[32];
    uint16_t index[4];
    int8_t shifts[256 / 16];
    float scales[256 / 16];
    gk_iq1_split_fn split;
    gk_iq1_neighbour_fn neighbour;
} gk_iq1_state;

/** gk_iq1_best_neighbour() : the scalar gk_iq1_neighbour_fn (ggml's
 *  iq1_find_best_neighbour2). */
int gk_iq1_best_neighbour(const gk_iq_search *t, int code, const float *xval, const float *weight,
                          float scale, const float *xg, int8_t *L);

/** gk_iq1_prefix_sums() : s->sumx[j] / s->sumw[j] = the sums of weight*x / weight
 *  over the first j of the n values xb in the order s->order (j = 0..n). */
void gk_iq1_prefix_sums(struct gk_iq1_state *s, const float *xb, int n);

/** gk_iq1_assign_levels() : s->L = 0 / 1 / 2 for the sorted positions below i1,
 *  from i1 below i2, and from i2 of n values. */
void gk_iq1_assign_levels(struct gk_iq1_state *s, int n, int i1, int i2);

/** gk_quantize_iq1_s_with(), gk_quantize_iq1_m_with() : the IQ1 quantizers with the
 *  split search `split` and the neighbour search `neighbour` (the scalar ones, or
 *  a vector kernel's exact equals). */
void gk_quantize_iq1_s_with(gk_iq1_split_fn split, gk_iq1_neighbour_fn neighbour, const float *src,
                            void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix);
void gk_quantize_iq1_m_with(gk_iq1_split_fn split, gk_iq1_neighbour_fn neighbour, const float *src,
                            void *dst, int64_t nrows, int64_t n_per_row, const float *imatrix);

#endif
