/*
 * pipeline.h - the pipeline's entry for writers of several files at once
 * (pipeline/outputs.c): a model written into a finished, not yet committed
 * sink, so that a set of files is committed together (io/sink_set.h).
 */
#ifndef GK_PIPELINE_PIPELINE_H
#define GK_PIPELINE_PIPELINE_H

#include "ggufkit.h"

/** gk_write_model_uncommitted() : everything gk_write_model does but the commit:
 *  on GK_OK, *sink holds the whole file, finished (gk_sink_finish) and waiting
 *  for gk_sink_commit or gk_sink_commit_set; on failure nothing is left. */
gk_status gk_write_model_uncommitted(const char *dest, gk_model *out, const gk_step *steps,
                                     const gk_write_opts *opts, gk_sink **sink, gk_error *err);

/** gk_endian_check() : @return : GK_OK when every tensor of m can change byte order
 *  (its type has a byte-swap kernel), else GK_E_UNSUPPORTED naming the first
 *  tensor and type that cannot. */
gk_status gk_endian_check(const gk_model *m, gk_error *err);

#endif
