/*
 * sink_set.h - several sinks (io/sink.c) committed as one set, for writers of
 * several files (shard sets): every file's bytes are written first, then all
 * are fsynced and linked into place, then each folder is fsynced once. On a
 * journalling filesystem the first fsync commits the others' metadata too, so
 * a set costs about one file's fsync instead of one per file.
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

#endif
