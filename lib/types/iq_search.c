/*
 * iq_search.c - search tables of the 2-bit and 1-bit I-quant quantizers.
 *
 * ggml's iq2xs_init_impl builds, for each of the IQ2_XXS (256), IQ2_XS (512),
 * IQ2_S (1024) and IQ1_S/IQ1_M (2048) grids: the grid as 8 bytes of 2*l+1 per
 * point, a map from every 8 x 2-bit level code to its grid index, and for codes
 * that are not grid points a list of the grid points in the nearest `nwant`
 * distance shells (squared distance, then grid index, ascending). The quantizers
 * only ever look up codes whose levels are all 0..2, so lists are built for those
 * codes only (6561 of the 43692); their content and order equal ggml's.
 *
 * Tables are built once per grid under pthread_once and allocated once; if an
 * allocation fails the grid stays unavailable (gk_iq_search_get returns NULL)
 * and nothing is printed or aborted.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"
#include "types/iq_grids.h"
#include "types/iquants.h"
#include "util/grow.h"

/* Largest squared distance between two points of 8 values in {1,3,5,7}. */
#define IQ_SEARCH_MAX_D2 (8 * 36)
/* Most distance shells any grid keeps (IQ1: 3). */
#define GK_IQ_SEARCH_MAX_SHELLS 3

enum { GRID_IQ2XXS, GRID_IQ2XS, GRID_IQ2S, GRID_IQ1, GRID_COUNT };

typedef struct {
    gk_iq_search pub;
    const uint64_t *source; /* the packed grid of iq_grids.c */
    int nwant;              /* distance shells kept per off-grid code */
    bool is_ternary;        /* IQ1 grid stores -1/0/1, the IQ2 grids 0x08/0x19/0x2b */
} search_slot;

static search_slot slots[GRID_COUNT] = {
    [GRID_IQ2XXS] = { { GK_IQ2XXS_GRID_SIZE, NULL, NULL, NULL, NULL }, gk_iq2xxs_grid, 2, false },
    [GRID_IQ2XS] = { { GK_IQ2XS_GRID_SIZE, NULL, NULL, NULL, NULL }, gk_iq2xs_grid, 2, false },
    [GRID_IQ2S] = { { GK_IQ2S_GRID_SIZE, NULL, NULL, NULL, NULL }, gk_iq2s_grid, 1, false },
    [GRID_IQ1] = { { GK_IQ1S_GRID_SIZE, NULL, NULL, NULL, NULL }, gk_iq1s_grid, 3, true },
};

/* Level 0..2 of byte j of a stored grid point. */
static int stored_level(const search_slot *s, uint64_t entry, int j) {
    int8_t v = gk_grid_byte(entry, j);
    if (s->is_ternary) return v + 1;
    uint8_t m = (uint8_t)v;
    return m == 0x08 ? 0 : m == 0x19 ? 1 : 2;
}

/* True when every 2-bit field of code is at most 2 (the only codes looked up). */
static bool code_is_reachable(int code) {
    for (int k = 0; k < 8; k++)
        if (((code >> (2 * k)) & 3) == 3) return false;
    return true;
}

/* Squared distances from code's point to every grid point; writes the nearest
 * nwant distinct distances (ascending) to shell and returns how many there are. */
static int code_distances(const search_slot *s, const uint64_t *grid, int code, int *dist2,
                          int *shell) {
    int8_t pos[8];
    for (int k = 0; k < 8; k++) pos[k] = (int8_t)(2 * ((code >> (2 * k)) & 3) + 1);
    bool present[IQ_SEARCH_MAX_D2 + 1];
    memset(present, 0, sizeof present);
    for (int j = 0; j < s->pub.grid_size; j++) {
        int d2 = 0;
        for (int k = 0; k < 8; k++) {
            int diff = gk_grid_byte(grid[j], k) - pos[k];
            d2 += diff * diff;
        }
        dist2[j] = d2;
        present[d2] = true;
    }
    int shells = 0;
    for (int d = 0; d <= IQ_SEARCH_MAX_D2 && shells < s->nwant; d++)
        if (present[d]) shell[shells++] = d;
    return shells;
}

