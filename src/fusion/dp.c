/*
 * dp.c -- Optimus-style dynamic programming over fusion plans: the exact
 * optimum among the plans whose groups are contiguous runs of the
 * topological order of the working ops, each run at most DP_MAX_RUN ops.
 *
 * The rule.  Cut points may fall between any two neighbours of the order:
 * a contiguous run of a topological order is always convex (a path that
 * leaves the run and comes back would pass an op ordered between two of
 * its members, i.e. inside it), so the only runs left out are those that
 * are not connected by data (two independent branches side by side in the
 * order), which fu_plan_valid rejects.  On a chain this is every valid
 * plan with groups of at most DP_MAX_RUN ops; on a branching graph, plans
 * whose groups interleave with others in the order (a branch fused while
 * a sibling branch runs alone between its members) are outside the space.
 *
 * Exactness.  A plan's energy and cycles are sums over its groups, and
 * every objective is increasing in the two coordinates of
 * fu_objective_coords (a sum, or the product of two non-negative sums).
 * So the DP keeps, at each cut point, the Pareto front of (x, y) over the
 * plans of the prefix, each point with a back pointer; no dominated prefix
 * can start an optimal plan.  The front of a cut point is capped at
 * DP_MAX_FRONT points (the points with the worst objective go first), so
 * the result is exact whenever the cap is not reached; fronts peaked at 17
 * points on VGG-16 and at 468 on MobileNetV2 (eyeriss and gemmini).
 *
 * Anytime.  Each step scores up to `budget` candidate runs (one
 * fu_group_evaluate each, the evaluator caching the mapping of tile
 * problems); the plan is offered when the last cut point is done.
 */
#include "fusion_private.h"

#include <stdlib.h>

#define DP_MAX_RUN 8
#define DP_MAX_FRONT 1024

/* A point of a front: a prefix plan's coordinates and where its last run
 * starts (the front and point of the prefix before it). */
typedef struct point {
    fu_coords c;
    int32_t from_cut, from_point;
} point;

/* The Pareto front of a cut point: no point dominates another. */
typedef struct front {
    point *p;
    int32_t n;
    int64_t cap;
} front;

typedef struct fu_dp {
    fu_evaluator *e;
    const wl_graph *g;
    fu_objective objective;
    int32_t n_work;
    int32_t *work; /* working ops in topological order */
    front *fronts; /* per cut point 0 .. n_work (cut k: before work[k]) */
    int32_t cut;   /* the cut point being reached */
    int32_t run;   /* the length of the next run to try ending there */
    fu_plan probe; /* the layer-by-layer plan, one run merged while checking it */
} fu_dp;

/* Add c (reached from front from_cut, point from_point) to f unless a point
 * of f dominates it; drop the points it dominates.  False when out of
 * memory. */
static bool front_add(front *f, fu_objective obj, fu_coords c, int32_t from_cut, int32_t from_point)
{
    int32_t kept = 0;
    for (int32_t i = 0; i < f->n; i++) {
        fu_coords o = f->p[i].c;
        if (o.x <= c.x && o.y <= c.y)
            return true;
        if (!(c.x <= o.x && c.y <= o.y))
            f->p[kept++] = f->p[i];
    }
    f->n = kept;
    if (!as_vec_reserve(&f->p, &f->cap, f->n + 1, sizeof *f->p))
        return false;
    f->p[f->n++] = (point){c, from_cut, from_point};
    if (f->n > DP_MAX_FRONT) { /* drop the worst point by objective */
        int32_t worst = 0;
        for (int32_t i = 1; i < f->n; i++)
            if (fu_objective_of(obj, f->p[i].c) > fu_objective_of(obj, f->p[worst].c))
                worst = i;
        f->p[worst] = f->p[--f->n];
    }
    return true;
}

/* Give the probe plan the groups of the layer-by-layer plan with the run
 * work[first .. first + n) merged, numbered canonically: op work[k] gets
 * k before the run, first inside it, k - n + 1 after it (n = 1 restores
 * the layer-by-layer plan). */
static void probe_run(fu_dp *dp, int32_t first, int32_t n)
{
    for (int32_t k = 0; k < dp->n_work; k++)
        dp->probe.group[dp->work[k]] = k < first ? k : k < first + n ? first : k - n + 1;
    dp->probe.n_groups = dp->n_work - n + 1;
}

/* Whether the run work[first .. first + n) is a valid group: connected by
 * data (convex by construction, see the top of the file). */
static bool run_valid(fu_dp *dp, int32_t first, int32_t n)
{
    if (n == 1)
        return true;
    char reason[160];
    probe_run(dp, first, n);
    bool valid = fu_plan_valid(dp->g, &dp->probe, reason, sizeof reason);
    probe_run(dp, 0, 1);
    return valid;
}

