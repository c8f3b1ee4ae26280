/*
 * fuzz_tokenizer.c - libFuzzer harness for tokenizer.json BPE vocabularies
 * (lib/convert/bpe.c: tokens, added tokens, merges; lib/convert/bpe_pre.c:
 * the pre-tokenizer steps, their regexes, BPE and the post-processor run on
 * the check text).
 *
 * The input is written as tokenizer.json in a scratch folder, once with the
 * digest run, once with --vocab-pre's name, and once read as a
 * SentencePiece-style vocabulary (gk_conv_vocab_llama_hf). A refusal must carry its code
 * and a message, and name the folder's tokenizer.json; an accepted vocabulary
 * must have written tokenizer.ggml.model and tokenizer.ggml.pre.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/bpe.h"

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/gk-fuzz-tok-XXXXXX");
        if (mkdtemp(dir) == NULL) abort();
    }
    char path[128];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
    for (int pass = 0; pass < 3; pass++) {
        gk_model *m = gk_model_new();
        cJSON *config = cJSON_CreateObject();
        gk_error err = { 0 };
        gk_status s = pass == 2 ? gk_conv_vocab_llama_hf(m, dir, config, -1, &err)
                                : gk_conv_vocab_bpe(m, dir, config, pass ? 600 : -1, pass ? "gpt-2" : NULL, &err);
        if (s != GK_OK && s != GK_E_NOMEM &&
            (err.code != s || err.message[0] == '\0' || strstr(err.file, "tokenizer.json") == NULL))
            abort();
        if (s == GK_OK && (gk_kv_find(m, "tokenizer.ggml.model") < 0 || gk_kv_find(m, "tokenizer.ggml.pre") < 0))
            abort();
        cJSON_Delete(config);
        gk_model_free(m);
    }
    unlink(path);
    return 0;
}
