/*
 * spm.h - a SentencePiece model file (tokenizer.model): its pieces with their
 * scores and kinds, decoded by protobuf-c from the schema in spm_model.proto.
 * The kinds use the numbers GGUF's tokenizer.ggml.token_type uses (1 normal,
 * 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
 */
#ifndef GK_CONVERT_SPM_H
#define GK_CONVERT_SPM_H

#include <stddef.h>
#include <stdint.h>

#include "ggufkit.h"

/* The largest tokenizer.model read (a real one is a few MB). */
#define GK_SPM_MAX_BYTES (256u << 20)

typedef struct gk_spm gk_spm;

/** gk_spm_load() : reads and decodes the SentencePiece model at path.
 *  @return : GK_OK, GK_E_IO, GK_E_NOMEM, GK_E_CORRUPT (not a SentencePiece model,
 *            or a piece without text or of an unknown kind, named by index). */
gk_status gk_spm_load(const char *path, gk_spm **out, gk_error *err);

/** gk_spm_count() : @return : the number of pieces (the model's vocabulary size). */
size_t gk_spm_count(const gk_spm *m);

/** gk_spm_piece() : @return : piece i's text (UTF-8, NUL-terminated), or NULL. */
const char *gk_spm_piece(const gk_spm *m, size_t i);

/** gk_spm_score() : @return : piece i's score (0 when the file gives none). */
float gk_spm_score(const gk_spm *m, size_t i);

/** gk_spm_kind() : @return : piece i's kind (1..6, see above). */
int32_t gk_spm_kind(const gk_spm *m, size_t i);

/** gk_spm_is_bpe() : @return : true when the model was trained as BPE (else unigram
 *  or another algorithm). */
bool gk_spm_is_bpe(const gk_spm *m);

/** gk_spm_free() : releases m (NULL accepted). */
void gk_spm_free(gk_spm *m);

#endif
