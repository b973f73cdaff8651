/*
 * test_json.c -- the core number formatter (shortest text that reads back
 * as the same bits), the UTF-8 rule (invalid bytes become U+FFFD) and the
 * dump of jansson trees that every JSON writer uses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* ----------------------------------------------------------- formatter */

static void expect_text(double v, const char *want)
{
    char text[AS_DOUBLE_TEXT_BYTES];
    as_format_double(v, text);
    if (strcmp(text, want) != 0)
        fail_msg("%.17g: got '%s', want '%s'", v, text, want);
}

static void test_format_known_values(void **state)
{
    (void)state;
    expect_text(0.1, "0.1");
    expect_text(0.0015, "0.0015");
    expect_text(1.25, "1.25");
    expect_text(1e300, "1e+300");
    expect_text(3.75e-9, "3.75e-09");
    expect_text(1.0 / 3.0, "0.3333333333333333");
    expect_text(0.1 + 0.2, "0.30000000000000004");
    expect_text(0.0, "0");
    expect_text(-0.0, "-0");
    expect_text(2500000.0, "2500000");
    expect_text(-42.0, "-42");
    expect_text(1e15, "1000000000000000");
    expect_text(9007199254740992.0, "9007199254740992"); /* 2^53 */
    expect_text(1e20, "1e+20");
    expect_text(5e-324, "5e-324");                                  /* the smallest denormal */
    expect_text(2.2250738585072009e-308, "2.225073858507201e-308"); /* largest denormal */
    expect_text(DBL_MAX, "1.7976931348623157e+308");
    expect_text(INFINITY, "inf");
    expect_text(-INFINITY, "-inf");
    expect_text(NAN, "nan");
}

/* The significant digits of a %g text (sign, point and exponent aside,
 * leading zeros not counted). */
static int significant_digits(const char *text)
{
    int n = 0;
    bool leading = true;
    for (const char *p = text; *p && *p != 'e'; p++) {
        if (*p < '0' || *p > '9')
            continue;
        leading = leading && *p == '0';
        n += !leading;
    }
    return n;
}

/* text reads back as exactly v, and no shorter %g does (integers within
 * 2^53 are written in full on purpose and skip that part). */
static void check_shortest(double v)
{
    char text[AS_DOUBLE_TEXT_BYTES], shorter[400];
    as_format_double(v, text);
    double back = strtod(text, NULL);
    if (memcmp(&back, &v, sizeof v) != 0)
        fail_msg("%a: '%s' reads back as %a", v, text, back);
    if (v == floor(v) && fabs(v) <= 9007199254740992.0)
        return;
    for (int digits = 1; digits < significant_digits(text); digits++) {
        snprintf(shorter, sizeof shorter, "%.*g", digits, v);
        if (strtod(shorter, NULL) == v)
            fail_msg("%a: '%s' is shorter than '%s'", v, shorter, text);
    }
}

static void test_format_random_round_trip(void **state)
{
    (void)state;
    uint64_t seed = 20261124;
    int checked = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = as_splitmix64(&seed);
        double v;
        switch (i % 4) {
        case 0: /* any bit pattern: every exponent */
            memcpy(&v, &bits, sizeof v);
            break;
        case 1: /* denormals */
            bits &= 0x800FFFFFFFFFFFFFull;
            memcpy(&v, &bits, sizeof v);
            break;
        case 2: /* the sizes metrics have */
            v = (double)(bits >> 11) / 9007199254740992.0 * pow(10.0, (double)(i % 40) - 20);
            break;
        default: /* integers, some above 2^53 */
            v = (double)(int64_t)(bits >> (i % 3 == 0 ? 8 : 20)) * (i % 2 ? -1 : 1);
            break;
        }
        if (!isfinite(v))
            continue;
        check_shortest(v);
        checked++;
    }
    assert_true(checked > 199000);
    check_shortest(-0.0);
    check_shortest(DBL_MIN);
    check_shortest(nextafter(1.0, 2.0));
    check_shortest(9007199254740993.0);
}

/* ---------------------------------------------------------------- UTF-8 */

