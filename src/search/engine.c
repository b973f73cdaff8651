/*
 * engine.c -- the hardware engines behind one interface: propose a batch
 * of points, observe what they achieved.
 *
 * Every engine works in the unit cube [0, 1]^d over the space's parameter
 * indices (se_point_from_unit / se_point_to_unit) and is a deterministic
 * function of its seed and the observations it has been given: the random
 * numbers of proposal k come from stream (seed, k), and Sobol points from
 * one sequence shifted by a seeded offset (Cranley-Patterson rotation),
 * so a run replayed from its store proposes the same points.
 *
 *   random  uniform points.
 *   bo      Gaussian-process BO on log(scalar objective): expected
 *           improvement maximised over Sobol points and perturbations of
 *           the best observations; a batch is filled by the constant-liar
 *           rule (each pick joins the data at its predicted mean).
 *   mobo    ParEGO (Knowles 2006): objectives log-scaled and normalised to
 *           [0, 1] over the feasible observations, scalarised under a
 *           weight vector drawn per batch slot, then as bo.
 *   casco   mobo whose surrogate learns only from high-fidelity points
 *           (CASCO's update rule, observe_casco below); the run pairs it
 *           with modified successive halving.
 *   lcs     a linear-combination swarm (FAST's black-box alternative in
 *           Vizier): each particle moves to its personal best plus random
 *           multiples of (global best - personal best) and of the
 *           difference of two other particles' bests, with a small
 *           Gaussian jitter.
 *   ga      a steady-state genetic search over the indices: tournament
 *           parents from the best observations, uniform crossover, and a
 *           per-parameter mutation (a random value, or a nearby index).
 *
 * Infeasible observations (over budget, unmappable) are data: surrogates
 * see them at a penalty above the worst feasible target, so they learn to
 * avoid them; the swarm and the GA rank them last.  Before the first
 * feasible point the surrogate engines keep sampling Sobol points.
 */
#include "search_private.h"

#include <gsl/gsl_qrng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ACQUISITION_SAMPLES 1024
#define LOCAL_SAMPLES_FRACTION 0.5 /* of acquisition samples: near the best points */
#define LOCAL_SIGMA 0.08           /* unit-cube sd of a local perturbation */
#define PAREGO_RHO 0.05
#define INFEASIBLE_PENALTY 0.5 /* above the worst feasible target, in target units */
#define DISTINCT_TRIES 64      /* draws to find a point not seen before */
#define TWO_PI 6.283185307179586
/* Mixed into the seed of the ParEGO weight streams so that they differ
 * from the proposal streams of the same seed (PCG's multiplier). */
#define WEIGHTS_SEED_SALT 0x5851f42d4c957f2dull

/* ---------------------------------------------------------------- random */

/* The engines' streams: one per (seed, index), core's second derivation. */
static as_rng rng_stream(uint64_t seed, uint64_t index)
{
    return as_rng_stream(seed, index, AS_RNG_ADVANCED_ONCE);
}

/* Standard normal (Box-Muller; one of the pair is dropped for simplicity). */
static double rng_normal(as_rng *r)
{
    double u = as_rng_unit(r), v = as_rng_unit(r);
    return sqrt(-2.0 * log(1.0 - u)) * cos(TWO_PI * v);
}

