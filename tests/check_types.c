/*
 * check_types.c - unit tests of the type table and of the plain-float, legacy,
 * ternary, MXFP4, NVFP4, Q1_0 and Q2_0 kernels (no golden data needed).
 *
 * Covers: fp16/bf16 rounding of hand-picked bit patterns (ties, subnormals,
 * overflow, NaN/Inf as ggml), hand-computed blocks, all-zero / constant / huge /
 * tiny blocks, quantize->dequantize relative RMS error bounds, one-block rows that
 * must not write past their block, byteswap placement and self-inverse, and
 * table completeness (names, geometry, kernels; missing kernels listed by name).
 * Set GGUFKIT_ALLOW_MISSING_KERNELS=1 to report missing kernels without failing.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"
#include "types/fp16.h"
#include "types/fp4.h"

/* ---- helpers ---------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static double uniform01(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

/* Deterministic standard normal values. */
static void fill_gaussian(float *x, int n, float scale) {
    for (int i = 0; i < n; i++)
        x[i] = scale * (float)(sqrt(-2 * log(uniform01())) * cos(6.283185307179586 * uniform01()));
}

static const gk_type_info *type_of(uint32_t id) {
    const gk_type_info *t = gk_type_get(id);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* Quantize one block of x with type id (no imatrix) into a block-sized buffer. */
static void quantize_block(uint32_t id, const float *x, uint8_t *block) {
    const gk_type_info *t = type_of(id);
    ck_assert_ptr_nonnull(t->quantize);
    t->quantize(x, block, 1, t->block_elems, NULL);
}

static void dequantize_block(uint32_t id, const uint8_t *block, float *y) {
    const gk_type_info *t = type_of(id);
    ck_assert_ptr_nonnull(t->dequantize);
    t->dequantize(block, y, t->block_elems);
}

static uint16_t read_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static uint32_t read_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static double relative_rms_error(const float *x, const float *y, int n) {
    double err = 0, ref = 0;
    for (int i = 0; i < n; i++) {
        err += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
        ref += (double)x[i] * x[i];
    }
    return ref > 0 ? sqrt(err / ref) : sqrt(err);
}

/* The types this file owns the kernels of. */
static const uint32_t my_block_types[] = { GK_TYPE_Q4_0, GK_TYPE_Q4_1, GK_TYPE_Q5_0,
                                           GK_TYPE_Q5_1, GK_TYPE_Q8_0, GK_TYPE_Q8_1,
                                           GK_TYPE_TQ1_0, GK_TYPE_TQ2_0, GK_TYPE_MXFP4,
                                           GK_TYPE_NVFP4, GK_TYPE_Q1_0, GK_TYPE_Q2_0 };
#define N_MY_BLOCK_TYPES (sizeof my_block_types / sizeof my_block_types[0])

/* ---- fp16 / bf16 conversions ------------------------------------------------------- */

typedef struct {
    uint32_t f32_bits;
    uint16_t expected;
} conversion_case;

START_TEST(fp32_to_fp16_bit_patterns) {
    static const conversion_case cases[] = {
        { 0x3F800000, 0x3C00 }, /* 1.0 */
        { 0xC0000000, 0xC000 }, /* -2.0 */
        { 0x00000000, 0x0000 }, /* +0 */
        { 0x80000000, 0x8000 }, /* -0 keeps its sign */
        { 0x477FE000, 0x7BFF }, /* 65504, largest half */
        { 0x477FEFFF, 0x7BFF }, /* just below the overflow midpoint */
        { 0x477FF000, 0x7C00 }, /* 65520: tie rounds to even = infinity */
        { 0x501502F9, 0x7C00 }, /* 1e10 overflows to infinity */
        { 0xD01502F9, 0xFC00 }, /* -1e10 */
        { 0x7F800000, 0x7C00 }, /* +inf */
        { 0xFF800000, 0xFC00 }, /* -inf */
        { 0x7FC00000, 0x7E00 }, /* quiet NaN */
        { 0xFFC00000, 0xFE00 }, /* negative NaN keeps its sign */
        { 0x7F800001, 0x7E00 }, /* signalling NaN becomes the canonical quiet NaN */
        { 0x7FFFFFFF, 0x7E00 }, /* payload dropped (ggml's scalar conversion) */
        { 0x3F801000, 0x3C00 }, /* 1 + 2^-11: tie, rounds to even (down) */
        { 0x3F803000, 0x3C02 }, /* 1 + 3*2^-11: tie, rounds to even (up) */
        { 0x3F801001, 0x3C01 }, /* just above the tie rounds up */
        { 0x38800000, 0x0400 }, /* 2^-14, smallest normal half */
        { 0x33800000, 0x0001 }, /* 2^-24, smallest subnormal half */
        { 0x33000000, 0x0000 }, /* 2^-25: tie between 0 and 2^-24, to even = 0 */
        { 0x33000001, 0x0001 }, /* just above that tie */
        { 0x33C00000, 0x0002 }, /* 3*2^-25: tie between 1 and 2 ulp, to even = 2 */
        { 0x38000000, 0x0200 }, /* 2^-15, a subnormal half */
        { 0x387FC000, 0x03FF }, /* largest subnormal half */
        { 0x00000001, 0x0000 }, /* float subnormal underflows */
        { 0x80000001, 0x8000 }, /* and keeps its sign */
        { 0x3DCCCCCD, 0x2E66 }, /* 0.1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = gk_fp32_to_fp16(gk_bits_f32(cases[i].f32_bits));
        ck_assert_msg(got == cases[i].expected, "fp16(0x%08x) = 0x%04x, expected 0x%04x",
                      cases[i].f32_bits, got, cases[i].expected);
    }
}
END_TEST

START_TEST(fp16_to_fp32_bit_patterns) {
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0x3C00)), 0x3F800000);
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0x0001)), 0x33800000); /* 2^-24 */
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0x03FF)), 0x387FC000);
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0x8000)), 0x80000000);
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0x7BFF)), 0x477FE000);
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0x7C00)), 0x7F800000);
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0xFC00)), 0xFF800000);
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0x7E00)), 0x7FC00000);
    ck_assert_uint_eq(gk_f32_bits(gk_fp16_to_fp32(0xFE01)), 0xFFC02000); /* payload kept */
    /* every finite half survives the round trip exactly */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7C00) == 0x7C00) continue;
        uint16_t back = gk_fp32_to_fp16(gk_fp16_to_fp32((uint16_t)h));
        ck_assert_msg(back == h, "half 0x%04x came back as 0x%04x", h, back);
    }
}
END_TEST

