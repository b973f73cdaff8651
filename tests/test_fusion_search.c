/*
 * test_fusion_search.c -- the fusion searches: the GA's operators keep
 * plans valid (property tests on random DAGs), the DP is exact on its
 * space (brute force on short chains), the GA reaches the DP's optimum
 * within 1% on chain networks (zoo AlexNet and VGG-16, random conv chains)
 * and gives the same plan for a seed whatever the thread count and the
 * step sizes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fusion/fusion_private.h"

/* Members are mapped by random-pruned search, MAPPER_BUDGET mappings per
 * distinct tile problem (the heuristic's local searches take 1000 at
 * least): the searches compare plans under one evaluator, so the mapper's
 * quality does not matter here, and each network is costed in seconds. */
#define MAPPER_BUDGET 128
/* Plans the GA may score to come within 1% of the DP (cheap: the
 * evaluator caches groups, so most plans cost a few lookups). */
#define GA_BUDGET 8000
#define GA_POPULATION 24

/* ------------------------------------------------------------- helpers */

/* Deterministic numbers for building graphs (xorshift64*). */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

static int32_t tensor(wl_graph *g, const char *name, wl_tensor_kind kind, int rank,
                      const int64_t *dims)
{
    as_status st = {0};
    int32_t t = wl_add_tensor(g, name, kind, WL_DTYPE_F32, rank, dims, &st);
    if (t < 0)
        fail_msg("%s", st.message);
    return t;
}

static void op(wl_graph *g, wl_op_kind kind, const char *name, int n_in, const int32_t *in,
               int32_t out, const wl_attrs *attrs)
{
    as_status st = {0};
    if (wl_add_op(g, kind, name, NULL, n_in, in, 1, &out, attrs, &st) < 0)
        fail_msg("%s", st.message);
}

/* A random DAG of n elementwise ops on [1, 8] tensors: Relu, Add of two
 * earlier tensors (mostly recent ones, so that branches join), and
 * Identity views in between; indexed, not inferred (shapes are given). */
static wl_graph *random_dag(uint64_t seed, int n)
{
    uint64_t s = seed * 2654435761u + 1;
    wl_graph *g = wl_graph_new("dag", "test:dag");
    int64_t dims[2] = {1, 8};
    int32_t t[64];
    t[0] = tensor(g, "x", WL_TENSOR_INPUT, 2, dims);
    wl_add_graph_input(g, t[0]);
    for (int i = 1; i <= n; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        t[i] = tensor(g, name, WL_TENSOR_ACTIVATION, 2, dims);
        int32_t a = t[i - 1 - (int)(rnd(&s) % (uint64_t)(i < 3 ? i : 3))];
        int32_t b = t[rnd(&s) % (uint64_t)i];
        int k = (int)(rnd(&s) % 10);
        snprintf(name, sizeof name, "op%d", i);
        if (k < 5)
            op(g, WL_OP_RELU, name, 1, &a, t[i], NULL);
        else if (k < 8)
            op(g, WL_OP_ADD, name, 2, (int32_t[]){a, b}, t[i], NULL);
        else
            op(g, WL_OP_IDENTITY, name, 1, &a, t[i], NULL);
    }
    wl_add_graph_output(g, t[n]);
    as_status st = {0};
    if (wl_graph_index(g, &st) != AS_OK)
        fail_msg("%s", st.message);
    return g;
}

/* A random chain of 3x3 convolutions (same padding), each maybe followed
 * by a Relu and a 2x2 max pool, on a 1 x c x hw x hw input; inferred. */
