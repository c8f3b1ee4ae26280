/*
 * check_source.c - unit tests of the byte sources behind compressed files and
 * archive members (lib/io/source.c) as the reader uses them:
 *
 *   - a zstd stream and a tar member cut at every length inside the tensor data
 *     open with the size their container records, but with GK_OPEN_MEASURE with
 *     their real length, so that the placement check fails (data-past-eof) and a
 *     warning says how short the container is; whole ones measure as recorded;
 *   - reading tensor data past the cut fails with an error naming the input
 *     (gk_error.file), whatever file the caller is writing;
 *   - the frame walk (gk_source_zstd_check_frames) finds every prefix of a
 *     multi-frame, multi-block stream cut short, and passes the whole one;
 *   - a stream whose window is larger than zstd's default limit (2^27) reads;
 *     GGUFKIT_ZSTD_WINDOW_LOG_MAX below its window refuses it, naming the variable.
 *
 * Inputs are built here: a GGUF with three F32 tensors (gk_write_model), its zstd
 * compression (libzstd) and a ustar archive of it (headers written by hand).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY   /* ZSTD_c_contentSizeFlag with a window log of 28 */
#include <zstd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "io/source.h"

/* A GGUF of three F32 tensors of n pseudo-random values each. */
static uint8_t *make_gguf(size_t n, size_t *len) {
    gk_error err;
    gk_model *m = gk_model_new();
    ck_assert_ptr_nonnull(m);
    for (int t = 0; t < 3; t++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", t);
        uint64_t ne[1] = { n };
        ck_assert_int_eq(gk_tensor_add(m, name, GK_TYPE_F32, 1, ne, &err), GK_OK);
    }
    gk_model_layout(m);
    uint8_t *header;
    size_t header_len;
    ck_assert_int_eq(gk_header_serialize(m, &header, &header_len, &err), GK_OK);
    *len = header_len + 3 * n * sizeof(float);
    uint8_t *b = malloc(*len);
    ck_assert_ptr_nonnull(b);
    memcpy(b, header, header_len);
    uint32_t x = 12345;
    for (size_t i = 0; i < 3 * n; i++) {
        x = x * 1103515245u + 12345u;
        float v = (float)(x >> 8) / (float)(1u << 24);
        memcpy(b + header_len + 4 * i, &v, 4);
    }
    free(header);
    gk_model_free(m);
    gk_file *src;
    ck_assert_int_eq(gk_open_memory(b, *len, GK_OPEN_DEFAULT, &src, &err), GK_OK);   /* it is valid */
    gk_close(src);
    return b;
}

/* zstd of p in frames of frame_bytes input each, blocks of at most 4 KiB (many of
 * them), each frame recording its size. */
static uint8_t *compress_frames(const uint8_t *p, size_t n, size_t frame_bytes, size_t *out_len) {
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ck_assert_ptr_nonnull(c);
    size_t cap = ZSTD_compressBound(n) + 64 * (n / frame_bytes + 1);
    uint8_t *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    *out_len = 0;
    for (size_t at = 0; at < n; at += frame_bytes) {
        size_t k = n - at < frame_bytes ? n - at : frame_bytes;
        ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(c, ZSTD_c_targetCBlockSize, 4096);
        ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
        size_t r = ZSTD_compress2(c, out + *out_len, cap - *out_len, p + at, k);
        ck_assert_msg(!ZSTD_isError(r), "%s", ZSTD_getErrorName(r));
        *out_len += r;
    }
    ZSTD_freeCCtx(c);
    return out;
}

/* A ustar archive holding p as member "m.gguf". */
static uint8_t *make_tar(const uint8_t *p, size_t n, size_t *out_len) {
    size_t padded = (n + 511) / 512 * 512;
    *out_len = 512 + padded + 1024;
    uint8_t *t = calloc(1, *out_len);
    ck_assert_ptr_nonnull(t);
    strcpy((char *)t, "m.gguf");
    strcpy((char *)t + 100, "0000644");
    strcpy((char *)t + 108, "0000000");
    strcpy((char *)t + 116, "0000000");
    snprintf((char *)t + 124, 12, "%011zo", n);
    strcpy((char *)t + 136, "00000000000");
    t[156] = '0';
    memcpy(t + 257, "ustar\0" "00", 8);
    memset(t + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++) sum += t[i];
    snprintf((char *)t + 148, 8, "%06o", sum);
    memcpy(t + 512, p, n);
    return t;
}

static void setup(void) { make_tmpdir("check_source"); }

