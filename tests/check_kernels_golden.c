/*
 * check_kernels_golden.c - kernel parity against llama.cpp's golden files.
 *
 * Table driven: every type whose gk_type_info has kernels is checked as soon as
 * they exist. From $GGUFKIT_GOLDEN/syn1/MANIFEST.json (and imatrix/MANIFEST.json):
 *   quantize   - F32 source tensors of syn1-f32.gguf quantized with the table's
 *                kernel (rows of ne[0]) must hash like the tensors of
 *                syn1-TYPE.gguf and syn1-preset-P.gguf (no importance matrix);
 *   dequantize - every quantized tensor with a deq_f32_sha256 must dequantize to
 *                F32 data of that hash;
 *   chain      - syn1-A.to-B.gguf: A's tensors dequantized, then quantized to B;
 *   imatrix    - imatrix/syn1-imat-*.gguf: F32 sources quantized with the
 *                importance matrix syn1.imatrix (per tensor name, as llama-quantize
 *                loads it: sums divided by the call count); syn1-gimat-*.gguf
 *                with the GGUF-format syn1.imatrix.gguf, read by the library
 *                (in_sum2 divided by the row's count).
 * Tensor data is read with pread at the manifest's offsets (no GGUF reader).
 * A summary table per type is printed; any mismatch of a type with kernels fails.
 * tests/meson.build runs the suite once per GGUFKIT_KERNELS level.
 */
#include <check.h>
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "ggufkit.h"
#include "sha256.h"

enum { CHECK_QUANT, CHECK_DEQUANT, CHECK_CHAIN, CHECK_IMATRIX, CHECK_KINDS };
static const char *const kind_names[CHECK_KINDS] = { "quantize", "dequantize", "chain",
                                                     "imatrix-q" };

/* Per type and kind of check: how many tensors matched, mismatched, or could not
 * be checked because the type lacks the kernel. */
typedef struct {
    unsigned matched, mismatched, no_kernel;
} tally;

static tally tallies[GK_TYPE_COUNT][CHECK_KINDS];
static unsigned io_errors;
static unsigned reported_mismatches;

/* One entry of the importance matrix file. */
typedef struct {
    char *name;
    float *values;
    int n;
} imatrix_entry;

typedef struct {
    imatrix_entry *entries;
    int count;
} imatrix_data;

/* ---- small utilities ---------------------------------------------------------------- */

/* "a/b/c" with empty components left out; the caller frees it. */
static char *path_join(const char *a, const char *b, const char *c) {
    size_t n = strlen(a) + strlen(b) + strlen(c) + 3;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s%s%s%s%s", a, *b ? "/" : "", b, *c ? "/" : "", c);
    return p;
}

static bool is_directory(const char *path) {
    struct stat st;
    return path != NULL && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void sha256_hex_of(const void *data, size_t n, char hex[65]) {
    gk_sha256 h;
    uint8_t digest[32];
    gk_sha256_init(&h);
    gk_sha256_update(&h, data, n);
    gk_sha256_final(&h, digest);
    gk_sha256_hex(digest, hex);
}

static cJSON *load_json(const char *path) {
    char *text = read_text_file(path);
    if (text == NULL) return NULL;
    cJSON *json = cJSON_Parse(text);
    free(text);
    return json;
}

/* Read nbytes at offset of a file; NULL (and an io error counted) on failure. */
static uint8_t *read_at(const char *path, uint64_t offset, uint64_t nbytes) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "  cannot open %s: %s\n", path, strerror(errno));
        io_errors++;
        return NULL;
    }
    uint8_t *buf = malloc(nbytes ? nbytes : 1);
    ck_assert_ptr_nonnull(buf);
    uint64_t done = 0;
    while (done < nbytes) {
        ssize_t r = pread(fd, buf + done, nbytes - done, (off_t)(offset + done));
        if (r <= 0) break;
        done += (uint64_t)r;
    }
    close(fd);
    if (done != nbytes) {
        fprintf(stderr, "  short read of %s at %llu\n", path, (unsigned long long)offset);
        io_errors++;
        free(buf);
        return NULL;
    }
    return buf;
}

