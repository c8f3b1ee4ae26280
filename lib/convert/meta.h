/*
 * meta.h - the general.* naming and authorship keys of a converted model, as
 * gguf-py's Metadata.load derives them and set_gguf_meta_model writes them:
 * the model card's fields first, then config.json's _name_or_path, then the
 * folder's name (naming.h), the size label from the parameter count last.
 */
#ifndef GK_CONVERT_META_H
#define GK_CONVERT_META_H

#include <cjson/cJSON.h>

#include "ggufkit.h"

/* The parameter counts of GGUFWriter.get_total_parameter_count. */
typedef struct gk_conv_counts {
    uint64_t total, shared, expert_params, expert_count;
} gk_conv_counts;

/** gk_conv_general() : appends general.name ... general.languages to m. card is
 *  the model card's front matter (modelcard.h) or NULL; dir the folder.
 *  @return : GK_OK; GK_E_UNSUPPORTED naming README.md and the field when a
 *  value the reference writes as a string is not one (it fails there); GK_E_NOMEM. */
gk_status gk_conv_general(gk_model *m, const char *dir, const cJSON *config, const cJSON *card,
                          const gk_conv_counts *counts, gk_error *err);

/** gk_conv_card_field() : for field i of the general.* naming keys (0, 1 ...):
 *  *gguf its GGUF key. @return : the model card key it is read from (its own
 *  name), or NULL past the last field. */
const char *gk_conv_card_field(size_t i, const char **gguf);

/** gk_conv_entry_field() : @return : field i of a base_model or dataset
 *  entry (general.KIND.N.FIELD), or NULL past the last. */
const char *gk_conv_entry_field(size_t i);

#endif