static wl_graph *random_conv_chain(uint64_t seed, int n_convs)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7;
    static const int64_t channels[] = {8, 16, 24, 32};
    wl_graph *g = wl_graph_new("chain", "test:chain");
    int64_t c = channels[rnd(&s) % 4], hw = 16 + 8 * (int64_t)(rnd(&s) % 3);
    int32_t x = tensor(g, "x", WL_TENSOR_INPUT, 4, (int64_t[]){1, c, hw, hw});
    wl_add_graph_input(g, x);
    int n = 0;
    for (int i = 0; i < n_convs; i++) {
        char name[24], wname[24];
        int64_t m = channels[rnd(&s) % 4];
        snprintf(wname, sizeof wname, "w%d", i);
        int32_t w = tensor(g, wname, WL_TENSOR_WEIGHT, 4, (int64_t[]){m, c, 3, 3});
        wl_attrs a;
        wl_attrs_default(&a, WL_OP_CONV);
        for (int k = 0; k < 4; k++)
            a.pads[k] = 1;
        snprintf(name, sizeof name, "y%d", n);
        int32_t y = tensor(g, name, WL_TENSOR_ACTIVATION, 0, NULL);
        snprintf(name, sizeof name, "conv%d", i);
        op(g, WL_OP_CONV, name, 2, (int32_t[]){x, w}, y, &a);
        x = y, c = m, n++;
        if (rnd(&s) % 3 != 0) {
            snprintf(name, sizeof name, "y%d", n);
            y = tensor(g, name, WL_TENSOR_ACTIVATION, 0, NULL);
            snprintf(name, sizeof name, "relu%d", i);
            op(g, WL_OP_RELU, name, 1, &x, y, NULL);
            x = y, n++;
        }
        if (hw >= 16 && rnd(&s) % 3 == 0) {
            wl_attrs_default(&a, WL_OP_MAX_POOL);
            a.kernel_shape[0] = a.kernel_shape[1] = 2;
            a.strides[0] = a.strides[1] = 2;
            snprintf(name, sizeof name, "y%d", n);
            y = tensor(g, name, WL_TENSOR_ACTIVATION, 0, NULL);
            snprintf(name, sizeof name, "pool%d", i);
            op(g, WL_OP_MAX_POOL, name, 1, &x, y, &a);
            x = y, hw /= 2, n++;
        }
    }
    wl_add_graph_output(g, x);
    as_status st = {0};
    if (wl_graph_infer(g, &st) != AS_OK)
        fail_msg("%s", st.message);
    return g;
}

static wl_graph *zoo(const char *name)
{
    as_status st = {0};
    wl_graph *g = NULL;
    if (wl_zoo_build(name, &g, &st) != AS_OK)
        fail_msg("%s", st.message);
    return g;
}

static fu_evaluator *evaluator(const wl_graph *g, const char *preset, arch_spec *a)
{
    as_status st = {0};
    if (arch_load(preset, a, &st) != AS_OK)
        fail_msg("%s", st.message);
    fu_cost_options o;
    fu_cost_options_default(&o);
    o.search.algorithm = MAP_ALGO_RANDOM_PRUNED;
    o.budget_per_problem = MAPPER_BUDGET;
    fu_evaluator *e = NULL;
    if (fu_evaluator_new(&e, g, a, &o, &st) != AS_OK)
        fail_msg("%s", st.message);
    return e;
}

/* CASCO's objective from a plan's cost, computed here from the cost's own
 * fields: (on-chip + off-chip energy) [J] x cycles. */
static double casco(const fu_plan_cost *c)
{
    return c->valid ? (c->onchip_energy_pJ + c->dram_energy_pJ) * 1e-12 * (double)c->cycles
                    : INFINITY;
}

static void assert_plan_valid(const wl_graph *g, const fu_plan *p)
{
    char reason[256];
    if (!fu_plan_valid(g, p, reason, sizeof reason))
        fail_msg("invalid plan: %s", reason);
}

/* What a search ended with. */
typedef struct outcome {
    fu_plan plan;
    double value; /* casco() of the best plan's cost */
    int64_t evaluated;
    int n_curve;
} outcome;

/* Run a search to its end in steps of `step` evaluations; check that the
 * best plan is valid, that the curve never rises and ends at the best
 * plan's value. */
