/*
 * export_internal.h - the parts of `export` (a GGUF back to a Hugging Face
 * folder): the per-architecture rules (rules.c), the tensor plan and its
 * shards (plan.c), config.json (config.c), the tokenizer files (tokenizer.c),
 * the safetensors writer (tensors.c) and the output folder published whole
 * (folder.c). gk_export (export.c) runs them in that order.
 */
#ifndef GK_EXPORT_INTERNAL_H
#define GK_EXPORT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "convert/arch.h"
#include "ggufkit.h"

/* ------------------------------------------------------------------ rules */

/* How one GGUF architecture goes back to Hugging Face: one entry each. */
typedef struct gk_exp_arch {
    const char *gguf_arch;         /* general.architecture */
    const char *hf_class, *model_type;           /* the dense model */
    const char *moe_class, *moe_model_type;      /* with {arch}.expert_count, or NULL */
    const char *expert_count_key;  /* config.json's name for {arch}.expert_count */
    bool tie_default;              /* the class's tie_word_embeddings when unset */
} gk_exp_arch;

/** gk_exp_arch_find() : the rules for gguf_arch (moe: the model has experts);
 *  *conv the convert rules of the chosen class (tensor names, permutation).
 *  @return : the entry, or NULL when export (or convert) does not handle it. */
const gk_exp_arch *gk_exp_arch_find(const char *gguf_arch, bool moe, const gk_conv_arch **conv);

/** gk_exp_arch_list() : the supported GGUF architectures with their classes,
 *  listed into buf. */
void gk_exp_arch_list(char *buf, size_t size);

/* ----------------------------------------------------------------- source */

/* The model exported: one GGUF, or a shard set merged (every tensor read from
 * its own shard through its step). */
typedef struct gk_exp_source {
    const gk_model *m;
    const gk_step *steps;          /* one per tensor of m */
} gk_exp_source;

/** gk_exp_read() : len bytes of tensor i from byte start, in file byte order. */
gk_status gk_exp_read(const gk_exp_source *src, size_t i, uint64_t start, void *buf, size_t len, gk_error *err);

/* ------------------------------------------------------------------- plan */

/* One safetensors tensor and where its values come from. */
typedef struct gk_exp_tensor {
    char name[160];                /* the checkpoint name */
    uint32_t n_dims;
    uint64_t shape[GK_MAX_DIMS];   /* slowest first */
    size_t src;                    /* the GGUF tensor */
    uint64_t src_start;            /* its first byte (an expert's slice) */
    uint64_t elems;                /* elements */
    uint64_t rows, width;          /* permuted tensors: rows of width elements */
    uint32_t perm_groups;          /* inverse Q/K permutation: head groups, or 0 */
    uint32_t dtype;                /* GK_TYPE_F32, F16 or BF16 */
    uint64_t bytes;                /* in the output */
    uint32_t shard;                /* the file it goes to */
    uint64_t offset;               /* in that file's data */
} gk_exp_tensor;

typedef struct gk_exp_plan {
    const gk_exp_arch *arch;
    const gk_conv_arch *conv;
    gk_exp_tensor *t;
    size_t n;
    uint32_t n_shards;
    uint64_t *shard_bytes;         /* data bytes per shard */
    uint64_t total_bytes;
    bool tied;                     /* no output.weight: tie_word_embeddings */
    uint32_t main_dtype;           /* config.json's torch_dtype */
} gk_exp_plan;

/** gk_exp_plan_build() : the checkpoint tensors of model m: HF names, the
 *  inverse permutation, experts split, each in dtype (GK_EXPORT_AUTO: the
 *  tensor's own float type, BF16 for a quantized one), in the GGUF's order
 *  (a layer's expert slices by name), cut into shards of at most max_bytes of
 *  data, and also wherever a name sorts before the one before it (so a
 *  converter reading shards in order and each by name sees the GGUF's order;
 *  when such runs are short, fewer than 8 tensors on average, the order is
 *  no converter's and the tensors are sorted by name instead).
 *  @return : GK_OK; GK_E_UNSUPPORTED (architecture, a tensor without a
 *  checkpoint name, a type without a dequantizer); GK_E_NOT_FOUND (a key). */
gk_status gk_exp_plan_build(const gk_model *m, int dtype, uint64_t max_bytes, gk_exp_plan *p, gk_error *err);

/** gk_exp_plan_free() : releases p's arrays. */
void gk_exp_plan_free(gk_exp_plan *p);

/** gk_exp_shard_name() : "model.safetensors", or "model-0000K-of-0000N.safetensors". */
void gk_exp_shard_name(const gk_exp_plan *p, uint32_t k, char *buf, size_t size);