START_TEST(fp32_to_bf16_bit_patterns) {
    static const conversion_case cases[] = {
        { 0x3F800000, 0x3F80 }, /* 1.0 */
        { 0x3F808000, 0x3F80 }, /* tie, to even (down) */
        { 0x3F818000, 0x3F82 }, /* tie, to even (up) */
        { 0x3F808001, 0x3F81 }, /* above the tie */
        { 0x7F7FFFFF, 0x7F80 }, /* FLT_MAX rounds to infinity */
        { 0x7F800000, 0x7F80 }, /* +inf */
        { 0xFF800000, 0xFF80 }, /* -inf */
        { 0x7F800001, 0x7FC0 }, /* signalling NaN made quiet */
        { 0xFF800001, 0xFFC0 }, /* sign kept */
        { 0x7FC00000, 0x7FC0 }, /* quiet NaN */
        { 0x7FFFFFFF, 0x7FFF }, /* payload's top bits kept */
        { 0x00008000, 0x0000 }, /* subnormal tie to even */
        { 0x00018000, 0x0002 },
        { 0x80000000, 0x8000 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = gk_fp32_to_bf16(gk_bits_f32(cases[i].f32_bits));
        ck_assert_msg(got == cases[i].expected, "bf16(0x%08x) = 0x%04x, expected 0x%04x",
                      cases[i].f32_bits, got, cases[i].expected);
    }
    ck_assert_uint_eq(gk_f32_bits(gk_bf16_to_fp32(0xC0A0)), 0xC0A00000);
}
END_TEST

/* ---- plain types --------------------------------------------------------------------- */

START_TEST(plain_float_kernels) {
    const float x[4] = { 1.0f, -65520.0f, 1e-30f, NAN };
    uint8_t buf[16];
    float y[4];

    type_of(GK_TYPE_F16)->quantize(x, buf, 2, 2, NULL);
    ck_assert_uint_eq(read_u16(buf + 0), 0x3C00);
    ck_assert_uint_eq(read_u16(buf + 2), 0xFC00);
    ck_assert_uint_eq(read_u16(buf + 4), 0x0000);
    ck_assert_uint_eq(read_u16(buf + 6), 0x7E00);
    type_of(GK_TYPE_F16)->dequantize(buf, y, 4);
    ck_assert(y[0] == 1.0f && isinf(y[1]) && y[1] < 0 && y[2] == 0.0f && isnan(y[3]));

    type_of(GK_TYPE_BF16)->quantize(x, buf, 1, 4, NULL);
    ck_assert_uint_eq(read_u16(buf + 0), 0x3F80);
    ck_assert_uint_eq(read_u16(buf + 2), 0xC780); /* -65520 -> -65536 */
    type_of(GK_TYPE_BF16)->dequantize(buf, y, 4);
    ck_assert(y[0] == 1.0f && y[1] == -65536.0f && isnan(y[3]));
    ck_assert_float_eq_tol(y[2], 1e-30f, 1e-32f);

    type_of(GK_TYPE_F32)->quantize(x, buf, 1, 4, NULL);
    ck_assert(memcmp(buf, x, 16) == 0);
    type_of(GK_TYPE_F32)->dequantize(buf, y, 4);
    ck_assert(memcmp(y, x, 16) == 0);
}
END_TEST

START_TEST(plain_integer_and_f64_dequantize) {
    ck_assert_ptr_null(type_of(GK_TYPE_F64)->quantize);
    ck_assert_ptr_null(type_of(GK_TYPE_I8)->quantize);
    ck_assert_ptr_null(type_of(GK_TYPE_I16)->quantize);
    ck_assert_ptr_null(type_of(GK_TYPE_I32)->quantize);
    ck_assert_ptr_null(type_of(GK_TYPE_I64)->quantize);
    float y[3];

    const int8_t i8[3] = { -128, 0, 127 };
    type_of(GK_TYPE_I8)->dequantize(i8, y, 3);
    ck_assert(y[0] == -128.0f && y[1] == 0.0f && y[2] == 127.0f);

    const int16_t i16[3] = { -32768, 1, 32767 };
    type_of(GK_TYPE_I16)->dequantize(i16, y, 3);
    ck_assert(y[0] == -32768.0f && y[1] == 1.0f && y[2] == 32767.0f);

    const int32_t i32[3] = { 16777217, -16777219, INT32_MIN };
    type_of(GK_TYPE_I32)->dequantize(i32, y, 3);
    ck_assert(y[0] == 16777216.0f && y[1] == -16777220.0f && y[2] == -2147483648.0f);

    const int64_t i64[3] = { INT64_MAX, -5, (int64_t)1 << 40 };
    type_of(GK_TYPE_I64)->dequantize(i64, y, 3);
    ck_assert(y[0] == 9223372036854775808.0f && y[1] == -5.0f && y[2] == 1099511627776.0f);

    const double f64[3] = { 1e300, 0.1, -NAN };
    type_of(GK_TYPE_F64)->dequantize(f64, y, 3);
    ck_assert(isinf(y[0]) && y[1] == 0.1f && isnan(y[2]));
}
END_TEST

/* ---- hand-computed blocks --------------------------------------------------------------- */

START_TEST(all_zero_blocks) {
    float zeros[256] = { 0 };
    float y[256];
    uint8_t block[512];
    for (size_t k = 0; k < N_MY_BLOCK_TYPES; k++) {
        const gk_type_info *t = type_of(my_block_types[k]);
        memset(block, 0xAA, sizeof block);
        quantize_block(t->id, zeros, block);
        for (int i = 0; i < 256; i++) y[i] = 1.0f;
        dequantize_block(t->id, block, y);
        for (uint32_t i = 0; i < t->block_elems; i++)
            ck_assert_msg(y[i] == 0.0f, "%s: zero block gives %g at %u", t->name, (double)y[i], i);
    }
    /* the exact bytes ggml writes */
    quantize_block(GK_TYPE_Q4_0, zeros, block);
    ck_assert_uint_eq(read_u16(block), 0x8000); /* d = 0 / -8 = -0 */
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(block[2 + j], 0x88);
    quantize_block(GK_TYPE_Q5_0, zeros, block);
    ck_assert_uint_eq(read_u32(block + 2), 0xFFFFFFFF); /* level 16 everywhere */
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(block[6 + j], 0x00);
    quantize_block(GK_TYPE_MXFP4, zeros, block);
    ck_assert_uint_eq(block[0], 0);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(block[1 + j], 0);
    quantize_block(GK_TYPE_TQ2_0, zeros, block);
    for (int j = 0; j < 64; j++) ck_assert_uint_eq(block[j], 0x55);
}
END_TEST

START_TEST(constant_blocks) {
    float x[256], y[256];
    uint8_t block[512];
    for (int i = 0; i < 256; i++) x[i] = 3.0f;
    for (size_t k = 0; k < N_MY_BLOCK_TYPES; k++) {
        const gk_type_info *t = type_of(my_block_types[k]);
        quantize_block(t->id, x, block);
        dequantize_block(t->id, block, y);
        for (uint32_t i = 0; i < t->block_elems; i++)
            ck_assert_msg(fabsf(y[i] - 3.0f) <= 3.0f * 2e-3f, "%s: constant 3 gives %.9g",
                          t->name, (double)y[i]);
    }
    /* Q4_1 stores min = 3 and d = 0 */
    quantize_block(GK_TYPE_Q4_1, x, block);
    ck_assert_uint_eq(read_u16(block), 0x0000);
    ck_assert_uint_eq(read_u16(block + 2), 0x4200);
    /* Q8_0: d = 3/127, every level 127 */
    quantize_block(GK_TYPE_Q8_0, x, block);
    ck_assert_uint_eq(read_u16(block), gk_fp32_to_fp16(3.0f / 127));
    for (int j = 0; j < 32; j++) ck_assert_int_eq((int8_t)block[2 + j], 127);
    /* Q4_0: max = 3, d = -3/8, level of 3 is 3*(-8/3)+8.5 = 0.5 -> 0 */
    quantize_block(GK_TYPE_Q4_0, x, block);
    ck_assert_uint_eq(read_u16(block), gk_fp32_to_fp16(-0.375f));
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(block[2 + j], 0x00);
}
END_TEST

START_TEST(hand_computed_legacy_blocks) {
    float x[32], y[32];
    uint8_t block[64];

    /* Q4_0 of -16..15: d = -16/-8 = 2, level j -> trunc(x/2 + 8.5) capped at 15 */
    for (int j = 0; j < 32; j++) x[j] = (float)(j - 16);
    quantize_block(GK_TYPE_Q4_0, x, block);
    ck_assert_uint_eq(read_u16(block), 0x4000); /* 2.0 */
    for (int j = 0; j < 16; j++) {
        int lo = (int)(x[j] / 2 + 8.5f), hi = (int)(x[j + 16] / 2 + 8.5f);
        if (hi > 15) hi = 15;
        ck_assert_uint_eq(block[2 + j], (unsigned)(lo | hi << 4));
    }
    dequantize_block(GK_TYPE_Q4_0, block, y);
    ck_assert(y[0] == -16.0f && y[1] == -14.0f && y[31] == 14.0f);

    /* Q5_1 of 0..31: d = 1, m = 0, levels = values, fifth bits for 16..31 */
    for (int j = 0; j < 32; j++) x[j] = (float)j;
    quantize_block(GK_TYPE_Q5_1, x, block);
    ck_assert_uint_eq(read_u16(block), 0x3C00);
    ck_assert_uint_eq(read_u16(block + 2), 0x0000);
    ck_assert_uint_eq(read_u32(block + 4), 0xFFFF0000);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(block[8 + j], (unsigned)(j | j << 4));
    dequantize_block(GK_TYPE_Q5_1, block, y);
    for (int j = 0; j < 32; j++) ck_assert(y[j] == (float)j);

    /* Q5_0 of (-1, 0, ..., 0): d = 1/16, level 0 for -1, 16 (fifth bit only) elsewhere */
    memset(x, 0, sizeof x);
    x[0] = -1.0f;
    quantize_block(GK_TYPE_Q5_0, x, block);
    ck_assert_uint_eq(read_u16(block), 0x2C00); /* 0.0625 */
    ck_assert_uint_eq(read_u32(block + 2), 0xFFFFFFFE);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(block[6 + j], 0x00);
    dequantize_block(GK_TYPE_Q5_0, block, y);
    ck_assert(y[0] == -1.0f);
    for (int j = 1; j < 32; j++) ck_assert(y[j] == 0.0f);

    /* Q8_1 of -16..15: d = 16/127, s = d * sum(levels) */
    for (int j = 0; j < 32; j++) x[j] = (float)(j - 16);
    quantize_block(GK_TYPE_Q8_1, x, block);
    const float d = 16.0f / 127;
    int sum = 0;
    for (int j = 0; j < 32; j++) {
        int8_t level = (int8_t)roundf(x[j] * (1.0f / d));
        ck_assert_int_eq((int8_t)block[4 + j], level);
        sum += level;
    }
    ck_assert_int_eq((int8_t)block[4], -127);
    ck_assert_uint_eq(read_u16(block), gk_fp32_to_fp16(d));
    ck_assert_uint_eq(read_u16(block + 2), gk_fp32_to_fp16(sum * d));
}
END_TEST

/* Float-to-byte casts of values out of a byte's range (ggml's kernels make
 * them for blocks of tiny values) give the bytes x86 gives, defined: the
 * int32 truncation (INT32_MIN for NaN and out-of-range values), then its low
 * byte. */
START_TEST(float_to_byte_casts_as_x86) {
    ck_assert_int_eq(gk_trunc_i32(-7.9f), -7);
    ck_assert_int_eq(gk_trunc_i32(200.7f), 200);
    ck_assert_int_eq(gk_trunc_i32(-2147483648.0f), INT32_MIN);
    ck_assert_int_eq(gk_trunc_i32(2147483520.0f), 2147483520);
    ck_assert_int_eq(gk_trunc_i32(2147483648.0f), INT32_MIN);
    ck_assert_int_eq(gk_trunc_i32(-2147483904.0f), INT32_MIN);
    ck_assert_int_eq(gk_trunc_i32(INFINITY), INT32_MIN);
    ck_assert_int_eq(gk_trunc_i32(-INFINITY), INT32_MIN);
    ck_assert_int_eq(gk_trunc_i32(NAN), INT32_MIN);
    ck_assert_uint_eq((uint8_t)gk_trunc_i32(-7.0f), 249);
    /* Q8_0 of float subnormals: d rounds to half 0, 1/d is infinite, every
     * quant is the low byte of INT32_MIN */
    float x[32];
    uint8_t block[64];
    for (int j = 0; j < 32; j++) x[j] = (j & 1) ? 1e-40f : -1e-40f;
    quantize_block(GK_TYPE_Q8_0, x, block);
    for (int j = 0; j < 34; j++) ck_assert_uint_eq(block[j], 0);
    /* MXFP4 of values near 2^-132: the exponent byte wraps to 256 - 7 */
    for (int j = 0; j < 32; j++) x[j] = 0x1p-132f;
    quantize_block(GK_TYPE_MXFP4, x, block);
    ck_assert_uint_eq(block[0], 249);
    ck_assert_uint_eq(gk_mxfp4_e(0x1p-132f), 249);
}
END_TEST

START_TEST(huge_and_tiny_magnitudes) {
    float x[32], y[32];
    uint8_t block[64];

    /* large but representable scales keep the usual accuracy */
    fill_gaussian(x, 32, 1000.0f);
    for (size_t k = 0; k < N_MY_BLOCK_TYPES; k++) {
        const gk_type_info *t = type_of(my_block_types[k]);
        if (t->block_elems != 32) continue;
        quantize_block(t->id, x, block);
        dequantize_block(t->id, block, y);
        ck_assert_msg(relative_rms_error(x, y, 32) < 0.2, "%s at scale 1000", t->name);
    }
    /* Q8_0 scale beyond the half range becomes infinity (as ggml) */
    for (int j = 0; j < 32; j++) x[j] = 1e7f;
    quantize_block(GK_TYPE_Q8_0, x, block);
    ck_assert_uint_eq(read_u16(block), 0x7C00);
    /* a scale below the smallest half flushes to zero: the block reads back as 0 */
    for (int j = 0; j < 32; j++) x[j] = (j & 1) ? 1e-10f : -1e-10f;
    quantize_block(GK_TYPE_Q8_0, x, block);
    ck_assert_uint_eq(read_u16(block), 0x0000);
    dequantize_block(GK_TYPE_Q8_0, block, y);
    for (int j = 0; j < 32; j++) ck_assert(y[j] == 0.0f);
    /* a scale in the half subnormal range: 1e-5/127 rounds to 2^-24 */
    for (int j = 0; j < 32; j++) x[j] = 1e-5f;
    quantize_block(GK_TYPE_Q8_0, x, block);
    ck_assert_uint_eq(read_u16(block), 0x0001);
    dequantize_block(GK_TYPE_Q8_0, block, y);
    ck_assert(y[0] == 127 * 0x1p-24f);
    /* MXFP4 handles the whole float range through its E8M0 exponent */
    for (int j = 0; j < 32; j++) x[j] = (j & 1) ? 3e38f : -1.5e38f;
    quantize_block(GK_TYPE_MXFP4, x, block);
    dequantize_block(GK_TYPE_MXFP4, block, y);
    ck_assert(relative_rms_error(x, y, 32) < 0.2);
    for (int j = 0; j < 32; j++) x[j] = (j & 1) ? 1e-37f : -2e-38f;
    quantize_block(GK_TYPE_MXFP4, x, block);
    dequantize_block(GK_TYPE_MXFP4, block, y);
    ck_assert(relative_rms_error(x, y, 32) < 0.2);
}
END_TEST

START_TEST(hand_computed_mxfp4_blocks) {
    float x[32], y[32];
    uint8_t block[17];

    /* all 1.0: e = floor(log2 1) - 2 + 127 = 125, d = 2^-3, 1.0 = 8*d is code 6 */
    for (int j = 0; j < 32; j++) x[j] = 1.0f;
    quantize_block(GK_TYPE_MXFP4, x, block);
    ck_assert_uint_eq(block[0], 125);
    for (int j = 0; j < 16; j++) ck_assert_uint_eq(block[1 + j], 0x66);
    dequantize_block(GK_TYPE_MXFP4, block, y);
    for (int j = 0; j < 32; j++) ck_assert(y[j] == 1.0f);

    /* max 6: e = 127, d = 0.5; 6 -> code 7, -3 -> code 13 (-6), 0.25 ties 0 and 0.5:
     * the first code (0) wins, 0.3 -> code 1, -0.75 ties -0.5 and -1: code 9 (-1 *d) */
    memset(x, 0, sizeof x);
    x[0] = 6.0f;
    x[1] = -3.0f;
    x[2] = 0.25f;
    x[3] = 0.3f;
    x[16] = -0.75f;
    x[17] = 5.0f; /* ties 4 (code 6) and 6 (code 7): code 6 */
    quantize_block(GK_TYPE_MXFP4, x, block);
    ck_assert_uint_eq(block[0], 127);
    ck_assert_uint_eq(block[1], 0x07 | 0x90);
    ck_assert_uint_eq(block[2], 0x0D | 0x60);
    ck_assert_uint_eq(block[3], 0x00);
    ck_assert_uint_eq(block[4], 0x01);
    dequantize_block(GK_TYPE_MXFP4, block, y);
    ck_assert(y[0] == 6.0f && y[1] == -3.0f && y[2] == 0.0f && y[3] == 0.5f);
    ck_assert(y[16] == -0.5f && y[17] == 4.0f);

    /* E8M0 edge scales: e = 0 and 1 are float subnormals, e = 255 is 2^127 */
    memset(block, 0, sizeof block);
    block[1] = 0x01;
    dequantize_block(GK_TYPE_MXFP4, block, y);
    ck_assert_uint_eq(gk_f32_bits(y[0]), 0x00200000); /* 1 * 2^-128 */
    block[0] = 1;
    block[1] = 0x07;
    dequantize_block(GK_TYPE_MXFP4, block, y);
    ck_assert(y[0] == 12 * 0x1p-127f);
    block[0] = 255;
    block[1] = 0x01;
    dequantize_block(GK_TYPE_MXFP4, block, y);
    ck_assert(y[0] == 0x1p127f);
    block[1] = 0x07;
    dequantize_block(GK_TYPE_MXFP4, block, y);
    ck_assert(isinf(y[0]));
}
END_TEST

START_TEST(hand_computed_nvfp4_blocks) {
    float x[64], y[64];
    uint8_t block[36];

    /* sub-block 0: max 6 -> UE4M3(1.0) = 0x38 (exponent 7, mantissa 0), decoded
     * scale 0.5: 6 is code 7, -3 code 13, 0.25 ties 0 and 0.5 (code 0 first) */
    memset(x, 0, sizeof x);
    x[0] = 6.0f;
    x[1] = -3.0f;
    x[2] = 0.25f;
    x[8] = 1.0f; /* high nibble of qs[0]: code 2 */
    /* sub-block 1: max 6.375 -> 1.0625: the round bit (2^-4) carries, 0x39 (1.125) */
    x[16] = 6.375f;
    /* sub-block 2: max 11.625 -> 1.9375: mantissa 7 + round bit overflows to 2.0, 0x40 */
    x[32] = -11.625f;
    /* sub-block 3: max 6 * 3 * 2^-9 -> the subnormal 3 * 2^-9 = 0x03 */
    x[48] = 6.0f * 3.0f * 0x1p-9f;
    quantize_block(GK_TYPE_NVFP4, x, block);
    ck_assert_uint_eq(block[0], 0x38);
    ck_assert_uint_eq(block[1], 0x39);
    ck_assert_uint_eq(block[2], 0x40);
    ck_assert_uint_eq(block[3], 0x03);
    ck_assert_uint_eq(block[4 + 0], 0x07 | 0x20);
    ck_assert_uint_eq(block[4 + 1], 0x0D);
    ck_assert_uint_eq(block[4 + 2], 0x00);
    ck_assert_uint_eq(block[4 + 8], 0x07);  /* 6.375 / 0.5625 = 11.3: code 7 (12) */
    ck_assert_uint_eq(block[4 + 16], 0x0F); /* -11.625 / 1.0 -> -12: code 15 */
    ck_assert_uint_eq(block[4 + 24], 0x07); /* 6 * scale: code 7 */
    dequantize_block(GK_TYPE_NVFP4, block, y);
    ck_assert(y[0] == 6.0f && y[1] == -3.0f && y[2] == 0.0f && y[8] == 1.0f);
    ck_assert(y[16] == 12 * 0.5625f && y[32] == -12.0f);
    ck_assert(y[48] == 12 * 3 * 0x1p-10f);

    /* scales beyond 448 saturate at 0x7e (448, decoded 224); NaN and 0 give 0 */
    for (int j = 0; j < 64; j++) x[j] = 1e6f;
    x[16] = NAN;
    for (int j = 17; j < 32; j++) x[j] = 0.0f;
    quantize_block(GK_TYPE_NVFP4, x, block);
    ck_assert_uint_eq(block[0], 0x7e);
    dequantize_block(GK_TYPE_NVFP4, block, y);
    ck_assert(y[0] == 12 * 224.0f);

    /* decoding: 0x7f (NaN) reads as 0, bit 7 is ignored (0xb8 reads as 0x38) */
    memset(block, 0, sizeof block);
    block[0] = 0x7f;
    block[1] = 0xb8;
    block[2] = 0x01; /* smallest subnormal: 2^-9, halved */
    block[3] = 0x77; /* largest below exponent 15: 1.875 * 2^7, halved */
    for (int s = 0; s < 4; s++) block[4 + 8 * s] = 0x01;
    dequantize_block(GK_TYPE_NVFP4, block, y);
    ck_assert(y[0] == 0.0f && y[16] == 0.5f && y[32] == 0x1p-10f && y[48] == 120.0f);
}
END_TEST

/* The one-sign search from a block's products (NVFP4's) picks the code of ggml's
 * full sixteen-code search, for every scale the formats can hold and values of
 * every kind: random magnitudes around the scale, signed zeros, ties, subnormals,
 * huge values, infinities and NaN. */
START_TEST(fp4_one_sign_search_equals_full_search) {
    float scales[256 + 128 + 4];
    int ns = 0;
    for (int e = 0; e < 256; e++) /* E8M0 halved: 2^(e-128) */
        scales[ns++] = e < 2 ? gk_bits_f32(UINT32_C(0x00200000) << e) : gk_bits_f32((uint32_t)(e - 1) << 23);
    for (int u = 0; u < 128; u++) { /* UE4M3 halved */
        const int ex = u >> 3, m = u & 7;
        scales[ns++] = u == 0 || u == 0x7f ? 0.0f : (ex == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + m / 8.0f, ex - 7)) * 0.5f;
    }
    scales[ns++] = INFINITY;
    scales[ns++] = 0x1p-149f;
    scales[ns++] = 3.4e38f;
    scales[ns++] = 0.0f;
    static const float specials[] = { 0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 0x1p-149f, -0x1p-149f,
                                      3.4e38f, -3.4e38f, 1e-30f, -1e-30f };
    long checked = 0;
    for (int s = 0; s < ns; s++) {
        const float d = scales[s];
        float p[8];
        gk_fp4_products(d, p);
        for (int i = 0; i < 4000; i++) {
            float x;
            if (i < (int)(sizeof specials / sizeof specials[0])) x = specials[i];
            else if (i < 300) x = (float)(i % 32 - 16) * 0.5f * d;            /* the codes and midpoints */
            else if (i < 600) x = gk_bits_f32((uint32_t)(uniform01() * 4294967296.0)); /* any bits */
            else x = (float)((uniform01() * 2 - 1) * 14) * d;                 /* around the scale */
            const int full = gk_fp4_nearest(x, d), fast = gk_fp4_nearest_in(x, p);
            ck_assert_msg(full == fast, "d %a x %a: full search %d, one-sign search %d", (double)d, (double)x,
                          full, fast);
            checked++;
        }
    }
    ck_assert_int_gt(checked, 1000000);
}
END_TEST

