/*
 * check_index.c - unit tests of lib/index: shard name recognition, metadata
 * values as kv text (scalars, arrays cut to their first elements, ill-formed
 * UTF-8), and gk_index_run on generated files: rows, models (a shard set
 * grouped, single files alone), the broken file's error, an unchanged second
 * run that reads no header, a touched file re-read alone, vanished files kept
 * until --prune, and the database and path errors. Needs no golden data.
 */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "index/index_internal.h"

/* ---- helpers ---------------------------------------------------------------------- */

/* Writes m as a file: header, then zero tensor data. keep: bytes to keep (0: all). */
static void write_model(gk_model *m, const char *path, size_t keep) {
    uint64_t data = gk_model_layout(m);
    uint8_t *head;
    size_t len;
    gk_error err;
    ck_assert_int_eq(gk_header_serialize(m, &head, &len, &err), GK_OK);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    size_t total = len + (size_t)data;
    if (keep && keep < total) total = keep;
    size_t from_head = total < len ? total : len;
    ck_assert_int_eq(fwrite(head, 1, from_head, f), from_head);
    for (size_t i = from_head; i < total; i++) fputc(0, f);
    fclose(f);
    free(head);
}

/* A small llama-looking model, optionally shard no of count. */
static gk_model *small_model(const char *name, int shard_no, int shard_count) {
    gk_model *m = gk_model_new();
    gk_error err;
    ck_assert_ptr_nonnull(m);
    if (shard_no <= 0) {
        ck_assert_int_eq(gk_kv_set_str(m, "general.architecture", "llama", &err), GK_OK);
        ck_assert_int_eq(gk_kv_set_str(m, "general.name", name, &err), GK_OK);
        ck_assert_int_eq(gk_kv_set_u32(m, "llama.context_length", 32768, &err), GK_OK);
        ck_assert_int_eq(gk_kv_set_u32(m, "general.file_type", 15, &err), GK_OK);
        ck_assert_int_eq(gk_kv_set_str(m, "tokenizer.chat_template", "{{ x }}", &err), GK_OK);
        static const gk_str toks[10] = { { "a", 1 }, { "b", 1 }, { "c", 1 }, { "d", 1 }, { "e", 1 },
                                         { "f", 1 }, { "g", 1 }, { "h", 1 }, { "i", 1 }, { "j", 1 } };
        gk_value v = { .type = GK_V_ARR, .arr = { .elem = GK_V_STR, .n = 10, .data = toks } };
        ck_assert_int_eq(gk_kv_set(m, "tokenizer.ggml.tokens", &v, &err), GK_OK);
    }
    if (shard_count > 0) {
        gk_value no = { .type = GK_V_U16, .u = (uint64_t)shard_no };
        gk_value count = { .type = GK_V_U16, .u = (uint64_t)shard_count };
        gk_value tensors = { .type = GK_V_I32, .i = 2 * shard_count };
        ck_assert_int_eq(gk_kv_set(m, GK_SPLIT_KEY_NO, &no, &err), GK_OK);
        ck_assert_int_eq(gk_kv_set(m, GK_SPLIT_KEY_COUNT, &count, &err), GK_OK);
        ck_assert_int_eq(gk_kv_set(m, GK_SPLIT_KEY_TENSORS, &tensors, &err), GK_OK);
    }
    char tname[64];
    uint64_t ne1[2] = { 256, 4 }, ne2[1] = { 256 };
    snprintf(tname, sizeof tname, "blk.%d.attn_q.weight", shard_no < 0 ? 0 : shard_no);
    ck_assert_int_eq(gk_tensor_add(m, tname, GK_TYPE_Q4_K, 2, ne1, &err), GK_OK);
    snprintf(tname, sizeof tname, "blk.%d.attn_norm.weight", shard_no < 0 ? 0 : shard_no);
    ck_assert_int_eq(gk_tensor_add(m, tname, GK_TYPE_F32, 1, ne2, &err), GK_OK);
    return m;
}

static sqlite3 *open_db(const char *path) {
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    return db;
}

