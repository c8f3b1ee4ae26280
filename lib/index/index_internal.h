/*
 * index_internal.h - what the modules of the index (lib/index/) share: the
 * parsed summary of one GGUF file that a worker hands to the database writer,
 * the value-to-text helpers, and the directory walk.
 */
#ifndef GK_INDEX_INTERNAL_H
#define GK_INDEX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggufkit.h"

/* One metadata pair as stored in the kv table. */
typedef struct ix_kv {
    char *key;
    const char *type;           /* gk_vtype_name */
    char *value;                /* text of a scalar, JSON of an array */
    size_t value_len;
    int num_kind;               /* 0 none, 1 integer (num_i), 2 real (num_f) */
    int64_t num_i;
    double num_f;
    const char *array_type;     /* element type name, NULL for scalars */
    int64_t array_len;          /* elements of an array, -1 for scalars */
    int64_t offset;             /* where the pair starts in the file */
} ix_kv;

/* One tensor directory entry as stored in the tensors table. */
typedef struct ix_tensor {
    char *name;
    char type[24];
    uint32_t type_id, n_dims;
    uint64_t ne[GK_MAX_DIMS];
    uint64_t n_elements, offset, nbytes;
    int64_t info_offset;
    char xxh64[17];             /* hex digest of the data (index --hash), "" when not read */
    char xxh64_canonical[17];   /* the same of its little-endian form (hash --canonical):
                                   xxh64 for a little-endian file; "" when not read */
} ix_tensor;

/* One row of the files table: a GGUF file, or a GGUF member of an archive. */
typedef struct ix_row {
    char *member;               /* NULL for a plain or compressed file */
    uint64_t data_size;         /* bytes of GGUF data (decompressed) */
    /* failure */
    char *error;                /* NULL for a good file */
    const char *error_code;
    int64_t error_offset;
    /* header */
    gk_file_facts facts;        /* version, byte order, alignment, counts, data offset */
    /* derived */
    char *architecture, *name, *file_type, *quantized_by, *source_hint, *imatrix_file,
        *imatrix_dataset, *base_model;
    int64_t file_type_id;       /* general.file_type, -1 when absent */
    uint64_t n_params, tensor_bytes;
    int64_t context_length;     /* ARCH.context_length, -1 when absent */
    bool has_chat_template;
    int64_t split_no, split_count;   /* -1 when not a shard */
    char *group_key;            /* rows with the same key form one model */
    int64_t shape_sig;          /* XOR of per-tensor hashes of name and shape */
    char content_xxh64[17];     /* xxh64 of all tensor data in order (index --hash), or "" */
    size_t n_warnings;
    char **warnings;
    ix_kv *kvs;
    size_t n_kvs;
    ix_tensor *tensors;
    size_t n_tensor_rows;
} ix_row;

/* What a worker found at one path. */
typedef struct ix_result {
    size_t job;                 /* index of the path in the work list */
    bool not_gguf;              /* neither GGUF, compressed GGUF, nor an archive with GGUF members */
    size_t headers_read;        /* gk_open calls made */
    ix_row *rows;
    size_t n_rows, cap_rows;
    size_t mem_bytes;           /* rough memory held (for the queue's bound) */
    struct ix_result *next;
} ix_result;

/* Options the parser needs. */
typedef struct ix_parse_opts {
    bool full_arrays;
    unsigned array_head;        /* elements kept of each array otherwise */
    bool hash;                  /* read the tensor data for the xxh64 digests */
} ix_parse_opts;

/** ix_parse_path() : reads the file at path (a GGUF file, a .gguf.zst, or an archive
 *  whose GGUF members each become a row). A file that cannot be read becomes a
 *  row with its error. @return : the result, or NULL when out of memory. */
ix_result *ix_parse_path(const char *path, const ix_parse_opts *o);

/** ix_result_free() : releases a result (NULL accepted). */
void ix_result_free(ix_result *r);

/** ix_value_text() : the text of a metadata value for the kv table: scalars as
 *  plain text (strings as their bytes, numbers as `ggufkit dump --json` writes
 *  them, bools true/false), arrays as JSON (the first head elements of every
 *  array level unless head is 0). *len receives the length.
 *  @return : malloc'ed text, or NULL when out of memory. */
char *ix_value_text(const gk_value *v, unsigned head, size_t *len);

/* A file found by the directory walk. */
typedef struct ix_found {
    char *path;                 /* absolute */
    uint64_t size;
    int64_t mtime_ns;
} ix_found;

typedef struct ix_found_list {
    ix_found *items;
    size_t n, cap;
} ix_found_list;

/* Where the walk reports a path it leaves out (fn may be NULL). */
typedef struct ix_walk_report {
    void (*fn)(void *ctx, const char *path, const char *why);
    void *ctx;
} ix_walk_report;

/** ix_walk() : appends every regular file under path (or path itself when it is a
 *  file) to list, folders in name order, at any depth. Symbolic links inside
 *  folders are not followed. Each folder that cannot be read and each file whose
 *  path is PATH_MAX bytes or more goes to rep (NULL accepted) instead, with why.
 *  @return : GK_OK, GK_E_NOT_FOUND (path does not exist), GK_E_NOMEM. */
gk_status ix_walk(const char *path, ix_found_list *list, const ix_walk_report *rep, gk_error *err);

/** ix_found_list_free() : releases the list's paths and array. */
void ix_found_list_free(ix_found_list *list);

/** ix_shard_prefix() : when name (a file name or member path, ".zst" allowed at
 *  the end) is PREFIX-%05d-of-%05d.gguf for shard no (0-based) of count,
 *  @return : malloc'ed PREFIX, else NULL. */
char *ix_shard_prefix(const char *name, int64_t no, int64_t count);

#endif
