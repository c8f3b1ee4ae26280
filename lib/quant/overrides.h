/*
 * overrides.h - applying --override-kv pairs to a model (quant/plan.c). The
 * pair itself (gk_kv_override) and its parser are public: ggufkit.h.
 */
#ifndef GK_QUANT_OVERRIDES_H
#define GK_QUANT_OVERRIDES_H

#include "ggufkit.h"

/** gk_kv_override_apply() : sets the pair at the end of m's metadata, as
 *  llama-quantize (September 2026) does, whatever type an existing key had: an
 *  int as UINT32 of its magnitude cut to 32 bits (-5 gives 5), a float as F32, a
 *  bool, a string. A layout key's value is checked (general.alignment a power
 *  of two, split.* refused). */
gk_status gk_kv_override_apply(gk_model *m, const gk_kv_override *o, gk_error *err);

#endif
