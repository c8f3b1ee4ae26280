/*
 * ggufkit.h - public interface of libggufkit.
 *
 * libggufkit reads, validates, edits and writes GGUF files, the container used by
 * llama.cpp and most local-LLM tools. Every function reports failure through a
 * gk_status return and, where given, a caller-owned gk_error that names what went
 * wrong and the byte offset in the file where it happened. The library never
 * prints, never exits and never aborts on bad input.
 *
 * The file grammar (all integers in the file's byte order, little-endian unless the
 * file was converted):
 *
 *   file        := header kv* tensor_info* padding data
 *   header      := magic:"GGUF" version:u32 n_tensors:count n_kv:count
 *   count       := u64 (v2, v3) | u32 (v1)
 *   kv          := key:string type:u32 value(type)
 *   string      := len:count bytes[len]            (UTF-8, not NUL terminated)
 *   value(t)    := u8|i8|u16|i16|u32|i32|f32|bool(u8 0/1)|string|u64|i64|f64
 *                | array := elem_type:u32 n:count value(elem_type)*n
 *   tensor_info := name:string n_dims:u32 ne:u64[n_dims] (u32 in v1)
 *                  type:u32 offset:u64
 *   padding     := zero bytes up to align_up(here, alignment)
 *   data        := tensor bytes, each at data_start + offset, offsets aligned
 *
 * alignment is the u32 value of `general.alignment`, or 32 when absent.
 * ne[0] is the row length (fastest varying). Byte order is not stored; a
 * version whose low 16 bits read as zero in host order marks the other order.
 *
 * Handles are opaque except for the small read-only views (gk_kv, gk_tensor,
 * gk_value, gk_type_info) that iterators fill or return.
 *
 * Arrays, one rule: an array the library allocates for the caller comes back
 * through an out-pointer with its element count beside it, `T **out, size_t *n`
 * (or such a pointer and count in a result struct), never with a terminator or
 * as the return value; on failure *out is NULL and *n is 0. The caller owns it
 * and releases it as the function's doc says: free() for plain elements; each
 * handle closed, then free(), for an array of handles; the struct's gk_*_free
 * for a result struct (it releases every array in it, the struct itself stays
 * the caller's). An array that a handle or a table keeps is not handed over:
 * it is read through gk_*_count and gk_*_at accessors (NULL out of range),
 * valid as long as the handle lives unmodified. A result of small fixed size
 * goes into a caller buffer of the size the function names (GK_HASH_HEX_MAX,
 * out[4]). The one exception is marked where it is (gk_split_set_merged).
 *
 * Two tiers. The STABLE API is every declaration outside the
 * `#ifdef GGUFKIT_EXPERIMENTAL` blocks: a function of it keeps its name,
 * signature and meaning within a major version (libggufkit.so.0), so a program
 * built against an older 0.x header keeps working with a newer library. The
 * EXPERIMENTAL API is declared only when the program defines
 * GGUFKIT_EXPERIMENTAL before including this header (as zstd's
 * ZSTD_STATIC_LINKING_ONLY): the low-level output sink, the parser of
 * --override-kv text, the index, diff and convert front ends, and the
 * test-control hook. It may change in any release;
 * a program using it must be built against the exact library version it runs
 * with (the ggufkit command is). Both tiers are exported by the shared library;
 * nothing else is.
 *
 * Option structs (gk_*_opts) start with a `size` field that the caller sets to
 * the struct's size with GK_OPTS_INIT, so that later versions can append
 * fields: the library refuses a size it does not know (GK_E_ARG).
 *
 * The version is in ggufkit_version.h (compile time: GK_VERSION_STRING,
 * GK_VERSION_NUMBER) and gk_version() / gk_version_number() (the library loaded).
 */
#ifndef GGUFKIT_H
#define GGUFKIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "ggufkit_version.h"

/* GK_API marks a function of the public interface: the shared library exports
 * those and hides every other symbol. */
#if defined(__GNUC__) || defined(__clang__)
#define GK_API __attribute__((visibility("default")))
#else
#define GK_API
#endif

/** gk_version() : @return : the version of the library loaded ("0.1.0"), which
 *  may be newer than GK_VERSION_STRING, the header's. A static string. */
GK_API const char *gk_version(void);
/** gk_version_number() : @return : the same as MAJOR * 10000 + MINOR * 100 + PATCH. */
GK_API unsigned gk_version_number(void);

/* Sets an option struct's size field (the first) in its initializer:
 *     gk_write_opts wo = { GK_OPTS_INIT(gk_write_opts), .threads = 4 };
 * Every other field not named is zero, which always means the default. */
#define GK_OPTS_INIT(type) .size = sizeof(type)

/* ======================================================================== */
/* Status codes and errors                                                  */
/* ======================================================================== */

typedef enum gk_status {
    GK_OK = 0,
    /* environment */
    GK_E_IO,              /* a read, write, fsync or rename failed */
    GK_E_NOMEM,           /* allocation failed */
    GK_E_ARG,             /* invalid argument from the caller */
    GK_E_NOT_FOUND,       /* key or tensor not present */
    GK_E_TYPE_MISMATCH,   /* value is not of the requested type */
    GK_E_EXISTS,          /* destination exists, or name already taken */
    GK_E_SAME_FILE,       /* output would overwrite an input */
    GK_E_UNSUPPORTED,     /* valid but not implemented for this operation */
    /* file structure */
    GK_E_MAGIC,           /* first four bytes are not "GGUF" */
    GK_E_VERSION,         /* version other than 1, 2 or 3 */
    GK_E_TRUNCATED,       /* file ends inside a field */
    GK_E_COUNT,           /* a count or length exceeds the bytes that remain */
    GK_E_VALUE_TYPE,      /* unknown metadata value type */
    GK_E_BOOL,            /* bool byte other than 0 or 1 */
    GK_E_UTF8,            /* key or string value is not valid UTF-8 */
    GK_E_EMPTY_KEY,       /* key of length zero */
    GK_E_DUP_KEY,         /* the same key twice */
    GK_E_NESTING,         /* arrays nested deeper than GK_MAX_ARRAY_DEPTH */
    GK_E_ALIGN_TYPE,      /* general.alignment is not a u32 */
    GK_E_ALIGN_VALUE,     /* general.alignment zero, or neither power of two nor multiple of 8 */
    GK_E_EMPTY_NAME,      /* tensor name of length zero */
    GK_E_DUP_TENSOR,      /* the same tensor name twice */
    GK_E_NDIMS,           /* more than GK_MAX_DIMS dimensions */
    GK_E_DIM,             /* a dimension is negative when read as int64 */
    GK_E_DIM_OVERFLOW,    /* product of dimensions or byte size overflows */
    GK_E_TENSOR_TYPE,     /* unknown tensor type id */
    GK_E_TENSOR_TYPE_RETIRED, /* type id removed from ggml (4, 5, 31-33, 36-38) */
    GK_E_ROW_BLOCK,       /* ne[0] not a multiple of the type's block size */
    GK_E_OFFSET_ALIGN,    /* tensor offset not a multiple of the alignment */
    GK_E_DATA_EOF,        /* tensor data runs past the end of the file */
    GK_E_OVERLAP,         /* two tensors' data overlap */
    GK_E_STRING_TOO_LONG, /* string longer than the format or a limit allows */
    GK_E_CORRUPT,         /* other inconsistency (described in the message) */
    GK_E_INTERRUPTED,     /* stopped by the caller (progress callback) */
    GK_E_LOCKED,          /* another process holds the file's lock longer than the wait allows */
    GK_E_JOURNAL,         /* an interrupted in-place edit left its journal: recover first */
    GK_STATUS_COUNT
} gk_status;

/* Where a rule comes from, for findings and errors. */
typedef enum gk_rule {
    GK_RULE_SPEC = 0,     /* the GGUF specification */
    GK_RULE_LLAMACPP,     /* llama.cpp / ggml's loader */
    GK_RULE_PYTHON,       /* the gguf python reader */
    GK_RULE_SCHEMA        /* model-family conventions (verify --schema) */
} gk_rule;

#define GK_MESSAGE_MAX 512

#define GK_ERROR_FILE_MAX 4096

/* A caller-owned error report. offset is a byte offset in the file, or -1.
 * file names the file the error is about when it is not the one the caller
 * passed (an input read while writing an output, a missing shard of a set), or
 * is "" (see gk_error_about). */
typedef struct gk_error {
    gk_status code;
    gk_rule rule;
    int64_t offset;
    char message[GK_MESSAGE_MAX];
    char file[GK_ERROR_FILE_MAX];
} gk_error;

/* A non-fatal observation made while reading (see gk_file_warnings). */
typedef struct gk_warning {
    gk_rule rule;        /* whose rule the file breaks */
    int64_t offset;      /* byte offset in the file, or -1 */
    char message[GK_MESSAGE_MAX];
} gk_warning;

/** gk_status_name() :
 *  @return : a short stable identifier of a status ("truncated", "dup-key"...). */
GK_API const char *gk_status_name(gk_status s);

/** gk_error_clear() : resets an error report to GK_OK, offset -1, empty message. */
GK_API void gk_error_clear(gk_error *err);

/** gk_error_set() : fills an error report (printf-style message) and
 *  @return : code, so callers can `return gk_error_set(err, ...)`. err may be NULL. */
