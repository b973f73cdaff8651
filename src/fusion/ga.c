/*
 * ga.c -- CASCO's genetic search over fusion plans.
 *
 * Population.  Generation 0 is the layer-by-layer plan plus random valid
 * plans (the layer-by-layer plan after a random number of merges).  Each
 * later generation breeds `population` children; the next population is
 * the best `population` distinct plans of parents and children together
 * (elitist, ties to the earlier plan), so the best plan never gets lost.
 *
 * A child is bred in three moves:
 *  1. Two parents, each the better of two random members (tournament).
 *  2. Crossover (CASCO): walk the working ops in topological order; at
 *     each op not yet visited take its group from one parent or the other
 *     at random, minus the ops already visited, and mark its members
 *     visited.  Groups taken whole stay valid; a group cut by earlier
 *     choices may lose convexity or connection, and groups may come to
 *     depend on each other both ways, so the child is repaired: starting
 *     from single ops, its groups are added one by one, each kept only
 *     when the plan stays valid (fu_plan_valid); the members of a group
 *     that would break it stay single ops.
 *  3. Mutations (CASCO): merge (an op's group absorbs the group of one
 *     of its data neighbours), split (a group is cut in two along the
 *     topological order; both parts stay convex, and the cut is rejected
 *     when a part loses its data connection) or steal (an op moves to the
 *     group of one of its data neighbours in another group).  Each is
 *     retried up to MUTATION_TRIES times until one gives a valid plan, and
 *     another follows with MORE_MUTATIONS_PERCENT chance (3.3 on average):
 *     moving a boundary between two groups by several ops takes a merge
 *     and a split, and the plan in between is often worse.
 *
 * Restarts.  Children of a converged population are its near-copies; after
 * RESTART_AFTER generations without a better best plan, the population
 * shrinks to that best plan and the next generation is random plans again
 * (the tests found the GA stuck 1-3% above the DP optimum without this).
 *
 * Data neighbours of an op are the working ops it reaches through one
 * activation tensor (as producer, consumer or fellow consumer), looking
 * through views as plan.c does; an epilogue op stands for its root.
 *
 * Determinism.  Breeding runs on the calling thread from one random stream
 * (core's as_rng, derived as the mapper's streams are, from the option's
 * seed); only scoring a
 * generation runs in parallel, each child on its own, and children are
 * offered to the incumbent in order.  A generation is bred whole and
 * scored as the step budget allows, and selection waits for all of its
 * children, so the result depends neither on the thread count nor on how
 * the budget is split between steps.
 */
#include "fusion_private.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define MUTATION_TRIES 8
#define MORE_MUTATIONS_PERCENT 70 /* chance of one more mutation after each */
#define RESTART_AFTER 15          /* generations without a better best plan */

/* A slot's value, for ranking. */
typedef struct ranked {
    double value;
    int slot;
} ranked;

typedef struct fu_ga {
    fu_evaluator *e;
    const wl_graph *g;
    fu_search_options opt;
    as_rng rng;
    int32_t n_work;
    int32_t *work;     /* working ops in topological order */
    int32_t *nb_start; /* per graph op: its data neighbours are nb[nb_start[o] .. nb_start[o+1]) */
    int32_t *nb;
    /* Plans: the population [0, n_pop), sorted best first, then the brood
     * (the generation being scored) [n_pop, n_pop + n_brood); spare plans
     * after that.  All 2 * population slots are allocated at creation. */
    fu_plan *plans;
    double *value;
    fu_plan_cost *cost;   /* per brood slot, from scoring until offered */
    as_status *status;    /* per brood slot, for parallel scoring */
    ranked *rank;         /* selection's scratch, per slot */
    fu_plan *sorted;      /* selection's scratch, per slot: plans in rank order */
    double *sorted_value; /* and their values */
    int n_pop, n_brood, n_scored;
    int stale; /* generations since the best plan last changed */
    /* Scratch. */
    fu_plan probe;        /* a plan with gaps in its group ids, made canonical to be checked */
    int32_t *saved_group; /* n_ops: a plan's groups before a tentative change */
    int32_t *members;     /* n_work */
    uint8_t *visited;     /* n_ops */
} fu_ga;

