/*
 * optim.c -- FADiff's optimiser for one problem's mappings (diff.h,
 * layer 3): the parametrisation of the map space in continuous variables,
 * the relaxed loss, Adam with annealing, rounding back to a valid mapping
 * and the anytime search around them.
 *
 * Variables of one problem (a "layer"):
 *  - per dimension and free slot (mapspace.h: a level's temporal or
 *    spatial factor the constraints leave free) the logarithm of the
 *    factor, except one residual slot per dimension -- the outermost free
 *    temporal one -- whose factor is the dimension's rest (bound over its
 *    fixed factors) divided by the others, so that the factors always
 *    multiply to the bound;
 *  - per level, logits over candidate loop orders (the constraints'
 *    order, and for each data space the order that puts the dimensions it
 *    does not depend on innermost: that data space stationary at the
 *    level below), sampled with Gumbel-softmax;
 *  - per level with both a free X and a free Y fanout, per dimension a
 *    logit for unrolling on X rather than on Y.
 *
 * Loss = log EDP of the relaxed model, mixed over the order choices
 * (each level's alternatives scored with the other levels at their
 * sample, weighted by the Gumbel-softmax probabilities: exactly the
 * sample's cost at one-hot weights), plus penalties weighted by
 * lambda(progress): tiles over capacity and spatial use over fanout (log
 * ratio, squared, when positive), factors below 1, and each factor's log
 * distance to the nearest divisor of its dimension's rest (divisibility).
 * lambda grows and the model's temperature and the Gumbel temperature
 * fall along each descent.
 *
 * Rounding: per dimension, inner slots first, the divisor of what is left
 * nearest in log to the continuous factor; the residual slot takes the
 * rest; orders and axes by argmax.  When the result breaks a constraint
 * or does not fit, a prime factor of the largest free inner factor moves
 * to the residual slot, until it is valid or nothing is left to move.
 */
#include "diff.h"

#include "../mapping/eval_private.h"
#include "../mapping/mapspace.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ORDERS 4 /* candidate orders per level */
#define MAX_CHOICES (ARCH_MAX_LEVELS * (1 + WL_NDATASPACES))
#define MAX_VARS (WL_NDIMS * MS_MAX_SLOTS + MAX_CHOICES * MAX_ORDERS + ARCH_MAX_LEVELS * WL_NDIMS)
#define MAX_DIVISORS 512
#define TAPE_NODES (1 << 17)
#define REPAIR_MOVES 64
/* Annealing over one descent: model temperature, Gumbel temperature and
 * penalty weight go geometrically from the first value to the second. */
#define TAU_MODEL_FROM 0.3
#define TAU_MODEL_TO 0.02
#define TAU_GUMBEL_FROM 1.0
#define TAU_GUMBEL_TO 0.1
#define LAMBDA_FROM 0.3
#define LAMBDA_TO 30.0
/* Rounded and scored this many times per descent (the last at its end). */
#define ROUNDINGS 3

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

struct df_map_search {
    arch_spec arch;
    wl_problem problem;
    df_options o;
    df_layer layer;
    int threads;
    df_tape *tapes; /* one per thread */
    double started;
    int64_t descents;
    bool ended, found;
    map_mapping best;
    map_eval best_eval;
    double *curve;
    int n_curve, curve_capacity;
};

void df_options_default(df_options *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->threads = 1;
    o->descents_per_step = 8;
    o->adam_steps = 150;
    o->learning_rate = 0.15;
}

/* ------------------------------------------------------- the space */

static int64_t *slot_factor(map_mapping *m, ms_slot sl, int d)
{
    return sl.spatial ? &m->level[sl.level].spatial[d] : &m->level[sl.level].temporal[d];
}

static int64_t slot_value(const map_mapping *m, ms_slot sl, int d)
{
    return sl.spatial ? m->level[sl.level].spatial[d] : m->level[sl.level].temporal[d];
}

/* Divisors of n, ascending (at most MAX_DIVISORS). */
static int divisors_of(int64_t n, int64_t *out)
{
    int k = 0, hi = 0;
    int64_t high[MAX_DIVISORS];
    for (int64_t q = 1; q * q <= n && k + hi < MAX_DIVISORS; q++)
        if (n % q == 0) {
            out[k++] = q;
            if (q != n / q)
                high[hi++] = n / q;
        }
    while (hi > 0 && k < MAX_DIVISORS)
        out[k++] = high[--hi];
    return k;
}