static double clamp_unit(double x)
{
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* ---------------------------------------------------------------- state */

/* A swarm particle (lcs): where it was last sent and its best so far. */
typedef struct particle {
    double x[SE_MAX_PARAMS];
    double best_x[SE_MAX_PARAMS];
    double best_value; /* +inf until it has a feasible observation */
    int moves;         /* positions it was sent to after having a best */
} particle;

struct se_engine {
    se_space space;
    se_engine_options o;
    int dim;
    int64_t n_obs, cap_obs;
    se_observation *obs;
    double *x;                 /* n_obs x dim unit coordinates of the observed points */
    double *weights;           /* n_obs x n_objectives: ParEGO weights a point was proposed under */
    bool *in_surrogate;        /* CASCO: passed the high-fidelity rule */
    double *accepted_distance; /* CASCO's D: distances of the points it let in */
    int64_t n_accepted;
    double update_limit; /* CASCO's UUL; +inf until D has enough points */
    uint64_t proposals;  /* points proposed so far (random streams) */
    gsl_qrng *sobol;
    double sobol_shift[SE_MAX_PARAMS];
    /* Proposals not yet observed: their weights and particles. */
    int n_pending;
    double pending_weights[SE_MAX_BATCH][SE_MAX_OBJECTIVES];
    int pending_particle[SE_MAX_BATCH];
    int n_particles;
    particle *particles;
    int next_particle;
};

const char *se_algo_name(se_algo a)
{
    static const char *const names[SE_N_ALGOS] = {"casco", "mobo",   "bo",   "lcs",
                                                  "ga",    "random", "hasco"};
    return a >= 0 && a < SE_N_ALGOS ? names[a] : "?";
}

bool se_algo_parse(const char *s, se_algo *out)
{
    for (int a = 0; a < SE_N_ALGOS; a++)
        if (strcmp(s, se_algo_name((se_algo)a)) == 0) {
            *out = (se_algo)a;
            return true;
        }
    return false;
}

as_code se_engine_new(se_engine **out, const se_space *s, const se_engine_options *o, as_status *st)
{
    *out = NULL;
    if (o->algo < 0 || o->algo >= SE_N_ALGOS)
        return as_fail(st, AS_EINVAL, "unknown engine %d", (int)o->algo);
    if (o->n_objectives < 1 || o->n_objectives > SE_MAX_OBJECTIVES)
        return as_fail(st, AS_EINVAL, "an engine needs 1 to %d objectives, not %d",
                       SE_MAX_OBJECTIVES, o->n_objectives);
    if (s->n_params < 1 || s->n_params > SE_MAX_PARAMS)
        return as_fail(st, AS_EINVAL, "space %s has %d parameters (1..%d)", s->name, s->n_params,
                       SE_MAX_PARAMS);
    se_engine *e = calloc(1, sizeof *e);
    if (!e)
        return as_fail(st, AS_ENOMEM, "out of memory for an engine");
    e->space = *s;
    e->o = *o;
    /* HASCO's hardware search is MOBO's (ParEGO batches on a GP); what
     * sets it apart is the run's fusion (none: se_run_fusion). */
    if (e->o.algo == SE_ALGO_HASCO)
        e->o.algo = SE_ALGO_MOBO;
    if (e->o.acquisition_samples <= 0)
        e->o.acquisition_samples = DEFAULT_ACQUISITION_SAMPLES;
    if (e->o.update_percentile <= 0 || e->o.update_percentile > 100)
        e->o.update_percentile = 95;
    e->dim = s->n_params;
    if (e->o.initial_points <= 0)
        e->o.initial_points = e->dim + 1 > 8 ? e->dim + 1 : 8;
    e->update_limit = INFINITY;
    /* GSL's Sobol generator covers up to 40 dimensions (SE_MAX_PARAMS is 24). */
    e->sobol = gsl_qrng_alloc(gsl_qrng_sobol, (unsigned)e->dim);
    if (!e->sobol) {
        free(e);
        return as_fail(st, AS_ENOMEM, "out of memory for a Sobol sequence");
    }
    as_rng r = rng_stream(o->seed, UINT64_MAX);
    for (int d = 0; d < e->dim; d++)
        e->sobol_shift[d] = as_rng_unit(&r);
    *out = e;
    return AS_OK;
}

void se_engine_free(se_engine *e)
{
    if (!e)
        return;
    free(e->obs);
    free(e->x);
    free(e->weights);
    free(e->in_surrogate);
    free(e->accepted_distance);
    free(e->particles);
    if (e->sobol)
        gsl_qrng_free(e->sobol);
    free(e);
}

int64_t se_engine_surrogate_points(const se_engine *e)
{
    if (e->o.algo != SE_ALGO_CASCO)
        return 0;
    int64_t n = 0;
    for (int64_t i = 0; i < e->n_obs; i++)
        n += e->in_surrogate[i];
    return n;
}

double se_engine_update_limit(const se_engine *e)
{
    return e->o.algo == SE_ALGO_CASCO && isfinite(e->update_limit) ? e->update_limit : 0;
}

/* ------------------------------------------------------------ sampling */

/* The next point of the shifted Sobol sequence, in [0, 1)^dim. */
static void sobol_next(se_engine *e, double *x)
{
    double raw[SE_MAX_PARAMS];
    gsl_qrng_get(e->sobol, raw);
    for (int d = 0; d < e->dim; d++) {
        double v = raw[d] + e->sobol_shift[d];
        x[d] = v - floor(v);
    }
}

/* True when point p was observed or is among the n points of batch. */
static bool seen(const se_engine *e, const se_point *p, const se_point *batch, int n)
{
    for (int64_t i = 0; i < e->n_obs; i++)
        if (se_point_equal(&e->space, &e->obs[i].point, p))
            return true;
    for (int i = 0; i < n; i++)
        if (se_point_equal(&e->space, &batch[i], p))
            return true;
    return false;
}

/* A uniform point of the cube from r. */
static void uniform_point(const se_engine *e, as_rng *r, double *x)
{
    for (int d = 0; d < e->dim; d++)
        x[d] = as_rng_unit(r);
}

/* x moved by a Gaussian step of sd sigma in each coordinate, clamped. */
static void perturb(const se_engine *e, as_rng *r, double sigma, double *x)
{
    for (int d = 0; d < e->dim; d++)
        x[d] = clamp_unit(x[d] + sigma * rng_normal(r));
}

/*
 * Settle x as batch[n]: its point, or -- when that was seen already -- a
 * random perturbation of it, and at last any unseen uniform point, so
 * that a batch holds distinct new points while the space has them.
 */
static void settle(se_engine *e, as_rng *r, double *x, se_point *batch, int n)
{
    se_point p;
    se_point_from_unit(&e->space, x, &p);
    for (int t = 0; t < DISTINCT_TRIES && seen(e, &p, batch, n); t++) {
        double y[SE_MAX_PARAMS];
        memcpy(y, x, sizeof y);
        if (t < DISTINCT_TRIES / 2)
            perturb(e, r, 0.02 * (t + 1), y);
        else
            uniform_point(e, r, y);
        se_point_from_unit(&e->space, y, &p);
    }
    batch[n] = p;
}

/* n space-filling proposals: uniform points (random search) or the next
 * Sobol points (initial designs), each settled as a new point. */
static void propose_filling(se_engine *e, int n, bool uniform, se_point *out)
{
    for (int i = 0; i < n; i++) {
        as_rng r = rng_stream(e->o.seed, e->proposals + (uint64_t)i);
        double x[SE_MAX_PARAMS];
        if (uniform)
            uniform_point(e, &r, x);
        else
            sobol_next(e, x);
        settle(e, &r, x, out, i);
    }
}

/* ------------------------------------------------------------ targets */

/*
 * The scalar each surrogate fits for observation i: log of the run's
 * scalar objective (bo), or ParEGO's scalar of the normalised log
 * objectives under weights w (mobo, casco).  Infeasible points get the
 * penalty above the worst feasible target.  lo/hi: per-objective log
 * ranges over the feasible observations (mobo, casco).
 */
static double raw_target(const se_engine *e, int64_t i, const double *w, const double *lo,
                         const double *hi)
{
    const se_observation *ob = &e->obs[i];
    if (e->o.algo == SE_ALGO_BO)
        return log(ob->scalar);
    double f[SE_MAX_OBJECTIVES];
    for (int k = 0; k < e->o.n_objectives; k++) {
        double span = hi[k] - lo[k];
        f[k] = span > 0 ? (log(ob->y[k]) - lo[k]) / span : 0;
    }
    return se_parego_scalar(f, w, e->o.n_objectives, PAREGO_RHO);
}

/* Per-objective log ranges of the feasible observations; false when there
 * are none. */
static bool objective_ranges(const se_engine *e, double *lo, double *hi)
{
    bool any = false;
    for (int64_t i = 0; i < e->n_obs; i++) {
        if (!e->obs[i].feasible)
            continue;
        for (int k = 0; k < e->o.n_objectives; k++) {
            double v = log(e->obs[i].y[k]);
            lo[k] = any && lo[k] < v ? lo[k] : v;
            hi[k] = any && hi[k] > v ? hi[k] : v;
        }
        any = true;
    }
    return any;
}

/* Targets of the observations the surrogate learns from (all, or CASCO's
 * high-fidelity ones) into x_out/y_out; returns how many.  Infeasible ones
 * take the penalty.  best: the lowest feasible target. */
static int64_t training_set(const se_engine *e, const double *w, double *x_out, double *y_out,
                            double *best)
{
    double lo[SE_MAX_OBJECTIVES], hi[SE_MAX_OBJECTIVES];
    objective_ranges(e, lo, hi);
    int64_t n = 0;
    double worst = -INFINITY;
    *best = INFINITY;
    for (int64_t i = 0; i < e->n_obs; i++) {
        if (e->o.algo == SE_ALGO_CASCO && !e->in_surrogate[i])
            continue;
        memcpy(x_out + n * e->dim, e->x + i * e->dim, (size_t)e->dim * sizeof *x_out);
        if (e->obs[i].feasible) {
            y_out[n] = raw_target(e, i, w, lo, hi);
            worst = y_out[n] > worst ? y_out[n] : worst;
            *best = y_out[n] < *best ? y_out[n] : *best;
        } else {
            y_out[n] = NAN; /* filled below, once the worst is known */
        }
        n++;
    }
    for (int64_t i = 0; i < n; i++)
        if (isnan(y_out[i]))
            y_out[i] = worst + INFEASIBLE_PENALTY;
    return n;
}

/* ------------------------------------------------------------ acquisition */

/* Indices of the (up to) k_max lowest of y[0 .. n) into top, lowest
 * first (ties: the earlier); returns how many. */
static int best_targets(const double *y, int64_t n, int64_t *top, int k_max)
{
    int k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (k == k_max && y[i] >= y[top[k - 1]])
            continue;
        int j = k < k_max ? k++ : k - 1;
        while (j > 0 && y[top[j - 1]] > y[i]) {
            top[j] = top[j - 1];
            j--;
        }
        top[j] = i;
    }
    return k;
}

