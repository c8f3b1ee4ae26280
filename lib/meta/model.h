/*
 * model.h - the layout of gk_model, shared by the reader and the writer.
 */
#ifndef GK_META_MODEL_H
#define GK_META_MODEL_H

#include "ggufkit.h"
#include "meta/value.h"

struct gk_model {
    uint32_t version;       /* 1, 2 or 3 */
    bool big_endian;
    gk_kv *kvs;             /* key.ptr malloc'ed and NUL terminated; value owned */
    size_t n_kv, cap_kv;
    gk_tensor *tensors;     /* name.ptr malloc'ed and NUL terminated */
    size_t n_tensors, cap_tensors;
};

/** gk_model_append_kv_owned() : appends a pair taking ownership of key (malloc'ed)
 *  and value. No duplicate check. @return : GK_OK or GK_E_NOMEM (nothing taken). */
gk_status gk_model_append_kv_owned(gk_model *m, char *key, uint64_t key_len, gk_value *value,
                                   int64_t file_offset);

/** gk_model_append_tensor_owned() : appends a directory entry taking ownership of
 *  t->name.ptr. No checks. @return : GK_OK or GK_E_NOMEM (nothing taken). */
gk_status gk_model_append_tensor_owned(gk_model *m, const gk_tensor *t);

/** gk_tensor_nbytes() : computes the byte size of a tensor of type and dims.
 *  @return : GK_OK, GK_E_TENSOR_TYPE, GK_E_ROW_BLOCK or GK_E_DIM_OVERFLOW. */
gk_status gk_tensor_nbytes(uint32_t type, const uint64_t ne[GK_MAX_DIMS], uint64_t *out);

/** gk_layout_value_check() : the rule every writer applies to a value it is asked
 *  to store under a layout key, even when forced: general.alignment a UINT32 power
 *  of two the writer can honor, split.no and split.count UINT16,
 *  split.tensors.count INT32.
 *  @return : GK_OK (also for any other key), or GK_E_ALIGN_VALUE / GK_E_ARG naming key. */
gk_status gk_layout_value_check(const char *key, const gk_value *v, gk_error *err);

/** gk_align_up() : @return : x rounded up to a multiple of a (a > 0). */
static inline uint64_t gk_align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

#endif