/* ------------------------------------------------------------ neighbours */

/* Whether data flows through tensor t as far as fusion is concerned:
 * activations and graph inputs, not weights, constants or folded values. */
static bool carries_data(const wl_graph *g, int32_t t)
{
    const wl_tensor *x = &g->tensors[t];
    return (x->kind == WL_TENSOR_ACTIVATION || x->kind == WL_TENSOR_INPUT) && !x->ivalues &&
           !x->fvalues;
}

/* Whether the neighbour walk goes on through op p: a live, unfolded view
 * (plan.c takes data edges through views alone). */
static bool see_through(const wl_graph *g, int32_t p)
{
    const wl_op *op = &g->ops[p];
    return !op->dead && !op->folded && wl_op_category_of(op) == WL_CAT_VIEW;
}

/* Push op q on the walk (once per stamp). */
static void visit_op(int32_t q, int32_t *stamp, int32_t now, int32_t *stack, int32_t *n_stack)
{
    if (stamp[q] != now) {
        stamp[q] = now;
        stack[(*n_stack)++] = q;
    }
}

/* The data neighbours of working op o into out (see the top of the file);
 * returns how many.  stamp (n_ops, never equal to o + 1 before) marks ops
 * seen; stack has room for n_ops. */
static int32_t data_neighbours(const wl_graph *g, int32_t o, int32_t *stamp, int32_t *stack,
                               int32_t *out)
{
    int32_t now = o + 1, n_stack = 0, n_out = 0;
    stamp[o] = now;
    stack[n_stack++] = o;
    while (n_stack > 0) {
        int32_t p = stack[--n_stack];
        const wl_op *at = &g->ops[p];
        if (at->epilogue_of >= 0 && at->epilogue_of != o) { /* stands for its root */
            visit_op(at->epilogue_of, stamp, now, stack, &n_stack);
            continue;
        }
        if (p != o && at->epilogue_of != o) {
            if (fu_op_in_plan(g, p))
                out[n_out++] = p; /* a working op ends the walk: its neighbours are further */
            if (!see_through(g, p))
                continue;
        }
        const wl_op *op = &g->ops[p];
        for (int k = 0; k < op->n_inputs + op->n_outputs; k++) {
            int32_t t = k < op->n_inputs ? op->inputs[k] : op->outputs[k - op->n_inputs];
            if (t < 0 || !carries_data(g, t))
                continue;
            if (g->tensors[t].producer >= 0)
                visit_op(g->tensors[t].producer, stamp, now, stack, &n_stack);
            for (int32_t c = 0; c < wl_consumer_count(g, t); c++)
                visit_op(wl_consumer_list(g, t)[c], stamp, now, stack, &n_stack);
        }
    }
    return n_out;
}

/* Data neighbours of every working op, as compressed rows by op index. */
static as_code build_neighbours(fu_ga *ga, as_status *st)
{
    const wl_graph *g = ga->g;
    size_t n = (size_t)g->n_ops;
    int32_t *stamp = calloc(n, sizeof *stamp), *stack = malloc(n * sizeof *stack);
    int32_t *row = malloc(n * sizeof *row);
    ga->nb_start = calloc(n + 1, sizeof *ga->nb_start);
    int64_t cap = 0, used = 0;
    as_code rc = stamp && stack && row && ga->nb_start ? AS_OK : AS_ENOMEM;
    for (int32_t o = 0; rc == AS_OK && o < g->n_ops; o++) {
        ga->nb_start[o] = (int32_t)used;
        int32_t k = fu_op_in_plan(g, o) ? data_neighbours(g, o, stamp, stack, row) : 0;
        if (!as_vec_reserve(&ga->nb, &cap, used + k + 1, sizeof *ga->nb)) {
            rc = AS_ENOMEM;
            break;
        }
        memcpy(ga->nb + used, row, (size_t)k * sizeof *row);
        used += k;
    }
    if (rc == AS_OK)
        ga->nb_start[g->n_ops] = (int32_t)used;
    free(stamp);
    free(stack);
    free(row);
    return rc == AS_OK ? AS_OK : as_fail(st, rc, "fusion GA: out of memory");
}

