/*
 * db.c - the index's database: the SQLite schema (created, or brought up to
 * date), the prepared statements, what it remembers of each file (loaded into
 * a hash map so a run can leave unchanged files alone), the rows of one file
 * written in place of its old ones, the files that vanished, and the models
 * table (shard sets and single files, their quant mixes and weights digests)
 * rebuilt from the files table. Only the thread that runs the index calls it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "io/http.h"
#include "index/db.h"
#include "io/digest.h"
#include "shared/dynlib.h"
#include "util/grow.h"

/* The SQLite functions used here, reached through S: SQLite is opened when a
 * database is first opened (shared/dynlib.h), not by every command at start-up. */
#define SQLITE_FUNCS(X) \
    X(sqlite3_bind_double) X(sqlite3_bind_int) X(sqlite3_bind_int64) X(sqlite3_bind_null) \
    X(sqlite3_bind_text) X(sqlite3_bind_value) X(sqlite3_busy_timeout) X(sqlite3_clear_bindings) \
    X(sqlite3_close) X(sqlite3_column_double) X(sqlite3_column_int) X(sqlite3_column_int64) \
    X(sqlite3_column_text) X(sqlite3_column_type) X(sqlite3_column_value) X(sqlite3_errmsg) \
    X(sqlite3_exec) X(sqlite3_finalize) X(sqlite3_free) X(sqlite3_last_insert_rowid) \
    X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_reset) X(sqlite3_step) X(sqlite3_value_dup) \
    X(sqlite3_value_free)
static struct { SQLITE_FUNCS(GK_DYNLIB_SLOT) } S;
static const char *const sqlite_symbols[] = {SQLITE_FUNCS(GK_DYNLIB_NAME) NULL};
static const char *const sqlite_sonames[] = {"libsqlite3.so.0", "libsqlite3.so", NULL};
static gk_dynlib sqlite_lib = GK_DYNLIB_INIT("libsqlite3", sqlite_sonames, sqlite_symbols, &S);

#define IX_SCHEMA_VERSION 1

static const char *const schema_sql =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value);"
    "CREATE TABLE IF NOT EXISTS files("
    " id INTEGER PRIMARY KEY, path TEXT NOT NULL, member TEXT, size INTEGER, mtime INTEGER,"
    " indexed_at TEXT, version INTEGER, endian TEXT, alignment INTEGER, n_kv INTEGER,"
    " n_tensors INTEGER, data_offset INTEGER, architecture TEXT, name TEXT, file_type TEXT,"
    " n_params INTEGER, tensor_bytes INTEGER, model_id INTEGER, error TEXT,"
    " mtime_ns INTEGER, data_size INTEGER, file_type_id INTEGER, context_length INTEGER,"
    " has_chat_template INTEGER, quantized_by TEXT, source_hint TEXT, base_model TEXT,"
    " imatrix_file TEXT, imatrix_dataset TEXT, split_no INTEGER, split_count INTEGER,"
    " group_key TEXT, shape_sig INTEGER, n_warnings INTEGER, error_code TEXT, error_offset INTEGER,"
    " content_xxh64 TEXT);"
    "CREATE INDEX IF NOT EXISTS files_path ON files(path);"
    "CREATE INDEX IF NOT EXISTS files_model ON files(model_id);"
    "CREATE TABLE IF NOT EXISTS kv("
    " file_id INTEGER NOT NULL, idx INTEGER NOT NULL, key TEXT, type TEXT, value,"
    " array_type TEXT, array_len INTEGER, num, offset INTEGER,"
    " PRIMARY KEY(file_id, idx)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS kv_key ON kv(key);"
    "CREATE TABLE IF NOT EXISTS tensors("
    " file_id INTEGER NOT NULL, idx INTEGER NOT NULL, name TEXT, type TEXT, ne0 INTEGER,"
    " ne1 INTEGER, ne2 INTEGER, ne3 INTEGER, n_elements INTEGER, offset INTEGER, nbytes INTEGER,"
    " type_id INTEGER, n_dims INTEGER, info_offset INTEGER, xxh64 TEXT, xxh64_canonical TEXT,"
    " PRIMARY KEY(file_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS warnings("
    " file_id INTEGER NOT NULL, idx INTEGER NOT NULL, message TEXT,"
    " PRIMARY KEY(file_id, idx)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS skipped(path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER,"
    " mtime_ns INTEGER);"
    "CREATE TABLE IF NOT EXISTS models("
    " id INTEGER PRIMARY KEY, name TEXT, architecture TEXT, n_files INTEGER, group_key TEXT UNIQUE,"
    " split_count INTEGER, complete INTEGER, file_type TEXT, n_params INTEGER, n_tensors INTEGER,"
    " tensor_bytes INTEGER, total_size INTEGER, context_length INTEGER, has_chat_template INTEGER,"
    " quant_mix TEXT, quantized_by TEXT, source_hint TEXT, base_model TEXT, imatrix_file TEXT,"
    " shape_sig INTEGER, first_file_id INTEGER, path TEXT, member TEXT, n_broken INTEGER,"
    " weights_xxh64 TEXT);"
    "CREATE VIEW IF NOT EXISTS quant_mix AS"
    " SELECT f.model_id AS model_id, m.name AS model_name, t.type AS type, count(*) AS n_tensors,"
    "  sum(t.nbytes) AS bytes,"
    "  round(100.0 * sum(t.nbytes) / nullif(m.tensor_bytes, 0), 2) AS share"
    " FROM tensors t JOIN files f ON f.id = t.file_id JOIN models m ON m.id = f.model_id"
    " GROUP BY f.model_id, t.type;"
    "CREATE VIEW IF NOT EXISTS file_quant_mix AS"
    " SELECT t.file_id AS file_id, f.path AS path, f.member AS member, t.type AS type,"
    "  count(*) AS n_tensors, sum(t.nbytes) AS bytes,"
    "  round(100.0 * sum(t.nbytes) / nullif(f.tensor_bytes, 0), 2) AS share"
    " FROM tensors t JOIN files f ON f.id = t.file_id GROUP BY t.file_id, t.type;"
    "CREATE VIEW IF NOT EXISTS model_summary AS"
    " SELECT id AS model_id, name, architecture, file_type, n_params AS parameters,"
    "  context_length, quant_mix, has_chat_template, total_size, n_files, split_count, complete,"
    "  n_broken, path, member FROM models;";

