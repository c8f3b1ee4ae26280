/*
 * file.h - the layout of gk_file (an opened GGUF file) for the library's modules,
 * and the seam between the handle (format/file.c) and the parser (format/read.c).
 */
#ifndef GK_FORMAT_FILE_H
#define GK_FORMAT_FILE_H

#include "ggufkit.h"
#include "meta/model.h"

/* A reader of a virtual source's tensor bytes (gk_file_virtual): len bytes of
 * tensor i from byte start of it, made on demand. */
typedef gk_status (*gk_tensor_read_fn)(void *ctx, size_t i, uint64_t start, void *buf, size_t len,
                                       gk_error *err);

struct gk_file {
    char *path;
    int fd;                    /* -1 for memory sources */
    const uint8_t *mem;        /* memory source, or NULL */
    struct gk_source *stream;  /* zstd stream or archive member, or NULL */
    uint64_t size;             /* bytes in the file */
    uint64_t header_end;       /* just past the tensor directory */
    uint64_t data_offset;      /* start of the data section */
    gk_model *model;
    gk_warning *warnings;
    size_t n_warnings, cap_warnings;
    bool bad_utf8;             /* a string value or array element is not UTF-8 */
    bool edit_locked;          /* the edit lock is held (gk_open_exclusive): by fd, or by */
    int lock_fd;               /* this fd when fd is not the file's own (a .zst), else -1 */
    gk_tensor_read_fn tensor_read;   /* a virtual source's tensors (no bytes of its own), or NULL */
    void *tensor_read_ctx;
};

/** gk_file_tensor_borrow() : lends len bytes (or fewer) of tensor i's data
 *  from byte start where f holds them without a copy: a file in memory, or a
 *  file behind a URL whose read-ahead already brought them (gk_source_borrow).
 *  *data, *avail bytes (1 to len), valid until gk_file_release(f, *lease).
 *  @return : false otherwise (read them with gk_file_tensor_read). */
bool gk_file_tensor_borrow(gk_file *f, size_t i, uint64_t start, size_t len, const uint8_t **data, size_t *avail,
                           const void **lease);

/** gk_file_release() : returns a loan of gk_file_tensor_borrow (NULL: nothing). */
void gk_file_release(gk_file *f, const void *lease);

/** gk_file_virtual() : a source without a file: model's tensors (taken over,
 *  freed by gk_close) whose bytes read() makes on demand (ctx stays the
 *  caller's, alive until gk_close). The pipeline reads it as it reads a stream,
 *  in bounded chunks: a converter's transforms stay out of the writer.
 *  path only names it in messages. @return : GK_OK or GK_E_NOMEM (model freed). */
gk_status gk_file_virtual(const char *path, gk_model *model, gk_tensor_read_fn read, void *ctx,
                          gk_file **out, gk_error *err);

/** gk_file_open_fd() : gk_open for the plain file open at fd (taken over: closed by
 *  gk_close, or at once on failure): the header is read under the shared header
 *  lock (io/lock.h), and a journal left beside path is refused (GK_E_JOURNAL). */
gk_status gk_file_open_fd(int fd, const char *path, unsigned flags, gk_file **out, gk_error *err);

/** gk_file_parse_header() : reads and validates the header of f (its size and
 *  source set) into a new f->model (format/read.c). On failure the caller closes
 *  f. @return : GK_OK or the first error, naming what was read and its offset. */
gk_status gk_file_parse_header(gk_file *f, unsigned flags, gk_error *err);

/** gk_file_source_read() : reads len bytes at off from f's stream or plain file
 *  (not a memory source), all of them or an error (GK_E_IO, GK_E_TRUNCATED). */
gk_status gk_file_source_read(gk_file *f, uint64_t off, void *buf, size_t len, gk_error *err);

/** gk_file_add_warning() : records a warning on f (dropped silently when out of memory). */
void gk_file_add_warning(gk_file *f, gk_rule rule, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The data-section position that lets the most unchanged tensor bytes clone
 * (format/layout.c). */
typedef struct gk_clone_layout {
    uint64_t residue;          /* data start modulo the block that makes them congruent */
    uint64_t bytes;            /* unchanged tensor bytes congruent then (0: none) */
    gk_file *src;              /* the input most of them come from */
} gk_clone_layout;

/** gk_layout_clone_residue() : among out's tensors copied unchanged from a plain
 *  file (steps, one per tensor; out laid out), those of a block or more: the
 *  residue modulo block of the data-section start that makes the most of their
 *  bytes congruent with their input offsets. @return : GK_OK or GK_E_NOMEM. */
gk_status gk_layout_clone_residue(const gk_model *out, const gk_step *steps, uint64_t block,
                                  gk_clone_layout *best, gk_error *err);

/** gk_model_pad_to_residue() : makes m's data section (gk_model_data_start)
 *  start at `residue` modulo `block` by growing its GK_PADDING_KEY pair (added
 *  at the end when absent; a pair that is not an array of UINT8 becomes one);
 *  nothing changes when it starts there already. Used so that a rewrite's
 *  tensors keep their input's position modulo the filesystem block and clone.
 *  *done is false when no padding gets there (residue not a multiple of the
 *  alignment, or block not one of it). @return : GK_OK or GK_E_NOMEM. */
gk_status gk_model_pad_to_residue(gk_model *m, uint64_t block, uint64_t residue, bool *done,
                                         gk_error *err);

#endif
