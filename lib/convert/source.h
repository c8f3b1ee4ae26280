/*
 * source.h - the tensors of a conversion as a virtual source the pipeline
 * reads like any input (format/file.h gk_file_virtual): each tensor's bytes
 * are made on demand, chunk by chunk, from checkpoint tensors - converted from
 * their dtype (F16/BF16/F32/F64) to the type presented (F32, or F16 or BF16
 * kept as stored: the pipeline's workers widen those), their rows permuted
 * (Q/K), experts' slices stacked - or
 * from values computed in memory (rope_freqs). Nothing is held but one read's
 * source bytes; the pipeline then turns the presented type into the output
 * type with its own converters (F16, BF16, Q8_0), as for a GGUF input.
 */
#ifndef GK_CONVERT_SOURCE_H
#define GK_CONVERT_SOURCE_H

#include "convert/checkpoint.h"
#include "ggufkit.h"

/* Where one presented tensor's values come from. */
typedef struct gk_conv_feed {
    const gk_ckpt_tensor **parts;  /* slices stacked on the slowest dimension (one, or an
                                    * expert each), or NULL for mem; malloc'd, taken over */
    size_t n_parts;
    float *mem;                    /* computed F32 values, malloc'd, taken over; or NULL */
    uint64_t rows;                 /* per part: its first (slowest) dimension */
    uint64_t width;                /* per part: elements per row of that dimension */
    uint32_t perm_groups;          /* Q/K permutation: head groups, or 0 */
    uint64_t part_rows;            /* 0: each part is its own tensor; else the parts are row
                                    * blocks of one: part i starts at source row
                                    * i * part_rows + row0 (a split gate_up_proj) */
    uint64_t row0;
    uint32_t type;                 /* presented: GK_TYPE_F32, or the 16-bit type the parts are
                                    * stored in (GK_TYPE_F16, GK_TYPE_BF16) */
} gk_conv_feed;

typedef struct gk_conv_source gk_conv_source;

/** gk_conv_source_new() : @return : an empty source or NULL. */
gk_conv_source *gk_conv_source_new(void);

/** gk_conv_source_add() : appends a feed (its arrays taken over, freed on failure
 *  too). @return : GK_OK or GK_E_NOMEM. */
gk_status gk_conv_source_add(gk_conv_source *s, gk_conv_feed *feed, gk_error *err);

/** gk_conv_source_file() : the source as a gk_file whose model (taken over)
 *  holds one presented tensor per feed, in order. s must outlive the file.
 *  @return : GK_OK or GK_E_NOMEM. */
gk_status gk_conv_source_file(gk_conv_source *s, const char *name, gk_model *model, gk_file **out,
                              gk_error *err);

/** gk_conv_source_free() : frees s and its feeds (NULL accepted). */
void gk_conv_source_free(gk_conv_source *s);

#endif
