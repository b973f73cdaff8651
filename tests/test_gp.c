/*
 * test_gp.c -- the Gaussian-process surrogate and expected improvement.
 * Posteriors at fixed hyperparameters against the closed form worked out
 * here with explicit 2x2 and 3x3 algebra (targets standardised by their
 * mean and population sd, as gp.c documents), interpolation at small
 * noise, the prior far from the data, EI's closed-form values, fitted
 * hyperparameters (a sensible length scale, a likelihood no worse than at
 * the start, ARD telling a relevant input from an ignored one,
 * determinism), jitter for duplicate inputs, and the refusals.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "search/search.h"

#define PI 3.141592653589793

/* |got - want| <= tol, naming the expression and its line on failure
 * (NaN never passes). */
#define assert_near(got, want, tol) near_or_fail((got), (want), (tol), #got, __LINE__)
static void near_or_fail(double got, double want, double tol, const char *what, int line)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("line %d: %s = %.17g, expected %.17g (tolerance %g)", line, what, got, want, tol);
}

/* Matern 5/2 at scaled distance r, written out independently of gp.c. */
static double matern(double r, double s2)
{
    return s2 * (1 + sqrt(5.0) * r + 5.0 * r * r / 3.0) * exp(-sqrt(5.0) * r);
}

/* Scaled distance between a and b (dim inputs) under length scales l. */
static double scaled_distance(const double *a, const double *b, const double *l, int dim)
{
    double sum = 0;
    for (int d = 0; d < dim; d++)
        sum += pow((a[d] - b[d]) / l[d], 2);
    return sqrt(sum);
}

static se_gp_hyper hyper_1d(double l, double s2, double noise)
{
    se_gp_hyper h = {.dim = 1, .signal_var = s2, .noise_var = noise};
    h.length_scale[0] = l;
    return h;
}

static se_gp *fit_or_fail(const double *x, const double *y, int n, int dim, const se_gp_hyper *h)
{
    se_gp *gp = NULL;
    as_status st;
    as_status_clear(&st);
    as_code code = se_gp_fit(&gp, x, y, n, dim, h, &st);
    if (code != AS_OK)
        fail_msg("se_gp_fit: %s", st.message);
    return gp;
}

/* ------------------------------------------------ closed-form posteriors */

/*
 * Two points, one input: y = (1, 5) standardises to t = (-1, 1) with
 * mu = 3, sd = 2.  K = [[a, b], [b, a]] with a = s2 + noise and
 * b = k(0.5 / l), K^-1 = [[a, -b], [-b, a]] / (a^2 - b^2).
 */
static void test_two_points_closed_form(void **state)
{
    (void)state;
    const double l = 0.5, s2 = 1.5, noise = 0.01;
    const double x[] = {0.2, 0.7}, y[] = {1, 5}, t[] = {-1, 1};
    se_gp_hyper h = hyper_1d(l, s2, noise);
    se_gp *gp = fit_or_fail(x, y, 2, 1, &h);

    double a = s2 + noise, b = matern(0.5 / l, s2), det = a * a - b * b;
    double inv[2][2] = {{a / det, -b / det}, {-b / det, a / det}};
    double tKt = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            tKt += t[i] * inv[i][j] * t[j];
    double ll = -0.5 * tKt - 0.5 * log(det) - log(2 * PI);
    assert_near(se_gp_log_likelihood(gp), ll, 1e-9);

    const double probes[] = {0.4, 0.0, 0.95, 0.2};
    for (int p = 0; p < 4; p++) {
        double k[2] = {matern(fabs(probes[p] - x[0]) / l, s2),
                       matern(fabs(probes[p] - x[1]) / l, s2)};
        double mean_t = 0, explained = 0;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                mean_t += k[i] * inv[i][j] * t[j];
                explained += k[i] * inv[i][j] * k[j];
            }
        double mean, var;
        se_gp_predict(gp, &probes[p], &mean, &var);
        assert_near(mean, 3 + 2 * mean_t, 1e-9);
        assert_near(var, 4 * (s2 - explained), 1e-9);
    }
    const se_gp_hyper *got = se_gp_hyperparameters(gp);
    assert_int_equal(got->dim, 1);
    assert_near(got->length_scale[0], l, 0);
    assert_near(got->signal_var, s2, 0);
    assert_near(got->noise_var, noise, 0);
    se_gp_free(gp);
}

/* Inverse of a 3x3 matrix by its adjugate. */
static void invert3(const double m[3][3], double inv[3][3])
{
    double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                 m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                 m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            /* cofactor of (j, i) */
            int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            inv[i][j] = (m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]) / det;
        }
}

/* Three points in two inputs with different length scales (ARD); targets
 * (0, 1, 5): mu = 2, population sd = sqrt(14 / 3). */