/*
 * The candidate of highest expected improvement under gp (best: the
 * incumbent target) into x: Sobol points and Gaussian perturbations of
 * the best training points, the first maximum kept (deterministic).
 */
static void maximise_ei(se_engine *e, as_rng *r, const se_gp *gp, const double *train_x,
                        const double *train_y, int64_t n_train, double best, double *x)
{
    int n_local = (int)(e->o.acquisition_samples * LOCAL_SAMPLES_FRACTION);
    int n_global = e->o.acquisition_samples - n_local;
    int64_t top[4];
    int n_top = best_targets(train_y, n_train, top, 4);
    double best_ei = -1, cand[SE_MAX_PARAMS];
    for (int s = 0; s < n_global + n_local; s++) {
        if (s < n_global || n_top == 0) {
            sobol_next(e, cand);
        } else {
            memcpy(cand, train_x + top[s % n_top] * e->dim, (size_t)e->dim * sizeof *cand);
            perturb(e, r, LOCAL_SIGMA, cand);
        }
        double mean, var;
        se_gp_predict(gp, cand, &mean, &var);
        double ei = se_expected_improvement(mean, var, best);
        if (ei > best_ei) {
            best_ei = ei;
            memcpy(x, cand, (size_t)e->dim * sizeof *x);
        }
    }
}

