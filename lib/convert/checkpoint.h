/*
 * checkpoint.h - the tensors of a Hugging Face checkpoint folder: one
 * model.safetensors, or the shards model.safetensors.index.json maps tensors to,
 * or (without an index) every model*.safetensors. Each part is a checked
 * safetensors file (safetensors.h); the set is checked as a whole: every shard
 * the index names is there, the index and the parts name the same tensors, and
 * no tensor is in two parts. Tensors come in the order the reference converter
 * takes them: parts by file name, within a part by tensor name.
 */
#ifndef GK_CONVERT_CHECKPOINT_H
#define GK_CONVERT_CHECKPOINT_H

#include "convert/safetensors.h"

typedef struct gk_ckpt gk_ckpt;

/* A tensor of the checkpoint and the part that holds it. */
typedef struct gk_ckpt_tensor {
    const gk_st_tensor *t;
    gk_st_file *part;
} gk_ckpt_tensor;

/** gk_ckpt_open() : opens the checkpoint in folder dir.
 *  @return : GK_OK; GK_E_NOT_FOUND (no safetensors file, or a shard the index
 *            names is missing); GK_E_CORRUPT (a bad index, a tensor in two parts,
 *            index and parts disagreeing); a part's error (gk_st_open). err->file
 *            names the file it is about. */
gk_status gk_ckpt_open(const char *dir, gk_ckpt **out, gk_error *err);

/** gk_ckpt_count() / gk_ckpt_at() : the tensors, in conversion order. */
size_t gk_ckpt_count(const gk_ckpt *c);
const gk_ckpt_tensor *gk_ckpt_at(const gk_ckpt *c, size_t i);

/** gk_ckpt_find() : @return : the tensor called name, or NULL. */
const gk_ckpt_tensor *gk_ckpt_find(const gk_ckpt *c, const char *name);

/** gk_ckpt_part_count() / gk_ckpt_part() : the safetensors files, by name. */
size_t gk_ckpt_part_count(const gk_ckpt *c);
gk_st_file *gk_ckpt_part(const gk_ckpt *c, size_t i);

/** gk_ckpt_close() : closes every part (NULL accepted). */
void gk_ckpt_close(gk_ckpt *c);

#endif