static void test_three_points_closed_form(void **state)
{
    (void)state;
    const double l[] = {0.3, 0.8}, s2 = 0.7, noise = 0.05;
    const double x[3][2] = {{0.1, 0.9}, {0.5, 0.3}, {0.8, 0.6}}, y[] = {0, 1, 5};
    const double mu = 2, sd = sqrt(14.0 / 3.0);
    se_gp_hyper h = {.dim = 2, .signal_var = s2, .noise_var = noise};
    h.length_scale[0] = l[0];
    h.length_scale[1] = l[1];
    se_gp *gp = fit_or_fail(&x[0][0], y, 3, 2, &h);

    double K[3][3], inv[3][3], t[3];
    for (int i = 0; i < 3; i++) {
        t[i] = (y[i] - mu) / sd;
        for (int j = 0; j < 3; j++)
            K[i][j] = matern(scaled_distance(x[i], x[j], l, 2), s2) + (i == j ? noise : 0);
    }
    invert3(K, inv);
    const double probes[][2] = {{0.4, 0.5}, {0.0, 0.0}, {0.8, 0.6}, {1.0, 0.2}};
    for (int p = 0; p < 4; p++) {
        double k[3];
        for (int i = 0; i < 3; i++)
            k[i] = matern(scaled_distance(probes[p], x[i], l, 2), s2);
        double mean_t = 0, explained = 0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                mean_t += k[i] * inv[i][j] * t[j];
                explained += k[i] * inv[i][j] * k[j];
            }
        double mean, var;
        se_gp_predict(gp, probes[p], &mean, &var);
        assert_near(mean, mu + sd * mean_t, 1e-9);
        assert_near(var, sd * sd * (s2 - explained), 1e-9);
    }
    se_gp_free(gp);
}

/* At tiny noise the posterior passes through the data with no variance
 * there; far from the data it is the prior: mean mu, variance s2 sd^2. */
static void test_interpolation_and_prior(void **state)
{
    (void)state;
    double x[6], y[6], mu = 0;
    for (int i = 0; i < 6; i++) {
        x[i] = i / 5.0;
        y[i] = 10 + sin(6 * x[i]) + x[i];
        mu += y[i] / 6;
    }
    double squares = 0;
    for (int i = 0; i < 6; i++)
        squares += (y[i] - mu) * (y[i] - mu);
    double sd = sqrt(squares / 6);
    se_gp_hyper h = hyper_1d(0.3, 1.2, 1e-10);
    se_gp *gp = fit_or_fail(x, y, 6, 1, &h);
    for (int i = 0; i < 6; i++) {
        double mean, var;
        se_gp_predict(gp, &x[i], &mean, &var);
        assert_near(mean, y[i], 1e-6);
        assert_true(var >= 0 && var < 1e-8);
    }
    double far = 100, mean, var;
    se_gp_predict(gp, &far, &mean, &var);
    assert_near(mean, mu, 1e-12);
    assert_near(var, 1.2 * sd * sd, 1e-12);
    se_gp_free(gp);

    /* One point: sd is taken as 1, so the prior variance is s2 itself. */
    double one_x = 0.5, one_y = 7;
    gp = fit_or_fail(&one_x, &one_y, 1, 1, &h);
    se_gp_predict(gp, &far, &mean, &var);
    assert_near(mean, 7, 1e-12);
    assert_near(var, 1.2, 1e-12);
    se_gp_free(gp);
}

/* Duplicate inputs at zero noise make K singular: the jitter rescues it,
 * and the posterior stays finite with the duplicates' common target. */
static void test_jitter_for_duplicates(void **state)
{
    (void)state;
    const double x[] = {0.3, 0.3, 0.6}, y[] = {1, 1, 2};
    se_gp_hyper h = hyper_1d(0.4, 1, 0);
    se_gp *gp = fit_or_fail(x, y, 3, 1, &h);
    double mean, var;
    se_gp_predict(gp, &x[0], &mean, &var);
    assert_near(mean, 1, 1e-3);
    assert_true(var >= 0 && var < 1e-3);
    assert_true(isfinite(se_gp_log_likelihood(gp)));
    se_gp_free(gp);
}

/* ---------------------------------------------------- expected improvement */

static void test_expected_improvement(void **state)
{
    (void)state;
    /* z = 0: sd phi(0). */
    assert_near(se_expected_improvement(0, 1, 0), 1 / sqrt(2 * PI), 1e-15);
    /* z = 1: Phi(1) + phi(1). */
    assert_near(se_expected_improvement(0, 1, 1), 1.0833154705876864, 1e-14);
    /* z = -1: EI(g) - EI(-g) = g. */
    assert_near(se_expected_improvement(1, 1, 0), 1.0833154705876864 - 1, 1e-14);
    /* Scaling: mean 2, sd 3, best 5 is 3 EI(0, 1, 1). */
    assert_near(se_expected_improvement(2, 9, 5), 3 * 1.0833154705876864, 1e-13);
    /* No variance: the plain improvement, or none. */
    assert_near(se_expected_improvement(2, 0, 3), 1, 0);
    assert_near(se_expected_improvement(3, 0, 2), 0, 0);
    /* Hopeless: tiny but never negative. */
    double ei = se_expected_improvement(50, 1, 0);
    assert_true(ei >= 0 && ei < 1e-300);
}