/* Columns added after the first schema (ALTER TABLE for older databases), and
 * the view that uses them. */
static const char *const added_columns[][3] = {
    { "files", "content_xxh64", "TEXT" },
    { "tensors", "xxh64", "TEXT" },
    { "tensors", "xxh64_canonical", "TEXT" },
    { "models", "weights_xxh64", "TEXT" },
};
static const char *const same_weights_sql =
    "CREATE VIEW IF NOT EXISTS same_weights AS"
    " SELECT m.weights_xxh64 AS weights_xxh64, m.id AS model_id, m.name AS name, m.path AS path,"
    "  m.member AS member, m.n_files AS n_files, m.split_count AS split_count,"
    "  (SELECT count(*) FROM models o WHERE o.weights_xxh64 = m.weights_xxh64) AS n_same"
    " FROM models m WHERE m.weights_xxh64 IN"
    "  (SELECT weights_xxh64 FROM models WHERE weights_xxh64 IS NOT NULL"
    "   GROUP BY weights_xxh64 HAVING count(*) > 1)"
    " ORDER BY m.weights_xxh64, m.id;";


/* ------------------------------------------------------------------------ */
/* Known files: path -> what the database remembers                         */
/* ------------------------------------------------------------------------ */

static uint64_t hash_str(const char *s) { return gk_fnv1a(GK_FNV1A_BASIS, s, strlen(s)); }

known *ix_known_find(known_map *m, const char *path) {
    uint64_t h = hash_str(path);
    size_t cur = 0, at;
    while (gk_hashmap_next(&m->map, h, &cur, &at))
        if (strcmp(m->items[at].path, path) == 0) return &m->items[at];
    return NULL;
}

/* Adds path (copied); an existing entry is returned as it is. NULL when out of memory. */
known *ix_known_add(known_map *m, const char *path) {
    known *k = ix_known_find(m, path);
    if (k) return k;
    if (!GK_GROW(m->items, m->cap, m->n + 1, 512)) return NULL;
    k = &m->items[m->n];
    memset(k, 0, sizeof *k);
    if ((k->path = strdup(path)) == NULL) return NULL;
    if (!gk_hashmap_add(&m->map, hash_str(path), m->n)) {
        free(k->path);
        return NULL;
    }
    m->n++;
    return k;
}

void ix_known_free(known_map *m) {
    for (size_t i = 0; i < m->n; i++) free(m->items[i].path);
    free(m->items);
    gk_hashmap_free(&m->map);
}

/* ------------------------------------------------------------------------ */
/* Database                                                                 */
/* ------------------------------------------------------------------------ */

