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

/** gk_conv_is_llama_hf() : @return : true when tokenizer.json tok is the
 *  SentencePiece-style kind gk_conv_vocab_llama_hf() takes (model.type BPE,
 *  model.byte_fallback true, decoder.type Sequence); a Llama 3 one is not. */
bool gk_conv_is_llama_hf(const cJSON *tok);

/** gk_conv_vocab_llama_hf() : gguf.LlamaHfVocab: dir's tokenizer.json base
 *  vocabulary in id order (score -1000; type BYTE for <0xNN>, CONTROL for a
 *  special id, else NORMAL), then the added tokens with an id at or past it
 *  (CONTROL when special, else USER_DEFINED), as tokenizer model "llama", pre
 *  "default", then gguf.SpecialVocab. The transformers semantics are
 *  approximated from the JSON files (see bpe.c). vocab_size: config.json's or -1.
 *  @return : GK_OK; GK_E_CORRUPT naming the file (more tokens than vocab_size,
 *  an id of the base vocabulary no token has, bad ids); GK_E_NOMEM. */
gk_status gk_conv_vocab_llama_hf(gk_model *m, const char *dir, const cJSON *config, int64_t vocab_size,
                                 gk_error *err);

#endif
