/*
 * check_util.h - small helpers shared by the Check suites: whole files, growing
 * byte buffers, running a suite.
 */
#ifndef GK_TESTS_CHECK_UTIL_H
#define GK_TESTS_CHECK_UTIL_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
