/*
 * quantize.c - `ggufkit quantize`: converts a model's eligible tensors to a
 * quantization type, as llama-quantize does, streamed through worker threads.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

static const char *const usage =
    "usage: ggufkit quantize [options] IN OUT TYPE [THREADS]\n\n"
    "Quantizes IN's eligible tensors (names ending in 'weight', 2+ dimensions, not\n"
    "norms) to TYPE and writes OUT, laid out as llama-quantize lays it out.\n"
    "TYPE is a llama-quantize name or number (Q4_0, q8_0, Q4_K_M, 15, F16, COPY ...).\n"
    "  --pure                     every eligible tensor gets TYPE's base type\n"
    "  --allow-requantize         accept inputs that are already quantized\n"
    "  --no-fallback              refuse rows that are not whole blocks instead of\n"
    "                             falling back to a compatible type\n"
    "  --leave-output-tensor      keep output.weight unchanged\n"
    "  --output-tensor-type T     type for output.weight\n"
    "  --token-embedding-type T   type for token_embd.weight\n"
    "  --threads N                worker threads (default: all cores)\n"
    "  --dry-run                  print the per-tensor plan and the size; write nothing\n"
    "  --force                    replace OUT if it exists\n"
    "  --list-types               print the accepted TYPE names\n";

static bool progress_cb(void *ctx, uint64_t done, uint64_t total) {
    cmd_progress *p = ctx;
    p->total = total;
    cmd_progress_update(p, done);
    return true;
}

static int parse_tensor_type(const char *s, int32_t *out) {
    const gk_type_info *t = gk_type_lookup(s);
    if (t == NULL) return cmd_usage_error("quantize", "unknown tensor type '%s'", s);
    *out = (int32_t)t->id;
    return GK_EXIT_OK;
}

static void print_plan(const gk_model *in, const gk_quant_plan *plan) {
    const gk_model *out = plan->out;
    uint64_t before = 0, after = 0;
    printf("%-40s %-8s    %-8s %14s %14s  %s\n", "tensor", "from", "to", "bytes in", "bytes out", "note");
    for (size_t i = 0; i < plan->n_entries; i++) {
        const gk_quant_entry *e = &plan->entries[i];
        const gk_tensor *ti = gk_tensor_at(in, e->src_tensor), *to = gk_tensor_at(out, i);
        before += ti->nbytes;
        after += to->nbytes;
        const char *note = e->to != e->wanted ? "fallback" : e->to == e->from ? "copy" : "";
        printf("%-40s %-8s -> %-8s %14llu %14llu  %s", ti->name.ptr, gk_type_get(e->from)->name,
               gk_type_get(e->to)->name, (unsigned long long)ti->nbytes, (unsigned long long)to->nbytes, note);
        if (e->to != e->wanted) printf(" (%s wanted)", gk_type_get(e->wanted)->name);
        putchar('\n');
    }
    printf("\n%zu tensors, %zu converted, %zu fallbacks; tensor data %.2f MiB -> %.2f MiB\n",
           plan->n_entries, plan->n_converted, plan->n_fallbacks, before / 1048576.0, after / 1048576.0);
}

int cmd_quantize(int argc, char **argv) {
    gk_quant_opts qo = { .output_type = -1, .token_embd_type = -1 };
    uint64_t threads = 0;
    bool dry_run = false, force = false;
    const char *pos[4];
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (cmd_is_help(a)) { fputs(usage, stdout); return GK_EXIT_OK; }
        if (strcmp(a, "--list-types") == 0) {
            for (size_t k = 0; gk_quant_target_at(k); k++) {
                const gk_quant_target *t = gk_quant_target_at(k);
                printf("%-8s %2u  %s\n", t->name, t->ftype, t->is_copy ? "copy tensors unchanged" : gk_type_get(t->base_type)->name);
            }
            return GK_EXIT_OK;
        }
        if (strcmp(a, "--pure") == 0) qo.pure = true;
        else if (strcmp(a, "--allow-requantize") == 0) qo.allow_requantize = true;
        else if (strcmp(a, "--no-fallback") == 0) qo.no_fallback = true;
        else if (strcmp(a, "--leave-output-tensor") == 0) qo.leave_output = true;
        else if (strcmp(a, "--dry-run") == 0) dry_run = true;
        else if (strcmp(a, "--force") == 0) force = true;
        else if (strcmp(a, "--output-tensor-type") == 0 || strcmp(a, "--token-embedding-type") == 0) {
            if (i + 1 >= argc) return cmd_usage_error("quantize", "%s needs a type", a);
            int32_t *dst = a[2] == 'o' ? &qo.output_type : &qo.token_embd_type;
            if ((rc = parse_tensor_type(argv[++i], dst)) != GK_EXIT_OK) return rc;
        } else if (strcmp(a, "--threads") == 0 || strcmp(a, "-t") == 0) {
            if (i + 1 >= argc || !cmd_parse_u64(argv[++i], &threads) || threads == 0 || threads > 64)
                return cmd_usage_error("quantize", "--threads needs a number from 1 to 64");
        } else if (a[0] == '-' && a[1] != '\0') {
            return cmd_usage_error("quantize", "unknown option '%s'", a);
        } else if (n_pos < 4) {
            pos[n_pos++] = a;
        } else {
            return cmd_usage_error("quantize", "too many arguments");
        }
    }
    if (n_pos < 3) return cmd_usage_error("quantize", "need IN OUT TYPE");
    if (n_pos == 4 && (!cmd_parse_u64(pos[3], &threads) || threads == 0 || threads > 64))
        return cmd_usage_error("quantize", "THREADS must be a number from 1 to 64");
    if (qo.leave_output && qo.output_type >= 0)
        return cmd_usage_error("quantize", "--leave-output-tensor and --output-tensor-type conflict");
    qo.target = gk_quant_target_lookup(pos[2]);
    if (qo.target == NULL)
        return cmd_usage_error("quantize", "unknown type '%s' (see --list-types)", pos[2]);

    gk_file *in;
    gk_error err;
    if (gk_open(pos[0], GK_OPEN_DEFAULT, &in, &err) != GK_OK) return cmd_report(pos[0], &err);
    gk_quant_plan plan;
    if (gk_quant_plan_build(gk_file_model(in), &qo, &plan, &err) != GK_OK) {
        gk_close(in);
        return cmd_report(pos[0], &err);
    }
    int rc = GK_EXIT_OK;
    if (dry_run) {
        print_plan(gk_file_model(in), &plan);
    } else {
        if (plan.n_requantized > 0)
            fprintf(stderr, "ggufkit quantize: warning: requantizing %zu already-quantized tensors; "
                            "quality will be lower than quantizing from F32/F16\n", plan.n_requantized);
        for (size_t i = 0; i < plan.n_entries; i++) {
            const gk_quant_entry *e = &plan.entries[i];
            if (e->to != e->wanted)
                fprintf(stderr, "ggufkit quantize: %s: row length not a multiple of %s's block, using %s\n",
                        gk_tensor_at(plan.out, i)->name.ptr, gk_type_get(e->wanted)->name,
                        gk_type_get(e->to)->name);
        }
        gk_step *steps = calloc(plan.n_entries + 1, sizeof *steps);
        if (steps == NULL) {
            gk_error_set(&err, GK_E_NOMEM, -1, "out of memory");
            rc = cmd_report(pos[1], &err);
        } else {
            for (size_t i = 0; i < plan.n_entries; i++) steps[i] = (gk_step){ in, plan.entries[i].src_tensor, NULL };
            cmd_progress bar;
            cmd_progress_start(&bar, "quantize", 0);
            gk_write_opts wo = { .sink_flags = force ? GK_SINK_OVERWRITE : 0, .pad_end = true,
                                 .threads = (int)threads, .progress = progress_cb, .progress_ctx = &bar };
            gk_status st = gk_write_model(pos[1], plan.out, steps, &wo, &err);
            cmd_progress_finish(&bar);
            if (st != GK_OK) rc = cmd_report(pos[1], &err);
            free(steps);
        }
    }
    gk_quant_plan_free(&plan);
    gk_close(in);
    return rc;
}