GK_API gk_status gk_error_set(gk_error *err, gk_status code, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** gk_error_about() : records in err (NULL accepted) that the error is about the
 *  file at path ("" or NULL: the caller's own file). gk_error_set and
 *  gk_error_clear reset it. */
GK_API void gk_error_about(gk_error *err, const char *path);

/* ======================================================================== */
/* Type table                                                               */
/* ======================================================================== */

#define GK_TYPE_COUNT 43   /* ids 0..42 */
#define GK_MAX_DIMS 4
/* Longest tensor name the GGUF spec allows, in bytes (ggml's loader takes one fewer). */
#define GK_MAX_TENSOR_NAME 64
#define GK_MAX_ARRAY_DEPTH 16
#define GK_DEFAULT_ALIGNMENT 32
#define GK_MAX_WRITE_ALIGNMENT (16u << 20)   /* the writer refuses larger alignments */

/* ggml tensor type ids (as stored in the file). */
typedef enum gk_type {
    GK_TYPE_F32 = 0, GK_TYPE_F16 = 1, GK_TYPE_Q4_0 = 2, GK_TYPE_Q4_1 = 3,
    GK_TYPE_Q5_0 = 6, GK_TYPE_Q5_1 = 7, GK_TYPE_Q8_0 = 8, GK_TYPE_Q8_1 = 9,
    GK_TYPE_Q2_K = 10, GK_TYPE_Q3_K = 11, GK_TYPE_Q4_K = 12, GK_TYPE_Q5_K = 13,
    GK_TYPE_Q6_K = 14, GK_TYPE_Q8_K = 15, GK_TYPE_IQ2_XXS = 16, GK_TYPE_IQ2_XS = 17,
    GK_TYPE_IQ3_XXS = 18, GK_TYPE_IQ1_S = 19, GK_TYPE_IQ4_NL = 20, GK_TYPE_IQ3_S = 21,
    GK_TYPE_IQ2_S = 22, GK_TYPE_IQ4_XS = 23, GK_TYPE_I8 = 24, GK_TYPE_I16 = 25,
    GK_TYPE_I32 = 26, GK_TYPE_I64 = 27, GK_TYPE_F64 = 28, GK_TYPE_IQ1_M = 29,
    GK_TYPE_BF16 = 30, GK_TYPE_TQ1_0 = 34, GK_TYPE_TQ2_0 = 35, GK_TYPE_MXFP4 = 39,
    GK_TYPE_NVFP4 = 40, GK_TYPE_Q1_0 = 41, GK_TYPE_Q2_0 = 42
} gk_type;

/* Quantize whole rows: nrows rows of n_per_row floats from src into dst blocks.
 * imatrix (may be NULL) holds n_per_row importance weights shared by all rows. */
typedef void (*gk_quantize_fn)(const float *src, void *dst, int64_t nrows,
                               int64_t n_per_row, const float *imatrix);
/* Dequantize n elements (a multiple of the block size) from src blocks to dst. */
typedef void (*gk_dequantize_fn)(const void *src, float *dst, int64_t n);
/* Quantizes nrows rows of n_per_row binary16 values (F16 data, host byte order)
 * to exactly the bytes quantize gives for their F32 values without weights. */
typedef void (*gk_quantize_from_f16_fn)(const uint16_t *src, void *dst, int64_t nrows,
                                        int64_t n_per_row);
/* Reverse the byte order of nblocks consecutive blocks in place (the swap is its
 * own inverse: it turns the little-endian layout into the big-endian one and back). */
typedef void (*gk_byteswap_fn)(void *blocks, int64_t nblocks);

/* A value a block holds that its format cannot mean: a scale or value that is
 * not finite, or a field outside the range the format bounds it to. */
typedef struct gk_block_fault {
    int64_t block;             /* block index in the run checked (element, for plain types) */
    uint32_t byte;             /* offset of the field in its block */
    char field[24];            /* "d", "dmin", "value", "bsums[3]" */
    double value;              /* the field's value */
    char why[64];              /* "not finite", "0xff is NaN in E8M0", ... */
} gk_block_fault;
/* Called for each fault; returning false stops the check. */
typedef bool (*gk_block_fault_fn)(void *ctx, const gk_block_fault *fault);
/* Checks nblocks consecutive blocks in host byte order. @return : false when fn stopped it. */
typedef bool (*gk_check_fn)(const void *blocks, int64_t nblocks, gk_block_fault_fn fn, void *ctx);

/* Facts of one tensor type. Retired and unknown ids have name == NULL. */
typedef struct gk_type_info {
    uint32_t id;
    const char *name;          /* "Q4_K" */
    uint32_t block_elems;      /* elements per block (1 for plain types) */
    uint32_t block_bytes;      /* bytes per block */
    bool quantized;            /* a block format (as opposed to plain numbers) */
    bool retired;              /* id once used by ggml and since removed */
    gk_dequantize_fn dequantize;  /* NULL when not available */
    gk_quantize_fn quantize;      /* NULL when not available */
    gk_byteswap_fn byteswap;      /* NULL when not available */
    bool needs_imatrix;        /* quantizing without an importance matrix is refused */
    gk_check_fn check;         /* finds values the format cannot mean; NULL for integers */
    gk_quantize_from_f16_fn quantize_from_f16; /* F16 rows straight to this type, without
                                                  weights; NULL: only through F32 */
} gk_type_info;

/** gk_type_get() :
 *  @return : the facts of type id, or NULL when id is not a known, current type. */
GK_API const gk_type_info *gk_type_get(uint32_t id);

/** gk_type_lookup() :
 *  @return : the facts of a type by name (case-insensitive, "q4_k"), or NULL. */
GK_API const gk_type_info *gk_type_lookup(const char *name);

/** gk_type_is_retired() : @return : true for ids ggml once used and removed. */
GK_API bool gk_type_is_retired(uint32_t id);

/** gk_type_retired_name() : @return : the old name of a retired id ("Q4_2"), else NULL. */
GK_API const char *gk_type_retired_name(uint32_t id);

/** gk_type_row_bytes() :
 *  @return : bytes of a row of n elements of type id, or 0 if n is not a whole
 *            number of blocks or the type is unknown. */
GK_API uint64_t gk_type_row_bytes(uint32_t id, uint64_t n);

/** gk_kernels_name() : which kernels the type table runs: "scalar", "avx2" or
 *  "avx512". The best level the processor supports is used unless the environment
 *  variable GGUFKIT_KERNELS (scalar|avx2|avx512, read once) asks for less; a request
 *  above the processor, or a value not understood, runs the best supported level
 *  and the name says so in parentheses ("avx2 (GGUFKIT_KERNELS=avx512: not on this
 *  processor)"). Every level gives bit-identical results.
 *  @return : a static string. */
GK_API const char *gk_kernels_name(void);

/** gk_ftype_name() : names llama.cpp's file type numbers (`general.file_type`,
 *  llama.h's enum llama_ftype) the way llama-quantize does: 15 -> "Q4_K_M",
 *  0 -> "F32", 1024 -> "GUESSED". Numbers llama.cpp dropped keep their old names.
 *  @return : a static string, or NULL for a number llama.cpp never used. */
GK_API const char *gk_ftype_name(uint32_t ftype);

/** gk_f16_from_f32() : @return : the IEEE binary16 bits nearest to f (ties to
 *  even; NaN stays NaN), as ggml converts F32 to F16. */
GK_API uint16_t gk_f16_from_f32(float f);
/** gk_f16_to_f32() : @return : the float binary16 bits h stand for (exact). */
GK_API float gk_f16_to_f32(uint16_t h);

/* ======================================================================== */
/* Metadata values                                                          */
/* ======================================================================== */

typedef enum gk_vtype {
    GK_V_U8 = 0, GK_V_I8 = 1, GK_V_U16 = 2, GK_V_I16 = 3, GK_V_U32 = 4, GK_V_I32 = 5,
    GK_V_F32 = 6, GK_V_BOOL = 7, GK_V_STR = 8, GK_V_ARR = 9, GK_V_U64 = 10,
    GK_V_I64 = 11, GK_V_F64 = 12,
    GK_V_COUNT
} gk_vtype;

/* A string: bytes are not NUL terminated in general (ptr[len] is NUL for strings
 * the library allocates, which is all of them). */
typedef struct gk_str {
    const char *ptr;
    uint64_t len;
} gk_str;

/* A metadata value. Arrays hold their elements packed in host order:
 *   numbers and bools: an array of the C type (uint8_t, int16_t, float, ...;
 *   bool as uint8_t 0/1), strings: gk_str[], arrays: gk_value[] (each GK_V_ARR). */
typedef struct gk_value {
    gk_vtype type;
    union {
        uint64_t u;        /* U8 U16 U32 U64 */
        int64_t i;         /* I8 I16 I32 I64 */
        double f;          /* F32 (exactly widened) F64 */
        bool b;            /* BOOL */
        gk_str s;          /* STR */
        struct {
            gk_vtype elem;
            uint64_t n;          /* elements in the file */
            const void *data;    /* the first n - n_unread of them */
            uint64_t n_unread;   /* 0, but for the long arrays of a preview (GK_OPEN_PREVIEW) */
        } arr;             /* ARR */
    };
} gk_value;

/* One key/value pair as it stands in the model. */
typedef struct gk_kv {
    gk_str key;
    gk_value value;
    int64_t file_offset;   /* where the pair starts in the file read, or -1 if new */
} gk_kv;

/** gk_vtype_name() : @return : "UINT32", "STRING", "ARRAY" ... (the dump names) or NULL. */
GK_API const char *gk_vtype_name(gk_vtype t);

/** gk_vtype_short_name() : @return : "u32", "str", "arr" ... or NULL. */
GK_API const char *gk_vtype_short_name(gk_vtype t);

/** gk_vtype_size() : @return : bytes of one scalar value in the file (0 for STR and ARR). */
GK_API size_t gk_vtype_size(gk_vtype t);

/** gk_value_equal() : @return : true when a and b have the same type and the same
 *  contents: numbers bit for bit as the file holds them (an F32 compared as the
 *  float it is written as; NaN equals the same NaN, and 0.0 differs from -0.0,
 *  as their bytes in a file do), strings byte for byte, arrays element by
 *  element, nested arrays recursively. */
GK_API bool gk_value_equal(const gk_value *a, const gk_value *b);

/* The two spellings of a value's type. */
typedef enum gk_label_style {
    GK_LABEL_SHORT,   /* u32, str, array[str], array[array[i32]]: edit's messages */
    GK_LABEL_NAME,    /* UINT32, STRING, [STRING], [[INT32]]: the listings */
} gk_label_style;

/** gk_value_type_label() : writes the type label of v into buf (size bytes, cut
 *  to fit). Nested arrays are labelled through their first element; an empty
 *  inner array shows as array / ARRAY. */
GK_API void gk_value_type_label(const gk_value *v, gk_label_style style, char *buf, size_t size);

/** gk_format_double() : the shortest text that reads back as d (NaN, Infinity,
 *  -Infinity as Python's json writes them; "3.0" rather than "3"). */
GK_API void gk_format_double(char *buf, size_t size, double d);

/** gk_utf8_char_len() : @return : bytes of the well-formed UTF-8 character that
 *  starts s (of n bytes left), or 0 when none does (bad lead byte, overlong form,
 *  surrogate, past U+10FFFF, cut short). */
GK_API size_t gk_utf8_char_len(const char *s, uint64_t n);
/** gk_utf8_valid() : @return : true if the n bytes at s are well-formed UTF-8. */
GK_API bool gk_utf8_valid(const char *s, uint64_t n);

/* What gk_utf8_repair replaces by U+FFFD. */
typedef enum gk_utf8_repair_rule {
    GK_UTF8_REPAIR_MAXIMAL,   /* each maximal ill-formed part; NUL bytes kept
                               * (as Python decodes with "replace": dump, info, diff) */
    GK_UTF8_REPAIR_BYTES,     /* each byte that starts no well-formed character, and
                               * each NUL byte (text for a NUL-ended string: index) */
} gk_utf8_repair_rule;

/** gk_utf8_repair() : copies the n bytes at s with ill-formed parts replaced by
 *  U+FFFD under rule; *out_len (when not NULL) gets the copy's length.
 *  @return : the malloc'ed, NUL-terminated copy, or NULL when out of memory. */
GK_API char *gk_utf8_repair(const char *s, uint64_t n, gk_utf8_repair_rule rule, uint64_t *out_len);

/* ======================================================================== */
/* The in-memory model: ordered metadata and the tensor directory           */
/* ======================================================================== */

typedef struct gk_model gk_model;

/* One tensor directory entry. */
typedef struct gk_tensor {
    gk_str name;
    uint32_t n_dims;
    uint64_t ne[GK_MAX_DIMS];   /* unused dimensions are 1 */
    uint32_t type;
    uint64_t offset;            /* relative to the data section */
    uint64_t nbytes;            /* bytes of tensor data; 0 for a type ggufkit does not
                                   know (kept only by a lenient open: its size is unknown) */
    int64_t file_offset;        /* where the entry starts in the file read, or -1 */
} gk_tensor;

/** gk_model_new() : @return : an empty model (v3, little-endian, alignment 32) or NULL. */
GK_API gk_model *gk_model_new(void);

/** gk_model_clone() : @return : a deep copy of m, or NULL when out of memory. */
GK_API gk_model *gk_model_clone(const gk_model *m);

/** gk_model_free() : releases a model (NULL is accepted). */
GK_API void gk_model_free(gk_model *m);

/** gk_model_version() : @return : GGUF version the model was read as (or will be written as). */
GK_API uint32_t gk_model_version(const gk_model *m);
/** gk_model_set_version() : sets the version used when writing (2 or 3). */
GK_API gk_status gk_model_set_version(gk_model *m, uint32_t version, gk_error *err);
/** gk_model_big_endian() : @return : true if the model was read from / will be written in big-endian. */
GK_API bool gk_model_big_endian(const gk_model *m);
/** gk_model_set_big_endian() : chooses the byte order used when writing. */
GK_API void gk_model_set_big_endian(gk_model *m, bool big);
/** gk_model_alignment() : @return : general.alignment when valid, else 32. */
GK_API uint32_t gk_model_alignment(const gk_model *m);

/** gk_kv_count() : @return : number of key/value pairs. */
GK_API size_t gk_kv_count(const gk_model *m);
/** gk_kv_at() : @return : pair i (0-based, file order) or NULL when out of range.
 *  The pointer stays valid until the model is next modified. */
GK_API const gk_kv *gk_kv_at(const gk_model *m, size_t i);
/** gk_kv_find() : @return : the index of key, or -1. */
GK_API int64_t gk_kv_find(const gk_model *m, const char *key);
/** gk_kv_get() : @return : the value of key, or NULL. */
GK_API const gk_value *gk_kv_get(const gk_model *m, const char *key);

/** gk_kv_get_uint() : reads an unsigned or non-negative signed integer value.
 *  @return : GK_OK, GK_E_NOT_FOUND, or GK_E_TYPE_MISMATCH (not an integer, or negative). */
GK_API gk_status gk_kv_get_uint(const gk_model *m, const char *key, uint64_t *out);
/** gk_kv_get_int() : reads any integer value that fits int64. */
GK_API gk_status gk_kv_get_int(const gk_model *m, const char *key, int64_t *out);
/** gk_kv_get_float() : reads an F32/F64 (or integer) value as double. */
GK_API gk_status gk_kv_get_float(const gk_model *m, const char *key, double *out);
/** gk_kv_get_str() : reads a string value (pointer into the model). */
GK_API gk_status gk_kv_get_str(const gk_model *m, const char *key, gk_str *out);

/** gk_kv_set() : sets key to a deep copy of value. An existing key keeps its
 *  position and takes the new value (whatever its type); a new key is appended.
 *  @return : GK_OK, GK_E_ARG (bad key or value), GK_E_NOMEM. */
GK_API gk_status gk_kv_set(gk_model *m, const char *key, const gk_value *value, gk_error *err);
/** gk_kv_set_last() : like gk_kv_set, but an existing key is removed first so the
 *  pair ends up last (the way llama.cpp's writer sets keys). */
GK_API gk_status gk_kv_set_last(gk_model *m, const char *key, const gk_value *value, gk_error *err);
/** gk_kv_set_u32() / _str() etc. : conveniences over gk_kv_set. */
GK_API gk_status gk_kv_set_u32(gk_model *m, const char *key, uint32_t v, gk_error *err);
GK_API gk_status gk_kv_set_str(gk_model *m, const char *key, const char *v, gk_error *err);
/** gk_kv_delete() : removes key. @return : GK_OK or GK_E_NOT_FOUND. */
GK_API gk_status gk_kv_delete(gk_model *m, const char *key);
/** gk_kv_rename() : renames a key in place. @return : GK_E_NOT_FOUND, GK_E_EXISTS, GK_OK. */
GK_API gk_status gk_kv_rename(gk_model *m, const char *old_key, const char *new_key, gk_error *err);

/** gk_tensor_count() : @return : number of tensors in the directory. */
GK_API size_t gk_tensor_count(const gk_model *m);
/** gk_tensor_at() : @return : tensor i (directory order) or NULL. */
GK_API const gk_tensor *gk_tensor_at(const gk_model *m, size_t i);
/** gk_tensor_find() : @return : index of the tensor named name, or -1. */
GK_API int64_t gk_tensor_find(const gk_model *m, const char *name);
/** gk_tensor_elements() : @return : the number of elements of t, the product of
 *  its n_dims dimensions (1 for none), wrapping past UINT64_MAX; *overflow, when
 *  not NULL, is set true if it wrapped and is left alone otherwise. */
GK_API uint64_t gk_tensor_elements(const gk_tensor *t, bool *overflow);
/** gk_tensor_add() : appends a tensor (offset 0 until gk_model_layout) and
 *  computes its byte size. @return : GK_OK, GK_E_EXISTS, GK_E_ARG (dims/type/row). */
GK_API gk_status gk_tensor_add(gk_model *m, const char *name, uint32_t type, uint32_t n_dims,
                        const uint64_t *ne, gk_error *err);
/** gk_tensor_set_type() : changes a tensor's type and recomputes its size. */
GK_API gk_status gk_tensor_set_type(gk_model *m, size_t i, uint32_t type, gk_error *err);
/** gk_tensor_set_offset() : sets a tensor's data offset (relative to the data section). */
GK_API void gk_tensor_set_offset(gk_model *m, size_t i, uint64_t offset);
/** gk_tensor_clear() : removes every tensor. */
GK_API void gk_tensor_clear(gk_model *m);

/** gk_model_layout() : places every tensor canonically: in directory order, each at
 *  the next multiple of the model's alignment. @return : total data section size
 *  (without padding after the last tensor). */
GK_API uint64_t gk_model_layout(gk_model *m);

/** gk_model_header_size() : @return : bytes of magic, counts, KV and tensor
 *  directory as the writer would lay them out (before alignment padding); of a
 *  preview (GK_OPEN_PREVIEW) only the elements it holds are counted. */
GK_API uint64_t gk_model_header_size(const gk_model *m);

/** gk_model_data_start() : @return : gk_model_header_size aligned up to the alignment. */
GK_API uint64_t gk_model_data_start(const gk_model *m);

/* ======================================================================== */
/* Reading                                                                  */
/* ======================================================================== */

typedef struct gk_file gk_file;

/* Options for gk_open. */
enum {
    GK_OPEN_DEFAULT = 0,
    /* Data-placement problems become warnings, and so does a tensor of a type
     * ggufkit does not know (gk_type_get NULL, not retired): it is kept with
     * nbytes 0, its data unplaced. Without the flag both are errors. */
    GK_OPEN_LENIENT = 1 << 0,
    /* For listings: a top-level array of numbers, bools or strings longer than
     * GK_PREVIEW_ELEMS keeps only its first GK_PREVIEW_ELEMS elements in memory
     * (arr.n_unread says how many it left out). Every element is still read and
     * validated as without the flag, with the same errors and warnings, and the
     * file's model is otherwise the same; a vocabulary then costs no memory. Such
     * a model cannot be written (gk_header_serialize refuses it). */
    GK_OPEN_PREVIEW = 1 << 1,
    /* A compressed file or archive member is read to its end first, so that its
     * size (and the placement of tensor data) is its real length, not the one its
     * container records (they differ when the container is cut short; a warning
     * says so). Costs a full read of such a stream; plain files are always sized
     * by what they hold. */
    GK_OPEN_MEASURE = 1 << 2,
    /* GK_OPEN_MEASURE only where needed: a compressed file or archive member whose
     * container may be cut short (found out cheaply: a zstd file's frame headers;
     * an archive member's data skipped, which is a seek in an uncompressed tar) is
     * read to its end and sized by its real length, so tensor data past the end
     * of a partial download is refused as in a plain file. Whole containers cost
     * no decompression (but a compressed archive is decompressed through). A
     * .gguf.zst behind a URL is not checked (that would fetch all of it): it is
     * sized lazily, and tensor data past what is known to be there is taken to
     * be there until it is read (docs/remote.md). */
    GK_OPEN_WHOLE = 1 << 3,
};

/* Elements a preview keeps of each long array (see GK_OPEN_PREVIEW). */
#define GK_PREVIEW_ELEMS 16

/** gk_open() : opens a GGUF file and parses its header, metadata and tensor
 *  directory, validating all of it. Tensor data is not read. Never writes to
 *  the file. The header is read under a shared lock that an in-place edit takes
 *  exclusively while it rewrites header bytes, so it is the old header or the
 *  new one; a journal left by an interrupted edit is refused (GK_E_JOURNAL:
 *  gk_journal_recover or gk_open_exclusive recovers it).
 *  @return : GK_OK and *out set, or an error status with err filled. */
GK_API gk_status gk_open(const char *path, unsigned flags, gk_file **out, gk_error *err);

/** gk_open_memory() : like gk_open over a caller-owned buffer that must outlive the handle. */
GK_API gk_status gk_open_memory(const void *data, size_t size, unsigned flags, gk_file **out,
                         gk_error *err);

/* gk_open() also reads compressed and archived models, as streams, without
 * unpacking them to disk: a path whose data is a zstd stream (.gguf.zst), and
 * "ARCHIVE::MEMBER" for a member of a tar (plain, .gz, .xz, .zst), zip or 7z
 * archive. Such files have gk_file_fd() == -1; their tensor data is read in
 * order, and reading behind the current position restarts the stream. */

/* gk_open() and every reader on it also read remote files: a path that is an
 * http:// or https:// URL, or hf://OWNER/REPO/PATH[@REVISION] (the hub's
 * resolve URL; $HF_ENDPOINT replaces https://huggingface.co), is read with
 * Range requests, fetching only the bytes needed (libcurl is loaded on first
 * use). TLS is verified; redirects are followed; HF_TOKEN goes as a bearer
 * token to the hub only, and headers given with gk_remote_header to the URL's
 * host only, never to another host a redirect leads to. A file that changes on
 * the server while it is read fails (GK_E_IO), never mixing two versions.
 * Outputs stay local. */

/** gk_remote_header() : adds a header ("Name: value") to every request this
 *  process makes to the host of the URL being read (an "Authorization:" one
 *  replaces HF_TOKEN). Thread-safe. @return : GK_OK, GK_E_ARG (not one
 *  "Name: value" line), GK_E_NOMEM. */
GK_API gk_status gk_remote_header(const char *line, gk_error *err);

/** gk_remote_stats() : the HTTP requests made and response bytes received by
 *  this process so far (redirects and retries included). Either pointer may be NULL. */
GK_API void gk_remote_stats(uint64_t *requests, uint64_t *bytes);

/* Called for each archive member whose data starts with the GGUF magic.
 * Returning false stops the listing. */
typedef bool (*gk_member_fn)(void *ctx, const char *member, uint64_t size);

/** gk_archive_list() : lists the GGUF members of the archive at path.
 *  @return : GK_OK, or an error when path cannot be read as an archive to its
 *            end (unrecognized, cut short, damaged: members listed before the
 *            damage have been passed to fn). */
GK_API gk_status gk_archive_list(const char *path, gk_member_fn fn, void *ctx, gk_error *err);

/** gk_path_is_archive() : @return : true when path's contents are an archive
 *  (tar, compressed tar, zip, 7z) rather than a GGUF file or a zstd-compressed one. */
GK_API bool gk_path_is_archive(const char *path);

/** gk_close() : releases a file handle (NULL accepted). */
GK_API void gk_close(gk_file *f);

/** gk_file_model() : @return : the model read from f (owned by f; may be modified). */
GK_API gk_model *gk_file_model(gk_file *f);
/** gk_file_path() : @return : the path f was opened with ("" for memory). */
GK_API const char *gk_file_path(const gk_file *f);
/** gk_file_size() : @return : size in bytes of the file. */
GK_API uint64_t gk_file_size(const gk_file *f);
/** gk_file_header_end() : @return : offset just past the tensor directory. */
GK_API uint64_t gk_file_header_end(const gk_file *f);
/** gk_file_data_offset() : @return : file offset where the data section starts. */
GK_API uint64_t gk_file_data_offset(const gk_file *f);

/* The container facts of an open file: what `info` shows and `index` stores. */
typedef struct gk_file_facts {
    uint32_t version;     /* GGUF version the file was read as */
    bool big_endian;      /* the file's byte order */
    uint32_t alignment;   /* general.alignment when valid, else 32 */
    size_t n_kv;          /* key/value pairs */
    size_t n_tensors;     /* tensors in the directory */
    uint64_t data_offset; /* file offset where the data section starts */
    uint64_t file_size;   /* size in bytes of the (decompressed) file */
} gk_file_facts;
/** gk_file_facts_of() : fills *out with f's container facts. */
GK_API void gk_file_facts_of(const gk_file *f, gk_file_facts *out);
/** gk_file_fd() : @return : the file descriptor, or -1 for a memory source. */
GK_API int gk_file_fd(const gk_file *f);

/** gk_file_pads_end() : @return : true when f's bytes go on past its last tensor
 *  (or, without tensors, past its header) up to the next multiple of the
 *  alignment, as ggml's writer pads; use it as gk_write_opts.pad_end to keep a
 *  tensorless file's shape when rewriting it (with tensors every output pads). */
GK_API bool gk_file_pads_end(gk_file *f);

/** gk_file_warning_count() / gk_file_warning_at() : the warnings found while reading. */
GK_API size_t gk_file_warning_count(const gk_file *f);
GK_API const gk_warning *gk_file_warning_at(const gk_file *f, size_t i);

/** gk_file_strings_utf8() : @return : true if every string the file holds (keys,
 *  values, array elements, tensor names) was read as well-formed UTF-8, so a
 *  writer of text formats need not check them again; false after a warning
 *  about one. Says nothing of strings set in the model afterwards. */
GK_API bool gk_file_strings_utf8(const gk_file *f);

/** gk_file_read() : reads len bytes at absolute file offset off into buf.
 *  @return : GK_OK, or GK_E_TRUNCATED / GK_E_IO with err filled. */
GK_API gk_status gk_file_read(gk_file *f, uint64_t off, void *buf, size_t len, gk_error *err);

/** gk_file_tensor_read() : reads len bytes of tensor i's data starting at byte
 *  `start` of that tensor, in file byte order. */
GK_API gk_status gk_file_tensor_read(gk_file *f, size_t i, uint64_t start, void *buf, size_t len,
                              gk_error *err);

/* ======================================================================== */
/* Writing                                                                  */
/* ======================================================================== */

/** gk_header_serialize() : serializes magic, counts, metadata and tensor directory of
 *  m in its version and byte order, followed by zero padding up to the data section
 *  (gk_model_data_start). *out is malloc'ed; the caller frees it.
 *  @return : GK_OK or an error (e.g. a value that cannot be written in v1;
 *            GK_E_ARG for a preview, which lacks elements). */
GK_API gk_status gk_header_serialize(const gk_model *m, uint8_t **out, size_t *out_len, gk_error *err);

/* An output file published atomically: bytes go to an unnamed file (O_TMPFILE)
 * in the destination's folder, or where the filesystem refuses that to a hidden
 * temporary file there; gk_sink_commit fsyncs it and links it into place (a
 * replacement is linked beside the destination and renamed over it, under the
 * destination's edit lock, so it never lands in the middle of an in-place edit);
 * gk_sink_abort (or a failed commit) discards it. A kill leaves no file (but the
 * named temporary file of the fallback). The bytes are written by a
 * thread of the sink's own, with O_DIRECT where the filesystem allows it, so
 * the output does not fill the page cache; GK_SINK_BUFFERED writes through the
 * page cache instead (copies then stay in the kernel: copy_file_range). */
typedef struct gk_sink gk_sink;

enum {
    GK_SINK_DEFAULT = 0,
    GK_SINK_OVERWRITE = 1 << 0,   /* replace an existing destination */
    GK_SINK_BUFFERED = 1 << 1,    /* write through the page cache (no O_DIRECT) */
    GK_SINK_ZSTD = 1 << 2,        /* compress (zstd) whatever the name (a name ending in .zst always is) */
    GK_SINK_REPLACE_HELD = 1 << 3,/* dest is a file the caller holds with gk_open_exclusive and
                                     replaces on purpose (with GK_SINK_OVERWRITE) */
    GK_SINK_NO_CLONE = 1 << 4,    /* never share blocks with an input: copy every byte */
};
/* Compression level for destinations ending in ".zst" (1-22; default 3). */
#define GK_SINK_ZSTD_LEVEL(n) ((unsigned)((n) & 0xff) << 8)

/** gk_sink_dest_ok() : @return : true if dest may be written with these flags:
 *  it does not exist, or it is a regular file (or a link to one) and
 *  GK_SINK_OVERWRITE is set; false with err set to GK_E_EXISTS, or GK_E_ARG for
 *  an existing device, fifo, socket or folder (never replaced, even with
 *  GK_SINK_OVERWRITE). */
GK_API bool gk_sink_dest_ok(const char *dest, unsigned flags, gk_error *err);

/* Inputs. Every file a command reads is one of its inputs, and no output may be
 * one of them, with or without GK_SINK_OVERWRITE (the one exception: the file an
 * in-place rewrite replaces on purpose, GK_SINK_REPLACE_HELD). gk_open records
 * each file it opens (every shard of a set too), and so do the library's other
 * readers (importance matrices, manifests); a program records any other file it
 * reads (a patch, a template, a list of types) with gk_inputs_add. Files are known
 * by device and inode after following links: a link to an input, a hard link or
 * another spelling of its path is that input. The set lives as long as the
 * process. */

/** gk_inputs_add() : records the file path names (after links; for
 *  ARCHIVE::MEMBER the archive; for "-" standard input when it is a file) as an
 *  input of this process. A path that does not exist records nothing (its read
 *  fails on its own). Thread-safe. @return : GK_OK. */
GK_API gk_status gk_inputs_add(const char *path, gk_error *err);

/** gk_inputs_open() : opens path for a reader that reads it whole, front to
 *  back (a patch, a template, a matrix, a manifest): a pipe is fine there (`--patch
 *  <(cmd)`), and opening one with no writer does not block (its read then ends
 *  at once). A folder is refused (EISDIR); a regular file is recorded as an input.
 *  @return : the fd, or -1 with errno set. */
GK_API int gk_inputs_open(const char *path);

/** gk_inputs_check_output() : @return : GK_OK when dest (after links) is none
 *  of the recorded inputs, else GK_E_SAME_FILE with a message naming the input.
 *  gk_sink_dest_ok and gk_sink_open call it. */
GK_API gk_status gk_inputs_check_output(const char *dest, gk_error *err);

/** gk_inputs_forbid_fd() : the file open at fd (a regular file: the program's
 *  standard output redirected to one) is written by this process: reading it as
 *  a model fails (GK_E_SAME_FILE, the message naming it as what), reading it
 *  whole (a patch, a matrix) fails with EBUSY. what must stay valid. */
GK_API void gk_inputs_forbid_fd(int fd, const char *what);

/** gk_inputs_clear() : forgets every recorded input (a long-lived program whose
 *  next task may write what an earlier one read). */
GK_API void gk_inputs_clear(void);

#ifdef GGUFKIT_EXPERIMENTAL
/* The output sink itself (experimental: gk_write_model is the stable way to
 * write a model). */
/** gk_sink_open() : creates the temporary file for dest. Refuses what
 *  gk_sink_dest_ok refuses. A dest ending in ".zst" (or with GK_SINK_ZSTD) is
 *  written zstd-compressed. A dest that is a symbolic link is followed: the file
 *  it names is replaced and the link stays (a link to nothing is refused). */
GK_API gk_status gk_sink_open(const char *dest, unsigned flags, gk_sink **out, gk_error *err);
/** gk_sink_write() : appends bytes. */
GK_API gk_status gk_sink_write(gk_sink *s, const void *buf, size_t len, gk_error *err);
/** gk_sink_write_zeros() : appends n zero bytes. */
GK_API gk_status gk_sink_write_zeros(gk_sink *s, uint64_t n, gk_error *err);
/** gk_sink_offset() : @return : bytes written so far. */
GK_API uint64_t gk_sink_offset(const gk_sink *s);
/** gk_sink_commit() : fsyncs, links (or renames) into place, fsyncs the folder, frees s.
 *  A replaced file's permission bits are kept. @return : GK_OK, GK_E_EXISTS,
 *  GK_E_LOCKED (another process edits the file to be replaced), GK_E_IO. */
GK_API gk_status gk_sink_commit(gk_sink *s, gk_error *err);
/** gk_sink_abort() : discards the output (removes a named temporary file) and frees s
 *  (NULL accepted). */
GK_API void gk_sink_abort(gk_sink *s);
#endif /* GGUFKIT_EXPERIMENTAL */

/** gk_same_file() : @return : true if paths a and b name the same existing file. */
GK_API bool gk_same_file(const char *a, const char *b);

/* ======================================================================== */
/* Pipeline: write a model whose tensor bytes come from opened files        */
/* ======================================================================== */

/* Where output tensor i's bytes come from. The transform follows from the types
 * and byte orders: same type and order -> copied unchanged (gk_sink_copy_from);
 * same type, other order -> blocks byte-swapped; other type -> each row is
 * dequantized to F32 and quantized to the output type. */
typedef struct gk_step {
    gk_file *src;             /* the opened input holding the tensor */
    size_t src_tensor;        /* its index in src's model */
    const float *imatrix;     /* importance weights for quantizing, or NULL: ne[0] floats,
                               * or ne[0] * ne[2] for a 3-D tensor (one set per expert) */
} gk_step;

/* Progress report: bytes of input processed so far out of total. Returning false
 * stops the run with GK_E_INTERRUPTED. */
typedef bool (*gk_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* How tensor bytes that pass unchanged reach an output (gk_write_opts.clone).
 * Cloning shares the input's blocks (copy-on-write) where the filesystem can
 * (XFS with reflink, btrfs): the output's bytes are the same either way. */
enum {
    GK_CLONE_AUTO = 0,        /* clone where the layout happens to allow it, else copy */
    GK_CLONE_NEVER = 1,       /* copy every byte (--no-clone) */
    GK_CLONE_PAD = 2,         /* as AUTO, and where cloning is possible at all, pad the header
                                 (GK_PADDING_KEY) so that the data section keeps its input's
                                 position modulo the block size and the tensors clone */
};

/* Bytes of the outputs written so far, by how they got there. */
typedef struct gk_write_stats {
    uint64_t cloned;          /* shared with an input's blocks */
    uint64_t copied;          /* written: header, padding, copied and converted tensor bytes */
} gk_write_stats;

typedef struct gk_write_opts {
    size_t size;              /* GK_OPTS_INIT(gk_write_opts) */
    unsigned sink_flags;      /* GK_SINK_* */
    bool pad_end;             /* without tensors: pad the header to the alignment (with
                                 tensors the last one is always padded, as ggml reads it) */
    int threads;              /* worker threads for conversions (<= 0: all cores) */
    gk_progress_fn progress;  /* may be NULL */
    void *progress_ctx;
    uint64_t reserve;         /* reserved for later use; 0 */
    unsigned clone;           /* GK_CLONE_*: whether unchanged tensor bytes may share blocks */
    gk_write_stats *stats;    /* may be NULL: bytes cloned and copied are added to it */
} gk_write_opts;

/** gk_write_model() : lays out `out` canonically (gk_model_layout) and writes it
 *  to dest atomically: header, then each tensor's bytes from steps[i] (one step
 *  per output tensor, same order), zero padding between tensors and after the
 *  last up to the alignment (ggml's reader reads every tensor padded); a file
 *  without tensors ends with its header, padded with pad_end. Memory stays
 *  bounded whatever the model size. Unchanged tensors clone where the dest's
 *  filesystem can share the input's blocks (opts->clone; the bytes are the
 *  same); with GK_CLONE_PAD, out then gets a GK_PADDING_KEY pair sized so they
 *  do, and only then.
 *  @return : GK_OK, or an error with nothing left at dest. */
GK_API gk_status gk_write_model(const char *dest, gk_model *out, const gk_step *steps,
                         const gk_write_opts *opts, gk_error *err);

/** gk_rewrite() : writes m, f's model as edited or converted (same tensors, same
 *  order), as a whole new file: each output tensor's bytes from f's tensor of
 *  the same index (copied, byte-swapped when m's byte order differs), data laid
 *  out canonically, a v1 model written as v3, the end padded as f's is (opts's
 *  pad_end is ignored; every other option is passed to gk_write_model as given).
 *  dest is never f's own file. dest NULL replaces f's own file atomically (f
 *  from gk_open_exclusive; the mode kept, a .zst compressed again). The one
 *  function behind repack, endian, edit -o and edit's replacement.
 *  @return : GK_OK, GK_E_SAME_FILE (dest is f), GK_E_ARG (m has other tensors,
 *            or f not opened to be replaced), or the error of gk_write_model. */
GK_API gk_status gk_rewrite(gk_file *f, gk_model *m, const char *dest, const gk_write_opts *opts,
                            gk_error *err);

/* One file of a multi-output write: its path, its model and one step per tensor. */
typedef struct gk_output {
    const char *path;
    gk_model *model;
    const gk_step *steps;
} gk_output;

/* Where a multi-output write failed. */
typedef struct gk_outputs_failure {
    size_t output;            /* index of the output the error is about (n: none) */
    bool checking;            /* found by the name checks, before anything was written */
} gk_outputs_failure;

/** gk_write_outputs() : writes n files, all or none (a shard set). First every name
 *  is checked, before anything is written: none may be one of the n_inputs inputs
 *  (GK_E_SAME_FILE), none may exist without GK_SINK_OVERWRITE in opts->sink_flags
 *  nor be other than a regular file (gk_sink_dest_ok's errors). Then each output
 *  goes through gk_write_model in order with opts as given; when output k fails,
 *  the outputs this call published are removed. opts->progress sees the bytes of
 *  all outputs together. *failure (may be NULL) says which output an error is
 *  about and whether the name checks found it.
 *  @return : GK_OK, or the error about output failure->output. */
GK_API gk_status gk_write_outputs(const gk_output *outs, size_t n, gk_file *const *inputs, size_t n_inputs,
                                  const gk_write_opts *opts, gk_outputs_failure *failure, gk_error *err);

/* ======================================================================== */
/* Quantization plans (the choices llama-quantize makes)                    */
/* ======================================================================== */

/* A target as llama-quantize names it: a file type (general.file_type) and the
 * tensor type its eligible tensors get before any per-tensor mixing. */
typedef struct gk_quant_target {
    const char *name;         /* "Q4_K_M" */
    uint32_t ftype;           /* llama.cpp's file type number */
    uint32_t base_type;       /* gk_type id */
    bool is_preset;           /* a mix (Q4_K_M ...) rather than a plain type */
    bool is_copy;             /* COPY: tensors pass unchanged */
} gk_quant_target;

/** gk_quant_target_lookup() : finds a target by llama-quantize's name (case-
 *  insensitive; aliases Q3_K, Q4_K, Q5_K mean the _M presets) or by file type
 *  number ("15"; the first row of llama-quantize's list with that number, so
 *  "12" gives the alias Q3_K, as the default output name shows). @return : the
 *  target or NULL. */
GK_API const gk_quant_target *gk_quant_target_lookup(const char *name);

/** gk_quant_target_count() : @return : number of targets in the table. */
GK_API size_t gk_quant_target_count(void);

/** gk_quant_target_at() : @return : target i of the table (for listings), or NULL past the end. */
GK_API const gk_quant_target *gk_quant_target_at(size_t i);

/* --tensor-type PATTERN=TYPE: tensors whose name matches the POSIX extended
 * regular expression (searched, not anchored) get TYPE; the first matching rule
 * wins, and a tensor it sets takes no part in the per-layer mixing counts. */
typedef struct gk_quant_tensor_rule {
    const char *pattern;
    uint32_t type;            /* gk_type id */
} gk_quant_tensor_rule;

/* --override-kv KEY=KIND:VALUE. GK_OVR_U32 is no --override-kv kind: it is the
 * UINT32 llama-quantize's writer makes of an integer it records itself (the
 * imatrix counts); since the September 2026 release an int override is written
 * the same way. */
typedef enum gk_kv_override_kind {
    GK_OVR_INT, GK_OVR_FLOAT, GK_OVR_BOOL, GK_OVR_STR, GK_OVR_U32
} gk_kv_override_kind;

typedef struct gk_kv_override {
    char key[128];
    gk_kv_override_kind kind;
    int64_t i;
    double f;
    bool b;
    char s[128];
} gk_kv_override;

#ifdef GGUFKIT_EXPERIMENTAL
/* Experimental: the text form is llama-quantize's command-line syntax; a program
 * fills gk_kv_override itself. */
/** gk_kv_override_parse() : parses "KEY=int:5", "KEY=float:0.5", "KEY=bool:true",
 *  "KEY=str:text" (llama-quantize's --override-kv syntax; key below 128 bytes,
 *  string at most 127 bytes; numbers must parse whole).
 *  @return : GK_OK, or GK_E_ARG with a message. */
GK_API gk_status gk_kv_override_parse(const char *arg, gk_kv_override *out, gk_error *err);
#endif /* GGUFKIT_EXPERIMENTAL */

typedef struct gk_quant_opts {
    size_t size;              /* GK_OPTS_INIT(gk_quant_opts) */
    const gk_quant_target *target;
    bool pure;                /* every eligible tensor gets the base type */
    bool allow_requantize;    /* accept already-quantized inputs */
    bool no_fallback;         /* a row that does not fit is an error, not a fallback */
    bool leave_output;        /* keep output.weight as it is */
    int32_t output_type;      /* type for output.weight, or -1 */
    int32_t token_embd_type;  /* type for token_embd.weight, or -1 */
    /* Zero for all of these gives llama-quantize's defaults. */
    bool keep_split;          /* one output file per input shard (gk_quant_plan_build_inputs) */
    bool has_imatrix;         /* importance data will be supplied (some rules depend on it) */
    const gk_quant_tensor_rule *tensor_rules;   /* --tensor-type, in command-line order */
    size_t n_tensor_rules;
    const gk_kv_override *overrides;            /* --override-kv, in command-line order */
    size_t n_overrides;
    const uint32_t *prune_layers;  /* --prune-layers: layers dropped (any order, repeats allowed) */
    size_t n_prune_layers;
    bool plan_only;           /* --dry-run: a tensor that needs an importance matrix it will not
                                 get, or a type without kernels, is marked, not refused */
} gk_quant_opts;

/* Why an entry has its type (gk_quant_entry.why bits). */
enum {
    GK_QWHY_MIXED = 1 << 0,    /* the per-tensor rules chose other than the base type */
    GK_QWHY_PATTERN = 1 << 1,  /* a --tensor-type pattern matched */
    GK_QWHY_OPTION = 1 << 2,   /* --output-tensor-type / --token-embedding-type */
    GK_QWHY_FALLBACK = 1 << 3, /* rows are not whole blocks of the wanted type */
    GK_QWHY_KEPT = 1 << 4,     /* not eligible (norms, 1-D, --leave-output-tensor, COPY) */
    GK_QWHY_NEEDS_IMATRIX = 1 << 5, /* plan_only: llama-quantize would refuse it without a matrix */
    GK_QWHY_NO_KERNEL = 1 << 6,     /* plan_only: this build has no quantizer for the type */
};

/* One output tensor of a plan. */
typedef struct gk_quant_entry {
    size_t src_tensor;        /* index in the input model */
    uint32_t from, to;        /* types before and after */
    uint32_t wanted;          /* the type chosen before a fallback (== to without one) */
    size_t src_input;         /* which input model holds it (0 for a single input) */
    size_t out_file;          /* which output model it goes to (0 without keep_split) */
    unsigned why;             /* GK_QWHY_* bits */
    int pattern;              /* index of the deciding --tensor-type rule, or -1 */
    size_t out_tensor;        /* its index in outs[out_file] (its name there: renumbered by
                                 --prune-layers) */
} gk_quant_entry;

typedef struct gk_quant_plan {
    gk_model *out;            /* the output model (tensors in the writer's order); == outs[0] */
    gk_quant_entry *entries;  /* one per output tensor, same order (grouped by out_file) */
    size_t n_entries;
    size_t n_converted;       /* tensors whose type changes */
    size_t n_fallbacks;       /* tensors that did not get the wanted type */
    size_t n_requantized;     /* converted tensors whose input was already quantized */
    size_t n_need_imatrix;    /* plan_only: tensors marked GK_QWHY_NEEDS_IMATRIX */
    size_t n_pruned;          /* input tensors dropped by --prune-layers */
    gk_model **outs;          /* every output model: one, or one per shard with keep_split */
    size_t n_outs;
} gk_quant_plan;

/** gk_quant_plan_build() : decides every tensor's output type as llama-quantize
 *  does and builds the output model: tensors ordered by layer number then name,
 *  metadata copied in order, then general.quantization_version = 2 and
 *  general.file_type set (moved to the end), split.* removed, --override-kv
 *  pairs set last, then (with prune_layers) ARCH.block_count. Without --pure,
 *  quantized targets mix types per tensor (gk_quant_mix_type); --tensor-type
 *  rules apply with and without --pure.
 *  @return : GK_OK, or an error naming the tensor (requantize refused, fallback
 *            refused, no kernel for a type, importance matrix needed). */
GK_API gk_status gk_quant_plan_build(const gk_model *in, const gk_quant_opts *opts, gk_quant_plan *plan,
                              gk_error *err);

/** gk_quant_plan_build_inputs() : like gk_quant_plan_build over a shard set
 *  (inputs in shard order; metadata from the first). Without keep_split every
 *  tensor goes to one output in loader order; with it, output k holds shard k's
 *  tensors in file order, output 0 the metadata, and every output
 *  split.no / split.count / split.tensors.count when there is more than one. */
GK_API gk_status gk_quant_plan_build_inputs(const gk_model *const *inputs, size_t n_inputs,
                                     const gk_quant_opts *opts, gk_quant_plan *plan, gk_error *err);

/** gk_quant_imatrix_required() : @return : true when llama-quantize refuses to
 *  quantize tensor `name` to type without an importance matrix for target ftype. */
GK_API bool gk_quant_imatrix_required(uint32_t type, uint32_t ftype, const char *name);

/* ---- Shard sets as llama-quantize reads and writes them ---- */

/** gk_quant_open_inputs() : opens path and, when its split.count is above 1, the
 *  sibling shards the way llama.cpp's loader finds them (path must be the first
 *  shard, named PREFIX-00001-of-0000N.gguf; each shard's split.no is checked;
 *  split.tensors.count must match the tensors found).
 *  *files (malloc'ed array: gk_close each, then free it) receives *n handles.
 *  @return : GK_OK or an error naming the shard. */
GK_API gk_status gk_quant_open_inputs(const char *path, unsigned flags, gk_file ***files, size_t *n,
                               gk_error *err);

/** gk_quant_plan_free() : releases a plan's model and entries. */
GK_API void gk_quant_plan_free(gk_quant_plan *plan);

/* ======================================================================== */
/* Importance matrices (llama-imatrix output, as llama-quantize reads them)  */
/* ======================================================================== */

/* Per-tensor importance weights: the legacy binary form (sums divided by the
 * call count) or the GGUF form (NAME.in_sum2 / NAME.counts per row; rows never
 * reached get 1). An entry for a 3-D expert tensor holds ne[0] values per expert
 * (ne[0]*ne[2] in all). */
typedef struct gk_imatrix gk_imatrix;

/** gk_imatrix_load() : reads the matrix at path (form chosen by the magic).
 *  @return : GK_OK and *out set, or an error naming the problem (truncated file,
 *            inconsistent counts, sums without counts, non-finite values),
 *            with the byte offset where known. */
GK_API gk_status gk_imatrix_load(const char *path, gk_imatrix **out, gk_error *err);

/** gk_imatrix_free() : releases a matrix (NULL accepted). */
GK_API void gk_imatrix_free(gk_imatrix *im);

/** gk_imatrix_count() : @return : number of entries (after any filtering). */
GK_API size_t gk_imatrix_count(const gk_imatrix *im);

/** gk_imatrix_entry() : entry i: @return : its name (NULL past the end); its
 *  values and their count through values / n (either may be NULL). */
GK_API const char *gk_imatrix_entry(const gk_imatrix *im, size_t i, const float **values, size_t *n);

/** gk_imatrix_find() : @return : the values of entry name (count in *n) or NULL. */
GK_API const float *gk_imatrix_find(const gk_imatrix *im, const char *name, size_t *n);

/** gk_imatrix_dataset() : @return : the calibration dataset name recorded, or NULL. */
GK_API const char *gk_imatrix_dataset(const gk_imatrix *im);

/** gk_imatrix_chunks() : @return : the chunk count recorded (0 when none). */
GK_API int32_t gk_imatrix_chunks(const gk_imatrix *im);

/** gk_imatrix_is_gguf() : @return : true when read from the GGUF form. */
GK_API bool gk_imatrix_is_gguf(const gk_imatrix *im);

/** gk_imatrix_filter() : --exclude-weights then --include-weights, as
 *  llama-quantize: entries whose name contains an exclude string are dropped;
 *  with include strings only entries whose name contains one of them remain. */
GK_API void gk_imatrix_filter(gk_imatrix *im, const char *const *include, size_t n_include,
                       const char *const *exclude, size_t n_exclude);

/** gk_imatrix_check_model() : refuses a matrix made for another model (the
 *  n_models models of a shard set, or one): an entry naming no tensor of them,
 *  or one whose length is not ne[0]*ne[2] of its tensor (token_embd.weight
 *  excepted, as llama-quantize ignores it there).
 *  @return : GK_OK or GK_E_ARG naming the entry. */
GK_API gk_status gk_imatrix_check_model(const gk_imatrix *im, const gk_model *const *models,
                                 size_t n_models, gk_error *err);

/** gk_imatrix_for_tensor() : @return : the weights for tensor t (ne[0]*ne[2]
 *  values, ne[0] per expert slice) or NULL when there is no entry of that length. */
GK_API const float *gk_imatrix_for_tensor(const gk_imatrix *im, const gk_tensor *t);

/* ---- llama-quantize's refusals about the importance matrix ---- */

/** gk_quant_target_demands_imatrix() : @return : true for the targets whose
 *  presets want an importance matrix for most tensors (IQ1_S, IQ1_M, IQ2_S,
 *  IQ2_XXS, IQ2_XS, IQ2_M, IQ3_XXS, IQ3_XS, Q2_K_S). Advice only: since the
 *  September 2026 release, llama-quantize refuses tensor by tensor
 *  (gk_quant_imatrix_required), not by target. */
GK_API bool gk_quant_target_demands_imatrix(const gk_quant_target *t);

/** gk_quant_check_imatrix_coverage() : refuses, before anything is written, every
 *  converted tensor of plan (built from the n models, of target) that llama-quantize
 *  refuses to quantize without weights (gk_quant_imatrix_required) and im (may be
 *  NULL) holds none for; the first twelve are named. The message may be longer
 *  than err has room for: text (text_size bytes; may be NULL) receives it whole.
 *  @return : GK_OK, or GK_E_UNSUPPORTED. */
GK_API gk_status gk_quant_check_imatrix_coverage(const gk_quant_target *target, const gk_model *const *models,
                                                 const gk_quant_plan *plan, const gk_imatrix *im, char *text,
                                                 size_t text_size, gk_error *err);

/** gk_imatrix_overrides() : the metadata llama-quantize records for a matrix, as
 *  --override-kv pairs to apply after the user's (that is how it passes them):
 *  quantize.imatrix.file (the path exactly as given, cut to 127 bytes),
 *  quantize.imatrix.dataset (when recorded, 127 bytes at most),
 *  quantize.imatrix.entries_count and quantize.imatrix.chunks_count (when above
 *  0), the counts as GK_OVR_U32 (today's release writes them as UINT32).
 *  @return : pairs written (2 to 4). */
GK_API size_t gk_imatrix_overrides(const gk_imatrix *im, const char *path, gk_kv_override out[4]);

/* ======================================================================== */
/* Model conventions (verify --schema)                                      */
/* ======================================================================== */

/* One finding of a convention check. */
typedef struct gk_finding {
    bool is_error;
    char message[GK_MESSAGE_MAX];
} gk_finding;

/** gk_schema_check() : checks a model against the LLaMA-family conventions:
 *  general.architecture and its required ARCH.* keys with sensible types and
 *  values, consistent tokenizer arrays and special token ids, and the standard
 *  tensor names with shapes that agree with the hyperparameters.
 *  *out (malloc'ed, free with gk_findings_free) receives *n findings.
 *  @return : GK_OK or GK_E_NOMEM. */
GK_API gk_status gk_schema_check(const gk_model *m, gk_finding **out, size_t *n);

/** gk_findings_free() : releases an array from gk_schema_check (NULL accepted). */
GK_API void gk_findings_free(gk_finding *findings);

/* ======================================================================== */
/* Split, merge and byte order (llama-gguf-split's shard sets)              */
/* ======================================================================== */

/* A shard set is PREFIX-00001-of-0000N.gguf ... PREFIX-0000N-of-0000N.gguf. The
 * first shard holds the model's metadata; every shard holds split.no (u16, from
 * 0), split.count (u16) and split.tensors.count (i32, tensors of the whole set),
 * in that order after any other keys, and a run of the tensors in model order. */
#define GK_SPLIT_KEY_NO "split.no"
#define GK_SPLIT_KEY_COUNT "split.count"
#define GK_SPLIT_KEY_TENSORS "split.tensors.count"
#define GK_SPLIT_MAX_SHARDS 65535   /* split.count is a u16 */

typedef struct gk_split_opts {
    size_t size;              /* GK_OPTS_INIT(gk_split_opts) */
    uint64_t max_tensors;        /* at most this many tensors per shard, or 0 */
    uint64_t max_bytes;          /* at most this many tensor bytes per shard (each
                                    tensor counted padded to the alignment), or 0;
                                    exactly one of max_tensors / max_bytes is set */
    bool no_tensor_first_split;  /* the first shard holds the metadata only */
} gk_split_opts;

/* One shard of a plan: a run of the input's tensors. */
typedef struct gk_split_shard {
    size_t first_tensor;         /* index in the input model */
    size_t n_tensors;
    uint64_t tensor_bytes;       /* the tensors' bytes, each padded to the alignment */
    uint64_t file_bytes;         /* size of the shard file as written */
} gk_split_shard;

typedef struct gk_split_plan {
    gk_split_shard *shards;
    size_t n_shards;
} gk_split_plan;

/** gk_split_plan_build() : cuts the input's tensors into shards as llama-gguf-split
 *  does: by count (a new shard every max_tensors tensors) or by size (a new shard
 *  when the next tensor would take the shard's padded tensor bytes past max_bytes).
 *  Unlike the reference, a tensor larger than max_bytes gets a shard of its own
 *  instead of an abort, and sizes are padded to the model's alignment.
 *  @return : GK_OK, GK_E_ARG (bad options, more than GK_SPLIT_MAX_SHARDS shards). */
GK_API gk_status gk_split_plan_build(const gk_model *in, const gk_split_opts *opts, gk_split_plan *plan,
                              gk_error *err);

/** gk_split_plan_free() : releases a plan's shards (the plan itself is the caller's). */
GK_API void gk_split_plan_free(gk_split_plan *plan);

/** gk_split_shard_model() : builds shard k's model: for k == 0 the input's metadata,
 *  for the others general.alignment only when it is not 32, then split.no,
 *  split.tensors.count, split.count; the shard's tensors in input order.
 *  *out is the caller's (gk_model_free). */
GK_API gk_status gk_split_shard_model(const gk_model *in, const gk_split_plan *plan, size_t k,
                               gk_model **out, gk_error *err);

/** gk_split_path() : "PREFIX-%05d-of-%05d.gguf" for shard k (0-based) of n: the
 *  name of every shard set ggufkit writes or opens (split, merge, quantize
 *  --keep-split). @return : a malloc'ed path, or NULL when out of memory. */
GK_API char *gk_split_path(const char *prefix, size_t k, size_t n);

/** gk_split_write() : writes every shard of plan for the input in, each through
 *  gk_write_model (pad_end on, as the reference writes). All shards or none: the
 *  names are checked first (existing ones refused unless GK_SINK_OVERWRITE, an
 *  input never replaced), and when shard k fails the shards this call already
 *  published are removed. opts->progress sees the bytes of all shards together.
 *  @return : GK_OK, or an error naming the shard. */
GK_API gk_status gk_split_write(gk_file *in, const char *prefix, const gk_split_plan *plan,
                         const gk_write_opts *opts, gk_error *err);

/** gk_model_is_shard() : @return : true when m has split.count >= 1 (a merged file
 *  with the reference's stale split.count = 0 is not a shard). */
GK_API bool gk_model_is_shard(const gk_model *m);

/* A complete, checked shard set opened for reading. */
typedef struct gk_split_set gk_split_set;

/** gk_split_set_open() : opens the set a shard belongs to (any shard of it): reads
 *  its split.no and split.count, derives PREFIX from its name, opens every sibling
 *  and checks the whole set: every shard present, split.no = 0..n-1, the same
 *  split.count, split.tensors.count and total of tensors agreeing, no tensor twice,
 *  one alignment, one byte order, one version. flags as for gk_open.
 *  @return : GK_OK, GK_E_NOT_FOUND (the file is not a shard, or a sibling is
 *            missing), GK_E_CORRUPT (the set disagrees: the message says how), or
 *            the error of opening a shard. */
GK_API gk_status gk_split_set_open(const char *shard_path, unsigned flags, gk_split_set **out,
                            gk_error *err);
/* An error of gk_split_set_open (and of every command's shard set: they all open
 * sets through it) names the shard it is about in err->file: the missing one, the
 * one that disagrees, the one that cannot be read. */

/** gk_split_set_release() : frees the set but not its shards: *out receives the
 *  array of its *n open shards (in set order), which the caller now owns (each
 *  gk_close'd, the array freed). */
GK_API void gk_split_set_release(gk_split_set *set, gk_file ***out, size_t *n);

/** gk_split_set_close() : closes every shard and frees the set (NULL accepted). */
GK_API void gk_split_set_close(gk_split_set *set);
/** gk_split_set_count() : @return : number of shards. */
GK_API size_t gk_split_set_count(const gk_split_set *set);
/** gk_split_set_file() : @return : shard k (0-based), owned by the set, or NULL. */
GK_API gk_file *gk_split_set_file(gk_split_set *set, size_t k);
/** gk_split_set_prefix() : @return : PREFIX (the shard paths without "-0000k-of-0000n.gguf"). */
GK_API const char *gk_split_set_prefix(const gk_split_set *set);
/** gk_split_set_tensor_count() : @return : tensors in the whole set. */
GK_API uint64_t gk_split_set_tensor_count(const gk_split_set *set);
/** gk_split_set_tensor_bytes() : @return : bytes of tensor data in the whole set. */
GK_API uint64_t gk_split_set_tensor_bytes(const gk_split_set *set);

/** gk_split_set_merged() : the merged model (first shard's metadata without the
 *  split.* keys, every shard's tensors in set order) and one step per tensor.
 *  *out_model (gk_model_free) and *out_steps (free) are the caller's.
 *  Exception to the array rule (top of this file): *out_steps has no count of
 *  its own, it holds gk_tensor_count(*out_model) steps. */
GK_API gk_status gk_split_set_merged(gk_split_set *set, gk_model **out_model, gk_step **out_steps,
                              gk_error *err);

/** gk_merge_write() : writes the merged set to dest atomically (pad_end on), never
 *  over one of the shards. Merging the shards of a canonical file gives it back. */
GK_API gk_status gk_merge_write(gk_split_set *set, const char *dest, const gk_write_opts *opts,
                         gk_error *err);

/** gk_merge_consume() : merges the set shard_path names (any shard of it) into
 *  dest and removes each shard once its bytes are durable in the merged file, for
 *  disks without room for two copies (`merge --delete-splits`). The file grows as
 *  DEST.ggufkit-merge beside dest, with a state file DEST.ggufkit-merge-state;
 *  after a kill or failure at any point every shard not removed is intact and the
 *  bytes of the removed ones are in the work file, and calling this again with
 *  the same arguments (any shard's name, even a removed one's) finishes the
 *  merge. The result equals gk_merge_write's without cloning. A shard that is not
 *  the one recorded is never removed. Uses opts->sink_flags (GK_SINK_OVERWRITE),
 *  progress and stats (copied bytes); shards must be plain files.
 *  @return : GK_OK, the errors of gk_split_set_open, GK_E_EXISTS (dest, or a work
 *            file of another merge), GK_E_LOCKED (another merge into dest is
 *            running), GK_E_CORRUPT (a shard or work file was replaced), GK_E_IO,
 *            GK_E_INTERRUPTED (progress returned false: call again to finish). */
GK_API gk_status gk_merge_consume(const char *shard_path, const char *dest, const gk_write_opts *opts,
                                  gk_error *err);

/** gk_endian_convert() : writes f to dest atomically in the byte order big (true)
 *  or little: header, metadata and every tensor's blocks swapped by the type
 *  table's kernels, laid out canonically, padded at the end as f is. A v1 input
 *  is written as v3. Never in place (dest is refused when it is f).
 *  @return : GK_OK, GK_E_UNSUPPORTED (a type without a byte-swap kernel), ... */
GK_API gk_status gk_endian_convert(gk_file *f, const char *dest, bool big, const gk_write_opts *opts,
                            gk_error *err);

/* ======================================================================== */
/* Metadata edits (ggufkit edit)                                            */
/* ======================================================================== */

/* An ordered list of metadata edits, applied in one pass by gk_edit_apply. Values
 * given as text are parsed when applied, against the model as the earlier edits
 * left it (an existing key keeps its type). */
typedef struct gk_edit gk_edit;

/* The key of the padding pair ggufkit writes so that a header can later grow or
 * shrink in place: an array of zero UINT8 whose length is adjusted so the data
 * section does not move. */
#define GK_PADDING_KEY "ggufkit.padding"
/* Bytes a padding pair takes besides its elements (key, type, element type, count). */
#define GK_PADDING_OVERHEAD 39u

/** gk_edit_new() : @return : an empty edit list, or NULL when out of memory. */
GK_API gk_edit *gk_edit_new(void);
/** gk_edit_free() : releases an edit list (NULL accepted). */
GK_API void gk_edit_free(gk_edit *e);
/** gk_edit_count() : @return : number of queued edits. */
GK_API size_t gk_edit_count(const gk_edit *e);

/** gk_edit_add_set() : queues "set key to the len bytes of text". type NULL: an
 *  existing key keeps its type (text is parsed as that type), a new key takes the
 *  well-known type of its name, else one inferred from the text (true/false ->
 *  bool; an integer -> u32 when it fits, else i32, u64, i64; a decimal number ->
 *  f32; anything else -> str). type "u8" ... "f64", "bool", "str": that type.
 *  type "json": text is a JSON value (arrays: element type inferred, or the
 *  well-known key's). type "array[T]": a JSON array of T.
 *  @return : GK_OK, GK_E_ARG (unknown type name), GK_E_NOMEM. */
GK_API gk_status gk_edit_add_set(gk_edit *e, const char *key, const char *type, const char *text,
                          size_t len, gk_error *err);
/** gk_edit_add_set_value() : queues "set key to (a deep copy of) v". */
GK_API gk_status gk_edit_add_set_value(gk_edit *e, const char *key, const gk_value *v, gk_error *err);
/** gk_edit_add_delete() : queues "delete every key matching pattern": a key
 *  equal to pattern is deleted alone (an exact match wins, even when pattern holds
 *  glob characters); else pattern is an fnmatch(3) glob, a backslash escaping the
 *  next character. Applying it fails when nothing matches. */
GK_API gk_status gk_edit_add_delete(gk_edit *e, const char *pattern, gk_error *err);
/** gk_edit_add_rename() : queues "rename old_key to new_key" (position kept). */
GK_API gk_status gk_edit_add_rename(gk_edit *e, const char *old_key, const char *new_key, gk_error *err);
/** gk_edit_add_special_token() : queues "tokenizer.ggml.NAME_token_id = the id of
 *  token text in tokenizer.ggml.tokens" (name: bos, eos, eot, eom, unknown/unk,
 *  padding/pad, sep (llama.cpp's "seperator"), cls, mask, fim_pre ... fim_sep).
 *  When text occurs more than once, the lowest id is taken.
 *  @return : GK_OK, GK_E_ARG (unknown name). */
GK_API gk_status gk_edit_add_special_token(gk_edit *e, const char *name, const char *text, gk_error *err);
/** gk_edit_add_special_token_id() : like gk_edit_add_special_token with the id
 *  given; applying it refuses an id outside the vocabulary. */
GK_API gk_status gk_edit_add_special_token_id(gk_edit *e, const char *name, uint64_t id, gk_error *err);
/** gk_edit_add_patch() : queues the edits of a JSON patch document:
 *    {"set": {KEY: VALUE | {"type": T, "value": V}, ...}, "delete": [PATTERN, ...],
 *     "rename": {OLD: NEW, ...}}
 *  (sections in document order), or the output of `ggufkit dump --json` (or its
 *  "metadata" object): every KEY: {"type": "UINT32", "value": V, "array_types": [...]}
 *  is a set; pairs without a value (arrays dumped without --json-array) and the
 *  GGUF.* pseudo keys are skipped. Numbers and strings are taken exactly as
 *  written (64-bit integers, \u0000 in strings).
 *  @return : GK_OK, GK_E_ARG (not JSON, or not a patch: the message says where). */
GK_API gk_status gk_edit_add_patch(gk_edit *e, const char *json, size_t len, gk_error *err);

enum {
    GK_EDIT_DEFAULT = 0,
    GK_EDIT_FORCE = 1 << 0,   /* skip the refusals (layout keys, key names, well-known types) */
};

/* What gk_edit_apply did. */
typedef struct gk_edit_result {
    bool refused;             /* the error is a refusal GK_EDIT_FORCE would skip */
    size_t n_set, n_deleted, n_renamed;
} gk_edit_result;

/** gk_edit_apply() : applies every queued edit to m in order. Refused unless
 *  GK_EDIT_FORCE: touching keys that decide the layout (general.alignment,
 *  split.*, GGUF.*) or GK_PADDING_KEY (set/rename), creating a key whose name
 *  breaks the spec's rules (gk_key_name_valid), a value whose type contradicts a
 *  well-known key's (gk_key_expected_type).
 *  @return : GK_OK, or the first failure with err naming the edit; m is then
 *            partly edited (apply to a clone). */
GK_API gk_status gk_edit_apply(const gk_edit *e, gk_model *m, unsigned flags, gk_edit_result *res,
                        gk_error *err);

/** gk_key_name_valid() : @return : true when key follows the spec's naming rules:
 *  ASCII, '.'-separated non-empty segments of [a-z0-9_], at most 65535 bytes. */
GK_API bool gk_key_name_valid(const char *key);

/** gk_key_expected_type() : the type llama.cpp (or the spec) expects for a
 *  well-known key: general.*, ARCH.context_length and the other hyperparameters
 *  (any architecture prefix), tokenizer.ggml.*, tokenizer.chat_template*.
 *  *type receives the type, *elem the element type of an array (GK_V_COUNT for
 *  scalars), *or_array true when a per-layer array of *type is accepted too.
 *  @return : true when key is well known. */
GK_API bool gk_key_expected_type(const char *key, gk_vtype *type, gk_vtype *elem, bool *or_array);

/** gk_model_set_padding() : sets GK_PADDING_KEY to n zero bytes (position kept,
 *  appended when new): a rewrite leaves that much room for later in-place edits. */
GK_API gk_status gk_model_set_padding(gk_model *m, uint64_t n, gk_error *err);

/* Whether an edited model can be written over the file it was read from without
 * moving the data section. */
typedef struct gk_inplace_plan {
    bool fits;
    uint64_t needed;          /* header bytes of the edited model, without padding pair */
    uint64_t room;            /* bytes before the data section (file size without tensors) */
    bool padded;              /* the fit uses GK_PADDING_KEY */
    uint64_t padding;         /* its element count then */
    uint64_t new_size;        /* the file size after the edit */
    char reason[160];         /* why it does not fit */
} gk_inplace_plan;

/** gk_inplace_fit() : decides whether m (f's model after edits; same tensors)
 *  can replace f's header in place, and when it can, adjusts (adds, resizes or
 *  removes) m's GK_PADDING_KEY so its header ends exactly where f's data section
 *  starts. A header that already ends there keeps its pair as it is (an edit
 *  that changes nothing changes no byte), and a pair the edit deleted is not
 *  put back. A file without tensors always fits (it may grow or shrink). When
 *  it does not fit, m is left as given. @return : GK_OK or GK_E_NOMEM. */
GK_API gk_status gk_inplace_fit(gk_file *f, gk_model *m, gk_inplace_plan *out, gk_error *err);

/* The journal an in-place write keeps beside FILE while it rewrites the header. */
#define GK_JOURNAL_SUFFIX ".ggufkit-journal"

/** gk_inplace_write() : rewrites f's file with m's header (after gk_inplace_fit
 *  said it fits), crash-safely: the old bytes of the range that changes go to
 *  FILE.ggufkit-journal with the range's new bytes and digests of the bytes the
 *  write leaves alone (and its own length and SHA-256; file and folder fsynced), then
 *  the new bytes are written and fsynced, then the journal is removed. Tensor
 *  bytes are never touched. *changed (may be NULL) tells whether any byte changed.
 *  f must come from gk_open_exclusive; readers (gk_open) are
 *  kept out of the header while it changes, so they see the old one or the new.
 *  @return : GK_OK, GK_E_EXISTS (a journal is already there), GK_E_ARG (f not
 *  opened with gk_open_exclusive), GK_E_UNSUPPORTED (not a regular file),
 *  GK_E_LOCKED, GK_E_IO, GK_E_INTERRUPTED (a test hook: gk_test_control). */
GK_API gk_status gk_inplace_write(gk_file *f, const gk_model *m, bool *changed, gk_error *err);

/* What gk_journal_recover found beside a file. */
typedef enum gk_recovery {
    GK_RECOVERY_NONE = 0,     /* no journal */
    GK_RECOVERY_RESTORED,     /* complete journal: the old header bytes were written back */
    GK_RECOVERY_UNTOUCHED,    /* complete journal, file still as before: journal removed */
    GK_RECOVERY_TORN,         /* incomplete journal (the file was never touched): removed */
    GK_RECOVERY_DISCARDED,    /* a stale journal (of other bytes) removed by gk_journal_discard */
} gk_recovery;

/* How long an editor waits by default for another process's edit of the same file. */
#define GK_EDIT_WAIT_MS 5000u

/** gk_journal_recover() : finishes an interrupted in-place edit of path: restores
 *  the old header from a complete journal, removes a torn one. *what says which.
 *  A journal is applied only when it proves that it belongs to the bytes it
 *  finds: the file's size is the edit's old or new size, its bytes before the
 *  edited range and a sample of those after it have the journal's digests, and
 *  every byte of the range is the old or the new one (see format/journal.c). A
 *  stale journal (the file was replaced: cp over it, another file under its
 *  name) is left alone and so is the file (GK_E_JOURNAL, the message says what
 *  differs and how to remove it: gk_journal_discard). A format-1 journal (an
 *  older ggufkit's, inode only) is removed when the file holds its old bytes and
 *  refused otherwise (gk_journal_recover_force applies it).
 *  Recovery happens only under the file's edit lock (the lock every in-place edit
 *  holds from reading the header to removing its journal), so a journal is never
 *  taken from a live editor; waits up to wait_ms for it. Without a journal the
 *  file is not even opened.
 *  @return : GK_OK, GK_E_JOURNAL (stale or unproven journal: both left alone),
 *            GK_E_NOT_FOUND (journal without its file), GK_E_LOCKED, GK_E_IO. */
GK_API gk_status gk_journal_recover(const char *path, unsigned wait_ms, gk_recovery *what, gk_error *err);

/** gk_journal_recover_force() : gk_journal_recover that also applies a format-1
 *  journal of the file's inode and size, which cannot prove more (the caller
 *  knows that the file was not replaced). A stale journal is still refused. */
GK_API gk_status gk_journal_recover_force(const char *path, unsigned wait_ms, gk_recovery *what,
                                          gk_error *err);

/** gk_journal_discard() : removes path's journal when it does not belong to the
 *  file: a stale or unproven one (*what GK_RECOVERY_DISCARDED), a torn one, one
 *  whose file still holds its old bytes, or one whose file is gone. The file is
 *  never written. A journal whose edit changed the file is refused (GK_E_JOURNAL:
 *  gk_journal_recover puts the old header back). Under the edit lock, as
 *  gk_journal_recover. @return : GK_OK, GK_E_JOURNAL, GK_E_LOCKED, GK_E_IO. */
GK_API gk_status gk_journal_discard(const char *path, unsigned wait_ms, gk_recovery *what, gk_error *err);

/** gk_open_exclusive() : opens path as gk_open does, for a change to the file
 *  itself (gk_inplace_write, or gk_edit_rewrite replacing it): takes the file's
 *  edit lock, waiting up to wait_ms for another process's edit, and keeps it
 *  until gk_close; makes sure path still names the file locked (a rewrite may
 *  have replaced it meanwhile: then it starts again on the new one); recovers an
 *  interrupted edit's journal (*recovered says what was done; may be NULL); then
 *  reads the header. Readers are not kept out. The file must be writable.
 *  @return : as gk_open; GK_E_LOCKED (waited wait_ms), GK_E_UNSUPPORTED (an
 *            archive member), and gk_journal_recover's errors. */
GK_API gk_status gk_open_exclusive(const char *path, unsigned flags, unsigned wait_ms, gk_recovery *recovered,
                            gk_file **out, gk_error *err);

/** gk_edit_replace_check() : @return : GK_OK when gk_edit_rewrite can replace f's
 *  own file (dest NULL): a plain or zstd-compressed file; GK_E_UNSUPPORTED with a
 *  message for an archive member or a model in memory. */
GK_API gk_status gk_edit_replace_check(const gk_file *f, gk_error *err);

/** gk_edit_rewrite() : writes m (f's model after edits; same tensors) as a whole
 *  new file through gk_write_model: tensor bytes copied, data laid out
 *  canonically (the last tensor padded), v1 written as v3. dest NULL replaces
 *  f's own file atomically (a new file renamed over it, mode kept): through a
 *  symbolic link the file it names (the link stays), a compressed file
 *  compressed again; an archive member is refused (gk_edit_replace_check); f
 *  must then come from gk_open_exclusive, so no in-place edit can slip in between.
 *  opts: sink_flags, threads, progress (pad_end is taken from f). */
GK_API gk_status gk_edit_rewrite(gk_file *f, gk_model *m, const char *dest, const gk_write_opts *opts,
                          gk_error *err);

/* ======================================================================== */
/* Hashes and data checks (ggufkit hash, verify --data)                     */
/* ======================================================================== */

/* The digests of llama.cpp's gguf-hash, in the order it prints them. */
typedef enum gk_hash_kind {
    GK_HASH_XXH64 = 0, GK_HASH_SHA1, GK_HASH_SHA256,
    GK_HASH_UUID,              /* UUIDv5 of the whole model (no per-tensor value) */
    GK_HASH_KINDS
} gk_hash_kind;
#define GK_HASH_BIT(k) (1u << (k))
#define GK_HASH_HEX_MAX 68     /* longest hex text of a digest, NUL included */

/* A digest's bytes (8 for xxh64, 20 for sha1, 32 for sha256, 16 for uuid). */
typedef struct gk_hash_value {
    uint8_t len;
    uint8_t bytes[32];
} gk_hash_value;

/** gk_hash_kind_name() : @return : "xxh64", "sha1", "sha256", "uuid", or NULL. */
GK_API const char *gk_hash_kind_name(gk_hash_kind k);
/** gk_hash_kind_lookup() : @return : the kind named name, or -1. */
GK_API int gk_hash_kind_lookup(const char *name);
/** gk_hash_hex() : lowercase hex of v as gguf-hash prints it (uuid as 8-4-4-4-12)
 *  into out, which holds 2 * v->len + 5 bytes (GK_HASH_HEX_MAX always do). */
GK_API void gk_hash_hex(gk_hash_kind k, const gk_hash_value *v, char *out);

typedef struct gk_hash_opts {
    size_t size;              /* GK_OPTS_INIT(gk_hash_opts) */
    unsigned kinds;            /* GK_HASH_BIT(...) of the digests wanted (0: xxh64) */
    bool no_tensors;           /* whole-model digests only (--no-layer) */
    bool canonical;            /* hash big-endian files' blocks as their little-endian form */
    gk_progress_fn progress;   /* tensor bytes read so far; may be NULL */
    void *progress_ctx;
} gk_hash_opts;

/* The digests of a model: each tensor's bytes, and all tensors' bytes one after
 * the other in directory order (padding and metadata excluded), so a metadata
 * edit changes neither. Only the kinds asked for are filled. */
typedef struct gk_hash_result {
    size_t n_tensors;
    const char **names;        /* tensor names (owned by the opened files) */
    gk_hash_value (*tensors)[GK_HASH_KINDS];   /* per tensor, unless no_tensors */
    gk_hash_value model[GK_HASH_KINDS];
    unsigned kinds;
    uint64_t bytes;            /* tensor bytes hashed */
} gk_hash_result;

/** gk_hash_file() : reads every tensor of f in large sequential chunks and
 *  computes the digests asked for, several digests in parallel threads.
 *  @return : GK_OK, or a read error naming its offset (result left empty). */
GK_API gk_status gk_hash_file(gk_file *f, const gk_hash_opts *opts, gk_hash_result *out, gk_error *err);

/** gk_hash_set() : like gk_hash_file over a whole shard set as one model: every
 *  shard's tensors in set order, so the model digests equal the merged file's. */
GK_API gk_status gk_hash_set(gk_split_set *set, const gk_hash_opts *opts, gk_hash_result *out,
                      gk_error *err);

/** gk_hash_result_free() : releases a result's arrays (the struct is the caller's). */
GK_API void gk_hash_result_free(gk_hash_result *r);

/* A hash manifest: gguf-hash's output, lines "KIND  HEX  FILE[:TENSOR]"; a
 * name with blanks, control bytes or backslashes is escaped (gk_manifest_name_escape). */
typedef struct gk_manifest gk_manifest;

/** gk_manifest_load() : reads a manifest (lines it cannot parse are skipped, as
 *  gguf-hash does). @return : GK_OK, GK_E_IO (cannot be read), GK_E_CORRUPT (a
 *  line longer than 64 KiB), GK_E_NOT_FOUND (no line of a known kind). */
GK_API gk_status gk_manifest_load(const char *path, gk_manifest **out, gk_error *err);
/** gk_manifest_free() : releases a manifest (NULL accepted). */
GK_API void gk_manifest_free(gk_manifest *m);
/** gk_manifest_kinds() : @return : GK_HASH_BIT of every kind the manifest holds. */
GK_API unsigned gk_manifest_kinds(const gk_manifest *m);
/** gk_manifest_strongest() : @return : the strongest kind it holds (sha256, sha1,
 *  xxh64, uuid), the one --check uses when none is asked for. */
GK_API gk_hash_kind gk_manifest_strongest(const gk_manifest *m);

/** gk_manifest_name_escape() : the NAME field of a manifest line for name
 *  ("FILE" or "FILE:TENSOR"). A name with no blank, control byte or backslash is
 *  written as it is (llama-gguf-hash's format). Any other is escaped, like
 *  sha256sum's names: the line then starts with a backslash ("\KIND  HEX  NAME"),
 *  and in NAME "\\" is a backslash, "\s" a space, "\t" a tab, "\n" a newline,
 *  "\r" a carriage return, "\xHH" any other blank or control byte; other bytes
 *  (UTF-8 or not) stay as they are. gk_manifest_load reads both forms back.
 *  *escaped tells whether the line needs the leading backslash.
 *  @return : the field (malloc'ed), or NULL when out of memory. */
GK_API char *gk_manifest_name_escape(const char *name, bool *escaped);

/* One line of hash output: a tensor's or the model's digest of one kind, and,
 * after gk_hash_check, its verdict against a manifest. */
typedef enum gk_verdict { GK_VERDICT_NONE = 0, GK_VERDICT_OK, GK_VERDICT_MISMATCH, GK_VERDICT_NOT_FOUND } gk_verdict;
typedef struct gk_hash_line {
    gk_hash_kind kind;
    int64_t tensor;            /* index in the result, or -1 for the whole model */
    gk_verdict verdict;
} gk_hash_line;

/** gk_hash_lines() : the lines gguf-hash prints for r, in its order: for each
 *  tensor its xxh64, sha1, sha256 (those in r->kinds; none with no_tensors),
 *  then the model's xxh64, sha1, sha256, uuid. *out (free) receives *n lines. */
GK_API gk_status gk_hash_lines(const gk_hash_result *r, bool no_tensors, gk_hash_line **out, size_t *n,
                        gk_error *err);

/* The outcome of checking one model against a manifest. */
typedef struct gk_check_summary {
    size_t ok, mismatch, not_found;
    const char **absent;       /* manifest entries "LABEL:TENSOR" naming no tensor of the model */
    size_t n_absent;
    bool passed;               /* every line found and equal, nothing absent */
    bool nothing_found;        /* no line of the model is in the manifest */
} gk_check_summary;

/** gk_hash_check() : sets each line's verdict by the manifest entry of its kind
 *  whose name is label (the model lines) or "label:TENSOR". When the manifest
 *  holds tensor entries for label, every tensor must be found and every such
 *  entry must name a tensor of the model. s->absent (gk_check_summary_free)
 *  lists those that do not.
 *  @return : GK_OK or GK_E_NOMEM. */
GK_API gk_status gk_hash_check(const gk_manifest *m, const char *label, const gk_hash_result *r,
                        gk_hash_line *lines, size_t n, gk_check_summary *s, gk_error *err);

/** gk_check_summary_free() : releases a summary's arrays (the struct is the caller's). */
GK_API void gk_check_summary_free(gk_check_summary *s);

/* One problem verify --data found in tensor data. */
typedef struct gk_data_finding {
    bool is_error;
    size_t tensor;             /* index in the file's model */
    int64_t block;             /* block (element, for plain types) index in the tensor, or -1 */
    int64_t offset;            /* byte offset in the file */
    char message[GK_MESSAGE_MAX];
} gk_data_finding;

/* Called for each finding; returning false stops the check. */
typedef bool (*gk_data_finding_fn)(void *ctx, const gk_data_finding *finding);

/** gk_verify_data() : reads every tensor of f in bounded memory and checks what
 *  the header cannot say: each tensor's byte span is its type's size for its
 *  shape (no unexplained bytes before the next tensor), F32/F16/BF16/F64 values
 *  are finite, and so are the scale fields of every quantized block, within
 *  range where the format bounds them (the type table's check kernels).
 *  findings go to fn. *n_errors receives the number of error findings.
 *  @return : GK_OK (findings or not), or a read error. */
GK_API gk_status gk_verify_data(gk_file *f, gk_data_finding_fn fn, void *ctx, gk_progress_fn progress,
                         void *progress_ctx, size_t *n_errors, gk_error *err);

/* ======================================================================== */
/* Beyond the command                                                       */
/* ======================================================================== */

/* The ggufkit command calls nearly every exported function, and
 * tests/api/consumer.c (a program built from the installed header) calls most
 * of the rest. These are exported for other programs though neither calls
 * them (tests/api_symbols.sh fails on an export that is in none of the three):
 *   gk_archive_list - names of the GGUF members to open as ARCHIVE::MEMBER
 *   gk_path_is_archive - whether a path is to be listed that way
 *   gk_error_about - a program's own error report naming the file it is about
 *   gk_file_fd - the descriptor, for a program that maps tensor data itself
 *   gk_file_pads_end - gk_write_opts.pad_end that keeps a tensorless file's shape
 *   gk_inputs_clear - a long-lived program starting an unrelated task
 *   gk_model_set_version - writing a model as GGUF v2 for older readers
 *   gk_tensor_set_type - building an output model by hand for gk_write_model
 *   gk_tensor_set_offset - a tensor directory laid out other than canonically
 *   gk_tensor_clear - an output model that keeps the metadata only
 *   gk_key_name_valid - checking a key before an edit, as gk_edit_apply does
 *   gk_key_expected_type - the type a well-known key must have
 *   gk_edit_add_set_value - a typed value in an edit list (not parsed from text)
 *   gk_imatrix_entry - the names and weights of an importance matrix
 *   gk_imatrix_find - one entry's weights by name
 *   gk_imatrix_dataset - the calibration data recorded in a matrix
 *   gk_imatrix_chunks - the chunk count recorded in a matrix
 *   gk_imatrix_is_gguf - which of the two forms a matrix was read from
 *   gk_quant_imatrix_required - whether quantizing one tensor needs a matrix
 *   gk_quant_target_demands_imatrix - whether a target wants one for most tensors
 *   gk_split_set_merged - a shard set's merged model and steps for gk_write_model
 *   gk_split_set_release - keeping a set's open shards after the set
 *   gk_split_shard_model - one shard's model, for a custom shard writer
 *   gk_hash_kind_lookup - a digest kind from its name, as a manifest or option spells it
 */

/* ######################################################################## */
/* EXPERIMENTAL API (below): declared only with GGUFKIT_EXPERIMENTAL defined */
/* ######################################################################## */
#ifdef GGUFKIT_EXPERIMENTAL

/* ======================================================================== */
/* Index: a SQLite catalogue of GGUF collections (ggufkit index)            */
/* ======================================================================== */

/* Options of gk_index_run. Zero for all but size gives the defaults. */
typedef struct gk_index_opts {
    size_t size;              /* GK_OPTS_INIT(gk_index_opts) */
    int jobs;                 /* header-parsing threads (<= 0: all cores) */
    bool full_arrays;         /* store arrays whole (else the first array_head elements) */
    bool prune;               /* remove the rows of files that no longer exist */
    unsigned array_head;      /* elements kept of each array level (0: 8) */
    unsigned batch_files;     /* files written per transaction (0: 200) */
    gk_progress_fn progress;  /* bytes (on disk) of the files being read; may be NULL */
    void *progress_ctx;
    /* Told of each path the walk leaves out, and why (a folder that cannot be
     * read, a path too long to open); may be NULL. */
    void (*left_out)(void *ctx, const char *path, const char *why);
    void *left_out_ctx;
    bool hash;                /* also read the tensor data: per-tensor and whole-model xxh64
                                 (files already recorded without them are read again) */
} gk_index_opts;

/* What a run did. Counts of rows are per GGUF (a file, or an archive member). */
typedef struct gk_index_stats {
    uint64_t files_seen;      /* regular files found under the paths (the database excluded) */
    uint64_t added;           /* rows new in the database */
    uint64_t updated;         /* rows re-read because their file's size or mtime changed */
    uint64_t unchanged;       /* rows left alone (file size and mtime as recorded) */
    uint64_t broken;          /* rows written this run with an error */
    uint64_t removed;         /* rows deleted (pruned, or members gone from a changed archive) */
    uint64_t vanished;        /* rows whose file no longer exists (removed only with prune) */
    uint64_t headers_read;    /* GGUF headers parsed plus archives listed this run */
    uint64_t not_gguf;        /* files holding no GGUF (remembered; not re-read while unchanged) */
    uint64_t rows;            /* rows in the files table after the run */
    uint64_t models;          /* rows in the models table after the run */
    uint64_t left_out;        /* paths the walk left out (each told to opts->left_out) */
} gk_index_stats;

/** gk_index_run() : indexes every GGUF under paths (folders walked recursively,
 *  symbolic links inside them not followed) into the SQLite database db_path
 *  (created when missing; WAL mode): plain GGUF files (any file starting with the
 *  magic, or named .gguf), zstd-compressed ones, and each GGUF member of an
 *  archive. Only headers are read. A file whose size and mtime match its
 *  recorded row is not opened; a broken file is a row with its error. Tables,
 *  views and columns: docs/index.md. stats (may be NULL) receives the counts.
 *  @return : GK_OK (broken files included), GK_E_NOT_FOUND (a path does not
 *            exist; nothing written), GK_E_IO (the database cannot be opened or
 *            written), GK_E_INTERRUPTED (progress returned false; what was
 *            written stays), GK_E_NOMEM. */
GK_API gk_status gk_index_run(const char *db_path, const char *const *paths, size_t n_paths,
                       const gk_index_opts *opts, gk_index_stats *stats, gk_error *err);

/* ======================================================================== */
/* Diff: what changed between two models, tensor by tensor (ggufkit diff)   */
/* ======================================================================== */

/* A model opened for comparing: one file (plain, .zst, archive member, either
 * byte order) or, when the path is a shard, its whole checked shard set seen as
 * the merged model (split.* keys removed). */
typedef struct gk_diff_input gk_diff_input;

/** gk_diff_input_open() : opens path fully (no preview: arrays are compared whole).
 *  @return : GK_OK and *out set, or the error of gk_open / gk_split_set_open. */
GK_API gk_status gk_diff_input_open(const char *path, gk_diff_input **out, gk_error *err);
/** gk_diff_input_close() : closes the file(s) and frees the input (NULL accepted). */
GK_API void gk_diff_input_close(gk_diff_input *in);
/** gk_diff_input_model() : @return : the (merged) model, owned by the input. */
GK_API const gk_model *gk_diff_input_model(const gk_diff_input *in);
/** gk_diff_input_size() : @return : bytes of the file, or of every shard together. */
GK_API uint64_t gk_diff_input_size(const gk_diff_input *in);
/** gk_diff_input_shards() : @return : files the input reads (1, or the shard count). */
GK_API size_t gk_diff_input_shards(const gk_diff_input *in);

/* One metadata difference. Keys starting with "GGUF." are never reported. */
typedef enum gk_meta_change_kind {
    GK_META_ADDED,            /* only in the other model */
    GK_META_REMOVED,          /* only in the reference */
    GK_META_CHANGED,          /* in both, another type or value */
} gk_meta_change_kind;

typedef struct gk_meta_change {
    gk_meta_change_kind kind;
    const char *key;          /* NUL terminated, owned by one of the models */
    const gk_value *ref;      /* NULL when added */
    const gk_value *other;    /* NULL when removed */
    uint64_t first_diff;      /* CHANGED arrays of one element type: the first index
                                 that differs (gk_value_first_diff); else 0 */
} gk_meta_change;

/* The layout facts of both sides (header, not metadata). */
typedef struct gk_diff_layout {
    uint32_t version[2];      /* [0] reference, [1] other */
    bool big_endian[2];
    uint32_t alignment[2];
} gk_diff_layout;

/* What became of one tensor name. */
typedef enum gk_tensor_diff_kind {
    GK_TDIFF_IDENTICAL,       /* same type and shape, the same bytes (in one byte order) */
    GK_TDIFF_SAME_VALUES,     /* dequantized to F32, every element equal (NaN equals NaN) */
    GK_TDIFF_DIFFERENT,       /* dequantized to F32, some element differs */
    GK_TDIFF_SHAPE,           /* in both, shapes differ: not compared */
    GK_TDIFF_ONLY_REF,        /* only in the reference */
    GK_TDIFF_ONLY_OTHER,      /* only in the other model */
} gk_tensor_diff_kind;

typedef struct gk_tensor_diff {
    const char *name;         /* NUL terminated, owned by one of the models */
    gk_tensor_diff_kind kind;
    const gk_tensor *ref;     /* the directory entries (NULL on the side that lacks it) */
    const gk_tensor *other;
    /* The numbers, for IDENTICAL, SAME_VALUES and DIFFERENT (zero otherwise). With
     * e = other - ref over the n elements, all sums in double:
     *   rmse = sqrt(sum e^2 / n), max_abs_err = max |e|, ref_rms = sqrt(sum ref^2 / n),
     *   rel_rmse = rmse / ref_rms (0 when both are 0, +inf when only ref_rms is),
     *   cosine = sum ref*other / sqrt(sum ref^2 * sum other^2) (1 when both sums
     *   are 0, 0 when one is). IDENTICAL tensors are not dequantized: their
     *   errors are 0, cosine 1, ref_rms 0 (not computed).
     *   The sums run over the elements finite on both sides. When an element
     *   differs and one side of it is NaN or infinite (n_nonfinite_diff > 0),
     *   rmse, max_abs_err and rel_rmse are +inf and cosine is NaN. */
    uint64_t n;               /* elements */
    uint64_t n_diff;          /* elements whose F32 values differ (NaN equals NaN, 0.0 -0.0) */
    uint64_t n_nonfinite_ref;   /* elements NaN or infinite in the reference (dequantized only) */
    uint64_t n_nonfinite_other; /* the same in the other model */
    uint64_t n_nonfinite_diff;  /* differing elements with a NaN or infinite side */
    int64_t first_diff_row;   /* first row (over ne[1]*ne[2]*ne[3]) with a difference, or -1 */
    double rmse, max_abs_err, rel_rmse, cosine, ref_rms;
} gk_tensor_diff;

/* The one-line verdict of a comparison. */
typedef enum gk_diff_verdict {
    GK_DIFF_IDENTICAL,        /* layout, metadata, directory and every tensor's bytes */
    GK_DIFF_SAME_WEIGHTS,     /* every tensor in both with equal values; metadata,
                                 layout or tensor types differ */
    GK_DIFF_DIFFERS,          /* anything else */
} gk_diff_verdict;

typedef struct gk_diff_result {
    gk_diff_layout layout;
    gk_meta_change *meta;     /* removed and changed in the reference's order, then added */
    size_t n_meta;
    gk_tensor_diff *tensors;  /* the reference's directory order, then tensors only in other */
    size_t n_tensors;
    gk_diff_verdict verdict;
    /* Over the tensors with numbers: element count, and the relative RMSE
     * averaged with each tensor weighted by its element count. */
    uint64_t n_compared_elems;
    double rel_rmse_weighted;  /* +inf when a tensor's rel_rmse is */
    uint64_t n_nonfinite_diff; /* the tensors' n_nonfinite_diff added up */
} gk_diff_result;

typedef struct gk_diff_opts {
    size_t size;              /* GK_OPTS_INIT(gk_diff_opts) */
    int threads;              /* worker threads (<= 0: all cores) */
    gk_progress_fn progress;  /* bytes of tensor data read (both sides), may be NULL */
    void *progress_ctx;
} gk_diff_opts;

/** gk_diff_run() : compares other with ref: layout facts, metadata (typed,
 *  GGUF.* ignored), tensor directory, and every common tensor of the same shape:
 *  byte-compared when both have one type, otherwise (or when the bytes differ)
 *  dequantized to F32 on both sides through the type table's kernels, in row
 *  chunks of bounded size split between worker threads. The numbers do not
 *  depend on the thread count. res (gk_diff_result_free) points into both
 *  inputs' models: keep them open while using it.
 *  @return : GK_OK, or an error naming the tensor (read failure, a type that
 *            cannot be read as F32 or byte-swapped), GK_E_INTERRUPTED. */
GK_API gk_status gk_diff_run(gk_diff_input *ref, gk_diff_input *other, const gk_diff_opts *opts,
                      gk_diff_result *res, gk_error *err);

/** gk_diff_result_free() : releases what gk_diff_run allocated in res. */
GK_API void gk_diff_result_free(gk_diff_result *res);

/* ======================================================================== */
/* Convert: a Hugging Face checkpoint folder to GGUF (ggufkit convert)      */
/* ======================================================================== */

typedef struct gk_convert_opts {
    size_t size;              /* GK_OPTS_INIT(gk_convert_opts) */
    uint32_t out_type;        /* GK_TYPE_F32, F16, BF16 or Q8_0 (the reference's --outtype) */
    bool vocab_only;          /* metadata and vocabulary, no tensors */
    bool ignore_model_card;   /* leave README.md's front matter unread */
    const char *vocab_pre;    /* tokenizer.ggml.pre for a BPE tokenizer, NULL: identify it */
} gk_convert_opts;

/* A planned conversion: the output model and one pipeline step per tensor,
 * reading from the checkpoint, for gk_write_model to write in one pass. */
typedef struct gk_convert gk_convert;

/** gk_convert_plan() : reads dir's config.json, checkpoint and tokenizer and plans
 *  the output. @return : GK_OK with *out (gk_convert_free); GK_E_UNSUPPORTED (an
 *  architecture, dtype or tokenizer not handled: the message lists what is),
 *  GK_E_NOT_FOUND / GK_E_CORRUPT naming the file, tensor or key and offset,
 *  GK_E_ARG (o->size not set with GK_OPTS_INIT). */
GK_API gk_status gk_convert_plan(const char *dir, const gk_convert_opts *o, gk_convert **out, gk_error *err);

/** gk_convert_model() : @return : the output model (owned by c). */
GK_API gk_model *gk_convert_model(gk_convert *c);
/** gk_convert_steps() : @return : one step per tensor of the output model (owned by c). */
GK_API const gk_step *gk_convert_steps(const gk_convert *c);

/** gk_convert_free() : frees the plan and closes its inputs (NULL accepted). */
GK_API void gk_convert_free(gk_convert *c);

/** gk_convert_supported() : @return : the supported architectures, listed. */
GK_API const char *gk_convert_supported(void);

/* ======================================================================== */
/* Export: a GGUF back to a Hugging Face folder (ggufkit export)             */
/* ======================================================================== */

/* The dtype of the exported tensors. GK_EXPORT_AUTO keeps each F32, F16 or
 * BF16 tensor in its own type (nothing is rounded) and dequantizes quantized
 * ones to BF16; the others convert every tensor to that dtype. */
enum { GK_EXPORT_AUTO = 0, GK_EXPORT_F32 = 1, GK_EXPORT_F16 = 2, GK_EXPORT_BF16 = 3 };

/* Default largest data per safetensors file (save_pretrained's "5GB"). */
#define GK_EXPORT_DEFAULT_SHARD ((uint64_t)5000000000u)

typedef struct gk_export_opts {
    size_t size;              /* GK_OPTS_INIT(gk_export_opts) */
    int dtype;                /* GK_EXPORT_* */
    uint64_t max_shard_size;  /* tensor bytes per safetensors file; 0: GK_EXPORT_DEFAULT_SHARD */
    bool force;               /* replace an existing non-empty folder */
    gk_progress_fn progress;  /* tensor bytes written of the total, or NULL */
    void *progress_ctx;
} gk_export_opts;

/* What an export wrote. The strings are static. */
typedef struct gk_export_result {
    const char *hf_class;     /* config.json's architecture */
    const char *dtype;        /* config.json's torch_dtype */
    const char *tokenizer;    /* the tokenizer files written, or "none" */
    uint32_t n_shards;        /* safetensors files */
    uint64_t n_tensors;       /* checkpoint tensors */
    uint64_t tensor_bytes;    /* their bytes */
} gk_export_result;

/** gk_export() : writes the model in the GGUF file `path` as a Hugging Face
 *  folder dir: config.json, model.safetensors (or shards and
 *  model.safetensors.index.json) and the tokenizer files the GGUF holds
 *  enough to write, undoing convert's transformations (names, the Q/K
 *  permutation, merged experts, tied embeddings). Streams tensor by tensor in
 *  bounded memory; dir appears whole or not at all (it may exist empty; with
 *  o->force a non-empty folder holding no input is replaced).
 *  @return : GK_OK with *res filled; GK_E_UNSUPPORTED (architecture, tensor,
 *  type: the message lists what is supported); GK_E_NOT_FOUND (a key export
 *  needs); GK_E_EXISTS, GK_E_ARG, GK_E_SAME_FILE (the destination); GK_E_IO;
 *  reader errors. */
GK_API gk_status gk_export(const char *path, const char *dir, const gk_export_opts *o, gk_export_result *res,
                           gk_error *err);

/** gk_export_supported() : @return : the GGUF architectures export writes, with
 *  their Hugging Face classes, listed. */
GK_API const char *gk_export_supported(void);

/* ======================================================================== */
/* Test control: hooks for crash tests, in one entry point                   */
/* ======================================================================== */

/* Called before every low-level write, truncate, fsync and unlink of an in-place
 * write or a recovery; returning false stops the writer at once, without any
 * cleanup (crash simulation for tests). what names the operation. */
typedef bool (*gk_io_hook)(void *ctx, const char *what);

enum {
    /* gk_test_control(GK_TEST_IO_HOOK, gk_io_hook hook, void *ctx): every later
     * gk_inplace_write, gk_journal_recover, gk_journal_recover_force and
     * gk_journal_discard asks hook before each step (NULL: none). Process-wide;
     * set it before any of them runs, never while one does. */
    GK_TEST_IO_HOOK = 1,
};

/** gk_test_control() : changes a testing behaviour of the library (op: GK_TEST_*,
 *  then op's arguments). Not for production programs.
 *  @return : GK_OK, or GK_E_ARG for an unknown op. */
GK_API gk_status gk_test_control(int op, ...);

#endif /* GGUFKIT_EXPERIMENTAL */

#ifdef __cplusplus
}
#endif

#endif /* GGUFKIT_H */
