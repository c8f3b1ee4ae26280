/*
 * check_helpers.c - the small tools at the bottom of the library (lib/util):
 * little-endian loads and stores (byteorder.h) at odd addresses, the grow
 * helper (grow.h) doubling, keeping the array when it fails, refusing sizes
 * that overflow; the hash map (hashmap.h) with many items under one hash and
 * through several growths, FNV-1a against its published test values, the
 * string set built on them, and the character tests (chars.h).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "util/byteorder.h"
#include "util/chars.h"
#include "util/grow.h"
#include "util/hashmap.h"
#include "util/strset.h"

START_TEST(test_byteorder) {
    uint8_t buf[16] = { 0 };
    const uint8_t want[8] = { 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 };
    gk_store_le64(buf + 3, 0x0102030405060708ULL);   /* an odd address */
    ck_assert_mem_eq(buf + 3, want, 8);
    ck_assert_uint_eq(gk_load_le64(buf + 3), 0x0102030405060708ULL);
    ck_assert_uint_eq(gk_load_le32(buf + 3), 0x05060708u);
    ck_assert_uint_eq(gk_load_le24(buf + 3), 0x060708u);
    ck_assert_uint_eq(gk_load_le16(buf + 3), 0x0708u);
    gk_store_le32(buf + 1, 0xa1b2c3d4u);
    ck_assert_uint_eq(buf[1], 0xd4);
    ck_assert_uint_eq(buf[4], 0xa1);
    gk_store_le16(buf, 0xbeef);
    ck_assert_uint_eq(buf[0], 0xef);
    ck_assert_uint_eq(buf[1], 0xbe);
    ck_assert_uint_eq(gk_bswap32(0x11223344u), 0x44332211u);
    uint16_t run[3] = { 0x0102, 0x0304, 0x0506 };
    gk_swap16_run(run, 3);
    ck_assert_uint_eq(run[0], 0x0201);
    ck_assert_uint_eq(run[2], 0x0605);
}
END_TEST

START_TEST(test_grow) {
    int *a = NULL;
    size_t cap = 0;
    ck_assert(GK_GROW(a, cap, 1, 16));
    ck_assert_uint_eq(cap, 16);
    for (int i = 0; i < 16; i++) a[i] = i;
    ck_assert(GK_GROW(a, cap, 16, 16));   /* fits: nothing changes */
    ck_assert_uint_eq(cap, 16);
    ck_assert(GK_GROW(a, cap, 17, 16));
    ck_assert_uint_eq(cap, 32);
    ck_assert(GK_GROW(a, cap, 100, 16));   /* doubles until it fits */
    ck_assert_uint_eq(cap, 128);
    for (int i = 0; i < 16; i++) ck_assert_int_eq(a[i], i);   /* kept */
    int *before = a;
    ck_assert(!GK_GROW(a, cap, SIZE_MAX / 2, 16));   /* bytes overflow: refused, array kept */
    ck_assert(!GK_GROW(a, cap, SIZE_MAX, 16));       /* capacity overflow */
    ck_assert_ptr_eq(a, before);
    ck_assert_uint_eq(cap, 128);
    free(a);
}
END_TEST

START_TEST(test_fnv1a) {
    /* The FNV-1a 64-bit values of "" and "a" and "foobar" (the published ones). */
    ck_assert_uint_eq(gk_fnv1a(GK_FNV1A_BASIS, "", 0), 0xcbf29ce484222325ULL);
    ck_assert_uint_eq(gk_fnv1a(GK_FNV1A_BASIS, "a", 1), 0xaf63dc4c8601ec8cULL);
    ck_assert_uint_eq(gk_fnv1a(GK_FNV1A_BASIS, "foobar", 6), 0x85944171f73967e8ULL);
    /* Continuing from an earlier result is hashing the concatenation. */
    ck_assert_uint_eq(gk_fnv1a(gk_fnv1a(GK_FNV1A_BASIS, "foo", 3), "bar", 3), 0x85944171f73967e8ULL);
}
END_TEST

