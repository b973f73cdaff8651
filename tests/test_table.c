/* test_table.c -- core's hash table and growable vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "core/core.h"

typedef struct pair {
    int64_t key, value;
} pair;

static bool pair_has_key(const void *item, const void *key, const void *context)
{
    (void)context;
    return ((const pair *)item)->key == *(const int64_t *)key;
}

/* A poor hash (many collisions, and 0 for key 0) must still give exact
 * answers: equality decides, the hash only narrows. */
static uint64_t poor_hash(int64_t key)
{
    return (uint64_t)(key % 7);
}

static void test_table_insert_find_visit(void **state)
{
    (void)state;
    as_table t;
    as_table_init(&t, sizeof(pair));
    assert_null(as_table_find(&t, 0, &(int64_t){0}, pair_has_key, NULL));
    for (int64_t k = 0; k < 5000; k++) {
        bool added;
        pair *p = as_table_insert(&t, poor_hash(k), &k, pair_has_key, NULL, &added);
        assert_non_null(p);
        assert_true(added);
        p->key = k;
        p->value = 3 * k;
    }
    for (int64_t k = 0; k < 5000; k += 7) {
        bool added;
        pair *p = as_table_insert(&t, poor_hash(k), &k, pair_has_key, NULL, &added);
        assert_false(added);
        assert_int_equal(p->value, 3 * k);
    }
    assert_int_equal(t.count, 5000);
    assert_true(t.count * 2 <= t.capacity);
    int64_t visited = 0, sum = 0;
    for (size_t i = 0; i < t.capacity; i++) {
        const pair *p = as_table_slot(&t, i);
        if (p) {
            visited++;
            sum += p->value;
        }
    }
    assert_int_equal(visited, 5000);
    assert_int_equal(sum, 3 * (4999 * 5000 / 2));
    int64_t absent = 5000;
    assert_null(as_table_find(&t, poor_hash(absent), &absent, pair_has_key, NULL));
    as_table_free(&t);
    assert_int_equal(t.count, 0);
    assert_null(as_table_find(&t, 1, &absent, pair_has_key, NULL));
}

static void test_vec_reserve(void **state)
{
    (void)state;
    int64_t *v = NULL, cap = 0;
    for (int64_t n = 0; n < 1000; n++) {
        assert_true(as_vec_reserve(&v, &cap, n + 1, sizeof *v));
        assert_true(cap >= n + 1);
        v[n] = n;
    }
    for (int64_t n = 0; n < 1000; n++)
        assert_int_equal(v[n], n);
    int64_t before = cap;
    assert_true(as_vec_reserve(&v, &cap, 10, sizeof *v)); /* already room: unchanged */
    assert_int_equal(cap, before);
    assert_false(as_vec_reserve(&v, &cap, INT64_MAX, sizeof *v)); /* overflow */
    assert_int_equal(cap, before);
    free(v);
}

static void test_vec_copy(void **state)
{
    (void)state;
    const int32_t items[] = {3, 1, 4, 1, 5};
    int32_t *copy = as_vec_copy(items, 5, sizeof *copy);
    assert_non_null(copy);
    assert_memory_equal(copy, items, sizeof items);
    free(copy);
    int32_t *empty = as_vec_copy(NULL, 0, sizeof *empty); /* still freeable, not NULL */
    assert_non_null(empty);
    free(empty);
    assert_null(as_vec_copy(items, INT64_MAX, sizeof *items)); /* overflow */
}

static void test_status_or(void **state)
{
    (void)state;
    as_status given, spare;
    as_status_clear(&given);
    assert_ptr_equal(as_status_or(&given, &spare), &given);
    spare.code = AS_EIO;
    as_status *st = as_status_or(NULL, &spare);
    assert_ptr_equal(st, &spare);
    assert_int_equal(spare.code, AS_OK); /* the spare starts clear */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_insert_find_visit),
        cmocka_unit_test(test_vec_reserve),
        cmocka_unit_test(test_vec_copy),
        cmocka_unit_test(test_status_or),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
