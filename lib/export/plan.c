/*
 * plan.c - which safetensors tensors an export writes, from where, in which
 * dtype and file (export_internal.h: gk_exp_plan_build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "util/grow.h"

typedef struct builder {
    gk_exp_plan *p;
    size_t cap;
    size_t run_start;              /* first tensor of the current expert run */
    int64_t run_bid;               /* its layer, or -1 */
} builder;

static gk_status push(builder *b, gk_exp_tensor **out, gk_error *err) {
    if (!GK_GROW(b->p->t, b->cap, b->p->n + 1, 64)) return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    *out = &b->p->t[b->p->n++];
    memset(*out, 0, sizeof **out);
    return GK_OK;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const gk_exp_tensor *)a)->name, ((const gk_exp_tensor *)b)->name);
}

/* A layer's expert slices, as one run sorted by name (convert merges them
 * when the last one by name arrives, so any order within the run gives the
 * same GGUF; by name it is one ascending run). */
static void end_run(builder *b) {
    if (b->run_bid >= 0 && b->p->n > b->run_start)
        qsort(b->p->t + b->run_start, b->p->n - b->run_start, sizeof *b->p->t, by_name);
    b->run_bid = -1;
}

static uint32_t out_dtype(int dtype, uint32_t type) {
    switch (dtype) {
    case GK_EXPORT_F32: return GK_TYPE_F32;
    case GK_EXPORT_F16: return GK_TYPE_F16;
    case GK_EXPORT_BF16: return GK_TYPE_BF16;
    default: return type == GK_TYPE_F32 || type == GK_TYPE_F16 || type == GK_TYPE_BF16 ? type : GK_TYPE_BF16;
    }
}

static gk_status key_u64(const gk_model *m, const char *arch, const char *key, bool required, uint64_t *v,
                         gk_error *err) {
    char k[128];
    snprintf(k, sizeof k, "%s.%s", arch, key);
    if (gk_kv_get_uint(m, k, v) == GK_OK) return GK_OK;
    *v = 0;
    if (!required) return GK_OK;
    return gk_error_set(err, GK_E_NOT_FOUND, -1, "key %s is missing (or not an unsigned integer): export needs it", k);
}

static gk_status tensor_error(gk_error *err, const gk_tensor *t, gk_status code, const char *what) {
    return gk_error_set(err, code, t->file_offset, "tensor '%s': %s", t->name.ptr, what);
}