static const char *const stmt_sql[ST_COUNT] = {
    [ST_SELECT_PATH] = "SELECT id, member FROM files WHERE path = ?1",
    [ST_UPSERT_FILE] =
        "INSERT OR REPLACE INTO files(id, path, member, size, mtime, indexed_at, version, endian,"
        " alignment, n_kv, n_tensors, data_offset, architecture, name, file_type, n_params,"
        " tensor_bytes, model_id, error, mtime_ns, data_size, file_type_id, context_length,"
        " has_chat_template, quantized_by, source_hint, base_model, imatrix_file, imatrix_dataset,"
        " split_no, split_count, group_key, shape_sig, n_warnings, error_code, error_offset, content_xxh64)"
        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, NULL,"
        " ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36)",
    [ST_INSERT_KV] = "INSERT INTO kv(file_id, idx, key, type, value, array_type, array_len, num, offset)"
                     " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    [ST_INSERT_TENSOR] = "INSERT INTO tensors(file_id, idx, name, type, ne0, ne1, ne2, ne3, n_elements,"
                         " offset, nbytes, type_id, n_dims, info_offset, xxh64, xxh64_canonical)"
                         " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    [ST_INSERT_WARNING] = "INSERT INTO warnings(file_id, idx, message) VALUES(?1, ?2, ?3)",
    [ST_DELETE_KV] = "DELETE FROM kv WHERE file_id = ?1",
    [ST_DELETE_TENSORS] = "DELETE FROM tensors WHERE file_id = ?1",
    [ST_DELETE_WARNINGS] = "DELETE FROM warnings WHERE file_id = ?1",
    [ST_DELETE_FILE] = "DELETE FROM files WHERE id = ?1",
    [ST_UPSERT_SKIPPED] = "INSERT OR REPLACE INTO skipped(path, size, mtime, mtime_ns) VALUES(?1, ?2, ?3, ?4)",
    [ST_DELETE_SKIPPED] = "DELETE FROM skipped WHERE path = ?1",
};


/* Fills err with the database's last message. @return : GK_E_IO. */
static gk_status db_error(ix_db *d, gk_error *err, const char *what) {
    return gk_error_set(err, GK_E_IO, -1, "%s: %s: %s", d->path, what,
                        d->db ? S.sqlite3_errmsg(d->db) : "cannot open");
}

gk_status ix_db_exec(ix_db *d, const char *sql, gk_error *err) {
    char *msg = NULL;
    if (S.sqlite3_exec(d->db, sql, NULL, NULL, &msg) == SQLITE_OK) return GK_OK;
    gk_error_set(err, GK_E_IO, -1, "%s: %s", d->path, msg ? msg : S.sqlite3_errmsg(d->db));
    S.sqlite3_free(msg);
    return GK_E_IO;
}

void ix_db_close(ix_db *d) {
    if (d->db == NULL) return;   /* never opened (SQLite may not even be loaded) */
    for (int i = 0; i < ST_COUNT; i++) S.sqlite3_finalize(d->st[i]);
    if (d->db) S.sqlite3_close(d->db);
    memset(d->st, 0, sizeof d->st);
    d->db = NULL;
}

/* Opens (creating) the database in WAL mode with the schema and statements. */
gk_status ix_db_open(ix_db *d, const char *path, gk_error *err) {
    memset(d, 0, sizeof *d);
    d->path = path;
    gk_status loaded = gk_dynlib_load(&sqlite_lib, "the index", err);
    if (loaded != GK_OK) return loaded;
    if (S.sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        gk_status st = db_error(d, err, "cannot open the database");
        ix_db_close(d);
        return st;
    }
    S.sqlite3_busy_timeout(d->db, 10000);
    gk_status st = ix_db_exec(d, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                              " PRAGMA cache_size=-16384; PRAGMA temp_store=MEMORY;", err);
    if (st == GK_OK) st = ix_db_exec(d, "BEGIN IMMEDIATE", err);
    if (st == GK_OK) st = ix_db_exec(d, schema_sql, err);
    for (size_t i = 0; st == GK_OK && i < sizeof added_columns / sizeof added_columns[0]; i++) {
        char sql[160];
        sqlite3_stmt *probe = NULL;
        snprintf(sql, sizeof sql, "SELECT %s FROM %s LIMIT 0", added_columns[i][1], added_columns[i][0]);
        bool present = S.sqlite3_prepare_v2(d->db, sql, -1, &probe, NULL) == SQLITE_OK;
        S.sqlite3_finalize(probe);
        snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s", added_columns[i][0], added_columns[i][1],
                 added_columns[i][2]);
        if (!present) st = ix_db_exec(d, sql, err);
    }
    if (st == GK_OK) st = ix_db_exec(d, same_weights_sql, err);
    if (st == GK_OK) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', %d)",
                 IX_SCHEMA_VERSION);
        st = ix_db_exec(d, sql, err);
    }
    if (st == GK_OK) st = ix_db_exec(d, "COMMIT", err);
    for (int i = 0; st == GK_OK && i < ST_COUNT; i++)
        if (S.sqlite3_prepare_v2(d->db, stmt_sql[i], -1, &d->st[i], NULL) != SQLITE_OK)
            st = db_error(d, err, "cannot prepare a statement");
    if (st != GK_OK) ix_db_close(d);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(d->now, sizeof d->now, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return st;
}

/* Runs a prepared statement to its end and resets it. @return : true on success. */
static bool step_done(sqlite3_stmt *s) {
    int rc = S.sqlite3_step(s);
    S.sqlite3_reset(s);
    S.sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE;
}

static void bind_text_or_null(sqlite3_stmt *s, int i, const char *text) {
    if (text) S.sqlite3_bind_text(s, i, text, -1, SQLITE_STATIC);
    else S.sqlite3_bind_null(s, i);
}

/* An int64, or NULL when negative (the "absent" mark of the summaries). */
static void bind_nonneg(sqlite3_stmt *s, int i, int64_t v) {
    if (v >= 0) S.sqlite3_bind_int64(s, i, v);
    else S.sqlite3_bind_null(s, i);
}