START_TEST(hand_computed_q1_q2_blocks) {
    float x[128], y[128];
    uint8_t block[18];

    /* Q1_0: d = mean |x|; a bit per value, set for x >= 0 (-0 too), clear for NaN */
    for (int j = 0; j < 128; j++) x[j] = (j % 3 == 0) ? -2.0f : 0.5f; /* 43 x 2 + 85 x 0.5 */
    x[1] = -0.0f;
    x[2] = NAN; /* the sum is NaN: d is NaN, and the bit is clear */
    quantize_block(GK_TYPE_Q1_0, x, block);
    ck_assert_uint_eq(read_u16(block) & 0x7c00, 0x7c00);
    x[2] = 0.5f;
    x[1] = 0.0f;
    quantize_block(GK_TYPE_Q1_0, x, block);
    ck_assert_uint_eq(read_u16(block), 0x3C00); /* (43 * 2 + 84 * 0.5 + 0) / 128 = 1 */
    ck_assert_uint_eq(block[2], 0xB6); /* bits 1,2,4,5,7: j % 3 != 0 */
    x[1] = -0.0f;
    quantize_block(GK_TYPE_Q1_0, x, block);
    ck_assert_uint_eq(block[2], 0xB6);
    dequantize_block(GK_TYPE_Q1_0, block, y);
    const float d1 = gk_fp16_to_fp32(read_u16(block));
    for (int j = 0; j < 128; j++) ck_assert(y[j] == ((j % 3 == 0) ? -d1 : d1));

    /* Q2_0: d = max |x| = 2, codes round(x / 2) + 1 (roundf: halves away from 0) */
    memset(x, 0, 64 * sizeof x[0]);
    x[0] = 2.0f;   /* 1 + 1 = 2 */
    x[1] = -2.0f;  /* -1 + 1 = 0 */
    x[2] = 1.0f;   /* round(0.5) = 1: 2 */
    x[3] = 0.9f;   /* 0: 1 */
    x[4] = -1.0f;  /* round(-0.5) = -1: 0 */
    quantize_block(GK_TYPE_Q2_0, x, block);
    ck_assert_uint_eq(read_u16(block), 0x4000);
    ck_assert_uint_eq(block[2], 2 | 0 << 2 | 2 << 4 | 1 << 6);
    ck_assert_uint_eq(block[3], 0 | 1 << 2 | 1 << 4 | 1 << 6);
    for (int j = 4; j < 18; j++) ck_assert_uint_eq(block[j], 0x55);
    dequantize_block(GK_TYPE_Q2_0, block, y);
    ck_assert(y[0] == 2.0f && y[1] == -2.0f && y[2] == 2.0f && y[3] == 0.0f && y[4] == -2.0f);
    /* code 3 is +2d: only written from data, never by the quantizer */
    block[2] = 3;
    dequantize_block(GK_TYPE_Q2_0, block, y);
    ck_assert(y[0] == 4.0f);
    /* a product that is NaN (or not an int) takes code 0, as ggml's conversion on x86-64 */
    x[5] = NAN;
    quantize_block(GK_TYPE_Q2_0, x, block);
    ck_assert_uint_eq((block[3] >> 2) & 3, 0);
    x[5] = 0.0f;
    x[0] = 1e-40f; /* a subnormal max: 1 / max is infinite */
    for (int j = 1; j < 64; j++) x[j] = 0.0f;
    quantize_block(GK_TYPE_Q2_0, x, block);
    ck_assert_uint_eq(block[2] & 3, 0);        /* inf: code 0 */
    ck_assert_uint_eq((block[2] >> 2) & 3, 0); /* 0 * inf = NaN: code 0 */
}
END_TEST

