/*
 * iq_grids.h - declarations of the I-quant lookup tables (defined in iq_grids.c).
 *
 * Grid entries pack 8 (uint64_t) or 4 (uint32_t) signed byte values, element 0 in the
 * least significant byte; read them as bytes in little-endian order (see gk_grid_byte).
 */
#ifndef GK_TYPES_IQ_GRIDS_H
#define GK_TYPES_IQ_GRIDS_H

#include <stdint.h>

#define GK_IQ2XXS_GRID_SIZE 256
#define GK_IQ2XS_GRID_SIZE 512
#define GK_IQ2S_GRID_SIZE 1024
#define GK_IQ3XXS_GRID_SIZE 256
#define GK_IQ3S_GRID_SIZE 512
#define GK_IQ1S_GRID_SIZE 2048
#define GK_IQ_KMASK_SIZE 8
#define GK_IQ_KSIGNS_SIZE 128
#define GK_IQ4NL_LEVELS 16

/* Offset added to the IQ1_S / IQ1_M grid values, with the sign chosen per group. */
#define GK_IQ1S_DELTA 0.125f
#define GK_IQ1M_DELTA 0.125f

extern const uint64_t gk_iq2xxs_grid[GK_IQ2XXS_GRID_SIZE];
extern const uint64_t gk_iq2xs_grid[GK_IQ2XS_GRID_SIZE];
extern const uint64_t gk_iq2s_grid[GK_IQ2S_GRID_SIZE];
extern const uint32_t gk_iq3xxs_grid[GK_IQ3XXS_GRID_SIZE];
extern const uint32_t gk_iq3s_grid[GK_IQ3S_GRID_SIZE];
extern const uint64_t gk_iq1s_grid[GK_IQ1S_GRID_SIZE];
extern const uint8_t gk_kmask_iq2xs[GK_IQ_KMASK_SIZE];
extern const uint8_t gk_ksigns_iq2xs[GK_IQ_KSIGNS_SIZE];
extern const int8_t gk_kvalues_iq4nl[GK_IQ4NL_LEVELS];

/* Byte j (0 = least significant) of a packed grid entry, as the signed value it encodes. */
static inline int8_t gk_grid_byte(uint64_t entry, int j) {
    return (int8_t)(uint8_t)(entry >> (8 * j));
}

#endif
