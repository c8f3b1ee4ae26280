/*
 * policy.c - llama-quantize's refusals about the importance matrix, as errors:
 * the very low-bit tensors a given matrix holds no weights for (which it
 * refuses tensor by tensor while writing; here all of them up front, named),
 * and, as advice, the targets whose presets want a matrix for most tensors.
 */
#include <stdio.h>
#include <string.h>

#include "ggufkit.h"
#include "quant/mix.h"

bool gk_quant_target_demands_imatrix(const gk_quant_target *t) {
    static const char *const names[] = { "IQ2_XS", "IQ2_XXS", "IQ2_S", "IQ2_M", "Q2_K_S", "IQ1_S", "IQ1_M",
                                         "IQ3_XXS", "IQ3_XS" };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(t->name, names[k]) == 0) return true;
    return false;
}

gk_status gk_quant_check_imatrix_coverage(const gk_quant_target *target, const gk_model *const *models,
                                          const gk_quant_plan *plan, const gk_imatrix *im, char *text,
                                          size_t text_size, gk_error *err) {
    if (text && text_size) text[0] = '\0';
    size_t missing = 0;
    char names[1024];
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < plan->n_entries; i++) {
        const gk_quant_entry *e = &plan->entries[i];
        const gk_tensor *t = gk_tensor_at(models[e->src_input], e->src_tensor);
        /* the tensors the release refuses without weights, and those (the embeddings and
         * output.weight it exempts) whose quantizer cannot work without them: it aborts there */
        if (e->to == e->from || !(gk_quant_imatrix_required(e->to, target->ftype, t->name.ptr) ||
                                  gk_quant_weights_mandatory(e->to)))
            continue;
        if (im != NULL && gk_imatrix_for_tensor(im, t) != NULL) continue;
        if (missing++ < 12 && used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s (%s)", used ? ", " : "",
                                     t->name.ptr, gk_type_get(e->to)->name);
    }
    if (missing == 0) return GK_OK;
    char whole[sizeof names + 128];
    snprintf(whole, sizeof whole, "missing importance matrix for %zu tensor%s in a very low-bit quantization: %s%s",
             missing, missing == 1 ? "" : "s", names, missing > 12 ? ", ..." : "");
    if (text && text_size) snprintf(text, text_size, "%s", whole);
    return gk_error_set(err, GK_E_UNSUPPORTED, -1, "%s", whole);   /* cut to GK_MESSAGE_MAX */
}
