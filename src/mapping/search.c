/*
 * search.c -- the mapper: three anytime searches over the map space of
 * mapspace.c, scored by map_evaluate.
 *
 * Random-pruned (Timeloop's random_pruned): independent random points,
 * each drawn so that its factors fit the fanouts and the kept tiles fit
 * the buffers (mapspace.c, ms_random), with Timeloop's termination rules:
 * search_size valid mappings evaluated, victory_condition consecutive
 * valid mappings without improvement, Timeloop's `timeout` (consecutive
 * invalid mappings, consecutive_invalid_limit), and a wall-clock timeout.
 *
 * Heuristic: iterated local search seeded by structure.
 *  1. Construction (ms_greedy), once per classic dataflow style and per
 *     padding variant: spatial factors chosen to fill each level's X and Y
 *     fanout as fully as the bounds allow (a small exact search over
 *     divisors), then the innermost buffers filled first with the largest
 *     tiles that fit, taking the style's dimensions first (reductions
 *     innermost for output stationary, pixels innermost for weight
 *     stationary, ...); loop orders follow the style.
 *  2. Local search from each start: a fixed number of moves (a prime
 *     factor to another level or to/from space, two loops swapped, a loop
 *     moved to the other axis, a bypass flipped), a move kept when the
 *     objective does not get worse.
 *  3. Restarts: alternately a perturbation of the best mapping so far
 *     (a few random moves, then local search again) and a pruned random
 *     point, until `victory_condition` valid mappings bring no
 *     improvement (HEURISTIC_PATIENCE when no limit is set).
 *
 * Exhaustive: every point of the space (mapspace.c, ms_enum), factorisation
 * by factorisation; a space over EXHAUSTIVE_MAX_POINTS is refused at init.
 *
 * Threads and determinism.  Work is cut into chunks of fixed size (a
 * batch of random draws, one local search, one factorisation's points);
 * chunk i draws from its own random stream derived from (seed, i).  A
 * round plans up to ROUND_CHUNKS chunks on the calling thread, runs them
 * in parallel (OpenMP), then merges them in chunk order, ties going to the
 * earlier chunk.  Nothing a chunk computes depends on the thread that ran
 * it, so the result is the same for any thread count.  Limits are checked
 * between rounds; the victory count is exact because within a chunk the
 * last improvement of the global best is the chunk's own best.
 *
 * Memory: everything, including per-chunk scratch, is allocated at init;
 * the search loop allocates nothing (the curve grows once per step).
 */
#include "mapspace.h"

#include "eval_private.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define ROUND_CHUNKS 8
#define RANDOM_CHUNK 128 /* random draws per chunk */
#define LOCAL_CHUNK 1000 /* evaluations per local search */
#define START_TRIES 64   /* random draws to find a valid start */
#define HEURISTIC_PATIENCE 40000
#define EXHAUSTIVE_MAX_POINTS 5000000
#define GIVE_UP_WITHOUT_VALID 1000000 /* evaluations with nothing valid: the space is empty */

typedef struct chunk {
    /* plan */
    uint64_t index; /* global chunk number: seeds its random stream */
    bool has_start; /* heuristic: start from `start` ... */
    int perturb;    /* ... after this many random moves */
    int length;     /* heuristic: evaluations of the local search */
    ms_point start; /* heuristic start, or the exhaustive factorisation */
    /* result */
    bool found;
    ms_point best;
    double key[3];
    int64_t evaluated, valid, valid_after_best;
    int64_t invalid_lead; /* invalid mappings before the first valid one */
    int64_t invalid_run;  /* ... after the last valid one */
    int64_t invalid_max;  /* longest run of invalid ones */
    /* scratch */
    map_eval eval;
    ms_point cur, cand;
} chunk;

struct map_search {
    map_search_options opt;
    int64_t victory; /* effective victory condition */
    ms_space space;
    ms_enum *enumeration; /* exhaustive only */
    chunk chunk[ROUND_CHUNKS];
    uint64_t next_chunk;
    bool found;
    ms_point best;
    map_eval best_eval;
    double best_key[3];
    int64_t evaluated, valid, since_improvement;
    int64_t invalid_run; /* consecutive invalid mappings up to now */
    bool invalid_limit_hit;
    as_curve curve; /* best value after each step */
    bool ended;
    double started_s;
};

/* ------------------------------------------------------------- objective */

