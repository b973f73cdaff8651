/*
 * gp.c -- Gaussian-process regression, the surrogate of the BO engines,
 * and expected improvement (see search.h).
 *
 * Model (Rasmussen and Williams, "Gaussian Processes for Machine
 * Learning", MIT Press 2006, ch. 2).  The targets are standardised,
 * t = (y - mu) / sd with the population sd (1 when the targets are
 * constant), and modelled as a zero-mean latent function plus Gaussian
 * noise, t_i = f(x_i) + e_i with e_i ~ N(0, noise_var).  The kernel is
 * Matern 5/2 with one length scale per input (ARD; R&W eq. 4.17):
 *
 *     k(x, x') = s2 (1 + sqrt5 r + 5 r^2 / 3) exp(-sqrt5 r),
 *     r^2 = sum_d ((x_d - x'_d) / l_d)^2.
 *
 * With K = k(X, X) + noise_var I = L L^T and alpha = K^-1 t (R&W
 * algorithm 2.1):
 *
 *     mean(x*) = k*^T alpha,    var(x*) = k(x*, x*) - |L^-1 k*|^2,
 *     log p(t | X) = -t^T alpha / 2 - sum_i log L_ii - n log(2 pi) / 2,
 *
 * the prediction reported in y's units (mean sd + mu, var sd^2); the
 * variance is the latent function's, without the noise.
 *
 * Hyperparameters (R&W ch. 5.4) maximise log p(t | X) over
 * theta = (log l_1 .. log l_d, log s2, log noise_var) by GSL's Nelder-Mead
 * simplex (nmsimplex2) from a fixed start, l = 0.5, s2 = 1,
 * noise_var = 1e-3, with a step of 1 in each logarithm; the bounds of
 * each hyperparameter are enforced by clamping theta inside the
 * objective.  The search stops after MAX_ITERATIONS or once the simplex
 * is smaller than SIMPLEX_SIZE.  Nothing is random: a fit is a function of
 * its data.  Every likelihood evaluation reuses the GP's own matrix and
 * vectors, so the search allocates nothing per step.
 *
 * Jitter.  When K is not numerically positive definite (near-duplicate
 * inputs at small noise), (s2 + noise_var) 1e-10 is added to its diagonal,
 * then ten times more, up to 1e-4; beyond that the factorisation fails.
 *
 * Threads.  GSL reports a matrix that is not positive definite through
 * its error handler, whose default aborts the process, so se_gp_fit
 * switches the handler off while it runs and restores it after.  That
 * handler is process-wide: fits must not run on several threads at once.
 * A fitted GP is only read: predictions may run concurrently.
 *
 * Expected improvement: Jones, Schonlau and Welch, "Efficient global
 * optimization of expensive black-box functions", J. Global Optimization
 * 13, 1998, eq. 15.
 */
#include "search.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>

#define SQRT5 2.23606797749979
#define LOG_2PI 1.8378770664093453

/* Hyperparameter search: the start, the simplex's first step (in each
 * logarithm), when it stops, and the value of a failed evaluation (finite:
 * GSL's simplex refuses infinities). */
#define START_LENGTH_SCALE 0.5
#define START_SIGNAL_VAR 1.0
#define START_NOISE_VAR 1e-3
#define SIMPLEX_STEP 1.0
#define SIMPLEX_SIZE 1e-3
#define MAX_ITERATIONS 200
#define FAILED_NEG_LOG_LIKELIHOOD 1e100

/* Jitter relative to the diagonal: JITTER_FIRST, then x10 for each of
 * JITTER_STEPS further tries (1e-10 .. 1e-4). */
#define JITTER_FIRST 1e-10
#define JITTER_STEPS 6

/* Predictions hold |L^-1 k*| on the stack up to this many training points
 * (8 KiB), and allocate beyond. */
#define PREDICT_STACK_POINTS 1024

/* The range each fitted hyperparameter is clamped to. */
typedef struct range {
    double low, high;
} range;

static const range LENGTH_SCALE_RANGE = {1e-2, 1e2};
static const range SIGNAL_VAR_RANGE = {1e-3, 1e2};
static const range NOISE_VAR_RANGE = {1e-8, 1};

struct se_gp {
    int n, dim;
    se_gp_hyper hyper;
    double y_mean, y_sd;   /* targets standardised as (y - y_mean) / y_sd */
    double log_likelihood; /* of the standardised targets at hyper */
    double *x;             /* n x dim inputs, as given */
    double *x_scaled;      /* n x dim: x_d / l_d at hyper */
    double *t;             /* n standardised targets */
    gsl_matrix *chol;      /* lower triangle: L of K + noise_var I (+ jitter) at hyper */
    gsl_vector *alpha;     /* K^-1 t */
};

/* ------------------------------------------------------------- the kernel */

