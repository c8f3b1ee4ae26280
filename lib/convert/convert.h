/*
 * convert.h - `convert`'s plan: a Hugging Face checkpoint folder turned into
 * the output model (metadata in the reference converter's order, tensor
 * directory) and one pipeline step per tensor reading from a virtual source
 * (source.h), for gk_write_model to write in one streaming pass.
 */
#ifndef GK_CONVERT_CONVERT_H
#define GK_CONVERT_CONVERT_H

#include "ggufkit.h"

typedef struct gk_convert_opts {
    uint32_t out_type;        /* GK_TYPE_F32, F16, BF16 or Q8_0 (the reference's --outtype) */
    bool vocab_only;          /* metadata and vocabulary, no tensors */
    bool ignore_model_card;   /* leave README.md's front matter unread */
} gk_convert_opts;

typedef struct gk_convert gk_convert;

/** gk_convert_plan() : reads dir's config.json, checkpoint and tokenizer and plans
 *  the output. @return : GK_OK with *out (gk_convert_free); GK_E_UNSUPPORTED (an
 *  architecture, dtype or tokenizer not handled: the message lists what is),
 *  GK_E_NOT_FOUND / GK_E_CORRUPT naming the file, tensor or key and offset. */
gk_status gk_convert_plan(const char *dir, const gk_convert_opts *o, gk_convert **out, gk_error *err);

/** gk_convert_model() / gk_convert_steps() : the output model and its steps. */
gk_model *gk_convert_model(gk_convert *c);
const gk_step *gk_convert_steps(const gk_convert *c);


/** gk_convert_free() : frees the plan and closes its inputs (NULL accepted). */
void gk_convert_free(gk_convert *c);

/** gk_convert_supported() : @return : the supported architectures, listed. */
const char *gk_convert_supported(void);

#endif
