/* test_core.c -- status, arena, string map and checked arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/core.h"

static void test_status_first_failure_wins(void **state)
{
    (void)state;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(st.code, AS_OK);
    assert_int_equal(as_fail(&st, AS_EINVAL, "file %s line %d", "a.yaml", 3), AS_EINVAL);
    assert_int_equal(as_fail(&st, AS_EIO, "later"), AS_EINVAL);
    assert_string_equal(st.message, "file a.yaml line 3");
    assert_int_equal(as_fail(NULL, AS_ENOMEM, "nobody listens"), AS_ENOMEM);
    assert_string_equal(as_code_name(AS_EINVAL), "invalid input");
}

static void test_arena(void **state)
{
    (void)state;
    as_arena a;
    as_arena_init(&a);
    char *prev = NULL;
    for (int i = 0; i < 10000; i++) {
        char *p = as_arena_printf(&a, "tensor-%d", i);
        assert_non_null(p);
        assert_true(((uintptr_t)p % _Alignof(max_align_t)) == 0);
        if (prev)
            assert_true(p != prev);
        prev = p;
    }
    void *big = as_arena_alloc(&a, 1 << 20); /* larger than any block so far */
    assert_non_null(big);
    assert_true(((unsigned char *)big)[(1 << 20) - 1] == 0);
    assert_string_equal(as_arena_strdup(&a, "x"), "x");
    assert_null(as_arena_strdup(&a, NULL));
    as_arena_free(&a);
    assert_null(a.head);
}

static void test_strmap(void **state)
{
    (void)state;
    as_arena a;
    as_arena_init(&a);
    as_strmap m;
    as_strmap_init(&m);
    assert_int_equal(as_strmap_get(&m, "absent"), -1);
    for (int i = 0; i < 5000; i++)
        assert_true(as_strmap_put(&m, as_arena_printf(&a, "k%d", i), i));
    assert_int_equal(m.count, 5000);
    for (int i = 0; i < 5000; i += 7) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        assert_int_equal(as_strmap_get(&m, key), i);
    }
    assert_true(as_strmap_put(&m, "k42", -5)); /* replace keeps the count */
    assert_int_equal(as_strmap_get(&m, "k42"), -5);
    assert_int_equal(m.count, 5000);
    assert_int_equal(as_strmap_get(&m, "k5000"), -1);
    as_strmap_free(&m);
    as_arena_free(&a);
}

static void test_checked_arithmetic(void **state)
{
    (void)state;
    int64_t r = 7;
    assert_true(as_mul_i64(1 << 20, 1 << 20, &r));
    assert_int_equal(r, (int64_t)1 << 40);
    r = 7;
    assert_false(as_mul_i64(INT64_MAX / 2 + 1, 2, &r));
    assert_int_equal(r, 7);
    assert_false(as_add_i64(INT64_MAX, 1, &r));
    assert_false(as_mul_i64(-1, 2, &r));
    assert_true(as_add_i64(2, 3, &r));
    assert_int_equal(r, 5);
}

static void test_read_file_errors(void **state)
{
    (void)state;
    as_status st;
    as_status_clear(&st);
    size_t n;
    assert_null(as_read_file("/nonexistent/x.onnx", &n, &st));
    assert_int_equal(st.code, AS_EIO);
    assert_non_null(strstr(st.message, "/nonexistent/x.onnx"));
    as_status_clear(&st);
    assert_null(as_read_file("/", &n, &st)); /* a directory reads as an error */
    assert_int_equal(st.code, AS_EIO);
}

static void test_path_extension(void **state)
{
    (void)state;
    assert_true(as_path_has_extension("dir/resnet.onnx", ".onnx"));
    assert_true(as_path_has_extension("ARRAY.CFG", ".cfg"));
    assert_false(as_path_has_extension(".csv", ".csv")); /* nothing before it */
    assert_false(as_path_has_extension("topology.csv.bak", ".csv"));
    assert_false(as_path_has_extension("x.onnx", ".csv"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_first_failure_wins),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_strmap),
        cmocka_unit_test(test_checked_arithmetic),
        cmocka_unit_test(test_read_file_errors),
        cmocka_unit_test(test_path_extension),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
