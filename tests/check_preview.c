/*
 * check_preview.c - tests of GK_OPEN_PREVIEW (lib/format/read.c): a preview
 * reads and validates what a full open does, and holds only the first
 * GK_PREVIEW_ELEMS elements of long top-level arrays.
 *
 *   - every fixture (testdata/bad, good, fuzz/regress), every prefix of the
 *     good ones, and the golden files when GGUFKIT_GOLDEN is set: the same
 *     status, offset and message, the same warnings, and where both open the
 *     same model but for the elements a preview leaves out (n_unread exactly
 *     n - GK_PREVIEW_ELEMS on long arrays, 0 elsewhere);
 *   - files built here with long arrays of every element type, v1 and v3, both
 *     byte orders, each with a fault at a chosen element: a bad bool, bad UTF-8
 *     among the kept or the skipped elements (one at a scratch-block edge, one in
 *     a string longer than the scratch block), a string cut by the end of the
 *     file, a length past the end; each the same both ways;
 *   - a preview cannot be written; its clone is a preview and frees cleanly.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "ggufkit.h"

/* ------------------------------------------------------------------------ */
/* Comparing a full open with a preview                                     */
/* ------------------------------------------------------------------------ */

static void same_value(const gk_value *full, const gk_value *pre, bool top, const char *label, const char *key) {
    ck_assert_msg(full->type == pre->type, "%s: %s: type", label, key);
    if (full->type == GK_V_STR) {
        ck_assert_msg(full->s.len == pre->s.len && memcmp(full->s.ptr, pre->s.ptr, full->s.len) == 0,
                      "%s: %s: string differs", label, key);
        return;
    }
    if (full->type != GK_V_ARR) {
        ck_assert_msg(memcmp(&full->u, &pre->u, sizeof full->u) == 0, "%s: %s: scalar differs", label, key);
        return;
    }
    ck_assert_msg(full->arr.elem == pre->arr.elem && full->arr.n == pre->arr.n, "%s: %s: array head", label, key);
    ck_assert_uint_eq(full->arr.n_unread, 0);
    bool long_one = top && full->arr.elem != GK_V_ARR && full->arr.n > GK_PREVIEW_ELEMS;
    uint64_t want_unread = long_one ? full->arr.n - GK_PREVIEW_ELEMS : 0;
    ck_assert_msg(pre->arr.n_unread == want_unread, "%s: %s: %llu unread, want %llu", label, key,
                  (unsigned long long)pre->arr.n_unread, (unsigned long long)want_unread);
    uint64_t held = pre->arr.n - pre->arr.n_unread;
    for (uint64_t i = 0; i < held; i++) {
        if (full->arr.elem == GK_V_STR) {
            const gk_str *a = &((const gk_str *)full->arr.data)[i], *b = &((const gk_str *)pre->arr.data)[i];
            ck_assert_msg(a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0 && b->ptr[b->len] == '\0',
                          "%s: %s: element %llu", label, key, (unsigned long long)i);
        } else if (full->arr.elem == GK_V_ARR) {
            same_value(&((const gk_value *)full->arr.data)[i], &((const gk_value *)pre->arr.data)[i], false,
                       label, key);
        } else {
            size_t es = gk_vtype_size(full->arr.elem);
            ck_assert_msg(memcmp((const uint8_t *)full->arr.data + i * es, (const uint8_t *)pre->arr.data + i * es,
                                 es) == 0,
                          "%s: %s: element %llu", label, key, (unsigned long long)i);
        }
    }
}

/* Opens data both ways (flags added to each) and checks that they agree.
 * @return : the status, for callers that expect one. */
