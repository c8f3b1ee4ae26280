/*
 * sampling.c - the table of sampling keys (sampling.h).
 */
#include "convert/sampling.h"

static const gk_conv_sampling table[] = {
    { "sequence", NULL, "general.sampling.sequence", 's' },
    { "top_k", NULL, "general.sampling.top_k", 'i' },
    { "top_p", NULL, "general.sampling.top_p", 'f' },
    { "min_p", NULL, "general.sampling.min_p", 'f' },
    { "xtc_probability", NULL, "general.sampling.xtc_probability", 'f' },
    { "xtc_threshold", NULL, "general.sampling.xtc_threshold", 'f' },
    { "temperature", NULL, "general.sampling.temp", 'f' },
    { "penalty_last_n", NULL, "general.sampling.penalty_last_n", 'i' },
    { "penalty_repeat", "repetition_penalty", "general.sampling.penalty_repeat", 'f' },
    { "mirostat", NULL, "general.sampling.mirostat", 'i' },
    { "mirostat_tau", NULL, "general.sampling.mirostat_tau", 'f' },
    { "mirostat_eta", NULL, "general.sampling.mirostat_eta", 'f' },
};

const gk_conv_sampling *gk_conv_sampling_at(size_t i) {
    return i < sizeof table / sizeof table[0] ? &table[i] : NULL;
}
