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

/* ------------------------------------------------------------ XGBoost */

/* A smooth function of two inputs in [-1, 1]. */
static double smooth(double a, double b)
{
    return sin(2.0 * a) + 0.5 * b * b;
}

enum { GBT_ROWS = 200 };

/* GBT_ROWS points with a0 in [lo, hi), b in [-1, 1), targets smooth(). */
static void smooth_data(double lo, double hi, uint64_t seed, double *x, double *y, int rows)
{
    as_rng rng = as_rng_stream(seed, 0, AS_RNG_ADVANCED_ONCE);
    for (int i = 0; i < rows; i++) {
        x[2 * i] = lo + (hi - lo) * as_rng_unit(&rng);
        x[2 * i + 1] = 2.0 * as_rng_unit(&rng) - 1.0;
        y[i] = smooth(x[2 * i], x[2 * i + 1]);
    }
}

/* The ensemble fits a smooth function: small error on new points of the
 * same domain. */
static void gbt_fits_a_smooth_function(void **state)
{
    (void)state;
    double x[GBT_ROWS * 2], y[GBT_ROWS], tx[GBT_ROWS * 2], ty[GBT_ROWS], mean[GBT_ROWS];
    smooth_data(-1.0, 1.0, 1, x, y, GBT_ROWS);
    smooth_data(-1.0, 1.0, 2, tx, ty, GBT_ROWS);
    tn_gbt *g = NULL;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(tn_gbt_fit(&g, x, y, GBT_ROWS, 2, 5, 60, 7, &st), AS_OK);
    assert_int_equal(tn_gbt_predict(g, tx, GBT_ROWS, mean, NULL, &st), AS_OK);
    double sse = 0.0, variance = 0.0, avg = 0.0;
    for (int i = 0; i < GBT_ROWS; i++)
        avg += ty[i] / GBT_ROWS;
    for (int i = 0; i < GBT_ROWS; i++) {
        sse += (mean[i] - ty[i]) * (mean[i] - ty[i]);
        variance += (ty[i] - avg) * (ty[i] - avg);
    }
    /* at least 95 % of the variance explained */
    if (!(sse < 0.05 * variance))
        fail_msg("residual %.4g of variance %.4g", sse, variance);
    tn_gbt_free(g);
}

/* Same seed, same predictions (bit for bit); the seed matters. */
static void gbt_is_deterministic(void **state)
{
    (void)state;
    double x[GBT_ROWS * 2], y[GBT_ROWS], m1[GBT_ROWS], m2[GBT_ROWS], m3[GBT_ROWS];
    double s1[GBT_ROWS], s2[GBT_ROWS];
    smooth_data(-1.0, 1.0, 3, x, y, GBT_ROWS);
    tn_gbt *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(tn_gbt_fit(&a, x, y, GBT_ROWS, 2, 4, 30, 42, NULL), AS_OK);
    assert_int_equal(tn_gbt_fit(&b, x, y, GBT_ROWS, 2, 4, 30, 42, NULL), AS_OK);
    assert_int_equal(tn_gbt_fit(&c, x, y, GBT_ROWS, 2, 4, 30, 43, NULL), AS_OK);
    assert_int_equal(tn_gbt_predict(a, x, GBT_ROWS, m1, s1, NULL), AS_OK);
    assert_int_equal(tn_gbt_predict(b, x, GBT_ROWS, m2, s2, NULL), AS_OK);
    assert_int_equal(tn_gbt_predict(c, x, GBT_ROWS, m3, NULL, NULL), AS_OK);
    assert_memory_equal(m1, m2, sizeof m1);
    assert_memory_equal(s1, s2, sizeof s1);
    assert_memory_not_equal(m1, m3, sizeof m1);
    tn_gbt_free(a);
    tn_gbt_free(b);
    tn_gbt_free(c);

    as_status st;
    as_status_clear(&st);
    assert_int_equal(tn_gbt_fit(&a, x, y, 0, 2, 4, 30, 42, &st), AS_EINVAL);
    assert_null(a);
    assert_non_null(strstr(st.message, "tune/gbt"));

    /* XGBoost's own errors come back with its message */
    y[5] = INFINITY;
    as_status_clear(&st);
    assert_int_equal(tn_gbt_fit(&a, x, y, GBT_ROWS, 2, 1, 30, 42, &st), AS_EINTERNAL);
    assert_null(a);
    assert_non_null(strstr(st.message, "XGBoost"));
    assert_non_null(strstr(st.message, "abel"));
    assert_null(strchr(st.message, '\n'));
}

