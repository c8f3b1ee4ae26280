/*
 * shardname.h - the one place shard file names are made and read:
 * PREFIX-%05d-of-%05d.gguf, shard numbers counted from 1 in the name (as
 * llama-gguf-split and llama-quantize --keep-split name them) and from 0 here.
 * A stored shard may be compressed: PREFIX-%05d-of-%05d.gguf.zst.
 */
#ifndef GK_SPLIT_SHARDNAME_H
#define GK_SPLIT_SHARDNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** gk_shard_name_format() : writes the name of shard k (0-based) of n with PREFIX
 *  to buf (size bytes). @return : false when it does not fit. */
bool gk_shard_name_format(char *buf, size_t size, const char *prefix, uint64_t k, uint64_t n);

/** gk_shard_name() : the same name malloc'ed. @return : it, or NULL when out of memory. */
char *gk_shard_name(const char *prefix, uint64_t k, uint64_t n);

/** gk_shard_name_prefix() : when the first len bytes of name are the name of shard
 *  k (0-based) of n, PREFIX (malloc'ed, never empty); NULL when they are not (or
 *  out of memory). The caller checks k < n: the name alone does not. */
char *gk_shard_name_prefix(const char *name, size_t len, uint64_t k, uint64_t n);

/** gk_shard_name_parse() : reads path as the name of a shard: on true, *prefix
 *  (malloc'ed), *k (0-based) and *n, and path is exactly gk_shard_name(*prefix, *k, *n). */
bool gk_shard_name_parse(const char *path, char **prefix, uint64_t *k, uint64_t *n);
/** gk_shard_tail() : @return : the tail after ".gguf" that the first len bytes of
 *  name end in when the shard is stored compressed (".zst"), else "" (static). */
const char *gk_shard_tail(const char *name, size_t len);

/** gk_shard_tail_at() : @return : the i-th tail a stored shard may have ("" first,
 *  then ".zst"), or NULL past the last. */
const char *gk_shard_tail_at(size_t i);

/** gk_shard_path_prefix() : gk_shard_name_prefix of a stored shard's path, with
 *  its tail (gk_shard_tail) set apart in *tail (may be NULL). @return : PREFIX
 *  (malloc'ed), or NULL when path is not the name of shard k of n. */
char *gk_shard_path_prefix(const char *path, uint64_t k, uint64_t n, const char **tail);

/** gk_shard_path() : the stored name of shard k (0-based) of n: PREFIX's shard
 *  name followed by tail ("" or ".zst"). @return : it malloc'ed, or NULL when out of memory. */
char *gk_shard_path(const char *prefix, uint64_t k, uint64_t n, const char *tail);

#endif
