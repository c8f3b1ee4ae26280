/*
 * check_hash.c - the digests (lib/util/digest.c) against known vectors, the
 * chunked multi-consumer scanner (lib/pipeline/scan.c) at chunk and tensor boundaries,
 * per-tensor and whole-model hashes against one-shot digests, manifests and
 * their check verdicts, and the type table's data-check kernels.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "io/digest.h"
#include "pipeline/scan.h"

static void hex_of(gk_hash_kind k, const void *p, size_t n, char *out) {
    gk_hash_value v;
    gk_error err;
    ck_assert_int_eq(gk_digest_once(k, p, n, &v, &err), GK_OK);
    gk_hash_hex(k, &v, out);
}

START_TEST(test_known_vectors) {
    char hex[GK_HASH_HEX_MAX];
    hex_of(GK_HASH_SHA256, "abc", 3, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hex_of(GK_HASH_SHA1, "abc", 3, hex);
    ck_assert_str_eq(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    hex_of(GK_HASH_XXH64, "", 0, hex);
    ck_assert_str_eq(hex, "ef46db3751d8e999");
    hex_of(GK_HASH_XXH64, "abc", 3, hex);
    ck_assert_str_eq(hex, "44bc2cf5ad770999");
    /* UUIDv5: version 5, variant 10xx, dashes 8-4-4-4-12 */
    hex_of(GK_HASH_UUID, "abc", 3, hex);
    ck_assert_uint_eq(strlen(hex), 36);
    ck_assert(hex[8] == '-' && hex[13] == '-' && hex[18] == '-' && hex[23] == '-');
    ck_assert(hex[14] == '5');
    ck_assert(strchr("89ab", hex[19]) != NULL);
    /* incremental equals one shot, after a reset too */
    gk_digest d;
    gk_error err;
    ck_assert_int_eq(gk_digest_init(&d, GK_HASH_SHA256, &err), GK_OK);
    gk_digest_update(&d, "xyz", 3);
    gk_digest_reset(&d);
    gk_digest_update(&d, "a", 1);
    gk_digest_update(&d, "bc", 2);
    gk_hash_value v;
    gk_digest_final(&d, &v);
    gk_digest_free(&d);
    gk_hash_hex(GK_HASH_SHA256, &v, hex);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq(gk_hash_kind_lookup("sha1"), GK_HASH_SHA1);
    ck_assert_int_eq(gk_hash_kind_lookup("md5"), -1);
}
END_TEST

/* A model of F32 tensors of the given element counts, serialized with data. */
static uint8_t *make_model(const uint64_t *sizes, size_t n, size_t *len, bool big) {
    gk_model *m = gk_model_new();
    gk_error err;
    char name[32];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "t%zu.weight", i);
        ck_assert_int_eq(gk_tensor_add(m, name, GK_TYPE_F32, 1, &sizes[i], &err), GK_OK);
    }
    gk_model_set_big_endian(m, big);
    uint64_t data = gk_model_layout(m);
    uint8_t *hdr;
    size_t hlen;
    ck_assert_int_eq(gk_header_serialize(m, &hdr, &hlen, &err), GK_OK);
    uint8_t *buf = calloc(1, hlen + data + 64);
    memcpy(buf, hdr, hlen);
    for (size_t t = 0; t < n; t++) {
        const gk_tensor *ti = gk_tensor_at(m, t);
        for (size_t i = 0; i < ti->nbytes / 4; i++) {
            float v = (float)(i % 97) - 40.5f + (float)t;
            uint32_t u;
            memcpy(&u, &v, 4);
            if (big) u = __builtin_bswap32(u);
            memcpy(buf + hlen + ti->offset + 4 * i, &u, 4);
        }
    }
    *len = hlen + data;
    free(hdr);
    gk_model_free(m);
    return buf;
}

/* A consumer that rebuilds every tensor's bytes from its chunks. */
typedef struct collect {
    uint8_t *bytes[8];
    uint64_t len[8];
    size_t n_chunks, last_item;
    bool order_ok;
    int fail_at;               /* return an error at this chunk (-1: never) */
} collect;

static gk_status collect_fn(void *ctx, const gk_scan_chunk *c, gk_error *err) {
    collect *cl = ctx;
    if ((int)cl->n_chunks == cl->fail_at) return gk_error_set(err, GK_E_CORRUPT, 7, "consumer says no");
    if (c->item < cl->last_item || (c->first != (c->start == 0)) || c->start != cl->len[c->item]) cl->order_ok = false;
    cl->last_item = c->item;
    cl->bytes[c->item] = realloc(cl->bytes[c->item], cl->len[c->item] + c->len + 1);
    memcpy(cl->bytes[c->item] + cl->len[c->item], c->data, c->len);
    cl->len[c->item] += c->len;
    cl->n_chunks++;
    return GK_OK;
}

