/*
 * mlp.c -- small fully connected networks on GSL's BLAS, for DCO-Comp's
 * actors and critic.
 *
 * Layout: a batch is a matrix with one sample per row.  Layer l maps the
 * rows x width[l] activation A[l] to A[l+1] = f(A[l] W[l] + 1 b[l]'),
 * with W[l] of width[l] x width[l+1], f = tanh on hidden layers and the
 * identity on the output layer.  The activation and delta matrices are
 * allocated once for max_rows rows; a pass over fewer rows shrinks their
 * row count (size1) in place, which GSL permits because a matrix owns its
 * block and the row stride (tda) does not change.  So forward, backward
 * and the Adam step allocate nothing.
 */
#include <math.h>
#include <string.h>

#include <gsl/gsl_blas.h>

#include "tune_private.h"

/* Adam's constants (Kingma and Ba 2015, the paper's defaults). */
#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPSILON 1e-8

/* Every matrix and vector pointer of m to NULL, so that tn_mlp_free can
 * run on a network whose init failed part-way. */
static void mlp_clear(tn_mlp *m)
{
    memset(m, 0, sizeof *m);
}

/* Allocate the per-layer arrays of m; false when memory ran out. */
static bool mlp_alloc(tn_mlp *m)
{
    size_t rows = (size_t)m->max_rows;
    for (int l = 0; l < m->n_layers; l++) {
        size_t in = (size_t)m->width[l], out = (size_t)m->width[l + 1];
        m->weight[l] = gsl_matrix_calloc(in, out);
        m->grad_weight[l] = gsl_matrix_calloc(in, out);
        m->adam_m[l] = gsl_matrix_calloc(in, out);
        m->adam_v[l] = gsl_matrix_calloc(in, out);
        m->bias[l] = gsl_vector_calloc(out);
        m->grad_bias[l] = gsl_vector_calloc(out);
        m->adam_mb[l] = gsl_vector_calloc(out);
        m->adam_vb[l] = gsl_vector_calloc(out);
        if (!m->weight[l] || !m->grad_weight[l] || !m->adam_m[l] || !m->adam_v[l] || !m->bias[l] ||
            !m->grad_bias[l] || !m->adam_mb[l] || !m->adam_vb[l])
            return false;
    }
    for (int l = 0; l <= m->n_layers; l++) {
        m->activation[l] = gsl_matrix_calloc(rows, (size_t)m->width[l]);
        m->delta[l] = gsl_matrix_calloc(rows, (size_t)m->width[l]);
        if (!m->activation[l] || !m->delta[l])
            return false;
    }
    return true;
}

/* Glorot's scaled uniform draw (Glorot and Bengio 2010): U(-a, a) with
 * a = sqrt(6 / (fan_in + fan_out)), which keeps the variance of tanh
 * activations roughly constant across layers; biases start at zero. */
static void mlp_glorot(tn_mlp *m, double out_scale, as_rng *rng)
{
    for (int l = 0; l < m->n_layers; l++) {
        gsl_matrix *w = m->weight[l];
        double limit = sqrt(6.0 / (double)(m->width[l] + m->width[l + 1]));
        if (l == m->n_layers - 1)
            limit *= out_scale;
        for (size_t i = 0; i < w->size1; i++)
            for (size_t j = 0; j < w->size2; j++)
                gsl_matrix_set(w, i, j, (2.0 * as_rng_unit(rng) - 1.0) * limit);
    }
}

/* Build a network of n_layers weight layers over widths[0 .. n_layers]
 * (see tune_private.h).  Weights are drawn in layer order, row by row, so
 * one rng state gives one network. */