static void expect_utf8(const char *in, const char *want)
{
    char *got = as_utf8_copy(in);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static void test_utf8_rule(void **state)
{
    (void)state;
#define FFFD "\xEF\xBF\xBD"
    expect_utf8("", "");
    expect_utf8("conv1", "conv1");
    expect_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80", "caf\xC3\xA9 \xF0\x9F\x98\x80"); /* kept */
    expect_utf8("conv\xFF", "conv" FFFD);
    expect_utf8("\xFF\xFE", FFFD FFFD);
    expect_utf8("a\xC0\x80z", "a" FFFD FFFD "z");         /* overlong NUL */
    expect_utf8("\xED\xA0\x80", FFFD FFFD FFFD);          /* a surrogate */
    expect_utf8("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* above U+10FFFF */
    expect_utf8("end\xE2\x82", "end" FFFD FFFD);          /* cut short */
    expect_utf8("\x80x", FFFD "x");                       /* a lone continuation */
#undef FFFD
}

/* ----------------------------------------------------------------- dump */

static char *dump(const json_t *v, unsigned flags)
{
    char *text = as_json_text(v, flags);
    assert_non_null(text);
    return text;
}

/* A tree with every kind of value, built through the core helpers. */
static json_t *sample(void)
{
    json_t *o = json_object(), *shape = json_array(), *names = json_array();
    assert_true(as_json_put(o, "name", as_json_string("layer\xFF\n\"1\"")));
    assert_true(as_json_put(o, "count", json_integer(-12)));
    assert_true(as_json_put(o, "energy_pJ", as_json_number(2500000.0)));
    assert_true(as_json_put(o, "latency_s", as_json_number(0.1 + 0.2)));
    assert_true(as_json_put(o, "edp", as_json_number(INFINITY)));
    assert_true(as_json_put(o, "ok", json_true()));
    assert_true(as_json_push(shape, json_integer(1)));
    assert_true(as_json_push(shape, as_json_number(0.5)));
    assert_true(as_json_put(o, "shape", shape));
    assert_true(as_json_push(names, as_json_string("a\tb")));
    assert_true(as_json_put(o, "names", names));
    assert_true(as_json_put(o, "empty", json_object()));
    assert_true(as_json_put(o, "none", json_array()));
    return o;
}

static void test_dump_one_line(void **state)
{
    (void)state;
    json_t *o = sample();
    char *text = dump(o, 0);
    assert_string_equal(text, "{\"name\": \"layer\xEF\xBF\xBD\\n\\\"1\\\"\", \"count\": -12, "
                              "\"energy_pJ\": 2500000, \"latency_s\": 0.30000000000000004, "
                              "\"edp\": null, \"ok\": true, \"shape\": [1, 0.5], "
                              "\"names\": [\"a\\tb\"], \"empty\": {}, \"none\": []}");
    /* jansson reads it back to the same values. */
    json_error_t error;
    json_t *back = json_loads(text, 0, &error);
    assert_non_null(back);
    assert_true(json_real_value(json_object_get(back, "latency_s")) == 0.1 + 0.2);
    assert_true(json_is_null(json_object_get(back, "edp")));
    assert_string_equal(json_string_value(json_object_get(back, "name")),
                        "layer\xEF\xBF\xBD\n\"1\"");
    json_decref(back);
    free(text);
    json_decref(o);
}

static void test_dump_indented(void **state)
{
    (void)state;
    json_t *o = sample();
    char *text = dump(o, AS_JSON_INDENT);
    assert_string_equal(text, "{\n"
                              "  \"name\": \"layer\xEF\xBF\xBD\\n\\\"1\\\"\",\n"
                              "  \"count\": -12,\n"
                              "  \"energy_pJ\": 2500000,\n"
                              "  \"latency_s\": 0.30000000000000004,\n"
                              "  \"edp\": null,\n"
                              "  \"ok\": true,\n"
                              "  \"shape\": [1, 0.5],\n"
                              "  \"names\": [\n"
                              "    \"a\\tb\"\n"
                              "  ],\n"
                              "  \"empty\": {},\n"
                              "  \"none\": []\n"
                              "}");
    free(text);
    json_decref(o);
}

static void test_dump_invalid_key(void **state)
{
    (void)state;
    json_t *o = json_object();
    assert_true(as_json_put(o, "k\xFF", json_integer(1)));
    assert_false(as_json_put(o, "lost", NULL)); /* a failed value fails the put */
    char *text = dump(o, 0);
    assert_string_equal(text, "{\"k\xEF\xBF\xBD\": 1}");
    free(text);
    json_decref(o);
}

static void test_parse(void **state)
{
    (void)state;
    json_t *v;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(as_json_parse("{\"a\": [1, 2.5e-3, \"x\xFF\"]}", "sample", &v, &st), AS_OK);
    char *text = dump(v, 0);
    assert_string_equal(text, "{\"a\": [1, 0.0025, \"x\xEF\xBF\xBD\"]}");
    free(text);
    json_decref(v);
    assert_int_equal(as_json_parse("{\"a\": 1,\n \"b\" 2}", "params of row 3", &v, &st), AS_EINVAL);
    assert_null(v);
    assert_non_null(strstr(st.message, "params of row 3: line 2, column "));
    assert_non_null(strstr(st.message, "':' expected"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_known_values),
        cmocka_unit_test(test_format_random_round_trip),
        cmocka_unit_test(test_utf8_rule),
        cmocka_unit_test(test_dump_one_line),
        cmocka_unit_test(test_dump_indented),
        cmocka_unit_test(test_dump_invalid_key),
        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
