/*
 * rope.c - the llama3 rope factors (rope.h). A Python number divided by a
 * tensor is the tensor's reciprocal times the number in torch, hence the
 * reciprocals below.
 */
#include <math.h>

#include "convert/rope.h"

void gk_conv_llama3_factors(const gk_conv_llama3 *r, float *f) {
    const float low_wavelen = (float)(r->old_ctx / r->low), high_wavelen = (float)(r->old_ctx / r->high);
    uint64_t n = (uint64_t)(r->dim + 1) / 2;
    for (uint64_t i = 0; i < n; i++) {
        float e = (float)(2 * i) / (float)r->dim;
        float freq = (1.0f / powf((float)r->base, e)) * 1.0f;
        float wavelen = (1.0f / freq) * (float)(2 * M_PI);
        if (wavelen < high_wavelen) {
            f[i] = 1.0f;
        } else if (wavelen > low_wavelen) {
            f[i] = (float)r->factor;
        } else {
            float smooth = ((1.0f / wavelen) * (float)r->old_ctx - (float)r->low) / (float)(r->high - r->low);
            float d = (1.0f - smooth) / (float)r->factor + smooth;
            f[i] = (1.0f / d) * 1.0f;
        }
    }
}
