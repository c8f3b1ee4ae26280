/*
 * value.h - internal ownership rules for gk_value (its comparison, labels and
 * the UTF-8 checks are public: ggufkit.h, "Metadata values").
 *
 * A gk_value owned by the model owns its memory:
 *   STR: s.ptr is malloc'ed and NUL terminated.
 *   ARR of numbers/bools: arr.data is one malloc'ed block of packed host values.
 *   ARR of STR: arr.data is one malloc'ed block: gk_str[n] followed by the bytes
 *               (each NUL terminated) the entries point into.
 *   ARR of ARR: arr.data is a malloc'ed gk_value[n], each owning its own memory.
 * In a preview (GK_OPEN_PREVIEW) arr.data holds only gk_value_held() elements.
 */
#ifndef GK_META_VALUE_H
#define GK_META_VALUE_H

#include "ggufkit.h"
#include "shared/numtext.h"   /* gk_format_double: values print their numbers with it */

/** gk_value_held() : @return : the elements of array v in memory: arr.n less
 *  those a preview left unread (0 for a non-array). */
static inline uint64_t gk_value_held(const gk_value *v) {
    return v->type == GK_V_ARR ? v->arr.n - v->arr.n_unread : 0;
}

/** gk_value_copy() : deep-copies src into *dst. @return : GK_OK or GK_E_NOMEM. */
gk_status gk_value_copy(gk_value *dst, const gk_value *src);

/** gk_value_free() : releases what v owns and leaves it an empty U8. */
void gk_value_free(gk_value *v);

/** gk_value_first_diff() : for two arrays of the same element type, @return : the
 *  first index at which they differ (an element, or the end of the shorter one),
 *  or UINT64_MAX when they are equal. Arrays of other element types, and
 *  non-arrays, give 0 when they differ and UINT64_MAX when they are equal. Of a
 *  preview only the held elements are compared (a difference past them is
 *  reported at the first unread index). */
uint64_t gk_value_first_diff(const gk_value *a, const gk_value *b);

/** gk_str_array_pack() : builds the single-block form of a string array from n
 *  strings. @return : the block (free with free()) or NULL when out of memory. */
gk_str *gk_str_array_pack(const gk_str *items, uint64_t n);

/** gk_vtype_elem_size() : @return : bytes of one element of type t as held in memory
 *  (packed host values; sizeof(gk_str) for STR, sizeof(gk_value) for ARR). */
size_t gk_vtype_elem_size(gk_vtype t);

/** gk_vtype_is_integer() : @return : true for the eight integer types (not BOOL). */
static inline bool gk_vtype_is_integer(gk_vtype t) {
    return t == GK_V_U8 || t == GK_V_I8 || t == GK_V_U16 || t == GK_V_I16 || t == GK_V_U32 ||
           t == GK_V_I32 || t == GK_V_U64 || t == GK_V_I64;
}

/** gk_utf8_bad_len() : where gk_utf8_char_len is 0, @return : bytes of the
 *  ill-formed part at s (at least 1; Unicode's "maximal subpart") that one U+FFFD
 *  stands for. */
size_t gk_utf8_bad_len(const char *s, uint64_t n);


#endif