/* Does dimension d leave data space ds's projection unchanged? */
static bool irrelevant(const wl_problem *p, int ds, int d)
{
    const wl_dataspace *x = &p->ds[ds];
    for (int r = 0; r < x->n_ranks; r++)
        for (int k = 0; k < x->ranks[r].n_terms; k++)
            if ((int)x->ranks[r].terms[k].dim == d && x->ranks[r].terms[k].coef != 0)
                return false;
    return true;
}

/* Candidate temporal orders of level l: the blank's, then per data space
 * its stationary order (the fixed prefix kept, then the free dimensions
 * irrelevant to it, then the rest), duplicates dropped. */
static void candidate_orders(df_layer *L, const wl_problem *p, int l)
{
    const arch_constraints *c = &L->space.arch.level[l].constraints;
    int fixed = c->n_temporal_order < 0 ? 0 : c->n_temporal_order;
    const uint8_t *base = L->blank.level[l].temporal_order;
    L->n_orders[l] = 0;
    memcpy(L->order[l][L->n_orders[l]++], base, WL_NDIMS);
    for (int ds = 0; ds < WL_NDATASPACES; ds++) {
        uint8_t o[WL_NDIMS];
        int k = 0;
        memcpy(o, base, (size_t)fixed);
        k = fixed;
        for (int pass = 0; pass < 2; pass++)
            for (int i = fixed; i < WL_NDIMS; i++)
                if (irrelevant(p, ds, base[i]) == (pass == 0))
                    o[k++] = base[i];
        bool known = false;
        for (int j = 0; j < L->n_orders[l] && !known; j++)
            known = memcmp(L->order[l][j], o, WL_NDIMS) == 0;
        if (!known && L->n_orders[l] < MAX_ORDERS)
            memcpy(L->order[l][L->n_orders[l]++], o, WL_NDIMS);
    }
}

static void add_choice(df_layer *L, choice c)
{
    c.var = L->n_vars;
    L->n_vars += c.n_options;
    L->choice[L->n_choices++] = c;
}

static as_code layer_init(df_layer *L, const arch_spec *a, const wl_problem *p, as_status *st)
{
    memset(L, 0, sizeof *L);
    as_code code = ms_init(&L->space, a, p, false, st);
    if (code != AS_OK)
        return code;
    const ms_space *s = &L->space;
    const ms_variant *v = &s->variant[0];
    if (!v->feasible)
        return as_fail(st, AS_EINVAL,
                       "%s: the architecture's fixed factors do not divide the problem's bounds",
                       a->name);
    ms_point blank;
    ms_blank(s, 0, &blank);
    L->blank = blank.m;
    for (int d = 0; d < WL_NDIMS; d++) {
        if (v->rest[d] <= 1)
            continue;
        int residual = -1;
        for (int i = 0; i < s->n_slots[d]; i++)
            if (!s->slot[d][i].spatial &&
                (residual < 0 || s->slot[d][i].level > s->slot[d][residual].level))
                residual = i;
        if (residual < 0)
            return as_fail(st, AS_EINVAL,
                           "%s: dimension %s has a rest of %lld but no free temporal slot", a->name,
                           wl_dim_name((wl_dim)d), (long long)v->rest[d]);
        L->has_residual[d] = true;
        L->residual[d] = s->slot[d][residual];
        for (int i = 0; i < s->n_slots[d]; i++)
            if (i != residual)
                L->factor[L->n_factor_vars++] = (factor_var){d, s->slot[d][i]};
        int64_t div[MAX_DIVISORS];
        L->n_divisors[d] = divisors_of(v->rest[d], div);
        for (int k = 0; k < L->n_divisors[d]; k++) {
            L->divisor[d][k] = div[k];
            L->log_divisor[d][k] = log((double)div[k]);
        }
    }
    L->n_vars = L->n_factor_vars;
    for (int l = 0; l < s->n_levels; l++) {
        candidate_orders(L, p, l);
        if (L->n_orders[l] > 1)
            add_choice(L, (choice){CHOICE_ORDER, l, -1, L->n_orders[l], 0});
        for (int ds = 0; l < s->n_levels - 1 && ds < WL_NDATASPACES; ds++)
            if (s->keep[l][ds] == ARCH_KEEP_FREE)
                add_choice(L, (choice){CHOICE_KEEP, l, ds, 2, 0});
        bool axes = !s->arch.level[l].constraints.spatial_split_fixed && s->fanout_x[l] > 1 &&
                    s->fanout_y[l] > 1;
        L->axis_var[l] = axes ? L->n_vars : -1;
        L->n_vars += axes ? WL_NDIMS : 0;
    }
    return AS_OK;
}

