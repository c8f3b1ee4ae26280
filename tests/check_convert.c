/*
 * check_safetensors.c - the safetensors reader and the checkpoint set
 * (lib/convert/): well-formed files read back, and one broken file per kind of
 * lie a header can tell (each refused with the file, the tensor and the byte
 * offset), and the checkpoint's own refusals (missing shard, a tensor in two
 * parts, index and parts disagreeing, a bad index); SentencePiece models read
 * as the reference converter reads them (golden/convert's tokenizers against the
 * token arrays it wrote); the tokenizer.json encoder's steps (splits by each
 * behavior, digits, added tokens, BPE by rank, unknowns, post-processors).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check_util.h"
#include "convert/arch.h"
#include "convert/bpe_pre.h"
#include "convert/checkpoint.h"
#include "convert/naming.h"
#include "convert/source.h"
#include "convert/safetensors.h"
#include "convert/spm.h"
#include "format/file.h"

/* Writes a safetensors file: the JSON header (padded with spaces to a multiple
 * of 8, as the reference writer does, when pad) and data_len bytes 0, 1, 2 ... */
static void write_st(const char *path, const char *json, size_t data_len, bool pad) {
    size_t jl = strlen(json), hl = pad ? (jl + 7) / 8 * 8 : jl;
    size_t total = 8 + hl + data_len;
    uint8_t *b = calloc(1, total);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(b + 8, json, jl);
    memset(b + 8 + jl, ' ', hl - jl);
    for (size_t i = 0; i < data_len; i++) b[8 + hl + i] = (uint8_t)i;
    write_file(path, b, total);
    free(b);
}

static gk_status open_json(const char *json, size_t data_len, gk_st_file **f, gk_error *err) {
    char *p = tmp_path("t.safetensors");
    write_st(p, json, data_len, true);
    return gk_st_open(p, f, err);
}

START_TEST(reads_a_good_file) {
    make_tmpdir("check_safetensors");
    gk_st_file *f;
    gk_error err;
    const char *json = "{\"__metadata__\":{\"format\":\"pt\"},"
                       "\"b.weight\":{\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[8,20]},"
                       "\"a.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"c\":{\"dtype\":\"BF16\",\"shape\":[],\"data_offsets\":[20,22]}}";
    ck_assert_int_eq(open_json(json, 22, &f, &err), GK_OK);
    ck_assert_uint_eq(gk_st_count(f), 3);
    ck_assert_str_eq(gk_st_at(f, 0)->name, "a.weight");   /* by offset */
    ck_assert_str_eq(gk_st_sorted(f, 1)->name, "b.weight");
    const gk_st_tensor *b = gk_st_find(f, "b.weight");
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(b->dtype, GK_ST_F16);
    ck_assert_uint_eq(b->n_dims, 2);
    ck_assert_uint_eq(b->shape[1], 3);
    ck_assert_uint_eq(b->nbytes, 12);
    ck_assert_str_eq(gk_st_metadata(f, "format"), "pt");
    ck_assert_ptr_null(gk_st_find(f, "missing"));
    uint8_t buf[4];
    ck_assert_int_eq(gk_st_read(f, b, 2, buf, 4, &err), GK_OK);
    ck_assert_uint_eq(buf[0], 10);   /* data byte 8 + 2 */
    ck_assert_int_eq(gk_st_read(f, b, 10, buf, 4, &err), GK_E_ARG);
    gk_st_close(f);
    remove_tmpdir();
}
END_TEST

/* One lying header per row: the JSON, the data length, the code, and a piece
 * of the message. */
