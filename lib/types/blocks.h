/*
 * blocks.h - the block geometry of every block type: values per block (QK*),
 * bytes per block (<TYPE>_BYTES) and the block layouts (ggml-common.h's), each
 * layout asserted against its byte count. table.c builds the type table from
 * these constants, so the kernels and the table cannot disagree.
 * The I-quant kernels read their blocks by byte offset; their structs here
 * record the layout the byte counts come from.
 */
#ifndef GK_TYPES_BLOCKS_H
#define GK_TYPES_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

/* Values per block. */
#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK_K 256 /* K-quants, I-quants (but IQ4_NL) and ternary types: super-blocks */
#define QK4_NL 32
#define QK_MXFP4 32
#define QK_NVFP4 64
#define QK_NVFP4_SUB 16 /* values per NVFP4 scale */
#define QK1_0 128
#define QK2_0 64

/* Bytes per block. */
#define Q4_0_BYTES 18
#define Q4_1_BYTES 20
#define Q5_0_BYTES 22
#define Q5_1_BYTES 24
#define Q8_0_BYTES 34
#define Q8_1_BYTES 36
#define Q2_K_BYTES 84
#define Q3_K_BYTES 110
#define Q4_K_BYTES 144
#define Q5_K_BYTES 176
#define Q6_K_BYTES 210
#define Q8_K_BYTES 292
#define IQ2_XXS_BYTES 66
#define IQ2_XS_BYTES 74
#define IQ2_S_BYTES 82
#define IQ3_XXS_BYTES 98
#define IQ3_S_BYTES 110
#define IQ1_S_BYTES 50
#define IQ1_M_BYTES 56
#define IQ4_NL_BYTES 18
#define IQ4_XS_BYTES 136
#define TQ1_0_BYTES 54
#define TQ2_0_BYTES 66
#define MXFP4_BYTES 17
#define NVFP4_BYTES 36
#define Q1_0_BYTES 18
#define Q2_0_BYTES 18

/* Legacy types: an fp16 scale (and minimum or sum), then the levels. */
typedef struct { uint16_t d; uint8_t qs[QK4_0 / 2]; } block_q4_0;
typedef struct { uint16_t d; uint16_t m; uint8_t qs[QK4_1 / 2]; } block_q4_1;
typedef struct { uint16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; } block_q5_0;
typedef struct { uint16_t d; uint16_t m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; } block_q5_1;
typedef struct { uint16_t d; int8_t qs[QK8_0]; } block_q8_0;
typedef struct { uint16_t d; uint16_t s; int8_t qs[QK8_1]; } block_q8_1;

/* K-quants (kquants.c's header comment gives the byte offsets). */
typedef struct {
    uint8_t scales[QK_K / 16]; /* low nibble scale, high nibble min */
    uint8_t qs[QK_K / 4];
    uint16_t d;
    uint16_t dmin;
} block_q2_K;

typedef struct {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12]; /* sixteen 6-bit scales */
    uint16_t d;
} block_q3_K;

typedef struct {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12]; /* eight 6-bit scales and eight 6-bit mins */
    uint8_t qs[QK_K / 2];
} block_q4_K;

