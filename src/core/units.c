/* units.c -- quantities in engineering notation (as_format_si, core.h). */
#include "core.h"

#include <math.h>
#include <stdio.h>

/* SI prefixes from 1e-12 (index 0) to 1e15, one per power of 1000. */
static const char *const SI_PREFIX[] = {"p", "n", "u", "m", "", "k", "M", "G", "T", "P"};
enum { SI_UNIT_INDEX = 4, SI_N_PREFIXES = 10 };

const char *as_format_si(double v, const char *unit, char text[AS_SI_TEXT_BYTES])
{
    if (isnan(v)) {
        snprintf(text, AS_SI_TEXT_BYTES, "-");
        return text;
    }
    if (isinf(v) || v == 0) {
        snprintf(text, AS_SI_TEXT_BYTES, "%s %s", isinf(v) ? (v < 0 ? "-inf" : "inf") : "0", unit);
        return text;
    }
    /* The power of 1000 of v after rounding to three significant digits
     * (999.6 m rounds to 1.00, which belongs to the next prefix). */
    char digits[32];
    snprintf(digits, sizeof digits, "%.2e", fabs(v));
    int exponent = 0;
    sscanf(digits + 5, "%d", &exponent); /* "d.dde+XX" */
    int group = (int)floor(exponent / 3.0);
    int index = group + SI_UNIT_INDEX;
    if (index < 0)
        index = 0;
    if (index >= SI_N_PREFIXES)
        index = SI_N_PREFIXES - 1;
    double scaled = v / pow(1000.0, index - SI_UNIT_INDEX);
    /* Digits before the point are 1 + exponent - 3 * group (when no clamp
     * applied); three significant digits leave the rest after it. */
    int decimals = 2 - (exponent - 3 * (index - SI_UNIT_INDEX));
    decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
    snprintf(text, AS_SI_TEXT_BYTES, "%.*f %s%s", decimals, scaled, SI_PREFIX[index], unit);
    return text;
}