/* ------------------------------------------------------------- plan edits */

/* dst's groups become src's (plans of the same graph). */
static void copy_groups(fu_plan *dst, const fu_plan *src)
{
    memcpy(dst->group, src->group, (size_t)src->n_ops * sizeof *dst->group);
    dst->n_groups = src->n_groups;
}

/* Whether p is valid once renumbered: edits leave gaps in the group ids
 * (a merged group's id, ids past n_groups - 1), which fu_plan_valid
 * refuses, so the check runs on a canonical copy, left in ga->probe. */
static bool valid_once_canonical(fu_ga *ga, const fu_plan *p)
{
    char reason[160];
    copy_groups(&ga->probe, p);
    fu_plan_canonicalize(ga->g, &ga->probe);
    return fu_plan_valid(ga->g, &ga->probe, reason, sizeof reason);
}

/* Every op of group `from` joins group `to`. */
static void relabel(const fu_ga *ga, fu_plan *p, int32_t from, int32_t to)
{
    for (int32_t i = 0; i < ga->n_work; i++)
        if (p->group[ga->work[i]] == from)
            p->group[ga->work[i]] = to;
}

/* The members of group gid in topological order into ga->members; returns
 * how many. */
static int32_t members_of(fu_ga *ga, const fu_plan *p, int32_t gid)
{
    int32_t n = 0;
    for (int32_t i = 0; i < ga->n_work; i++)
        if (p->group[ga->work[i]] == gid)
            ga->members[n++] = ga->work[i];
    return n;
}

/* A uniformly random working op (there must be one). */
static int32_t random_work_op(fu_ga *ga)
{
    return ga->work[as_rng_below(&ga->rng, ga->n_work)];
}

/* A random data neighbour of o, or -1 when it has none. */
static int32_t random_neighbour(fu_ga *ga, int32_t o)
{
    int32_t n = ga->nb_start[o + 1] - ga->nb_start[o];
    return n > 0 ? ga->nb[ga->nb_start[o] + as_rng_below(&ga->rng, n)] : -1;
}

/* Merge: a random op's group absorbs the group of one of its neighbours.
 * Each mutation returns false when it found nothing to change. */
static bool mutate_merge(fu_ga *ga, fu_plan *p)
{
    int32_t o = random_work_op(ga), q = random_neighbour(ga, o);
    if (q < 0 || p->group[q] == p->group[o])
        return false;
    relabel(ga, p, p->group[q], p->group[o]);
    return true;
}

/* Split: a random op's group is cut in two along the topological order;
 * the later part gets a new group. */
static bool mutate_split(fu_ga *ga, fu_plan *p)
{
    int32_t n = members_of(ga, p, p->group[random_work_op(ga)]);
    if (n < 2)
        return false;
    for (int32_t k = 1 + (int32_t)as_rng_below(&ga->rng, n - 1); k < n; k++)
        p->group[ga->members[k]] = p->n_groups;
    p->n_groups++;
    return true;
}

/* Steal: a random op on a group boundary moves to the group of a
 * neighbour outside its own. */
static bool mutate_steal(fu_ga *ga, fu_plan *p)
{
    int32_t o = random_work_op(ga), q = random_neighbour(ga, o);
    if (q < 0 || p->group[q] == p->group[o])
        return false;
    p->group[o] = p->group[q];
    return true;
}

/* The mutations by fu_mutation. */
static bool (*const mutations[FU_N_MUTATIONS])(fu_ga *, fu_plan *) = {
    [FU_MUTATE_MERGE] = mutate_merge,
    [FU_MUTATE_SPLIT] = mutate_split,
    [FU_MUTATE_STEAL] = mutate_steal,
};

/* Apply one mutation of the given kind to p when it leaves p valid; p is
 * canonical again afterwards.  Returns whether p changed. */
