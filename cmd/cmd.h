/*
 * cmd.h - what every subcommand shares: its signature, exit codes, and the small
 * helpers for reporting errors, parsing sizes and showing progress.
 *
 * A subcommand is `int cmd_NAME(int argc, char **argv)` where argv[0] is the
 * subcommand's name. It returns one of the GK_EXIT_* codes.
 */
#ifndef GK_CMD_H
#define GK_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ggufkit.h"

enum { GK_EXIT_OK = 0, GK_EXIT_FAIL = 1, GK_EXIT_USAGE = 2 };

typedef int (*cmd_fn)(int argc, char **argv);

/* One row of the dispatch table in main.c. */
typedef struct cmd_entry {
    const char *name;
    cmd_fn run;
    const char *summary;
} cmd_entry;

/** cmd_heap_setup() : grows the heap in one step on transparent huge pages
 *  (cmd/heap.c); called first thing by main. */
void cmd_heap_setup(void);

int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_repack(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_edit(int argc, char **argv);
int cmd_split(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_endian(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_hash(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_export(int argc, char **argv);

/* The help paragraph on inputs that are not plain GGUF files (info, dump, verify). */
#define CMD_STREAM_HELP                                                                        \
    "A .gguf.zst file and an archive member (ARCHIVE::MEMBER) are read as streams;\n"          \
    "decoding zstd takes about the stream's window in memory (up to 2 GiB for files\n"        \
    "made with zstd --long=31); GGUFKIT_ZSTD_WINDOW_LOG_MAX=N refuses windows larger\n"       \
    "than 2^N bytes. A pipe (cat f.gguf | ... /dev/stdin) cannot be read: the reader\n"       \
    "needs a seekable file. A .gguf.zst behind a URL is read only as far as needed:\n"        \
    "listing its header does not check that all of its data is there (docs/remote.md).\n"

/** cmd_report() : prints "ggufkit: PATH: offset N: message" for err on stderr
 *  (path and offset omitted when absent). @return : GK_EXIT_FAIL. */
int cmd_report(const char *path, const gk_error *err);

/** cmd_error_text() : err as one line for a listing or finding: "FILE: offset N:
 *  message", FILE when err names the file it is about (err->file), the offset
 *  when known. @return : buf. */
const char *cmd_error_text(const gk_error *err, char *buf, size_t size);

/** cmd_open_listing() : opens a file for a read-only listing (info, dump). A file
 *  whose header is fine but whose tensor data is misplaced (misaligned, past the
 *  end, overlapping: a partial download, also inside a container: GK_OPEN_WHOLE)
 *  is still opened, leniently, so its header
 *  can be shown; *placement then holds that error, for the caller to report after
 *  the listing. @return : GK_EXIT_OK; GK_EXIT_FAIL with *f NULL (reported: nothing
 *  to list) or with *f set (list it, report *placement, exit 1). flags are
 *  added to gk_open's (GK_OPEN_PREVIEW where long arrays are only summarized). */
int cmd_open_listing(const char *path, unsigned flags, gk_file **f, gk_error *placement);

/** cmd_usage_error() : prints "ggufkit CMD: message" and a hint to use --help.
 *  @return : GK_EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** cmd_rule_name() : @return : whose rule a finding cites: "GGUF spec",
 *  "llama.cpp loader", "gguf python reader", "model schema". */
const char *cmd_rule_name(gk_rule rule);

/** cmd_print_warnings() : prints the reader's warnings about f on stderr, one
 *  "ggufkit: PATH: warning: offset N: message (rule: R)" line each. */
void cmd_print_warnings(const char *path, const gk_file *f);

/** cmd_parse_u64() : parses a decimal (or 0x hex) unsigned integer. @return : true on success. */
bool cmd_parse_u64(const char *s, uint64_t *out);

/** cmd_parse_size() : parses "500M", "2G", "1000" (K/M/G decimal units, as
 *  llama-gguf-split counts them). @return : true on success. */
bool cmd_parse_size(const char *s, uint64_t *out);

/* A progress bar on stderr when it is a terminal, silent otherwise. */
typedef struct cmd_progress {
    bool active;
    const char *label;
    uint64_t total;
    uint64_t done;
    double start;
    double last_draw;
    const gk_write_stats *stats;   /* bytes cloned and copied, shown when some cloned; may be NULL */
} cmd_progress;

/** cmd_progress_start() : begins a bar of total units (bytes) labelled label. */
void cmd_progress_start(cmd_progress *p, const char *label, uint64_t total);
/** cmd_progress_update() : sets the units done so far; redraws at most 10 times a second. */
void cmd_progress_update(cmd_progress *p, uint64_t done);
/** cmd_progress_finish() : clears the bar. */
void cmd_progress_finish(cmd_progress *p);
/** cmd_clone_summary() : when some bytes were cloned, says on stderr how many
 *  were cloned and how many copied (silent otherwise: the output is as ever). */
void cmd_clone_summary(const gk_write_stats *st);

struct cJSON;

/** cmd_json_string() : a cJSON string item holding the n bytes at s exactly, NUL
 *  bytes included (s[n] must be readable and NUL, as the library's strings are).
 *  Ill-formed UTF-8 (which the reader lets through in values, with a warning)
 *  becomes U+FFFD per maximal ill-formed part, as Python decodes with "replace".
 *  @return : the item (caller deletes it) or NULL when out of memory. */
struct cJSON *cmd_json_string(const char *s, uint64_t n);

/* Readable values (cmd/show.c), shared by dump and diff. */

/** cmd_print_quoted() : prints n bytes of s quoted, escaped, cut after max bytes
 *  ("..." then follows). @return : true if the string was cut. */
bool cmd_print_quoted(FILE *out, const char *s, uint64_t n, uint64_t max);
/** cmd_print_element() : prints element i of a packed array of type elem. */
void cmd_print_element(FILE *out, gk_vtype elem, const void *data, uint64_t i);
/** cmd_print_value() : prints a scalar, or an array as "N elements [a, b, ...]". */
void cmd_print_value(FILE *out, const gk_value *v);
/** cmd_tensor_type_name() : @return : the type's name, also for retired ids; "unknown
 *  type N" for an id ggufkit does not know (buf holds it: 24 bytes suffice). */
const char *cmd_tensor_type_name(uint32_t id, char *buf, size_t size);
/** cmd_shape_text() : "[4096, 32000]" (ne[0] first). */
void cmd_shape_text(char *buf, size_t size, const gk_tensor *t);

/** cmd_now() : @return : monotonic seconds. */
double cmd_now(void);

/* Writes that stop cleanly when interrupted (cmd/util.c): every subcommand that
 * writes, and the long reads of verify, hash, diff and index. */

/** cmd_catch_interrupts() : makes SIGINT, SIGTERM and SIGHUP stop a write cleanly
 *  (cmd_write_progress then returns false, so nothing is left under final names)
 *  and turns SIGXFSZ (file size limit) into a write error. */
void cmd_catch_interrupts(void);
/** cmd_interrupted() : @return : true once an interrupt caught by
 *  cmd_catch_interrupts has come (for a writer that does not report progress
 *  through cmd_write_progress). */
bool cmd_interrupted(void);
/** cmd_write_progress() : a gk_progress_fn over a cmd_progress (ctx); false once interrupted. */
bool cmd_write_progress(void *ctx, uint64_t done, uint64_t total);

/* The shard-set report of info and dump (cmd/shard_report.c). */

/** cmd_split_info_text() : when m (read from path) is a shard, prints the lines about
 *  its set (checked with gk_split_set_open) that `info` shows; nothing otherwise. */
void cmd_split_info_text(FILE *out, const char *path, const gk_model *m);
/** cmd_split_info_json() : the same as a JSON object, or JSON null for a non-shard. */
struct cJSON *cmd_split_info_json(const char *path, const gk_model *m);

#endif
