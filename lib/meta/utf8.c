/*
 * utf8.c - well-formed UTF-8 (Unicode's table 3-7): the length of one
 * character, the check of a whole buffer, and the repair of an ill-formed one.
 *
 * The buffer check runs sixteen bytes at a time where the processor has SSSE3:
 * three nibble-indexed tables classify every pair of adjacent bytes (a
 * continuation after ASCII, a lead without its continuation, the overlong,
 * surrogate and too-large forms), and the bytes two and three back say where a
 * third or fourth byte of a character must stand. This is the lookup method of
 * Keiser and Lemire ("Validating UTF-8 in less than one instruction per byte").
 * Elsewhere, and for short strings, a word-at-a-time scalar loop does the same.
 */
#include <stdlib.h>
#include <string.h>

#include "meta/value.h"

size_t gk_utf8_char_len(const char *str, uint64_t n) {
    const unsigned char *s = (const unsigned char *)str;
    if (n == 0) return 0;
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF;   /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;         /* no overlong forms */
        if (c == 0xED) hi = 0x9F;         /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;         /* nothing past U+10FFFF */
    } else {
        return 0;                         /* continuation byte, overlong lead, or past F4 */
    }
    if (n < len) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t k = 2; k < len; k++)
        if ((s[k] & 0xC0) != 0x80) return 0;
    return len;
}

size_t gk_utf8_bad_len(const char *str, uint64_t n) {
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0];
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0) return 1;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    /* The lead byte plus the continuation bytes that could still have
     * completed it (Unicode's "maximal subpart", as Python decodes). */
    size_t k = 1;
    while (k < len && k < n && s[k] >= (k == 1 ? lo : 0x80) && s[k] <= (k == 1 ? hi : 0xBF)) k++;
    return k;
}

char *gk_utf8_repair(const char *s, uint64_t n, gk_utf8_repair_rule rule, uint64_t *out_len) {
    if (n > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(3 * (size_t)n + 1);   /* one bad byte grows to at most 3 */
    if (out == NULL) return NULL;
    uint64_t i = 0, len = 0;
    while (i < n) {
        size_t ok = rule == GK_UTF8_REPAIR_BYTES && s[i] == '\0' ? 0 : gk_utf8_char_len(s + i, n - i);
        if (ok) {
            memcpy(out + len, s + i, ok);
            len += ok;
            i += ok;
        } else {
            memcpy(out + len, "\xEF\xBF\xBD", 3);
            len += 3;
            i += rule == GK_UTF8_REPAIR_BYTES ? 1 : gk_utf8_bad_len(s + i, n - i);
        }
    }
    out[len] = '\0';
    if (out_len) *out_len = len;
    return out;
}

static bool utf8_valid_scalar(const char *str, uint64_t n) {
    const unsigned char *s = (const unsigned char *)str;
    uint64_t i = 0;
    while (i < n) {
        if (n - i >= 8) {
            /* Eight bytes at a time: past them when all are ASCII, else straight
             * to the first that is not. */
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t high = w & 0x8080808080808080ull;
            if (high == 0) {
                i += 8;
                continue;
            }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            i += (uint64_t)__builtin_clzll(high) >> 3;
#else
            i += (uint64_t)__builtin_ctzll(high) >> 3;
#endif
        } else if (s[i] < 0x80) {
            i++;
            continue;
        }
        /* s[i] starts a multi-byte character; two-byte ones (Latin, the
         * byte-level BPE marks) inline. */
        if (s[i] >= 0xC2 && s[i] <= 0xDF) {
            if (n - i < 2 || (s[i + 1] & 0xC0) != 0x80) return false;
            i += 2;
            continue;
        }
        size_t len = gk_utf8_char_len(str + i, n - i);
        if (len == 0) return false;
        i += len;
    }
    return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <tmmintrin.h>

#include "types/cpu.h"

/* What a pair of bytes (previous, current) can be wrong about; a pair is bad
 * when all three tables agree on some bit. */
enum {
    TOO_SHORT = 1 << 0,        /* a lead byte, then no continuation */
    TOO_LONG = 1 << 1,         /* a continuation after ASCII */
    OVERLONG_3 = 1 << 2,       /* E0 80..9F */
    TOO_LARGE = 1 << 3,        /* F4 90.., F5.. */
    SURROGATE = 1 << 4,        /* ED A0..BF */
    OVERLONG_2 = 1 << 5,       /* C0/C1 then a continuation */
    TOO_LARGE_1000 = 1 << 6,   /* F5..FF 80..8F */
    OVERLONG_4 = 1 << 6,       /* F0 80..8F */
    TWO_CONTS = 1 << 7,        /* two continuations: right only as a 3rd or 4th byte */
    CARRY = TOO_SHORT | TOO_LONG | TWO_CONTS,
};

#define B(x) ((char)(x))

__attribute__((target("ssse3"))) static __m128i high_nibbles(__m128i x) {
    return _mm_and_si128(_mm_srli_epi16(x, 4), _mm_set1_epi8(0x0F));
}

/* The errors of block in given the block before it. */
__attribute__((target("ssse3"))) static __m128i block_errors(__m128i in, __m128i prev) {
    const __m128i byte1_high = _mm_setr_epi8(
        B(TOO_LONG), B(TOO_LONG), B(TOO_LONG), B(TOO_LONG), B(TOO_LONG), B(TOO_LONG), B(TOO_LONG), B(TOO_LONG),
        B(TWO_CONTS), B(TWO_CONTS), B(TWO_CONTS), B(TWO_CONTS),
        B(TOO_SHORT | OVERLONG_2), B(TOO_SHORT), B(TOO_SHORT | OVERLONG_3 | SURROGATE),
        B(TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4));
    const __m128i byte1_low = _mm_setr_epi8(
        B(CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4), B(CARRY | OVERLONG_2), B(CARRY), B(CARRY),
        B(CARRY | TOO_LARGE), B(CARRY | TOO_LARGE | TOO_LARGE_1000), B(CARRY | TOO_LARGE | TOO_LARGE_1000),
        B(CARRY | TOO_LARGE | TOO_LARGE_1000), B(CARRY | TOO_LARGE | TOO_LARGE_1000),
        B(CARRY | TOO_LARGE | TOO_LARGE_1000), B(CARRY | TOO_LARGE | TOO_LARGE_1000),
        B(CARRY | TOO_LARGE | TOO_LARGE_1000), B(CARRY | TOO_LARGE | TOO_LARGE_1000),
        B(CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE), B(CARRY | TOO_LARGE | TOO_LARGE_1000),
        B(CARRY | TOO_LARGE | TOO_LARGE_1000));
    const __m128i byte2_high = _mm_setr_epi8(
        B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT),
        B(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4),
        B(TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE),
        B(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE),
        B(TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE),
        B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT), B(TOO_SHORT));
    const __m128i low_mask = _mm_set1_epi8(0x0F);
    __m128i prev1 = _mm_alignr_epi8(in, prev, 15);
    __m128i pairs = _mm_and_si128(
        _mm_and_si128(_mm_shuffle_epi8(byte1_high, high_nibbles(prev1)),
                      _mm_shuffle_epi8(byte1_low, _mm_and_si128(prev1, low_mask))),
        _mm_shuffle_epi8(byte2_high, high_nibbles(in)));
    /* Where a byte two back is E0.. or three back is F0.., this byte must be a
     * continuation after a continuation, and only there. */
    __m128i third = _mm_subs_epu8(_mm_alignr_epi8(in, prev, 14), _mm_set1_epi8(B(0xE0 - 0x80)));
    __m128i fourth = _mm_subs_epu8(_mm_alignr_epi8(in, prev, 13), _mm_set1_epi8(B(0xF0 - 0x80)));
    __m128i must_follow = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8(B(0x80)));
    return _mm_xor_si128(must_follow, pairs);
}