static bool stop_progress(void *ctx, uint64_t done, uint64_t total) {
    (void)total;
    return done < *(uint64_t *)ctx;
}

START_TEST(test_scan_chunks) {
    /* 1 element, exactly one chunk (1024 floats), one more than a chunk, three and a bit */
    const uint64_t sizes[4] = { 1, 1024, 1025, 3333 };
    size_t len;
    uint8_t *buf = make_model(sizes, 4, &len, false);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(buf, len, 0, &f, &err), GK_OK);
    gk_scan_item items[4];
    for (size_t i = 0; i < 4; i++) items[i] = (gk_scan_item){ f, i };
    collect a = { .order_ok = true, .fail_at = -1 }, b = { .order_ok = true, .fail_at = -1 };
    gk_scan_fn fns[2] = { collect_fn, collect_fn };
    void *ctxs[2] = { &a, &b };
    gk_scan_opts so = { .chunk_bytes = 4096 };
    ck_assert_int_eq(gk_scan_run(items, 4, fns, ctxs, 2, &so, &err), GK_OK);
    ck_assert(a.order_ok && b.order_ok);
    ck_assert_uint_eq(a.n_chunks, 1 + 1 + 2 + 4);
    ck_assert_uint_eq(b.n_chunks, a.n_chunks);
    for (size_t i = 0; i < 4; i++) {
        const gk_tensor *t = gk_tensor_at(gk_file_model(f), i);
        ck_assert_uint_eq(a.len[i], t->nbytes);
        ck_assert(memcmp(a.bytes[i], buf + gk_file_data_offset(f) + t->offset, t->nbytes) == 0);
        ck_assert(memcmp(b.bytes[i], a.bytes[i], t->nbytes) == 0);
        free(a.bytes[i]);
        free(b.bytes[i]);
    }
    /* a consumer's error stops the scan and is the scan's error */
    collect c = { .order_ok = true, .fail_at = 3 }, d = { .order_ok = true, .fail_at = -1 };
    void *ctxs2[2] = { &c, &d };
    ck_assert_int_eq(gk_scan_run(items, 4, fns, ctxs2, 2, &so, &err), GK_E_CORRUPT);
    ck_assert_int_eq(err.offset, 7);
    for (size_t i = 0; i < 4; i++) { free(c.bytes[i]); free(d.bytes[i]); }
    /* progress returning false interrupts it */
    uint64_t limit = 5000;
    collect e = { .order_ok = true, .fail_at = -1 };
    void *ctxs3[1] = { &e };
    so.progress = stop_progress;
    so.progress_ctx = &limit;
    ck_assert_int_eq(gk_scan_run(items, 4, fns, ctxs3, 1, &so, &err), GK_E_INTERRUPTED);
    for (size_t i = 0; i < 4; i++) free(e.bytes[i]);
    gk_close(f);
    free(buf);
}
END_TEST