/* ------------------------------------------------- the discrete parts */

static int argmax(const double *x, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

static void apply_choice(const df_layer *L, const choice *c, int option, map_mapping *m)
{
    if (c->kind == CHOICE_ORDER)
        memcpy(m->level[c->level].temporal_order, L->order[c->level][option], WL_NDIMS);
    else
        m->level[c->level].keep[c->ds] = option == 0;
}

/* Option `pick[c]` of every choice c, and the axes by argmax of the X/Y
 * logits in x, on the blank (its fixed factors). */
static void skeleton_of(const df_layer *L, const double *x, const int *pick, map_mapping *m)
{
    *m = L->blank;
    for (int c = 0; c < L->n_choices; c++)
        apply_choice(L, &L->choice[c], pick[c], m);
    for (int l = 0; l < m->n_levels; l++) {
        if (L->axis_var[l] < 0)
            continue;
        map_level *ml = &m->level[l];
        int k = 0;
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1)
                ml->spatial_split = k;
            for (int d = 0; d < WL_NDIMS; d++)
                if ((x[L->axis_var[l] + d] >= 0) == (pass == 0))
                    ml->spatial_order[k++] = (uint8_t)d;
        }
    }
}

/* ----------------------------------------------------------- the loss */

/* Factors on the tape from variables xv (log factors). */
static void factors_of(df_tape *t, const df_layer *L, const df_var *xv, df_factors *f)
{
    const map_mapping *b = &L->blank;
    df_var sum[WL_NDIMS];
    df_var zero = df_const(t, 0);
    for (int l = 0; l < ARCH_MAX_LEVELS; l++)
        for (int d = 0; d < WL_NDIMS; d++) {
            bool in = l < b->n_levels;
            f->temporal[l][d] = df_const(t, in ? (double)b->level[l].temporal[d] : 1);
            f->spatial[l][d] = df_const(t, in ? (double)b->level[l].spatial[d] : 1);
        }
    for (int d = 0; d < WL_NDIMS; d++)
        sum[d] = zero;
    for (int i = 0; i < L->n_factor_vars; i++) {
        const factor_var *fv = &L->factor[i];
        df_var *slot = fv->slot.spatial ? &f->spatial[fv->slot.level][fv->d]
                                        : &f->temporal[fv->slot.level][fv->d];
        *slot = df_mul(t, *slot, df_exp(t, xv[i]));
        sum[fv->d] = df_add(t, sum[fv->d], xv[i]);
    }
    for (int d = 0; d < WL_NDIMS; d++) {
        if (!L->has_residual[d])
            continue;
        double log_rest = log((double)L->space.variant[0].rest[d]);
        df_var *slot = L->residual[d].spatial ? &f->spatial[L->residual[d].level][d]
                                              : &f->temporal[L->residual[d].level][d];
        *slot = df_mul(t, *slot, df_exp(t, df_add_c(t, df_neg(t, sum[d]), log_rest)));
    }
}

/* relu(v)^2 */
static df_var hinge2(df_tape *t, df_var v)
{
    return df_sq(t, df_relu(t, v, 0));
}

/* Squared log distance of factor value f to the nearest divisor of d's rest. */
static df_var divisibility(df_tape *t, const df_layer *L, int d, df_var log_factor)
{
    double x = df_value(t, log_factor);
    int best = 0;
    for (int k = 1; k < L->n_divisors[d]; k++)
        if (fabs(L->log_divisor[d][k] - x) < fabs(L->log_divisor[d][best] - x))
            best = k;
    return df_sq(t, df_add_c(t, log_factor, -L->log_divisor[d][best]));
}

