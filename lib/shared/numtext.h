/*
 * numtext.h - numbers as text, below every folder that prints a number. In
 * lib/shared beside json.c, which uses it; gk_format_double is public API, so
 * the command calls the library's and compiles no copy of its own.
 */
#ifndef GK_SHARED_NUMTEXT_H
#define GK_SHARED_NUMTEXT_H

#include <stddef.h>

/** gk_format_double() : the shortest text that reads back as d (NaN, Infinity,
 *  -Infinity as Python's json writes them; "3.0" rather than "3"), written into
 *  buf (size bytes, cut to fit). */
void gk_format_double(char *buf, size_t size, double d);

#endif
