/*
 * check_sink.c - the atomic output file (lib/io/sink.c) and its stage
 * (lib/io/stage.c): bytes appended by writes, zero runs and copies from another
 * file, in pieces that fall on and across every hand-off boundary, come out
 * exactly, with O_DIRECT and through the page cache, plain and zstd-compressed;
 * an aborted or failed output leaves nothing behind; a source that ends early
 * is reported as truncated; byte-swapped copies equal the kernel's result.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "io/lock.h"
#include "io/sink_set.h"

#define SOURCE_BYTES (21u << 20)

static uint8_t *source;          /* the bytes of tmpdir/source.bin */

static uint8_t pattern(uint64_t i) { return (uint8_t)((i * 2654435761u) >> 13); }

static void setup(void) {
    make_tmpdir("check_sink");
    source = malloc(SOURCE_BYTES);
    ck_assert_ptr_nonnull(source);
    for (uint64_t i = 0; i < SOURCE_BYTES; i++) source[i] = pattern(i);
    char p[300];
    snprintf(p, sizeof p, "%s/source.bin", tmpdir);
    FILE *fp = fopen(p, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(source, 1, SOURCE_BYTES, fp), SOURCE_BYTES);
    fclose(fp);
}

static void teardown(void) {
    remove_tmpdir();
    free(source);
}

/* Names in tmpdir other than source.bin. */
static int other_entries(void) {
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "source.bin")) n++;
    if (d) closedir(d);
    return n;
}

/* Writes a fixed script to dest (writes, zero runs and copies of sizes that
 * straddle 4 KiB blocks and the hand-offs, 256 KiB doubling to 8 MiB).
 * @return : the bytes it should hold. */
static test_bytes write_script(const char *dest, unsigned flags, size_t scale) {
    static const size_t sizes[] = { 1, 4095, 4097, 262143, 262145, 1 << 20, 3000001, 8388608, 12345, 9000000 };
    char src_path[300];
    snprintf(src_path, sizeof src_path, "%s/source.bin", tmpdir);
    int src = open(src_path, O_RDONLY);
    ck_assert_int_ge(src, 0);
    gk_sink *s;
    gk_error err;
    ck_assert_int_eq(gk_sink_open(dest, flags, &s, &err), GK_OK);
    test_bytes w = { 0 };
    uint64_t src_off = 7;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i] / scale ? sizes[i] / scale : 1;
        switch (i % 3) {
        case 0:
            ck_assert_int_eq(gk_sink_write(s, source + (i * 977) % (SOURCE_BYTES - n), n, &err), GK_OK);
            test_bytes_add(&w, source + (i * 977) % (SOURCE_BYTES - n), n);
            break;
        case 1:
            ck_assert_int_eq(gk_sink_write_zeros(s, n, &err), GK_OK);
            test_bytes_add(&w, NULL, n);
            break;
        default:
            if (src_off + n > SOURCE_BYTES) src_off = 3;
            ck_assert_msg(gk_sink_copy_from(s, src, src_off, n, &err) == GK_OK, "%s", err.message);
            test_bytes_add(&w, source + src_off, n);
            src_off += n;
            break;
        }
        ck_assert_uint_eq(gk_sink_offset(s), w.n);
    }
    ck_assert_msg(gk_sink_commit(s, &err) == GK_OK, "%s", err.message);
    close(src);
    return w;
}

START_TEST(test_script_exact) {
    const unsigned modes[] = { GK_SINK_DEFAULT, GK_SINK_BUFFERED };
    for (int m = 0; m < 2; m++) {
        for (size_t scale = 1; scale <= 64; scale *= 64) {   /* a large and a small output */
            char dest[300];
            snprintf(dest, sizeof dest, "%s/out-%d-%zu.bin", tmpdir, m, scale);
            test_bytes w = write_script(dest, modes[m], scale);
            size_t len;
            uint8_t *got = read_whole_file(dest, &len);
            ck_assert_uint_eq(len, w.n);
            ck_assert_msg(memcmp(got, w.d, len) == 0, "mode %d scale %zu: bytes differ", m, scale);
            free(got);
            free(w.d);
            unlink(dest);
            ck_assert_int_eq(other_entries(), 0);
        }
    }
}
END_TEST