/* Loads the database's files and non-GGUF files into the map. */
gk_status ix_db_load_known(ix_db *d, known_map *m, gk_error *err) {
    static const char *const sql[2] = {
        "SELECT path, size, mtime_ns, count(*), sum(content_xxh64 IS NULL AND error IS NULL AND n_tensors > 0)"
        " FROM files GROUP BY path",
        "SELECT path, size, mtime_ns, 0, 0 FROM skipped",
    };
    for (int q = 0; q < 2; q++) {
        sqlite3_stmt *s;
        if (S.sqlite3_prepare_v2(d->db, sql[q], -1, &s, NULL) != SQLITE_OK) return db_error(d, err, "cannot read");
        int rc;
        while ((rc = S.sqlite3_step(s)) == SQLITE_ROW) {
            known *k = ix_known_add(m, (const char *)S.sqlite3_column_text(s, 0));
            if (k == NULL) {
                S.sqlite3_finalize(s);
                return gk_error_set(err, GK_E_NOMEM, -1, "out of memory");
            }
            k->size = (uint64_t)S.sqlite3_column_int64(s, 1);
            k->mtime_ns = S.sqlite3_column_int64(s, 2);
            k->n_rows = (uint32_t)S.sqlite3_column_int64(s, 3);
            k->n_unhashed = (uint32_t)S.sqlite3_column_int64(s, 4);
            k->skipped = q == 1;
        }
        S.sqlite3_finalize(s);
        if (rc != SQLITE_DONE) return db_error(d, err, "cannot read");
    }
    return GK_OK;
}

/* Deletes file row id and everything hanging from it. */
static bool delete_file_row(ix_db *d, int64_t id) {
    static const int order[4] = { ST_DELETE_KV, ST_DELETE_TENSORS, ST_DELETE_WARNINGS, ST_DELETE_FILE };
    for (int i = 0; i < 4; i++) {
        S.sqlite3_bind_int64(d->st[order[i]], 1, id);
        if (!step_done(d->st[order[i]])) return false;
    }
    return true;
}