static outcome search(fu_evaluator *e, fu_algorithm algo, uint64_t seed, int threads,
                      int64_t budget, int64_t step)
{
    fu_search_options o;
    fu_search_options_default(&o);
    o.algorithm = algo;
    o.seed = seed;
    o.threads = threads;
    o.budget = budget;
    o.population = GA_POPULATION;
    as_status st = {0};
    fu_search *s = NULL;
    if (fu_search_init(&s, e, &o, &st) != AS_OK)
        fail_msg("%s", st.message);
    for (int guard = 0; fu_search_step(s, step); guard++)
        assert_true(guard < 1000000);
    outcome r;
    fu_plan_cost cost;
    memset(&cost, 0, sizeof cost);
    if (fu_search_best(s, &r.plan, &cost, &st) != AS_OK)
        fail_msg("%s", st.message);
    assert_plan_valid(fu_evaluator_graph(e), &r.plan);
    r.value = casco(&cost);
    r.evaluated = fu_search_evaluated(s);
    const double *curve = fu_search_curve(s, &r.n_curve);
    assert_true(r.n_curve >= 1);
    for (int i = 1; i < r.n_curve; i++)
        assert_true(curve[i] <= curve[i - 1]);
    assert_true(fabs(curve[r.n_curve - 1] - r.value) <= 1e-12 * r.value);
    fu_plan_cost_free(&cost);
    fu_search_free(s);
    return r;
}

/* ---------------------------------------------------------- operators */

static bool canonical(const wl_graph *g, const fu_plan *p)
{
    fu_plan c;
    assert_int_equal(fu_plan_copy(&c, p, NULL), AS_OK);
    fu_plan_canonicalize(g, &c);
    bool same = fu_plan_equal(&c, p);
    fu_plan_free(&c);
    return same;
}

/* Random plans, children and each mutation are valid and canonical on
 * random DAGs; merge removes a group, split adds one, steal keeps the
 * count or empties the op's old group; a rejected mutation changes
 * nothing; and every operator changes plans often. */
static void test_operators_keep_plans_valid(void **state)
{
    (void)state;
    int changed[FU_N_MUTATIONS] = {0}, children_new = 0, children = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        wl_graph *g = random_dag(seed, 6 + (int)(seed % 20));
        fu_plan a, b;
        assert_int_equal(fu_ga_random_plan(g, seed, &a, NULL), AS_OK);
        assert_int_equal(fu_ga_random_plan(g, seed + 1000, &b, NULL), AS_OK);
        assert_plan_valid(g, &a);
        assert_plan_valid(g, &b);
        assert_true(canonical(g, &a) && canonical(g, &b));
        for (uint64_t k = 0; k < 10; k++) {
            fu_plan child;
            assert_int_equal(fu_ga_child(g, &a, &b, seed * 100 + k, &child, NULL), AS_OK);
            assert_plan_valid(g, &child);
            assert_true(canonical(g, &child));
            children++;
            children_new += !fu_plan_equal(&child, &a) && !fu_plan_equal(&child, &b);
            for (int kind = 0; kind < FU_N_MUTATIONS; kind++) {
                fu_plan m;
                bool did;
                assert_int_equal(fu_plan_copy(&m, &child, NULL), AS_OK);
                assert_int_equal(fu_ga_mutate(g, &m, (fu_mutation)kind, seed * 7 + k, &did, NULL),
                                 AS_OK);
                assert_plan_valid(g, &m);
                assert_true(canonical(g, &m));
                int32_t delta = m.n_groups - child.n_groups;
                if (!did)
                    assert_true(fu_plan_equal(&m, &child));
                else if (kind == FU_MUTATE_MERGE)
                    assert_int_equal(delta, -1);
                else if (kind == FU_MUTATE_SPLIT)
                    assert_int_equal(delta, 1);
                else
                    assert_true(delta == 0 || delta == -1);
                changed[kind] += did;
                fu_plan_free(&m);
            }
            fu_plan_free(&child);
        }
        fu_plan_free(&a);
        fu_plan_free(&b);
        wl_graph_free(g);
    }
    for (int kind = 0; kind < FU_N_MUTATIONS; kind++)
        assert_true(changed[kind] > 60); /* of 600 tries each */
    assert_true(children_new > children / 4);
}

