/*
 * test_pareto.c -- dominance, the Pareto front (duplicates and ties), the
 * hypervolume against hand-computed volumes and against counting unit
 * cells of an integer grid, its invariance to point order and to
 * dominated or out-of-reference points, CASCO's nearest-to-ideal pick,
 * and ParEGO's scalarisation and weight lattice.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "search/search.h"

/* |got - want| <= tol, naming the expression and its line on failure
 * (NaN never passes). */
#define assert_near(got, want, tol) near_or_fail((got), (want), (tol), #got, __LINE__)
static void near_or_fail(double got, double want, double tol, const char *what, int line)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("line %d: %s = %.17g, expected %.17g (tolerance %g)", line, what, got, want, tol);
}

/* ------------------------------------------------------------- dominance */

static void test_dominates(void **state)
{
    (void)state;
    double a[] = {1, 2, 3}, b[] = {1, 3, 3}, c[] = {0, 4, 3};
    assert_true(se_dominates(a, b, 3));
    assert_false(se_dominates(b, a, 3));
    assert_false(se_dominates(a, a, 3)); /* equal: better in none */
    assert_false(se_dominates(a, c, 3)); /* incomparable */
    assert_false(se_dominates(c, a, 3));
    assert_true(se_dominates(a, b, 2)); /* only the first n count */
    assert_false(se_dominates(a, b, 1));
}

static void test_front_duplicates_and_ties(void **state)
{
    (void)state;
    const double y[][2] = {
        {1, 5},   /* 0: front */
        {2, 2},   /* 1: front */
        {1, 5},   /* 2: duplicate of 0: out */
        {3, 1},   /* 3: front */
        {2, 3},   /* 4: dominated by 1 */
        {2, 2},   /* 5: duplicate of 1: out */
        {1, 6},   /* 6: tie with 0 in the first, worse in the second */
        {5, 1},   /* 7: tie with 3 in the second, worse in the first */
        {0.5, 9}, /* 8: front */
    };
    int64_t front[9];
    int64_t n = se_pareto_front(&y[0][0], 9, 2, front);
    assert_int_equal(n, 4);
    const int64_t expected[] = {0, 1, 3, 8};
    for (int i = 0; i < 4; i++)
        assert_int_equal(front[i], expected[i]);
    assert_int_equal(se_pareto_front(&y[0][0], 0, 2, front), 0);
}

/* ------------------------------------------------------------- hypervolume */

static void test_hypervolume_by_hand(void **state)
{
    (void)state;
    /* A unit box in one, two and three objectives. */
    const double origin[] = {0, 0, 0}, ones[] = {1, 1, 1};
    for (int d = 1; d <= 3; d++)
        assert_near(se_hypervolume(origin, 1, d, ones), 1.0, 1e-15);
    /* 1-D: the best point to the reference. */
    const double line[] = {3, 1, 2}, ten[] = {10};
    assert_near(se_hypervolume(line, 3, 1, ten), 9.0, 1e-15);
    /* 2-D staircase: strips 3 + 2 + 1. */
    const double stairs[] = {1, 3, 2, 2, 3, 1}, four[] = {4, 4, 4};
    assert_near(se_hypervolume(stairs, 3, 2, four), 6.0, 1e-12);
    /* 3-D: two overlapping boxes, 4 + 2 - 1. */
    const double boxes[] = {0, 0, 1, 1, 1, 0}, two[] = {2, 2, 2};
    assert_near(se_hypervolume(boxes, 2, 3, two), 5.0, 1e-12);
    /* 3-D cyclic staircase: three boxes of 6, pairwise overlaps of 2,
     * triple overlap 1: 18 - 6 + 1. */
    const double cyclic[] = {0, 1, 2, 1, 2, 0, 2, 0, 1}, three[] = {3, 3, 3};
    assert_near(se_hypervolume(cyclic, 3, 3, three), 13.0, 1e-12);
    /* Nothing, and a bad objective count. */
    assert_near(se_hypervolume(cyclic, 0, 3, three), 0.0, 0);
    assert_true(isnan(se_hypervolume(cyclic, 3, 0, three)));
    assert_true(isnan(se_hypervolume(cyclic, 1, SE_MAX_OBJECTIVES + 1, three)));
}

