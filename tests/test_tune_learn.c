/*
 * test_tune_learn.c -- the learners of tune/ (MLP on GSL's BLAS, XGBoost
 * ensemble, k-means) and the AutoTVM-style baseline engine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune_private.h"

/* ------------------------------------------------------------------ MLP */

enum { GRAD_ROWS = 5, GRAD_LAYERS = 3 };
static const int grad_widths[GRAD_LAYERS + 1] = {4, 7, 6, 3};

/* Loss of the test: sum over outputs of out[i][j] * coef[i][j], so that
 * dLoss/dout = coef. */
static double linear_loss(tn_mlp *m, const double *x, const double *coef, int rows)
{
    const gsl_matrix *out = tn_mlp_forward(m, x, rows);
    double loss = 0.0;
    for (size_t i = 0; i < out->size1; i++)
        for (size_t j = 0; j < out->size2; j++)
            loss += gsl_matrix_get(out, i, j) * coef[i * out->size2 + j];
    return loss;
}

/* Analytic gradient a against central difference fd. */
static void assert_gradient(double a, double fd)
{
    double tolerance = 1e-6 * (fabs(a) + fabs(fd)) + 1e-9;
    if (fabs(a - fd) > tolerance)
        fail_msg("gradient %.12g, finite difference %.12g", a, fd);
}

/* Central difference of the loss with respect to *param. */
static double central_difference(tn_mlp *m, double *param, const double *x, const double *coef,
                                 int rows)
{
    const double h = 1e-5;
    double saved = *param;
    *param = saved + h;
    double up = linear_loss(m, x, coef, rows);
    *param = saved - h;
    double down = linear_loss(m, x, coef, rows);
    *param = saved;
    return (up - down) / (2.0 * h);
}

/* Every weight, bias and input gradient of backward equals the central
 * finite difference, on a batch smaller than max_rows. */
static void mlp_gradients_match_finite_differences(void **state)
{
    (void)state;
    as_rng rng = as_rng_stream(11, 0, AS_RNG_ADVANCED_ONCE);
    tn_mlp m;
    assert_int_equal(tn_mlp_init(&m, GRAD_LAYERS, grad_widths, 8, 1.0, &rng, NULL), AS_OK);
    double x[GRAD_ROWS * 4], coef[GRAD_ROWS * 3];
    for (int i = 0; i < GRAD_ROWS * 4; i++)
        x[i] = 2.0 * as_rng_unit(&rng) - 1.0;
    for (int i = 0; i < GRAD_ROWS * 3; i++)
        coef[i] = 2.0 * as_rng_unit(&rng) - 1.0;
    /* biases away from zero, so their gradients are exercised too */
    for (int l = 0; l < GRAD_LAYERS; l++)
        for (size_t j = 0; j < m.bias[l]->size; j++)
            gsl_vector_set(m.bias[l], j, 0.5 * as_rng_unit(&rng) - 0.25);

    tn_mlp_zero_grad(&m);
    linear_loss(&m, x, coef, GRAD_ROWS);
    tn_mlp_backward(&m, coef);
    for (int l = 0; l < GRAD_LAYERS; l++) {
        for (size_t i = 0; i < m.weight[l]->size1; i++)
            for (size_t j = 0; j < m.weight[l]->size2; j++)
                assert_gradient(
                    gsl_matrix_get(m.grad_weight[l], i, j),
                    central_difference(&m, gsl_matrix_ptr(m.weight[l], i, j), x, coef, GRAD_ROWS));
        for (size_t j = 0; j < m.bias[l]->size; j++)
            assert_gradient(
                gsl_vector_get(m.grad_bias[l], j),
                central_difference(&m, gsl_vector_ptr(m.bias[l], j), x, coef, GRAD_ROWS));
    }
    /* delta[0] of the pass is the gradient with respect to the inputs */
    linear_loss(&m, x, coef, GRAD_ROWS);
    tn_mlp_backward(&m, coef);
    double d_input[GRAD_ROWS * 4];
    memcpy(d_input, m.delta[0]->data, sizeof d_input);
    for (int i = 0; i < GRAD_ROWS * 4; i++)
        assert_gradient(d_input[i], central_difference(&m, &x[i], x, coef, GRAD_ROWS));
    tn_mlp_free(&m);
}

