/*
 * db.h - the index's database (index/db.c) as the run (index/index.c) uses it:
 * the open database with its prepared statements, the map of the files it
 * remembers, and the writes of one run.
 */
#ifndef GK_INDEX_DB_H
#define GK_INDEX_DB_H

#include <sqlite3.h>

#include "index/index_internal.h"
#include "util/hashmap.h"

/* What the database remembers of one path. */
typedef struct known {
    char *path;
    uint64_t size;
    int64_t mtime_ns;
    uint32_t n_rows;          /* rows in files (0 for a remembered non-GGUF) */
    uint32_t n_unhashed;      /* good rows without content_xxh64 (read again by --hash) */
    bool skipped;             /* remembered in the skipped table */
    bool seen;                /* found by this run's walk */
} known;

typedef struct known_map {
    known *items;             /* in the order they were added */
    size_t n, cap;
    gk_hashmap map;           /* FNV-1a of the path -> position in items */
} known_map;

/* The prepared statements. */
enum {
    ST_SELECT_PATH, ST_UPSERT_FILE, ST_INSERT_KV, ST_INSERT_TENSOR, ST_INSERT_WARNING,
    ST_DELETE_KV, ST_DELETE_TENSORS, ST_DELETE_WARNINGS, ST_DELETE_FILE, ST_UPSERT_SKIPPED,
    ST_DELETE_SKIPPED, ST_COUNT
};

/* An open database. */
typedef struct ix_db {
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    const char *path;
    char now[32];
} ix_db;

/** ix_known_find() : @return : the entry of path, or NULL. */
known *ix_known_find(known_map *m, const char *path);
/** ix_known_add() : adds path (copied); an existing entry is returned as it is.
 *  @return : the entry, or NULL when out of memory. */
known *ix_known_add(known_map *m, const char *path);
/** ix_known_free() : releases the map's paths and slots. */
void ix_known_free(known_map *m);

/** ix_db_open() : opens (creating) the database at path in WAL mode with the
 *  schema brought up to date and the statements prepared. @return : GK_OK or
 *  GK_E_IO (closed again). */
gk_status ix_db_open(ix_db *d, const char *path, gk_error *err);
/** ix_db_close() : finalizes the statements and closes the database. */
void ix_db_close(ix_db *d);
/** ix_db_exec() : runs sql (no results). @return : GK_OK or GK_E_IO with the database's message. */
gk_status ix_db_exec(ix_db *d, const char *sql, gk_error *err);
/** ix_db_count() : @return : the number a one-number query gives, or 0. */
int64_t ix_db_count(ix_db *d, const char *sql);
/** ix_db_load_known() : loads the database's files and remembered non-GGUF
 *  files into m. @return : GK_OK, GK_E_NOMEM, GK_E_IO. */
gk_status ix_db_load_known(ix_db *d, known_map *m, gk_error *err);
/** ix_db_write_result() : writes what a worker found at one path (fnd), in place
 *  of what was stored for it, counting into stats. @return : GK_OK or an error. */
gk_status ix_db_write_result(ix_db *d, const ix_found *fnd, const ix_result *r, gk_index_stats *stats,
                             gk_error *err);
/** ix_db_forget_vanished() : the known paths this walk did not see are counted as
 *  vanished when they no longer exist, and with prune removed. @return : GK_OK or an error. */
gk_status ix_db_forget_vanished(ix_db *d, known_map *m, bool prune, gk_index_stats *stats, gk_error *err);
/** ix_db_rebuild_models() : rebuilds the models table from the files table (in the
 *  caller's transaction). @return : GK_OK or GK_E_IO. */
gk_status ix_db_rebuild_models(ix_db *d, gk_error *err);

#endif