/* Writes one row (id: the row it replaces, or -1 for a new one). @return : its id, or -1. */
static int64_t write_row(ix_db *d, const ix_found *fnd, const ix_row *row, int64_t id) {
    sqlite3_stmt *s = d->st[ST_UPSERT_FILE];
    bool good = row->error == NULL;
    bind_nonneg(s, 1, id);
    S.sqlite3_bind_text(s, 2, fnd->path, -1, SQLITE_STATIC);
    bind_text_or_null(s, 3, row->member);
    S.sqlite3_bind_int64(s, 4, (int64_t)fnd->size);
    S.sqlite3_bind_int64(s, 5, fnd->mtime_ns / 1000000000LL);
    S.sqlite3_bind_text(s, 6, d->now, -1, SQLITE_STATIC);
    if (good) {
        S.sqlite3_bind_int64(s, 7, row->facts.version);
        S.sqlite3_bind_text(s, 8, row->facts.big_endian ? "big" : "little", -1, SQLITE_STATIC);
        S.sqlite3_bind_int64(s, 9, row->facts.alignment);
        S.sqlite3_bind_int64(s, 10, (int64_t)row->facts.n_kv);
        S.sqlite3_bind_int64(s, 11, (int64_t)row->facts.n_tensors);
        S.sqlite3_bind_int64(s, 12, (int64_t)row->facts.data_offset);
        S.sqlite3_bind_int64(s, 15 + 1, (int64_t)row->n_params);
        S.sqlite3_bind_int64(s, 17, (int64_t)row->tensor_bytes);
        S.sqlite3_bind_int64(s, 20, (int64_t)row->data_size);
        S.sqlite3_bind_int(s, 23, row->has_chat_template);
        S.sqlite3_bind_int64(s, 32, row->shape_sig);
        S.sqlite3_bind_int64(s, 33, (int64_t)row->n_warnings);
    }
    bind_text_or_null(s, 13, row->architecture);
    bind_text_or_null(s, 14, row->name);
    bind_text_or_null(s, 15, row->file_type);
    bind_text_or_null(s, 18, row->error);
    S.sqlite3_bind_int64(s, 19, fnd->mtime_ns);
    bind_nonneg(s, 21, row->file_type_id);
    bind_nonneg(s, 22, row->context_length);
    bind_text_or_null(s, 24, row->quantized_by);
    bind_text_or_null(s, 25, row->source_hint);
    bind_text_or_null(s, 26, row->base_model);
    bind_text_or_null(s, 27, row->imatrix_file);
    bind_text_or_null(s, 28, row->imatrix_dataset);
    bind_nonneg(s, 29, row->split_no);
    bind_nonneg(s, 30, row->split_count);
    bind_text_or_null(s, 31, row->group_key);
    bind_text_or_null(s, 34, row->error_code);
    if (!good) bind_nonneg(s, 35, row->error_offset);
    bind_text_or_null(s, 36, good && row->content_xxh64[0] ? row->content_xxh64 : NULL);
    if (!step_done(s)) return -1;
    int64_t new_id = S.sqlite3_last_insert_rowid(d->db);

    s = d->st[ST_INSERT_KV];
    for (size_t i = 0; i < row->n_kvs; i++) {
        const ix_kv *kv = &row->kvs[i];
        S.sqlite3_bind_int64(s, 1, new_id);
        S.sqlite3_bind_int64(s, 2, (int64_t)i);
        S.sqlite3_bind_text(s, 3, kv->key, -1, SQLITE_STATIC);
        bind_text_or_null(s, 4, kv->type);
        S.sqlite3_bind_text(s, 5, kv->value, (int)kv->value_len, SQLITE_STATIC);
        bind_text_or_null(s, 6, kv->array_type);
        bind_nonneg(s, 7, kv->array_len);
        if (kv->num_kind == 1) S.sqlite3_bind_int64(s, 8, kv->num_i);
        else if (kv->num_kind == 2) S.sqlite3_bind_double(s, 8, kv->num_f);
        S.sqlite3_bind_int64(s, 9, kv->offset);
        if (!step_done(s)) return -1;
    }
    s = d->st[ST_INSERT_TENSOR];
    for (size_t i = 0; i < row->n_tensor_rows; i++) {
        const ix_tensor *t = &row->tensors[i];
        S.sqlite3_bind_int64(s, 1, new_id);
        S.sqlite3_bind_int64(s, 2, (int64_t)i);
        S.sqlite3_bind_text(s, 3, t->name, -1, SQLITE_STATIC);
        S.sqlite3_bind_text(s, 4, t->type, -1, SQLITE_STATIC);
        for (int k = 0; k < GK_MAX_DIMS; k++) S.sqlite3_bind_int64(s, 5 + k, (int64_t)t->ne[k]);
        S.sqlite3_bind_int64(s, 9, (int64_t)t->n_elements);
        S.sqlite3_bind_int64(s, 10, (int64_t)t->offset);
        S.sqlite3_bind_int64(s, 11, (int64_t)t->nbytes);
        S.sqlite3_bind_int64(s, 12, t->type_id);
        S.sqlite3_bind_int64(s, 13, t->n_dims);
        S.sqlite3_bind_int64(s, 14, t->info_offset);
        bind_text_or_null(s, 15, t->xxh64[0] ? t->xxh64 : NULL);
        bind_text_or_null(s, 16, t->xxh64_canonical[0] ? t->xxh64_canonical : NULL);
        if (!step_done(s)) return -1;
    }
    s = d->st[ST_INSERT_WARNING];
    for (size_t i = 0; i < row->n_warnings; i++) {
        S.sqlite3_bind_int64(s, 1, new_id);
        S.sqlite3_bind_int64(s, 2, (int64_t)i);
        S.sqlite3_bind_text(s, 3, row->warnings[i], -1, SQLITE_STATIC);
        if (!step_done(s)) return -1;
    }
    return new_id;
}

/* The rows a path had before this result. */
typedef struct old_row {
    int64_t id;
    char *member;
    bool reused;
} old_row;

/* Reads the ids and members stored for path. @return : false on failure. */
static bool old_rows(ix_db *d, const char *path, old_row **out, size_t *n) {
    sqlite3_stmt *s = d->st[ST_SELECT_PATH];
    S.sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    old_row *rows = NULL;
    size_t cap = 0;
    *n = 0;
    int rc;
    bool ok = true;
    while (ok && (rc = S.sqlite3_step(s)) == SQLITE_ROW) {
        if (!GK_GROW(rows, cap, *n + 1, 4)) {
            ok = false;
            break;
        }
        const unsigned char *m = S.sqlite3_column_text(s, 1);
        rows[*n] = (old_row){ S.sqlite3_column_int64(s, 0), m ? strdup((const char *)m) : NULL, false };
        (*n)++;
    }
    if (ok && rc != SQLITE_DONE) ok = false;
    S.sqlite3_reset(s);
    S.sqlite3_clear_bindings(s);
    *out = rows;
    return ok;
}

static void free_old_rows(old_row *rows, size_t n) {
    for (size_t i = 0; i < n; i++) free(rows[i].member);
    free(rows);
}

