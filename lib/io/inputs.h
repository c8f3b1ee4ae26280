/*
 * inputs.h - the files this process reads (its inputs), which no output may
 * replace, and the non-blocking open every input goes through. The public half
 * (gk_inputs_add, gk_inputs_open, gk_inputs_check_output, gk_inputs_clear) is
 * in ggufkit.h.
 */
#ifndef GK_IO_INPUTS_H
#define GK_IO_INPUTS_H

#include "ggufkit.h"

/** inputs_add_fd() : records the file open at fd (named path in messages) as an
 *  input of this process. Thread-safe; a file already recorded is not added again. */
void inputs_add_fd(int fd, const char *path);

/** input_open() : opens path for reading (*fd) without blocking on a FIFO with
 *  no writer: opened O_NONBLOCK, refused unless a regular file or a block device
 *  (a FIFO, socket or character device gets GK_E_UNSUPPORTED, a folder GK_E_IO),
 *  then made blocking again; the file is recorded as an input.
 *  @return : GK_OK, GK_E_IO ("cannot open: " errno's text), GK_E_UNSUPPORTED. */
gk_status input_open(const char *path, int *fd, gk_error *err);

/** input_read_whole() : reads the small file at path whole (at most max bytes)
 *  into *out, NUL-terminated (*len without the NUL), through gk_inputs_open, so
 *  the file is recorded as an input. The caller frees *out.
 *  @return : GK_OK; GK_E_NOT_FOUND (no such file); GK_E_UNSUPPORTED (larger than
 *            max); GK_E_IO; GK_E_NOMEM. err names path. */
gk_status input_read_whole(const char *path, size_t max, char **out, size_t *len, gk_error *err);

#endif
