/*
 * test_dcocomp.c -- MAPPO (ppo.c) and the two reinforcement-learning
 * tuners built on it, DCO-Comp and the CHAMELEON-style one.  PPO: GAE
 * against a hand computation, the clipped surrogate's gradient (zero
 * where the clip holds, the advantage elsewhere; no actor update when
 * every ratio is clipped), a one-knob bandit and a two-agent cooperative
 * bandit learnt to above 0.9.  Engines, through the driver on a real
 * ResNet-18 layer of the `vta` preset: only valid points as best, better
 * than TVM's default point within 300 trials, identical histories for one
 * seed (and at one and two threads over the whole model), and DCO-Comp
 * with confidence sampling on and off.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/ppo.h"

#define assert_near(got, want, tol) near_or_fail((got), (want), (tol), #got, __LINE__)
static void near_or_fail(double got, double want, double tol, const char *what, int line)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("line %d: %s = %.17g, expected %.17g (tolerance %g)", line, what, got, want, tol);
}

/* ------------------------------------------------------------------ GAE */

/* T = 3, gamma 0.9, lambda 0.8, bootstrap 0.4, worked by hand:
 *   t=2: delta = 2 + 0.9*0.4 - 1.0 = 1.36,          A = 1.36
 *   t=1: delta = 0 + 0.9*1.0 - 0.2 = 0.70,          A = 0.70 + 0.72*1.36   = 1.6792
 *   t=0: delta = 1 + 0.9*0.2 - 0.5 = 0.68,          A = 0.68 + 0.72*1.6792 = 1.889024
 * returns R = A + V. */
static void test_gae_by_hand(void **unused)
{
    (void)unused;
    const double reward[3] = {1, 0, 2}, value[3] = {0.5, 0.2, 1.0};
    double adv[3], ret[3];
    tn_ppo_gae(reward, value, 3, 1, 0.4, 0.9, 0.8, adv, ret);
    assert_near(adv[2], 1.36, 1e-12);
    assert_near(adv[1], 1.6792, 1e-12);
    assert_near(adv[0], 1.889024, 1e-12);
    assert_near(ret[0], 2.389024, 1e-12);
    assert_near(ret[1], 1.8792, 1e-12);
    assert_near(ret[2], 2.36, 1e-12);

    /* The same episode interleaved with another (stride 2) gives the same. */
    const double r2[6] = {1, 9, 0, 9, 2, 9}, v2[6] = {0.5, 9, 0.2, 9, 1.0, 9};
    double a2[6] = {0}, R2[6] = {0};
    tn_ppo_gae(r2, v2, 3, 2, 0.4, 0.9, 0.8, a2, R2);
    for (int t = 0; t < 3; t++) {
        assert_near(a2[2 * t], adv[t], 1e-12);
        assert_near(R2[2 * t], ret[t], 1e-12);
        assert_near(a2[2 * t + 1], 0, 0); /* the other episode untouched */
    }

    /* lambda = 1, gamma = 1: the advantage is the Monte-Carlo return minus V. */
    tn_ppo_gae(reward, value, 3, 1, 0.4, 1.0, 1.0, adv, ret);
    assert_near(ret[0], 1 + 0 + 2 + 0.4, 1e-12);
    assert_near(adv[1], 0 + 2 + 0.4 - 0.2, 1e-12);
}

/* ------------------------------------------------------- clipped surrogate */

static double surrogate(double r, double a, double eps)
{
    double clipped = fmin(fmax(r, 1 - eps), 1 + eps);
    return fmin(r * a, clipped * a);
}

static void test_surrogate_gradient(void **unused)
{
    (void)unused;
    const double eps = 0.2;
    /* Clipped: the objective is flat, the gradient zero. */
    assert_near(tn_ppo_surrogate_grad(1.3, 1.0, eps), 0, 0);
    assert_near(tn_ppo_surrogate_grad(2.5, 0.3, eps), 0, 0);
    assert_near(tn_ppo_surrogate_grad(0.7, -1.0, eps), 0, 0);
    assert_near(tn_ppo_surrogate_grad(0.1, -0.4, eps), 0, 0);
    /* Unclipped (inside the range, or outside on the pessimistic side). */
    assert_near(tn_ppo_surrogate_grad(1.1, 2.0, eps), 2.0, 0);
    assert_near(tn_ppo_surrogate_grad(0.9, -2.0, eps), -2.0, 0);
    assert_near(tn_ppo_surrogate_grad(1.3, -1.0, eps), -1.0, 0);
    assert_near(tn_ppo_surrogate_grad(0.7, 1.0, eps), 1.0, 0);
    /* Against finite differences over a grid (away from the kinks). */
    for (double r = 0.05; r < 2.0; r += 0.1)
        for (double a = -2; a <= 2; a += 0.5) {
            double h = 1e-6;
            double fd = (surrogate(r + h, a, eps) - surrogate(r - h, a, eps)) / (2 * h);
            assert_near(tn_ppo_surrogate_grad(r, a, eps), fd, 1e-6);
        }
}