static bool try_mutation(fu_ga *ga, fu_plan *p, fu_mutation kind)
{
    int32_t n_groups = p->n_groups;
    memcpy(ga->saved_group, p->group, (size_t)p->n_ops * sizeof *p->group);
    if (mutations[kind](ga, p) && valid_once_canonical(ga, p)) {
        copy_groups(p, &ga->probe);
        return true;
    }
    memcpy(p->group, ga->saved_group, (size_t)p->n_ops * sizeof *p->group);
    p->n_groups = n_groups;
    return false;
}

/* Random mutations that work, each within MUTATION_TRIES attempts, as
 * many as MORE_MUTATIONS_PERCENT draws allow (none without working ops). */
static void mutate(fu_ga *ga, fu_plan *p)
{
    if (ga->n_work == 0)
        return;
    do {
        for (int t = 0; t < MUTATION_TRIES; t++)
            if (try_mutation(ga, p, (fu_mutation)as_rng_below(&ga->rng, FU_N_MUTATIONS)))
                break;
    } while (as_rng_below(&ga->rng, 100) < MORE_MUTATIONS_PERCENT);
}

/* Make p (ids dense) valid as the top of the file says, and canonical.
 * While repairing, the single op o has group n_kept + o, after every id
 * of p. */
static void repair(fu_ga *ga, fu_plan *p)
{
    if (valid_once_canonical(ga, p)) {
        copy_groups(p, &ga->probe);
        return;
    }
    int32_t n_kept = p->n_groups;
    memcpy(ga->saved_group, p->group, (size_t)p->n_ops * sizeof *p->group);
    for (int32_t i = 0; i < ga->n_work; i++)
        p->group[ga->work[i]] = n_kept + ga->work[i];
    p->n_groups = n_kept + p->n_ops;
    for (int32_t gid = 0; gid < n_kept; gid++) {
        int32_t n = 0;
        for (int32_t i = 0; i < ga->n_work; i++)
            if (ga->saved_group[ga->work[i]] == gid)
                p->group[ga->members[n++] = ga->work[i]] = gid;
        if (n > 1 && !valid_once_canonical(ga, p))
            for (int32_t k = 0; k < n; k++)
                p->group[ga->members[k]] = n_kept + ga->members[k];
    }
    fu_plan_canonicalize(ga->g, p);
}

/* Crossover (see the top of the file) of parents a and b into child. */
static void crossover(fu_ga *ga, const fu_plan *a, const fu_plan *b, fu_plan *child)
{
    memset(ga->visited, 0, (size_t)ga->g->n_ops);
    int32_t n_groups = 0;
    for (int32_t i = 0; i < ga->n_work; i++) {
        int32_t o = ga->work[i];
        if (ga->visited[o])
            continue;
        const fu_plan *parent = as_rng_below(&ga->rng, 2) ? b : a;
        int32_t gid = parent->group[o];
        for (int32_t j = i; j < ga->n_work; j++) { /* earlier ops are all visited */
            int32_t m = ga->work[j];
            if (!ga->visited[m] && parent->group[m] == gid) {
                ga->visited[m] = 1;
                child->group[m] = n_groups;
            }
        }
        n_groups++;
    }
    child->n_groups = n_groups;
    repair(ga, child);
}

/* ------------------------------------------------------------ generations */

/* Turn p, the layer-by-layer plan, into a random valid plan: up to n_work
 * merge attempts (a random number of them, so that sizes vary). */
static void random_plan(fu_ga *ga, fu_plan *p)
{
    for (int64_t k = as_rng_below(&ga->rng, ga->n_work + 1); k > 0; k--)
        try_mutation(ga, p, FU_MUTATE_MERGE);
}

/* The better of two random members of the population (sorted best first). */
static const fu_plan *tournament(fu_ga *ga)
{
    int64_t i = as_rng_below(&ga->rng, ga->n_pop), j = as_rng_below(&ga->rng, ga->n_pop);
    return &ga->plans[i < j ? i : j];
}