/* Mean squared error of m on (x, y) and its gradient into d. */
static double mse(tn_mlp *m, const double *x, const double *y, int rows, double *d)
{
    const gsl_matrix *out = tn_mlp_forward(m, x, rows);
    double loss = 0.0;
    for (int i = 0; i < rows; i++) {
        double e = gsl_matrix_get(out, (size_t)i, 0) - y[i];
        loss += e * e / rows;
        d[i] = 2.0 * e / rows;
    }
    return loss;
}

/* Adam with clipping learns a smooth function of two inputs: the loss
 * drops by at least 100x. */
static void mlp_learns_a_regression(void **state)
{
    (void)state;
    enum { ROWS = 64 };
    as_rng rng = as_rng_stream(3, 1, AS_RNG_ADVANCED_ONCE);
    int widths[3] = {2, 16, 1};
    tn_mlp m;
    assert_int_equal(tn_mlp_init(&m, 2, widths, ROWS, 1.0, &rng, NULL), AS_OK);
    double x[ROWS * 2], y[ROWS], d[ROWS];
    for (int i = 0; i < ROWS; i++) {
        x[2 * i] = 2.0 * as_rng_unit(&rng) - 1.0;
        x[2 * i + 1] = 2.0 * as_rng_unit(&rng) - 1.0;
        y[i] = sin(2.0 * x[2 * i]) + x[2 * i + 1] * x[2 * i + 1];
    }
    double first = mse(&m, x, y, ROWS, d), last = first;
    for (int step = 0; step < 3000; step++) {
        last = mse(&m, x, y, ROWS, d);
        tn_mlp_zero_grad(&m);
        tn_mlp_backward(&m, d);
        tn_mlp_adam_step(&m, 0.01, 1.0);
    }
    last = mse(&m, x, y, ROWS, d);
    if (!(last * 100.0 < first))
        fail_msg("loss %.6g -> %.6g", first, last);
    assert_int_equal(m.adam_steps, 3000);
    tn_mlp_free(&m);
}

/* Same seed, same network; another seed, another one; bad shapes fail. */
static void mlp_is_seeded(void **state)
{
    (void)state;
    tn_mlp a, b, c;
    as_rng ra = as_rng_stream(5, 2, AS_RNG_ADVANCED_ONCE);
    as_rng rb = as_rng_stream(5, 2, AS_RNG_ADVANCED_ONCE);
    as_rng rc = as_rng_stream(6, 2, AS_RNG_ADVANCED_ONCE);
    assert_int_equal(tn_mlp_init(&a, GRAD_LAYERS, grad_widths, 4, 0.01, &ra, NULL), AS_OK);
    assert_int_equal(tn_mlp_init(&b, GRAD_LAYERS, grad_widths, 4, 0.01, &rb, NULL), AS_OK);
    assert_int_equal(tn_mlp_init(&c, GRAD_LAYERS, grad_widths, 4, 0.01, &rc, NULL), AS_OK);
    bool all_equal = true, any_differs = false;
    for (int l = 0; l < GRAD_LAYERS; l++) {
        size_t bytes = a.weight[l]->size1 * a.weight[l]->size2 * sizeof(double);
        all_equal = all_equal && memcmp(a.weight[l]->data, b.weight[l]->data, bytes) == 0;
        any_differs = any_differs || memcmp(a.weight[l]->data, c.weight[l]->data, bytes) != 0;
    }
    assert_true(all_equal);
    assert_true(any_differs);
    /* the output layer is scaled by out_scale: 0.01 of Glorot's limit */
    double limit = 0.01 * sqrt(6.0 / (6 + 3));
    for (size_t i = 0; i < a.weight[2]->size1; i++)
        for (size_t j = 0; j < a.weight[2]->size2; j++)
            assert_true(fabs(gsl_matrix_get(a.weight[2], i, j)) <= limit);
    tn_mlp_free(&a);
    tn_mlp_free(&b);
    tn_mlp_free(&c);

    as_status st;
    as_status_clear(&st);
    int bad[2] = {3, 0};
    assert_int_equal(tn_mlp_init(&a, 1, bad, 4, 1.0, &ra, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "width[1]"));
    tn_mlp_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mlp_gradients_match_finite_differences),
        cmocka_unit_test(mlp_learns_a_regression),
        cmocka_unit_test(mlp_is_seeded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
