/*
 * joint.c -- FADiff's joint search of a network's mappings and fusion
 * (diff.h): every (op, problem) pair the network's costs need -- a layer
 * alone, or its tile in a fused group (network.c) -- has its own mapping
 * variables (param.c's space of that problem), every pair of consecutive
 * working ops that may fuse a fusion logit z (phi = sigmoid(z)), and one
 * loss is descended:
 *
 *   log E[energy] + log E[cycles]      (network.c, expected over the plans phi draw)
 *   + lambda x (the expected ops outside any candidate group)
 *   + sum over pairs k of w_k (mixture_k + lambda x penalty_k)
 *
 * where mixture_k is pair k's Gumbel-softmax mixture over its loop orders
 * and keeps, scored by its own log EDP (param.c), penalty_k its
 * capacity, fanout and divisibility penalties, and w_k = E_k / E + C_k / C
 * the weight the pair's energy and cycles have in the network's log EDP
 * (values, not differentiated): without it every pair's penalties would
 * weigh as much as the whole network's cost, and a layer's mapping would
 * follow its penalties rather than its cost.
 *
 * A descent rounds every pair's mapping (param.c) and the fusion
 * variables (df_net_round), and the fusion evaluator prices that plan
 * exactly with those mappings (its member_mapping hook reads the
 * worker's table); groups that come out invalid are split and priced
 * again.  Descents run in parallel, one per worker (its own evaluator,
 * network and tape), from streams (seed, descent), DESCENTS_PER_CHUNK at
 * a time, merged in descent order: the same seed gives the same result
 * whatever the thread count.  Between chunks the descents pool, per pair,
 * the best rounded mapping any of them found (by the pair's own EDP): a
 * later descent prices its plans with it where it beats its own rounding.
 */
#include "diff_private.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define TAPE_NODES (1 << 20)
#define ROUNDINGS 3
#define REPAIR_ROUNDS 3
/* Descents run between two merges of their results, whatever the thread
 * count (so that the result does not depend on it). */
#define DESCENTS_PER_CHUNK 4
/* A joint descent starts each pair's variables this far (log units) around
 * the pair's pooled best mapping. */
#define START_JITTER 0.3
/* Descents per pair in the warm-up (one is often far from the best of
 * a few: a depthwise layer's rounding), and their streams: (seed,
 * WARM_STREAM + pair x WARM_DESCENTS + descent). */
#define WARM_DESCENTS 4
#define WARM_STREAM (UINT64_C(1) << 40)

/* A pair's rounded mapping, as the evaluator's hook hands it out. */
typedef struct pair_mapping {
    bool found;
    map_mapping mapping;
    map_eval eval;
} pair_mapping;

/* One descent's state, one per thread. */
typedef struct worker {
    df_fuse_search *s;
    fu_evaluator *e;
    df_net *net;
    df_tape tape;
    pair_mapping *table; /* per pair: what the hook answers */
    double *x, *g, *grad, *m1, *m2;
    df_var *xv;
    int *pick;          /* per pair, MAX_CHOICES options */
    df_var *phi;        /* per fusion variable, on the tape */
    double *phi_values; /* per fusion variable, for rounding */
    /* filled by pair_cost during one step */
    double tau_g;
    df_var *penalty, *mixture; /* per pair, on the tape */
    double *energy, *cycles;   /* per pair: its relaxed energy and cycles (0: not priced) */
    bool *fused;
} worker;

struct df_fuse_search {
    df_options o;
    const wl_graph *g;
    arch_spec a;
    fu_cost_options co;
    int threads;
    worker *w;
    int32_t n_pairs, n_fusion;
    df_layer *layers; /* per pair */
    int *offset;      /* per pair: its first variable; offset[n_pairs]: the fusion logits */
    int n_vars;
    double started;
    int64_t descents;
    bool ended, found;
    /* Per pair, the best rounded mapping of all descents merged so far
     * (by its own EDP): a descent prices its plans with it where it beats
     * its own rounding, so that descents pool what each found for a layer
     * or tile; candidate[i * n_pairs + k] is descent i's of a chunk. */
    pair_mapping *elite, *candidate;
    bool warm; /* the pool holds the warm-up's mappings */
    bool *best_fused;
    fu_plan_cost best_cost;
    as_curve curve; /* (seconds, EDP) pairs */
};