static tn_ppo_params bandit_params(int episodes)
{
    return (tn_ppo_params){.hidden = 16,
                           .episodes = episodes,
                           .horizon = 1,
                           .terminal = true,
                           .gamma = 0.99,
                           .lambda = 0.95,
                           .clip = 0.2,
                           .value_coef = 1.0,
                           .entropy_coef = 0.01,
                           .actor_lr = 0.01,
                           .critic_lr = 0.01,
                           .max_grad_norm = 10.0,
                           .epochs = 4,
                           .minibatches = 2};
}

static void init_or_fail(tn_ppo *p, const tn_ppo_params *par, int agents, const int *heads,
                         int actions, int dim, as_rng *rng)
{
    as_status st;
    as_status_clear(&st);
    if (tn_ppo_init(p, par, agents, heads, actions, dim, rng, &st) != AS_OK)
        fail_msg("tn_ppo_init: %s", st.message);
}

/* When every ratio sits beyond the clip on the side the clip holds, the
 * actor's gradient is zero (entropy bonus off): its weights do not move,
 * while the critic's do. */
static void test_clipped_rows_leave_actor(void **unused)
{
    (void)unused;
    as_rng rng = as_rng_stream(5, 0, AS_RNG_FROM_FIRST_OUTPUT);
    tn_ppo_params par = bandit_params(8);
    par.entropy_coef = 0;
    par.epochs = 1;
    par.minibatches = 1;
    tn_ppo p;
    int heads[1] = {1};
    init_or_fail(&p, &par, 1, heads, 3, 1, &rng);
    double states[8];
    int actions[8];
    for (int e = 0; e < 8; e++)
        states[e] = 1.0;
    tn_ppo_act(&p, 0, states, &rng, actions);
    /* Same state everywhere: the advantage is +1 for reward 1, -1 for 0
     * after normalisation.  Put each ratio beyond the clip on its side. */
    for (int e = 0; e < 8; e++) {
        p.reward[e] = e % 2;
        p.logp[e] += e % 2 ? -1.0 : 1.0; /* ratio e^1 with A > 0, e^-1 with A < 0 */
    }
    gsl_matrix *before = gsl_matrix_alloc(p.actor[0].weight[0]->size1, p.actor[0].weight[0]->size2);
    gsl_matrix_memcpy(before, p.actor[0].weight[0]);
    double critic_before = gsl_matrix_get(p.critic.weight[0], 0, 0);
    tn_ppo_update(&p, &rng);
    for (size_t i = 0; i < before->size1; i++)
        for (size_t j = 0; j < before->size2; j++)
            assert_near(gsl_matrix_get(p.actor[0].weight[0], i, j), gsl_matrix_get(before, i, j),
                        0);
    assert_true(gsl_matrix_get(p.critic.weight[0], 0, 0) != critic_before);

    /* The same rollout with ratios of 1 does move the actor. */
    tn_ppo_act(&p, 0, states, &rng, actions);
    for (int e = 0; e < 8; e++)
        p.reward[e] = actions[e] == 2;
    tn_ppo_update(&p, &rng);
    bool moved = false;
    for (size_t i = 0; i < before->size1; i++)
        for (size_t j = 0; j < before->size2; j++)
            moved |= gsl_matrix_get(p.actor[0].weight[0], i, j) != gsl_matrix_get(before, i, j);
    assert_true(moved);
    gsl_matrix_free(before);
    tn_ppo_free(&p);
}

/* ----------------------------------------------------------------- bandits */

/* One knob, moves {-1, 0, +1}: the reward is 1 for +1, 0 otherwise.
 * The policy's probability of +1 rises from a third to above 0.9. */
