/*
 * stage.h - the bytes of an output file on their way to the disk.
 *
 * A stage appends bytes to a file through two aligned buffers: while one
 * fills, a writer thread writes the other, with O_DIRECT where the filesystem
 * takes it. The output then never passes through the page cache: the copy and
 * the disk work at the same time, the final fsync finds nothing left to write,
 * and a model of many gigabytes does not push everything else out of memory
 * (or wait for the kernel to find pages to hold it: on some virtual machines
 * that costs more than the disk). Where O_DIRECT is refused, the same buffers
 * are written normally, and copies from another file go through
 * copy_file_range, which keeps them in the kernel.
 */
#ifndef GK_IO_STAGE_H
#define GK_IO_STAGE_H

#include "ggufkit.h"

typedef struct gk_stage gk_stage;

/** gk_stage_open() : prepares to append to fd, which is empty and open for
 *  writing; name is used in messages and must outlive the stage. With direct,
 *  tries O_DIRECT on fd (dropped again where a write refuses it); without, or
 *  where fd refuses it, writes through the page cache.
 *  @return : GK_OK or GK_E_NOMEM. */
gk_status gk_stage_open(int fd, const char *name, bool direct, gk_stage **out, gk_error *err);

/** gk_stage_write() : appends len bytes. @return : GK_OK, or GK_E_IO when a
 *  write of earlier bytes failed (the message says why and where). */
gk_status gk_stage_write(gk_stage *s, const void *buf, size_t len, gk_error *err);

/** gk_stage_zeros() : appends n zero bytes. */
gk_status gk_stage_zeros(gk_stage *s, uint64_t n, gk_error *err);

/** gk_stage_copy_from() : appends len bytes read from fd at offset off.
 *  @return : GK_OK, GK_E_IO (read or write failed), GK_E_TRUNCATED (fd ended
 *            first: it shrank while being copied). */
gk_status gk_stage_copy_from(gk_stage *s, int src_fd, uint64_t off, uint64_t len, gk_error *err);

/** gk_stage_clone_allow() : lets gk_stage_clone_from share blocks of `block`
 *  bytes (gk_clone_probe's answer; 0 turns it off). */
void gk_stage_clone_allow(gk_stage *s, uint64_t block);

/** gk_stage_clone_from() : appends len bytes of fd at offset off as
 *  gk_stage_copy_from does, but shares the whole blocks among them with fd
 *  (gk_clone_range) when cloning is allowed and off is congruent with the
 *  output offset modulo the block size: the partial blocks at both ends are
 *  copied, the staged bytes before them are written first. The sharing is
 *  deferred while what is appended next continues the same source (see
 *  stage.c: runs), so a later call or gk_stage_finish may be the one that
 *  clones and reports its failure. A refusal turns cloning off for the rest
 *  of the stage and copies. @return : as gk_stage_copy_from; GK_E_IO when a
 *  clone the filesystem took on failed. */
gk_status gk_stage_clone_from(gk_stage *s, int src_fd, uint64_t off, uint64_t len, gk_error *err);

/** gk_stage_settle() : makes the deferred clone run now (copies it where the
 *  filesystem refuses). @return : GK_OK, or as gk_stage_clone_from. */
gk_status gk_stage_settle(gk_stage *s, gk_error *err);

/** gk_stage_cloned() : @return : bytes appended by sharing blocks so far, the
 *  deferred run's whole blocks included. */
uint64_t gk_stage_cloned(const gk_stage *s);

/** gk_stage_copy_swapped() : appends len bytes read from fd at offset off (a
 *  whole number of blocks of block_bytes), byte-swapped by swap in the stage's
 *  own buffers. @return : as gk_stage_copy_from, GK_E_ARG for a partial block. */
gk_status gk_stage_copy_swapped(gk_stage *s, int src_fd, uint64_t off, uint64_t len, size_t block_bytes,
                                gk_byteswap_fn swap, gk_error *err);

/** gk_pread_exact() : reads exactly len bytes of fd at offset off into dst.
 *  @return : GK_OK, GK_E_IO (the read failed), GK_E_TRUNCATED (fd ended first:
 *            it shrank while being copied), each with the offset. */
gk_status gk_pread_exact(int fd, void *dst, size_t len, uint64_t off, gk_error *err);

/** gk_stage_finish() : writes whatever is still staged and waits for every
 *  write (the caller then fsyncs). @return : GK_OK or the first write error. */
gk_status gk_stage_finish(gk_stage *s, gk_error *err);

/** gk_stage_free() : stops the writer thread and frees s (NULL accepted); bytes
 *  not finished are dropped. */
void gk_stage_free(gk_stage *s);

#endif