/* The penalties of the sample's cost c and factors (see the top). */
static df_var penalties(df_tape *t, const df_layer *L, const df_var *xv, const df_cost *c)
{
    df_var total = df_const(t, 0);
    const map_mapping *b = &L->blank;
    for (int l = 0; l < b->n_levels; l++) {
        const arch_level *al = &L->space.arch.level[l];
        double buffering = al->multiple_buffering > 0 ? al->multiple_buffering : 1.0;
        for (int k = 0; k <= WL_NDATASPACES; k++) {
            if (!c->capacity_bounded[l][k])
                continue;
            double room =
                floor((double)(k < WL_NDATASPACES ? al->size_words_by_ds[k] : al->size_words) /
                      buffering);
            df_var tile = df_add_c(t, c->capacity_excess[l][k], room);
            df_var ratio =
                df_log(t, df_mul_c(t, df_add_c(t, df_relu(t, tile, 0), 1), 1 / (room + 1)));
            total = df_add(t, total, hinge2(t, ratio));
        }
        if (L->axis_var[l] < 0)
            for (int axis = 0; axis < 2; axis++)
                total = df_add(t, total, hinge2(t, df_log(t, c->fanout_ratio[l][axis])));
    }
    df_var sum[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++)
        sum[d] = df_const(t, 0);
    for (int i = 0; i < L->n_factor_vars; i++) {
        total = df_add(t, total, hinge2(t, df_neg(t, xv[i])));
        total = df_add(t, total, divisibility(t, L, L->factor[i].d, xv[i]));
        sum[L->factor[i].d] = df_add(t, sum[L->factor[i].d], xv[i]);
    }
    for (int d = 0; d < WL_NDIMS; d++) {
        if (!L->has_residual[d])
            continue;
        df_var log_residual =
            df_add_c(t, df_neg(t, sum[d]), log((double)L->space.variant[0].rest[d]));
        total = df_add(t, total, hinge2(t, df_neg(t, log_residual)));
        total = df_add(t, total, divisibility(t, L, d, log_residual));
    }
    return total;
}

/* The fanout penalty of a level whose axes are chosen: the expected log
 * use of each axis (X with probability sigmoid(logit)) over its fanout. */
static df_var axis_penalty(df_tape *t, const df_layer *L, const df_var *xv, const df_factors *f,
                           int l)
{
    df_var used[2] = {df_const(t, 0), df_const(t, 0)};
    for (int d = 0; d < WL_NDIMS; d++) {
        df_var p_x =
            df_div(t, df_const(t, 1), df_add_c(t, df_exp(t, df_neg(t, xv[L->axis_var[l] + d])), 1));
        df_var log_s = df_log(t, f->spatial[l][d]);
        used[0] = df_add(t, used[0], df_mul(t, p_x, log_s));
        used[1] = df_add(t, used[1], df_mul(t, df_add_c(t, df_neg(t, p_x), 1), log_s));
    }
    double fan[2] = {log((double)L->space.fanout_x[l]), log((double)L->space.fanout_y[l])};
    return df_add(t, hinge2(t, df_add_c(t, used[0], -fan[0])),
                  hinge2(t, df_add_c(t, used[1], -fan[1])));
}

/*
 * The loss at x (values of the variables) with Gumbel noise g, model
 * temperature tau, Gumbel temperature tau_g and penalty weight lambda,
 * recorded on t; its gradient with respect to x into grad.  Returns
 * false when the relaxation does not support the sample (or the tape
 * overflowed).
 */
