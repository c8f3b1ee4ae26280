/*
 * check_api.c - the interface's own rules: the version the library reports is
 * the header's (generated from meson.build), every function taking an option
 * struct refuses a size it does not know before doing anything, and the test
 * control hook reaches the stable in-place writer.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "ggufkit.h"

START_TEST(test_version) {
    ck_assert_str_eq(gk_version(), GK_VERSION_STRING);
    ck_assert_uint_eq(gk_version_number(), GK_VERSION_NUMBER);
    char text[32];
    snprintf(text, sizeof text, "%d.%d.%d", GK_VERSION_MAJOR, GK_VERSION_MINOR, GK_VERSION_PATCH);
    ck_assert_str_eq(text, gk_version());
    const char *want = getenv("GGUFKIT_VERSION");   /* meson's project version */
    if (want) ck_assert_str_eq(gk_version(), want);
}
END_TEST

/* The model of testdata/good/quantized.gguf, opened. */
static gk_file *open_fixture(void) {
    char path[2200];
    snprintf(path, sizeof path, "%s/good/quantized.gguf", testdata_dir());
    gk_file *f;
    ck_assert_int_eq(gk_open(path, 0, &f, NULL), GK_OK);
    return f;
}

/* err says the size is wrong and how to set it. */
static void assert_size_error(gk_status st, const gk_error *err, const char *type) {
    ck_assert_int_eq(st, GK_E_ARG);
    ck_assert_ptr_nonnull(strstr(err->message, type));
    ck_assert_ptr_nonnull(strstr(err->message, "GK_OPTS_INIT"));
}

START_TEST(test_opts_size_refused) {
    gk_file *f = open_fixture();
    gk_model *m = gk_model_clone(gk_file_model(f));
    gk_error err;
    const char *dest = tmp_path("out.gguf");
    size_t sizes[] = { 0, sizeof(gk_write_opts) + 8 };
    for (size_t k = 0; k < 2; k++) {
        gk_write_opts wo = { .size = sizes[k] };
        assert_size_error(gk_rewrite(f, m, dest, &wo, &err), &err, "gk_write_opts");
        ck_assert_int_ne(access(dest, F_OK), 0);   /* nothing written */
        gk_output out = { dest, m, NULL };
        assert_size_error(gk_write_outputs(&out, 1, &f, 1, &wo, NULL, &err), &err, "gk_write_opts");
    }
    gk_write_opts good = { GK_OPTS_INIT(gk_write_opts) };
    ck_assert_int_eq(gk_rewrite(f, m, dest, &good, &err), GK_OK);

    gk_split_opts so = { .max_tensors = 1 };
    gk_split_plan sp;
    assert_size_error(gk_split_plan_build(m, &so, &sp, &err), &err, "gk_split_opts");

    gk_quant_opts qo = { .size = 1, .target = gk_quant_target_lookup("Q8_0"), .output_type = -1, .token_embd_type = -1 };
    gk_quant_plan qp;
    assert_size_error(gk_quant_plan_build(m, &qo, &qp, &err), &err, "gk_quant_opts");

    gk_hash_opts ho = { .size = sizeof(gk_hash_opts) - 1 };
    gk_hash_result hr;
    assert_size_error(gk_hash_file(f, &ho, &hr, &err), &err, "gk_hash_opts");
    gk_hash_result_free(&hr);

    const char *paths[] = { dest };
    gk_index_opts io = { 0 };
    assert_size_error(gk_index_run(tmp_path("index.db"), paths, 1, &io, NULL, &err), &err, "gk_index_opts");
    ck_assert_int_ne(access(tmp_path("index.db"), F_OK), 0);

    gk_diff_input *a, *b;
    ck_assert_int_eq(gk_diff_input_open(dest, &a, NULL), GK_OK);
    ck_assert_int_eq(gk_diff_input_open(dest, &b, NULL), GK_OK);
    gk_diff_opts dopts = { 0 };
    gk_diff_result dr;
    assert_size_error(gk_diff_run(a, b, &dopts, &dr, &err), &err, "gk_diff_opts");
    gk_diff_result_free(&dr);
    gk_diff_input_close(a);
    gk_diff_input_close(b);

    gk_convert_opts co = { .out_type = GK_TYPE_F16 };
    gk_convert *c;
    assert_size_error(gk_convert_plan(tmpdir, &co, &c, &err), &err, "gk_convert_opts");

    gk_export_opts eo = { .dtype = GK_EXPORT_BF16 };
    gk_export_result er;
    assert_size_error(gk_export(dest, tmp_path("exported"), &eo, &er, &err), &err, "gk_export_opts");
    ck_assert_int_ne(access(tmp_path("exported"), F_OK), 0);

    gk_model_free(m);
    gk_close(f);
}
END_TEST

/* A hook that stops the writer before its first step. */
static bool stop_at_once(void *ctx, const char *what) {
    (void)what;
    ++*(int *)ctx;
    return false;
}

START_TEST(test_test_control) {
    ck_assert_int_eq(gk_test_control(-1), GK_E_ARG);
    char path[2200];
    snprintf(path, sizeof path, "%s/good/quantized.gguf", testdata_dir());
    const char *copy = tmp_path("edit.gguf");
    size_t len;
    uint8_t *bytes = read_whole_file(path, &len);
    write_file(copy, bytes, len);
    gk_file *f;
    ck_assert_int_eq(gk_open_exclusive(copy, 0, 0, NULL, &f, NULL), GK_OK);
    gk_model *m = gk_model_clone(gk_file_model(f));
    ck_assert_int_eq(gk_kv_set_str(m, "general.name", "x", NULL), GK_OK);
    gk_inplace_plan plan;
    ck_assert_int_eq(gk_inplace_fit(f, m, &plan, NULL), GK_OK);
    ck_assert(plan.fits);
    int calls = 0;
    gk_error err;
    ck_assert_int_eq(gk_test_control(GK_TEST_IO_HOOK, stop_at_once, &calls), GK_OK);
    ck_assert_int_eq(gk_inplace_write(f, m, NULL, &err), GK_E_INTERRUPTED);
    ck_assert_int_eq(calls, 1);
    ck_assert_int_eq(gk_test_control(GK_TEST_IO_HOOK, NULL, NULL), GK_OK);
    gk_model_free(m);
    gk_close(f);
    /* Opening for an edit again recovers whatever the stopped write left. */
    ck_assert_int_eq(gk_open_exclusive(copy, 0, 0, NULL, &f, &err), GK_OK);
    m = gk_model_clone(gk_file_model(f));
    ck_assert_int_eq(gk_kv_set_str(m, "general.name", "x", NULL), GK_OK);
    ck_assert_int_eq(gk_inplace_fit(f, m, &plan, NULL), GK_OK);
    bool changed = false;
    ck_assert_int_eq(gk_inplace_write(f, m, &changed, &err), GK_OK);
    ck_assert(changed);
    ck_assert_int_eq(calls, 1);   /* the hook is gone */
    gk_model_free(m);
    gk_close(f);
    free(bytes);
}
END_TEST

static void setup(void) { make_tmpdir("check_api"); }
static void teardown(void) { remove_tmpdir(); }

int main(void) {
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("api");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_opts_size_refused);
    tcase_add_test(tc, test_test_control);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