/* Matern 5/2 of signal variance s2 at squared scaled distance r2. */
static double matern52(double r2, double s2)
{
    double r = sqrt(r2);
    return s2 * (1 + SQRT5 * r + 5.0 / 3.0 * r2) * exp(-SQRT5 * r);
}

/* Squared Euclidean distance of two scaled points of dim coordinates. */
static double distance2(const double *a, const double *b, int dim)
{
    double sum = 0;
    for (int d = 0; d < dim; d++)
        sum += (a[d] - b[d]) * (a[d] - b[d]);
    return sum;
}

/* x divided by the length scales of h, coordinate by coordinate: the
 * kernel then needs only plain distances. */
static void scale_point(const double *x, const se_gp_hyper *h, double *out)
{
    for (int d = 0; d < h->dim; d++)
        out[d] = x[d] / h->length_scale[d];
}

/* -------------------------------------------------------- conditioning */

/* Lower triangle of K + diagonal I into gp->chol (GSL's Cholesky reads
 * only that triangle). */
static void fill_covariance(se_gp *gp, double diagonal)
{
    int n = gp->n, dim = gp->dim;
    for (int i = 0; i < n; i++) {
        double *row = gsl_matrix_ptr(gp->chol, (size_t)i, 0);
        for (int j = 0; j < i; j++)
            row[j] = matern52(distance2(gp->x_scaled + i * dim, gp->x_scaled + j * dim, dim),
                              gp->hyper.signal_var);
        row[i] = gp->hyper.signal_var + diagonal;
    }
}

/* Factorise K + noise_var I at gp->hyper into gp->chol, adding jitter
 * while it is not numerically positive definite; false when even the
 * largest jitter fails. */
static bool factorise(se_gp *gp)
{
    double scale = gp->hyper.signal_var + gp->hyper.noise_var;
    double jitter = 0;
    for (int attempt = 0; attempt <= JITTER_STEPS + 1; attempt++) {
        fill_covariance(gp, gp->hyper.noise_var + jitter);
        if (gsl_linalg_cholesky_decomp1(gp->chol) == GSL_SUCCESS)
            return true;
        jitter = attempt == 0 ? JITTER_FIRST * scale : 10 * jitter;
    }
    return false;
}

/*
 * Make h the GP's hyperparameters: scaled inputs, factorisation, alpha
 * and log marginal likelihood.  False when K cannot be factorised or the
 * likelihood is not finite (the GP is then not usable until the next
 * successful call).
 */
static bool condition(se_gp *gp, const se_gp_hyper *h)
{
    gp->hyper = *h;
    for (int i = 0; i < gp->n; i++)
        scale_point(gp->x + i * gp->dim, h, gp->x_scaled + i * gp->dim);
    if (!factorise(gp))
        return false;
    gsl_vector_const_view t = gsl_vector_const_view_array(gp->t, (size_t)gp->n);
    if (gsl_linalg_cholesky_solve(gp->chol, &t.vector, gp->alpha) != GSL_SUCCESS)
        return false;
    double fit, log_det = 0;
    gsl_blas_ddot(&t.vector, gp->alpha, &fit);
    for (int i = 0; i < gp->n; i++)
        log_det += log(gsl_matrix_get(gp->chol, (size_t)i, (size_t)i));
    gp->log_likelihood = -0.5 * fit - log_det - 0.5 * gp->n * LOG_2PI;
    return isfinite(gp->log_likelihood);
}

/* -------------------------------------------------------- hyperparameters */

/* exp(v) clamped to r. */
static double exp_clamped(double v, range r)
{
    return fmin(fmax(exp(v), r.low), r.high);
}

/* theta = (log l_1 .. log l_dim, log s2, log noise_var) to
 * hyperparameters, each clamped to its range. */
static void theta_to_hyper(const gsl_vector *theta, int dim, se_gp_hyper *h)
{
    *h = (se_gp_hyper){.dim = dim};
    for (int d = 0; d < dim; d++)
        h->length_scale[d] = exp_clamped(gsl_vector_get(theta, (size_t)d), LENGTH_SCALE_RANGE);
    h->signal_var = exp_clamped(gsl_vector_get(theta, (size_t)dim), SIGNAL_VAR_RANGE);
    h->noise_var = exp_clamped(gsl_vector_get(theta, (size_t)dim + 1), NOISE_VAR_RANGE);
}

/* The simplex's objective: -log p(t | X) at theta, conditioning the GP
 * (params) there; a large finite value where that fails. */
static double neg_log_likelihood(const gsl_vector *theta, void *params)
{
    se_gp *gp = params;
    se_gp_hyper h;
    theta_to_hyper(theta, gp->dim, &h);
    return condition(gp, &h) ? -gp->log_likelihood : FAILED_NEG_LOG_LIKELIHOOD;
}

