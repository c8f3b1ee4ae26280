/*
 * export.c - gk_export: a GGUF back to a Hugging Face folder. Opens the
 * model, plans the checkpoint tensors (plan.c), checks the destination and
 * makes the temporary folder (folder.c), writes config.json (config.c), the
 * tokenizer files (tokenizer.c), generation_config.json (generation.c) and
 * the safetensors files (tensors.c), then
 * publishes the folder; any failure removes it.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "util/opts.h"

static const char *dtype_name(uint32_t t) {
    return t == GK_TYPE_F32 ? "float32" : t == GK_TYPE_F16 ? "float16" : "bfloat16";
}

gk_status gk_export(const char *path, const char *dir, const gk_export_opts *o, gk_export_result *res,
                    gk_error *err) {
    gk_export_opts defaults = { GK_OPTS_INIT(gk_export_opts) };
    gk_status s = GK_OPTS_CHECK(o, gk_export_opts, err);
    if (s != GK_OK) return s;
    if (o == NULL) o = &defaults;
    if (res) memset(res, 0, sizeof *res);
    if (o->dtype < GK_EXPORT_AUTO || o->dtype > GK_EXPORT_BF16)
        return gk_error_set(err, GK_E_ARG, -1, "dtype must be GK_EXPORT_AUTO, F32, F16 or BF16");
    gk_file *in = NULL;
    s = gk_open(path, GK_OPEN_DEFAULT, &in, err);
    if (s != GK_OK) return s;
    gk_exp_plan plan;
    s = gk_exp_plan_build(gk_file_model(in), o->dtype,
                          o->max_shard_size ? o->max_shard_size : GK_EXPORT_DEFAULT_SHARD, &plan, err);
    if (s != GK_OK) {
        if (err->file[0] == '\0') gk_error_about(err, path);
        gk_close(in);
        return s;
    }
    char *config = NULL;
    s = gk_exp_config(in, &plan, &config, err);
    if (s != GK_OK && err->file[0] == '\0') gk_error_about(err, path);
    gk_exp_folder *f = NULL;
    if (s == GK_OK) s = gk_exp_folder_begin(dir, path, o->force, &f, err);
    const char *tok = "none";
    if (s == GK_OK) s = gk_exp_folder_write_text(f, "config.json", config, err);
    if (s == GK_OK) {
        s = gk_exp_tokenizer(gk_file_model(in), f, &tok, err);
        if (s != GK_OK && err->file[0] == '\0') gk_error_about(err, path);
    }
    bool gen = false;
    if (s == GK_OK) s = gk_exp_generation(gk_file_model(in), f, &gen, err);
    if (s == GK_OK) s = gk_exp_shards(in, &plan, f, o->progress, o->progress_ctx, err);
    if (s == GK_OK) {
        s = gk_exp_folder_publish(f, err);   /* frees f */
        f = NULL;
    }
    gk_exp_folder_abort(f);
    if (s == GK_OK && res) {
        res->hf_class = plan.conv->hf_name;
        res->dtype = dtype_name(plan.main_dtype);
        res->tokenizer = tok;
        res->n_shards = plan.n_shards;
        res->n_tensors = plan.n;
        res->tensor_bytes = plan.total_bytes;
    }
    free(config);
    gk_exp_plan_free(&plan);
    gk_close(in);
    return s;
}