static const struct {
    const char *json;
    size_t data;
    gk_status code;
    const char *says;
} lies[] = {
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, GK_E_TRUNCATED, "past the end" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, GK_E_CORRUPT, "overlaps" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, GK_E_CORRUPT, "gap" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12, GK_E_CORRUPT, "no tensor claims" },
    { "{\"a\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1, GK_E_UNSUPPORTED, "unknown dtype" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "12 bytes" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, GK_E_CORRUPT, "before begin" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "whole number" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "whole number" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}", 8,
      GK_E_CORRUPT, "overflows" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, GK_E_CORRUPT, "pair" },
    { "{\"a\":{\"dtype\":32,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "not a string" },
    { "{\"a\":[1,2]}", 0, GK_E_CORRUPT, "not an object" },
    { "[1,2,3]", 0, GK_E_CORRUPT, "not a JSON object" },
    { "{\"a\":{\"dtype\":\"F32\",", 0, GK_E_CORRUPT, "not valid JSON" },
    { "{} x", 0, GK_E_CORRUPT, "after the header" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", 16, GK_E_CORRUPT, "twice" },
    { "{\"__metadata__\":{\"k\":3}}", 0, GK_E_CORRUPT, "not a string" },
    { "{\"\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, GK_E_CORRUPT, "empty name" },
};

START_TEST(refuses_lying_headers) {
    make_tmpdir("check_safetensors");
    gk_st_file *f = NULL;
    gk_error err;
    gk_status s = open_json(lies[_i].json, lies[_i].data, &f, &err);
    ck_assert_msg(s == lies[_i].code, "row %d: %d (%s), want %d", _i, s, err.message, lies[_i].code);
    ck_assert_msg(strstr(err.message, lies[_i].says) != NULL, "row %d: '%s' lacks '%s'", _i, err.message,
                  lies[_i].says);
    ck_assert_msg(strstr(err.file, "t.safetensors") != NULL, "row %d: error names no file", _i);
    ck_assert_ptr_null(f);
    remove_tmpdir();
}
END_TEST

START_TEST(names_the_offset) {
    make_tmpdir("check_safetensors");
    gk_st_file *f;
    gk_error err;
    const char *json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}";
    ck_assert_int_eq(open_json(json, 20, &f, &err), GK_E_CORRUPT);
    size_t hl = (strlen(json) + 7) / 8 * 8;
    ck_assert_int_eq(err.offset, (int64_t)(8 + hl + 8));   /* where the gap starts */
    ck_assert_ptr_nonnull(strstr(err.message, "'b'"));
    json = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
           "\"b\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[8,16]}}";
    ck_assert_int_eq(open_json(json, 16, &f, &err), GK_E_UNSUPPORTED);
    ck_assert_int_eq(err.offset, (int64_t)(8 + (strstr(json, "\"b\"") - json)));
    remove_tmpdir();
}
END_TEST

START_TEST(refuses_bad_lengths) {
    make_tmpdir("check_safetensors");
    char *p = tmp_path("t.safetensors");
    gk_st_file *f;
    gk_error err;
    uint8_t huge[16] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, '{', '}' };
    write_file(p, huge, sizeof huge);
    ck_assert_int_eq(gk_st_open(p, &f, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "over the limit"));
    uint8_t past[12] = { 200, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ' };
    write_file(p, past, sizeof past);
    ck_assert_int_eq(gk_st_open(p, &f, &err), GK_E_TRUNCATED);
    write_file(p, past, 5);
    ck_assert_int_eq(gk_st_open(p, &f, &err), GK_E_TRUNCATED);
    ck_assert_int_eq(gk_st_open(tmp_path("none.safetensors"), &f, &err), GK_E_NOT_FOUND);
    remove_tmpdir();
}
END_TEST

/* ---- checkpoints ---------------------------------------------------------- */

static char *in_dir(const char *dir, const char *name) {
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void put(const char *dir, const char *name, const char *json, size_t data) {
    char *p = in_dir(dir, name);
    write_st(p, json, data, true);
    free(p);
}

static void put_text(const char *dir, const char *name, const char *text) {
    char *p = in_dir(dir, name);
    write_file(p, text, strlen(text));
    free(p);
}

#define T(NAME, OFF) "\"" NAME "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[" OFF "]}"

static const char *index_json = "{\"metadata\":{\"total_size\":32},\"weight_map\":{"
                                "\"z\":\"model-00001-of-00002.safetensors\",\"a\":\"model-00001-of-00002.safetensors\","
                                "\"m\":\"model-00002-of-00002.safetensors\",\"b\":\"model-00002-of-00002.safetensors\"}}";

START_TEST(sharded_checkpoint) {
    make_tmpdir("check_safetensors");
    char *d = tmp_path("");
    put(d, "model-00001-of-00002.safetensors", "{" T("z", "0,8") "," T("a", "8,16") "}", 16);
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "," T("b", "8,16") "}", 16);
    put_text(d, "model.safetensors.index.json", index_json);
    put(d, "other.safetensors", "{" T("x", "0,8") "}", 8);   /* not a part: ignored */
    gk_ckpt *c;
    gk_error err;
    ck_assert_msg(gk_ckpt_open(d, &c, &err) == GK_OK, "%s", err.message);
    ck_assert_uint_eq(gk_ckpt_count(c), 4);
    const char *order[] = { "a", "z", "b", "m" };   /* parts by name, names sorted in each */
    for (int i = 0; i < 4; i++) ck_assert_str_eq(gk_ckpt_at(c, (size_t)i)->t->name, order[i]);
    ck_assert_ptr_nonnull(gk_ckpt_find(c, "m"));
    ck_assert_uint_eq(gk_ckpt_part_count(c), 2);
    gk_ckpt_close(c);
    remove_tmpdir();
}
END_TEST

START_TEST(checkpoint_refusals) {
    make_tmpdir("check_safetensors");
    char *d = tmp_path("");
    gk_ckpt *c;
    gk_error err;
    /* nothing */
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_NOT_FOUND);
    /* a shard the index names is missing */
    put(d, "model-00001-of-00002.safetensors", "{" T("z", "0,8") "," T("a", "8,16") "}", 16);
    put_text(d, "model.safetensors.index.json", index_json);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.message, "model-00002-of-00002.safetensors"));
    /* one tensor in two shards */
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "," T("a", "8,16") "}", 16);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "two files"));
    /* the index names a tensor no part holds */
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "}", 8);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "'b'"));
    /* a part holds a tensor the index does not name */
    put(d, "model-00002-of-00002.safetensors", "{" T("m", "0,8") "," T("b", "8,16") "," T("q", "16,24") "}", 24);
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.message, "not in the index"));
    /* bad indexes */
    put_text(d, "model.safetensors.index.json", "{\"weight_map\":[1]}");
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    put_text(d, "model.safetensors.index.json", "{\"weight_map\":{\"a\":\"../x.safetensors\"}}");
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    put_text(d, "model.safetensors.index.json", "{\"weight_map\":");
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.file, "index.json"));
    remove_tmpdir();
}
END_TEST

