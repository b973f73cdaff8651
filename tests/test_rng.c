/*
 * test_rng.c -- core's seeded random streams.  The first outputs of both
 * derivations are pinned for a few (seed, index) pairs: they are the
 * numbers the mapper, the fusion GA and the hardware engines drew before
 * their streams moved into core, so any change to them shows here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/core.h"

typedef struct pinned_stream {
    uint64_t seed, index;
    uint64_t first[3];
} pinned_stream;

/* mapspace.h's ms_rng_stream (mapper, fusion GA) before the merge. */
static const pinned_stream first_output[] = {
    {0, 0, {0xa706dd2f4d197e6full, 0xb382a305f4414f5eull, 0x631a9154fbabf717ull}},
    {1, 7, {0x35dc7ed44195dcb8ull, 0x77e89d6a927b1a95ull, 0x1a21e810f4f1af51ull}},
    {0x5eed, UINT64_MAX, {0x0a6440865838564eull, 0x0e4ce6a11ae5f0ffull, 0x3dcf310d8606ea66ull}},
};

/* engine.c's rng_stream (hardware engines) before the merge. */
static const pinned_stream advanced_once[] = {
    {0, 0, {0x6e789e6aa1b965f4ull, 0x06c45d188009454full, 0xf88bb8a8724c81ecull}},
    {1, 7, {0xec0634b9e4112a4cull, 0x9f4c2e082c8d4690ull, 0xae0a58f39653e1bfull}},
    {0x5eed, UINT64_MAX, {0x4919ec1235089417ull, 0x5af1cac3b6bacbfdull, 0x325629c8e76ca239ull}},
};

static void check_pinned(const pinned_stream *p, int n, as_rng_derivation how)
{
    for (int i = 0; i < n; i++) {
        as_rng r = as_rng_stream(p[i].seed, p[i].index, how);
        for (int k = 0; k < 3; k++)
            assert_true(as_rng_next(&r) == p[i].first[k]);
    }
}

static void test_first_output_streams_unchanged(void **state)
{
    (void)state;
    check_pinned(first_output, 3, AS_RNG_FROM_FIRST_OUTPUT);
}

static void test_advanced_once_streams_unchanged(void **state)
{
    (void)state;
    check_pinned(advanced_once, 3, AS_RNG_ADVANCED_ONCE);
}

/* below and unit are the plain reductions of next. */
static void test_below_and_unit(void **state)
{
    (void)state;
    as_rng a = as_rng_stream(42, 3, AS_RNG_FROM_FIRST_OUTPUT), b = a;
    for (int i = 0; i < 1000; i++) {
        int64_t n = 1 + i % 97;
        uint64_t bits = as_rng_next(&b);
        int64_t v = as_rng_below(&a, n);
        assert_true(v >= 0 && v < n);
        assert_int_equal(v, (int64_t)(bits % (uint64_t)n));
        double u = as_rng_unit(&a);
        assert_true(u >= 0 && u < 1);
        assert_true(u == (double)(as_rng_next(&b) >> 11) * 0x1.0p-53);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_output_streams_unchanged),
        cmocka_unit_test(test_advanced_once_streams_unchanged),
        cmocka_unit_test(test_below_and_unit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
