/*
 * file.h - the layout of gk_file (an opened GGUF file) for the library's modules.
 */
#ifndef GK_FORMAT_FILE_H
#define GK_FORMAT_FILE_H

#include "ggufkit.h"
#include "meta/model.h"

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
};

/** gk_file_open_fd() : gk_open for the plain file open at fd (taken over: closed by
 *  gk_close, or at once on failure): the header is read under the shared header
 *  lock (io/lock.h), and a journal left beside path is refused (GK_E_JOURNAL). */
gk_status gk_file_open_fd(int fd, const char *path, unsigned flags, gk_file **out, gk_error *err);

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

#endif
