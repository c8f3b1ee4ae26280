/*
 * sink_set.h - several sinks (io/sink.c) committed as one set, for writers of
 * several files (shard sets): every file's bytes are written first, then all
 * are fsynced and linked into place, then each folder is fsynced once. On a
 * journalling filesystem the first fsync commits the others' metadata too, so
 * a set costs about one file's fsync instead of one per file. Also the sink's
 * other calls the pipeline makes but no program does (copies from a file,
 * block cloning).
 */
#ifndef GK_IO_SINK_SET_H
#define GK_IO_SINK_SET_H

#include "ggufkit.h"

/** gk_sink_finish() : ends s's compression and staging: every byte is in the
 *  file (not yet fsynced), and the stage's buffers and thread are released, so
 *  that many finished sinks may wait for their commit. Nothing may be written
 *  to s afterwards; gk_sink_offset and gk_sink_bytes_cloned stay exact. A
 *  finished sink may be finished again (no-op). @return : GK_OK or the
 *  write's error (s is then still to be aborted). */
gk_status gk_sink_finish(gk_sink *s, gk_error *err);

/** gk_sink_commit_set() : commits sinks[0..n) in order as gk_sink_commit does
 *  each, but fsyncs every distinct folder once, after the last link. Every
 *  sink is freed. @return : GK_OK; or the first failure, with *published the
 *  number of sinks linked into place before it (their folders fsynced; the
 *  caller takes them back if the set must be all or nothing) and the rest
 *  aborted. */
gk_status gk_sink_commit_set(gk_sink **sinks, size_t n, size_t *published, gk_error *err);

/* ---- Copying and cloning from an input file (pipeline.c) ---- */

/** gk_sink_copy_from() : appends len bytes read from fd at offset off: read
 *  straight into the sink's write buffers, or with GK_SINK_BUFFERED (and where
 *  O_DIRECT is refused) through copy_file_range where the kernel allows it. */
gk_status gk_sink_copy_from(gk_sink *s, int fd, uint64_t off, uint64_t len, gk_error *err);
/** gk_sink_copy_swapped() : appends len bytes read from fd at offset off, a
 *  whole number of blocks of block_bytes, each byte-swapped by swap (a type's
 *  byteswap kernel) on the way. @return : as gk_sink_copy_from; GK_E_ARG when len
 *  is not whole blocks. */
gk_status gk_sink_copy_swapped(gk_sink *s, int fd, uint64_t off, uint64_t len, size_t block_bytes,
                               gk_byteswap_fn swap, gk_error *err);
/** gk_sink_clone_probe() : tries whether the output can share blocks with the
 *  file open at fd (same filesystem, one that clones: XFS with reflink, btrfs);
 *  when it can, later gk_sink_copy_from calls from any file clone the whole
 *  blocks whose source and output offsets are congruent modulo the block size,
 *  and copy the rest (a refusal then turns cloning off and copies). Call before
 *  the first byte is written; never with GK_SINK_NO_CLONE or a compressed dest.
 *  @return : the block size clones are made in, or 0 (everything is copied). */
uint64_t gk_sink_clone_probe(gk_sink *s, int fd);
/** gk_sink_settle() : makes the clones gk_sink_copy_from deferred (a run of
 *  blocks grows while the next bytes continue it) now, copying where the
 *  filesystem refuses them; gk_sink_bytes_cloned is exact afterwards.
 *  gk_sink_commit settles too. @return : GK_OK or the clone's or copy's error. */
gk_status gk_sink_settle(gk_sink *s, gk_error *err);
/** gk_sink_bytes_cloned() : @return : bytes appended by sharing blocks so far,
 *  a deferred run's whole blocks included (the rest of gk_sink_offset was
 *  written or copied). */
uint64_t gk_sink_bytes_cloned(const gk_sink *s);

#endif