/* Nonzero where the block's last bytes start a character that would need more. */
__attribute__((target("ssse3"))) static __m128i unfinished(__m128i in) {
    const __m128i limit = _mm_setr_epi8(B(0xFF), B(0xFF), B(0xFF), B(0xFF), B(0xFF), B(0xFF), B(0xFF),
                                        B(0xFF), B(0xFF), B(0xFF), B(0xFF), B(0xFF), B(0xFF),
                                        B(0xF0 - 1), B(0xE0 - 1), B(0xC0 - 1));
    return _mm_subs_epu8(in, limit);
}

__attribute__((target("ssse3"))) static bool utf8_valid_ssse3(const unsigned char *s, uint64_t n) {
    __m128i err = _mm_setzero_si128(), prev = _mm_setzero_si128(), pending = _mm_setzero_si128();
    uint64_t i = 0;
    for (; n - i >= 16; i += 16) {
        __m128i in = _mm_loadu_si128((const __m128i *)(s + i));
        if (_mm_movemask_epi8(in) == 0) {
            err = _mm_or_si128(err, pending);   /* ASCII: whatever was pending is cut short */
            pending = _mm_setzero_si128();
        } else {
            err = _mm_or_si128(err, block_errors(in, prev));
            pending = unfinished(in);
        }
        prev = in;
    }
    if (i < n) {
        /* The tail, padded with NULs: ASCII after a cut character flags it. */
        unsigned char last[16] = { 0 };
        memcpy(last, s + i, (size_t)(n - i));
        __m128i in = _mm_loadu_si128((const __m128i *)last);
        err = _mm_or_si128(err, block_errors(in, prev));
        pending = _mm_setzero_si128();
    }
    err = _mm_or_si128(err, pending);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) == 0xFFFF;
}

bool gk_utf8_valid(const char *s, uint64_t n) {
    if (n >= 32 && gk_cpu_has_ssse3()) return utf8_valid_ssse3((const unsigned char *)s, n);
    return utf8_valid_scalar(s, n);
}
#else
bool gk_utf8_valid(const char *s, uint64_t n) { return utf8_valid_scalar(s, n); }
#endif
