/*
 * shard_report.c - the shard-set report of `info` and `dump`: when the file
 * listed is a shard of a split model, which shard it is and whether its set
 * (opened with gk_split_set_open) is complete, as text or as JSON.
 */
#include <inttypes.h>

#include <cjson/cJSON.h>

#include "cmd.h"

void cmd_split_info_text(FILE *out, const char *path, const gk_model *m) {
    if (!gk_model_is_shard(m)) return;
    uint64_t no = 0, count = 0;
    gk_kv_get_uint(m, GK_SPLIT_KEY_NO, &no);
    gk_kv_get_uint(m, GK_SPLIT_KEY_COUNT, &count);
    fprintf(out, "\nsplit set:     shard %" PRIu64 " of %" PRIu64 "\n", no + 1, count);
    gk_split_set *set;
    gk_error err;
    if (gk_split_set_open(path, GK_OPEN_DEFAULT, &set, &err) != GK_OK) {
        char text[GK_ERROR_FILE_MAX + GK_MESSAGE_MAX];
        fprintf(out, "  set:         INCOMPLETE OR INCONSISTENT: %s\n", cmd_error_text(&err, text, sizeof text));
        return;
    }
    fprintf(out, "  prefix:      %s\n", gk_split_set_prefix(set));
    fprintf(out, "  set:         complete, %zu shards, %" PRIu64 " tensors, %" PRIu64 " tensor bytes\n",
            gk_split_set_count(set), gk_split_set_tensor_count(set), gk_split_set_tensor_bytes(set));
    for (size_t k = 0; k < gk_split_set_count(set); k++) {
        gk_file *f = gk_split_set_file(set, k);
        fprintf(out, "  %5zu  %6zu tensors  %14" PRIu64 " bytes  %s\n", k + 1, gk_tensor_count(gk_file_model(f)),
                gk_file_size(f), gk_file_path(f));
    }
    gk_split_set_close(set);
}

struct cJSON *cmd_split_info_json(const char *path, const gk_model *m) {
    if (!gk_model_is_shard(m)) return cJSON_CreateNull();
    uint64_t no = 0, count = 0;
    gk_kv_get_uint(m, GK_SPLIT_KEY_NO, &no);
    gk_kv_get_uint(m, GK_SPLIT_KEY_COUNT, &count);
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return NULL;
    cJSON_AddNumberToObject(o, "shard", (double)(no + 1));
    cJSON_AddNumberToObject(o, "count", (double)count);
    gk_split_set *set;
    gk_error err;
    if (gk_split_set_open(path, GK_OPEN_DEFAULT, &set, &err) != GK_OK) {
        cJSON_AddBoolToObject(o, "complete", false);
        char text[GK_ERROR_FILE_MAX + GK_MESSAGE_MAX];
        cJSON_AddStringToObject(o, "error", cmd_error_text(&err, text, sizeof text));
        return o;
    }
    cJSON_AddBoolToObject(o, "complete", true);
    cJSON_AddStringToObject(o, "prefix", gk_split_set_prefix(set));
    cJSON_AddNumberToObject(o, "tensors", (double)gk_split_set_tensor_count(set));
    cJSON_AddNumberToObject(o, "tensor_bytes", (double)gk_split_set_tensor_bytes(set));
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (size_t k = 0; files && k < gk_split_set_count(set); k++)
        cJSON_AddItemToArray(files, cJSON_CreateString(gk_file_path(gk_split_set_file(set, k))));
    gk_split_set_close(set);
    return o;
}