START_TEST(single_file_checkpoint) {
    make_tmpdir("check_safetensors");
    char *d = tmp_path("");
    put(d, "model.safetensors", "{" T("w", "0,8") "," T("v", "8,16") "}", 16);
    gk_ckpt *c;
    gk_error err;
    ck_assert_int_eq(gk_ckpt_open(d, &c, &err), GK_OK);
    ck_assert_str_eq(gk_ckpt_at(c, 0)->t->name, "v");
    gk_ckpt_close(c);
    remove_tmpdir();
}
END_TEST

/* ---- SentencePiece ------------------------------------------------------ */

START_TEST(spm_matches_reference_vocab) {
    const char *g = golden_dir("convert");
    if (g == NULL) {
        printf("SKIPPED: SentencePiece parity (no golden convert/ data)\n");
        return;
    }
    static const char *folders[] = { "llama-gqa", "mixtral", "llama-shards", "mistral-l3" };
    for (size_t k = 0; k < 4; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/convert/%s/tokenizer.model", g, folders[k]);
        gk_spm *m;
        gk_error err;
        ck_assert_msg(gk_spm_load(path, &m, &err) == GK_OK, "%s: %s", path, err.message);
        snprintf(path, sizeof path, "%s/convert/%s-f32.gguf", g, folders[k]);
        gk_file *f;
        ck_assert_int_eq(gk_open(path, GK_OPEN_DEFAULT, &f, &err), GK_OK);
        const gk_model *gm = gk_file_model(f);
        const gk_value *tokens = gk_kv_get(gm, "tokenizer.ggml.tokens");
        const gk_value *scores = gk_kv_get(gm, "tokenizer.ggml.scores");
        const gk_value *types = gk_kv_get(gm, "tokenizer.ggml.token_type");
        ck_assert_ptr_nonnull(tokens);
        ck_assert_uint_eq(tokens->arr.n, gk_spm_count(m));
        const gk_str *tok = tokens->arr.data;
        for (size_t i = 0; i < gk_spm_count(m); i++) {
            ck_assert_msg(tok[i].len == strlen(gk_spm_piece(m, i)) && memcmp(tok[i].ptr, gk_spm_piece(m, i), tok[i].len) == 0,
                          "%s: token %zu", folders[k], i);
            ck_assert_msg(((const float *)scores->arr.data)[i] == gk_spm_score(m, i), "%s: score %zu", folders[k], i);
            ck_assert_msg(((const int32_t *)types->arr.data)[i] == gk_spm_kind(m, i), "%s: type %zu", folders[k], i);
        }
        gk_close(f);
        gk_spm_free(m);
    }
}
END_TEST