/* The importance matrix changes nothing for these types (ggml has no weighted
 * variant), and rows are independent. */
START_TEST(unweighted_types_ignore_imatrix) {
    static const uint32_t ids[] = { GK_TYPE_NVFP4, GK_TYPE_Q1_0, GK_TYPE_Q2_0, GK_TYPE_MXFP4 };
    enum { COLS = 256 };
    static float x[3 * COLS], imatrix[COLS];
    static uint8_t plain[3 * COLS], weighted[3 * COLS], row[COLS];
    fill_gaussian(x, 3 * COLS, 0.7f);
    for (int i = 0; i < COLS; i++) imatrix[i] = (float)(0.01 + 3 * uniform01());
    for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++) {
        const gk_type_info *t = type_of(ids[k]);
        ck_assert(!t->needs_imatrix);
        uint64_t rb = gk_type_row_bytes(t->id, COLS);
        t->quantize(x, plain, 3, COLS, NULL);
        t->quantize(x, weighted, 3, COLS, imatrix);
        ck_assert_msg(memcmp(plain, weighted, 3 * rb) == 0, "%s: imatrix changed the bytes", t->name);
        t->quantize(x + 2 * COLS, row, 1, COLS, NULL);
        ck_assert_msg(memcmp(plain + 2 * rb, row, rb) == 0, "%s: rows not independent", t->name);
    }
}
END_TEST

