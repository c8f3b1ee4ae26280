/*
 * check.c - the data check of every tensor type (gk_type_info.check, used by
 * verify --data): values the format cannot mean.
 *
 * Floating-point types: every value finite. Block formats: every scale field
 * finite, as ggml's own row validation asks; the fields and their offsets are
 * those of the block layouts (ggml-common.h) the kernels use:
 *   f16 d at 0                      Q1_0 Q2_0 Q4_0 Q5_0 Q8_0 IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S IQ1_S IQ4_NL IQ4_XS
 *   f16 d at 0, m / s / dmin at 2   Q4_1 Q5_1 Q8_1 Q4_K Q5_K
 *   f16 d, dmin at 80, 82           Q2_K            f16 d at 108 Q3_K, 208 Q6_K
 *   f16 d at 52 TQ1_0, 64 TQ2_0     f32 d at 0 Q8_K
 *   IQ1_M: the f16 scale is spread over the top nibbles of the four u16 scales at 48
 * Where the format bounds a field, its range too: the E8M0 scale of MXFP4 (byte
 * 0) cannot be 0xff (NaN); the four UE4M3 scales of NVFP4 (bytes 0-3) cannot be
 * 0x7f (NaN) nor have bit 7 set (the format is unsigned: ggml never writes it
 * and decodes such a byte as if the bit were clear); and each of Q8_K's 16 bsums
 * (i16 at 260) must be the sum of its 16 quants (i8 at 4).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "types/kernels.h"
#include "util/byteorder.h"

static bool report(gk_block_fault_fn fn, void *ctx, int64_t block, uint32_t byte, const char *field,
                   double value, const char *why) {
    gk_block_fault f = { .block = block, .byte = byte, .value = value };
    snprintf(f.field, sizeof f.field, "%s", field);
    snprintf(f.why, sizeof f.why, "%s", why);
    return fn(ctx, &f);
}

/* ---- plain floating-point values ----------------------------------------- */

bool gk_check_f32(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    const uint8_t *p = blocks;
    for (int64_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, p + 4 * i, 4);
        if (!isfinite(v) && !report(fn, ctx, i, 0, "value", v, "not finite")) return false;
    }
    return true;
}

bool gk_check_f64(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    const uint8_t *p = blocks;
    for (int64_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, p + 8 * i, 8);
        if (!isfinite(v) && !report(fn, ctx, i, 0, "value", v, "not finite")) return false;
    }
    return true;
}

/* Exponent all ones: Inf or NaN, in binary16 (mask 0x7c00) and bfloat16 (0x7f80). */
static bool check_half_run(const uint8_t *p, int64_t n, uint16_t exp_mask, bool bf16, gk_block_fault_fn fn,
                           void *ctx) {
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = gk_load_le16(p + 2 * i);
        if ((h & exp_mask) != exp_mask) continue;
        double v = bf16 ? gk_bf16_to_fp32(h) : gk_fp16_to_fp32(h);
        if (!report(fn, ctx, i, 0, "value", v, "not finite")) return false;
    }
    return true;
}

bool gk_check_f16(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    return check_half_run(blocks, n, 0x7c00, false, fn, ctx);
}

bool gk_check_bf16(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    return check_half_run(blocks, n, 0x7f80, true, fn, ctx);
}

/* ---- block formats: f16 scale fields at fixed offsets ---------------------- */

typedef struct scale_field {
    uint16_t offset;
    const char *name;
} scale_field;

static bool check_f16_fields(const uint8_t *p, int64_t n, size_t block_bytes, const scale_field *fields,
                             int n_fields, gk_block_fault_fn fn, void *ctx) {
    for (int64_t b = 0; b < n; b++, p += block_bytes)
        for (int k = 0; k < n_fields; k++) {
            uint16_t h = gk_load_le16(p + fields[k].offset);
            if ((h & 0x7c00) == 0x7c00 &&
                !report(fn, ctx, b, fields[k].offset, fields[k].name, gk_fp16_to_fp32(h), "not finite"))
                return false;
        }
    return true;
}

#define F16_SCALES(t, BYTES, ...)                                                              \
    bool gk_check_##t(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {        \
        static const scale_field fields[] = { __VA_ARGS__ };                                   \
        return check_f16_fields(blocks, n, BYTES, fields, (int)(sizeof fields / sizeof fields[0]), fn, ctx); \
    }

