/*
 * numtext.h - numbers as text, below every folder that prints a number.
 */
#ifndef GK_UTIL_NUMTEXT_H
#define GK_UTIL_NUMTEXT_H

#include <stddef.h>

/** gk_format_double() : the shortest text that reads back as d (NaN, Infinity,
 *  -Infinity as Python's json writes them; "3.0" rather than "3"), written into
 *  buf (size bytes, cut to fit). */
void gk_format_double(char *buf, size_t size, double d);

#endif