static gk_status add_tensor(builder *b, const gk_model *m, size_t i, const gk_tensor *t, uint64_t n_head,
                            uint64_t n_kv, int dtype, gk_error *err) {
    gk_exp_plan *p = b->p;
    const gk_type_info *ti = gk_type_get(t->type);
    if (ti == NULL || ti->name == NULL) return tensor_error(err, t, GK_E_UNSUPPORTED, "its type is unknown");
    uint32_t od = out_dtype(dtype, t->type);
    if (od != t->type && ti->dequantize == NULL) {
        char what[96];
        snprintf(what, sizeof what, "type %s cannot be dequantized", ti->name);
        return tensor_error(err, t, GK_E_UNSUPPORTED, what);
    }
    char hf[160];
    gk_conv_name nm;
    if (!gk_conv_unmap_name(p->conv, t->name.ptr, 0, hf, sizeof hf, &nm)) {
        char what[160];
        snprintf(what, sizeof what, "has no checkpoint name for %s", p->conv->hf_name);
        return tensor_error(err, t, GK_E_UNSUPPORTED, what);
    }
    (void)m;
    uint32_t osize = od == GK_TYPE_F32 ? 4 : 2;
    if (nm.role == GK_ROLE_EXPERT) {
        if (t->n_dims != 3 || t->ne[2] == 0) return tensor_error(err, t, GK_E_CORRUPT, "merged experts must be 3-D");
        if (b->run_bid != nm.bid) {
            end_run(b);
            b->run_bid = nm.bid;
            b->run_start = p->n;
        }
        uint64_t slice = t->nbytes / t->ne[2];
        for (uint64_t e = 0; e < t->ne[2]; e++) {
            gk_exp_tensor *x = NULL;
            gk_status s = push(b, &x, err);
            if (s != GK_OK) return s;
            gk_conv_name en;
            if (!gk_conv_unmap_name(p->conv, t->name.ptr, (int64_t)e, x->name, sizeof x->name, &en))
                return tensor_error(err, t, GK_E_UNSUPPORTED, "an expert has no checkpoint name");
            x->n_dims = 2;
            x->shape[0] = t->ne[1];
            x->shape[1] = t->ne[0];
            x->src = i;
            x->src_start = e * slice;
            x->elems = t->ne[0] * t->ne[1];
            x->dtype = od;
            x->bytes = x->elems * osize;
        }
        return GK_OK;
    }
    end_run(b);
    gk_exp_tensor *x = NULL;
    gk_status s = push(b, &x, err);
    if (s != GK_OK || x == NULL) return s;
    snprintf(x->name, sizeof x->name, "%s", hf);
    x->n_dims = t->n_dims;
    x->elems = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        x->shape[d] = t->ne[t->n_dims - 1 - d];
        x->elems *= t->ne[d];
    }
    x->src = i;
    x->dtype = od;
    x->bytes = x->elems * osize;
    if (nm.permute) {
        uint64_t groups = nm.permute == 1 || n_kv == n_head ? n_head : n_kv;
        x->rows = x->shape[0];
        x->width = x->rows ? x->elems / x->rows : 0;
        if (groups == 0 || x->rows % (groups * 2) != 0 || x->width % ti->block_elems != 0) {
            char what[128];
            snprintf(what, sizeof what, "%llu rows do not split into %llu heads of two halves",
                     (unsigned long long)x->rows, (unsigned long long)groups);
            return tensor_error(err, t, GK_E_CORRUPT, what);
        }
        x->perm_groups = (uint32_t)groups;
    }
    return GK_OK;
}

/* The layer of a checkpoint tensor name ("model.layers.N...."), or -1. */
static long layer_of(const char *name) {
    static const char prefix[] = "model.layers.";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0) return -1;
    char *end;
    long n = strtol(name + sizeof prefix - 1, &end, 10);
    return end != name + sizeof prefix - 1 && *end == '.' && n >= 0 ? n : -1;
}

/* Keeps the GGUF's order when it is a converter's, else sorts by name.
 *
 * A converter writes each checkpoint file's tensors sorted by name, file after
 * file: the order is a few ascending runs, and a new file starts at each, so
 * converting the export again gives the same order. A GGUF laid out layer by
 * layer (attn_q before attn_k: self_attn.q_proj before k_proj) has no
 * checkpoint order to give back, and a file per run would be absurd. The two
 * differ inside a layer: in a converter's order a layer's tensors fall out of
 * name order only where a file ends, so in at most (files - 1) layers; laid out
 * layer by layer, every layer does. So the order is sorted when every layer
 * of two or more has a descent inside it, or the one layer of a one-layer
 * model has three (layer by layer gives four or more: q/k, v/o, norms, mlp).
 * Counting runs alone cannot tell them apart on small models: two layers in
 * three files give as many runs as one layer laid out in order. */
static bool keep_order(const gk_exp_plan *p) {
    size_t runs = 1;
    for (size_t i = 1; i < p->n; i++) runs += strcmp(p->t[i].name, p->t[i - 1].name) < 0;
    if (runs == 1) return true;
    size_t layers = 0, broken = 0, descents = 0;
    long cur = -1;
    bool cur_broken = false;
    for (size_t i = 0; i < p->n; i++) {
        long l = layer_of(p->t[i].name);
        if (l >= 0 && i > 0 && l == layer_of(p->t[i - 1].name)) {
            if (strcmp(p->t[i].name, p->t[i - 1].name) < 0) {
                descents++;
                if (!cur_broken) broken++;
                cur_broken = true;
            }
            continue;
        }
        if (l >= 0 && l != cur) {   /* a layer starts (a layer split over files counts twice: fine) */
            layers++;
            cur = l;
            cur_broken = false;
        }
    }
    if (layers >= 2) return broken < layers;
    if (layers == 1) return descents < 3;
    return true;
}

