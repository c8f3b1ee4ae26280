/*
 * hfjson.h - the JSON files of a Hugging Face folder (config.json,
 * tokenizer_config.json ...) read with cJSON, and the lookups the converter
 * makes in them the way the reference's Python does (an int is a JSON number
 * without a fraction; a bool is a JSON bool).
 */
#ifndef GK_CONVERT_HFJSON_H
#define GK_CONVERT_HFJSON_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ggufkit.h"

/** gk_hf_json_load() : parses dir/name. @return : GK_OK with *out (cJSON_Delete),
 *  GK_OK with *out NULL when the file does not exist (and !required),
 *  GK_E_NOT_FOUND (required and missing), GK_E_IO, GK_E_CORRUPT (not JSON, with
 *  the byte offset), GK_E_NOMEM; err names the file. */
gk_status gk_hf_json_load(const char *dir, const char *name, bool required, cJSON **out, gk_error *err);

/** gk_hf_text_load() : reads dir/name as Python's text mode does (\r\n and \r
 *  become \n). @return : as gk_hf_json_load, *out malloc'd and NUL-terminated. */
gk_status gk_hf_text_load(const char *dir, const char *name, bool required, char **out, gk_error *err);

/** gk_hf_exists() : @return : true when dir/name is a regular file. */
bool gk_hf_exists(const char *dir, const char *name);

/** gk_hf_is_int() : @return : true when j is a number without fraction that fits
 *  int64 (Python's json gives an int for it). */
bool gk_hf_is_int(const cJSON *j);

#endif