/* Breed the next generation into the brood slots: random plans for
 * generation 0 (the population is empty; the first is the layer-by-layer
 * plan) and after a restart (the best plan alone survives), children of
 * the population otherwise. */
static as_code breed(fu_ga *ga, as_status *st)
{
    bool restart = ga->n_pop > 0 && ga->stale >= RESTART_AFTER;
    if (restart) {
        ga->stale = 0;
        ga->n_pop = 1;
    }
    fu_plan *brood = ga->plans + ga->n_pop;
    ga->n_brood = ga->opt.population;
    ga->n_scored = 0;
    if (ga->n_pop > 0 && !restart) {
        for (int k = 0; k < ga->n_brood; k++) {
            const fu_plan *a = tournament(ga), *b = tournament(ga);
            crossover(ga, a, b, &brood[k]);
            mutate(ga, &brood[k]);
        }
        return AS_OK;
    }
    fu_plan layer_by_layer;
    as_code rc = fu_plan_init(&layer_by_layer, ga->g, st);
    if (rc != AS_OK)
        return rc;
    for (int k = 0; k < ga->n_brood; k++) {
        copy_groups(&brood[k], &layer_by_layer);
        if (k > 0 || restart)
            random_plan(ga, &brood[k]);
    }
    fu_plan_free(&layer_by_layer);
    return AS_OK;
}

/* Score brood children [n_scored, n_scored + n) (in parallel when threads
 * allow; each child alone), then offer them to the incumbent in order. */
static as_code score(fu_ga *ga, fu_incumbent *inc, int n, as_status *st)
{
    fu_plan *brood = ga->plans + ga->n_pop;
    double *value = ga->value + ga->n_pop;
    fu_plan_cost *cost = ga->cost + ga->n_pop;
    int first = ga->n_scored,
        threads = ga->opt.threads > 0 ? ga->opt.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
    for (int k = first; k < first + n; k++) {
        as_status_clear(&ga->status[k]);
        fu_plan_value(ga->e, ga->opt.objective, &brood[k], &value[k], &cost[k], &ga->status[k]);
    }
    as_code rc = AS_OK;
    for (int k = first; k < first + n; k++) {
        if (rc == AS_OK && ga->status[k].code != AS_OK)
            rc = as_fail(st, ga->status[k].code, "%s", ga->status[k].message);
        if (rc != AS_OK) {
            fu_plan_cost_free(&cost[k]); /* what is left after a failure */
            continue;
        }
        inc->evaluated++;
        rc = fu_incumbent_offer(inc, &brood[k], value[k], &cost[k], st);
    }
    if (rc != AS_OK)
        return rc;
    ga->n_scored += n;
    return AS_OK;
}

/* Lower value first; ties to the earlier slot (parents before children). */
static int by_value(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    return (a->slot > b->slot) - (a->slot < b->slot);
}

/* The next population: the best `population` distinct plans among parents
 * and the scored brood, moved to the front of the slots, best first. */
static void select_survivors(fu_ga *ga)
{
    int n = ga->n_pop + ga->n_brood;
    ranked *order = ga->rank;
    fu_plan *sorted = ga->sorted;
    double *sorted_value = ga->sorted_value;
    for (int k = 0; k < n; k++)
        order[k] = (ranked){isnan(ga->value[k]) ? INFINITY : ga->value[k], k};
    qsort(order, (size_t)n, sizeof *order, by_value);
    ga->stale = ga->n_pop > 0 && order[0].slot < ga->n_pop ? ga->stale + 1 : 0;
    /* Distinct plans first, in rank order; duplicates after them, as spares. */
    int n_distinct = 0, n_dup = 0;
    for (int k = 0; k < n; k++) {
        const fu_plan *p = &ga->plans[order[k].slot];
        bool seen = false;
        for (int j = 0; j < n_distinct && !seen; j++)
            seen = fu_plan_equal(&sorted[j], p);
        int to = seen ? n - 1 - n_dup++ : n_distinct++;
        sorted[to] = *p;
        sorted_value[to] = order[k].value;
    }
    memcpy(ga->plans, sorted, (size_t)n * sizeof *sorted);
    memcpy(ga->value, sorted_value, (size_t)n * sizeof *sorted_value);
    ga->n_pop = n_distinct < ga->opt.population ? n_distinct : ga->opt.population;
    ga->n_brood = ga->n_scored = 0;
}

