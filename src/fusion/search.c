/*
 * search.c -- the fusion searches' common part: options, the objective,
 * the incumbent (best plan so far) and the anytime curve, and a dispatch
 * to the algorithms (ga.c, dp.c, and FAST's ILP in ilp.c).
 *
 * Every search first scores the layer-by-layer plan, so that it always has
 * a best plan, then lets its algorithm run.  Plans are kept canonical
 * (fu_plan_canonicalize): equal partitions are equal arrays, and the best
 * plan for a seed is the same array whatever the thread count.
 */
#include "fusion_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GA_DEFAULT_BUDGET 2000 /* plans */
#define GA_DEFAULT_POPULATION 32

/* ------------------------------------------------------------- objective */

fu_coords fu_objective_coords(fu_objective obj, double energy_pJ, double onchip_energy_pJ,
                              double dram_energy_pJ, int64_t cycles)
{
    double y = (double)cycles;
    switch (obj) {
    case FU_OBJ_CASCO:
        return (fu_coords){(onchip_energy_pJ + dram_energy_pJ) * 1e-12, y};
    case FU_OBJ_EDP:
        return (fu_coords){energy_pJ * 1e-12, y};
    case FU_OBJ_ENERGY:
        return (fu_coords){energy_pJ * 1e-12, 0};
    case FU_OBJ_CYCLES:
        break;
    }
    return (fu_coords){0, y};
}

double fu_objective_of(fu_objective obj, fu_coords c)
{
    return obj == FU_OBJ_CASCO || obj == FU_OBJ_EDP ? c.x * c.y : c.x + c.y;
}

int32_t fu_working_ops(const wl_graph *g, int32_t *ops)
{
    int32_t n = 0;
    for (int32_t i = 0; i < g->n_order; i++)
        if (fu_op_in_plan(g, g->order[i]))
            ops[n++] = g->order[i];
    return n;
}

as_code fu_plan_value(fu_evaluator *e, fu_objective obj, const fu_plan *p, double *value,
                      fu_plan_cost *c, as_status *st)
{
    memset(c, 0, sizeof *c);
    as_code rc = fu_plan_evaluate(e, p, c, st);
    if (rc == AS_OK)
        *value =
            c->valid
                ? fu_objective_of(obj, fu_objective_coords(obj, c->energy_pJ, c->onchip_energy_pJ,
                                                           c->dram_energy_pJ, c->cycles))
                : INFINITY;
    return rc;
}

as_code fu_incumbent_offer(fu_incumbent *inc, const fu_plan *p, double value, fu_plan_cost *cost,
                           as_status *st)
{
    if (inc->found && !(value < inc->value)) {
        fu_plan_cost_free(cost);
        return AS_OK;
    }
    fu_plan copy;
    as_code rc = fu_plan_copy(&copy, p, st);
    if (rc != AS_OK) {
        fu_plan_cost_free(cost);
        return rc;
    }
    fu_plan_free(&inc->plan);
    fu_plan_cost_free(&inc->cost);
    inc->plan = copy;
    inc->cost = *cost;
    memset(cost, 0, sizeof *cost);
    inc->value = value;
    inc->found = true;
    return AS_OK;
}

/* ------------------------------------------------------------------- ILP */

/* FAST's ILP is one solve (ilp.c); its state is what the solve needs. */
typedef struct ilp_state {
    fu_evaluator *e;
    fu_search_options opt;
} ilp_state;

/* Remember e and the options for the one solve ilp_step makes. */
static as_code ilp_new(void **state, fu_evaluator *e, const fu_search_options *o, as_status *st)
{
    ilp_state *s = calloc(1, sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "fusion search: out of memory");
    s->e = e;
    s->opt = *o;
    *state = s;
    return AS_OK;
}

/* Solve once, whatever the budget (CBC's own limit is the option's time
 * limit), score the plan as one evaluation and end. */
static bool ilp_step(void *state, fu_incumbent *inc, int64_t budget, as_status *st)
{
    (void)budget;
    ilp_state *s = state;
    fu_plan plan;
    memset(&plan, 0, sizeof plan);
    double value;
    fu_plan_cost cost;
    if (fu_ilp_solve(s->e, &s->opt, &plan, st) == AS_OK &&
        fu_plan_value(s->e, s->opt.objective, &plan, &value, &cost, st) == AS_OK) {
        inc->evaluated++;
        fu_incumbent_offer(inc, &plan, value, &cost, st);
    }
    fu_plan_free(&plan);
    return false;
}

/* The state holds no resources of its own (e belongs to the caller). */
static void ilp_free(void *state)
{
    free(state);
}

/* ------------------------------------------------------------- dispatch */

typedef struct algorithm {
    as_code (*create)(void **state, fu_evaluator *e, const fu_search_options *o, as_status *st);
    bool (*step)(void *state, fu_incumbent *inc, int64_t budget, as_status *st);
    void (*destroy)(void *state);
    /* Score the plans the algorithm keeps again (NULL: it keeps none). */
    as_code (*rescore)(void *state, fu_incumbent *inc, as_status *st);
} algorithm;

/* By fu_algorithm; FU_ALGO_NONE has none (the baseline is the answer). */
static const algorithm algorithms[] = {
    [FU_ALGO_GA] = {fu_ga_new, fu_ga_step, fu_ga_free, fu_ga_rescore},
    [FU_ALGO_DP] = {fu_dp_new, fu_dp_step, fu_dp_free, NULL},
    [FU_ALGO_ILP] = {ilp_new, ilp_step, ilp_free, NULL},
};