static double metric_value(map_metric m, const map_eval *e)
{
    switch (m) {
    case MAP_METRIC_ENERGY:
        return e->energy_pJ;
    case MAP_METRIC_CYCLES:
        return (double)e->cycles;
    case MAP_METRIC_EDP:
        break;
    }
    return e->edp_J_cycle;
}

static int n_metrics(const map_objective *o)
{
    return o->n_metrics < 1 ? 1 : o->n_metrics > 3 ? 3 : o->n_metrics;
}

static void objective_key(const map_objective *o, const map_eval *e, double key[3])
{
    for (int i = 0; i < 3; i++)
        key[i] = i < n_metrics(o)
                     ? metric_value(o->n_metrics < 1 ? MAP_METRIC_EDP : o->metric[i], e)
                     : 0;
}

/* Lexicographic: a strictly better than b. */
static bool better(const double a[3], const double b[3], int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return false;
}

/* ---------------------------------------------------------------- chunks */

/* Count an invalid mapping (for Timeloop's consecutive-invalid rule). */
static bool invalid(chunk *c)
{
    c->evaluated++;
    if (++c->invalid_run > c->invalid_max)
        c->invalid_max = c->invalid_run;
    return false;
}

/* Prune, evaluate and score pt (counted in c); true when valid.  The
 * group packing of a systolic array is not drawn but set here, to the one
 * with the fewest compute cycles for pt's spatial factors (it changes
 * nothing else a mapping costs). */
static bool score(const map_search *s, chunk *c, ms_point *pt, double key[3])
{
    if (!ms_prune(&s->space, pt))
        return invalid(c);
    const wl_problem *problem = &s->space.variant[pt->variant].problem;
    pt->m.group_pack = map_best_group_pack(&s->space.arch, problem, &pt->m);
    map_evaluate(&s->space.arch, problem, &pt->m, &c->eval);
    if (c->eval.validity != MAP_VALID)
        return invalid(c);
    c->evaluated++;
    if (c->valid++ == 0)
        c->invalid_lead = c->invalid_run;
    c->invalid_run = 0;
    objective_key(&s->opt.objective, &c->eval, key);
    return true;
}

/* Record a valid point as the chunk's best when it improves on it. */
static void offer(const map_search *s, chunk *c, const ms_point *pt, const double key[3])
{
    if (!c->found || better(key, c->key, n_metrics(&s->opt.objective))) {
        c->found = true;
        c->best = *pt;
        memcpy(c->key, key, sizeof c->key);
        c->valid_after_best = 0;
    } else {
        c->valid_after_best++;
    }
}

/* A variant for a random point: the original half of the time. */
static int random_variant(const map_search *s, as_rng *r)
{
    for (int tries = 0; tries < 16; tries++) {
        int v = as_rng_below(r, 2) == 0 ? 0 : (int)as_rng_below(r, s->space.n_variants);
        if (s->space.variant[v].feasible)
            return v;
    }
    for (int v = 0; v < s->space.n_variants; v++)
        if (s->space.variant[v].feasible)
            return v;
    return 0;
}

static void run_random(const map_search *s, chunk *c)
{
    as_rng r = as_rng_stream(s->opt.seed, c->index, AS_RNG_FROM_FIRST_OUTPUT);
    double key[3];
    for (int i = 0; i < RANDOM_CHUNK; i++) {
        if (!ms_random(&s->space, &r, random_variant(s, &r), &c->cand)) {
            invalid(c);
            continue;
        }
        if (score(s, c, &c->cand, key))
            offer(s, c, &c->cand, key);
    }
}

/* Local search: from the planned start (perturbed) or a random valid
 * point, keep every move that does not make the objective worse. */