/* The evaluator's member_mapping hook: the worker's rounded mapping of
 * the pair (op, p). */
static bool member_mapping(void *user, int32_t op, const wl_problem *p, map_problem_outcome *out)
{
    worker *w = user;
    int32_t k = df_net_find_problem(w->net, op, p);
    if (k < 0)
        return false;
    memset(out, 0, sizeof *out);
    out->found = w->table[k].found;
    out->mapping = w->table[k].mapping;
    out->eval = w->table[k].eval;
    out->mapped = *p;
    out->searched = true;
    return true;
}

/* The relaxed cost of pair k's mapping variables (df_net_mapping_cost),
 * adding its penalty and, on its turn, its mixture to the worker's. */
static bool pair_cost(void *user, df_tape *t, int32_t k, int32_t op, const wl_problem *p,
                      df_cost *out)
{
    (void)op;
    worker *w = user;
    const df_fuse_search *s = w->s;
    const df_layer *L = &s->layers[k];
    const double *x = w->x + s->offset[k];
    const df_var *xv = w->xv + s->offset[k];
    const int *pick = w->pick + (size_t)k * MAX_CHOICES;
    df_factors f;
    map_mapping sk;
    if (!df_layer_factors(t, L, xv, p, &f))
        return false;
    df_layer_skeleton(L, x, pick, &sk);
    df_relaxed_cost(t, &L->space.arch, p, &sk, &f, out);
    if (!out->supported || !(df_value(t, out->edp) > 0))
        return false;
    w->penalty[k] = df_layer_penalty(t, L, xv, p, &f, out);
    w->mixture[k] = df_layer_mixture(t, L, p, x, xv, w->g + s->offset[k], w->tau_g, pick, &sk, &f,
                                     df_log(t, out->edp));
    w->energy[k] = df_value(t, out->energy_pJ);
    w->cycles[k] = df_value(t, out->cycles);
    return true;
}

/* The loss at the worker's x and noise g, its gradient into grad; false
 * when it could not be computed (a pair not priced). */
static bool loss_and_gradient(worker *w, double tau, double tau_g, double lambda)
{
    const df_fuse_search *s = w->s;
    df_tape *t = &w->tape;
    for (;;) {
        df_tape_reset(t);
        t->temperature = tau;
        w->tau_g = tau_g;
        for (int i = 0; i < s->n_vars; i++)
            w->xv[i] = df_const(t, w->x[i]);
        for (int32_t k = 0; k < s->n_pairs; k++)
            df_layer_sample(&s->layers[k], w->x + s->offset[k], w->g + s->offset[k],
                            w->pick + (size_t)k * MAX_CHOICES);
        for (int v = 0; v < s->n_fusion; v++) { /* sigmoid */
            df_var z = w->xv[s->offset[s->n_pairs] + v];
            w->phi[v] = df_div(t, df_const(t, 1), df_add_c(t, df_exp(t, df_neg(t, z)), 1));
        }
        memset(w->energy, 0, sizeof(double) * (size_t)s->n_pairs);
        memset(w->cycles, 0, sizeof(double) * (size_t)s->n_pairs);
        df_net_cost c;
        df_net_relaxed_cost(w->net, t, w->phi, pair_cost, w, &c);
        if (t->full) { /* grow and run the step again */
            if (df_tape_reserve(t, 2 * t->capacity, NULL) != AS_OK)
                return false;
            continue;
        }
        if (!c.supported)
            return false;
        df_var loss = df_add(t, df_log(t, c.energy_pJ), df_log(t, c.cycles));
        loss = df_add(t, loss, df_mul_c(t, c.infeasible, lambda));
        /* A pair's mixture and penalties weigh what the pair weighs in
         * the network's log EDP, as its cost's gradient does. */
        double energy = df_value(t, c.energy_pJ), cycles = df_value(t, c.cycles);
        for (int32_t k = 0; k < s->n_pairs; k++) {
            if (!(w->energy[k] > 0))
                continue;
            double weight = w->energy[k] / energy + w->cycles[k] / cycles;
            df_var own = df_add(t, w->mixture[k], df_mul_c(t, w->penalty[k], lambda));
            loss = df_add(t, loss, df_mul_c(t, own, weight));
        }
        if (t->full || !isfinite(df_value(t, loss)))
            return false;
        df_backward(t, loss);
        for (int i = 0; i < s->n_vars; i++)
            w->grad[i] = t->adjoint[w->xv[i]];
        return true;
    }
}