static void teardown(void) { remove_tmpdir(); }

/* Opens path both ways: as recorded, and measured. cut: whether its data is
 * short; recorded: whether its container records the whole length (a tar entry
 * does; frames of a zstd file cut short, only those before the cut). */
static void check_measured(const char *path, uint64_t whole_len, bool cut, bool recorded) {
    gk_file *f = NULL;
    gk_error err;
    gk_status st = gk_open(path, GK_OPEN_DEFAULT, &f, &err);
    if (!recorded && st == GK_E_DATA_EOF) goto measured;   /* the frames before the cut say too little */
    ck_assert_msg(st == GK_OK, "%s: %s", path, err.message);
    if (recorded) ck_assert_uint_eq(gk_file_size(f), whole_len);   /* the container's record */
    if (cut) {
        /* reading the data past the cut names this input, not the caller's output */
        gk_model *m = gk_file_model(f);
        const gk_tensor *t = gk_tensor_at(m, gk_tensor_count(m) - 1);
        uint8_t buf[64];
        ck_assert_int_ne(gk_file_tensor_read(f, gk_tensor_count(m) - 1, t->nbytes - sizeof buf, buf, sizeof buf, &err),
                         GK_OK);
        ck_assert_str_eq(err.file, path);
    }
    gk_close(f);
measured:
    st = gk_open(path, GK_OPEN_MEASURE, &f, &err);
    if (!cut) {
        ck_assert_msg(st == GK_OK, "%s: %s", path, err.message);
        ck_assert_uint_eq(gk_file_size(f), whole_len);
        ck_assert_uint_eq(gk_file_warning_count(f), 0);
        gk_close(f);
        return;
    }
    ck_assert_msg(st == GK_E_DATA_EOF, "%s: %s (%s)", path, gk_status_name(st), err.message);
    ck_assert_ptr_nonnull(strstr(err.message, "run past the end of the file"));
    /* leniently it opens, says how short it is, and has its real length */
    ck_assert_int_eq(gk_open(path, GK_OPEN_MEASURE | GK_OPEN_LENIENT, &f, &err), GK_OK);
    ck_assert_uint_lt(gk_file_size(f), whole_len);
    bool said = false;
    for (size_t i = 0; i < gk_file_warning_count(f); i++)
        said = said || strstr(gk_file_warning_at(f, i)->message, "bytes its container records") != NULL;
    ck_assert_msg(said, "%s: no warning on the container's length", path);
    gk_close(f);
}

START_TEST(measured_streams_cut_anywhere_in_the_data) {
    size_t len, zlen, tlen;
    uint8_t *g = make_gguf(65536, &len);                 /* 768 KiB of data */
    uint8_t *z = compress_frames(g, len, 65536, &zlen);  /* frames of 64 KiB, each recording its size */
    uint8_t *t = make_tar(g, len, &tlen);
    size_t data_start = len - 3 * 65536 * 4;
    write_file(tmp_path("whole.gguf.zst"), z, zlen);
    check_measured(tmp_path("whole.gguf.zst"), len, false, true);
    write_file(tmp_path("whole.tar"), t, tlen);
    check_measured(tmp_path("whole.tar::m.gguf"), len, false, true);
    /* cuts from the second frame (the header is in the first) to just before the end */
    size_t first_frame = ZSTD_findFrameCompressedSize(z, zlen);
    for (int k = 1; k < 16; k++) {
        size_t zcut = first_frame + (zlen - first_frame) * (size_t)k / 16;
        write_file(tmp_path("cut.gguf.zst"), z, zcut);
        check_measured(tmp_path("cut.gguf.zst"), len, true, false);
        /* libarchive hands out a member in blocks of the archive (64 KiB here): a
         * member's header is readable once its first block is there */
        size_t tcut = 512 + data_start + 131072 + (len - data_start - 131072) * (size_t)k / 16;
        write_file(tmp_path("cut.tar"), t, tcut);
        check_measured(tmp_path("cut.tar::m.gguf"), len, true, true);
    }
    free(g);
    free(z);
    free(t);
}
END_TEST

