/*
 * export.c - gk_export: a GGUF back to a Hugging Face folder. Opens the
 * model (a shard set as one merged model), plans the checkpoint tensors
 * (plan.c), checks the destination and makes the temporary folder
 * (folder.c), writes config.json (config.c), the tokenizer files
 * (tokenizer.c), generation_config.json (generation.c), README.md (card.c)
 * and the safetensors
 * files (tensors.c), then publishes the folder; any failure removes it.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "util/opts.h"

static const char *dtype_name(uint32_t t) {
    return t == GK_TYPE_F32 ? "float32" : t == GK_TYPE_F16 ? "float16" : "bfloat16";
}

/* The opened model: one file, or every shard of a set. */
typedef struct opened {
    gk_file *one;
    gk_split_set *set;
    gk_model *merged;
    gk_step *steps;
    const char **paths;
    size_t n_paths;
} opened;

static void close_model(opened *o) {
    gk_close(o->one);
    gk_split_set_close(o->set);
    gk_model_free(o->merged);
    free(o->steps);
    free(o->paths);
}

static gk_status open_model(const char *path, opened *o, gk_exp_source *src, gk_error *err) {
    memset(o, 0, sizeof *o);
    gk_status s = gk_open(path, GK_OPEN_DEFAULT, &o->one, err);
    if (s != GK_OK) return s;
    if (!gk_model_is_shard(gk_file_model(o->one))) {
        size_t n = gk_tensor_count(gk_file_model(o->one));
        o->steps = calloc(n ? n : 1, sizeof *o->steps);
        o->paths = malloc(sizeof *o->paths);
        if (o->steps == NULL || o->paths == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
        for (size_t i = 0; i < n; i++) o->steps[i] = (gk_step){ o->one, i, NULL };
        o->paths[o->n_paths++] = path;
        *src = (gk_exp_source){ gk_file_model(o->one), o->steps };
        return GK_OK;
    }
    gk_close(o->one);
    o->one = NULL;
    s = gk_split_set_open(path, GK_OPEN_DEFAULT, &o->set, err);
    if (s == GK_OK) s = gk_split_set_merged(o->set, &o->merged, &o->steps, err);
    if (s != GK_OK) return s;
    size_t n = gk_split_set_count(o->set);
    if ((o->paths = malloc(n * sizeof *o->paths)) == NULL) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    for (size_t k = 0; k < n; k++) o->paths[o->n_paths++] = gk_file_path(gk_split_set_file(o->set, k));
    *src = (gk_exp_source){ o->merged, o->steps };
    return GK_OK;
}

gk_status gk_export(const char *path, const char *dir, const gk_export_opts *o, gk_export_result *res,
                    gk_error *err) {
    gk_status s = GK_OPTS_CHECK(o, gk_export_opts, err);
    if (s != GK_OK) return s;
    gk_export_opts defaults = { GK_OPTS_INIT(gk_export_opts) };
    if (o == NULL) o = &defaults;
    if (res) memset(res, 0, sizeof *res);
    if (o->dtype < GK_EXPORT_AUTO || o->dtype > GK_EXPORT_BF16)
        return gk_error_set(err, GK_E_ARG, -1, "dtype must be GK_EXPORT_AUTO, F32, F16 or BF16");
    opened in;
    gk_exp_source src;
    s = open_model(path, &in, &src, err);
    if (s != GK_OK) {
        if (err->file[0] == '\0') gk_error_about(err, path);
        close_model(&in);
        return s;
    }
    gk_exp_plan plan;
    s = gk_exp_plan_build(src.m, o->dtype, o->max_shard_size ? o->max_shard_size : GK_EXPORT_DEFAULT_SHARD, &plan, err);
    if (s != GK_OK) {
        if (err->file[0] == '\0') gk_error_about(err, path);
        close_model(&in);
        return s;
    }
    char *config = NULL;
    s = gk_exp_config(&src, &plan, &config, err);
    if (s != GK_OK && err->file[0] == '\0') gk_error_about(err, path);
    gk_exp_folder *f = NULL;
    if (s == GK_OK) s = gk_exp_folder_begin(dir, in.paths, in.n_paths, o->force, &f, err);
    const char *tok = "none";
    if (s == GK_OK) s = gk_exp_folder_write_text(f, "config.json", config, err);
    if (s == GK_OK) {
        s = gk_exp_tokenizer(src.m, f, &tok, err);
        if (s != GK_OK && err->file[0] == '\0') gk_error_about(err, path);
    }
    bool gen = false;
    if (s == GK_OK) s = gk_exp_generation(src.m, f, &gen, err);
    if (s == GK_OK) s = gk_exp_card(src.m, f, &gen, err);
    if (s == GK_OK) s = gk_exp_shards(&src, &plan, f, o->progress, o->progress_ctx, err);
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
    close_model(&in);
    return s;
}