static void test_hypervolume_ignores_outside_reference(void **state)
{
    (void)state;
    const double four[] = {4, 4};
    /* The staircase, then points beyond or on the reference in one
     * objective (however good in the other), and a NaN. */
    const double y[] = {1, 3, 2, 2, 3, 1, -5, 10, 0, 4, 4, 0, NAN, 0};
    assert_near(se_hypervolume(y, 7, 2, four), 6.0, 1e-12);
    assert_near(se_hypervolume(y + 6, 4, 2, four), 0.0, 0);
}

/* A small deterministic generator (LCG, top bits) for random point sets. */
static uint64_t lcg_state;
static int lcg_below(int bound)
{
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((lcg_state >> 33) % (uint64_t)bound);
}

/*
 * Brute force: the reference is (side, ..., side) and every point has
 * integer coordinates, so the dominated region is a union of unit cells;
 * count the cells [c, c + 1) whose lower corner c some point p <= c
 * reaches.  Points on or beyond the reference reach no cell below it.
 */
static double grid_hypervolume(const double *y, int n, int d, int side)
{
    int cells = 1;
    for (int k = 0; k < d; k++)
        cells *= side;
    int count = 0;
    for (int cell = 0; cell < cells; cell++) {
        int corner[SE_MAX_OBJECTIVES], rest = cell;
        for (int k = 0; k < d; k++, rest /= side)
            corner[k] = rest % side;
        bool covered = false;
        for (int i = 0; i < n && !covered; i++) {
            covered = true;
            for (int k = 0; k < d; k++)
                covered &= y[i * d + k] <= corner[k];
        }
        count += covered;
    }
    return count;
}

#define MAX_RANDOM_POINTS 40

/* n random integer points in [0, side + 1]^d (some on or beyond the
 * reference side^d). */
static void random_points(double *y, int n, int d, int side)
{
    for (int i = 0; i < n * d; i++)
        y[i] = lcg_below(side + 2);
}

static void test_hypervolume_against_grid(void **state)
{
    (void)state;
    static const struct {
        int d, side, n;
    } cases[] = {{2, 30, 25}, {3, 12, 30}, {4, 7, 40}, {4, 5, 3}, {3, 9, 1}};
    lcg_state = 7;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int d = cases[c].d, side = cases[c].side, n = cases[c].n;
        double ref[SE_MAX_OBJECTIVES];
        for (int k = 0; k < d; k++)
            ref[k] = side;
        for (int trial = 0; trial < 20; trial++) {
            double y[MAX_RANDOM_POINTS * SE_MAX_OBJECTIVES];
            random_points(y, n, d, side);
            double expected = grid_hypervolume(y, n, d, side);
            assert_near(se_hypervolume(y, n, d, ref), expected, 1e-9);
        }
    }
}

/* Reversing the order and adding points dominated by existing ones (or
 * equal to them) leave the hypervolume unchanged. */
static void test_hypervolume_invariance(void **state)
{
    (void)state;
    lcg_state = 11;
    const int n = 30, d = 3, side = 10;
    const double ref[] = {10, 10, 10};
    double y[2 * 30 * 3], reversed[30 * 3];
    for (int trial = 0; trial < 10; trial++) {
        random_points(y, n, d, side);
        double base = se_hypervolume(y, n, d, ref);
        for (int i = 0; i < n; i++)
            memcpy(reversed + i * d, y + (n - 1 - i) * d, (size_t)d * sizeof *y);
        assert_near(se_hypervolume(reversed, n, d, ref), base, 1e-9);
        for (int i = 0; i < n; i++)
            for (int k = 0; k < d; k++)
                y[(n + i) * d + k] = y[i * d + k] + lcg_below(3);
        assert_near(se_hypervolume(y, 2 * n, d, ref), base, 1e-9);
    }
}

/* ---------------------------------------------------------- ideal point */