/*
 * Maximise the likelihood from the fixed start (see the top of the file)
 * and leave the best hyperparameters found in *best.  Fails only when
 * out of memory for GSL's minimiser.
 */
static as_code fit_hyperparameters(se_gp *gp, se_gp_hyper *best, as_status *st)
{
    size_t n_theta = (size_t)gp->dim + 2;
    gsl_multimin_fminimizer *m =
        gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, n_theta);
    gsl_vector *theta = gsl_vector_alloc(n_theta), *step = gsl_vector_alloc(n_theta);
    as_code code = AS_OK;
    if (!m || !theta || !step) {
        code = as_fail(st, AS_ENOMEM, "out of memory for the GP's hyperparameter search");
    } else {
        for (int d = 0; d < gp->dim; d++)
            gsl_vector_set(theta, (size_t)d, log(START_LENGTH_SCALE));
        gsl_vector_set(theta, (size_t)gp->dim, log(START_SIGNAL_VAR));
        gsl_vector_set(theta, (size_t)gp->dim + 1, log(START_NOISE_VAR));
        gsl_vector_set_all(step, SIMPLEX_STEP);
        gsl_multimin_function f = {.f = neg_log_likelihood, .n = n_theta, .params = gp};
        /* Fails only on a non-finite objective, which it never returns. */
        if (gsl_multimin_fminimizer_set(m, &f, theta, step) != GSL_SUCCESS)
            code = as_fail(st, AS_EINTERNAL, "GP fit: the hyperparameter search did not start");
        /* An iteration that cannot progress (a collapsed simplex) ends
         * the search with the best vertex so far. */
        for (int i = 0; code == AS_OK && i < MAX_ITERATIONS; i++) {
            if (gsl_multimin_fminimizer_iterate(m) != GSL_SUCCESS ||
                gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), SIMPLEX_SIZE) ==
                    GSL_SUCCESS)
                break;
        }
        if (code == AS_OK)
            theta_to_hyper(gsl_multimin_fminimizer_x(m), gp->dim, best);
    }
    gsl_multimin_fminimizer_free(m);
    gsl_vector_free(theta);
    gsl_vector_free(step);
    return code;
}

/* ------------------------------------------------------------------ fit */

void se_gp_free(se_gp *gp)
{
    if (!gp)
        return;
    free(gp->x);
    free(gp->x_scaled);
    free(gp->t);
    gsl_matrix_free(gp->chol);
    gsl_vector_free(gp->alpha);
    free(gp);
}

/* A GP with room for n points of dim inputs (copied from x), or NULL when
 * out of memory. */
static se_gp *gp_alloc(const double *x, int n, int dim)
{
    se_gp *gp = calloc(1, sizeof *gp);
    if (!gp)
        return NULL;
    size_t values = (size_t)n * (size_t)dim;
    gp->n = n;
    gp->dim = dim;
    gp->x = malloc(values * sizeof *gp->x);
    gp->x_scaled = malloc(values * sizeof *gp->x_scaled);
    gp->t = malloc((size_t)n * sizeof *gp->t);
    gp->chol = gsl_matrix_alloc((size_t)n, (size_t)n);
    gp->alpha = gsl_vector_alloc((size_t)n);
    if (!gp->x || !gp->x_scaled || !gp->t || !gp->chol || !gp->alpha) {
        se_gp_free(gp);
        return NULL;
    }
    for (size_t i = 0; i < values; i++)
        gp->x[i] = x[i];
    return gp;
}

/* Standardise y into gp->t: mean 0 and, unless the targets are constant,
 * population variance 1. */
static void standardise(se_gp *gp, const double *y)
{
    double sum = 0, squares = 0;
    for (int i = 0; i < gp->n; i++)
        sum += y[i];
    gp->y_mean = sum / gp->n;
    for (int i = 0; i < gp->n; i++)
        squares += (y[i] - gp->y_mean) * (y[i] - gp->y_mean);
    gp->y_sd = squares > 0 ? sqrt(squares / gp->n) : 1;
    for (int i = 0; i < gp->n; i++)
        gp->t[i] = (y[i] - gp->y_mean) / gp->y_sd;
}

/* Whether every one of the n values is finite. */
static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* Fail unless the data and the given hyperparameters (when any) make
 * sense: NaN or infinite values would poison every matrix. */