/* ------------------------------------------------------------------- API */

/* The part of the GA that needs only the graph: working ops, neighbours,
 * scratch and the random stream of seed.  ga is zeroed. */
static as_code operators_init(fu_ga *ga, const wl_graph *g, uint64_t seed, as_status *st)
{
    ga->g = g;
    ga->rng = as_rng_stream(seed, 0, AS_RNG_FROM_FIRST_OUTPUT);
    size_t n_ops = (size_t)g->n_ops;
    ga->work = malloc((n_ops + 1) * sizeof *ga->work);
    ga->members = malloc((n_ops + 1) * sizeof *ga->members);
    ga->saved_group = malloc((n_ops + 1) * sizeof *ga->saved_group);
    ga->visited = malloc(n_ops + 1);
    if (!ga->work || !ga->members || !ga->saved_group || !ga->visited)
        return as_fail(st, AS_ENOMEM, "fusion GA: out of memory");
    ga->n_work = fu_working_ops(g, ga->work);
    as_code rc = fu_plan_init(&ga->probe, g, st);
    return rc == AS_OK ? build_neighbours(ga, st) : rc;
}

/* Free what operators_init allocated, also after it failed half way. */
static void operators_free(fu_ga *ga)
{
    fu_plan_free(&ga->probe);
    free(ga->work);
    free(ga->members);
    free(ga->saved_group);
    free(ga->visited);
    free(ga->nb_start);
    free(ga->nb);
}

as_code fu_ga_new(void **state, fu_evaluator *e, const fu_search_options *o, as_status *st)
{
    *state = NULL;
    fu_ga *ga = calloc(1, sizeof *ga);
    if (!ga)
        return as_fail(st, AS_ENOMEM, "fusion GA: out of memory");
    ga->e = e;
    ga->opt = *o;
    if (ga->opt.population < 2)
        ga->opt.population = 2;
    size_t n_slots = 2 * (size_t)ga->opt.population;
    ga->plans = calloc(n_slots, sizeof *ga->plans);
    ga->value = calloc(n_slots, sizeof *ga->value);
    ga->cost = calloc(n_slots, sizeof *ga->cost);
    ga->status = calloc(n_slots, sizeof *ga->status);
    ga->rank = calloc(n_slots, sizeof *ga->rank);
    ga->sorted = calloc(n_slots, sizeof *ga->sorted);
    ga->sorted_value = calloc(n_slots, sizeof *ga->sorted_value);
    as_code rc = ga->plans && ga->value && ga->cost && ga->status && ga->rank && ga->sorted &&
                         ga->sorted_value
                     ? operators_init(ga, fu_evaluator_graph(e), o->seed, st)
                     : as_fail(st, AS_ENOMEM, "fusion GA: out of memory");
    for (size_t k = 0; rc == AS_OK && k < n_slots; k++)
        rc = fu_plan_init(&ga->plans[k], ga->g, st);
    if (rc != AS_OK) {
        fu_ga_free(ga);
        return rc;
    }
    *state = ga;
    return AS_OK;
}

bool fu_ga_step(void *state, fu_incumbent *inc, int64_t budget, as_status *st)
{
    fu_ga *ga = state;
    if (ga->n_work == 0)
        return false;
    int64_t start = inc->evaluated;
    while (inc->evaluated - start < budget && inc->evaluated < ga->opt.budget) {
        int64_t left = budget - (inc->evaluated - start),
                total_left = ga->opt.budget - inc->evaluated;
        if (total_left < left)
            left = total_left;
        if (ga->n_scored == ga->n_brood && breed(ga, st) != AS_OK)
            return false;
        int n = ga->n_brood - ga->n_scored;
        if (left < n)
            n = (int)left;
        if (score(ga, inc, n, st) != AS_OK)
            return false;
        if (ga->n_scored == ga->n_brood)
            select_survivors(ga);
    }
    return inc->evaluated < ga->opt.budget;
}