/* Description of one tensor in a manifest. */
typedef struct {
    const char *name;
    const gk_type_info *type;
    const char *type_name;
    uint64_t offset, nbytes, nelements, ne0;
    const char *sha256;     /* of the stored bytes */
    const char *deq_sha256; /* of the reference dequantization, or NULL */
    const cJSON *deq_head;  /* first 32 reference values, or NULL */
} tensor_desc;

static bool describe_tensor(const cJSON *t, tensor_desc *d) {
    memset(d, 0, sizeof *d);
    d->name = t->string;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(t, "type");
    const cJSON *ne = cJSON_GetObjectItemCaseSensitive(t, "ne");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(t, "offset");
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(t, "nbytes");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(t, "sha256");
    if (!cJSON_IsString(type) || !cJSON_IsArray(ne) || !cJSON_IsNumber(off) ||
        !cJSON_IsNumber(nb) || !cJSON_IsString(sha))
        return false;
    d->type_name = type->valuestring;
    d->type = gk_type_lookup(type->valuestring);
    d->offset = (uint64_t)off->valuedouble;
    d->nbytes = (uint64_t)nb->valuedouble;
    d->sha256 = sha->valuestring;
    d->nelements = 1;
    const cJSON *dim;
    int i = 0;
    cJSON_ArrayForEach(dim, ne) {
        if (i++ == 0) d->ne0 = (uint64_t)dim->valuedouble;
        d->nelements *= (uint64_t)dim->valuedouble;
    }
    const cJSON *deq = cJSON_GetObjectItemCaseSensitive(t, "deq_f32_sha256");
    if (cJSON_IsString(deq)) d->deq_sha256 = deq->valuestring;
    const cJSON *head = cJSON_GetObjectItemCaseSensitive(t, "deq_f32_head");
    if (cJSON_IsArray(head)) d->deq_head = head;
    return d->type != NULL;
}

/* Count and (for the first few) explain a mismatch. */
static void note_mismatch(int kind, const char *file, const tensor_desc *t, const char *detail) {
    tallies[t->type->id][kind].mismatched++;
    if (reported_mismatches++ < 40)
        fprintf(stderr, "  MISMATCH %-10s %-8s %s %s%s%s\n", kind_names[kind], t->type->name,
                file, t->name, detail ? ": " : "", detail ? detail : "");
}

/* ---- the F32 sources ----------------------------------------------------------------- */

typedef struct {
    const cJSON *tensors; /* manifest tensors of syn1-f32.gguf */
    char *path;
} f32_source;

/* The F32 data of tensor `name` of syn1-f32.gguf (checked against its hash), or NULL. */
static float *read_source(const f32_source *src, const char *name, uint64_t nelements) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(src->tensors, name);
    tensor_desc d;
    if (t == NULL || !describe_tensor(t, &d) || d.type->id != GK_TYPE_F32 ||
        d.nelements != nelements) {
        fprintf(stderr, "  no F32 source for %s\n", name);
        io_errors++;
        return NULL;
    }
    uint8_t *bytes = read_at(src->path, d.offset, d.nbytes);
    if (bytes == NULL) return NULL;
    char hex[65];
    sha256_hex_of(bytes, d.nbytes, hex);
    if (strcmp(hex, d.sha256) != 0) {
        fprintf(stderr, "  source %s does not match its manifest hash\n", name);
        io_errors++;
        free(bytes);
        return NULL;
    }
    return (float *)bytes;
}

/* ---- the importance matrix ------------------------------------------------------------ */

/* Read llama-imatrix's binary format: i32 count, then per entry i32 name length,
 * name, i32 ncall, i32 nval, nval floats (sums, divided here by ncall as
 * llama-quantize does). */
