/*
 * chars.h - small tests on characters and strings that several parsers share.
 */
#ifndef GK_UTIL_CHARS_H
#define GK_UTIL_CHARS_H

#include <stdbool.h>
#include <string.h>

/** gk_hex_digit() : @return : the value of hexadecimal digit c (either case),
 *  or -1 when c is not one. */
static inline int gk_hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/** gk_has_suffix() : @return : whether the string s ends with suffix. */
static inline bool gk_has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

#endif
