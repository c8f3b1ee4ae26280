/*
 * json.c - exact JSON numbers as raw cJSON items (see json.h). Part of lib/shared:
 * compiled into the library and into the command.
 */
#include <inttypes.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "numtext.h"
#include "json.h"

cJSON *gk_json_u64(uint64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}

cJSON *gk_json_i64(int64_t v) {
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cJSON_CreateRaw(buf);
}

cJSON *gk_json_double(double d) {
    char buf[40];
    gk_format_double(buf, sizeof buf, d);
    return cJSON_CreateRaw(buf);
}
