/*
 * diff_facts.c - the small facts both halves of `ggufkit diff`'s report use
 * (cmd/diff.c's text, cmd/diff_json.c's JSON): the ids of verdicts and tensor
 * statuses, and an input's tensor bytes and bits per weight. Kept apart so that
 * the two report files call into this one and never into each other.
 */
#include "diff_report.h"

const char *diff_verdict_id(gk_diff_verdict v) {
    return v == GK_DIFF_IDENTICAL ? "identical" : v == GK_DIFF_SAME_WEIGHTS ? "same-weights" : "differs";
}

const char *diff_kind_id(gk_tensor_diff_kind k) {
    static const char *const ids[] = { "identical", "same-values", "different", "shape-differs",
                                       "only-in-reference", "only-in-other" };
    return ids[k];
}

bool diff_has_numbers(const gk_tensor_diff *d) {
    return d->kind == GK_TDIFF_IDENTICAL || d->kind == GK_TDIFF_SAME_VALUES || d->kind == GK_TDIFF_DIFFERENT;
}

uint64_t diff_tensor_bytes(const gk_model *m) {
    uint64_t n = 0;
    for (size_t i = 0; i < gk_tensor_count(m); i++) n += gk_tensor_at(m, i)->nbytes;
    return n;
}

static uint64_t tensor_elems(const gk_model *m) {
    uint64_t n = 0;
    for (size_t i = 0; i < gk_tensor_count(m); i++) {
        const gk_tensor *t = gk_tensor_at(m, i);
        n += t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    }
    return n;
}

double diff_bits_per_weight(const gk_diff_input *in) {
    uint64_t e = tensor_elems(gk_diff_input_model(in));
    return e ? 8.0 * (double)diff_tensor_bytes(gk_diff_input_model(in)) / (double)e : 0;
}