static void run_local(const map_search *s, chunk *c)
{
    as_rng r = as_rng_stream(s->opt.seed, c->index, AS_RNG_FROM_FIRST_OUTPUT);
    int n = n_metrics(&s->opt.objective);
    double cur_key[3], key[3];
    bool cur_valid = false;
    if (c->has_start) {
        c->cur = c->start;
        for (int i = 0; i < c->perturb; i++)
            ms_mutate(&s->space, &r, &c->cur);
        cur_valid = score(s, c, &c->cur, cur_key);
    }
    for (int t = 0; !cur_valid && t < START_TRIES; t++) {
        if (!ms_random(&s->space, &r, random_variant(s, &r), &c->cur))
            invalid(c);
        else
            cur_valid = score(s, c, &c->cur, cur_key);
    }
    if (!cur_valid)
        return;
    offer(s, c, &c->cur, cur_key);
    for (int idle = 0; c->evaluated < c->length && idle < LOCAL_CHUNK;) {
        c->cand = c->cur;
        if (!ms_mutate(&s->space, &r, &c->cand)) {
            idle++;
            continue;
        }
        if (as_rng_below(&r, 4) == 0)
            ms_mutate(&s->space, &r, &c->cand);
        if (!score(s, c, &c->cand, key))
            continue;
        offer(s, c, &c->cand, key);
        if (!better(cur_key, key, n)) {
            c->cur = c->cand;
            memcpy(cur_key, key, sizeof key);
        }
    }
}

/* Every inner point of one factorisation, unless none can be legal. */
static void run_exhaustive(const map_search *s, chunk *c)
{
    double key[3];
    if (!ms_factorisation_possible(&s->space, &c->start))
        return;
    int64_t n = ms_enum_inner_count(&s->space, &c->start);
    for (int64_t i = 0; i < n; i++) {
        ms_enum_inner_point(&s->space, &c->start, i, &c->cand);
        if (score(s, c, &c->cand, key))
            offer(s, c, &c->cand, key);
    }
}

static void run_chunk(const map_search *s, chunk *c)
{
    switch (s->opt.algorithm) {
    case MAP_ALGO_RANDOM_PRUNED:
        run_random(s, c);
        break;
    case MAP_ALGO_HEURISTIC:
        run_local(s, c);
        break;
    case MAP_ALGO_EXHAUSTIVE:
        run_exhaustive(s, c);
        break;
    }
}

/* ---------------------------------------------------------------- rounds */

/*
 * The start of heuristic chunk i: first the greedy constructions (every
 * style on the original problem, then one style per padded variant), then
 * alternately the best so far perturbed by 2..5 moves and a random start.
 */
static void plan_heuristic(map_search *s, chunk *c)
{
    uint64_t i = c->index;
    const ms_space *sp = &s->space;
    uint64_t greedy = MS_GREEDY_STYLES + (uint64_t)(sp->n_variants - 1);
    c->has_start = false;
    c->perturb = 0;
    if (i < greedy) {
        int variant = i < MS_GREEDY_STYLES ? 0 : (int)(i - MS_GREEDY_STYLES + 1);
        int style = i < MS_GREEDY_STYLES ? (int)i : (int)(i % MS_GREEDY_STYLES);
        c->has_start = sp->variant[variant].feasible && ms_greedy(sp, variant, style, &c->start);
    } else if (s->found && (i - greedy) % 2 == 0) {
        c->has_start = true;
        c->start = s->best;
        c->perturb = 2 + (int)((i - greedy) / 2 % 4);
    }
}

/* Plan the next round's chunks for `budget` more evaluations of a step
 * of step_budget; returns how many.  With exact_steps, a heuristic step
 * given less than one local search's evaluations gets one shorter local
 * search, so that small budgets (a co-design search's first rounds) cost
 * what they say. */
static int plan_round(map_search *s, int64_t budget, int64_t step_budget)
{
    int per_chunk = s->opt.algorithm == MAP_ALGO_RANDOM_PRUNED ? RANDOM_CHUNK : LOCAL_CHUNK;
    int want = (int)((budget + per_chunk - 1) / per_chunk);
    int length = s->opt.exact_steps && step_budget < LOCAL_CHUNK ? (int)step_budget : LOCAL_CHUNK;
    int n = 0;
    if (want > ROUND_CHUNKS || s->opt.algorithm == MAP_ALGO_EXHAUSTIVE)
        want = ROUND_CHUNKS;
    for (; n < want; n++) {
        chunk *c = &s->chunk[n];
        c->index = s->next_chunk;
        c->found = false;
        c->evaluated = c->valid = c->valid_after_best = 0;
        c->invalid_lead = c->invalid_run = c->invalid_max = 0;
        c->length = length;
        if (s->opt.algorithm == MAP_ALGO_EXHAUSTIVE &&
            !ms_enum_next_factorisation(s->enumeration, &s->space, &c->start))
            break;
        if (s->opt.algorithm == MAP_ALGO_HEURISTIC)
            plan_heuristic(s, c);
        s->next_chunk++;
    }
    return n;
}

