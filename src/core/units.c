/* units.c -- quantities in engineering notation (as_format_si, core.h):
 * the one rule every printed quantity follows (docs/cli-output.md). */
#include "core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The SI prefixes from 1e-24 to 1e24, one per power of 1000; "u" is
 * micro (ASCII, so that the columns of a table line up byte by byte). */
static const char *const SI_PREFIX[] = {"y", "z", "a", "f", "p", "n", "u", "m", "",
                                        "k", "M", "G", "T", "P", "E", "Z", "Y"};
enum { SI_UNITY = 8 }; /* the index of "" */

/* The decimal exponent of |v| (finite, not 0) once rounded to
 * AS_SI_DIGITS significant digits: rounding can carry into the next power
 * of ten (999.96 -> 1000, exponent 3; 0.99996 -> 1.000, exponent 0). */
static int rounded_exponent(double v)
{
    double a = fabs(v);
    int exponent = (int)floor(log10(a));
    double scale = pow(10, AS_SI_DIGITS - 1 - exponent);
    return round(a * scale) / scale >= pow(10, exponent + 1) ? exponent + 1 : exponent;
}

const char *as_format_digits(double v, char text[AS_SI_TEXT_BYTES])
{
    if (isnan(v))
        snprintf(text, AS_SI_TEXT_BYTES, "-");
    else if (isinf(v) || v == 0)
        snprintf(text, AS_SI_TEXT_BYTES, "%s", isinf(v) ? (v < 0 ? "-inf" : "inf") : "0");
    else if (fabs(v) >= 1e-3 && fabs(v) < 1e6) {
        int decimals = AS_SI_DIGITS - 1 - rounded_exponent(v);
        snprintf(text, AS_SI_TEXT_BYTES, "%.*f", decimals < 0 ? 0 : decimals, v);
    } else
        snprintf(text, AS_SI_TEXT_BYTES, "%.*e", AS_SI_DIGITS - 1, v);
    return text;
}

const char *as_format_si(double v, const char *unit, char text[AS_SI_TEXT_BYTES])
{
    unit = unit ? unit : "";
    const char *sep = *unit ? " " : "";
    if (isnan(v)) {
        snprintf(text, AS_SI_TEXT_BYTES, "-");
        return text;
    }
    if (isinf(v) || v == 0) {
        snprintf(text, AS_SI_TEXT_BYTES, "%s%s%.24s", isinf(v) ? (v < 0 ? "-inf" : "inf") : "0",
                 sep, unit);
        return text;
    }
    int p = (int)floor(rounded_exponent(v) / 3.0); /* the power of 1000 */
    if (p < -SI_UNITY || p > SI_UNITY) {           /* beyond yocto and yotta */
        snprintf(text, AS_SI_TEXT_BYTES, "%.*e%s%.24s", AS_SI_DIGITS - 1, v, sep, unit);
        return text;
    }
    /* In [1, 1000) once rounded: AS_SI_DIGITS digits in fixed notation. */
    double scaled = v / pow(1000.0, p);
    int decimals = AS_SI_DIGITS - 1 - rounded_exponent(scaled);
    snprintf(text, AS_SI_TEXT_BYTES, "%.*f %s%.24s", decimals < 0 ? 0 : decimals, scaled,
             SI_PREFIX[SI_UNITY + p], unit);
    return text;
}
