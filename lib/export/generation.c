/*
 * generation.c - generation_config.json of an export: the sampling defaults
 * a GGUF keeps under general.sampling.*, under the names convert reads them
 * by (penalty_repeat as Hugging Face's repetition_penalty). Written only when
 * the GGUF has any.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "convert/sampling.h"
#include "export/export_internal.h"


gk_status gk_exp_generation(const gk_model *m, gk_exp_folder *f, bool *written, gk_error *err) {
    *written = false;
    cJSON *root = cJSON_CreateObject();
    bool ok = root != NULL;
    size_t n = 0;
    const gk_conv_sampling *k;
    for (size_t i = 0; ok && (k = gk_conv_sampling_at(i)) != NULL; i++) {
        const gk_value *v = gk_kv_get(m, k->key);
        const char *name = k->alt ? k->alt : k->json;   /* Hugging Face's name where it has its own */
        if (v == NULL) continue;
        char num[48];
        switch (v->type) {
        case GK_V_STR: ok = cJSON_AddStringToObject(root, name, v->s.ptr) != NULL; break;
        case GK_V_U8: case GK_V_U16: case GK_V_U32: case GK_V_U64:
            ok = cJSON_AddNumberToObject(root, name, (double)v->u) != NULL;
            break;
        case GK_V_I8: case GK_V_I16: case GK_V_I32: case GK_V_I64:
            ok = cJSON_AddNumberToObject(root, name, (double)v->i) != NULL;
            break;
        case GK_V_F32: case GK_V_F64:
            gk_exp_format_float(v->f, num, sizeof num);
            ok = cJSON_AddRawToObject(root, name, num) != NULL;
            break;
        default: continue;   /* a type no reader expects: left out */
        }
        n++;
    }
    char *text = ok && n > 0 ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!ok || (n > 0 && text == NULL)) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (n == 0) return GK_OK;
    gk_status s = gk_exp_folder_write_text(f, "generation_config.json", text, err);
    free(text);
    *written = s == GK_OK;
    return s;
}