static gk_status same_either_way(const uint8_t *data, size_t size, unsigned flags, const char *label) {
    gk_file *a = NULL, *b = NULL;
    gk_error ea, eb;
    gk_status sa = gk_open_memory(data, size, flags, &a, &ea);
    gk_status sb = gk_open_memory(data, size, flags | GK_OPEN_PREVIEW, &b, &eb);
    ck_assert_msg(sa == sb, "%s: status %s in full, %s in preview", label, gk_status_name(sa), gk_status_name(sb));
    if (sa != GK_OK) {
        ck_assert_msg(ea.offset == eb.offset && strcmp(ea.message, eb.message) == 0,
                      "%s: full says \"%s\" at %lld, preview \"%s\" at %lld", label, ea.message,
                      (long long)ea.offset, eb.message, (long long)eb.offset);
        return sa;
    }
    ck_assert_uint_eq(gk_file_warning_count(a), gk_file_warning_count(b));
    for (size_t i = 0; i < gk_file_warning_count(a); i++) {
        const gk_warning *wa = gk_file_warning_at(a, i), *wb = gk_file_warning_at(b, i);
        ck_assert_msg(wa->offset == wb->offset && wa->rule == wb->rule && strcmp(wa->message, wb->message) == 0,
                      "%s: warning %zu: \"%s\" / \"%s\"", label, i, wa->message, wb->message);
    }
    const gk_model *ma = gk_file_model(a), *mb = gk_file_model(b);
    ck_assert_uint_eq(gk_kv_count(ma), gk_kv_count(mb));
    for (size_t i = 0; i < gk_kv_count(ma); i++) {
        const gk_kv *ka = gk_kv_at(ma, i), *kb = gk_kv_at(mb, i);
        ck_assert_str_eq(ka->key.ptr, kb->key.ptr);
        ck_assert_int_eq(ka->file_offset, kb->file_offset);
        same_value(&ka->value, &kb->value, true, label, ka->key.ptr);
    }
    ck_assert_uint_eq(gk_tensor_count(ma), gk_tensor_count(mb));
    for (size_t i = 0; i < gk_tensor_count(ma); i++) {
        const gk_tensor *ta = gk_tensor_at(ma, i), *tb = gk_tensor_at(mb, i);
        ck_assert_str_eq(ta->name.ptr, tb->name.ptr);
        ck_assert(ta->type == tb->type && ta->n_dims == tb->n_dims && ta->offset == tb->offset);
        ck_assert(memcmp(ta->ne, tb->ne, sizeof ta->ne) == 0);
    }
    ck_assert_uint_eq(gk_file_strings_utf8(a), gk_file_strings_utf8(b));
    gk_close(a);
    gk_close(b);
    return sa;
}

/* Runs same_either_way on every file of folder ending in ext; with prefixes,
 * on every prefix too. @return : files checked. */