/* ----------------------------------------------------------------- folder */

typedef struct gk_exp_folder gk_exp_folder;

/** gk_exp_folder_begin() : checks dest (absent, an empty folder, or with force
 *  a folder holding none of the inputs) and makes the temporary folder beside
 *  it. @return : GK_OK; GK_E_EXISTS; GK_E_ARG (not a folder); GK_E_SAME_FILE
 *  (dest holds or is an input); GK_E_IO. */
gk_status gk_exp_folder_begin(const char *dest, const char *const *inputs, size_t n_inputs, bool force,
                              gk_exp_folder **out, gk_error *err);

/** gk_exp_folder_path() : @return : the temporary folder's path of file name. */
void gk_exp_folder_path(const gk_exp_folder *f, const char *name, char *buf, size_t size);

/** gk_exp_folder_final_path() : the path file name will have once published
 *  (for messages). */
void gk_exp_folder_final_path(const gk_exp_folder *f, const char *name, char *buf, size_t size);

/** gk_exp_folder_write() : writes a small file (len bytes) into the folder. */
gk_status gk_exp_folder_write(gk_exp_folder *f, const char *name, const void *data, size_t len, gk_error *err);

/** gk_exp_folder_write_text() : writes text and a final newline into the folder. */
gk_status gk_exp_folder_write_text(gk_exp_folder *f, const char *name, const char *text, gk_error *err);

/** gk_exp_folder_publish() : fsyncs the folder and moves it to dest (swapping
 *  with the old folder under force, which is then removed); frees f.
 *  @return : GK_OK, GK_E_EXISTS (dest appeared meanwhile), GK_E_IO. */
gk_status gk_exp_folder_publish(gk_exp_folder *f, gk_error *err);

/** gk_exp_folder_abort() : removes the temporary folder and frees f (NULL accepted). */
void gk_exp_folder_abort(gk_exp_folder *f);

/* ---------------------------------------------------------- files written */

/** gk_exp_config() : config.json of m under plan p, as text (malloc'd). */
gk_status gk_exp_config(const gk_exp_source *in, const gk_exp_plan *p, char **out, gk_error *err);

/** gk_exp_tokenizer() : the tokenizer files m holds enough to write, into f;
 *  *written names them ("tokenizer.model, tokenizer_config.json"; static).
 *  @return : GK_OK (also when the vocabulary is of a kind not written: *written
 *  says "none"); GK_E_CORRUPT for token arrays that disagree. */
gk_status gk_exp_tokenizer(const gk_model *m, gk_exp_folder *f, const char **written, gk_error *err);

/** gk_exp_generation() : generation_config.json from general.sampling.*, when
 *  m has any (*written says so). */
gk_status gk_exp_generation(const gk_model *m, gk_exp_folder *f, bool *written, gk_error *err);

/** gk_exp_card() : README.md with the general.* naming and provenance keys as
 *  model card front matter, when m has any (*written says so). */
gk_status gk_exp_card(const gk_model *m, gk_exp_folder *f, bool *written, gk_error *err);

/** gk_exp_kv_bool() : @return : true when m has key as a bool (into *b). */
bool gk_exp_kv_bool(const gk_model *m, const char *key, bool *b);

/** gk_exp_bpe_known() : *tokenizer_class (when not NULL) is what
 *  tokenizer_config.json names for the family (LlamaTokenizerFast where that
 *  class is how its tokenizer adds BOS, else PreTrainedTokenizerFast).
 *  @return : true when tokenizer.ggml.pre names a family whose tokenizer.json
 *  structure gk_exp_bpe writes (bpe.c's table). */
bool gk_exp_bpe_known(const char *pre, const char **tokenizer_class);

/** gk_exp_bpe() : tokenizer.json of m's BPE vocabulary (tokens already
 *  checked) with the normalizer, pre-tokenizer and post-processor of family
 *  pre, into f. @return : GK_OK; GK_E_UNSUPPORTED (pre not known);
 *  GK_E_CORRUPT (merges not strings); GK_E_NOMEM; the folder's errors. */
gk_status gk_exp_bpe(const gk_model *m, const char *pre, gk_exp_folder *f, gk_error *err);

/** gk_exp_shards() : writes every shard (and the index when there are
 *  several) into f, streaming each tensor from in. */
gk_status gk_exp_shards(const gk_exp_source *in, const gk_exp_plan *p, gk_exp_folder *f, gk_progress_fn progress, void *ctx,
                        gk_error *err);

/** gk_exp_format_float() : the shortest decimal that reads back as float32 v
 *  (with ".0" when integral), into buf. */
void gk_exp_format_float(double v, char *buf, size_t size);

#endif
