/*
 * check_reader.c - tests of the GGUF reader (lib/format/read.c) on broken and
 * odd-but-valid files, and of the header writer's round trip.
 *
 *   - every fixture of testdata/bad (scripts/make-bad-fixtures) opened with
 *     gk_open and with gk_open_memory gives exactly the status and byte offset
 *     its EXPECTED.tsv row names;
 *   - every fixture of testdata/good opens, with the listed number of warnings
 *     (the first at the listed offset, its message containing the listed text);
 *   - every prefix of every fixture gives an error, never a crash: for good
 *     files precisely a header error before the header's end, data-past-eof
 *     before the data's end, success after;
 *   - files built here byte by byte (both byte orders) probe the limits: every
 *     value type, arrays nested 16 and 17 deep, bad bools at each position,
 *     counts of 2^62 / 2^64-1 in every count field (refused, not allocated);
 *   - gk_open -> gk_header_serialize reproduces the header of canonical files
 *     byte for byte (the good fixtures marked canonical, and the golden syn1
 *     files when GGUFKIT_GOLDEN is set).
 *
 * Fixtures come from GGUFKIT_TESTDATA (meson sets it; ./testdata and
 * ../testdata are tried otherwise). They are part of the repository, so their
 * absence is a failure, not a skip.
 */
#include <check.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "meta/value.h"   /* gk_utf8_valid */

/* ------------------------------------------------------------------------ */
/* Fixtures and manifests                                                   */
/* ------------------------------------------------------------------------ */

#define MAX_ROWS 256
#define FIELD_MAX 160

typedef struct row {
    char file[FIELD_MAX];
    int exit_status;
    char code[FIELD_MAX];          /* bad: status name */
    long long offset;              /* bad: error offset; good: first warning offset or -1 */
    int warnings;                  /* good */
    char fragment[FIELD_MAX];      /* good: piece of the first warning, "-" for none */
    bool canonical;                /* good: the writer reproduces the header */
} row;

/* Splits a tab-separated line in place. @return : number of fields. */
static int split_tabs(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        fields[n++] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL) break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

/* Reads folder/EXPECTED.tsv (folder "bad" or "good"). @return : row count. */
static int load_manifest(const char *folder, row *rows) {
    char path[2300];
    snprintf(path, sizeof path, "%.2047s/%.8s/EXPECTED.tsv", testdata_dir(), folder);
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "cannot open %s", path);
    char line[1024];
    int n = 0;
    bool good = strcmp(folder, "good") == 0;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        ck_assert_int_lt(n, MAX_ROWS);
        char *f[8] = { "", "", "", "", "", "", "", "" };
        int nf = split_tabs(line, f, 8);
        row *r = &rows[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->file, sizeof r->file, "%.150s", f[0]);
        r->exit_status = atoi(f[1]);
        if (good) {
            ck_assert_msg(nf >= 6, "%s: short row for %s", path, f[0]);
            r->warnings = atoi(f[2]);
            r->offset = strcmp(f[3], "-") == 0 ? -1 : atoll(f[3]);
            snprintf(r->fragment, sizeof r->fragment, "%.150s", f[4]);
            r->canonical = strcmp(f[5], "yes") == 0;
        } else {
            ck_assert_msg(nf >= 4, "%s: short row for %s", path, f[0]);
            snprintf(r->code, sizeof r->code, "%.150s", f[2]);
            r->offset = atoll(f[3]);
        }
    }
    fclose(fp);
    ck_assert_msg(n > 0, "%s lists no files", path);
    return n;
}

static void fixture_path(char *out, size_t cap, const char *folder, const char *file) {
    snprintf(out, cap, "%.2047s/%.8s/%.159s", testdata_dir(), folder, file);
}