/* The weights of batch slot `slot` of proposal round `round`: distinct
 * lattice vectors across a batch, a fresh draw per round. */
static void slot_weights(const se_engine *e, uint64_t round, int slot, double *w)
{
    as_rng r = rng_stream(e->o.seed ^ WEIGHTS_SEED_SALT, round);
    uint64_t base = as_rng_next(&r);
    se_parego_weights(e->o.n_objectives, base + (uint64_t)slot, w);
}

/*
 * Surrogate proposals (bo, mobo, casco): Sobol points until the initial
 * design is done or while nothing feasible is known; then one GP per
 * batch slot's weights (hyperparameters fitted once per batch, on the
 * first slot's targets), EI maximised, and the pick added as a constant
 * liar so that the next slot looks elsewhere.
 */
static as_code propose_surrogate(se_engine *e, int n, se_point *out, as_status *st)
{
    double lo[SE_MAX_OBJECTIVES], hi[SE_MAX_OBJECTIVES];
    bool any_feasible = objective_ranges(e, lo, hi);
    uint64_t round = e->proposals;
    for (int i = 0; i < n; i++)
        slot_weights(e, round, i, e->pending_weights[e->n_pending + i]);
    if (e->n_obs < e->o.initial_points || !any_feasible) {
        propose_filling(e, n, false, out);
        return AS_OK;
    }
    size_t rows = (size_t)(e->n_obs + n);
    double *tx = malloc(rows * (size_t)e->dim * sizeof *tx);
    double *ty = malloc(rows * sizeof *ty);
    if (!tx || !ty) {
        free(tx);
        free(ty);
        return as_fail(st, AS_ENOMEM, "out of memory for the surrogate's data");
    }
    se_gp_hyper hyper;
    as_code code = AS_OK;
    for (int i = 0; i < n && code == AS_OK; i++) {
        const double *w = e->pending_weights[e->n_pending + i];
        double best;
        int64_t m = training_set(e, w, tx, ty, &best);
        /* Earlier picks of this batch join at the incumbent's value (the
         * constant liar, CL-min), so this slot's EI looks elsewhere. */
        for (int j = 0; j < i; j++) {
            se_point_to_unit(&e->space, &out[j], tx + m * e->dim);
            ty[m] = best;
            m++;
        }
        se_gp *gp = NULL;
        code = se_gp_fit(&gp, tx, ty, (int)m, e->dim, i == 0 ? NULL : &hyper, st);
        if (code != AS_OK)
            break;
        if (i == 0)
            hyper = *se_gp_hyperparameters(gp);
        as_rng r = rng_stream(e->o.seed, e->proposals + (uint64_t)i);
        double x[SE_MAX_PARAMS];
        maximise_ei(e, &r, gp, tx, ty, m, best, x);
        se_gp_free(gp);
        settle(e, &r, x, out, i);
    }
    free(tx);
    free(ty);
    return code;
}

