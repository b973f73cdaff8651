/* test_yaml.c -- the YAML tree of core.h: structure, lines, anchors,
 * strictness, typed reads and malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* Parse text (NUL-terminated) as "t.yaml"; the status is left in *st. */
static as_code parse(const char *text, as_yaml_doc *doc, as_status *st)
{
    as_status_clear(st);
    return as_yaml_parse(text, strlen(text), "t.yaml", doc, st);
}

/* Parse text that must fail with code and a message starting with prefix. */
static void expect_failure(const char *text, as_code code, const char *prefix)
{
    as_yaml_doc doc;
    as_status st;
    assert_int_equal(parse(text, &doc, &st), code);
    assert_int_equal(st.code, code);
    if (strncmp(st.message, prefix, strlen(prefix)) != 0)
        fail_msg("message '%s' does not start with '%s'", st.message, prefix);
    assert_null(doc.root);
    as_yaml_free(&doc); /* harmless after a failure */
}

static void test_tree_and_lines(void **state)
{
    (void)state;
    const char *text = "# comment\nname: conv\ndims: [C, M, R]\nnested:\n  - a: 1\n    b: 'two'\n  "
                       "- {x: 3}\nempty:\n";
    as_yaml_doc doc;
    as_status st;
    assert_int_equal(parse(text, &doc, &st), AS_OK);
    const as_yaml_node *root = doc.root;
    assert_non_null(root);
    assert_int_equal(root->kind, AS_YAML_MAPPING);
    assert_int_equal(root->n, 4);
    assert_string_equal(root->keys[0], "name");
    assert_int_equal(root->key_lines[0], 2);
    assert_string_equal(as_yaml_get(root, "name")->scalar, "conv");
    assert_int_equal(as_yaml_get(root, "name")->line, 2);
    assert_int_equal(as_yaml_get(root, "name")->column, 7);

    const as_yaml_node *dims = as_yaml_get(root, "dims");
    assert_int_equal(dims->kind, AS_YAML_SEQUENCE);
    assert_int_equal(dims->n, 3);
    assert_string_equal(dims->items[2]->scalar, "R");
    assert_int_equal(dims->line, 3);

    const as_yaml_node *nested = as_yaml_get(root, "nested");
    assert_int_equal(nested->n, 2);
    assert_int_equal(nested->items[0]->line, 5);
    assert_string_equal(as_yaml_get(nested->items[0], "b")->scalar, "two");
    assert_int_equal(as_yaml_get(nested->items[0], "b")->line, 6);
    assert_string_equal(as_yaml_get(nested->items[1], "x")->scalar, "3");
    assert_int_equal(as_yaml_get(nested->items[1], "x")->line, 7);

    const as_yaml_node *empty = as_yaml_get(root, "empty");
    assert_int_equal(empty->kind, AS_YAML_SCALAR);
    assert_string_equal(empty->scalar, "");
    assert_null(as_yaml_get(root, "absent"));
    assert_null(as_yaml_get(dims, "C")); /* not a mapping */
    assert_null(as_yaml_get(NULL, "C"));
    assert_string_equal(doc.path, "t.yaml");
    as_yaml_free(&doc);
    assert_null(doc.root);
}

static void test_empty_document(void **state)
{
    (void)state;
    as_yaml_doc doc;
    as_status st;
    assert_int_equal(parse("", &doc, &st), AS_OK);
    assert_null(doc.root);
    as_yaml_free(&doc);
    assert_int_equal(parse("# only a comment\n", &doc, &st), AS_OK);
    assert_null(doc.root);
    as_yaml_free(&doc);
    /* An explicit document with no content holds one empty scalar. */
    assert_int_equal(parse("---\n", &doc, &st), AS_OK);
    assert_string_equal(doc.root->scalar, "");
    as_yaml_free(&doc);
    assert_int_equal(parse("42", &doc, &st), AS_OK);
    assert_string_equal(doc.root->scalar, "42");
    as_yaml_free(&doc);
}