START_TEST(frame_walk_finds_every_cut) {
    size_t len, zlen;
    uint8_t *g = make_gguf(4096, &len);
    uint8_t *z = compress_frames(g, len, 20000, &zlen);   /* several frames of many blocks */
    gk_error err;
    write_file(tmp_path("f.zst"), z, zlen);
    ck_assert_msg(gk_source_zstd_check_frames(tmp_path("f.zst"), &err) == GK_OK, "%s", err.message);
    /* the frame boundaries: a cut there leaves whole frames (the reader then finds
     * the data short); a cut anywhere else is inside a frame */
    size_t bounds[64], nb = 0;
    for (size_t at = 0; at < zlen && nb < 64; nb++) {
        at += ZSTD_findFrameCompressedSize(z + at, zlen - at);
        bounds[nb] = at;
    }
    ck_assert_uint_gt(nb, 2);
    for (size_t cut = 1; cut < zlen; cut += cut % 97 == 0 ? 1 : 13) {
        bool boundary = false;
        for (size_t i = 0; i < nb; i++) boundary = boundary || bounds[i] == cut;
        write_file(tmp_path("f.zst"), z, cut);
        gk_status st = gk_source_zstd_check_frames(tmp_path("f.zst"), &err);
        ck_assert_msg(st == (boundary ? GK_OK : GK_E_TRUNCATED), "cut at %zu of %zu: %s (%s)", cut, zlen,
                      gk_status_name(st), err.message);
    }
    for (size_t i = 0; i + 1 < nb; i++) {   /* at each boundary and a byte either side */
        for (size_t cut = bounds[i] - 1; cut <= bounds[i] + 1; cut++) {
            write_file(tmp_path("f.zst"), z, cut);
            gk_status st = gk_source_zstd_check_frames(tmp_path("f.zst"), &err);
            ck_assert_int_eq(st, cut == bounds[i] ? GK_OK : GK_E_TRUNCATED);
        }
    }
    free(g);
    free(z);
}
END_TEST

START_TEST(long_window_reads_and_can_be_capped) {
    size_t len;
    uint8_t *g = make_gguf(4096, &len);
    /* streamed without a size, so the frame declares the whole 2^28 window */
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, 28);
    ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1);
    size_t cap = ZSTD_compressBound(len) + 64;
    uint8_t *z = malloc(cap);
    ZSTD_outBuffer out = { z, cap, 0 };
    ZSTD_inBuffer in = { g, len, 0 };
    /* fed in two calls, so the size is not known when the frame header is made */
    ck_assert(!ZSTD_isError(ZSTD_compressStream2(c, &out, &in, ZSTD_e_continue)));
    ZSTD_inBuffer none = { NULL, 0, 0 };
    ck_assert_int_eq(ZSTD_compressStream2(c, &out, &none, ZSTD_e_end), 0);
    ZSTD_freeCCtx(c);
    ZSTD_frameHeader fh;
    ck_assert_int_eq(ZSTD_getFrameHeader(&fh, z, out.pos), 0);
    ck_assert(fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN);
    ck_assert_uint_eq(fh.windowSize, 1u << 28);
    write_file(tmp_path("long.gguf.zst"), z, out.pos);
    gk_file *f;
    gk_error err;
    unsetenv("GGUFKIT_ZSTD_WINDOW_LOG_MAX");
    ck_assert_msg(gk_open(tmp_path("long.gguf.zst"), GK_OPEN_MEASURE, &f, &err) == GK_OK, "%s", err.message);
    ck_assert_uint_eq(gk_file_size(f), len);
    gk_close(f);
    setenv("GGUFKIT_ZSTD_WINDOW_LOG_MAX", "27", 1);
    ck_assert_int_eq(gk_zstd_window_log_max(), 27);
    ck_assert_int_eq(gk_open(tmp_path("long.gguf.zst"), GK_OPEN_DEFAULT, &f, &err), GK_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.message, "GGUFKIT_ZSTD_WINDOW_LOG_MAX"));
    setenv("GGUFKIT_ZSTD_WINDOW_LOG_MAX", "28", 1);
    ck_assert_int_eq(gk_open(tmp_path("long.gguf.zst"), GK_OPEN_DEFAULT, &f, &err), GK_OK);
    gk_close(f);
    setenv("GGUFKIT_ZSTD_WINDOW_LOG_MAX", "junk", 1);   /* not a number: the format's maximum */
    ck_assert_int_ge(gk_zstd_window_log_max(), 30);
    unsetenv("GGUFKIT_ZSTD_WINDOW_LOG_MAX");
    free(z);
    free(g);
}
END_TEST

int main(void) {
    Suite *su = suite_create("source");
    TCase *tc = tcase_create("streams");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, measured_streams_cut_anywhere_in_the_data);
    tcase_add_test(tc, frame_walk_finds_every_cut);
    tcase_add_test(tc, long_window_reads_and_can_be_capped);
    suite_add_tcase(su, tc);
    return run_suite(su);
}
