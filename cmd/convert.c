/*
 * convert.c - `ggufkit convert HF_DIR OUT TYPE`: a Hugging Face checkpoint
 * (safetensors, SentencePiece tokenizer) to GGUF, byte for byte what
 * llama.cpp's convert_hf_to_gguf.py --outtype TYPE writes, in one streaming
 * pass (lib/convert plans it, the pipeline writes it).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd.h"
#include "options.h"

static const char *const usage =
    "usage: ggufkit convert [--vocab-only] [--vocab-pre NAME] [--threads N] [--ignore-model-card] [--force]\n"
    "                       HF_DIR OUT TYPE\n\n"
    "Converts the Hugging Face checkpoint in HF_DIR (config.json, model*.safetensors,\n"
    "tokenizer.model or tokenizer.json) to the GGUF file OUT, as llama.cpp's\n"
    "convert_hf_to_gguf.py --outtype TYPE writes it, byte for byte. TYPE: f32, f16, bf16 or q8_0 (as the\n"
    "reference: norms, 1-D tensors and expert routers stay F32; Q8_0 rows that are\n"
    "not whole blocks fall back to F16). The tensors stream through in bounded\n"
    "memory; OUT appears only when complete.\n"
    "  --vocab-only          write the metadata and vocabulary only, no tensors\n"
    "  --vocab-pre NAME      tokenizer.ggml.pre for a tokenizer.json BPE vocabulary (default: identified\n"
    "                        from the ids it gives for the reference's check text)\n"
    "  -t, --threads N       converting threads (default: all cores)\n"
    "  --ignore-model-card   leave README.md's front matter (license, tags, base\n"
    "                        models ...) out; the reference reads it\n"
    "  --force               replace OUT if it exists\n"
    "Any other TYPE llama-quantize knows (Q4_K_M, Q6_K, Q4_0, IQ4_XS ... as in\n"
    "`ggufkit quantize --help`) converts to F32 and quantizes the tensors on their\n"
    "way out, as `llama-quantize` of the f32 output would, in the same single pass.\n"
    "Architectures: %s.\n"
    "Tokenizers: tokenizer.model (SentencePiece) or tokenizer.json (BPE).\n";

/* -h, --help (through the option parser). */
static void print_help(void) { printf(usage, gk_convert_supported()); }

static bool parse_type(const char *s, uint32_t *t) {
    static const struct { const char *name; uint32_t type; } types[] = {
        { "f32", GK_TYPE_F32 }, { "f16", GK_TYPE_F16 }, { "bf16", GK_TYPE_BF16 }, { "q8_0", GK_TYPE_Q8_0 },
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcasecmp(s, types[i].name) == 0) {
            *t = types[i].type;
            return true;
        }
    return false;
}

int cmd_convert(int argc, char **argv) {
    gk_convert_opts o = { GK_OPTS_INIT(gk_convert_opts) };
    bool force = false;
    uint64_t threads = 0;
    const char *pos[3];
    int n_pos = 0;
    enum { OPT_VOCAB_ONLY = 1, OPT_VOCAB_PRE, OPT_IGNORE_CARD, OPT_FORCE, OPT_THREADS };
    static const cmd_option options[] = {
        { OPT_VOCAB_ONLY, "--vocab-only", NULL, CMD_OPT_FLAG, NULL },
        { OPT_VOCAB_PRE, "--vocab-pre", NULL, CMD_OPT_VALUE, "NAME" },
        { OPT_IGNORE_CARD, "--ignore-model-card", NULL, CMD_OPT_FLAG, NULL },
        { OPT_FORCE, "--force", NULL, CMD_OPT_FLAG, NULL },
        { OPT_THREADS, "--threads", "-t", CMD_OPT_VALUE, "N" },
        { 0 },
    };
    static const cmd_optspec spec = { "convert", options, 0, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *a = p.value;
        if (id == CMD_OPTS_EXIT) return p.rc;
        if (id == OPT_VOCAB_ONLY) {
            o.vocab_only = true;
        } else if (id == OPT_VOCAB_PRE) {
            if (a[0] == '\0') return cmd_usage_error("convert", "--vocab-pre needs a name");
            o.vocab_pre = a;
        } else if (id == OPT_IGNORE_CARD) {
            o.ignore_model_card = true;
        } else if (id == OPT_FORCE) {
            force = true;
        } else if (id == OPT_THREADS) {
            if (!cmd_parse_u64(a, &threads) || threads == 0 || threads > 64)
                return cmd_usage_error("convert", "--threads needs a number from 1 to 64");
        } else if (n_pos < 3) {
            pos[n_pos++] = a;
        } else {
            return cmd_usage_error("convert", "too many arguments");
        }
    }
    if (n_pos != 3) return cmd_usage_error("convert", "need HF_DIR, OUT and TYPE");
    const gk_quant_target *target = NULL;
    if (!parse_type(pos[2], &o.out_type)) {
        target = gk_quant_target_lookup(pos[2]);
        if (target == NULL)
            return cmd_usage_error("convert", "TYPE must be f32, f16, bf16, q8_0 or a llama-quantize type, not '%s'",
                                   pos[2]);
        if (o.vocab_only) return cmd_usage_error("convert", "--vocab-only takes f32, f16, bf16 or q8_0 (there are no tensors to quantize)");
        o.out_type = GK_TYPE_F32;   /* the lossless conversion, quantized on the way out */
    }
    gk_error err;
    gk_convert *c;
    if (gk_convert_plan(pos[0], &o, &c, &err) != GK_OK) return cmd_report(pos[0], &err);
    /* every file the plan read is a recorded input: OUT may be none of them */
    if (gk_inputs_check_output(pos[1], &err) != GK_OK) {
        gk_convert_free(c);
        return cmd_report(NULL, &err);   /* the message names OUT and the input */
    }
    cmd_catch_interrupts();
    cmd_progress bar;
    cmd_progress_start(&bar, "convert", 0);
    gk_write_opts wo = { GK_OPTS_INIT(gk_write_opts), .sink_flags = force ? GK_SINK_OVERWRITE : 0, .threads = (int)threads,
                         .progress = cmd_write_progress, .progress_ctx = &bar, .clone = GK_CLONE_NEVER };
    gk_status st;
    if (target == NULL) {
        st = gk_write_model(pos[1], gk_convert_model(c), gk_convert_steps(c), &wo, &err);
    } else {
        /* llama-quantize's plan over the F32 conversion: its steps read the
         * converted tensors straight from the checkpoint. */
        gk_quant_opts qo = { GK_OPTS_INIT(gk_quant_opts), .target = target, .output_type = -1, .token_embd_type = -1 };
        gk_quant_plan plan;
        st = gk_quant_plan_build(gk_convert_model(c), &qo, &plan, &err);
        if (st == GK_OK) {
            const gk_step *cs = gk_convert_steps(c);
            gk_step *steps = calloc(plan.n_entries + 1, sizeof *steps);
            if (steps == NULL) {
                st = gk_error_set(&err, GK_E_NOMEM, -1, "out of memory");
            } else {
                for (size_t i = 0; i < plan.n_entries; i++) steps[i] = cs[plan.entries[i].src_tensor];
                wo.pad_end = true;
                st = gk_write_model(pos[1], plan.out, steps, &wo, &err);
                free(steps);
            }
            gk_quant_plan_free(&plan);
        }
    }
    cmd_progress_finish(&bar);
    gk_convert_free(c);
    if (st != GK_OK) return cmd_report(pos[1], &err);
    return GK_EXIT_OK;
}