/* --------------------------------------------------------------- swarm */

/* Value of observation i for the single-objective engines (+inf when
 * infeasible). */
static double scalar_value(const se_observation *ob)
{
    return ob->feasible ? ob->scalar : INFINITY;
}

/* Index of the best observation by scalar, or -1 when none is feasible. */
static int64_t best_observation(const se_engine *e)
{
    int64_t best = -1;
    for (int64_t i = 0; i < e->n_obs; i++)
        if (e->obs[i].feasible && (best < 0 || e->obs[i].scalar < e->obs[best].scalar))
            best = i;
    return best;
}

/* The swarm of n particles (the first batch size), made on first use. */
static as_code ensure_swarm(se_engine *e, int n, as_status *st)
{
    if (e->particles)
        return AS_OK;
    e->n_particles = n < 4 ? 4 : n;
    e->particles = calloc((size_t)e->n_particles, sizeof *e->particles);
    if (!e->particles)
        return as_fail(st, AS_ENOMEM, "out of memory for the swarm");
    for (int i = 0; i < e->n_particles; i++)
        e->particles[i].best_value = INFINITY;
    return AS_OK;
}

/*
 * The next position of particle q: before it (or the swarm) has a
 * feasible best, a Sobol point; after, a linear combination of the
 * swarm's bests -- its own best + a (global best - its best) + b (best of
 * one random particle - best of another), a ~ U(0.5, 1.5) (so that it may
 * overshoot the global best, as in particle swarms), b ~ U(-0.5, 0.5) --
 * plus a Gaussian jitter whose sd shrinks as 1/sqrt(moves) from
 * LOCAL_SIGMA, so the swarm explores first and refines later.
 */