START_TEST(test_hash_result) {
    const uint64_t sizes[3] = { 3000, 7, 1500000 };   /* the last spans several 1 MiB chunks */
    size_t len, len_be;
    uint8_t *buf = make_model(sizes, 3, &len, false);
    uint8_t *be = make_model(sizes, 3, &len_be, true);
    gk_file *f, *fb;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(buf, len, 0, &f, &err), GK_OK);
    ck_assert_int_eq(gk_open_memory(be, len_be, 0, &fb, &err), GK_OK);
    unsigned all = GK_HASH_BIT(GK_HASH_KINDS) - 1;
    gk_hash_opts o = { GK_OPTS_INIT(gk_hash_opts), .kinds = all };
    gk_hash_result r, rb, rc;
    ck_assert_int_eq(gk_hash_file(f, &o, &r, &err), GK_OK);
    ck_assert_uint_eq(r.n_tensors, 3);
    /* per tensor: the one-shot digest of its bytes; the model: of their concatenation */
    uint8_t *cat = malloc(4 * (3000 + 7 + 1500000));
    size_t at = 0;
    for (size_t i = 0; i < 3; i++) {
        const gk_tensor *t = gk_tensor_at(gk_file_model(f), i);
        const uint8_t *p = buf + gk_file_data_offset(f) + t->offset;
        for (int k = 0; k < GK_HASH_UUID; k++) {
            char want[GK_HASH_HEX_MAX], got[GK_HASH_HEX_MAX];
            hex_of(k, p, t->nbytes, want);
            gk_hash_hex(k, &r.tensors[i][k], got);
            ck_assert_str_eq(got, want);
        }
        memcpy(cat + at, p, t->nbytes);
        at += t->nbytes;
    }
    for (int k = 0; k < GK_HASH_KINDS; k++) {
        char want[GK_HASH_HEX_MAX], got[GK_HASH_HEX_MAX];
        hex_of(k, cat, at, want);
        gk_hash_hex(k, &r.model[k], got);
        ck_assert_str_eq(got, want);
    }
    /* big-endian: other bytes as stored, the same with canonical */
    ck_assert_int_eq(gk_hash_file(fb, &o, &rb, &err), GK_OK);
    ck_assert(memcmp(rb.model, r.model, sizeof r.model) != 0);
    gk_hash_result_free(&rb);
    o.canonical = true;
    ck_assert_int_eq(gk_hash_file(fb, &o, &rb, &err), GK_OK);
    ck_assert(memcmp(rb.model, r.model, sizeof r.model) == 0);
    ck_assert(memcmp(rb.tensors, r.tensors, 3 * sizeof *r.tensors) == 0);
    /* lines in gguf-hash's order; no_tensors leaves the model lines */
    gk_hash_line *lines;
    size_t n;
    ck_assert_int_eq(gk_hash_lines(&r, false, &lines, &n, &err), GK_OK);
    ck_assert_uint_eq(n, 3 * 3 + 4);
    ck_assert(lines[0].kind == GK_HASH_XXH64 && lines[0].tensor == 0 && lines[2].kind == GK_HASH_SHA256);
    ck_assert(lines[9].tensor == -1 && lines[12].kind == GK_HASH_UUID);
    free(lines);
    o = (gk_hash_opts){ GK_OPTS_INIT(gk_hash_opts), .no_tensors = true };
    ck_assert_int_eq(gk_hash_file(f, &o, &rc, &err), GK_OK);
    ck_assert_ptr_null(rc.tensors);
    ck_assert_int_eq(gk_hash_lines(&rc, true, &lines, &n, &err), GK_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(memcmp(&rc.model[GK_HASH_XXH64], &r.model[GK_HASH_XXH64], sizeof r.model[0]) == 0);
    free(lines);
    gk_hash_result_free(&rc);
    gk_hash_result_free(&rb);
    gk_hash_result_free(&r);
    free(cat);
    gk_close(f);
    gk_close(fb);
    free(buf);
    free(be);
}
END_TEST