static bool load_imatrix(const char *path, imatrix_data *out) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (f == NULL) return false;
    int32_t count;
    bool ok = fread(&count, 4, 1, f) == 1 && count >= 0 && count < 100000;
    if (ok) out->entries = calloc((size_t)count, sizeof *out->entries);
    for (int32_t i = 0; ok && i < count; i++) {
        int32_t len, ncall, nval;
        ok = fread(&len, 4, 1, f) == 1 && len > 0 && len < 4096;
        if (!ok) break;
        imatrix_entry *e = &out->entries[i];
        e->name = calloc((size_t)len + 1, 1);
        ok = fread(e->name, 1, (size_t)len, f) == (size_t)len && fread(&ncall, 4, 1, f) == 1 &&
             fread(&nval, 4, 1, f) == 1 && nval > 0 && nval < (1 << 24);
        if (!ok) break;
        e->values = malloc((size_t)nval * sizeof(float));
        ok = fread(e->values, sizeof(float), (size_t)nval, f) == (size_t)nval;
        if (!ok) break;
        if (ncall > 0)
            for (int32_t k = 0; k < nval; k++) e->values[k] /= ncall;
        e->n = nval;
        out->count = i + 1;
    }
    fclose(f);
    return ok;
}

/* The GGUF-format matrix, through the library's reader (gk_imatrix_load). */
static bool load_imatrix_gguf(const char *path, imatrix_data *out) {
    memset(out, 0, sizeof *out);
    gk_imatrix *g = NULL;
    gk_error err;
    if (gk_imatrix_load(path, &g, &err) != GK_OK) {
        fprintf(stderr, "  %s\n", err.message);
        return false;
    }
    size_t n = gk_imatrix_count(g);
    out->entries = calloc(n, sizeof *out->entries);
    for (size_t i = 0; i < n; i++) {
        const float *v = NULL;
        size_t nval = 0;
        imatrix_entry *e = &out->entries[i];
        e->name = strdup(gk_imatrix_entry(g, i, &v, &nval));
        e->values = malloc(nval * sizeof(float));
        memcpy(e->values, v, nval * sizeof(float));
        e->n = (int)nval;
        out->count = (int)i + 1;
    }
    gk_imatrix_free(g);
    return true;
}

static const imatrix_entry *find_imatrix(const imatrix_data *im, const char *name) {
    for (int i = 0; i < im->count; i++)
        if (strcmp(im->entries[i].name, name) == 0) return &im->entries[i];
    return NULL;
}

static void free_imatrix(imatrix_data *im) {
    for (int i = 0; i < im->count; i++) {
        free(im->entries[i].name);
        free(im->entries[i].values);
    }
    free(im->entries);
    memset(im, 0, sizeof *im);
}

/* ---- the checks ------------------------------------------------------------------------ */

/* Quantize F32 data (rows of t->ne0) with t's type and compare with t's hash. */
static void check_quantized_hash(int kind, const char *file, const tensor_desc *t,
                                 const float *f32, const float *imatrix) {
    tally *tl = &tallies[t->type->id][kind];
    if (t->type->quantize == NULL) {
        tl->no_kernel++;
        return;
    }
    uint64_t nrows = t->nelements / t->ne0;
    uint64_t row_bytes = gk_type_row_bytes(t->type->id, t->ne0);
    if (row_bytes == 0 || row_bytes * nrows != t->nbytes) {
        note_mismatch(kind, file, t, "geometry disagrees with the manifest");
        return;
    }
    uint8_t *out = calloc(t->nbytes, 1);
    ck_assert_ptr_nonnull(out);
    t->type->quantize(f32, out, (int64_t)nrows, (int64_t)t->ne0, imatrix);
    char hex[65];
    sha256_hex_of(out, t->nbytes, hex);
    if (strcmp(hex, t->sha256) == 0) {
        tl->matched++;
    } else {
        /* say where the first differing block is */
        char detail[160];
        uint8_t *ref = read_at(file, t->offset, t->nbytes);
        if (ref != NULL) {
            uint64_t i = 0;
            while (i < t->nbytes && ref[i] == out[i]) i++;
            snprintf(detail, sizeof detail, "first differing byte %llu (block %llu)",
                     (unsigned long long)i, (unsigned long long)(i / t->type->block_bytes));
            free(ref);
        } else {
            snprintf(detail, sizeof detail, "hash differs");
        }
        note_mismatch(kind, file, t, detail);
    }
    free(out);
}

