/*
 * keys.h - the well-known key vocabulary inside the library (meta/keys.c);
 * gk_key_expected_type, its public part, is declared in ggufkit.h.
 */
#ifndef GK_META_KEYS_H
#define GK_META_KEYS_H

#include "ggufkit.h"

/** gk_special_token_key() : @return : the i-th special token id key
 *  ("tokenizer.ggml.bos_token_id", ...; in llama.cpp's order), or NULL past the
 *  last. */
const char *gk_special_token_key(size_t i);

/** gk_special_token_key_named() : the key llama.cpp reads for the special token
 *  called name ("bos", "pad", "sep", "fim_pre", ...; aliases and the older
 *  "prefix", "suffix", "middle" included): tokenizer.ggml.KEY_token_id.
 *  @return : the malloc'ed key, or NULL (unknown name, or out of memory). */
char *gk_special_token_key_named(const char *name);

#endif
