/*
 * param.c -- one problem's continuous space for FADiff (diff.h, layer 3;
 * diff_private.h): the variables, their factors and penalties on the
 * tape, the Gumbel-softmax mixture over discrete choices, rounding back
 * to a valid mapping, random starts, and the optimiser's schedule.
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
#include "diff_private.h"

#include "../mapping/eval_private.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define REPAIR_MOVES 64

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

as_code df_layer_init(df_layer *L, const arch_spec *a, const wl_problem *p, as_status *st)
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

void df_layer_sample(const df_layer *L, const double *x, const double *g, int *pick)
{
    double noisy[MAX_ORDERS];
    for (int k = 0; k < L->n_choices; k++) {
        const choice *ch = &L->choice[k];
        for (int o = 0; o < ch->n_options; o++)
            noisy[o] = x[ch->var + o] + (g ? g[ch->var + o] : 0);
        pick[k] = argmax(noisy, ch->n_options);
    }
}

/* Option `pick[c]` of every choice c, and the axes by argmax of the X/Y
 * logits in x, on the blank (its fixed factors). */
void df_layer_skeleton(const df_layer *L, const double *x, const int *pick, map_mapping *m)
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

/* What dimension d of p leaves to the free slots: its bound over the
 * fixed factors (0 when they do not divide it). */
static int64_t rest_of(const df_layer *L, const wl_problem *p, int d)
{
    int64_t fixed = 1, bound = p->bound[d] < 1 ? 1 : p->bound[d];
    for (int l = 0; l < L->blank.n_levels; l++)
        fixed *= L->blank.level[l].temporal[d] * L->blank.level[l].spatial[d];
    return bound % fixed == 0 ? bound / fixed : 0;
}

bool df_layer_factors(df_tape *t, const df_layer *L, const df_var *xv, const wl_problem *p,
                      df_factors *f)
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
        int64_t rest = rest_of(L, p, d);
        if (rest < 1)
            return false;
        if (!L->has_residual[d])
            continue;
        double log_rest = log((double)rest);
        df_var *slot = L->residual[d].spatial ? &f->spatial[L->residual[d].level][d]
                                              : &f->temporal[L->residual[d].level][d];
        *slot = df_mul(t, *slot, df_exp(t, df_add_c(t, df_neg(t, sum[d]), log_rest)));
    }
    return true;
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

/* The penalties of cost c and the factors but the axes' (see the top). */
static df_var penalties(df_tape *t, const df_layer *L, const df_var *xv, const wl_problem *p,
                        const df_cost *c)
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
        df_var log_residual = df_add_c(t, df_neg(t, sum[d]), log((double)rest_of(L, p, d)));
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

df_var df_layer_penalty(df_tape *t, const df_layer *L, const df_var *xv, const wl_problem *p,
                        const df_factors *f, const df_cost *c)
{
    df_var total = penalties(t, L, xv, p, c);
    for (int l = 0; l < L->blank.n_levels; l++)
        if (L->axis_var[l] >= 0)
            total = df_add(t, total, axis_penalty(t, L, xv, f, l));
    return total;
}

df_var df_layer_mixture(df_tape *t, const df_layer *L, const wl_problem *p, const double *x,
                        const df_var *xv, const double *g, double tau_g, const int *pick,
                        const map_mapping *sk, const df_factors *f, df_var base)
{
    df_var mixture = df_const(t, 0);
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
            map_mapping alt = *sk;
            apply_choice(L, ch, o, &alt);
            df_cost ca;
            df_relaxed_cost(t, &L->space.arch, p, &alt, f, &ca);
            if (!ca.supported || !(df_value(t, ca.edp) > 0))
                continue;
            df_var y = df_div(t, weight[o], denom);
            mixture = df_add(t, mixture, df_mul(t, y, df_sub(t, df_log(t, ca.edp), base)));
        }
    }
    return mixture;
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
static void round_factors(const df_layer *L, const wl_problem *p, const double *x, map_mapping *m)
{
    int64_t left[WL_NDIMS];
    for (int d = 0; d < WL_NDIMS; d++)
        left[d] = rest_of(L, p, d);
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
bool df_layer_round(const df_layer *L, const wl_problem *p, const double *x, map_mapping *m,
                    map_eval *e)
{
    int pick[MAX_CHOICES];
    for (int d = 0; d < WL_NDIMS; d++)
        if (rest_of(L, p, d) < 1)
            return false;
    df_layer_sample(L, x, NULL, pick);
    df_layer_skeleton(L, x, pick, m);
    round_factors(L, p, x, m);
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

void df_layer_random_start(const df_layer *L, as_rng *r, double *x)
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

void df_layer_start_at(const df_layer *L, const map_mapping *m, as_rng *r, double jitter, double *x)
{
    memset(x, 0, sizeof(double) * (size_t)L->n_vars);
    for (int i = 0; i < L->n_factor_vars; i++) {
        const factor_var *fv = &L->factor[i];
        x[i] = log((double)slot_value(m, fv->slot, fv->d) /
                   (double)slot_value(&L->blank, fv->slot, fv->d));
    }
    for (int k = 0; k < L->n_choices; k++) {
        const choice *ch = &L->choice[k];
        for (int o = 0; o < ch->n_options; o++) {
            bool chosen = ch->kind == CHOICE_ORDER
                              ? memcmp(L->order[ch->level][o], m->level[ch->level].temporal_order,
                                       WL_NDIMS) == 0
                              : m->level[ch->level].keep[ch->ds] == (o == 0);
            x[ch->var + o] = chosen ? 1 : 0;
        }
    }
    for (int l = 0; l < L->blank.n_levels; l++)
        if (L->axis_var[l] >= 0)
            for (int d = 0; d < WL_NDIMS; d++)
                x[L->axis_var[l] + d] = axis_of(m, l, d) == 0 ? 1 : -1;
    for (int i = 0; i < L->n_vars; i++)
        x[i] += jitter * (2 * as_rng_unit(r) - 1);
}

void df_curve_note(as_curve *c, double started, double edp)
{
    as_curve_push(c, omp_get_wtime() - started);
    as_curve_push(c, edp);
    c->n -= c->n % 2;
}

void df_gumbel(as_rng *r, double *g, int n)
{
    for (int i = 0; i < n; i++) {
        double u = as_rng_unit(r);
        g[i] = -log(-log(u > 1e-300 ? u : 1e-300));
    }
}

void df_schedule(double progress, double *tau, double *tau_gumbel, double *lambda)
{
    *tau = TAU_MODEL_FROM * pow(TAU_MODEL_TO / TAU_MODEL_FROM, progress);
    *tau_gumbel = TAU_GUMBEL_FROM * pow(TAU_GUMBEL_TO / TAU_GUMBEL_FROM, progress);
    *lambda = LAMBDA_FROM * pow(LAMBDA_TO / LAMBDA_FROM, progress);
}

void df_adam(double *x, const double *grad, double *m1, double *m2, int n, int step, double lr)
{
    const double beta1 = 0.9, beta2 = 0.999;
    for (int i = 0; i < n; i++) {
        m1[i] = beta1 * m1[i] + (1 - beta1) * grad[i];
        m2[i] = beta2 * m2[i] + (1 - beta2) * grad[i] * grad[i];
        double mhat = m1[i] / (1 - pow(beta1, step));
        double vhat = m2[i] / (1 - pow(beta2, step));
        x[i] -= lr * mhat / (sqrt(vhat) + 1e-8);
    }
}
