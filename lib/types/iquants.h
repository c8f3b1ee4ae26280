/*
 * iquants.h - internal extras of the I-quant kernels beyond kernels.h.
 */
#ifndef GK_TYPES_IQUANTS_H
#define GK_TYPES_IQUANTS_H

#include <stdbool.h>

/** gk_iq3_tables_ready() : builds the IQ3_XXS / IQ3_S quantizer search tables if
 *  needed (thread-safe, once) and reports whether both are usable. */
bool gk_iq3_tables_ready(void);

#endif