static void test_pick_nearest_ideal(void **state)
{
    (void)state;
    /* Normalised: (0, 1), (0.4, 0.4), (1, 0); row 1 is not in the list
     * and would otherwise win. */
    const double y[] = {0, 10, 3, 3, 4, 4, 10, 0};
    const int64_t front[] = {0, 2, 3};
    assert_int_equal(se_pick_nearest_ideal(y, front, 3, 2), 2);
    /* A tie between (0, 1) and (1, 0): the lower index. */
    const int64_t ends[] = {0, 3}, ends_reversed[] = {3, 0};
    assert_int_equal(se_pick_nearest_ideal(y, ends, 2, 2), 0);
    assert_int_equal(se_pick_nearest_ideal(y, ends_reversed, 2, 2), 0);
    /* A constant third objective counts 0: (0, 1, 0), (0.6, 0.6, 0),
     * (1, 0, 0) after normalising over x in [0, 10] and y in [0, 10]. */
    const double z[] = {0, 10, 7, 6, 6, 7, 10, 0, 7};
    const int64_t all[] = {0, 1, 2};
    assert_int_equal(se_pick_nearest_ideal(z, all, 3, 3), 1);
    assert_int_equal(se_pick_nearest_ideal(z, all, 0, 3), -1);
    assert_int_equal(se_pick_nearest_ideal(z, all, 1, 3), 0);
}

/* ------------------------------------------------------------------ ParEGO */

static void test_parego_scalar(void **state)
{
    (void)state;
    const double f[] = {0.2, 0.8, 0.5}, w[] = {0.5, 0.25, 0.25};
    /* max(0.1, 0.2, 0.125) + 0.05 * 0.425 */
    assert_near(se_parego_scalar(f, w, 3, 0.05), 0.2 + 0.05 * 0.425, 1e-15);
    assert_near(se_parego_scalar(f, w, 1, 0.05), 0.1 + 0.05 * 0.1, 1e-15);
}

/* Lattice points of s divisions in n objectives, counted by brute force
 * over all integer tuples in [0, s]^n that sum to s. */
static int lattice_size(int n, int s)
{
    int count = 0, tuples = 1;
    for (int k = 0; k < n; k++)
        tuples *= s + 1;
    for (int t = 0; t < tuples; t++) {
        int sum = 0, rest = t;
        for (int k = 0; k < n; k++, rest /= s + 1)
            sum += rest % (s + 1);
        count += sum == s;
    }
    return count;
}

/* Every draw is a lattice vector on the simplex; draws 0 .. count - 1 are
 * all different and cover the lattice; draw count + i repeats draw i. */
static void check_lattice(int n, int s, int expected_count)
{
    int count = lattice_size(n, s);
    assert_int_equal(count, expected_count);
    double w[32][SE_MAX_OBJECTIVES];
    for (int i = 0; i < count; i++) {
        se_parego_weights(n, (uint64_t)i, w[i]);
        double sum = 0;
        for (int k = 0; k < n; k++) {
            double level = w[i][k] * s;
            assert_true(w[i][k] >= 0);
            assert_near(level, round(level), 1e-12);
            sum += w[i][k];
        }
        assert_near(sum, 1.0, 1e-12);
        for (int j = 0; j < i; j++)
            assert_memory_not_equal(w[i], w[j], (size_t)n * sizeof(double));
        double again[SE_MAX_OBJECTIVES];
        se_parego_weights(n, (uint64_t)(count + i), again);
        assert_memory_equal(again, w[i], (size_t)n * sizeof(double));
    }
}

static void test_parego_weights(void **state)
{
    (void)state;
    check_lattice(2, 10, 11);
    check_lattice(3, 4, 15);
    check_lattice(4, 3, 20);
    double w[2];
    se_parego_weights(1, 12345, w);
    assert_near(w[0], 1.0, 0);
    /* The documented order: lexicographic, l_0 = 0 first. */
    se_parego_weights(2, 0, w);
    assert_near(w[0], 0.0, 0);
    assert_near(w[1], 1.0, 0);
    se_parego_weights(2, 10, w);
    assert_near(w[0], 1.0, 0);
    assert_near(w[1], 0.0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dominates),
        cmocka_unit_test(test_front_duplicates_and_ties),
        cmocka_unit_test(test_hypervolume_by_hand),
        cmocka_unit_test(test_hypervolume_ignores_outside_reference),
        cmocka_unit_test(test_hypervolume_against_grid),
        cmocka_unit_test(test_hypervolume_invariance),
        cmocka_unit_test(test_pick_nearest_ideal),
        cmocka_unit_test(test_parego_scalar),
        cmocka_unit_test(test_parego_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
