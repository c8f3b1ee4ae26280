/*
 * json.h - cJSON items the library and the command both build: numbers written
 * exactly (64-bit integers as their digits, doubles as their shortest text),
 * which cJSON's own numbers (doubles) cannot hold. lib/shared: compiled into
 * both the library (hidden) and the command; includes only the public header.
 */
#ifndef GK_SHARED_JSON_H
#define GK_SHARED_JSON_H

#include <stdint.h>
#include "names.h"

struct cJSON;

/** gk_json_u64() : @return : a raw cJSON number of v's decimal digits (caller
 *  deletes it), or NULL when out of memory. */
struct cJSON *gk_json_u64(uint64_t v);
/** gk_json_i64() : the same for a signed integer. */
struct cJSON *gk_json_i64(int64_t v);
/** gk_json_double() : a raw cJSON number of gk_format_double's text of d (NaN,
 *  Infinity and -Infinity as Python's json writes them), or NULL. */
struct cJSON *gk_json_double(double d);

#endif
