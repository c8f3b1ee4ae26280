/*
 * check_export.c - the parts of export (lib/export/): the inverse of
 * convert's name map for every architecture it writes; floats in config.json
 * read back as the same float32; the tensor plan (shards no larger than the
 * limit but for a lone tensor, each shard by name, experts split, Q/K marked
 * for the inverse permutation); tokenizer files rebuilt from real
 * vocabularies (golden/real: a SentencePiece one read back through convert's
 * reader, a GPT-2 BPE one's tokenizer.json holding every token, type and
 * merge of the GGUF).
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "convert/arch.h"
#include "convert/spm.h"
#include "export/export_internal.h"

START_TEST(names_invert_the_map) {
    static const char *const llama[] = {
        "model.embed_tokens.weight", "lm_head.weight", "model.norm.weight",
        "model.layers.0.input_layernorm.weight", "model.layers.3.self_attn.q_proj.weight",
        "model.layers.3.self_attn.k_proj.weight", "model.layers.12.self_attn.v_proj.weight",
        "model.layers.1.self_attn.o_proj.weight", "model.layers.1.post_attention_layernorm.weight",
        "model.layers.1.mlp.gate_proj.weight", "model.layers.1.mlp.up_proj.weight", "model.layers.1.mlp.down_proj.weight",
        "model.layers.1.self_attn.q_proj.bias", NULL };
    static const char *const mixtral[] = { "model.layers.2.block_sparse_moe.gate.weight",
                                           "model.layers.2.block_sparse_moe.experts.7.w1.weight",
                                           "model.layers.2.block_sparse_moe.experts.0.w2.weight",
                                           "model.layers.2.block_sparse_moe.experts.11.w3.weight", NULL };
    static const char *const qwen3[] = { "model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.k_norm.weight",
                                         "model.layers.0.self_attn.q_proj.bias", NULL };
    static const char *const qwen3moe[] = { "model.layers.1.mlp.gate.weight", "model.layers.1.mlp.experts.5.gate_proj.weight",
                                            "model.layers.1.mlp.experts.0.down_proj.weight",
                                            "model.layers.1.mlp.experts.12.up_proj.weight",
                                            "model.layers.0.self_attn.q_norm.weight", NULL };
    struct { const char *cls; const char *const *names; } cases[] = {
        { "Qwen3MoeForCausalLM", qwen3moe },
        { "LlamaForCausalLM", llama }, { "MixtralForCausalLM", mixtral }, { "MixtralForCausalLM", llama },
        { "Qwen2ForCausalLM", llama }, { "Qwen3ForCausalLM", qwen3 }, { "Qwen3ForCausalLM", llama },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const gk_conv_arch *a = gk_conv_arch_find(cases[c].cls);
        ck_assert_ptr_nonnull(a);
        for (const char *const *n = cases[c].names; *n; n++) {
            gk_conv_name fwd, back;
            ck_assert_msg(gk_conv_map_name(a, *n, &fwd), "%s: %s", cases[c].cls, *n);
            char hf[160];
            ck_assert_msg(gk_conv_unmap_name(a, fwd.gguf, fwd.expert, hf, sizeof hf, &back), "%s: %s", cases[c].cls,
                          fwd.gguf);
            ck_assert_str_eq(hf, *n);
            ck_assert_int_eq(back.permute, fwd.permute);
        }
    }
    /* names an architecture does not have */
    char hf[160];
    gk_conv_name nm;
    ck_assert(!gk_conv_unmap_name(gk_conv_arch_find("LlamaForCausalLM"), "blk.0.attn_q_norm.weight", -1, hf, sizeof hf, &nm));
    ck_assert(!gk_conv_unmap_name(gk_conv_arch_find("Qwen2ForCausalLM"), "blk.0.ffn_gate_exps.weight", 0, hf, sizeof hf, &nm));
    /* Qwen3-MoE has no dense feed-forward tensors */
    ck_assert(!gk_conv_unmap_name(gk_conv_arch_find("Qwen3MoeForCausalLM"), "blk.0.ffn_gate.weight", -1, hf, sizeof hf, &nm));
    ck_assert(!gk_conv_unmap_name(gk_conv_arch_find("LlamaForCausalLM"), "blk.0.attn_q.scale", -1, hf, sizeof hf, &nm));
    ck_assert(!gk_conv_unmap_name(gk_conv_arch_find("LlamaForCausalLM"), "token_embd.weight", -1, hf, 8, &nm));
}
END_TEST