/* Builds one grid's tables; leaves pub.grid NULL on allocation failure. */
static void build_slot(search_slot *s) {
    const int n = s->pub.grid_size;
    uint64_t *grid = malloc((size_t)n * sizeof *grid);
    int32_t *map = malloc(GK_IQ_SEARCH_MAP_SIZE * sizeof *map);
    int *dist2 = malloc((size_t)n * sizeof *dist2);
    uint16_t *neighbours = NULL;
    uint64_t *points = NULL;
    if (grid == NULL || map == NULL || dist2 == NULL) goto fail;

    for (int k = 0; k < n; k++) {
        uint64_t point = 0;
        for (int i = 0; i < 8; i++)
            point |= (uint64_t)(2 * stored_level(s, s->source[k], i) + 1) << (8 * i);
        grid[k] = point;
    }
    for (int i = 0; i < GK_IQ_SEARCH_MAP_SIZE; i++) map[i] = -1;
    for (int k = 0; k < n; k++) {
        int code = 0;
        for (int i = 0; i < 8; i++) code |= ((gk_grid_byte(grid[k], i) - 1) / 2) << (2 * i);
        map[code] = k;
    }

    /* One pass: lists ordered by (distance, grid index), as ggml's sorted scan,
     * appended to arrays that grow as needed. */
    size_t counter = 0, cap_neighbours = 1u << 16, cap_points = 1u << 16;
    neighbours = malloc(cap_neighbours * sizeof *neighbours);
    points = malloc(cap_points * sizeof *points);
    if (neighbours == NULL || points == NULL) goto fail;
    for (int code = 0; code < GK_IQ_SEARCH_MAP_SIZE; code++) {
        if (map[code] >= 0 || !code_is_reachable(code)) continue;
        int shell[GK_IQ_SEARCH_MAX_SHELLS];
        int nshell = code_distances(s, grid, code, dist2, shell);
        size_t members = 0;
        for (int j = 0; j < n; j++)
            if (dist2[j] <= shell[nshell - 1]) members++;
        /* spare entries at the end: vector searches read 8 entries at a time */
        if (!GK_GROW(neighbours, cap_neighbours, counter + 1 + members + 8, 0) ||
            !GK_GROW(points, cap_points, counter + 1 + members + 8, 0))
            goto fail;
        map[code] = -(int32_t)(counter + 1);
        size_t start = counter++;
        uint16_t count = 0;
        points[start] = 0;
        for (int h = 0; h < nshell; h++) {
            for (int j = 0; j < n; j++) {
                if (dist2[j] != shell[h]) continue;
                neighbours[counter] = (uint16_t)j;
                points[counter++] = grid[j];
                count++;
            }
        }
        neighbours[start] = count;
    }
    memset(neighbours + counter, 0, 8 * sizeof *neighbours);
    memset(points + counter, 0, 8 * sizeof *points);
    free(dist2);
    s->pub.grid = grid;
    s->pub.map = map;
    s->pub.neighbours = neighbours;
    s->pub.neighbour_points = points;
    return;

fail:
    free(grid);
    free(map);
    free(dist2);
    free(neighbours);
    free(points);
}

static pthread_once_t once_iq2xxs = PTHREAD_ONCE_INIT;
static pthread_once_t once_iq2xs = PTHREAD_ONCE_INIT;
static pthread_once_t once_iq2s = PTHREAD_ONCE_INIT;
static pthread_once_t once_iq1 = PTHREAD_ONCE_INIT;

static void init_iq2xxs(void) { build_slot(&slots[GRID_IQ2XXS]); }
static void init_iq2xs(void) { build_slot(&slots[GRID_IQ2XS]); }
static void init_iq2s(void) { build_slot(&slots[GRID_IQ2S]); }
static void init_iq1(void) { build_slot(&slots[GRID_IQ1]); }

/** gk_iq_search_get() : the search tables of the grid used by type (IQ2_XXS,
 *  IQ2_XS, IQ2_S, IQ1_S or IQ1_M), built on first use (thread-safe).
 *  @return : NULL for another type or if the tables could not be allocated. */
const gk_iq_search *gk_iq_search_get(uint32_t type) {
    search_slot *s;
    switch (type) {
    case GK_TYPE_IQ2_XXS:
        pthread_once(&once_iq2xxs, init_iq2xxs);
        s = &slots[GRID_IQ2XXS];
        break;
    case GK_TYPE_IQ2_XS:
        pthread_once(&once_iq2xs, init_iq2xs);
        s = &slots[GRID_IQ2XS];
        break;
    case GK_TYPE_IQ2_S:
        pthread_once(&once_iq2s, init_iq2s);
        s = &slots[GRID_IQ2S];
        break;
    case GK_TYPE_IQ1_S:
    case GK_TYPE_IQ1_M:
        pthread_once(&once_iq1, init_iq1);
        s = &slots[GRID_IQ1];
        break;
    default:
        return NULL;
    }
    return s->pub.grid != NULL ? &s->pub : NULL;
}
