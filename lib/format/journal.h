/*
 * journal.h - the crash-safety helper of in-place edits: the journal that holds a
 * header's old and new bytes while an in-place write runs (its hooked I/O is
 * io/hooked.h), and the verdict on a journal found beside a file.
 */
#ifndef GK_FORMAT_JOURNAL_H
#define GK_FORMAT_JOURNAL_H

#include "ggufkit.h"
#include "io/hooked.h"

/** journal_path() : @return : malloc'ed PATH.ggufkit-journal, or NULL. */
char *journal_path(const char *path);

/* What a journal records: the file's identity and sizes before and after the
 * write, the changing range's old bytes [off, off + old_len) and new bytes
 * [off, off + new_len), and digests of the bytes the write leaves alone (the
 * prefix [0, off) whole, the rest a sample: journal.c). */
typedef struct journal_info {
    unsigned version;          /* 1 (old, inode only) or 2 */
    uint64_t ino, dev;
    uint64_t old_size, new_size;
    uint64_t off;
    const uint8_t *old;
    size_t old_len;
    const uint8_t *new_bytes;  /* version 2 */
    size_t new_len;
    uint8_t prefix_sum[32], rest_sum[32];
} journal_info;

/** journal_write() : creates jpath (refused when it exists) holding info and
 *  the digests of fd's unchanged bytes, its length and SHA-256, fsyncs it and
 *  its folder. @return : GK_OK, GK_E_EXISTS, GK_E_IO, GK_E_INTERRUPTED. */
gk_status journal_write(io_ctx *io, const char *jpath, int fd, journal_info *info, gk_error *err);

/* What a journal found beside a file says about it. */
typedef enum journal_verdict {
    JOURNAL_TORN,       /* incomplete or not a journal: the file was never touched */
    JOURNAL_OLD,        /* the file holds exactly the bytes the journal saved */
    JOURNAL_PARTLY,     /* the file holds the edit's bytes, wholly or in part: restore */
    JOURNAL_STALE,      /* the file's bytes are not the ones the journal was written for */
    JOURNAL_UNPROVEN,   /* a format-1 journal of the same inode, which cannot prove more */
    JOURNAL_FOREIGN,    /* not a regular file (a folder, a link...): not a journal ggufkit wrote */
} journal_verdict;

/** journal_judge() : reads path's journal (if any: *there) and judges it against
 *  fd, the open file. why (n bytes) receives, for a stale journal, what differs.
 *  @return : GK_OK, or GK_E_IO / GK_E_NOMEM (nothing judged). */
gk_status journal_judge(int fd, const char *path, bool *there, journal_verdict *v, char *why, size_t n,
                        gk_error *err);

/** journal_refusal() : sets err to GK_E_JOURNAL with the message a reader gives
 *  for a file with a journal of verdict v beside it (what to run next). */
gk_status journal_refusal(const char *path, journal_verdict v, const char *why, gk_error *err);

/* The hook-taking forms of gk_inplace_write, gk_journal_recover,
 * gk_journal_recover_force and gk_journal_discard (the suites stop them at each
 * step; hook may be NULL). The stable functions pass gk_test_control's hook. */
gk_status gk_inplace_write_hooked(gk_file *f, const gk_model *m, gk_io_hook hook, void *hook_ctx, bool *changed,
                                  gk_error *err);
gk_status gk_journal_recover_hooked(const char *path, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                                    void *hook_ctx, gk_error *err);
gk_status gk_journal_recover_force_hooked(const char *path, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                                          void *hook_ctx, gk_error *err);
gk_status gk_journal_discard_hooked(const char *path, unsigned wait_ms, gk_recovery *what, gk_io_hook hook,
                                    void *hook_ctx, gk_error *err);

#endif
