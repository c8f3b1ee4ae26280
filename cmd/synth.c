/*
 * synth.c - `ggufkit synth`: writes a deterministic synthetic llama-shaped model.
 *
 * The model has the metadata and tensor directory a llama.cpp converter would
 * write for a llama model (architecture keys, a small sentencepiece-style
 * vocabulary, a chat template) and pseudo-random weights: the same options and
 * seed always give the same bytes, on every host. Tensor data is generated in
 * bounded chunks straight into an atomic output sink, so memory use does not
 * grow with the model (the tinyllama preset writes ~2.2 GB in F16).
 *
 * Each tensor draws from its own generator seeded from the global seed and the
 * tensor's name; values are an Irwin-Hall sum of four 16-bit uniforms computed in
 * integers and scaled once, so no libm function is involved.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "options.h"

/* Elements generated per chunk: 1 Mi floats (4 MiB of F32). */
#define SYNTH_CHUNK_ELEMS ((size_t)1 << 20)
/* Outputs larger than this show a progress bar (on a terminal). */
#define SYNTH_PROGRESS_MIN ((uint64_t)64 << 20)
#define SYNTH_MAX_LAYERS 1024u
#define SYNTH_MAX_ALIGNMENT ((uint64_t)1 << 30)

/* Shape of a preset model. */
typedef struct synth_preset {
    const char *name;
    uint32_t n_layer, n_embd, n_ff, n_vocab, n_head, n_head_kv, n_ctx;
    uint32_t default_type;
} synth_preset;

static const synth_preset presets[] = {
    { "tiny", 2, 256, 512, 512, 4, 4, 2048, GK_TYPE_F32 },
    { "tinyllama", 22, 2048, 5632, 32000, 32, 4, 2048, GK_TYPE_F16 },
};

/* Parsed command line. */
typedef struct synth_opts {
    const synth_preset *preset;
    uint32_t type;          /* UINT32_MAX: the preset's default */
    uint64_t seed;
    uint32_t n_layer;       /* 0: the preset's */
    uint32_t alignment;     /* 0: leave general.alignment unset (32) */
    bool big_endian;
    bool force;
    const char *out;
} synth_opts;

static void print_help(void) {
    printf("usage: ggufkit synth [options] OUT\n\n"
           "Write a deterministic synthetic llama-shaped GGUF model (metadata, tokenizer\n"
           "vocabulary, chat template and pseudo-random weights) to OUT.\n\n"
           "options:\n"
           "  --preset NAME     tiny (2 layers, n_embd 256, n_ff 512, vocab 512; default)\n"
           "                    tinyllama (22 layers, n_embd 2048, n_ff 5632, vocab 32000, ~2.2 GB in F16)\n"
           "  --type T          F32 or F16 for the weight matrices (norms are always F32);\n"
           "                    default F32 for tiny, F16 for tinyllama\n"
           "  --seed N          generator seed (default 1); same seed, same bytes\n"
           "  --layers N        number of blocks instead of the preset's (1..%u)\n"
           "  --alignment N     write general.alignment = N (a power of two)\n"
           "  --big-endian      write a big-endian file\n"
           "  -f, --force       replace OUT if it exists\n"
           "  -h, --help        show this help\n\n"
           "The file is written to a temporary file next to OUT and renamed into place.\n"
           "Exit status: 0 success, 1 failure (OUT exists, I/O error), 2 usage error.\n",
           SYNTH_MAX_LAYERS);
}

/* ------------------------------------------------------------------------ */
/* Option parsing                                                           */
/* ------------------------------------------------------------------------ */

static const synth_preset *find_preset(const char *name) {
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, name) == 0) return &presets[i];
    return NULL;
}

static bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/* Fills o from the command line. @return : GK_EXIT_OK, or the usage-error exit code
 * (messages printed); *help_shown set when --help was handled. */
