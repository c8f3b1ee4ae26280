/*
 * rope.h - the llama3 rope scaling factors (the rope_freqs tensor) the
 * reference computes from config.json, in float32 as torch does; convert
 * writes them and export finds the parameters that give them back.
 */
#ifndef GK_CONVERT_ROPE_H
#define GK_CONVERT_ROPE_H

#include <stdint.h>

/* config.json's rope_scaling of type llama3 (with rope_theta and the head size). */
typedef struct gk_conv_llama3 {
    double base, factor, low, high, old_ctx;
    int64_t dim;
} gk_conv_llama3;

/** gk_conv_llama3_factors() : writes the (dim + 1) / 2 factors of r into f. */
void gk_conv_llama3_factors(const gk_conv_llama3 *r, float *f);

#endif