static bool same_member(const char *a, const char *b) {
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* Writes what a worker found at one path, replacing what was stored for it. */
gk_status ix_db_write_result(ix_db *d, const ix_found *fnd, const ix_result *r, gk_index_stats *stats,
                             gk_error *err) {
    old_row *olds;
    size_t n_old;
    if (!old_rows(d, fnd->path, &olds, &n_old)) {
        free_old_rows(olds, n_old);
        return db_error(d, err, "cannot read");
    }
    bool ok = true;
    if (r->not_gguf) {
        sqlite3_stmt *s = d->st[ST_UPSERT_SKIPPED];
        S.sqlite3_bind_text(s, 1, fnd->path, -1, SQLITE_STATIC);
        S.sqlite3_bind_int64(s, 2, (int64_t)fnd->size);
        S.sqlite3_bind_int64(s, 3, fnd->mtime_ns / 1000000000LL);
        S.sqlite3_bind_int64(s, 4, fnd->mtime_ns);
        ok = step_done(s);
        stats->not_gguf++;
    } else {
        S.sqlite3_bind_text(d->st[ST_DELETE_SKIPPED], 1, fnd->path, -1, SQLITE_STATIC);
        ok = step_done(d->st[ST_DELETE_SKIPPED]);
    }
    for (size_t i = 0; ok && i < r->n_rows; i++) {
        const ix_row *row = &r->rows[i];
        int64_t id = -1;
        for (size_t j = 0; j < n_old && id < 0; j++)
            if (!olds[j].reused && same_member(olds[j].member, row->member)) {
                olds[j].reused = true;
                id = olds[j].id;
            }
        if (id >= 0) {
            static const int order[3] = { ST_DELETE_KV, ST_DELETE_TENSORS, ST_DELETE_WARNINGS };
            for (int k = 0; ok && k < 3; k++) {
                S.sqlite3_bind_int64(d->st[order[k]], 1, id);
                ok = step_done(d->st[order[k]]);
            }
            stats->updated++;
        } else {
            stats->added++;
        }
        if (row->error) stats->broken++;
        ok = ok && write_row(d, fnd, row, id) >= 0;
    }
    for (size_t j = 0; ok && j < n_old; j++)
        if (!olds[j].reused) {
            ok = delete_file_row(d, olds[j].id);
            stats->removed++;
        }
    free_old_rows(olds, n_old);
    return ok ? GK_OK : db_error(d, err, "cannot write");
}

/* ------------------------------------------------------------------------ */
/* Models                                                                   */
/* ------------------------------------------------------------------------ */

/* The model being gathered from consecutive file rows of one group. */
typedef struct model_acc {
    char *group_key;
    int64_t first_id;
    int64_t n_files, n_broken, split_count;
    bool in_sequence;         /* split_no so far = 0, 1, 2 ... */
    int64_t n_params, n_tensors, tensor_bytes, total_size;
    uint64_t shape_sig;
    sqlite3_value *lead[12];  /* columns of the first row (copies) */
} model_acc;

/* The columns copied from a group's first row into its model. */
static const char *const lead_cols[12] = {
    "name", "architecture", "file_type", "context_length", "has_chat_template", "quantized_by",
    "source_hint", "base_model", "imatrix_file", "path", "member", "split_count",
};

static void acc_clear(model_acc *a) {
    free(a->group_key);
    for (int i = 0; i < 12; i++) S.sqlite3_value_free(a->lead[i]);
    memset(a, 0, sizeof *a);
}

/* Inserts the gathered model. */
static bool acc_flush(ix_db *d, sqlite3_stmt *ins, model_acc *a) {
    if (a->group_key == NULL) return true;
    S.sqlite3_bind_text(ins, 1, a->group_key, -1, SQLITE_STATIC);
    for (int i = 0; i < 12; i++) S.sqlite3_bind_value(ins, 2 + i, a->lead[i]);
    S.sqlite3_bind_int64(ins, 14, a->n_files);
    bool complete = a->split_count < 0 || (a->in_sequence && a->n_files == a->split_count);
    S.sqlite3_bind_int(ins, 15, complete);
    S.sqlite3_bind_int64(ins, 16, a->n_params);
    S.sqlite3_bind_int64(ins, 17, a->n_tensors);
    S.sqlite3_bind_int64(ins, 18, a->tensor_bytes);
    S.sqlite3_bind_int64(ins, 19, a->total_size);
    S.sqlite3_bind_int64(ins, 20, (int64_t)a->shape_sig);
    S.sqlite3_bind_int64(ins, 21, a->first_id);
    S.sqlite3_bind_int64(ins, 22, a->n_broken);
    (void)d;
    bool ok = step_done(ins);
    acc_clear(a);
    return ok;
}

/* "Q4_K 70%, Q6_K 20%, F32 10%" for every model, from the quant_mix view. */
static bool fill_quant_mix(ix_db *d) {
    sqlite3_stmt *q = NULL, *up = NULL;
    bool ok = S.sqlite3_prepare_v2(d->db,
                                 "SELECT model_id, type, share FROM quant_mix"
                                 " ORDER BY model_id, bytes DESC, type", -1, &q, NULL) == SQLITE_OK &&
              S.sqlite3_prepare_v2(d->db, "UPDATE models SET quant_mix = ?2 WHERE id = ?1", -1, &up, NULL) ==
                  SQLITE_OK;
    char *text = NULL;
    size_t len = 0, cap = 0;
    int64_t cur = -1;
    int rc = SQLITE_DONE;
    while (ok) {
        rc = S.sqlite3_step(q);
        int64_t id = rc == SQLITE_ROW ? S.sqlite3_column_int64(q, 0) : -1;
        if (cur >= 0 && id != cur) {
            S.sqlite3_bind_int64(up, 1, cur);
            S.sqlite3_bind_text(up, 2, text ? text : "", (int)len, SQLITE_STATIC);
            ok = step_done(up);
            len = 0;
        }
        if (rc != SQLITE_ROW) break;
        cur = id;
        char piece[64];
        double share = S.sqlite3_column_double(q, 2);
        const char *type = (const char *)S.sqlite3_column_text(q, 1);
        int n = share >= 0.5 || share == 0 ? snprintf(piece, sizeof piece, "%s%s %.0f%%", len ? ", " : "", type, share)
                                            : snprintf(piece, sizeof piece, "%s%s <1%%", len ? ", " : "", type);
        if (!GK_GROW(text, cap, len + (size_t)n + 1, 128)) {
            ok = false;
            break;
        }
        memcpy(text + len, piece, (size_t)n + 1);
        len += (size_t)n;
    }
    if (rc != SQLITE_DONE) ok = false;
    free(text);
    S.sqlite3_finalize(q);
    S.sqlite3_finalize(up);
    return ok;
}

/* models.weights_xxh64: the xxh64 of the 8-byte xxh64 digests of the model's
 * tensors' little-endian form (tensors.xxh64_canonical; rows of runs before
 * that column: tensors.xxh64) in load order (shards in split order), so a shard
 * set and its merged file, a file before and after a metadata edit, or a
 * big-endian copy and its original share it. NULL unless every tensor of a
 * complete model was hashed (index --hash). */
static bool fill_weights(ix_db *d) {
    sqlite3_stmt *q = NULL, *up = NULL;
    bool ok = S.sqlite3_prepare_v2(d->db,
                                 "SELECT f.model_id, coalesce(t.xxh64_canonical, t.xxh64) FROM files f JOIN tensors t ON t.file_id = f.id"
                                 " JOIN models m ON m.id = f.model_id WHERE m.complete AND m.n_broken = 0"
                                 " ORDER BY f.model_id, f.split_no IS NULL, f.split_no, f.id, t.idx",
                                 -1, &q, NULL) == SQLITE_OK &&
              S.sqlite3_prepare_v2(d->db, "UPDATE models SET weights_xxh64 = ?2 WHERE id = ?1", -1, &up, NULL) ==
                  SQLITE_OK;
    gk_digest dg = { 0 };
    ok = ok && gk_digest_init(&dg, GK_HASH_XXH64, NULL) == GK_OK;
    int64_t model = -1;
    bool whole = false;
    int rc = SQLITE_DONE;
    for (;;) {
        rc = ok ? S.sqlite3_step(q) : SQLITE_ERROR;
        int64_t id = rc == SQLITE_ROW ? S.sqlite3_column_int64(q, 0) : -2;
        if (id != model && model >= 0 && whole) {   /* the previous model is complete */
            gk_hash_value v;
            char hex[GK_HASH_HEX_MAX];
            gk_digest_final(&dg, &v);
            gk_hash_hex(GK_HASH_XXH64, &v, hex);
            S.sqlite3_bind_int64(up, 1, model);
            S.sqlite3_bind_text(up, 2, hex, -1, SQLITE_TRANSIENT);
            ok = ok && step_done(up);
        }
        if (rc != SQLITE_ROW) break;
        if (id != model) {
            model = id;
            whole = true;
            gk_digest_reset(&dg);
        }
        const char *hex = (const char *)S.sqlite3_column_text(q, 1);
        uint8_t bytes[8];
        if (hex == NULL || strlen(hex) != 16) whole = false;
        for (int i = 0; whole && i < 8; i++) {
            unsigned b;
            if (sscanf(hex + 2 * i, "%2x", &b) != 1) whole = false;
            bytes[i] = (uint8_t)b;
        }
        if (whole) gk_digest_update(&dg, bytes, 8);
    }
    if (rc != SQLITE_DONE) ok = false;
    gk_digest_free(&dg);
    S.sqlite3_finalize(q);
    S.sqlite3_finalize(up);
    return ok;
}

/* Rebuilds the models table: one model per group key (a shard set, or a single
 * file), its sums, its first file's facts, its quant mix; files.model_id. */
gk_status ix_db_rebuild_models(ix_db *d, gk_error *err) {
    sqlite3_stmt *sel = NULL, *ins = NULL;
    gk_status st = ix_db_exec(d, "DELETE FROM models", err);
    if (st != GK_OK) return st;
    char cols[512] = "";
    for (int i = 0; i < 12; i++) {
        strcat(cols, lead_cols[i]);
        strcat(cols, ", ");
    }
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT %s id, group_key, split_no, error IS NOT NULL, n_params, n_tensors,"
             " tensor_bytes, data_size, shape_sig FROM files"
             " ORDER BY group_key, split_no IS NULL, split_no, id", cols);
    bool ok = S.sqlite3_prepare_v2(d->db, sql, -1, &sel, NULL) == SQLITE_OK &&
              S.sqlite3_prepare_v2(d->db,
                                 "INSERT INTO models(group_key, name, architecture, file_type, context_length,"
                                 " has_chat_template, quantized_by, source_hint, base_model, imatrix_file, path,"
                                 " member, split_count, n_files, complete, n_params, n_tensors, tensor_bytes,"
                                 " total_size, shape_sig, first_file_id, n_broken)"
                                 " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
                                 " ?16, ?17, ?18, ?19, ?20, ?21, ?22)", -1, &ins, NULL) == SQLITE_OK;
    model_acc acc;
    memset(&acc, 0, sizeof acc);
    int rc = SQLITE_DONE;
    while (ok && (rc = S.sqlite3_step(sel)) == SQLITE_ROW) {
        const char *key = (const char *)S.sqlite3_column_text(sel, 13);
        if (key == NULL) key = "";
        if (acc.group_key == NULL || strcmp(acc.group_key, key) != 0) {
            ok = acc_flush(d, ins, &acc);
            if (!ok) break;
            acc.group_key = strdup(key);
            acc.first_id = S.sqlite3_column_int64(sel, 12);
            for (int i = 0; i < 12; i++) acc.lead[i] = S.sqlite3_value_dup(S.sqlite3_column_value(sel, i));
            acc.split_count = S.sqlite3_column_type(sel, 11) == SQLITE_NULL ? -1 : S.sqlite3_column_int64(sel, 11);
            acc.in_sequence = true;
            if (acc.group_key == NULL) ok = false;
        }
        int64_t no = S.sqlite3_column_type(sel, 14) == SQLITE_NULL ? -1 : S.sqlite3_column_int64(sel, 14);
        if (acc.split_count >= 0 && no != acc.n_files) acc.in_sequence = false;
        acc.n_files++;
        acc.n_broken += S.sqlite3_column_int(sel, 15);
        acc.n_params += S.sqlite3_column_int64(sel, 16);
        acc.n_tensors += S.sqlite3_column_int64(sel, 17);
        acc.tensor_bytes += S.sqlite3_column_int64(sel, 18);
        acc.total_size += S.sqlite3_column_int64(sel, 19);
        acc.shape_sig ^= (uint64_t)S.sqlite3_column_int64(sel, 20);
    }
    if (ok && rc != SQLITE_DONE) ok = false;
    if (ok) ok = acc_flush(d, ins, &acc);
    acc_clear(&acc);
    S.sqlite3_finalize(sel);
    S.sqlite3_finalize(ins);
    if (!ok) return db_error(d, err, "cannot rebuild models");
    st = ix_db_exec(d, "UPDATE files SET model_id = (SELECT id FROM models WHERE models.group_key = files.group_key)",
                    err);
    if (st == GK_OK && !fill_quant_mix(d)) st = db_error(d, err, "cannot compute quant mixes");
    if (st == GK_OK && !fill_weights(d)) st = db_error(d, err, "cannot compute weight digests");
    return st;
}