/* ------------------------------------------------------------------ DP */

/* The DP equals the best of every interval partition of a short conv
 * chain (all runs fit DP's run limit), found by brute force. */
static void test_dp_is_exact_on_short_chains(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 2; seed++) {
        wl_graph *g = random_conv_chain(seed, 3);
        arch_spec a;
        fu_evaluator *e = evaluator(g, "gemmini", &a);
        int32_t work[64];
        int32_t n = fu_working_ops(g, work);
        assert_true(n >= 3 && n <= 8);
        double brute = INFINITY;
        fu_plan p;
        assert_int_equal(fu_plan_init(&p, g, NULL), AS_OK);
        for (uint32_t cuts = 0; cuts < (1u << (n - 1)); cuts++) {
            int32_t gid = 0;
            for (int32_t k = 0; k < n; k++) {
                p.group[work[k]] = gid;
                gid += k < n - 1 && (cuts >> k & 1);
            }
            p.n_groups = gid + 1;
            assert_plan_valid(g, &p);
            fu_plan_cost c;
            memset(&c, 0, sizeof c);
            assert_int_equal(fu_plan_evaluate(e, &p, &c, NULL), AS_OK);
            if (casco(&c) < brute)
                brute = casco(&c);
            fu_plan_cost_free(&c);
        }
        fu_plan_free(&p);
        outcome dp = search(e, FU_ALGO_DP, 1, 1, 0, 5);
        assert_true(isfinite(brute));
        if (fabs(dp.value - brute) > 1e-9 * brute)
            fail_msg("seed %d: DP %.9g, brute force %.9g", (int)seed, dp.value, brute);
        fu_plan_free(&dp.plan);
        fu_evaluator_free(e);
        wl_graph_free(g);
    }
}

/* ---------------------------------------------------------- GA vs DP */

/* The GA (GA_BUDGET plans, 2 threads) comes within 1% of the DP on g. */
static void ga_near_dp(wl_graph *g, const char *preset, uint64_t seed)
{
    arch_spec a;
    fu_evaluator *e = evaluator(g, preset, &a);
    outcome dp = search(e, FU_ALGO_DP, 1, 1, 0, 1000);
    outcome ga = search(e, FU_ALGO_GA, seed, 2, GA_BUDGET, GA_BUDGET);
    outcome none = search(e, FU_ALGO_NONE, 1, 1, 0, 1);
    assert_true(ga.evaluated <= GA_BUDGET);
    print_message("    %-8s %-8s layer-by-layer %.4g  DP %.4g (%lld groups scored)  GA %.4g "
                  "(%lld plans): GA/DP %.4f\n",
                  g->name, preset, none.value, dp.value, (long long)dp.evaluated, ga.value,
                  (long long)ga.evaluated, ga.value / dp.value);
    assert_true(dp.value <= none.value);
    assert_true(ga.value <= none.value);
    if (!(ga.value <= 1.01 * dp.value))
        fail_msg("%s on %s: GA %.6g, DP %.6g", g->name, preset, ga.value, dp.value);
    fu_plan_free(&dp.plan);
    fu_plan_free(&ga.plan);
    fu_plan_free(&none.plan);
    fu_evaluator_free(e);
}

static void test_ga_reaches_dp_on_zoo_chains(void **state)
{
    (void)state;
    static const char *const models[] = {"alexnet", "vgg16"};
    static const char *const presets[] = {"eyeriss", "gemmini"};
    for (int m = 0; m < 2; m++)
        for (int p = 0; p < 2; p++) {
            wl_graph *g = zoo(models[m]);
            ga_near_dp(g, presets[p], 3);
            wl_graph_free(g);
        }
}