/* Round the worker's x to mappings and a plan and price it exactly into
 * *cost (valid or not); groups priced invalid are split and the plan
 * priced again. */
static bool beats(const pair_mapping *x, const pair_mapping *y)
{
    return x->found && (!y->found || x->eval.edp_J_cycle < y->eval.edp_J_cycle);
}

static as_code round_and_price(worker *w, pair_mapping *candidate, fu_plan_cost *cost,
                               as_status *st)
{
    const df_fuse_search *s = w->s;
    for (int32_t k = 0; k < s->n_pairs; k++) {
        pair_mapping *pm = &w->table[k];
        pm->found = df_layer_round(&s->layers[k], &df_net_problem_at(w->net, k)->problem,
                                   w->x + s->offset[k], &pm->mapping, &pm->eval);
        if (beats(pm, &candidate[k]))
            candidate[k] = *pm;
        if (beats(&s->elite[k], pm))
            *pm = s->elite[k];
    }
    for (int v = 0; v < s->n_fusion; v++)
        w->phi_values[v] = 1 / (1 + exp(-w->x[s->offset[s->n_pairs] + v]));
    df_net_round(w->net, w->phi_values, w->fused);
    for (int round = 0;; round++) {
        as_code code = df_net_exact_cost(w->net, w->fused, cost, st);
        if (code != AS_OK || cost->valid || round == REPAIR_ROUNDS)
            return code;
        fu_plan plan;
        code = df_net_plan(w->net, w->fused, &plan, st);
        if (code != AS_OK)
            return code;
        bool changed = false;
        for (int v = 0; v < s->n_fusion; v++) {
            int32_t before, after;
            df_net_var_ops(w->net, v, &before, &after);
            int32_t gid = plan.group[before];
            if (w->fused[v] && gid >= 0 && gid < cost->n_groups && !cost->groups[gid].valid) {
                w->fused[v] = false;
                changed = true;
            }
        }
        fu_plan_free(&plan);
        if (!changed)
            return AS_OK;
        fu_plan_cost_free(cost);
    }
}

static bool stop_now(const df_fuse_search *s)
{
    return (s->o.stop_flag && *s->o.stop_flag) ||
           (s->o.time_limit_seconds > 0 && omp_get_wtime() - s->started >= s->o.time_limit_seconds);
}

/* One descent from stream r: the best exactly priced valid design seen
 * into *best and best_fused (false: none). */
static bool descend(worker *w, as_rng *r, pair_mapping *candidate, fu_plan_cost *best,
                    bool *best_fused)
{
    const df_fuse_search *s = w->s;
    bool found = false;
    memset(w->m1, 0, sizeof(double) * (size_t)s->n_vars);
    memset(w->m2, 0, sizeof(double) * (size_t)s->n_vars);
    for (int32_t k = 0; k < s->n_pairs; k++)
        if (s->elite[k].found)
            df_layer_start_at(&s->layers[k], &s->elite[k].mapping, r, START_JITTER,
                              w->x + s->offset[k]);
        else
            df_layer_random_start(&s->layers[k], r, w->x + s->offset[k]);
    for (int v = 0; v < s->n_fusion; v++)
        w->x[s->offset[s->n_pairs] + v] = 2 * as_rng_unit(r) - 1;
    int steps = s->o.adam_steps > 0 ? s->o.adam_steps : 1;
    for (int step = 1; step <= steps; step++) {
        bool last = step == steps || stop_now(s);
        double tau, tau_g, lambda;
        df_schedule((double)(step - 1) / (double)(steps > 1 ? steps - 1 : 1), &tau, &tau_g,
                    &lambda);
        df_gumbel(r, w->g, s->n_vars);
        if (loss_and_gradient(w, tau, tau_g, lambda))
            df_adam(w->x, w->grad, w->m1, w->m2, s->n_vars, step, s->o.learning_rate);
        if (last || step % ((steps + ROUNDINGS - 1) / ROUNDINGS) == 0) {
            fu_plan_cost cost = {0};
            as_status st;
            as_status_clear(&st);
            if (round_and_price(w, candidate, &cost, &st) == AS_OK && cost.valid &&
                (!found || cost.edp_J_cycle < best->edp_J_cycle)) {
                fu_plan_cost_free(best);
                *best = cost;
                memcpy(best_fused, w->fused, sizeof(bool) * (size_t)s->n_fusion);
                found = true;
            } else {
                fu_plan_cost_free(&cost);
            }
        }
        if (last)
            break;
    }
    return found;
}

