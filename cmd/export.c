/*
 * export.c - `ggufkit export MODEL.gguf HF_DIR`: a GGUF back to a Hugging Face
 * folder (config.json, safetensors, tokenizer files), the way back from
 * `convert`; lib/export does the work, this parses options and reports.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit export [--dtype auto|f32|f16|bf16] [--max-shard-size SIZE] [--force]\n"
    "                      [--json] MODEL.gguf HF_DIR\n\n"
    "Writes the model in MODEL.gguf as a Hugging Face folder HF_DIR: config.json,\n"
    "model.safetensors (or model-0000K-of-0000N.safetensors and\n"
    "model.safetensors.index.json), and the tokenizer files the GGUF holds enough\n"
    "to write (tokenizer.model for a SentencePiece vocabulary, tokenizer_config.json\n"
    "with the special tokens, add_bos/add_eos and the chat template). It undoes what\n"
    "`ggufkit convert` (and convert_hf_to_gguf.py) did: checkpoint tensor names, the\n"
    "Q/K row permutation, experts merged into 3-D tensors, tied embeddings; llama3\n"
    "rope scaling is found back from the rope_freqs tensor. Tensors stream through\n"
    "one at a time in bounded memory. HF_DIR appears whole or not at all: it is\n"
    "written beside itself as a hidden folder and renamed into place. A shard of a\n"
    "set (PREFIX-0000K-of-0000N.gguf) exports the whole set.\n"
    "  --dtype T             the tensors' dtype: auto (default) keeps each F32, F16\n"
    "                        or BF16 tensor as it is, nothing rounded, and\n"
    "                        dequantizes quantized ones to bf16 (which rounds them:\n"
    "                        f32 holds a dequantized value exactly); f32, f16 or\n"
    "                        bf16 converts every tensor\n"
    "  --max-shard-size SIZE at most SIZE bytes of tensors per safetensors file\n"
    "                        (default 5G, as save_pretrained; K/M/G are 1000s). A\n"
    "                        new file also starts where the GGUF's tensor order is\n"
    "                        not by name, so that convert reads them back in order\n"
    "  --force               replace HF_DIR if it is a non-empty folder (never one\n"
    "                        holding MODEL.gguf)\n"
    "  --json                print a summary as JSON on stdout\n"
    "An existing empty HF_DIR is used. Architectures: %s.\n"
    "A BPE (gpt2) vocabulary gets tokenizer.json when its pre-tokenizer is gpt-2,\n"
    "default, mpt, olmo, deepseek-coder, llama-bpe or qwen2, spelled as that\n"
    "family's own tokenizer.json (tokenizer_config.json always). general.sampling.*\n"
    "keys give generation_config.json, general.* naming and provenance keys (name,\n"
    "license, tags, base models ...) a README.md model card. Not yet: other\n"
    "pre-tokenizers, named chat templates.\n";

/* -h, --help (through the option parser). */
static void print_help(void) { printf(usage, gk_export_supported()); }

static bool parse_dtype(const char *s, int *d) {
    static const struct { const char *name; int d; } names[] = {
        { "auto", GK_EXPORT_AUTO }, { "f32", GK_EXPORT_F32 }, { "float32", GK_EXPORT_F32 },
        { "f16", GK_EXPORT_F16 },   { "float16", GK_EXPORT_F16 }, { "bf16", GK_EXPORT_BF16 },
        { "bfloat16", GK_EXPORT_BF16 },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0) {
            *d = names[i].d;
            return true;
        }
    return false;
}

static int print_json(const char *dir, const gk_export_result *r) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return GK_EXIT_FAIL;
    cJSON_AddStringToObject(o, "output", dir);
    cJSON_AddStringToObject(o, "architecture", r->hf_class);
    cJSON_AddStringToObject(o, "torch_dtype", r->dtype);
    cJSON_AddNumberToObject(o, "safetensors_files", r->n_shards);
    cJSON_AddNumberToObject(o, "tensors", (double)r->n_tensors);
    cJSON_AddNumberToObject(o, "tensor_bytes", (double)r->tensor_bytes);
    cJSON_AddStringToObject(o, "tokenizer", r->tokenizer);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (text == NULL) return GK_EXIT_FAIL;
    printf("%s\n", text);
    free(text);
    return GK_EXIT_OK;
}

int cmd_export(int argc, char **argv) {
    gk_export_opts o = { GK_OPTS_INIT(gk_export_opts) };
    bool json = false;
    const char *pos[2];
    int n_pos = 0;
    enum { OPT_DTYPE = 1, OPT_SHARD, OPT_FORCE, OPT_JSON };
    static const cmd_option options[] = {
        { OPT_DTYPE, "--dtype", NULL, CMD_OPT_VALUE, "T" },
        { OPT_SHARD, "--max-shard-size", NULL, CMD_OPT_VALUE, "SIZE" },
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { OPT_JSON, "--json", NULL, CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "export", options, 0, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *a = p.value;
        if (id == CMD_OPTS_EXIT) return p.rc;
        if (id == OPT_DTYPE) {
            if (!parse_dtype(a, &o.dtype)) return cmd_usage_error("export", "--dtype takes auto, f32, f16 or bf16, not '%s'", a);
        } else if (id == OPT_SHARD) {
            if (!cmd_parse_size(a, &o.max_shard_size) || o.max_shard_size == 0)
                return cmd_usage_error("export", "--max-shard-size needs a positive size (e.g. 500M, 5G)");
        } else if (id == OPT_FORCE) {
            o.force = true;
        } else if (id == OPT_JSON) {
            json = true;
        } else if (n_pos < 2) {
            pos[n_pos++] = a;
        } else {
            return cmd_usage_error("export", "too many arguments");
        }
    }
    if (n_pos != 2) return cmd_usage_error("export", "need MODEL.gguf and HF_DIR");
    cmd_catch_interrupts();
    cmd_progress bar;
    cmd_progress_start(&bar, "export", 0);
    o.progress = cmd_write_progress;
    o.progress_ctx = &bar;
    gk_error err;
    gk_export_result r;
    gk_status s = gk_export(pos[0], pos[1], &o, &r, &err);
    cmd_progress_finish(&bar);
    if (s != GK_OK) return cmd_report(NULL, &err);
    if (json) return print_json(pos[1], &r);
    return GK_EXIT_OK;
}
