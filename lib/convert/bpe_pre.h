/*
 * bpe_pre.h - naming a Hugging Face BPE tokenizer's pre-tokenizer the way the
 * reference converter does: encode its fixed check text with the tokenizer
 * (added tokens, normalizer, pre-tokenizer steps, BPE by merge rank,
 * post-processor), take the SHA-256 of the id list printed as a Python list,
 * and look the digest up in the reference's table (bpe_pre_table.c).
 */
#ifndef GK_CONVERT_BPE_PRE_H
#define GK_CONVERT_BPE_PRE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ggufkit.h"

/* What the encoder needs of a tokenizer (bpe.c fills it). */
typedef struct gk_bpe_model {
    const cJSON *tokenizer;        /* tokenizer.json */
    const cJSON *tconfig;          /* tokenizer_config.json or NULL */
    /* token text -> id (the model's vocab, then the added tokens) */
    int64_t (*lookup)(const struct gk_bpe_model *m, const char *text, size_t len);
    /* the rank of merge "a b", or -1 */
    int64_t (*rank)(const struct gk_bpe_model *m, const char *a, size_t na, const char *b, size_t nb);
    void *ctx;
} gk_bpe_model;

/** gk_bpe_pre_digest() : encodes the check text with m and writes the
 *  lowercase hex SHA-256 of its id list (as Python prints a list) to hex[65].
 *  @return : GK_OK; GK_E_UNSUPPORTED naming the normalizer, pre-tokenizer or
 *  post-processor step that is not implemented (err names the JSON key);
 *  GK_E_CORRUPT (a regex that does not compile), GK_E_NOMEM. */
gk_status gk_bpe_pre_digest(const gk_bpe_model *m, char hex[65], gk_error *err);

/** gk_bpe_encode() : the ids m gives for the n bytes of text, as the
 *  tokenizers library's encode with its special tokens: *out malloc'd (free).
 *  @return : as gk_bpe_pre_digest. */
gk_status gk_bpe_encode(const gk_bpe_model *m, const char *text, size_t n, int64_t **out, size_t *n_out,
                        gk_error *err);

/** gk_bpe_pre_lookup() : @return : the reference's name for digest_hex (the
 *  last one when it lists the digest twice), or NULL. */
const char *gk_bpe_pre_lookup(const char *digest_hex);

#endif