as_code tn_mlp_init(tn_mlp *m, int n_layers, const int *widths, int max_rows, double out_scale,
                    as_rng *rng, as_status *st)
{
    mlp_clear(m);
    if (n_layers < 1 || n_layers > TN_MLP_MAX_LAYERS)
        return as_fail(st, AS_EINVAL, "tune/mlp: %d weight layers (1 to %d)", n_layers,
                       TN_MLP_MAX_LAYERS);
    if (max_rows < 1)
        return as_fail(st, AS_EINVAL, "tune/mlp: max_rows %d (at least 1)", max_rows);
    for (int l = 0; l <= n_layers; l++)
        if (widths[l] < 1)
            return as_fail(st, AS_EINVAL, "tune/mlp: width[%d] = %d (at least 1)", l, widths[l]);
    m->n_layers = n_layers;
    memcpy(m->width, widths, (size_t)(n_layers + 1) * sizeof *widths);
    m->max_rows = max_rows;
    if (!mlp_alloc(m)) {
        tn_mlp_free(m);
        return as_fail(st, AS_ENOMEM, "tune/mlp: out of memory for a %d-layer network", n_layers);
    }
    mlp_glorot(m, out_scale, rng);
    return AS_OK;
}

/* Release every matrix of m (safe on a cleared or half-built network). */
void tn_mlp_free(tn_mlp *m)
{
    for (int l = 0; l < TN_MLP_MAX_LAYERS; l++) {
        gsl_matrix_free(m->weight[l]);
        gsl_matrix_free(m->grad_weight[l]);
        gsl_matrix_free(m->adam_m[l]);
        gsl_matrix_free(m->adam_v[l]);
        gsl_vector_free(m->bias[l]);
        gsl_vector_free(m->grad_bias[l]);
        gsl_vector_free(m->adam_mb[l]);
        gsl_vector_free(m->adam_vb[l]);
    }
    for (int l = 0; l <= TN_MLP_MAX_LAYERS; l++) {
        gsl_matrix_free(m->activation[l]);
        gsl_matrix_free(m->delta[l]);
    }
    mlp_clear(m);
}

/* Set every workspace matrix to `rows` rows (see the header comment). */
static void mlp_set_rows(tn_mlp *m, int rows)
{
    for (int l = 0; l <= m->n_layers; l++) {
        m->activation[l]->size1 = (size_t)rows;
        m->delta[l]->size1 = (size_t)rows;
    }
    m->rows = rows;
}

/* Forward pass of `rows` samples (1 <= rows <= max_rows): inputs are
 * rows x width[0] doubles, row-major.  Returns the output activations
 * (rows x width[n_layers]), owned by m and valid until the next pass. */
const gsl_matrix *tn_mlp_forward(tn_mlp *m, const double *inputs, int rows)
{
    mlp_set_rows(m, rows);
    memcpy(m->activation[0]->data, inputs, (size_t)rows * (size_t)m->width[0] * sizeof *inputs);
    for (int l = 0; l < m->n_layers; l++) {
        gsl_matrix *out = m->activation[l + 1];
        const gsl_vector *b = m->bias[l];
        for (size_t i = 0; i < out->size1; i++)
            for (size_t j = 0; j < out->size2; j++)
                gsl_matrix_set(out, i, j, gsl_vector_get(b, j));
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, m->activation[l], m->weight[l], 1.0, out);
        if (l < m->n_layers - 1)
            for (size_t i = 0; i < out->size1; i++)
                for (size_t j = 0; j < out->size2; j++)
                    gsl_matrix_set(out, i, j, tanh(gsl_matrix_get(out, i, j)));
    }
    return m->activation[m->n_layers];
}

/* Backward pass of the last forward.  delta[l] holds dLoss/d(pre-
 * activation) of layer l's output, delta[0] the gradient with respect to
 * the inputs.  Gradients accumulate into grad_* so that a caller can sum
 * several losses (PPO's policy and entropy terms) before one step. */