/* ------------------------------------------------------- fitted hyperparameters */

/* se_gp_fit with hyper NULL; the start of its search as hyperparameters. */
static se_gp_hyper start_hyper(int dim)
{
    se_gp_hyper h = {.dim = dim, .signal_var = 1, .noise_var = 1e-3};
    for (int d = 0; d < dim; d++)
        h.length_scale[d] = 0.5;
    return h;
}

static void test_fit_smooth_1d(void **state)
{
    (void)state;
    double x[12], y[12];
    for (int i = 0; i < 12; i++) {
        x[i] = i / 11.0;
        y[i] = sin(2 * PI * x[i]);
    }
    se_gp *fitted = fit_or_fail(x, y, 12, 1, NULL);
    se_gp_hyper start = start_hyper(1);
    se_gp *at_start = fit_or_fail(x, y, 12, 1, &start);
    const se_gp_hyper *h = se_gp_hyperparameters(fitted);
    assert_int_equal(h->dim, 1);
    /* A period-1 sine: a length scale between a tenth of the period and
     * twice it (the likelihood trades longer scales against a larger
     * signal variance; this data lands near 0.9), far from both bounds. */
    assert_true(h->length_scale[0] > 0.1 && h->length_scale[0] < 2.0);
    assert_true(h->noise_var < 1e-2);
    assert_true(se_gp_log_likelihood(fitted) >= se_gp_log_likelihood(at_start));
    /* The fit predicts the function between the samples. */
    double probe = 0.3, mean, var;
    se_gp_predict(fitted, &probe, &mean, &var);
    assert_near(mean, sin(2 * PI * probe), 0.02);

    /* Deterministic: the same data fits the same hyperparameters. */
    se_gp *again = fit_or_fail(x, y, 12, 1, NULL);
    assert_memory_equal(se_gp_hyperparameters(again), h, sizeof *h);
    se_gp_free(again);
    se_gp_free(at_start);
    se_gp_free(fitted);
}

/* y = sin(5 x1) on a 6 x 6 grid: x2 explains nothing, so its length
 * scale grows well beyond x1's. */
static void test_fit_ard(void **state)
{
    (void)state;
    double x[36][2], y[36];
    for (int i = 0; i < 36; i++) {
        x[i][0] = (i % 6) / 5.0;
        x[i][1] = (i / 6) / 5.0;
        y[i] = sin(5 * x[i][0]);
    }
    se_gp *gp = fit_or_fail(&x[0][0], y, 36, 2, NULL);
    const se_gp_hyper *h = se_gp_hyperparameters(gp);
    assert_true(h->length_scale[1] > 5 * h->length_scale[0]);
    se_gp_hyper start = start_hyper(2);
    se_gp *at_start = fit_or_fail(&x[0][0], y, 36, 2, &start);
    assert_true(se_gp_log_likelihood(gp) >= se_gp_log_likelihood(at_start));
    se_gp_free(at_start);
    se_gp_free(gp);
}

/* ---------------------------------------------------------------- refusals */

static void expect_invalid(const double *x, const double *y, int n, int dim, const se_gp_hyper *h)
{
    se_gp *gp = (se_gp *)&gp; /* must come back NULL */
    as_status st;
    as_status_clear(&st);
    assert_int_equal(se_gp_fit(&gp, x, y, n, dim, h, &st), AS_EINVAL);
    assert_null(gp);
    assert_true(strlen(st.message) > 0);
}

static void test_refusals(void **state)
{
    (void)state;
    double x[SE_MAX_PARAMS + 1] = {0.1, 0.5}, y[] = {1, 2};
    expect_invalid(x, y, 0, 1, NULL);
    expect_invalid(x, y, 2, 0, NULL);
    expect_invalid(x, y, 1, SE_MAX_PARAMS + 1, NULL);
    double bad_y[] = {1, NAN};
    expect_invalid(x, bad_y, 2, 1, NULL);
    double bad_x[] = {0.1, INFINITY};
    expect_invalid(bad_x, y, 2, 1, NULL);
    se_gp_hyper h = hyper_1d(0.5, 1, 1e-3);
    h.dim = 2;
    expect_invalid(x, y, 2, 1, &h); /* hyperparameters for another dim */
    h = hyper_1d(0, 1, 1e-3);
    expect_invalid(x, y, 2, 1, &h); /* zero length scale */
    h = hyper_1d(0.5, -1, 1e-3);
    expect_invalid(x, y, 2, 1, &h); /* negative signal variance */
    h = hyper_1d(0.5, 1, NAN);
    expect_invalid(x, y, 2, 1, &h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_points_closed_form),
        cmocka_unit_test(test_three_points_closed_form),
        cmocka_unit_test(test_interpolation_and_prior),
        cmocka_unit_test(test_jitter_for_duplicates),
        cmocka_unit_test(test_expected_improvement),
        cmocka_unit_test(test_fit_smooth_1d),
        cmocka_unit_test(test_fit_ard),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
