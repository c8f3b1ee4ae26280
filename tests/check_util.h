/*
 * check_util.h - small helpers shared by the Check suites.
 */
#ifndef GK_TESTS_CHECK_UTIL_H
#define GK_TESTS_CHECK_UTIL_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Runs every test of su. @return : the process exit status (0 when all pass). */
static inline int run_suite(Suite *su) {
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