static bool loss_and_gradient(df_tape *t, const df_layer *L, const wl_problem *p, const double *x,
                              const double *g, double tau, double tau_g, double lambda,
                              double *grad)
{
    df_tape_reset(t);
    t->temperature = tau;
    df_var xv[MAX_VARS];
    for (int i = 0; i < L->n_vars; i++)
        xv[i] = df_const(t, x[i]);
    df_factors f;
    factors_of(t, L, xv, &f);
    int pick[MAX_CHOICES];
    double noisy[MAX_ORDERS];
    for (int k = 0; k < L->n_choices; k++) {
        const choice *ch = &L->choice[k];
        for (int o = 0; o < ch->n_options; o++)
            noisy[o] = x[ch->var + o] + g[ch->var + o];
        pick[k] = argmax(noisy, ch->n_options);
    }
    map_mapping sk;
    skeleton_of(L, x, pick, &sk);
    df_cost c;
    df_relaxed_cost(t, &L->space.arch, p, &sk, &f, &c);
    if (!c.supported || t->full)
        return false;
    df_var base = df_log(t, c.edp);
    df_var loss = base;
    /* Gumbel-softmax mixture over each choice's options, the others at
     * their samples. */
    for (int k = 0; k < L->n_choices; k++) {
        const choice *ch = &L->choice[k];
        df_var weight[MAX_ORDERS], denom = df_const(t, 0);
        double top = -INFINITY;
        for (int o = 0; o < ch->n_options; o++)
            top = fmax(top, (x[ch->var + o] + g[ch->var + o]) / tau_g);
        for (int o = 0; o < ch->n_options; o++) {
            weight[o] = df_exp(t, df_add_c(t, df_mul_c(t, xv[ch->var + o], 1 / tau_g),
                                           g[ch->var + o] / tau_g - top));
            denom = df_add(t, denom, weight[o]);
        }
        for (int o = 0; o < ch->n_options; o++) {
            if (o == pick[k])
                continue;
            map_mapping alt = sk;
            apply_choice(L, ch, o, &alt);
            df_cost ca;
            df_relaxed_cost(t, &L->space.arch, p, &alt, &f, &ca);
            if (!ca.supported || !(df_value(t, ca.edp) > 0))
                continue;
            df_var y = df_div(t, weight[o], denom);
            loss = df_add(t, loss, df_mul(t, y, df_sub(t, df_log(t, ca.edp), base)));
        }
    }
    df_var pen = penalties(t, L, xv, &c);
    for (int l = 0; l < L->blank.n_levels; l++)
        if (L->axis_var[l] >= 0)
            pen = df_add(t, pen, axis_penalty(t, L, xv, &f, l));
    loss = df_add(t, loss, df_mul_c(t, pen, lambda));
    if (t->full || !isfinite(df_value(t, loss)))
        return false;
    df_backward(t, loss);
    for (int i = 0; i < L->n_vars; i++)
        grad[i] = t->adjoint[xv[i]];
    return true;
}

/* ------------------------------------------------------------- rounding */

/* The axis (0 X, 1 Y) dimension d unrolls on at level l of m. */
static int axis_of(const map_mapping *m, int l, int d)
{
    const map_level *ml = &m->level[l];
    for (int i = 0; i < WL_NDIMS; i++)
        if (ml->spatial_order[i] == d)
            return i >= ml->spatial_split;
    return 0;
}

/* The spatial factors on each axis of level l of m. */
static void axis_use(const map_mapping *m, int l, int64_t used[2])
{
    used[0] = used[1] = 1;
    for (int d = 0; d < WL_NDIMS; d++)
        used[axis_of(m, l, d)] *= m->level[l].spatial[d];
}

/* The free slot factors of x rounded into m (skeleton set): per slot,
 * inner levels first, the divisor of what is left of its dimension
 * nearest in log to the continuous factor -- for a spatial slot, among
 * those that still fit its axis's fanout. */
static void round_factors(const df_layer *L, const double *x, map_mapping *m)
{
    int64_t left[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++)
        left[d] = L->space.variant[0].rest[d];
    for (int level = 0; level < m->n_levels; level++) {
        /* what a spatial slot could not take (log), offered to the
         * temporal slot of the same level: the level's tile stays as
         * meant where the fanout leaves no room */
        double shortfall[WL_NDIMS] = {0};
        for (int pass = 0; pass < 2; pass++) /* spatial first: the fanout is the scarcer */
            for (int i = 0; i < L->n_factor_vars; i++) {
                const factor_var *fv = &L->factor[i];
                if (fv->slot.level != level || fv->slot.spatial != (pass == 0))
                    continue;
                int64_t room = INT64_MAX;
                if (fv->slot.spatial) {
                    int64_t used[2];
                    axis_use(m, level, used);
                    int axis = axis_of(m, level, fv->d);
                    room =
                        (axis ? L->space.fanout_y[level] : L->space.fanout_x[level]) / used[axis];
                }
                double target = x[i] + (fv->slot.spatial ? 0 : shortfall[fv->d]);
                int64_t div[MAX_DIVISORS], best = 1;
                int n = divisors_of(left[fv->d], div);
                for (int k = 0; k < n && div[k] <= room; k++)
                    if (fabs(log((double)div[k]) - target) < fabs(log((double)best) - target))
                        best = div[k];
                if (fv->slot.spatial && x[i] > log((double)best))
                    shortfall[fv->d] += x[i] - log((double)best);
                *slot_factor(m, fv->slot, fv->d) *= best;
                left[fv->d] /= best;
            }
    }
    for (int d = 0; d < WL_NDIMS; d++)
        if (L->has_residual[d])
            *slot_factor(m, L->residual[d], d) *= left[d];
}