static as_code check_fit_input(const double *x, const double *y, int n, int dim,
                               const se_gp_hyper *h, as_status *st)
{
    if (n < 1)
        return as_fail(st, AS_EINVAL, "GP fit: %d points (at least 1 needed)", n);
    if (dim < 1 || dim > SE_MAX_PARAMS)
        return as_fail(st, AS_EINVAL, "GP fit: %d inputs (1 to %d allowed)", dim, SE_MAX_PARAMS);
    if (!all_finite(x, (size_t)n * (size_t)dim) || !all_finite(y, (size_t)n))
        return as_fail(st, AS_EINVAL, "GP fit: an input or target is not finite");
    if (!h)
        return AS_OK;
    if (h->dim != dim)
        return as_fail(st, AS_EINVAL, "GP fit: hyperparameters for %d inputs, data has %d", h->dim,
                       dim);
    bool valid =
        isfinite(h->signal_var) && h->signal_var > 0 && isfinite(h->noise_var) && h->noise_var >= 0;
    for (int d = 0; d < dim; d++)
        valid &= isfinite(h->length_scale[d]) && h->length_scale[d] > 0;
    if (!valid)
        return as_fail(st, AS_EINVAL,
                       "GP fit: hyperparameters must be positive and finite "
                       "(noise_var may be 0)");
    return AS_OK;
}

/* se_gp_fit with GSL's error handler off (see the top of the file). */
static as_code fit(se_gp **out, const double *x, const double *y, int n, int dim,
                   const se_gp_hyper *hyper, as_status *st)
{
    as_code code = check_fit_input(x, y, n, dim, hyper, st);
    if (code != AS_OK)
        return code;
    se_gp *gp = gp_alloc(x, n, dim);
    if (!gp)
        return as_fail(st, AS_ENOMEM, "out of memory for a GP of %d points", n);
    standardise(gp, y);
    se_gp_hyper chosen;
    if (hyper)
        chosen = *hyper;
    else
        code = fit_hyperparameters(gp, &chosen, st);
    if (code == AS_OK && !condition(gp, &chosen))
        code = as_fail(st, AS_EINVAL,
                       "GP fit: the covariance of %d points is not positive definite even "
                       "with jitter (noise_var %g)",
                       n, chosen.noise_var);
    if (code != AS_OK) {
        se_gp_free(gp);
        return code;
    }
    *out = gp;
    return AS_OK;
}

as_code se_gp_fit(se_gp **out, const double *x, const double *y, int n, int dim,
                  const se_gp_hyper *hyper, as_status *st)
{
    *out = NULL;
    gsl_error_handler_t *previous = gsl_set_error_handler_off();
    as_code code = fit(out, x, y, n, dim, hyper, st);
    gsl_set_error_handler(previous);
    return code;
}

/* ---------------------------------------------------------------- queries */

/*
 * Mean and latent variance at x in standardised units, using v[0 .. n)
 * as scratch for k* and then L^-1 k*.
 */
static void predict_standardised(const se_gp *gp, const double *x, double *v, double *mean,
                                 double *var)
{
    double xs[SE_MAX_PARAMS];
    scale_point(x, &gp->hyper, xs);
    for (int i = 0; i < gp->n; i++)
        v[i] = matern52(distance2(xs, gp->x_scaled + i * gp->dim, gp->dim), gp->hyper.signal_var);
    gsl_vector_view k = gsl_vector_view_array(v, (size_t)gp->n);
    gsl_blas_ddot(&k.vector, gp->alpha, mean);
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, gp->chol, &k.vector);
    double explained;
    gsl_blas_ddot(&k.vector, &k.vector, &explained);
    *var = fmax(gp->hyper.signal_var - explained, 0);
}

/* Scratch on the stack for up to PREDICT_STACK_POINTS training points;
 * beyond that a heap buffer, and when even that fails the prior (mean mu,
 * variance s2 sd^2) is reported: knowing nothing is the safe answer for an
 * acquisition. */
void se_gp_predict(const se_gp *gp, const double *x, double *mean, double *var)
{
    double stack[PREDICT_STACK_POINTS];
    double *v = gp->n <= PREDICT_STACK_POINTS ? stack : malloc((size_t)gp->n * sizeof *v);
    double m = 0, s = gp->hyper.signal_var;
    if (v)
        predict_standardised(gp, x, v, &m, &s);
    if (v != stack)
        free(v);
    *mean = m * gp->y_sd + gp->y_mean;
    *var = s * gp->y_sd * gp->y_sd;
}

const se_gp_hyper *se_gp_hyperparameters(const se_gp *gp)
{
    return &gp->hyper;
}

double se_gp_log_likelihood(const se_gp *gp)
{
    return gp->log_likelihood;
}

/* Jones et al. eq. 15, clamped at 0 against rounding when z is very
 * negative; a certain (or undefined) variance leaves the plain
 * improvement. */
double se_expected_improvement(double mean, double var, double best)
{
    double gain = best - mean;
    if (!(var > 0))
        return fmax(gain, 0);
    double sd = sqrt(var), z = gain / sd;
    return fmax(gain * gsl_cdf_ugaussian_P(z) + sd * gsl_ran_ugaussian_pdf(z), 0);
}