void tn_mlp_backward(tn_mlp *m, const double *d_outputs)
{
    int top = m->n_layers;
    gsl_matrix *d_out = m->delta[top];
    memcpy(d_out->data, d_outputs, (size_t)m->rows * (size_t)m->width[top] * sizeof *d_outputs);
    for (int l = top - 1; l >= 0; l--) {
        const gsl_matrix *d_next = m->delta[l + 1];
        gsl_blas_dgemm(CblasTrans, CblasNoTrans, 1.0, m->activation[l], d_next, 1.0,
                       m->grad_weight[l]);
        for (size_t j = 0; j < d_next->size2; j++) {
            double sum = 0.0;
            for (size_t i = 0; i < d_next->size1; i++)
                sum += gsl_matrix_get(d_next, i, j);
            gsl_vector_set(m->grad_bias[l], j, gsl_vector_get(m->grad_bias[l], j) + sum);
        }
        gsl_matrix *d_here = m->delta[l];
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, d_next, m->weight[l], 0.0, d_here);
        if (l == 0)
            continue; /* the inputs have no activation function */
        const gsl_matrix *a = m->activation[l];
        for (size_t i = 0; i < d_here->size1; i++)
            for (size_t j = 0; j < d_here->size2; j++) {
                double t = gsl_matrix_get(a, i, j);
                gsl_matrix_set(d_here, i, j, gsl_matrix_get(d_here, i, j) * (1.0 - t * t));
            }
    }
}

/* Clear the accumulated gradients. */
void tn_mlp_zero_grad(tn_mlp *m)
{
    for (int l = 0; l < m->n_layers; l++) {
        gsl_matrix_set_zero(m->grad_weight[l]);
        gsl_vector_set_zero(m->grad_bias[l]);
    }
}

/* Global L2 norm of every gradient of m. */
static double mlp_grad_norm(const tn_mlp *m)
{
    double sum = 0.0;
    for (int l = 0; l < m->n_layers; l++) {
        const gsl_matrix *g = m->grad_weight[l];
        for (size_t i = 0; i < g->size1; i++)
            for (size_t j = 0; j < g->size2; j++)
                sum += gsl_matrix_get(g, i, j) * gsl_matrix_get(g, i, j);
        double nb = gsl_blas_dnrm2(m->grad_bias[l]);
        sum += nb * nb;
    }
    return sqrt(sum);
}

/* Adam's update of one parameter: moments m1, m2 updated with gradient g;
 * returns the step to subtract (learning rate applied, bias corrected). */
static double adam_delta(double *m1, double *m2, double g, double lr, double c1, double c2)
{
    *m1 = ADAM_BETA1 * *m1 + (1.0 - ADAM_BETA1) * g;
    *m2 = ADAM_BETA2 * *m2 + (1.0 - ADAM_BETA2) * g * g;
    return lr * (*m1 / c1) / (sqrt(*m2 / c2) + ADAM_EPSILON);
}

/* One Adam step on the accumulated gradients, scaled first so that their
 * global L2 norm is at most max_norm (when max_norm > 0); the scaling is
 * applied to grad_* in place.  The gradients are not cleared. */
void tn_mlp_adam_step(tn_mlp *m, double learning_rate, double max_norm)
{
    double scale = 1.0;
    if (max_norm > 0.0) {
        double norm = mlp_grad_norm(m);
        if (norm > max_norm)
            scale = max_norm / norm;
    }
    m->adam_steps++;
    double c1 = 1.0 - pow(ADAM_BETA1, (double)m->adam_steps);
    double c2 = 1.0 - pow(ADAM_BETA2, (double)m->adam_steps);
    for (int l = 0; l < m->n_layers; l++) {
        gsl_matrix *w = m->weight[l], *g = m->grad_weight[l];
        for (size_t i = 0; i < w->size1; i++)
            for (size_t j = 0; j < w->size2; j++) {
                double gij = gsl_matrix_get(g, i, j) * scale;
                gsl_matrix_set(g, i, j, gij);
                double step =
                    adam_delta(gsl_matrix_ptr(m->adam_m[l], i, j),
                               gsl_matrix_ptr(m->adam_v[l], i, j), gij, learning_rate, c1, c2);
                gsl_matrix_set(w, i, j, gsl_matrix_get(w, i, j) - step);
            }
        gsl_vector *b = m->bias[l], *gb = m->grad_bias[l];
        for (size_t j = 0; j < b->size; j++) {
            double gj = gsl_vector_get(gb, j) * scale;
            gsl_vector_set(gb, j, gj);
            double step = adam_delta(gsl_vector_ptr(m->adam_mb[l], j),
                                     gsl_vector_ptr(m->adam_vb[l], j), gj, learning_rate, c1, c2);
            gsl_vector_set(b, j, gsl_vector_get(b, j) - step);
        }
    }
}
