/*
 * bpe.h - a Hugging Face tokenizer.json BPE vocabulary as the reference
 * converter writes it (TextModel._set_vocab_gpt2: get_vocab_base, the
 * pre-tokenizer's name, gguf.SpecialVocab with its merges).
 */
#ifndef GK_CONVERT_BPE_H
#define GK_CONVERT_BPE_H

#include <cjson/cJSON.h>

#include "ggufkit.h"

/** gk_conv_vocab_bpe() : appends the tokenizer.* pairs of dir's tokenizer.json
 *  to m. vocab_size is config.json's, or -1 (the tokenizer's own count then).
 *  vocab_pre, when not NULL, is written as tokenizer.ggml.pre instead of the
 *  name the check-text digest gives.
 *  @return : GK_OK; GK_E_NOT_FOUND (no tokenizer.json); GK_E_UNSUPPORTED (not
 *  a BPE model, or a pre-tokenizer that cannot be named: the message names
 *  --vocab-pre); GK_E_CORRUPT naming the file and key (bad ids or merges, a
 *  token id not below vocab_size). */
gk_status gk_conv_vocab_bpe(gk_model *m, const char *dir, const cJSON *config, int64_t vocab_size,
                            const char *vocab_pre, gk_error *err);

#endif