typedef struct {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;

typedef struct {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    uint16_t d;
} block_q6_K;

typedef struct {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} block_q8_K;

/* I-quants. */
typedef struct { uint16_t d; uint16_t qs[QK_K / 8]; } block_iq2_xxs;
typedef struct { uint16_t d; uint16_t qs[QK_K / 8]; uint8_t scales[QK_K / 32]; } block_iq2_xs;
typedef struct { uint16_t d; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t scales[QK_K / 32]; } block_iq2_s;
typedef struct { uint16_t d; uint8_t qs[3 * QK_K / 8]; } block_iq3_xxs;
typedef struct {
    uint16_t d;
    uint8_t qs[QK_K / 4];
    uint8_t qh[QK_K / 32];
    uint8_t signs[QK_K / 8];
    uint8_t scales[QK_K / 64];
} block_iq3_s;
typedef struct { uint16_t d; uint8_t qs[QK_K / 8]; uint16_t qh[QK_K / 32]; } block_iq1_s;
typedef struct { uint8_t qs[QK_K / 8]; uint8_t qh[QK_K / 16]; uint8_t scales[QK_K / 32]; } block_iq1_m;
typedef struct { uint16_t d; uint8_t qs[QK4_NL / 2]; } block_iq4_nl;
typedef struct { uint16_t d; uint16_t scales_h; uint8_t scales_l[QK_K / 64]; uint8_t qs[QK_K / 2]; } block_iq4_xs;

/* Ternary types. */
typedef struct { uint8_t qs[(QK_K - 4 * QK_K / 64) / 5]; uint8_t qh[QK_K / 64]; uint16_t d; } block_tq1_0;
typedef struct { uint8_t qs[QK_K / 4]; uint16_t d; } block_tq2_0;

/* FP4 types: an E8M0 scale (MXFP4) or one UE4M3 scale per 16 values (NVFP4). */
typedef struct { uint8_t e; uint8_t qs[QK_MXFP4 / 2]; } block_mxfp4;
typedef struct { uint8_t d[QK_NVFP4 / QK_NVFP4_SUB]; uint8_t qs[QK_NVFP4 / 2]; } block_nvfp4;

/* One- and two-bit types. */
typedef struct { uint16_t d; uint8_t qs[QK1_0 / 8]; } block_q1_0;
typedef struct { uint16_t d; uint8_t qs[QK2_0 / 4]; } block_q2_0;

_Static_assert(sizeof(block_q4_0) == Q4_0_BYTES, "Q4_0 block size");
_Static_assert(sizeof(block_q4_1) == Q4_1_BYTES, "Q4_1 block size");
_Static_assert(sizeof(block_q5_0) == Q5_0_BYTES, "Q5_0 block size");
_Static_assert(sizeof(block_q5_1) == Q5_1_BYTES, "Q5_1 block size");
_Static_assert(sizeof(block_q8_0) == Q8_0_BYTES, "Q8_0 block size");
_Static_assert(sizeof(block_q8_1) == Q8_1_BYTES, "Q8_1 block size");
_Static_assert(sizeof(block_q2_K) == Q2_K_BYTES && offsetof(block_q2_K, d) == 80, "Q2_K layout");
_Static_assert(sizeof(block_q3_K) == Q3_K_BYTES && offsetof(block_q3_K, d) == 108, "Q3_K layout");
_Static_assert(sizeof(block_q4_K) == Q4_K_BYTES && offsetof(block_q4_K, qs) == 16, "Q4_K layout");
_Static_assert(sizeof(block_q5_K) == Q5_K_BYTES && offsetof(block_q5_K, qs) == 48, "Q5_K layout");
_Static_assert(sizeof(block_q6_K) == Q6_K_BYTES && offsetof(block_q6_K, d) == 208, "Q6_K layout");
_Static_assert(sizeof(block_q8_K) == Q8_K_BYTES && offsetof(block_q8_K, bsums) == 260, "Q8_K layout");
_Static_assert(sizeof(block_iq2_xxs) == IQ2_XXS_BYTES, "IQ2_XXS block size");
_Static_assert(sizeof(block_iq2_xs) == IQ2_XS_BYTES, "IQ2_XS block size");
_Static_assert(sizeof(block_iq2_s) == IQ2_S_BYTES, "IQ2_S block size");
_Static_assert(sizeof(block_iq3_xxs) == IQ3_XXS_BYTES, "IQ3_XXS block size");
_Static_assert(sizeof(block_iq3_s) == IQ3_S_BYTES, "IQ3_S block size");
_Static_assert(sizeof(block_iq1_s) == IQ1_S_BYTES, "IQ1_S block size");
_Static_assert(sizeof(block_iq1_m) == IQ1_M_BYTES, "IQ1_M block size");
_Static_assert(sizeof(block_iq4_nl) == IQ4_NL_BYTES, "IQ4_NL block size");
_Static_assert(sizeof(block_iq4_xs) == IQ4_XS_BYTES, "IQ4_XS block size");
_Static_assert(sizeof(block_tq1_0) == TQ1_0_BYTES, "TQ1_0 block size");
_Static_assert(sizeof(block_tq2_0) == TQ2_0_BYTES, "TQ2_0 block size");
_Static_assert(sizeof(block_mxfp4) == MXFP4_BYTES, "MXFP4 block size");
_Static_assert(sizeof(block_nvfp4) == NVFP4_BYTES, "NVFP4 block size");
_Static_assert(sizeof(block_q1_0) == Q1_0_BYTES, "Q1_0 block size");
_Static_assert(sizeof(block_q2_0) == Q2_0_BYTES, "Q2_0 block size");

#endif