/* Dequantize the stored tensor bytes into a new F32 buffer, or NULL. */
static float *dequantize_stored(const char *path, const tensor_desc *t) {
    uint8_t *bytes = read_at(path, t->offset, t->nbytes);
    if (bytes == NULL) return NULL;
    char hex[65];
    sha256_hex_of(bytes, t->nbytes, hex);
    if (strcmp(hex, t->sha256) != 0) {
        fprintf(stderr, "  %s %s: stored bytes do not match the manifest hash\n", path, t->name);
        io_errors++;
        free(bytes);
        return NULL;
    }
    float *f32 = malloc(t->nelements * sizeof(float));
    ck_assert_ptr_nonnull(f32);
    t->type->dequantize(bytes, f32, (int64_t)t->nelements);
    free(bytes);
    return f32;
}

static void check_dequantize(const char *path, const tensor_desc *t) {
    tally *tl = &tallies[t->type->id][CHECK_DEQUANT];
    if (t->type->dequantize == NULL) {
        tl->no_kernel++;
        return;
    }
    float *f32 = dequantize_stored(path, t);
    if (f32 == NULL) return;
    char hex[65];
    sha256_hex_of(f32, t->nelements * sizeof(float), hex);
    if (strcmp(hex, t->deq_sha256) == 0) {
        tl->matched++;
    } else {
        char detail[160] = "hash differs";
        if (t->deq_head != NULL) {
            int i = 0;
            const cJSON *v;
            cJSON_ArrayForEach(v, t->deq_head) {
                if ((float)v->valuedouble != f32[i]) {
                    snprintf(detail, sizeof detail, "value %d is %.9g, reference %.9g", i,
                             (double)f32[i], v->valuedouble);
                    break;
                }
                i++;
            }
        }
        note_mismatch(CHECK_DEQUANT, path, t, detail);
    }
    free(f32);
}

/* Is `file` a plain quantization of syn1-f32.gguf (syn1-TYPE.gguf or syn1-preset-P.gguf)? */
static bool is_plain_quantization(const char *file) {
    if (strncmp(file, "syn1-", 5) != 0) return false;
    const char *rest = file + 5;
    const char *dot = strchr(rest, '.');
    if (dot == NULL || strcmp(dot, ".gguf") != 0) return false; /* excludes .to-, .be */
    if (strncmp(rest, "split", 5) == 0) return false;
    if (strncmp(rest, "f32", 3) == 0 || strncmp(rest, "f16", 3) == 0) return false;
    return true;
}

/* syn1-A.to-B.gguf -> "syn1-A.gguf" in `source` (false if file is no chain). */
static bool chain_source(const char *file, char *source, size_t size) {
    const char *to = strstr(file, ".to-");
    if (strncmp(file, "syn1-", 5) != 0 || to == NULL) return false;
    snprintf(source, size, "%.*s.gguf", (int)(to - file), file);
    return true;
}

static void run_quantize_checks(const char *dir, const cJSON *manifest, const f32_source *src,
                                const char *file, const imatrix_data *im) {
    const cJSON *tensors =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(manifest, file), "tensors");
    char *path = path_join(dir, "", file);
    const cJSON *t;
    cJSON_ArrayForEach(t, tensors) {
        tensor_desc d;
        if (!describe_tensor(t, &d)) continue;
        int kind = im ? CHECK_IMATRIX : CHECK_QUANT;
        if (d.type->quantize == NULL) {
            tallies[d.type->id][kind].no_kernel++;
            continue;
        }
        const float *weights = NULL;
        if (im != NULL) {
            const imatrix_entry *e = find_imatrix(im, d.name);
            if (e != NULL && (uint64_t)e->n == d.ne0) weights = e->values;
        }
        float *f32 = read_source(src, d.name, d.nelements);
        if (f32 == NULL) continue;
        check_quantized_hash(kind, path, &d, f32, weights);
        free(f32);
    }
    free(path);
}