/* The innermost level whose kept tiles exceed its room in e (map_evaluate
 * filled the tiles), or the top level when none does. */
static int overflowing_level(const arch_spec *a, const map_mapping *m, const map_eval *e)
{
    for (int l = 0; l < m->n_levels; l++) {
        const arch_level *al = &a->level[l];
        double buffering = al->multiple_buffering > 0 ? al->multiple_buffering : 1.0;
        int64_t total = 0;
        bool split = false;
        for (int ds = 0; ds < WL_NDATASPACES; ds++) {
            int64_t tile = m->level[l].keep[ds] ? e->level[l].ds[ds].tile_words : 0;
            split |= al->size_words_by_ds[ds] != 0;
            if (al->size_words_by_ds[ds] != 0 &&
                tile > (int64_t)floor((double)al->size_words_by_ds[ds] / buffering))
                return l;
            total += tile;
        }
        if (!split && al->size_words > 0 &&
            total > (int64_t)floor((double)al->size_words / buffering))
            return l;
    }
    return m->n_levels - 1;
}

static int64_t smallest_prime(int64_t n)
{
    for (int64_t q = 2; q * q <= n; q++)
        if (n % q == 0)
            return q;
    return n;
}

/* Valid under the constraints and the exact model (e filled). */
static bool legal(const df_layer *L, const wl_problem *p, map_mapping *m, map_eval *e)
{
    ms_point pt = {.variant = 0, .m = *m};
    e->validity = MAP_INVALID_SHAPE;
    if (!ms_prune(&L->space, &pt)) {
        /* a tile over capacity is the usual reason: let map_evaluate say */
        map_evaluate(&L->space.arch, p, m, e);
        if (e->validity == MAP_VALID)
            e->validity = MAP_INVALID_SHAPE;
        return false;
    }
    m->group_pack = map_best_group_pack(&L->space.arch, p, m);
    map_evaluate(&L->space.arch, p, m, e);
    return e->validity == MAP_VALID;
}

/* Round x to a valid mapping (m, e); false when repair found none. */
static bool round_to_valid(const df_layer *L, const wl_problem *p, const double *x, map_mapping *m,
                           map_eval *e)
{
    int pick[MAX_CHOICES];
    for (int k = 0; k < L->n_choices; k++)
        pick[k] = argmax(x + L->choice[k].var, L->choice[k].n_options);
    skeleton_of(L, x, pick, m);
    round_factors(L, x, m);
    for (int move = 0; move < REPAIR_MOVES; move++) {
        if (legal(L, p, m, e))
            return true;
        /* move a prime of the largest free factor at or below the level
         * that overflows (any level when something else is wrong) to the
         * residual slot */
        int below = e->validity == MAP_INVALID_CAPACITY ? overflowing_level(&L->space.arch, m, e)
                                                        : m->n_levels - 1;
        int worst = -1;
        int64_t worst_factor = 1;
        for (int i = 0; i < L->n_factor_vars; i++) {
            const factor_var *fv = &L->factor[i];
            if (fv->slot.level > below)
                continue;
            int64_t f = slot_value(m, fv->slot, fv->d) / slot_value(&L->blank, fv->slot, fv->d);
            if (f > worst_factor && L->has_residual[fv->d]) {
                worst = i;
                worst_factor = f;
            }
        }
        if (worst < 0)
            return false;
        const factor_var *fv = &L->factor[worst];
        int64_t q = smallest_prime(worst_factor);
        *slot_factor(m, fv->slot, fv->d) /= q;
        *slot_factor(m, L->residual[fv->d], fv->d) *= q;
    }
    return false;
}

/* ------------------------------------------------------------- descent */

