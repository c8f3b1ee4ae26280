/*
 * fuzz_modelcard.c - libFuzzer harness for model cards (lib/convert/modelcard.c)
 * and the general.* keys made from them (lib/convert/meta.c).
 *
 * The input is a README.md's text. An accepted card must be a JSON object that
 * prints; its keys must then either be written into a model or refused with a
 * code, a message and README.md named. A refusal of the YAML must explain
 * itself likewise.
 */
#include <stdlib.h>
#include <string.h>

#include "convert/meta.h"
#include "convert/modelcard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (text == NULL) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cJSON *card = NULL;
    gk_error err = { 0 };
    gk_status s = gk_conv_model_card_text(text, "dir/README.md", &card, &err);
    free(text);
    if (s != GK_OK) {
        if (card != NULL || err.code != s || err.message[0] == '\0' || (s != GK_E_NOMEM && strstr(err.file, "README.md") == NULL))
            abort();
        return 0;
    }
    if (card == NULL) return 0;
    if (!cJSON_IsObject(card)) abort();
    char *printed = cJSON_PrintUnformatted(card);
    if (printed == NULL) abort();
    free(printed);
    gk_model *m = gk_model_new();
    cJSON *config = cJSON_CreateObject();
    gk_conv_counts counts = { 123456, 123456, 0, 0 };
    s = gk_conv_general(m, "dir/Some-Model-7B-v1", config, card, &counts, &err);
    if (s == GK_OK && gk_kv_find(m, "general.name") < 0) abort();
    if (s != GK_OK && s != GK_E_NOMEM && (err.message[0] == '\0' || strstr(err.file, "README.md") == NULL)) abort();
    cJSON_Delete(config);
    gk_model_free(m);
    cJSON_Delete(card);
    return 0;
}