static char *write_temp(const char *text) {
    static char path[64];
    strcpy(path, "/tmp/check_hash_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

START_TEST(test_manifest_check) {
    const uint64_t sizes[2] = { 64, 32 };
    size_t len;
    uint8_t *buf = make_model(sizes, 2, &len, false);
    gk_file *f;
    gk_error err;
    ck_assert_int_eq(gk_open_memory(buf, len, 0, &f, &err), GK_OK);
    gk_hash_opts o = { GK_OPTS_INIT(gk_hash_opts), .kinds = GK_HASH_BIT(GK_HASH_XXH64) };
    gk_hash_result r;
    ck_assert_int_eq(gk_hash_file(f, &o, &r, &err), GK_OK);
    char t0[GK_HASH_HEX_MAX], t1[GK_HASH_HEX_MAX], mod[GK_HASH_HEX_MAX], text[1024];
    gk_hash_hex(GK_HASH_XXH64, &r.tensors[0][0], t0);
    gk_hash_hex(GK_HASH_XXH64, &r.tensors[1][0], t1);
    gk_hash_hex(GK_HASH_XXH64, &r.model[0], mod);
    /* odd lines are skipped; the first line of a kind and name counts */
    snprintf(text, sizeof text,
             "manifest  whatever  sha256\n\n  garbage line here\nxxh64  %s  m.gguf:t0.weight\n"
             "xxh64  0000000000000000  m.gguf:t0.weight\nxxh64 0000000000000000 m.gguf:t1.weight\n"
             "xxh64\t%s\tm.gguf\nsha1\n", t0, mod);
    gk_manifest *m;
    ck_assert_int_eq(gk_manifest_load(write_temp(text), &m, &err), GK_OK);
    ck_assert_uint_eq(gk_manifest_kinds(m), GK_HASH_BIT(GK_HASH_XXH64) | GK_HASH_BIT(GK_HASH_SHA1));
    ck_assert_int_eq(gk_manifest_strongest(m), GK_HASH_SHA1);
    gk_hash_line *lines;
    size_t n;
    gk_check_summary s;
    ck_assert_int_eq(gk_hash_lines(&r, false, &lines, &n, &err), GK_OK);
    ck_assert_int_eq(gk_hash_check(m, "m.gguf", &r, lines, n, &s, &err), GK_OK);
    ck_assert_int_eq(lines[0].verdict, GK_VERDICT_OK);
    ck_assert_int_eq(lines[1].verdict, GK_VERDICT_MISMATCH);
    ck_assert_int_eq(lines[2].verdict, GK_VERDICT_OK);
    ck_assert(!s.passed && s.mismatch == 1 && s.ok == 2 && s.n_absent == 0);
    gk_check_summary_free(&s);
    /* another label finds nothing */
    ck_assert_int_eq(gk_hash_check(m, "other.gguf", &r, lines, n, &s, &err), GK_OK);
    ck_assert(s.nothing_found && !s.passed);
    gk_check_summary_free(&s);
    gk_manifest_free(m);
    /* all equal, plus a tensor the model lacks */
    snprintf(text, sizeof text, "xxh64  %s  m.gguf:t0.weight\nxxh64  %s  m.gguf:t1.weight\nxxh64  %s  m.gguf\n",
             t0, t1, mod);
    ck_assert_int_eq(gk_manifest_load(write_temp(text), &m, &err), GK_OK);
    ck_assert_int_eq(gk_hash_check(m, "m.gguf", &r, lines, n, &s, &err), GK_OK);
    ck_assert(s.passed);
    gk_check_summary_free(&s);
    gk_manifest_free(m);
    strcat(text, "xxh64  1234567812345678  m.gguf:t9.weight\nsha1  12  m.gguf:t9.weight\n");
    ck_assert_int_eq(gk_manifest_load(write_temp(text), &m, &err), GK_OK);
    ck_assert_int_eq(gk_hash_check(m, "m.gguf", &r, lines, n, &s, &err), GK_OK);
    ck_assert(!s.passed);
    ck_assert_uint_eq(s.n_absent, 1);
    ck_assert_str_eq(s.absent[0], "m.gguf:t9.weight");
    gk_check_summary_free(&s);
    gk_manifest_free(m);
    /* no known kind; no file */
    ck_assert_int_eq(gk_manifest_load(write_temp("md5 abc x\n"), &m, &err), GK_E_NOT_FOUND);
    ck_assert_int_eq(gk_manifest_load("/nonexistent/manifest", &m, &err), GK_E_IO);
    free(lines);
    gk_hash_result_free(&r);
    gk_close(f);
    free(buf);
}
END_TEST

typedef struct faults {
    int n;
    gk_block_fault first;
} faults;

static bool count_fault(void *ctx, const gk_block_fault *f) {
    faults *fs = ctx;
    if (fs->n++ == 0) fs->first = *f;
    return true;
}

START_TEST(test_type_checks) {
    /* F16 NaN at 3, F32 Inf at 5, BF16 fine */
    uint16_t h[8] = { 0x3c00, 0x3c00, 0x3c00, 0x7e00, 0x3c00, 0xfc00, 0, 0 };
    faults fs = { 0 };
    ck_assert(gk_type_get(GK_TYPE_F16)->check(h, 8, count_fault, &fs));
    ck_assert_int_eq(fs.n, 2);
    ck_assert_int_eq(fs.first.block, 3);
    ck_assert(isnan(fs.first.value));
    float v[6] = { 1, 2, 3, 4, 5, INFINITY };
    fs = (faults){ 0 };
    gk_type_get(GK_TYPE_F32)->check(v, 6, count_fault, &fs);
    ck_assert(fs.n == 1 && fs.first.block == 5 && isinf(fs.first.value));
    uint16_t bf[2] = { 0x3f80, 0x4000 };
    fs = (faults){ 0 };
    gk_type_get(GK_TYPE_BF16)->check(bf, 2, count_fault, &fs);
    ck_assert_int_eq(fs.n, 0);
    /* Q4_K: dmin (byte 2) of block 1 is Inf */
    uint8_t q[2 * 144] = { 0 };
    q[144 + 2] = 0x00, q[144 + 3] = 0x7c;
    fs = (faults){ 0 };
    gk_type_get(GK_TYPE_Q4_K)->check(q, 2, count_fault, &fs);
    ck_assert(fs.n == 1 && fs.first.block == 1 && fs.first.byte == 2);
    ck_assert_str_eq(fs.first.field, "dmin");
    /* every quantized type with kernels has a check; integers none */
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *t = gk_type_get(id);
        if (t == NULL || t->dequantize == NULL) continue;
        bool integer = id == GK_TYPE_I8 || id == GK_TYPE_I16 || id == GK_TYPE_I32 || id == GK_TYPE_I64;
        ck_assert_msg((t->check == NULL) == integer, "%s", t->name);
        if (t->check == NULL) continue;
        /* an all-zero block is valid for every type (Q8_K: bsums 0 are the sums of zero quants) */
        uint8_t *z = calloc(4, t->block_bytes);
        fs = (faults){ 0 };
        t->check(z, 4, count_fault, &fs);
        ck_assert_msg(fs.n == 0, "%s: zero blocks reported", t->name);
        free(z);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("hash");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_known_vectors);
    tcase_add_test(tc, test_scan_chunks);
    tcase_add_test(tc, test_hash_result);
    tcase_add_test(tc, test_manifest_check);
    tcase_add_test(tc, test_type_checks);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
