/*
 * modelcard.h - the YAML front matter of a Hugging Face model card (README.md)
 * as the reference's Metadata.load_model_card reads it: the lines between a
 * first line "---" and the next "---", with its two fixes (a list item "- no"
 * stays the string "no"; tabs become two spaces), loaded as PyYAML's
 * safe_load would (YAML 1.1 plain scalars: bools, ints, floats, nulls,
 * timestamps), into cJSON: strings, bools, nulls, objects and arrays as such,
 * every other scalar as a raw cJSON item (never a string: the reference
 * fails on one where it writes a string, and so the converter refuses it).
 */
#ifndef GK_CONVERT_MODELCARD_H
#define GK_CONVERT_MODELCARD_H

#include <cjson/cJSON.h>

#include "ggufkit.h"

/** gk_conv_model_card() : reads dir/README.md. @return : GK_OK with *card an
 *  object (cJSON_Delete), or NULL when there is no README.md, no front matter,
 *  or it is not a mapping; GK_E_CORRUPT for YAML that does not parse (line
 *  named), GK_E_UNSUPPORTED for what is not read (non-scalar keys), GK_E_IO. */
gk_status gk_conv_model_card(const char *dir, cJSON **card, gk_error *err);

/** gk_conv_model_card_text() : the same for README.md's text (Python's text
 *  mode line ends already), path naming it in errors. */
gk_status gk_conv_model_card_text(const char *text, const char *path, cJSON **card, gk_error *err);

#endif
