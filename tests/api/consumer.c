/*
 * consumer.c - a program of the kind a user writes against the installed
 * library: built by tests/api_install.sh from the installed ggufkit.h and
 * ggufkit.pc alone (stable tier only, no GGUFKIT_EXPERIMENTAL), it reads a
 * model, decodes an F16 tensor, edits the metadata and rewrites the file, and
 * checks the version and the option-struct size check.
 *
 * usage: consumer MODEL.gguf OUT.gguf   (MODEL: testdata/good/quantized.gguf)
 * Prints one "key: value" line per fact; exits 1 on the first failed check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ggufkit.h>

#ifdef GGUFKIT_EXPERIMENTAL
#error "the consumer is built from the stable tier only"
#endif

static int failed(const char *what, const gk_error *err) {
    fprintf(stderr, "consumer: %s: %s (%s)\n", what, err ? err->message : "", err ? gk_status_name(err->code) : "");
    return 1;
}

/* Prints the version facts; @return : false when library and header disagree. */
static bool show_version(void) {
    printf("version: %s\n", gk_version());
    printf("header version: %s\n", GK_VERSION_STRING);
    printf("version number: %u\n", gk_version_number());
    return strcmp(gk_version(), GK_VERSION_STRING) == 0 && gk_version_number() == GK_VERSION_NUMBER;
}

/* Prints every pair: key, type label, and for strings the value. */
static void show_metadata(const gk_model *m) {
    for (size_t i = 0; i < gk_kv_count(m); i++) {
        const gk_kv *kv = gk_kv_at(m, i);
        char label[64];
        gk_value_type_label(&kv->value, GK_LABEL_NAME, label, sizeof label);
        printf("kv %s: %s (%s, %zu bytes)", kv->key.ptr, label, gk_vtype_short_name(kv->value.type),
               gk_vtype_size(kv->value.type));
        if (kv->value.type == GK_V_STR && gk_utf8_valid(kv->value.s.ptr, kv->value.s.len))
            printf(" \"%s\"", kv->value.s.ptr);
        printf("\n");
    }
}

/* Decodes the F16 tensor z.weight through gk_file_tensor_read. */
static int show_f16(gk_file *f) {
    gk_error err;
    const gk_model *m = gk_file_model(f);
    int64_t i = gk_tensor_find(m, "z.weight");
    if (i < 0) return failed("z.weight not found", NULL);
    const gk_tensor *t = gk_tensor_at(m, (size_t)i);
    const gk_type_info *ti = gk_type_get(t->type);
    uint16_t h[4];
    if (t->nbytes != sizeof h || gk_file_tensor_read(f, (size_t)i, 0, h, sizeof h, &err) != GK_OK)
        return failed("reading z.weight", &err);
    printf("tensor z.weight: %s", ti->name);
    for (int k = 0; k < 4; k++) {
        float v = gk_f16_to_f32(h[k]);
        if (gk_f16_from_f32(v) != h[k]) return failed("f16 round trip", NULL);
        printf(" %.9g", v);
    }
    printf("\n");
    return 0;
}

/* Reads the file again from memory and compares the two models' shapes. */
static int show_memory_copy(gk_file *f) {
    gk_error err;
    uint64_t size = gk_file_size(f);
    uint8_t *bytes = malloc(size);
    if (bytes == NULL || gk_file_read(f, 0, bytes, size, &err) != GK_OK) return failed("reading the file", &err);
    gk_file *copy;
    int rc = 0;
    if (gk_open_memory(bytes, size, GK_OPEN_DEFAULT, &copy, &err) != GK_OK) {
        rc = failed("opening from memory", &err);
    } else {
        const gk_model *a = gk_file_model(f), *b = gk_file_model(copy);
        printf("memory copy: %s\n", gk_tensor_count(a) == gk_tensor_count(b) && gk_kv_count(a) == gk_kv_count(b) &&
                                            gk_model_header_size(a) == gk_model_header_size(b) &&
                                            gk_file_header_end(f) == gk_file_header_end(copy)
                                        ? "same"
                                        : "different");
        gk_close(copy);
    }
    free(bytes);
    return rc;
}

/* Edits a copy of the metadata and rewrites the file to out; then an option
 * struct of a size the library does not know must be refused. */
static int edit_and_rewrite(gk_file *f, const char *out) {
    gk_error err;
    gk_model *m = gk_model_clone(gk_file_model(f));
    if (m == NULL) return failed("clone", NULL);
    gk_value v = { .type = GK_V_I32, .i = -7 };
    int rc = 0;
    if (gk_kv_set_str(m, "general.name", "consumer", &err) != GK_OK || gk_kv_set_last(m, "test.count", &v, &err) != GK_OK ||
        gk_kv_rename(m, "test.count", "test.renamed", &err) != GK_OK)
        rc = failed("editing", &err);
    gk_write_opts opts = { GK_OPTS_INIT(gk_write_opts), .threads = 1 };
    if (rc == 0 && gk_rewrite(f, m, out, &opts, &err) != GK_OK) rc = failed("rewriting", &err);
    gk_write_opts bad = { .size = 1 };
    if (rc == 0) {
        gk_status s = gk_rewrite(f, m, out, &bad, &err);
        printf("bad opts size: %s\n", s == GK_E_ARG ? "refused" : gk_status_name(s));
    }
    gk_model_free(m);
    return rc;
}

/* Opens the rewritten file and prints what the edit left. */
static int check_rewritten(const char *out) {
    gk_error err;
    gk_file *f;
    if (gk_open(out, GK_OPEN_DEFAULT, &f, &err) != GK_OK) return failed(out, &err);
    const gk_model *m = gk_file_model(f);
    gk_str name = { 0 };
    int64_t count = 0;
    double as_float = 0;
    if (gk_kv_get_str(m, "general.name", &name) != GK_OK || gk_kv_get_int(m, "test.renamed", &count) != GK_OK ||
        gk_kv_get_float(m, "test.renamed", &as_float) != GK_OK) {
        gk_close(f);
        return failed("reading the edit back", NULL);
    }
    printf("rewritten: name=%s renamed=%" PRId64 " as float=%g tensors=%zu\n", name.ptr, count, as_float,
           gk_tensor_count(m));
    gk_close(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: consumer MODEL.gguf OUT.gguf\n");
        return 2;
    }
    if (!show_version()) return failed("gk_version() is not the header's GK_VERSION_STRING", NULL);
    gk_error err;
    gk_file *f;
    if (gk_open(argv[1], GK_OPEN_DEFAULT, &f, &err) != GK_OK) return failed(argv[1], &err);
    const gk_model *m = gk_file_model(f);
    printf("model: v%u, %zu pairs, %zu tensors, retired 4: %s\n", gk_model_version(m), gk_kv_count(m),
           gk_tensor_count(m), gk_type_is_retired(4) ? "yes" : "no");
    show_metadata(m);
    int rc = show_f16(f);
    if (rc == 0) rc = show_memory_copy(f);
    if (rc == 0) rc = edit_and_rewrite(f, argv[2]);
    gk_close(f);
    if (rc == 0) rc = check_rewritten(argv[2]);
    return rc;
}
