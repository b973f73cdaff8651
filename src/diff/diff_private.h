/*
 * diff_private.h -- what the files of src/diff share: one problem's
 * continuous space (param.c) and the optimiser's schedule, used by the
 * search of one problem's mappings (optim.c) and by the joint search of a
 * network's mappings and fusion (network.c).
 */
#ifndef AS_DIFF_PRIVATE_H
#define AS_DIFF_PRIVATE_H

#include "diff.h"

#include "../mapping/mapspace.h"

#define MAX_ORDERS 4 /* candidate orders per level */
#define MAX_CHOICES (ARCH_MAX_LEVELS * (1 + WL_NDATASPACES))
#define MAX_VARS (WL_NDIMS * MS_MAX_SLOTS + MAX_CHOICES * MAX_ORDERS + ARCH_MAX_LEVELS * WL_NDIMS)
#define MAX_DIVISORS 512
/* One factor variable: dimension d's factor in slot sl. */
typedef struct factor_var {
    int d;
    ms_slot slot;
} factor_var;

/* A discrete choice: a level's loop order among its candidates, or
 * whether a level keeps a data space (option 0) or bypasses it (1) where
 * the architecture leaves that free. */
typedef enum choice_kind { CHOICE_ORDER, CHOICE_KEEP } choice_kind;

typedef struct choice {
    choice_kind kind;
    int level, ds;
    int n_options;
    int var; /* its first logit */
} choice;

/* The continuous space of one problem. */
typedef struct df_layer {
    ms_space space;
    map_mapping blank; /* fixed factors, constraint orders, forced keeps */
    int n_factor_vars;
    factor_var factor[WL_NDIMS * MS_MAX_SLOTS];
    ms_slot residual[WL_NDIMS]; /* per dimension with rest > 1 */
    bool has_residual[WL_NDIMS];
    int n_orders[ARCH_MAX_LEVELS];
    uint8_t order[ARCH_MAX_LEVELS][MAX_ORDERS][WL_NDIMS];
    int n_choices;
    choice choice[MAX_CHOICES];
    int axis_var[ARCH_MAX_LEVELS]; /* first X/Y logit (WL_NDIMS of them); -1: none */
    int n_vars;
    int n_divisors[WL_NDIMS];
    double log_divisor[WL_NDIMS][MAX_DIVISORS];
    int64_t divisor[WL_NDIMS][MAX_DIVISORS];
} df_layer;

/* The space of problem p on a (its constraints read, its choices listed). */
as_code df_layer_init(df_layer *L, const arch_spec *a, const wl_problem *p, as_status *st);
/* The option of every choice: argmax of its logits in x plus noise g
 * (Gumbel samples; NULL: none) into pick. */
void df_layer_sample(const df_layer *L, const double *x, const double *g, int *pick);
/* The skeleton of options pick and the axes of x (map_mapping without free factors). */
void df_layer_skeleton(const df_layer *L, const double *x, const int *pick, map_mapping *m);
/* The factors of variables xv on the tape for problem p (the layer's own,
 * or a tile of it: the residual slots take p's rests); false when p's
 * bounds are not multiples of the fixed factors. */
bool df_layer_factors(df_tape *t, const df_layer *L, const df_var *xv, const wl_problem *p,
                      df_factors *f);
/* The penalty terms of the sample (capacity and fanout of cost c, factors
 * below 1, divisibility) for problem p, unweighted. */
df_var df_layer_penalty(df_tape *t, const df_layer *L, const df_var *xv, const wl_problem *p,
                        const df_factors *f, const df_cost *c);
/* The Gumbel-softmax mixture term over the choices: for each choice and
 * each option but the sampled one, its probability (logits xv + noise g
 * at temperature tau_g) times the change of log EDP on p when that
 * option replaces the sample's in skeleton sk (base: the sample's log
 * EDP).  0 at one-hot probabilities. */
df_var df_layer_mixture(df_tape *t, const df_layer *L, const wl_problem *p, const double *x,
                        const df_var *xv, const double *g, double tau_g, const int *pick,
                        const map_mapping *sk, const df_factors *f, df_var base);
/* Round x to a valid mapping of p (m, and its evaluation e); false when
 * the repairs found none. */
bool df_layer_round(const df_layer *L, const wl_problem *p, const double *x, map_mapping *m,
                    map_eval *e);
/* A random start: a random legal point's factors (log, jittered) when one
 * turns up, else a random split of each rest; logits zero. */
void df_layer_random_start(const df_layer *L, as_rng *r, double *x);

/* Annealing over one descent: model temperature, Gumbel temperature and
 * penalty weight go geometrically from the first value to the second. */
#define TAU_MODEL_FROM 0.3
#define TAU_MODEL_TO 0.02
#define TAU_GUMBEL_FROM 1.0
#define TAU_GUMBEL_TO 0.1
#define LAMBDA_FROM 0.3
#define LAMBDA_TO 30.0

/* x := the variables of mapping m of the layer's problem (its free
 * factors' logarithms, logits of +1 for m's choices and axes, 0 for the
 * others), each moved by a uniform draw of +-jitter. */
void df_layer_start_at(const df_layer *L, const map_mapping *m, as_rng *r, double jitter,
                       double *x);
/* One descent of Adam on p's own relaxed loss (optim.c) from a random
 * start drawn from r: the best valid rounding seen (false: none). */
bool df_layer_descend(df_tape *t, const df_layer *L, const wl_problem *p, const df_options *o,
                      as_rng *r, map_mapping *best, map_eval *best_eval);

/* The schedule at progress in [0, 1] of a descent: model temperature,
 * Gumbel temperature, penalty weight. */
void df_schedule(double progress, double *tau, double *tau_gumbel, double *lambda);
/* Append (seconds since started, edp) to a best-so-far curve of pairs
 * (a point the allocation loses is dropped whole). */
void df_curve_note(as_curve *c, double started, double edp);
/* n standard Gumbel samples from r into g. */
void df_gumbel(as_rng *r, double *g, int n);
/* One Adam step on x (n variables) with gradient grad, moments m1, m2,
 * step number step (from 1) and learning rate lr. */
void df_adam(double *x, const double *grad, double *m1, double *m2, int n, int step, double lr);

#endif
