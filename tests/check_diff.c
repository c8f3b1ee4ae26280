/*
 * check_diff.c - the diff engine (lib/diff/) and the value comparisons it uses
 * (gk_value_equal, gk_value_first_diff): typed metadata changes, the tensor
 * directory, numbers recomputed here by a plain loop, pieces across rows,
 * thread-count independence, zero tensors, NaN, byte orders, verdicts.
 */
#include <math.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "meta/value.h"

static void path_in(char *buf, size_t size, const char *name) { snprintf(buf, size, "%s/%s", tmpdir, name); }

/* Writes m (tensors laid out canonically) with data[i] as tensor i's bytes. */
static void write_model(const char *path, gk_model *m, void *const *data) {
    gk_model_layout(m);
    uint8_t *hdr;
    size_t len;
    ck_assert_int_eq(gk_header_serialize(m, &hdr, &len, NULL), GK_OK);
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(hdr, 1, len, fp), len);
    for (size_t i = 0; i < gk_tensor_count(m); i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        ck_assert_int_eq(fseek(fp, (long)(len + t->offset), SEEK_SET), 0);
        ck_assert_uint_eq(fwrite(data[i], 1, t->nbytes, fp), t->nbytes);
    }
    fclose(fp);
    free(hdr);
}

static float *random_floats(size_t n, unsigned seed) {
    float *v = malloc(n * sizeof *v);
    ck_assert_ptr_nonnull(v);
    srand(seed);
    for (size_t i = 0; i < n; i++) v[i] = (float)rand() / RAND_MAX - 0.5f;
    return v;
}

#define W0 40000   /* row length of "w": three pieces per row */
#define W1 3

/* Reference: w F32 [W0, W1], z F32 [64] zeros, q Q8_0 [64, 4], only_ref F32 [8];
 * other: w with one element of row 1 changed, z with one element set, q the
 * same bytes, s with another shape, only_other F32 [8]. */