START_TEST(test_script_zstd) {
    const unsigned modes[] = { GK_SINK_DEFAULT, GK_SINK_BUFFERED };
    for (int m = 0; m < 2; m++) {
        char dest[300];
        snprintf(dest, sizeof dest, "%s/out-%d.bin.zst", tmpdir, m);
        test_bytes w = write_script(dest, modes[m] | GK_SINK_ZSTD_LEVEL(1), 1);
        size_t clen;
        uint8_t *packed = read_whole_file(dest, &clen);
        unsigned long long size = ZSTD_getFrameContentSize(packed, clen);
        uint8_t *got = malloc(w.n + 1);
        size_t n = ZSTD_decompress(got, w.n + 1, packed, clen);
        ck_assert_msg(!ZSTD_isError(n), "%s", ZSTD_getErrorName(n));
        ck_assert_uint_eq(n, w.n);
        ck_assert(size == ZSTD_CONTENTSIZE_UNKNOWN || size == w.n);
        ck_assert_int_eq(memcmp(got, w.d, n), 0);
        free(got);
        free(packed);
        free(w.d);
        unlink(dest);
    }
}
END_TEST

START_TEST(test_abort_and_short_source_leave_nothing) {
    const unsigned modes[] = { GK_SINK_DEFAULT, GK_SINK_BUFFERED };
    char src_path[300];
    snprintf(src_path, sizeof src_path, "%s/source.bin", tmpdir);
    for (int m = 0; m < 2; m++) {
        char dest[300];
        snprintf(dest, sizeof dest, "%s/never.bin", tmpdir);
        gk_sink *s;
        gk_error err;
        /* aborted after 20 MiB (the writer thread is busy by then) */
        ck_assert_int_eq(gk_sink_open(dest, modes[m], &s, &err), GK_OK);
        ck_assert_int_eq(gk_sink_write(s, source, 20u << 20, &err), GK_OK);
        gk_sink_abort(s);
        ck_assert_int_eq(other_entries(), 0);
        /* a copy past the end of the source */
        int src = open(src_path, O_RDONLY);
        ck_assert_int_eq(gk_sink_open(dest, modes[m], &s, &err), GK_OK);
        ck_assert_int_eq(gk_sink_write(s, source, 5000, &err), GK_OK);
        ck_assert_int_eq(gk_sink_copy_from(s, src, SOURCE_BYTES - 100, 4096, &err), GK_E_TRUNCATED);
        ck_assert_int_eq(err.offset, (int64_t)SOURCE_BYTES);
        gk_sink_abort(s);
        close(src);
        ck_assert_int_eq(other_entries(), 0);
    }
}
END_TEST

/* Byte-swapped copies (F16's 2-byte blocks, Q4_K's 144-byte ones that straddle
 * every hand-off) equal the kernel applied to the source in memory. */
START_TEST(test_copy_swapped) {
    const char *exts[] = { ".bin", ".bin.zst" };
    const uint32_t types[] = { GK_TYPE_F16, GK_TYPE_Q4_K };
    char src_path[300];
    snprintf(src_path, sizeof src_path, "%s/source.bin", tmpdir);
    int src = open(src_path, O_RDONLY);
    ck_assert_int_ge(src, 0);
    for (int m = 0; m < 2; m++) {
        for (int z = 0; z < 2; z++) {
            for (int t = 0; t < 2; t++) {
                const gk_type_info *ti = gk_type_get(types[t]);
                size_t bb = ti->block_bytes, n = (SOURCE_BYTES - 4096) / bb * bb;
                char dest[300];
                snprintf(dest, sizeof dest, "%s/swapped%s", tmpdir, exts[z]);
                gk_sink *s;
                gk_error err;
                ck_assert_int_eq(gk_sink_open(dest, m ? GK_SINK_BUFFERED : GK_SINK_DEFAULT, &s, &err), GK_OK);
                ck_assert_int_eq(gk_sink_write(s, source, 100, &err), GK_OK);   /* misaligns what follows */
                ck_assert_int_eq(gk_sink_copy_swapped(s, src, 3, bb - 1, bb, ti->byteswap, &err), GK_E_ARG);
                ck_assert_msg(gk_sink_copy_swapped(s, src, 3, n, bb, ti->byteswap, &err) == GK_OK, "%s", err.message);
                ck_assert_uint_eq(gk_sink_offset(s), 100 + n);
                ck_assert_int_eq(gk_sink_commit(s, &err), GK_OK);
                uint8_t *want = malloc(100 + n);
                memcpy(want, source, 100);
                memcpy(want + 100, source + 3, n);
                ti->byteswap(want + 100, (int64_t)(n / bb));
                size_t len;
                uint8_t *got = read_whole_file(dest, &len);
                if (z) {
                    uint8_t *plain = malloc(100 + n);
                    size_t k = ZSTD_decompress(plain, 100 + n, got, len);
                    ck_assert(!ZSTD_isError(k));
                    len = k;
                    free(got);
                    got = plain;
                }
                ck_assert_uint_eq(len, 100 + n);
                ck_assert_msg(memcmp(got, want, len) == 0, "%s mode %d zstd %d: bytes differ", ti->name, m, z);
                free(got);
                free(want);
                unlink(dest);
            }
        }
    }
    close(src);
}
END_TEST