static void test_anchors_and_aliases(void **state)
{
    (void)state;
    const char *text = "base: &b {depth: 16, width: 64}\ncopy: *b\nname: &n glb\n*n : keyed by "
                       "alias\nlist: [*n, *b]\n";
    as_yaml_doc doc;
    as_status st;
    assert_int_equal(parse(text, &doc, &st), AS_OK);
    const as_yaml_node *base = as_yaml_get(doc.root, "base");
    assert_ptr_equal(as_yaml_get(doc.root, "copy"), base);
    assert_string_equal(as_yaml_get(as_yaml_get(doc.root, "copy"), "width")->scalar, "64");
    assert_string_equal(as_yaml_get(doc.root, "glb")->scalar, "keyed by alias");
    const as_yaml_node *list = as_yaml_get(doc.root, "list");
    assert_string_equal(list->items[0]->scalar, "glb");
    assert_ptr_equal(list->items[1], base);
    as_yaml_free(&doc);

    /* A redefined anchor names the newest node. */
    assert_int_equal(parse("a: &x 1\nb: &x 2\nc: *x\n", &doc, &st), AS_OK);
    assert_string_equal(as_yaml_get(doc.root, "c")->scalar, "2");
    as_yaml_free(&doc);

    expect_failure("a: *nowhere\n", AS_EINVAL, "t.yaml:1:4: unknown anchor 'nowhere'");
    /* A node cannot contain itself: its anchor is not complete yet. */
    expect_failure("a: &self [1, *self]\n", AS_EINVAL, "t.yaml:1:14: unknown anchor 'self'");
}

static void test_strictness(void **state)
{
    (void)state;
    expect_failure("a: 1\nb: 2\na: 3\n", AS_EINVAL,
                   "t.yaml:3: duplicate key 'a' (first at line 1)");
    expect_failure("x:\n  k: 1\n  j: 2\n  k: 1\n  j: 3\n", AS_EINVAL,
                   "t.yaml:4: duplicate key 'k' (first at line 2)");
    expect_failure("{a: 1, a: 1}", AS_EINVAL, "t.yaml:1: duplicate key 'a'");
    expect_failure("? [a, b]\n: c\n", AS_EINVAL, "t.yaml:1:3: mapping keys must be scalars");
    expect_failure("a: 1\n---\nb: 2\n", AS_EINVAL, "t.yaml:2: a second document");
    expect_failure("a: \"x\\0y\"\n", AS_EINVAL, "t.yaml:1:4: scalar contains a NUL");
}

/* n opening brackets then n closing ones, malloc'd. */
static char *nested_text(int n)
{
    char *s = malloc((size_t)n * 2 + 1);
    assert_non_null(s);
    memset(s, '[', (size_t)n);
    memset(s + n, ']', (size_t)n);
    s[2 * n] = '\0';
    return s;
}

