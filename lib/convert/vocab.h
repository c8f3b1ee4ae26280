/*
 * vocab.h - a SentencePiece vocabulary as the reference converter writes it
 * (TextModel._set_vocab_sentencepiece): the pieces of tokenizer.model padded or
 * cut to the model's vocab_size, added_tokens.json and tokenizer_config.json's
 * added_tokens_decoder laid over them, then gguf.SpecialVocab: special token
 * ids from config.json (and tokenizer.json's added tokens), add_bos/add_eos,
 * the chat template.
 */
#ifndef GK_CONVERT_VOCAB_H
#define GK_CONVERT_VOCAB_H

#include <cjson/cJSON.h>

#include "ggufkit.h"

/** gk_conv_vocab_spm() : appends the tokenizer.* pairs of dir's SentencePiece
 *  vocabulary to m. vocab_size is config.json's (or -1 when it has none: the
 *  tokenizer's own size then). A tokenizer with more pieces than vocab_size is
 *  refused (the reference drops the rest with a warning: a broken model).
 *  @return : GK_OK; GK_E_NOT_FOUND (no tokenizer.model); GK_E_CORRUPT /
 *  GK_E_UNSUPPORTED naming the file and what is wrong in it. */
gk_status gk_conv_vocab_spm(gk_model *m, const char *dir, const cJSON *config, int64_t vocab_size,
                            gk_error *err);

/** gk_conv_vocab_codellama() : LlamaModel.set_vocab's second SpecialVocab for
 *  a vocab_size of 32016 (CodeLlama): eot from tokenizer_config.json,
 *  tokenizer.json or config.json, else 32010; add_* and the chat template
 *  written again (in place) as that SpecialVocab finds them. @return : as above. */
gk_status gk_conv_vocab_codellama(gk_model *m, const char *dir, const cJSON *config, gk_error *err);

/** gk_conv_vocab_special() : gguf.SpecialVocab(dir, load_merges=True) without
 *  a vocabulary size, as the BPE route makes it: merges (a GK_V_STR array, or
 *  NULL), special token ids, add_* flags, chat template, normalizer flags,
 *  appended to m in the reference's order. tc: tokenizer_config.json or NULL;
 *  tokenizer: dir's tokenizer.json already parsed (not read again).
 *  @return : as above. */
gk_status gk_conv_vocab_special(gk_model *m, const char *dir, const cJSON *config, const cJSON *tc,
                                const cJSON *tokenizer, const gk_value *merges, gk_error *err);

/** gk_conv_vocab_llama_put() : writes n tokens, scores and types (borrowed,
 *  not freed) as a "llama" vocabulary with pre "default", then
 *  gguf.SpecialVocab(dir, n_vocab=n) over tc and the parsed tokenizer.json.
 *  @return : as above. */
gk_status gk_conv_vocab_llama_put(gk_model *m, const char *dir, const cJSON *config, const cJSON *tc,
                                  const cJSON *tokenizer, char **tokens, float *scores, int32_t *types, size_t n,
                                  gk_error *err);

/** gk_conv_looks_special() : @return : true when token t looks like a control
 *  token (the reference's does_token_look_special). */
bool gk_conv_looks_special(const char *t);

/** gk_conv_unescape_spaces() : @return : a malloc'd copy of s with every U+2581
 *  turned into a space, or NULL when out of memory. */
char *gk_conv_unescape_spaces(const char *s);

/* The special token kinds convert reads (bos, eos, unk, sep, pad, cls, mask,
 * eot, eom, in that order), GK_CONV_N_SPECIAL of them. */
enum { GK_CONV_N_SPECIAL = 9 };

/** gk_conv_special_type() : @return : kind i's name ("bos" ...); config.json
 *  calls its id "<name>_token_id". */
const char *gk_conv_special_type(int i);

/** gk_conv_special_key() : @return : the GGUF key convert writes kind i's id
 *  under, or NULL for a kind it does not write (cls). */
const char *gk_conv_special_key(int i);

#endif