static void write_pair(const char *ref_path, const char *other_path) {
    gk_model *a = gk_model_new(), *b = gk_model_new();
    uint64_t ne_w[2] = { W0, W1 }, ne_z[1] = { 64 }, ne_q[2] = { 64, 4 }, ne_8[1] = { 8 };
    uint64_t ne_s1[2] = { 4, 2 }, ne_s2[2] = { 2, 4 };
    float *w = random_floats(W0 * W1, 1), *w2 = malloc(sizeof(float) * W0 * W1);
    memcpy(w2, w, sizeof(float) * W0 * W1);
    w2[1 * W0 + 35000] += 0.25f;
    float z[64] = { 0 }, z2[64] = { 0 }, eight[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    z2[5] = 1.0f;
    float *qsrc = random_floats(256, 2);
    uint8_t q[4 * 2 * 34];   /* 4 rows of two blocks */
    gk_type_get(GK_TYPE_Q8_0)->quantize(qsrc, q, 4, 64, NULL);
    ck_assert_int_eq(gk_kv_set_str(a, "general.architecture", "t", NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_str(b, "general.architecture", "t", NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(a, "w", GK_TYPE_F32, 2, ne_w, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(a, "z", GK_TYPE_F32, 1, ne_z, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(a, "q", GK_TYPE_Q8_0, 2, ne_q, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(a, "s", GK_TYPE_F32, 2, ne_s1, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(a, "only_ref", GK_TYPE_F32, 1, ne_8, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(b, "only_other", GK_TYPE_F32, 1, ne_8, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(b, "q", GK_TYPE_Q8_0, 2, ne_q, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(b, "s", GK_TYPE_F32, 2, ne_s2, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(b, "z", GK_TYPE_F32, 1, ne_z, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(b, "w", GK_TYPE_F32, 2, ne_w, NULL), GK_OK);
    void *da[5] = { w, z, q, eight, eight }, *db[5] = { eight, q, eight, z2, w2 };
    write_model(ref_path, a, da);
    write_model(other_path, b, db);
    gk_model_free(a);
    gk_model_free(b);
    free(w);
    free(w2);
    free(qsrc);
}

static const gk_tensor_diff *entry(const gk_diff_result *r, const char *name) {
    for (size_t i = 0; i < r->n_tensors; i++)
        if (strcmp(r->tensors[i].name, name) == 0) return &r->tensors[i];
    ck_abort_msg("no entry %s", name);
    return NULL;
}

/* Opens the two files and compares them (default options). */
static void open_and_run(const char *pa, const char *pb, gk_diff_input **ia, gk_diff_input **ib,
                         gk_diff_result *r) {
    ck_assert_int_eq(gk_diff_input_open(pa, ia, NULL), GK_OK);
    ck_assert_int_eq(gk_diff_input_open(pb, ib, NULL), GK_OK);
    ck_assert_int_eq(gk_diff_run(*ia, *ib, NULL, r, NULL), GK_OK);
}

START_TEST(value_comparisons) {
    gk_value a = { .type = GK_V_U32, .u = 5 }, b = a;
    ck_assert(gk_value_equal(&a, &b));
    b.type = GK_V_I32;
    b.i = 5;
    ck_assert(!gk_value_equal(&a, &b));   /* another type is a change */
    gk_value f1 = { .type = GK_V_F32, .f = 0.0 }, f2 = { .type = GK_V_F32, .f = -0.0 };
    ck_assert(!gk_value_equal(&f1, &f2));   /* other bytes in the file */
    f1.f = f2.f = NAN;
    ck_assert(gk_value_equal(&f1, &f2));
    int32_t x[20], y[20];
    for (int i = 0; i < 20; i++) x[i] = y[i] = i;
    y[7] = 70;
    gk_value ax = { .type = GK_V_ARR, .arr = { GK_V_I32, 20, x, 0 } }, ay = ax;
    ay.arr.data = y;
    ck_assert_uint_eq(gk_value_first_diff(&ax, &ay), 7);
    ck_assert(!gk_value_equal(&ax, &ay));
    ay.arr.data = x;
    ay.arr.n = 12;   /* a prefix: differs at the end of the shorter */
    ck_assert_uint_eq(gk_value_first_diff(&ax, &ay), 12);
    ay.arr.n = 20;
    ck_assert_uint_eq(gk_value_first_diff(&ax, &ay), UINT64_MAX);
    gk_str s1[3] = { { "a", 1 }, { "bc", 2 }, { "d", 1 } }, s2[3] = { { "a", 1 }, { "bd", 2 }, { "d", 1 } };
    gk_value as1 = { .type = GK_V_ARR, .arr = { GK_V_STR, 3, s1, 0 } }, as2 = as1;
    as2.arr.data = s2;
    ck_assert_uint_eq(gk_value_first_diff(&as1, &as2), 1);
    gk_value nested1[2] = { ax, ax }, nested2[2] = { ax, ay };
    nested2[1].arr.data = y;
    gk_value n1 = { .type = GK_V_ARR, .arr = { GK_V_ARR, 2, nested1, 0 } }, n2 = n1;
    n2.arr.data = nested2;
    ck_assert_uint_eq(gk_value_first_diff(&n1, &n2), 1);
    ck_assert(gk_value_equal(&n1, &n1));
}
END_TEST

START_TEST(metadata_changes) {
    make_tmpdir("check_diff");
    char pa[128], pb[128];
    path_in(pa, sizeof pa, "ma.gguf");
    path_in(pb, sizeof pb, "mb.gguf");
    gk_model *a = gk_model_new(), *b = gk_model_new();
    int32_t arr[20];
    for (int i = 0; i < 20; i++) arr[i] = i;
    gk_value va = { .type = GK_V_ARR, .arr = { GK_V_I32, 20, arr, 0 } };
    ck_assert_int_eq(gk_kv_set_u32(a, "k.type", 1, NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set(a, "k.arr", &va, NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_str(a, "k.gone", "x", NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_str(a, "k.same", "y", NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_str(a, "GGUF.pseudo", "1", NULL), GK_OK);
    gk_value vi = { .type = GK_V_I32, .i = 1 };
    ck_assert_int_eq(gk_kv_set(b, "k.type", &vi, NULL), GK_OK);
    arr[13] = -1;
    ck_assert_int_eq(gk_kv_set(b, "k.arr", &va, NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_str(b, "k.same", "y", NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_str(b, "k.new", "z", NULL), GK_OK);
    ck_assert_int_eq(gk_kv_set_str(b, "GGUF.pseudo", "2", NULL), GK_OK);
    write_model(pa, a, NULL);
    write_model(pb, b, NULL);
    gk_model_free(a);
    gk_model_free(b);
    gk_diff_input *ia, *ib;
    gk_diff_result r;
    open_and_run(pa, pb, &ia, &ib, &r);
    ck_assert_uint_eq(r.n_meta, 4);
    ck_assert_int_eq(r.meta[0].kind, GK_META_CHANGED);
    ck_assert_str_eq(r.meta[0].key, "k.type");
    ck_assert_int_eq(r.meta[0].other->type, GK_V_I32);
    ck_assert_str_eq(r.meta[1].key, "k.arr");
    ck_assert_uint_eq(r.meta[1].first_diff, 13);
    ck_assert_int_eq(r.meta[2].kind, GK_META_REMOVED);
    ck_assert_str_eq(r.meta[2].key, "k.gone");
    ck_assert_int_eq(r.meta[3].kind, GK_META_ADDED);
    ck_assert_str_eq(r.meta[3].key, "k.new");
    ck_assert_int_eq(r.verdict, GK_DIFF_SAME_WEIGHTS);   /* no tensors: all (none) equal */
    gk_diff_result_free(&r);
    gk_diff_input_close(ia);
    gk_diff_input_close(ib);
    unlink(pa);
    unlink(pb);
    rmdir(tmpdir);
}
END_TEST

START_TEST(tensor_numbers) {
    make_tmpdir("check_diff");
    char pa[128], pb[128];
    path_in(pa, sizeof pa, "a.gguf");
    path_in(pb, sizeof pb, "b.gguf");
    write_pair(pa, pb);
    gk_diff_input *ia, *ib;
    ck_assert_int_eq(gk_diff_input_open(pa, &ia, NULL), GK_OK);
    ck_assert_int_eq(gk_diff_input_open(pb, &ib, NULL), GK_OK);
    gk_diff_result r1, r3;
    gk_diff_opts o1 = { GK_OPTS_INIT(gk_diff_opts), .threads = 1 }, o3 = { GK_OPTS_INIT(gk_diff_opts), .threads = 3 };
    ck_assert_int_eq(gk_diff_run(ia, ib, &o1, &r1, NULL), GK_OK);
    ck_assert_int_eq(gk_diff_run(ia, ib, &o3, &r3, NULL), GK_OK);
    ck_assert_uint_eq(r1.n_tensors, 6);
    ck_assert_int_eq(r1.verdict, GK_DIFF_DIFFERS);
    /* reference order, then the other's additions */
    ck_assert_str_eq(r1.tensors[0].name, "w");
    ck_assert_str_eq(r1.tensors[5].name, "only_other");
    ck_assert_int_eq(entry(&r1, "only_ref")->kind, GK_TDIFF_ONLY_REF);
    ck_assert_int_eq(entry(&r1, "only_other")->kind, GK_TDIFF_ONLY_OTHER);
    ck_assert_int_eq(entry(&r1, "s")->kind, GK_TDIFF_SHAPE);
    ck_assert_int_eq(entry(&r1, "q")->kind, GK_TDIFF_IDENTICAL);
    /* w: one element of row 1 changed by 0.25, in the row's third piece */
    const gk_tensor_diff *w = entry(&r1, "w");
    ck_assert_int_eq(w->kind, GK_TDIFF_DIFFERENT);
    ck_assert_uint_eq(w->n_diff, 1);
    ck_assert_int_eq(w->first_diff_row, 1);
    float *x = random_floats(W0 * W1, 1);
    double e = (double)(x[W0 + 35000] + 0.25f) - x[W0 + 35000], sr = 0, so = 0, dot = 0;
    for (size_t i = 0; i < W0 * W1; i++) {
        double r = x[i], o = i == W0 + 35000 ? (double)(x[i] + 0.25f) : r;
        sr += r * r;
        so += o * o;
        dot += r * o;
    }
    free(x);
    double n = W0 * W1, rmse = sqrt(e * e / n), ref_rms = sqrt(sr / n);
    ck_assert_double_eq_tol(w->rmse, rmse, rmse * 1e-12);
    ck_assert_double_eq(w->max_abs_err, fabs(e));
    ck_assert_double_eq_tol(w->ref_rms, ref_rms, ref_rms * 1e-12);
    ck_assert_double_eq_tol(w->rel_rmse, rmse / ref_rms, rmse / ref_rms * 1e-12);
    ck_assert_double_eq_tol(w->cosine, dot / sqrt(sr * so), 1e-12);
    /* z: the reference is all zero */
    const gk_tensor_diff *z = entry(&r1, "z");
    ck_assert_int_eq(z->kind, GK_TDIFF_DIFFERENT);
    ck_assert_msg(isinf(z->rel_rmse), "z: rmse %g ref_rms %g rel %g n_diff %llu", z->rmse, z->ref_rms, z->rel_rmse, (unsigned long long)z->n_diff);
    ck_assert_double_eq(z->cosine, 0);
    ck_assert_double_eq(z->rmse, sqrt(1.0 / 64));
    ck_assert(isinf(r1.rel_rmse_weighted));
    /* the thread count changes nothing */
    ck_assert_uint_eq(r1.n_tensors, r3.n_tensors);
    for (size_t i = 0; i < r1.n_tensors; i++) {
        const gk_tensor_diff *p = &r1.tensors[i], *q = &r3.tensors[i];
        ck_assert_int_eq(p->kind, q->kind);
        ck_assert(memcmp(&p->rmse, &q->rmse, 5 * sizeof(double)) == 0);
        ck_assert_uint_eq(p->n_diff, q->n_diff);
    }
    gk_diff_result_free(&r1);
    gk_diff_result_free(&r3);
    /* against itself: identical */
    ck_assert_int_eq(gk_diff_run(ia, ia, NULL, &r1, NULL), GK_OK);
    ck_assert_int_eq(r1.verdict, GK_DIFF_IDENTICAL);
    gk_diff_result_free(&r1);
    /* its big-endian copy: every tensor identical, the byte order a layout change */
    char pbe[128];
    path_in(pbe, sizeof pbe, "a-be.gguf");
    gk_file *f;
    ck_assert_int_eq(gk_open(pa, 0, &f, NULL), GK_OK);
    ck_assert_int_eq(gk_endian_convert(f, pbe, true, NULL, NULL), GK_OK);
    gk_close(f);
    gk_diff_input *ibe;
    ck_assert_int_eq(gk_diff_input_open(pbe, &ibe, NULL), GK_OK);
    ck_assert_int_eq(gk_diff_run(ia, ibe, &o3, &r1, NULL), GK_OK);
    ck_assert_int_eq(r1.verdict, GK_DIFF_SAME_WEIGHTS);
    ck_assert(!r1.layout.big_endian[0] && r1.layout.big_endian[1]);
    for (size_t i = 0; i < r1.n_tensors; i++) ck_assert_int_eq(r1.tensors[i].kind, GK_TDIFF_IDENTICAL);
    gk_diff_result_free(&r1);
    /* the big-endian copy against the other file: the same numbers as before */
    ck_assert_int_eq(gk_diff_run(ibe, ib, &o1, &r1, NULL), GK_OK);
    ck_assert_uint_eq(entry(&r1, "w")->n_diff, 1);
    ck_assert_double_eq_tol(entry(&r1, "w")->rmse, rmse, rmse * 1e-12);
    gk_diff_result_free(&r1);
    gk_diff_input_close(ibe);
    gk_diff_input_close(ia);
    gk_diff_input_close(ib);
    unlink(pa);
    unlink(pb);
    unlink(pbe);
    rmdir(tmpdir);
}
END_TEST

START_TEST(same_values_other_type) {
    /* F16-exact values stored as F32 and as F16: same values, not identical */
    make_tmpdir("check_diff");
    char pa[128], pb[128];
    path_in(pa, sizeof pa, "f32.gguf");
    path_in(pb, sizeof pb, "f16.gguf");
    gk_model *a = gk_model_new(), *b = gk_model_new();
    uint64_t ne[1] = { 64 };
    float v[64];
    uint8_t h[128];
    for (int i = 0; i < 64; i++) v[i] = (float)(i - 32) / 4;
    gk_type_get(GK_TYPE_F16)->quantize(v, h, 1, 64, NULL);
    ck_assert_int_eq(gk_tensor_add(a, "t", GK_TYPE_F32, 1, ne, NULL), GK_OK);
    ck_assert_int_eq(gk_tensor_add(b, "t", GK_TYPE_F16, 1, ne, NULL), GK_OK);
    void *da[1] = { v }, *db[1] = { h };
    write_model(pa, a, da);
    write_model(pb, b, db);
    gk_model_free(a);
    gk_model_free(b);
    gk_diff_input *ia, *ib;
    gk_diff_result r;
    open_and_run(pa, pb, &ia, &ib, &r);
    ck_assert_int_eq(r.tensors[0].kind, GK_TDIFF_SAME_VALUES);
    ck_assert_double_eq(r.tensors[0].rmse, 0);
    ck_assert_double_eq(r.tensors[0].cosine, 1);
    ck_assert_int_eq(r.tensors[0].first_diff_row, -1);
    ck_assert_int_eq(r.verdict, GK_DIFF_SAME_WEIGHTS);
    gk_diff_result_free(&r);
    gk_diff_input_close(ia);
    gk_diff_input_close(ib);
    unlink(pa);
    unlink(pb);
    rmdir(tmpdir);
}
END_TEST

/* One F32 tensor [ne] written with values v at path. */
static void write_one(const char *path, const float *v, uint64_t ne) {
    gk_model *m = gk_model_new();
    uint64_t shape[1] = { ne };
    ck_assert_int_eq(gk_tensor_add(m, "t", GK_TYPE_F32, 1, shape, NULL), GK_OK);
    void *d[1] = { (void *)v };
    write_model(path, m, d);
    gk_model_free(m);
}

START_TEST(non_finite_values) {
    /* A NaN, +inf or -inf at the first, a middle or the last element, on either
     * side: counted per side, a difference, and errors +inf (cosine NaN) whatever
     * the order of the files; a NaN on both sides at one element is equal. */
    make_tmpdir("check_diff");
    char pa[128], pb[128];
    path_in(pa, sizeof pa, "finite.gguf");
    path_in(pb, sizeof pb, "odd.gguf");
    enum { N = 1000 };
    float *v = random_floats(N, 5), w[N];
    write_one(pa, v, N);
    const float odd[3] = { NAN, INFINITY, -INFINITY };
    const size_t at[3] = { 0, 517, N - 1 };
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < 3; p++) {
            memcpy(w, v, sizeof w);
            w[at[p]] = odd[k];
            write_one(pb, w, N);
            for (int order = 0; order < 2; order++) {
                gk_diff_input *ia, *ib;
                gk_diff_result r;
                open_and_run(order ? pb : pa, order ? pa : pb, &ia, &ib, &r);
                const gk_tensor_diff *d = entry(&r, "t");
                ck_assert_int_eq(d->kind, GK_TDIFF_DIFFERENT);
                ck_assert_uint_eq(d->n_diff, 1);
                ck_assert_uint_eq(d->n_nonfinite_diff, 1);
                ck_assert_uint_eq(order ? d->n_nonfinite_ref : d->n_nonfinite_other, 1);
                ck_assert_uint_eq(order ? d->n_nonfinite_other : d->n_nonfinite_ref, 0);
                ck_assert_msg(isinf(d->max_abs_err) && d->max_abs_err > 0, "value %d at %zu: max_abs %g", k, at[p],
                              d->max_abs_err);
                ck_assert(isinf(d->rmse) && isinf(d->rel_rmse));
                ck_assert(isnan(d->cosine));
                ck_assert_int_eq(d->first_diff_row, 0);
                ck_assert(isinf(r.rel_rmse_weighted));
                ck_assert_uint_eq(r.n_nonfinite_diff, 1);
                ck_assert_int_eq(r.verdict, GK_DIFF_DIFFERS);
                gk_diff_result_free(&r);
                gk_diff_input_close(ia);
                gk_diff_input_close(ib);
            }
        }
    /* the same NaN position on both sides (another payload): equal values */
    memcpy(w, v, sizeof w);
    v[3] = NAN;
    uint32_t bits = 0x7FC00001u;
    memcpy(&w[3], &bits, 4);
    write_one(pa, v, N);
    write_one(pb, w, N);
    gk_diff_input *ia, *ib;
    gk_diff_result r;
    open_and_run(pa, pb, &ia, &ib, &r);
    const gk_tensor_diff *d = entry(&r, "t");
    ck_assert_int_eq(d->kind, GK_TDIFF_SAME_VALUES);
    ck_assert_uint_eq(d->n_nonfinite_ref, 1);
    ck_assert_uint_eq(d->n_nonfinite_other, 1);
    ck_assert_uint_eq(d->n_nonfinite_diff, 0);
    ck_assert_double_eq(d->max_abs_err, 0);
    ck_assert_double_eq(d->rmse, 0);
    gk_diff_result_free(&r);
    gk_diff_input_close(ia);
    gk_diff_input_close(ib);
    free(v);
    unlink(pa);
    unlink(pb);
    rmdir(tmpdir);
}
END_TEST

static bool stop_at_once(void *ctx, uint64_t done, uint64_t total) {
    (void)ctx;
    (void)done;
    (void)total;
    return false;
}

START_TEST(interrupted_and_bad_input) {
    make_tmpdir("check_diff");
    char pa[128], pb[128];
    path_in(pa, sizeof pa, "a.gguf");
    path_in(pb, sizeof pb, "b.gguf");
    write_pair(pa, pb);
    gk_diff_input *ia, *ib, *none = NULL;
    ck_assert_int_eq(gk_diff_input_open(pa, &ia, NULL), GK_OK);
    ck_assert_int_eq(gk_diff_input_open(pb, &ib, NULL), GK_OK);
    gk_diff_result r;
    gk_error err;
    gk_diff_opts o = { GK_OPTS_INIT(gk_diff_opts), .threads = 2, .progress = stop_at_once };
    ck_assert_int_eq(gk_diff_run(ia, ib, &o, &r, &err), GK_E_INTERRUPTED);
    ck_assert_ptr_null(r.tensors);
    gk_diff_input_close(ia);
    gk_diff_input_close(ib);
    /* a truncated file: the open fails with the reader's error, nothing allocated */
    FILE *fp = fopen(pb, "r+b");
    ck_assert_int_eq(ftruncate(fileno(fp), 40), 0);
    fclose(fp);
    ck_assert_int_ne(gk_diff_input_open(pb, &none, &err), GK_OK);
    ck_assert_ptr_null(none);
    ck_assert(err.message[0] != '\0');
    unlink(pa);
    unlink(pb);
    rmdir(tmpdir);
}
END_TEST

int main(void) {
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("diff");
    tcase_add_test(tc, value_comparisons);
    tcase_add_test(tc, metadata_changes);
    tcase_add_test(tc, tensor_numbers);
    tcase_add_test(tc, same_values_other_type);
    tcase_add_test(tc, non_finite_values);
    tcase_add_test(tc, interrupted_and_bad_input);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
