/*
 * legacy_avx512.c - the Q8_0 quantizer with AVX-512: sixteen blocks at a time,
 * their sixteen scales computed in one register.
 *
 * Bit-identical to legacy.c: each block's largest absolute value (order-free),
 * then in the lanes d = amax / 127 and id = 1 / d (true divisions), d to binary16
 * by the F16C conversion (round to nearest even, as gk_fp32_to_fp16 does for
 * every finite value), and each value's roundf(x * id) converted as the scalar
 * code compiles it (truncation to 32 bits, then the low byte). A block holding
 * NaN or infinity, where the scalar maximum's order matters, and the blocks past
 * the last whole group of sixteen go through the scalar kernel.
 */
#include <immintrin.h>
#include <string.h>

#include "types/kernels.h"

#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))
#define QK 32
#define GROUP 16

AVX512 static inline __m512 absv(__m512 x) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFFFFFF)));
}

/* Whether any lane of a or b is NaN or infinite. */
AVX512 static inline bool nonfinite(__m512 a, __m512 b) {
    const __m512i expo = _mm512_set1_epi32(0x7F800000);
    const __mmask16 ma = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(a), expo), expo);
    const __mmask16 mb = _mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_castps_si512(b), expo), expo);
    return (ma | mb) != 0;
}

/* roundf (half away from zero) of each lane, exactly: truncate, then step away
 * from zero when the dropped fraction is at least one half. */
AVX512 static inline __m512 round_away(__m512 v) {
    const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask16 up = _mm512_cmp_ps_mask(absv(_mm512_sub_ps(v, t)), _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __m512 step = _mm512_or_ps(_mm512_set1_ps(1.0f), _mm512_and_ps(v, _mm512_set1_ps(-0.0f)));
    return _mm512_mask_add_ps(t, up, t, step);
}

/* The 32 bytes of one block's quants: (int8_t) of roundf(x * id). */
AVX512 static inline void quants(const float *x, __m512 id, uint8_t *qs) {
    for (int k = 0; k < 2; k++) {
        const __m512i q = _mm512_cvttps_epi32(round_away(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * k), id)));
        _mm_storeu_si128((__m128i *)(qs + 16 * k), _mm512_cvtepi32_epi8(q));
    }
}

AVX512 static void quantize_q8_0(const float *src, void *dst, int64_t nrows, int64_t n_per_row,
                                 const float *imatrix) {
    (void)imatrix;
    uint8_t *out = dst;
    const int64_t nb = nrows * n_per_row / QK;
    int64_t i = 0;
    for (; i + GROUP <= nb; i += GROUP) {
        const float *x = src + i * QK;
        uint8_t *o = out + i * 34;
        float amax[GROUP];
        uint32_t bad = 0;
        for (int b = 0; b < GROUP; b++) {
            const __m512 v0 = _mm512_loadu_ps(x + b * QK), v1 = _mm512_loadu_ps(x + b * QK + 16);
            if (nonfinite(v0, v1)) bad |= 1u << b;
            amax[b] = _mm512_reduce_max_ps(_mm512_max_ps(absv(v0), absv(v1)));
        }
        const __m512 d = _mm512_div_ps(_mm512_loadu_ps(amax), _mm512_set1_ps((1 << 7) - 1));
        const __mmask16 nonzero = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_UQ);
        float id[GROUP];
        uint16_t h[GROUP];
        _mm512_storeu_ps(id, _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(1.0f), d));
        _mm256_storeu_si256((__m256i *)h, _mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        for (int b = 0; b < GROUP; b++) {
            memcpy(o + b * 34, &h[b], 2);
            quants(x + b * QK, _mm512_set1_ps(id[b]), o + b * 34 + 2);
        }
        for (; bad; bad &= bad - 1) {
            const int b = __builtin_ctz(bad);
            gk_quantize_q8_0(x + b * QK, o + b * 34, 1, QK, NULL);
        }
    }
    if (i < nb) gk_quantize_q8_0(src + i * QK, out + i * 34, 1, (nb - i) * QK, NULL);
}

/** gk_register_legacy_avx512() : the Q8_0 quantizer of table. */
void gk_register_legacy_avx512(gk_type_info *table) { table[GK_TYPE_Q8_0].quantize = quantize_q8_0; }