/* verify --data's checks of the newest formats, at their byte offsets. */
typedef struct {
    int n;
    gk_block_fault first;
} fault_log;

static bool log_fault(void *ctx, const gk_block_fault *f) {
    fault_log *l = ctx;
    if (l->n++ == 0) l->first = *f;
    return true;
}

START_TEST(data_checks_of_new_types) {
    uint8_t b[4 * 36];
    fault_log l;
    /* NVFP4: d[2] of block 1 is 0x7f (NaN); bit 7 set in d[0] of block 3 */
    memset(b, 0x38, sizeof b);
    b[36 + 2] = 0x7f;
    b[3 * 36 + 0] = 0x80;
    l = (fault_log){ 0 };
    type_of(GK_TYPE_NVFP4)->check(b, 4, log_fault, &l);
    ck_assert_int_eq(l.n, 2);
    ck_assert(l.first.block == 1 && l.first.byte == 2 && isnan(l.first.value));
    ck_assert_str_eq(l.first.field, "d[2]");
    /* every other UE4M3 byte is a value: 0x00-0x7e */
    for (int u = 0; u < 0x7f; u++) {
        memset(b, u, 36);
        l = (fault_log){ 0 };
        type_of(GK_TYPE_NVFP4)->check(b, 1, log_fault, &l);
        ck_assert_msg(l.n == 0, "UE4M3 0x%02x reported", u);
    }
    /* Q1_0 and Q2_0: the fp16 d at byte 0 of each 18-byte block */
    const uint32_t f16_types[] = { GK_TYPE_Q1_0, GK_TYPE_Q2_0 };
    for (int k = 0; k < 2; k++) {
        memset(b, 0, sizeof b);
        b[2 * 18 + 0] = 0x00, b[2 * 18 + 1] = 0x7c; /* +inf in block 2 */
        b[3 * 18 + 0] = 0x01, b[3 * 18 + 1] = 0xfe; /* NaN in block 3 */
        b[3 * 18 + 2] = 0xff;                       /* codes are never wrong */
        l = (fault_log){ 0 };
        type_of(f16_types[k])->check(b, 4, log_fault, &l);
        ck_assert_int_eq(l.n, 2);
        ck_assert(l.first.block == 2 && l.first.byte == 0 && isinf(l.first.value));
        ck_assert_str_eq(l.first.field, "d");
    }
    /* MXFP4: E8M0 0xff is NaN, 0xfe is 2^127 and fine */
    memset(b, 0, sizeof b);
    b[17] = 0xff;
    b[2 * 17] = 0xfe;
    l = (fault_log){ 0 };
    type_of(GK_TYPE_MXFP4)->check(b, 3, log_fault, &l);
    ck_assert(l.n == 1 && l.first.block == 1 && l.first.byte == 0);
}
END_TEST

