/*
 * json.c -- the one place where accelsearch turns numbers and JSON into
 * text: the shortest round-trip spelling of a double, JSON values built
 * from C strings that may not be UTF-8, and the dump of a jansson tree
 * with those numbers (jansson's own dump prints reals with %.17g).
 *
 * Rules, applied by every writer (CLI output, store rows, exports):
 * - a double is written in the fewest significant digits that read back
 *   as the same bits; an integral value within 2^53 in plain digits;
 * - JSON has no infinities and no NaN: a non-finite number is null;
 * - text is valid UTF-8: a byte that does not belong to a well-formed
 *   UTF-8 sequence becomes U+FFFD (the replacement character), on the way
 *   into a JSON value and on the way into the parser alike.
 */
#include "core.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ numbers */

/* 2^53: every integer up to it is a double, and %.0f spells it exactly. */
#define EXACT_INTEGER_LIMIT 9007199254740992.0

const char *as_format_double(double v, char text[AS_DOUBLE_TEXT_BYTES])
{
    if (!isfinite(v)) {
        snprintf(text, AS_DOUBLE_TEXT_BYTES, "%g", v);
        return text;
    }
    if (v == floor(v) && fabs(v) <= EXACT_INTEGER_LIMIT) {
        snprintf(text, AS_DOUBLE_TEXT_BYTES, "%.0f", v);
        return text;
    }
    for (int digits = 1; digits < 17; digits++) {
        snprintf(text, AS_DOUBLE_TEXT_BYTES, "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            return text;
    }
    snprintf(text, AS_DOUBLE_TEXT_BYTES, "%.17g", v); /* always reads back */
    return text;
}

/* -------------------------------------------------------------- UTF-8 */

/* The length of the well-formed UTF-8 sequence at s (1 to 4), or 0 when
 * the byte at s does not start one (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF).  s is NUL-terminated. */
static int utf8_sequence_length(const unsigned char *s)
{
    unsigned char c = s[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

char *as_utf8_copy(const char *s)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    size_t bad = 0, n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; n++) {
        int len = utf8_sequence_length(p);
        bad += len == 0;
        p += len ? len : 1;
    }
    char *copy = malloc(strlen(s) + 2 * bad + 1); /* each bad byte grows to three */
    if (!copy)
        return NULL;
    char *out = copy;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int len = utf8_sequence_length(p);
        if (len == 0) {
            memcpy(out, replacement, 3);
            out += 3;
            p++;
        } else {
            memcpy(out, p, (size_t)len);
            out += len;
            p += len;
        }
    }
    *out = '\0';
    return copy;
}

/* --------------------------------------------------------- JSON values */

json_t *as_json_string(const char *s)
{
    char *valid = as_utf8_copy(s ? s : "");
    json_t *v = valid ? json_string(valid) : NULL;
    free(valid);
    return v;
}

json_t *as_json_number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

bool as_json_put(json_t *object, const char *key, json_t *value)
{
    char *valid = as_utf8_copy(key);
    if (!valid) {
        json_decref(value);
        return false;
    }
    /* json_object_set_new releases value when it fails. */
    bool ok = value && json_object_set_new(object, valid, value) == 0;
    free(valid);
    return ok;
}

bool as_json_push(json_t *array, json_t *value)
{
    return value && json_array_append_new(array, value) == 0;
}

as_code as_json_parse(const char *text, const char *what, json_t **out, as_status *st)
{
    *out = NULL;
    char *valid = as_utf8_copy(text ? text : "");
    if (!valid)
        return as_fail(st, AS_ENOMEM, "out of memory reading %s", what);
    json_error_t error;
    *out = json_loads(valid, JSON_DECODE_ANY, &error);
    free(valid);
    if (!*out)
        return as_fail(st, AS_EINVAL, "%s: line %d, column %d: %s", what, error.line, error.column,
                       error.text);
    return AS_OK;
}

/* ---------------------------------------------------------------- dump */

/* A string (a jansson string, valid UTF-8) in quotes, escaped by
 * jansson's own encoder: quotes, backslashes and control characters (\n,
 * \t, ... and \u00xx for the rest). */
static bool dump_string(FILE *f, const json_t *string)
{
    return json_dumpf(string, f, JSON_ENCODE_ANY) == 0;
}

/* A member's key, the same way. */
static bool dump_key(FILE *f, const char *key)
{
    json_t *string = json_string_nocheck(key); /* an object's keys are UTF-8 already */
    bool ok = string && dump_string(f, string);
    json_decref(string);
    return ok;
}

/* Whether every item of array is a number: such an array (a shape, a
 * tile) is written on one line even when the rest is indented. */
static bool all_numbers(const json_t *array)
{
    size_t i;
    const json_t *item;
    json_array_foreach(array, i, item)
    {
        if (!json_is_number(item))
            return false;
    }
    return true;
}

/* Before the next member or item: a comma after the first, then either a
 * line break and indentation (one_line false) or a space. */
static void separate(FILE *f, size_t index, bool one_line, int depth)
{
    fputs(index ? "," : "", f);
    if (one_line)
        fputs(index ? " " : "", f);
    else
        fprintf(f, "\n%*s", 2 * depth, "");
}

static bool dump_value(FILE *f, const json_t *v, unsigned flags, int depth);

static bool dump_array(FILE *f, const json_t *v, unsigned flags, int depth)
{
    bool one_line = !(flags & AS_JSON_INDENT) || all_numbers(v), ok = true;
    size_t i;
    const json_t *item;
    fputc('[', f);
    json_array_foreach(v, i, item)
    {
        separate(f, i, one_line, depth + 1);
        ok = ok && dump_value(f, item, flags, depth + 1);
    }
    if (!one_line && json_array_size(v) > 0)
        fprintf(f, "\n%*s", 2 * depth, "");
    fputc(']', f);
    return ok;
}

static bool dump_object(FILE *f, const json_t *v, unsigned flags, int depth)
{
    bool one_line = !(flags & AS_JSON_INDENT), ok = true;
    size_t i = 0;
    const char *key;
    const json_t *member;
    fputc('{', f);
    json_object_foreach((json_t *)v, key, member)
    {
        separate(f, i++, one_line, depth + 1);
        ok = ok && dump_key(f, key);
        fputs(": ", f);
        ok = ok && dump_value(f, member, flags, depth + 1);
    }
    if (!one_line && i > 0)
        fprintf(f, "\n%*s", 2 * depth, "");
    fputc('}', f);
    return ok;
}

/* v to f; false when out of memory (a key could not be encoded). */
static bool dump_value(FILE *f, const json_t *v, unsigned flags, int depth)
{
    char number[AS_DOUBLE_TEXT_BYTES];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return dump_object(f, v, flags, depth);
    case JSON_ARRAY:
        return dump_array(f, v, flags, depth);
    case JSON_STRING:
        return dump_string(f, v);
    case JSON_INTEGER:
        fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        fputs(as_format_double(json_real_value(v), number), f);
        break;
    case JSON_TRUE:
        fputs("true", f);
        break;
    case JSON_FALSE:
        fputs("false", f);
        break;
    case JSON_NULL:
        fputs("null", f);
        break;
    }
    return true;
}

bool as_json_dump(FILE *f, const json_t *v, unsigned flags)
{
    bool ok = dump_value(f, v, flags, 0);
    return ok && !ferror(f);
}

char *as_json_text(const json_t *v, unsigned flags)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    bool ok = as_json_dump(f, v, flags);
    if (fclose(f) != 0 || !ok) {
        free(text);
        return NULL;
    }
    return text;
}
