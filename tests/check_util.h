/*
 * check_util.h - small helpers shared by the Check suites: a temporary folder
 * and paths in it, whole files read and written, the golden folder, growing
 * byte buffers, running a suite. Each suite is one translation unit, so the
 * static state here (tmpdir) is the suite's own.
 */
#ifndef GK_TESTS_CHECK_UTIL_H
#define GK_TESTS_CHECK_UTIL_H

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The suite's temporary folder, set by make_tmpdir (empty before, and after
 * remove_tmpdir). */
static char tmpdir[256] __attribute__((unused));

/* Makes tmpdir a new folder /tmp/NAME.XXXXXX. @return : false when mkdtemp
 * fails (errno says why); for use outside a test, e.g. in main. */
static inline bool try_make_tmpdir(const char *name) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/%s.XXXXXX", name);
    if (mkdtemp(tmpdir) != NULL) return true;
    tmpdir[0] = '\0';
    return false;
}

/* try_make_tmpdir inside a test: a failure fails the test. */
static inline void make_tmpdir(const char *name) {
    ck_assert_msg(try_make_tmpdir(name), "mkdtemp /tmp/%s.XXXXXX: %s", name, strerror(errno));
}

static inline int tmpdir_remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes tmpdir and everything in it. @return : 0, or -1 when something stayed. */
static inline int try_remove_tmpdir(void) {
    if (tmpdir[0] == '\0') return 0;
    int rc = nftw(tmpdir, tmpdir_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    tmpdir[0] = '\0';
    return rc == 0 ? 0 : -1;
}

/* try_remove_tmpdir inside a test: a failure fails the test. */
static inline void remove_tmpdir(void) {
    char was[sizeof tmpdir];
    memcpy(was, tmpdir, sizeof was);
    ck_assert_msg(try_remove_tmpdir() == 0, "cannot remove %s", was);
}

/* tmpdir/name, in one of 8 static buffers used in turn (so a few paths can be
 * held at once). */
static inline char *tmp_path(const char *name) {
    static char buf[8][512];
    static int at;
    char *p = buf[at++ % 8];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

/* Writes n bytes from data to path (created or replaced). */
static inline void write_file(const char *path, const void *data, size_t n) {
    FILE *fp = fopen(path, "wb");
    ck_assert_msg(fp != NULL, "%s: cannot create", path);
    ck_assert_uint_eq(fwrite(data, 1, n, fp), n);
    fclose(fp);
}

/* $GGUFKIT_GOLDEN when it is set and names a folder holding need (a path
 * relative to it; NULL: the folder alone), else NULL. */
static inline const char *golden_dir(const char *need) {
    const char *g = getenv("GGUFKIT_GOLDEN");
    struct stat st;
    if (g == NULL || g[0] == '\0' || stat(g, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    if (need != NULL) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", g, need);
        if (stat(p, &st) != 0) return NULL;
    }
    return g;
}

/* The whole file at path, malloc'ed (one spare byte); its size in *len. */
static inline uint8_t *read_whole_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    ck_assert_msg(fp != NULL, "%s: cannot open", path);
    fseek(fp, 0, SEEK_END);
    *len = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *b = malloc(*len + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, *len, fp), *len);
    fclose(fp);
    return b;
}

/* The repository's testdata folder: $GGUFKIT_TESTDATA (meson sets it), else
 * ./testdata, ../testdata or ../../testdata, the first holding bad/EXPECTED.tsv.
 * None found fails the test. */
static inline const char *testdata_dir(void) {
    static char testdata[2048];
    if (testdata[0]) return testdata;
    const char *candidates[] = { getenv("GGUFKIT_TESTDATA"), "testdata", "../testdata", "../../testdata" };
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char probe[2200];
        if (candidates[i] == NULL || candidates[i][0] == '\0') continue;
        snprintf(probe, sizeof probe, "%.2000s/bad/EXPECTED.tsv", candidates[i]);
        if (access(probe, R_OK) == 0) {
            snprintf(testdata, sizeof testdata, "%.2000s", candidates[i]);
            return testdata;
        }
    }
    ck_abort_msg("no fixtures: set GGUFKIT_TESTDATA to the repository's testdata folder "
                 "(run scripts/make-bad-fixtures to create them)");
    return NULL;
}

/* The whole file at path as a NUL-terminated string, malloc'ed; NULL when it
 * cannot be read (a failed allocation fails the test). */
static inline char *read_text_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A growing byte buffer (zeroed to start; free d when done). */
typedef struct test_bytes {
    uint8_t *d;
    size_t n, cap;
} test_bytes;

/* Appends n bytes from p, or n zeros when p is NULL. */
static inline void test_bytes_add(test_bytes *b, const void *p, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->d = realloc(b->d, b->cap);
        ck_assert_ptr_nonnull(b->d);
    }
    if (p) memcpy(b->d + b->n, p, n);
    else memset(b->d + b->n, 0, n);
    b->n += n;
}

/* Runs every test of su. @return : the process exit status (0 when all pass). */
static inline int run_suite(Suite *su) {
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