/* The first column of the first row of sql as an integer (-1 for NULL / no row). */
static int64_t query_int(sqlite3 *db, const char *sql) {
    sqlite3_stmt *s;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    int64_t v = -1;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* The first column of the first row of sql as text, in buf ("" for NULL / no row). */
static const char *query_text(sqlite3 *db, const char *sql, char *buf, size_t size) {
    sqlite3_stmt *s;
    ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql, sqlite3_errmsg(db));
    buf[0] = '\0';
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        snprintf(buf, size, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return buf;
}

static void set_mtime(const char *path, time_t t) {
    struct timeval tv[2] = { { t, 0 }, { t, 0 } };
    ck_assert_int_eq(utimes(path, tv), 0);
}

/* ---- shard names and value text --------------------------------------------------- */

START_TEST(test_shard_prefix) {
    char *p = ix_shard_prefix("/m/x-00002-of-00003.gguf", 1, 3);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, "/m/x");
    free(p);
    p = ix_shard_prefix("dir/x-00001-of-00012.gguf.zst", 0, 12);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, "dir/x");
    free(p);
    ck_assert_ptr_null(ix_shard_prefix("/m/x-00002-of-00003.gguf", 0, 3));   /* name says shard 2 */
    ck_assert_ptr_null(ix_shard_prefix("/m/x-00002-of-00003.gguf", 1, 4));
    ck_assert_ptr_null(ix_shard_prefix("/m/x.gguf", 0, 1));
    ck_assert_ptr_null(ix_shard_prefix("-00001-of-00001.gguf", 0, 1));        /* empty prefix */
    ck_assert_ptr_null(ix_shard_prefix("/m/x-00003-of-00003.gguf", 3, 3));    /* no >= count */
}
END_TEST

static void expect_text(const gk_value *v, unsigned head, const char *want) {
    size_t len;
    char *t = ix_value_text(v, head, &len);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t, want);
    ck_assert_uint_eq(len, strlen(want));
    free(t);
}

START_TEST(test_value_text) {
    expect_text(&(gk_value){ .type = GK_V_U32, .u = 42 }, 8, "42");
    expect_text(&(gk_value){ .type = GK_V_U64, .u = UINT64_MAX }, 8, "18446744073709551615");
    expect_text(&(gk_value){ .type = GK_V_I8, .i = -5 }, 8, "-5");
    expect_text(&(gk_value){ .type = GK_V_F32, .f = (double)0.1f }, 8, "0.10000000149011612");
    expect_text(&(gk_value){ .type = GK_V_F32, .f = 1.0 }, 8, "1.0");
    expect_text(&(gk_value){ .type = GK_V_F64, .f = 1e-6 }, 8, "1e-06");
    expect_text(&(gk_value){ .type = GK_V_BOOL, .b = true }, 8, "true");
    expect_text(&(gk_value){ .type = GK_V_STR, .s = { "h\xc3\xa9llo", 6 } }, 8, "h\xc3\xa9llo");

    uint32_t nums[20];
    for (int i = 0; i < 20; i++) nums[i] = (uint32_t)i * 1000000u;
    gk_value arr = { .type = GK_V_ARR, .arr = { .elem = GK_V_U32, .n = 20, .data = nums } };
    expect_text(&arr, 3, "[0,1000000,2000000]");
    size_t len;
    char *full = ix_value_text(&arr, 0, &len);
    ck_assert_ptr_nonnull(full);
    ck_assert_int_eq(strncmp(full, "[0,1000000,", 11), 0);
    ck_assert_ptr_nonnull(strstr(full, ",19000000]"));
    free(full);

    float fl[2] = { 0.5f, -2.0f };
    gk_value farr = { .type = GK_V_ARR, .arr = { .elem = GK_V_F32, .n = 2, .data = fl } };
    expect_text(&farr, 8, "[0.5,-2.0]");

    /* Ill-formed UTF-8 and quotes in array strings: valid JSON, U+FFFD per bad byte. */
    gk_str strs[2] = { { "a\"b", 3 }, { "x\xff", 2 } };
    gk_value sarr = { .type = GK_V_ARR, .arr = { .elem = GK_V_STR, .n = 2, .data = strs } };
    expect_text(&sarr, 8, "[\"a\\\"b\",\"x\xef\xbf\xbd\"]");

    /* Arrays of arrays: every level cut to head. */
    gk_value inner[3] = { arr, farr, arr };
    gk_value nested = { .type = GK_V_ARR, .arr = { .elem = GK_V_ARR, .n = 3, .data = inner } };
    expect_text(&nested, 2, "[[0,1000000],[0.5,-2.0]]");

    uint8_t bools[2] = { 1, 0 };
    gk_value barr = { .type = GK_V_ARR, .arr = { .elem = GK_V_BOOL, .n = 2, .data = bools } };
    expect_text(&barr, 8, "[true,false]");
}
END_TEST

