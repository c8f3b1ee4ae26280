/*
 * check_ring.c - the slot ring that streams remote bytes to the reader
 * (io/ring.h): every byte arrives once, in order, in full slots but the last,
 * whatever the sizes the producer hands over; a failed stream publishes only
 * its full slots; a stop wakes a waiting producer and ends a waiting consumer;
 * buffers traded in are kept or freed by size; a ring is reused after a reset.
 * Threaded: scripts/test runs it under ThreadSanitizer too.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "io/ring.h"

/* The byte at file offset i of every stream here. */
static uint8_t byte_at(uint64_t i) {
    return (uint8_t)((i * 2654435761u) >> 13);
}

typedef struct producer {
    gk_ring *r;
    uint64_t start, total;     /* the stream: bytes [start, start + total) */
    unsigned seed;
    bool ok;                   /* finish as successful */
    uint64_t put;              /* bytes handed over before the end or a stop */
    bool refused;              /* a put returned false */
} producer;

/* Hands the stream over in chunks of random sizes (0 to a few slots). */
static void *produce(void *arg) {
    producer *p = arg;
    uint8_t *chunk = malloc(40000);
    unsigned s = p->seed;
    while (p->put < p->total) {
        s = s * 1103515245u + 12345u;
        size_t n = (s >> 8) % 40000;
        if (n > p->total - p->put) n = (size_t)(p->total - p->put);
        for (size_t i = 0; i < n; i++) chunk[i] = byte_at(p->start + p->put + i);
        if (!gk_ring_put(p->r, chunk, n)) {
            p->refused = true;
            break;
        }
        p->put += n;
    }
    free(chunk);
    gk_ring_finish(p->r, p->ok && !p->refused);
    return NULL;
}

/* Takes every slot, checking order, sizes and bytes; returns the bytes seen. */
static uint64_t consume_all(gk_ring *r, uint64_t start, size_t slot_bytes, uint8_t **buf, size_t *cap) {
    uint64_t next = start, off;
    size_t len;
    bool short_seen = false;
    while (gk_ring_take(r, buf, cap, &off, &len)) {
        ck_assert_msg(!short_seen, "a slot after a short one");
        ck_assert_uint_eq(off, next);
        ck_assert_uint_gt(len, 0);
        ck_assert_uint_le(len, slot_bytes);
        ck_assert_uint_ge(*cap, len);
        if (len < slot_bytes) short_seen = true;
        for (size_t i = 0; i < len; i++)
            if ((*buf)[i] != byte_at(off + i)) ck_abort_msg("byte %llu differs", (unsigned long long)(off + i));
        next += len;
    }
    return next - start;
}

START_TEST(test_every_byte_in_order) {
    static const size_t slot_sizes[] = { 4096, 65536, 12345 };
    static const size_t slot_counts[] = { 1, 2, 4 };
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++) {
            gk_ring *r = gk_ring_new(slot_counts[b], slot_sizes[a]);
            ck_assert_ptr_nonnull(r);
            uint8_t *buf = NULL;
            size_t cap = 0;
            /* a whole number of slots, a ragged end, one byte, nothing */
            uint64_t totals[] = { slot_sizes[a] * 37, 1000003, 1, 0 };
            for (size_t t = 0; t < 4; t++) {
                uint64_t start = 7777 * t;
                gk_ring_reset(r, start);
                producer p = { .r = r, .start = start, .total = totals[t], .seed = (unsigned)(a * 10 + b + t),
                               .ok = true };
                pthread_t th;
                ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
                uint64_t seen = consume_all(r, start, slot_sizes[a], &buf, &cap);
                pthread_join(th, NULL);
                ck_assert(!p.refused);
                ck_assert_uint_eq(seen, totals[t]);
            }
            free(buf);
            gk_ring_free(r);
        }
}
END_TEST

START_TEST(test_failed_stream_keeps_full_slots_only) {
    gk_ring *r = gk_ring_new(64, 1000);
    gk_ring_reset(r, 0);
    producer p = { .r = r, .total = 5500, .seed = 3, .ok = false };
    produce(&p);   /* 64 slots: room for all of it without a consumer */
    uint8_t *buf = NULL;
    size_t cap = 0;
    ck_assert_uint_eq(consume_all(r, 0, 1000, &buf, &cap), 5000);
    free(buf);
    gk_ring_free(r);
}
END_TEST

/* A producer waiting for room is woken by a stop; its put says so. */
START_TEST(test_stop_wakes_the_producer) {
    gk_ring *r = gk_ring_new(2, 4096);
    gk_ring_reset(r, 0);
    producer p = { .r = r, .total = (uint64_t)1 << 30, .seed = 5, .ok = true };
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, produce, &p), 0);
    uint8_t *buf = NULL;
    size_t cap = 0;
    uint64_t off;
    size_t len;
    for (int i = 0; i < 3; i++) {
        ck_assert(gk_ring_take(r, &buf, &cap, &off, &len));
        ck_assert_uint_eq(off, (uint64_t)i * 4096);
    }
    ck_assert(!gk_ring_stopping(r));
    gk_ring_stop(r);
    ck_assert(gk_ring_stopping(r));
    pthread_join(th, NULL);   /* a producer left waiting would hang here */
    ck_assert(p.refused);
    ck_assert_uint_lt(p.put, (uint64_t)1 << 30);
    ck_assert(!gk_ring_take(r, &buf, &cap, &off, &len));
    free(buf);
    gk_ring_free(r);
}
END_TEST

/* A consumer waiting for a slot is woken by the end of the stream. */
static void *finish_later(void *arg) {
    gk_ring *r = arg;
    static const uint8_t none[1];
    gk_ring_put(r, none, 0);
    gk_ring_finish(r, true);
    return NULL;
}

START_TEST(test_end_wakes_the_consumer) {
    gk_ring *r = gk_ring_new(2, 4096);
    gk_ring_reset(r, 0);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, finish_later, r), 0);
    uint8_t *buf = NULL;
    size_t cap = 0;
    uint64_t off;
    size_t len;
    ck_assert(!gk_ring_take(r, &buf, &cap, &off, &len));
    pthread_join(th, NULL);
    gk_ring_free(r);
}
END_TEST

/* Buffers traded in: a small one is regrown by the producer, a large one
 * freed (ASan sees a leak or a double free otherwise). */
START_TEST(test_traded_buffers) {
    gk_ring *r = gk_ring_new(1, 1000);
    size_t caps[] = { 10, 5000, 0 };
    for (size_t k = 0; k < 3; k++) {
        gk_ring_reset(r, 0);
        producer p = { .r = r, .total = 1000, .seed = 9, .ok = true };
        produce(&p);
        uint8_t *buf = caps[k] ? malloc(caps[k]) : NULL;
        size_t cap = caps[k];
        uint64_t off;
        size_t len;
        ck_assert(gk_ring_take(r, &buf, &cap, &off, &len));
        ck_assert_uint_eq(len, 1000);
        ck_assert_uint_ge(cap, 1000);
        ck_assert_uint_eq(buf[999], byte_at(999));
        ck_assert(!gk_ring_take(r, &buf, &cap, &off, &len));
        free(buf);
    }
    gk_ring_free(r);
}
END_TEST

int main(void) {
    Suite *s = suite_create("ring");
    TCase *tc = tcase_create("ring");
    tcase_add_test(tc, test_every_byte_in_order);
    tcase_add_test(tc, test_failed_stream_keeps_full_slots_only);
    tcase_add_test(tc, test_stop_wakes_the_producer);
    tcase_add_test(tc, test_end_wakes_the_consumer);
    tcase_add_test(tc, test_traded_buffers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
