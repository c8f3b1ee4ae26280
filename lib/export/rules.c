/*
 * rules.c - the architectures export writes back, one table entry each: the
 * Hugging Face class and model_type of a GGUF architecture (dense and with
 * experts) and the config.json keys that differ between them. Tensor names,
 * the Q/K permutation and the expert layout are convert's rules for that
 * class (convert/arch.h), inverted, so the two directions cannot disagree.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "export/export_internal.h"

static const gk_exp_arch archs[] = {
    { "llama", "LlamaForCausalLM", "llama", "MixtralForCausalLM", "mixtral", "num_local_experts", false },
    { "qwen2", "Qwen2ForCausalLM", "qwen2", NULL, NULL, NULL, false },
    { "qwen3", "Qwen3ForCausalLM", "qwen3", NULL, NULL, NULL, false },
    /* written as soon as convert knows Qwen3MoeForCausalLM */
    { "qwen3moe", NULL, NULL, "Qwen3MoeForCausalLM", "qwen3_moe", "num_experts", false },
};

const gk_exp_arch *gk_exp_arch_find(const char *gguf_arch, bool moe, const gk_conv_arch **conv) {
    *conv = NULL;
    for (size_t i = 0; gguf_arch && i < sizeof archs / sizeof archs[0]; i++) {
        if (strcmp(archs[i].gguf_arch, gguf_arch) != 0) continue;
        const char *cls = moe ? archs[i].moe_class : archs[i].hf_class;
        *conv = gk_conv_arch_find(cls);
        return *conv ? &archs[i] : NULL;
    }
    return NULL;
}

void gk_exp_arch_list(char *buf, size_t size) {
    size_t at = 0;
    if (size) buf[0] = '\0';
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        const char *cls[2] = { archs[i].hf_class, archs[i].moe_class };
        for (int k = 0; k < 2; k++) {
            if (cls[k] == NULL || gk_conv_arch_find(cls[k]) == NULL || at >= size) continue;
            at += (size_t)snprintf(buf + at, size - at, "%s%s%s (%s)", at ? ", " : "", archs[i].gguf_arch,
                                  k ? " with experts" : "", cls[k]);
        }
    }
}

static char supported[512];
static pthread_once_t supported_once = PTHREAD_ONCE_INIT;
static void supported_init(void) { gk_exp_arch_list(supported, sizeof supported); }

const char *gk_export_supported(void) {
    pthread_once(&supported_once, supported_init);
    return supported;
}