static void move_particle(se_engine *e, as_rng *r, particle *q, double *x)
{
    int64_t g = best_observation(e);
    if (!isfinite(q->best_value) || g < 0) {
        sobol_next(e, x);
        return;
    }
    const double *gx = e->x + g * e->dim;
    const particle *u = &e->particles[as_rng_next(r) % (uint64_t)e->n_particles];
    const particle *v = &e->particles[as_rng_next(r) % (uint64_t)e->n_particles];
    bool diff = isfinite(u->best_value) && isfinite(v->best_value);
    double a = 0.5 + as_rng_unit(r), b = as_rng_unit(r) - 0.5;
    double sigma = LOCAL_SIGMA / sqrt((double)(1 + q->moves));
    q->moves++;
    for (int d = 0; d < e->dim; d++) {
        double step = a * (gx[d] - q->best_x[d]);
        if (diff)
            step += b * (u->best_x[d] - v->best_x[d]);
        x[d] = clamp_unit(q->best_x[d] + step + sigma * rng_normal(r));
    }
}

static as_code propose_swarm(se_engine *e, int n, se_point *out, as_status *st)
{
    as_code code = ensure_swarm(e, n, st);
    for (int i = 0; code == AS_OK && i < n; i++) {
        int q = e->next_particle;
        e->next_particle = (e->next_particle + 1) % e->n_particles;
        as_rng r = rng_stream(e->o.seed, e->proposals + (uint64_t)i);
        double x[SE_MAX_PARAMS];
        move_particle(e, &r, &e->particles[q], x);
        memcpy(e->particles[q].x, x, sizeof x);
        e->pending_particle[e->n_pending + i] = q;
        settle(e, &r, x, out, i);
    }
    return code;
}

/* ------------------------------------------------------------------ GA */

/* A parent: the better of two observations drawn among the best
 * `pool` ones (by scalar, infeasible last). */
static int64_t tournament(as_rng *r, const se_ranked *ranked, int64_t pool)
{
    uint64_t a = as_rng_next(r) % (uint64_t)pool, b = as_rng_next(r) % (uint64_t)pool;
    return ranked[a < b ? a : b].index; /* the better ranked of the two */
}

/* Child of parents a and b: uniform crossover of indices, then each
 * parameter mutated with probability 1/dim -- half the time to a random
 * value, half to an index at most n_values/16 (at least 1) away. */
static void ga_child(const se_engine *e, as_rng *r, const se_point *a, const se_point *b,
                     se_point *child)
{
    for (int d = 0; d < e->dim; d++) {
        const se_param *p = &e->space.param[d];
        child->index[d] = (as_rng_next(r) & 1) ? a->index[d] : b->index[d];
        if (as_rng_unit(r) * e->dim >= 1.0)
            continue;
        if (as_rng_next(r) & 1) {
            child->index[d] = (int64_t)(as_rng_next(r) % (uint64_t)p->n_values);
        } else {
            int64_t reach = p->n_values / 16 > 1 ? p->n_values / 16 : 1;
            int64_t step = 1 + (int64_t)(as_rng_next(r) % (uint64_t)reach);
            int64_t v = child->index[d] + ((as_rng_next(r) & 1) ? step : -step);
            child->index[d] = v < 0 ? 0 : v >= p->n_values ? p->n_values - 1 : v;
        }
    }
}