/* ---- gk_index_run ------------------------------------------------------------------ */

/* Builds the test folder: one model, a shard set of 2, a broken file, a text file. */
static void build_folder(void) {
    char *dir = tmp_path("models");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    ck_assert_int_eq(mkdir(tmp_path("models/sub"), 0755), 0);
    gk_model *m = small_model("alpha", -1, 0);
    write_model(m, tmp_path("models/alpha.gguf"), 0);
    write_model(m, tmp_path("models/broken.gguf"), 200);
    gk_model_free(m);
    for (int k = 0; k < 2; k++) {
        char name[128];
        snprintf(name, sizeof name, "models/sub/beta-%05d-of-00002.gguf", k + 1);
        m = small_model("beta", k, 2);
        write_model(m, tmp_path(name), 0);
        gk_model_free(m);
    }
    FILE *f = fopen(tmp_path("models/notes.txt"), "w");
    ck_assert_ptr_nonnull(f);
    fputs("not a model\n", f);
    fclose(f);
    set_mtime(tmp_path("models/alpha.gguf"), 1700000000);
}

static gk_status run(const char *db, const char *path, int jobs, bool prune, gk_index_stats *st) {
    gk_index_opts o = { GK_OPTS_INIT(gk_index_opts), .jobs = jobs, .prune = prune };
    gk_error err;
    gk_error_clear(&err);
    const char *paths[1] = { path };
    return gk_index_run(db, paths, 1, &o, st, &err);
}