static void run_chain_checks(const char *dir, const cJSON *manifest, const char *file) {
    char source_file[256];
    if (!chain_source(file, source_file, sizeof source_file)) return;
    const cJSON *tensors =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(manifest, file), "tensors");
    const cJSON *source_tensors = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(manifest, source_file), "tensors");
    if (source_tensors == NULL) {
        fprintf(stderr, "  chain %s: no manifest entry for %s\n", file, source_file);
        io_errors++;
        return;
    }
    char *path = path_join(dir, "", file);
    char *source_path = path_join(dir, "", source_file);
    const cJSON *t;
    cJSON_ArrayForEach(t, tensors) {
        tensor_desc d, s;
        if (!describe_tensor(t, &d)) continue;
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(source_tensors, d.name);
        if (st == NULL || !describe_tensor(st, &s) || s.nelements != d.nelements) {
            io_errors++;
            continue;
        }
        if (d.type->quantize == NULL) {
            tallies[d.type->id][CHECK_CHAIN].no_kernel++;
            continue;
        }
        if (s.type->dequantize == NULL) {
            tallies[s.type->id][CHECK_CHAIN].no_kernel++;
            continue;
        }
        float *f32 = dequantize_stored(source_path, &s);
        if (f32 == NULL) continue;
        check_quantized_hash(CHECK_CHAIN, path, &d, f32, NULL);
        free(f32);
    }
    free(path);
    free(source_path);
}

static void run_dequantize_checks(const char *dir, const cJSON *manifest) {
    const cJSON *file;
    cJSON_ArrayForEach(file, manifest) {
        const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(file, "tensors");
        char *path = path_join(dir, "", file->string);
        const cJSON *t;
        cJSON_ArrayForEach(t, tensors) {
            tensor_desc d;
            if (!describe_tensor(t, &d) || d.deq_sha256 == NULL) continue;
            if (d.type->id == GK_TYPE_F32) continue; /* a copy: says nothing */
            check_dequantize(path, &d);
        }
        free(path);
    }
}

static void print_summary(void) {
    fprintf(stderr, "\n  golden kernel parity (tensors matched/mismatched; '-' none; n/k = no kernel)\n");
    fprintf(stderr, "  %-8s", "type");
    for (int k = 0; k < CHECK_KINDS; k++) fprintf(stderr, " %14s", kind_names[k]);
    fprintf(stderr, "\n");
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *ti = gk_type_get(id);
        if (ti == NULL) continue;
        bool any = false;
        for (int k = 0; k < CHECK_KINDS; k++) {
            const tally *tl = &tallies[id][k];
            if (tl->matched || tl->mismatched || tl->no_kernel) any = true;
        }
        if (!any) continue;
        fprintf(stderr, "  %-8s", ti->name);
        for (int k = 0; k < CHECK_KINDS; k++) {
            const tally *tl = &tallies[id][k];
            char cell[48];
            if (tl->matched || tl->mismatched)
                snprintf(cell, sizeof cell, "%u/%u%s", tl->matched, tl->mismatched,
                         tl->mismatched ? " FAIL" : "");
            else if (tl->no_kernel)
                snprintf(cell, sizeof cell, "n/k(%u)", tl->no_kernel);
            else
                snprintf(cell, sizeof cell, "-");
            fprintf(stderr, " %14s", cell);
        }
        fprintf(stderr, "\n");
    }
    fprintf(stderr, "  io errors: %u\n\n", io_errors);
}

