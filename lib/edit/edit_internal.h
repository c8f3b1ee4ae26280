/*
 * edit_internal.h - what the edit module's files share: JSON documents whose
 * numbers and strings are kept exactly as written, and the conversion of JSON
 * values and text to metadata values.
 */
#ifndef GK_EDIT_INTERNAL_H
#define GK_EDIT_INTERNAL_H

#include <cjson/cJSON.h>

#include "ggufkit.h"
#include "meta/value.h"

/* The exact text of one scalar JSON value (a number as written, a string decoded). */
typedef struct json_tok {
    char *bytes;        /* numbers: the token text; strings: the decoded bytes (NUL terminated) */
    size_t len;
    bool is_string;
} json_tok;

/* A parsed JSON document. Every string and number item's valueint is the index of
 * its exact text in toks (cJSON keeps only a double and a C string). */
typedef struct json_doc {
    cJSON *root;
    json_tok *toks;
    size_t n_toks;
} json_doc;

/** edit_json_parse() : parses len bytes of JSON into *doc.
 *  @return : GK_OK, GK_E_ARG (not JSON: message with the position), GK_E_NOMEM. */
gk_status edit_json_parse(const char *text, size_t len, json_doc *doc, gk_error *err);

/** edit_json_free() : releases a document (its members; doc itself is the caller's). */
void edit_json_free(json_doc *doc);

/** edit_json_tok() : @return : the exact text of a string or number item of doc, or NULL. */
const json_tok *edit_json_tok(const json_doc *doc, const cJSON *item);

/* A type as requested: nothing (keep the key's or infer), a chain of types (a
 * scalar; ARR followed by its element type, and so on), or "infer from JSON". */
enum { TS_NONE = 0, TS_CHAIN, TS_JSON };
#define TYPE_CHAIN_MAX (GK_MAX_ARRAY_DEPTH + 1)

typedef struct type_spec {
    int kind;
    int depth;                       /* entries used in chain (TS_CHAIN) */
    gk_vtype chain[TYPE_CHAIN_MAX];  /* ARR entries may end the chain: element inferred */
} type_spec;

/** edit_type_parse() : reads a type name: u8 i8 u16 i16 u32 i32 u64 i64 f32 f64
 *  bool str (or the dump names UINT8 ... STRING, any case), json, array[T].
 *  @return : true on success. */
bool edit_type_parse(const char *name, type_spec *out);

/** edit_value_from_json() : converts item of doc to a value of the requested chain
 *  (depth 0: the template's type when tmpl is not NULL, else inferred). tmpl is
 *  the value being replaced (or NULL); nested arrays follow its element types.
 *  @return : GK_OK, GK_E_ARG / GK_E_TYPE_MISMATCH (message names key), GK_E_NOMEM. */
gk_status edit_value_from_json(const json_doc *doc, const cJSON *item, const gk_vtype *chain,
                               int depth, const gk_value *tmpl, const char *key, gk_value *out,
                               gk_error *err);

/** edit_scalar_from_text() : parses n bytes of text as a scalar of type t.
 *  @return : GK_OK, GK_E_ARG (does not parse / does not fit: message names key). */
gk_status edit_scalar_from_text(gk_vtype t, const char *text, size_t n, const char *key,
                                gk_value *out, gk_error *err);

/** edit_infer_text() : the type a bare command-line value gets for a new key. */
gk_vtype edit_infer_text(const char *text, size_t n);


/** edit_adopt_doc() : hands doc's contents to e (freed with it).
 *  @return : the document as e keeps it, or NULL when out of memory (doc untouched). */
const json_doc *edit_adopt_doc(gk_edit *e, json_doc *doc);

/** edit_add_set_json() : queues "set key to JSON item" (item inside a document e
 *  adopted) with the requested type (TS_NONE: the key's type, the well-known
 *  type, or inferred). */
gk_status edit_add_set_json(gk_edit *e, const char *key, const json_doc *doc, const cJSON *item,
                            const type_spec *type, gk_error *err);

#endif