START_TEST(spm_refuses_garbage) {
    make_tmpdir("check_convert");
    gk_spm *m;
    gk_error err;
    static const char garbage[] = "\xff\xff\xff\xff not a protobuf";
    write_file(tmp_path("t.model"), garbage, sizeof garbage - 1);
    ck_assert_int_eq(gk_spm_load(tmp_path("t.model"), &m, &err), GK_E_CORRUPT);
    ck_assert_ptr_nonnull(strstr(err.file, "t.model"));
    const uint8_t empty[1] = { 0 };
    write_file(tmp_path("e.model"), empty, 0);
    ck_assert_int_eq(gk_spm_load(tmp_path("e.model"), &m, &err), GK_E_CORRUPT);
    /* a piece of kind 9: field 1 (piece), len 5: field 1 "ab", field 3 varint 9 */
    const uint8_t bad_kind[] = { 0x0a, 0x06, 0x0a, 0x02, 'a', 'b', 0x18, 0x09 };
    write_file(tmp_path("k.model"), bad_kind, sizeof bad_kind);
    ck_assert_int_eq(gk_spm_load(tmp_path("k.model"), &m, &err), GK_E_CORRUPT);
    ck_assert_int_eq(gk_spm_load(tmp_path("missing.model"), &m, &err), GK_E_NOT_FOUND);
    remove_tmpdir();
}
END_TEST


/* Model ids as the reference's Metadata.get_model_id_components and
 * id_to_title split them (expected values printed by that Python code). */
static const struct {
    const char *id;
    int64_t params;
    const char *name, *org, *basename, *finetune, *version, *size;
} ids[] = {
    { "llama-gqa", 115008, "Llama Gqa", NULL, NULL, NULL, NULL, NULL },
    { "mistral-l3", 409608, "Mistral L3", NULL, NULL, NULL, NULL, NULL },
    { "meta-llama/Llama-2-7b-hf", 6738415616, "Llama 2 7b Hf", "Meta Llama", "Llama-2", "hf", NULL, "7B" },
    { "mistralai/Mistral-7B-Instruct-v0.3", 7248023552, "Mistral 7B Instruct v0.3", "Mistralai", "Mistral",
      "Instruct", "v0.3", "7B" },
    { "Qwen2.5-0.5B-Instruct", 494032768, "Qwen2.5 0.5B Instruct", NULL, "Qwen2.5", "Instruct", NULL, "0.5B" },
    { "bloom-7b1", 7069016064, "Bloom 7b1", NULL, "bloom", NULL, NULL, "7.1B" },
    { "Mixtral-8x7B-v0.1", 46702792704, "Mixtral 8x7B v0.1", NULL, "Mixtral", NULL, "v0.1", "8x7B" },
    { "TinyLlama-1.1B-Chat-v1.0", 1100048384, "TinyLlama 1.1B Chat v1.0", NULL, "TinyLlama", "Chat", "v1.0", "1.1B" },
    { "./local-model-q4_0", 0, "Local Model Q4_0", NULL, NULL, NULL, NULL, NULL },
    { "Phi-3-mini-128k-instruct", 3821079552, "Phi 3 Mini 128k Instruct", NULL, "Phi-3", "128k-instruct", NULL, "mini" },
    { "gpt2-small-xl", 124000000, "Gpt2 Small Xl", NULL, "gpt2", NULL, NULL, "small-xl" },
    { "My Model Name", 0, "My Model Name", NULL, NULL, NULL, NULL, NULL },
    { "my model-x v2", 0, "My Model X v2", NULL, NULL, NULL, NULL, NULL },
    { "/abs-13B", 13000000000, "Abs 13B", "", "abs", NULL, NULL, "13B" },
    { "Llama-3.1-8B-lora", -8000000000, "Llama 3.1 8B Lora", NULL, "Llama-3.1", NULL, NULL, "8B" },
    { "a--b--7B", 7000000000, "A B 7B", NULL, "a-b", NULL, NULL, "7B" },
};

static void same_or_null(const char *got, const char *want, const char *what, const char *id) {
    if (want == NULL) ck_assert_msg(got == NULL, "%s of %s: got '%s', want none", what, id, got);
    else ck_assert_msg(got && strcmp(got, want) == 0, "%s of %s: got '%s', want '%s'", what, id, got ? got : "(none)", want);
}