static as_code propose_ga(se_engine *e, int n, se_point *out, as_status *st)
{
    int64_t population = n < 8 ? 8 : n;
    if (e->n_obs < population) {
        propose_filling(e, n, false, out);
        return AS_OK;
    }
    se_ranked *ranked = malloc((size_t)e->n_obs * sizeof *ranked);
    if (!ranked)
        return as_fail(st, AS_ENOMEM, "out of memory for the GA's ranking");
    for (int64_t i = 0; i < e->n_obs; i++)
        ranked[i] = (se_ranked){scalar_value(&e->obs[i]), i};
    se_ranked_sort(ranked, e->n_obs); /* by scalar, infeasible (+inf) last */
    for (int i = 0; i < n; i++) {
        as_rng r = rng_stream(e->o.seed, e->proposals + (uint64_t)i);
        int64_t mother = tournament(&r, ranked, population);
        int64_t father = tournament(&r, ranked, population);
        se_point child;
        ga_child(e, &r, &e->obs[mother].point, &e->obs[father].point, &child);
        double x[SE_MAX_PARAMS];
        se_point_to_unit(&e->space, &child, x);
        settle(e, &r, x, out, i);
    }
    free(ranked);
    return AS_OK;
}

/* ------------------------------------------------------------ interface */

as_code se_engine_propose(se_engine *e, int n, se_point *out, as_status *st)
{
    if (n < 1 || e->n_pending + n > SE_MAX_BATCH)
        return as_fail(st, AS_EINVAL, "a batch holds 1 to %d points (asked for %d, %d pending)",
                       SE_MAX_BATCH, n, e->n_pending);
    as_code code = AS_OK;
    switch (e->o.algo) {
    case SE_ALGO_RANDOM:
        propose_filling(e, n, true, out);
        break;
    case SE_ALGO_BO:
    case SE_ALGO_MOBO:
    case SE_ALGO_CASCO:
        code = propose_surrogate(e, n, out, st);
        break;
    case SE_ALGO_LCS:
        code = propose_swarm(e, n, out, st);
        break;
    case SE_ALGO_GA:
        code = propose_ga(e, n, out, st);
        break;
    default:
        code = as_fail(st, AS_EINVAL, "unknown engine %d", (int)e->o.algo);
    }
    if (code == AS_OK) {
        e->proposals += (uint64_t)n;
        e->n_pending += n;
    }
    return code;
}

/* Room for n more observations; false when out of memory. */
static bool reserve(se_engine *e, int64_t n)
{
    if (e->n_obs + n <= e->cap_obs)
        return true;
    /* Five arrays of one length: each grows from the same capacity, so
     * all reach the same one; it is recorded once every one has. */
    int64_t need = e->n_obs + n,
            cap[5] = {e->cap_obs, e->cap_obs, e->cap_obs, e->cap_obs, e->cap_obs};
    bool ok = as_vec_reserve(&e->obs, &cap[0], need, sizeof *e->obs) &&
              as_vec_reserve(&e->x, &cap[1], need, (size_t)e->dim * sizeof *e->x) &&
              as_vec_reserve(&e->weights, &cap[2], need, SE_MAX_OBJECTIVES * sizeof *e->weights) &&
              as_vec_reserve(&e->in_surrogate, &cap[3], need, sizeof *e->in_surrogate) &&
              as_vec_reserve(&e->accepted_distance, &cap[4], need, sizeof *e->accepted_distance);
    if (ok)
        e->cap_obs = cap[0];
    return ok;
}

/* The p-th percentile of v[0 .. n) (sorted in place; linear between
 * order statistics). */