/* ---------------------------------------------------------------- search */

static void worker_free(worker *w)
{
    df_net_free(w->net);
    fu_evaluator_free(w->e);
    df_tape_free(&w->tape);
    free(w->table);
    free(w->x);
    free(w->g);
    free(w->grad);
    free(w->m1);
    free(w->m2);
    free(w->xv);
    free(w->pick);
    free(w->phi);
    free(w->phi_values);
    free(w->penalty);
    free(w->mixture);
    free(w->energy);
    free(w->cycles);
    free(w->fused);
}

/* A worker's evaluator (its hook reading the worker's table) and network. */
static as_code worker_init(df_fuse_search *s, worker *w, as_status *st)
{
    w->s = s;
    fu_cost_options co = s->co;
    co.member_mapping = member_mapping;
    co.member_mapping_user = w;
    as_code code = fu_evaluator_new(&w->e, s->g, &s->a, &co, st);
    if (code == AS_OK)
        code = df_net_init(&w->net, w->e, s->o.max_group_ops, st);
    if (code == AS_OK)
        code = df_tape_init(&w->tape, TAPE_NODES, st);
    return code;
}

/* The worker's arrays, once the variables are counted. */
static as_code worker_arrays(df_fuse_search *s, worker *w, as_status *st)
{
    size_t n = (size_t)(s->n_vars > 0 ? s->n_vars : 1);
    w->table = calloc((size_t)(s->n_pairs > 0 ? s->n_pairs : 1), sizeof *w->table);
    w->x = calloc(n, sizeof *w->x);
    w->g = calloc(n, sizeof *w->g);
    w->grad = calloc(n, sizeof *w->grad);
    w->m1 = calloc(n, sizeof *w->m1);
    w->m2 = calloc(n, sizeof *w->m2);
    w->xv = calloc(n, sizeof *w->xv);
    w->pick = calloc((size_t)(s->n_pairs > 0 ? s->n_pairs : 1) * MAX_CHOICES, sizeof *w->pick);
    size_t fusion = (size_t)(s->n_fusion > 0 ? s->n_fusion : 1);
    size_t pairs = (size_t)(s->n_pairs > 0 ? s->n_pairs : 1);
    w->penalty = calloc(pairs, sizeof *w->penalty);
    w->mixture = calloc(pairs, sizeof *w->mixture);
    w->energy = calloc(pairs, sizeof *w->energy);
    w->cycles = calloc(pairs, sizeof *w->cycles);
    w->fused = calloc(fusion, sizeof *w->fused);
    w->phi = calloc(fusion, sizeof *w->phi);
    w->phi_values = calloc(fusion, sizeof *w->phi_values);
    if (!w->table || !w->x || !w->g || !w->grad || !w->m1 || !w->m2 || !w->xv || !w->pick ||
        !w->fused || !w->phi || !w->phi_values || !w->penalty || !w->mixture || !w->energy ||
        !w->cycles)
        return as_fail(st, AS_ENOMEM, "out of memory for FADiff's %d variables", s->n_vars);
    return AS_OK;
}