/* The spread is the ensemble's confidence: wider far from the data than
 * on it. */
static void gbt_spread_grows_away_from_the_data(void **state)
{
    (void)state;
    double x[GBT_ROWS * 2], y[GBT_ROWS], near[GBT_ROWS * 2], far[GBT_ROWS * 2], ny[GBT_ROWS];
    double mean[GBT_ROWS], spread_near[GBT_ROWS], spread_far[GBT_ROWS];
    smooth_data(-1.0, 0.0, 4, x, y, GBT_ROWS);
    smooth_data(-1.0, 0.0, 5, near, ny, GBT_ROWS);
    smooth_data(2.0, 3.0, 6, far, ny, GBT_ROWS);
    tn_gbt *g = NULL;
    assert_int_equal(tn_gbt_fit(&g, x, y, GBT_ROWS, 2, 8, 40, 9, NULL), AS_OK);
    assert_int_equal(tn_gbt_predict(g, near, GBT_ROWS, mean, spread_near, NULL), AS_OK);
    assert_int_equal(tn_gbt_predict(g, far, GBT_ROWS, mean, spread_far, NULL), AS_OK);
    double on = 0.0, off = 0.0;
    for (int i = 0; i < GBT_ROWS; i++) {
        on += spread_near[i] / GBT_ROWS;
        off += spread_far[i] / GBT_ROWS;
    }
    if (!(off > 1.5 * on))
        fail_msg("mean spread %.4g on the data, %.4g away from it", on, off);
    print_message("gbt spread: %.4g on the data, %.4g away\n", on, off);
    tn_gbt_free(g);
}

/* ------------------------------------------------------------- k-means */

/* Three well separated clusters are found whatever the seed, and a seed
 * gives one clustering. */
static void kmeans_finds_separated_clusters(void **state)
{
    (void)state;
    enum { PER = 30, K = 3, D = 2 };
    static const double centre[K][D] = {{0.0, 0.0}, {10.0, 0.0}, {0.0, 10.0}};
    double x[K * PER * D];
    as_rng data = as_rng_stream(8, 0, AS_RNG_ADVANCED_ONCE);
    for (int c = 0; c < K; c++)
        for (int i = 0; i < PER; i++)
            for (int j = 0; j < D; j++)
                x[((c * PER) + i) * D + j] = centre[c][j] + as_rng_unit(&data) - 0.5;
    for (uint64_t seed = 0; seed < 5; seed++) {
        int assignment[K * PER], again[K * PER];
        double centroids[K * D], centroids_again[K * D];
        as_rng r1 = as_rng_stream(seed, 1, AS_RNG_ADVANCED_ONCE);
        as_rng r2 = as_rng_stream(seed, 1, AS_RNG_ADVANCED_ONCE);
        tn_kmeans(x, K * PER, D, K, &r1, 50, assignment, centroids);
        tn_kmeans(x, K * PER, D, K, &r2, 50, again, centroids_again);
        assert_memory_equal(assignment, again, sizeof assignment);
        assert_memory_equal(centroids, centroids_again, sizeof centroids);
        for (int c = 0; c < K; c++) {
            int label = assignment[c * PER];
            for (int i = 0; i < PER; i++)
                assert_int_equal(assignment[c * PER + i], label);
            for (int other = 0; other < c; other++)
                assert_int_not_equal(assignment[other * PER], label);
            for (int j = 0; j < D; j++)
                assert_true(fabs(centroids[label * D + j] - centre[c][j]) < 0.3);
        }
    }
}

/* ------------------------------------------------------------- AutoTVM */

/* ResNet-18's 3x3, 128-channel conv at 28x28 (conv3_x), on the `vta`
 * preset's hardware under the PYNQ budget. */
static void resnet18_space(tn_space *sp)
{
    as_status st;
    as_status_clear(&st);
    arch_spec arch;
    assert_int_equal(arch_load("vta", &arch, &st), AS_OK);
    tn_hw hw;
    if (tn_hw_from_arch(&arch, &hw, &st) != AS_OK)
        fail_msg("%s", st.message);
    wl_graph *g = NULL;
    assert_int_equal(wl_zoo_build("resnet18", &g, &st), AS_OK);
    tn_conv *layers = NULL;
    int n = 0, skipped = 0;
    assert_int_equal(tn_model_layers(g, &layers, &n, &skipped, &st), AS_OK);
    int pick = -1;
    for (int i = 0; i < n && pick < 0; i++)
        if (layers[i].c == 128 && layers[i].k == 128 && layers[i].r == 3 && layers[i].p == 28)
            pick = i;
    assert_true(pick >= 0);
    assert_int_equal(tn_space_init(sp, &layers[pick], &hw, tn_budget_find("pynq"), true, &st),
                     AS_OK);
    free(layers);
    wl_graph_free(g);
}