START_TEST(model_id_heuristics) {
    gk_conv_id id;
    ck_assert_int_eq(gk_conv_parse_id(ids[_i].id, ids[_i].params, &id), 0);
    /* The name is the title of the part after the organization, or of the sentence. */
    same_or_null(id.name, ids[_i].name, "name", ids[_i].id);
    same_or_null(id.organization, ids[_i].org, "organization", ids[_i].id);
    same_or_null(id.basename, ids[_i].basename, "basename", ids[_i].id);
    same_or_null(id.finetune, ids[_i].finetune, "finetune", ids[_i].id);
    same_or_null(id.version, ids[_i].version, "version", ids[_i].id);
    same_or_null(id.size_label, ids[_i].size, "size label", ids[_i].id);
    gk_conv_id_free(&id);
}
END_TEST

START_TEST(size_labels) {
    char b[32];
    gk_conv_size_label(115008, 0, 0, 0, b, sizeof b);
    ck_assert_str_eq(b, "115K");
    gk_conv_size_label(409608, 0, 0, 0, b, sizeof b);
    ck_assert_str_eq(b, "410K");
    gk_conv_size_label(6738415616, 0, 0, 0, b, sizeof b);
    ck_assert_str_eq(b, "6.7B");
    gk_conv_size_label(494032768, 0, 0, 0, b, sizeof b);
    ck_assert_str_eq(b, "494M");
    gk_conv_size_label(1500, 0, 0, 0, b, sizeof b);
    ck_assert_str_eq(b, "1.5K");
    gk_conv_size_label(400, 0, 0, 0, b, sizeof b);
    ck_assert_str_eq(b, "0.40K");
    gk_conv_size_label(0, 33344, 82944, 4, b, sizeof b);   /* golden mixtral: 4x116K */
    ck_assert_str_eq(b, "4x116K");
}
END_TEST

START_TEST(names_and_f32_rules) {
    const gk_conv_arch *a = gk_conv_arch_find("MixtralForCausalLM");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_null(gk_conv_arch_find("GPT2LMHeadModel"));
    gk_conv_name n;
    ck_assert(gk_conv_map_name(a, "model.layers.12.self_attn.k_proj.weight", &n));
    ck_assert_str_eq(n.gguf, "blk.12.attn_k.weight");
    ck_assert_int_eq(n.permute, 2);
    ck_assert(gk_conv_map_name(a, "model.layers.0.self_attn.q_proj.bias", &n));
    ck_assert_str_eq(n.gguf, "blk.0.attn_q.bias");
    ck_assert_int_eq(n.permute, 1);
    ck_assert(gk_conv_map_name(a, "model.layers.3.block_sparse_moe.experts.7.w2.weight", &n));
    ck_assert_int_eq(n.role, GK_ROLE_EXPERT);
    ck_assert_str_eq(n.gguf, "blk.3.ffn_down_exps.weight");
    ck_assert_int_eq(n.expert, 7);
    ck_assert(gk_conv_map_name(a, "model.layers.3.self_attn.rotary_emb.inv_freq", &n));
    ck_assert_int_eq(n.role, GK_ROLE_SKIP);
    ck_assert(gk_conv_map_name(a, "lm_head.weight", &n));
    ck_assert_str_eq(n.gguf, "output.weight");
    ck_assert(!gk_conv_map_name(a, "model.layers.0.mlp.w9.weight", &n));
    ck_assert(!gk_conv_map_name(a, "model.layers.x.mlp.up_proj.weight", &n));
    ck_assert(!gk_conv_map_name(a, "model.layers.0.block_sparse_moe.experts.1.w4.weight", &n));
    const gk_conv_arch *q3 = gk_conv_arch_find("Qwen3ForCausalLM"), *q2 = gk_conv_arch_find("Qwen2ForCausalLM");
    ck_assert(q3 && q2 && !q3->llama && q3->qk_norm && !q2->qk_norm);
    ck_assert(gk_conv_map_name(q3, "model.layers.1.self_attn.q_norm.weight", &n));
    ck_assert_str_eq(n.gguf, "blk.1.attn_q_norm.weight");
    ck_assert(gk_conv_map_name(q3, "model.layers.1.self_attn.q_proj.weight", &n));
    ck_assert_int_eq(n.permute, 0);   /* no rope permutation outside LlamaModel */
    ck_assert(!gk_conv_map_name(a, "model.layers.1.self_attn.q_norm.weight", &n));
    ck_assert(!gk_conv_map_name(q2, "model.layers.1.self_attn.k_norm.weight", &n));
    ck_assert(!gk_conv_map_name(q2, "model.layers.1.block_sparse_moe.gate.weight", &n));
    ck_assert(!gk_conv_map_name(q2, "model.layers.1.block_sparse_moe.experts.0.w1.weight", &n));
    ck_assert(gk_conv_stays_f32("blk.0.attn_norm.weight", 1));
    ck_assert(gk_conv_stays_f32("blk.0.ffn_gate_inp.weight", 2));
    ck_assert(gk_conv_stays_f32("blk.0.attn_q.bias", 2));
    ck_assert(gk_conv_stays_f32("rope_freqs.weight", 1));
    ck_assert(!gk_conv_stays_f32("blk.0.attn_q.weight", 2));
    ck_assert(!gk_conv_stays_f32("blk.0.ffn_up_exps.weight", 3));
}
END_TEST