/* One space per pair, on the architecture the evaluator maps on. */
static as_code pair_spaces(df_fuse_search *s, as_status *st)
{
    const df_net *net = s->w[0].net;
    s->n_pairs = df_net_n_problems(net);
    s->n_fusion = df_net_n_vars(net);
    s->layers = calloc((size_t)(s->n_pairs > 0 ? s->n_pairs : 1), sizeof *s->layers);
    s->offset = calloc((size_t)s->n_pairs + 1, sizeof *s->offset);
    if (!s->layers || !s->offset)
        return as_fail(st, AS_ENOMEM, "out of memory for %d FADiff problems", s->n_pairs);
    const arch_spec *a = fu_evaluator_arch(s->w[0].e);
    for (int32_t k = 0; k < s->n_pairs; k++) {
        s->offset[k] = s->n_vars;
        as_code code = df_layer_init(&s->layers[k], a, &df_net_problem_at(net, k)->problem, st);
        if (code != AS_OK)
            return code;
        s->n_vars += s->layers[k].n_vars;
    }
    s->offset[s->n_pairs] = s->n_vars;
    s->n_vars += s->n_fusion;
    return AS_OK;
}

as_code df_fuse_search_init(df_fuse_search **out, const wl_graph *g, const arch_spec *a,
                            const fu_cost_options *co, const df_options *o, as_status *st)
{
    *out = NULL;
    df_fuse_search *s = calloc(1, sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "out of memory for a FADiff search");
    s->g = g;
    s->a = *a;
    if (co)
        s->co = *co;
    else
        fu_cost_options_default(&s->co);
    if (o)
        s->o = *o;
    else
        df_options_default(&s->o);
    s->threads = s->o.threads > 0 ? s->o.threads : omp_get_max_threads();
    as_code code = AS_OK;
    if (!(s->w = calloc((size_t)s->threads, sizeof *s->w)))
        code = as_fail(st, AS_ENOMEM, "out of memory for FADiff's workers");
    for (int i = 0; code == AS_OK && i < s->threads; i++)
        code = worker_init(s, &s->w[i], st);
    if (code == AS_OK)
        code = pair_spaces(s, st);
    for (int i = 0; code == AS_OK && i < s->threads; i++)
        code = worker_arrays(s, &s->w[i], st);
    if (code == AS_OK && (!(s->best_fused = calloc((size_t)s->n_fusion + 1, sizeof(bool))) ||
                          !(s->elite = calloc((size_t)s->n_pairs + 1, sizeof *s->elite)) ||
                          !(s->candidate = calloc(((size_t)s->n_pairs + 1) * DESCENTS_PER_CHUNK,
                                                  sizeof *s->candidate))))
        code = as_fail(st, AS_ENOMEM, "out of memory for FADiff's plan");
    if (code != AS_OK) {
        df_fuse_search_free(s);
        return code;
    }
    s->started = omp_get_wtime();
    *out = s;
    return AS_OK;
}

static void note_best(df_fuse_search *s, fu_plan_cost *cost, const bool *fused)
{
    fu_plan_cost_free(&s->best_cost);
    s->best_cost = *cost;
    memset(cost, 0, sizeof *cost);
    memcpy(s->best_fused, fused, sizeof(bool) * (size_t)s->n_fusion);
    s->found = true;
    df_curve_note(&s->curve, s->started, s->best_cost.edp_J_cycle);
}

/*
 * Before the first joint descent: WARM_DESCENTS descents of each pair on
 * its own relaxed loss (df_layer_descend, as df_map_search runs them), pairs in
 * parallel, into the pool.  Layer by layer is where the joint descents
 * start: each then moves the fusion and every mapping together from
 * there, rather than from mappings no better than random.
 */