F16_SCALES(q1_0, 18, { 0, "d" })
F16_SCALES(q2_0, 18, { 0, "d" })
F16_SCALES(q4_0, 18, { 0, "d" })
F16_SCALES(q4_1, 20, { 0, "d" }, { 2, "m" })
F16_SCALES(q5_0, 22, { 0, "d" })
F16_SCALES(q5_1, 24, { 0, "d" }, { 2, "m" })
F16_SCALES(q8_0, 34, { 0, "d" })
F16_SCALES(q8_1, 36, { 0, "d" }, { 2, "s" })
F16_SCALES(q2_K, 84, { 80, "d" }, { 82, "dmin" })
F16_SCALES(q3_K, 110, { 108, "d" })
F16_SCALES(q4_K, 144, { 0, "d" }, { 2, "dmin" })
F16_SCALES(q5_K, 176, { 0, "d" }, { 2, "dmin" })
F16_SCALES(q6_K, 210, { 208, "d" })
F16_SCALES(iq2_xxs, 66, { 0, "d" })
F16_SCALES(iq2_xs, 74, { 0, "d" })
F16_SCALES(iq2_s, 82, { 0, "d" })
F16_SCALES(iq3_xxs, 98, { 0, "d" })
F16_SCALES(iq3_s, 110, { 0, "d" })
F16_SCALES(iq1_s, 50, { 0, "d" })
F16_SCALES(iq4_nl, 18, { 0, "d" })
F16_SCALES(iq4_xs, 136, { 0, "d" })
F16_SCALES(tq1_0, 54, { 52, "d" })
F16_SCALES(tq2_0, 66, { 64, "d" })

/* ---- the formats with other scale fields ------------------------------------- */

bool gk_check_iq1_m(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    const uint8_t *p = blocks;
    for (int64_t b = 0; b < n; b++, p += 56) {
        const uint8_t *sc = p + 48;
        uint16_t h = (uint16_t)((gk_load_le16(sc) >> 12) | ((gk_load_le16(sc + 2) >> 8) & 0x00f0) |
                                ((gk_load_le16(sc + 4) >> 4) & 0x0f00) | (gk_load_le16(sc + 6) & 0xf000));
        if ((h & 0x7c00) == 0x7c00 && !report(fn, ctx, b, 48, "d", gk_fp16_to_fp32(h), "not finite"))
            return false;
    }
    return true;
}

bool gk_check_mxfp4(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    const uint8_t *p = blocks;
    for (int64_t b = 0; b < n; b++, p += 17)
        if (p[0] == 0xff && !report(fn, ctx, b, 0, "e", NAN, "0xff is NaN in E8M0 (out of range)")) return false;
    return true;
}

bool gk_check_nvfp4(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    static const char *const names[4] = { "d[0]", "d[1]", "d[2]", "d[3]" };
    const uint8_t *p = blocks;
    for (int64_t b = 0; b < n; b++, p += 36)
        for (uint32_t s = 0; s < 4; s++) {
            const uint8_t u = p[s];
            if (u == 0x7f && !report(fn, ctx, b, s, names[s], NAN, "0x7f is NaN in UE4M3"))
                return false;
            if ((u & 0x80) && !report(fn, ctx, b, s, names[s], u, "sign bit set in an unsigned UE4M3 scale"))
                return false;
        }
    return true;
}

bool gk_check_q8_K(const void *blocks, int64_t n, gk_block_fault_fn fn, void *ctx) {
    const uint8_t *p = blocks;
    for (int64_t b = 0; b < n; b++, p += 292) {
        float d;
        memcpy(&d, p, 4);
        if (!isfinite(d) && !report(fn, ctx, b, 0, "d", d, "not finite")) return false;
        for (int j = 0; j < 16; j++) {
            int sum = 0;
            for (int k = 0; k < 16; k++) sum += (int8_t)p[4 + 16 * j + k];
            int16_t bs;
            memcpy(&bs, p + 260 + 2 * j, 2);
            if (bs == sum) continue;
            char field[24], why[64];
            snprintf(field, sizeof field, "bsums[%d]", j);
            snprintf(why, sizeof why, "not the sum of its 16 quants (%d)", sum);
            if (!report(fn, ctx, b, (uint32_t)(260 + 2 * j), field, bs, why)) return false;
        }
    }
    return true;
}