static int parse_options(int argc, char **argv, synth_opts *o, bool *help_shown) {
    memset(o, 0, sizeof *o);
    o->preset = &presets[0];
    o->type = UINT32_MAX;
    o->seed = 1;
    *help_shown = false;
    enum { OPT_PRESET = 1, OPT_TYPE, OPT_SEED, OPT_LAYERS, OPT_ALIGNMENT, OPT_BIG_ENDIAN, OPT_FORCE };
    static const cmd_option options[] = {
        { OPT_PRESET, "--preset", NULL, CMD_OPT_VALUE, "NAME" },
        { OPT_TYPE, "--type", NULL, CMD_OPT_VALUE, "T" },
        { OPT_SEED, "--seed", NULL, CMD_OPT_VALUE, "N" },
        { OPT_LAYERS, "--layers", NULL, CMD_OPT_VALUE, "N" },
        { OPT_ALIGNMENT, "--alignment", NULL, CMD_OPT_VALUE, "N" },
        { OPT_BIG_ENDIAN, "--big-endian", NULL, CMD_OPT_FLAG, NULL },
        { OPT_FORCE, "--force", "-f", CMD_OPT_FLAG, NULL },
        { 0 },
    };
    static const cmd_optspec spec = { "synth", options, CMD_OPTS_DASHDASH, print_help };
    cmd_opts p;
    cmd_opts_init(&p, &spec, argc, argv);
    for (int id; (id = cmd_opts_next(&p)) != CMD_OPTS_END;) {
        const char *v = p.value;
        uint64_t n;
        switch (id) {
        case CMD_OPTS_EXIT:
            *help_shown = p.rc == GK_EXIT_OK;   /* the help or the table was printed */
            return p.rc;
        case CMD_OPTS_ARG:
            if (!p.options_done && strcmp(v, "-") == 0)
                return cmd_usage_error("synth", "OUT must be a file path (no output to stdout)");
            if (o->out != NULL) return cmd_usage_error("synth", "more than one output: '%s'", v);
            o->out = v;
            break;
        case OPT_BIG_ENDIAN: o->big_endian = true; break;
        case OPT_FORCE: o->force = true; break;
        case OPT_PRESET:
            o->preset = find_preset(v);
            if (o->preset == NULL)
                return cmd_usage_error("synth", "unknown preset '%s' (tiny, tinyllama)", v);
            break;
        case OPT_TYPE: {
            const gk_type_info *t = gk_type_lookup(v);
            if (t == NULL || (t->id != GK_TYPE_F32 && t->id != GK_TYPE_F16))
                return cmd_usage_error("synth", "--type must be F32 or F16, not '%s'", v);
            o->type = t->id;
            break;
        }
        case OPT_SEED:
            if (!cmd_parse_u64(v, &o->seed))
                return cmd_usage_error("synth", "--seed: not an unsigned integer: '%s'", v);
            break;
        case OPT_LAYERS:
            if (!cmd_parse_u64(v, &n) || n < 1 || n > SYNTH_MAX_LAYERS)
                return cmd_usage_error("synth", "--layers must be 1..%u, not '%s'",
                                       SYNTH_MAX_LAYERS, v);
            o->n_layer = (uint32_t)n;
            break;
        case OPT_ALIGNMENT:
            if (!cmd_parse_u64(v, &n) || !is_power_of_two(n) || n > SYNTH_MAX_ALIGNMENT)
                return cmd_usage_error("synth", "--alignment must be a power of two from 1 to %llu, not '%s'",
                                       (unsigned long long)SYNTH_MAX_ALIGNMENT, v);
            o->alignment = (uint32_t)n;
            break;
        }
    }
    if (o->out == NULL) return cmd_usage_error("synth", "missing output path OUT");
    if (o->type == UINT32_MAX) o->type = o->preset->default_type;
    if (o->n_layer == 0) o->n_layer = o->preset->n_layer;
    return GK_EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* The model: metadata and tensor directory                                 */
/* ------------------------------------------------------------------------ */

static gk_status set_u32(gk_model *m, const char *key, uint32_t v, gk_error *err) {
    return gk_kv_set_u32(m, key, v, err);
}

static gk_status set_f32(gk_model *m, const char *key, float v, gk_error *err) {
    gk_value val = { .type = GK_V_F32, .f = (double)v };
    return gk_kv_set(m, key, &val, err);
}

static gk_status set_array(gk_model *m, const char *key, gk_vtype elem, uint64_t n,
                           const void *data, gk_error *err) {
    gk_value val = { .type = GK_V_ARR };
    val.arr.elem = elem;
    val.arr.n = n;
    val.arr.data = data;
    return gk_kv_set(m, key, &val, err);
}

/* Sets the tokenizer keys: <unk> <s> </s>, the 256 byte tokens, then "▁tN" pieces. */
static gk_status set_vocabulary(gk_model *m, uint32_t n_vocab, gk_error *err) {
    gk_status st = GK_E_NOMEM;
    gk_str *tokens = calloc(n_vocab, sizeof *tokens);
    float *scores = calloc(n_vocab, sizeof *scores);
    int32_t *types = calloc(n_vocab, sizeof *types);
    char *text = malloc((size_t)n_vocab * 16);
    if (tokens == NULL || scores == NULL || types == NULL || text == NULL) {
        gk_error_set(err, GK_E_NOMEM, -1, "out of memory building the vocabulary");
        goto done;
    }
    for (uint32_t i = 0; i < n_vocab; i++) {
        char *t = text + (size_t)i * 16;
        int32_t type = 1;                                       /* normal */
        if (i == 0) strcpy(t, "<unk>"), type = 2;               /* unknown */
        else if (i == 1) strcpy(t, "<s>"), type = 3;            /* control */
        else if (i == 2) strcpy(t, "</s>"), type = 3;
        else if (i < 3 + 256) snprintf(t, 16, "<0x%02X>", i - 3), type = 6; /* byte */
        else snprintf(t, 16, "\xe2\x96\x81t%u", i - 259);
        tokens[i] = (gk_str){ t, strlen(t) };
        scores[i] = (float)-(int32_t)i;   /* 0, -1, -2 ... (no negative zero) */
        types[i] = type;
    }
    st = gk_kv_set_str(m, "tokenizer.ggml.model", "llama", err);
    if (st == GK_OK) st = set_array(m, "tokenizer.ggml.tokens", GK_V_STR, n_vocab, tokens, err);
    if (st == GK_OK) st = set_array(m, "tokenizer.ggml.scores", GK_V_F32, n_vocab, scores, err);
    if (st == GK_OK) st = set_array(m, "tokenizer.ggml.token_type", GK_V_I32, n_vocab, types, err);
done:
    free(tokens);
    free(scores);
    free(types);
    free(text);
    return st;
}

static gk_status set_metadata(gk_model *m, const synth_opts *o, gk_error *err) {
    const synth_preset *p = o->preset;
    char name[64];
    snprintf(name, sizeof name, "synthetic-%s", p->name);
    gk_status st = gk_kv_set_str(m, "general.architecture", "llama", err);
    if (st == GK_OK) st = gk_kv_set_str(m, "general.name", name, err);
    if (st == GK_OK) st = set_u32(m, "general.file_type", o->type == GK_TYPE_F16 ? 1 : 0, err);
    if (st == GK_OK && o->alignment != 0) st = set_u32(m, "general.alignment", o->alignment, err);
    if (st == GK_OK) st = set_u32(m, "llama.context_length", p->n_ctx, err);
    if (st == GK_OK) st = set_u32(m, "llama.embedding_length", p->n_embd, err);
    if (st == GK_OK) st = set_u32(m, "llama.block_count", o->n_layer, err);
    if (st == GK_OK) st = set_u32(m, "llama.feed_forward_length", p->n_ff, err);
    if (st == GK_OK) st = set_u32(m, "llama.rope.dimension_count", p->n_embd / p->n_head, err);
    if (st == GK_OK) st = set_u32(m, "llama.attention.head_count", p->n_head, err);
    if (st == GK_OK) st = set_u32(m, "llama.attention.head_count_kv", p->n_head_kv, err);
    if (st == GK_OK) st = set_f32(m, "llama.attention.layer_norm_rms_epsilon", 1e-5f, err);
    if (st == GK_OK) st = set_f32(m, "llama.rope.freq_base", 10000.0f, err);
    if (st == GK_OK) st = set_vocabulary(m, p->n_vocab, err);
    if (st == GK_OK) st = set_u32(m, "tokenizer.ggml.bos_token_id", 1, err);
    if (st == GK_OK) st = set_u32(m, "tokenizer.ggml.eos_token_id", 2, err);
    if (st == GK_OK)
        st = gk_kv_set_str(m, "tokenizer.chat_template",
                           "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}"
                           "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}",
                           err);
    return st;
}

static gk_status add_tensor(gk_model *m, const char *name, uint32_t type, uint64_t ne0,
                            uint64_t ne1, gk_error *err) {
    uint64_t ne[2] = { ne0, ne1 };
    return gk_tensor_add(m, name, type, ne1 == 0 ? 1 : 2, ne, err);
}

/* Adds the tensors in the order llama.cpp's converter writes a llama model. */
static gk_status add_tensors(gk_model *m, const synth_opts *o, gk_error *err) {
    const synth_preset *p = o->preset;
    const uint32_t w = o->type, f32 = GK_TYPE_F32;
    const uint64_t embd = p->n_embd, ff = p->n_ff, vocab = p->n_vocab;
    const uint64_t embd_kv = embd / p->n_head * p->n_head_kv;
    char name[64];
    gk_status st = add_tensor(m, "token_embd.weight", w, embd, vocab, err);
    for (uint32_t l = 0; l < o->n_layer && st == GK_OK; l++) {
        static const struct { const char *suffix; int rows; } layer[] = {
            /* rows: 0 = 1-D norm, 1 = n_embd, 2 = n_embd_kv, 3 = n_ff; ffn_down is [n_ff, n_embd] */
            { "attn_norm", 0 }, { "attn_q", 1 }, { "attn_k", 2 }, { "attn_v", 2 },
            { "attn_output", 1 }, { "ffn_norm", 0 }, { "ffn_gate", 3 }, { "ffn_down", -1 },
            { "ffn_up", 3 },
        };
        for (size_t j = 0; j < sizeof layer / sizeof layer[0] && st == GK_OK; j++) {
            snprintf(name, sizeof name, "blk.%u.%s.weight", l, layer[j].suffix);
            switch (layer[j].rows) {
            case 0: st = add_tensor(m, name, f32, embd, 0, err); break;
            case 1: st = add_tensor(m, name, w, embd, embd, err); break;
            case 2: st = add_tensor(m, name, w, embd, embd_kv, err); break;
            case 3: st = add_tensor(m, name, w, embd, ff, err); break;
            default: st = add_tensor(m, name, w, ff, embd, err); break;
            }
        }
    }
    if (st == GK_OK) st = add_tensor(m, "output_norm.weight", f32, embd, 0, err);
    if (st == GK_OK) st = add_tensor(m, "output.weight", w, embd, vocab, err);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Deterministic values                                                     */
/* ------------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t fnv1a64(const char *s, uint64_t len) {
    uint64_t h = UINT64_C(0xCBF29CE484222325);
    for (uint64_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * UINT64_C(0x100000001B3);
    return h;
}

/* Per-tensor generator state: independent of tensor order and chunking. */
static uint64_t tensor_state(uint64_t seed, const gk_str *name) {
    uint64_t s = seed ^ fnv1a64(name->ptr, name->len);
    (void)splitmix64(&s);
    return s;
}

/* Approximately normal (mean 0, sd 1): sum of four 16-bit uniforms, centred and
 * scaled by the exact standard deviation sqrt(4 * (65536^2 - 1) / 12). */
static float next_normal(uint64_t *state) {
    uint64_t r = splitmix64(state);
    int64_t sum = (int64_t)(r & 0xFFFF) + (int64_t)((r >> 16) & 0xFFFF) +
                  (int64_t)((r >> 32) & 0xFFFF) + (int64_t)(r >> 48);
    return (float)(sum - 131070) * (1.0f / 37837.23f);
}

/* Fills n values: norms near 1, weights with standard deviation ~0.02. */
static void generate(uint64_t *state, bool is_norm, float *dst, size_t n) {
    if (is_norm) {
        for (size_t i = 0; i < n; i++) dst[i] = 1.0f + 0.02f * next_normal(state);
    } else {
        for (size_t i = 0; i < n; i++) dst[i] = 0.02f * next_normal(state);
    }
}

/* ------------------------------------------------------------------------ */
/* Streaming the file                                                       */
/* ------------------------------------------------------------------------ */

/* What the tensor writer needs besides the model. */
typedef struct synth_stream {
    gk_sink *sink;
    float *vals;               /* SYNTH_CHUNK_ELEMS floats */
    uint16_t *halfs;           /* SYNTH_CHUNK_ELEMS halves */
    uint64_t seed;
    bool big_endian;
    cmd_progress progress;
    uint64_t data_start;
} synth_stream;

/* Writes tensor t's values in chunks. */
static gk_status write_tensor(synth_stream *s, const gk_tensor *t, gk_error *err) {
    const gk_type_info *info = gk_type_get(t->type);
    const size_t esize = t->type == GK_TYPE_F16 ? 2 : 4;
    uint64_t n = t->nbytes / esize;
    uint64_t state = tensor_state(s->seed, &t->name);
    const bool is_norm = t->n_dims == 1;
    if (s->big_endian && (info == NULL || info->byteswap == NULL))
        return gk_error_set(err, GK_E_UNSUPPORTED, -1,
                            "big-endian output needs the %s byte-swap kernel, not available yet",
                            info && info->name ? info->name : "?");
    while (n > 0) {
        if (cmd_interrupted()) return gk_error_set(err, GK_E_INTERRUPTED, -1, "interrupted");
        size_t k = n < SYNTH_CHUNK_ELEMS ? (size_t)n : SYNTH_CHUNK_ELEMS;
        generate(&state, is_norm, s->vals, k);
        void *bytes = s->vals;
        if (t->type == GK_TYPE_F16) {
            for (size_t i = 0; i < k; i++) s->halfs[i] = gk_f16_from_f32(s->vals[i]);
            bytes = s->halfs;
        }
        if (s->big_endian) info->byteswap(bytes, (int64_t)k);
        gk_status st = gk_sink_write(s->sink, bytes, k * esize, err);
        if (st != GK_OK) return st;
        n -= k;
        cmd_progress_update(&s->progress, gk_sink_offset(s->sink));
    }
    return GK_OK;
}

/* Writes the data section: each tensor at its offset, zero padding between
 * tensors and after the last one up to the alignment (as ggml's writer does). */
static gk_status write_data(synth_stream *s, const gk_model *m, gk_error *err) {
    const uint64_t align = gk_model_alignment(m);
    uint64_t pos = 0;
    for (size_t i = 0; i < gk_tensor_count(m); i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        if (t->offset < pos)
            return gk_error_set(err, GK_E_CORRUPT, -1, "tensor %s placed at %llu, before %llu",
                                t->name.ptr, (unsigned long long)t->offset,
                                (unsigned long long)pos);
        gk_status st = gk_sink_write_zeros(s->sink, t->offset - pos, err);
        if (st == GK_OK) st = write_tensor(s, t, err);
        if (st != GK_OK) return st;
        pos = t->offset + t->nbytes;
    }
    uint64_t end = (pos + align - 1) / align * align;
    gk_status st = gk_sink_write_zeros(s->sink, end - pos, err);
    if (st == GK_OK && gk_sink_offset(s->sink) != s->data_start + end)
        st = gk_error_set(err, GK_E_CORRUPT, -1, "wrote %llu bytes, expected %llu",
                          (unsigned long long)gk_sink_offset(s->sink),
                          (unsigned long long)(s->data_start + end));
    return st;
}

/* Builds the model for o and streams it to o->out. */
static gk_status synth_write(const synth_opts *o, gk_error *err) {
    gk_status st;
    uint8_t *header = NULL;
    size_t header_len = 0;
    synth_stream s = { .seed = o->seed, .big_endian = o->big_endian };
    gk_model *m = gk_model_new();
    if (m == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    gk_model_set_big_endian(m, o->big_endian);
    st = set_metadata(m, o, err);
    if (st == GK_OK) st = add_tensors(m, o, err);
    if (st != GK_OK) goto done;

    const uint64_t data_size = gk_model_layout(m);
    st = gk_header_serialize(m, &header, &header_len, err);
    if (st != GK_OK) goto done;
    s.data_start = header_len;
    s.vals = malloc(SYNTH_CHUNK_ELEMS * sizeof *s.vals);
    s.halfs = malloc(SYNTH_CHUNK_ELEMS * sizeof *s.halfs);
    if (s.vals == NULL || s.halfs == NULL) {
        st = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        goto done;
    }
    st = gk_sink_open(o->out, o->force ? GK_SINK_OVERWRITE : GK_SINK_DEFAULT, &s.sink, err);
    if (st != GK_OK) goto done;

    const uint64_t total = header_len + data_size;
    cmd_progress_start(&s.progress, "synth", total);
    if (total < SYNTH_PROGRESS_MIN) s.progress.active = false;
    st = gk_sink_write(s.sink, header, header_len, err);
    if (st == GK_OK) st = write_data(&s, m, err);
    cmd_progress_finish(&s.progress);
    if (st == GK_OK) {
        st = gk_sink_commit(s.sink, err);   /* frees the sink, also on failure */
        s.sink = NULL;
    }
done:
    gk_sink_abort(s.sink);
    free(s.vals);
    free(s.halfs);
    free(header);
    gk_model_free(m);
    return st;
}

/** cmd_synth() : `ggufkit synth [options] OUT` (see print_help). */
int cmd_synth(int argc, char **argv) {
    synth_opts o;
    bool help_shown;
    int rc = parse_options(argc, argv, &o, &help_shown);
    if (rc != GK_EXIT_OK || help_shown) return rc;

    cmd_catch_interrupts();

    gk_error err;
    gk_error_clear(&err);
    gk_status st = synth_write(&o, &err);
    if (st == GK_E_EXISTS) {
        fprintf(stderr, "ggufkit synth: %s exists (use --force to replace it)\n", o.out);
        return GK_EXIT_FAIL;
    }
    if (st != GK_OK) return cmd_report(o.out, &err);
    return GK_EXIT_OK;
}