/* Every position under hash h, in the order the walk gives them. */
static size_t positions(const gk_hashmap *m, uint64_t h, size_t *out, size_t max) {
    size_t cur = 0, at, n = 0;
    while (gk_hashmap_next(m, h, &cur, &at) && n < max) out[n++] = at;
    return n;
}

START_TEST(test_hashmap) {
    gk_hashmap m = { 0 };
    size_t got[8];
    ck_assert_uint_eq(positions(&m, 42, got, 8), 0);   /* empty */
    /* 5000 positions over 1000 hashes (5 each, some in neighbouring slots),
     * through several growths: each hash yields exactly its own (the walk's
     * order is the table's, which growth may change). */
    for (size_t i = 0; i < 5000; i++) ck_assert(gk_hashmap_add(&m, (uint64_t)(i % 1000) * 7, i));
    ck_assert_uint_eq(m.count, 5000);
    ck_assert_uint_ge(m.cap, 10000);
    for (uint64_t k = 0; k < 1000; k++) {
        size_t n = positions(&m, k * 7, got, 8);
        ck_assert_uint_eq(n, 5);
        bool seen[5] = { false };
        for (size_t j = 0; j < n; j++) {
            ck_assert_uint_eq(got[j] % 1000, k);
            ck_assert(!seen[got[j] / 1000]);
            seen[got[j] / 1000] = true;
        }
    }
    ck_assert_uint_eq(positions(&m, 3, got, 8), 0);   /* a hash never added */
    gk_hashmap_free(&m);
    ck_assert_ptr_null(m.slots);
    ck_assert_uint_eq(m.cap, 0);
}
END_TEST

START_TEST(test_strset) {
    gk_strset s = { 0 };
    char names[300][16];
    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof names[i], "blk.%d.w", i);
        ck_assert_int_eq(gk_strset_insert(&s, names[i], strlen(names[i])), 1);
    }
    for (int i = 0; i < 300; i++) {
        char again[16];
        snprintf(again, sizeof again, "blk.%d.w", i);   /* equal bytes elsewhere */
        ck_assert_int_eq(gk_strset_insert(&s, again, strlen(again)), 0);
    }
    ck_assert_int_eq(gk_strset_insert(&s, "blk.1", 5), 1);   /* a prefix is another string */
    ck_assert_int_eq(gk_strset_insert(&s, "", 0), 1);
    ck_assert_int_eq(gk_strset_insert(&s, "", 0), 0);
    ck_assert_uint_eq(s.count, 302);
    gk_strset_free(&s);
}
END_TEST

START_TEST(test_chars) {
    ck_assert_int_eq(gk_hex_digit('0'), 0);
    ck_assert_int_eq(gk_hex_digit('9'), 9);
    ck_assert_int_eq(gk_hex_digit('a'), 10);
    ck_assert_int_eq(gk_hex_digit('F'), 15);
    ck_assert_int_eq(gk_hex_digit('g'), -1);
    ck_assert_int_eq(gk_hex_digit('/'), -1);
    ck_assert(gk_has_suffix("m.gguf.zst", ".zst"));
    ck_assert(gk_has_suffix("m.gguf", "m.gguf"));
    ck_assert(gk_has_suffix("m", ""));
    ck_assert(!gk_has_suffix("zst", ".zst"));
    ck_assert(!gk_has_suffix("m.gguf", ".zst"));
}
END_TEST

int main(void) {
    Suite *su = suite_create("helpers");
    TCase *tc = tcase_create("helpers");
    tcase_add_test(tc, test_byteorder);
    tcase_add_test(tc, test_grow);
    tcase_add_test(tc, test_fnv1a);
    tcase_add_test(tc, test_hashmap);
    tcase_add_test(tc, test_strset);
    tcase_add_test(tc, test_chars);
    suite_add_tcase(su, tc);
    return run_suite(su);
}
