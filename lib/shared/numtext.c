/*
 * numtext.c - numbers as text: the shortest decimal text of a double that reads
 * back exactly, spelled as JSON readers expect. The model's value labels
 * (meta/text.c) and the JSON items (util/json.c) both write numbers this way.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufkit.h"   /* gk_format_double is public API */
#include "numtext.h"

void gk_format_double(char *buf, size_t size, double d) {
    if (isnan(d)) {
        snprintf(buf, size, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, size, d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    /* The first precision that reads back exactly gives the fewest digits,
     * correctly rounded (any shorter exact text would round the same way). */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, d);
        if (prec == 17 || strtod(buf, NULL) == d) break;
    }
    /* Keep it a float for readers that tell 3 from 3.0 (Python's json does). */
    if (strpbrk(buf, ".eEn") == NULL && strlen(buf) + 3 <= size) strcat(buf, ".0");
}