static void test_bandit_learns(void **unused)
{
    (void)unused;
    as_rng rng = as_rng_stream(11, 0, AS_RNG_FROM_FIRST_OUTPUT);
    tn_ppo_params par = bandit_params(16);
    tn_ppo p;
    int heads[1] = {1};
    init_or_fail(&p, &par, 1, heads, 3, 1, &rng);
    double states[16], probs[3];
    int actions[16];
    for (int e = 0; e < 16; e++)
        states[e] = 1.0;
    tn_ppo_policy(&p, 0, states, probs);
    assert_near(probs[2], 1.0 / 3, 0.05);
    for (int round = 0; round < 60; round++) {
        tn_ppo_act(&p, 0, states, &rng, actions);
        for (int e = 0; e < 16; e++)
            p.reward[e] = actions[e] == 2 ? 1.0 : 0.0;
        tn_ppo_update(&p, &rng);
    }
    tn_ppo_policy(&p, 0, states, probs);
    assert_true(probs[2] > 0.9);
    tn_ppo_free(&p);
}

/* Two agents, one head each, a shared (team) reward of 1 only when both
 * pick action 0: both learn it through the centralised critic. */
static void test_cooperative_bandit(void **unused)
{
    (void)unused;
    as_rng rng = as_rng_stream(12, 0, AS_RNG_FROM_FIRST_OUTPUT);
    tn_ppo_params par = bandit_params(32);
    tn_ppo p;
    int heads[2] = {1, 1};
    init_or_fail(&p, &par, 2, heads, 3, 1, &rng);
    double states[32], probs[3];
    int actions[64];
    for (int e = 0; e < 32; e++)
        states[e] = 1.0;
    for (int round = 0; round < 100; round++) {
        tn_ppo_act(&p, 0, states, &rng, actions);
        for (int e = 0; e < 32; e++)
            p.reward[e] = actions[2 * e] == 0 && actions[2 * e + 1] == 0 ? 1.0 : 0.0;
        tn_ppo_update(&p, &rng);
    }
    for (int a = 0; a < 2; a++) {
        tn_ppo_policy(&p, a, states, probs);
        assert_true(probs[0] > 0.9);
    }
    tn_ppo_free(&p);
}

/* --------------------------------------------------------------- engines */

/* The space of ResNet-18's 3x3 256 -> 256 conv (layer3) on the `vta`
 * preset under the PYNQ budget, hardware knobs varying. */
static void resnet18_space(tn_space *sp)
{
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    if (wl_zoo_build("resnet18", &g, &st) != AS_OK)
        fail_msg("resnet18: %s", st.message);
    tn_conv *layers;
    int n, skipped;
    if (tn_model_layers(g, &layers, &n, &skipped, &st) != AS_OK)
        fail_msg("layers: %s", st.message);
    int pick = -1;
    for (int i = 0; i < n; i++)
        if (layers[i].c == 256 && layers[i].k == 256 && layers[i].r == 3)
            pick = i;
    assert_true(pick >= 0);
    arch_spec a;
    tn_hw hw;
    if (arch_load("vta", &a, &st) != AS_OK || tn_hw_from_arch(&a, &hw, &st) != AS_OK ||
        tn_space_init(sp, &layers[pick], &hw, tn_budget_find("pynq"), true, &st) != AS_OK)
        fail_msg("vta space: %s", st.message);
    free(layers);
    wl_graph_free(g);
}

static void tune_or_fail(const tn_space *sp, tn_engine engine, bool cs, int64_t trials,
                         uint64_t seed, tn_layer_result *r)
{
    tn_options o;
    tn_options_default(&o);
    o.engine = engine;
    o.confidence_sampling = cs;
    o.trials = trials;
    o.seed = seed;
    as_status st;
    as_status_clear(&st);
    if (tn_tune_layer(sp, &o, r, &st) != AS_OK)
        fail_msg("%s: %s", tn_engine_name(engine), st.message);
}

/* Best is valid, is the history's best, and beats TVM's default point;
 * every trial is a point of the space. */
static void check_result(const tn_space *sp, const tn_layer_result *r, int64_t trials)
{
    assert_int_equal(r->n_trials, trials);
    assert_true(r->best >= 0);
    const tn_result *best = &r->trials[r->best].result;
    assert_true(best->valid);
    tn_result again;
    tn_space_measure(sp, &r->trials[r->best].point, &again);
    assert_true(again.valid);
    assert_near(again.gflops, best->gflops, 0);
    for (int64_t i = 0; i < r->n_trials; i++) {
        for (int k = 0; k < TN_KNOBS; k++)
            assert_true(r->trials[i].point.choice[k] < sp->n_choices[k]);
        if (r->trials[i].result.valid)
            assert_true(r->trials[i].result.gflops <= best->gflops);
    }
    tn_point def;
    tn_space_default(sp, &def);
    tn_result d;
    tn_space_measure(sp, &def, &d);
    assert_true(!d.valid || best->gflops > d.gflops);
}