/* Reads a whole file into an exactly sized allocation (so an over-read is an
 * out-of-bounds access the sanitizer build catches). */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *p = malloc(size > 0 ? (size_t)size : 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(fread(p, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    *len = (size_t)size;
    return p;
}

/* ------------------------------------------------------------------------ */
/* Fixture tests                                                            */
/* ------------------------------------------------------------------------ */

START_TEST(bad_fixtures_exact_status_and_offset) {
    static row rows[MAX_ROWS];
    int n = load_manifest("bad", rows);
    int checked = 0;
    for (int i = 0; i < n; i++) {
        char path[4400];
        fixture_path(path, sizeof path, "bad", rows[i].file);
        gk_file *f = NULL;
        gk_error err;
        gk_status st = gk_open(path, GK_OPEN_DEFAULT, &f, &err);
        ck_assert_msg(st != GK_OK, "%s: opened, expected %s", rows[i].file, rows[i].code);
        ck_assert_ptr_null(f);
        ck_assert_int_eq(err.code, st);
        ck_assert_msg(strcmp(gk_status_name(st), rows[i].code) == 0,
                      "%s: status %s, expected %s (%s)", rows[i].file, gk_status_name(st),
                      rows[i].code, err.message);
        ck_assert_msg(err.offset == rows[i].offset, "%s: offset %lld, expected %lld (%s)",
                      rows[i].file, (long long)err.offset, rows[i].offset, err.message);
        ck_assert_msg(err.message[0] != '\0', "%s: empty message", rows[i].file);
        ck_assert_int_eq(rows[i].exit_status, 1);
        checked++;
    }
    printf("check_reader: %d bad fixtures gave their exact status and offset\n", checked);
}
END_TEST

START_TEST(bad_fixtures_same_from_memory) {
    static row rows[MAX_ROWS];
    int n = load_manifest("bad", rows);
    for (int i = 0; i < n; i++) {
        char path[4400];
        fixture_path(path, sizeof path, "bad", rows[i].file);
        size_t len;
        uint8_t *data = slurp(path, &len);
        gk_file *f = NULL;
        gk_error err;
        gk_status st = gk_open_memory(data, len, GK_OPEN_DEFAULT, &f, &err);
        ck_assert_msg(strcmp(gk_status_name(st), rows[i].code) == 0 && err.offset == rows[i].offset,
                      "%s from memory: %s at %lld, expected %s at %lld", rows[i].file,
                      gk_status_name(st), (long long)err.offset, rows[i].code, rows[i].offset);
        gk_close(f);
        free(data);
    }
}
END_TEST

START_TEST(bad_fixtures_lenient_still_fail_on_structure) {
    /* GK_OPEN_LENIENT turns only data-placement problems into warnings */
    static row rows[MAX_ROWS];
    int n = load_manifest("bad", rows);
    for (int i = 0; i < n; i++) {
        char path[4400];
        fixture_path(path, sizeof path, "bad", rows[i].file);
        gk_file *f = NULL;
        gk_error err;
        gk_status st = gk_open(path, GK_OPEN_LENIENT, &f, &err);
        /* an unknown tensor type too: its tensor is kept, its data unplaced */
        bool placement = strcmp(rows[i].code, "misaligned-offset") == 0 ||
                         strcmp(rows[i].code, "data-past-eof") == 0 ||
                         strcmp(rows[i].code, "overlapping-tensors") == 0 ||
                         strcmp(rows[i].code, "unknown-tensor-type") == 0;
        if (placement) {
            ck_assert_msg(st == GK_OK, "%s: lenient open failed: %s", rows[i].file, err.message);
            ck_assert_uint_ge(gk_file_warning_count(f), 1);
            ck_assert_int_eq(gk_file_warning_at(f, 0)->offset, rows[i].offset);
            gk_close(f);
        } else {
            ck_assert_msg(strcmp(gk_status_name(st), rows[i].code) == 0, "%s: lenient gave %s",
                          rows[i].file, gk_status_name(st));
        }
    }
}
END_TEST

START_TEST(unknown_tensor_type_kept_by_lenient_open) {
    /* A fork's type between two F32 tensors: strict opens refuse the file naming
     * the tensor and the id; a lenient one keeps all three, the unknown one with
     * nbytes 0 (its size unknown) and a warning saying so at its type field. */
    char path[4400];
    fixture_path(path, sizeof path, "bad", "tensor-type-99-among-known.gguf");
    gk_file *f = NULL;
    gk_error err;
    ck_assert_int_eq(gk_open(path, GK_OPEN_DEFAULT, &f, &err), GK_E_TENSOR_TYPE);
    ck_assert_ptr_nonnull(strstr(err.message, "'fork.weight'"));
    ck_assert_ptr_nonnull(strstr(err.message, "unknown tensor type 99"));
    ck_assert_ptr_nonnull(strstr(err.message, "cannot be laid out"));
    int64_t at = err.offset;
    ck_assert_int_eq(gk_open(path, GK_OPEN_LENIENT | GK_OPEN_PREVIEW, &f, &err), GK_OK);
    const gk_model *m = gk_file_model(f);
    ck_assert_uint_eq(gk_tensor_count(m), 3);
    ck_assert_uint_eq(gk_tensor_at(m, 0)->nbytes, 32);
    ck_assert_uint_eq(gk_tensor_at(m, 1)->type, 99);
    ck_assert_uint_eq(gk_tensor_at(m, 1)->nbytes, 0);
    ck_assert_uint_eq(gk_tensor_at(m, 1)->ne[0], 64);
    ck_assert_uint_eq(gk_tensor_at(m, 2)->nbytes, 16);
    ck_assert_uint_eq(gk_file_warning_count(f), 1);
    ck_assert_int_eq(gk_file_warning_at(f, 0)->offset, at);
    ck_assert_ptr_nonnull(strstr(gk_file_warning_at(f, 0)->message, "'fork.weight'"));
    gk_close(f);
}
END_TEST

START_TEST(good_fixtures_open_with_their_warnings) {
    static row rows[MAX_ROWS];
    int n = load_manifest("good", rows);
    for (int i = 0; i < n; i++) {
        char path[4400];
        fixture_path(path, sizeof path, "good", rows[i].file);
        gk_file *f = NULL;
        gk_error err;
        gk_status st = gk_open(path, GK_OPEN_DEFAULT, &f, &err);
        ck_assert_msg(st == GK_OK, "%s: %s at %lld: %s", rows[i].file, gk_status_name(st),
                      (long long)err.offset, err.message);
        size_t nw = gk_file_warning_count(f);
        for (size_t w = 0; w < nw && nw != (size_t)rows[i].warnings; w++)
            fprintf(stderr, "  %s warning: %s\n", rows[i].file, gk_file_warning_at(f, w)->message);
        ck_assert_msg(nw == (size_t)rows[i].warnings, "%s: %zu warnings, expected %d", rows[i].file,
                      nw, rows[i].warnings);
        if (nw > 0) {
            const gk_warning *w = gk_file_warning_at(f, 0);
            ck_assert_msg(w->offset == rows[i].offset, "%s: warning at %lld, expected %lld",
                          rows[i].file, (long long)w->offset, rows[i].offset);
            ck_assert_msg(strstr(w->message, rows[i].fragment) != NULL,
                          "%s: warning '%s' lacks '%s'", rows[i].file, w->message, rows[i].fragment);
        }
        ck_assert_uint_le(gk_file_header_end(f), gk_file_size(f));
        ck_assert_uint_ge(gk_file_data_offset(f), gk_file_header_end(f));
        gk_close(f);
    }
    printf("check_reader: %d good fixtures opened with their warnings\n", n);
}
END_TEST

/* The end of the last tensor's data in an opened file. */
static uint64_t data_end(gk_file *f) {
    gk_model *m = gk_file_model(f);
    uint64_t end = gk_file_header_end(f);
    for (size_t i = 0; i < gk_tensor_count(m); i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        uint64_t e = gk_file_data_offset(f) + t->offset + t->nbytes;
        if (e > end) end = e;
    }
    return end;
}

START_TEST(every_prefix_of_good_fixtures) {
    static row rows[MAX_ROWS];
    int n = load_manifest("good", rows);
    long prefixes = 0;
    for (int i = 0; i < n; i++) {
        char path[4400];
        fixture_path(path, sizeof path, "good", rows[i].file);
        size_t len;
        uint8_t *data = slurp(path, &len);
        gk_file *full = NULL;
        gk_error err;
        ck_assert_int_eq(gk_open_memory(data, len, 0, &full, &err), GK_OK);
        uint64_t hdr_end = gk_file_header_end(full), dend = data_end(full);
        size_t n_warn = gk_file_warning_count(full);
        gk_close(full);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *p = malloc(cut ? cut : 1);   /* exact size: over-reads are caught by ASan */
            memcpy(p, data, cut);
            gk_file *f = NULL;
            gk_status st = gk_open_memory(p, cut, 0, &f, &err);
            const char *name = gk_status_name(st);
            if (cut < hdr_end) {
                ck_assert_msg(st == GK_E_TRUNCATED || st == GK_E_COUNT || st == GK_E_MAGIC,
                              "%s cut at %zu (header ends at %llu): %s (%s)", rows[i].file, cut,
                              (unsigned long long)hdr_end, name, err.message);
                ck_assert_msg(err.offset >= 0 && (uint64_t)err.offset <= cut,
                              "%s cut at %zu: offset %lld past the cut", rows[i].file, cut,
                              (long long)err.offset);
            } else if (cut < dend) {
                ck_assert_msg(st == GK_E_DATA_EOF, "%s cut at %zu (data ends at %llu): %s",
                              rows[i].file, cut, (unsigned long long)dend, name);
            } else {
                ck_assert_msg(st == GK_OK, "%s cut at %zu: %s (%s)", rows[i].file, cut, name, err.message);
                ck_assert_uint_eq(gk_file_warning_count(f), n_warn);
            }
            gk_close(f);
            free(p);
            prefixes++;
        }
        free(data);
    }
    printf("check_reader: %ld prefixes of good fixtures behaved\n", prefixes);
}
END_TEST

START_TEST(every_prefix_of_bad_fixtures) {
    static row rows[MAX_ROWS];
    int n = load_manifest("bad", rows);
    long prefixes = 0;
    for (int i = 0; i < n; i++) {
        char path[4400];
        fixture_path(path, sizeof path, "bad", rows[i].file);
        size_t len;
        uint8_t *data = slurp(path, &len);
        for (size_t cut = 0; cut <= len; cut++) {
            uint8_t *p = malloc(cut ? cut : 1);
            memcpy(p, data, cut);
            gk_file *f = NULL;
            gk_error err;
            gk_status st = gk_open_memory(p, cut, 0, &f, &err);
            ck_assert_msg(st != GK_OK, "%s cut at %zu opened", rows[i].file, cut);
            ck_assert_msg(st >= GK_E_MAGIC && st < GK_STATUS_COUNT && st != GK_E_NOMEM,
                          "%s cut at %zu: unexpected status %s", rows[i].file, cut, gk_status_name(st));
            ck_assert_ptr_null(f);
            free(p);
            prefixes++;
        }
        free(data);
    }
    printf("check_reader: %ld prefixes of bad fixtures refused\n", prefixes);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Files built byte by byte                                                 */
/* ------------------------------------------------------------------------ */

typedef struct buf {
    uint8_t d[8192];
    size_t n;
    bool be;
} buf;

static void put(buf *b, const void *p, size_t n) {
    ck_assert_uint_le(b->n + n, sizeof b->d);
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void put_num(buf *b, uint64_t v, size_t size) {
    uint8_t tmp[8];
    for (size_t i = 0; i < size; i++) {
        size_t shift = b->be ? (size - 1 - i) * 8 : i * 8;
        tmp[i] = (uint8_t)(v >> shift);
    }
    put(b, tmp, size);
}

static void put_str(buf *b, const char *s) {
    put_num(b, strlen(s), 8);
    put(b, s, strlen(s));
}

/* A v2/v3 key/value pair's start: key, ARRAY type, element type and count. */
static void put_array_head(buf *b, const char *key, gk_vtype elem, uint64_t n) {
    put_str(b, key);
    put_num(b, GK_V_ARR, 4);
    put_num(b, elem, 4);
    put_num(b, n, 8);
}

static void header(buf *b, bool be, uint64_t n_tensors, uint64_t n_kv) {
    memset(b, 0, sizeof *b);
    b->be = be;
    put(b, "GGUF", 4);
    put_num(b, 3, 4);
    put_num(b, n_tensors, 8);
    put_num(b, n_kv, 8);
}

static gk_status open_buf(const buf *b, gk_file **f, gk_error *err) {
    return gk_open_memory(b->d, b->n, GK_OPEN_DEFAULT, f, err);
}

START_TEST(minimal_files) {
    for (int be = 0; be < 2; be++) {
        buf b;
        header(&b, be, 0, 0);
        gk_file *f;
        gk_error err;
        ck_assert_int_eq(open_buf(&b, &f, &err), GK_OK);
        ck_assert_uint_eq(gk_file_header_end(f), 24);
        ck_assert_uint_eq(gk_file_warning_count(f), 0);
        ck_assert(gk_model_big_endian(gk_file_model(f)) == (bool)be);
        gk_close(f);
    }
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(NULL, 0, 0, &f, &err), GK_E_MAGIC);
    ck_assert_int_eq(err.offset, 0);
}
END_TEST

START_TEST(every_value_type_both_orders) {
    for (int be = 0; be < 2; be++) {
        buf b;
        header(&b, be, 0, 12);
        struct { const char *key; gk_vtype t; uint64_t bits; size_t size; } s[] = {
            { "u8", GK_V_U8, 0xfe, 1 }, { "i8", GK_V_I8, 0x80, 1 }, { "u16", GK_V_U16, 0xbeef, 2 },
            { "i16", GK_V_I16, 0x8001, 2 }, { "u32", GK_V_U32, 0xdeadbeef, 4 },
            { "i32", GK_V_I32, 0x80000001, 4 }, { "f32", GK_V_F32, 0x3fc00000, 4 },
            { "bool", GK_V_BOOL, 1, 1 }, { "u64", GK_V_U64, 0xfedcba9876543210ull, 8 },
            { "i64", GK_V_I64, 0x8000000000000001ull, 8 }, { "f64", GK_V_F64, 0xc004000000000000ull, 8 },
        };
        for (size_t i = 0; i < 11; i++) {
            put_str(&b, s[i].key);
            put_num(&b, s[i].t, 4);
            put_num(&b, s[i].bits, s[i].size);
        }
        put_str(&b, "arr");
        put_num(&b, GK_V_ARR, 4);
        put_num(&b, GK_V_I16, 4);
        put_num(&b, 3, 8);
        put_num(&b, 1, 2);
        put_num(&b, 0xffff, 2);
        put_num(&b, 0x1234, 2);
        gk_file *f;
        gk_error err;
        ck_assert_msg(open_buf(&b, &f, &err) == GK_OK, "%s", err.message);
        gk_model *m = gk_file_model(f);
        ck_assert_uint_eq(gk_kv_get(m, "u8")->u, 0xfe);
        ck_assert_int_eq(gk_kv_get(m, "i8")->i, -128);
        ck_assert_uint_eq(gk_kv_get(m, "u16")->u, 0xbeef);
        ck_assert_int_eq(gk_kv_get(m, "i16")->i, -32767);
        ck_assert_uint_eq(gk_kv_get(m, "u32")->u, 0xdeadbeef);
        ck_assert_int_eq(gk_kv_get(m, "i32")->i, -2147483647);
        ck_assert(gk_kv_get(m, "f32")->f == 1.5);
        ck_assert(gk_kv_get(m, "bool")->b);
        ck_assert_uint_eq(gk_kv_get(m, "u64")->u, 0xfedcba9876543210ull);
        ck_assert_int_eq(gk_kv_get(m, "i64")->i, INT64_MIN + 1);
        ck_assert(gk_kv_get(m, "f64")->f == -2.5);
        const gk_value *a = gk_kv_get(m, "arr");
        ck_assert_uint_eq(a->arr.n, 3);
        const int16_t *e = a->arr.data;
        ck_assert_int_eq(e[0], 1);
        ck_assert_int_eq(e[1], -1);
        ck_assert_int_eq(e[2], 0x1234);
        gk_close(f);
    }
}
END_TEST

/* An array value nested depth levels deep (the innermost an empty U8 array). */
static void nested_file(buf *b, bool be, int depth, size_t *innermost_at) {
    header(b, be, 0, 1);
    put_str(b, "deep");
    put_num(b, GK_V_ARR, 4);
    for (int level = 1; level < depth; level++) {
        put_num(b, GK_V_ARR, 4);
        put_num(b, 1, 8);
    }
    *innermost_at = b->n;
    put_num(b, GK_V_U8, 4);
    put_num(b, 0, 8);
}

START_TEST(nesting_limit) {
    for (int be = 0; be < 2; be++) {
        for (int depth = 1; depth <= 20; depth++) {
            buf b;
            size_t inner;
            nested_file(&b, be, depth, &inner);
            gk_file *f = NULL;
            gk_error err;
            gk_status st = open_buf(&b, &f, &err);
            if (depth <= GK_MAX_ARRAY_DEPTH) {
                ck_assert_msg(st == GK_OK, "depth %d: %s", depth, err.message);
                ck_assert_uint_eq(gk_file_warning_count(f), depth > 1 ? 1 : 0);
                gk_close(f);
            } else {
                ck_assert_int_eq(st, GK_E_NESTING);
                /* the first array past the limit is reported where it starts */
                size_t expect_at = 32 + 4 + 4 + (size_t)GK_MAX_ARRAY_DEPTH * 12;
                ck_assert_int_eq(err.offset, (int64_t)expect_at);
                (void)inner;
            }
        }
    }
}
END_TEST

START_TEST(bad_bool_at_every_position) {
    for (int be = 0; be < 2; be++) {
        for (int k = 0; k < 8; k++) {
            buf b;
            header(&b, be, 0, 1);
            put_array_head(&b, "flags", GK_V_BOOL, 8);
            size_t elems = b.n;
            for (int i = 0; i < 8; i++) put_num(&b, i == k ? 0x80 : (uint64_t)(i & 1), 1);
            gk_file *f = NULL;
            gk_error err;
            ck_assert_int_eq(open_buf(&b, &f, &err), GK_E_BOOL);
            ck_assert_int_eq(err.offset, (int64_t)(elems + (size_t)k));
        }
    }
}
END_TEST

/* Well-formed UTF-8 by Unicode's table 3-7, one byte at a time: the reference
 * the library's word-at-a-time check is compared with. */
static bool utf8_reference(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len;
        unsigned lo = 0x80, hi = 0xBF;
        if (c <= 0x7F) { i++; continue; }
        else if (c >= 0xC2 && c <= 0xDF) len = 2;
        else if (c == 0xE0) { len = 3; lo = 0xA0; }
        else if (c >= 0xE1 && c <= 0xEC) len = 3;
        else if (c == 0xED) { len = 3; hi = 0x9F; }
        else if (c >= 0xEE && c <= 0xEF) len = 3;
        else if (c == 0xF0) { len = 4; lo = 0x90; }
        else if (c >= 0xF1 && c <= 0xF3) len = 4;
        else if (c == 0xF4) { len = 4; hi = 0x8F; }
        else return false;
        if (n - i < len || s[i + 1] < lo || s[i + 1] > hi) return false;
        for (size_t k = 2; k < len; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return false;
        i += len;
    }
    return true;
}

START_TEST(utf8_check_matches_reference) {
    static const char *pieces[] = { "a", "plain text", "\xc4\xa0", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80",
                                    "\xed\x9f\xbf", "\xef\xbf\xbd", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
                                    "\xc0\xaf", "\xc3", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                    "\xf5", "\xff", "\x80", "\0", "        " };
    uint32_t x = 12345;
    unsigned char buf[96];
    long valid = 0;
    for (int t = 0; t < 200000; t++) {
        size_t n = 0;
        int parts = (int)((x >> 7) % 12);
        for (int k = 0; k < parts; k++) {
            x = x * 1103515245u + 12345u;
            /* mostly well-formed pieces, so that long valid strings occur too */
            size_t pick = (x >> 9) % 100 < 85 ? (x >> 16) % 10 : (x >> 16) % 20;
            const char *piece = pieces[pick];
            size_t len = pick == 18 ? 1 : strlen(piece);
            if (n + len > sizeof buf) break;
            memcpy(buf + n, piece, len);
            n += len;
        }
        x = x * 1103515245u + 12345u;
        if (n > 0 && (x >> 20) % 4 == 0) n -= (x >> 8) % (n < 3 ? n : 3) + 0;   /* cut inside a character */
        bool want = utf8_reference(buf, n);
        valid += want;
        ck_assert_msg(gk_utf8_valid((const char *)buf, n) == want, "case %d (%zu bytes)", t, n);
        /* and at every start offset */
        for (size_t off = 1; off < n && off < 9; off++)
            ck_assert_msg(gk_utf8_valid((const char *)buf + off, n - off) == utf8_reference(buf + off, n - off),
                          "case %d at offset %zu", t, off);
    }
    ck_assert_int_gt(valid, 20000);    /* both outcomes are exercised */
    ck_assert_int_lt(valid, 180000);
}
END_TEST

/* Long buffers, as the block checks of vocabularies see: well-formed text of
 * up to 400 bytes with one piece broken or cut at any place, compared with the
 * reference, so that every fault falls at every position within a 16-byte block. */
START_TEST(utf8_long_buffers_match_reference) {
    static const char *good[] = { "a", "text ", "\xc4\xa0", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80",
                                  "\xed\x9f\xbf", "\xef\xbf\xbd", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf" };
    static const char *bad[] = { "\xc0\xaf", "\xc1\xbf", "\xc3", "\xe0\x80\xaf", "\xe0\x9f\xbf", "\xed\xa0\x80",
                                 "\xf0\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "\x80",
                                 "\xe2\x82", "\xf0\x9f\x98", "\xc4\xa0\xa0", "\xf8\x88\x80\x80\x80" };
    uint32_t x = 777;
    unsigned char buf[420];
    long valid = 0;
    for (int t = 0; t < 40000; t++) {
        x = x * 1103515245u + 12345u;
        size_t target = 16 + (x >> 8) % 384, n = 0;
        size_t fault_at = (x >> 4) % 2 ? (x >> 12) % target : SIZE_MAX;
        const char *fault = bad[(x >> 20) % 15];
        bool faulted = false;
        while (n < target) {
            x = x * 1103515245u + 12345u;
            const char *piece = good[(x >> 16) % 10];
            if (!faulted && n >= fault_at) { piece = fault; faulted = true; }
            size_t len = strlen(piece);
            if (n + len > sizeof buf) break;
            memcpy(buf + n, piece, len);
            n += len;
        }
        x = x * 1103515245u + 12345u;
        if ((x >> 9) % 8 == 0) n -= 1 + (x >> 13) % 3;   /* cut the end, often inside a character */
        bool want = utf8_reference(buf, n);
        valid += want;
        ck_assert_msg(gk_utf8_valid((const char *)buf, n) == want, "case %d (%zu bytes)", t, n);
        for (size_t off = 1; off < 16 && off < n; off++)
            ck_assert_msg(gk_utf8_valid((const char *)buf + off, n - off) == utf8_reference(buf + off, n - off),
                          "case %d at offset %zu", t, off);
    }
    ck_assert_int_gt(valid, 10000);
    ck_assert_int_lt(valid, 30000);
}
END_TEST

/* String arrays in v1 (32-bit lengths) and v3, both byte orders: every element
 * comes back, empty ones and one longer than the rest included. */
START_TEST(string_arrays_every_form) {
    for (int v = 1; v <= 3; v += 2) {
        for (int be = 0; be < 2; be++) {
            buf b;
            memset(&b, 0, sizeof b);
            b.be = be;
            size_t cb = v == 1 ? 4 : 8;
            put(&b, "GGUF", 4);
            put_num(&b, (uint64_t)v, 4);
            put_num(&b, 0, cb);
            put_num(&b, 1, cb);
            put_num(&b, 3, cb);
            put(&b, "tok", 3);
            put_num(&b, GK_V_ARR, 4);
            put_num(&b, GK_V_STR, 4);
            const char *want[] = { "a", "", "\xc4\xa0" "bc", "", "a somewhat longer token of forty-two bytes", "z" };
            put_num(&b, 6, cb);
            for (int i = 0; i < 6; i++) {
                put_num(&b, strlen(want[i]), cb);
                put(&b, want[i], strlen(want[i]));
            }
            gk_file *f = NULL;
            gk_error err;
            ck_assert_msg(open_buf(&b, &f, &err) == GK_OK, "v%d be %d: %s", v, be, err.message);
            const gk_value *a = gk_kv_get(gk_file_model(f), "tok");
            ck_assert_ptr_nonnull(a);
            ck_assert_uint_eq(a->arr.n, 6);
            const gk_str *e = a->arr.data;
            for (int i = 0; i < 6; i++) {
                ck_assert_uint_eq(e[i].len, strlen(want[i]));
                ck_assert_str_eq(e[i].ptr, want[i]);
            }
            ck_assert_uint_eq(gk_file_warning_count(f), 0);
            ck_assert(gk_file_strings_utf8(f));
            gk_close(f);
        }
    }
}
END_TEST

/* A string array with one ill-formed element: one warning, at that element's
 * offset, naming its index; the well-formed neighbours around it (a lead byte
 * cut short at the end of one string is not completed by the next) stay clean. */
START_TEST(bad_utf8_string_element_located) {
    const char *bad[] = { "\xff", "ab\xc3", "\xed\xa0\x80", "\xe0\x80\xaf" };
    for (int be = 0; be < 2; be++) {
        for (size_t kind = 0; kind < sizeof bad / sizeof bad[0]; kind++) {
            for (int k = 0; k < 5; k++) {
                buf b;
                header(&b, be, 0, 1);
                put_array_head(&b, "tokenizer.ggml.tokens", GK_V_STR, 5);
                size_t at = 0;
                for (int i = 0; i < 5; i++) {
                    if (i == k) at = b.n;
                    put_str(&b, i == k ? bad[kind] : i == k + 1 ? "\xa9x" : "\xc4\xa0ok");
                }
                gk_file *f = NULL;
                gk_error err;
                ck_assert_msg(open_buf(&b, &f, &err) == GK_OK, "%s", err.message);
                ck_assert_uint_eq(gk_file_warning_count(f), 1);
                const gk_warning *w = gk_file_warning_at(f, 0);
                ck_assert_int_eq(w->offset, (int64_t)at);
                char want[32];
                snprintf(want, sizeof want, "element %d", k);
                ck_assert_msg(strstr(w->message, want) != NULL, "kind %zu at %d: %s", kind, k, w->message);
                ck_assert_msg(strstr(w->message, "not valid UTF-8") != NULL, "%s", w->message);
                ck_assert(!gk_file_strings_utf8(f));
                gk_close(f);
            }
        }
        /* all well-formed (ASCII, 2-, 3- and 4-byte characters): no warning */
        buf b;
        header(&b, be, 0, 1);
        put_array_head(&b, "tokenizer.ggml.tokens", GK_V_STR, 4);
        put_str(&b, "plain ascii text longer than eight");
        put_str(&b, "\xc4\xa0the");
        put_str(&b, "\xe2\x82\xac\xef\xbf\xbd");
        put_str(&b, "\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
        gk_file *f = NULL;
        gk_error err;
        ck_assert_msg(open_buf(&b, &f, &err) == GK_OK, "%s", err.message);
        ck_assert_uint_eq(gk_file_warning_count(f), 0);
        gk_close(f);
    }
}
END_TEST

START_TEST(huge_counts_refused_before_allocating) {
    const uint64_t huge[] = { 1ull << 62, 1ull << 63, UINT64_MAX, UINT64_MAX / 3, 1ull << 40 };
    for (size_t h = 0; h < sizeof huge / sizeof huge[0]; h++) {
        for (int be = 0; be < 2; be++) {
            uint64_t v = huge[h];
            gk_file *f = NULL;
            gk_error err;
            buf b;
            /* n_tensors, n_kv */
            header(&b, be, v, 0);
            ck_assert_int_eq(open_buf(&b, &f, &err), GK_E_COUNT);
            ck_assert_int_eq(err.offset, 8);
            header(&b, be, 0, v);
            ck_assert_int_eq(open_buf(&b, &f, &err), GK_E_COUNT);
            ck_assert_int_eq(err.offset, 16);
            /* key length */
            header(&b, be, 0, 1);
            put_num(&b, v, 8);
            put(&b, "key.......", 10);
            ck_assert_int_eq(open_buf(&b, &f, &err), GK_E_COUNT);
            ck_assert_int_eq(err.offset, 24);
            /* string value, arrays of every element kind, tensor name, nested arrays */
            const gk_vtype elems[] = { GK_V_U8, GK_V_U64, GK_V_BOOL, GK_V_STR, GK_V_ARR };
            for (int kind = -1; kind < 5; kind++) {
                header(&b, be, 0, 1);
                put_str(&b, "some.key");
                size_t at;
                if (kind < 0) {
                    put_num(&b, GK_V_STR, 4);
                    at = b.n;
                    put_num(&b, v, 8);
                } else {
                    put_num(&b, GK_V_ARR, 4);
                    put_num(&b, elems[kind], 4);
                    at = b.n;
                    put_num(&b, v, 8);
                }
                put(&b, "0123456789abcdef0123456789abcdef", 32);
                gk_status st = open_buf(&b, &f, &err);
                ck_assert_msg(st == GK_E_COUNT, "kind %d, count %llu: %s", kind,
                              (unsigned long long)v, gk_status_name(st));
                ck_assert_int_eq(err.offset, (int64_t)at);
            }
            header(&b, be, 1, 0);
            put_num(&b, v, 8);
            put(&b, "0123456789abcdef0123456789abcdef", 32);
            ck_assert_int_eq(open_buf(&b, &f, &err), GK_E_COUNT);
            ck_assert_int_eq(err.offset, 24);
        }
    }
}
END_TEST

START_TEST(tensor_dimension_rules) {
    struct { uint32_t n_dims; uint64_t ne[5]; uint32_t type; gk_status want; } cases[] = {
        { 1, { 32 }, GK_TYPE_Q4_0, GK_OK },
        { 1, { 31 }, GK_TYPE_Q4_0, GK_E_ROW_BLOCK },
        { 2, { 256, 3 }, GK_TYPE_Q4_K, GK_OK },
        { 2, { 128, 3 }, GK_TYPE_Q4_K, GK_E_ROW_BLOCK },
        { 4, { 2, 2, 2, 2 }, GK_TYPE_F32, GK_OK },
        { 5, { 1, 1, 1, 1, 1 }, GK_TYPE_F32, GK_E_NDIMS },
        { 2, { 1, (uint64_t)-1 }, GK_TYPE_F32, GK_E_DIM },
        { 3, { 1ull << 21, 1ull << 21, 1ull << 21 }, GK_TYPE_F32, GK_E_DIM_OVERFLOW },
        { 1, { 8 }, 4, GK_E_TENSOR_TYPE_RETIRED },
        { 1, { 8 }, 33, GK_E_TENSOR_TYPE_RETIRED },
        { 1, { 8 }, 38, GK_E_TENSOR_TYPE_RETIRED },
        { 1, { 8 }, GK_TYPE_COUNT, GK_E_TENSOR_TYPE },
        { 1, { 8 }, 99, GK_E_TENSOR_TYPE },
        /* the 2026 types: rows of whole blocks (NVFP4 64, Q1_0 128, Q2_0 64, MXFP4 32) */
        { 2, { 64, 2 }, GK_TYPE_NVFP4, GK_OK },
        { 1, { 32 }, GK_TYPE_NVFP4, GK_E_ROW_BLOCK },
        { 1, { 96 }, GK_TYPE_NVFP4, GK_E_ROW_BLOCK },
        { 2, { 128, 3 }, GK_TYPE_Q1_0, GK_OK },
        { 1, { 64 }, GK_TYPE_Q1_0, GK_E_ROW_BLOCK },
        { 1, { 192 }, GK_TYPE_Q1_0, GK_E_ROW_BLOCK },
        { 1, { 64 }, GK_TYPE_Q2_0, GK_OK },
        { 1, { 96 }, GK_TYPE_Q2_0, GK_E_ROW_BLOCK },
        { 1, { 32 }, GK_TYPE_MXFP4, GK_OK },
        { 1, { 48 }, GK_TYPE_MXFP4, GK_E_ROW_BLOCK },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        buf b;
        header(&b, false, 1, 0);
        put_str(&b, "t");
        put_num(&b, cases[c].n_dims, 4);
        for (uint32_t d = 0; d < cases[c].n_dims; d++) put_num(&b, cases[c].ne[d], 8);
        put_num(&b, cases[c].type, 4);
        put_num(&b, 0, 8);
        while (b.n % 32) put_num(&b, 0, 1);
        uint8_t zeros[2048] = { 0 };
        put(&b, zeros, sizeof zeros);
        gk_file *f = NULL;
        gk_error err;
        gk_status st = open_buf(&b, &f, &err);
        ck_assert_msg(st == cases[c].want, "case %zu: %s, expected %s (%s)", c, gk_status_name(st),
                      gk_status_name(cases[c].want), err.message);
        gk_close(f);
    }
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Writer round trips                                                       */
/* ------------------------------------------------------------------------ */

/* Opens path, serializes its header and compares with the file's first bytes. */
static void round_trip(const char *path, const char *label) {
    size_t len;
    uint8_t *data = slurp(path, &len);
    gk_file *f = NULL;
    gk_error err;
    ck_assert_msg(gk_open_memory(data, len, 0, &f, &err) == GK_OK, "%s: %s", label, err.message);
    uint8_t *hdr = NULL;
    size_t hlen = 0;
    ck_assert_msg(gk_header_serialize(gk_file_model(f), &hdr, &hlen, &err) == GK_OK, "%s: %s", label,
                  err.message);
    ck_assert_msg(hlen == gk_file_data_offset(f), "%s: header %zu bytes, data starts at %llu", label,
                  hlen, (unsigned long long)gk_file_data_offset(f));
    ck_assert_uint_le(hlen, len);
    size_t diff = 0;
    while (diff < hlen && hdr[diff] == data[diff]) diff++;
    ck_assert_msg(diff == hlen, "%s: serialized header differs at byte %zu", label, diff);
    free(hdr);
    gk_close(f);
    free(data);
}

START_TEST(writer_round_trip_fixtures) {
    static row rows[MAX_ROWS];
    int n = load_manifest("good", rows), done = 0;
    for (int i = 0; i < n; i++) {
        if (!rows[i].canonical) continue;
        char path[4400];
        fixture_path(path, sizeof path, "good", rows[i].file);
        round_trip(path, rows[i].file);
        done++;
    }
    ck_assert_int_ge(done, 10);
    /* v1 can be read but not written back as v1 */
    char path[4400];
    fixture_path(path, sizeof path, "good", "v1.gguf");
    gk_file *f = NULL;
    gk_error err;
    ck_assert_int_eq(gk_open(path, 0, &f, &err), GK_OK);
    uint8_t *hdr;
    size_t hlen;
    ck_assert_int_ne(gk_header_serialize(gk_file_model(f), &hdr, &hlen, &err), GK_OK);
    /* as v3 it serializes and reads back the same model */
    ck_assert_int_eq(gk_model_set_version(gk_file_model(f), 3, &err), GK_OK);
    ck_assert_int_eq(gk_header_serialize(gk_file_model(f), &hdr, &hlen, &err), GK_OK);
    gk_file *g = NULL;
    ck_assert_msg(gk_open_memory(hdr, hlen, GK_OPEN_LENIENT, &g, &err) == GK_OK, "%s", err.message);
    gk_model *a = gk_file_model(f), *b = gk_file_model(g);
    ck_assert_uint_eq(gk_kv_count(a), gk_kv_count(b));
    ck_assert_uint_eq(gk_tensor_count(a), gk_tensor_count(b));
    for (size_t i = 0; i < gk_tensor_count(a); i++) {
        ck_assert_str_eq(gk_tensor_at(a, i)->name.ptr, gk_tensor_at(b, i)->name.ptr);
        ck_assert_uint_eq(gk_tensor_at(a, i)->nbytes, gk_tensor_at(b, i)->nbytes);
    }
    gk_close(g);
    free(hdr);
    gk_close(f);
    printf("check_reader: %d canonical fixture headers reproduced by the writer\n", done);
}
END_TEST

START_TEST(writer_round_trip_golden) {
    const char *golden = getenv("GGUFKIT_GOLDEN");
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/syn1", golden ? golden : "");
    DIR *d = golden ? opendir(dir) : NULL;
    if (d == NULL) {
        printf("SKIPPED: golden parity (no golden data at %s)\n", golden ? dir : "(GGUFKIT_GOLDEN unset)");
        return;
    }
    struct dirent *e;
    int done = 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".gguf") != 0) continue;
        char path[4500];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        /* only the header is needed: read up to the data offset */
        gk_file *f = NULL;
        gk_error err;
        ck_assert_msg(gk_open(path, 0, &f, &err) == GK_OK, "%s: %s", e->d_name, err.message);
        uint64_t hdr_len = gk_file_data_offset(f);
        uint8_t *want = malloc(hdr_len);
        ck_assert_int_eq(gk_file_read(f, 0, want, hdr_len, &err), GK_OK);
        uint8_t *got;
        size_t glen;
        ck_assert_int_eq(gk_header_serialize(gk_file_model(f), &got, &glen, &err), GK_OK);
        ck_assert_msg(glen == hdr_len && memcmp(got, want, glen) == 0,
                      "%s: serialized header differs from the file", e->d_name);
        free(got);
        free(want);
        gk_close(f);
        done++;
    }
    closedir(d);
    ck_assert_int_gt(done, 0);
    printf("check_reader: %d golden syn1 headers reproduced by the writer\n", done);
}
END_TEST

static Suite *reader_suite(void) {
    Suite *s = suite_create("reader");
    TCase *fx = tcase_create("fixtures");
    tcase_add_test(fx, bad_fixtures_exact_status_and_offset);
    tcase_add_test(fx, bad_fixtures_same_from_memory);
    tcase_add_test(fx, bad_fixtures_lenient_still_fail_on_structure);
    tcase_add_test(fx, unknown_tensor_type_kept_by_lenient_open);
    tcase_add_test(fx, good_fixtures_open_with_their_warnings);
    tcase_add_test(fx, every_prefix_of_good_fixtures);
    tcase_add_test(fx, every_prefix_of_bad_fixtures);
    suite_add_tcase(s, fx);
    TCase *mem = tcase_create("built");
    tcase_add_test(mem, minimal_files);
    tcase_add_test(mem, every_value_type_both_orders);
    tcase_add_test(mem, nesting_limit);
    tcase_add_test(mem, bad_bool_at_every_position);
    tcase_add_test(mem, huge_counts_refused_before_allocating);
    tcase_add_test(mem, bad_utf8_string_element_located);
    tcase_add_test(mem, string_arrays_every_form);
    tcase_add_test(mem, utf8_check_matches_reference);
    tcase_add_test(mem, utf8_long_buffers_match_reference);
    tcase_add_test(mem, tensor_dimension_rules);
    suite_add_tcase(s, mem);
    TCase *wr = tcase_create("writer");
    tcase_add_test(wr, writer_round_trip_fixtures);
    tcase_add_test(wr, writer_round_trip_golden);
    suite_add_tcase(s, wr);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(reader_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
