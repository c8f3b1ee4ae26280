/*
 * clone.h - sharing a file's blocks with another file instead of copying them.
 *
 * On filesystems that share extents (XFS with reflink, btrfs, ...), a range of
 * whole blocks can be made to appear in a second file without a byte being
 * read or written (FICLONERANGE): the blocks are copy-on-write afterwards, so
 * a later change to either file never shows through in the other. Only ranges
 * whose source and destination offsets are congruent modulo the filesystem's
 * block size can be shared that way; everything else is copied.
 */
#ifndef GK_IO_CLONE_H
#define GK_IO_CLONE_H

#include <stdbool.h>
#include <stdint.h>

/** gk_clone_block() : @return : the block size clones of dst_fd are made in
 *  (its filesystem's block size, from fstat), at least 512. */
uint64_t gk_clone_block(int dst_fd);

/** gk_clone_range() : makes dst_fd's bytes [dst_off, dst_off + len) the same
 *  extents as src_fd's [src_off, src_off + len), copy-on-write. Both offsets
 *  and len are multiples of the block size (len may end at src's end).
 *  @return : 0, or the errno the kernel answered (EOPNOTSUPP, EXDEV, EINVAL,
 *            ENOTTY: this pair of files cannot share blocks; others: failures). */
int gk_clone_range(int src_fd, uint64_t src_off, int dst_fd, uint64_t dst_off, uint64_t len);

/** gk_clone_refused() : @return : true when e (from gk_clone_range) means that
 *  the files cannot share blocks, so copying is the answer, not an error. */
bool gk_clone_refused(int e);

/** gk_clone_probe() : tries whether blocks of src_fd can be shared into the
 *  empty file dst_fd (clones src's first block to dst and truncates dst back
 *  to empty). @return : the block size when they can, 0 when not (or when src
 *  is smaller than one block, so nothing of it could be shared). */
uint64_t gk_clone_probe(int src_fd, int dst_fd);

#endif