/* The AutoTVM-style tuner, driven by tn_tune_layer on the real space,
 * finds within 200 measurements a valid configuration faster than TVM's
 * fallback point, and one seed gives one run. */
static void autotvm_beats_the_default_on_resnet18(void **state)
{
    (void)state;
    tn_space sp;
    resnet18_space(&sp);
    tn_point fallback;
    tn_result fallback_result;
    tn_space_default(&sp, &fallback);
    tn_space_measure(&sp, &fallback, &fallback_result);

    tn_options o;
    tn_options_default(&o);
    o.engine = TN_ENGINE_AUTOTVM;
    o.trials = 200;
    o.seed = 7;
    o.threads = 1;
    tn_layer_result a, b;
    as_status st;
    as_status_clear(&st);
    assert_int_equal(tn_tune_layer(&sp, &o, &a, &st), AS_OK);
    assert_int_equal(tn_tune_layer(&sp, &o, &b, &st), AS_OK);
    assert_int_equal(a.n_trials, 200);
    assert_true(a.best >= 0);
    const tn_result *best = &a.trials[a.best].result;
    assert_true(best->valid);
    if (!(best->gflops > fallback_result.gflops))
        fail_msg("best %.3f GFLOPS, fallback %.3f (%s)", best->gflops, fallback_result.gflops,
                 fallback_result.valid ? "valid" : fallback_result.reason);
    print_message("autotvm: %.3f GFLOPS after %lld trials (fallback %.3f), 95 %% at trial %lld\n",
                  best->gflops, (long long)a.n_trials, fallback_result.gflops,
                  (long long)a.trials_to_95);
    /* same seed, same measurements in the same order */
    assert_int_equal(a.n_trials, b.n_trials);
    for (int64_t i = 0; i < a.n_trials; i++) {
        assert_true(tn_point_equal(&a.trials[i].point, &b.trials[i].point));
        assert_true(a.trials[i].result.gflops == b.trials[i].result.gflops);
    }
    tn_layer_result_free(&a);
    tn_layer_result_free(&b);
}

/* On a space smaller than the budget the tuner measures every point once
 * (the driver stops at the space's size; the engine's random tail and
 * plans never repeat a point). */
static void autotvm_exhausts_a_small_space(void **state)
{
    (void)state;
    as_status st;
    as_status_clear(&st);
    arch_spec arch;
    assert_int_equal(arch_load("vta", &arch, &st), AS_OK);
    tn_hw hw;
    assert_int_equal(tn_hw_from_arch(&arch, &hw, &st), AS_OK);
    tn_conv small = {.name = "small",
                     .n = 1,
                     .c = 32,
                     .k = 32,
                     .h = 4,
                     .w = 4,
                     .p = 4,
                     .q = 4,
                     .r = 1,
                     .s = 1,
                     .stride_h = 1,
                     .stride_w = 1,
                     .count = 1};
    small.macs = small.n * small.k * small.p * small.q * small.c;
    tn_space sp;
    assert_int_equal(tn_space_init(&sp, &small, &hw, tn_budget_find("pynq"), false, &st), AS_OK);
    int64_t size = tn_space_size(&sp);
    assert_true(size > 64 && size < 1000);
    tn_options o;
    tn_options_default(&o);
    o.engine = TN_ENGINE_AUTOTVM;
    o.trials = 1000;
    tn_layer_result r;
    assert_int_equal(tn_tune_layer(&sp, &o, &r, &st), AS_OK);
    assert_int_equal(r.n_trials, size);
    for (int64_t i = 0; i < r.n_trials; i++)
        for (int64_t j = 0; j < i; j++)
            assert_false(tn_point_equal(&r.trials[i].point, &r.trials[j].point));
    tn_layer_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mlp_gradients_match_finite_differences),
        cmocka_unit_test(mlp_learns_a_regression),
        cmocka_unit_test(mlp_is_seeded),
        cmocka_unit_test(gbt_fits_a_smooth_function),
        cmocka_unit_test(gbt_is_deterministic),
        cmocka_unit_test(gbt_spread_grows_away_from_the_data),
        cmocka_unit_test(kmeans_finds_separated_clusters),
        cmocka_unit_test(autotvm_beats_the_default_on_resnet18),
        cmocka_unit_test(autotvm_exhausts_a_small_space),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
