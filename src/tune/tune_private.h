/*
 * tune_private.h -- what the files of tune/ share: the learners (small
 * MLPs on GSL's BLAS, an XGBoost ensemble), the measurement history and
 * the engine interface.  Not for other modules.
 */
#ifndef AS_TUNE_PRIVATE_H
#define AS_TUNE_PRIVATE_H

#include <gsl/gsl_matrix.h>

#include "tune.h"

/* ------------------------------------------------------------------ MLP */

/*
 * A fully connected network: tanh hidden layers, a linear output layer.
 * Forward and backward run on a batch of rows (one sample per row) with
 * GSL's BLAS (gsl_blas_dgemm); the workspace is sized at init for
 * max_rows, so a pass allocates nothing.  Adam keeps its moments here.
 */
#define TN_MLP_MAX_LAYERS 4

typedef struct tn_mlp {
    int n_layers;                     /* weight layers */
    int width[TN_MLP_MAX_LAYERS + 1]; /* width[0] inputs ... width[n_layers] outputs */
    int max_rows;
    gsl_matrix *weight[TN_MLP_MAX_LAYERS]; /* width[l] x width[l+1] */
    gsl_vector *bias[TN_MLP_MAX_LAYERS];
    gsl_matrix *grad_weight[TN_MLP_MAX_LAYERS];
    gsl_vector *grad_bias[TN_MLP_MAX_LAYERS];
    gsl_matrix *adam_m[TN_MLP_MAX_LAYERS], *adam_v[TN_MLP_MAX_LAYERS];
    gsl_vector *adam_mb[TN_MLP_MAX_LAYERS], *adam_vb[TN_MLP_MAX_LAYERS];
    int64_t adam_steps;
    gsl_matrix *activation[TN_MLP_MAX_LAYERS + 1]; /* max_rows x width[l]: inputs, hidden, out */
    gsl_matrix *delta[TN_MLP_MAX_LAYERS + 1];
    int rows; /* rows of the last forward pass */
} tn_mlp;

/* widths[0] inputs, widths[1 .. n_layers-1] hidden, widths[n_layers]
 * outputs.  Weights are drawn from rng (scaled uniform, Glorot); the
 * output layer is scaled by out_scale (0.01 for policy heads). */
as_code tn_mlp_init(tn_mlp *m, int n_layers, const int *widths, int max_rows, double out_scale,
                    as_rng *rng, as_status *st);
void tn_mlp_free(tn_mlp *m);
/* Forward pass of rows x width[0] inputs (row-major); returns the
 * rows x width[n_layers] outputs, valid until the next pass. */
const gsl_matrix *tn_mlp_forward(tn_mlp *m, const double *inputs, int rows);
/* Backward pass of the last forward: d_outputs is rows x outputs
 * (row-major); gradients are added to grad_* (tn_mlp_zero_grad clears). */
void tn_mlp_backward(tn_mlp *m, const double *d_outputs);
void tn_mlp_zero_grad(tn_mlp *m);
/* One Adam step (beta 0.9, 0.999) with gradients clipped to max_norm
 * (global L2 norm; <= 0: no clipping). */
void tn_mlp_adam_step(tn_mlp *m, double learning_rate, double max_norm);

/* ------------------------------------------------- boosted-tree ensemble */

/*
 * An ensemble of gradient-boosted regression trees (XGBoost's C API), each
 * member trained on a bootstrap resample of the data: the mean of the
 * members' predictions ranks configurations, their standard deviation is
 * the model's spread (its confidence).  Deterministic for a seed (one
 * XGBoost thread per booster, exact tree method).
 */
typedef struct tn_gbt tn_gbt;

/* Fit n_members boosters to n rows of x (n x d, row-major) and targets y. */
as_code tn_gbt_fit(tn_gbt **out, const double *x, const double *y, int64_t n, int d, int n_members,
                   int rounds, uint64_t seed, as_status *st);