START_TEST(floats_read_back) {
    static const double values[] = { 1e-5, 1e-6, 9.999999747378752e-06, 10000.0, 500000.0, 0.5, 3.0, 1e30, 1.0 / 3 };
    char buf[48];
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        gk_exp_format_float(values[i], buf, sizeof buf);
        ck_assert_msg(strtof(buf, NULL) == (float)values[i], "%g printed %s", values[i], buf);
        ck_assert_msg(strpbrk(buf, ".e") != NULL, "%s is not a JSON float", buf);
    }
    gk_exp_format_float(1e-5, buf, sizeof buf);
    ck_assert_str_eq(buf, "1e-05");
    gk_exp_format_float(10000.0, buf, sizeof buf);
    ck_assert_str_eq(buf, "10000.0");
}
END_TEST

START_TEST(plan_shards_and_experts) {
    const char *g = golden_dir("convert");
    if (g == NULL) {
        printf("SKIPPED: plan on golden mixtral (no golden convert/ data)\n");
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/convert/mixtral-bf16.gguf", g);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open(path, 0, &f, &err), GK_OK);
    gk_exp_plan p;
    const uint64_t max = 30000;
    ck_assert_int_eq(gk_exp_plan_build(gk_file_model(f), GK_EXPORT_AUTO, max, &p, &err), GK_OK);
    ck_assert_str_eq(p.conv->hf_name, "MixtralForCausalLM");
    ck_assert_int_eq(p.tied, false);
    ck_assert_uint_gt(p.n_shards, 3);
    size_t experts = 0, permuted = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < p.n; i++) {
        const gk_exp_tensor *x = &p.t[i];
        sum += x->bytes;
        experts += strstr(x->name, ".experts.") != NULL;
        permuted += x->perm_groups != 0;
        if (x->perm_groups) ck_assert(strstr(x->name, "q_proj") || strstr(x->name, "k_proj"));
        if (i > 0 && p.t[i - 1].shard == x->shard) ck_assert_int_lt(strcmp(p.t[i - 1].name, x->name), 0);
        if (i > 0 && p.t[i - 1].shard == x->shard) ck_assert_uint_eq(x->offset, p.t[i - 1].offset + p.t[i - 1].bytes);
    }
    for (uint32_t k = 0; k < p.n_shards; k++) {
        size_t in = 0;
        for (size_t i = 0; i < p.n; i++) in += p.t[i].shard == k;
        ck_assert(p.shard_bytes[k] <= max || in == 1);
    }
    ck_assert_uint_eq(sum, p.total_bytes);
    ck_assert_uint_eq(experts, 2 * 3 * 4);   /* 2 layers, w1..w3, 4 experts */
    ck_assert_uint_eq(permuted, 2 * 2);
    gk_exp_plan_free(&p);
    gk_close(f);
}
END_TEST

/* Exports only the tokenizer of the real vocabulary NAME into tmp/NAME. */
static const char *export_tokenizer(const char *name, gk_file **f, const char **written) {
    const char *g = golden_dir("real");
    if (g == NULL) return NULL;
    static char path[4096], dest[4096];
    snprintf(path, sizeof path, "%s/real/ggml-vocab-%s.gguf", g, name);
    gk_error err;
    ck_assert_int_eq(gk_open(path, 0, f, &err), GK_OK);
    snprintf(dest, sizeof dest, "%s", tmp_path(name));
    gk_exp_folder *fo;
    const char *inputs[1] = { path };
    ck_assert_int_eq(gk_exp_folder_begin(dest, inputs, 1, false, &fo, &err), GK_OK);
    ck_assert_int_eq(gk_exp_tokenizer(gk_file_model(*f), fo, written, &err), GK_OK);
    ck_assert_int_eq(gk_exp_folder_publish(fo, &err), GK_OK);
    return dest;
}