START_TEST(golden_kernel_parity) {
    const char *golden = getenv("GGUFKIT_GOLDEN");
    char *syn1_dir = golden ? path_join(golden, "syn1", "") : NULL;
    if (golden == NULL || !is_directory(syn1_dir)) {
        fprintf(stderr, "\n*** SKIPPED: golden parity (no golden data at %s) ***\n\n",
                golden ? golden : "(GGUFKIT_GOLDEN unset)");
        free(syn1_dir);
        return;
    }
    char *imat_dir = path_join(golden, "imatrix", "");
    char *manifest_path = path_join(golden, "syn1", "MANIFEST.json");
    char *imat_manifest_path = path_join(golden, "imatrix", "MANIFEST.json");
    cJSON *manifest = load_json(manifest_path);
    ck_assert_msg(manifest != NULL, "cannot parse %s", manifest_path);
    cJSON *imat_manifest = load_json(imat_manifest_path);

    f32_source src;
    src.tensors = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(manifest, "syn1-f32.gguf"), "tensors");
    ck_assert_msg(src.tensors != NULL, "manifest has no syn1-f32.gguf");
    src.path = path_join(golden, "syn1", "syn1-f32.gguf");

    const cJSON *file;
    cJSON_ArrayForEach(file, manifest) {
        if (is_plain_quantization(file->string))
            run_quantize_checks(syn1_dir, manifest, &src, file->string, NULL);
        run_chain_checks(syn1_dir, manifest, file->string);
    }
    run_dequantize_checks(syn1_dir, manifest);

    if (imat_manifest != NULL) {
        imatrix_data im, gim;
        char *imatrix_path = path_join(golden, "imatrix", "syn1.imatrix");
        char *gimatrix_path = path_join(golden, "imatrix", "syn1.imatrix.gguf");
        bool have_legacy = load_imatrix(imatrix_path, &im);
        bool have_gguf = load_imatrix_gguf(gimatrix_path, &gim);
        if (!have_legacy) fprintf(stderr, "  cannot read %s\n", imatrix_path);
        if (!have_gguf) fprintf(stderr, "  cannot read %s\n", gimatrix_path);
        if (have_legacy && have_gguf) {
            /* each file with the matrix it was made with; the matrix file itself
             * holds no quantized tensors */
            cJSON_ArrayForEach(file, imat_manifest) {
                if (strncmp(file->string, "syn1-imat-", 10) == 0)
                    run_quantize_checks(imat_dir, imat_manifest, &src, file->string, &im);
                else if (strncmp(file->string, "syn1-gimat-", 11) == 0)
                    run_quantize_checks(imat_dir, imat_manifest, &src, file->string, &gim);
            }
        } else {
            io_errors++;
        }
        free_imatrix(&im);
        free_imatrix(&gim);
        free(imatrix_path);
        free(gimatrix_path);
        run_dequantize_checks(imat_dir, imat_manifest);
    } else {
        fprintf(stderr, "  (no imatrix/MANIFEST.json: imatrix checks not run)\n");
    }

    print_summary();
    unsigned total_mismatch = 0, total_matched = 0;
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++)
        for (int k = 0; k < CHECK_KINDS; k++) {
            total_mismatch += tallies[id][k].mismatched;
            total_matched += tallies[id][k].matched;
        }
    cJSON_Delete(manifest);
    cJSON_Delete(imat_manifest);
    free(src.path);
    free(manifest_path);
    free(imat_manifest_path);
    free(syn1_dir);
    free(imat_dir);
    ck_assert_msg(io_errors == 0, "%u golden files or tensors could not be read", io_errors);
    ck_assert_msg(total_mismatch == 0, "%u tensors differ from the golden reference",
                  total_mismatch);
    ck_assert_msg(total_matched > 0, "no tensor was checked against the golden data");
}
END_TEST

static Suite *golden_suite(void) {
    Suite *s = suite_create("kernels_golden");
    TCase *tc = tcase_create("parity");
    tcase_add_test(tc, golden_kernel_parity);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    /* Under a GGUFKIT_KERNELS level the processor lacks, the level would not run. */
    const char *kernels = gk_kernels_name();
    printf("kernels: %s\n", kernels);
    if (strchr(kernels, '(') != NULL) {
        printf("SKIPPED: GGUFKIT_KERNELS=%s cannot run here: %s\n", getenv("GGUFKIT_KERNELS"), kernels);
        return 77;
    }
    SRunner *sr = srunner_create(golden_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
