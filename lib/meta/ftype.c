/*
 * ftype.c - names of llama.cpp's file types (the value of `general.file_type`).
 *
 * The numbers are llama.cpp's `enum llama_ftype` (include/llama.h); the names are
 * the ones llama-quantize accepts and prints (15 = "Q4_K_M"). Numbers llama.cpp
 * has since dropped keep their old names so that old files still say what they
 * were.
 */
#include <stddef.h>

#include "ggufkit.h"

/* One row: a file type number and its llama-quantize name. */
typedef struct ftype_row {
    uint32_t id;
    const char *name;
} ftype_row;

static const ftype_row ftype_table[] = {
    { 0, "F32" },
    { 1, "F16" },
    { 2, "Q4_0" },
    { 3, "Q4_1" },
    { 4, "Q4_1_SOME_F16" },   /* dropped by llama.cpp */
    { 5, "Q4_2" },            /* dropped */
    { 6, "Q4_3" },            /* dropped */
    { 7, "Q8_0" },
    { 8, "Q5_0" },
    { 9, "Q5_1" },
    { 10, "Q2_K" },
    { 11, "Q3_K_S" },
    { 12, "Q3_K_M" },
    { 13, "Q3_K_L" },
    { 14, "Q4_K_S" },
    { 15, "Q4_K_M" },
    { 16, "Q5_K_S" },
    { 17, "Q5_K_M" },
    { 18, "Q6_K" },
    { 19, "IQ2_XXS" },
    { 20, "IQ2_XS" },
    { 21, "Q2_K_S" },
    { 22, "IQ3_XS" },
    { 23, "IQ3_XXS" },
    { 24, "IQ1_S" },
    { 25, "IQ4_NL" },
    { 26, "IQ3_S" },
    { 27, "IQ3_M" },
    { 28, "IQ2_S" },
    { 29, "IQ2_M" },
    { 30, "IQ4_XS" },
    { 31, "IQ1_M" },
    { 32, "BF16" },
    { 33, "Q4_0_4_4" },       /* dropped: runtime repacking of Q4_0 replaced it */
    { 34, "Q4_0_4_8" },       /* dropped */
    { 35, "Q4_0_8_8" },       /* dropped */
    { 36, "TQ1_0" },
    { 37, "TQ2_0" },
    { 38, "MXFP4_MOE" },
    { 39, "NVFP4" },          /* no llama-quantize name: the loader's */
    { 40, "Q1_0" },
    { 41, "Q2_0" },
    { 1024, "GUESSED" },
};

const char *gk_ftype_name(uint32_t ftype) {
    for (size_t i = 0; i < sizeof ftype_table / sizeof ftype_table[0]; i++)
        if (ftype_table[i].id == ftype) return ftype_table[i].name;
    return NULL;
}
