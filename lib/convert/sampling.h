/*
 * sampling.h - the sampling defaults of generation_config.json and the
 * general.sampling.* keys they become (Metadata.load): convert reads them,
 * export writes them back.
 */
#ifndef GK_CONVERT_SAMPLING_H
#define GK_CONVERT_SAMPLING_H

#include <stddef.h>

typedef struct gk_conv_sampling {
    const char *json;          /* generation_config.json's name */
    const char *alt;           /* the other name read when json is absent (Hugging Face's), or NULL */
    const char *key;           /* the GGUF key */
    char kind;                 /* 's' string, 'i' integer (I32), 'f' number (F32) */
} gk_conv_sampling;

/** gk_conv_sampling_at() : @return : entry i of the table, in the order the
 *  keys are written, or NULL past the last. */
const gk_conv_sampling *gk_conv_sampling_at(size_t i);

#endif