static void test_ga_reaches_dp_on_random_chains(void **state)
{
    (void)state;
    for (uint64_t seed = 11; seed <= 12; seed++) {
        wl_graph *g = random_conv_chain(seed, 4 + (int)(seed % 3));
        ga_near_dp(g, seed % 2 ? "eyeriss" : "gemmini", seed);
        wl_graph_free(g);
    }
}

/* --------------------------------------------------------- determinism */

/* Same seed, same best plan: 1 or 2 threads, one step or many small ones. */
static void test_ga_is_deterministic(void **state)
{
    (void)state;
    wl_graph *g = random_conv_chain(21, 6);
    arch_spec a;
    fu_evaluator *e = evaluator(g, "gemmini", &a);
    outcome one = search(e, FU_ALGO_GA, 5, 1, 300, 300);
    outcome two = search(e, FU_ALGO_GA, 5, 2, 300, 300);
    outcome steps = search(e, FU_ALGO_GA, 5, 2, 300, 7);
    assert_true(fu_plan_equal(&one.plan, &two.plan));
    assert_true(fu_plan_equal(&one.plan, &steps.plan));
    assert_true(one.value == two.value && one.value == steps.value);
    assert_int_equal(one.evaluated, 300);
    assert_int_equal(steps.evaluated, 300);
    fu_plan_free(&one.plan);
    fu_plan_free(&two.plan);
    fu_plan_free(&steps.plan);
    fu_evaluator_free(e);
    wl_graph_free(g);
}

/* ------------------------------------------------------------ dispatch */

/* Layer by layer: one plan scored, no steps to take.  ILP: one solve, its
 * plan scored after the baseline, kept only when better. */
static void test_none_and_ilp_end_after_one_plan(void **state)
{
    (void)state;
    wl_graph *g = random_conv_chain(31, 4);
    arch_spec a;
    fu_evaluator *e = evaluator(g, "gemmini", &a);
    outcome none = search(e, FU_ALGO_NONE, 1, 1, 0, 100);
    outcome ilp = search(e, FU_ALGO_ILP, 1, 1, 0, 100);
    fu_plan layer_by_layer;
    assert_int_equal(fu_plan_init(&layer_by_layer, g, NULL), AS_OK);
    assert_true(fu_plan_equal(&none.plan, &layer_by_layer));
    assert_int_equal(none.evaluated, 1);
    assert_int_equal(none.n_curve, 1);
    assert_int_equal(ilp.evaluated, 2);
    assert_int_equal(ilp.n_curve, 1);
    assert_true(ilp.value <= none.value);
    fu_plan_free(&layer_by_layer);
    fu_plan_free(&none.plan);
    fu_plan_free(&ilp.plan);
    fu_evaluator_free(e);
    wl_graph_free(g);
}

/* ------------------------------------------------------------- options */

static void test_bad_options_are_refused(void **state)
{
    (void)state;
    wl_graph *g = random_conv_chain(1, 2);
    arch_spec a;
    fu_evaluator *e = evaluator(g, "gemmini", &a);
    fu_search_options o;
    fu_search_options_default(&o);
    fu_search *s = NULL;
    as_status st = {0};
    o.algorithm = (fu_algorithm)9;
    assert_int_equal(fu_search_init(&s, e, &o, &st), AS_EINVAL);
    assert_non_null(strstr(st.message, "algorithm"));
    assert_null(s);
    fu_search_options_default(&o);
    o.budget = -1;
    assert_int_equal(fu_search_init(&s, e, &o, NULL), AS_EINVAL);
    fu_evaluator_free(e);
    wl_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operators_keep_plans_valid),
        cmocka_unit_test(test_dp_is_exact_on_short_chains),
        cmocka_unit_test(test_ga_reaches_dp_on_zoo_chains),
        cmocka_unit_test(test_ga_reaches_dp_on_random_chains),
        cmocka_unit_test(test_ga_is_deterministic),
        cmocka_unit_test(test_none_and_ilp_end_after_one_plan),
        cmocka_unit_test(test_bad_options_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