START_TEST(test_existing_destination_refused) {
    char dest[300];
    snprintf(dest, sizeof dest, "%s/source.bin", tmpdir);
    gk_sink *s;
    gk_error err;
    ck_assert_int_eq(gk_sink_open(dest, GK_SINK_DEFAULT, &s, &err), GK_E_EXISTS);
    ck_assert_int_eq(gk_sink_open(dest, GK_SINK_OVERWRITE, &s, &err), GK_OK);
    ck_assert_int_eq(gk_sink_write(s, "x", 1, &err), GK_OK);
    ck_assert_int_eq(gk_sink_commit(s, &err), GK_OK);
    size_t len;
    uint8_t *got = read_whole_file(dest, &len);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(got[0], 'x');
    free(got);
}
END_TEST

/* No output is an input (io/inputs.c): the recorded file, a symbolic link and a
 * hard link to it, another spelling of its path are refused with or without
 * GK_SINK_OVERWRITE; the file an in-place rewrite replaces on purpose
 * (GK_SINK_REPLACE_HELD) and unrelated files are not; gk_inputs_clear forgets. */
START_TEST(test_inputs_never_outputs) {
    char src[300], sym[300], hard[300], other[300], dotted[300];
    snprintf(src, sizeof src, "%s/source.bin", tmpdir);
    snprintf(sym, sizeof sym, "%s/sym.bin", tmpdir);
    snprintf(hard, sizeof hard, "%s/hard.bin", tmpdir);
    snprintf(other, sizeof other, "%s/other.bin", tmpdir);
    snprintf(dotted, sizeof dotted, "%s/./source.bin", tmpdir);
    ck_assert_int_eq(symlink("source.bin", sym), 0);
    ck_assert_int_eq(link(src, hard), 0);
    FILE *fp = fopen(other, "wb");
    fputs("other", fp);
    fclose(fp);
    gk_inputs_clear();
    ck_assert_int_eq(gk_inputs_add(sym, NULL), GK_OK);   /* recorded through the link */
    const char *refused[] = { src, sym, hard, dotted };
    gk_sink *s;
    gk_error err;
    for (int k = 0; k < 4; k++) {
        ck_assert_msg(!gk_sink_dest_ok(refused[k], GK_SINK_OVERWRITE, &err), "%s accepted", refused[k]);
        ck_assert_int_eq(err.code, GK_E_SAME_FILE);
        ck_assert_int_eq(gk_sink_open(refused[k], GK_SINK_OVERWRITE, &s, &err), GK_E_SAME_FILE);
        ck_assert_int_eq(gk_inputs_check_output(refused[k], &err), GK_E_SAME_FILE);
    }
    ck_assert(gk_sink_dest_ok(src, GK_SINK_OVERWRITE | GK_SINK_REPLACE_HELD, &err));
    ck_assert_int_eq(gk_sink_open(other, GK_SINK_OVERWRITE, &s, &err), GK_OK);
    gk_sink_abort(s);
    /* a file opened as a model is recorded by the open itself */
    gk_inputs_clear();
    ck_assert(gk_sink_dest_ok(hard, GK_SINK_OVERWRITE, &err));
    gk_file *f;
    ck_assert_int_ne(gk_open(other, GK_OPEN_DEFAULT, &f, &err), GK_OK);   /* not GGUF: still read */
    ck_assert(!gk_sink_dest_ok(other, GK_SINK_OVERWRITE, &err));
    gk_inputs_clear();
    ck_assert(gk_sink_dest_ok(other, GK_SINK_OVERWRITE, &err));
    size_t len;
    uint8_t *got = read_whole_file(src, &len);
    ck_assert_uint_eq(len, SOURCE_BYTES);
    ck_assert_int_eq(memcmp(got, source, len), 0);
    free(got);
    unlink(sym);
    unlink(hard);
    unlink(other);
}
END_TEST