/* Score the run of dp->run ops that ends at dp->cut and extend the front
 * there from the front where the run starts. */
static as_code try_run(fu_dp *dp, as_status *st)
{
    int32_t first = dp->cut - dp->run;
    const front *from = &dp->fronts[first];
    if (from->n == 0 || !run_valid(dp, first, dp->run))
        return AS_OK;
    fu_group_cost cost;
    as_code rc = fu_group_evaluate(dp->e, dp->work + first, dp->run, &cost, st);
    if (rc != AS_OK || !cost.valid)
        return rc;
    fu_coords c = fu_objective_coords(dp->objective, cost.energy_pJ, cost.onchip_energy_pJ,
                                      cost.dram_energy_pJ, cost.cycles);
    for (int32_t i = 0; i < from->n; i++) {
        fu_coords sum = {from->p[i].c.x + c.x, from->p[i].c.y + c.y};
        if (!front_add(&dp->fronts[dp->cut], dp->objective, sum, first, i))
            return as_fail(st, AS_ENOMEM, "fusion DP: out of memory");
    }
    return AS_OK;
}

/* The plan of the best point of the last front, offered to inc.  Builds
 * it in dp->probe, which the ended search no longer needs. */
static as_code offer_best(fu_dp *dp, fu_incumbent *inc, as_status *st)
{
    const front *last = &dp->fronts[dp->n_work];
    if (last->n == 0)
        return AS_OK; /* no run of some op could be costed: nothing better than the baseline */
    int32_t best = 0;
    for (int32_t i = 1; i < last->n; i++)
        if (fu_objective_of(dp->objective, last->p[i].c) <
            fu_objective_of(dp->objective, last->p[best].c))
            best = i;
    fu_plan *p = &dp->probe;
    int32_t n_groups = 0;
    for (int32_t cut = dp->n_work, i = best; cut > 0; n_groups++) {
        const point *pt = &dp->fronts[cut].p[i];
        for (int32_t k = pt->from_cut; k < cut; k++)
            p->group[dp->work[k]] = n_groups;
        cut = pt->from_cut;
        i = pt->from_point;
    }
    p->n_groups = n_groups;
    fu_plan_canonicalize(dp->g, p);
    double value;
    fu_plan_cost cost;
    as_code rc = fu_plan_value(dp->e, dp->objective, p, &value, &cost, st);
    if (rc != AS_OK) {
        fu_plan_cost_free(&cost);
        return rc;
    }
    inc->evaluated++;
    return fu_incumbent_offer(inc, p, value, &cost, st);
}

as_code fu_dp_new(void **state, fu_evaluator *e, const fu_search_options *o, as_status *st)
{
    *state = NULL;
    fu_dp *dp = calloc(1, sizeof *dp);
    if (!dp)
        return as_fail(st, AS_ENOMEM, "fusion DP: out of memory");
    dp->e = e;
    dp->g = fu_evaluator_graph(e);
    dp->objective = o->objective;
    dp->work = malloc(((size_t)dp->g->n_ops + 1) * sizeof *dp->work);
    dp->fronts = calloc((size_t)dp->g->n_ops + 1, sizeof *dp->fronts);
    as_code rc = dp->work && dp->fronts ? fu_plan_init(&dp->probe, dp->g, st)
                                        : as_fail(st, AS_ENOMEM, "fusion DP: out of memory");
    if (rc == AS_OK) {
        dp->n_work = fu_working_ops(dp->g, dp->work);
        rc = front_add(&dp->fronts[0], dp->objective, (fu_coords){0, 0}, -1, -1)
                 ? AS_OK
                 : as_fail(st, AS_ENOMEM, "fusion DP: out of memory");
    }
    if (rc != AS_OK) {
        fu_dp_free(dp);
        return rc;
    }
    dp->cut = 1;
    dp->run = 1;
    *state = dp;
    return AS_OK;
}

bool fu_dp_step(void *state, fu_incumbent *inc, int64_t budget, as_status *st)
{
    fu_dp *dp = state;
    for (int64_t spent = 0; spent < budget && dp->cut <= dp->n_work; spent++) {
        if (try_run(dp, st) != AS_OK)
            return false;
        inc->evaluated++;
        if (++dp->run > DP_MAX_RUN || dp->run > dp->cut) {
            dp->cut++;
            dp->run = 1;
        }
    }
    if (dp->cut <= dp->n_work)
        return true;
    offer_best(dp, inc, st);
    return false;
}

void fu_dp_free(void *state)
{
    fu_dp *dp = state;
    if (!dp)
        return;
    if (dp->fronts)
        for (int32_t k = 0; k <= dp->n_work; k++)
            free(dp->fronts[k].p);
    free(dp->fronts);
    free(dp->work);
    fu_plan_free(&dp->probe);
    free(dp);
}