/* Handles the known paths this walk did not see: counted as vanished when they
 * no longer exist, removed with prune. */
gk_status ix_db_forget_vanished(ix_db *d, known_map *m, bool prune, gk_index_stats *stats, gk_error *err) {
    gk_status st = prune ? ix_db_exec(d, "BEGIN IMMEDIATE", err) : GK_OK;
    for (size_t i = 0; st == GK_OK && i < m->n; i++) {
        known *k = &m->items[i];
        struct stat sb;
        if (k->path == NULL || k->seen || gk_http_is_url(k->path) || stat(k->path, &sb) == 0 || errno != ENOENT)
            continue;   /* a URL not named this run is not known to be gone */
        if (!k->skipped) stats->vanished += k->n_rows;
        if (!prune) continue;
        if (k->skipped) {
            S.sqlite3_bind_text(d->st[ST_DELETE_SKIPPED], 1, k->path, -1, SQLITE_STATIC);
            if (!step_done(d->st[ST_DELETE_SKIPPED])) st = db_error(d, err, "cannot write");
            continue;
        }
        old_row *olds;
        size_t n_old;
        bool ok = old_rows(d, k->path, &olds, &n_old);
        for (size_t j = 0; ok && j < n_old; j++) {
            ok = delete_file_row(d, olds[j].id);
            stats->removed++;
        }
        free_old_rows(olds, n_old);
        if (!ok) st = db_error(d, err, "cannot write");
    }
    if (prune) {
        if (st == GK_OK) st = ix_db_exec(d, "COMMIT", err);
        else ix_db_exec(d, "ROLLBACK", &(gk_error){ 0 });
    }
    return st;
}

/* @return : a count from a one-number query, or 0. */
int64_t ix_db_count(ix_db *d, const char *sql) {
    sqlite3_stmt *s;
    int64_t n = 0;
    if (S.sqlite3_prepare_v2(d->db, sql, -1, &s, NULL) != SQLITE_OK) return 0;
    if (S.sqlite3_step(s) == SQLITE_ROW) n = S.sqlite3_column_int64(s, 0);
    S.sqlite3_finalize(s);
    return n;
}