START_TEST(test_index_run) {
    make_tmpdir("check_index");
    build_folder();
    const char *db_path = tmp_path("idx.sqlite");
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("models"));
    gk_index_stats st;

    ck_assert_int_eq(run(db_path, dir, 2, false, &st), GK_OK);
    ck_assert_uint_eq(st.files_seen, 5);
    ck_assert_uint_eq(st.added, 4);
    ck_assert_uint_eq(st.broken, 1);
    ck_assert_uint_eq(st.not_gguf, 1);
    ck_assert_uint_eq(st.headers_read, 4);
    ck_assert_uint_eq(st.models, 3);

    sqlite3 *db = open_db(db_path);
    char buf[512];
    ck_assert_str_eq(query_text(db, "SELECT journal_mode FROM pragma_journal_mode", buf, sizeof buf), "wal");
    ck_assert_int_eq(query_int(db, "SELECT count(*) FROM files WHERE member IS NULL"), 4);
    ck_assert_int_eq(query_int(db, "SELECT n_files FROM models WHERE split_count = 2 AND complete = 1"), 2);
    ck_assert_str_eq(query_text(db, "SELECT name FROM models WHERE split_count = 2", buf, sizeof buf), "beta");
    ck_assert_ptr_nonnull(strstr(query_text(db, "SELECT error FROM files WHERE path LIKE '%broken.gguf'", buf,
                                            sizeof buf), "offset "));
    ck_assert_str_eq(query_text(db, "SELECT file_type FROM model_summary WHERE name = 'alpha'", buf, sizeof buf),
                     "Q4_K_M");
    ck_assert_int_eq(query_int(db, "SELECT context_length FROM model_summary WHERE name = 'alpha'"), 32768);
    ck_assert_int_eq(query_int(db, "SELECT has_chat_template FROM model_summary WHERE name = 'alpha'"), 1);
    ck_assert_int_eq(query_int(db, "SELECT parameters FROM model_summary WHERE name = 'alpha'"), 1024 + 256);
    ck_assert_int_eq(query_int(db, "SELECT mtime FROM files WHERE name = 'alpha'"), 1700000000);
    ck_assert_str_eq(query_text(db, "SELECT endian FROM files WHERE name = 'alpha'", buf, sizeof buf), "little");
    ck_assert_str_eq(query_text(db, "SELECT value FROM kv k JOIN files f ON f.id = k.file_id"
                                    " WHERE f.name = 'alpha' AND k.key = 'tokenizer.ggml.tokens'", buf, sizeof buf),
                     "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\"]");
    ck_assert_int_eq(query_int(db, "SELECT array_len FROM kv WHERE key = 'tokenizer.ggml.tokens'"), 10);
    ck_assert_int_eq(query_int(db, "SELECT num FROM kv WHERE key = 'llama.context_length'"), 32768);
    /* Q4_K 256x4 = 4 blocks of 144 bytes, F32 256 = 1024 bytes. */
    ck_assert_str_eq(query_text(db, "SELECT quant_mix FROM model_summary WHERE name = 'alpha'", buf, sizeof buf),
                     "F32 64%, Q4_K 36%");
    ck_assert_int_eq(query_int(db, "SELECT count(*) FROM tensors t JOIN files f ON f.id = t.file_id"
                                   " WHERE f.name = 'alpha' AND t.type = 'Q4_K' AND t.ne0 = 256 AND t.ne1 = 4"
                                   " AND t.nbytes = 576 AND t.n_elements = 1024"), 1);
    /* A shard set has its merged model's shape signature parts: XOR of its files'. */
    ck_assert_int_eq(query_int(db, "SELECT count(*) FROM models m WHERE split_count = 2 AND shape_sig ="
                                   " (SELECT (a | b) - (a & b) FROM (SELECT min(shape_sig) a, max(shape_sig) b"
                                   " FROM files WHERE split_count = 2))"), 1);
    int64_t alpha_id = query_int(db, "SELECT id FROM files WHERE name = 'alpha'");

    /* Unchanged: no header read, nothing written. */
    ck_assert_int_eq(run(db_path, dir, 1, false, &st), GK_OK);
    ck_assert_uint_eq(st.headers_read, 0);
    ck_assert_uint_eq(st.unchanged, 4);
    ck_assert_uint_eq(st.added + st.updated + st.removed, 0);

    /* Touch one: only it is read, and it keeps its id. */
    set_mtime(tmp_path("models/alpha.gguf"), 1700000100);
    ck_assert_int_eq(run(db_path, dir, 3, false, &st), GK_OK);
    ck_assert_uint_eq(st.headers_read, 1);
    ck_assert_uint_eq(st.updated, 1);
    ck_assert_uint_eq(st.unchanged, 3);
    ck_assert_int_eq(query_int(db, "SELECT id FROM files WHERE name = 'alpha'"), alpha_id);
    ck_assert_int_eq(query_int(db, "SELECT count(*) FROM kv WHERE file_id = (SELECT id FROM files WHERE name = 'alpha')"), 6);

    /* Vanished: kept without prune, removed with it. */
    ck_assert_int_eq(unlink(tmp_path("models/sub/beta-00002-of-00002.gguf")), 0);
    ck_assert_int_eq(run(db_path, dir, 0, false, &st), GK_OK);
    ck_assert_uint_eq(st.vanished, 1);
    ck_assert_uint_eq(st.removed, 0);
    ck_assert_uint_eq(st.rows, 4);
    ck_assert_int_eq(run(db_path, dir, 0, true, &st), GK_OK);
    ck_assert_uint_eq(st.removed, 1);
    ck_assert_uint_eq(st.rows, 3);
    ck_assert_int_eq(query_int(db, "SELECT complete FROM models WHERE split_count = 2"), 0);
    ck_assert_int_eq(query_int(db, "SELECT count(*) FROM kv WHERE file_id NOT IN (SELECT id FROM files)"), 0);
    ck_assert_int_eq(query_int(db, "SELECT count(*) FROM tensors WHERE file_id NOT IN (SELECT id FROM files)"), 0);
    sqlite3_close(db);

    /* Errors: a missing path writes nothing; an impossible database is an I/O error. */
    ck_assert_int_eq(run(tmp_path("other.sqlite"), tmp_path("nope"), 1, false, &st), GK_E_NOT_FOUND);
    ck_assert_int_eq(access(tmp_path("other.sqlite"), F_OK), -1);
    ck_assert_int_eq(run(tmp_path("no/such/dir.sqlite"), dir, 1, false, &st), GK_E_IO);
    ck_assert_int_eq(run(tmp_path("models"), dir, 1, false, &st), GK_E_IO);
    remove_tmpdir();
}
END_TEST

static Suite *index_suite(void) {
    Suite *s = suite_create("index");
    TCase *tc = tcase_create("index");
    tcase_add_test(tc, test_shard_prefix);
    tcase_add_test(tc, test_value_text);
    tcase_add_test(tc, test_index_run);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return run_suite(index_suite());
}
