/*
 * table.c - the one table of ggml tensor types.
 *
 * Every fact about a tensor type (name, block geometry, kernels) lives here; the
 * rest of the library asks gk_type_get() instead of switching on type ids. Ids
 * that ggml retired stay in the table, marked, so readers can say so. The block
 * geometry is blocks.h's constants, which that header asserts its block layouts
 * against.
 *
 * The table below names the scalar kernels. What callers get is a copy made
 * once, in which the vector kernels of the active level (gk_isa_active(),
 * dispatch.c) have replaced the quantize/dequantize entries they cover.
 */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "ggufkit.h"
#include "types/blocks.h"
#include "types/cpu.h"
#include "types/kernels.h"

#define PLAIN(ID, NAME, BYTES, K)                                                       \
    [ID] = { ID, NAME, 1, BYTES, false, false, gk_dequantize_##K, K##_QUANTIZE,       \
             gk_byteswap_##K, false, K##_CHECK }
#define BLOCK(ID, NAME, ELEMS, BYTES, K, IMAT)                                          \
    [ID] = { ID, NAME, ELEMS, BYTES, true, false, gk_dequantize_##K, gk_quantize_##K, \
             gk_byteswap_##K, IMAT, gk_check_##K }
/* A block type whose kernels are not in the library yet: geometry only. */
#define GEOMETRY(ID, NAME, ELEMS, BYTES, IMAT)                                          \
    [ID] = { ID, NAME, ELEMS, BYTES, true, false, NULL, NULL, NULL, IMAT }
/* A block type with dequantize and byteswap but no quantizer yet (imatrix-only I-quants). */
#define DEQUANT_ONLY(ID, NAME, ELEMS, BYTES, K, IMAT) [ID] = { ID, NAME, ELEMS, BYTES, true, false, gk_dequantize_##K, NULL, gk_byteswap_##K, IMAT, gk_check_##K }
#define RETIRED(ID, NAME) [ID] = { ID, NAME, 0, 0, true, true, NULL, NULL, NULL, false }

/* Integer types are stored values, never a quantization target. */
#define f32_QUANTIZE gk_quantize_f32
#define f16_QUANTIZE gk_quantize_f16
#define bf16_QUANTIZE gk_quantize_bf16
#define f64_QUANTIZE NULL
#define i8_QUANTIZE NULL
#define i16_QUANTIZE NULL
#define i32_QUANTIZE NULL
#define i64_QUANTIZE NULL
/* Floating-point values are checked for finiteness; integers hold any value. */
#define f32_CHECK gk_check_f32
#define f16_CHECK gk_check_f16
#define bf16_CHECK gk_check_bf16
#define f64_CHECK gk_check_f64
#define i8_CHECK NULL
#define i16_CHECK NULL
#define i32_CHECK NULL
#define i64_CHECK NULL

static const gk_type_info type_table[GK_TYPE_COUNT] = {
    PLAIN(GK_TYPE_F32, "F32", 4, f32),
    PLAIN(GK_TYPE_F16, "F16", 2, f16),
    BLOCK(GK_TYPE_Q4_0, "Q4_0", QK4_0, Q4_0_BYTES, q4_0, false),
    BLOCK(GK_TYPE_Q4_1, "Q4_1", QK4_1, Q4_1_BYTES, q4_1, false),
    RETIRED(4, "Q4_2"),
    RETIRED(5, "Q4_3"),
    BLOCK(GK_TYPE_Q5_0, "Q5_0", QK5_0, Q5_0_BYTES, q5_0, false),
    BLOCK(GK_TYPE_Q5_1, "Q5_1", QK5_1, Q5_1_BYTES, q5_1, false),
    BLOCK(GK_TYPE_Q8_0, "Q8_0", QK8_0, Q8_0_BYTES, q8_0, false),
    BLOCK(GK_TYPE_Q8_1, "Q8_1", QK8_1, Q8_1_BYTES, q8_1, false),
    BLOCK(GK_TYPE_Q2_K, "Q2_K", QK_K, Q2_K_BYTES, q2_K, false),
    BLOCK(GK_TYPE_Q3_K, "Q3_K", QK_K, Q3_K_BYTES, q3_K, false),
    BLOCK(GK_TYPE_Q4_K, "Q4_K", QK_K, Q4_K_BYTES, q4_K, false),
    BLOCK(GK_TYPE_Q5_K, "Q5_K", QK_K, Q5_K_BYTES, q5_K, false),
    BLOCK(GK_TYPE_Q6_K, "Q6_K", QK_K, Q6_K_BYTES, q6_K, false),
    BLOCK(GK_TYPE_Q8_K, "Q8_K", QK_K, Q8_K_BYTES, q8_K, false),
    BLOCK(GK_TYPE_IQ2_XXS, "IQ2_XXS", QK_K, IQ2_XXS_BYTES, iq2_xxs, true),
    BLOCK(GK_TYPE_IQ2_XS, "IQ2_XS", QK_K, IQ2_XS_BYTES, iq2_xs, true),
    BLOCK(GK_TYPE_IQ3_XXS, "IQ3_XXS", QK_K, IQ3_XXS_BYTES, iq3_xxs, false),
    BLOCK(GK_TYPE_IQ1_S, "IQ1_S", QK_K, IQ1_S_BYTES, iq1_s, true),
    BLOCK(GK_TYPE_IQ4_NL, "IQ4_NL", QK4_NL, IQ4_NL_BYTES, iq4_nl, false),
    BLOCK(GK_TYPE_IQ3_S, "IQ3_S", QK_K, IQ3_S_BYTES, iq3_s, false),
    BLOCK(GK_TYPE_IQ2_S, "IQ2_S", QK_K, IQ2_S_BYTES, iq2_s, true),
    BLOCK(GK_TYPE_IQ4_XS, "IQ4_XS", QK_K, IQ4_XS_BYTES, iq4_xs, false),
    PLAIN(GK_TYPE_I8, "I8", 1, i8),
    PLAIN(GK_TYPE_I16, "I16", 2, i16),
    PLAIN(GK_TYPE_I32, "I32", 4, i32),
    PLAIN(GK_TYPE_I64, "I64", 8, i64),
    PLAIN(GK_TYPE_F64, "F64", 8, f64),
    BLOCK(GK_TYPE_IQ1_M, "IQ1_M", QK_K, IQ1_M_BYTES, iq1_m, true),
    PLAIN(GK_TYPE_BF16, "BF16", 2, bf16),
    RETIRED(31, "Q4_0_4_4"),
    RETIRED(32, "Q4_0_4_8"),
    RETIRED(33, "Q4_0_8_8"),
    BLOCK(GK_TYPE_TQ1_0, "TQ1_0", QK_K, TQ1_0_BYTES, tq1_0, false),
    BLOCK(GK_TYPE_TQ2_0, "TQ2_0", QK_K, TQ2_0_BYTES, tq2_0, false),
    RETIRED(36, "IQ4_NL_4_4"),
    RETIRED(37, "IQ4_NL_4_8"),
    RETIRED(38, "IQ4_NL_8_8"),
    BLOCK(GK_TYPE_MXFP4, "MXFP4", QK_MXFP4, MXFP4_BYTES, mxfp4, false),
    BLOCK(GK_TYPE_NVFP4, "NVFP4", QK_NVFP4, NVFP4_BYTES, nvfp4, false),
    BLOCK(GK_TYPE_Q1_0, "Q1_0", QK1_0, Q1_0_BYTES, q1_0, false),
    BLOCK(GK_TYPE_Q2_0, "Q2_0", QK2_0, Q2_0_BYTES, q2_0, false),
};

void gk_type_table_for(gk_isa isa, gk_type_info out[GK_TYPE_COUNT]) {
    memcpy(out, type_table, sizeof type_table);
    gk_kernels_register(out, isa);
}

static gk_type_info active_table[GK_TYPE_COUNT];
static pthread_once_t active_once = PTHREAD_ONCE_INIT;

static void build_active_table(void) { gk_type_table_for(gk_isa_active(), active_table); }

const gk_type_info *gk_type_get(uint32_t id) {
    if (id >= GK_TYPE_COUNT) return NULL;
    pthread_once(&active_once, build_active_table);
    const gk_type_info *t = &active_table[id];
    if (t->name == NULL || t->retired) return NULL;
    return t;
}

bool gk_type_is_retired(uint32_t id) {
    return id < GK_TYPE_COUNT && type_table[id].retired;
}

const char *gk_type_retired_name(uint32_t id) {
    return gk_type_is_retired(id) ? type_table[id].name : NULL;
}

const gk_type_info *gk_type_lookup(const char *name) {
    if (name == NULL) return NULL;
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *t = &type_table[id];
        if (t->name != NULL && !t->retired && strcasecmp(t->name, name) == 0) return gk_type_get(id);
    }
    return NULL;
}

uint64_t gk_type_row_bytes(uint32_t id, uint64_t n) {
    const gk_type_info *t = gk_type_get(id);
    if (t == NULL || n % t->block_elems != 0) return 0;
    return n / t->block_elems * t->block_bytes;
}