static void test_depth_limit(void **state)
{
    (void)state;
    as_yaml_doc doc;
    as_status st;
    char *ok = nested_text(256);
    assert_int_equal(parse(ok, &doc, &st), AS_OK);
    const as_yaml_node *n = doc.root;
    int depth = 0;
    for (; n->kind == AS_YAML_SEQUENCE && n->n == 1; n = n->items[0])
        depth++;
    assert_int_equal(depth, 255); /* the innermost [] is empty */
    as_yaml_free(&doc);
    free(ok);

    char *deep = nested_text(257);
    expect_failure(deep, AS_EINVAL, "t.yaml:1:257: nesting deeper than 256 levels");
    free(deep);
    char *bomb = nested_text(100000);
    expect_failure(bomb, AS_EINVAL, "t.yaml:1:257: nesting deeper");
    free(bomb);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_failure("a: b: c\n", AS_EINVAL, "t.yaml:1:5: mapping values are not allowed");
    expect_failure(
        "a:\n  - 1\n  b: 2\n", AS_EINVAL,
        "t.yaml:3:3: did not find expected '-' indicator while parsing a block collection");
    expect_failure("a:\n  b: 1\n c: 2\n", AS_EINVAL,
                   "t.yaml:3:2: did not find expected key while parsing a block mapping");
    expect_failure("a: [1, 2\n", AS_EINVAL, "t.yaml:2:1: did not find expected ',' or ']'");
    expect_failure("a: 'open\n", AS_EINVAL, "t.yaml:2:1: found unexpected end of stream");
    expect_failure("a:\n\tb: 1\n", AS_EINVAL, "t.yaml:2:1: found character that cannot start");
    expect_failure("a: \xff\xfe\n", AS_EINVAL, "t.yaml:1:4: invalid leading UTF-8 octet");
    expect_failure("ok: 1\nbad: \"\xc3\x28\"\n", AS_EINVAL, "t.yaml:2:8: invalid trailing UTF-8");
    expect_failure("a: &\n", AS_EINVAL, "t.yaml:1:5: did not find expected alphabetic");
    expect_failure("a: !<\n", AS_EINVAL, "t.yaml:1:6: did not find expected tag URI");
    expect_failure("a: \"\\q\"\n", AS_EINVAL, "t.yaml:1:5: found unknown escape character");
}

/* Reading scalar text through one typed getter. */
typedef enum { AS_INT, AS_DOUBLE, AS_BOOL } getter;

static as_code read_as(getter g, const char *text, int64_t *i, double *d, bool *b, as_status *st)
{
    char buf[128];
    snprintf(buf, sizeof buf, "value: %s\n", text);
    as_yaml_doc doc;
    assert_int_equal(parse(buf, &doc, st), AS_OK);
    const as_yaml_node *v = as_yaml_get(doc.root, "value");
    as_code rc = g == AS_INT      ? as_yaml_int(&doc, v, "value", i, st)
                 : g == AS_DOUBLE ? as_yaml_double(&doc, v, "value", d, st)
                                  : as_yaml_bool(&doc, v, "value", b, st);
    as_yaml_free(&doc);
    return rc;
}