START_TEST(spm_vocabulary_reads_back) {
    make_tmpdir("check_export_spm");
    gk_file *f;
    const char *written;
    const char *dir = export_tokenizer("llama-spm", &f, &written);
    if (dir == NULL) {
        printf("SKIPPED: tokenizer export (no golden real/ data)\n");
        return;
    }
    ck_assert_str_eq(written, "tokenizer.model, tokenizer_config.json");
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.model", dir);
    gk_spm *spm;
    gk_error err;
    ck_assert_int_eq(gk_spm_load(path, &spm, &err), GK_OK);
    const gk_model *m = gk_file_model(f);
    const gk_value *tok = gk_kv_get(m, "tokenizer.ggml.tokens"), *sc = gk_kv_get(m, "tokenizer.ggml.scores"),
                   *ty = gk_kv_get(m, "tokenizer.ggml.token_type");
    ck_assert_uint_eq(gk_spm_count(spm), tok->arr.n);
    for (size_t i = 0; i < tok->arr.n; i++) {
        ck_assert_str_eq(gk_spm_piece(spm, i), ((const gk_str *)tok->arr.data)[i].ptr);
        ck_assert(gk_spm_score(spm, i) == ((const float *)sc->arr.data)[i]);
        ck_assert_int_eq(gk_spm_kind(spm, i), ((const int32_t *)ty->arr.data)[i]);
    }
    ck_assert(gk_spm_is_bpe(spm));
    gk_spm_free(spm);
    gk_close(f);
    remove_tmpdir();
}
END_TEST

START_TEST(bpe_vocabulary_in_tokenizer_json) {
    make_tmpdir("check_export_bpe");
    gk_file *f;
    const char *written;
    const char *dir = export_tokenizer("gpt-2", &f, &written);
    if (dir == NULL) {
        printf("SKIPPED: tokenizer export (no golden real/ data)\n");
        return;
    }
    ck_assert_str_eq(written, "tokenizer.json, tokenizer_config.json");
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    char *text = read_text_file(path);
    cJSON *j = cJSON_Parse(text);
    ck_assert_ptr_nonnull(j);
    const cJSON *model = cJSON_GetObjectItem(j, "model"), *vocab = cJSON_GetObjectItem(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItem(model, "merges"), *added = cJSON_GetObjectItem(j, "added_tokens");
    ck_assert_str_eq(cJSON_GetObjectItem(model, "type")->valuestring, "BPE");
    const gk_model *m = gk_file_model(f);
    const gk_value *tok = gk_kv_get(m, "tokenizer.ggml.tokens"), *ty = gk_kv_get(m, "tokenizer.ggml.token_type"),
                   *mg = gk_kv_get(m, "tokenizer.ggml.merges");
    size_t n_added = 0, n_vocab = 0;
    for (const cJSON *a = added->child; a; a = a->next) n_added++;
    for (const cJSON *v = vocab->child; v; v = v->next) n_vocab++;
    ck_assert_uint_eq(n_added + n_vocab, tok->arr.n);
    /* the vocab's entries are the normal tokens, each with its id (in id order:
     * a linear walk, not a lookup per token) */
    size_t seen_added = 0;
    const cJSON *v = vocab->child;
    for (size_t i = 0; i < tok->arr.n; i++) {
        const char *t = ((const gk_str *)tok->arr.data)[i].ptr;
        int32_t type = ((const int32_t *)ty->arr.data)[i];
        if (type == 3 || type == 4) {
            seen_added++;
            continue;
        }
        ck_assert_ptr_nonnull(v);
        ck_assert_msg(strcmp(v->string, t) == 0 && (size_t)v->valuedouble == i, "token %zu '%s'", i, t);
        v = v->next;
    }
    ck_assert_ptr_null(v);
    ck_assert_uint_eq(seen_added, n_added);
    ck_assert_uint_eq((size_t)cJSON_GetArraySize(merges), mg->arr.n);
    size_t i = 0;
    for (const cJSON *e = merges->child; e; e = e->next, i++)
        ck_assert_str_eq(e->valuestring, ((const gk_str *)mg->arr.data)[i].ptr);
    cJSON_Delete(j);
    free(text);
    gk_close(f);
    remove_tmpdir();
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("export");
    TCase *tc = tcase_create("rules");
    tcase_add_test(tc, names_invert_the_map);
    tcase_add_test(tc, floats_read_back);
    tcase_add_test(tc, plan_shards_and_experts);
    suite_add_tcase(s, tc);
    tc = tcase_create("tokenizer");
    tcase_add_test(tc, spm_vocabulary_reads_back);
    tcase_add_test(tc, bpe_vocabulary_in_tokenizer_json);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