/* Reads presented tensor ti of file whole, and again in pieces of step bytes. */
static void read_both_ways(gk_file *f, size_t ti, uint8_t *whole, size_t len, size_t step) {
    gk_error err;
    ck_assert_msg(gk_file_tensor_read(f, ti, 0, whole, len, &err) == GK_OK, "%s", err.message);
    uint8_t *pieces = malloc(len);
    for (size_t at = 0; at < len; at += step) {
        size_t n = len - at < step ? len - at : step;
        ck_assert_msg(gk_file_tensor_read(f, ti, at, pieces + at, n, &err) == GK_OK, "%s", err.message);
    }
    ck_assert_mem_eq(whole, pieces, len);
    free(pieces);
}

/* The virtual source: the Q/K permutation (rows of each head group
 * interleaved from its two halves), BF16 widened, expert parts stacked, and
 * reads that start and end inside rows give the same bytes. */
START_TEST(source_permutes_and_stacks) {
    make_tmpdir("check_convert_source");
    char *d = tmp_path("");
    /* q: F32 [8 rows, 2]: 64 bytes; e0, e1: BF16 [2, 3]: 12 bytes each */
    put(d, "model.safetensors",
        "{\"q\":{\"dtype\":\"F32\",\"shape\":[8,2],\"data_offsets\":[0,64]},"
        "\"e0\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[64,76]},"
        "\"e1\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[76,88]}}",
        88);
    gk_ckpt *c;
    gk_error err;
    ck_assert_msg(gk_ckpt_open(d, &c, &err) == GK_OK, "%s", err.message);
    gk_conv_source *src = gk_conv_source_new();
    gk_model *m = gk_model_new();
    gk_conv_feed q = { .parts = malloc(sizeof *q.parts), .n_parts = 1, .rows = 8, .width = 2, .perm_groups = 2,
                       .type = GK_TYPE_F32 };
    q.parts[0] = gk_ckpt_find(c, "q");
    ck_assert_int_eq(gk_conv_source_add(src, &q, &err), GK_OK);
    uint64_t ne_q[2] = { 2, 8 };
    ck_assert_int_eq(gk_tensor_add(m, "q", GK_TYPE_F32, 2, ne_q, &err), GK_OK);
    gk_conv_feed e = { .parts = malloc(2 * sizeof *e.parts), .n_parts = 2, .rows = 2, .width = 3, .type = GK_TYPE_F32 };
    e.parts[0] = gk_ckpt_find(c, "e0");
    e.parts[1] = gk_ckpt_find(c, "e1");
    ck_assert_int_eq(gk_conv_source_add(src, &e, &err), GK_OK);
    uint64_t ne_e[3] = { 3, 2, 2 };
    ck_assert_int_eq(gk_tensor_add(m, "e", GK_TYPE_F32, 3, ne_e, &err), GK_OK);
    gk_file *f;
    ck_assert_int_eq(gk_conv_source_file(src, "virtual", m, &f, &err), GK_OK);

    uint8_t got[64];
    read_both_ways(f, 0, got, 64, 12);
    /* groups of 4 rows: presented rows 0 1 2 3 come from 0 2 1 3 */
    const int from[8] = { 0, 2, 1, 3, 4, 6, 5, 7 };
    for (int r = 0; r < 8; r++)
        for (int b = 0; b < 8; b++) ck_assert_uint_eq(got[r * 8 + b], (uint8_t)(from[r] * 8 + b));
    uint8_t ex[48];
    read_both_ways(f, 1, ex, 48, 8);
    for (int i = 0; i < 12; i++) {   /* value i of the stack: BF16 bytes 64+2i, 65+2i in the high half */
        ck_assert_uint_eq(ex[4 * i], 0);
        ck_assert_uint_eq(ex[4 * i + 1], 0);
        ck_assert_uint_eq(ex[4 * i + 2], (uint8_t)(64 + 2 * i));
        ck_assert_uint_eq(ex[4 * i + 3], (uint8_t)(65 + 2 * i));
    }
    ck_assert_int_eq(gk_file_tensor_read(f, 0, 2, got, 4, &err), GK_E_ARG);   /* not on an element */
    gk_close(f);
    gk_conv_source_free(src);
    gk_ckpt_close(c);
    remove_tmpdir();
}
END_TEST

