/*
 * chameleon.c -- the CHAMELEON-style tuner (Ahn, Pilligundla, Yazdanbakhsh
 * and Esmaeilzadeh, "Chameleon: Adaptive code optimization for expedited
 * deep neural network compilation", ICLR 2020), extended to VTA++'s
 * hardware knobs as DCO-Comp's comparison does.
 *
 * One round (one propose call):
 *  1. adaptive exploration: a tn_gbt cost model (one member, like
 *     AutoTVM's) is fitted to every measurement so far; one PPO agent
 *     owning every knob (ppo.c with a single agent) walks EPISODES
 *     episodes of HORIZON steps rewarded by the model's prediction (the
 *     measured throughput where there is one), and is updated right
 *     after the rollout: CHAMELEON's agent learns from the cost model
 *     only;
 *  2. the PLAN configurations the walk visited with the highest reward
 *     are the candidates;
 *  3. adaptive sampling: k-means (tn_kmeans) over the candidates'
 *     features (tn_space_features, standardised per feature) for
 *     k = 8, 16, ..., 64; k grows while it still divides the
 *     within-cluster sum of squares by LOSS_RATIO, and the clustering at
 *     the first k that does not (the knee) is used, as the reference
 *     code's adaptive sampler does (threshold 2.5, step 8, at most the
 *     plan size); the candidate nearest each centroid is measured;
 *  4. sample synthesis: when that candidate was already measured (or is
 *     already this round's), the cluster's most frequent choice of each
 *     knob (ties: the smaller choice) is measured instead, if new.
 * Before WARMUP measurements random points are measured (AutoTVM's and
 * CHAMELEON's first plan).
 *
 * Hyper-parameters are the reference implementation's
 * (anony-sub/chameleon, rl_model_optimizer.py and rl_tuner.py): PPO
 * lr 1e-3, 3 epochs, minibatches of 32 rows, gamma 0.9, GAE lambda 0.99,
 * clip 0.2, value coefficient 1, entropy coefficient 0.3, no gradient
 * clipping; plan size 64.  Ours: hidden layers of 64, 16 episodes of 16
 * steps, the heads' initial stay probability 0.9 (ppo.h), and walks that
 * start as DCO-Comp's do (three quarters from the best measured): the
 * rollouts are DCO-Comp's, so that the comparison is of the agents and
 * samplers, not of how much walking each does (the reference runs 128
 * walks of up to 500 steps per plan).
 */
#include "ppo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STAY 0.9
#define EPISODES 16
#define HORIZON 16
#define PLAN 64
#define K_STEP 8
#define LOSS_RATIO 2.5
#define WARMUP 64
#define TOP_STARTS 8
#define BOOST_ROUNDS 50
#define KMEANS_ITERATIONS 100

static const tn_ppo_params chameleon_params = {.hidden = 64,
                                               .episodes = EPISODES,
                                               .horizon = HORIZON,
                                               .terminal = false,
                                               .stay = STAY,
                                               .gamma = 0.9,
                                               .lambda = 0.99,
                                               .clip = 0.2,
                                               .value_coef = 1.0,
                                               .entropy_coef = 0.3,
                                               .actor_lr = 1e-3,
                                               .critic_lr = 1e-3,
                                               .max_grad_norm = 0,
                                               .epochs = 3,
                                               .minibatches = EPISODES * HORIZON / 32};

#define ROWS (EPISODES * HORIZON)

typedef struct chameleon {
    const tn_space *sp;
    as_rng rng;
    tn_walk walk;
    tn_surrogate model;
    tn_point starts[EPISODES];
    tn_point seen[ROWS]; /* distinct visited points */
    double score[ROWS];
    int order[ROWS];
    tn_point cand[PLAN];
    double x[PLAN * TN_FEATURES];
    double centroids[PLAN * TN_FEATURES];
    int assignment[PLAN], best_assignment[PLAN];
    double best_centroids[PLAN * TN_FEATURES];
} chameleon;

static void chameleon_free(void *state)
{
    chameleon *c = state;
    if (!c)
        return;
    tn_walk_free(&c->walk);
    tn_surrogate_free(&c->model);
    free(c);
}

static as_code chameleon_init(void **state, const tn_space *sp, const tn_options *o, as_rng *rng,
                              as_status *st)
{
    (void)o;
    chameleon *c = calloc(1, sizeof *c);
    if (!c)
        return as_fail(st, AS_ENOMEM, "chameleon: out of memory for %s", sp->layer.name);
    c->sp = sp;
    c->rng = (as_rng){as_rng_next(rng)};
    as_code code = tn_walk_init(&c->walk, sp, &chameleon_params, 1, &c->rng, st);
    if (code == AS_OK)
        code = tn_surrogate_init(&c->model, sp, ROWS, st);
    if (code != AS_OK) {
        chameleon_free(c);
        return code;
    }
    *state = c;
    return AS_OK;
}

/* Step 2: the PLAN distinct visited points of highest reward (the
 * rewards the rollout saw), into c->cand; returns how many. */
static int candidates(chameleon *c)
{
    tn_walk *w = &c->walk;
    int n = 0;
    for (int i = 0; i < w->n_visited; i++)
        if (!tn_points_contain(c->seen, n, &w->visited[i])) {
            c->seen[n] = w->visited[i];
            c->score[n++] = w->ppo.reward[i];
        }
    tn_order_by(c->score, n, c->order);
    int plan = n < PLAN ? n : PLAN;
    for (int i = 0; i < plan; i++)
        c->cand[i] = c->seen[c->order[i]];
    return plan;
}

