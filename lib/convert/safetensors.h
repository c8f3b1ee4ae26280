/*
 * safetensors.h - one safetensors file, its header checked as strictly as a GGUF
 * header: an 8-byte little-endian header length, a JSON object of tensors
 * (dtype, shape, data_offsets relative to the end of the header) and an
 * optional "__metadata__" object of strings, then the data. The tensors' byte
 * ranges must tile the data exactly (in some order, without gap or overlap, to
 * the end of the file) and agree with their dtype and shape. Tensor bytes are
 * read with positional reads; nothing is held but the directory.
 */
#ifndef GK_CONVERT_SAFETENSORS_H
#define GK_CONVERT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "ggufkit.h"

/* The largest header accepted (as the format's reference reader). */
#define GK_ST_HEADER_MAX (100u * 1000u * 1000u)
#define GK_ST_MAX_DIMS 8

typedef enum gk_st_dtype {
    GK_ST_BOOL, GK_ST_U8, GK_ST_I8, GK_ST_F8_E5M2, GK_ST_F8_E4M3, GK_ST_I16, GK_ST_U16,
    GK_ST_F16, GK_ST_BF16, GK_ST_I32, GK_ST_U32, GK_ST_F32, GK_ST_F64, GK_ST_I64, GK_ST_U64,
    GK_ST_DTYPE_COUNT
} gk_st_dtype;

typedef struct gk_st_tensor {
    char *name;
    gk_st_dtype dtype;
    uint32_t n_dims;
    uint64_t shape[GK_ST_MAX_DIMS];   /* as written: slowest-varying first */
    uint64_t offset;                  /* absolute file offset of the first byte */
    uint64_t nbytes;
} gk_st_tensor;

typedef struct gk_st_file gk_st_file;

/** gk_st_dtype_name() : @return : "F16" ... for a dtype, or NULL. */
const char *gk_st_dtype_name(gk_st_dtype d);

/** gk_st_dtype_size() : @return : bytes per element of a dtype (0 if unknown). */
uint32_t gk_st_dtype_size(gk_st_dtype d);

/** gk_st_open() : opens and checks the safetensors file at path.
 *  @return : GK_OK, GK_E_IO, GK_E_NOMEM, or GK_E_CORRUPT / GK_E_TRUNCATED /
 *            GK_E_UNSUPPORTED (an unknown dtype) naming the file, the tensor and
 *            the byte offset. */
gk_status gk_st_open(const char *path, gk_st_file **out, gk_error *err);

/** gk_st_parse() : checks a header held in memory: the len bytes of JSON that
 *  follow the 8-byte length in a file of file_size bytes called path (for
 *  messages). The handle reads no data (gk_st_read fails). @return : as gk_st_open. */
gk_status gk_st_parse(const char *json, size_t len, uint64_t file_size, const char *path, gk_st_file **out,
                      gk_error *err);

/** gk_st_count() / gk_st_at() : the tensors, in the order of their bytes in the file. */
size_t gk_st_count(const gk_st_file *f);
const gk_st_tensor *gk_st_at(const gk_st_file *f, size_t i);

/** gk_st_sorted() : the tensors in the order of their names (byte order, which is
 *  code point order): the order a checkpoint's tensors are converted in. */
const gk_st_tensor *gk_st_sorted(const gk_st_file *f, size_t i);

/** gk_st_find() : @return : the tensor called name, or NULL. */
const gk_st_tensor *gk_st_find(const gk_st_file *f, const char *name);

/** gk_st_metadata() : @return : the "__metadata__" string of key, or NULL. */
const char *gk_st_metadata(const gk_st_file *f, const char *key);

/** gk_st_path() : @return : the path the file was opened as. */
const char *gk_st_path(const gk_st_file *f);

/** gk_st_read() : reads len bytes of t's data from byte start of it.
 *  @return : GK_OK, GK_E_ARG (outside the tensor), GK_E_IO, GK_E_TRUNCATED (the
 *            file shrank). */
gk_status gk_st_read(gk_st_file *f, const gk_st_tensor *t, uint64_t start, void *buf, size_t len,
                     gk_error *err);

/** gk_st_close() : releases f (NULL accepted). */
void gk_st_close(gk_st_file *f);

#endif