/* The population and the brood scored so far, scored again in place
 * (their order is kept: the next selection sorts them), each offered to
 * the incumbent. */
as_code fu_ga_rescore(void *state, fu_incumbent *inc, as_status *st)
{
    fu_ga *ga = state;
    as_code rc = AS_OK;
    for (int k = 0; rc == AS_OK && k < ga->n_pop + ga->n_scored; k++) {
        fu_plan_cost cost;
        rc = fu_plan_value(ga->e, ga->opt.objective, &ga->plans[k], &ga->value[k], &cost, st);
        if (rc == AS_OK)
            rc = fu_incumbent_offer(inc, &ga->plans[k], ga->value[k], &cost, st);
        else
            fu_plan_cost_free(&cost);
    }
    return rc;
}

void fu_ga_free(void *state)
{
    fu_ga *ga = state;
    if (!ga)
        return;
    if (ga->plans)
        for (int k = 0; k < 2 * ga->opt.population; k++)
            fu_plan_free(&ga->plans[k]);
    free(ga->plans);
    free(ga->value);
    free(ga->cost);
    free(ga->status);
    free(ga->rank);
    free(ga->sorted);
    free(ga->sorted_value);
    operators_free(ga);
    free(ga);
}

/* ------------------------------------------------------------ test hooks */

/* Run op (one of the hooks below) on a GA with the operators of g alone;
 * out, the hook's plan, is freed when that fails. */
static as_code with_operators(const wl_graph *g, uint64_t seed, as_status *st,
                              void (*op)(fu_ga *ga, void *arg), void *arg, fu_plan *out)
{
    fu_ga ga;
    memset(&ga, 0, sizeof ga);
    as_code rc = operators_init(&ga, g, seed, st);
    if (rc == AS_OK)
        op(&ga, arg);
    else if (out)
        fu_plan_free(out);
    operators_free(&ga);
    return rc;
}

/* What the public test hooks pass to the operators and get back. */
typedef struct hook_args {
    const fu_plan *a, *b;
    fu_plan *p;
    fu_mutation kind;
    bool changed;
} hook_args;

/* The operator behind each hook: random_plan, crossover then mutate,
 * one try_mutation (recording whether it changed the plan). */
static void hook_random_plan(fu_ga *ga, void *arg)
{
    random_plan(ga, ((hook_args *)arg)->p);
}

static void hook_child(fu_ga *ga, void *arg)
{
    hook_args *h = arg;
    crossover(ga, h->a, h->b, h->p);
    mutate(ga, h->p);
}

static void hook_mutate(fu_ga *ga, void *arg)
{
    hook_args *h = arg;
    h->changed = try_mutation(ga, h->p, h->kind);
}

as_code fu_ga_random_plan(const wl_graph *g, uint64_t seed, fu_plan *out, as_status *st)
{
    as_code rc = fu_plan_init(out, g, st);
    return rc == AS_OK ? with_operators(g, seed, st, hook_random_plan, &(hook_args){.p = out}, out)
                       : rc;
}

as_code fu_ga_child(const wl_graph *g, const fu_plan *a, const fu_plan *b, uint64_t seed,
                    fu_plan *out, as_status *st)
{
    as_code rc = fu_plan_copy(out, a, st);
    hook_args h = {.a = a, .b = b, .p = out};
    return rc == AS_OK ? with_operators(g, seed, st, hook_child, &h, out) : rc;
}

as_code fu_ga_mutate(const wl_graph *g, fu_plan *p, fu_mutation kind, uint64_t seed, bool *changed,
                     as_status *st)
{
    *changed = false;
    if ((unsigned)kind >= FU_N_MUTATIONS)
        return as_fail(st, AS_EINVAL, "fusion GA: unknown mutation %d", (int)kind);
    hook_args h = {.p = p, .kind = kind};
    as_code rc = with_operators(g, seed, st, hook_mutate, &h, NULL);
    *changed = h.changed;
    return rc;
}