START_TEST(hand_computed_ternary_blocks) {
    float x[256], y[256];
    uint8_t block[128];

    /* one +1 at element 0: byte 0 holds trits (2,1,1,1,1) = 202 -> ceil(202*256/243) = 213,
     * other bytes (1,1,1,1,1) = 121 -> 128; qh bytes (1,1,1,1)*3 = 120 -> 127 */
    memset(x, 0, sizeof x);
    x[0] = 1.0f;
    quantize_block(GK_TYPE_TQ1_0, x, block);
    ck_assert_uint_eq(block[0], 213);
    for (int j = 1; j < 48; j++) ck_assert_uint_eq(block[j], 128);
    for (int j = 48; j < 52; j++) ck_assert_uint_eq(block[j], 127);
    ck_assert_uint_eq(read_u16(block + 52), 0x3C00);
    dequantize_block(GK_TYPE_TQ1_0, block, y);
    ck_assert(y[0] == 1.0f);
    for (int j = 1; j < 256; j++) ck_assert(y[j] == 0.0f);

    quantize_block(GK_TYPE_TQ2_0, x, block);
    ck_assert_uint_eq(block[0], 86);
    for (int j = 1; j < 64; j++) ck_assert_uint_eq(block[j], 85);
    ck_assert_uint_eq(read_u16(block + 64), 0x3C00);

    /* ternary data at scale 0.5 round-trips exactly through both formats */
    for (int j = 0; j < 256; j++) x[j] = 0.5f * (float)((int)(uniform01() * 3) - 1);
    x[7] = 0.5f;
    for (int k = 0; k < 2; k++) {
        uint32_t id = k ? GK_TYPE_TQ2_0 : GK_TYPE_TQ1_0;
        quantize_block(id, x, block);
        dequantize_block(id, block, y);
        for (int j = 0; j < 256; j++)
            ck_assert_msg(y[j] == x[j], "%s element %d: %g vs %g", type_of(id)->name, j,
                          (double)y[j], (double)x[j]);
    }
}
END_TEST

/* ---- error bounds, rows, imatrix -------------------------------------------------------- */

typedef struct {
    uint32_t id;
    double bound; /* relative RMS error bound on standard normal data */
} error_bound;

static const error_bound error_bounds[] = {
    { GK_TYPE_F32, 0.0 },     { GK_TYPE_F16, 0.0005 },  { GK_TYPE_BF16, 0.004 },
    { GK_TYPE_Q4_0, 0.10 },   { GK_TYPE_Q4_1, 0.095 },  { GK_TYPE_Q5_0, 0.05 },
    { GK_TYPE_Q5_1, 0.045 },  { GK_TYPE_Q8_0, 0.007 },  { GK_TYPE_Q8_1, 0.007 },
    { GK_TYPE_MXFP4, 0.14 },  { GK_TYPE_TQ1_0, 0.85 },  { GK_TYPE_TQ2_0, 0.85 },
    { GK_TYPE_NVFP4, 0.10 },  { GK_TYPE_Q1_0, 0.62 },   { GK_TYPE_Q2_0, 0.75 },
};