/* A random start: a random legal point's factors (log, jittered) when
 * one turns up, else a random split of each rest; logits zero. */
static void random_start(const df_layer *L, as_rng *r, double *x)
{
    memset(x, 0, sizeof(double) * (size_t)L->n_vars);
    ms_point pt;
    bool legal_point = false;
    for (int attempt = 0; attempt < 20 && !legal_point; attempt++)
        legal_point = ms_random(&L->space, r, 0, &pt) && ms_prune(&L->space, &pt);
    for (int i = 0; i < L->n_factor_vars; i++) {
        const factor_var *fv = &L->factor[i];
        double jitter = 0.3 * (2 * as_rng_unit(r) - 1);
        if (legal_point)
            x[i] = log((double)slot_value(&pt.m, fv->slot, fv->d) /
                       (double)slot_value(&L->blank, fv->slot, fv->d)) +
                   jitter;
        else
            x[i] = as_rng_unit(r) * log((double)L->space.variant[0].rest[fv->d]) / 2;
    }
    for (int l = 0; l < L->blank.n_levels; l++)
        if (L->axis_var[l] >= 0)
            for (int d = 0; d < WL_NDIMS; d++)
                x[L->axis_var[l] + d] = 2 * as_rng_unit(r) - 1;
}

static double geometric(double from, double to, double progress)
{
    return from * pow(to / from, progress);
}

/* One descent from stream r: the best valid rounding seen (false: none). */
static bool descend(df_tape *t, const df_layer *L, const wl_problem *p, const df_options *o,
                    as_rng *r, map_mapping *best, map_eval *best_eval)
{
    double x[MAX_VARS], g[MAX_VARS], grad[MAX_VARS], m1[MAX_VARS] = {0}, m2[MAX_VARS] = {0};
    const double beta1 = 0.9, beta2 = 0.999;
    bool found = false;
    random_start(L, r, x);
    int steps = o->adam_steps > 0 ? o->adam_steps : 1;
    for (int step = 1; step <= steps; step++) {
        double progress = (double)(step - 1) / (double)(steps > 1 ? steps - 1 : 1);
        for (int i = 0; i < L->n_vars; i++) {
            double u = as_rng_unit(r);
            g[i] = -log(-log(u > 1e-300 ? u : 1e-300));
        }
        if (loss_and_gradient(t, L, p, x, g, geometric(TAU_MODEL_FROM, TAU_MODEL_TO, progress),
                              geometric(TAU_GUMBEL_FROM, TAU_GUMBEL_TO, progress),
                              geometric(LAMBDA_FROM, LAMBDA_TO, progress), grad)) {
            for (int i = 0; i < L->n_vars; i++) {
                m1[i] = beta1 * m1[i] + (1 - beta1) * grad[i];
                m2[i] = beta2 * m2[i] + (1 - beta2) * grad[i] * grad[i];
                double mhat = m1[i] / (1 - pow(beta1, step));
                double vhat = m2[i] / (1 - pow(beta2, step));
                x[i] -= o->learning_rate * mhat / (sqrt(vhat) + 1e-8);
            }
        }
        if (step % ((steps + ROUNDINGS - 1) / ROUNDINGS) == 0 || step == steps) {
            map_mapping m;
            map_eval e;
            bool ok = round_to_valid(L, p, x, &m, &e);
            if (ok && (!found || e.edp_J_cycle < best_eval->edp_J_cycle)) {
                *best = m;
                *best_eval = e;
                found = true;
            }
        }
    }
    return found;
}

/* --------------------------------------------------------------- search */

as_code df_map_search_init(df_map_search **out, const arch_spec *a, const wl_problem *p,
                           const df_options *o, as_status *st)
{
    *out = NULL;
    df_map_search *s = calloc(1, sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "out of memory for a FADiff search");
    s->arch = *a;
    s->problem = *p;
    if (o)
        s->o = *o;
    else
        df_options_default(&s->o);
    s->threads = s->o.threads > 0 ? s->o.threads : omp_get_max_threads();
    as_code code = layer_init(&s->layer, a, p, st);
    if (code == AS_OK && s->layer.n_vars > MAX_VARS)
        code = as_fail(st, AS_EINVAL, "%s: %d FADiff variables exceed %d", a->name, s->layer.n_vars,
                       MAX_VARS);
    if (code == AS_OK && !(s->tapes = calloc((size_t)s->threads, sizeof *s->tapes)))
        code = as_fail(st, AS_ENOMEM, "out of memory for FADiff's tapes");
    for (int i = 0; code == AS_OK && i < s->threads; i++)
        code = df_tape_init(&s->tapes[i], TAPE_NODES, st);
    if (code != AS_OK) {
        df_map_search_free(s);
        return code;
    }
    s->started = omp_get_wtime();
    *out = s;
    return AS_OK;
}