static void test_typed_reads(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t value;
    } ints[] = {{"0", 0},
                {"42", 42},
                {"+7", 7},
                {"-12", -12},
                {"0x1F", 31},
                {"0o17", 15},
                {"'16'", 16},
                {"9223372036854775807", INT64_MAX},
                {"-9223372036854775808", INT64_MIN}};
    static const char *const not_ints[] = {
        "1.5",   "1e3",    "abc", "' 4'",  "0x",
        "0x0x1", "--1",    "+-1", "\"\"",  "9223372036854775808",
        "[1]",   "{a: 1}", "0o8", "12abc", "-9223372036854775809"};
    static const struct {
        const char *text;
        double value;
    } doubles[] = {{"1e-9", 1e-9},   {"-2.5", -2.5}, {"3", 3.0},     {".5", 0.5},
                   {"+1E3", 1000.0}, {"7.", 7.0},    {"0x10", 16.0}, {"1e-400", 0.0}};
    static const char *const not_doubles[] = {"inf",   "nan",  "1e", "0x1p3", "1.2.3", "e5",
                                              "1e999", "fast", "''", ".",     "' 1'"};
    as_status st;
    int64_t i;
    double d;
    bool b;
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        assert_int_equal(read_as(AS_INT, ints[k].text, &i, &d, &b, &st), AS_OK);
        assert_true(i == ints[k].value);
    }
    for (size_t k = 0; k < sizeof not_ints / sizeof not_ints[0]; k++) {
        if (read_as(AS_INT, not_ints[k], &i, &d, &b, &st) != AS_EINVAL)
            fail_msg("'%s' read as an integer", not_ints[k]);
        assert_non_null(strstr(st.message, "t.yaml:1: value: expected an integer, got "));
    }
    for (size_t k = 0; k < sizeof doubles / sizeof doubles[0]; k++) {
        assert_int_equal(read_as(AS_DOUBLE, doubles[k].text, &i, &d, &b, &st), AS_OK);
        assert_true(fabs(d - doubles[k].value) <= 1e-12 * fabs(doubles[k].value) + 1e-300);
    }
    for (size_t k = 0; k < sizeof not_doubles / sizeof not_doubles[0]; k++) {
        if (read_as(AS_DOUBLE, not_doubles[k], &i, &d, &b, &st) != AS_EINVAL)
            fail_msg("'%s' read as a number", not_doubles[k]);
        assert_non_null(strstr(st.message, "t.yaml:1: value: expected a number, got "));
    }
    assert_int_equal(read_as(AS_DOUBLE, ".inf", &i, &d, &b, &st), AS_OK);
    assert_true(isinf(d) && d > 0);
    assert_int_equal(read_as(AS_DOUBLE, "-.Inf", &i, &d, &b, &st), AS_OK);
    assert_true(isinf(d) && d < 0);
    assert_int_equal(read_as(AS_DOUBLE, ".NaN", &i, &d, &b, &st), AS_OK);
    assert_true(isnan(d));

    static const char *const trues[] = {"true", "True", "yes", "YES", "on"};
    static const char *const falses[] = {"false", "FALSE", "no", "No", "off"};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(read_as(AS_BOOL, trues[k], &i, &d, &b, &st), AS_OK);
        assert_true(b);
        assert_int_equal(read_as(AS_BOOL, falses[k], &i, &d, &b, &st), AS_OK);
        assert_false(b);
    }
    assert_int_equal(read_as(AS_BOOL, "1", &i, &d, &b, &st), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:1: value: expected true or false, got '1'");
    assert_int_equal(read_as(AS_INT, "[1, 2]", &i, &d, &b, &st), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:1: value: expected an integer, got a sequence");
    assert_int_equal(read_as(AS_INT, "'x'", &i, &d, &b, &st), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:1: value: expected an integer, got 'x'");

    /* A missing node is an error that names the key. */
    as_yaml_doc doc;
    assert_int_equal(parse("a: 1\n", &doc, &st), AS_OK);
    as_status_clear(&st);
    assert_int_equal(as_yaml_int(&doc, as_yaml_get(doc.root, "depth"), "depth", &i, &st),
                     AS_EINVAL);
    assert_string_equal(st.message, "t.yaml: depth: missing, expected an integer");
    as_yaml_free(&doc);
}

static void test_check_keys(void **state)
{
    (void)state;
    static const char *const allowed[] = {"depth", "width", "datawidth", NULL};
    as_yaml_doc doc;
    as_status st;
    assert_int_equal(
        parse("a:\n  depth: 1\n  width: 2\nb:\n  depth: 1\n  size: 3\nc: [1]\n", &doc, &st), AS_OK);
    assert_int_equal(
        as_yaml_check_keys(&doc, as_yaml_get(doc.root, "a"), "attributes", allowed, &st), AS_OK);
    assert_int_equal(as_yaml_check_keys(&doc, NULL, "attributes", allowed, &st), AS_OK);
    assert_int_equal(
        as_yaml_check_keys(&doc, as_yaml_get(doc.root, "b"), "attributes", allowed, &st),
        AS_EINVAL);
    assert_string_equal(
        st.message,
        "t.yaml:6: unknown key 'size' in attributes (expected one of: depth, width, datawidth)");
    as_status_clear(&st);
    assert_int_equal(
        as_yaml_check_keys(&doc, as_yaml_get(doc.root, "c"), "attributes", allowed, &st),
        AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:7: attributes: expected a mapping, got a sequence");
    as_yaml_free(&doc);
}

/* The strict reader: key paths in messages, required and optional keys,
 * ranges, kinds, names and choices. */
static void test_strict_reader(void **state)
{
    (void)state;
    const char *text = "arch:\n  levels:\n  - name: buf\n    depth: 0\n    width: 2.5\n"
                       "    kind: flash\n    on: maybe\n  - {name: ''}\nnull_value: ~\n";
    as_yaml_doc doc;
    as_status st;
    assert_int_equal(parse(text, &doc, &st), AS_OK);
    as_yaml_reader top = as_yaml_reader_of(&doc, &st);
    as_yaml_reader arch = as_yaml_enter(&top, "arch");
    const as_yaml_node *levels, *missing;
    assert_int_equal(as_yaml_find(&arch, as_yaml_get(doc.root, "arch"), "levels", true,
                                  AS_YAML_SEQUENCE, &levels),
                     AS_OK);
    as_yaml_reader level = as_yaml_enter_item(&arch, "levels", 0);
    assert_string_equal(level.path, "arch.levels[0]");
    const as_yaml_node *map = levels->items[0];
    int64_t depth = 7;
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_int(&level, map, "depth", true, 1, 16, &depth), AS_EINVAL);
    assert_string_equal(
        st.message, "t.yaml:4: arch.levels[0].depth: expected an integer from 1 to 16, got '0'");
    assert_int_equal(depth, 7);
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_int(&level, map, "width", true, 1, 16, &depth), AS_EINVAL);
    assert_string_equal(st.message,
                        "t.yaml:5: arch.levels[0].width: expected an integer, got '2.5'");
    double width = 0;
    assert_int_equal(as_yaml_read_double(&level, map, "width", true, 0, true, INFINITY, &width),
                     AS_OK);
    assert_true(width == 2.5);
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_double(&level, map, "width", true, 0, false, 1, &width),
                     AS_EINVAL);
    assert_string_equal(st.message,
                        "t.yaml:5: arch.levels[0].width: expected a number from 0 to 1, got '2.5'");
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_double(&level, map, "width", true, 2.5, true, INFINITY, &width),
                     AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:5: arch.levels[0].width: expected a number > 2.5, "
                                    "got '2.5'");
    /* Optional keys keep the default; required ones name the mapping. */
    assert_int_equal(as_yaml_read_int(&level, map, "banks", false, 1, 16, &depth), AS_OK);
    assert_int_equal(depth, 7);
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_int(&level, map, "banks", true, 1, 16, &depth), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:3: arch.levels[0]: missing key 'banks'");
    as_status_clear(&st);
    static const char *const required[] = {"name", "size", NULL};
    assert_int_equal(as_yaml_require(&level, map, required), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:3: arch.levels[0]: missing key 'size'");
    assert_int_equal(as_yaml_find(&level, map, "size", false, AS_YAML_SCALAR, &missing), AS_OK);
    assert_null(missing);
    /* Kinds, booleans, choices, names. */
    as_status_clear(&st);
    assert_int_equal(as_yaml_find(&arch, as_yaml_get(doc.root, "arch"), "levels", true,
                                  AS_YAML_MAPPING, &missing),
                     AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:3: arch.levels: expected a mapping, got a sequence");
    bool on = false;
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_bool(&level, map, "on", true, &on), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:7: arch.levels[0].on: expected true or false, got "
                                    "'maybe'");
    static const char *const kinds[] = {"dram", "sram", NULL};
    int kind = -1;
    as_status_clear(&st);
    assert_int_equal(as_yaml_choice(&level, as_yaml_get(map, "kind"), "kind", kinds, &kind),
                     AS_EINVAL);
    assert_string_equal(st.message,
                        "t.yaml:6: arch.levels[0].kind: expected one of dram, sram, got 'flash'");
    char name[4] = "xyz";
    assert_int_equal(as_yaml_read_name(&level, map, "name", true, name, sizeof name), AS_OK);
    assert_memory_equal(name, "buf", 4);
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_name(&level, map, "name", true, name, 3), AS_EINVAL);
    assert_string_equal(st.message,
                        "t.yaml:3: arch.levels[0].name: 'buf...' is longer than 2 characters");
    as_yaml_reader second = as_yaml_enter_item(&arch, "levels", 1);
    as_status_clear(&st);
    assert_int_equal(as_yaml_read_name(&second, levels->items[1], "name", true, name, 4),
                     AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:8: arch.levels[1].name: expected a name");
    static const char *const allowed[] = {"name", NULL};
    as_status_clear(&st);
    assert_int_equal(as_yaml_keys(&level, map, NULL, allowed), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml:4: unknown key 'depth' in arch.levels[0] (expected "
                                    "one of: name)");
    assert_true(as_yaml_is_null(as_yaml_get(doc.root, "null_value")));
    assert_false(as_yaml_is_null(as_yaml_get(doc.root, "arch")));
    /* Without a node there is no line. */
    as_status_clear(&st);
    assert_int_equal(as_yaml_fail(&top, NULL, "", "empty"), AS_EINVAL);
    assert_string_equal(st.message, "t.yaml: empty");
    as_yaml_free(&doc);
}

static void test_load_files(void **state)
{
    (void)state;
    const char *path = AS_TEST_TMP_DIR "/test_yaml_load.yaml";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("top:\n  - 1\n  - two\n", f);
    fclose(f);
    as_yaml_doc doc;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(as_yaml_load(path, &doc, &st), AS_OK);
    assert_string_equal(doc.path, path);
    assert_string_equal(as_yaml_get(doc.root, "top")->items[1]->scalar, "two");
    assert_int_equal(as_yaml_get(doc.root, "top")->items[1]->line, 3);
    as_yaml_free(&doc);

    as_status_clear(&st);
    assert_int_equal(as_yaml_load(AS_TEST_TMP_DIR "/no/such.yaml", &doc, &st), AS_EIO);
    assert_non_null(strstr(st.message, "no/such.yaml: cannot open"));
    assert_null(doc.root);
    as_yaml_free(&doc);
    remove(path);
}

/* Parse n bytes of text that may be malformed: it parses or fails
 * cleanly (ASan checks for crashes and leaks), and a failure names the
 * file.  Returns whether it failed. */
static bool parse_fuzzed(const char *text, size_t n)
{
    as_yaml_doc doc;
    as_status st;
    as_status_clear(&st);
    bool failed = as_yaml_parse(text, n, "m.yaml", &doc, &st) != AS_OK;
    if (failed)
        assert_int_equal(strncmp(st.message, "m.yaml:", 7), 0);
    as_yaml_free(&doc);
    return failed;
}

/* Every prefix of a valid document and every single-byte corruption of it. */
static void test_malformed_never_crash(void **state)
{
    (void)state;
    static const char text[] =
        "arch: &a\n  levels:\n  - {name: 'RF[1..16]', depth: 16}\n  - name: \"GLB\"\n    "
        "attributes: [1, 2, {x: 1}]\ncopy: *a\nlist:\n- ? k\n  : v\n- |\n  block\n  text\n";
    static const char noise[] = "[]{}:,-?&*!|>'\"#%@` \n\t\\\x80\xff";
    const size_t n = sizeof text - 1;
    int failures = 0;
    for (size_t cut = 0; cut <= n; cut++)
        failures += parse_fuzzed(text, cut);
    char buf[sizeof text];
    for (size_t pos = 0; pos < n; pos++) {
        for (size_t k = 0; k < sizeof noise - 1; k++) {
            memcpy(buf, text, n);
            buf[pos] = noise[k];
            failures += parse_fuzzed(buf, n);
        }
    }
    assert_true(failures > 0);
    assert_false(parse_fuzzed(text, n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_and_lines),        cmocka_unit_test(test_empty_document),
        cmocka_unit_test(test_anchors_and_aliases),   cmocka_unit_test(test_strictness),
        cmocka_unit_test(test_depth_limit),           cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_typed_reads),           cmocka_unit_test(test_check_keys),
        cmocka_unit_test(test_strict_reader),         cmocka_unit_test(test_load_files),
        cmocka_unit_test(test_malformed_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