static void same_history(const tn_layer_result *a, const tn_layer_result *b)
{
    assert_int_equal(a->n_trials, b->n_trials);
    assert_int_equal(a->best, b->best);
    for (int64_t i = 0; i < a->n_trials; i++) {
        assert_true(tn_point_equal(&a->trials[i].point, &b->trials[i].point));
        assert_near(a->trials[i].result.gflops, b->trials[i].result.gflops, 0);
    }
}

static void engine_case(tn_engine engine, bool cs)
{
    tn_space sp;
    resnet18_space(&sp);
    tn_layer_result r1, r2;
    tune_or_fail(&sp, engine, cs, 300, 7, &r1);
    check_result(&sp, &r1, 300);
    tune_or_fail(&sp, engine, cs, 300, 7, &r2);
    same_history(&r1, &r2);
    tn_layer_result_free(&r1);
    tn_layer_result_free(&r2);
}

static void test_dcocomp_engine(void **unused)
{
    (void)unused;
    engine_case(TN_ENGINE_DCOCOMP, true);
}

static void test_dcocomp_without_cs(void **unused)
{
    (void)unused;
    engine_case(TN_ENGINE_DCOCOMP, false);
}

static void test_chameleon_engine(void **unused)
{
    (void)unused;
    engine_case(TN_ENGINE_CHAMELEON, true);
}

/* Another seed gives another history (the seed reaches the engine). */
static void test_seed_matters(void **unused)
{
    (void)unused;
    tn_space sp;
    resnet18_space(&sp);
    tn_layer_result a, b;
    tune_or_fail(&sp, TN_ENGINE_DCOCOMP, true, 100, 1, &a);
    tune_or_fail(&sp, TN_ENGINE_DCOCOMP, true, 100, 2, &b);
    bool differ = false;
    for (int64_t i = 0; i < a.n_trials && i < b.n_trials; i++)
        differ |= !tn_point_equal(&a.trials[i].point, &b.trials[i].point);
    assert_true(differ);
    tn_layer_result_free(&a);
    tn_layer_result_free(&b);
}

/* A whole model at one and at two threads: the same history per layer
 * (each layer's engine draws from its own stream). */
static void test_threads_same(void **unused)
{
    (void)unused;
    as_status st;
    as_status_clear(&st);
    wl_graph *g = NULL;
    arch_spec a;
    tn_hw hw;
    if (wl_zoo_build("resnet18", &g, &st) != AS_OK || arch_load("vta", &a, &st) != AS_OK ||
        tn_hw_from_arch(&a, &hw, &st) != AS_OK)
        fail_msg("%s", st.message);
    const tn_engine engines[2] = {TN_ENGINE_DCOCOMP, TN_ENGINE_CHAMELEON};
    for (int e = 0; e < 2; e++) {
        tn_model_result r[2];
        for (int t = 0; t < 2; t++) {
            tn_options o;
            tn_options_default(&o);
            o.engine = engines[e];
            o.trials = 96; /* past both engines' random warm-up */
            o.seed = 3;
            o.threads = t + 1;
            if (tn_tune_model(g, &hw, &o, &r[t], &st) != AS_OK)
                fail_msg("%s: %s", tn_engine_name(o.engine), st.message);
        }
        assert_int_equal(r[0].n_layers, r[1].n_layers);
        for (int i = 0; i < r[0].n_layers; i++)
            same_history(&r[0].layers[i], &r[1].layers[i]);
        assert_near(r[0].gflops, r[1].gflops, 0);
        tn_model_result_free(&r[0]);
        tn_model_result_free(&r[1]);
    }
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gae_by_hand),
        cmocka_unit_test(test_surrogate_gradient),
        cmocka_unit_test(test_clipped_rows_leave_actor),
        cmocka_unit_test(test_bandit_learns),
        cmocka_unit_test(test_cooperative_bandit),
        cmocka_unit_test(test_dcocomp_engine),
        cmocka_unit_test(test_dcocomp_without_cs),
        cmocka_unit_test(test_chameleon_engine),
        cmocka_unit_test(test_seed_matters),
        cmocka_unit_test(test_threads_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