/* Predict n rows: mean[i] and (when not NULL) spread[i]. */
as_code tn_gbt_predict(const tn_gbt *g, const double *x, int64_t n, double *mean, double *spread,
                       as_status *st);
void tn_gbt_free(tn_gbt *g);

/* ---------------------------------------------------------------- k-means */

/* k-means (k-means++ seeding from rng, Lloyd iterations) of n points of
 * dimension d: assignment[i] in [0, k); centroids k x d.  For CHAMELEON's
 * adaptive sampling. */
void tn_kmeans(const double *x, int64_t n, int d, int k, as_rng *rng, int iterations,
               int *assignment, double *centroids);

/* -------------------------------------------------------------- history */

/* The measurements of one layer so far, with a hash index of the points. */
typedef struct tn_history {
    tn_trial *trials;
    int64_t n, cap;
    int64_t best;   /* index of the best valid trial, -1 when none */
    as_table index; /* items: int64_t trial indices, keyed by their points */
} tn_history;

/* Index of pt's trial, or -1 when it was not measured. */
int64_t tn_history_find(const tn_history *h, const tn_point *pt);

/* ------------------------------------------------ the measurements' model */

/*
 * The learned cost model of a layer's measurements, which every engine
 * uses: a tn_gbt ensemble fitted to the history (features
 * tn_space_features, target GFLOPS over the best measured, 0 when
 * invalid).  AutoTVM anneals on its mean; the RL engines are rewarded by
 * it (tn_surrogate_reward, ppo.h) and DCO-Comp's confidence sampling
 * ranks by its mean and spread.
 */
typedef struct tn_surrogate {
    const tn_space *sp;
    const tn_history *h; /* the history of the last fit */
    tn_gbt *model;       /* NULL before the first fit */
    double best_gflops;  /* best measured at the last fit */
    double *x, *y;       /* training rows */
    int64_t cap;
    double *feat; /* scratch: max_points x TN_FEATURES */
    int max_points;
} tn_surrogate;

as_code tn_surrogate_init(tn_surrogate *s, const tn_space *sp, int max_points, as_status *st);
void tn_surrogate_free(tn_surrogate *s);
/* Refit to every trial of h (n_members boosters of `rounds` rounds from
 * seed).  False (model dropped) when h has no valid trial or the fit
 * fails. */
bool tn_surrogate_fit(tn_surrogate *s, const tn_history *h, int n_members, int rounds,
                      uint64_t seed);
/* The model's mean (and spread when not NULL) at n <= max_points points,
 * in units of the best measured; false when there is no model. */
bool tn_surrogate_predict(tn_surrogate *s, const tn_point *pts, int n, double *mean,
                          double *spread);

/* Is pt among pts[0..n)? */
bool tn_points_contain(const tn_point *pts, int n, const tn_point *pt);

/* Up to max random points not in h and not among out[0..n) appended
 * after out[n-1], from at most `draws` draws; returns the new count.  The
 * driver's and every engine's random unmeasured points come from here. */
int tn_fill_random(const tn_space *sp, const tn_history *h, tn_point *out, int n, int max,
                   int draws, as_rng *rng);

/* ---------------------------------------------------------------- engines */

/*
 * An engine proposes points to measure; the driver (tune.c) measures each
 * new one, appends it to the history and calls propose again until the
 * budget is spent.  A proposed point already in the history is not
 * measured again and costs nothing (the engine sees its result through
 * tn_history_find).  When a round proposes nothing new the driver measures
 * one random unmeasured point, so that no engine stalls.
 */
typedef struct tn_engine_ops {
    const char *name;
    as_code (*init)(void **state, const tn_space *sp, const tn_options *o, as_rng *rng,
                    as_status *st);
    /* Up to max points into out; returns how many. */
    int (*propose)(void *state, const tn_history *h, tn_point *out, int max);
    void (*free)(void *state);
} tn_engine_ops;

extern const tn_engine_ops tn_dcocomp_ops, tn_autotvm_ops, tn_chameleon_ops;

#endif