/* ------------------------------------------------------------------------ */
/* tokenizer.json encoding (bpe_pre.c)                                      */
/* ------------------------------------------------------------------------ */

static const char *const tiny_vocab[] = { "a", "b", "c", "ab", "bc", "abc", " ", "1", "2", "12", "<s>", "!", "a!",
                                          "\xc4\xa0", "\xc4\xa0" "b", "<unk>" };
static const char *const tiny_merges[][2] = { { "b", "c" }, { "a", "b" }, { "ab", "c" }, { "1", "2" }, { "a", "!" },
                                              { "\xc4\xa0", "b" } };

static int64_t tiny_lookup(const gk_bpe_model *m, const char *t, size_t n) {
    (void)m;
    for (size_t i = 0; i < sizeof tiny_vocab / sizeof tiny_vocab[0]; i++)
        if (strlen(tiny_vocab[i]) == n && memcmp(tiny_vocab[i], t, n) == 0) return (int64_t)i;
    return -1;
}

static int64_t tiny_rank(const gk_bpe_model *m, const char *a, size_t na, const char *b, size_t nb) {
    (void)m;
    for (size_t i = 0; i < sizeof tiny_merges / sizeof tiny_merges[0]; i++)
        if (strlen(tiny_merges[i][0]) == na && memcmp(tiny_merges[i][0], a, na) == 0 &&
            strlen(tiny_merges[i][1]) == nb && memcmp(tiny_merges[i][1], b, nb) == 0)
            return (int64_t)i;
    return -1;
}

/* The ids of text, as "[i, j]", under a tokenizer.json of the tiny model with
 * model_extra among the model's members and extra among the file's. */
static gk_status tiny_encode(const char *extra, const char *model_extra, const char *text, char *got, size_t size) {
    char json[2048];
    snprintf(json, sizeof json,
             "{\"added_tokens\": [{\"id\": 10, \"content\": \"<s>\", \"special\": true}], "
             "\"model\": {\"type\": \"BPE\"%s%s}%s%s}",
             model_extra[0] ? ", " : "", model_extra, extra[0] ? ", " : "", extra);
    cJSON *tok = cJSON_Parse(json);
    ck_assert_msg(tok != NULL, "bad test JSON: %s", json);
    gk_bpe_model m = { tok, NULL, tiny_lookup, tiny_rank, NULL };
    int64_t *ids = NULL;
    size_t n = 0;
    gk_error err;
    gk_status s = gk_bpe_encode(&m, text, strlen(text), &ids, &n, &err);
    size_t k = (size_t)snprintf(got, size, "[");
    for (size_t i = 0; s == GK_OK && i < n; i++)
        k += (size_t)snprintf(got + k, size - k, i ? ", %lld" : "%lld", (long long)ids[i]);
    snprintf(got + k, size - k, "]");
    free(ids);
    cJSON_Delete(tok);
    return s;
}

static void expect_ids(const char *extra, const char *model_extra, const char *text, const char *want) {
    char got[256];
    ck_assert_int_eq(tiny_encode(extra, model_extra, text, got, sizeof got), GK_OK);
    ck_assert_msg(strcmp(got, want) == 0, "%s / '%s': got %s, want %s", extra, text, got, want);
}

#define SPLIT_STEP(pattern, behavior, invert)                                                     \
    "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"" pattern "\"}, \"behavior\": \"" behavior \
    "\", \"invert\": " invert "}"
#define SPLIT(pattern, behavior, invert) "\"pre_tokenizer\": " SPLIT_STEP(pattern, behavior, invert)