static void warm_up(df_fuse_search *s)
{
#pragma omp parallel for num_threads(s->threads) schedule(dynamic, 1)
    for (int32_t k = 0; k < s->n_pairs; k++) {
        worker *w = &s->w[omp_get_thread_num()];
        pair_mapping *pm = &s->elite[k], tried;
        for (int d = 0; d < WARM_DESCENTS && !stop_now(s); d++) {
            as_rng r = as_rng_stream(s->o.seed, WARM_STREAM + (uint64_t)k * WARM_DESCENTS + d,
                                     AS_RNG_ADVANCED_ONCE);
            tried.found =
                df_layer_descend(&w->tape, &s->layers[k], &df_net_problem_at(w->net, k)->problem,
                                 &s->o, &r, &tried.mapping, &tried.eval);
            if (beats(&tried, pm))
                *pm = tried;
        }
    }
    s->warm = true;
    /* Its mappings layer by layer are the first design: an answer from
     * the warm-up alone, which the joint descents must beat. */
    worker *w = &s->w[0];
    memcpy(w->table, s->elite, sizeof *w->table * (size_t)s->n_pairs);
    memset(w->fused, 0, sizeof *w->fused * (size_t)(s->n_fusion > 0 ? s->n_fusion : 1));
    fu_plan_cost cost = {0};
    as_status st;
    if (df_net_exact_cost(w->net, w->fused, &cost, &st) == AS_OK && cost.valid)
        note_best(s, &cost, w->fused);
    fu_plan_cost_free(&cost);
}

bool df_fuse_search_step(df_fuse_search *s, int64_t descents)
{
    if (!s->warm && descents > 0 && !stop_now(s))
        warm_up(s);
    enum { CHUNK = DESCENTS_PER_CHUNK };
    size_t pairs = (size_t)s->n_pairs;
    while (!s->ended && descents > 0) {
        if (stop_now(s)) {
            s->ended = true;
            break;
        }
        int n = descents < CHUNK ? (int)descents : CHUNK;
        fu_plan_cost cost[CHUNK];
        bool *fused[CHUNK], found[CHUNK];
        memset(cost, 0, sizeof cost);
        memset(s->candidate, 0, sizeof *s->candidate * pairs * CHUNK);
        for (int i = 0; i < n; i++)
            fused[i] = calloc((size_t)s->n_fusion + 1, sizeof(bool));
#pragma omp parallel for num_threads(s->threads) schedule(static, 1)
        for (int i = 0; i < n; i++) {
            as_rng r = as_rng_stream(s->o.seed, (uint64_t)(s->descents + i), AS_RNG_ADVANCED_ONCE);
            found[i] = fused[i] && descend(&s->w[omp_get_thread_num()], &r,
                                           s->candidate + (size_t)i * pairs, &cost[i], fused[i]);
        }
        for (int i = 0; i < n; i++) {
            if (found[i] && (!s->found || cost[i].edp_J_cycle < s->best_cost.edp_J_cycle))
                note_best(s, &cost[i], fused[i]);
            for (size_t k = 0; k < pairs; k++)
                if (beats(&s->candidate[(size_t)i * pairs + k], &s->elite[k]))
                    s->elite[k] = s->candidate[(size_t)i * pairs + k];
            fu_plan_cost_free(&cost[i]);
            free(fused[i]);
        }
        s->descents += n;
        descents -= n;
    }
    return !s->ended;
}

as_code df_fuse_search_best(const df_fuse_search *s, fu_plan *plan, fu_plan_cost *cost,
                            as_status *st)
{
    memset(plan, 0, sizeof *plan);
    memset(cost, 0, sizeof *cost);
    if (!s->found)
        return as_fail(st, AS_EINVAL, "FADiff found no valid design in %lld descents",
                       (long long)s->descents);
    as_code code = df_net_plan(s->w[0].net, s->best_fused, plan, st);
    if (code == AS_OK)
        code = fu_plan_cost_copy(cost, &s->best_cost, st);
    return code;
}

int64_t df_fuse_search_descents(const df_fuse_search *s)
{
    return s->descents;
}

const double *df_fuse_search_curve(const df_fuse_search *s, int *n_points)
{
    *n_points = s->curve.n / 2;
    return s->curve.points;
}

void df_fuse_search_free(df_fuse_search *s)
{
    if (!s)
        return;
    for (int i = 0; s->w && i < s->threads; i++)
        worker_free(&s->w[i]);
    free(s->w);
    free(s->layers);
    free(s->offset);
    free(s->best_fused);
    free(s->elite);
    free(s->candidate);
    fu_plan_cost_free(&s->best_cost);
    as_curve_free(&s->curve);
    free(s);
}