/* The fd of this process that is an unnamed file of tmpdir, or -1. */
static int unnamed_fd(void) {
    char link[64], path[600], want[300];
    snprintf(want, sizeof want, "%s/#", tmpdir);
    for (int fd = 3; fd < 1024; fd++) {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof path - 1);
        if (n <= 0) continue;
        path[n] = '\0';
        if (strncmp(path, want, strlen(want)) == 0 && strstr(path, "(deleted)")) return fd;
    }
    return -1;
}

/* An output has no name until it is complete (O_TMPFILE), is written with
 * O_DIRECT all the same, and is linked in at commit; a replacement keeps the
 * replaced file's mode and waits for (here: gives up on) its edit lock. */
START_TEST(test_unnamed_until_commit) {
    int probe = open(tmpdir, O_TMPFILE | O_RDWR, 0600);
    if (probe < 0) {
        printf("SKIPPED: unnamed outputs: %s refuses O_TMPFILE\n", tmpdir);
        return;
    }
    close(probe);
    char dest[300];
    snprintf(dest, sizeof dest, "%s/out.bin", tmpdir);
    gk_sink *s;
    gk_error err;
    ck_assert_int_eq(gk_sink_open(dest, GK_SINK_DEFAULT, &s, &err), GK_OK);
    ck_assert_int_eq(gk_sink_write(s, source, 3u << 20, &err), GK_OK);
    ck_assert_int_eq(other_entries(), 0);
    int fd = unnamed_fd();
    ck_assert_int_ge(fd, 0);
    int fl = fcntl(fd, F_GETFL);
    probe = open(tmpdir, O_TMPFILE | O_RDWR | O_DIRECT, 0600);
    if (probe >= 0) {   /* the folder takes O_DIRECT: the output uses it */
        close(probe);
        ck_assert_msg(fl & O_DIRECT, "the unnamed output is not written with O_DIRECT");
    } else {
        printf("SKIPPED: O_DIRECT on unnamed outputs: %s refuses O_DIRECT\n", tmpdir);
    }
    ck_assert_int_eq(gk_sink_commit(s, &err), GK_OK);
    ck_assert_int_eq(other_entries(), 1);
    struct stat sb;
    ck_assert_int_eq(stat(dest, &sb), 0);
    ck_assert_uint_eq(sb.st_size, 3u << 20);
    ck_assert_int_eq(sb.st_mode & 0777, 0644);
    /* replaced: new bytes, old mode, nothing else left */
    chmod(dest, 0600);
    ck_assert_int_eq(gk_sink_open(dest, GK_SINK_OVERWRITE, &s, &err), GK_OK);
    ck_assert_int_eq(gk_sink_write(s, "new", 3, &err), GK_OK);
    ck_assert_int_eq(gk_sink_commit(s, &err), GK_OK);
    ck_assert_int_eq(stat(dest, &sb), 0);
    ck_assert_uint_eq(sb.st_size, 3);
    ck_assert_int_eq(sb.st_mode & 0777, 0600);
    ck_assert_int_eq(other_entries(), 1);
    /* while another holds its edit lock, the destination is not replaced */
    int held;
    ck_assert_int_eq(gk_lock_open(dest, 0, &held, &err), GK_OK);
    ck_assert_int_eq(gk_sink_open(dest, GK_SINK_OVERWRITE, &s, &err), GK_OK);
    ck_assert_int_eq(gk_sink_write(s, "newer", 5, &err), GK_OK);
    ck_assert_int_eq(gk_sink_commit(s, &err), GK_E_LOCKED);
    close(held);
    ck_assert_int_eq(stat(dest, &sb), 0);
    ck_assert_uint_eq(sb.st_size, 3);
    ck_assert_int_eq(other_entries(), 1);
    unlink(dest);
}
END_TEST

int main(void) {
    Suite *su = suite_create("sink");
    TCase *tc = tcase_create("sink");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_script_exact);
    tcase_add_test(tc, test_script_zstd);
    tcase_add_test(tc, test_abort_and_short_source_leave_nothing);
    tcase_add_test(tc, test_copy_swapped);
    tcase_add_test(tc, test_existing_destination_refused);
    tcase_add_test(tc, test_inputs_never_outputs);
    tcase_add_test(tc, test_unnamed_until_commit);
    suite_add_tcase(su, tc);
    return run_suite(su);
}