/* Carry the run of consecutive invalid mappings across chunk c, noting
 * when it reaches the limit anywhere (exact: runs inside a chunk are
 * known, runs across chunks are joined here). */
static void merge_invalid_runs(map_search *s, const chunk *c)
{
    int64_t limit = s->opt.consecutive_invalid_limit;
    if (c->valid == 0) {
        s->invalid_run += c->evaluated;
    } else {
        s->invalid_limit_hit |= limit > 0 && s->invalid_run + c->invalid_lead >= limit;
        s->invalid_run = c->invalid_run;
    }
    s->invalid_limit_hit |= limit > 0 && (c->invalid_max >= limit || s->invalid_run >= limit);
}

/* Merge the round's chunks in order (ties to the earlier). */
static void merge_round(map_search *s, int n)
{
    int metrics = n_metrics(&s->opt.objective);
    for (int k = 0; k < n; k++) {
        chunk *c = &s->chunk[k];
        s->evaluated += c->evaluated;
        s->valid += c->valid;
        merge_invalid_runs(s, c);
        if (c->found && (!s->found || better(c->key, s->best_key, metrics))) {
            s->found = true;
            s->best = c->best;
            memcpy(s->best_key, c->key, sizeof s->best_key);
            s->since_improvement = c->valid_after_best;
            map_evaluate(&s->space.arch, &s->space.variant[s->best.variant].problem, &s->best.m,
                         &s->best_eval);
        } else {
            s->since_improvement += c->valid;
        }
    }
}

/* Whether a termination rule holds after a round of n chunks. */
static bool should_end(const map_search *s, int n)
{
    const map_search_options *o = &s->opt;
    if (n == 0 || (o->algorithm == MAP_ALGO_EXHAUSTIVE && s->enumeration->done))
        return true;
    if (o->search_size > 0 && s->valid >= o->search_size)
        return true;
    if (s->victory > 0 && s->found && s->since_improvement >= s->victory)
        return true;
    if (s->invalid_limit_hit)
        return true;
    if (!s->found && s->evaluated >= GIVE_UP_WITHOUT_VALID)
        return true;
    return o->timeout_seconds > 0 && omp_get_wtime() - s->started_s >= o->timeout_seconds;
}

static void run_round(map_search *s, int64_t budget, int64_t step_budget)
{
    int n = plan_round(s, budget, step_budget);
    int threads = s->opt.threads > 0 ? s->opt.threads : omp_get_max_threads();
    if (threads > n)
        threads = n > 0 ? n : 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int k = 0; k < n; k++)
        run_chunk(s, &s->chunk[k]);
    merge_round(s, n);
    s->ended = should_end(s, n);
}

/* Append the best value so far to the anytime curve (skipped, not fatal,
 * when memory runs out). */
static void record_curve(map_search *s)
{
    as_curve_push(&s->curve, s->found ? s->best_key[0] : INFINITY);
}

/* ------------------------------------------------------------------- API */

void map_search_options_default(map_search_options *o)
{
    memset(o, 0, sizeof *o);
    o->algorithm = MAP_ALGO_HEURISTIC;
    o->objective = (map_objective){1, {MAP_METRIC_EDP}};
    o->seed = 1;
    o->threads = 1;
    o->allow_padding = true;
    o->allow_imperfect = true;
}

/* Options a search can run with; names the offending field. */
static as_code check_options(const map_search_options *o, as_status *st)
{
    if ((unsigned)o->algorithm > MAP_ALGO_EXHAUSTIVE)
        return as_fail(st, AS_EINVAL, "mapper: unknown algorithm %d", (int)o->algorithm);
    if (o->objective.n_metrics < 0 || o->objective.n_metrics > 3)
        return as_fail(st, AS_EINVAL, "mapper: objective has %d metrics (0..3)",
                       o->objective.n_metrics);
    for (int i = 0; i < o->objective.n_metrics; i++)
        if ((unsigned)o->objective.metric[i] > MAP_METRIC_CYCLES)
            return as_fail(st, AS_EINVAL, "mapper: objective metric %d unknown (%d)", i,
                           (int)o->objective.metric[i]);
    if (o->threads < 0 || o->search_size < 0 || o->victory_condition < 0 ||
        o->consecutive_invalid_limit < 0 || !(o->timeout_seconds >= 0))
        return as_fail(
            st, AS_EINVAL,
            "mapper: negative threads, search size, victory condition, invalid limit or timeout");
    return AS_OK;
}

