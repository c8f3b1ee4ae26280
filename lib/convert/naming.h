/*
 * naming.h - the general.* naming a converted model gets, as the reference's
 * gguf-py metadata heuristics derive it from a model id (the folder's name, or
 * config.json's _name_or_path): the title-cased name, the basename, finetune,
 * version and size label read from the id's dash-separated parts, and the size
 * label computed from the parameter count ("115K", "4x116K").
 */
#ifndef GK_CONVERT_NAMING_H
#define GK_CONVERT_NAMING_H

#include <stddef.h>
#include <stdint.h>

/* What a model id yields; each field malloc'd or NULL. */
typedef struct gk_conv_id {
    char *name;           /* the full name part, title-cased (general.name) */
    char *organization;
    char *basename;
    char *finetune;
    char *version;
    char *size_label;
} gk_conv_id;

/** gk_conv_parse_id() : splits model_id ("org/Name-7B-Instruct-v0.3") as the
 *  reference's Metadata.get_model_id_components does, total_params deciding
 *  whether a size-like part is the model's size or a context length.
 *  @return : 0, or -1 when out of memory (out cleared). */
int gk_conv_parse_id(const char *model_id, int64_t total_params, gk_conv_id *out);

/** gk_conv_id_free() : frees the fields of id (not id). */
void gk_conv_id_free(gk_conv_id *id);

/** gk_conv_title() : the reference's id_to_title: dashes become spaces and each
 *  all-lowercase word not starting with a digit nor a version ("v1.2") is
 *  title-cased. @return : a malloc'd string or NULL. */
char *gk_conv_title(const char *s);

/** gk_conv_size_label() : the size label of a parameter count: "115K", "1.2B",
 *  "4x116K" for expert_count > 0 (shared + expert_params per expert).
 *  Writes it to buf (size bytes). */
void gk_conv_size_label(uint64_t total, uint64_t shared, uint64_t expert_params, uint64_t expert_count,
                        char *buf, size_t size);

#endif