static void note_best(df_map_search *s, const map_mapping *m, const map_eval *e)
{
    s->found = true;
    s->best = *m;
    s->best_eval = *e;
    if (s->n_curve == s->curve_capacity) {
        int capacity = s->curve_capacity ? 2 * s->curve_capacity : 16;
        double *grown = realloc(s->curve, sizeof(double) * 2 * (size_t)capacity);
        if (!grown)
            return; /* the curve loses a point; the result is kept */
        s->curve = grown;
        s->curve_capacity = capacity;
    }
    s->curve[2 * s->n_curve] = omp_get_wtime() - s->started;
    s->curve[2 * s->n_curve + 1] = e->edp_J_cycle;
    s->n_curve++;
}

bool df_map_search_step(df_map_search *s, int64_t descents)
{
    enum { CHUNK = 64 };
    while (!s->ended && descents > 0) {
        if ((s->o.stop_flag && *s->o.stop_flag) ||
            (s->o.time_limit_seconds > 0 &&
             omp_get_wtime() - s->started >= s->o.time_limit_seconds)) {
            s->ended = true;
            break;
        }
        int n = descents < s->threads ? (int)descents : s->threads;
        if (n > CHUNK)
            n = CHUNK;
        map_mapping m[CHUNK];
        map_eval e[CHUNK];
        bool found[CHUNK];
#pragma omp parallel for num_threads(s->threads) schedule(static, 1)
        for (int i = 0; i < n; i++) {
            as_rng r = as_rng_stream(s->o.seed, (uint64_t)(s->descents + i), AS_RNG_ADVANCED_ONCE);
            found[i] = descend(&s->tapes[omp_get_thread_num()], &s->layer, &s->problem, &s->o, &r,
                               &m[i], &e[i]);
        }
        for (int i = 0; i < n; i++)
            if (found[i] && (!s->found || e[i].edp_J_cycle < s->best_eval.edp_J_cycle))
                note_best(s, &m[i], &e[i]);
        s->descents += n;
        descents -= n;
    }
    return !s->ended;
}

bool df_map_search_best(const df_map_search *s, map_mapping *mapping, map_eval *eval)
{
    if (!s->found)
        return false;
    if (mapping)
        *mapping = s->best;
    if (eval)
        *eval = s->best_eval;
    return true;
}

int64_t df_map_search_descents(const df_map_search *s)
{
    return s->descents;
}

const double *df_map_search_curve(const df_map_search *s, int *n_points)
{
    *n_points = s->n_curve;
    return s->curve;
}

void df_map_search_free(df_map_search *s)
{
    if (!s)
        return;
    for (int i = 0; s->tapes && i < s->threads; i++)
        df_tape_free(&s->tapes[i]);
    free(s->tapes);
    free(s->curve);
    free(s);
}

void df_problem_search(void *user, const arch_spec *a, const wl_problem *p, int threads,
                       int64_t budget, volatile int *stop_flag, map_problem_outcome *out)
{
    df_options o = *(const df_options *)user;
    df_map_search *s;
    memset(out, 0, sizeof *out);
    o.threads = threads;
    o.stop_flag = stop_flag;
    out->mapped = *p;
    out->budget = budget;
    out->code = df_map_search_init(&s, a, p, &o, &out->status);
    if (out->code != AS_OK)
        return;
    int64_t descents = budget > 0                 ? budget
                       : o.time_limit_seconds > 0 ? INT64_MAX
                                                  : o.descents_per_step;
    df_map_search_step(s, descents);
    out->searched = !(stop_flag && *stop_flag);
    out->found = df_map_search_best(s, &out->mapping, &out->eval);
    out->evaluated = df_map_search_descents(s);
    df_map_search_free(s);
}