START_TEST(round_trip_error_bounds) {
    enum { ROWS = 4, COLS = 1024 };
    static float x[ROWS * COLS], y[ROWS * COLS], imatrix[COLS];
    static uint8_t q[ROWS * COLS * 4];
    fill_gaussian(x, ROWS * COLS, 1.0f);
    for (int i = 0; i < COLS; i++) imatrix[i] = (float)(0.1 + uniform01());
    for (size_t k = 0; k < sizeof error_bounds / sizeof error_bounds[0]; k++) {
        const gk_type_info *t = type_of(error_bounds[k].id);
        for (int weighted = 0; weighted < 2; weighted++) {
            t->quantize(x, q, ROWS, COLS, weighted ? imatrix : NULL);
            t->dequantize(q, y, ROWS * COLS);
            double e = relative_rms_error(x, y, ROWS * COLS);
            ck_assert_msg(e <= error_bounds[k].bound, "%s%s: relative RMS error %.5f > %.5f",
                          t->name, weighted ? " (imatrix)" : "", e, error_bounds[k].bound);
        }
    }
}
END_TEST

/* Quantizing a row of exactly one block writes exactly one block (checked with guard
 * bytes), for every type that has kernels; a zero imatrix-free call is skipped for
 * types that need one. */
START_TEST(single_block_rows) {
    float x[256], y[256 + 8];
    uint8_t buf[512];
    fill_gaussian(x, 256, 1.0f);
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *t = gk_type_get(id);
        if (t == NULL || t->quantize == NULL || t->needs_imatrix) continue;
        memset(buf, 0xA5, sizeof buf);
        t->quantize(x, buf, 1, t->block_elems, NULL);
        for (size_t i = t->block_bytes; i < sizeof buf; i++)
            ck_assert_msg(buf[i] == 0xA5, "%s wrote past its block (byte %zu)", t->name, i);
        if (t->dequantize == NULL) continue;
        for (int i = 0; i < 256 + 8; i++) y[i] = -7.0f;
        t->dequantize(buf, y, t->block_elems);
        for (uint32_t i = t->block_elems; i < 256 + 8; i++)
            ck_assert_msg(y[i] == -7.0f, "%s dequantized past its block", t->name);
    }
}
END_TEST

/* Weighted (imatrix) quantization of the 4/5-bit legacy types is row-wise: rows are
 * independent, a uniform imatrix gives a valid result, and an all-zero row still
 * reads back as zeros. */
START_TEST(imatrix_rows_independent) {
    static const uint32_t weighted_types[] = { GK_TYPE_Q4_0, GK_TYPE_Q4_1, GK_TYPE_Q5_0,
                                               GK_TYPE_Q5_1 };
    enum { COLS = 256 };
    static float x[2 * COLS], y[2 * COLS], imatrix[COLS];
    static uint8_t both[2 * COLS], single[COLS];
    fill_gaussian(x, COLS, 1.0f);
    memset(x + COLS, 0, COLS * sizeof(float));
    for (int i = 0; i < COLS; i++) imatrix[i] = 1.0f + (float)(i % 7);
    for (size_t k = 0; k < 4; k++) {
        const gk_type_info *t = type_of(weighted_types[k]);
        uint64_t row_bytes = gk_type_row_bytes(t->id, COLS);
        t->quantize(x, both, 2, COLS, imatrix);
        t->quantize(x, single, 1, COLS, imatrix);
        ck_assert_msg(memcmp(both, single, row_bytes) == 0, "%s rows not independent", t->name);
        t->dequantize(both, y, 2 * COLS);
        for (int i = COLS; i < 2 * COLS; i++) ck_assert(y[i] == 0.0f);
        ck_assert(relative_rms_error(x, y, COLS) < 0.12);
    }
}
END_TEST

/* ---- byteswap --------------------------------------------------------------------------- */

typedef struct {
    uint32_t id;
    uint8_t width;       /* bytes per swapped member */
    uint8_t count;       /* members swapped per block */
    uint16_t offsets[2]; /* where they are */
} swap_layout;

static const swap_layout swap_layouts[] = {
    { GK_TYPE_F32, 4, 1, { 0 } },      { GK_TYPE_F16, 2, 1, { 0 } },
    { GK_TYPE_BF16, 2, 1, { 0 } },     { GK_TYPE_F64, 8, 1, { 0 } },
    { GK_TYPE_I8, 1, 0, { 0 } },       { GK_TYPE_I16, 2, 1, { 0 } },
    { GK_TYPE_I32, 4, 1, { 0 } },      { GK_TYPE_I64, 8, 1, { 0 } },
    { GK_TYPE_Q4_0, 2, 1, { 0 } },     { GK_TYPE_Q4_1, 2, 2, { 0, 2 } },
    { GK_TYPE_Q5_0, 2, 1, { 0 } },     { GK_TYPE_Q5_1, 2, 2, { 0, 2 } },
    { GK_TYPE_Q8_0, 2, 1, { 0 } },     { GK_TYPE_Q8_1, 2, 2, { 0, 2 } },
    { GK_TYPE_TQ1_0, 2, 1, { 52 } },   { GK_TYPE_TQ2_0, 2, 1, { 64 } },
    { GK_TYPE_MXFP4, 1, 0, { 0 } },    { GK_TYPE_NVFP4, 1, 0, { 0 } },
    { GK_TYPE_Q1_0, 2, 1, { 0 } },     { GK_TYPE_Q2_0, 2, 1, { 0 } },
};

/* Where byte i of a block goes after the swap described by l. */
static size_t swapped_position(const swap_layout *l, size_t i) {
    for (int m = 0; m < l->count; m++) {
        size_t start = l->offsets[m];
        if (i >= start && i < start + l->width) return start + (l->width - 1 - (i - start));
    }
    return i;
}

START_TEST(byteswap_moves_the_right_bytes) {
    enum { NBLOCKS = 3 };
    uint8_t original[NBLOCKS * 128], data[NBLOCKS * 128];
    for (size_t k = 0; k < sizeof swap_layouts / sizeof swap_layouts[0]; k++) {
        const swap_layout *l = &swap_layouts[k];
        const gk_type_info *t = type_of(l->id);
        ck_assert_ptr_nonnull(t->byteswap);
        for (size_t i = 0; i < sizeof original; i++) original[i] = (uint8_t)(uniform01() * 256);
        memcpy(data, original, sizeof data);
        t->byteswap(data, NBLOCKS);
        for (size_t b = 0; b < NBLOCKS; b++)
            for (size_t i = 0; i < t->block_bytes; i++) {
                size_t base = b * t->block_bytes;
                ck_assert_msg(data[base + swapped_position(l, i)] == original[base + i],
                              "%s block %zu byte %zu misplaced", t->name, b, i);
            }
        /* nothing after the blocks is touched */
        ck_assert(memcmp(data + NBLOCKS * t->block_bytes, original + NBLOCKS * t->block_bytes,
                         sizeof data - NBLOCKS * t->block_bytes) == 0);
    }
}
END_TEST

/* For every type with a byteswap kernel (whoever wrote it): swapping twice is identity. */
START_TEST(byteswap_twice_is_identity) {
    uint8_t original[4 * 512], data[4 * 512];
    for (size_t i = 0; i < sizeof original; i++) original[i] = (uint8_t)(uniform01() * 256);
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *t = gk_type_get(id);
        if (t == NULL || t->byteswap == NULL) continue;
        ck_assert(4 * t->block_bytes <= sizeof data);
        memcpy(data, original, sizeof data);
        t->byteswap(data, 4);
        t->byteswap(data, 4);
        ck_assert_msg(memcmp(data, original, sizeof data) == 0, "%s: swap twice differs", t->name);
    }
}
END_TEST