as_code map_search_init(map_search **out, const arch_spec *a, const wl_problem *p,
                        const map_search_options *o, as_status *st)
{
    *out = NULL;
    as_code rc = check_options(o, st);
    if (rc != AS_OK)
        return rc;
    map_search *s = calloc(1, sizeof *s);
    if (!s)
        return as_fail(st, AS_ENOMEM, "mapper: out of memory");
    s->opt = *o;
    rc = ms_init(&s->space, a, p, o->allow_padding || o->allow_imperfect, st);
    if (rc == AS_OK && o->algorithm == MAP_ALGO_EXHAUSTIVE) {
        s->enumeration = calloc(1, sizeof *s->enumeration);
        rc = s->enumeration ? ms_enum_init(s->enumeration, &s->space, EXHAUSTIVE_MAX_POINTS, st)
                            : as_fail(st, AS_ENOMEM, "mapper: out of memory");
    }
    if (rc != AS_OK) {
        map_search_free(s);
        return rc;
    }
    s->victory = o->victory_condition;
    if (o->algorithm == MAP_ALGO_HEURISTIC && o->victory_condition == 0 && o->search_size == 0)
        s->victory = HEURISTIC_PATIENCE;
    s->ended = !ms_any_feasible(&s->space);
    s->started_s = omp_get_wtime();
    *out = s;
    return AS_OK;
}

bool map_search_step(map_search *s, int64_t budget)
{
    int64_t start = s->evaluated;
    while (!s->ended && s->evaluated - start < budget)
        run_round(s, budget - (s->evaluated - start), budget);
    record_curve(s);
    return !s->ended;
}

void map_search_save(const map_search *s, map_search_resume *out)
{
    *out = (map_search_resume){
        .next_chunk = s->next_chunk,
        .best_variant = s->best.variant,
        .found = s->found,
        .ended = s->ended,
        .invalid_limit_hit = s->invalid_limit_hit,
        .best_key = {s->best_key[0], s->best_key[1], s->best_key[2]},
        .evaluated = s->evaluated,
        .valid = s->valid,
        .since_improvement = s->since_improvement,
        .invalid_run = s->invalid_run,
    };
}

as_code map_search_restore(map_search *s, const map_search_resume *r, const map_mapping *best,
                           as_status *st)
{
    if (s->opt.algorithm == MAP_ALGO_EXHAUSTIVE || s->evaluated > 0)
        return as_fail(st, AS_EINVAL,
                       "mapper: only a fresh heuristic or random search resumes a saved one");
    if (r->found && (r->best_variant < 0 || r->best_variant >= s->space.n_variants))
        return as_fail(st, AS_EINVAL,
                       "mapper: saved search's variant %d is not one of this space's",
                       (int)r->best_variant);
    s->next_chunk = r->next_chunk;
    s->found = r->found;
    s->ended = r->ended;
    s->invalid_limit_hit = r->invalid_limit_hit;
    memcpy(s->best_key, r->best_key, sizeof s->best_key);
    s->evaluated = r->evaluated;
    s->valid = r->valid;
    s->since_improvement = r->since_improvement;
    s->invalid_run = r->invalid_run;
    if (s->found) {
        s->best.variant = r->best_variant;
        s->best.m = *best;
        map_evaluate(&s->space.arch, &s->space.variant[s->best.variant].problem, &s->best.m,
                     &s->best_eval);
    }
    return AS_OK;
}

bool map_search_best(const map_search *s, map_mapping *mapping, map_eval *eval,
                     wl_problem *mapped_problem)
{
    if (!s->found)
        return false;
    if (mapping)
        *mapping = s->best.m;
    if (eval)
        *eval = s->best_eval;
    if (mapped_problem)
        *mapped_problem = s->space.variant[s->best.variant].problem;
    return true;
}

int64_t map_search_evaluated(const map_search *s)
{
    return s->evaluated;
}

int64_t map_search_valid(const map_search *s)
{
    return s->valid;
}

const double *map_search_curve(const map_search *s, int *n_points)
{
    *n_points = s->curve.n;
    return s->curve.points;
}

void map_search_free(map_search *s)
{
    if (!s)
        return;
    if (s->enumeration) {
        ms_enum_free(s->enumeration);
        free(s->enumeration);
    }
    as_curve_free(&s->curve);
    free(s);
}