START_TEST(bpe_encoder_steps) {
    /* merges by rank, not by position: "b c" (rank 0) before "a b" (rank 1) */
    expect_ids("", "", "abc", "[0, 4]");
    expect_ids("", "", "ab", "[3]");
    expect_ids("", "\"ignore_merges\": true", "abc", "[5]");
    /* the split behaviors around the matches of "b" */
    expect_ids(SPLIT("b", "Isolated", "false"), "", "abc", "[0, 1, 2]");
    expect_ids(SPLIT("b", "Removed", "false"), "", "abc", "[0, 2]");
    expect_ids(SPLIT("b", "MergedWithPrevious", "false"), "", "abc", "[3, 2]");
    expect_ids(SPLIT("b", "MergedWithNext", "false"), "", "abc", "[0, 4]");
    expect_ids(SPLIT("b", "Removed", "true"), "", "abc", "[1]");
    expect_ids(SPLIT("\\\\p{N}", "Isolated", "false"), "", "12", "[7, 8]");
    expect_ids(SPLIT("\\\\p{N}", "Contiguous", "false"), "", "12", "[9]");
    expect_ids("\"pre_tokenizer\": {\"type\": \"Digits\", \"individual_digits\": true}", "", "12", "[7, 8]");
    expect_ids("\"pre_tokenizer\": {\"type\": \"Digits\", \"individual_digits\": false}", "", "12", "[9]");
    expect_ids("\"pre_tokenizer\": {\"type\": \"Punctuation\", \"behavior\": \"Isolated\"}", "", "a!", "[0, 11]");
    expect_ids("\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [" SPLIT_STEP("c", "Isolated", "false")
               ", {\"type\": \"Digits\", \"individual_digits\": true}]}",
               "", "abc12", "[3, 2, 7, 8]");
    /* byte level: GPT-2's split, then a space is U+0120 */
    expect_ids("\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false}", "", "a b", "[0, 14]");
    expect_ids("\"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true}", "", "b", "[14]");
    /* added tokens are cut out first */
    expect_ids("", "", "a<s>bc", "[0, 10, 4]");
    /* unknown symbols: dropped, the unknown token, fused */
    expect_ids("", "", "azc", "[0, 2]");
    expect_ids("", "\"unk_token\": \"<unk>\"", "azzc", "[0, 15, 15, 2]");
    expect_ids("", "\"unk_token\": \"<unk>\", \"fuse_unk\": true", "azzc", "[0, 15, 2]");
    /* post-processors */
    expect_ids("\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<s>\"}}, "
               "{\"Sequence\": {\"id\": \"A\"}}], \"special_tokens\": {\"<s>\": {\"ids\": [10]}}}",
               "", "ab", "[10, 3]");
    expect_ids("\"post_processor\": {\"type\": \"RobertaProcessing\", \"cls\": [\"<s>\", 10], \"sep\": [\"!\", 11]}", "",
               "ab", "[10, 3, 11]");
    /* what it cannot run */
    char got[256];
    ck_assert_int_eq(tiny_encode("\"pre_tokenizer\": {\"type\": \"Metaspace\"}", "", "ab", got, sizeof got),
                     GK_E_UNSUPPORTED);
    ck_assert_int_eq(tiny_encode("\"normalizer\": {\"type\": \"Lowercase\"}", "", "ab", got, sizeof got),
                     GK_E_UNSUPPORTED);
    ck_assert_int_eq(tiny_encode(SPLIT("(", "Isolated", "false"), "", "ab", got, sizeof got), GK_E_CORRUPT);
    /* the table: a later name of a digest wins */
    ck_assert_str_eq(gk_bpe_pre_lookup("b6dc8df998e1cfbdc4eac8243701a65afe638679230920b50d6f17d81c098166"), "olmo");
    ck_assert_ptr_null(gk_bpe_pre_lookup("0000000000000000000000000000000000000000000000000000000000000000"));
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, reads_a_good_file);
    tcase_add_loop_test(tc, refuses_lying_headers, 0, (int)(sizeof lies / sizeof lies[0]));
    tcase_add_test(tc, names_the_offset);
    tcase_add_test(tc, refuses_bad_lengths);
    suite_add_tcase(s, tc);
    tc = tcase_create("checkpoint");
    tcase_add_test(tc, sharded_checkpoint);
    tcase_add_test(tc, checkpoint_refusals);
    tcase_add_test(tc, single_file_checkpoint);
    suite_add_tcase(s, tc);
    tc = tcase_create("spm");
    tcase_add_test(tc, spm_matches_reference_vocab);
    tcase_add_test(tc, spm_refuses_garbage);
    tcase_add_test(tc, bpe_encoder_steps);
    suite_add_tcase(s, tc);
    tc = tcase_create("plan");
    tcase_add_loop_test(tc, model_id_heuristics, 0, (int)(sizeof ids / sizeof ids[0]));
    tcase_add_test(tc, size_labels);
    tcase_add_test(tc, names_and_f32_rules);
    tcase_add_test(tc, source_permutes_and_stacks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