struct fu_search {
    fu_evaluator *e;
    fu_search_options opt;
    const algorithm *algo; /* NULL for FU_ALGO_NONE */
    void *state;
    fu_incumbent best;
    bool ended;
    as_status status; /* why the algorithm stopped early, when an error stopped it */
    as_curve curve;   /* best value after each step */
};

void fu_search_options_default(fu_search_options *o)
{
    memset(o, 0, sizeof *o);
    o->algorithm = FU_ALGO_GA;
    o->objective = FU_OBJ_CASCO;
    o->seed = 1;
    o->threads = 1;
    o->budget = GA_DEFAULT_BUDGET;
    o->population = GA_DEFAULT_POPULATION;
    o->time_limit_seconds = 60;
}

/* Options a search can run with; names the offending field. */
static as_code check_options(const fu_search_options *o, as_status *st)
{
    if ((unsigned)o->algorithm > FU_ALGO_ILP)
        return as_fail(st, AS_EINVAL, "fusion search: unknown algorithm %d", (int)o->algorithm);
    if ((unsigned)o->objective > FU_OBJ_CYCLES)
        return as_fail(st, AS_EINVAL, "fusion search: unknown objective %d", (int)o->objective);
    if (o->threads < 0 || o->budget < 0 || o->population < 0 || !(o->time_limit_seconds >= 0))
        return as_fail(st, AS_EINVAL,
                       "fusion search: negative threads, budget, population or time limit");
    return AS_OK;
}

/* Append the best value so far to the anytime curve (skipped, not fatal,
 * when memory runs out). */
static void record_curve(fu_search *s)
{
    as_curve_push(&s->curve, s->best.found ? s->best.value : INFINITY);
}

/* Score the layer-by-layer plan: the incumbent every search starts from. */
static as_code offer_baseline(fu_search *s, as_status *st)
{
    fu_plan plan;
    double value;
    as_code rc = fu_plan_init(&plan, fu_evaluator_graph(s->e), st);
    if (rc != AS_OK)
        return rc;
    fu_plan_cost cost;
    rc = fu_plan_value(s->e, s->opt.objective, &plan, &value, &cost, st);
    if (rc == AS_OK) {
        s->best.evaluated++;
        rc = fu_incumbent_offer(&s->best, &plan, value, &cost, st);
    } else {
        fu_plan_cost_free(&cost);
    }
    fu_plan_free(&plan);
    return rc;
}

as_code fu_search_init(fu_search **out, fu_evaluator *e, const fu_search_options *o, as_status *st)
{
    *out = NULL;
    as_code rc = check_options(o, st);
    if (rc != AS_OK)
        return rc;
    fu_search *s = calloc(1, sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "fusion search: out of memory");
    s->e = e;
    s->opt = *o;
    if (s->opt.budget == 0)
        s->opt.budget = GA_DEFAULT_BUDGET;
    if (s->opt.population == 0)
        s->opt.population = GA_DEFAULT_POPULATION;
    if (o->algorithm != FU_ALGO_NONE)
        s->algo = &algorithms[o->algorithm];
    rc = offer_baseline(s, st);
    if (rc == AS_OK && s->algo)
        rc = s->algo->create(&s->state, e, &s->opt, st);
    if (rc != AS_OK) {
        fu_search_free(s);
        return rc;
    }
    s->ended = !s->algo;
    *out = s;
    return AS_OK;
}

bool fu_search_step(fu_search *s, int64_t budget)
{
    if (!s->ended && budget > 0)
        s->ended = !s->algo->step(s->state, &s->best, budget, &s->status);
    record_curve(s);
    return !s->ended;
}

as_code fu_search_rescore(fu_search *s, as_status *st)
{
    if (s->status.code != AS_OK)
        return as_fail(st, s->status.code, "%s", s->status.message);
    fu_plan_cost cost;
    double value;
    as_code rc = fu_plan_value(s->e, s->opt.objective, &s->best.plan, &value, &cost, st);
    if (rc != AS_OK) {
        fu_plan_cost_free(&cost);
        return rc;
    }
    fu_plan_cost_free(&s->best.cost);
    s->best.cost = cost;
    s->best.value = value;
    return s->state && s->algo->rescore ? s->algo->rescore(s->state, &s->best, st) : AS_OK;
}

as_code fu_search_best(const fu_search *s, fu_plan *plan, fu_plan_cost *cost, as_status *st)
{
    if (s->status.code != AS_OK)
        return as_fail(st, s->status.code, "%s", s->status.message);
    as_code rc = fu_plan_copy(plan, &s->best.plan, st);
    if (rc != AS_OK)
        return rc;
    rc = fu_plan_cost_copy(cost, &s->best.cost, st);
    if (rc != AS_OK)
        fu_plan_free(plan);
    return rc;
}

int64_t fu_search_evaluated(const fu_search *s)
{
    return s->best.evaluated;
}

const double *fu_search_curve(const fu_search *s, int *n_points)
{
    *n_points = s->curve.n;
    return s->curve.points;
}

void fu_search_free(fu_search *s)
{
    if (!s)
        return;
    if (s->state)
        s->algo->destroy(s->state);
    fu_plan_free(&s->best.plan);
    fu_plan_cost_free(&s->best.cost);
    as_curve_free(&s->curve);
    free(s);
}