static void cut_shards(gk_exp_plan *p, uint64_t max_bytes) {
    if (!keep_order(p)) qsort(p->t, p->n, sizeof *p->t, by_name);
    uint32_t k = 0;
    uint64_t at = 0;
    size_t in_shard = 0;
    for (size_t i = 0; i < p->n; i++) {
        gk_exp_tensor *x = &p->t[i];
        if (in_shard > 0 && (at + x->bytes > max_bytes || strcmp(x->name, p->t[i - 1].name) < 0)) {
            p->shard_bytes[k++] = at;
            at = 0;
            in_shard = 0;
        }
        x->shard = k;
        x->offset = at;
        at += x->bytes;
        in_shard++;
    }
    if (p->n) p->shard_bytes[k] = at;
    p->n_shards = p->n ? k + 1 : 0;
}

gk_status gk_exp_plan_build(const gk_model *m, int dtype, uint64_t max_bytes, gk_exp_plan *p, gk_error *err) {
    memset(p, 0, sizeof *p);
    gk_str arch;
    if (gk_kv_get_str(m, "general.architecture", &arch) != GK_OK)
        return gk_error_set(err, GK_E_NOT_FOUND, -1, "key general.architecture is missing: export needs it");
    uint64_t experts = 0, n_head, n_kv;
    gk_status s = key_u64(m, arch.ptr, "expert_count", false, &experts, err);
    p->arch = gk_exp_arch_find(arch.ptr, experts > 0, &p->conv);
    if (p->arch == NULL) {
        char list[512];
        gk_exp_arch_list(list, sizeof list);
        return gk_error_set(err, GK_E_UNSUPPORTED, -1, "architecture '%s'%s is not exported (supported: %s)", arch.ptr,
                            experts > 0 ? " with experts" : "", list);
    }
    if (s == GK_OK) s = key_u64(m, arch.ptr, "attention.head_count", true, &n_head, err);
    if (s == GK_OK) s = key_u64(m, arch.ptr, "attention.head_count_kv", false, &n_kv, err);
    if (s != GK_OK) return s;
    if (n_kv == 0) n_kv = n_head;
    builder b = { .p = p, .run_bid = -1 };
    p->tied = gk_tensor_find(m, "output.weight") < 0;
    uint64_t by_type[3] = { 0 };
    for (size_t i = 0; i < gk_tensor_count(m) && s == GK_OK; i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        if (strcmp(t->name.ptr, "rope_freqs.weight") == 0 && p->conv->llama) continue;   /* from config.json */
        s = add_tensor(&b, m, i, t, n_head, n_kv, dtype, err);
    }
    end_run(&b);
    if (s == GK_OK && p->n == 0) s = gk_error_set(err, GK_E_NOT_FOUND, -1, "the model has no tensors to export");
    if (s == GK_OK && (p->shard_bytes = calloc(p->n, sizeof *p->shard_bytes)) == NULL)
        s = gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
    if (s != GK_OK) {
        gk_exp_plan_free(p);
        return s;
    }
    for (size_t i = 0; i < p->n; i++) {
        p->total_bytes += p->t[i].bytes;
        by_type[p->t[i].dtype == GK_TYPE_F32 ? 0 : p->t[i].dtype == GK_TYPE_F16 ? 1 : 2] += p->t[i].bytes;
    }
    p->main_dtype = by_type[2] >= by_type[1] && by_type[2] >= by_type[0] ? GK_TYPE_BF16
                    : by_type[1] >= by_type[0]                            ? GK_TYPE_F16
                                                                          : GK_TYPE_F32;
    cut_shards(p, max_bytes ? max_bytes : UINT64_MAX);
    return GK_OK;
}

void gk_exp_plan_free(gk_exp_plan *p) {
    free(p->t);
    free(p->shard_bytes);
    p->t = NULL;
    p->shard_bytes = NULL;
    p->n = 0;
}

void gk_exp_shard_name(const gk_exp_plan *p, uint32_t k, char *buf, size_t size) {
    if (p->n_shards <= 1) snprintf(buf, size, "model.safetensors");
    else snprintf(buf, size, "model-%05u-of-%05u.safetensors", k + 1, p->n_shards);
}