/* ---- the type table --------------------------------------------------------------------- */

typedef struct {
    uint32_t id;
    const char *name;
    uint32_t elems, bytes;
} geometry;

/* ggml's type traits (ggml.c): block size and type size of every current type. */
static const geometry ggml_geometry[] = {
    { 0, "F32", 1, 4 },           { 1, "F16", 1, 2 },         { 2, "Q4_0", 32, 18 },
    { 3, "Q4_1", 32, 20 },        { 6, "Q5_0", 32, 22 },      { 7, "Q5_1", 32, 24 },
    { 8, "Q8_0", 32, 34 },        { 9, "Q8_1", 32, 36 },      { 10, "Q2_K", 256, 84 },
    { 11, "Q3_K", 256, 110 },     { 12, "Q4_K", 256, 144 },   { 13, "Q5_K", 256, 176 },
    { 14, "Q6_K", 256, 210 },     { 15, "Q8_K", 256, 292 },   { 16, "IQ2_XXS", 256, 66 },
    { 17, "IQ2_XS", 256, 74 },    { 18, "IQ3_XXS", 256, 98 }, { 19, "IQ1_S", 256, 50 },
    { 20, "IQ4_NL", 32, 18 },     { 21, "IQ3_S", 256, 110 },  { 22, "IQ2_S", 256, 82 },
    { 23, "IQ4_XS", 256, 136 },   { 24, "I8", 1, 1 },         { 25, "I16", 1, 2 },
    { 26, "I32", 1, 4 },          { 27, "I64", 1, 8 },        { 28, "F64", 1, 8 },
    { 29, "IQ1_M", 256, 56 },     { 30, "BF16", 1, 2 },       { 34, "TQ1_0", 256, 54 },
    { 35, "TQ2_0", 256, 66 },     { 39, "MXFP4", 32, 17 },    { 40, "NVFP4", 64, 36 },
    { 41, "Q1_0", 128, 18 },      { 42, "Q2_0", 64, 18 },
};
static const uint32_t retired_ids[] = { 4, 5, 31, 32, 33, 36, 37, 38 };

START_TEST(table_names_and_geometry) {
    for (size_t k = 0; k < sizeof ggml_geometry / sizeof ggml_geometry[0]; k++) {
        const geometry *g = &ggml_geometry[k];
        const gk_type_info *t = gk_type_get(g->id);
        ck_assert_msg(t != NULL, "type id %u missing", g->id);
        ck_assert_str_eq(t->name, g->name);
        ck_assert_uint_eq(t->id, g->id);
        ck_assert_msg(t->block_elems == g->elems && t->block_bytes == g->bytes,
                      "%s geometry %u/%u, ggml has %u/%u", g->name, t->block_elems,
                      t->block_bytes, g->elems, g->bytes);
        ck_assert(gk_type_lookup(g->name) == t);
        ck_assert(!gk_type_is_retired(g->id));
    }
    for (size_t k = 0; k < sizeof retired_ids / sizeof retired_ids[0]; k++) {
        ck_assert_ptr_null(gk_type_get(retired_ids[k]));
        ck_assert(gk_type_is_retired(retired_ids[k]));
        ck_assert_ptr_nonnull(gk_type_retired_name(retired_ids[k]));
    }
    ck_assert_ptr_null(gk_type_get(GK_TYPE_COUNT));
    ck_assert(gk_type_lookup("q4_k") == gk_type_get(GK_TYPE_Q4_K));
    ck_assert_ptr_null(gk_type_lookup("Q4_2"));
    ck_assert_uint_eq(gk_type_row_bytes(GK_TYPE_Q4_0, 256), 8 * 18);
    ck_assert_uint_eq(gk_type_row_bytes(GK_TYPE_Q4_0, 33), 0);
}
END_TEST

START_TEST(table_kernels_complete) {
    char missing[2048] = "";
    size_t used = 0;
    for (uint32_t id = 0; id < GK_TYPE_COUNT; id++) {
        const gk_type_info *t = gk_type_get(id);
        if (t == NULL) continue;
        const char *what = NULL;
        if (t->dequantize == NULL && t->byteswap == NULL) what = "dequantize+byteswap";
        else if (t->dequantize == NULL) what = "dequantize";
        else if (t->byteswap == NULL) what = "byteswap";
        if (what != NULL && used < sizeof missing - 64)
            used += (size_t)snprintf(missing + used, sizeof missing - used, " %s(%s)", t->name, what);
    }
    if (used == 0) return;
    const char *allow = getenv("GGUFKIT_ALLOW_MISSING_KERNELS");
    if (allow != NULL && strcmp(allow, "1") == 0) {
        fprintf(stderr, "WARNING: types without kernels:%s\n", missing);
        return;
    }
    ck_abort_msg("types without kernels:%s", missing);
}
END_TEST

static Suite *types_suite(void) {
    Suite *s = suite_create("types");
    TCase *conv = tcase_create("conversions");
    tcase_add_test(conv, fp32_to_fp16_bit_patterns);
    tcase_add_test(conv, fp16_to_fp32_bit_patterns);
    tcase_add_test(conv, fp32_to_bf16_bit_patterns);
    tcase_add_test(conv, plain_float_kernels);
    tcase_add_test(conv, plain_integer_and_f64_dequantize);
    suite_add_tcase(s, conv);

    TCase *blocks = tcase_create("blocks");
    tcase_add_test(blocks, all_zero_blocks);
    tcase_add_test(blocks, constant_blocks);
    tcase_add_test(blocks, hand_computed_legacy_blocks);
    tcase_add_test(blocks, huge_and_tiny_magnitudes);
    tcase_add_test(blocks, float_to_byte_casts_as_x86);
    tcase_add_test(blocks, hand_computed_mxfp4_blocks);
    tcase_add_test(blocks, hand_computed_nvfp4_blocks);
    tcase_add_test(blocks, hand_computed_q1_q2_blocks);
    tcase_add_test(blocks, fp4_one_sign_search_equals_full_search);
    tcase_add_test(blocks, unweighted_types_ignore_imatrix);
    tcase_add_test(blocks, data_checks_of_new_types);
    tcase_add_test(blocks, hand_computed_ternary_blocks);
    tcase_add_test(blocks, round_trip_error_bounds);
    tcase_add_test(blocks, single_block_rows);
    tcase_add_test(blocks, imatrix_rows_independent);
    tcase_add_test(blocks, byteswap_moves_the_right_bytes);
    tcase_add_test(blocks, byteswap_twice_is_identity);
    suite_add_tcase(s, blocks);

    TCase *table = tcase_create("table");
    tcase_add_test(table, table_names_and_geometry);
    tcase_add_test(table, table_kernels_complete);
    suite_add_tcase(s, table);
    return s;
}

int main(void) {
    SRunner *sr = srunner_create(types_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