static int each_file(const char *folder, const char *ext, bool prefixes) {
    DIR *d = opendir(folder);
    if (d == NULL) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), el = strlen(ext);
        if (len < el || strcmp(e->d_name + len - el, ext) != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
        size_t size;
        uint8_t *data = read_whole_file(path, &size);
        same_either_way(data, size, GK_OPEN_DEFAULT, path);
        same_either_way(data, size, GK_OPEN_LENIENT, path);
        for (size_t cut = 0; prefixes && cut < size; cut++) {
            uint8_t *part = malloc(cut ? cut : 1);   /* exactly sized: an over-read is caught */
            memcpy(part, data, cut);
            same_either_way(part, cut, GK_OPEN_DEFAULT, path);
            free(part);
        }
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(fixtures_same_either_way) {
    char folder[4096];
    snprintf(folder, sizeof folder, "%s/bad", testdata_dir());
    int bad = each_file(folder, ".gguf", false);
    snprintf(folder, sizeof folder, "%s/good", testdata_dir());
    int good = each_file(folder, ".gguf", true);
    snprintf(folder, sizeof folder, "%s/fuzz/regress", testdata_dir());
    each_file(folder, ".gguf", true);
    ck_assert_msg(bad >= 30 && good >= 10, "fixtures missing (%d bad, %d good) in %s", bad, good, testdata_dir());
}
END_TEST

START_TEST(golden_same_either_way) {
    const char *g = getenv("GGUFKIT_GOLDEN");
    char folder[4096];
    int n = 0;
    if (g && *g) {
        snprintf(folder, sizeof folder, "%s/real", g);
        n += each_file(folder, ".gguf", false);
        snprintf(folder, sizeof folder, "%s/syn1", g);
        n += each_file(folder, ".gguf", false);
    }
    if (n == 0) {
        printf("SKIPPED: preview against the golden files (none at GGUFKIT_GOLDEN=%s)\n", g ? g : "(unset)");
        return;
    }
    printf("check_preview: %d golden files agree in full and preview\n", n);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Files built here                                                         */
/* ------------------------------------------------------------------------ */

/* A file being built: its bytes, byte order and version. */
typedef struct dbuf {
    test_bytes bytes;
    bool be;
    int version;
} dbuf;

static void put(dbuf *b, const void *p, size_t n) { test_bytes_add(&b->bytes, p, n); }

static void put_num(dbuf *b, uint64_t v, size_t size) {
    uint8_t tmp[8];
    for (size_t i = 0; i < size; i++) tmp[i] = (uint8_t)(v >> (b->be ? (size - 1 - i) * 8 : i * 8));
    put(b, tmp, size);
}

static void put_count(dbuf *b, uint64_t v) { put_num(b, v, b->version == 1 ? 4 : 8); }

static void put_bytes_str(dbuf *b, const char *s, size_t len) {
    put_count(b, len);
    put(b, s, len);
}

static void put_str(dbuf *b, const char *s) { put_bytes_str(b, s, strlen(s)); }

static void start(dbuf *b, int version, bool be, uint64_t n_kv) {
    memset(b, 0, sizeof *b);
    b->be = be;
    b->version = version;
    put(b, "GGUF", 4);
    put_num(b, (uint64_t)version, 4);
    put_count(b, 0);
    put_count(b, n_kv);
}

static void array_head(dbuf *b, const char *key, gk_vtype elem, uint64_t n) {
    put_str(b, key);
    put_num(b, GK_V_ARR, 4);
    put_num(b, elem, 4);
    put_count(b, n);
}

/* Faults a built file may carry. */
enum fault { NONE, BAD_BOOL, UTF8_KEPT, UTF8_SKIPPED, UTF8_EDGE, UTF8_LONG, CUT_STRING, LENGTH_PAST_END, N_FAULTS };

/* A file of long arrays (every number type, bools, strings of varied lengths,
 * a short array, an array of arrays) with fault f. */
static void build(dbuf *b, int version, bool be, enum fault f) {
    static const gk_vtype numbers[] = { GK_V_U8, GK_V_I8, GK_V_U16, GK_V_I16, GK_V_U32, GK_V_I32,
                                        GK_V_F32, GK_V_U64, GK_V_I64, GK_V_F64, GK_V_BOOL };
    size_t n_numbers = sizeof numbers / sizeof numbers[0];
    start(b, version, be, n_numbers + 4);
    for (size_t t = 0; t < n_numbers; t++) {
        char key[32];
        snprintf(key, sizeof key, "test.numbers%zu", t);
        uint64_t n = 1000 + t;
        array_head(b, key, numbers[t], n);
        size_t es = gk_vtype_size(numbers[t]);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v = numbers[t] == GK_V_BOOL ? i % 2 : i * 2654435761u;
            if (numbers[t] == GK_V_BOOL && f == BAD_BOOL && i == 777) v = 2;
            put_num(b, v, es);
        }
    }
    put_str(b, "test.short");
    put_num(b, GK_V_ARR, 4);
    put_num(b, GK_V_U32, 4);
    put_count(b, 3);
    for (int i = 0; i < 3; i++) put_num(b, (uint64_t)i, 4);
    if (version != 1) {
        array_head(b, "test.nested", GK_V_ARR, 20);
        for (int i = 0; i < 20; i++) {
            put_num(b, GK_V_STR, 4);
            put_count(b, 30);
            for (int k = 0; k < 30; k++) put_str(b, "x");
        }
    } else {
        put_str(b, "test.scalar");
        put_num(b, GK_V_U32, 4);
        put_num(b, 7, 4);
    }
    /* Strings: 30000 of them, enough bytes for a few scratch blocks, one of
     * 100000 bytes among the skipped ones. */
    uint64_t n = 30000;
    array_head(b, "tokenizer.ggml.tokens", GK_V_STR, n);
    static char big[100000];
    memset(big, 'a', sizeof big);
    uint32_t x = 99;
    size_t bytes = 0;
    for (uint64_t i = 0; i < n; i++) {
        char tok[64];
        x = x * 1103515245u + 12345u;
        size_t len = (x >> 16) % 12;
        for (size_t k = 0; k < len; k++) tok[k] = (char)('a' + (x >> (k % 16)) % 26);
        if (i % 3 == 0 && len >= 2) { tok[0] = (char)0xc4; tok[1] = (char)0xa0; }   /* a byte-level BPE mark */
        if (f == UTF8_KEPT && i == 5) { tok[0] = (char)0xff; len = len ? len : 1; }
        if (f == UTF8_SKIPPED && i == 20000) { tok[len] = (char)0xc3; len++; }   /* a cut two-byte character */
        if (f == UTF8_EDGE && bytes > 65536 && bytes < 65536 + 16) { tok[0] = (char)0xe2; tok[1] = (char)0x82; len = 2; }
        if (f == LENGTH_PAST_END && i == 25000) {
            put_count(b, 1u << 30);
            return;
        }
        if (i == 12345) {
            big[50000] = f == UTF8_LONG ? (char)0x80 : 'a';
            put_bytes_str(b, big, sizeof big);
            continue;
        }
        put_bytes_str(b, tok, len);
        bytes += len + 1;
    }
    if (f == CUT_STRING) b->bytes.n -= 3;
    put_str(b, "general.name");
    put_num(b, GK_V_STR, 4);
    put_str(b, "preview test");
}

START_TEST(built_files_same_either_way) {
    static const char *names[] = { "none", "bad bool", "utf8 kept", "utf8 skipped", "utf8 edge", "utf8 long",
                                   "cut string", "length past end" };
    for (int version = 1; version <= 3; version++) {
        for (int be = 0; be < 2; be++) {
            for (int f = NONE; f < N_FAULTS; f++) {
                dbuf b;
                build(&b, version, be, (enum fault)f);
                char label[96];
                snprintf(label, sizeof label, "v%d %s, %s", version, be ? "big-endian" : "little-endian", names[f]);
                gk_status st = same_either_way(b.bytes.d, b.bytes.n, GK_OPEN_DEFAULT, label);
                bool fails = f == BAD_BOOL || f == CUT_STRING || f == LENGTH_PAST_END;
                ck_assert_msg((st != GK_OK) == fails, "%s: %s", label, gk_status_name(st));
                if (st == GK_OK) {
                    gk_file *p = NULL;
                    gk_error err;
                    ck_assert_int_eq(gk_open_memory(b.bytes.d, b.bytes.n, GK_OPEN_PREVIEW, &p, &err), GK_OK);
                    bool utf8 = f == NONE;
                    ck_assert_msg(gk_file_strings_utf8(p) == utf8, "%s: the UTF-8 fault went unseen", label);
                    gk_close(p);
                }
                free(b.bytes.d);
            }
        }
    }
}
END_TEST

START_TEST(preview_is_not_written) {
    dbuf b;
    build(&b, 3, false, NONE);
    gk_file *p = NULL;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(b.bytes.d, b.bytes.n, GK_OPEN_PREVIEW, &p, &err), GK_OK);
    uint8_t *hdr = NULL;
    size_t len = 0;
    ck_assert_int_eq(gk_header_serialize(gk_file_model(p), &hdr, &len, &err), GK_E_ARG);
    ck_assert_ptr_null(hdr);
    ck_assert_msg(strstr(err.message, "preview") != NULL, "message: %s", err.message);
    gk_model *copy = gk_model_clone(gk_file_model(p));
    ck_assert_ptr_nonnull(copy);
    const gk_kv *tokens = gk_kv_at(copy, gk_kv_count(copy) - 2);
    ck_assert_str_eq(tokens->key.ptr, "tokenizer.ggml.tokens");
    ck_assert_uint_eq(tokens->value.arr.n, 30000);
    ck_assert_uint_eq(tokens->value.arr.n_unread, 30000 - GK_PREVIEW_ELEMS);
    ck_assert_int_eq(gk_header_serialize(copy, &hdr, &len, &err), GK_E_ARG);
    gk_model_free(copy);
    gk_close(p);
    /* the same file opened in full is written */
    ck_assert_int_eq(gk_open_memory(b.bytes.d, b.bytes.n, GK_OPEN_DEFAULT, &p, &err), GK_OK);
    ck_assert_int_eq(gk_header_serialize(gk_file_model(p), &hdr, &len, &err), GK_OK);
    ck_assert(len >= b.bytes.n && memcmp(hdr, b.bytes.d, b.bytes.n) == 0);
    free(hdr);
    gk_close(p);
    free(b.bytes.d);
}
END_TEST

static Suite *preview_suite(void) {
    Suite *s = suite_create("preview");
    TCase *t = tcase_create("preview");
    tcase_add_test(t, fixtures_same_either_way);
    tcase_add_test(t, golden_same_either_way);
    tcase_add_test(t, built_files_same_either_way);
    tcase_add_test(t, preview_is_not_written);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return run_suite(preview_suite()); }