/* The candidates' features, each standardised over them (a constant
 * feature becomes 0). */
static void standard_features(chameleon *c, int n)
{
    for (int i = 0; i < n; i++)
        tn_space_features(c->sp, &c->cand[i], c->x + (size_t)i * TN_FEATURES);
    for (int f = 0; f < TN_FEATURES; f++) {
        double mean = 0, var = 0;
        for (int i = 0; i < n; i++)
            mean += c->x[i * TN_FEATURES + f];
        mean /= n;
        for (int i = 0; i < n; i++)
            var += pow(c->x[i * TN_FEATURES + f] - mean, 2);
        double sd = sqrt(var / n);
        for (int i = 0; i < n; i++)
            c->x[i * TN_FEATURES + f] = sd > 0 ? (c->x[i * TN_FEATURES + f] - mean) / sd : 0;
    }
}

static double distance2(const double *a, const double *b)
{
    double sum = 0;
    for (int f = 0; f < TN_FEATURES; f++)
        sum += (a[f] - b[f]) * (a[f] - b[f]);
    return sum;
}

/* Step 3: cluster the n candidates at growing k until the
 * within-cluster sum of squares stops falling by LOSS_RATIO; leaves the
 * chosen clustering in best_assignment / best_centroids, returns its k. */
static int adaptive_clusters(chameleon *c, int n)
{
    double last_loss = INFINITY;
    int k_used = 0;
    for (int k = K_STEP < n ? K_STEP : n; k <= n; k += K_STEP) {
        tn_kmeans(c->x, n, TN_FEATURES, k, &c->rng, KMEANS_ITERATIONS, c->assignment, c->centroids);
        double loss = 0;
        for (int i = 0; i < n; i++)
            loss +=
                distance2(c->x + i * TN_FEATURES, c->centroids + c->assignment[i] * TN_FEATURES);
        k_used = k;
        memcpy(c->best_assignment, c->assignment, sizeof(int) * (size_t)n);
        memcpy(c->best_centroids, c->centroids, sizeof(double) * (size_t)k * TN_FEATURES);
        if (loss >= last_loss / LOSS_RATIO || k + K_STEP > PLAN)
            break;
        last_loss = loss;
    }
    return k_used;
}

/* Step 4: the most frequent choice of every knob among cluster `cl`'s
 * members. */
static void synthesise(const chameleon *c, int n, int cl, tn_point *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < TN_KNOBS; k++) {
        int count[TN_MAX_CHOICES] = {0}, top = 0;
        for (int i = 0; i < n; i++)
            if (c->best_assignment[i] == cl)
                count[c->cand[i].choice[k]]++;
        for (int v = 1; v < c->sp->n_choices[k]; v++)
            if (count[v] > count[top])
                top = v;
        out->choice[k] = (uint8_t)top;
    }
}

/* Steps 3 and 4: one point per cluster into out; returns how many. */
static int adaptive_sample(chameleon *c, const tn_history *h, int n, tn_point *out, int max)
{
    if (n == 0)
        return 0;
    standard_features(c, n);
    int k = adaptive_clusters(c, n), picked = 0;
    for (int cl = 0; cl < k && picked < max; cl++) {
        int nearest = -1;
        double dist = INFINITY;
        for (int i = 0; i < n; i++) {
            if (c->best_assignment[i] != cl)
                continue;
            double d2 = distance2(c->x + i * TN_FEATURES, c->best_centroids + cl * TN_FEATURES);
            if (d2 < dist) {
                dist = d2;
                nearest = i;
            }
        }
        if (nearest < 0)
            continue; /* an empty cluster */
        tn_point pt = c->cand[nearest];
        if (tn_history_find(h, &pt) >= 0 || tn_points_contain(out, picked, &pt))
            synthesise(c, n, cl, &pt);
        if (tn_history_find(h, &pt) < 0 && !tn_points_contain(out, picked, &pt))
            out[picked++] = pt;
    }
    return picked;
}

static int chameleon_propose(void *state, const tn_history *h, tn_point *out, int max)
{
    chameleon *c = state;
    if (max > PLAN)
        max = PLAN;
    if (h->n < WARMUP || !tn_surrogate_fit(&c->model, h, 1, BOOST_ROUNDS, as_rng_next(&c->rng))) {
        tn_space_default(c->sp, &out[0]);
        int n = tn_history_find(h, &out[0]) < 0;
        return tn_fill_random(c->sp, h, out, n, max, 64 * max, &c->rng);
    }
    tn_walk_starts(&c->walk, h, EPISODES * 3 / 4, TOP_STARTS, &c->rng, c->starts);
    tn_walk_rollout(&c->walk, c->starts, tn_surrogate_reward, &c->model, &c->rng);
    int n = candidates(c);
    tn_ppo_update(&c->walk.ppo, &c->rng);
    return adaptive_sample(c, h, n, out, max);
}

const tn_engine_ops tn_chameleon_ops = {.name = "chameleon",
                                        .init = chameleon_init,
                                        .propose = chameleon_propose,
                                        .free = chameleon_free};