static double percentile(double *v, int64_t n, double p)
{
    for (int64_t i = 1; i < n; i++)
        for (int64_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    double pos = p / 100.0 * (double)(n - 1);
    int64_t k = (int64_t)pos;
    return k + 1 < n ? v[k] + (pos - (double)k) * (v[k + 1] - v[k]) : v[n - 1];
}

/*
 * CASCO's high-fidelity update for the observations from `first` on.
 * Each is scored by ParEGO's scalar v under the weights it was proposed
 * with; d = v - v_best, v_best the lowest scalar of any feasible
 * observation under the same weights.  It joins the surrogate when d is
 * under the upper update limit (UUL), and its d joins D; after the batch
 * UUL becomes the update_percentile-th percentile of D.  Until D holds
 * the initial design, every point joins (UUL is +inf).  Infeasible points
 * always join at their penalty: the rule screens out points whose values
 * a short software search left poor, and infeasibility is not such a
 * value.
 */
static void observe_casco(se_engine *e, int64_t first)
{
    double lo[SE_MAX_OBJECTIVES], hi[SE_MAX_OBJECTIVES];
    objective_ranges(e, lo, hi);
    for (int64_t i = first; i < e->n_obs; i++) {
        if (!e->obs[i].feasible) {
            e->in_surrogate[i] = true;
            continue;
        }
        const double *w = e->weights + i * SE_MAX_OBJECTIVES;
        double v = raw_target(e, i, w, lo, hi), v_best = v;
        for (int64_t j = 0; j < e->n_obs; j++)
            if (e->obs[j].feasible) {
                double vj = raw_target(e, j, w, lo, hi);
                v_best = vj < v_best ? vj : v_best;
            }
        double d = v - v_best;
        e->in_surrogate[i] = d <= e->update_limit;
        if (e->in_surrogate[i])
            e->accepted_distance[e->n_accepted++] = d;
    }
    if (e->n_accepted >= e->o.initial_points) {
        double *sorted = malloc((size_t)e->n_accepted * sizeof *sorted);
        if (sorted) {
            memcpy(sorted, e->accepted_distance, (size_t)e->n_accepted * sizeof *sorted);
            e->update_limit = percentile(sorted, e->n_accepted, e->o.update_percentile);
            free(sorted);
        }
    }
}

/* Update the swarm from observation i, proposed for particle q. */
static void observe_particle(se_engine *e, int q, int64_t i)
{
    particle *p = &e->particles[q];
    double v = scalar_value(&e->obs[i]);
    if (v < p->best_value) {
        p->best_value = v;
        memcpy(p->best_x, e->x + i * e->dim, (size_t)e->dim * sizeof *p->best_x);
    }
}

as_code se_engine_observe(se_engine *e, const se_observation *obs, int n, as_status *st)
{
    if (n < 0 || n > e->n_pending)
        return as_fail(st, AS_EINVAL, "%d observations for %d pending proposals", n, e->n_pending);
    if (!reserve(e, n))
        return as_fail(st, AS_ENOMEM, "out of memory for observations");
    int64_t first = e->n_obs;
    for (int i = 0; i < n; i++) {
        int64_t k = e->n_obs++;
        e->obs[k] = obs[i];
        se_point_to_unit(&e->space, &obs[i].point, e->x + k * e->dim);
        memcpy(e->weights + k * SE_MAX_OBJECTIVES, e->pending_weights[i],
               sizeof e->pending_weights[i]);
        e->in_surrogate[k] = true;
        if (e->particles)
            observe_particle(e, e->pending_particle[i], k);
    }
    /* What is left pending moves to the front. */
    e->n_pending -= n;
    memmove(e->pending_weights, e->pending_weights + n,
            (size_t)e->n_pending * sizeof e->pending_weights[0]);
    memmove(e->pending_particle, e->pending_particle + n,
            (size_t)e->n_pending * sizeof e->pending_particle[0]);
    if (e->o.algo == SE_ALGO_CASCO)
        observe_casco(e, first);
    return AS_OK;
}
