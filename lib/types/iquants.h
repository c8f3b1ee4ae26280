/*
 * iquants.h - internal extras of the I-quant kernels beyond kernels.h.
 */
#ifndef GK_TYPES_IQUANTS_H
#define GK_TYPES_IQUANTS_H

#include <stdbool.h>
#include <stdint.h>

/** gk_iq3_tables_ready() : builds the IQ3_XXS / IQ3_S quantizer search tables if
 *  needed (thread-safe, once) and reports whether both are usable. */
bool gk_iq3_tables_ready(void);

/* Search tables of one 2-bit / 1-bit grid (ggml's iq2xs_init_impl), see iq_search.c.
 * grid: points as 8 bytes of 2*l+1 (l = level 0..2); map: code of 8 two-bit levels
 * (level i in bits 2i..2i+1) -> grid index, or -(offset+1) of its neighbour list in
 * neighbours (a count, then grid indices). */
typedef struct {
    int grid_size;
    const uint64_t *grid;
    const int32_t *map;
    const uint16_t *neighbours;
} gk_iq_search;

/** gk_iq_search_get() : the search tables for IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S or
 *  IQ1_M (GK_TYPE_* id), built once on first use (thread-safe).
 *  @return : NULL for other types or when the tables could not be allocated. */
const gk_iq_search *gk_iq_search_get(uint32_t type);

#endif
